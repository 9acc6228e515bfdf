//! TFRC, TCP-friendly rate control: equation-based congestion control as
//! RFC 5348 specifies it (the successor of RFC 3448; Floyd, Handley, Padhye,
//! Widmer, SIGCOMM 2000), the non-TCP transport RED-PD §7.6 runs beside TCP.
//! A flow is a sender and a receiver:
//!
//! - the receiver declares a packet lost once 3 later packets have arrived
//!   (§5.1), opens a new loss event for a loss sent more than one RTT after
//!   the first loss of the current event (§5.2), and computes the loss event
//!   rate p = 1 / I_mean from the last 8 loss intervals weighted 1, 1, 1, 1,
//!   0.8, 0.6, 0.4, 0.2, counting the open interval only when that raises the
//!   average (§5.4), optionally discounting old intervals after a long open
//!   one (§5.5). It reports the receive rate X_recv and p once per RTT, and at
//!   once when a new loss event raises p (§6);
//! - the sender paces packets at its allowed rate X (bytes/s). Until the
//!   first loss it doubles X once per RTT, up to 2·X_recv (slow start);
//!   afterwards X is the throughput equation at p and its RTT estimate R,
//!   capped at 2·X_recv (§4.3). Without feedback for max(4R, 2s/X) it halves
//!   its limit (§4.4).
//!
//! The throughput equation (§3.1) with b = 1 and t_RTO = 4R:
//! X = s / (R·√(2bp/3) + t_RTO·3·√(3bp/8)·p·(1 + 32p²)).
//!
//! The sender is an infinite source, never idle or data-limited, so §4.3's
//! data-limited rules reduce to X_recv_set holding the receive rates of the
//! last two RTTs. A flow's packets follow one route through queues that keep
//! its order, so they arrive in order and the receiver handles no reordering.
//!
//! Where ns-2's TFRC (the papers' simulator) differs from RFC 5348, which this
//! follows; read in ns-2.35's `tcp/tfrc.cc`, `tfrc-sink.cc` and ns-default.tcl,
//! whose comments date the later changes (the code of 2000–2001 may differ in
//! detail):
//! - R is an EWMA with `df_ 0.95` (RFC: q = 0.9); t_RTO is TCP's timeout,
//!   SRTT + 4·RTTVAR of RTT samples rounded to `tcp_tick_` (0.1 s) in TCP's
//!   integer filters, not 4R (`rto_tick` selects it: at R = 30 ms it is
//!   0.3 s = 10R, at 120 ms 2.5R; the receiver still inverts with 4R, where
//!   ns-2's used the sender's value, which only sets the first interval);
//! - before the first feedback ns-2 sends at `InitRate_` (300 B/s), then
//!   slow-starts from `rate_init_` packets per RTT (RFC: s per second, then
//!   W_init/R, RFC 3390);
//! - above the equation's rate ns-2 grows by at most one packet per RTT per
//!   feedback (`increase_rate()`), where the RFC sets X = min(X_calc, 2·X_recv);
//!   with `ca_ 1` it spaces packets by √R_sample / mean √R (RFC 5348 §4.5's
//!   optional oscillation damping, not done here);
//! - the no-feedback timer is 2·max(R, s/X) and halves the rate itself;
//! - the receiver declares a loss at the first later packet (`numPkts_` was
//!   added, 1, then 3, only in December 2002) and reports every 1.5·R;
//! - history discounting (`discount_ 1`, `minDiscountRatio_ 0.5`) and the
//!   open-interval rule (`smooth_ 1`) are the RFC's.

use super::ns2_rtt::Ns2Rtt;
use super::tfrc_ns2::{self, TfrcNs2Receiver, TfrcNs2Sender, FEEDBACK_SIZE};
use super::timer::{Generation, Restartable};
use super::{Agent, AgentCtx, FlowConfig, Offer, TimerKind, Token};
use crate::error::ScenarioError;
use crate::packet::{Ecn, Packet, PacketKind, TfrcHeader};
use crate::rng::Rng;
use crate::time::{from_secs, to_secs, Time};
use crate::units::{Rate, Seconds};
use crate::validate::require_positive;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// §5.4: the weights w_0 … w_7 of the last n = 8 loss intervals.
const WEIGHTS: [f64; 8] = [1.0, 1.0, 1.0, 1.0, 0.8, 0.6, 0.4, 0.2];
/// §5.1: a packet is lost once this many later packets have arrived.
const NDUPACK: u64 = 3;
/// §4.3 step 2: R = q·R + (1 − q)·R_sample.
const RTT_FILTER: f64 = 0.9;
/// §4.3: the rate never falls below one packet per t_mbi = 64 s.
const T_MBI: f64 = 64.0;
/// §5.5: history discounting never weighs old intervals below half.
const DISCOUNT_FLOOR: f64 = 0.5;
/// §4.2: the nofeedback timer's first expiry, 2 s after the start.
const FIRST_NOFEEDBACK: f64 = 2.0;

crate::timer_kinds! {
    /// The sender's timers.
    enum SenderTimer {
        /// The next packet, at the rate's gap after the last (`send_timer`).
        Send { generation: Generation },
        /// No feedback for max(4R, 2s/X): halve the rate (§4.4, `nofeedback_timer`).
        NoFeedback { generation: Generation },
    }
}

crate::timer_kinds! {
    /// The receiver's timer.
    enum ReceiverTimer {
        /// The next feedback, an RTT after the last (§6.2, `feedback_timer`).
        Feedback { generation: Generation },
    }
}

/// Whose TFRC runs: RFC 5348's (this file) or ns-2.35's (`tfrc_ns2.rs`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TfrcProfile {
    #[default]
    Rfc5348,
    /// ns-2.35's `tcp/tfrc.cc` and `tcp/tfrc-sink.cc` with their ns-default.tcl settings.
    Ns2,
}

/// A `tfrc` flow's settings (its packet size s is the flow's `packet_size`).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct TfrcConfig {
    /// `"rfc5348"` (the default) or `"ns2"` (ns-2.35's agents, `tfrc_ns2.rs`).
    pub profile: TfrcProfile,
    /// Allowed sending rate before the first feedback; default one packet
    /// per second (RFC 5348 §4.2; `ns2`: `InitRate_` 300 B/s). From the first feedback on, slow
    /// start starts at W_init/R with RFC 3390's W_init = min(4s, max(2s, 4380 B)).
    pub initial_rate: Option<Rate>,
    /// Discount old loss intervals while the open one is more than twice
    /// the average (RFC 5348 §5.5, a MAY); default on, as ns-2's `discount_ 1`.
    pub history_discounting: bool,
    /// When set, t_RTO in the equation is ns-2 tfrc.cc's TCP-style timeout
    /// with this tick instead of RFC 5348's 4R (module header); `ns2`: 0.1 s (`tcp_tick_`).
    pub rto_tick: Option<Seconds>,
    /// Record X (`x_bps`, bits/s), p (`p`) and R (`rtt`, s) at each feedback and nofeedback expiry.
    pub trace: bool,
}

impl Default for TfrcConfig {
    fn default() -> Self {
        TfrcConfig {
            profile: TfrcProfile::Rfc5348,
            initial_rate: None,
            history_discounting: true,
            rto_tick: None,
            trace: false,
        }
    }
}

impl TfrcConfig {
    /// ns-default.tcl `Agent/TFRC set InitRate_ 300` (bytes/s).
    const NS2_INITIAL_RATE_BPS: f64 = 300.0 * 8.0;
    /// ns-default.tcl `Agent/TFRC set tcp_tick_ 0.1`.
    const NS2_TICK_S: f64 = 0.1;

    /// The table with the profile's defaults filled in (`net::resolved`): under `ns2`, the
    /// initial rate and the tick ns-2 runs with.
    pub fn resolved(&self) -> Self {
        let mut resolved = self.clone();
        if self.profile == TfrcProfile::Ns2 {
            resolved.initial_rate.get_or_insert(Rate(Self::NS2_INITIAL_RATE_BPS));
            resolved.rto_tick.get_or_insert(Seconds(Self::NS2_TICK_S));
        }
        resolved
    }
}

impl FlowConfig for TfrcConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        if let Some(rate) = self.initial_rate {
            require_positive(&format!("{path}.initial_rate"), rate)?;
        }
        if let Some(tick) = self.rto_tick {
            require_positive(&format!("{path}.rto_tick"), tick)?;
        }
        Ok(())
    }

    /// Elastic: the equation follows what the network leaves it.
    fn demand_bps(&self) -> Option<f64> {
        None
    }

    fn traced(&self) -> bool {
        self.trace
    }

    fn build(&self, size: u32, offer: &Offer, _rng: Rng) -> (Box<dyn Agent>, Box<dyn Agent>) {
        if self.profile == TfrcProfile::Ns2 {
            let resolved = self.resolved();
            let sender = TfrcNs2Sender::new(tfrc_ns2::SenderParams {
                size: size as f64,
                initial_rate: resolved.initial_rate.map_or(0.0, |r| r.0 / 8.0),
                tick: resolved.rto_tick.map_or(0, |tick| tick.nanos()),
                stop: offer.stop,
            });
            return (
                Box::new(sender),
                Box::new(TfrcNs2Receiver::new(self.history_discounting)),
            );
        }
        let sender = TfrcSender::new(SenderParams {
            size: size as f64,
            initial_rate: self.initial_rate.map_or(size as f64, |r| r.0 / 8.0),
            stop: offer.stop,
            rto_tick: self.rto_tick.map(|tick| tick.nanos()),
        });
        (Box::new(sender), Box::new(TfrcReceiver::new(self.history_discounting)))
    }
}

/// The throughput equation (§3.1, b = 1, t_RTO = 4R): bytes per second for
/// packets of `size` bytes, RTT `rtt` seconds and loss event rate `p`.
pub fn equation_rate(size: f64, rtt: f64, p: f64) -> f64 {
    equation_rate_with_rto(size, rtt, 4.0 * rtt, p)
}

/// The throughput equation with its retransmission timeout `t_rto` (seconds) given.
pub fn equation_rate_with_rto(size: f64, rtt: f64, t_rto: f64, p: f64) -> f64 {
    size / (rtt * (2.0 * p / 3.0).sqrt() + t_rto * 3.0 * (3.0 * p / 8.0).sqrt() * p * (1.0 + 32.0 * p * p))
}

/// The loss event rate at which the equation gives `rate` bytes/s (§6.3.1's
/// inverse), by bisection: the equation falls strictly with p; 1 when even
/// p = 1 allows more than `rate`.
pub fn equation_loss_rate(size: f64, rtt: f64, rate: f64) -> f64 {
    let (mut low, mut high) = (0.0_f64, 1.0_f64);
    if equation_rate(size, rtt, high) >= rate {
        return high;
    }
    // 60 halvings of [0, 1] reach f64's precision.
    for _ in 0..60 {
        let mid = 0.5 * (low + high);
        if equation_rate(size, rtt, mid) > rate {
            low = mid;
        } else {
            high = mid;
        }
    }
    high
}

/// RFC 3390's initial window, min(4s, max(2s, 4380 B)), in bytes (§4.2's W_init).
fn initial_window(size: f64) -> f64 {
    (4.0 * size).min((2.0 * size).max(4380.0))
}

/// A closed loss interval I_i and its discount factor DF_i (§5.5; 1 without discounting).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Interval {
    packets: f64,
    discount: f64,
}

/// The receiver's loss history (§5.3–§5.5): the last 8 closed loss
/// intervals and the start of the current loss event.
#[derive(Clone, Debug, Default)]
struct LossHistory {
    /// I_1 … I_8, newest first.
    closed: VecDeque<Interval>,
    /// The current loss event's first lost packet: its sequence number and send time.
    event: Option<(u64, Time)>,
    discounting: bool,
}

impl LossHistory {
    fn new(discounting: bool) -> Self {
        LossHistory {
            discounting,
            ..Default::default()
        }
    }

    /// The average of the closed intervals, I_i weighted w_(i−1)·DF_i (§5.4's I_tot1).
    fn closed_mean(&self) -> f64 {
        let (total, weights) = self.closed.iter().zip(WEIGHTS).fold((0.0, 0.0), |(t, w), (i, weight)| {
            (t + i.packets * weight * i.discount, w + weight * i.discount)
        });
        total / weights
    }

    /// §5.5's DF for the open interval I_0: 2·I_mean/I_0 (at least 0.5) when
    /// I_0 exceeds twice the closed intervals' mean, else 1.
    fn discount(&self, open: f64) -> f64 {
        let mean = self.closed_mean();
        if self.discounting && open > 2.0 * mean {
            (2.0 * mean / open).max(DISCOUNT_FLOOR)
        } else {
            1.0
        }
    }

    /// I_mean (§5.4, §5.5) with the open interval I_0 = `open` packets: the
    /// weighted mean of I_0 … I_7 (old intervals discounted by DF), or of
    /// I_1 … I_8 where that is larger.
    fn mean_interval(&self, open: f64) -> f64 {
        let discount = self.discount(open);
        let (total, weights) =
            self.closed
                .iter()
                .zip(&WEIGHTS[1..])
                .fold((open * WEIGHTS[0], WEIGHTS[0]), |(t, w), (i, weight)| {
                    let weight = weight * i.discount * discount;
                    (t + i.packets * weight, w + weight)
                });
        (total / weights).max(self.closed_mean())
    }

    /// p = 1/I_mean, with `highest` the highest sequence number received; 0 before any loss.
    fn loss_event_rate(&self, highest: u64) -> f64 {
        match self.event {
            Some((start, _)) => 1.0 / self.mean_interval((highest + 1 - start) as f64),
            None => 0.0,
        }
    }

    /// Packet `seq`, sent at `sent`, was lost; `rtt` is the sender's latest R.
    /// Returns whether it starts a new loss event (§5.2). The first loss event's
    /// interval is `first_interval()` (§6.3.1).
    fn on_loss(&mut self, seq: u64, sent: Time, rtt: Time, first_interval: impl FnOnce() -> f64) -> bool {
        let closing = match self.event {
            // §5.2: a loss sent within one RTT of the event's first loss belongs to it.
            Some((_, start_time)) if sent <= start_time + rtt => return false,
            Some((start, _)) => {
                // §5.5: the discount in force when the interval closes stays with the older ones.
                let discount = self.discount((seq - start) as f64);
                for interval in &mut self.closed {
                    interval.discount *= discount;
                }
                (seq - start) as f64
            }
            None => first_interval(),
        };
        self.closed.push_front(Interval {
            packets: closing,
            discount: 1.0,
        });
        self.closed.truncate(WEIGHTS.len());
        self.event = Some((seq, sent));
        true
    }
}

/// What the sender runs with, resolved once in [`TfrcConfig::build`]: never changed by the algorithm.
#[derive(Clone, Copy, Debug)]
pub struct SenderParams {
    /// s, bytes.
    pub size: f64,
    /// X before the first feedback, bytes/s (§4.2: one packet per second unless configured).
    pub initial_rate: f64,
    /// No packet is sent from this time on.
    pub stop: Time,
    /// ns-2's RTO tick (`rto_tick`): t_RTO is then ns-2's SRTT + 4·RTTVAR in ticks; None: 4R.
    pub rto_tick: Option<Time>,
}

/// The sender: paces packets at X and sets X from the receiver's feedback (§4). Its parameters,
/// then the algorithm's variables, then its timers.
pub struct TfrcSender {
    params: SenderParams,
    /// X, the allowed sending rate, bytes/s.
    rate: f64,
    /// R, seconds; None before the first feedback.
    rtt: Option<f64>,
    /// p from the latest feedback.
    loss_event_rate: f64,
    /// X_Bps, the equation's rate at p and R (0 while p = 0).
    equation_rate: f64,
    /// ns-2's timeout filters when t_RTO is ns-2's (`rto_tick`).
    ns2_rto: Option<Ns2Rtt>,
    /// X_recv_set (§4.3): reported receive rates of the last two RTTs with
    /// their arrival times; starts with one infinite entry (§4.2).
    receive_rates: Vec<(Time, f64)>,
    /// tld, when slow start last doubled X; None before the first feedback.
    last_doubled: Option<Time>,
    next_seq: u64,
    last_sent: Time,
    send_timer: Restartable<SenderTimer>,
    nofeedback_timer: Restartable<SenderTimer>,
}

impl TfrcSender {
    pub fn new(params: SenderParams) -> Self {
        TfrcSender {
            params,
            rate: params.initial_rate,
            rtt: None,
            loss_event_rate: 0.0,
            equation_rate: 0.0,
            // tfrc.cc start(): no estimate (`srtt_init_ 0`); `rtxcur_init_ 6.0` until the first sample.
            ns2_rto: params.rto_tick.map(|tick| Ns2Rtt::new(tick, 0, 6.0, 0.0)),
            receive_rates: Vec::new(),
            last_doubled: None,
            next_seq: 0,
            last_sent: 0,
            send_timer: Restartable::new(|generation| SenderTimer::Send { generation }),
            nofeedback_timer: Restartable::new(|generation| SenderTimer::NoFeedback { generation }),
        }
    }

    /// t_RTO for the equation, after an RTT sample of `sample` seconds: 4R, or
    /// ns-2's SRTT + 4·RTTVAR of samples rounded to ticks (tfrc.cc update_rtt()).
    fn timeout(&mut self, rtt: f64, sample: f64) -> f64 {
        match &mut self.ns2_rto {
            Some(filters) => {
                filters.sample_ticks((sample / filters.tick_secs() + 0.5) as i64);
                filters.current()
            }
            None => 4.0 * rtt,
        }
    }

    fn min_rate(&self) -> f64 {
        self.params.size / T_MBI
    }

    fn gap(&self) -> Time {
        from_secs(self.params.size / self.rate).max(1)
    }

    fn send(&mut self, ctx: &mut AgentCtx) {
        ctx.send(Packet {
            kind: PacketKind::Data,
            size: self.params.size as u32,
            seq: self.next_seq,
            sent_at: ctx.now,
            ecn: Ecn::NotEct,
            tfrc: TfrcHeader {
                rtt: self.rtt.unwrap_or(0.0),
                ..Default::default()
            },
            ..Default::default()
        });
        self.next_seq += 1;
        self.last_sent = ctx.now;
        self.send_timer.set(ctx.now + self.gap(), ctx);
    }

    /// X changed: the next packet goes s/X after the last one (§4.6), and the
    /// nofeedback timer is max(4R, 2s/X) from now (§4.3 step 6, §4.4 step 2).
    fn rate_changed(&mut self, ctx: &mut AgentCtx) {
        if ctx.now >= self.params.stop {
            return;
        }
        self.send_timer.set((self.last_sent + self.gap()).max(ctx.now), ctx);
        let timeout = (4.0 * self.rtt.unwrap_or(0.0)).max(2.0 * self.params.size / self.rate);
        self.nofeedback_timer.set(ctx.now + from_secs(timeout), ctx);
        if ctx.tracing() {
            ctx.trace("x_bps", self.rate * 8.0);
            ctx.trace("p", self.loss_event_rate);
            ctx.trace("rtt", self.rtt.unwrap_or(0.0));
        }
    }

    /// recv_limit (§4.3 step 4): twice the largest receive rate of the last two RTTs.
    fn receive_limit(&self) -> f64 {
        2.0 * self.receive_rates.iter().fold(0.0_f64, |m, &(_, x)| m.max(x))
    }

    /// §4.3 steps 1–4 on a feedback packet.
    fn on_feedback(&mut self, feedback: &Packet, now: Time) {
        let sample = to_secs(now.saturating_sub(feedback.sent_at)).max(1e-9);
        let rtt = self
            .rtt
            .map_or(sample, |r| RTT_FILTER * r + (1.0 - RTT_FILTER) * sample);
        self.rtt = Some(rtt);
        let t_rto = self.timeout(rtt, sample);
        self.loss_event_rate = feedback.tfrc.loss_event_rate;
        let initial = initial_window(self.params.size) / rtt;
        // §4.2: the first feedback gives R and starts slow start at W_init/R.
        if self.last_doubled.is_none() {
            self.rate = initial;
            self.last_doubled = Some(now);
        }
        let two_rtts = from_secs(2.0 * rtt);
        self.receive_rates.retain(|&(at, _)| now - at <= two_rtts);
        self.receive_rates.push((now, feedback.tfrc.receive_rate));
        let limit = self.receive_limit();
        if self.loss_event_rate > 0.0 {
            self.equation_rate = equation_rate_with_rto(self.params.size, rtt, t_rto, self.loss_event_rate);
            self.rate = self.equation_rate.min(limit).max(self.min_rate());
        } else if now - self.last_doubled.unwrap_or(now) >= from_secs(rtt) {
            // Slow start: double once per RTT, within twice the receive rate.
            self.rate = (2.0 * self.rate).min(limit).max(initial);
            self.last_doubled = Some(now);
        }
    }

    /// §4.4: no feedback for max(4R, 2s/X).
    fn on_nofeedback(&mut self, now: Time) {
        let largest_receive_rate = self.receive_limit() / 2.0;
        if self.rtt.is_none() || self.loss_event_rate == 0.0 {
            self.rate = (self.rate / 2.0).max(self.min_rate());
        } else if self.equation_rate > 2.0 * largest_receive_rate {
            // 2·X_recv was limiting X.
            self.limit_to(largest_receive_rate, now);
        } else {
            // The equation was limiting X.
            self.limit_to(self.equation_rate / 2.0, now);
        }
    }

    /// §4.4's Update_Limits: X_recv_set becomes {limit/2}, and X is recomputed (§4.3 step 4).
    fn limit_to(&mut self, limit: f64, now: Time) {
        let limit = limit.max(self.min_rate());
        self.receive_rates = vec![(now, limit / 2.0)];
        self.rate = self.equation_rate.min(limit).max(self.min_rate());
    }
}

impl Agent for TfrcSender {
    fn start(&mut self, ctx: &mut AgentCtx) {
        // §4.2: X_recv_set starts with one item of value Infinity.
        self.receive_rates = vec![(ctx.now, f64::INFINITY)];
        self.nofeedback_timer.set(ctx.now + from_secs(FIRST_NOFEEDBACK), ctx);
        self.send(ctx);
    }

    fn receive(&mut self, packet: &Packet, ctx: &mut AgentCtx) {
        self.on_feedback(packet, ctx.now);
        self.rate_changed(ctx);
    }

    fn timer(&mut self, token: Token, ctx: &mut AgentCtx) {
        match SenderTimer::from_token(token) {
            SenderTimer::Send { generation } => {
                if self.send_timer.expired(generation, ctx) && ctx.now < self.params.stop {
                    self.send(ctx);
                }
            }
            SenderTimer::NoFeedback { generation } => {
                if self.nofeedback_timer.expired(generation, ctx) {
                    self.on_nofeedback(ctx.now);
                    self.rate_changed(ctx);
                }
            }
        }
    }
}

/// The highest-numbered data packet received so far.
#[derive(Clone, Copy, Debug)]
struct Received {
    seq: u64,
    /// The sender's timestamp.
    sent_at: Time,
    arrived: Time,
}

/// Packets `first..=last` are missing; the packets around them were sent at
/// `before` and `after` (sequence number, send time).
#[derive(Clone, Copy, Debug)]
struct Gap {
    first: u64,
    last: u64,
    before: (u64, Time),
    after: (u64, Time),
    /// The receiver's packet count when the gap appeared (counting the packet after it).
    seen_at: u64,
}

impl Gap {
    /// §5.2: the send time of missing packet `seq`, interpolated between its neighbours.
    fn sent_at(&self, seq: u64) -> Time {
        let ((s0, t0), (s1, t1)) = (self.before, self.after);
        let fraction = (seq - s0) as f64 / (s1 - s0) as f64;
        t0 + (fraction * t1.saturating_sub(t0) as f64).round() as Time
    }
}

/// The receiver: detects losses, keeps the loss history, sends feedback (§5, §6).
pub struct TfrcReceiver {
    history: LossHistory,
    highest: Option<Received>,
    /// Missing packets not declared lost yet, oldest first.
    gaps: VecDeque<Gap>,
    /// Data packets received.
    received: u64,
    /// R_m, the sender's RTT estimate from the latest data packet (0 before it has one).
    rtt: Time,
    /// Arrivals (time, bytes) of the last R_m, for X_recv.
    recent: VecDeque<(Time, u32)>,
    bytes_since_feedback: u64,
    last_feedback: Option<Time>,
    feedback_timer: Restartable<ReceiverTimer>,
}

impl TfrcReceiver {
    pub fn new(discounting: bool) -> Self {
        TfrcReceiver {
            history: LossHistory::new(discounting),
            highest: None,
            gaps: VecDeque::new(),
            received: 0,
            rtt: 0,
            recent: VecDeque::new(),
            bytes_since_feedback: 0,
            last_feedback: None,
            feedback_timer: Restartable::new(|generation| ReceiverTimer::Feedback { generation }),
        }
    }

    /// X_recv, bytes/s (§6.2): the data received since the last feedback over
    /// the time since it, or, when that is shorter than R_m, the data of the
    /// last R_m over R_m (ns-2 tfrc-sink.cc est_thput()).
    fn receive_rate(&self, now: Time) -> f64 {
        let since = now - self.last_feedback.unwrap_or(now);
        if self.rtt > 0 && since < self.rtt {
            let bytes: u64 = self.recent.iter().map(|&(_, b)| b as u64).sum();
            bytes as f64 / to_secs(self.rtt)
        } else if since > 0 {
            self.bytes_since_feedback as f64 / to_secs(since)
        } else {
            0.0
        }
    }

    fn loss_event_rate(&self) -> f64 {
        self.highest.map_or(0.0, |h| self.history.loss_event_rate(h.seq))
    }

    /// Declares lost the packets of gaps that NDUPACK packets have followed (§5.1).
    fn declare_losses(&mut self, size: u32, now: Time) {
        while let Some(gap) = self.gaps.front().copied() {
            if self.received - gap.seen_at + 1 < NDUPACK {
                break;
            }
            self.gaps.pop_front();
            for seq in gap.first..=gap.last {
                let (rtt, x_recv) = (self.rtt, self.receive_rate(now));
                // §6.3.1: the first interval is the one at which the equation gives X_recv;
                // with no RTT from the sender yet, the packets up to the loss.
                let first_interval = || match rtt {
                    0 => (seq + 1) as f64,
                    _ => 1.0 / equation_loss_rate(size as f64, to_secs(rtt), x_recv),
                };
                self.history.on_loss(seq, gap.sent_at(seq), rtt, first_interval);
            }
        }
    }

    fn send_feedback(&mut self, ctx: &mut AgentCtx) {
        let highest = self.highest.expect("feedback follows a data packet");
        ctx.send(Packet {
            kind: PacketKind::Ack,
            size: FEEDBACK_SIZE,
            seq: highest.seq,
            // §3.2.2: t_recvdata advanced by t_delay, the time since it arrived,
            // so that the sender's R_sample is now − sent_at.
            sent_at: highest.sent_at + (ctx.now - highest.arrived),
            tfrc: TfrcHeader {
                receive_rate: self.receive_rate(ctx.now),
                loss_event_rate: self.loss_event_rate(),
                ..Default::default()
            },
            ..Default::default()
        });
        self.last_feedback = Some(ctx.now);
        self.bytes_since_feedback = 0;
        // §6.2: the next feedback one R_m later; without R, feedback for every packet.
        if self.rtt > 0 {
            self.feedback_timer.set(ctx.now + self.rtt, ctx);
        } else {
            self.feedback_timer.clear();
        }
    }
}

impl Agent for TfrcReceiver {
    fn start(&mut self, _ctx: &mut AgentCtx) {}

    fn receive(&mut self, packet: &Packet, ctx: &mut AgentCtx) {
        let now = ctx.now;
        ctx.deliver(packet.size as u64);
        self.received += 1;
        self.bytes_since_feedback += packet.size as u64;
        if packet.tfrc.rtt > 0.0 {
            self.rtt = from_secs(packet.tfrc.rtt);
        }
        self.recent.push_back((now, packet.size));
        while self.recent.front().is_some_and(|&(at, _)| at + self.rtt < now) {
            self.recent.pop_front();
        }
        let p_before = self.loss_event_rate();
        let first = self.highest.is_none();
        if let Some(h) = self.highest {
            if packet.seq > h.seq + 1 {
                self.gaps.push_back(Gap {
                    first: h.seq + 1,
                    last: packet.seq - 1,
                    before: (h.seq, h.sent_at),
                    after: (packet.seq, packet.sent_at),
                    seen_at: self.received,
                });
            }
        }
        self.highest = Some(Received {
            seq: packet.seq,
            sent_at: packet.sent_at,
            arrived: now,
        });
        self.declare_losses(packet.size, now);
        // §6.1: feedback on the first packet, when p rose, and when the timer
        // has lapsed idle (or there is no R to run it on).
        if first || self.loss_event_rate() > p_before || !self.feedback_timer.is_set() {
            self.send_feedback(ctx);
        }
    }

    fn timer(&mut self, token: Token, ctx: &mut AgentCtx) {
        let ReceiverTimer::Feedback { generation } = ReceiverTimer::from_token(token);
        // §6.2: on expiry, feedback only if data arrived since the last one.
        if self.feedback_timer.expired(generation, ctx) && self.bytes_since_feedback > 0 {
            self.send_feedback(ctx);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::NANOS_PER_SEC;
    use crate::transport::testing::AgentHarness;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-4 * b.abs()
    }

    #[test]
    fn equation_by_hand() {
        // R = 40 ms, p = 1 %, t_RTO = 160 ms: 0.04·√(0.02/3) = 0.0032660,
        // 0.16·3·√0.00375·0.01·1.0032 = 0.00029488; 1000 B / 0.0035609 s = 280.83 kB/s.
        assert!((equation_rate(1000.0, 0.04, 0.01) - 280_830.0).abs() < 10.0);
        // p = 5 %: 0.0073030 + 0.16·0.410792·0.05·1.08 = 0.0108522 -> 92.147 kB/s.
        assert!((equation_rate(1000.0, 0.04, 0.05) - 92_147.0).abs() < 10.0);
        // R = 100 ms, p = 1 %: 0.0081650 + 0.4·0.183712·0.01·1.0032 = 0.0089022 -> 112.33 kB/s.
        assert!((equation_rate(1000.0, 0.1, 0.01) - 112_332.0).abs() < 10.0);
    }

    #[test]
    fn the_inverse_recovers_p() {
        for p in [1e-6, 0.001, 0.01, 0.05, 0.3] {
            let rate = equation_rate(1000.0, 0.1, p);
            assert!(close(equation_loss_rate(1000.0, 0.1, rate), p), "{p}");
        }
        // Below the equation's rate at p = 1 (46.9 B/s at R = 100 ms) p is 1.
        assert_eq!(equation_loss_rate(1000.0, 0.1, 10.0), 1.0);
    }

    /// Closed intervals I_1 … I_8 = 100, 100, 100, 100, 50, 50, 50, 50 (newest
    /// first), the current loss event from packet 1000 on.
    fn history(discounting: bool) -> LossHistory {
        let mut h = LossHistory::new(discounting);
        for packets in [50.0, 50.0, 50.0, 50.0, 100.0, 100.0, 100.0, 100.0] {
            h.closed.push_front(Interval { packets, discount: 1.0 });
        }
        h.event = Some((1000, 0));
        h
    }

    #[test]
    fn loss_intervals_are_weighted_by_hand() {
        let h = history(false);
        // I_1 … I_8 with w_0 … w_7: (100·4 + 50·(0.8 + 0.6 + 0.4 + 0.2)) / 6 = 500/6 = 83.33.
        assert!(close(h.closed_mean(), 500.0 / 6.0));
        // A short open interval (10) would lower the mean, so it is left out:
        // (10 + 100·3.8 + 50·1.2) / 6 = 75 < 83.33. Packets 1000..=1009 are I_0 = 10.
        assert!(close(h.mean_interval(10.0), 500.0 / 6.0));
        assert!(close(h.loss_event_rate(1009), 6.0 / 500.0));
        // A long one (200) raises it: (200 + 380 + 60) / 6 = 106.67.
        assert!(close(h.mean_interval(200.0), 640.0 / 6.0));
        // No loss yet: p = 0.
        assert_eq!(LossHistory::new(false).loss_event_rate(5000), 0.0);
    }

    #[test]
    fn history_discounting_by_hand() {
        let h = history(true);
        // I_0 = 200 > 2·83.33: DF = 166.67/200 = 0.8333 on I_1 … I_7:
        // (200 + 0.8333·440) / (1 + 0.8333·5) = 566.67 / 5.1667 = 109.68.
        assert!(close(h.discount(200.0), 5.0 / 6.0));
        assert!(close(
            h.mean_interval(200.0),
            (200.0 + 440.0 * 5.0 / 6.0) / (1.0 + 5.0 * 5.0 / 6.0)
        ));
        // I_0 = 400: DF = 166.67/400 = 0.4167, floored at 0.5.
        assert_eq!(h.discount(400.0), 0.5);
        // Not above twice the mean: no discount.
        assert_eq!(h.discount(150.0), 1.0);
    }

    #[test]
    fn a_closing_interval_keeps_its_discount_on_the_older_ones() {
        let mut h = LossHistory::new(true);
        for _ in 0..8 {
            h.closed.push_front(Interval {
                packets: 100.0,
                discount: 1.0,
            });
        }
        h.event = Some((0, 0));
        // A loss 400 packets on, sent 10 s later: I_0 = 400 > 200, DF = 0.5 stays
        // with the older intervals. Closed mean (400 + 100·0.5·5) / (1 + 0.5·5) = 185.71.
        assert!(h.on_loss(400, 10 * NANOS_PER_SEC, NANOS_PER_SEC / 10, || unreachable!()));
        assert_eq!(
            h.closed[0],
            Interval {
                packets: 400.0,
                discount: 1.0
            }
        );
        assert_eq!(h.closed[1].discount, 0.5);
        assert_eq!(h.closed.len(), 8);
        assert!(close(h.closed_mean(), 650.0 / 3.5));
    }

    #[test]
    fn losses_within_one_rtt_are_one_loss_event() {
        let rtt = NANOS_PER_SEC / 10;
        let mut h = LossHistory::new(false);
        // The first loss event takes its interval from §6.3.1's synthetic value.
        assert!(h.on_loss(10, 0, rtt, || 50.0));
        assert_eq!(h.closed[0].packets, 50.0);
        // Sent within R of the event's first loss: the same event.
        assert!(!h.on_loss(11, rtt, rtt, || unreachable!()));
        // Sent later than that: a new event, closing I = 20 − 10 packets.
        assert!(h.on_loss(20, rtt + 1, rtt, || unreachable!()));
        assert_eq!(h.closed[0].packets, 10.0);
        assert_eq!(h.event, Some((20, rtt + 1)));
    }

    const SEND: fn(SenderTimer) -> bool = |timer| matches!(timer, SenderTimer::Send { .. });
    const NOFEEDBACK: fn(SenderTimer) -> bool = |timer| matches!(timer, SenderTimer::NoFeedback { .. });

    /// 1000-byte packets at `initial_rate` bytes/s before feedback, t_RTO = 4R.
    fn params(initial_rate: f64) -> SenderParams {
        SenderParams {
            size: 1000.0,
            initial_rate,
            stop: Time::MAX,
            rto_tick: None,
        }
    }

    fn sender(initial_rate: f64) -> AgentHarness<TfrcSender> {
        AgentHarness::sender(TfrcSender::new(params(initial_rate)))
    }

    /// With ns-2's t_RTO in ticks of 100 ms.
    fn ns2_sender() -> AgentHarness<TfrcSender> {
        AgentHarness::sender(TfrcSender::new(SenderParams {
            rto_tick: Some(NANOS_PER_SEC / 10),
            ..params(1000.0)
        }))
    }

    #[test]
    fn before_feedback_it_sends_at_the_initial_rate() {
        // Default: one packet per second (§4.2).
        let mut h = sender(1000.0);
        assert_eq!(h.start(0).len(), 1);
        assert_eq!(h.latest(SEND).0, NANOS_PER_SEC);
        assert_eq!(h.latest(NOFEEDBACK).0, 2 * NANOS_PER_SEC);
        // initial_rate = 80 kb/s: 10 packets of 1000 B per second.
        let mut h = sender(10_000.0);
        h.start(0);
        assert_eq!(h.latest(SEND).0, NANOS_PER_SEC / 10);
    }

    /// A feedback packet reporting p = 1 % and a high receive rate, for a packet sent at `sent_at`.
    fn feedback(sent_at: Time) -> Packet {
        Packet {
            kind: PacketKind::Ack,
            sent_at,
            tfrc: TfrcHeader {
                receive_rate: 1e6,
                loss_event_rate: 0.01,
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn ns2_s_timeout_is_tcp_s_in_ticks() {
        // tfrc.cc update_rtt(): a sample of R rounds to int(R/0.1 s + 0.5) ticks,
        // at least 1; the first sets SRTT = t, RTTVAR = t/2, so t_RTO = 3t ticks:
        // 0.3 s at R = 30 ms (10R) and 120 ms (2.5R), 0.9 s at 250 ms (3 ticks).
        for (rtt, t_rto) in [(0.03, 0.3), (0.12, 0.3), (0.25, 0.9)] {
            let mut h = ns2_sender();
            h.start(0);
            let at = from_secs(rtt);
            h.receive(at, &feedback(0));
            let expected = equation_rate_with_rto(1000.0, rtt, t_rto, 0.01);
            assert!(
                close(h.agent.equation_rate, expected),
                "R {rtt}: {}",
                h.agent.equation_rate
            );
        }
        // RTTVAR of 1/2 tick never decays in the integer filter (0.5/4 rounds to 0): still 0.3 s.
        let mut h = ns2_sender();
        h.start(0);
        for k in 1..=10 {
            h.receive(k * from_secs(0.03), &feedback((k - 1) * from_secs(0.03)));
        }
        assert!(close(
            h.agent.equation_rate,
            equation_rate_with_rto(1000.0, 0.03, 0.3, 0.01)
        ));
    }

    #[test]
    fn without_feedback_the_rate_halves_each_timeout() {
        let mut h = sender(1000.0);
        h.start(0);
        // Feedback after 100 ms: X = the equation's 112.33 kB/s at p = 1 %.
        let at = NANOS_PER_SEC / 10;
        h.receive(at, &feedback(0));
        assert!((h.agent.rate - 112_332.0).abs() < 10.0);
        // §4.4: the timer is max(4R, 2s/X) = 400 ms away; each expiry halves X.
        assert_eq!(h.latest(NOFEEDBACK).0, at + 4 * at);
        for expected in [56_166.0, 28_083.0, 14_041.5] {
            let (at, token) = h.latest(NOFEEDBACK);
            h.fire(at, token);
            assert!((h.agent.rate - expected).abs() < 10.0, "{} vs {expected}", h.agent.rate);
        }
    }
}
