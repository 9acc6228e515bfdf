//! Linux's congestion control modules, as Linux 6.1 runs them for the `linux`
//! profile: the window in whole packets, grown by `cong_avoid` on ACKs that
//! acknowledge new data while the sender is cwnd-limited (tcp_input.c
//! tcp_cong_control()), cut to `ssthresh()` on loss or ECN.
//!
//! - Reno (tcp_cong.c): tcp_slow_start() adds the packets acked up to ssthresh;
//!   tcp_cong_avoid_ai() adds one packet per cwnd packets acked (`snd_cwnd_cnt`);
//!   ssthresh = max(cwnd/2, 2) (tcp_reno_ssthresh()).
//! - CUBIC (tcp_cubic.c; RFC 9438): after a reduction the window follows
//!   W(t) = C·(t − K)³ + W_max, K = ∛((W_max − cwnd₀)/C), evaluated one minimum
//!   RTT ahead (`t` includes `delay_min`) and reached by one packet per `cnt`
//!   packets acked, cnt = cwnd/(W(t) − cwnd) (bictcp_update()); β = 717/1024
//!   (ssthresh = max(cwnd·β, 2)), C = 410/1024 (`bic_scale` 41 · 10 / 1024 ≈ 0.4);
//!   fast convergence (W_max = cwnd·(1 + β)/2 when the window fell short of the
//!   last W_max); the TCP-friendly estimate, one packet per cwnd·15/8 acked
//!   (`beta_scale` = 8(1024 + β)/3/(1024 − β) = 15: α = 3(1 − β)/(1 + β) of RFC 9438
//!   §4.3), which takes over when it is ahead; growth at most one packet per two acked;
//!   5 % per RTT (cnt ≤ 20) before the first loss; W(t) recomputed only when cwnd
//!   changed or 1/32 s passed.
//! - HyStart (tcp_cubic.c hystart_update(), Ha & Rhee 2008), in slow start from a
//!   window of 16: per round (an RTT's worth of sequence numbers) the ACK train
//!   (ACKs less than 2 ms apart spanning more than half the minimum RTT, plus a cushion
//!   of 4 GSO packets at the pacing rate, at most 1 ms) or a delay increase (the least of
//!   the round's first 8 RTT samples above delay_min + clamp(delay_min/8, 4 ms, 16 ms))
//!   ends slow start: ssthresh = cwnd.
//! - BBR (tcp_bbr.c, [`Bbr`]): the module sets cwnd and the pacing rate itself on every ACK
//!   (`cong_control`), so neither `cong_avoid` nor PRR runs; `ssthresh` only saves cwnd for
//!   the end of recovery (bbr_ssthresh()); it asks for pacing (`SK_PACING_NEEDED`).
//!
//! The interface between the linux sender (`sender/linux.rs`) and a module, as
//! `struct tcp_congestion_ops`: [`LinuxCc`]'s `cong_avoid`, `ssthresh`, `pkts_acked`
//! ([`LinuxCc::on_ack_sample`], with an [`AckSample`]) and `init`/`set_state` ([`LinuxCc::restart`])
//! on the sender's [`Window`]; a module that sets cwnd itself (`cong_control`) reads the
//! [`Connection`] instead, its [`CaState`] included.
//!
//! Times are exact seconds where Linux counts jiffies and microseconds.

use super::bbr::Bbr;
use super::CongestionControl;

/// tcp_cubic.c `beta` 717 of BICTCP_BETA_SCALE 1024.
const BETA: u64 = 717;
const BETA_SCALE: u64 = 1024;
/// C of W(t): `cube_rtt_scale` = `bic_scale` 41 × 10, in units of 1/1024 (0.4004 packets/s³).
const C: f64 = 410.0 / 1024.0;
/// `beta_scale` = 8·(1024 + 717)/3/(1024 − 717) in integers: the Reno estimate gains
/// one packet per cwnd·15/8 packets acked.
const FRIENDLY_SCALE: u64 = 8 * (BETA_SCALE + BETA) / 3 / (BETA_SCALE - BETA);
/// bictcp_update(): W(t) is recomputed when cwnd changed or after HZ/32.
const UPDATE_INTERVAL: f64 = 1.0 / 32.0;
/// bictcp_update(): before the first loss, at least 5 % growth per RTT.
const FIRST_EPOCH_MAX_CNT: u64 = 20;
/// cubictcp_acked(): delay samples within 1 s (HZ) of a reduction are discarded.
const DISCARD_AFTER_REDUCTION: f64 = 1.0;
/// HyStart: `hystart_low_window` 16, `hystart_ack_delta_us` 2000, HYSTART_MIN_SAMPLES 8,
/// HYSTART_DELAY_MIN/MAX 4 and 16 ms.
const HYSTART_LOW_WINDOW: u64 = 16;
const HYSTART_ACK_DELTA: f64 = 0.002;
const HYSTART_MIN_SAMPLES: u32 = 8;
const HYSTART_DELAY_MIN: f64 = 0.004;
const HYSTART_DELAY_MAX: f64 = 0.016;
/// hystart_ack_delay(): 4 GSO packets (`sk_gso_max_size` 64 KiB) at the pacing rate, at most 1 ms.
const HYSTART_GSO_BYTES: f64 = 4.0 * 65536.0;
const HYSTART_MAX_ACK_DELAY: f64 = 0.001;

/// The sender's congestion state as a module that sets cwnd itself tells them apart
/// (`icsk_ca_state`: Open, Disorder and CWR are all below Recovery).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaState {
    Open,
    Recovery,
    Loss,
}

/// What a module that sets cwnd itself (`cong_control`, BBR) reads of the connection on an ACK
/// (`struct tcp_sock`).
#[derive(Clone, Copy, Debug)]
pub struct Connection {
    pub now: f64,
    pub cwnd: u64,
    /// `snd_cwnd_clamp`: the receiver window.
    pub clamp: u64,
    /// tcp_packets_in_flight() after the ACK.
    pub in_flight: u64,
    /// `tp->delivered`, `tp->delivered_mstamp` (seconds) and `tp->lost`.
    pub delivered: u64,
    pub delivered_at: f64,
    pub lost: u64,
    pub state: CaState,
    pub srtt: Option<f64>,
    /// `tcp_wstamp_ns`: the earliest departure of the next packet (seconds).
    pub next_departure: f64,
    /// `mss_cache`: the packet size, bytes.
    pub mss: f64,
}

/// The sender's window as the module sees it, in packets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Window {
    pub cwnd: u64,
    pub ssthresh: u64,
    /// `snd_cwnd_clamp`: the receiver window.
    pub clamp: u64,
}

impl Window {
    /// tcp_in_slow_start().
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// tcp_slow_start(): cwnd grows by the packets acked, up to ssthresh; returns the acked
    /// packets left over for congestion avoidance.
    fn slow_start(&mut self, acked: u64) -> u64 {
        let cwnd = (self.cwnd + acked).min(self.ssthresh);
        let left = acked - (cwnd - self.cwnd);
        self.cwnd = cwnd.min(self.clamp);
        left
    }
}

/// What the sender knows when an ACK brings an RTT sample (cubictcp_acked()'s inputs).
#[derive(Clone, Copy, Debug)]
pub struct AckSample {
    pub now: f64,
    /// The RTT the ACK measured, seconds.
    pub rtt: f64,
    /// The cumulative ACK and the next packet to send (`snd_una`, `snd_nxt`).
    pub snd_una: u64,
    pub snd_nxt: u64,
    /// The pacing rate Linux would set (bytes/s; tcp_update_pacing_rate()), or 0 before an RTT estimate.
    pub pacing_rate: f64,
}

/// A congestion control module and the `snd_cwnd_cnt` its additive increase counts in.
#[derive(Clone, Debug)]
pub struct LinuxCc {
    module: Module,
    /// `snd_cwnd_cnt`: packets acked towards the next increment.
    cwnd_cnt: u64,
}

#[derive(Clone, Debug)]
enum Module {
    Reno,
    Cubic(Box<Cubic>),
    Bbr(Box<Bbr>),
}

impl LinuxCc {
    /// The module at connection start (`init`), `now` seconds.
    pub fn new(cc: CongestionControl, now: f64) -> Self {
        let module = match cc {
            CongestionControl::Reno => Module::Reno,
            CongestionControl::Cubic => Module::Cubic(Box::new(Cubic::new(now, 0))),
            CongestionControl::Bbr => Module::Bbr(Box::new(Bbr::new(now))),
        };
        LinuxCc { module, cwnd_cnt: 0 }
    }

    /// `cong_avoid`: an ACK acknowledged new data while the sender was cwnd-limited;
    /// `acked` packets were delivered (cumulatively or by SACK).
    pub fn cong_avoid(&mut self, w: &mut Window, acked: u64, now: f64) {
        let mut acked = acked;
        if w.in_slow_start() {
            acked = w.slow_start(acked);
            if acked == 0 {
                return;
            }
        }
        let per = match &mut self.module {
            // tcp_reno_cong_avoid(): one packet per window acked.
            Module::Reno => w.cwnd,
            Module::Cubic(c) => c.update(w.cwnd, acked, now),
            // bbr_main() sets cwnd (`cong_control`): tcp_cong_avoid() never runs.
            Module::Bbr(_) => return,
        };
        self.cong_avoid_ai(w, per, acked);
    }

    /// tcp_cong_avoid_ai(): one packet more per `per` packets acked.
    fn cong_avoid_ai(&mut self, w: &mut Window, per: u64, acked: u64) {
        if self.cwnd_cnt >= per {
            self.cwnd_cnt = 0;
            w.cwnd += 1;
        }
        self.cwnd_cnt += acked;
        if self.cwnd_cnt >= per {
            let delta = self.cwnd_cnt / per;
            self.cwnd_cnt -= delta * per;
            w.cwnd += delta;
        }
        w.cwnd = w.cwnd.min(w.clamp);
    }

    /// `ssthresh`: the window after a loss or ECN-echo, from the window `cwnd` before it.
    /// The reduction restarts the additive-increase count (tcp_init_cwnd_reduction()).
    pub fn ssthresh(&mut self, cwnd: u64) -> u64 {
        self.cwnd_cnt = 0;
        match &mut self.module {
            // tcp_reno_ssthresh().
            Module::Reno => (cwnd / 2).max(2),
            Module::Cubic(c) => c.recalc_ssthresh(cwnd),
            Module::Bbr(b) => b.on_ssthresh(cwnd),
        }
    }

    /// `pkts_acked`: an ACK with an RTT sample; may end slow start (HyStart) by lowering
    /// `w.ssthresh` to `w.cwnd`.
    pub fn on_ack_sample(&mut self, w: &mut Window, s: &AckSample) {
        if let Module::Cubic(c) = &mut self.module {
            c.acked(w, s);
        }
    }

    /// `init` at a connection's start, and `set_state(TCP_CA_Loss)` on a retransmission
    /// timeout: CUBIC forgets everything (bictcp_reset(), W_max included) and HyStart starts
    /// a round ending at `snd_nxt`.
    pub fn restart(&mut self, now: f64, snd_nxt: u64) {
        self.cwnd_cnt = 0;
        match &mut self.module {
            Module::Cubic(c) => **c = Cubic::new(now, snd_nxt),
            Module::Bbr(b) => **b = Bbr::new(now),
            Module::Reno => {}
        }
    }

    /// The module sets cwnd and the pacing rate itself on every ACK (`cong_control`, BBR) and
    /// asks for pacing (bbr_init(): `SK_PACING_NEEDED`): no `cong_avoid`, no PRR, and the
    /// window is not set to ssthresh when a reduction ends (tcp_end_cwnd_reduction()).
    pub fn cong_control(&self) -> bool {
        matches!(self.module, Module::Bbr(_))
    }

    /// BBR's state, for the sender's `cong_control` calls, tests and traces.
    pub fn bbr(&mut self) -> Option<&mut Bbr> {
        match &mut self.module {
            Module::Bbr(b) => Some(b),
            Module::Reno | Module::Cubic(_) => None,
        }
    }

    /// CUBIC's state, for tests and traces.
    pub fn cubic(&self) -> Option<&Cubic> {
        match &self.module {
            Module::Cubic(c) => Some(c),
            Module::Reno | Module::Bbr(_) => None,
        }
    }
}

/// tcp_cubic.c's `struct bictcp`, in packets and seconds.
#[derive(Clone, Debug)]
pub struct Cubic {
    /// Packets acked per one-packet increase.
    cnt: u64,
    /// W_max: the window before the last reduction (after fast convergence).
    pub last_max_cwnd: u64,
    /// cwnd and time when `cnt` was last computed.
    last_cwnd: u64,
    last_time: f64,
    /// W(t)'s plateau and K (seconds from the epoch's start).
    pub origin_point: u64,
    pub k: f64,
    /// The least RTT seen (0: none yet).
    pub delay_min: f64,
    /// The start of the current epoch (None: ended by a reduction).
    pub epoch_start: Option<f64>,
    /// Packets acked since the epoch began, towards the Reno estimate.
    ack_cnt: u64,
    /// The Reno estimate of the window (TCP-friendly region).
    tcp_cwnd: u64,
    hystart: Hystart,
}

/// HyStart's per-round state (bictcp_hystart_reset()).
#[derive(Clone, Debug)]
struct Hystart {
    /// Slow start's exit was found (it stays found until a timeout).
    found: bool,
    round_start: f64,
    /// The round ends when the cumulative ACK passes this packet.
    end_seq: u64,
    /// Time of the last ACK of the current train.
    last_ack: f64,
    /// The least RTT of the round's first samples.
    curr_rtt: f64,
    sample_cnt: u32,
}

impl Hystart {
    fn new_round(&mut self, now: f64, snd_nxt: u64) {
        self.round_start = now;
        self.last_ack = now;
        self.end_seq = snd_nxt;
        self.curr_rtt = f64::INFINITY;
        self.sample_cnt = 0;
    }
}

impl Cubic {
    fn new(now: f64, snd_nxt: u64) -> Self {
        let mut hystart = Hystart {
            found: false,
            round_start: now,
            end_seq: snd_nxt,
            last_ack: now,
            curr_rtt: f64::INFINITY,
            sample_cnt: 0,
        };
        hystart.new_round(now, snd_nxt);
        Cubic {
            cnt: 0,
            last_max_cwnd: 0,
            last_cwnd: 0,
            last_time: f64::NEG_INFINITY,
            origin_point: 0,
            k: 0.0,
            delay_min: 0.0,
            epoch_start: None,
            ack_cnt: 0,
            tcp_cwnd: 0,
            hystart,
        }
    }

    /// bictcp_update(): the packets acked per one-packet increase at window `cwnd`.
    fn update(&mut self, cwnd: u64, acked: u64, now: f64) -> u64 {
        self.ack_cnt += acked;
        if self.last_cwnd == cwnd && now - self.last_time <= UPDATE_INTERVAL {
            return self.cnt;
        }
        // Linux recomputes at most once per jiffy; here once per instant.
        if self.epoch_start.is_none() || now != self.last_time {
            self.last_cwnd = cwnd;
            self.last_time = now;
            self.cubic_cnt(cwnd, acked, now);
        }
        self.tcp_friendliness(cwnd);
        // At most one packet per two acked: 1.5× per RTT.
        self.cnt = self.cnt.max(2);
        self.cnt
    }

    /// W(t) one minimum RTT ahead and the count that reaches it in one RTT.
    fn cubic_cnt(&mut self, cwnd: u64, acked: u64, now: f64) {
        let epoch_start = *self.epoch_start.get_or_insert_with(|| {
            self.ack_cnt = acked;
            self.tcp_cwnd = cwnd;
            if self.last_max_cwnd <= cwnd {
                self.k = 0.0;
                self.origin_point = cwnd;
            } else {
                self.k = ((self.last_max_cwnd - cwnd) as f64 / C).cbrt();
                self.origin_point = self.last_max_cwnd;
            }
            now
        });
        let t = now - epoch_start + self.delay_min;
        // Linux's integer target: the plateau plus or minus whole packets.
        let delta = (C * (t - self.k).abs().powi(3)).floor() as u64;
        let target = if t < self.k {
            self.origin_point.saturating_sub(delta)
        } else {
            self.origin_point + delta
        };
        self.cnt = if target > cwnd {
            cwnd / (target - cwnd)
        } else {
            100 * cwnd
        };
        if self.last_max_cwnd == 0 {
            self.cnt = self.cnt.min(FIRST_EPOCH_MAX_CNT);
        }
    }

    /// RFC 9438 §4.3: the Reno-friendly estimate, one packet per cwnd·15/8 acked;
    /// when it is ahead of cwnd, grow at least as fast as it would.
    fn tcp_friendliness(&mut self, cwnd: u64) {
        let per = (cwnd * FRIENDLY_SCALE) >> 3;
        // Linux's `while (ack_cnt > per) { ack_cnt -= per; tcp_cwnd++; }`, in one step.
        if let Some(steps) = self.ack_cnt.saturating_sub(1).checked_div(per) {
            self.tcp_cwnd += steps;
            self.ack_cnt -= steps * per;
        }
        if self.tcp_cwnd > cwnd {
            self.cnt = self.cnt.min(cwnd / (self.tcp_cwnd - cwnd));
        }
    }

    /// cubictcp_recalc_ssthresh(): end the epoch, remember W_max (fast convergence).
    fn recalc_ssthresh(&mut self, cwnd: u64) -> u64 {
        self.epoch_start = None;
        self.last_max_cwnd = if cwnd < self.last_max_cwnd {
            cwnd * (BETA_SCALE + BETA) / (2 * BETA_SCALE)
        } else {
            cwnd
        };
        (cwnd * BETA / BETA_SCALE).max(2)
    }

    /// cubictcp_acked(): track the minimum RTT; HyStart in slow start.
    fn acked(&mut self, w: &mut Window, s: &AckSample) {
        if self.epoch_start.is_some_and(|e| s.now - e < DISCARD_AFTER_REDUCTION) {
            return;
        }
        let delay = s.rtt.max(1e-6);
        if self.delay_min == 0.0 || self.delay_min > delay {
            self.delay_min = delay;
        }
        if !self.hystart.found && w.in_slow_start() && w.cwnd >= HYSTART_LOW_WINDOW {
            self.hystart_update(w, s, delay);
        }
    }

    /// hystart_update(): the ACK-train and the delay-increase detectors.
    fn hystart_update(&mut self, w: &mut Window, s: &AckSample, delay: f64) {
        let h = &mut self.hystart;
        if s.snd_una > h.end_seq {
            h.new_round(s.now, s.snd_nxt);
        }
        if s.now - h.last_ack <= HYSTART_ACK_DELTA {
            h.last_ack = s.now;
            let cushion = if s.pacing_rate > 0.0 {
                (HYSTART_GSO_BYTES / s.pacing_rate).min(HYSTART_MAX_ACK_DELAY)
            } else {
                0.0
            };
            // Without pacing (`SK_PACING_NONE`) the train must span half the minimum RTT.
            if s.now - h.round_start > (self.delay_min + cushion) / 2.0 {
                h.found = true;
                w.ssthresh = w.cwnd;
            }
        }
        h.curr_rtt = h.curr_rtt.min(delay);
        if h.sample_cnt < HYSTART_MIN_SAMPLES {
            h.sample_cnt += 1;
        } else if h.curr_rtt > self.delay_min + (self.delay_min / 8.0).clamp(HYSTART_DELAY_MIN, HYSTART_DELAY_MAX) {
            h.found = true;
            w.ssthresh = w.cwnd;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(cwnd: u64, ssthresh: u64) -> Window {
        Window {
            cwnd,
            ssthresh,
            clamp: 10_000,
        }
    }

    #[test]
    fn reno_slow_start_then_one_packet_per_window() {
        let mut cc = LinuxCc::new(CongestionControl::Reno, 0.0);
        let mut w = window(10, 14);
        // Slow start stops at ssthresh; the 2 packets left over count towards the increase.
        cc.cong_avoid(&mut w, 6, 0.0);
        assert_eq!((w.cwnd, cc.cwnd_cnt), (14, 2));
        cc.cong_avoid(&mut w, 11, 0.0);
        assert_eq!((w.cwnd, cc.cwnd_cnt), (14, 13));
        cc.cong_avoid(&mut w, 1, 0.0);
        assert_eq!((w.cwnd, cc.cwnd_cnt), (15, 0));
        assert_eq!(cc.ssthresh(15), 7);
        assert_eq!(cc.ssthresh(3), 2);
    }

    #[test]
    fn cubic_cuts_to_beta_with_fast_convergence() {
        let mut cc = LinuxCc::new(CongestionControl::Cubic, 0.0);
        // 717/1024 of 100 = 70.
        assert_eq!(cc.ssthresh(100), 70);
        assert_eq!(cc.cubic().unwrap().last_max_cwnd, 100);
        // A second loss below W_max: W_max = 80·(1 + β)/2 = 68 (fast convergence).
        assert_eq!(cc.ssthresh(80), 56);
        assert_eq!(cc.cubic().unwrap().last_max_cwnd, 68);
        assert_eq!(FRIENDLY_SCALE, 15);
    }

    #[test]
    fn cubic_k_and_target_follow_the_closed_form() {
        let mut cc = LinuxCc::new(CongestionControl::Cubic, 0.0);
        let ssthresh = cc.ssthresh(1000);
        let mut w = window(ssthresh, ssthresh);
        cc.cong_avoid(&mut w, 1, 10.0);
        let c = cc.cubic().unwrap();
        // K = ∛(W_max (1 − β)/C) with W_max − cwnd₀ = 1000 − 700 = 300: ∛(300/0.4004) = 9.08 s.
        assert!(
            (c.k - (300.0 / C).cbrt()).abs() < 1e-12 && (c.k - 9.08).abs() < 0.01,
            "{}",
            c.k
        );
        assert_eq!((c.origin_point, c.epoch_start), (1000, Some(10.0)));
    }

    #[test]
    fn hystart_delay_increase_ends_slow_start() {
        let mut cc = LinuxCc::new(CongestionControl::Cubic, 0.0);
        let mut w = window(20, 1000);
        let sample = |now: f64, rtt: f64| AckSample {
            now,
            rtt,
            snd_una: 1,
            snd_nxt: 40,
            pacing_rate: 0.0,
        };
        // The minimum RTT is 100 ms; the threshold is 100 ms + clamp(12.5 ms, 4, 16) = 112.5 ms.
        cc.on_ack_sample(&mut w, &sample(0.1, 0.100));
        // ACKs 5 ms apart are no train; eight samples at 112 ms do not trigger, the ninth's minimum does not move.
        for i in 1..=8 {
            cc.on_ack_sample(&mut w, &sample(0.1 + 0.005 * f64::from(i), 0.112));
        }
        assert_eq!(w.ssthresh, 1000);
        let mut w2 = w;
        let mut cc2 = cc.clone();
        cc.on_ack_sample(&mut w, &sample(0.2, 0.112));
        assert_eq!(w.ssthresh, 1000);
        // A round whose first eight samples all exceed 112.5 ms ends slow start at cwnd.
        let next_round = AckSample {
            snd_una: 41,
            snd_nxt: 80,
            ..sample(0.3, 0.120)
        };
        cc2.on_ack_sample(&mut w2, &next_round);
        for i in 1..=8 {
            cc2.on_ack_sample(&mut w2, &sample(0.3 + 0.005 * f64::from(i), 0.120));
        }
        assert_eq!(w2.ssthresh, 20);
    }

    #[test]
    fn hystart_ack_train_spanning_half_the_rtt_ends_slow_start() {
        let mut cc = LinuxCc::new(CongestionControl::Cubic, 0.0);
        let mut w = window(32, 1000);
        let sample = |now: f64| AckSample {
            now,
            rtt: 0.1,
            snd_una: 1,
            snd_nxt: 64,
            pacing_rate: 0.0,
        };
        // ACKs 1 ms apart from the round's start at 0: the train passes 50 ms = delay_min/2.
        for i in 0..50 {
            cc.on_ack_sample(&mut w, &sample(0.001 * f64::from(i)));
            assert_eq!(w.ssthresh, 1000, "ACK {i}");
        }
        cc.on_ack_sample(&mut w, &sample(0.0505));
        assert_eq!(w.ssthresh, 32);
    }
}
