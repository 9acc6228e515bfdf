//! LEDBAT, Low Extra Delay Background Transport (RFC 6817), a module of `cong.rs`'s registry on
//! `cc.rs`'s interface, for the `linux` profile (`cc = "ledbat"`). Linux 6.1 ships no LEDBAT:
//! this is the RFC's sender (§2.4.2) cut as a Linux module would be (the out-of-tree
//! tcp_ledbat.c modules are), so `aqmlab emulate` refuses it.
//!
//! - One-way delay (§2.4.1): the receiver measures each data packet's delay (its arrival less
//!   the send time it carries) and the ACK echoes it ([`AckSample::one_way_delay`]); the
//!   simulator's endpoints share one clock, so the delay is exact where TCP timestamps'
//!   TSval − TSecr would carry the clocks' offset, which the base delay cancels (§3.1).
//! - Base delay (§2.4.2 update_base_delay()): the least delay of each of the last
//!   BASE_HISTORY minutes (wall-clock minutes, `round_to_minute`), the current minute's last;
//!   the base delay is their minimum. A lower delay is taken at once; a higher path delay only
//!   when the minutes that saw the lower one have rolled out (§2.5).
//! - Current delay (§2.4.2 update_current_delay(), §3.4.2): FILTER() over the last
//!   CURRENT_FILTER samples, none older than an RTT (§3.4.2's MUST; the RTT is the ACK's
//!   sample); FILTER(), which the RFC leaves to the implementation, is their minimum, as in
//!   ns-3's TcpLedbat.
//! - Window (§2.4.2, on acknowledgement), in packets where the RFC counts bytes by MSS:
//!   off_target = (TARGET − queuing_delay)/TARGET, cwnd += GAIN · off_target · acked / cwnd,
//!   then cwnd ≤ flightsize + ALLOWED_INCREASE (flightsize before the ACK, Linux's
//!   `ack_sample.in_flight`) and cwnd ≥ MIN_CWND. There is no slow start: the window starts
//!   at INIT_CWND = 2 (§2.5; the linux profile's `initial_window` default under `ledbat`) and
//!   moves by this rule only. Linux whole-packet windows keep the fraction here.
//! - Loss (§2.4.2, on data loss, at most once per RTT: the sender's `recover` rule):
//!   cwnd = min(cwnd, max(cwnd/2, MIN_CWND)), as `ssthresh`; a timeout sets cwnd to one packet
//!   (the RFC's "no ACKs within a CTO"), then the rule above, from MIN_CWND.
//!
//! Where ns-3's TcpLedbat (src/internet/model/tcp-ledbat.cc, the RFC 7928 suite's) differs,
//! docs/linux-tcp.md lists. Times are exact seconds.

use super::cc::{AckSample, Window};
use crate::error::ScenarioError;
use crate::units::Seconds;
use crate::validate::{require_in, require_positive, require_probability};
use serde::Deserialize;
use std::collections::VecDeque;

/// §2.5: TARGET MUST be 100 milliseconds or less.
pub const MAX_TARGET: f64 = 0.1;
/// §2.5: INIT_CWND SHOULD be 2 (the window before any delay is known, packets).
pub const INIT_CWND: u64 = 2;
/// `round_to_minute()`: base delays are minima over wall-clock minutes (§2.4.2).
const MINUTE: f64 = 60.0;
/// The lists are allocated for the whole run: their lengths are bounded (docs/scenario.md,
/// "Limits and errors").
const MAX_LIST: f64 = 1000.0;

/// `tcp.ledbat = { ... }`: LEDBAT's parameters (RFC 6817 §2.5), read only with `cc = "ledbat"`.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct LedbatConfig {
    /// TARGET, the queueing delay LEDBAT aims for.
    pub target: Seconds,
    /// GAIN: the window's response to off_target (§2.5: MUST be 1 or less).
    pub gain: f64,
    /// ALLOWED_INCREASE, packets beyond the flight size (§2.5: SHOULD be 1, MUST be > 0).
    pub allowed_increase: f64,
    /// MIN_CWND, packets (§2.5: SHOULD be 2; MUST be no larger than TCP's, RFC 5681's 2).
    pub min_cwnd: u64,
    /// BASE_HISTORY: the one-minute minima kept (§2.5: SHOULD be 10).
    pub base_history: u32,
    /// CURRENT_FILTER: the delay samples FILTER() reads (§3.4.2: at least 4 per RTT).
    pub current_filter: u32,
}

impl Default for LedbatConfig {
    fn default() -> Self {
        LedbatConfig {
            // §2.5's upper bound, ns-3's TcpLedbat `TargetDelay` and the RFC 7928 suite's.
            target: Seconds(MAX_TARGET),
            // §2.5: a GAIN of 1 ramps up no faster than Reno's congestion avoidance.
            gain: 1.0,
            // §2.5.
            allowed_increase: 1.0,
            // §2.5.
            min_cwnd: 2,
            // §2.5.
            base_history: 10,
            // §3.4.2's 4 samples per RTT; ns-3's `NoiseFilterLen` 4.
            current_filter: 4,
        }
    }
}

impl LedbatConfig {
    /// Errors name the field under `path` (`flows[0].tcp.ledbat.target`).
    pub fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        let field = |name: &str| format!("{path}.{name}");
        require_positive(&field("target"), self.target)?;
        if self.target.0 > MAX_TARGET {
            return Err(ScenarioError::new(
                field("target"),
                format!(
                    "must be at most 100ms (RFC 6817 §2.5: TARGET MUST be 100 milliseconds or less), got {}",
                    self.target
                ),
            ));
        }
        require_probability(&field("gain"), self.gain)?;
        require_positive(&field("allowed_increase"), self.allowed_increase)?;
        require_in(&field("min_cwnd"), self.min_cwnd as f64, 1.0, 2.0)?;
        require_in(&field("base_history"), f64::from(self.base_history), 1.0, MAX_LIST)?;
        require_in(&field("current_filter"), f64::from(self.current_filter), 1.0, MAX_LIST)
    }
}

/// The sender's LEDBAT state (§2.4.2's variables), in packets and seconds.
#[derive(Clone, Debug)]
pub struct Ledbat {
    params: LedbatConfig,
    /// `base_delays`: the least delay of each of the last BASE_HISTORY minutes, oldest first;
    /// +∞ for minutes not seen.
    base_delays: VecDeque<f64>,
    /// `round_to_minute(last_rollover)`: None before the first sample (the RFC's −∞).
    last_rollover: Option<u64>,
    /// `current_delays`: the last CURRENT_FILTER samples, (arrival, delay), oldest first.
    current_delays: VecDeque<(f64, f64)>,
    /// The last RTT sample: FILTER() reads no delay older than this.
    rtt: f64,
    /// `flightsize` before the last ACK, packets.
    flightsize: u64,
    /// The part of a packet the window holds beyond the sender's whole-packet cwnd.
    fraction: f64,
}

impl Ledbat {
    pub fn new(params: LedbatConfig) -> Self {
        Ledbat {
            base_delays: std::iter::repeat_n(f64::INFINITY, params.base_history as usize).collect(),
            last_rollover: None,
            current_delays: VecDeque::with_capacity(params.current_filter as usize),
            rtt: 0.0,
            flightsize: 0,
            fraction: 0.0,
            params,
        }
    }

    /// `pkts_acked`: the ACK's delay sample enters both lists (§2.4.2, "for each delay").
    pub fn acked(&mut self, s: &AckSample) {
        self.update_base_delay(s.now, s.one_way_delay);
        if self.current_delays.len() == self.params.current_filter as usize {
            self.current_delays.pop_front();
        }
        self.current_delays.push_back((s.now, s.one_way_delay));
        self.rtt = s.rtt;
        self.flightsize = s.prior_in_flight;
    }

    /// update_base_delay(): a new minute starts a new minimum, dropping the oldest.
    fn update_base_delay(&mut self, now: f64, delay: f64) {
        let minute = (now / MINUTE).floor() as u64;
        if self.last_rollover != Some(minute) {
            self.last_rollover = Some(minute);
            self.base_delays.pop_front();
            self.base_delays.push_back(delay);
        } else if let Some(tail) = self.base_delays.back_mut() {
            *tail = tail.min(delay);
        }
    }

    /// MIN(base_delays), +∞ before any sample.
    pub fn base_delay(&self) -> f64 {
        self.base_delays.iter().copied().fold(f64::INFINITY, f64::min)
    }

    /// FILTER(current_delays): the least of the samples within an RTT of the newest.
    fn current_delay(&self) -> Option<f64> {
        let &(newest, _) = self.current_delays.back()?;
        self.current_delays
            .iter()
            .filter(|(at, _)| *at >= newest - self.rtt)
            .map(|&(_, delay)| delay)
            .reduce(f64::min)
    }

    /// queuing_delay = FILTER(current_delays) − MIN(base_delays); None before a sample.
    pub fn queuing_delay(&self) -> Option<f64> {
        Some(self.current_delay()? - self.base_delay())
    }

    /// On an acknowledgement of `acked` packets (§2.4.2), after its sample ([`Ledbat::acked`]).
    pub fn cong_avoid(&mut self, w: &mut Window, acked: u64) {
        let Some(queuing_delay) = self.queuing_delay() else {
            return;
        };
        let p = &self.params;
        let cwnd = w.cwnd as f64 + self.fraction;
        let off_target = (p.target.0 - queuing_delay) / p.target.0;
        let next = (cwnd + p.gain * off_target * acked as f64 / cwnd)
            .min(self.flightsize as f64 + p.allowed_increase)
            .max(p.min_cwnd as f64)
            .min(w.clamp as f64);
        w.cwnd = next.floor() as u64;
        self.fraction = next - next.floor();
    }

    /// On data loss or ECN-echo: min(cwnd, max(cwnd/2, MIN_CWND)).
    pub fn ssthresh(&mut self, cwnd: u64) -> u64 {
        self.fraction = 0.0;
        cwnd.min((cwnd / 2).max(self.params.min_cwnd))
    }

    /// A timeout or a new connection: the window restarts whole; the delay history stays, as
    /// it is the path's (the RFC resets neither list).
    pub fn restart(&mut self) {
        self.fraction = 0.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: f64 = 1e-3;

    fn sample(now: f64, delay: f64) -> AckSample {
        AckSample {
            now,
            rtt: 0.1,
            snd_una: 0,
            snd_nxt: 0,
            pacing_rate: 0.0,
            one_way_delay: delay,
            prior_in_flight: 1000,
        }
    }

    fn window(cwnd: u64) -> Window {
        Window {
            cwnd,
            ssthresh: 10_000,
            clamp: 10_000,
        }
    }

    #[test]
    fn the_window_moves_by_gain_times_off_target_per_window_acked() {
        let target = 25.0 * MS;
        let mut l = Ledbat::new(LedbatConfig {
            target: Seconds(target),
            ..Default::default()
        });
        let mut w = window(20);
        // Base 40 ms; the next samples carry 10 ms of queueing: off_target = 15/25 = 0.6.
        l.acked(&sample(0.0, 0.040));
        l.acked(&sample(0.01, 0.050));
        assert!(
            (l.queuing_delay().unwrap() - 0.0).abs() < 1e-12,
            "MIN over the RTT still holds 40 ms"
        );
        for i in 0..4 {
            l.acked(&sample(0.2 + f64::from(i) * MS, 0.050));
        }
        assert!((l.queuing_delay().unwrap() - 0.010).abs() < 1e-12);
        // 20 ACKs of one packet at cwnd ≈ 20: + 0.6 packets in all (Σ 0.6/cwnd).
        let mut expected = 20.0;
        for _ in 0..20 {
            l.cong_avoid(&mut w, 1);
            expected += 0.6 / expected;
        }
        assert!(
            (w.cwnd as f64 + l.fraction - expected).abs() < 1e-9,
            "{} {}",
            w.cwnd,
            l.fraction
        );
        assert_eq!(w.cwnd, 20);
        // 50 ms of queueing, twice TARGET: off_target = −1, one packet less per window.
        for i in 0..4 {
            l.acked(&sample(0.5 + f64::from(i) * MS, 0.090));
        }
        let before = w.cwnd as f64 + l.fraction;
        l.cong_avoid(&mut w, 2);
        assert!((w.cwnd as f64 + l.fraction - (before - 2.0 / before)).abs() < 1e-9);
    }

    #[test]
    fn the_window_stays_within_flight_plus_allowed_increase_and_above_min_cwnd() {
        let mut l = Ledbat::new(LedbatConfig::default());
        let mut w = window(30);
        l.acked(&AckSample {
            prior_in_flight: 12,
            ..sample(0.0, 0.010)
        });
        l.cong_avoid(&mut w, 1);
        assert_eq!((w.cwnd, l.fraction), (13, 0.0), "flightsize 12 + ALLOWED_INCREASE 1");
        // A queueing delay of 1 s (ten times TARGET) cuts to MIN_CWND, never below.
        for i in 0..4 {
            l.acked(&sample(1.0 + f64::from(i) * MS, 1.010));
        }
        for _ in 0..50 {
            l.cong_avoid(&mut w, 1);
        }
        assert_eq!(w.cwnd, 2);
        assert_eq!(l.ssthresh(2), 2);
        assert_eq!(l.ssthresh(31), 15);
    }

    #[test]
    fn a_lower_base_delay_is_taken_at_once_a_higher_after_base_history_minutes() {
        let mut l = Ledbat::new(LedbatConfig {
            base_history: 3,
            ..Default::default()
        });
        // Minute 0: the path's delay is 50 ms. From minute 1 on it is 80 ms (a longer route):
        // the base stays 50 ms, so 30 ms of the new path is taken for queueing, until the
        // minute that saw 50 ms rolls out of the 3 kept: from minute 3.
        l.acked(&sample(10.0, 0.050));
        for minute in 1..=4 {
            let now = f64::from(minute) * MINUTE + 1.0;
            l.acked(&sample(now, 0.080));
            let expected = if minute < 3 { 0.030 } else { 0.0 };
            assert!(
                (l.queuing_delay().unwrap() - expected).abs() < 1e-12,
                "minute {minute}: {:?}",
                l.queuing_delay()
            );
        }
        // A shorter route (20 ms) is the base delay at the first sample.
        l.acked(&sample(4.0 * MINUTE + 2.0, 0.020));
        assert_eq!(l.base_delay(), 0.020);
    }

    #[test]
    fn filter_reads_no_sample_older_than_an_rtt() {
        let mut l = Ledbat::new(LedbatConfig::default());
        l.acked(&sample(0.0, 0.010));
        l.acked(&sample(0.05, 0.030));
        assert_eq!(l.current_delay(), Some(0.010), "50 ms ago: within the 100 ms RTT");
        l.acked(&sample(0.2, 0.030));
        assert_eq!(l.current_delay(), Some(0.030), "the 10 ms sample is 200 ms old");
    }

    #[test]
    fn bad_parameters_name_their_field() {
        let error = |c: LedbatConfig| c.validate("flows[0].tcp.ledbat").unwrap_err().to_string();
        let base = LedbatConfig::default();
        assert!(error(LedbatConfig {
            target: Seconds(0.2),
            ..base
        })
        .starts_with("flows[0].tcp.ledbat.target: must be at most 100ms (RFC 6817 §2.5"),);
        assert!(error(LedbatConfig { gain: 1.5, ..base }).starts_with("flows[0].tcp.ledbat.gain: must be in (0, 1]"));
        assert!(
            error(LedbatConfig { min_cwnd: 3, ..base }).starts_with("flows[0].tcp.ledbat.min_cwnd: must be in [1, 2]")
        );
        assert!(error(LedbatConfig {
            current_filter: 0,
            ..base
        })
        .starts_with("flows[0].tcp.ledbat.current_filter"));
        assert!(base.validate("x").is_ok());
    }
}
