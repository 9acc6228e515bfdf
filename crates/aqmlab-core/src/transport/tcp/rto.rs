//! Retransmission timeout (RTO) estimation, RFC 6298: smoothed RTT and RTT
//! variance from samples, Karn's rule, exponential back-off.
//!
//! The clock granularity `G` enters only through the RFC's `max(G, K·RTTVAR)`
//! term: our timers fire at exact nanosecond times and RTT samples are exact.
//!
//! [`LinuxRto`] is Linux's variant of the same filters (the linux profile).

/// RFC 6298 (2.3): gains of the SRTT and RTTVAR filters and the variance multiplier.
const ALPHA: f64 = 1.0 / 8.0;
const BETA: f64 = 1.0 / 4.0;
const K: f64 = 4.0;
/// RFC 6298 (2.5): a maximum may be placed on the RTO provided it is at least 60 s.
const MAX_RTO: f64 = 60.0;

#[derive(Clone, Debug)]
pub struct RtoEstimator {
    initial: f64,
    min: f64,
    granularity: f64,
    srtt: Option<f64>,
    rttvar: f64,
    /// The RTO is multiplied by `2^backoff` (RFC 6298 (5.5)).
    backoff: u32,
}

impl RtoEstimator {
    /// `initial`: RTO before the first sample; `min`: lower bound (RFC 6298 (2.4)); `granularity`: G. Seconds.
    pub fn new(initial: f64, min: f64, granularity: f64) -> Self {
        RtoEstimator {
            initial,
            min,
            granularity,
            srtt: None,
            rttvar: 0.0,
            backoff: 0,
        }
    }

    /// Feeds an RTT sample (seconds) measured on a packet; `of_retransmission`
    /// says whether that packet had been retransmitted.
    pub fn sample(&mut self, rtt: f64, of_retransmission: bool) {
        // Karn's rule: an ACK for a retransmitted packet is ambiguous, and the
        // backed-off RTO is kept until an unambiguous sample arrives.
        if of_retransmission {
            return;
        }
        match self.srtt {
            // RFC 6298 (2.2): the first sample sets SRTT = R, RTTVAR = R/2.
            None => {
                self.srtt = Some(rtt);
                self.rttvar = rtt / 2.0;
            }
            // RFC 6298 (2.3): RTTVAR first (it uses the old SRTT), then SRTT.
            Some(srtt) => {
                self.rttvar = (1.0 - BETA) * self.rttvar + BETA * (srtt - rtt).abs();
                self.srtt = Some((1.0 - ALPHA) * srtt + ALPHA * rtt);
            }
        }
        self.backoff = 0;
    }

    /// The current timeout in seconds, back-off included.
    pub fn rto(&self) -> f64 {
        let base = match self.srtt {
            // RFC 6298 (2.1): before any sample the RTO is the initial value.
            None => self.initial,
            // RFC 6298 (2.3) and (2.4): SRTT + max(G, K·RTTVAR), at least the minimum.
            Some(srtt) => (srtt + self.granularity.max(K * self.rttvar)).max(self.min),
        };
        (base * f64::from(1u32 << self.backoff)).min(MAX_RTO.max(base))
    }

    /// A retransmission timer expired: double the RTO (RFC 6298 (5.5)).
    pub fn back_off(&mut self) {
        if self.rto() < MAX_RTO && self.backoff < 30 {
            self.backoff += 1;
        }
    }

    /// Forgets the estimate, as a new connection starts (SRED §7: back to the initial RTO).
    pub fn reset(&mut self) {
        self.srtt = None;
        self.rttvar = 0.0;
        self.backoff = 0;
    }

    pub fn srtt(&self) -> Option<f64> {
        self.srtt
    }

    /// RTTVAR, seconds, once there is an estimate.
    pub fn rttvar(&self) -> Option<f64> {
        self.srtt.map(|_| self.rttvar)
    }
}

/// TCP_RTO_MAX: Linux's cap on the backed-off RTO, 120 s.
const LINUX_MAX_RTO: f64 = 120.0;

/// `TCP_TIMEOUT_MIN_US` (include/net/tcp.h): 2 ms, the least wait of Linux's probe and
/// reordering timers.
pub const LINUX_TIMEOUT_MIN: f64 = 0.002;

/// Linux's RTO (tcp_input.c tcp_rtt_estimator(), include/net/tcp.h __tcp_set_rto()):
/// RFC 6298's SRTT and mean deviation, but RTO = SRTT + `rttvar`, where `rttvar` is the
/// largest 4·mdev of the last window of data, at least the minimum RTO, decaying towards
/// it by a quarter per window (so the floor is SRTT + 200 ms, not 200 ms), and a sample
/// below SRTT moves mdev with gain 1/32 instead of 1/4. Every ACK of new data is a sample
/// (timestamps: retransmissions too); a sample ends the back-off (tcp_ack_update_rtt()).
#[derive(Clone, Debug)]
pub struct LinuxRto {
    initial: f64,
    min: f64,
    srtt: Option<f64>,
    /// `mdev_us`: 4 × the mean deviation.
    mdev: f64,
    /// `mdev_max_us`: the largest `mdev` in the current window of data.
    mdev_max: f64,
    /// `rttvar_us`: the RTO's variance term.
    rttvar: f64,
    /// `rtt_seq`: the window ends when the cumulative ACK passes this packet.
    rtt_seq: u64,
    backoff: u32,
}

impl LinuxRto {
    /// `initial`: RTO before the first sample; `min`: TCP_RTO_MIN. Seconds.
    pub fn new(initial: f64, min: f64) -> Self {
        LinuxRto {
            initial,
            min,
            srtt: None,
            mdev: 0.0,
            mdev_max: 0.0,
            rttvar: 0.0,
            rtt_seq: 0,
            backoff: 0,
        }
    }

    /// A sample of `rtt` seconds on an ACK that moved the cumulative ACK to `snd_una`
    /// with `snd_nxt` the next packet to send.
    pub fn sample(&mut self, rtt: f64, snd_una: u64, snd_nxt: u64) {
        self.backoff = 0;
        let Some(srtt) = self.srtt else {
            // "make sure rto = 3*rtt": mdev = 2·R, i.e. RTTVAR = R/2.
            self.srtt = Some(rtt);
            self.mdev = 2.0 * rtt;
            self.rttvar = self.mdev.max(self.min);
            self.mdev_max = self.rttvar;
            self.rtt_seq = snd_nxt;
            return;
        };
        let error = rtt - srtt;
        self.srtt = Some(srtt + error / 8.0);
        let mut m = error.abs() - self.mdev / 4.0;
        // A sample below SRTT (Eifel-like): gain 1/32 for a growing deviation.
        if error < 0.0 && m > 0.0 {
            m /= 8.0;
        }
        self.mdev += m;
        if self.mdev > self.mdev_max {
            self.mdev_max = self.mdev;
            self.rttvar = self.rttvar.max(self.mdev_max);
        }
        if snd_una > self.rtt_seq {
            if self.mdev_max < self.rttvar {
                self.rttvar -= (self.rttvar - self.mdev_max) / 4.0;
            }
            self.rtt_seq = snd_nxt;
            self.mdev_max = self.min;
        }
    }

    /// The current timeout in seconds, back-off included (tcp_rto_backoff(), TCP_RTO_MAX).
    pub fn rto(&self) -> f64 {
        let base = self.srtt.map_or(self.initial, |srtt| srtt + self.rttvar);
        (base * f64::from(1u32 << self.backoff.min(30))).min(LINUX_MAX_RTO)
    }

    pub fn back_off(&mut self) {
        if self.rto() < LINUX_MAX_RTO {
            self.backoff += 1;
        }
    }

    pub fn reset(&mut self) {
        *self = LinuxRto::new(self.initial, self.min);
    }

    /// SRTT and the variance term, seconds, once there is an estimate.
    pub fn srtt_and_rttvar(&self) -> Option<(f64, f64)> {
        self.srtt.map(|s| (s, self.rttvar))
    }

    /// The Tail Loss Probe's timeout with `packets_out` packets outstanding, seconds (RFC 8985
    /// §7.2 PTO, tcp_schedule_loss_probe()): 2·SRTT, plus the minimum RTO when one packet is
    /// out (its ACK may be delayed), else plus `TCP_TIMEOUT_MIN`; the initial RTO before any sample.
    pub fn probe_timeout(&self, packets_out: u64) -> f64 {
        match self.srtt {
            Some(srtt) if packets_out == 1 => 2.0 * srtt + self.min,
            Some(srtt) => 2.0 * srtt + LINUX_TIMEOUT_MIN,
            None => self.initial,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn follows_rfc6298_by_hand() {
        let mut e = RtoEstimator::new(3.0, 0.2, 0.01);
        assert_eq!(e.rto(), 3.0);
        // First sample 100 ms: SRTT = 0.1, RTTVAR = 0.05, RTO = 0.1 + 4·0.05 = 0.3.
        e.sample(0.1, false);
        assert!((e.rto() - 0.3).abs() < 1e-12, "{}", e.rto());
        // Second sample 200 ms: RTTVAR = 0.75·0.05 + 0.25·0.1 = 0.0625, SRTT = 0.875·0.1 + 0.125·0.2 = 0.1125,
        // RTO = 0.1125 + 0.25 = 0.3625.
        e.sample(0.2, false);
        assert!((e.rto() - 0.3625).abs() < 1e-12, "{}", e.rto());
    }

    #[test]
    fn minimum_and_granularity_bound_a_steady_rtt() {
        let mut e = RtoEstimator::new(3.0, 0.2, 0.01);
        for _ in 0..200 {
            e.sample(0.05, false);
        }
        // RTTVAR has decayed to ~0: SRTT + G = 0.06 is below the 200 ms minimum.
        assert_eq!(e.rto(), 0.2);
        let mut e = RtoEstimator::new(3.0, 0.0, 0.01);
        for _ in 0..200 {
            e.sample(0.05, false);
        }
        assert!((e.rto() - 0.06).abs() < 1e-9, "{}", e.rto());
    }

    #[test]
    fn backs_off_until_an_unambiguous_sample() {
        let mut e = RtoEstimator::new(1.0, 0.2, 0.01);
        e.back_off();
        e.back_off();
        assert_eq!(e.rto(), 4.0);
        e.sample(0.1, true); // Karn: ignored, back-off kept
        assert_eq!(e.rto(), 4.0);
        assert_eq!(e.srtt(), None);
        e.sample(0.1, false);
        assert!((e.rto() - 0.3).abs() < 1e-12);
        for _ in 0..40 {
            e.back_off();
        }
        assert_eq!(e.rto(), MAX_RTO);
        e.reset();
        assert_eq!(e.rto(), 1.0);
    }

    #[test]
    fn linux_floors_the_variance_term_not_the_rto() {
        let mut e = LinuxRto::new(1.0, 0.2);
        assert_eq!(e.rto(), 1.0);
        // First sample 100 ms: mdev = 200 ms, rttvar = max(200 ms, 200 ms); RTO = 300 ms.
        e.sample(0.1, 1, 10);
        assert!((e.rto() - 0.3).abs() < 1e-12, "{}", e.rto());
        // A steady 100 ms RTT: mdev decays, rttvar decays towards its 200 ms floor, RTO to
        // SRTT + 200 ms = 300 ms (RFC 6298 with a 200 ms minimum would give 200 ms).
        for ack in 2..400 {
            e.sample(0.1, ack, ack + 10);
        }
        assert!((e.rto() - 0.3).abs() < 1e-9, "{}", e.rto());
        // A jump to 500 ms: error 400 ms, mdev ≈ 0 + 400 − 0 ms, above the window's 200 ms:
        // rttvar follows at once.
        e.sample(0.5, 400, 410);
        let (srtt, rttvar) = e.srtt_and_rttvar().unwrap();
        assert!(
            (srtt - 0.15).abs() < 1e-9 && (rttvar - 0.4).abs() < 1e-6,
            "{srtt} {rttvar}"
        );
        e.back_off();
        e.back_off();
        assert!((e.rto() - 4.0 * (srtt + rttvar)).abs() < 1e-9);
        e.sample(0.1, 401, 411);
        assert!(e.rto() < 1.0, "a sample ends the back-off");
        for _ in 0..40 {
            e.back_off();
        }
        assert_eq!(e.rto(), LINUX_MAX_RTO);
    }
}
