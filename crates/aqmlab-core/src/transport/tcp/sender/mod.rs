//! TCP senders, ns-2 one-way style: sequence numbers and windows in packets.
//!
//! Two recovery families, one file each, each to be read alone:
//! - [`reno_family`]: Tahoe, Reno, NewReno and SACK as today's RFCs (profile `rfc`) and the
//!   ns-2 of 1997–2001 (profile `ns2`) run them: duplicate ACKs, window inflation, partial
//!   ACKs, RFC 6675's pipe or ns-2's Sack1;
//! - [`linux`]: Linux 6.1's sender (profile `linux`): RACK, Proportional Rate Reduction, Tail
//!   Loss Probes, a congestion control module ([`super::cc`]) and internal pacing.
//!
//! What both run is here, once ([`SenderCore`]): the application above TCP (an infinite
//! source, one transfer, web transfers) and its transfers, the sequence space, cwnd and
//! ssthresh, the once-per-window rules for reductions (`recover`, RFC 6582 §3.2 step 1;
//! ECN-echo, RFC 3168 §6.1.2), the data packet as sent, the retransmission and transfer timers
//! and the trace. [`TcpSender`] runs one family ([`Recovery`]) on it; the profile picks the
//! family when the flow is built ([`build`]), as `Profiled` picks a qdisc's Linux twin, so a
//! sender holds only its own family's state and tests no profile on an ACK.

pub mod linux;
pub mod reno_family;

use super::web::{FileSize, ThinkTime};
use super::{EcnFeedback, Profile, TcpParams, Workload};
use crate::packet::{Ecn, Packet, PacketKind};
use crate::rng::Rng;
use crate::time::{from_secs, to_secs, Time};
use crate::transport::timer::{Generation, Restartable};
use crate::transport::{Agent, AgentCtx, AgentStats, Offer, TimerKind, Token, Transfer};
use linux::Linux;
use reno_family::{RenoFamily, Rules};

/// The variables a traced sender records whenever they change (`pacing_rate`, bytes/s, only
/// when it paces; `base_delay`, seconds, only under LEDBAT; `alpha`, the estimated marked
/// fraction, only under DCTCP and Prague); besides, `rtt` at every RTT sample
/// ([`SenderCore::acknowledge`]).
const TRACED: [&str; 8] = [
    "cwnd",
    "ssthresh",
    "rto",
    "srtt",
    "rttvar",
    "pacing_rate",
    "base_delay",
    "alpha",
];

crate::timer_kinds! {
    /// The sender's timers.
    enum SenderTimer {
        /// The retransmission timer (`retransmit_timer`); the linux family runs one of three
        /// events on it.
        Retransmit { generation: Generation },
        /// The web workload's next transfer after a think time (`transfer_timer`).
        NextTransfer { generation: Generation },
        /// The linux family's internal pacing (tcp_output.c `pacing_timer`, tcp_pace_kick()):
        /// the next packet's departure time has come.
        Pace { generation: Generation },
        /// A pause of the application ends (`pauses`): new data again.
        Resume,
    }
}

/// The sender the flow's profile runs: the linux family under `linux`, the Reno family by
/// the RFCs' rules or ns-2's under `rfc` and `ns2`.
pub fn build(params: &TcpParams, workload: &Workload, size: u32, offer: Offer, rng: Rng) -> Box<dyn Agent> {
    let core = SenderCore::new(params, workload, size, offer, rng);
    match params.profile {
        Profile::Rfc => Box::new(TcpSender::new(core, |rng| RenoFamily::new(params, Rules::Rfc, rng))),
        Profile::Ns2 => Box::new(TcpSender::new(core, |rng| RenoFamily::new(params, Rules::Ns2, rng))),
        Profile::Linux => Box::new(TcpSender::new(core, |_| Linux::new(params, size))),
    }
}

/// What a recovery family adds to the shared sender: how it sends, reads an ACK, reacts to
/// its retransmission timer and estimates the RTT.
pub(crate) trait Recovery: Send {
    /// A new transfer opens a new connection: the RTT estimate and the family's loss state
    /// start afresh, and the congestion control module with them ([`Recovery::init_module`]).
    fn new_connection(&mut self, core: &mut SenderCore, ctx: &mut AgentCtx);

    /// The congestion control module at a connection's start (`init`), if the family has one.
    fn init_module(&mut self, _core: &mut SenderCore, _ctx: &mut AgentCtx) {}

    /// Sends what the window and the recovery state allow.
    fn send_more(&mut self, core: &mut SenderCore, ctx: &mut AgentCtx);

    /// An ACK arrived.
    fn on_ack(&mut self, core: &mut SenderCore, ack: &Packet, ctx: &mut AgentCtx);

    /// The retransmission timer fired (not stale).
    fn on_retransmit_timer(&mut self, core: &mut SenderCore, ctx: &mut AgentCtx);

    /// The pacing timer fired; only a family that paces sets it.
    fn on_pace_timer(&mut self, _core: &mut SenderCore, _generation: Generation, _ctx: &mut AgentCtx) {}

    /// The application offers data again after a pause, with nothing outstanding and nothing
    /// sent for `idle`: the family's rule for a connection that was idle (RFC 5681 §4.1's
    /// restart window, Linux's tcp_cwnd_restart(), or none as ns-2's).
    fn restart_after_idle(&mut self, core: &mut SenderCore, idle: Time, ctx: &mut AgentCtx);

    /// The retransmission timeout, seconds.
    fn rto(&self) -> f64;

    /// SRTT and RTTVAR in seconds, once estimated.
    fn srtt_and_rttvar(&self) -> Option<(f64, f64)>;

    /// The pacing rate, bytes/s, of a sender that paces.
    fn pacing_rate(&mut self) -> Option<f64> {
        None
    }

    /// The base delay, seconds, of a module that estimates it (LEDBAT), once it has a sample.
    fn base_delay(&self) -> Option<f64> {
        None
    }

    /// α, the marked fraction a module estimates (DCTCP, Prague).
    fn alpha(&self) -> Option<f64> {
        None
    }
}

/// The [`Workload`] as the sender draws from it.
enum Application {
    Infinite,
    /// One transfer of this many packets.
    Transfer(u64),
    /// Transfers of random size separated by random think times (web.rs).
    Web {
        size: FileSize,
        think: ThinkTime,
    },
}

/// What every sender runs with, resolved once in [`SenderCore::new`] from the flow's
/// [`TcpParams`]: never changed by the algorithm.
#[derive(Clone, Debug)]
struct CoreParams {
    /// Data packet size, bytes.
    size: u32,
    /// Maximum (receiver) window, packets.
    window: u64,
    initial_window: f64,
    initial_ssthresh: f64,
    /// The codepoint of new data packets (NotEct: not ECN-capable) and how CE comes back.
    ecn: Ecn,
    ecn_feedback: EcnFeedback,
    /// When the application offers new data (until the flow's stop, except in its pauses).
    offer: Offer,
}

/// What an ACK of new data moved ([`SenderCore::acknowledge`]).
struct NewAck {
    /// The cumulative ACK, at most `snd_max`.
    ack: u64,
    /// Packets it acknowledged for the first time.
    acked: u64,
    /// The RTT it measured, seconds: the ACK echoes the send time of the packet it
    /// acknowledges (the sink's older one when it delays).
    rtt: f64,
    /// The one-way delay it echoes, seconds (the newest data packet's: RFC 6817 §2.4.1).
    one_way_delay: f64,
}

/// What an ACK says of CE marks ([`SenderCore::congestion_echo`]).
#[derive(Clone, Copy, Debug, Default)]
struct CongestionEcho {
    /// It echoes congestion: ECE set, or the receiver's CE count rose.
    echoed: bool,
    /// Under accurate feedback, the data packets newly reported CE.
    newly_ce: Option<u64>,
}

impl CongestionEcho {
    /// Of `delivered` packets the ACK delivered, those echoed CE (`tp->delivered_ce`): the
    /// count under accurate feedback; under classic, all of them when it has ECE (Linux 6.1
    /// tcp_count_delivered()'s `ece_ack`).
    fn delivered_ce(&self, delivered: u64) -> u64 {
        self.newly_ce.unwrap_or(if self.echoed { delivered } else { 0 })
    }
}

/// The state both families share: parameters, the application above TCP, then the
/// connection's variables (RFC 793 names), timers and counters.
pub(crate) struct SenderCore {
    params: CoreParams,
    application: Application,
    rng: Rng,

    /// Oldest unacknowledged packet (the cumulative ACK).
    snd_una: u64,
    /// Next packet to send (below `snd_max` after a go-back-N restart).
    snd_nxt: u64,
    /// One past the highest packet ever sent.
    snd_max: u64,
    /// One past the last packet of the current transfer (u64::MAX: infinite).
    data_end: u64,
    cwnd: f64,
    ssthresh: f64,
    in_recovery: bool,
    /// `snd_max` when the window was last reduced for loss; no new fast
    /// retransmit until the cumulative ACK passes it (RFC 6582 §3.2 step 1).
    recover: Option<u64>,
    /// `snd_max` at the last window reduction: ECN-echo is honoured once per window (RFC 3168 §6.1.2).
    ecn_recover: u64,
    /// The last window reduction was for ECN-echo (ns-2 `last_cwnd_action_ == CWND_ACTION_ECN`):
    /// a loss detected in that window is repaired without halving again.
    ecn_reduced: bool,
    /// Under accurate feedback, the receiver's CE count as last reported.
    ce_reported: u32,
    retransmit_timer: Restartable<SenderTimer>,
    transfer_timer: Restartable<SenderTimer>,
    /// When a data packet was last sent (Linux's `lsndtime`): how long a pause left it idle.
    last_sent: Time,
    stats: AgentStats,
    /// Last traced value of each of [`TRACED`] (NaN: none yet).
    traced: [f64; TRACED.len()],
}

impl SenderCore {
    fn new(opts: &TcpParams, workload: &Workload, size: u32, offer: Offer, rng: Rng) -> Self {
        let application = match workload {
            Workload::Infinite => Application::Infinite,
            Workload::Transfer(t) => Application::Transfer(t.packets),
            Workload::Web(web) => Application::Web {
                size: FileSize::pareto(web.pareto_mean, web.pareto_shape),
                think: ThinkTime::exponential(web.think_time.0),
            },
            Workload::Neidhardt(n) => Application::Web {
                size: n.file_size(),
                think: n.think_time(),
            },
        };
        SenderCore {
            params: CoreParams {
                size,
                window: opts.window,
                initial_window: opts.initial_window as f64,
                initial_ssthresh: opts.initial_ssthresh,
                ecn: opts.ecn.ecn(),
                ecn_feedback: opts.ecn_feedback,
                offer,
            },
            application,
            rng,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            data_end: 0,
            cwnd: opts.initial_window as f64,
            ssthresh: opts.initial_ssthresh,
            in_recovery: false,
            recover: None,
            ecn_recover: 0,
            ecn_reduced: false,
            ce_reported: 0,
            retransmit_timer: Restartable::new(|generation| SenderTimer::Retransmit { generation }),
            transfer_timer: Restartable::new(|generation| SenderTimer::NextTransfer { generation }),
            last_sent: 0,
            stats: AgentStats::default(),
            traced: [f64::NAN; TRACED.len()],
        }
    }

    /// Whether packet `seq` exists: already sent once, or new data the application still has.
    fn has_data(&self, seq: u64, now: Time) -> bool {
        seq < self.snd_max || (seq < self.data_end && self.params.offer.offers(now))
    }

    /// Packets sent and not cumulatively acknowledged.
    fn flight(&self) -> f64 {
        (self.snd_max - self.snd_una) as f64
    }

    /// Sends data packet `seq`, new or again; returns whether it was a retransmission.
    fn transmit(&mut self, seq: u64, ctx: &mut AgentCtx) -> bool {
        let retransmit = seq < self.snd_max;
        self.last_sent = ctx.now;
        if retransmit {
            self.stats.retransmitted_packets += 1;
        } else {
            self.snd_max = seq + 1;
        }
        // RFC 3168 §6.1.5: retransmissions are not ECN-capable.
        let ecn = if retransmit { Ecn::NotEct } else { self.params.ecn };
        ctx.send(Packet {
            kind: PacketKind::Data,
            size: self.params.size,
            seq,
            sent_at: ctx.now,
            retransmit,
            ecn,
            ..Default::default()
        });
        retransmit
    }

    /// Moves the cumulative ACK to `p`'s (RFC 793 SND.UNA) and measures the RTT, traced
    /// unless the ACK is for a retransmission (Karn: whose echo is ambiguous).
    fn acknowledge(&mut self, p: &Packet, ctx: &mut AgentCtx) -> NewAck {
        let ack = p.seq.min(self.snd_max);
        let acked = ack - self.snd_una;
        self.snd_una = ack;
        self.snd_nxt = self.snd_nxt.max(ack);
        let rtt = to_secs(ctx.now - p.sent_at);
        if !p.retransmit && ctx.tracing() {
            ctx.trace("rtt", rtt);
        }
        NewAck {
            ack,
            acked,
            rtt,
            one_way_delay: to_secs(p.one_way_delay),
        }
    }

    /// What ACK `p` says of CE marks: ECE under classic feedback; under accurate feedback the
    /// rise of the receiver's CE count, which this reads.
    fn congestion_echo(&mut self, p: &Packet) -> CongestionEcho {
        if self.params.ecn == Ecn::NotEct {
            return CongestionEcho::default();
        }
        match self.params.ecn_feedback {
            EcnFeedback::Classic => CongestionEcho {
                echoed: p.ece,
                newly_ce: None,
            },
            EcnFeedback::Accurate => {
                let newly = p.ce_packets.saturating_sub(self.ce_reported);
                self.ce_reported = self.ce_reported.max(p.ce_packets);
                CongestionEcho {
                    echoed: newly > 0,
                    newly_ce: Some(u64::from(newly)),
                }
            }
        }
    }

    /// The ACK's echo calls for a reduction (RFC 3168 §6.1.2): outside recovery, for data sent
    /// after the last reduction (Linux's CWR state, held until `high_seq` is acknowledged).
    fn ecn_echo(&self, echo: &CongestionEcho, p: &Packet) -> bool {
        echo.echoed && !self.in_recovery && p.seq > self.ecn_recover
    }

    /// The window a reduction halves (or gives the module): in Reno/NewReno recovery
    /// ssthresh, not the inflated cwnd; packets sent by FRED's tiny-window rule are not
    /// counted (FRED §11.3). RFC 5681 eq. (4) halves FlightSize, which is the window for a
    /// flow that fills it.
    fn window_before_reduction(&self) -> f64 {
        if self.in_recovery {
            self.ssthresh
        } else {
            self.cwnd
        }
    }

    /// A fast retransmission: the window was reduced for loss (or already for ECN), and no
    /// other reduction comes until the cumulative ACK passes what is out now.
    fn fast_retransmitting(&mut self) {
        self.stats.fast_retransmits += 1;
        self.reduced_for_loss();
    }

    fn reduced_for_loss(&mut self) {
        self.ecn_reduced = false;
        self.recover = Some(self.snd_max);
        self.ecn_recover = self.snd_max;
    }

    /// RFC 3168 §6.1.2: the window was halved for ECN-echo. The reduction sets the recovery
    /// point, so a loss in the same window does not halve again (ns-2 ecn(): `recover_ = maxseq_`).
    fn reduced_for_ecn(&mut self) {
        self.ecn_recover = self.snd_max;
        self.recover = Some(self.snd_max);
        self.ecn_reduced = true;
    }

    /// A retransmission timeout; false, and nothing done, when nothing is outstanding.
    /// RFC 5681 §3.1: ssthresh by the family's rule (`ssthresh`), cwnd = loss window (1
    /// packet); RFC 6582: recover = highest sent; recovery ends. Within a window already
    /// halved for ECN-echo ssthresh stays (RFC 3168 §6.1.2; ns-2 tcp.cc timeout():
    /// `highest_ack_ < recover_ && last_cwnd_action_ == CWND_ACTION_ECN`).
    fn timed_out(&mut self, ssthresh: impl FnOnce(&mut SenderCore)) -> bool {
        if self.snd_una == self.snd_max {
            return false;
        }
        self.stats.timeouts += 1;
        if !(self.ecn_reduced && self.recover.is_some_and(|r| self.snd_una < r)) {
            ssthresh(self);
        }
        self.reduced_for_loss();
        self.cwnd = 1.0;
        self.in_recovery = false;
        true
    }

    /// The ACK of `snd_una` may have completed the transfer; SRED §7: the think time before
    /// the next starts when its last packet is acknowledged.
    fn check_transfer_done(&mut self, ctx: &mut AgentCtx) {
        if self.snd_una < self.data_end {
            return;
        }
        let Some(t) = self.stats.transfers.last_mut().filter(|t| t.end.is_none()) else {
            return;
        };
        t.end = Some(to_secs(ctx.now));
        if let Application::Web { think, .. } = &self.application {
            let gap = think.sample(&mut self.rng);
            self.transfer_timer.set(ctx.now + from_secs(gap), ctx);
        }
    }
}

/// A TCP sender: the shared part and one recovery family.
pub(crate) struct TcpSender<R> {
    core: SenderCore,
    recovery: R,
}

impl<R: Recovery> TcpSender<R> {
    /// `recovery` builds the family, drawing from the flow's stream what it needs at the start.
    fn new(mut core: SenderCore, recovery: impl FnOnce(&mut Rng) -> R) -> Self {
        let recovery = recovery(&mut core.rng);
        TcpSender { core, recovery }
    }

    /// A new transfer opens a new connection: initial cwnd, ssthresh and RTO (SRED §7).
    fn start_transfer(&mut self, packets: u64, ctx: &mut AgentCtx) {
        let core = &mut self.core;
        core.data_end = core.snd_max + packets;
        core.cwnd = core.params.initial_window;
        core.ssthresh = core.params.initial_ssthresh;
        core.in_recovery = false;
        core.recover = None;
        core.ecn_reduced = false;
        self.recovery.new_connection(core, ctx);
        core.stats.transfers.push(Transfer {
            flow: ctx.flow(),
            start: to_secs(ctx.now),
            end: None,
            packets,
        });
        self.recovery.send_more(core, ctx);
    }

    /// Starts the next web object: a random number of packets, at least one.
    fn start_web_transfer(&mut self, ctx: &mut AgentCtx) {
        if let Application::Web { size, .. } = &self.core.application {
            let packets = size.packets(&mut self.core.rng);
            self.start_transfer(packets, ctx);
        }
    }

    /// A pause ends: after the family's rule for an idle connection if everything sent was
    /// acknowledged (else the ACKs still clock the sender), new data as the window allows.
    fn resume(&mut self, ctx: &mut AgentCtx) {
        let core = &mut self.core;
        if core.snd_una == core.snd_max {
            let idle = ctx.now - core.last_sent;
            self.recovery.restart_after_idle(core, idle, ctx);
        }
        self.recovery.send_more(core, ctx);
    }

    fn trace(&mut self, ctx: &mut AgentCtx) {
        if !ctx.tracing() {
            return;
        }
        let (srtt, rttvar) = self.recovery.srtt_and_rttvar().unzip();
        let values = [
            Some(self.core.cwnd),
            Some(self.core.ssthresh),
            Some(self.recovery.rto()),
            srtt,
            rttvar,
            self.recovery.pacing_rate(),
            self.recovery.base_delay(),
            self.recovery.alpha(),
        ];
        for ((name, value), last) in TRACED.into_iter().zip(values).zip(&mut self.core.traced) {
            if let Some(value) = value.filter(|v| *v != *last) {
                ctx.trace(name, value);
                *last = value;
            }
        }
    }
}

impl<R: Recovery> Agent for TcpSender<R> {
    fn start(&mut self, ctx: &mut AgentCtx) {
        match self.core.application {
            Application::Infinite => {
                self.core.data_end = u64::MAX;
                for &(_, until) in &self.core.params.offer.pauses {
                    ctx.set_timer(until, SenderTimer::Resume);
                }
                self.recovery.init_module(&mut self.core, ctx);
                self.recovery.send_more(&mut self.core, ctx);
            }
            Application::Transfer(n) => self.start_transfer(n, ctx),
            Application::Web { .. } => self.start_web_transfer(ctx),
        }
        self.trace(ctx);
    }

    fn receive(&mut self, p: &Packet, ctx: &mut AgentCtx) {
        if p.kind != PacketKind::Ack {
            return;
        }
        self.recovery.on_ack(&mut self.core, p, ctx);
        self.trace(ctx);
    }

    fn timer(&mut self, token: Token, ctx: &mut AgentCtx) {
        match SenderTimer::from_token(token) {
            SenderTimer::Retransmit { generation } => {
                if self.core.retransmit_timer.expired(generation, ctx) {
                    self.recovery.on_retransmit_timer(&mut self.core, ctx);
                }
            }
            SenderTimer::NextTransfer { generation } => {
                if self.core.transfer_timer.expired(generation, ctx) && ctx.now < self.core.params.offer.stop {
                    self.start_web_transfer(ctx);
                }
            }
            SenderTimer::Pace { generation } => self.recovery.on_pace_timer(&mut self.core, generation, ctx),
            SenderTimer::Resume => self.resume(ctx),
        }
        self.trace(ctx);
    }

    fn stats(&self) -> AgentStats {
        self.core.stats.clone()
    }
}

/// The test harness both families' tests drive a sender with.
#[cfg(test)]
mod testing {
    use super::*;
    use crate::transport::testing::AgentHarness;

    pub fn seqs(packets: &[Packet]) -> Vec<u64> {
        packets.iter().map(|p| p.seq).collect()
    }

    /// A started sender driven by hand: `ack(seq)` feeds an ACK 1 ms after the previous call
    /// and returns the sequence numbers sent in reply. `recovery` builds the family.
    pub fn started<R: Recovery>(
        params: &TcpParams,
        recovery: impl FnOnce(&TcpParams, &mut Rng) -> R,
    ) -> AgentHarness<TcpSender<R>> {
        let offer = Offer::until(Time::MAX);
        let core = SenderCore::new(params, &Workload::Infinite, 1000, offer, crate::rng::stream(1, "t"));
        let mut h = AgentHarness::sender(TcpSender::new(core, |rng| recovery(params, rng)));
        h.start(0);
        h
    }

    impl<R: Recovery> AgentHarness<TcpSender<R>> {
        pub fn ack_with(&mut self, seq: u64, ece: bool) -> Vec<u64> {
            self.deliver(Packet {
                kind: PacketKind::Ack,
                seq,
                ece,
                sent_at: 0,
                ..Default::default()
            })
        }

        /// An ACK carrying SACK blocks `[start, end)`, most recent first (as the sink sends them).
        pub fn sack(&mut self, seq: u64, blocks: &[(u64, u64)]) -> Vec<u64> {
            let mut ack = Packet {
                kind: PacketKind::Ack,
                seq,
                sack_len: blocks.len() as u8,
                ..Default::default()
            };
            ack.sack[..blocks.len()].copy_from_slice(blocks);
            self.deliver(ack)
        }

        pub fn deliver(&mut self, ack: Packet) -> Vec<u64> {
            seqs(&self.receive(self.now + 1_000_000, &ack))
        }

        pub fn ack(&mut self, seq: u64) -> Vec<u64> {
            self.ack_with(seq, false)
        }

        /// Runs the retransmission timer at its deadline, whichever event it holds; returns
        /// the sequence numbers sent.
        pub fn fire_xmit(&mut self) -> Vec<u64> {
            let deadline = self.agent.core.retransmit_timer.deadline().expect("an armed timer");
            let now = self.now.max(deadline);
            let tokens: Vec<Token> = self.timers.drain(..).map(|(_, token)| token).collect();
            let mut sent = Vec::new();
            for token in tokens {
                sent.extend(self.fire(now, token));
            }
            seqs(&sent)
        }

        /// Lets the retransmission timer expire; returns the sequence numbers sent.
        pub fn expire(&mut self) -> Vec<u64> {
            let before = self.agent.core.stats.timeouts;
            let mut sent = Vec::new();
            while self.agent.core.stats.timeouts == before {
                let (at, token) = *self.timers.last().expect("a pending timer");
                self.timers.clear();
                sent.extend(self.fire(self.now.max(at), token));
            }
            seqs(&sent)
        }
    }
}
