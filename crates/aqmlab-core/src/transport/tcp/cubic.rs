//! CUBIC as Linux 6.1's tcp_cubic.c runs it for the `linux` profile (a module of `cong.rs`'s
//! registry, on `cc.rs`'s interface):
//!
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
//!
//! Times are exact seconds where Linux counts jiffies and microseconds.

use super::cc::{AckSample, Window};

/// tcp_cubic.c `beta` 717 of BICTCP_BETA_SCALE 1024.
const BETA: u64 = 717;
const BETA_SCALE: u64 = 1024;
/// C of W(t): `cube_rtt_scale` = `bic_scale` 41 × 10, in units of 1/1024 (0.4004 packets/s³).
pub(super) const C: f64 = 410.0 / 1024.0;
/// `beta_scale` = 8·(1024 + 717)/3/(1024 − 717) in integers: the Reno estimate gains
/// one packet per cwnd·15/8 packets acked.
pub(super) const FRIENDLY_SCALE: u64 = 8 * (BETA_SCALE + BETA) / 3 / (BETA_SCALE - BETA);
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
    pub fn new(now: f64, snd_nxt: u64) -> Self {
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
    pub fn update(&mut self, cwnd: u64, acked: u64, now: f64) -> u64 {
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
    pub fn recalc_ssthresh(&mut self, cwnd: u64) -> u64 {
        self.epoch_start = None;
        self.last_max_cwnd = if cwnd < self.last_max_cwnd {
            cwnd * (BETA_SCALE + BETA) / (2 * BETA_SCALE)
        } else {
            cwnd
        };
        (cwnd * BETA / BETA_SCALE).max(2)
    }

    /// cubictcp_acked(): track the minimum RTT; HyStart in slow start.
    pub fn acked(&mut self, w: &mut Window, s: &AckSample) {
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
