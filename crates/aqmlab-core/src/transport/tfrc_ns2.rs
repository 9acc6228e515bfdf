//! TFRC as ns-2.35 runs it (`Agent/TFRC`, `tcp/tfrc.cc`; `Agent/TFRCSink`, `tcp/tfrc-sink.cc`;
//! their ns-default.tcl defaults): the `profile = "ns2"` of `type = "tfrc"`
//! ([`super::tfrc::TfrcConfig`]), which the RED-PD paper's simulations ran. Each rule below
//! names the function it comes from; where it differs from RFC 5348 (`tfrc.rs`) it says so.
//!
//! Sender (tfrc.cc):
//! - start(): the rate starts at `InitRate_` (300 B/s), one packet goes at once, the send timer
//!   is s/rate and the no-feedback timer 2s/rate; packets carry R, t_RTO, the sender's round
//!   number and an urgent flag (set until the first feedback and after each no-feedback expiry).
//! - update_rtt(): R is an EWMA with weight `df_` 0.95 on the old value; t_RTO is TCP's
//!   SRTT + 4·RTTVAR of samples in `tcp_tick_` (0.1 s) ticks (`transport/ns2_rtt.rs`); the mean
//!   of √sample is kept too.
//! - recv(): each feedback increments the round; from the second on, twice the reported receive
//!   rate caps slow start and the equation's increase (`ss_maxrate_`, `maxrate_`); the
//!   no-feedback timer becomes max(2R, 2s/rate). The first feedback and every one in slow start
//!   without loss run slowstart() and send a packet at once (nextpkt()); the first with p > 0
//!   leaves slow start at the equation's rate; afterwards increase_rate() when the equation
//!   allows more than the rate, decrease_rate() otherwise.
//! - p_to_b() (formula.h): the equation with b = 1 and t_RTO, its second term's
//!   3·√(3p/8) capped at 1 (RFC 5348 has no cap), and at most 25 MB/s.
//! - slowstart(): the first two feedbacks set at least RFC 3390's 4 packets per R (1000-byte
//!   packets); later ones multiply the rate by `ssmult_` 2 at most once per R up to
//!   `ss_maxrate_`, halve it to `ss_maxrate_`/2 when above, or set s/R when the receive rate is 0;
//!   `slow_increase_` spreads each increase over the next R's packets.
//! - increase_rate(): + s/R times the RTTs since the last change (at most 2), within
//!   max(`maxrate_`, s/R) and the equation's rate (RFC 5348: X = min(X_calc, 2·X_recv) at once).
//! - decrease_rate(): the equation's rate, within max(`maxrate_`, s/R) (`maxHeavyRounds_` 0).
//! - reduce_rate_on_no_feedback(): halve the rate, mark the next packets urgent, count a round,
//!   set the timer again for max(2R, 2s/rate) and send a packet at once.
//! - nextpkt(): with `ca_` 1 packets are spaced s/(rate·√mean / √R_sample).
//!
//! Receiver (tfrc-sink.cc, `algo_ 1`):
//! - recv(): a gap is declared lost at the first later packet (`numPkts_ 1`); each lost packet's
//!   send time is interpolated; it starts a new loss event when sent more than R after the last
//!   event's start and in a later round of the sender (new_loss(), `PreciseLoss_ 1`). The first
//!   loss replaces the history by one interval whose p gives the receive rate at the equation
//!   (adjust_history(), b_to_p() within 5 %) and is reported at once. A packet sent urgent, a new
//!   loss event, or R since the last report send a report, and the report timer is 1.5·R.
//! - est_loss_WALI(): the weighted average of the last 8 intervals (weights 1, 1, 1, 1, 0.8, 0.6,
//!   0.4, 0.2), the open one counted only when that raises the average (`smooth_ 1`), older
//!   intervals discounted after a long open one (`discount_ 1`, at least 0.5), as RFC 5348 §5.4–5.5;
//!   the open interval counts the packets after its event's first loss (RFC: from it).
//! - est_thput(): packets per second: those received since the last report over the time since,
//!   when that is at least R; else those received within R of the last arrival over R.
//! - sendpkt(): no report unless a data packet arrived since the last one.

use super::ns2_rtt::Ns2Rtt;
use super::timer::{Generation, Restartable};
use super::{Agent, AgentCtx, TimerKind, Token};
use crate::packet::{Ecn, Packet, PacketKind, TfrcHeader};
use crate::time::{from_secs, to_secs, Time};
use std::collections::VecDeque;

/// Feedback packets are 40 bytes (`Agent/TFRCSink set packetSize_ 40`), as TCP's ACKs; RFC 5348's
/// TFRC sends them so too.
pub const FEEDBACK_SIZE: u32 = 40;
/// formula.h `MAXRATE`: the equation's largest rate, bytes/s.
const MAX_RATE: f64 = 25_000_000.0;
/// formula.h `SAMLLFLOAT` and tfrc.h `SMALLFLOAT`.
const SMALL: f64 = 1e-7;
/// ns-default.tcl `Agent/TFRC set df_ 0.95`.
const RTT_FILTER: f64 = 0.95;
/// `ssmult_ 2`.
const SLOW_START_FACTOR: f64 = 2.0;
/// init_WALI() with `NumSamples_ -1` (8) and `smooth_ 1`: weights of intervals 0 … 9.
const WEIGHTS: [f64; 10] = [1.0, 1.0, 1.0, 1.0, 1.0, 0.8, 0.6, 0.4, 0.2, 0.0];
/// `minDiscountRatio_ 0.5`.
const DISCOUNT_FLOOR: f64 = 0.5;

/// p_to_b() (formula.h), b = 1: bytes/s for packets of `size` bytes, R `rtt`, t_RTO `tzero` (s).
pub fn equation_rate(size: f64, rtt: f64, tzero: f64, p: f64) -> f64 {
    if p < 0.0 || rtt < 0.0 {
        return MAX_RATE;
    }
    let timeout_term = (3.0 * (3.0 * p / 8.0).sqrt()).min(1.0) * tzero * p * (1.0 + 32.0 * p * p);
    let denominator = rtt * (2.0 * p / 3.0).sqrt() + timeout_term;
    if denominator < SMALL {
        MAX_RATE
    } else {
        (size / denominator).min(MAX_RATE)
    }
}

/// b_to_p() (formula.h): p at which the equation gives `rate`, by halving steps from 0.5 until
/// within 5 % of it (30 steps at most).
fn equation_loss_rate(size: f64, rtt: f64, tzero: f64, rate: f64) -> f64 {
    let (mut p, mut step) = (0.5, 0.25);
    for _ in 0..=30 {
        let at = equation_rate(size, rtt, tzero, p);
        if at > 0.95 * rate && at < 1.05 * rate {
            return p;
        }
        p += if at > rate { step } else { -step };
        step /= 2.0;
    }
    p
}

/// rfc3390() for `size_` bytes: the initial rate in packets per R.
fn rfc3390_packets(size: f64) -> f64 {
    if size <= 1095.0 {
        4.0
    } else if size < 2190.0 {
        3.0
    } else {
        2.0
    }
}

crate::timer_kinds! {
    /// The sender's timers.
    enum SenderTimer {
        /// `send_timer_`: nextpkt().
        Send { generation: Generation },
        /// `NoFeedbacktimer_`: reduce_rate_on_no_feedback().
        NoFeedback { generation: Generation },
    }
}

crate::timer_kinds! {
    /// The receiver's timer.
    enum ReceiverTimer {
        /// `nack_timer_`: nextpkt(-1).
        Report { generation: Generation },
    }
}

/// What the sender runs with (resolved by `TfrcConfig::build`).
#[derive(Clone, Copy, Debug)]
pub struct SenderParams {
    /// `packetSize_`, bytes.
    pub size: f64,
    /// `InitRate_`, bytes/s.
    pub initial_rate: f64,
    /// `tcp_tick_`.
    pub tick: Time,
    /// No packet is sent from this time on (`stop`).
    pub stop: Time,
}

/// `rate_change_`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    SlowStart,
    OutOfSlowStart,
    CongestionAvoidance,
    Decrease,
}

pub struct TfrcNs2Sender {
    params: SenderParams,
    /// `rate_`, `oldrate_` and `delta_` (slow_increase_'s step per packet), bytes/s.
    rate: f64,
    old_rate: f64,
    delta: f64,
    phase: Phase,
    /// `UrgentFlag`.
    urgent: bool,
    /// `round_id`.
    round: u32,
    /// `rtt_` (0: none yet), `sqrtrtt_`, `rttcur_`, seconds.
    rtt: f64,
    sqrt_rtt: f64,
    rtt_sample: f64,
    /// `tzero_`: t_RTO, seconds; from TCP's filters.
    tzero: f64,
    filters: Ns2Rtt,
    /// `last_change_`, seconds.
    last_change: f64,
    /// `maxrate_`, `ss_maxrate_`, `rcvrate` (the equation's), bytes/s.
    max_rate: f64,
    slow_start_max_rate: f64,
    equation_rate: f64,
    /// p from the latest report.
    loss_event_rate: f64,
    /// `first_pkt_rcvd`.
    had_feedback: bool,
    next_seq: u64,
    send_timer: Restartable<SenderTimer>,
    nofeedback_timer: Restartable<SenderTimer>,
}

impl TfrcNs2Sender {
    pub fn new(params: SenderParams) -> Self {
        TfrcNs2Sender {
            params,
            rate: params.initial_rate,
            old_rate: params.initial_rate,
            delta: 0.0,
            phase: Phase::SlowStart,
            urgent: true,
            round: 0,
            rtt: 0.0,
            sqrt_rtt: 1.0,
            rtt_sample: 1.0,
            tzero: 0.0,
            // start(): `srtt_init_ 0`, `rtxcur_init_ 6.0`, `minrto_ 0`.
            filters: Ns2Rtt::new(params.tick, 0, 6.0, 0.0),
            last_change: 0.0,
            max_rate: 0.0,
            slow_start_max_rate: 0.0,
            equation_rate: 0.0,
            loss_event_rate: 0.0,
            had_feedback: false,
            next_seq: 0,
            send_timer: Restartable::new(|generation| SenderTimer::Send { generation }),
            nofeedback_timer: Restartable::new(|generation| SenderTimer::NoFeedback { generation }),
        }
    }

    fn size(&self) -> f64 {
        self.params.size
    }

    /// sendpkt().
    fn send(&mut self, ctx: &mut AgentCtx) {
        if ctx.now >= self.params.stop {
            return;
        }
        ctx.send(Packet {
            kind: PacketKind::Data,
            size: self.size() as u32,
            seq: self.next_seq,
            sent_at: ctx.now,
            ecn: Ecn::NotEct,
            tfrc: TfrcHeader {
                rtt: self.rtt,
                tzero: self.tzero,
                round: self.round,
                urgent: self.urgent,
                ..Default::default()
            },
            ..Default::default()
        });
        self.next_seq += 1;
    }

    /// nextpkt(): a packet now, and the send timer for the next.
    fn next_packet(&mut self, ctx: &mut AgentCtx) {
        self.send(ctx);
        let rate = if self.round > 2 && self.phase == Phase::SlowStart && self.old_rate + SMALL < self.rate {
            // `slow_increase_ 1`: the rate climbs by delta per packet in slow start.
            self.old_rate += self.delta;
            self.old_rate
        } else {
            // `ca_ 1`: spaced by √mean R over √R sample.
            self.rate * self.sqrt_rtt / self.rtt_sample.sqrt()
        };
        if rate > SMALL && ctx.now < self.params.stop {
            let gap = (self.size() / rate).max(SMALL);
            self.send_timer.set(ctx.now + from_secs(gap), ctx);
        }
    }

    /// update_rtt() with the sample `sample` seconds.
    fn update_rtt(&mut self, sample: f64) {
        self.filters
            .sample_ticks((sample / self.filters.tick_secs() + 0.5) as i64);
        self.tzero = self.filters.current();
        if self.rtt > 0.0 {
            self.rtt = RTT_FILTER * self.rtt + (1.0 - RTT_FILTER) * sample;
            self.sqrt_rtt = RTT_FILTER * self.sqrt_rtt + (1.0 - RTT_FILTER) * sample.sqrt();
        } else {
            self.rtt = sample;
            self.sqrt_rtt = sample.sqrt();
        }
        self.rtt_sample = sample;
    }

    /// The no-feedback timer: max(2R, 2s/rate) from now.
    fn restart_nofeedback(&mut self, ctx: &mut AgentCtx) {
        let wait = (2.0 * self.rtt).max(2.0 * self.size() / self.rate);
        self.nofeedback_timer.set(ctx.now + from_secs(wait), ctx);
    }

    /// Before the first R since the start (`lastlimited_` 0 > now − 1.5R): idleFix_'s window,
    /// in which an infinite sender is still taken as data-limited.
    fn lately_limited(&self, now: f64) -> bool {
        0.0 > now - 1.5 * self.rtt
    }

    /// slowstart().
    fn slow_start(&mut self, now: f64) {
        let size = self.size();
        let initial = rfc3390_packets(size) * size / self.rtt;
        let per_rtt = |rate: f64, old: f64| (rate - old) / (rate * self.rtt / size);
        if self.round <= 1 || (self.round == 2 && rfc3390_packets(size) > 1.0) {
            self.old_rate = self.rate;
            self.rate = self.rate.max(initial);
            self.delta = per_rtt(self.rate, self.old_rate);
            self.last_change = now;
        } else if self.slow_start_max_rate > 0.0 {
            if self.lately_limited(now) && self.slow_start_max_rate < initial {
                self.old_rate = self.rate;
                self.rate = self.rate.max(initial);
                self.delta = per_rtt(self.rate, self.old_rate);
                self.last_change = now;
            } else if self.rate < self.slow_start_max_rate && now - self.last_change > self.rtt {
                self.old_rate = self.rate;
                self.rate = (SLOW_START_FACTOR * self.rate)
                    .min(self.slow_start_max_rate)
                    .max(size / self.rtt);
                self.delta = per_rtt(self.rate, self.old_rate);
                self.last_change = now;
            } else if self.rate > self.slow_start_max_rate {
                self.rate = self.slow_start_max_rate / 2.0;
                self.old_rate = self.rate;
                self.delta = 0.0;
                self.last_change = now;
            }
        } else {
            self.old_rate = self.rate;
            self.rate = size / self.rtt;
            self.delta = 0.0;
            self.last_change = now;
        }
    }

    /// increase_rate().
    fn increase(&mut self, now: f64) {
        let size = self.size();
        let rtts = ((now - self.last_change) / self.rtt).min(2.0);
        self.rate += size / self.rtt * rtts;
        let floor = if self.lately_limited(now) {
            rfc3390_packets(size) * size / self.rtt
        } else {
            size / self.rtt
        };
        let limit = self.max_rate.max(floor).min(self.equation_rate);
        self.rate = self.rate.min(limit);
        self.phase = Phase::CongestionAvoidance;
        self.last_change = now;
    }

    /// decrease_rate(), with `maxHeavyRounds_ 0`: never above max(`maxrate_`, s/R).
    fn decrease(&mut self, now: f64) {
        self.rate = self.equation_rate.min(self.max_rate.max(self.size() / self.rtt));
        self.phase = Phase::Decrease;
        self.last_change = now;
    }

    fn trace(&self, ctx: &mut AgentCtx) {
        if ctx.tracing() {
            ctx.trace("x_bps", self.rate * 8.0);
            ctx.trace("p", self.loss_event_rate);
            ctx.trace("rtt", self.rtt);
        }
    }
}

impl Agent for TfrcNs2Sender {
    fn start(&mut self, ctx: &mut AgentCtx) {
        self.send(ctx);
        let gap = self.size() / self.rate;
        self.send_timer.set(ctx.now + from_secs(gap), ctx);
        self.nofeedback_timer.set(ctx.now + from_secs(2.0 * gap), ctx);
    }

    /// recv(): a report.
    fn receive(&mut self, report: &Packet, ctx: &mut AgentCtx) {
        let now = to_secs(ctx.now);
        let (receive_rate, p) = (report.tfrc.receive_rate, report.tfrc.loss_event_rate);
        self.loss_event_rate = p;
        self.round += 1;
        self.urgent = false;
        // receive_rate is in packets per second, as est_thput() reports it.
        (self.slow_start_max_rate, self.max_rate) = if self.round > 1 && receive_rate > 0.0 {
            let twice = 2.0 * receive_rate * self.size();
            (twice, twice)
        } else {
            (0.0, 0.0)
        };
        self.update_rtt(to_secs(ctx.now.saturating_sub(report.sent_at)));
        self.equation_rate = equation_rate(self.size(), self.rtt, self.tzero, p);
        self.restart_nofeedback(ctx);
        if !self.had_feedback {
            self.had_feedback = true;
            self.slow_start(now);
            self.next_packet(ctx);
        } else if self.phase == Phase::SlowStart {
            if p > 0.0 {
                self.phase = Phase::OutOfSlowStart;
                self.rate = self.equation_rate;
                self.old_rate = self.rate;
            } else {
                self.slow_start(now);
                self.next_packet(ctx);
            }
        } else if self.equation_rate > self.rate {
            self.increase(now);
        } else {
            self.decrease(now);
        }
        self.trace(ctx);
    }

    fn timer(&mut self, token: Token, ctx: &mut AgentCtx) {
        match SenderTimer::from_token(token) {
            SenderTimer::Send { generation } => {
                if self.send_timer.expired(generation, ctx) {
                    self.next_packet(ctx);
                }
            }
            SenderTimer::NoFeedback { generation } => {
                if self.nofeedback_timer.expired(generation, ctx) {
                    // reduce_rate_on_no_feedback(), an infinite sender (never data-limited).
                    if self.phase != Phase::SlowStart {
                        self.phase = Phase::Decrease;
                    }
                    self.rate *= 0.5;
                    self.urgent = true;
                    self.round += 1;
                    self.restart_nofeedback(ctx);
                    self.next_packet(ctx);
                    self.trace(ctx);
                }
            }
        }
    }
}

/// The loss-interval history of est_loss_WALI(): `sample[]`, `mult[]`, `sample_count`.
#[derive(Clone, Debug)]
struct Intervals {
    /// Packets in each interval, the open one first (`sample[0]`).
    packets: [f64; 10],
    /// Each interval's discount (`mult[]`).
    discounts: [f64; 10],
    /// Intervals started so far, the open one included (`sample_count`).
    count: usize,
    /// `mult_factor_`: the open interval's discount of the older ones.
    discount: f64,
    /// `false_sample` is 0: no loss yet.
    no_loss_yet: bool,
    /// `discount_`.
    discounting: bool,
}

impl Intervals {
    fn new(discounting: bool) -> Self {
        Intervals {
            packets: [0.0; 10],
            discounts: [1.0; 10],
            count: 1,
            discount: 1.0,
            no_loss_yet: true,
            discounting,
        }
    }

    /// A new loss event closes the open interval (shift_array, multiply_array).
    fn close(&mut self) {
        self.count += 1;
        self.packets.rotate_right(1);
        self.packets[0] = 0.0;
        for d in &mut self.discounts[1..] {
            *d *= self.discount;
        }
        self.discounts.rotate_right(1);
        self.discounts[0] = 1.0;
        self.discount = 1.0;
    }

    /// weighted_average1() over intervals `start` … `end` − 1 with the discount `factor`.
    fn average(&self, start: usize, end: usize, factor: f64) -> f64 {
        let (shift, end) = if start == 0 { (1, end.min(9)) } else { (0, end) };
        let weight = |i: usize| {
            let w = self.discounts[i] * WEIGHTS[i + shift];
            if i == 0 {
                w
            } else {
                factor * w
            }
        };
        let total: f64 = (start..end).map(weight).sum();
        (start..end).map(|i| weight(i) * self.packets[i] / total).sum()
    }

    /// est_loss_WALI()'s p, once the packets up to the highest are counted.
    fn loss_event_rate(&mut self) -> f64 {
        let stored = self.count.min(10);
        if self.count == 1 && self.no_loss_yet {
            return 0.0;
        }
        if self.discounting && self.count > 1 && self.packets[0] > 0.0 {
            let ratio = 2.0 * self.average(1, stored, 1.0) / self.packets[0];
            if ratio < 1.0 {
                self.discount = ratio.max(DISCOUNT_FLOOR);
            }
        }
        let with_open = self.average(0, stored, self.discount);
        let closed = self.average(1, stored, self.discount);
        let mean = with_open.max(closed);
        if mean > 0.0 {
            1.0 / mean
        } else {
            999.0
        }
    }
}

pub struct TfrcNs2Receiver {
    /// `maxseq` (None before the first packet), and its arrival and send times.
    highest: Option<u64>,
    last_arrival: Time,
    last_sent_at: Time,
    /// From the latest data packet: R and t_RTO (s), the sender's round.
    rtt: f64,
    tzero: f64,
    round: u32,
    /// `lastloss` (s) and `lastloss_round_id` (None: -1).
    last_loss: f64,
    last_loss_round: Option<u32>,
    /// `loss_seen_yet`.
    loss_seen: bool,
    /// Packets counted into the intervals so far (`last_sample`), and the losses after that
    /// which start loss events (`lossvec_` LOST).
    counted: u64,
    event_starts: VecDeque<u64>,
    intervals: Intervals,
    /// Arrival times of the packets received within R of the newest (est_thput()).
    recent: VecDeque<(u64, Time)>,
    /// `rcvd_since_last_report`, `last_report_sent`.
    since_report: u64,
    last_report: Time,
    report_timer: Restartable<ReceiverTimer>,
}

impl TfrcNs2Receiver {
    /// `discounting`: `discount_`.
    pub fn new(discounting: bool) -> Self {
        TfrcNs2Receiver {
            highest: None,
            last_arrival: 0,
            last_sent_at: 0,
            rtt: 0.0,
            tzero: 0.0,
            round: 0,
            last_loss: 0.0,
            last_loss_round: None,
            loss_seen: false,
            counted: 0,
            event_starts: VecDeque::new(),
            intervals: Intervals::new(discounting),
            recent: VecDeque::new(),
            since_report: 0,
            last_report: 0,
            report_timer: Restartable::new(|generation| ReceiverTimer::Report { generation }),
        }
    }

    /// new_loss(): a loss sent at `sent` (s) starts an event.
    fn new_loss(&mut self, sent: f64) -> bool {
        let later_round = self.last_loss_round.is_none_or(|r| self.round > r);
        if sent - self.last_loss > self.rtt && later_round {
            self.last_loss = sent;
            self.last_loss_round = Some(self.round);
            true
        } else {
            false
        }
    }

    /// est_thput(): packets per second.
    fn receive_rate(&self, now: Time) -> f64 {
        let since = to_secs(now - self.last_report);
        if self.rtt > 0.0 && since >= self.rtt {
            if self.since_report > 0 {
                return self.since_report as f64 / since;
            }
        } else if self.rtt > 0.0 {
            let window = from_secs(self.rtt);
            let received = self
                .recent
                .iter()
                .filter(|&&(seq, at)| seq > 0 && at + window > self.last_arrival)
                .count();
            if received > 0 {
                return received as f64 / self.rtt;
            }
        }
        1.0
    }

    /// est_loss(): count the packets up to the highest into the intervals, then p.
    fn loss_event_rate(&mut self) -> f64 {
        let highest = self.highest.expect("reports follow a data packet");
        for seq in self.counted..=highest {
            self.intervals.packets[0] += 1.0;
            if self.event_starts.front() == Some(&seq) {
                self.event_starts.pop_front();
                self.intervals.close();
            }
        }
        self.counted = highest + 1;
        self.intervals.loss_event_rate()
    }

    /// adjust_history(): the first loss, seen in a packet sent at `sent` (s), replaces the
    /// history by one interval at the equation's p for the receive rate.
    fn adjust_history(&mut self, sent: f64, size: f64, now: Time) -> f64 {
        self.event_starts.clear();
        self.last_loss = sent;
        self.last_loss_round = Some(self.round);
        let rate = self.receive_rate(now) * size;
        let p = equation_loss_rate(size, self.rtt, self.tzero, rate);
        self.intervals.packets[1] = (1.0 / p).trunc();
        self.intervals.packets[0] = 0.0;
        self.intervals.count += 1;
        self.intervals.no_loss_yet = false;
        p
    }

    /// nextpkt(p): a report (sendpkt(), with `p` or est_loss()), and the timer for 1.5·R.
    fn report(&mut self, p: Option<f64>, ctx: &mut AgentCtx) {
        if self.last_arrival >= self.last_report {
            let loss_event_rate = p.unwrap_or_else(|| self.loss_event_rate());
            let receive_rate = self.receive_rate(ctx.now);
            ctx.send(Packet {
                kind: PacketKind::Ack,
                size: FEEDBACK_SIZE,
                seq: self.highest.expect("reports follow a data packet"),
                // timestamp_echo + timestamp_offset: the sender takes its RTT sample from this.
                sent_at: self.last_sent_at + (ctx.now - self.last_arrival),
                tfrc: TfrcHeader {
                    receive_rate,
                    loss_event_rate,
                    ..Default::default()
                },
                ..Default::default()
            });
            self.last_report = ctx.now;
            self.since_report = 0;
        }
        if self.rtt > 0.0 {
            self.report_timer.set(ctx.now + from_secs(1.5 * self.rtt), ctx);
        }
    }
}

impl Agent for TfrcNs2Receiver {
    fn start(&mut self, _ctx: &mut AgentCtx) {}

    /// recv(): packets arrive in order here (one route, FIFO queues), so every gap is a loss.
    fn receive(&mut self, packet: &Packet, ctx: &mut AgentCtx) {
        let now = ctx.now;
        ctx.deliver(packet.size as u64);
        self.since_report += 1;
        let seq = packet.seq;
        let before = self.highest.unwrap_or(seq.wrapping_sub(1));
        let (before_sent, before_known) = (self.last_sent_at, self.highest.is_some());
        self.round = packet.tfrc.round;
        self.rtt = packet.tfrc.rtt;
        self.tzero = packet.tfrc.tzero;
        self.last_arrival = now;
        self.last_sent_at = packet.sent_at;
        self.recent.push_back((seq, now));
        let window = from_secs(self.rtt);
        while self.recent.front().is_some_and(|&(_, at)| at + window <= now) {
            self.recent.pop_front();
        }
        let mut congestion = false;
        if before_known && seq > before + 1 {
            // estimate_tstamp(): send times interpolated between the packets around the gap.
            let (t0, t1) = (to_secs(before_sent), to_secs(packet.sent_at));
            for lost in before + 1..seq {
                let sent = t0 + (lost - before) as f64 * (t1 - t0) / (seq - before) as f64;
                if self.new_loss(sent) {
                    congestion = true;
                    self.event_starts.push_back(lost);
                }
            }
        }
        self.highest = Some(seq);
        let mut urgent = packet.tfrc.urgent;
        let mut p = None;
        if before_known && seq > before + 1 && !self.loss_seen {
            urgent = true;
            self.loss_seen = true;
            p = Some(self.adjust_history(to_secs(packet.sent_at), packet.size as f64, now));
        }
        if self.rtt > SMALL && to_secs(now - self.last_report) >= self.rtt {
            urgent = true;
        }
        if urgent || congestion {
            self.report(p, ctx);
        }
    }

    fn timer(&mut self, token: Token, ctx: &mut AgentCtx) {
        let ReceiverTimer::Report { generation } = ReceiverTimer::from_token(token);
        if self.report_timer.expired(generation, ctx) {
            self.report(None, ctx);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::NANOS_PER_SEC;
    use crate::transport::testing::AgentHarness;

    const MS: Time = NANOS_PER_SEC / 1000;

    #[test]
    fn the_equation_caps_its_timeout_term_as_formula_h() {
        // p = 0.5: 3·√(3p/8) = 1.06, capped at 1: 1000 / (0.1·√(1/3) + 0.4·0.5·9).
        let capped = 1000.0 / (0.1 * (1.0_f64 / 3.0).sqrt() + 0.4 * 0.5 * 9.0);
        assert!((equation_rate(1000.0, 0.1, 0.4, 0.5) - capped).abs() < 1e-9);
        // Below p = 8/27 the cap does not bite: RFC 5348's equation with t_RTO given.
        let rfc = super::super::tfrc::equation_rate_with_rto(1000.0, 0.1, 0.4, 0.01);
        assert!((equation_rate(1000.0, 0.1, 0.4, 0.01) - rfc).abs() < 1e-9 * rfc);
        assert_eq!(equation_rate(1000.0, 0.1, 0.4, 0.0), MAX_RATE);
    }

    #[test]
    fn the_inverse_stops_within_five_percent() {
        let rate = equation_rate(1000.0, 0.05, 0.3, 0.02);
        let p = equation_loss_rate(1000.0, 0.05, 0.3, rate);
        let at = equation_rate(1000.0, 0.05, 0.3, p);
        assert!(at > 0.95 * rate && at < 1.05 * rate, "{p}: {at} for {rate}");
        assert_ne!(p, 0.02, "b_to_p stops at the first step within 5 %, not at p");
    }

    #[test]
    fn intervals_are_weighted_and_the_open_one_counts_only_when_it_raises_the_mean() {
        let mut h = Intervals::new(false);
        h.no_loss_yet = false;
        // Closed intervals of 100 packets, newest first 100, 100, ..., the open one 10.
        for _ in 0..9 {
            h.packets[0] = 100.0;
            h.close();
        }
        h.packets[0] = 10.0;
        assert!((h.loss_event_rate() - 0.01).abs() < 1e-12);
        // An open interval of 1000: (1000 + 100·(1+1+1+0.8+0.6+0.4+0.2)) / 6 = 250.
        h.packets[0] = 1000.0;
        assert!((1.0 / h.loss_event_rate() - 250.0).abs() < 1e-9);
    }

    fn data(seq: u64, sent_ms: u64, round: u32) -> Packet {
        Packet {
            kind: PacketKind::Data,
            size: 1000,
            seq,
            sent_at: sent_ms * MS,
            tfrc: TfrcHeader {
                rtt: 0.05,
                tzero: 0.2,
                round,
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn a_gap_is_a_loss_at_the_next_packet_and_the_first_is_reported_at_once() {
        let mut h = AgentHarness::receiver(TfrcNs2Receiver::new(true));
        // Packets 0..10 every 10 ms; the first report goes when R has passed since none (now ≥ R).
        for seq in 0..10 {
            h.receive((seq * 10 + 60) * MS, &data(seq, seq * 10, 3));
        }
        let before = h.sent.len();
        // Packet 10 is lost: packet 11 declares it (numPkts_ 1) and reports at once with the
        // first interval from the receive rate.
        let report = h.receive(170 * MS, &data(11, 110, 3));
        assert_eq!(report.len(), 1, "{before} reports before");
        let p = report[0].tfrc.loss_event_rate;
        let rate = h.agent.receive_rate(170 * MS) * 1000.0;
        let at = equation_rate(1000.0, 0.05, 0.2, p);
        assert!(at > 0.95 * rate && at < 1.05 * rate, "p {p}: {at} B/s for {rate} B/s");
        assert_eq!(h.agent.intervals.packets[1], (1.0 / p).trunc());
        // Losses in the same round, more than R later, start no new event (PreciseLoss_).
        h.receive(180 * MS, &data(12, 120, 3));
        h.receive(250 * MS, &data(20, 190, 3));
        assert!(h.agent.event_starts.is_empty());
        let intervals = h.agent.intervals.count;
        // In a later round one does, and is reported at once.
        assert_eq!(h.receive(330 * MS, &data(22, 270, 4)).len(), 1);
        assert_eq!(h.agent.intervals.count, intervals + 1);
    }

    fn sender() -> AgentHarness<TfrcNs2Sender> {
        AgentHarness::sender(TfrcNs2Sender::new(SenderParams {
            size: 1000.0,
            initial_rate: 300.0,
            tick: 100 * MS,
            stop: Time::MAX,
        }))
    }

    fn report(echo_ms: u64, receive_rate: f64, p: f64) -> Packet {
        Packet {
            kind: PacketKind::Ack,
            sent_at: echo_ms * MS,
            tfrc: TfrcHeader {
                receive_rate,
                loss_event_rate: p,
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn slow_start_doubles_at_most_once_per_rtt_and_leaves_at_the_equation() {
        let mut h = sender();
        assert_eq!(h.start(0).len(), 1);
        // InitRate_ 300 B/s: the next packet 3.33 s later; the first report (R = 50 ms) sets
        // RFC 3390's 4 packets per R and sends a packet at once.
        assert_eq!(h.receive(50 * MS, &report(0, 1.0, 0.0)).len(), 1);
        assert!((h.agent.rate - 4.0 * 1000.0 / 0.05).abs() < 1e-6);
        // Round 2 keeps the initial rate; round 3, more than R after the last change, doubles it
        // within twice the receive rate (200 packets/s: 400 kB/s).
        h.receive(100 * MS, &report(50, 200.0, 0.0));
        assert!((h.agent.rate - 80_000.0).abs() < 1e-6);
        h.receive(160 * MS, &report(110, 200.0, 0.0));
        assert!((h.agent.rate - 160_000.0).abs() < 1e-6);
        // Again within R of that change: no increase.
        h.receive(190 * MS, &report(140, 200.0, 0.0));
        assert!((h.agent.rate - 160_000.0).abs() < 1e-6);
        // A loss: out of slow start at the equation's rate, with ns-2's t_RTO.
        h.receive(260 * MS, &report(210, 200.0, 0.01));
        assert_eq!(h.agent.phase, Phase::OutOfSlowStart);
        let expected = equation_rate(1000.0, h.agent.rtt, h.agent.tzero, 0.01);
        assert!((h.agent.rate - expected).abs() < 1e-9);
        assert!(h.agent.tzero >= 0.2, "t_RTO in whole 100-ms ticks: {}", h.agent.tzero);
    }
}
