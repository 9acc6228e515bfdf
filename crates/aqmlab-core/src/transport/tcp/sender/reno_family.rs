//! The Reno family: Tahoe, Reno, NewReno and SACK, by today's RFCs ([`Rules::Rfc`], profile
//! `rfc`) or as ns-2's one-way agents of 1997–2001 ran them ([`Rules::Ns2`], profile `ns2`).
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
//! [`Rules::Ns2`] replaces, each rule with ns-2's file and variable (ns-2 of
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

use super::{Recovery, SenderCore};
use crate::packet::Packet;
use crate::rng::Rng;
use crate::time::{from_secs, Time};
use crate::transport::ns2_rtt::Ns2Rtt;
use crate::transport::tcp::rto::RtoEstimator;
use crate::transport::tcp::sack::{Scoreboard, DUP_THRESH};
use crate::transport::tcp::{CongestionAvoidance, TcpParams, Variant};
use crate::transport::AgentCtx;
use rand::Rng as _;

/// FRED §11.3: the tiny-window enhancement applies "with a congestion window smaller than about 10 packets".
const TINY_WINDOW: f64 = 10.0;
/// 4.4BSD-Lite tcp_input.c's "constant fraction of a packet (maxseg/8)" per ACK in congestion avoidance.
const BSD44_EXTRA_INCREMENT: f64 = 1.0 / 8.0;
/// ns-2 NewReno recv(): `send_much(0, 0, 2)` while in fast recovery (tcp-newreno.cc).
const NS2_NEWRENO_RECOVERY_BURST: u64 = 2;

/// Whose rules the family follows: the profile, less `linux` (the other family's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rules {
    /// Today's RFCs (5681, 6298, 6582, 6675).
    Rfc,
    /// ns-2's one-way agents of 1997–2001.
    Ns2,
}

/// The RTT estimator and retransmission timeout of the rules.
enum RttTimer {
    /// RFC 6298 from every ACK's echoed send time.
    Rfc6298(RtoEstimator),
    /// ns-2: one timed packet per RTT, in ticks.
    Ns2(Ns2Rtt),
}

impl RttTimer {
    fn rto(&self) -> f64 {
        match self {
            RttTimer::Rfc6298(e) => e.rto(),
            RttTimer::Ns2(t) => t.rto(),
        }
    }

    fn back_off(&mut self) {
        match self {
            RttTimer::Rfc6298(e) => e.back_off(),
            RttTimer::Ns2(t) => t.back_off(),
        }
    }

    fn reset(&mut self) {
        match self {
            RttTimer::Rfc6298(e) => e.reset(),
            RttTimer::Ns2(t) => t.reset(),
        }
    }

    fn srtt_and_rttvar(&self) -> Option<(f64, f64)> {
        match self {
            RttTimer::Rfc6298(e) => e.srtt().zip(e.rttvar()),
            RttTimer::Ns2(t) => t.srtt_and_rttvar(),
        }
    }

    /// A timeout or fast retransmit (ns-2 reset_rtx_timer(): `rtt_active_ = 0`).
    fn stop_timing(&mut self) {
        if let RttTimer::Ns2(t) = self {
            t.stop_timing();
        }
    }
}

/// What the family runs with, resolved once from the flow's [`TcpParams`].
#[derive(Clone, Copy, Debug)]
struct FamilyParams {
    variant: Variant,
    rules: Rules,
    congestion_avoidance: CongestionAvoidance,
    tiny_window: bool,
}

/// The Reno family's state beside [`SenderCore`]'s (RFC 6675 names where they exist).
pub struct RenoFamily {
    params: FamilyParams,
    rtt: RttTimer,
    dupacks: u32,
    /// ACKs counted towards the next congestion-avoidance increment.
    ca_acks: u64,
    /// NewReno: a partial ACK has already restarted the timer in this recovery.
    partial_acked: bool,
    /// SACK: one past the highest packet retransmitted in this recovery (RFC 6675 HighRxt;
    /// ns-2 scoreboard-rq.cc `h_seqno_`).
    high_rxt: u64,
    /// SACK by ns-2's rules: Sack1's `pipe_`, the packets it counts in flight during
    /// recovery (by arithmetic, so it may go below zero).
    ns2_pipe: i64,
    scoreboard: Scoreboard,
}

impl RenoFamily {
    pub fn new(opts: &TcpParams, rules: Rules, rng: &mut Rng) -> Self {
        let rtt = match rules {
            Rules::Rfc => RttTimer::Rfc6298(RtoEstimator::new(
                opts.initial_rto.0,
                opts.min_rto.0,
                opts.timer_granularity.0,
            )),
            Rules::Ns2 => {
                let tick = opts.timer_granularity.nanos().max(1);
                // tcp.cc reset(): `boot_time_ = Random::uniform(tcp_tick_)`, the phase of the host's clock.
                let phase = rng.gen_range(0..tick);
                RttTimer::Ns2(Ns2Rtt::new(tick, phase, opts.initial_rto.0, opts.min_rto.0))
            }
        };
        RenoFamily {
            params: FamilyParams {
                variant: opts.variant,
                rules,
                congestion_avoidance: opts.congestion_avoidance,
                tiny_window: opts.tiny_window,
            },
            rtt,
            dupacks: 0,
            ca_acks: 0,
            partial_acked: false,
            high_rxt: 0,
            ns2_pipe: 0,
            scoreboard: Scoreboard::default(),
        }
    }

    fn send_packet(&mut self, core: &mut SenderCore, seq: u64, ctx: &mut AgentCtx) {
        if seq >= core.snd_max {
            if let RttTimer::Ns2(t) = &mut self.rtt {
                t.on_new_packet(seq, ctx.now);
            }
        }
        core.transmit(seq, ctx);
        if !core.retransmit_timer.is_set() {
            self.restart_timer(core, ctx);
        }
    }

    fn restart_timer(&self, core: &mut SenderCore, ctx: &mut AgentCtx) {
        core.retransmit_timer.set(ctx.now + from_secs(self.rtt.rto()), ctx);
    }

    /// Sliding window: send while the next packet is within min(cwnd, window)
    /// of the cumulative ACK, at most `burst` packets.
    fn send_window(&mut self, core: &mut SenderCore, burst: u64, ctx: &mut AgentCtx) {
        let limit = core.snd_una + (core.cwnd.floor() as u64).clamp(1, core.params.window);
        let limit = limit.min(core.snd_nxt.saturating_add(burst));
        while core.snd_nxt < limit && core.has_data(core.snd_nxt, ctx.now) {
            self.send_packet(core, core.snd_nxt, ctx);
            core.snd_nxt += 1;
        }
    }

    /// RFC 6675 §5 (C): in SACK recovery, send NextSeg() while cwnd - pipe >= 1.
    fn send_pipe(&mut self, core: &mut SenderCore, ctx: &mut AgentCtx) {
        let mut pipe = self.scoreboard.pipe(core.snd_max, self.high_rxt) as f64;
        while core.cwnd - pipe >= 1.0 {
            let Some(seq) = self.next_seg(core, ctx.now) else { break };
            if seq < core.snd_max {
                self.high_rxt = seq + 1;
            } else {
                core.snd_nxt = seq + 1;
            }
            self.send_packet(core, seq, ctx);
            pipe += 1.0;
        }
    }

    /// RFC 6675 NextSeg: (1) the first lost hole above HighRxt, else (2) new
    /// data, else (3) the first hole above HighRxt even if not yet lost.
    fn next_seg(&self, core: &SenderCore, now: Time) -> Option<u64> {
        let hole = self.scoreboard.first_hole(self.high_rxt.max(core.snd_una));
        if let Some((seq, true)) = hole {
            return Some(seq);
        }
        if core.snd_nxt < core.snd_una + core.params.window && core.has_data(core.snd_nxt, now) {
            return Some(core.snd_nxt);
        }
        hole.map(|(seq, _)| seq)
    }

    /// ns-2 Sack1 send_much() in recovery: while `pipe_ < int(cwnd_)`, the first hole above
    /// the last retransmission (scoreboard-rq.cc GetNextRetran()), else new data, within
    /// the receiver window from the cumulative ACK; each packet sent adds one to `pipe_`.
    fn send_ns2_sack(&mut self, core: &mut SenderCore, ctx: &mut AgentCtx) {
        let limit = core.snd_una + core.params.window;
        while self.ns2_pipe < core.cwnd.floor() as i64 {
            let seq = match self.scoreboard.first_hole(self.high_rxt.max(core.snd_una)) {
                Some((hole, _)) if hole < limit => {
                    self.high_rxt = hole + 1;
                    hole
                }
                None if core.snd_nxt < limit && core.has_data(core.snd_nxt, ctx.now) => core.snd_nxt,
                _ => break,
            };
            core.snd_nxt = core.snd_nxt.max(seq + 1);
            self.send_packet(core, seq, ctx);
            self.ns2_pipe += 1;
        }
    }

    fn ns2_sack(&self) -> bool {
        self.params.variant == Variant::Sack && self.params.rules == Rules::Ns2
    }

    /// On loss or ECN, ssthresh becomes half the window in whole packets, at least 2 (ns-2
    /// slowdown(); RFC 5681 eq. (4)).
    fn reduce_ssthresh(&mut self, core: &mut SenderCore) {
        self.halve_ssthresh_of(core, core.window_before_reduction());
    }

    fn halve_ssthresh_of(&mut self, core: &mut SenderCore, window: f64) {
        self.ca_acks = 0;
        core.ssthresh = (window.min(core.params.window as f64) / 2.0).floor().max(2.0);
    }

    /// ssthresh on a retransmission timeout. During recovery the window is no
    /// longer what was sent: RFC 5681 eq. (4) halves FlightSize, while ns-2
    /// halved the already-halved cwnd_ (tcp-reno.cc timeout() clears `dupwnd_`
    /// before TcpAgent::timeout()'s slowdown(CLOSE_SSTHRESH_HALF) of window();
    /// Sack1's window() is cwnd_, tcp-sack1.cc).
    fn timeout_ssthresh(&mut self, core: &mut SenderCore) {
        match (core.in_recovery, self.params.rules) {
            (true, Rules::Rfc) => self.halve_ssthresh_of(core, core.flight()),
            _ => self.reduce_ssthresh(core),
        }
    }

    /// RFC 3168 §6.1.2: halve the window once per window of data on ECN-echo.
    fn ecn_reduce(&mut self, core: &mut SenderCore) {
        self.reduce_ssthresh(core);
        core.cwnd = core.ssthresh;
        core.reduced_for_ecn();
    }

    /// Slow start: +1 per new ACK. Congestion avoidance by [`CongestionAvoidance`]:
    /// `per_window` +1 once cwnd ACKs have arrived, i.e. one packet per RTT as RFC 5681
    /// §3.1 intends; with delayed ACKs the growth halves, the b = 2 of the throughput
    /// models. RFC 5681 eq. (3), +1/cwnd per ACK (`per_ack`), grows only floor(cwnd)/cwnd
    /// per RTT when the window in packets is floor(cwnd).
    fn open_cwnd(&mut self, core: &mut SenderCore) {
        if core.cwnd < core.ssthresh {
            core.cwnd += 1.0;
        } else {
            match self.params.congestion_avoidance {
                // tcp.cc opencwnd(), `windowOption_ 1`, `increase_num_ 1.0`: cwnd_ += 1/cwnd_.
                CongestionAvoidance::PerAck => core.cwnd += 1.0 / core.cwnd,
                // 4.4BSD-Lite tcp_input.c: incr = maxseg*maxseg/cw + maxseg/8, in packets.
                CongestionAvoidance::Bsd44 => core.cwnd += 1.0 / core.cwnd + BSD44_EXTRA_INCREMENT,
                CongestionAvoidance::PerWindow => {
                    self.ca_acks += 1;
                    if self.ca_acks as f64 >= core.cwnd {
                        self.ca_acks = 0;
                        core.cwnd += 1.0;
                    }
                }
            }
        }
        // Growth beyond the receiver window could never be used.
        core.cwnd = core.cwnd.min(core.params.window as f64);
    }

    /// An ACK of new data; `ece`: it echoed congestion, so the window does not grow.
    fn on_new_ack(&mut self, core: &mut SenderCore, p: &Packet, ece: bool, ctx: &mut AgentCtx) {
        let new = core.acknowledge(p, ctx);
        self.scoreboard.advance(new.ack);
        // Karn: a retransmitted packet's echo is ambiguous.
        if let RttTimer::Rfc6298(e) = &mut self.rtt {
            e.sample(new.rtt, p.retransmit);
        }
        self.dupacks = 0;
        let mut restart_timer = true;
        let mut grow = !ece;
        let mut partial = false;
        if core.in_recovery {
            let full = core.recover.is_some_and(|r| new.ack >= r);
            match self.params.variant {
                Variant::NewReno if !full => {
                    (grow, partial) = (false, true);
                    restart_timer = self.newreno_partial_ack(core, new.acked, ctx);
                }
                Variant::Sack if !full => {
                    (grow, partial) = (false, true);
                    self.sack_partial_ack();
                }
                // Reno leaves fast recovery on the first new ACK (Tahoe has no recovery state);
                // further losses need 3 more dup ACKs or a timeout.
                Variant::Tahoe | Variant::Reno | Variant::NewReno | Variant::Sack => {
                    self.exit_recovery(core);
                    // ns-2 Reno/NewReno recv(): the exiting ACK goes through recv_newack_helper()'s opencwnd().
                    grow &= self.params.rules == Rules::Ns2 && self.params.variant != Variant::Sack;
                }
            }
        }
        if grow {
            self.open_cwnd(core);
        }
        if core.snd_una == core.snd_max {
            core.retransmit_timer.clear();
        } else if restart_timer {
            self.restart_timer(core, ctx);
        }
        // tcp.cc newack(): newtimer() runs before rtt_update() (`timerfix_` came in 2001-05).
        if let RttTimer::Ns2(t) = &mut self.rtt {
            if partial && self.params.variant == Variant::Sack {
                // tcp-sack1.cc recv(): a partial ACK ends the back-off; the timed packet stays timed.
                t.end_back_off();
            } else if partial {
                t.on_partial_ack(new.ack);
            } else {
                t.on_ack(new.ack, ctx.now);
            }
        }
        core.check_transfer_done(ctx);
    }

    /// A full ACK: everything outstanding when loss was detected is acknowledged.
    fn exit_recovery(&mut self, core: &mut SenderCore) {
        core.in_recovery = false;
        core.cwnd = match (self.params.variant, self.params.rules) {
            // FRED §11.2 and RFC 6582 §3.2 step 3 (1): no burst when recovery ends.
            (Variant::NewReno, Rules::Rfc) => core.ssthresh.min(core.flight().max(1.0) + 1.0),
            // tcp-newreno.cc recv(), `exit_recovery_fix_ 0`: cwnd_ (= ssthresh_) is kept, a burst is allowed.
            (Variant::NewReno, Rules::Ns2) => core.ssthresh,
            // RFC 5681 §3.2 step 6: deflate the window (SACK recovery already runs at ssthresh).
            (Variant::Tahoe | Variant::Reno | Variant::Sack, _) => core.ssthresh,
        };
    }

    /// A NewReno ACK in recovery that does not cover `recover`; returns whether to restart the timer.
    fn newreno_partial_ack(&mut self, core: &mut SenderCore, acked: u64, ctx: &mut AgentCtx) -> bool {
        self.send_packet(core, core.snd_una, ctx);
        match self.params.rules {
            // FRED §11.2: "immediately retransmits the packet after the one acknowledged by the
            // partial ACK"; RFC 6582 §3.2 step 5: deflate by the amount acked, add back one.
            Rules::Rfc => {
                core.cwnd = (core.cwnd - acked as f64 + 1.0).max(1.0);
                // RFC 6582 §4 ("Impatient"): only the first partial ACK restarts the timer.
                !std::mem::replace(&mut self.partial_acked, true)
            }
            // tcp-newreno.cc partialnewack_helper(): retransmit; `partial_window_deflation_ 0`
            // drops the inflation (dupwnd_ = 0); `newreno_changes1_ 0` ("Slow-but-Steady")
            // restarts the timer on every partial ACK.
            Rules::Ns2 => {
                core.cwnd = core.ssthresh;
                true
            }
        }
    }

    /// A SACK ACK in recovery that does not cover `recover`; the timer restarts. By the RFCs
    /// the scoreboard and pipe decide what to send (RFC 6675 §5 (C)); tcp-sack1.cc recv(),
    /// `partial_ack_ false`: one packet more left the pipe than the ACK's own (the ACK may be
    /// for a retransmission: "never do worse than slow-start").
    fn sack_partial_ack(&mut self) {
        if self.params.rules == Rules::Ns2 {
            self.ns2_pipe -= 1;
        }
    }

    /// `sack_news`: the ACK's blocks SACKed a packet not SACKed before.
    fn on_dupack(&mut self, core: &mut SenderCore, sack_news: bool, ctx: &mut AgentCtx) {
        if self.ns2_sack() && (core.in_recovery || !sack_news) {
            // tcp-sack1.cc recv(): outside recovery a duplicate ACK counts only if its blocks
            // SACK new data (CheckUpdate()); in recovery it changes nothing but `pipe_`.
            return;
        }
        self.dupacks += 1;
        if core.in_recovery {
            if matches!(self.params.variant, Variant::Reno | Variant::NewReno) {
                // RFC 5681 §3.2 step 4: each duplicate ACK means a packet left the network.
                core.cwnd += 1.0;
            }
            return;
        }
        // RFC 6675 §5: SACK also detects loss once DupThresh packets above the hole are SACKed
        // (ns-2's Sack1 waits for the third duplicate ACK).
        let loss = u64::from(self.dupacks) >= DUP_THRESH
            || (self.params.rules == Rules::Rfc && self.scoreboard.is_lost(core.snd_una));
        if loss && core.recover.is_none_or(|r| core.snd_una > r) {
            self.reduce_ssthresh(core);
            self.fast_retransmit(core, ctx);
        } else if loss && core.ecn_reduced {
            // RFC 3168 §6.1.2: the window was already halved for this window of data; ns-2
            // dupack_action() with `last_cwnd_action_ == CWND_ACTION_ECN` retransmits without slowdown().
            self.fast_retransmit(core, ctx);
        } else if !loss && self.params.tiny_window && core.cwnd.min(core.params.window as f64) < TINY_WINDOW {
            // FRED §11.3: a new packet for each of the first two duplicate ACKs; if the
            // receiver window allows none, "re-send the last packet in the window".
            if core.snd_nxt < core.snd_una + core.params.window && core.has_data(core.snd_nxt, ctx.now) {
                self.send_packet(core, core.snd_nxt, ctx);
                core.snd_nxt += 1;
            } else {
                self.send_packet(core, core.snd_max - 1, ctx);
            }
        }
    }

    /// Fast retransmit once ssthresh is set; enters recovery (except Tahoe).
    fn fast_retransmit(&mut self, core: &mut SenderCore, ctx: &mut AgentCtx) {
        core.fast_retransmitting();
        self.rtt.stop_timing();
        match self.params.variant {
            // Tahoe: retransmit and slow-start again from one packet (go-back-N).
            Variant::Tahoe => {
                core.cwnd = 1.0;
                core.snd_nxt = core.snd_una;
            }
            // RFC 5681 §3.2 step 3: retransmit, inflate by the three packets that left.
            Variant::Reno | Variant::NewReno => {
                core.in_recovery = true;
                self.partial_acked = false;
                self.send_packet(core, core.snd_una, ctx);
                core.cwnd = core.ssthresh + 3.0;
            }
            // RFC 6675 §5 (4): cwnd = ssthresh, retransmit the first lost packet, then pipe.
            // ns-2 Sack1 dupack_action(): `pipe_ = maxseq_ - highest_ack_ - numdupacks_`,
            // the three packets the duplicate ACKs report gone; the retransmission is not counted.
            Variant::Sack => {
                core.in_recovery = true;
                self.ns2_pipe = (core.snd_max - core.snd_una) as i64 - DUP_THRESH as i64;
                core.cwnd = core.ssthresh;
                self.high_rxt = core.snd_una + 1;
                self.send_packet(core, core.snd_una, ctx);
            }
        }
        self.restart_timer(core, ctx);
    }

    /// A retransmission timeout: go-back-N from the cumulative ACK, the scoreboard forgotten.
    fn timeout(&mut self, core: &mut SenderCore, ctx: &mut AgentCtx) {
        if !core.timed_out(|core| self.timeout_ssthresh(core)) {
            return;
        }
        self.dupacks = 0;
        core.snd_nxt = core.snd_una;
        self.scoreboard.clear();
        self.rtt.stop_timing();
        self.rtt.back_off();
        self.send_more(core, ctx);
    }
}

impl Recovery for RenoFamily {
    fn new_connection(&mut self, _core: &mut SenderCore, _ctx: &mut AgentCtx) {
        self.ca_acks = 0;
        self.dupacks = 0;
        self.rtt.reset();
    }

    fn send_more(&mut self, core: &mut SenderCore, ctx: &mut AgentCtx) {
        match (core.in_recovery, self.params.variant, self.params.rules) {
            (true, Variant::Sack, Rules::Rfc) => self.send_pipe(core, ctx),
            (true, Variant::Sack, Rules::Ns2) => self.send_ns2_sack(core, ctx),
            (true, Variant::NewReno, Rules::Ns2) => self.send_window(core, NS2_NEWRENO_RECOVERY_BURST, ctx),
            _ => self.send_window(core, u64::MAX, ctx),
        }
    }

    fn on_ack(&mut self, core: &mut SenderCore, p: &Packet, ctx: &mut AgentCtx) {
        let mut newly_sacked = 0;
        if self.params.variant == Variant::Sack {
            for &(start, end) in &p.sack[..p.sack_len as usize] {
                newly_sacked += self.scoreboard.mark(start, end, core.snd_max);
            }
        }
        let was_in_recovery = core.in_recovery;
        if was_in_recovery && self.ns2_sack() {
            // tcp-sack1.cc recv(): every ACK in recovery takes one packet out of `pipe_`.
            self.ns2_pipe -= 1;
        }
        let echo = core.congestion_echo(p);
        let ece = core.ecn_echo(&echo, p);
        if ece {
            self.ecn_reduce(core);
        }
        let new_ack = p.seq > core.snd_una;
        if new_ack {
            self.on_new_ack(core, p, ece, ctx);
        } else if p.seq == core.snd_una && core.snd_max > core.snd_una {
            self.on_dupack(core, newly_sacked > 0, ctx);
        }
        if self.ns2_sack() && new_ack && !core.in_recovery {
            // tcp-sack1.cc recv(): a new ACK outside recovery, or the one that ends it, clears the scoreboard.
            self.scoreboard.clear();
        }
        // tcp-sack1.cc recv(): an ACK that finds Sack1 outside recovery sends only while no duplicate
        // ACK is counted, so the one that starts recovery sends nothing but the retransmission.
        if !self.ns2_sack() || was_in_recovery || self.dupacks == 0 {
            self.send_more(core, ctx);
        }
    }

    fn on_retransmit_timer(&mut self, core: &mut SenderCore, ctx: &mut AgentCtx) {
        self.timeout(core, ctx);
    }

    /// RFC 5681 §4.1: after more than an RTO without sending, cwnd is at most the restart
    /// window RW = min(IW, cwnd); ssthresh stays. ns-2's one-way agents keep both: newtimer()
    /// cancels their retransmission timer once everything is acknowledged, so
    /// `slow_start_restart_` (which acts in timeout()) never runs, and `QOption_` is off.
    fn restart_after_idle(&mut self, core: &mut SenderCore, idle: Time, _ctx: &mut AgentCtx) {
        if self.params.rules == Rules::Rfc && idle > from_secs(self.rtt.rto()) {
            core.cwnd = core.cwnd.min(core.params.initial_window);
        }
    }

    fn rto(&self) -> f64 {
        self.rtt.rto()
    }

    fn srtt_and_rttvar(&self) -> Option<(f64, f64)> {
        self.rtt.srtt_and_rttvar()
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{seqs, started};
    use super::super::TcpSender;
    use super::*;
    use crate::packet::Ecn;
    use crate::transport::tcp::{Profile, TcpOptions};
    use crate::transport::testing::AgentHarness;

    /// A started sender of the family by `rules`, its profile's defaults filled in.
    fn sender(rules: Rules, opts: TcpOptions) -> AgentHarness<TcpSender<RenoFamily>> {
        let profile = match rules {
            Rules::Rfc => Profile::Rfc,
            Rules::Ns2 => Profile::Ns2,
        };
        let params = TcpOptions { profile, ..opts }.resolve();
        started(&params, |params, rng| RenoFamily::new(params, rules, rng))
    }

    /// Packets 0..10 out, packet 0 lost: three duplicate ACKs and four more
    /// (cwnd 5 + 3 + 4 = 12, so packets 10 and 11 go out; SACK sends them as its
    /// pipe falls to 4, by RFC 6675's count or ns-2's); then the retransmission of 0
    /// is lost too and the timer expires with 12 outstanding.
    fn timeout_during_recovery(rules: Rules, variant: Variant) -> TcpSender<RenoFamily> {
        let mut h = sender(
            rules,
            TcpOptions {
                variant: Some(variant),
                initial_window: Some(10),
                window: Some(100),
                ..Default::default()
            },
        );
        for sacked in 2..9 {
            h.sack(0, &[(1, sacked)]);
        }
        assert_eq!((h.agent.core.ssthresh, h.agent.core.stats.fast_retransmits), (5.0, 1));
        assert_eq!(h.agent.core.snd_max, 12);
        assert_eq!(h.expire(), vec![0]);
        assert_eq!((h.agent.core.cwnd, h.agent.core.stats.timeouts), (1.0, 1));
        h.agent
    }

    #[test]
    fn a_timeout_during_recovery_halves_flight_size_under_rfc_and_cwnd_under_ns2() {
        // RFC 5681 eq. (4): max(FlightSize / 2, 2) = 12 / 2 (before: floor(ssthresh 5 / 2) = 2).
        for variant in [Variant::Reno, Variant::NewReno, Variant::Sack] {
            assert_eq!(
                timeout_during_recovery(Rules::Rfc, variant).core.ssthresh,
                6.0,
                "{variant:?}"
            );
        }
        // ns-2 halves cwnd_ = 5 (dupwnd_ cleared first; Sack1's window() is cwnd_): int(5 / 2) = 2.
        for variant in [Variant::Reno, Variant::NewReno, Variant::Sack] {
            assert_eq!(
                timeout_during_recovery(Rules::Ns2, variant).core.ssthresh,
                2.0,
                "{variant:?}"
            );
        }
    }

    fn sack_sender(rules: Rules, initial_window: u64) -> AgentHarness<TcpSender<RenoFamily>> {
        sender(
            rules,
            TcpOptions {
                variant: Some(Variant::Sack),
                initial_window: Some(initial_window),
                window: Some(100),
                ..Default::default()
            },
        )
    }

    #[test]
    fn ns2_sack_counts_pipe_by_arithmetic() {
        // Packets 0..10 out; 0 and 5 are lost, the others arrive in order.
        let mut h = sack_sender(Rules::Ns2, 10);
        assert!(h.sack(0, &[(1, 2)]).is_empty() && h.sack(0, &[(1, 3)]).is_empty());
        // Third duplicate ACK: cwnd = ssthresh = 5, pipe_ = maxseq 9 - highest_ack -1 - 3 = 7 (the
        // fast retransmission is not counted).
        assert_eq!(h.sack(0, &[(1, 4)]), vec![0]);
        assert_eq!((h.agent.core.cwnd, h.agent.recovery.ns2_pipe), (5.0, 7));
        // Each ACK in recovery takes one out: 6, then 5, nothing sent while pipe_ >= cwnd.
        assert!(h.sack(0, &[(1, 5)]).is_empty());
        assert!(h.sack(0, &[(6, 7), (1, 5)]).is_empty());
        // pipe_ 4 < 5: the hole 5 goes out, though only two packets above it are SACKed
        // (RFC 6675 would wait until it IsLost).
        assert_eq!(h.sack(0, &[(6, 8), (1, 5)]), vec![5]);
        assert_eq!(h.agent.recovery.ns2_pipe, 5);
        // No hole above the last retransmission: new data, one per ACK.
        assert_eq!(h.sack(0, &[(6, 9), (1, 5)]), vec![10]);
        assert_eq!(h.sack(0, &[(6, 10), (1, 5)]), vec![11]);
        // The retransmitted 0 arrives: a partial ACK takes two out, so two packets go.
        assert_eq!(h.sack(5, &[(6, 10)]), vec![12, 13]);
        assert_eq!(h.agent.recovery.ns2_pipe, 5);
        // The retransmitted 5 arrives: recovery ends at cwnd 5 with packets 10..14 out.
        assert_eq!(h.ack(10), vec![14]);
        assert!(!h.agent.core.in_recovery && h.agent.recovery.scoreboard.sacked_count() == 0);
        assert_eq!(
            (
                h.agent.core.cwnd,
                h.agent.core.stats.fast_retransmits,
                h.agent.core.stats.timeouts
            ),
            (5.0, 1, 0)
        );
    }

    #[test]
    fn ns2_sack_sends_nothing_more_on_the_ack_that_starts_recovery() {
        // Packets 0..4 out, 0 lost. On the third duplicate ACK cwnd is 2 and one packet is in flight
        // by either count: RFC 6675 sends new data at once, ns-2's Sack1 waits for the next ACK.
        for (rules, sent) in [(Rules::Rfc, vec![0, 4]), (Rules::Ns2, vec![0])] {
            let mut h = sack_sender(rules, 4);
            h.sack(0, &[(1, 2)]);
            h.sack(0, &[(1, 3)]);
            assert_eq!(h.sack(0, &[(1, 4)]), sent, "{rules:?}");
            assert_eq!(h.agent.core.cwnd, 2.0);
        }
        // A duplicate ACK that SACKs nothing new is not counted by Sack1.
        let mut h = sack_sender(Rules::Ns2, 4);
        h.sack(0, &[(1, 2)]);
        h.sack(0, &[(1, 2)]);
        h.sack(0, &[(1, 3)]);
        assert_eq!(h.agent.recovery.dupacks, 2);
    }

    /// An ECN-capable sender with 8 packets out.
    fn ecn_sender() -> AgentHarness<TcpSender<RenoFamily>> {
        sender(
            Rules::Rfc,
            TcpOptions {
                ecn: Some(crate::transport::tcp::EcnOption::On(true)),
                initial_window: Some(8),
                ..Default::default()
            },
        )
    }

    #[test]
    fn ecn_then_a_loss_in_the_same_window_halves_once() {
        let mut h = ecn_sender();
        h.ack_with(1, true); // packets 1..9 outstanding
        assert_eq!((h.agent.core.cwnd, h.agent.core.ssthresh), (4.0, 4.0));
        // Packet 1 was lost: the third duplicate ACK retransmits it without a second halving.
        h.ack(1);
        h.ack(1);
        assert_eq!(h.ack(1), vec![1]);
        assert_eq!(h.agent.core.stats.fast_retransmits, 1);
        assert_eq!((h.agent.core.ssthresh, h.agent.core.cwnd), (4.0, 7.0));
        assert!(h.agent.core.in_recovery);
        h.ack(h.agent.core.snd_max); // full ACK ends recovery, ssthresh still the one halving
        assert_eq!(h.agent.core.ssthresh, 4.0);
        // A timeout within a window halved for ECN keeps ssthresh (RFC 3168 §6.1.2).
        let mut h = ecn_sender();
        h.ack_with(1, true);
        h.expire();
        assert_eq!((h.agent.core.cwnd, h.agent.core.ssthresh), (1.0, 4.0));
    }

    #[test]
    fn ns2_congestion_avoidance_adds_one_over_cwnd_per_ack() {
        let mut h = sender(
            Rules::Ns2,
            TcpOptions {
                initial_window: Some(10),
                initial_ssthresh: Some(10.0),
                window: Some(100),
                ..Default::default()
            },
        );
        let mut w: f64 = 10.0;
        for ack in 1..=10 {
            h.ack(ack);
            w += 1.0 / w;
            assert_eq!(h.agent.core.cwnd, w);
        }
        // int(cwnd_) = 10 after a full window of ACKs: no extra packet this round (floor(w)/w growth).
        assert!(h.agent.core.cwnd < 11.0 && h.agent.core.snd_max == 20);
    }

    #[test]
    fn bsd44_congestion_avoidance_adds_an_eighth_more_per_ack() {
        let mut h = sender(
            Rules::Rfc,
            TcpOptions {
                congestion_avoidance: Some(CongestionAvoidance::Bsd44),
                initial_window: Some(16),
                initial_ssthresh: Some(16.0),
                window: Some(100),
                ..Default::default()
            },
        );
        let mut w: f64 = 16.0;
        for ack in 1..=16 {
            h.ack(ack);
            w += 1.0 / w + 0.125;
        }
        assert_eq!(h.agent.core.cwnd, w);
        // One window of 16 ACKs: Σ 1/w ≈ 0.92 plus 16/8 = 2, against +1 under `per_window`.
        assert!((h.agent.core.cwnd - 18.92).abs() < 0.01, "cwnd {}", h.agent.core.cwnd);
    }

    #[test]
    fn slow_start_then_one_packet_per_window_of_acks() {
        let mut h = sender(
            Rules::Rfc,
            TcpOptions {
                initial_ssthresh: Some(4.0),
                ..Default::default()
            },
        );
        assert_eq!(seqs(&h.sent), vec![0]);
        assert_eq!(h.ack(1), vec![1, 2]); // cwnd 2
        assert_eq!(h.ack(2), vec![3, 4]); // cwnd 3
        assert_eq!(h.ack(3), vec![5, 6]); // cwnd 4 = ssthresh
                                          // Congestion avoidance: cwnd 4 grows to 5 on the fourth ACK.
        assert_eq!(h.ack(4), vec![7]);
        assert_eq!(h.ack(5), vec![8]);
        assert_eq!(h.ack(6), vec![9]);
        assert_eq!(h.ack(7), vec![10, 11]);
        assert_eq!(h.agent.core.cwnd, 5.0);
    }

    #[test]
    fn ecn_echo_halves_once_per_window_and_data_is_ect() {
        let mut h = ecn_sender();
        assert!(h.sent.iter().all(|p| p.ecn == Ecn::Ect0) && h.sent.len() == 8);
        h.ack_with(1, true);
        assert_eq!((h.agent.core.cwnd, h.agent.core.ssthresh), (4.0, 4.0));
        // Further echoes for data sent before the reduction are ignored.
        h.ack_with(2, true);
        h.ack_with(8, true);
        assert_eq!(h.agent.core.ssthresh, 4.0);
        // An echo for data sent after it halves again.
        let beyond = h.agent.core.ecn_recover + 1;
        h.ack_with(beyond, true);
        assert_eq!(h.agent.core.ssthresh, 2.0);
    }

    #[test]
    fn newreno_retransmits_on_each_partial_ack() {
        let mut h = sender(
            Rules::Rfc,
            TcpOptions {
                initial_window: Some(10),
                ..Default::default()
            },
        );
        // Packets 0, 3 and 6 of 0..10 are lost: 1, 2, 4, 5, 7, 8, 9 arrive.
        assert!(h.ack(0).is_empty() && h.ack(0).is_empty());
        assert_eq!(h.ack(0), vec![0]); // third duplicate ACK: fast retransmit
        assert_eq!((h.agent.core.ssthresh, h.agent.core.cwnd), (5.0, 8.0));
        for _ in 0..4 {
            h.ack(0); // cwnd inflates to 12: packets 10 and 11 go out
        }
        assert_eq!(h.agent.core.snd_max, 12);
        // Partial ACK: retransmit the next hole at once; cwnd deflates to 12 - 3 + 1 = 10 (RFC 6582),
        // which with 9 packets outstanding lets one new packet out.
        assert_eq!(h.ack(3), vec![3, 12]);
        assert_eq!(h.ack(6), vec![6, 13]);
        assert_eq!(h.agent.core.stats.timeouts, 0);
        h.ack(h.agent.core.snd_max); // full ACK ends recovery
        assert!(!h.agent.core.in_recovery);
        assert_eq!(h.agent.core.stats.fast_retransmits, 1);
    }

    #[test]
    fn tiny_window_resends_the_last_packet_when_the_window_is_full() {
        let mut h = sender(
            Rules::Rfc,
            TcpOptions {
                window: Some(3),
                initial_window: Some(3),
                tiny_window: true,
                ..Default::default()
            },
        );
        assert_eq!(h.ack(0), vec![2]); // first duplicate ACK: no room for new data, re-send the last packet
        assert_eq!(h.ack(0), vec![2]);
        assert_eq!(h.ack(0), vec![0]); // third: fast retransmit
        let mut h = sender(
            Rules::Rfc,
            TcpOptions {
                window: Some(10),
                initial_window: Some(3),
                tiny_window: true,
                ..Default::default()
            },
        );
        assert_eq!(h.ack(0), vec![3]); // room in the receiver window: a new packet
        assert_eq!(h.ack(0), vec![4]);
        assert_eq!(h.agent.core.cwnd, 3.0);
    }
}
