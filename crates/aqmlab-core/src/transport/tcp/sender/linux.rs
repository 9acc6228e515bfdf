//! Linux 6.1's sender (net/ipv4/tcp_input.c, tcp_output.c, tcp_recovery.c), profile `linux`,
//! SACK only:
//! - the window is `cc`'s ([`LinuxCc`], the module interface of [`crate::transport::tcp::cc`]):
//!   grown on each ACK that acknowledges new data outside recovery by the packets it
//!   delivered (cumulatively or by SACK), only while the sender is cwnd-limited
//!   (tcp_is_cwnd_limited(), tcp_cwnd_validate()); ssthresh from the module on loss,
//!   ECN-echo and timeouts;
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

use super::{NewAck, Recovery, SenderCore, SenderTimer};
use crate::packet::Packet;
use crate::time::{from_secs, to_secs, Time};
use crate::transport::tcp::cc::{AckSample, CaState, Connection, Window};
use crate::transport::tcp::cong::{LinuxCc, Reduction};
use crate::transport::tcp::prague::PragueAck;
use crate::transport::tcp::prr::Prr;
use crate::transport::tcp::rack::{Detection, RackBoard};
use crate::transport::tcp::rate::DeliveryRate;
use crate::transport::tcp::rto::{LinuxRto, LINUX_TIMEOUT_MIN};
use crate::transport::tcp::TcpParams;
use crate::transport::timer::{Generation, Restartable};
use crate::transport::AgentCtx;

/// tcp_update_pacing_rate(): the pacing rate Linux sets is this multiple of cwnd/SRTT in
/// slow start (`tcp_pacing_ss_ratio` 200) and in congestion avoidance (`tcp_pacing_ca_ratio` 120).
const LINUX_PACING_SS_RATIO: f64 = 2.0;
const LINUX_PACING_CA_RATIO: f64 = 1.2;
/// tcp_update_skb_after_send(): the first 10 packets go unpaced ("Original sch_fq does not
/// pace first 10 MSS").
const UNPACED_SEGS: u64 = 10;

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

/// What the retransmission timer runs when it fires (Linux's `icsk_pending`: the three share
/// one timer, inet_connection_sock.h `ICSK_TIME_*`).
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

/// The linux family's state beside [`SenderCore`]'s (Linux's names).
pub struct Linux {
    /// The congestion control module.
    cc: LinuxCc,
    rtt: LinuxRto,
    /// The retransmission queue and RACK (the SACK scoreboard).
    board: RackBoard,
    /// PRR's state in the current recovery.
    prr: Prr,
    /// `TCP_CA_Loss`: after a timeout, until `recover` is acknowledged.
    in_loss: bool,
    /// The Tail Loss Probe in flight, at most one.
    probe: Option<Probe>,
    /// What the retransmission timer runs.
    xmit_timer: XmitTimer,
    /// tcp_cwnd_validate()'s state: whether the last window of data was cwnd-limited.
    cwnd_usage: CwndUsage,
    /// Packets sent (new or again): whether a send attempt sent anything.
    sent: u64,
    /// Delivery rate samples, for a module that sets cwnd itself (BBR).
    rate: Option<DeliveryRate>,
    /// Internal pacing, for a module that asks for it (BBR).
    pacing: Option<Pacing>,
}

impl Linux {
    /// The family for data packets of `size` bytes.
    pub fn new(opts: &TcpParams, size: u32) -> Self {
        let cc = LinuxCc::new(opts, size, 0.0);
        let cong_control = cc.cong_control();
        Linux {
            cc,
            rtt: LinuxRto::new(opts.initial_rto.0, opts.min_rto.0),
            board: RackBoard::default(),
            prr: Prr::default(),
            in_loss: false,
            probe: None,
            xmit_timer: XmitTimer::Retransmit,
            cwnd_usage: CwndUsage::default(),
            sent: 0,
            rate: cong_control.then(DeliveryRate::default),
            pacing: cong_control.then(|| Pacing::new(0)),
        }
    }

    fn send_packet(&mut self, core: &mut SenderCore, seq: u64, ctx: &mut AgentCtx) {
        self.sent += 1;
        if core.in_recovery {
            self.prr.sent(1);
        }
        if let Some(rate) = &mut self.rate {
            rate.sent(seq, ctx.now, self.board.packets_out());
        }
        self.board.sent(seq, ctx.now);
        if let Some(p) = &mut self.pacing {
            let rate = self.cc.pacing_rate().unwrap_or(0.0);
            p.sent(core.params.size, rate, ctx.now);
        }
        let retransmit = core.transmit(seq, ctx);
        // tcp_event_new_data_sent(): the first packet out arms the RTO; so does new data
        // while a probe is scheduled (tcp_write_xmit() schedules it again afterwards).
        if !core.retransmit_timer.is_set() || (!retransmit && self.xmit_timer == XmitTimer::LossProbe) {
            self.rearm_rto(core, ctx);
        }
    }

    /// The RTO from now.
    fn restart_rto(&mut self, core: &mut SenderCore, ctx: &mut AgentCtx) {
        self.xmit_timer = XmitTimer::Retransmit;
        core.retransmit_timer.set(ctx.now + from_secs(self.rtt.rto()), ctx);
    }

    /// tcp_rearm_rto(): the RTO, cleared with nothing outstanding; in place of a reordering
    /// timer or a probe it runs from the oldest packet's send time (tcp_rto_delta_us()).
    fn rearm_rto(&mut self, core: &mut SenderCore, ctx: &mut AgentCtx) {
        if core.snd_una == core.snd_max {
            core.retransmit_timer.clear();
            return;
        }
        let rto = from_secs(self.rtt.rto());
        let at = match (self.xmit_timer, self.board.head_sent()) {
            (XmitTimer::ReorderTimeout | XmitTimer::LossProbe, Some(sent)) => (sent + rto).max(ctx.now + 1),
            _ => ctx.now + rto,
        };
        self.xmit_timer = XmitTimer::Retransmit;
        core.retransmit_timer.set(at, ctx);
    }

    /// RFC 8985 §7.2, tcp_schedule_loss_probe(): in the Open state (not recovering, nothing
    /// SACKed, marked lost or retransmitted: tcp_try_keep_open()) a probe replaces the RTO,
    /// due after the PTO ([`LinuxRto::probe_timeout`]) but never after the RTO would fire:
    /// a full RTO from now when this ACK restarts it (`advancing_rto`), else the time left
    /// from the oldest packet's send. Returns whether it scheduled one.
    fn schedule_loss_probe(&mut self, core: &mut SenderCore, advancing_rto: bool, ctx: &mut AgentCtx) -> bool {
        let packets_out = self.board.packets_out();
        let open = !core.in_recovery
            && !self.in_loss
            && self.board.sacked_out() == 0
            && self.board.lost_out() == 0
            && !self.board.any_retrans_done();
        if !open || packets_out == 0 {
            return false;
        }
        let mut timeout = from_secs(self.rtt.probe_timeout(packets_out));
        let until_rto = if advancing_rto {
            from_secs(self.rtt.rto())
        } else {
            self.board
                .head_sent()
                .map_or(0, |sent| (sent + from_secs(self.rtt.rto())).saturating_sub(ctx.now))
        };
        if until_rto > 0 {
            timeout = timeout.min(until_rto);
        }
        self.xmit_timer = XmitTimer::LossProbe;
        core.retransmit_timer.set(ctx.now + timeout, ctx);
        true
    }

    /// RFC 8985 §7.3, tcp_send_loss_probe(): unless a probe is already out, one packet beyond
    /// cwnd: new data if there is any within the receiver window, else the last packet sent
    /// again. Then the RTO, from now.
    fn send_loss_probe(&mut self, core: &mut SenderCore, ctx: &mut AgentCtx) {
        if self.probe.is_none() && core.snd_max > core.snd_una {
            let new_data = core.snd_max < core.snd_una + core.params.window && core.has_data(core.snd_max, ctx.now);
            let seq = if new_data { core.snd_max } else { core.snd_max - 1 };
            self.xmit_timer = XmitTimer::Retransmit;
            self.send_packet(core, seq, ctx);
            core.snd_nxt = core.snd_max;
            self.probe = Some(Probe {
                high_seq: core.snd_max,
                retransmitted: !new_data,
            });
        }
        self.rearm_rto(core, ctx);
    }

    /// RFC 8985 §7.4, tcp_process_tlp_ack(), on an ACK at or beyond the probe: a probe of new
    /// data is done; a resent packet acknowledged together with later data repaired a loss,
    /// so the window is reduced at once, as on ECN (tcp_init_cwnd_reduction(), then
    /// tcp_end_cwnd_reduction(): cwnd = ssthresh); a pure duplicate ACK means the original
    /// and the probe both arrived. (Linux also takes a D-SACK for that; the sink sends none.)
    fn process_probe_ack(&mut self, core: &mut SenderCore, ack: u64, new_ack: bool, newly_sacked: u64) {
        let Some(probe) = self.probe.filter(|p| ack >= p.high_seq) else {
            return;
        };
        if !probe.retransmitted || (!new_ack && newly_sacked == 0) {
            self.probe = None;
        } else if ack > probe.high_seq {
            self.probe = None;
            // tcp_process_tlp_ack(): the reduction is CWR's.
            self.reduce_ssthresh(core, Reduction::Cwr);
            self.end_cwnd_reduction(core);
        }
    }

    /// tcp_rack_reo_timeout(): RACK's reordering window has passed for the packets it held;
    /// those now lost start recovery (one packet counted delivered for PRR) and go again.
    fn reorder_timeout(&mut self, core: &mut SenderCore, ctx: &mut AgentCtx) {
        let in_flight = self.board.in_flight();
        let reo_wnd = self.board.reo_wnd(core.in_recovery || self.in_loss, self.srtt());
        let found = self.board.detect_loss(reo_wnd, ctx.now);
        if self.board.in_flight() != in_flight {
            if !core.in_recovery && !self.in_loss {
                self.enter_recovery(core, ctx);
                let in_flight = self.board.in_flight();
                if let Some(cwnd) = self
                    .prr
                    .cwnd(core.ssthresh as u64, in_flight, 1, found.marked == 0)
                    .filter(|_| !self.cc.cong_control())
                {
                    core.cwnd = cwnd as f64;
                }
            }
            self.send_more(core, ctx);
        }
        if self.xmit_timer != XmitTimer::Retransmit || !core.retransmit_timer.is_set() {
            self.rearm_rto(core, ctx);
        }
    }

    /// SRTT for RACK's reordering window, zero before any sample (tcp_rack_reo_wnd()).
    fn srtt(&self) -> Time {
        self.rtt.srtt_and_rttvar().map_or(0, |(srtt, _)| from_secs(srtt))
    }

    /// On an ACK of new data: the RTT and delay sample to the module (HyStart, LEDBAT), then
    /// growth by the packets delivered, outside recovery and while cwnd-limited
    /// (tcp_cong_control()); `prior_in_flight` were in flight before the ACK.
    fn grow(
        &mut self,
        core: &mut SenderCore,
        new: &NewAck,
        prior_in_flight: u64,
        delivered: u64,
        grow: bool,
        now: f64,
    ) {
        let mut w = Window {
            cwnd: core.cwnd as u64,
            ssthresh: core.ssthresh as u64,
            clamp: core.params.window,
        };
        let ratio = if w.in_slow_start() {
            LINUX_PACING_SS_RATIO
        } else {
            LINUX_PACING_CA_RATIO
        };
        let packets = w.cwnd.max(core.snd_max - core.snd_una) as f64;
        let pacing_rate = match self.rtt.srtt_and_rttvar() {
            Some((srtt, _)) if srtt > 0.0 => ratio * packets * f64::from(core.params.size) / srtt,
            _ => 0.0,
        };
        let sample = AckSample {
            now,
            rtt: new.rtt,
            snd_una: core.snd_una,
            snd_nxt: core.snd_max,
            pacing_rate,
            one_way_delay: new.one_way_delay,
            prior_in_flight,
        };
        self.cc.on_ack_sample(&mut w, &sample);
        // tcp_cong_control(): a module that sets cwnd itself replaces tcp_cong_avoid().
        if grow && !self.cc.cong_control() && self.cwnd_usage.limits(&w) {
            self.cc.cong_avoid(&mut w, delivered, now);
        }
        core.cwnd = w.cwnd as f64;
        core.ssthresh = w.ssthresh as f64;
    }

    /// ssthresh from the module for a reduction for `why`, given the window before it.
    fn reduce_ssthresh(&mut self, core: &mut SenderCore, why: Reduction) {
        let cwnd = core.window_before_reduction() as u64;
        core.ssthresh = self.cc.reduce(why, cwnd, core.ssthresh as u64) as f64;
    }

    /// tcp_end_cwnd_reduction(): cwnd = ssthresh, unless the module sets cwnd itself.
    fn end_cwnd_reduction(&self, core: &mut SenderCore) {
        if !self.cc.cong_control() {
            core.cwnd = core.ssthresh;
        }
    }

    /// An ACK of new data, `newly_sacked` packets SACKed by its blocks for the first time,
    /// `prior_in_flight` in flight before it; `ece`: it echoed congestion, so the window does
    /// not grow. Returns the packets it delivered, cumulatively or by SACK (Linux's `delivered`).
    fn on_new_ack(
        &mut self,
        core: &mut SenderCore,
        p: &Packet,
        ece: bool,
        newly_sacked: u64,
        prior_in_flight: u64,
        ctx: &mut AgentCtx,
    ) -> u64 {
        let new = core.acknowledge(p, ctx);
        if let Some(rate) = &mut self.rate {
            rate.ack(new.ack);
        }
        let delivered = self.board.ack(new.ack, ctx.now) + newly_sacked;
        if self.in_loss && core.recover.is_some_and(|r| new.ack >= r) {
            // tcp_process_loss(): everything outstanding at the timeout is acknowledged.
            self.in_loss = false;
            self.cc.open();
        }
        // Linux's timestamps echo the retransmission's send time: every ACK is a sample.
        self.rtt.sample(new.rtt, new.ack, core.snd_max);
        // tcp_cong_control(): no growth in the CWR state an ECN-echo entered, held until the
        // cumulative ACK passes the point of the reduction (tcp_fastretrans_alert(): `high_seq`).
        let in_cwr = core.ecn_reduced && new.ack <= core.ecn_recover;
        let mut grow = !ece && !in_cwr;
        if core.in_recovery {
            if core.recover.is_some_and(|r| new.ack >= r) {
                // The exiting ACK returns to Open before tcp_cong_control() grows the window.
                core.in_recovery = false;
                self.end_cwnd_reduction(core);
                self.cc.open();
            } else {
                // PRR sets cwnd (on_ack); the timer is rearmed on every ACK of new data there
                // (tcp_set_xmit_timer()).
                grow = false;
            }
        }
        self.grow(core, &new, prior_in_flight, delivered, grow, to_secs(ctx.now));
        core.check_transfer_done(ctx);
        delivered
    }

    /// On an ACK that moved RACK: RACK marks losses ([`RackBoard::mark_lost`]); outside
    /// recovery and loss, a marked loss starts recovery (tcp_time_to_recover(): `lost_out`).
    /// Linux with SACK counts SACKed packets, not duplicate ACKs.
    fn detect_loss(&mut self, core: &mut SenderCore, ctx: &mut AgentCtx) -> Detection {
        let reo_wnd = self.board.reo_wnd(core.in_recovery || self.in_loss, self.srtt());
        let found = self.board.mark_lost(reo_wnd, ctx.now);
        if !core.in_recovery && !self.in_loss && self.board.lost_out() > 0 {
            self.enter_recovery(core, ctx);
        }
        found
    }

    /// tcp_enter_recovery(): halving unless within a window already halved for ECN; a
    /// probe's episode ends (tcp_init_cwnd_reduction()). PRR sets cwnd from this ACK on,
    /// and its first window sends the fast retransmission.
    fn enter_recovery(&mut self, core: &mut SenderCore, ctx: &mut AgentCtx) {
        if core.recover.is_none_or(|r| core.snd_una >= r) {
            self.reduce_ssthresh(core, Reduction::Loss);
        }
        self.probe = None;
        core.fast_retransmitting();
        core.in_recovery = true;
        self.prr = Prr::start(core.cwnd as u64);
        self.restart_rto(core, ctx);
    }

    /// tcp_enter_loss() on a retransmission timeout.
    fn timeout(&mut self, core: &mut SenderCore, ctx: &mut AgentCtx) {
        // ssthresh only when no reduction is under way (state Open or Disorder, or high_seq
        // acknowledged); within one, ssthresh stays.
        let ssthresh = |core: &mut SenderCore| {
            if core.recover.is_none_or(|r| core.snd_una >= r) {
                self.reduce_ssthresh(core, Reduction::Loss);
            }
        };
        if !core.timed_out(ssthresh) {
            return;
        }
        // SACKed packets stay, the rest are lost and go again in order; a probe's episode
        // ends. `tp->lost` counts those not lost yet and the retransmissions in flight
        // (tcp_mark_skb_lost()).
        let newly_lost =
            self.board.packets_out() - self.board.sacked_out() - self.board.lost_out() + self.board.retrans_out();
        if let Some(rate) = &mut self.rate {
            rate.lost += newly_lost;
        }
        self.board.all_lost();
        self.in_loss = true;
        self.probe = None;
        self.rtt.back_off();
        if self.cc.cong_control() {
            // bbr_set_state(TCP_CA_Loss); Prague's CA_EVENT_LOSS halved its window in `reduce`.
            if self.cc.bbr().is_some() {
                let c = self.connection(core, ctx.now);
                if let Some(bbr) = self.cc.bbr() {
                    bbr.enter_loss(&c, &mut core.rng);
                }
            }
        } else {
            self.cc.restart(to_secs(ctx.now), core.snd_max);
        }
        self.send_more(core, ctx);
    }

    /// RFC 3168 §6.1.2: reduce the window once per window of data on ECN-echo (tcp_enter_cwr()).
    fn ecn_reduce(&mut self, core: &mut SenderCore) {
        self.reduce_ssthresh(core, Reduction::Cwr);
        self.end_cwnd_reduction(core);
        core.reduced_for_ecn();
    }

    /// `cong_control` on an ACK (tcp_ack(): tcp_rate_gen(), then tcp_cong_control()): the ACK
    /// delivered `delivered` packets, `delivered_ce` of them echoed CE, and marked `lost`
    /// lost; `prior_in_flight` were in flight before it. bbr_main() or prague_cong_control().
    fn cong_control_on_ack(
        &mut self,
        core: &mut SenderCore,
        delivered: u64,
        delivered_ce: u64,
        lost: u64,
        prior_in_flight: u64,
        ctx: &mut AgentCtx,
    ) {
        let min_rtt = self.board.min_rtt();
        let Some(rate) = &mut self.rate else { return };
        let rs = rate.sample(ctx.now, delivered, lost, min_rtt, prior_in_flight);
        if self.cc.bbr().is_none() {
            let mut w = Window {
                cwnd: core.cwnd as u64,
                ssthresh: core.ssthresh as u64,
                clamp: core.params.window,
            };
            let ack = PragueAck {
                now: to_secs(ctx.now),
                delivered,
                newly_ce: delivered_ce,
                app_limited: rs.app_limited,
                srtt: self.rtt.srtt_and_rttvar().map(|(srtt, _)| srtt),
                snd_una: core.snd_una,
                snd_nxt: core.snd_max,
            };
            self.cc.prague_on_ack(&mut w, &ack);
            core.cwnd = w.cwnd as f64;
            core.ssthresh = w.ssthresh as f64;
            return;
        }
        let c = self.connection(core, ctx.now);
        let Some(bbr) = self.cc.bbr() else {
            return;
        };
        let (cwnd, app_limited) = bbr.on_ack(&rs, &c, &mut core.rng);
        core.cwnd = cwnd as f64;
        core.ssthresh = bbr.ssthresh as f64;
        if let Some(rate) = self.rate.as_mut().filter(|_| app_limited) {
            rate.set_app_limited(c.in_flight);
        }
    }

    /// What a module that sets cwnd itself reads of the connection (`struct tcp_sock`) at `now`.
    fn connection(&self, core: &SenderCore, now: Time) -> Connection {
        let rate = self.rate.as_ref().expect("a module that sets cwnd itself");
        Connection {
            now: to_secs(now),
            cwnd: core.cwnd as u64,
            clamp: core.params.window,
            in_flight: self.board.in_flight(),
            delivered: rate.delivered,
            delivered_at: to_secs(rate.delivered_at),
            lost: rate.lost,
            state: if self.in_loss {
                CaState::Loss
            } else if core.in_recovery {
                CaState::Recovery
            } else {
                CaState::Open
            },
            srtt: self.rtt.srtt_and_rttvar().map(|(srtt, _)| srtt),
            next_departure: self.pacing.as_ref().map_or(0.0, |p| to_secs(p.next_departure)),
            mss: f64::from(core.params.size),
        }
    }
}

impl Recovery for Linux {
    fn new_connection(&mut self, core: &mut SenderCore, ctx: &mut AgentCtx) {
        self.rtt.reset();
        self.init_module(core, ctx);
        self.in_loss = false;
        self.probe = None;
    }

    /// BBR's delivery counters and pacing start afresh with it.
    fn init_module(&mut self, core: &mut SenderCore, ctx: &mut AgentCtx) {
        self.cc.restart(to_secs(ctx.now), core.snd_max);
        if let Some(bbr) = self.cc.bbr() {
            core.ssthresh = bbr.ssthresh as f64;
        }
        if self.cc.cong_control() {
            self.rate = Some(DeliveryRate::default());
            self.pacing = Some(Pacing::new(ctx.now));
        }
    }

    /// While fewer packets are in flight than cwnd, the packets marked lost, then new data
    /// (tcp_xmit_retransmit_queue(), tcp_write_xmit()), in every state. Then
    /// tcp_cwnd_validate().
    fn send_more(&mut self, core: &mut SenderCore, ctx: &mut AgentCtx) {
        let sent = self.sent;
        let snd_max = core.snd_max;
        let mut in_flight = self.board.in_flight();
        while (in_flight as f64) < core.cwnd {
            let seq = match self.board.next_lost() {
                Some(seq) => seq,
                None if core.snd_max < core.snd_una + core.params.window && core.has_data(core.snd_max, ctx.now) => {
                    core.snd_max
                }
                None => break,
            };
            if let Some(p) = self.pacing.as_mut().filter(|p| p.next_departure > ctx.now) {
                // tcp_pacing_check(): wait for the departure time (Linux checks before cwnd;
                // a wake-up that finds cwnd full sends nothing, so the order changes nothing).
                p.timer.set(p.next_departure, ctx);
                break;
            }
            self.send_packet(core, seq, ctx);
            core.snd_nxt = core.snd_max;
            in_flight += 1;
        }
        if core.snd_max > snd_max {
            // tcp_write_xmit(): new data sent schedules a probe.
            self.schedule_loss_probe(core, false, ctx);
        }
        // For the delivery-rate samples (BBR's only): less than a packet left to send (the
        // receiver window does not count), room in cwnd, every lost packet resent.
        let app_limited = self.rate.is_some()
            && !core.has_data(core.snd_max, ctx.now)
            && (in_flight as f64) < core.cwnd
            && self.board.lost_out() <= self.board.retrans_out();
        if let Some(rate) = self.rate.as_mut().filter(|_| app_limited) {
            rate.set_app_limited(in_flight);
        }
        let limited = in_flight as f64 >= core.cwnd;
        if self.sent > sent || limited {
            let packets_out = core.snd_max - core.snd_una;
            let u = &mut self.cwnd_usage;
            if core.snd_una >= u.until || limited || (!u.limited && packets_out > u.max_packets_out) {
                *u = CwndUsage {
                    limited,
                    max_packets_out: packets_out,
                    until: core.snd_max,
                };
            }
        }
    }

    /// tcp_ack(): SACK blocks, the cumulative ACK, the probe's outcome, then loss detection,
    /// then the window (the module's, or PRR's in recovery), then the timer.
    fn on_ack(&mut self, core: &mut SenderCore, p: &Packet, ctx: &mut AgentCtx) {
        let prior_in_flight = self.board.in_flight();
        let mut blocks = p.sack;
        let blocks = &mut blocks[..p.sack_len as usize];
        // tcp_sacktag_write_queue() walks the blocks in sequence order: RACK.rtt is the
        // last packet's.
        blocks.sort_unstable();
        let mut newly_sacked = 0;
        for &(start, end) in blocks.iter() {
            if let Some(rate) = &mut self.rate {
                rate.sack(start, end);
            }
            newly_sacked += self.board.sack(start, end, ctx.now);
        }
        let echo = core.congestion_echo(p);
        // tcp_in_ack_event() before tcp_fastretrans_alert()'s CWR: DCTCP's α first.
        self.cc.in_ack_event(p.seq.max(core.snd_una), core.snd_max);
        let ece = core.ecn_echo(&echo, p);
        if ece {
            self.ecn_reduce(core);
        }
        let new_ack = p.seq > core.snd_una;
        let delivered = if new_ack {
            self.on_new_ack(core, p, ece, newly_sacked, prior_in_flight, ctx)
        } else {
            newly_sacked
        };
        let delivered_ce = echo.delivered_ce(delivered);
        self.cc.delivered(delivered, delivered_ce);
        self.process_probe_ack(core, p.seq, new_ack, newly_sacked);
        let found = self.detect_loss(core, ctx);
        if self.cc.cong_control() {
            self.cong_control_on_ack(core, delivered, delivered_ce, found.marked, prior_in_flight, ctx);
        } else if core.in_recovery {
            let in_flight = self.board.in_flight();
            if let Some(cwnd) = self
                .prr
                .cwnd(core.ssthresh as u64, in_flight, delivered, new_ack && found.marked == 0)
            {
                core.cwnd = cwnd as f64;
            }
        }
        if let Some(wait) = found.expires_in {
            // tcp_rack_mark_lost(): the reordering timer, TCP_TIMEOUT_MIN after the last
            // packet's window passes, at most an RTO away.
            let wait = (wait + from_secs(LINUX_TIMEOUT_MIN)).min(from_secs(self.rtt.rto()));
            self.xmit_timer = XmitTimer::ReorderTimeout;
            core.retransmit_timer.set(ctx.now + wait, ctx);
        } else if new_ack && !self.schedule_loss_probe(core, true, ctx) {
            // tcp_set_xmit_timer().
            self.rearm_rto(core, ctx);
        }
        self.send_more(core, ctx);
    }

    fn on_retransmit_timer(&mut self, core: &mut SenderCore, ctx: &mut AgentCtx) {
        match self.xmit_timer {
            XmitTimer::Retransmit => self.timeout(core, ctx),
            XmitTimer::ReorderTimeout => self.reorder_timeout(core, ctx),
            XmitTimer::LossProbe => self.send_loss_probe(core, ctx),
        }
    }

    fn on_pace_timer(&mut self, core: &mut SenderCore, generation: Generation, ctx: &mut AgentCtx) {
        if self.pacing.as_mut().is_some_and(|p| p.timer.expired(generation, ctx)) {
            self.send_more(core, ctx);
        }
    }

    /// tcp_slow_start_after_idle_check() and tcp_cwnd_restart() (`tcp_slow_start_after_idle`
    /// 1): after more than an RTO idle, ssthresh = tcp_current_ssthresh() (at least 3/4 of
    /// cwnd) and cwnd halves once per RTO idle, down to the restart window min(IW, cwnd); then
    /// the first packet out with nothing in flight is CA_EVENT_TX_START, on which CUBIC moves
    /// its epoch on by the idle time (cubictcp_cwnd_event()).
    fn restart_after_idle(&mut self, core: &mut SenderCore, idle: Time, ctx: &mut AgentCtx) {
        let rto = from_secs(self.rtt.rto());
        if idle > rto {
            let cwnd = core.cwnd as u64;
            core.ssthresh = core.ssthresh.max(((cwnd >> 1) + (cwnd >> 2)) as f64);
            let restart = cwnd.min(core.params.initial_window as u64);
            let (mut cwnd, mut left) = (cwnd, idle);
            while left > rto && cwnd > restart {
                left -= rto;
                cwnd >>= 1;
            }
            core.cwnd = cwnd.max(restart) as f64;
        }
        self.cc.idle_restart(to_secs(idle), to_secs(ctx.now));
    }

    fn rto(&self) -> f64 {
        self.rtt.rto()
    }

    fn srtt_and_rttvar(&self) -> Option<(f64, f64)> {
        self.rtt.srtt_and_rttvar()
    }

    fn pacing_rate(&mut self) -> Option<f64> {
        self.cc.pacing_rate()
    }

    fn base_delay(&self) -> Option<f64> {
        self.cc.ledbat().map(|l| l.base_delay()).filter(|d| d.is_finite())
    }

    fn alpha(&self) -> Option<f64> {
        self.cc.alpha()
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{seqs, started};
    use super::super::TcpSender;
    use super::*;
    use crate::transport::tcp::{CongestionControl, Profile, TcpOptions};
    use crate::transport::testing::AgentHarness;

    /// A started linux sender, the profile's defaults filled in.
    fn sender(opts: TcpOptions) -> AgentHarness<TcpSender<Linux>> {
        let params = TcpOptions {
            profile: Profile::Linux,
            ..opts
        }
        .resolve();
        started(&params, |params, _| Linux::new(params, 1000))
    }

    fn linux(cc: CongestionControl) -> AgentHarness<TcpSender<Linux>> {
        sender(TcpOptions {
            cc: Some(cc),
            ..Default::default()
        })
    }

    #[test]
    fn linux_opens_with_ten_packets_and_one_second_rto() {
        let mut h = linux(CongestionControl::Cubic);
        let first = seqs(&h.sent);
        assert_eq!(first, (0..10).collect::<Vec<_>>(), "IW 10 (RFC 6928, TCP_INIT_CWND)");
        assert_eq!(h.timers[0].0, 1_000_000_000, "TCP_TIMEOUT_INIT 1 s");
        // Slow start: each ACK of two packets opens two (tcp_slow_start() counts packets acked).
        assert_eq!(h.ack(2), vec![10, 11, 12, 13]);
        assert_eq!(h.agent.core.cwnd, 12.0);
    }

    #[test]
    fn linux_recovery_starts_at_three_sacked_and_reduces_by_the_module() {
        for (cc, ssthresh) in [(CongestionControl::Cubic, 14.0), (CongestionControl::Reno, 10.0)] {
            let mut h = linux(cc);
            h.ack(10); // cwnd 20: packets 10..30 out
            assert_eq!(h.agent.core.cwnd, 20.0);
            // Packet 10 lost. Two SACKed packets: no recovery, but each makes room for new data
            // (Linux's in-flight count leaves SACKed packets out).
            assert_eq!(h.sack(10, &[(11, 12)]), vec![30]);
            assert_eq!(h.sack(10, &[(11, 13)]), vec![31]);
            // The third: recovery, ssthresh = 20·717/1024 = 14 (cubic) or 20/2 (reno).
            let sent = h.sack(10, &[(11, 14)]);
            assert_eq!(sent[0], 10);
            assert!(h.agent.core.in_recovery);
            assert_eq!(h.agent.core.ssthresh, ssthresh, "{cc:?}");
            // A full ACK ends recovery with cwnd = ssthresh.
            let high = h.agent.core.snd_max;
            h.ack(high);
            assert!(!h.agent.core.in_recovery && h.agent.core.cwnd >= ssthresh && h.agent.core.cwnd <= ssthresh + 1.0);
        }
    }

    #[test]
    fn linux_recovery_sends_by_prr() {
        let mut h = linux(CongestionControl::Cubic);
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
            assert!(h.agent.core.in_recovery && h.agent.core.ssthresh == 14.0);
            if delivered == 1 {
                assert_eq!(now[0], 10, "the fast retransmission first");
            }
            // In flight stays above ssthresh: RFC 6937's proportional part,
            // ⌈prr_delivered · ssthresh / RecoverFS⌉ sent in all.
            let in_flight = h.agent.recovery.board.in_flight();
            assert!(in_flight >= 14, "{in_flight}");
            assert_eq!(out, (delivered * 14).div_ceil(20), "after {delivered} delivered");
            assert_eq!(
                (h.agent.recovery.prr.delivered, h.agent.recovery.prr.out),
                (delivered, out)
            );
        }
    }

    const MS: Time = 1_000_000;

    /// A linux sender with `window` packets of receiver window: 10 packets out at 0, the first
    /// `acked` acknowledged 1 ms later (SRTT 1 ms, RTO 201 ms); cwnd 10 + acked.
    fn linux_after_first_ack(window: u64, acked: u64) -> AgentHarness<TcpSender<Linux>> {
        let mut h = sender(TcpOptions {
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
        assert_eq!(h.agent.recovery.xmit_timer, XmitTimer::LossProbe);
        let srtt = h.agent.recovery.rtt.srtt_and_rttvar().unwrap().0;
        assert_eq!(srtt, 0.001);
        assert_eq!(
            h.agent.core.retransmit_timer.deadline(),
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
        assert_eq!(h.agent.core.snd_max, 30);
        assert_eq!(h.fire_xmit(), vec![30]);
        assert_eq!(h.agent.recovery.xmit_timer, XmitTimer::Retransmit);
        let sent = h.sack(10, &[(30, 31)]);
        assert!(h.agent.core.in_recovery);
        assert_eq!(sent[0], 10, "the first lost packet first");
        assert_eq!(
            (h.agent.core.stats.timeouts, h.agent.core.stats.fast_retransmits),
            (0, 1)
        );
        // With no new data to send (receiver window 20 full), the probe resends the last packet.
        let mut h = linux_after_first_ack(20, 10);
        assert_eq!(h.agent.core.snd_max, 30);
        assert_eq!(h.fire_xmit(), vec![29]);
        assert_eq!(h.agent.core.stats.retransmitted_packets, 1);
        assert!(h
            .agent
            .recovery
            .probe
            .is_some_and(|p| p.retransmitted && p.high_seq == 30));
        let sent = h.sack(10, &[(29, 30)]);
        assert_eq!((sent[0], h.agent.core.stats.timeouts), (10, 0));
    }

    #[test]
    fn linux_sends_one_probe_per_tail_loss_episode() {
        let mut h = linux_after_first_ack(2000, 10);
        assert_eq!(h.fire_xmit(), vec![30]);
        // An ACK below the probe's high_seq: the probe is still out. The timer is a probe's
        // again (nothing SACKed or lost), but when it fires no second probe goes: the RTO does.
        let sent = h.ack(12);
        assert!(!sent.is_empty() && h.agent.recovery.probe.is_some());
        assert_eq!(h.agent.recovery.xmit_timer, XmitTimer::LossProbe);
        assert!(h.fire_xmit().is_empty());
        assert_eq!(h.agent.recovery.xmit_timer, XmitTimer::Retransmit);
        assert_eq!(h.agent.core.stats.timeouts, 0);
        // The probe's new data acknowledged: the episode is over and a new probe may go.
        let high = h.agent.core.snd_max;
        h.ack(high);
        assert!(h.agent.recovery.probe.is_none() && h.agent.recovery.xmit_timer == XmitTimer::LossProbe);
    }

    #[test]
    fn linux_probe_that_repaired_a_loss_reduces_the_window() {
        // RFC 8985 §7.4.2: the resent last packet acknowledged with later data (no D-SACK):
        // a loss was repaired, so the window is reduced once (cwnd = ssthresh, reno halves).
        let mut h = sender(TcpOptions {
            cc: Some(CongestionControl::Reno),
            window: Some(20),
            ..Default::default()
        });
        h.sent.clear();
        h.ack(10);
        assert_eq!(h.fire_xmit(), vec![29]);
        let cwnd = h.agent.core.cwnd;
        h.ack(30); // the probe repaired 29: the ACK reaches high_seq, not beyond
        assert!(h.agent.recovery.probe.is_some());
        let high = h.agent.core.snd_max;
        h.ack(high);
        assert!(h.agent.recovery.probe.is_none());
        assert_eq!(h.agent.core.ssthresh, (cwnd / 2.0).floor());
        // Both the original and the probe arrived: a pure duplicate ACK ends the episode, no reduction.
        let mut h = linux_after_first_ack(20, 10);
        assert_eq!(h.fire_xmit(), vec![29]);
        let ssthresh = h.agent.core.ssthresh;
        h.ack(30);
        assert!(h.agent.recovery.probe.is_some());
        h.ack(30);
        assert!(h.agent.recovery.probe.is_none());
        assert_eq!(h.agent.core.ssthresh, ssthresh);
    }

    #[test]
    fn linux_reordering_timer_marks_the_loss_rack_rtt_plus_reo_wnd_after_its_send() {
        // Packet 10 (sent at 1 ms) lost; 11 SACKed at 2 ms: one SACKed packet, so the window is
        // min RTT / 4 = 0.25 ms and RACK.rtt is 11's, 1 ms (RFC 8985 §6.2 step 4-5). The timer
        // is due at 10's send + RACK.rtt + reo_wnd, plus TCP_TIMEOUT_MIN.
        let mut h = linux_after_first_ack(2000, 10);
        let sent_10 = h.now;
        assert!(!h.sack(10, &[(11, 12)]).is_empty());
        assert!(!h.agent.core.in_recovery);
        assert_eq!(h.agent.recovery.xmit_timer, XmitTimer::ReorderTimeout);
        let due = sent_10 + MS + MS / 4 + from_secs(LINUX_TIMEOUT_MIN);
        assert_eq!(h.agent.core.retransmit_timer.deadline(), Some(due));
        // It fires: 10 is lost, recovery starts with its retransmission; no RTO.
        assert_eq!(h.fire_xmit()[0], 10);
        assert!(h.agent.core.in_recovery);
        assert_eq!(
            (h.agent.core.stats.timeouts, h.agent.core.stats.fast_retransmits),
            (0, 1)
        );
        assert_eq!(h.agent.recovery.xmit_timer, XmitTimer::Retransmit);
    }
}
