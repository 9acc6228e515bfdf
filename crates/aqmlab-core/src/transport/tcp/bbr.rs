//! BBR v1 as Linux 6.1 runs it (net/ipv4/tcp_bbr.c; Cardwell et al., "BBR: Congestion-Based
//! Congestion Control", ACM Queue 14(5), 2016), in packets and exact seconds. The module
//! sets cwnd and the pacing rate itself on every ACK (`cong_control` = bbr_main()) from a
//! model of the path:
//!
//! - the bottleneck bandwidth: the largest delivery rate ([`RateSample`], tcp_rate.c) over
//!   the last 10 packet-timed rounds (`bbr_bw_rtts`, a windowed max filter as
//!   lib/win_minmax.c), application-limited samples only when they raise it
//!   (bbr_update_bw());
//! - min_rtt: the least RTT over 10 s (bbr_update_min_rtt()); when it has not been
//!   renewed for 10 s, PROBE_RTT holds cwnd at 4 packets for 200 ms and one round;
//! - STARTUP paces at 2885/1000 (2/ln 2) of the estimate until 3 rounds in a row grew it by
//!   less than 25 % (bbr_check_full_bw_reached()); DRAIN paces at 1000/2885 until the
//!   packets in flight fall to the BDP (bbr_check_drain()); PROBE_BW cycles the pacing gain
//!   through 5/4, 3/4 and six phases of 1, each one min_rtt long (the 5/4 phase until
//!   in flight reaches 5/4 BDP or a loss, the 3/4 one until it falls to the BDP), from a
//!   random phase other than 3/4 (bbr_reset_probe_bw_mode(), drawn from the flow's seeded
//!   stream);
//! - pacing rate = gain × bandwidth × (1 − 1 %) (`bbr_pacing_margin_percent`), never lowered
//!   before STARTUP filled the pipe (bbr_set_pacing_rate());
//! - cwnd = cwnd_gain (2, STARTUP and DRAIN 2885/1000) × BDP + the ACK aggregation
//!   estimate + 3 send quanta (bbr_quantization_budget()), rounded up to even; reached by
//!   slow start (+ packets acked), cut at once only after STARTUP (bbr_set_cwnd());
//! - loss recovery: the first round conserves packets (cwnd = in flight + acked), then
//!   grows by the packets acked; leaving recovery restores the cwnd saved when it began
//!   (bbr_set_cwnd_to_recover_or_restore(), bbr_save_cwnd());
//! - the long-term ("policer") estimate: two 4–16 round intervals with ≥ 20 % loss and
//!   rates within 1/8 (or 4 kbit/s) of each other: pace at their mean for 48 rounds
//!   (bbr_lt_bw_sampling()).
//!
//! Linux counts gains in 1/256 (`BBR_UNIT`) and rates in packets/µs << 24: the gains here
//! are Linux's integers over 256, rates packets per second.

use super::cc::{CaState, Connection};
use super::rate::RateSample;
use crate::rng::Rng;
use rand::Rng as _;

/// Gains in Linux's units of 1/256 (`BBR_SCALE` 8).
const UNIT: f64 = 256.0;
/// `bbr_high_gain` = BBR_UNIT·2885/1000 + 1 = 739 (2.887) and `bbr_drain_gain` = BBR_UNIT·1000/2885 = 88.
const HIGH_GAIN: f64 = 739.0 / UNIT;
const DRAIN_GAIN: f64 = 88.0 / UNIT;
/// `bbr_cwnd_gain` = 2.
const CWND_GAIN: f64 = 2.0;
/// `bbr_pacing_gain[]`: the PROBE_BW cycle (CYCLE_LEN 8).
pub const PACING_GAIN_CYCLE: [f64; 8] = [320.0 / UNIT, 192.0 / UNIT, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
/// `bbr_cycle_rand`: the first phase is drawn from the 7 after the 3/4 one.
const CYCLE_RAND: u32 = 7;
/// `bbr_pacing_margin_percent` 1.
const PACING_MARGIN: f64 = 0.01;
/// `bbr_bw_rtts` = CYCLE_LEN + 2 rounds of the bandwidth filter.
const BW_RTTS: u64 = 10;
/// `bbr_min_rtt_win_sec` 10 and `bbr_probe_rtt_mode_ms` 200.
const MIN_RTT_WINDOW: f64 = 10.0;
const PROBE_RTT_TIME: f64 = 0.2;
/// `bbr_cwnd_min_target` 4.
pub const CWND_MIN_TARGET: u64 = 4;
/// `bbr_full_bw_thresh` 5/4 and `bbr_full_bw_cnt` 3.
const FULL_BW_THRESH: f64 = 320.0 / UNIT;
const FULL_BW_CNT: u32 = 3;
/// TCP_INIT_CWND: the BDP before any RTT sample (bbr_bdp()).
const INIT_CWND: u64 = 10;
/// TCP_INFINITE_SSTHRESH: BBR's ssthresh until DRAIN (bbr_init()).
pub const INFINITE_SSTHRESH: u64 = 0x7fff_ffff;
/// bbr_tso_segs_goal(): `sk_pacing_shift` 10 (a send quantum is ~1 ms at the pacing rate),
/// at most GSO_MAX_SIZE bytes and 127 packets; at least 2 packets from `bbr_min_tso_rate`
/// 1.2 Mbit/s on, else 1.
const PACING_SHIFT: f64 = 1024.0;
const GSO_MAX_BYTES: f64 = 65536.0;
const MAX_TSO_SEGS: u64 = 127;
const MIN_TSO_RATE: f64 = 1_200_000.0 / 8.0;
/// ACK aggregation (bbr_update_ack_aggregation()): `bbr_extra_acked_gain` 1, a window of 5
/// rounds per half, the epoch reset after 2^20 packets, at most 100 ms of bandwidth.
const EXTRA_ACKED_WIN_RTTS: u32 = 5;
const ACK_EPOCH_RESET: u64 = 1 << 20;
const EXTRA_ACKED_MAX_TIME: f64 = 0.1;
/// The long-term estimate: `bbr_lt_intvl_min_rtts` 4, `bbr_lt_loss_thresh` 50/256 (20 %),
/// `bbr_lt_bw_ratio` 1/8, `bbr_lt_bw_diff` 4 kbit/s in bytes/s, `bbr_lt_bw_max_rtts` 48.
const LT_INTVL_MIN_RTTS: u32 = 4;
const LT_LOSS_THRESH: f64 = 50.0 / UNIT;
const LT_BW_RATIO: f64 = 1.0 / 8.0;
const LT_BW_DIFF: f64 = 4000.0 / 8.0;
const LT_BW_MAX_RTTS: u32 = 48;
/// The long-term interval's clock is in milliseconds (`lt_last_stamp`): shorter is no sample.
const LT_MIN_INTERVAL: f64 = 0.001;

/// `enum bbr_mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

/// A windowed running maximum over `BW_RTTS` rounds: the best, second and third best samples
/// of the window's sub-windows (Kathleen Nichols' algorithm, lib/win_minmax.c).
#[derive(Clone, Copy, Debug, Default)]
struct MaxFilter {
    /// (round, value), best first.
    s: [(u64, f64); 3],
}

impl MaxFilter {
    fn get(&self) -> f64 {
        self.s[0].1
    }

    fn reset(&mut self, t: u64, v: f64) -> f64 {
        self.s = [(t, v); 3];
        v
    }

    /// minmax_running_max().
    fn update(&mut self, win: u64, t: u64, v: f64) -> f64 {
        let val = (t, v);
        // A new maximum, or the whole window expired: start again from this sample.
        if v >= self.s[0].1 || t - self.s[2].0 > win {
            return self.reset(t, v);
        }
        if v >= self.s[1].1 {
            self.s[1] = val;
            self.s[2] = val;
        } else if v >= self.s[2].1 {
            self.s[2] = val;
        }
        // minmax_subwin_update(): age the best out once it is a window old; keep the second
        // and third best from distinct quarters and halves of the window.
        let dt = t - self.s[0].0;
        if dt > win {
            self.s = [self.s[1], self.s[2], val];
            if t - self.s[0].0 > win {
                self.s = [self.s[1], self.s[2], val];
            }
        } else if self.s[1].0 == self.s[0].0 && dt > win / 4 {
            self.s[1] = val;
            self.s[2] = val;
        } else if self.s[2].0 == self.s[1].0 && dt > win / 2 {
            self.s[2] = val;
        }
        self.s[0].1
    }
}

/// The long-term (policer) estimate's state (`lt_*` of `struct bbr`).
#[derive(Clone, Copy, Debug, Default)]
struct LongTerm {
    is_sampling: bool,
    use_bw: bool,
    /// Packets per second (0: none).
    bw: f64,
    rtt_cnt: u32,
    last_delivered: u64,
    last_lost: u64,
    last_stamp: f64,
}

/// `struct bbr`, in packets and seconds.
#[derive(Clone, Debug)]
pub struct Bbr {
    pub mode: Mode,
    /// Delivery rate filter, packets/s.
    bw: MaxFilter,
    /// Packet-timed rounds so far and the delivered count that ends this one.
    pub rtt_cnt: u64,
    next_rtt_delivered: u64,
    round_start: bool,
    /// None: no RTT sample yet (`min_rtt_us` ~0U).
    pub min_rtt: Option<f64>,
    min_rtt_stamp: f64,
    /// When PROBE_RTT may end (None: not yet at 4 packets).
    probe_rtt_done: Option<f64>,
    probe_rtt_round_done: bool,
    packet_conservation: bool,
    prev_ca_state: CaState,
    /// cwnd saved on entering recovery or PROBE_RTT.
    prior_cwnd: u64,
    pub pacing_gain: f64,
    pub cwnd_gain: f64,
    pub full_bw_reached: bool,
    full_bw: f64,
    full_bw_cnt: u32,
    pub cycle_idx: usize,
    /// When the current gain-cycle phase began (`cycle_mstamp`, a delivery time).
    cycle_stamp: f64,
    has_seen_rtt: bool,
    /// The pacing rate, bytes per second (`sk_pacing_rate`).
    pub pacing_rate: f64,
    /// `snd_ssthresh` as BBR sets it: the BDP when DRAIN begins.
    pub ssthresh: u64,
    lt: LongTerm,
    ack_epoch_stamp: f64,
    ack_epoch_acked: u64,
    extra_acked: [u64; 2],
    extra_acked_win_rtts: u32,
    extra_acked_win_idx: usize,
}

impl Bbr {
    /// bbr_init() at `now`: STARTUP, no bandwidth, no RTT.
    pub fn new(now: f64) -> Self {
        Bbr {
            mode: Mode::Startup,
            bw: MaxFilter::default(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            round_start: false,
            min_rtt: None,
            min_rtt_stamp: now,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            packet_conservation: false,
            prev_ca_state: CaState::Open,
            prior_cwnd: 0,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            full_bw_reached: false,
            full_bw: 0.0,
            full_bw_cnt: 0,
            cycle_idx: 0,
            cycle_stamp: 0.0,
            has_seen_rtt: false,
            pacing_rate: 0.0,
            ssthresh: INFINITE_SSTHRESH,
            lt: LongTerm {
                last_stamp: now,
                ..LongTerm::default()
            },
            ack_epoch_stamp: now,
            ack_epoch_acked: 0,
            extra_acked: [0; 2],
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
        }
    }

    /// bbr_max_bw(): the filter's bandwidth, packets/s.
    pub fn max_bw(&self) -> f64 {
        self.bw.get()
    }

    /// bbr_bw(): the long-term estimate while policed, else the filter's.
    pub fn bw(&self) -> f64 {
        if self.lt.use_bw {
            self.lt.bw
        } else {
            self.max_bw()
        }
    }

    /// bbr_rate_bytes_per_sec(): a rate in packets/s times `gain`, less the pacing margin, in bytes/s.
    fn rate_bytes_per_sec(rate: f64, gain: f64, mss: f64) -> f64 {
        rate * mss * gain * (1.0 - PACING_MARGIN)
    }

    /// bbr_tso_segs_goal(): the send quantum, packets.
    fn tso_segs_goal(&self, mss: f64) -> u64 {
        let bytes = (self.pacing_rate / PACING_SHIFT).min(GSO_MAX_BYTES);
        let min_segs = if self.pacing_rate < MIN_TSO_RATE { 1 } else { 2 };
        ((bytes / mss) as u64).max(min_segs).min(MAX_TSO_SEGS)
    }

    /// bbr_bdp(): ⌈bw · min_rtt · gain⌉, or the initial window before any RTT sample.
    fn bdp(&self, bw: f64, gain: f64) -> u64 {
        match self.min_rtt {
            None => INIT_CWND,
            Some(min_rtt) => (bw * min_rtt * gain).ceil() as u64,
        }
    }

    /// bbr_quantization_budget(): 3 send quanta more (one in the qdisc, one in TSO, one at the
    /// receiver), rounded up to even for delayed ACKs; 2 more in PROBE_BW's 5/4 phase.
    fn quantization_budget(&self, cwnd: u64, mss: f64) -> u64 {
        let mut cwnd = cwnd + 3 * self.tso_segs_goal(mss);
        cwnd = (cwnd + 1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            cwnd += 2;
        }
        cwnd
    }

    /// bbr_inflight(): the in-flight target for `gain`.
    pub fn inflight(&self, bw: f64, gain: f64, mss: f64) -> u64 {
        self.quantization_budget(self.bdp(bw, gain), mss)
    }

    /// bbr_packets_in_net_at_edt(): what will still be in the network when the next packet
    /// departs, counting that packet when the gain is raising in flight.
    fn packets_in_net_at_edt(&self, in_flight: u64, c: &Connection) -> u64 {
        let wait = (c.next_departure - c.now).max(0.0);
        let delivered_meanwhile = (self.bw() * wait) as u64;
        let mut at_edt = in_flight;
        if self.pacing_gain > 1.0 {
            at_edt += self.tso_segs_goal(c.mss);
        }
        at_edt.saturating_sub(delivered_meanwhile)
    }

    /// bbr_save_cwnd(): the last good cwnd, kept across a recovery or PROBE_RTT that cut it.
    fn save_cwnd(&mut self, cwnd: u64) {
        if self.prev_ca_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(cwnd);
        }
    }

    /// bbr_ssthresh(): entering recovery (or a timeout) saves cwnd; ssthresh stays BBR's.
    pub fn on_ssthresh(&mut self, cwnd: u64) -> u64 {
        self.save_cwnd(cwnd);
        self.ssthresh
    }

    /// bbr_set_state(TCP_CA_Loss) on a retransmission timeout: the round ends, full-bandwidth
    /// detection restarts, the long-term estimator sees one loss.
    pub fn enter_loss(&mut self, c: &Connection, rng: &mut Rng) {
        self.prev_ca_state = CaState::Loss;
        self.full_bw = 0.0;
        self.round_start = true;
        let rs = RateSample {
            losses: 1,
            ..RateSample::default()
        };
        self.lt_bw_sampling(&rs, c, rng);
    }

    /// bbr_main(): the model from the ACK's sample, then the pacing rate and cwnd. Returns the
    /// new cwnd, and whether the samples now in flight are to be application-limited
    /// (PROBE_RTT ignores its low-rate samples).
    pub fn on_ack(&mut self, rs: &RateSample, c: &Connection, rng: &mut Rng) -> (u64, bool) {
        let mut cwnd = c.cwnd;
        self.update_bw(rs, c, rng);
        self.update_ack_aggregation(rs, c);
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(rs, c) {
            self.advance_cycle_phase(c);
        }
        self.check_full_bw_reached(rs);
        self.check_drain(c, rng);
        let app_limited = self.update_min_rtt(rs, c, &mut cwnd, rng);
        self.update_gains();
        let bw = self.bw();
        self.set_pacing_rate(bw, self.pacing_gain, c);
        let cwnd = self.set_cwnd(rs, c, cwnd, bw);
        (cwnd, app_limited)
    }

    /// bbr_update_bw(): a new round when the sampled packet was sent after the last round's
    /// end; the sample into the max filter unless application-limited below it.
    fn update_bw(&mut self, rs: &RateSample, c: &Connection, rng: &mut Rng) {
        self.round_start = false;
        let Some(bw) = rs.rate() else { return };
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = c.delivered;
            self.rtt_cnt += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        self.lt_bw_sampling(rs, c, rng);
        if !rs.app_limited || bw >= self.max_bw() {
            self.bw.update(BW_RTTS, self.rtt_cnt, bw);
        }
    }

    /// bbr_update_ack_aggregation(): the most packets ACKed beyond bw × the epoch, the max of
    /// two windows of 5 rounds, at most cwnd.
    fn update_ack_aggregation(&mut self, rs: &RateSample, c: &Connection) {
        if rs.acked_sacked == 0 || rs.interval.is_none() {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(0x1f);
            if self.extra_acked_win_rtts >= EXTRA_ACKED_WIN_RTTS {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        let epoch = c.delivered_at - self.ack_epoch_stamp;
        let mut expected = (self.bw() * epoch) as u64;
        if self.ack_epoch_acked <= expected || self.ack_epoch_acked + rs.acked_sacked >= ACK_EPOCH_RESET {
            self.ack_epoch_acked = 0;
            self.ack_epoch_stamp = c.delivered_at;
            expected = 0;
        }
        self.ack_epoch_acked = (self.ack_epoch_acked + rs.acked_sacked).min(ACK_EPOCH_RESET - 1);
        let extra = (self.ack_epoch_acked - expected).min(c.cwnd);
        let slot = &mut self.extra_acked[self.extra_acked_win_idx];
        *slot = (*slot).max(extra);
    }

    /// bbr_ack_aggregation_cwnd(): the aggregation allowance, once the pipe is full.
    fn ack_aggregation_cwnd(&self) -> u64 {
        if !self.full_bw_reached {
            return 0;
        }
        let max_aggr = (self.bw() * EXTRA_ACKED_MAX_TIME) as u64;
        self.extra_acked[0].max(self.extra_acked[1]).min(max_aggr)
    }

    /// bbr_is_next_cycle_phase(): a phase lasts one min_rtt of delivery time; 5/4 also until
    /// in flight reaches its target or a loss, 3/4 at most until in flight is down to the BDP.
    fn is_next_cycle_phase(&self, rs: &RateSample, c: &Connection) -> bool {
        let full_length = self.min_rtt.is_some_and(|m| c.delivered_at - self.cycle_stamp > m);
        if self.pacing_gain == 1.0 {
            return full_length;
        }
        let in_flight = self.packets_in_net_at_edt(rs.prior_in_flight, c);
        let bw = self.max_bw();
        if self.pacing_gain > 1.0 {
            return full_length && (rs.losses > 0 || in_flight >= self.inflight(bw, self.pacing_gain, c.mss));
        }
        full_length || in_flight <= self.inflight(bw, 1.0, c.mss)
    }

    /// bbr_advance_cycle_phase().
    fn advance_cycle_phase(&mut self, c: &Connection) {
        self.cycle_idx = (self.cycle_idx + 1) % PACING_GAIN_CYCLE.len();
        self.cycle_stamp = c.delivered_at;
    }

    /// bbr_reset_probe_bw_mode(): PROBE_BW from a random phase, never the 3/4 one.
    fn reset_probe_bw_mode(&mut self, c: &Connection, rng: &mut Rng) {
        self.mode = Mode::ProbeBw;
        self.cycle_idx = PACING_GAIN_CYCLE.len() - 1 - rng.gen_range(0..CYCLE_RAND) as usize;
        self.advance_cycle_phase(c);
    }

    /// bbr_reset_mode(): back to STARTUP unless the pipe was filled.
    fn reset_mode(&mut self, c: &Connection, rng: &mut Rng) {
        if self.full_bw_reached {
            self.reset_probe_bw_mode(c, rng);
        } else {
            self.mode = Mode::Startup;
        }
    }

    /// bbr_check_full_bw_reached(): per round not application-limited, bandwidth growth under
    /// 25 % three rounds in a row means STARTUP filled the pipe.
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.app_limited {
            return;
        }
        if self.max_bw() >= self.full_bw * FULL_BW_THRESH {
            self.full_bw = self.max_bw();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_CNT;
    }

    /// bbr_check_drain(): STARTUP done, DRAIN (ssthresh = the BDP target); DRAIN done once
    /// in flight is down to the BDP target.
    fn check_drain(&mut self, c: &Connection, rng: &mut Rng) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            self.ssthresh = self.inflight(self.max_bw(), 1.0, c.mss);
        }
        if self.mode == Mode::Drain
            && self.packets_in_net_at_edt(c.in_flight, c) <= self.inflight(self.max_bw(), 1.0, c.mss)
        {
            self.reset_probe_bw_mode(c, rng);
        }
    }

    /// bbr_check_probe_rtt_done(): 200 ms and a round at 4 packets are over: restore cwnd.
    fn check_probe_rtt_done(&mut self, c: &Connection, cwnd: &mut u64, rng: &mut Rng) {
        if !self.probe_rtt_done.is_some_and(|done| c.now > done) {
            return;
        }
        self.min_rtt_stamp = c.now;
        *cwnd = (*cwnd).max(self.prior_cwnd);
        self.reset_mode(c, rng);
    }

    /// bbr_update_min_rtt(): the 10 s min filter; PROBE_RTT when it expires. Returns whether
    /// the samples in flight are to be application-limited (in PROBE_RTT).
    fn update_min_rtt(&mut self, rs: &RateSample, c: &Connection, cwnd: &mut u64, rng: &mut Rng) -> bool {
        let expired = c.now > self.min_rtt_stamp + MIN_RTT_WINDOW;
        // Linux also refuses a delayed ACK's sample to renew an expired filter
        // (FLAG_ACK_MAYBE_DELAYED, a lone runt packet's ACK): no runts here.
        if let Some(rtt) = rs.rtt.filter(|&rtt| self.min_rtt.is_none_or(|m| rtt <= m) || expired) {
            self.min_rtt = Some(rtt);
            self.min_rtt_stamp = c.now;
        }
        if expired && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd(*cwnd);
            self.probe_rtt_done = None;
        }
        if self.mode != Mode::ProbeRtt {
            return false;
        }
        if self.probe_rtt_done.is_none() && c.in_flight <= CWND_MIN_TARGET {
            self.probe_rtt_done = Some(c.now + PROBE_RTT_TIME);
            self.probe_rtt_round_done = false;
            self.next_rtt_delivered = c.delivered;
        } else if self.probe_rtt_done.is_some() {
            self.probe_rtt_round_done |= self.round_start;
            if self.probe_rtt_round_done {
                self.check_probe_rtt_done(c, cwnd, rng);
            }
        }
        true
    }

    /// bbr_update_gains().
    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (HIGH_GAIN, HIGH_GAIN),
            Mode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            Mode::ProbeBw if self.lt.use_bw => (1.0, CWND_GAIN),
            Mode::ProbeBw => (PACING_GAIN_CYCLE[self.cycle_idx], CWND_GAIN),
            Mode::ProbeRtt => (1.0, 1.0),
        };
    }

    /// bbr_set_pacing_rate(): gain × bw less the margin; from the first RTT sample until then
    /// high_gain × cwnd / SRTT (bbr_init_pacing_rate_from_rtt()); not lowered in STARTUP.
    fn set_pacing_rate(&mut self, bw: f64, gain: f64, c: &Connection) {
        if let (false, Some(srtt)) = (self.has_seen_rtt, c.srtt) {
            self.has_seen_rtt = true;
            self.pacing_rate = Self::rate_bytes_per_sec(c.cwnd as f64 / srtt, HIGH_GAIN, c.mss);
        }
        let rate = Self::rate_bytes_per_sec(bw, gain, c.mss);
        if self.full_bw_reached || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    /// bbr_set_cwnd() with bbr_set_cwnd_to_recover_or_restore().
    fn set_cwnd(&mut self, rs: &RateSample, c: &Connection, cwnd: u64, bw: f64) -> u64 {
        let acked = rs.acked_sacked;
        let mut cwnd = cwnd;
        if acked > 0 && !self.recover_or_restore(rs, c, &mut cwnd) {
            let target = self.quantization_budget(self.bdp(bw, self.cwnd_gain) + self.ack_aggregation_cwnd(), c.mss);
            if self.full_bw_reached {
                cwnd = (cwnd + acked).min(target);
            } else if cwnd < target || c.delivered < INIT_CWND {
                cwnd += acked;
            }
            cwnd = cwnd.max(CWND_MIN_TARGET);
        }
        cwnd = cwnd.min(c.clamp);
        if self.mode == Mode::ProbeRtt {
            cwnd = cwnd.min(CWND_MIN_TARGET);
        }
        cwnd
    }

    /// bbr_set_cwnd_to_recover_or_restore(): losses come off cwnd; recovery's first round
    /// conserves packets; leaving recovery (or a timeout's loss state) restores the saved cwnd.
    /// Returns whether packet conservation set `cwnd`.
    fn recover_or_restore(&mut self, rs: &RateSample, c: &Connection, cwnd: &mut u64) -> bool {
        let acked = rs.acked_sacked;
        if rs.losses > 0 {
            *cwnd = cwnd.saturating_sub(rs.losses).max(1);
        }
        if c.state == CaState::Recovery && self.prev_ca_state != CaState::Recovery {
            self.packet_conservation = true;
            self.next_rtt_delivered = c.delivered;
            *cwnd = c.in_flight + acked;
        } else if self.prev_ca_state >= CaState::Recovery && c.state < CaState::Recovery {
            *cwnd = (*cwnd).max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = c.state;
        if self.packet_conservation {
            *cwnd = (*cwnd).max(c.in_flight + acked);
        }
        self.packet_conservation
    }

    /// bbr_lt_bw_sampling(): after the first loss, intervals of 4–16 rounds ending on a loss;
    /// one with ≥ 20 % loss gives a rate, and two consistent ones mean a policer.
    fn lt_bw_sampling(&mut self, rs: &RateSample, c: &Connection, rng: &mut Rng) {
        if self.lt.use_bw {
            if self.mode == Mode::ProbeBw && self.round_start {
                self.lt.rtt_cnt += 1;
                if self.lt.rtt_cnt >= LT_BW_MAX_RTTS {
                    self.reset_lt_bw_sampling(c);
                    self.reset_probe_bw_mode(c, rng);
                }
            }
            return;
        }
        if !self.lt.is_sampling {
            if rs.losses == 0 {
                return;
            }
            self.reset_lt_interval(c);
            self.lt.is_sampling = true;
        }
        if rs.app_limited {
            self.reset_lt_bw_sampling(c);
            return;
        }
        if self.round_start {
            self.lt.rtt_cnt += 1;
        }
        if self.lt.rtt_cnt < LT_INTVL_MIN_RTTS {
            return;
        }
        if self.lt.rtt_cnt > 4 * LT_INTVL_MIN_RTTS {
            self.reset_lt_bw_sampling(c);
            return;
        }
        if rs.losses == 0 {
            return;
        }
        let lost = c.lost - self.lt.last_lost;
        let delivered = c.delivered - self.lt.last_delivered;
        if delivered == 0 || (lost as f64) < LT_LOSS_THRESH * delivered as f64 {
            return;
        }
        let t = c.delivered_at - self.lt.last_stamp;
        if t < LT_MIN_INTERVAL {
            return;
        }
        self.lt_bw_interval_done(delivered as f64 / t, c);
    }

    /// bbr_lt_bw_interval_done(): a rate within 1/8 or 4 kbit/s of the last interval's: policed,
    /// pace at their mean.
    fn lt_bw_interval_done(&mut self, bw: f64, c: &Connection) {
        if self.lt.bw > 0.0 {
            let diff = (bw - self.lt.bw).abs();
            if diff <= LT_BW_RATIO * self.lt.bw || Self::rate_bytes_per_sec(diff, 1.0, c.mss) <= LT_BW_DIFF {
                self.lt.bw = (bw + self.lt.bw) / 2.0;
                self.lt.use_bw = true;
                self.pacing_gain = 1.0;
                self.lt.rtt_cnt = 0;
                return;
            }
        }
        self.lt.bw = bw;
        self.reset_lt_interval(c);
    }

    /// bbr_reset_lt_bw_sampling_interval().
    fn reset_lt_interval(&mut self, c: &Connection) {
        self.lt.last_stamp = c.delivered_at;
        self.lt.last_delivered = c.delivered;
        self.lt.last_lost = c.lost;
        self.lt.rtt_cnt = 0;
    }

    /// bbr_reset_lt_bw_sampling().
    fn reset_lt_bw_sampling(&mut self, c: &Connection) {
        self.lt.bw = 0.0;
        self.lt.use_bw = false;
        self.lt.is_sampling = false;
        self.reset_lt_interval(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::stream;

    const MSS: f64 = 1000.0;

    /// BBR fed by hand: one packet delivered per ACK at `rate` packets/s over a path of RTT
    /// `rtt` (each sample spans the packets delivered in the last RTT), `in_flight` packets
    /// out. No pacing delay (`next_departure` = now).
    struct Path {
        bbr: Bbr,
        rng: Rng,
        now: f64,
        delivered: u64,
        cwnd: u64,
        in_flight: u64,
        app_limited_asked: bool,
    }

    impl Path {
        fn new() -> Self {
            Path {
                bbr: Bbr::new(0.0),
                rng: stream(1, "bbr"),
                now: 0.0,
                delivered: 0,
                cwnd: 10,
                in_flight: 10,
                app_limited_asked: false,
            }
        }

        fn connection(&self) -> Connection {
            Connection {
                now: self.now,
                cwnd: self.cwnd,
                clamp: 100_000,
                in_flight: self.in_flight,
                delivered: self.delivered,
                delivered_at: self.now,
                lost: 0,
                state: CaState::Open,
                srtt: Some(0.1),
                next_departure: self.now,
                mss: MSS,
            }
        }

        /// One ACK `1/rate` s after the last, delivering one packet; returns BBR's cwnd.
        fn ack(&mut self, rate: f64, rtt: f64) -> u64 {
            self.now += 1.0 / rate;
            self.delivered += 1;
            let window = ((rate * rtt) as u64).max(1);
            let prior_delivered = self.delivered.saturating_sub(window);
            let delivered = self.delivered - prior_delivered;
            let rs = RateSample {
                delivered,
                interval: Some(delivered as f64 / rate),
                prior_delivered,
                app_limited: false,
                acked_sacked: 1,
                losses: 0,
                rtt: Some(rtt),
                prior_in_flight: self.in_flight,
            };
            let c = self.connection();
            let (cwnd, app_limited) = self.bbr.on_ack(&rs, &c, &mut self.rng);
            self.cwnd = cwnd;
            self.app_limited_asked = app_limited;
            cwnd
        }

        /// ACKs at `rate` until `until` s.
        fn run(&mut self, rate: f64, rtt: f64, until: f64) {
            while self.now < until {
                self.ack(rate, rtt);
            }
        }
    }

    #[test]
    fn startup_ends_after_three_rounds_without_a_quarter_more_and_drain_at_the_bdp() {
        let mut p = Path::new();
        let rtt = 0.1;
        // The delivery rate doubles per round (STARTUP's 2/ln 2 pacing on an empty path), up
        // to 1000 packets/s, then stays: the plateau's first round sets full_bw, the next
        // three grow less than 25 %.
        let mut rate = 10.0;
        while rate < 1000.0 {
            let round = p.bbr.rtt_cnt;
            while p.bbr.rtt_cnt == round {
                p.ack(rate, rtt);
            }
            rate = (rate * 2.0).min(1000.0);
        }
        assert_eq!(p.bbr.mode, Mode::Startup);
        let plateau = p.bbr.rtt_cnt;
        let mut rounds_to_drain = None;
        p.in_flight = 1000;
        while p.bbr.mode == Mode::Startup {
            p.ack(1000.0, rtt);
            rounds_to_drain = Some(p.bbr.rtt_cnt - plateau);
        }
        // The plateau's first round (max_bw reaches 1000: growth ≥ 25 %), then three rounds.
        assert_eq!(rounds_to_drain, Some(1 + FULL_BW_CNT as u64));
        assert_eq!(p.bbr.mode, Mode::Drain);
        // Linux's 88/256 = 0.344 for 1000/2885 = 0.347.
        assert!((p.bbr.pacing_gain - 88.0 / 256.0).abs() < 1e-12);
        // ssthresh = the BDP target: ⌈1000 × 0.1⌉ + 3 quanta of 2 packets (1 MB/s ≥ 1.2 Mbit/s).
        assert_eq!(p.bbr.ssthresh, 100 + 6);
        // DRAIN holds while in flight exceeds that, and ends on the ACK that finds it there.
        for in_flight in [300, 200, 107] {
            p.in_flight = in_flight;
            p.ack(1000.0, rtt);
            assert_eq!(p.bbr.mode, Mode::Drain, "{in_flight} in flight");
        }
        p.in_flight = 106;
        p.ack(1000.0, rtt);
        assert_eq!(p.bbr.mode, Mode::ProbeBw);
    }

    /// A flow in PROBE_BW on a path of 1000 packets/s and 100 ms.
    fn probing() -> Path {
        let mut p = Path::new();
        p.in_flight = 100;
        while p.bbr.mode != Mode::ProbeBw {
            p.ack(1000.0, 0.1);
        }
        p
    }

    #[test]
    fn pacing_rate_is_gain_times_the_bandwidth_estimate_less_one_percent() {
        let mut p = probing();
        // In flight stays high, so that the 3/4 phase lasts its min_rtt.
        p.in_flight = 1000;
        // A bandwidth sample above the rest takes the filter: 1200 packets/s.
        p.ack(1200.0, 0.1);
        let mut seen = Vec::new();
        // 900 ACKs of 1 ms: 9 rounds, within the filter's 10, and more than the 8 phases of 100 ms.
        for _ in 0..900 {
            p.ack(1000.0, 0.1);
            let bw = p.bbr.max_bw();
            assert!((bw - 1200.0).abs() < 1e-9, "{bw}");
            let gain = PACING_GAIN_CYCLE[p.bbr.cycle_idx];
            let expected = gain * 1200.0 * MSS * 0.99;
            assert!(
                (p.bbr.pacing_rate - expected).abs() < 1e-6,
                "{} vs {expected}",
                p.bbr.pacing_rate
            );
            if !seen.contains(&gain) {
                seen.push(gain);
            }
        }
        // All three gains were checked: 5/4, 3/4 and 1.
        assert_eq!(seen.len(), 3, "{seen:?}");
        // STARTUP's: high_gain × cwnd / SRTT before any bandwidth; here 2.887 × 10 / 0.1 s.
        let mut p = Path::new();
        p.ack(1.0, 0.1);
        assert!((p.bbr.pacing_rate - 739.0 / 256.0 * 100.0 * MSS * 0.99).abs() < 1e-6);
    }

    #[test]
    fn the_gain_cycle_runs_in_order_each_phase_one_min_rtt() {
        let mut p = probing();
        // In flight stays high: 5/4 ends on time (its target is reached), 3/4 never drains
        // early; every phase then lasts one min_rtt (100 ms) of delivery time.
        p.in_flight = 1000;
        let mut phases = vec![(p.bbr.cycle_idx, p.now)];
        while phases.len() < 20 {
            p.ack(1000.0, 0.1);
            if p.bbr.cycle_idx != phases.last().unwrap().0 {
                phases.push((p.bbr.cycle_idx, p.now));
            }
        }
        for w in phases.windows(2) {
            assert_eq!(w[1].0, (w[0].0 + 1) % 8, "{phases:?}");
        }
        // Each full phase: the first ACK more than 100 ms after its start, one ACK = 1 ms.
        for w in phases[1..].windows(2) {
            let length = w[1].1 - w[0].1;
            assert!(length > 0.1 && length <= 0.1 + 0.001 + 1e-9, "{length}");
        }
        let gains: Vec<f64> = phases.iter().map(|&(i, _)| PACING_GAIN_CYCLE[i]).collect();
        let start = gains.iter().position(|&g| g > 1.0).unwrap();
        assert_eq!(gains[start..start + 8], [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]);
        // The first phase is drawn, never the 3/4 one: over many seeds all 7 others occur.
        let mut firsts = std::collections::BTreeSet::new();
        for seed in 0..200 {
            let mut b = Bbr::new(0.0);
            let c = Path::new().connection();
            b.reset_probe_bw_mode(&c, &mut stream(seed, "bbr"));
            firsts.insert(b.cycle_idx);
        }
        assert_eq!(firsts.into_iter().collect::<Vec<_>>(), vec![0, 2, 3, 4, 5, 6, 7]);
    }

    #[test]
    fn probe_rtt_after_ten_seconds_without_a_new_min_rtt_holds_four_packets_200_ms() {
        let mut p = probing();
        let cwnd_before = p.cwnd;
        // min_rtt 100 ms was last seen at most 1 s in; every later sample is 110 ms.
        let stamp = p.now;
        p.run(1000.0, 0.11, stamp + 9.99);
        assert_eq!(p.bbr.mode, Mode::ProbeBw);
        while p.bbr.mode == Mode::ProbeBw {
            p.ack(1000.0, 0.11);
        }
        let entered = p.now - stamp;
        assert!(entered > 10.0 && entered <= 10.001 + 1e-9, "{entered}");
        assert_eq!((p.bbr.mode, p.cwnd), (Mode::ProbeRtt, CWND_MIN_TARGET));
        assert!(p.app_limited_asked, "PROBE_RTT marks its samples application-limited");
        // In flight falls to 4: from then 200 ms and a round.
        p.in_flight = 4;
        p.ack(1000.0, 0.11);
        let start = p.now;
        loop {
            let cwnd = p.ack(1000.0, 0.11);
            if p.bbr.mode != Mode::ProbeRtt {
                break;
            }
            assert_eq!(cwnd, CWND_MIN_TARGET);
        }
        let held = p.now - start;
        assert!((0.2..0.2 + 0.002).contains(&held), "{held}");
        // Back to PROBE_BW with the cwnd saved on entry; min_rtt renewed by the expiry.
        assert_eq!(p.bbr.mode, Mode::ProbeBw);
        assert!(p.cwnd >= cwnd_before, "{} < {cwnd_before}", p.cwnd);
        assert_eq!(p.bbr.min_rtt, Some(0.11));
    }

    #[test]
    fn recovery_conserves_packets_then_restores_the_saved_cwnd() {
        let mut p = probing();
        p.run(1000.0, 0.1, p.now + 1.0);
        let cwnd = p.cwnd;
        // Entering recovery (bbr_ssthresh() saves cwnd), with 50 in flight: cwnd = 50 + 1.
        p.bbr.on_ssthresh(cwnd);
        p.in_flight = 50;
        let c = Connection {
            state: CaState::Recovery,
            ..p.connection()
        };
        let rs = RateSample {
            acked_sacked: 1,
            ..RateSample::default()
        };
        let (conserved, _) = p.bbr.on_ack(&rs, &c, &mut p.rng);
        assert_eq!(conserved, 51);
        // Leaving it: the saved cwnd again.
        let c = Connection {
            cwnd: conserved,
            ..p.connection()
        };
        let (restored, _) = p.bbr.on_ack(&rs, &c, &mut p.rng);
        assert!(restored >= cwnd, "{restored} < {cwnd}");
    }

    #[test]
    fn the_max_filter_forgets_a_sample_ten_rounds_old() {
        let mut f = MaxFilter::default();
        f.update(BW_RTTS, 1, 100.0);
        for t in 2..=11 {
            assert_eq!(f.update(BW_RTTS, t, 50.0), 100.0, "round {t}");
        }
        assert_eq!(f.update(BW_RTTS, 12, 50.0), 50.0);
    }
}
