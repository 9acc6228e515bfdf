//! TCP sender, ns-2 one-way style: sequence numbers and windows in packets.
//!
//! Common machinery (all variants): slow start and congestion avoidance
//! counted in ACKs (RFC 5681 §3.1), duplicate-ACK counting, fast retransmit
//! on the third duplicate ACK, at most one window reduction per window of data
//! (`recover`, RFC 6582 §3.2 step 1 / ns-2 bug_fix_), retransmission timeout
//! with go-back-N from the first unacknowledged packet, RTT estimation
//! ([`RtoEstimator`]), ECN response, FRED's tiny-window enhancement and
//! finite transfers. [`Variant`] changes only what happens on loss detection
//! and during recovery:
//!
//! | | on 3 dup ACKs | during recovery | partial ACK | full ACK |
//! |---|---|---|---|---|
//! | tahoe | cwnd = 1, go-back-N | (no recovery state) | | |
//! | reno | cwnd = ssthresh + 3 | cwnd += 1 per dup ACK | leave: cwnd = ssthresh | leave: cwnd = ssthresh |
//! | newreno | as reno | as reno | retransmit next, deflate | cwnd = min(ssthresh, flight + 1) |
//! | sack | cwnd = ssthresh | send NextSeg() while pipe < cwnd | (pipe) | leave |
//!
//! The retransmission timer restarts on every new ACK (RFC 6298 (5.3)) except
//! NewReno's later partial ACKs (RFC 6582 §4, "Impatient").
//!
//! [`Profile::Ns2`] replaces, each rule with ns-2's file and variable (ns-2 of
//! 1997–2001, ns-default.tcl defaults):
//! - congestion avoidance `cwnd_ += 1/cwnd_` per new ACK (tcp.cc opencwnd(), `windowOption_ 1`;
//!   [`CongestionAvoidance`], which a scenario may also set on its own);
//! - the RTT estimator by [`Ns2Rtt`] (one packet per RTT, 100 ms ticks, integer arithmetic);
//! - NewReno restarts the timer on every partial ACK ("Slow-but-Steady",
//!   tcp-newreno.cc partialnewack_helper(), `newreno_changes1_ 0`), drops the
//!   inflation there (`partial_window_deflation_ 0`: `dupwnd_ = 0`), sends at
//!   most 2 packets per ACK in recovery (recv(): `send_much(0, 0, 2)`), and
//!   leaves recovery with cwnd = ssthresh plus one opencwnd() and no burst
//!   limit (`exit_recovery_fix_ 0`); Reno's exiting ACK opens cwnd too (tcp-reno.cc recv());
//! - a timeout during Reno/NewReno/SACK recovery halves the halved window:
//!   RenoTcpAgent::timeout() zeroes `dupwnd_` before TcpAgent::timeout()'s
//!   slowdown(CLOSE_SSTHRESH_HALF) of window() = cwnd_, and Sack1's window() is
//!   cwnd_ (tcp-sack1.cc); RFC 5681 eq. (4) halves FlightSize instead;
//! - SACK recovery is Sack1's (tcp-sack1.cc): a duplicate ACK counts only if its
//!   blocks SACK something new, and only the third starts recovery (no IsLost);
//!   `pipe_` is arithmetic, not RFC 6675's SetPipe: flight − 3 on entering (the
//!   fast retransmission not counted), −1 per ACK in recovery, −1 more on a partial
//!   ACK, +1 per packet sent; while pipe_ < int(cwnd_) send the first hole above the
//!   last retransmission (a hole: below the highest SACKed packet), else new data;
//!   the ACK that enters recovery sends nothing more; a partial ACK restarts the
//!   timer and ends the back-off without an RTT sample; the scoreboard is forgotten
//!   on every ACK that leaves the sender out of recovery.
//!
//! [`Profile::Linux`] is Linux 6.1's sender (net/ipv4/tcp_input.c, tcp_output.c), SACK only:
//! - the window is `cc`'s ([`LinuxCc`]): grown on each ACK that acknowledges new data
//!   outside recovery by the packets it delivered (cumulatively or by SACK), only while
//!   the sender is cwnd-limited (tcp_is_cwnd_limited(), tcp_cwnd_validate()); ssthresh
//!   from the module on loss, ECN-echo and timeouts;
//! - RTT from every ACK of new data ([`LinuxRto`]: RTO = SRTT + max(RTTVAR term, 200 ms));
//! - the retransmission queue is [`RackBoard`]: packets in flight are Linux's
//!   packets_out − sacked_out − lost_out + retrans_out in every state, so SACKed packets
//!   make room for new data before recovery too; RACK (RFC 8985, tcp_recovery.c) marks
//!   packets lost, retransmissions included;
//! - recovery starts on an ACK once a packet is marked lost (tcp_time_to_recover():
//!   `lost_out`; RACK marks none before 3 packets are SACKed) and ends when `recover`
//!   (high_seq) is acknowledged, with cwnd = ssthresh (tcp_end_cwnd_reduction()); in
//!   between, each ACK that delivers data sets cwnd by Proportional Rate Reduction
//!   ([`Prr`], RFC 6937, tcp_cwnd_reduction()), the fast retransmission included; only
//!   packets marked lost are retransmitted, in order, then new data (tcp_xmit_retransmit_queue());
//! - a timeout recomputes ssthresh only when no reduction is under way (tcp_enter_loss()),
//!   restarts the module (CUBIC forgets W_max: cubictcp_state(TCP_CA_Loss)) and marks every
//!   packet not SACKed lost; SACKed ones are kept. Until `recover` is acknowledged
//!   (TCP_CA_Loss) no recovery starts and the window grows by slow start;
//! - one timer runs one of three events ([`XmitTimer`], Linux's `icsk_pending`): the RTO,
//!   RACK's reordering timer (RFC 8985 §6.2 step 5, tcp_rack_reo_timeout()) or a Tail Loss
//!   Probe (RFC 8985 §7, tcp_schedule_loss_probe(), tcp_send_loss_probe(),
//!   tcp_process_tlp_ack());
//! - a module that sets cwnd itself (BBR, `cong_control`) gets a delivery-rate sample on every
//!   ACK ([`DeliveryRate`], tcp_rate.c) in place of growth and PRR, keeps its cwnd when a
//!   reduction ends, and is paced ([`Pacing`], Linux's internal pacing): the only flows that set
//!   the pacing timer.

use super::bbr::{CaState, Connection};
use super::cc::{AckSample, LinuxCc, Window};
use super::prr::Prr;
use super::rack::{Detection, RackBoard};
use super::rate::DeliveryRate;
use super::rto::{LinuxRto, RtoEstimator, LINUX_TIMEOUT_MIN};
use super::sack::{Scoreboard, DUP_THRESH};
use super::web::{FileSize, ThinkTime};
use super::{CongestionAvoidance, Profile, TcpParams, Variant, Workload};
use crate::packet::{Ecn, Packet, PacketKind};
use crate::rng::Rng;
use crate::time::{from_secs, to_secs, Time};
use crate::transport::ns2_rtt::Ns2Rtt;
use crate::transport::timer::{Generation, Restartable};
use crate::transport::{Agent, AgentCtx, AgentStats, TimerKind, Token, Transfer};
use rand::Rng as _;

/// FRED §11.3: the tiny-window enhancement applies "with a congestion window smaller than about 10 packets".
const TINY_WINDOW: f64 = 10.0;
/// 4.4BSD-Lite tcp_input.c's "constant fraction of a packet (maxseg/8)" per ACK in congestion avoidance.
const BSD44_EXTRA_INCREMENT: f64 = 1.0 / 8.0;
/// ns-2 NewReno recv(): `send_much(0, 0, 2)` while in fast recovery (tcp-newreno.cc).
const NS2_NEWRENO_RECOVERY_BURST: u64 = 2;
/// tcp_update_pacing_rate(): the pacing rate Linux sets is this multiple of cwnd/SRTT in
/// slow start (`tcp_pacing_ss_ratio` 200) and in congestion avoidance (`tcp_pacing_ca_ratio` 120).
const LINUX_PACING_SS_RATIO: f64 = 2.0;
const LINUX_PACING_CA_RATIO: f64 = 1.2;
/// The variables a traced sender records whenever they change (`pacing_rate`, bytes/s, only
/// when it paces); besides, `rtt` at every RTT sample (see `on_new_ack`).
const TRACED: [&str; 6] = ["cwnd", "ssthresh", "rto", "srtt", "rttvar", "pacing_rate"];
/// tcp_update_skb_after_send(): the first 10 packets go unpaced ("Original sch_fq does not
/// pace first 10 MSS").
const UNPACED_SEGS: u64 = 10;

crate::timer_kinds! {
    /// The sender's timers.
    enum SenderTimer {
        /// The retransmission timer (`retransmit_timer`); under the linux profile it runs
        /// one of [`XmitTimer`]'s events.
        Retransmit { generation: Generation },
        /// The web workload's next transfer after a think time (`transfer_timer`).
        NextTransfer { generation: Generation },
        /// Internal pacing's hrtimer (tcp_output.c `pacing_timer`, tcp_pace_kick()): the next
        /// packet's departure time has come.
        Pace { generation: Generation },
    }
}

/// Linux's internal pacing (tcp_output.c; `tcp_internal_pacing`, used without the fq qdisc)
/// for a module that asks for it: each packet moves the earliest departure of the next one
/// by its length at the pacing rate (tcp_update_skb_after_send()), and sending waits for it
/// on a timer (tcp_pacing_check()).
struct Pacing {
    /// `tcp_wstamp_ns`: when the next packet may leave.
    next_departure: Time,
    /// `data_segs_out`: packets sent so far on this connection.
    segs_out: u64,
    timer: Restartable<SenderTimer>,
}

impl Pacing {
    fn new(now: Time) -> Self {
        Pacing {
            next_departure: now,
            segs_out: 0,
            timer: Restartable::new(|generation| SenderTimer::Pace { generation }),
        }
    }

    /// tcp_update_skb_after_send(): a packet of `size` bytes left at `now` under `rate` bytes/s.
    /// Time the departure clock fell behind `now` (idle, timer slack) is credit that may
    /// halve the gap ("take into account OS jitter").
    fn sent(&mut self, size: u32, rate: f64, now: Time) {
        let prior = self.next_departure;
        self.next_departure = self.next_departure.max(now);
        self.segs_out += 1;
        if rate > 0.0 && self.segs_out >= UNPACED_SEGS {
            let gap = from_secs(f64::from(size) / rate);
            let credit = self.next_departure - prior;
            self.next_departure += gap - credit.min(gap / 2);
        }
    }
}

/// The RTT estimator and retransmission timeout of the profile.
enum RttTimer {
    /// RFC 6298 from every ACK's echoed send time.
    Rfc6298(RtoEstimator),
    /// ns-2: one timed packet per RTT, in ticks.
    Ns2(Ns2Rtt),
    /// Linux: every ACK of new data, RTO = SRTT + max(RTTVAR term, min RTO).
    Linux(LinuxRto),
}

impl RttTimer {
    fn rto(&self) -> f64 {
        match self {
            RttTimer::Rfc6298(e) => e.rto(),
            RttTimer::Ns2(t) => t.rto(),
            RttTimer::Linux(e) => e.rto(),
        }
    }

    fn back_off(&mut self) {
        match self {
            RttTimer::Rfc6298(e) => e.back_off(),
            RttTimer::Ns2(t) => t.back_off(),
            RttTimer::Linux(e) => e.back_off(),
        }
    }

    fn reset(&mut self) {
        match self {
            RttTimer::Rfc6298(e) => e.reset(),
            RttTimer::Ns2(t) => t.reset(),
            RttTimer::Linux(e) => e.reset(),
        }
    }

    /// SRTT and RTTVAR in seconds, once estimated.
    fn srtt_and_rttvar(&self) -> Option<(f64, f64)> {
        match self {
            RttTimer::Rfc6298(e) => e.srtt().zip(e.rttvar()),
            RttTimer::Ns2(t) => t.srtt_and_rttvar(),
            RttTimer::Linux(e) => e.srtt_and_rttvar(),
        }
    }

    /// A timeout or fast retransmit (ns-2 reset_rtx_timer(): `rtt_active_ = 0`).
    fn stop_timing(&mut self) {
        if let RttTimer::Ns2(t) = self {
            t.stop_timing();
        }
    }
}

/// What the linux profile's retransmission timer runs when it fires (Linux's `icsk_pending`:
/// the three share one timer, inet_connection_sock.h `ICSK_TIME_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum XmitTimer {
    Retransmit,
    /// RACK's reordering timer: packets sent before RACK's that were within its window.
    ReorderTimeout,
    LossProbe,
}

/// A Tail Loss Probe outstanding (RFC 8985 §7.3; Linux's `tlp_high_seq`, `tlp_retrans`).
#[derive(Clone, Copy, Debug)]
struct Probe {
    /// `snd_max` just after the probe.
    high_seq: u64,
    /// The probe resent the last packet (no new data was there to send).
    retransmitted: bool,
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

/// tcp_cwnd_validate(): whether the window limited sending over the last window of data
/// (`is_cwnd_limited`), the most packets out then (`max_packets_out`), and the packet
/// whose acknowledgement ends that window (`cwnd_usage_seq`).
#[derive(Clone, Copy, Debug, Default)]
struct CwndUsage {
    limited: bool,
    max_packets_out: u64,
    until: u64,
}

impl CwndUsage {
    /// tcp_is_cwnd_limited(): in slow start, also while cwnd is below twice the most packets out.
    fn limits(&self, w: &Window) -> bool {
        self.limited || (w.in_slow_start() && w.cwnd < 2 * self.max_packets_out)
    }
}

/// What the sender runs with, resolved once in [`TcpSender::new`] from the flow's
/// [`TcpParams`] (the qdiscs' parameters): never changed by the algorithm.
#[derive(Clone, Debug)]
struct SenderParams {
    profile: Profile,
    variant: Variant,
    congestion_avoidance: CongestionAvoidance,
    /// Data packet size, bytes.
    size: u32,
    /// Maximum (receiver) window, packets.
    window: u64,
    initial_window: f64,
    initial_ssthresh: f64,
    tiny_window: bool,
    ecn: bool,
    /// No new data is sent from this time on.
    stop: Time,
}

/// The sender: its parameters, the application above it, then the algorithm's variables
/// (RFC 793/6675 names where they exist), timers and counters.
pub struct TcpSender {
    params: SenderParams,
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
    dupacks: u32,
    /// ACKs counted towards the next congestion-avoidance increment.
    ca_acks: u64,
    in_recovery: bool,
    /// `snd_max` when the window was last reduced for loss; no new fast
    /// retransmit until the cumulative ACK passes it (RFC 6582 §3.2 step 1).
    recover: Option<u64>,
    /// NewReno: a partial ACK has already restarted the timer in this recovery.
    partial_acked: bool,
    /// `snd_max` at the last window reduction: ECN-echo is honoured once per window (RFC 3168 §6.1.2).
    ecn_recover: u64,
    /// The last window reduction was for ECN-echo (ns-2 `last_cwnd_action_ == CWND_ACTION_ECN`):
    /// a loss detected in that window is repaired without halving again.
    ecn_reduced: bool,
    /// SACK: one past the highest packet retransmitted in this recovery (RFC 6675 HighRxt;
    /// ns-2 scoreboard-rq.cc `h_seqno_`).
    high_rxt: u64,
    /// SACK under the ns2 profile: Sack1's `pipe_`, the packets it counts in flight during
    /// recovery (by arithmetic, so it may go below zero).
    ns2_pipe: i64,
    scoreboard: Scoreboard,
    /// The linux profile's congestion control module.
    cc: Option<LinuxCc>,
    /// Delivery rate samples, for a module that sets cwnd itself (BBR).
    rate: Option<DeliveryRate>,
    /// Internal pacing, for a module that asks for it (BBR).
    pacing: Option<Pacing>,
    /// Linux's tcp_cwnd_validate() state: whether the last window of data was cwnd-limited.
    cwnd_usage: CwndUsage,
    /// Packets sent (new or again): whether a send attempt sent anything.
    sent: u64,
    /// The linux profile's PRR state in the current recovery.
    prr: Prr,
    /// The linux profile's retransmission queue and RACK (its SACK scoreboard).
    board: RackBoard,
    /// Linux's `TCP_CA_Loss`: after a timeout, until `recover` is acknowledged.
    in_loss: bool,
    /// The linux profile's Tail Loss Probe in flight, at most one.
    probe: Option<Probe>,
    rtt: RttTimer,
    retransmit_timer: Restartable<SenderTimer>,
    /// What `retransmit_timer` runs (always `Retransmit` outside the linux profile).
    xmit_timer: XmitTimer,
    transfer_timer: Restartable<SenderTimer>,
    stats: AgentStats,
    /// Last traced value of each of [`TRACED`] (NaN: none yet).
    traced: [f64; TRACED.len()],
}

impl TcpSender {
    pub fn new(opts: &TcpParams, workload: &Workload, size: u32, stop: Time, mut rng: Rng) -> Self {
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
        let initial_ssthresh = opts.initial_ssthresh;
        let rtt = match opts.profile {
            Profile::Rfc => RttTimer::Rfc6298(RtoEstimator::new(
                opts.initial_rto.0,
                opts.min_rto.0,
                opts.timer_granularity.0,
            )),
            Profile::Linux => RttTimer::Linux(LinuxRto::new(opts.initial_rto.0, opts.min_rto.0)),
            Profile::Ns2 => {
                let tick = opts.timer_granularity.nanos().max(1);
                // tcp.cc reset(): `boot_time_ = Random::uniform(tcp_tick_)`, the phase of the host's clock.
                let phase = rng.gen_range(0..tick);
                RttTimer::Ns2(Ns2Rtt::new(tick, phase, opts.initial_rto.0, opts.min_rto.0))
            }
        };
        let cc = (opts.profile == Profile::Linux).then(|| LinuxCc::new(opts.cc, 0.0));
        let cong_control = cc.as_ref().is_some_and(LinuxCc::cong_control);
        TcpSender {
            params: SenderParams {
                profile: opts.profile,
                variant: opts.variant,
                congestion_avoidance: opts.congestion_avoidance,
                size,
                window: opts.window,
                initial_window: opts.initial_window as f64,
                initial_ssthresh,
                tiny_window: opts.tiny_window,
                ecn: opts.ecn,
                stop,
            },
            application,
            rng,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            data_end: 0,
            cwnd: opts.initial_window as f64,
            ssthresh: initial_ssthresh,
            dupacks: 0,
            ca_acks: 0,
            in_recovery: false,
            recover: None,
            partial_acked: false,
            ecn_recover: 0,
            ecn_reduced: false,
            high_rxt: 0,
            ns2_pipe: 0,
            scoreboard: Scoreboard::default(),
            cc,
            rate: cong_control.then(DeliveryRate::default),
            pacing: cong_control.then(|| Pacing::new(0)),
            cwnd_usage: CwndUsage::default(),
            sent: 0,
            prr: Prr::default(),
            board: RackBoard::default(),
            in_loss: false,
            probe: None,
            rtt,
            retransmit_timer: Restartable::new(|generation| SenderTimer::Retransmit { generation }),
            xmit_timer: XmitTimer::Retransmit,
            transfer_timer: Restartable::new(|generation| SenderTimer::NextTransfer { generation }),
            stats: AgentStats::default(),
            traced: [f64::NAN; TRACED.len()],
        }
    }

    /// Whether packet `seq` exists: already sent once, or new data the application still has.
    fn has_data(&self, seq: u64, now: Time) -> bool {
        seq < self.snd_max || (seq < self.data_end && now < self.params.stop)
    }

    fn send_packet(&mut self, seq: u64, ctx: &mut AgentCtx) {
        self.sent += 1;
        if self.in_recovery {
            self.prr.sent(1);
        }
        let retransmit = seq < self.snd_max;
        if let Some(rate) = &mut self.rate {
            rate.sent(seq, ctx.now, self.board.packets_out());
        }
        if self.params.profile == Profile::Linux {
            self.board.sent(seq, ctx.now);
        }
        if let Some(p) = &mut self.pacing {
            p.sent(
                self.params.size,
                self.cc.as_mut().and_then(LinuxCc::bbr).map_or(0.0, |b| b.pacing_rate),
                ctx.now,
            );
        }
        if retransmit {
            self.stats.retransmitted_packets += 1;
        } else {
            self.snd_max = seq + 1;
            if let RttTimer::Ns2(t) = &mut self.rtt {
                t.on_new_packet(seq, ctx.now);
            }
        }
        // RFC 3168 §6.1.5: retransmissions are not ECN-capable.
        let ecn = if self.params.ecn && !retransmit {
            Ecn::Ect
        } else {
            Ecn::NotEct
        };
        ctx.send(Packet {
            kind: PacketKind::Data,
            size: self.params.size,
            seq,
            sent_at: ctx.now,
            retransmit,
            ecn,
            ..Default::default()
        });
        if self.params.profile == Profile::Linux {
            // tcp_event_new_data_sent(): the first packet out arms the RTO; so does new data
            // while a probe is scheduled (tcp_write_xmit() schedules it again afterwards).
            if !self.retransmit_timer.is_set() || (!retransmit && self.xmit_timer == XmitTimer::LossProbe) {
                self.linux_rearm_rto(ctx);
            }
        } else if !self.retransmit_timer.is_set() {
            self.restart_timer(ctx);
        }
    }

    fn restart_timer(&mut self, ctx: &mut AgentCtx) {
        self.xmit_timer = XmitTimer::Retransmit;
        self.retransmit_timer.set(ctx.now + from_secs(self.rtt.rto()), ctx);
    }

    /// tcp_rearm_rto(): the RTO, cleared with nothing outstanding; in place of a reordering
    /// timer or a probe it runs from the oldest packet's send time (tcp_rto_delta_us()).
    fn linux_rearm_rto(&mut self, ctx: &mut AgentCtx) {
        if self.snd_una == self.snd_max {
            self.retransmit_timer.clear();
            return;
        }
        let rto = from_secs(self.rtt.rto());
        let at = match (self.xmit_timer, self.board.head_sent()) {
            (XmitTimer::ReorderTimeout | XmitTimer::LossProbe, Some(sent)) => (sent + rto).max(ctx.now + 1),
            _ => ctx.now + rto,
        };
        self.xmit_timer = XmitTimer::Retransmit;
        self.retransmit_timer.set(at, ctx);
    }

    /// RFC 8985 §7.2, tcp_schedule_loss_probe(): in the Open state (not recovering, nothing
    /// SACKed, marked lost or retransmitted: tcp_try_keep_open()) a probe replaces the RTO,
    /// due after the PTO ([`LinuxRto::probe_timeout`]) but never after the RTO would fire:
    /// a full RTO from now when this ACK restarts it (`advancing_rto`), else the time left
    /// from the oldest packet's send. Returns whether it scheduled one.
    fn schedule_loss_probe(&mut self, advancing_rto: bool, ctx: &mut AgentCtx) -> bool {
        let RttTimer::Linux(rto) = &self.rtt else { return false };
        let packets_out = self.board.packets_out();
        let open = !self.in_recovery
            && !self.in_loss
            && self.board.sacked_out() == 0
            && self.board.lost_out() == 0
            && !self.board.any_retrans_done();
        if !open || packets_out == 0 {
            return false;
        }
        let mut timeout = from_secs(rto.probe_timeout(packets_out));
        let until_rto = if advancing_rto {
            from_secs(rto.rto())
        } else {
            self.board
                .head_sent()
                .map_or(0, |sent| (sent + from_secs(rto.rto())).saturating_sub(ctx.now))
        };
        if until_rto > 0 {
            timeout = timeout.min(until_rto);
        }
        self.xmit_timer = XmitTimer::LossProbe;
        self.retransmit_timer.set(ctx.now + timeout, ctx);
        true
    }

    /// RFC 8985 §7.3, tcp_send_loss_probe(): unless a probe is already out, one packet beyond
    /// cwnd: new data if there is any within the receiver window, else the last packet sent
    /// again. Then the RTO, from now.
    fn send_loss_probe(&mut self, ctx: &mut AgentCtx) {
        if self.probe.is_none() && self.snd_max > self.snd_una {
            let new_data = self.snd_max < self.snd_una + self.params.window && self.has_data(self.snd_max, ctx.now);
            let seq = if new_data { self.snd_max } else { self.snd_max - 1 };
            self.xmit_timer = XmitTimer::Retransmit;
            self.send_packet(seq, ctx);
            self.snd_nxt = self.snd_max;
            self.probe = Some(Probe {
                high_seq: self.snd_max,
                retransmitted: !new_data,
            });
        }
        self.linux_rearm_rto(ctx);
    }

    /// RFC 8985 §7.4, tcp_process_tlp_ack(), on an ACK at or beyond the probe: a probe of new
    /// data is done; a resent packet acknowledged together with later data repaired a loss,
    /// so the window is reduced at once, as on ECN (tcp_init_cwnd_reduction(), then
    /// tcp_end_cwnd_reduction(): cwnd = ssthresh); a pure duplicate ACK means the original
    /// and the probe both arrived. (Linux also takes a D-SACK for that; the sink sends none.)
    fn linux_process_probe_ack(&mut self, ack: u64, new_ack: bool, newly_sacked: u64) {
        let Some(probe) = self.probe.filter(|p| ack >= p.high_seq) else {
            return;
        };
        if !probe.retransmitted || (!new_ack && newly_sacked == 0) {
            self.probe = None;
        } else if ack > probe.high_seq {
            self.probe = None;
            self.reduce_ssthresh();
            self.end_cwnd_reduction();
        }
    }

    /// tcp_rack_reo_timeout(): RACK's reordering window has passed for the packets it held;
    /// those now lost start recovery (one packet counted delivered for PRR) and go again.
    fn reorder_timeout(&mut self, ctx: &mut AgentCtx) {
        let in_flight = self.board.in_flight();
        let reo_wnd = self.board.reo_wnd(self.in_recovery || self.in_loss, self.linux_srtt());
        let found = self.board.detect_loss(reo_wnd, ctx.now);
        if self.board.in_flight() != in_flight {
            if !self.in_recovery && !self.in_loss {
                self.linux_enter_recovery(ctx);
                let in_flight = self.board.in_flight();
                if let Some(cwnd) = self
                    .prr
                    .cwnd(self.ssthresh as u64, in_flight, 1, found.marked == 0)
                    .filter(|_| !self.cong_control())
                {
                    self.cwnd = cwnd as f64;
                }
            }
            self.send_more(ctx);
        }
        if self.xmit_timer != XmitTimer::Retransmit || !self.retransmit_timer.is_set() {
            self.linux_rearm_rto(ctx);
        }
    }

    /// SRTT for RACK's reordering window, zero before any sample (tcp_rack_reo_wnd()).
    fn linux_srtt(&self) -> Time {
        self.rtt.srtt_and_rttvar().map_or(0, |(srtt, _)| from_secs(srtt))
    }

    /// Sliding window: send while the next packet is within min(cwnd, window)
    /// of the cumulative ACK, at most `burst` packets.
    fn send_window(&mut self, burst: u64, ctx: &mut AgentCtx) {
        let limit = self.snd_una + (self.cwnd.floor() as u64).clamp(1, self.params.window);
        let limit = limit.min(self.snd_nxt.saturating_add(burst));
        while self.snd_nxt < limit && self.has_data(self.snd_nxt, ctx.now) {
            self.send_packet(self.snd_nxt, ctx);
            self.snd_nxt += 1;
        }
    }

    /// RFC 6675 §5 (C): in SACK recovery, send NextSeg() while cwnd - pipe >= 1.
    fn send_pipe(&mut self, ctx: &mut AgentCtx) {
        let mut pipe = self.scoreboard.pipe(self.snd_max, self.high_rxt) as f64;
        while self.cwnd - pipe >= 1.0 {
            let Some(seq) = self.next_seg(ctx.now) else { break };
            if seq < self.snd_max {
                self.high_rxt = seq + 1;
            } else {
                self.snd_nxt = seq + 1;
            }
            self.send_packet(seq, ctx);
            pipe += 1.0;
        }
    }

    /// RFC 6675 NextSeg: (1) the first lost hole above HighRxt, else (2) new
    /// data, else (3) the first hole above HighRxt even if not yet lost.
    fn next_seg(&self, now: Time) -> Option<u64> {
        let hole = self.scoreboard.first_hole(self.high_rxt.max(self.snd_una));
        if let Some((seq, true)) = hole {
            return Some(seq);
        }
        if self.snd_nxt < self.snd_una + self.params.window && self.has_data(self.snd_nxt, now) {
            return Some(self.snd_nxt);
        }
        hole.map(|(seq, _)| seq)
    }

    /// ns-2 Sack1 send_much() in recovery: while `pipe_ < int(cwnd_)`, the first hole above
    /// the last retransmission (scoreboard-rq.cc GetNextRetran()), else new data, within
    /// the receiver window from the cumulative ACK; each packet sent adds one to `pipe_`.
    fn send_ns2_sack(&mut self, ctx: &mut AgentCtx) {
        let limit = self.snd_una + self.params.window;
        while self.ns2_pipe < self.cwnd.floor() as i64 {
            let seq = match self.scoreboard.first_hole(self.high_rxt.max(self.snd_una)) {
                Some((hole, _)) if hole < limit => {
                    self.high_rxt = hole + 1;
                    hole
                }
                None if self.snd_nxt < limit && self.has_data(self.snd_nxt, ctx.now) => self.snd_nxt,
                _ => break,
            };
            self.snd_nxt = self.snd_nxt.max(seq + 1);
            self.send_packet(seq, ctx);
            self.ns2_pipe += 1;
        }
    }

    fn ns2_sack(&self) -> bool {
        self.params.variant == Variant::Sack && self.params.profile == Profile::Ns2
    }

    fn send_more(&mut self, ctx: &mut AgentCtx) {
        match (self.in_recovery, self.params.variant, self.params.profile) {
            (_, _, Profile::Linux) => self.send_linux(ctx),
            (true, Variant::Sack, Profile::Rfc) => self.send_pipe(ctx),
            (true, Variant::Sack, Profile::Ns2) => self.send_ns2_sack(ctx),
            (true, Variant::NewReno, Profile::Ns2) => self.send_window(NS2_NEWRENO_RECOVERY_BURST, ctx),
            _ => self.send_window(u64::MAX, ctx),
        }
    }

    /// Linux: while fewer packets are in flight than cwnd, the packets marked lost, then new
    /// data (tcp_xmit_retransmit_queue(), tcp_write_xmit()), in every state. Then
    /// tcp_cwnd_validate().
    fn send_linux(&mut self, ctx: &mut AgentCtx) {
        let sent = self.sent;
        let snd_max = self.snd_max;
        let mut in_flight = self.board.in_flight();
        while (in_flight as f64) < self.cwnd {
            let seq = match self.board.next_lost() {
                Some(seq) => seq,
                None if self.snd_max < self.snd_una + self.params.window && self.has_data(self.snd_max, ctx.now) => {
                    self.snd_max
                }
                None => break,
            };
            if let Some(p) = self.pacing.as_mut().filter(|p| p.next_departure > ctx.now) {
                // tcp_pacing_check(): wait for the departure time (Linux checks before cwnd;
                // a wake-up that finds cwnd full sends nothing, so the order changes nothing).
                p.timer.set(p.next_departure, ctx);
                break;
            }
            self.send_packet(seq, ctx);
            self.snd_nxt = self.snd_max;
            in_flight += 1;
        }
        if self.snd_max > snd_max {
            // tcp_write_xmit(): new data sent schedules a probe.
            self.schedule_loss_probe(false, ctx);
        }
        // For the delivery-rate samples (BBR's only): less than a packet left to send (the
        // receiver window does not count), room in cwnd, every lost packet resent.
        let app_limited = self.rate.is_some()
            && !self.has_data(self.snd_max, ctx.now)
            && (in_flight as f64) < self.cwnd
            && self.board.lost_out() <= self.board.retrans_out();
        if let Some(rate) = self.rate.as_mut().filter(|_| app_limited) {
            rate.set_app_limited(in_flight);
        }
        let limited = in_flight as f64 >= self.cwnd;
        if self.sent > sent || limited {
            let packets_out = self.snd_max - self.snd_una;
            let u = &mut self.cwnd_usage;
            if self.snd_una >= u.until || limited || (!u.limited && packets_out > u.max_packets_out) {
                *u = CwndUsage {
                    limited,
                    max_packets_out: packets_out,
                    until: self.snd_max,
                };
            }
        }
    }

    /// Linux on an ACK of new data: the RTT sample to the module (HyStart), then growth
    /// by the packets delivered, outside recovery and while cwnd-limited (tcp_cong_control()).
    fn linux_on_ack(&mut self, rtt: f64, delivered: u64, grow: bool, now: f64) {
        let mut w = Window {
            cwnd: self.cwnd as u64,
            ssthresh: self.ssthresh as u64,
            clamp: self.params.window,
        };
        let ratio = if w.in_slow_start() {
            LINUX_PACING_SS_RATIO
        } else {
            LINUX_PACING_CA_RATIO
        };
        let packets = w.cwnd.max(self.snd_max - self.snd_una) as f64;
        let pacing_rate = match self.rtt.srtt_and_rttvar() {
            Some((srtt, _)) if srtt > 0.0 => ratio * packets * f64::from(self.params.size) / srtt,
            _ => 0.0,
        };
        let sample = AckSample {
            now,
            rtt,
            snd_una: self.snd_una,
            snd_nxt: self.snd_max,
            pacing_rate,
        };
        let Some(cc) = &mut self.cc else { return };
        cc.on_ack_sample(&mut w, &sample);
        if grow && self.cwnd_usage.limits(&w) {
            cc.cong_avoid(&mut w, delivered, now);
        }
        self.cwnd = w.cwnd as f64;
        self.ssthresh = w.ssthresh as f64;
    }

    fn flight(&self) -> f64 {
        (self.snd_max - self.snd_una) as f64
    }

    /// On loss or ECN, ssthresh becomes half the window in whole packets, at
    /// least 2 (ns-2 slowdown(); RFC 5681 eq. (4) halves FlightSize, which is
    /// the window for a flow that fills it). In Reno/NewReno recovery the
    /// window is ssthresh, not the inflated cwnd; packets sent by the
    /// tiny-window rule are not counted (FRED §11.3).
    fn reduce_ssthresh(&mut self) {
        let window = if self.in_recovery { self.ssthresh } else { self.cwnd };
        self.halve_ssthresh_of(window);
    }

    fn halve_ssthresh_of(&mut self, window: f64) {
        self.ca_acks = 0;
        if let Some(cc) = &mut self.cc {
            self.ssthresh = cc.ssthresh(window as u64) as f64;
            return;
        }
        self.ssthresh = (window.min(self.params.window as f64) / 2.0).floor().max(2.0);
    }

    /// ssthresh on a retransmission timeout. During recovery the window is no
    /// longer what was sent: RFC 5681 eq. (4) halves FlightSize, while ns-2
    /// halved the already-halved cwnd_ (tcp-reno.cc timeout() clears `dupwnd_`
    /// before TcpAgent::timeout()'s slowdown(CLOSE_SSTHRESH_HALF) of window();
    /// Sack1's window() is cwnd_, tcp-sack1.cc).
    fn timeout_ssthresh(&mut self) {
        match (self.in_recovery, self.params.profile) {
            (true, Profile::Rfc) => self.halve_ssthresh_of(self.flight()),
            // tcp_enter_loss(): only when no reduction is under way (state Open or Disorder,
            // or high_seq acknowledged); within one, ssthresh stays.
            (_, Profile::Linux) => {
                if self.recover.is_none_or(|r| self.snd_una >= r) {
                    self.reduce_ssthresh();
                }
            }
            _ => self.reduce_ssthresh(),
        }
    }

    /// Slow start: +1 per new ACK. Congestion avoidance by [`CongestionAvoidance`]:
    /// `per_window` +1 once cwnd ACKs have arrived, i.e. one packet per RTT as RFC 5681
    /// §3.1 intends; with delayed ACKs the growth halves, the b = 2 of the throughput
    /// models. RFC 5681 eq. (3), +1/cwnd per ACK (`per_ack`), grows only floor(cwnd)/cwnd
    /// per RTT when the window in packets is floor(cwnd).
    fn open_cwnd(&mut self) {
        if self.cwnd < self.ssthresh {
            self.cwnd += 1.0;
        } else {
            match self.params.congestion_avoidance {
                // tcp.cc opencwnd(), `windowOption_ 1`, `increase_num_ 1.0`: cwnd_ += 1/cwnd_.
                CongestionAvoidance::PerAck => self.cwnd += 1.0 / self.cwnd,
                // 4.4BSD-Lite tcp_input.c: incr = maxseg*maxseg/cw + maxseg/8, in packets.
                CongestionAvoidance::Bsd44 => self.cwnd += 1.0 / self.cwnd + BSD44_EXTRA_INCREMENT,
                CongestionAvoidance::PerWindow => {
                    self.ca_acks += 1;
                    if self.ca_acks as f64 >= self.cwnd {
                        self.ca_acks = 0;
                        self.cwnd += 1.0;
                    }
                }
            }
        }
        // Growth beyond the receiver window could never be used.
        self.cwnd = self.cwnd.min(self.params.window as f64);
    }

    /// `newly_sacked`: packets the ACK's blocks SACKed for the first time.
    /// Returns the packets the ACK delivered, cumulatively or by SACK (Linux's `delivered`).
    fn on_new_ack(&mut self, p: &Packet, ece: bool, newly_sacked: u64, ctx: &mut AgentCtx) -> u64 {
        let ack = p.seq.min(self.snd_max);
        let acked = ack - self.snd_una;
        self.snd_una = ack;
        self.snd_nxt = self.snd_nxt.max(ack);
        // Linux's `delivered`: packets newly acknowledged, cumulatively or by SACK.
        if let Some(rate) = &mut self.rate {
            rate.ack(ack);
        }
        let delivered = if self.params.profile == Profile::Linux {
            self.board.ack(ack, ctx.now) + newly_sacked
        } else {
            self.scoreboard.advance(ack);
            0
        };
        if self.in_loss && self.recover.is_some_and(|r| ack >= r) {
            // tcp_process_loss(): everything outstanding at the timeout is acknowledged.
            self.in_loss = false;
        }
        // The ACK echoes the send time of the packet it acknowledges (the sink's older one
        // when it delays); Karn: a retransmitted packet's is ambiguous (not with Linux's
        // timestamps, whose echo is the retransmission's).
        let rtt = to_secs(ctx.now - p.sent_at);
        match &mut self.rtt {
            RttTimer::Rfc6298(e) => e.sample(rtt, p.retransmit),
            RttTimer::Linux(e) => e.sample(rtt, ack, self.snd_max),
            RttTimer::Ns2(_) => {}
        }
        if !p.retransmit && ctx.tracing() {
            ctx.trace("rtt", rtt);
        }
        self.dupacks = 0;
        let mut restart_timer = true;
        let mut grow = !ece;
        let mut partial = false;
        if self.in_recovery {
            let full = self.recover.is_some_and(|r| ack >= r);
            if full || matches!(self.params.variant, Variant::Tahoe | Variant::Reno) {
                // Reno leaves fast recovery on the first new ACK; further losses need 3 more dup ACKs or a timeout.
                self.exit_recovery();
                // ns-2 Reno/NewReno recv(): the exiting ACK goes through recv_newack_helper()'s opencwnd().
                // Linux: the exiting ACK returns to Open before tcp_cong_control() grows the window.
                grow &= (self.params.profile == Profile::Ns2 && self.params.variant != Variant::Sack)
                    || self.params.profile == Profile::Linux;
            } else {
                grow = false;
                partial = true;
                restart_timer = self.partial_ack(acked, ctx);
            }
        }
        if self.cc.is_some() {
            self.linux_on_ack(rtt, delivered, grow, to_secs(ctx.now));
        } else if grow {
            self.open_cwnd();
        }
        if self.params.profile == Profile::Linux {
            // The timer waits for RACK (Agent::receive()).
        } else if self.snd_una == self.snd_max {
            self.retransmit_timer.clear();
        } else if restart_timer {
            self.restart_timer(ctx);
        }
        // tcp.cc newack(): newtimer() runs before rtt_update() (`timerfix_` came in 2001-05).
        if let RttTimer::Ns2(t) = &mut self.rtt {
            if partial && self.params.variant == Variant::Sack {
                // tcp-sack1.cc recv(): a partial ACK ends the back-off; the timed packet stays timed.
                t.end_back_off();
            } else if partial {
                t.on_partial_ack(ack);
            } else {
                t.on_ack(ack, ctx.now);
            }
        }
        if self.snd_una >= self.data_end {
            self.transfer_done(ctx);
        }
        delivered
    }

    /// A full ACK: everything outstanding when loss was detected is acknowledged.
    fn exit_recovery(&mut self) {
        self.in_recovery = false;
        self.cwnd = match (self.params.variant, self.params.profile) {
            // tcp_end_cwnd_reduction(); a module that sets cwnd itself keeps it.
            (_, Profile::Linux) if self.cong_control() => self.cwnd,
            (_, Profile::Linux) => self.ssthresh,
            // FRED §11.2 and RFC 6582 §3.2 step 3 (1): no burst when recovery ends.
            (Variant::NewReno, Profile::Rfc) => self.ssthresh.min(self.flight().max(1.0) + 1.0),
            // tcp-newreno.cc recv(), `exit_recovery_fix_ 0`: cwnd_ (= ssthresh_) is kept, a burst is allowed.
            (Variant::NewReno, Profile::Ns2) => self.ssthresh,
            // RFC 5681 §3.2 step 6: deflate the window (SACK recovery already runs at ssthresh).
            (Variant::Tahoe | Variant::Reno | Variant::Sack, _) => self.ssthresh,
        };
    }

    /// A NewReno or SACK ACK in recovery that does not cover `recover`; returns whether to restart the timer.
    fn partial_ack(&mut self, acked: u64, ctx: &mut AgentCtx) -> bool {
        match (self.params.variant, self.params.profile) {
            // FRED §11.2: "immediately retransmits the packet after the one acknowledged by the
            // partial ACK"; RFC 6582 §3.2 step 5: deflate by the amount acked, add back one.
            (Variant::NewReno, Profile::Rfc) => {
                self.send_packet(self.snd_una, ctx);
                self.cwnd = (self.cwnd - acked as f64 + 1.0).max(1.0);
                // RFC 6582 §4 ("Impatient"): only the first partial ACK restarts the timer.
                !std::mem::replace(&mut self.partial_acked, true)
            }
            // tcp-newreno.cc partialnewack_helper(): retransmit; `partial_window_deflation_ 0`
            // drops the inflation (dupwnd_ = 0); `newreno_changes1_ 0` ("Slow-but-Steady")
            // restarts the timer on every partial ACK.
            (Variant::NewReno, Profile::Ns2) => {
                self.send_packet(self.snd_una, ctx);
                self.cwnd = self.ssthresh;
                true
            }
            // The scoreboard and pipe decide what to send (RFC 6675 §5 (C)); Linux rearms
            // the timer on every ACK of new data (tcp_set_xmit_timer()).
            (Variant::Sack, Profile::Rfc | Profile::Linux) => true,
            // tcp-sack1.cc recv(), `partial_ack_ false`: one packet more left the pipe than
            // the ACK's own (the ACK may be for a retransmission: "never do worse than slow-start").
            (Variant::Sack, Profile::Ns2) => {
                self.ns2_pipe -= 1;
                true
            }
            (Variant::Tahoe | Variant::Reno, _) => unreachable!("Tahoe and Reno leave recovery on any new ACK"),
            (Variant::NewReno, Profile::Linux) => unreachable!("the linux profile runs SACK recovery only"),
        }
    }

    /// `sack_news`: the ACK's blocks SACKed a packet not SACKed before.
    fn on_dupack(&mut self, sack_news: bool, ctx: &mut AgentCtx) {
        if self.params.profile == Profile::Linux {
            // Linux with SACK counts SACKed packets, not duplicate ACKs (linux_detect_loss()).
            return;
        }
        if self.ns2_sack() && (self.in_recovery || !sack_news) {
            // tcp-sack1.cc recv(): outside recovery a duplicate ACK counts only if its blocks
            // SACK new data (CheckUpdate()); in recovery it changes nothing but `pipe_`.
            return;
        }
        self.dupacks += 1;
        if self.in_recovery {
            if matches!(self.params.variant, Variant::Reno | Variant::NewReno) {
                // RFC 5681 §3.2 step 4: each duplicate ACK means a packet left the network.
                self.cwnd += 1.0;
            }
            return;
        }
        // RFC 6675 §5: SACK also detects loss once DupThresh packets above the hole are SACKed
        // (ns-2's Sack1 waits for the third duplicate ACK).
        let loss = u64::from(self.dupacks) >= DUP_THRESH
            || (self.params.profile == Profile::Rfc && self.scoreboard.is_lost(self.snd_una));
        if loss && self.recover.is_none_or(|r| self.snd_una > r) {
            self.reduce_ssthresh();
            self.fast_retransmit(ctx);
        } else if loss && self.ecn_reduced {
            // RFC 3168 §6.1.2: the window was already halved for this window of data; ns-2
            // dupack_action() with `last_cwnd_action_ == CWND_ACTION_ECN` retransmits without slowdown().
            self.fast_retransmit(ctx);
        } else if !loss && self.params.tiny_window && self.cwnd.min(self.params.window as f64) < TINY_WINDOW {
            // FRED §11.3: a new packet for each of the first two duplicate ACKs; if the
            // receiver window allows none, "re-send the last packet in the window".
            if self.snd_nxt < self.snd_una + self.params.window && self.has_data(self.snd_nxt, ctx.now) {
                self.send_packet(self.snd_nxt, ctx);
                self.snd_nxt += 1;
            } else {
                self.send_packet(self.snd_max - 1, ctx);
            }
        }
    }

    /// Linux, on an ACK that moved RACK: RACK marks losses ([`RackBoard::mark_lost`]); outside
    /// recovery and loss, a marked loss starts recovery (tcp_time_to_recover(): `lost_out`).
    fn linux_detect_loss(&mut self, ctx: &mut AgentCtx) -> Detection {
        let reo_wnd = self.board.reo_wnd(self.in_recovery || self.in_loss, self.linux_srtt());
        let found = self.board.mark_lost(reo_wnd, ctx.now);
        if !self.in_recovery && !self.in_loss && self.board.lost_out() > 0 {
            self.linux_enter_recovery(ctx);
        }
        found
    }

    /// tcp_enter_recovery(): halving unless within a window already halved for ECN; a
    /// probe's episode ends (tcp_init_cwnd_reduction()).
    fn linux_enter_recovery(&mut self, ctx: &mut AgentCtx) {
        if self.recover.is_none_or(|r| self.snd_una >= r) {
            self.reduce_ssthresh();
        }
        self.probe = None;
        self.fast_retransmit(ctx);
    }

    /// Fast retransmit once ssthresh is set; enters recovery (except Tahoe).
    fn fast_retransmit(&mut self, ctx: &mut AgentCtx) {
        self.stats.fast_retransmits += 1;
        self.rtt.stop_timing();
        self.ecn_reduced = false;
        self.recover = Some(self.snd_max);
        self.ecn_recover = self.snd_max;
        match self.params.variant {
            // Tahoe: retransmit and slow-start again from one packet (go-back-N).
            Variant::Tahoe => {
                self.cwnd = 1.0;
                self.snd_nxt = self.snd_una;
            }
            // RFC 5681 §3.2 step 3: retransmit, inflate by the three packets that left.
            Variant::Reno | Variant::NewReno => {
                self.in_recovery = true;
                self.partial_acked = false;
                self.send_packet(self.snd_una, ctx);
                self.cwnd = self.ssthresh + 3.0;
            }
            // RFC 6675 §5 (4): cwnd = ssthresh, retransmit the first lost packet, then pipe.
            // ns-2 Sack1 dupack_action(): `pipe_ = maxseq_ - highest_ack_ - numdupacks_`,
            // the three packets the duplicate ACKs report gone; the retransmission is not counted.
            // Linux: PRR sets cwnd from this ACK on, and its first window sends the retransmission.
            Variant::Sack if self.params.profile == Profile::Linux => {
                self.in_recovery = true;
                self.prr = Prr::start(self.cwnd as u64);
            }
            Variant::Sack => {
                self.in_recovery = true;
                self.ns2_pipe = (self.snd_max - self.snd_una) as i64 - DUP_THRESH as i64;
                self.cwnd = self.ssthresh;
                self.high_rxt = self.snd_una + 1;
                self.send_packet(self.snd_una, ctx);
            }
        }
        self.restart_timer(ctx);
    }

    fn timeout(&mut self, ctx: &mut AgentCtx) {
        if self.snd_una == self.snd_max {
            return;
        }
        self.stats.timeouts += 1;
        // RFC 5681 §3.1: ssthresh from eq. (4), cwnd = loss window (1 packet); RFC 6582: recover = highest sent.
        // Within a window already halved for ECN-echo ssthresh stays (RFC 3168 §6.1.2; ns-2 tcp.cc
        // timeout(): `highest_ack_ < recover_ && last_cwnd_action_ == CWND_ACTION_ECN`).
        if !(self.ecn_reduced && self.recover.is_some_and(|r| self.snd_una < r)) {
            self.timeout_ssthresh();
        }
        self.ecn_reduced = false;
        self.cwnd = 1.0;
        self.recover = Some(self.snd_max);
        self.ecn_recover = self.snd_max;
        self.in_recovery = false;
        self.dupacks = 0;
        if self.params.profile == Profile::Linux {
            // tcp_enter_loss(): SACKed packets stay, the rest are lost and go again in order;
            // a probe's episode ends. `tp->lost` counts those not lost yet and the
            // retransmissions in flight (tcp_mark_skb_lost()).
            let newly_lost =
                self.board.packets_out() - self.board.sacked_out() - self.board.lost_out() + self.board.retrans_out();
            if let Some(rate) = &mut self.rate {
                rate.lost += newly_lost;
            }
            self.board.all_lost();
            self.in_loss = true;
            self.probe = None;
        } else {
            self.snd_nxt = self.snd_una;
            self.scoreboard.clear();
        }
        self.rtt.stop_timing();
        self.rtt.back_off();
        if self.cong_control() {
            // bbr_set_state(TCP_CA_Loss).
            let c = self.connection(ctx.now);
            if let Some(bbr) = self.cc.as_mut().and_then(LinuxCc::bbr) {
                bbr.enter_loss(&c, &mut self.rng);
            }
        } else if let Some(cc) = &mut self.cc {
            cc.restart(to_secs(ctx.now), self.snd_max);
        }
        self.send_more(ctx);
    }

    /// RFC 3168 §6.1.2: halve the window once per window of data on ECN-echo.
    /// The reduction sets the recovery point, so a loss in the same window
    /// does not halve again (ns-2 ecn(): `recover_ = maxseq_`).
    fn ecn_reduce(&mut self) {
        self.reduce_ssthresh();
        self.end_cwnd_reduction();
        self.ecn_recover = self.snd_max;
        self.recover = Some(self.snd_max);
        self.ecn_reduced = true;
    }

    /// tcp_end_cwnd_reduction(): cwnd = ssthresh, unless the module sets cwnd itself.
    fn end_cwnd_reduction(&mut self) {
        if !self.cong_control() {
            self.cwnd = self.ssthresh;
        }
    }

    /// The linux profile's module sets cwnd itself on every ACK (BBR's `cong_control`).
    fn cong_control(&self) -> bool {
        self.cc.as_ref().is_some_and(LinuxCc::cong_control)
    }

    /// bbr_main() on an ACK (tcp_ack(): tcp_rate_gen(), then tcp_cong_control()): the ACK
    /// delivered `delivered` packets and marked `lost` lost; `prior_in_flight` were in flight
    /// before it.
    fn cong_control_on_ack(&mut self, delivered: u64, lost: u64, prior_in_flight: u64, ctx: &mut AgentCtx) {
        let min_rtt = self.board.min_rtt();
        let Some(rate) = &mut self.rate else { return };
        let rs = rate.sample(ctx.now, delivered, lost, min_rtt, prior_in_flight);
        let c = self.connection(ctx.now);
        let Some(bbr) = self.cc.as_mut().and_then(LinuxCc::bbr) else {
            return;
        };
        let (cwnd, app_limited) = bbr.on_ack(&rs, &c, &mut self.rng);
        self.cwnd = cwnd as f64;
        self.ssthresh = bbr.ssthresh as f64;
        if let Some(rate) = self.rate.as_mut().filter(|_| app_limited) {
            rate.set_app_limited(c.in_flight);
        }
    }

    /// What BBR reads of the connection (`struct tcp_sock`) at `now`.
    fn connection(&self, now: Time) -> Connection {
        let rate = self.rate.as_ref().expect("a module that sets cwnd itself");
        Connection {
            now: to_secs(now),
            cwnd: self.cwnd as u64,
            clamp: self.params.window,
            in_flight: self.board.in_flight(),
            delivered: rate.delivered,
            delivered_at: to_secs(rate.delivered_at),
            lost: rate.lost,
            state: if self.in_loss {
                CaState::Loss
            } else if self.in_recovery {
                CaState::Recovery
            } else {
                CaState::Open
            },
            srtt: self.rtt.srtt_and_rttvar().map(|(srtt, _)| srtt),
            next_departure: self.pacing.as_ref().map_or(0.0, |p| to_secs(p.next_departure)),
            mss: f64::from(self.params.size),
        }
    }

    /// The module at a connection's start (`init`); BBR's delivery counters and pacing start afresh.
    fn restart_cc(&mut self, ctx: &mut AgentCtx) {
        let Some(cc) = &mut self.cc else { return };
        cc.restart(to_secs(ctx.now), self.snd_max);
        if let Some(bbr) = cc.bbr() {
            self.ssthresh = bbr.ssthresh as f64;
            self.rate = Some(DeliveryRate::default());
            self.pacing = Some(Pacing::new(ctx.now));
        }
    }

    /// A new transfer opens a new connection: initial cwnd, ssthresh and RTO (SRED §7).
    fn start_transfer(&mut self, packets: u64, ctx: &mut AgentCtx) {
        self.data_end = self.snd_max + packets;
        self.cwnd = self.params.initial_window;
        self.ssthresh = self.params.initial_ssthresh;
        self.ca_acks = 0;
        self.rtt.reset();
        self.restart_cc(ctx);
        self.dupacks = 0;
        self.in_recovery = false;
        self.in_loss = false;
        self.probe = None;
        self.recover = None;
        self.ecn_reduced = false;
        self.stats.transfers.push(Transfer {
            flow: ctx.flow(),
            start: to_secs(ctx.now),
            end: None,
            packets,
        });
        self.send_more(ctx);
    }

    fn transfer_done(&mut self, ctx: &mut AgentCtx) {
        let Some(t) = self.stats.transfers.last_mut().filter(|t| t.end.is_none()) else {
            return;
        };
        t.end = Some(to_secs(ctx.now));
        if let Application::Web { think, .. } = &self.application {
            // SRED §7: the think time starts when the last packet is acknowledged.
            let gap = think.sample(&mut self.rng);
            self.transfer_timer.set(ctx.now + from_secs(gap), ctx);
        }
    }

    /// Starts the next web object: a random number of packets, at least one.
    fn start_web_transfer(&mut self, ctx: &mut AgentCtx) {
        if let Application::Web { size, .. } = &self.application {
            let packets = size.packets(&mut self.rng);
            self.start_transfer(packets, ctx);
        }
    }

    fn trace(&mut self, ctx: &mut AgentCtx) {
        if !ctx.tracing() {
            return;
        }
        let (srtt, rttvar) = self.rtt.srtt_and_rttvar().unzip();
        let pacing_rate = self.cc.as_mut().and_then(LinuxCc::bbr).map(|b| b.pacing_rate);
        let values = [
            Some(self.cwnd),
            Some(self.ssthresh),
            Some(self.rtt.rto()),
            srtt,
            rttvar,
            pacing_rate,
        ];
        for ((name, value), last) in TRACED.into_iter().zip(values).zip(&mut self.traced) {
            if let Some(value) = value.filter(|v| *v != *last) {
                ctx.trace(name, value);
                *last = value;
            }
        }
    }
}

impl Agent for TcpSender {
    fn start(&mut self, ctx: &mut AgentCtx) {
        match self.application {
            Application::Infinite => {
                self.data_end = u64::MAX;
                self.restart_cc(ctx);
                self.send_more(ctx);
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
        let mut newly_sacked = 0;
        let prior_in_flight = self.board.in_flight();
        let mut blocks = p.sack;
        let blocks = &mut blocks[..p.sack_len as usize];
        if self.params.profile == Profile::Linux {
            // tcp_sacktag_write_queue() walks the blocks in sequence order: RACK.rtt is the
            // last packet's.
            blocks.sort_unstable();
        }
        for &(start, end) in blocks.iter() {
            if let Some(rate) = &mut self.rate {
                rate.sack(start, end);
            }
            newly_sacked += match (self.params.profile, self.params.variant) {
                (Profile::Linux, _) => self.board.sack(start, end, ctx.now),
                (_, Variant::Sack) => self.scoreboard.mark(start, end, self.snd_max),
                _ => 0,
            };
        }
        let sack_news = newly_sacked > 0;
        let was_in_recovery = self.in_recovery;
        if was_in_recovery && self.ns2_sack() {
            // tcp-sack1.cc recv(): every ACK in recovery takes one packet out of `pipe_`.
            self.ns2_pipe -= 1;
        }
        let ece = self.params.ecn && p.ece && !self.in_recovery && p.seq > self.ecn_recover;
        if ece {
            self.ecn_reduce();
        }
        let new_ack = p.seq > self.snd_una;
        let mut delivered = newly_sacked;
        if new_ack {
            delivered = self.on_new_ack(p, ece, newly_sacked, ctx);
        } else if p.seq == self.snd_una && self.snd_max > self.snd_una {
            self.on_dupack(sack_news, ctx);
        }
        if self.params.profile == Profile::Linux {
            // tcp_ack(): the probe's outcome, then loss detection, then the timer.
            self.linux_process_probe_ack(p.seq, new_ack, newly_sacked);
            let found = self.linux_detect_loss(ctx);
            if self.cong_control() {
                self.cong_control_on_ack(delivered, found.marked, prior_in_flight, ctx);
            } else if self.in_recovery {
                let in_flight = self.board.in_flight();
                if let Some(cwnd) =
                    self.prr
                        .cwnd(self.ssthresh as u64, in_flight, delivered, new_ack && found.marked == 0)
                {
                    self.cwnd = cwnd as f64;
                }
            }
            if let Some(wait) = found.expires_in {
                // tcp_rack_mark_lost(): the reordering timer, TCP_TIMEOUT_MIN after the last
                // packet's window passes, at most an RTO away.
                let wait = (wait + from_secs(LINUX_TIMEOUT_MIN)).min(from_secs(self.rtt.rto()));
                self.xmit_timer = XmitTimer::ReorderTimeout;
                self.retransmit_timer.set(ctx.now + wait, ctx);
            } else if new_ack && !self.schedule_loss_probe(true, ctx) {
                // tcp_set_xmit_timer().
                self.linux_rearm_rto(ctx);
            }
        }
        if self.ns2_sack() && new_ack && !self.in_recovery {
            // tcp-sack1.cc recv(): a new ACK outside recovery, or the one that ends it, clears the scoreboard.
            self.scoreboard.clear();
        }
        // tcp-sack1.cc recv(): an ACK that finds Sack1 outside recovery sends only while no duplicate
        // ACK is counted, so the one that starts recovery sends nothing but the retransmission.
        if !self.ns2_sack() || was_in_recovery || self.dupacks == 0 {
            self.send_more(ctx);
        }
        self.trace(ctx);
    }

    fn timer(&mut self, token: Token, ctx: &mut AgentCtx) {
        match SenderTimer::from_token(token) {
            SenderTimer::Retransmit { generation } => {
                if self.retransmit_timer.expired(generation, ctx) {
                    match self.xmit_timer {
                        XmitTimer::Retransmit => self.timeout(ctx),
                        XmitTimer::ReorderTimeout => self.reorder_timeout(ctx),
                        XmitTimer::LossProbe => self.send_loss_probe(ctx),
                    }
                }
            }
            SenderTimer::NextTransfer { generation } => {
                if self.transfer_timer.expired(generation, ctx) && ctx.now < self.params.stop {
                    self.start_web_transfer(ctx);
                }
            }
            SenderTimer::Pace { generation } => {
                if self.pacing.as_mut().is_some_and(|p| p.timer.expired(generation, ctx)) {
                    self.send_more(ctx);
                }
            }
        }
        self.trace(ctx);
    }

    fn stats(&self) -> AgentStats {
        self.stats.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::stream;
    use crate::transport::tcp::TcpOptions;
    use crate::transport::testing::AgentHarness;

    /// A started sender driven by hand: `ack(seq)` feeds an ACK 1 ms after the previous call
    /// and returns the sequence numbers sent in reply.
    fn sender(opts: TcpOptions) -> AgentHarness<TcpSender> {
        let tcp = TcpSender::new(&opts.resolve(), &Workload::Infinite, 1000, Time::MAX, stream(1, "t"));
        let mut h = AgentHarness::sender(tcp);
        h.start(0);
        h
    }

    fn seqs(packets: &[Packet]) -> Vec<u64> {
        packets.iter().map(|p| p.seq).collect()
    }

    impl AgentHarness<TcpSender> {
        fn ack_with(&mut self, seq: u64, ece: bool) -> Vec<u64> {
            self.deliver(Packet {
                kind: PacketKind::Ack,
                seq,
                ece,
                sent_at: 0,
                ..Default::default()
            })
        }

        /// An ACK carrying SACK blocks `[start, end)`, most recent first (as the sink sends them).
        fn sack(&mut self, seq: u64, blocks: &[(u64, u64)]) -> Vec<u64> {
            let mut ack = Packet {
                kind: PacketKind::Ack,
                seq,
                sack_len: blocks.len() as u8,
                ..Default::default()
            };
            ack.sack[..blocks.len()].copy_from_slice(blocks);
            self.deliver(ack)
        }

        fn deliver(&mut self, ack: Packet) -> Vec<u64> {
            seqs(&self.receive(self.now + 1_000_000, &ack))
        }

        fn ack(&mut self, seq: u64) -> Vec<u64> {
            self.ack_with(seq, false)
        }

        /// Runs the retransmission timer at its deadline, whichever event it holds; returns
        /// the sequence numbers sent.
        fn fire_xmit(&mut self) -> Vec<u64> {
            let now = self
                .now
                .max(self.agent.retransmit_timer.deadline().expect("an armed timer"));
            let tokens: Vec<Token> = self.timers.drain(..).map(|(_, token)| token).collect();
            let mut sent = Vec::new();
            for token in tokens {
                sent.extend(self.fire(now, token));
            }
            seqs(&sent)
        }

        /// Lets the retransmission timer expire; returns the sequence numbers sent.
        fn expire(&mut self) -> Vec<u64> {
            let before = self.agent.stats.timeouts;
            let mut sent = Vec::new();
            while self.agent.stats.timeouts == before {
                let (at, token) = *self.timers.last().expect("a pending timer");
                self.timers.clear();
                sent.extend(self.fire(self.now.max(at), token));
            }
            seqs(&sent)
        }
    }

    /// Packets 0..10 out, packet 0 lost: three duplicate ACKs and four more
    /// (cwnd 5 + 3 + 4 = 12, so packets 10 and 11 go out; SACK sends them as its
    /// pipe falls to 4, by RFC 6675's count or ns-2's); then the retransmission of 0
    /// is lost too and the timer expires with 12 outstanding.
    fn timeout_during_recovery(profile: Profile, variant: Variant) -> TcpSender {
        let mut h = sender(TcpOptions {
            profile,
            variant: Some(variant),
            initial_window: Some(10),
            window: Some(100),
            ..Default::default()
        });
        for sacked in 2..9 {
            h.sack(0, &[(1, sacked)]);
        }
        assert_eq!((h.agent.ssthresh, h.agent.stats.fast_retransmits), (5.0, 1));
        assert_eq!(h.agent.snd_max, 12);
        assert_eq!(h.expire(), vec![0]);
        assert_eq!((h.agent.cwnd, h.agent.stats.timeouts), (1.0, 1));
        h.agent
    }

    #[test]
    fn a_timeout_during_recovery_halves_flight_size_under_rfc_and_cwnd_under_ns2() {
        // RFC 5681 eq. (4): max(FlightSize / 2, 2) = 12 / 2 (before: floor(ssthresh 5 / 2) = 2).
        for variant in [Variant::Reno, Variant::NewReno, Variant::Sack] {
            assert_eq!(
                timeout_during_recovery(Profile::Rfc, variant).ssthresh,
                6.0,
                "{variant:?}"
            );
        }
        // ns-2 halves cwnd_ = 5 (dupwnd_ cleared first; Sack1's window() is cwnd_): int(5 / 2) = 2.
        for variant in [Variant::Reno, Variant::NewReno, Variant::Sack] {
            assert_eq!(
                timeout_during_recovery(Profile::Ns2, variant).ssthresh,
                2.0,
                "{variant:?}"
            );
        }
    }

    fn sack_sender(profile: Profile, initial_window: u64) -> AgentHarness<TcpSender> {
        sender(TcpOptions {
            profile,
            variant: Some(Variant::Sack),
            initial_window: Some(initial_window),
            window: Some(100),
            ..Default::default()
        })
    }

    #[test]
    fn ns2_sack_counts_pipe_by_arithmetic() {
        // Packets 0..10 out; 0 and 5 are lost, the others arrive in order.
        let mut h = sack_sender(Profile::Ns2, 10);
        assert!(h.sack(0, &[(1, 2)]).is_empty() && h.sack(0, &[(1, 3)]).is_empty());
        // Third duplicate ACK: cwnd = ssthresh = 5, pipe_ = maxseq 9 - highest_ack -1 - 3 = 7 (the
        // fast retransmission is not counted).
        assert_eq!(h.sack(0, &[(1, 4)]), vec![0]);
        assert_eq!((h.agent.cwnd, h.agent.ns2_pipe), (5.0, 7));
        // Each ACK in recovery takes one out: 6, then 5, nothing sent while pipe_ >= cwnd.
        assert!(h.sack(0, &[(1, 5)]).is_empty());
        assert!(h.sack(0, &[(6, 7), (1, 5)]).is_empty());
        // pipe_ 4 < 5: the hole 5 goes out, though only two packets above it are SACKed
        // (RFC 6675 would wait until it IsLost).
        assert_eq!(h.sack(0, &[(6, 8), (1, 5)]), vec![5]);
        assert_eq!(h.agent.ns2_pipe, 5);
        // No hole above the last retransmission: new data, one per ACK.
        assert_eq!(h.sack(0, &[(6, 9), (1, 5)]), vec![10]);
        assert_eq!(h.sack(0, &[(6, 10), (1, 5)]), vec![11]);
        // The retransmitted 0 arrives: a partial ACK takes two out, so two packets go.
        assert_eq!(h.sack(5, &[(6, 10)]), vec![12, 13]);
        assert_eq!(h.agent.ns2_pipe, 5);
        // The retransmitted 5 arrives: recovery ends at cwnd 5 with packets 10..14 out.
        assert_eq!(h.ack(10), vec![14]);
        assert!(!h.agent.in_recovery && h.agent.scoreboard.sacked_count() == 0);
        assert_eq!(
            (h.agent.cwnd, h.agent.stats.fast_retransmits, h.agent.stats.timeouts),
            (5.0, 1, 0)
        );
    }

    #[test]
    fn ns2_sack_sends_nothing_more_on_the_ack_that_starts_recovery() {
        // Packets 0..4 out, 0 lost. On the third duplicate ACK cwnd is 2 and one packet is in flight
        // by either count: RFC 6675 sends new data at once, ns-2's Sack1 waits for the next ACK.
        for (profile, sent) in [(Profile::Rfc, vec![0, 4]), (Profile::Ns2, vec![0])] {
            let mut h = sack_sender(profile, 4);
            h.sack(0, &[(1, 2)]);
            h.sack(0, &[(1, 3)]);
            assert_eq!(h.sack(0, &[(1, 4)]), sent, "{profile:?}");
            assert_eq!(h.agent.cwnd, 2.0);
        }
        // A duplicate ACK that SACKs nothing new is not counted by Sack1.
        let mut h = sack_sender(Profile::Ns2, 4);
        h.sack(0, &[(1, 2)]);
        h.sack(0, &[(1, 2)]);
        h.sack(0, &[(1, 3)]);
        assert_eq!(h.agent.dupacks, 2);
    }

    #[test]
    fn ecn_then_a_loss_in_the_same_window_halves_once() {
        let mut h = sender(TcpOptions {
            ecn: true,
            initial_window: Some(8),
            ..Default::default()
        });
        h.ack_with(1, true); // packets 1..9 outstanding
        assert_eq!((h.agent.cwnd, h.agent.ssthresh), (4.0, 4.0));
        // Packet 1 was lost: the third duplicate ACK retransmits it without a second halving.
        h.ack(1);
        h.ack(1);
        assert_eq!(h.ack(1), vec![1]);
        assert_eq!(h.agent.stats.fast_retransmits, 1);
        assert_eq!((h.agent.ssthresh, h.agent.cwnd), (4.0, 7.0));
        assert!(h.agent.in_recovery);
        h.ack(h.agent.snd_max); // full ACK ends recovery, ssthresh still the one halving
        assert_eq!(h.agent.ssthresh, 4.0);
        // A timeout within a window halved for ECN keeps ssthresh (RFC 3168 §6.1.2).
        let mut h = sender(TcpOptions {
            ecn: true,
            initial_window: Some(8),
            ..Default::default()
        });
        h.ack_with(1, true);
        h.expire();
        assert_eq!((h.agent.cwnd, h.agent.ssthresh), (1.0, 4.0));
    }

    #[test]
    fn ns2_congestion_avoidance_adds_one_over_cwnd_per_ack() {
        let mut h = sender(TcpOptions {
            profile: Profile::Ns2,
            initial_window: Some(10),
            initial_ssthresh: Some(10.0),
            window: Some(100),
            ..Default::default()
        });
        let mut w: f64 = 10.0;
        for ack in 1..=10 {
            h.ack(ack);
            w += 1.0 / w;
            assert_eq!(h.agent.cwnd, w);
        }
        // int(cwnd_) = 10 after a full window of ACKs: no extra packet this round (floor(w)/w growth).
        assert!(h.agent.cwnd < 11.0 && h.agent.snd_max == 20);
    }

    #[test]
    fn bsd44_congestion_avoidance_adds_an_eighth_more_per_ack() {
        let mut h = sender(TcpOptions {
            congestion_avoidance: Some(CongestionAvoidance::Bsd44),
            initial_window: Some(16),
            initial_ssthresh: Some(16.0),
            window: Some(100),
            ..Default::default()
        });
        let mut w: f64 = 16.0;
        for ack in 1..=16 {
            h.ack(ack);
            w += 1.0 / w + 0.125;
        }
        assert_eq!(h.agent.cwnd, w);
        // One window of 16 ACKs: Σ 1/w ≈ 0.92 plus 16/8 = 2, against +1 under `per_window`.
        assert!((h.agent.cwnd - 18.92).abs() < 0.01, "cwnd {}", h.agent.cwnd);
    }

    #[test]
    fn slow_start_then_one_packet_per_window_of_acks() {
        let mut h = sender(TcpOptions {
            initial_ssthresh: Some(4.0),
            ..Default::default()
        });
        assert_eq!(seqs(&h.sent), vec![0]);
        assert_eq!(h.ack(1), vec![1, 2]); // cwnd 2
        assert_eq!(h.ack(2), vec![3, 4]); // cwnd 3
        assert_eq!(h.ack(3), vec![5, 6]); // cwnd 4 = ssthresh
                                          // Congestion avoidance: cwnd 4 grows to 5 on the fourth ACK.
        assert_eq!(h.ack(4), vec![7]);
        assert_eq!(h.ack(5), vec![8]);
        assert_eq!(h.ack(6), vec![9]);
        assert_eq!(h.ack(7), vec![10, 11]);
        assert_eq!(h.agent.cwnd, 5.0);
    }

    #[test]
    fn ecn_echo_halves_once_per_window_and_data_is_ect() {
        let mut h = sender(TcpOptions {
            ecn: true,
            initial_window: Some(8),
            ..Default::default()
        });
        assert!(h.sent.iter().all(|p| p.ecn == Ecn::Ect) && h.sent.len() == 8);
        h.ack_with(1, true);
        assert_eq!((h.agent.cwnd, h.agent.ssthresh), (4.0, 4.0));
        // Further echoes for data sent before the reduction are ignored.
        h.ack_with(2, true);
        h.ack_with(8, true);
        assert_eq!(h.agent.ssthresh, 4.0);
        // An echo for data sent after it halves again.
        let beyond = h.agent.ecn_recover + 1;
        h.ack_with(beyond, true);
        assert_eq!(h.agent.ssthresh, 2.0);
    }

    #[test]
    fn newreno_retransmits_on_each_partial_ack() {
        let mut h = sender(TcpOptions {
            initial_window: Some(10),
            ..Default::default()
        });
        // Packets 0, 3 and 6 of 0..10 are lost: 1, 2, 4, 5, 7, 8, 9 arrive.
        assert!(h.ack(0).is_empty() && h.ack(0).is_empty());
        assert_eq!(h.ack(0), vec![0]); // third duplicate ACK: fast retransmit
        assert_eq!((h.agent.ssthresh, h.agent.cwnd), (5.0, 8.0));
        for _ in 0..4 {
            h.ack(0); // cwnd inflates to 12: packets 10 and 11 go out
        }
        assert_eq!(h.agent.snd_max, 12);
        // Partial ACK: retransmit the next hole at once; cwnd deflates to 12 - 3 + 1 = 10 (RFC 6582),
        // which with 9 packets outstanding lets one new packet out.
        assert_eq!(h.ack(3), vec![3, 12]);
        assert_eq!(h.ack(6), vec![6, 13]);
        assert_eq!(h.agent.stats.timeouts, 0);
        h.ack(h.agent.snd_max); // full ACK ends recovery
        assert!(!h.agent.in_recovery);
        assert_eq!(h.agent.stats.fast_retransmits, 1);
    }

    #[test]
    fn tiny_window_resends_the_last_packet_when_the_window_is_full() {
        let mut h = sender(TcpOptions {
            window: Some(3),
            initial_window: Some(3),
            tiny_window: true,
            ..Default::default()
        });
        assert_eq!(h.ack(0), vec![2]); // first duplicate ACK: no room for new data, re-send the last packet
        assert_eq!(h.ack(0), vec![2]);
        assert_eq!(h.ack(0), vec![0]); // third: fast retransmit
        let mut h = sender(TcpOptions {
            window: Some(10),
            initial_window: Some(3),
            tiny_window: true,
            ..Default::default()
        });
        assert_eq!(h.ack(0), vec![3]); // room in the receiver window: a new packet
        assert_eq!(h.ack(0), vec![4]);
        assert_eq!(h.agent.cwnd, 3.0);
    }

    fn linux(cc: super::super::CongestionControl) -> AgentHarness<TcpSender> {
        sender(TcpOptions {
            profile: Profile::Linux,
            cc: Some(cc),
            ..Default::default()
        })
    }

    #[test]
    fn linux_opens_with_ten_packets_and_one_second_rto() {
        let mut h = linux(super::super::CongestionControl::Cubic);
        let first = seqs(&h.sent);
        assert_eq!(first, (0..10).collect::<Vec<_>>(), "IW 10 (RFC 6928, TCP_INIT_CWND)");
        assert_eq!(h.timers[0].0, 1_000_000_000, "TCP_TIMEOUT_INIT 1 s");
        // Slow start: each ACK of two packets opens two (tcp_slow_start() counts packets acked).
        assert_eq!(h.ack(2), vec![10, 11, 12, 13]);
        assert_eq!(h.agent.cwnd, 12.0);
    }

    #[test]
    fn linux_recovery_starts_at_three_sacked_and_reduces_by_the_module() {
        for (cc, ssthresh) in [
            (super::super::CongestionControl::Cubic, 14.0),
            (super::super::CongestionControl::Reno, 10.0),
        ] {
            let mut h = linux(cc);
            h.ack(10); // cwnd 20: packets 10..30 out
            assert_eq!(h.agent.cwnd, 20.0);
            // Packet 10 lost. Two SACKed packets: no recovery, but each makes room for new data
            // (Linux's in-flight count leaves SACKed packets out).
            assert_eq!(h.sack(10, &[(11, 12)]), vec![30]);
            assert_eq!(h.sack(10, &[(11, 13)]), vec![31]);
            // The third: recovery, ssthresh = 20·717/1024 = 14 (cubic) or 20/2 (reno).
            let sent = h.sack(10, &[(11, 14)]);
            assert_eq!(sent[0], 10);
            assert!(h.agent.in_recovery);
            assert_eq!(h.agent.ssthresh, ssthresh, "{cc:?}");
            // A full ACK ends recovery with cwnd = ssthresh.
            let high = h.agent.snd_max;
            h.ack(high);
            assert!(!h.agent.in_recovery && h.agent.cwnd >= ssthresh && h.agent.cwnd <= ssthresh + 1.0);
        }
    }

    #[test]
    fn linux_recovery_sends_by_prr() {
        let mut h = linux(super::super::CongestionControl::Cubic);
        h.ack(10); // cwnd 20: packets 10..30 out
                   // Packet 10 lost; each ACK SACKs one more packet. The first two SACKs send new data
                   // (30, 31); the third starts recovery with ssthresh 14 and RecoverFS = cwnd = 20.
        let mut sent = Vec::new();
        for top in 12..14 {
            sent.extend(h.sack(10, &[(11, top)]));
        }
        assert_eq!(sent, vec![30, 31]);
        let mut delivered: u64 = 0;
        let mut out = 0;
        for top in 14..26 {
            let now = h.sack(10, &[(11, top)]);
            delivered += 1;
            out += now.len() as u64;
            assert!(h.agent.in_recovery && h.agent.ssthresh == 14.0);
            if delivered == 1 {
                assert_eq!(now[0], 10, "the fast retransmission first");
            }
            // In flight stays above ssthresh: RFC 6937's proportional part,
            // ⌈prr_delivered · ssthresh / RecoverFS⌉ sent in all.
            let in_flight = h.agent.board.in_flight();
            assert!(in_flight >= 14, "{in_flight}");
            assert_eq!(out, (delivered * 14).div_ceil(20), "after {delivered} delivered");
            assert_eq!((h.agent.prr.delivered, h.agent.prr.out), (delivered, out));
        }
    }

    const MS: Time = 1_000_000;

    /// A linux sender with `window` packets of receiver window: 10 packets out at 0, the first
    /// `acked` acknowledged 1 ms later (SRTT 1 ms, RTO 201 ms); cwnd 10 + acked.
    fn linux_after_first_ack(window: u64, acked: u64) -> AgentHarness<TcpSender> {
        let mut h = sender(TcpOptions {
            profile: Profile::Linux,
            window: Some(window),
            ..Default::default()
        });
        h.sent.clear();
        h.ack(acked);
        h.sent.clear();
        h
    }

    #[test]
    fn linux_schedules_a_probe_two_srtt_after_the_last_send() {
        // RFC 8985 §7.2: PTO = 2·SRTT (+ TCP_TIMEOUT_MIN 2 ms), in place of the RTO.
        let h = linux_after_first_ack(2000, 10);
        assert_eq!(h.agent.xmit_timer, XmitTimer::LossProbe);
        let srtt = h.agent.rtt.srtt_and_rttvar().unwrap().0;
        assert_eq!(srtt, 0.001);
        assert_eq!(
            h.agent.retransmit_timer.deadline(),
            Some(h.now + from_secs(2.0 * srtt + LINUX_TIMEOUT_MIN))
        );
        // Never later than the RTO would fire: with SRTT 1 s the PTO (2 s) gives way to it.
        let rto = LinuxRto::new(1.0, 0.2);
        assert_eq!(rto.probe_timeout(5), 1.0, "TCP_TIMEOUT_INIT before any sample");
        let mut rto = rto;
        rto.sample(0.1, 1, 2);
        assert!((rto.probe_timeout(5) - 0.202).abs() < 1e-12);
        // One packet out: its ACK may be delayed, so the minimum RTO is added.
        assert!((rto.probe_timeout(1) - 0.4).abs() < 1e-12);
    }

    #[test]
    fn linux_repairs_a_lost_tail_by_a_probe_without_a_timeout() {
        // Packets 10..30 are all lost: no ACK comes. The probe is new data (30); its SACK
        // lets RACK mark 10..30 lost (sent before 30, RACK.rtt + reo_wnd ago), and recovery
        // retransmits them: no RTO.
        let mut h = linux_after_first_ack(2000, 10);
        assert_eq!(h.agent.snd_max, 30);
        assert_eq!(h.fire_xmit(), vec![30]);
        assert_eq!(h.agent.xmit_timer, XmitTimer::Retransmit);
        let sent = h.sack(10, &[(30, 31)]);
        assert!(h.agent.in_recovery);
        assert_eq!(sent[0], 10, "the first lost packet first");
        assert_eq!((h.agent.stats.timeouts, h.agent.stats.fast_retransmits), (0, 1));
        // With no new data to send (receiver window 20 full), the probe resends the last packet.
        let mut h = linux_after_first_ack(20, 10);
        assert_eq!(h.agent.snd_max, 30);
        assert_eq!(h.fire_xmit(), vec![29]);
        assert_eq!(h.agent.stats.retransmitted_packets, 1);
        assert!(h.agent.probe.is_some_and(|p| p.retransmitted && p.high_seq == 30));
        let sent = h.sack(10, &[(29, 30)]);
        assert_eq!((sent[0], h.agent.stats.timeouts), (10, 0));
    }

    #[test]
    fn linux_sends_one_probe_per_tail_loss_episode() {
        let mut h = linux_after_first_ack(2000, 10);
        assert_eq!(h.fire_xmit(), vec![30]);
        // An ACK below the probe's high_seq: the probe is still out. The timer is a probe's
        // again (nothing SACKed or lost), but when it fires no second probe goes: the RTO does.
        let sent = h.ack(12);
        assert!(!sent.is_empty() && h.agent.probe.is_some());
        assert_eq!(h.agent.xmit_timer, XmitTimer::LossProbe);
        assert!(h.fire_xmit().is_empty());
        assert_eq!(h.agent.xmit_timer, XmitTimer::Retransmit);
        assert_eq!(h.agent.stats.timeouts, 0);
        // The probe's new data acknowledged: the episode is over and a new probe may go.
        let high = h.agent.snd_max;
        h.ack(high);
        assert!(h.agent.probe.is_none() && h.agent.xmit_timer == XmitTimer::LossProbe);
    }

    #[test]
    fn linux_probe_that_repaired_a_loss_reduces_the_window() {
        // RFC 8985 §7.4.2: the resent last packet acknowledged with later data (no D-SACK):
        // a loss was repaired, so the window is reduced once (cwnd = ssthresh, reno halves).
        let mut h = sender(TcpOptions {
            profile: Profile::Linux,
            cc: Some(super::super::CongestionControl::Reno),
            window: Some(20),
            ..Default::default()
        });
        h.sent.clear();
        h.ack(10);
        assert_eq!(h.fire_xmit(), vec![29]);
        let cwnd = h.agent.cwnd;
        h.ack(30); // the probe repaired 29: the ACK reaches high_seq, not beyond
        assert!(h.agent.probe.is_some());
        let high = h.agent.snd_max;
        h.ack(high);
        assert!(h.agent.probe.is_none());
        assert_eq!(h.agent.ssthresh, (cwnd / 2.0).floor());
        // Both the original and the probe arrived: a pure duplicate ACK ends the episode, no reduction.
        let mut h = linux_after_first_ack(20, 10);
        assert_eq!(h.fire_xmit(), vec![29]);
        let ssthresh = h.agent.ssthresh;
        h.ack(30);
        assert!(h.agent.probe.is_some());
        h.ack(30);
        assert!(h.agent.probe.is_none());
        assert_eq!(h.agent.ssthresh, ssthresh);
    }

    #[test]
    fn linux_reordering_timer_marks_the_loss_rack_rtt_plus_reo_wnd_after_its_send() {
        // Packet 10 (sent at 1 ms) lost; 11 SACKed at 2 ms: one SACKed packet, so the window is
        // min RTT / 4 = 0.25 ms and RACK.rtt is 11's, 1 ms (RFC 8985 §6.2 step 4-5). The timer
        // is due at 10's send + RACK.rtt + reo_wnd, plus TCP_TIMEOUT_MIN.
        let mut h = linux_after_first_ack(2000, 10);
        let sent_10 = h.now;
        assert!(!h.sack(10, &[(11, 12)]).is_empty());
        assert!(!h.agent.in_recovery);
        assert_eq!(h.agent.xmit_timer, XmitTimer::ReorderTimeout);
        let due = sent_10 + MS + MS / 4 + from_secs(LINUX_TIMEOUT_MIN);
        assert_eq!(h.agent.retransmit_timer.deadline(), Some(due));
        // It fires: 10 is lost, recovery starts with its retransmission; no RTO.
        assert_eq!(h.fire_xmit()[0], 10);
        assert!(h.agent.in_recovery);
        assert_eq!((h.agent.stats.timeouts, h.agent.stats.fast_retransmits), (0, 1));
        assert_eq!(h.agent.xmit_timer, XmitTimer::Retransmit);
    }
}
