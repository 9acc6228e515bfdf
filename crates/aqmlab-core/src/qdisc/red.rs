//! Random Early Detection (S. Floyd, V. Jacobson, "Random Early Detection
//! Gateways for Congestion Avoidance", IEEE/ACM ToN 1(4), 1993; "F–J" below),
//! as restated by FRED §3/§4.4, RED-PD §7.2 and BRED §2.
//!
//! On every arrival RED updates an exponentially weighted average of the queue
//! ([`RedAverage`]), reads the base probability `p_b` off its drop curve
//! ([`DropCurve`]), spreads drops evenly with `p_a = p_b / (1 − count·p_b)`
//! ([`uniformized`]) and drops (or ECN-marks) the arrival with probability `p_a`.
//! The three pieces are public so that the RED family can reuse them (FRED
//! does; RED-PD runs a whole [`Red`] as its output queue; SRED has neither an average nor this curve).
//!
//! Where the count-based spacing leads, in closed form (F–J Fig. 2 as written:
//! `count` is 0 after a drop and incremented before `p_a` is computed, so the
//! k-th arrival after a drop sees `count = k`): at a fixed `p_b` the chance of
//! surviving arrivals 1..k is `S(k) = Π_{j=1..k} (1 − p_b/(1 − j·p_b)) =
//! (1 − (k+1)·p_b) / (1 − p_b)`, so the gap between drops is uniform,
//! `P(gap = k) = p_b / (1 − p_b)` for `k = 1, 2, …` until `p_a` reaches 1.
//! When `N = 1/p_b` is an integer the gap is uniform on `{1, …, N − 1}`: mean
//! `N/2`, long-run drop fraction `2·p_b`, variance `((N − 1)² − 1)/12`, about a
//! third of a geometric gap's with the same mean. (F–J §7 leaves the arriving
//! packet out of `count`, which gives `{1, …, N}` and `2·p_b/(1 + p_b)`.)
//!
//! Options beyond the 1993 paper, each off by default: `gentle` (p rises from
//! max_p to 1 between max_th and 2·max_th; Floyd 2000, ns-2 `gentle_`), `ecn`
//! (RFC 3168 marking), `wait` (ns-2 `wait_`: no drop until `count·p_b ≥ 1`, so
//! drops are 1/p_b to 2/p_b arrivals apart) and `fixed_p` (every arrival is
//! dropped with a fixed probability, ignoring the average: RED-PD §7.1; in byte
//! mode scaled by size/mean_pktsize, as ns-2's `P_testFRp_`).
//!
//! Two profiles ([`RedProfile`]). `floyd93` (the default) is F–J Fig. 2 as above. `ns2` is
//! RED as ns-2.35's `queue/red.cc` runs it, the RED the RED-PD, CSFQ and BRED authors
//! simulated; it differs in four rules (issue 21 measured each against ns-2.35):
//! - **instantaneous-queue guard**: no early or forced drop while the arrival finds at most one
//!   packet queued (one byte in byte mode: red.cc compares the queue in its own unit), however
//!   high the average;
//! - **first packet**: the first arrival that finds the average ≥ min_th with more than one
//!   packet queued is never dropped; it restarts `count` at 1 (red.cc's `old`);
//! - **idle averaging**: an arrival after an idle period decays the average by the whole
//!   number of mean-size transmission times the link was idle, then takes an ordinary
//!   averaging step (F–J only decays, by the fractional number);
//! - **byte mode**: `count` is red.cc's `count_bytes / mean_pktsize` in whole packets, and the
//!   buffer overflows when the bytes queued *before* the arrival reach the limit.

use super::{Backlog, DropReason, Fifo, Gauges, Limit, LinkInfo, QdiscConfig, QdiscCtx, QueueDisc, Verdict};
use crate::error::ScenarioError;
use crate::packet::{Ecn, PacketId};
use crate::rng::Rng;
use crate::time::{Time, NANOS_PER_SEC};
use crate::units::Bytes;
use crate::validate::{require_in, require_non_negative, require_positive, require_probability};
use rand::Rng as _;
use serde::{Deserialize, Serialize};

/// RED's average queue size `avg` (F–J §4 and Fig. 2), in whatever unit the
/// caller samples the queue in (packets or bytes). RED samples on arrivals;
/// FRED also on departures (FRED §4.4).
#[derive(Clone, Debug)]
pub struct RedAverage {
    w_q: f64,
    idle_rule: IdleRule,
    mean_pktsize: u64,
    /// Transmission time of a mean-size packet in ns at the link's current rate: F–J's `s`,
    /// so an idle period of `t` counts as `m = t/s` arrivals to an empty queue (at the rate
    /// when the period ends, if the rate changed during it).
    packet_time: f64,
    avg: f64,
    /// F–J's `q_time`: when the link went idle, while it is idle. A link starts idle.
    idle_since: Option<Time>,
    /// When the queue was last sampled, and by which side.
    last_sample: Option<(Time, Side)>,
}

/// What the first arrival after an idle period does to the average.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdleRule {
    /// F–J Fig. 2: `avg ← (1 − w_q)^m·avg` with `m = idle time / s`, no sample.
    Decay,
    /// ns-2 red.cc (`enque`, `estimator`): `m` truncated to whole transmission times, then an
    /// ordinary step, `avg ← (1 − w_q)·(1 − w_q)^⌊m⌋·avg + w_q·q`.
    DecayThenSample,
}

/// The event that samples the queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    Arrival,
    Departure,
}

impl RedAverage {
    /// `w_q` is the EWMA weight; idle periods are measured in transmission
    /// times of `mean_pktsize` bytes at `rate_bps`.
    pub fn new(w_q: f64, mean_pktsize: u64, rate_bps: f64, idle_rule: IdleRule) -> Self {
        RedAverage {
            w_q,
            idle_rule,
            mean_pktsize,
            packet_time: Self::packet_time(mean_pktsize, rate_bps),
            avg: 0.0,
            idle_since: Some(0),
            last_sample: None,
        }
    }

    fn packet_time(mean_pktsize: u64, rate_bps: f64) -> f64 {
        mean_pktsize as f64 * 8.0 * NANOS_PER_SEC as f64 / rate_bps
    }

    /// The link's rate changed: idle time counts in packet times at `rate_bps` from now on.
    pub fn set_link_rate(&mut self, rate_bps: f64) {
        self.packet_time = Self::packet_time(self.mean_pktsize, rate_bps);
    }

    /// Updates the average for an arrival that finds `q` queued and returns it:
    /// `avg ← (1 − w_q)·avg + w_q·q`, or, first thing after an idle period (the
    /// queue is then empty), `avg ← (1 − w_q)^m·avg` (F–J Fig. 2).
    pub fn on_arrival(&mut self, q: f64, now: Time) -> f64 {
        self.sample(q, now, Side::Arrival)
    }

    /// Updates the average for a departure that leaves `q` queued (FRED §4.4), as [`Self::on_arrival`].
    pub fn on_departure(&mut self, q: f64, now: Time) -> f64 {
        self.sample(q, now, Side::Departure)
    }

    fn sample(&mut self, q: f64, now: Time, side: Side) -> f64 {
        // An instant the other side has sampled already is not sampled again: both would see the
        // same queue (FRED §4.4 footnote 1). The idle decay still applies; it counts time, not samples.
        let sampled_by_other_side = self.last_sample.is_some_and(|(t, s)| t == now && s != side);
        self.avg = match self.idle_since.take() {
            Some(since) => {
                let idle_packets = (now - since) as f64 / self.packet_time;
                match self.idle_rule {
                    IdleRule::Decay => self.avg * (1.0 - self.w_q).powf(idle_packets),
                    IdleRule::DecayThenSample => {
                        (1.0 - self.w_q) * self.avg * (1.0 - self.w_q).powf(idle_packets.floor()) + self.w_q * q
                    }
                }
            }
            None if sampled_by_other_side => self.avg,
            None => (1.0 - self.w_q) * self.avg + self.w_q * q,
        };
        self.last_sample = Some((now, side));
        self.avg
    }

    /// The link went idle at `now`: a dequeue found nothing to send (ns-2 red.cc's `idletime_`).
    pub fn on_idle(&mut self, now: Time) {
        self.idle_since.get_or_insert(now);
    }

    pub fn value(&self) -> f64 {
        self.avg
    }

    /// Puts the average at `avg`, as if the queue had been at that level for a while.
    #[cfg(test)]
    pub(crate) fn set_value(&mut self, avg: f64) {
        self.avg = avg;
    }

    #[cfg(test)]
    pub(crate) fn idle_since(&self) -> Option<Time> {
        self.idle_since
    }
}

/// Where the average lies on RED's drop curve.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Region {
    /// `avg < min_th`: no drops.
    Below,
    /// Probabilistic region, with the base probability `p_b`.
    Early(f64),
    /// `avg ≥ max_th` (`≥ 2·max_th` when gentle): drop every arrival.
    Forced,
}

/// RED's drop curve: `p_b` as a function of the average (F–J §4; gentle: Floyd 2000).
#[derive(Clone, Copy, Debug)]
pub struct DropCurve {
    pub min_th: f64,
    pub max_th: f64,
    pub max_p: f64,
    pub gentle: bool,
}

impl DropCurve {
    pub fn region(&self, avg: f64) -> Region {
        if avg < self.min_th {
            Region::Below
        } else if avg < self.max_th {
            // F–J §4: p_b = max_p·(avg − min_th)/(max_th − min_th)
            Region::Early(self.max_p * (avg - self.min_th) / (self.max_th - self.min_th))
        } else if self.gentle && avg < 2.0 * self.max_th {
            // Gentle RED: p_b rises linearly from max_p at max_th to 1 at 2·max_th.
            Region::Early(self.max_p + (1.0 - self.max_p) * (avg - self.max_th) / self.max_th)
        } else {
            Region::Forced
        }
    }
}

/// `p_a = p_b / (1 − count·p_b)`, 1 once `count·p_b ≥ 1` (F–J §4, Fig. 2).
/// With ns-2's `wait`: 0 while `count·p_b < 1`, then `p_b / (2 − count·p_b)`, 1 from `count·p_b ≥ 2`.
pub fn uniformized(p_b: f64, count: f64, wait: bool) -> f64 {
    let spent = count * p_b;
    let horizon = if wait {
        if spent < 1.0 {
            return 0.0;
        }
        2.0
    } else {
        1.0
    };
    if spent >= horizon {
        1.0
    } else {
        (p_b / (horizon - spent)).min(1.0)
    }
}

/// Which RED runs: the 1993 paper's or ns-2.35's (module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RedProfile {
    /// Floyd & Jacobson 1993, Fig. 2: the default, so that files written before profiles existed keep their meaning.
    #[default]
    Floyd93,
    /// ns-2.35's `queue/red.cc`.
    Ns2,
}

/// RED parameters as in a scenario file. Thresholds and the average are in
/// packets, or in bytes when `bytes = true`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct RedConfig {
    /// Unset: `floyd93`, or what the enclosing discipline's profile chooses (RED-PD's `ns2`: `ns2`).
    pub profile: Option<RedProfile>,
    /// Buffer in packets; with neither `limit` nor `limit_bytes`, 50 packets (ns-2 `Queue set limit_ 50`).
    pub limit: Option<u64>,
    pub limit_bytes: Option<Bytes>,
    /// Default 5 packets (ns-2 `thresh_ 5`, ns-default.tcl before the 2001 auto-configuration).
    pub min_th: Option<f64>,
    /// Default 15 packets (ns-2 `maxthresh_ 15`, same vintage).
    pub max_th: Option<f64>,
    /// 0.1 = 1/linterm with ns-2's `linterm_ 10`.
    pub max_p: f64,
    /// 0.002: the w_q of F–J's simulations and ns-2's `q_weight_ 0.002`.
    pub w_q: f64,
    /// Packet size that idle time (F–J's `s`) and byte-mode scaling refer to; 1000 B (RED-PD §7.2's packets).
    pub mean_pktsize: Bytes,
    /// Byte mode (F–J §4): average, thresholds in bytes; p ∝ packet size.
    pub bytes: bool,
    pub gentle: bool,
    /// Mark ECN-capable packets (CE) instead of dropping them in the probabilistic region.
    pub ecn: bool,
    /// With `ecn`, mark ECN-capable arrivals in the forced region too (avg ≥ max_th) instead of
    /// dropping them, as Linux sch_red does without `harddrop`: off (F–J and RFC 3168 §7 drop
    /// there). It allows `min_th = max_th`, a step: DCTCP's marking threshold K (RFC 8257 §3,
    /// "instantaneous queue length greater than K") is `w_q = 1, min_th = max_th = K + 1,
    /// ecn = true, mark_forced = true`, max_p unused.
    pub mark_forced: bool,
    /// ns-2's `wait_`: keep drops at least 1/p_b arrivals apart.
    pub wait: bool,
    /// Drop each arrival with this probability, ignoring the average (RED-PD §7.1); in byte
    /// mode times size/mean_pktsize (ns-2 red-pd.cc `P_testFRp_`).
    pub fixed_p: Option<f64>,
}

impl Default for RedConfig {
    fn default() -> Self {
        RedConfig {
            profile: None,
            limit: None,
            limit_bytes: None,
            min_th: None,
            max_th: None,
            max_p: 0.1,
            w_q: 0.002,
            mean_pktsize: Bytes(1000),
            bytes: false,
            gentle: false,
            ecn: false,
            mark_forced: false,
            wait: false,
            fixed_p: None,
        }
    }
}

impl RedConfig {
    pub const DEFAULT_LIMIT_PACKETS: u64 = 50;
    pub const DEFAULT_MIN_TH_PACKETS: f64 = 5.0;
    pub const DEFAULT_MAX_TH_PACKETS: f64 = 15.0;

    fn limit(&self) -> Limit {
        Limit::configured(
            self.limit,
            self.limit_bytes.map(|b| b.0),
            Limit::new(Some(Self::DEFAULT_LIMIT_PACKETS), None),
        )
    }

    /// Threshold units per packet: 1, or mean_pktsize bytes in byte mode.
    fn per_packet(&self) -> f64 {
        if self.bytes {
            self.mean_pktsize.0 as f64
        } else {
            1.0
        }
    }

    pub fn min_th(&self) -> f64 {
        self.min_th.unwrap_or(Self::DEFAULT_MIN_TH_PACKETS * self.per_packet())
    }

    pub fn max_th(&self) -> f64 {
        self.max_th.unwrap_or(Self::DEFAULT_MAX_TH_PACKETS * self.per_packet())
    }

    /// The buffer in the thresholds' unit, and the setting it comes from (for error messages).
    fn buffer(&self) -> (f64, &'static str) {
        let mean = self.mean_pktsize.0 as f64;
        let limit = self.limit();
        match (self.bytes, limit.packets, limit.bytes) {
            (false, Some(p), _) => (p as f64, "limit"),
            (false, None, b) => (
                b.map_or(f64::INFINITY, |b| b as f64 / mean),
                "limit_bytes / mean_pktsize",
            ),
            (true, _, Some(b)) => (b as f64, "limit_bytes"),
            (true, p, None) => (p.map_or(f64::INFINITY, |p| p as f64 * mean), "limit * mean_pktsize"),
        }
    }

    /// The profile in effect.
    pub fn profile(&self) -> RedProfile {
        self.profile.unwrap_or_default()
    }

    /// The table with every default filled in (`net::resolved`): profile, buffer, thresholds.
    pub fn resolved(&self) -> Self {
        let limit = self.limit();
        RedConfig {
            profile: Some(self.profile()),
            limit: limit.packets,
            limit_bytes: limit.bytes.map(Bytes),
            min_th: Some(self.min_th()),
            max_th: Some(self.max_th()),
            ..self.clone()
        }
    }

    fn params(&self) -> Params {
        Params {
            profile: self.profile(),
            limit: self.limit(),
            curve: DropCurve {
                min_th: self.min_th(),
                max_th: self.max_th(),
                max_p: self.max_p,
                gentle: self.gentle,
            },
            bytes: self.bytes,
            mean_pktsize: self.mean_pktsize.0 as f64,
            wait: self.wait,
            ecn: self.ecn,
            mark_forced: self.mark_forced,
            fixed_p: self.fixed_p,
        }
    }
}

impl QdiscConfig for RedConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        self.limit().validate(path)?;
        require_probability(&format!("{path}.w_q"), self.w_q)?;
        require_probability(&format!("{path}.max_p"), self.max_p)?;
        require_positive(&format!("{path}.mean_pktsize"), self.mean_pktsize.0 as f64)?;
        let (min_th, max_th) = (self.min_th(), self.max_th());
        require_non_negative(&format!("{path}.min_th"), min_th)?;
        require_positive(&format!("{path}.max_th"), max_th)?;
        // A step (min_th = max_th) has no probabilistic region: only forced marks make it useful.
        if min_th > max_th || (min_th == max_th && !self.mark_forced) {
            let relation = if self.mark_forced { "<=" } else { "<" };
            return Err(ScenarioError::new(
                format!("{path}.min_th"),
                format!("must be {relation} max_th ({max_th}), got {min_th}"),
            ));
        }
        let (buffer, buffer_name) = self.buffer();
        if max_th > buffer {
            return Err(ScenarioError::new(
                format!("{path}.max_th"),
                format!("must be <= {buffer_name} ({buffer}), got {max_th}"),
            ));
        }
        if let Some(p) = self.fixed_p {
            require_in(&format!("{path}.fixed_p"), p, 0.0, 1.0)?;
        }
        Ok(())
    }

    fn build(&self, link: &LinkInfo, rng: Rng) -> Box<dyn QueueDisc> {
        Box::new(Red::new(self, link, rng))
    }
}

/// RED's parameters in effect, resolved once from the config (Linux `red_parms`).
#[derive(Clone, Copy, Debug)]
struct Params {
    profile: RedProfile,
    limit: Limit,
    curve: DropCurve,
    /// Byte mode: the queue, the average and the thresholds in bytes.
    bytes: bool,
    /// Bytes; byte mode scales the drop probability by size/mean_pktsize.
    mean_pktsize: f64,
    wait: bool,
    ecn: bool,
    mark_forced: bool,
    fixed_p: Option<f64>,
}

/// RED's verdict on an arrival, before the buffer check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Decision {
    Pass,
    /// Probabilistic drop (or ECN mark).
    Early,
    Forced,
}

pub struct Red {
    params: Params,
    fifo: Fifo,
    average: RedAverage,
    spacing: Spacing,
    rng: Rng,
}

/// What spaces RED's early drops: the state behind `p_a`, one per profile.
#[derive(Clone, Copy, Debug)]
enum Spacing {
    /// F–J's `count`: arrivals since the last drop or mark, −1 while avg < min_th.
    /// In byte mode each accepted arrival adds size/mean_pktsize.
    Floyd93 { count: f64 },
    /// red.cc's `count` and `count_bytes`: arrivals and bytes since the last drop or mark,
    /// the arrival being judged included; `armed` is red.cc's `old`: the previous arrival
    /// already found the average ≥ min_th with more than one packet queued.
    Ns2 { count: u64, count_bytes: u64, armed: bool },
}

impl Spacing {
    fn new(profile: RedProfile) -> Self {
        match profile {
            RedProfile::Floyd93 => Spacing::Floyd93 { count: -1.0 },
            RedProfile::Ns2 => Spacing::Ns2 {
                count: 0,
                count_bytes: 0,
                armed: false,
            },
        }
    }

    /// Any drop restarts the spacing (red.cc resets on forced drops too), except F–J's
    /// −1 below min_th.
    fn restart(&mut self) {
        match self {
            Spacing::Floyd93 { count } => *count = count.min(0.0),
            Spacing::Ns2 { count, count_bytes, .. } => (*count, *count_bytes) = (0, 0),
        }
    }
}

impl Red {
    pub fn new(cfg: &RedConfig, link: &LinkInfo, rng: Rng) -> Self {
        let idle_rule = match cfg.profile() {
            RedProfile::Floyd93 => IdleRule::Decay,
            RedProfile::Ns2 => IdleRule::DecayThenSample,
        };
        Red {
            params: cfg.params(),
            fifo: Fifo::default(),
            average: RedAverage::new(cfg.w_q, cfg.mean_pktsize.0, link.rate_bps, idle_rule),
            spacing: Spacing::new(cfg.profile()),
            rng,
        }
    }

    /// The queue in the average's unit: packets, or bytes in byte mode.
    fn queued(&self, backlog: Backlog) -> f64 {
        if self.params.bytes {
            backlog.bytes as f64
        } else {
            backlog.packets as f64
        }
    }

    /// RED's decision for an arrival of `size` bytes at average `avg`, before the buffer bound.
    fn decide(&mut self, avg: f64, size: u32, backlog: Backlog) -> Decision {
        // Byte mode (F–J §4) makes p ∝ size.
        let scale = if self.params.bytes {
            size as f64 / self.params.mean_pktsize
        } else {
            1.0
        };
        if let Some(p) = self.params.fixed_p {
            // In byte mode scaled by size too, as ns-2's `P_testFRp_` (red-pd.cc).
            return if self.rng.gen::<f64>() < (scale * p).min(1.0) {
                Decision::Early
            } else {
                Decision::Pass
            };
        }
        match self.spacing {
            Spacing::Floyd93 { count } => self.decide_floyd93(count, avg, scale),
            Spacing::Ns2 { .. } => self.decide_ns2(avg, size, scale, backlog),
        }
    }

    /// F–J Fig. 2.
    fn decide_floyd93(&mut self, count: f64, avg: f64, scale: f64) -> Decision {
        let (decision, count) = match self.params.curve.region(avg) {
            Region::Below => (Decision::Pass, -1.0),
            Region::Forced => (Decision::Forced, 0.0),
            Region::Early(p_b) => {
                // F–J Fig. 2: increment count, then p_a = p_b/(1 − count·p_b).
                // In byte mode the arrival is judged at count + 1 and its p_a scaled by
                // size/mean_pktsize (the order of ns-2's red.cc), and once accepted it adds
                // its size in mean-size packets to count. So at any count p ∝ size; F–J's
                // p_b·size inside the uniformization would drop a 3x larger packet about 7x
                // as often as a small one.
                let p_a = (scale * uniformized(p_b, count + 1.0, self.params.wait)).min(1.0);
                if self.rng.gen::<f64>() < p_a {
                    (Decision::Early, 0.0)
                } else {
                    (Decision::Pass, count + scale)
                }
            }
        };
        self.spacing = Spacing::Floyd93 { count };
        decision
    }

    /// ns-2.35 red.cc's `enque` and `drop_early` (module docs: the guard and the first packet).
    fn decide_ns2(&mut self, avg: f64, size: u32, scale: f64, backlog: Backlog) -> Decision {
        let guard_open = self.queued(backlog) > 1.0;
        let mean_pktsize = self.params.mean_pktsize as u64;
        let Spacing::Ns2 {
            count,
            count_bytes,
            armed,
        } = &mut self.spacing
        else {
            unreachable!("decide_ns2 runs only with the ns-2 spacing")
        };
        *count += 1;
        *count_bytes += u64::from(size);
        if !guard_open || avg < self.params.curve.min_th {
            *armed = false;
            return Decision::Pass;
        }
        let p_b = match self.params.curve.region(avg) {
            Region::Forced => return Decision::Forced,
            Region::Early(p_b) => p_b,
            Region::Below => unreachable!("avg ≥ min_th"),
        };
        if !*armed {
            // The average has just come above min_th with a queue: this arrival passes and
            // starts the count.
            (*count, *count_bytes, *armed) = (1, u64::from(size), true);
            return Decision::Pass;
        }
        // red.cc's modify_p: in byte mode the count is whole mean-size packets.
        let spaced = if self.params.bytes {
            (*count_bytes / mean_pktsize) as f64
        } else {
            *count as f64
        };
        let mut p_a = uniformized(p_b, spaced, self.params.wait);
        if p_a < 1.0 {
            p_a *= scale;
        }
        if self.rng.gen::<f64>() < p_a.min(1.0) {
            (*count, *count_bytes) = (0, 0);
            Decision::Early
        } else {
            Decision::Pass
        }
    }

    /// Whether the arrival overflows the buffer. ns-2 (red.cc) compares the queue found before
    /// the arrival with the limit in the queue's unit, so in byte mode an arrival is admitted
    /// while fewer than `limit_bytes` (or `limit` mean-size packets) are queued.
    fn overflows(&self, size: u32, backlog: Backlog) -> bool {
        let limit = self.params.limit;
        match self.params.profile {
            RedProfile::Floyd93 => !limit.admits(backlog.packets, backlog.bytes, size),
            RedProfile::Ns2 if self.params.bytes => {
                let bytes = limit
                    .bytes
                    .or(limit.packets.map(|p| p * self.params.mean_pktsize as u64));
                bytes.is_some_and(|b| backlog.bytes >= b)
            }
            RedProfile::Ns2 => limit.packets.is_some_and(|p| backlog.packets as u64 >= p),
        }
    }

    /// Samples the queue for an arrival at `now`: RED's average as the arrival finds it (F–J Fig. 2).
    pub(super) fn average_on_arrival(&mut self, ctx: &QdiscCtx) -> f64 {
        self.average.on_arrival(self.queued(ctx.backlog()), ctx.now)
    }

    /// RED's verdict on an arrival that found the average at `avg`: drop, mark or queue it
    /// (F–J Fig. 2's decision, then the buffer bound). CHOKe runs its match step between
    /// [`Self::average_on_arrival`] and this.
    pub(super) fn admit(&mut self, id: PacketId, avg: f64, ctx: &mut QdiscCtx) -> Verdict {
        let size = ctx.packets[id].size;
        let backlog = ctx.backlog();
        let decision = self.decide(avg, size, backlog);
        // ns-2 judges the buffer after its early decision and lets a full buffer override it.
        if self.params.profile == RedProfile::Ns2 && self.overflows(size, backlog) {
            self.spacing.restart();
            return Verdict::Dropped(DropReason::Overflow);
        }
        match decision {
            Decision::Pass => {}
            Decision::Early if self.params.ecn && ctx.packets[id].ecn != Ecn::NotEct => ctx.mark(id),
            Decision::Early => return Verdict::Dropped(DropReason::Early),
            Decision::Forced if self.params.mark_forced && self.params.ecn && ctx.packets[id].ecn != Ecn::NotEct => {
                self.spacing.restart();
                ctx.mark(id);
            }
            Decision::Forced => {
                self.spacing.restart();
                return Verdict::Dropped(DropReason::Forced);
            }
        }
        if self.overflows(size, backlog) {
            // A buffer overflow is a drop too: restart the count (ns-2 red.cc), unless below min_th.
            self.spacing.restart();
            return Verdict::Dropped(DropReason::Overflow);
        }
        self.fifo.push(id);
        Verdict::Enqueued
    }

    /// RED's drop curve (its thresholds).
    pub(super) fn curve(&self) -> &DropCurve {
        &self.params.curve
    }

    /// The queue itself, for a discipline that draws from it (CHOKe).
    pub(super) fn queue_mut(&mut self) -> &mut Fifo {
        &mut self.fifo
    }
}

impl QueueDisc for Red {
    fn enqueue(&mut self, id: PacketId, ctx: &mut QdiscCtx) -> Verdict {
        let avg = self.average_on_arrival(ctx);
        self.admit(id, avg, ctx)
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        let next = self.fifo.pop(ctx.packets);
        if next.is_none() {
            self.average.on_idle(ctx.now);
        }
        next
    }

    fn gauges(&self) -> Gauges {
        Gauges {
            average: Some(self.average.value()),
            ..Gauges::default()
        }
    }

    fn set_link_rate(&mut self, rate_bps: f64) {
        self.average.set_link_rate(rate_bps);
    }

    fn can_mark(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Packet;
    use crate::qdisc::testing::{link, QdiscHarness, MS};
    use crate::rng::stream;

    /// A 1000-byte packet takes exactly 1 ms at 8 Mb/s.
    const LINK: LinkInfo = link(8e6);

    fn red(cfg: RedConfig) -> Red {
        cfg.validate("q").unwrap();
        Red::new(&cfg, &LINK, stream(7, "red-test"))
    }

    /// Mean and variance of the gap between drops at a fixed p_b, from the closed
    /// form in the module docs: P(gap > k) = max(0, (1 − (k+1)·p_b) / (1 − p_b)).
    fn gap_moments(p_b: f64) -> (f64, f64) {
        let survival = |k: f64| ((1.0 - (k + 1.0) * p_b) / (1.0 - p_b)).max(0.0);
        let (mut mean, mut second, mut k) = (0.0, 0.0, 0.0);
        while survival(k) > 0.0 {
            mean += survival(k);
            second += (2.0 * k + 1.0) * survival(k);
            k += 1.0;
        }
        (mean, second - mean * mean)
    }

    /// Renewal theory: the number of drops in n arrivals has variance ≈ n·Var(gap)/E[gap]³.
    fn drop_count_sigma(n: usize, p_b: f64) -> f64 {
        let (mean, var) = gap_moments(p_b);
        (n as f64 * var / mean.powi(3)).sqrt()
    }

    /// Decisions for `n` arrivals of `size` bytes at a fixed average: the gaps between successive drops.
    fn gaps_at(red: &mut Red, avg: f64, size: u32, n: usize) -> Vec<f64> {
        let mut gaps = Vec::new();
        let mut since: Option<f64> = None;
        for _ in 0..n {
            since = since.map(|s| s + 1.0);
            if red.decide(avg, size, Backlog::default()) == Decision::Early {
                gaps.extend(since);
                since = Some(0.0);
            }
        }
        gaps
    }

    fn mean_and_variance(xs: &[f64]) -> (f64, f64) {
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        (
            mean,
            xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (xs.len() - 1) as f64,
        )
    }

    /// A RED queue held at `q0` packets of 1000 bytes with its average equal to `q0`.
    fn held(cfg: RedConfig, q0: usize) -> QdiscHarness<Red> {
        let mut h = QdiscHarness::new(Box::new(red(cfg)));
        for _ in 0..q0 {
            let id = h.arena.alloc(Packet {
                size: 1000,
                ..Default::default()
            });
            h.q.fifo.push(id);
            h.backlog.add(1000);
        }
        h.q.average.avg = q0 as f64;
        h.q.average.idle_since = None;
        h
    }

    /// Offers `packet` to a [`held`] queue; an accepted arrival is followed by one
    /// departure, so the queue stays at `q0`. Returns the verdict and the arrival's ECN field.
    fn offer_held(h: &mut QdiscHarness<Red>, packet: Packet) -> (Verdict, Ecn) {
        let (verdict, packet) = h.offer(0, packet);
        if verdict == Verdict::Enqueued {
            h.depart(0).unwrap();
        }
        (verdict, packet.ecn)
    }

    #[test]
    fn drop_curve_is_linear_between_thresholds_and_gentle_above() {
        let curve = DropCurve {
            min_th: 5.0,
            max_th: 15.0,
            max_p: 0.1,
            gentle: false,
        };
        assert_eq!(curve.region(4.999), Region::Below);
        assert_eq!(curve.region(5.0), Region::Early(0.0));
        assert_eq!(curve.region(10.0), Region::Early(0.05));
        assert_eq!(curve.region(15.0), Region::Forced);
        let gentle = DropCurve { gentle: true, ..curve };
        assert_eq!(gentle.region(10.0), Region::Early(0.05));
        assert_eq!(gentle.region(15.0), Region::Early(0.1));
        assert_eq!(gentle.region(22.5), Region::Early(0.55));
        assert_eq!(gentle.region(30.0), Region::Forced);
    }

    #[test]
    fn uniformized_probability_follows_count() {
        assert_eq!(uniformized(0.1, 0.0, false), 0.1);
        assert!((uniformized(0.1, 5.0, false) - 0.2).abs() < 1e-15);
        assert_eq!(uniformized(0.1, 10.0, false), 1.0);
        assert_eq!(uniformized(0.1, 9.0, true), 0.0);
        assert!((uniformized(0.1, 10.0, true) - 0.1).abs() < 1e-15);
        assert!((uniformized(0.1, 15.0, true) - 0.2).abs() < 1e-15);
        assert_eq!(uniformized(0.1, 20.0, true), 1.0);
    }

    #[test]
    fn drop_fraction_at_a_fixed_average_matches_the_closed_form() {
        // max_p 0.1 over [5, 15]: p_b = 0.01·(avg − 5).
        for (avg, p_b) in [(10.0, 0.05), (8.0, 0.03)] {
            let mut q = red(RedConfig::default());
            let n = 100_000;
            let drops = gaps_at(&mut q, avg, 1000, n).len() + 1;
            let expected = n as f64 / gap_moments(p_b).0;
            let sigma = drop_count_sigma(n, p_b);
            assert!(
                (drops as f64 - expected).abs() < 3.0 * sigma,
                "p_b {p_b}: {drops} drops, expected {expected:.0} ± {sigma:.0}"
            );
        }
        // Integer 1/p_b: the fraction is exactly 2·p_b (not F–J §7's 2·p_b/(1 + p_b)).
        assert!((1.0 / gap_moments(0.05).0 - 0.1).abs() < 1e-12);
    }

    #[test]
    fn uniformized_gaps_vary_less_than_geometric_ones() {
        let mut q = red(RedConfig::default());
        let gaps = gaps_at(&mut q, 10.0, 1000, 200_000);
        let (mean, var) = mean_and_variance(&gaps);
        let p = 1.0 / mean;
        let geometric = (1.0 - p) / (p * p);
        // p_b = 0.05: gaps uniform on {1..19}, mean 10, variance (19² − 1)/12 = 30; geometric: 90.
        assert!((mean - 10.0).abs() < 0.1, "mean gap {mean}");
        assert!(var < 0.5 * geometric, "variance {var} vs geometric {geometric}");
        assert!((var - 30.0).abs() < 0.05 * 30.0, "variance {var}");
        assert!(gaps.iter().all(|&g| (1.0..=20.0).contains(&g)));
    }

    #[test]
    fn wait_spaces_drops_one_to_two_over_p_b_apart() {
        let mut q = red(RedConfig {
            wait: true,
            ..Default::default()
        });
        let gaps = gaps_at(&mut q, 10.0, 1000, 100_000);
        // p_b = 0.05: no drop before count·p_b ≥ 1 (gap 20), then uniform: gaps on {20..39}, mean 29.5.
        let (mean, var) = mean_and_variance(&gaps);
        assert!(gaps.iter().all(|&g| (20.0..=40.0).contains(&g)));
        let sigma = (var / gaps.len() as f64).sqrt();
        assert!((mean - 29.5).abs() < 3.0 * sigma, "mean gap {mean} ± {sigma}");
    }

    #[test]
    fn average_decays_by_one_minus_w_q_to_the_idle_packet_times() {
        let w_q = 0.1;
        let mut h = QdiscHarness::new(Box::new(red(RedConfig {
            w_q,
            ..Default::default()
        })));
        // The queue starts idle at t = 0 with avg 0; then 4 arrivals at 1 ms: avg = w_q·(0 + 1 + 2 + ...).
        for _ in 0..4 {
            assert_eq!(h.arrive(MS, 0, 1000), Verdict::Enqueued);
        }
        let busy = (1.0 - w_q) * ((1.0 - w_q) * w_q + w_q * 2.0) + w_q * 3.0;
        assert!((h.q.average.value() - busy).abs() < 1e-15, "{}", h.q.average.value());
        // Drain: the last dequeue finds the queue empty at 9 ms, so the link is idle from then.
        for t in 2..=5 {
            h.depart(t * MS);
        }
        h.depart(9 * MS);
        // An arrival 7 packet times later: avg ← (1 − w_q)^7·avg.
        assert_eq!(h.arrive(16 * MS, 0, 1000), Verdict::Enqueued);
        let decayed = busy * (1.0 - w_q).powi(7);
        assert!(
            (h.q.average.value() - decayed).abs() < 1e-15 * busy,
            "{} vs {decayed}",
            h.q.average.value()
        );
        // The next arrival finds the link busy: an ordinary EWMA step with q = 1.
        assert_eq!(h.arrive(16 * MS + 1, 0, 1000), Verdict::Enqueued);
        assert!((h.q.average.value() - ((1.0 - w_q) * decayed + w_q)).abs() < 1e-15);
    }

    /// A link whose rate halves (`rate_changes`) takes twice as long per packet: the same
    /// idle time is half as many packet times.
    #[test]
    fn idle_time_counts_in_packet_times_at_the_link_s_current_rate() {
        let w_q = 0.1;
        let mut h = QdiscHarness::new(Box::new(red(RedConfig {
            w_q,
            ..Default::default()
        })));
        for _ in 0..4 {
            assert_eq!(h.arrive(MS, 0, 1000), Verdict::Enqueued);
        }
        for t in 2..=6 {
            h.depart(t * MS); // the last finds the queue empty: idle from 6 ms
        }
        let before = h.q.average.value();
        assert!(before > 0.1, "{before}");
        h.q.set_link_rate(LINK.rate_bps / 2.0);
        // 8 ms idle: 8 packet times of 1 ms at the link's first rate, 4 at half of it.
        assert_eq!(h.arrive(14 * MS, 0, 1000), Verdict::Enqueued);
        let decayed = before * (1.0 - w_q).powi(4);
        assert!(
            (h.q.average.value() - decayed).abs() < 1e-15 * before,
            "{}",
            h.q.average.value()
        );
    }

    #[test]
    fn average_counts_bytes_in_byte_mode() {
        for (bytes, expected) in [(false, 2.0), (true, 3000.0)] {
            let mut h = QdiscHarness::new(Box::new(red(RedConfig {
                w_q: 1.0,
                bytes,
                ..Default::default()
            })));
            for _ in 0..3 {
                h.arrive(0, 0, 1500);
            }
            // w_q = 1: avg is the queue the third arrival found, two 1500-byte packets.
            assert_eq!(h.q.gauges().average, Some(expected));
        }
    }

    #[test]
    fn fixed_p_drops_independently_of_the_average() {
        let p = 0.2;
        // An empty queue: avg stays below min_th, where RED itself would never drop. In byte
        // mode (mean 1000 B) a 500-byte packet is dropped with p/2, as ns-2's P_testFRp_.
        for (bytes, size, expected) in [(false, 500, p), (true, 1000, p), (true, 500, p / 2.0)] {
            let mut h = held(
                RedConfig {
                    fixed_p: Some(p),
                    bytes,
                    ..Default::default()
                },
                0,
            );
            let n = 100_000;
            let drops = (0..n)
                .filter(|_| {
                    offer_held(
                        &mut h,
                        Packet {
                            size,
                            ..Default::default()
                        },
                    )
                    .0 == Verdict::Dropped(DropReason::Early)
                })
                .count();
            let sigma = (n as f64 * expected * (1.0 - expected)).sqrt();
            assert!(
                (drops as f64 - n as f64 * expected).abs() < 3.0 * sigma,
                "bytes {bytes}, {size} B: {drops} drops of {n}, expected {} ± {sigma:.0}",
                n as f64 * expected
            );
            assert!(h.q.average.value() < 5.0);
        }
    }

    #[test]
    fn gentle_mode_drops_probabilistically_between_max_th_and_twice_max_th() {
        let n = 50_000;
        let mut plain = red(RedConfig::default());
        assert!((0..n).all(|_| plain.decide(18.0, 1000, Backlog::default()) == Decision::Forced));
        let mut gentle = red(RedConfig {
            gentle: true,
            ..Default::default()
        });
        // avg 18: p_b = 0.1 + 0.9·3/15 = 0.28.
        let drops = gaps_at(&mut gentle, 18.0, 1000, n).len() + 1;
        let expected = n as f64 / gap_moments(0.28).0;
        let sigma = drop_count_sigma(n, 0.28);
        assert!(
            (drops as f64 - expected).abs() < 3.0 * sigma,
            "{drops} drops, expected {expected:.0} ± {sigma:.0}"
        );
        assert_eq!(gentle.decide(30.0, 1000, Backlog::default()), Decision::Forced);
    }

    #[test]
    fn ecn_marks_capable_packets_early_but_forced_drops_stay_drops() {
        let ecn = RedConfig {
            ecn: true,
            ..Default::default()
        };
        let n = 20_000;
        let mut h = held(ecn.clone(), 10);
        let ect = Packet {
            size: 1000,
            ecn: Ecn::Ect0,
            ..Default::default()
        };
        let outcomes: Vec<_> = (0..n).map(|_| offer_held(&mut h, ect)).collect();
        assert!(outcomes.iter().all(|&(v, _)| v == Verdict::Enqueued));
        let marks = outcomes.iter().filter(|&&(_, e)| e == Ecn::Ce).count();
        // avg 10: p_b = 0.05, marks are spaced exactly as drops would be.
        let expected = n as f64 / gap_moments(0.05).0;
        assert!(
            (marks as f64 - expected).abs() < 3.0 * drop_count_sigma(n, 0.05),
            "{marks} marks, expected {expected:.0}"
        );
        assert_eq!(h.marks, marks as u64);
        let mut h = held(ecn.clone(), 10);
        let not_ect = Packet {
            size: 1000,
            ..Default::default()
        };
        let early = (0..n)
            .filter(|_| offer_held(&mut h, not_ect).0 == Verdict::Dropped(DropReason::Early))
            .count();
        assert!(
            (early as f64 - expected).abs() < 3.0 * drop_count_sigma(n, 0.05),
            "{early} early drops"
        );
        let mut h = held(ecn, 16);
        assert_eq!(
            offer_held(&mut h, ect),
            (Verdict::Dropped(DropReason::Forced), Ecn::Ect0)
        );
    }

    #[test]
    fn a_step_marks_every_ecn_capable_arrival_above_k_on_the_instantaneous_queue() {
        // DCTCP's K = 20: min_th = max_th = 21, w_q = 1 (the average is the queue), forced marks.
        let step = RedConfig {
            w_q: 1.0,
            min_th: Some(21.0),
            max_th: Some(21.0),
            ecn: true,
            mark_forced: true,
            limit: Some(100),
            ..Default::default()
        };
        step.validate("q").unwrap();
        let mut h = QdiscHarness::new(Box::new(red(step.clone())));
        let ect = Packet {
            size: 1000,
            ecn: Ecn::Ect0,
            ..Default::default()
        };
        // Arrivals finding 0..=20 queued pass unmarked; from 21 queued on, every one is marked, none dropped.
        let marked: Vec<bool> = (0..40).map(|_| h.offer(0, ect).1.ecn == Ecn::Ce).collect();
        assert!(
            marked[..21].iter().all(|m| !m) && marked[21..].iter().all(|&m| m),
            "{marked:?}"
        );
        assert_eq!((h.marks, h.drops(DropReason::Forced)), (19, 0));
        // A Not-ECT arrival above K is dropped; and min_th = max_th needs mark_forced.
        assert_eq!(
            h.offer(
                0,
                Packet {
                    ecn: Ecn::NotEct,
                    ..ect
                }
            )
            .0,
            Verdict::Dropped(DropReason::Forced)
        );
        let err = RedConfig {
            mark_forced: false,
            ..step
        }
        .validate("q")
        .unwrap_err()
        .to_string();
        assert_eq!(err, "q.min_th: must be < max_th (21), got 21");
    }

    #[test]
    fn byte_mode_drop_probability_is_proportional_to_size() {
        // Thresholds 5 000 B and 15 000 B; avg 10 000 B: p_b = 0.05.
        let cfg = RedConfig {
            bytes: true,
            ..Default::default()
        };
        let trials = 40_000;
        for size in [500, 1000, 1500] {
            let mut q = red(cfg.clone());
            // Each trial starts just above min_th (count = −1 → 0): p_a = p_b·size/mean_pktsize exactly.
            let drops = (0..trials)
                .filter(|_| {
                    q.decide(0.0, size, Backlog::default());
                    q.decide(10_000.0, size, Backlog::default()) == Decision::Early
                })
                .count();
            let p = 0.05 * size as f64 / 1000.0;
            let sigma = (trials as f64 * p * (1.0 - p)).sqrt();
            assert!(
                (drops as f64 - trials as f64 * p).abs() < 3.0 * sigma,
                "size {size}: {drops} drops of {trials}, expected p = {p}"
            );
        }
        // A long mixed stream: 1500-byte packets are dropped about 3x as often as 500-byte ones.
        let mut q = red(cfg);
        let (mut small, mut large) = (0, 0);
        for i in 0..200_000 {
            let size = if i % 2 == 0 { 500 } else { 1500 };
            if q.decide(10_000.0, size, Backlog::default()) == Decision::Early {
                *(if size == 500 { &mut small } else { &mut large }) += 1;
            }
        }
        let ratio = large as f64 / small as f64;
        // Exactly 3 at every count below the cap; the cap at count·p_b ≥ 1 shaves O(p_b).
        // Counting noise: ~2 500 and ~7 000 drops, 3σ of the ratio ≈ 7 %.
        assert!(
            (ratio - 3.0).abs() < 0.3,
            "large/small drop ratio {ratio} ({large}/{small})"
        );
    }

    #[test]
    fn buffer_overflow_is_not_a_forced_drop() {
        // w_q tiny: the average stays below min_th while the 20-packet buffer fills.
        let mut h = QdiscHarness::new(Box::new(red(RedConfig {
            limit: Some(20),
            w_q: 1e-6,
            ..Default::default()
        })));
        let verdicts: Vec<_> = (0..21).map(|_| h.arrive(0, 0, 1000)).collect();
        assert!(verdicts[..20].iter().all(|&v| v == Verdict::Enqueued));
        assert_eq!(verdicts[20], Verdict::Dropped(DropReason::Overflow));
        assert_eq!((h.drops(DropReason::Early), h.drops(DropReason::Forced)), (0, 0));
        assert_eq!(h.marks, 0);
    }

    fn ns2(cfg: RedConfig) -> RedConfig {
        RedConfig {
            profile: Some(RedProfile::Ns2),
            ..cfg
        }
    }

    #[test]
    fn ns2_profile_never_drops_while_at_most_one_packet_is_queued() {
        // The average stays above max_th for 100 arrivals (w_q = 0.002 pulls it from 20 to 16.5).
        let offer_100 = |cfg: RedConfig| {
            let mut h = held(cfg, 1);
            h.q.average.avg = 20.0;
            (0..100)
                .filter(|_| offer_held(&mut h, Packet::default()).0 != Verdict::Enqueued)
                .count()
        };
        assert_eq!(offer_100(ns2(RedConfig::default())), 0);
        assert_eq!(offer_100(RedConfig::default()), 100);
    }

    #[test]
    fn ns2_profile_spares_the_first_arrival_above_min_th_and_counts_from_it() {
        // p_b = 0.9 at avg 14: from count 2 on, p_a = 1 (count·p_b ≥ 1), and after a drop count 1 gives 0.9/0.1 ≥ 1.
        let cfg = ns2(RedConfig {
            max_p: 1.0,
            ..Default::default()
        });
        let mut h = held(cfg, 5);
        h.q.average.avg = 14.0;
        let verdicts: Vec<Verdict> = (0..4).map(|_| offer_held(&mut h, Packet::default()).0).collect();
        let early = Verdict::Dropped(DropReason::Early);
        assert_eq!(verdicts, [Verdict::Enqueued, early, early, early]);
        // A queue of one packet disarms the rule: the next arrival above min_th with a queue passes again.
        while h.backlog.packets > 1 {
            h.depart(0).unwrap();
        }
        assert_eq!(offer_held(&mut h, Packet::default()).0, Verdict::Enqueued);
        assert_eq!(h.arrive(0, 0, 1000), Verdict::Enqueued);
        h.q.average.avg = 14.0;
        let verdicts: Vec<Verdict> = (0..2).map(|_| offer_held(&mut h, Packet::default()).0).collect();
        assert_eq!(verdicts, [Verdict::Enqueued, early]);
    }

    #[test]
    fn ns2_profile_after_idle_decays_by_whole_packet_times_then_samples() {
        let w_q = 0.1;
        let average_after_idle = |cfg: RedConfig| {
            let mut h = QdiscHarness::new(Box::new(red(RedConfig { w_q, ..cfg })));
            for _ in 0..4 {
                h.arrive(MS, 0, 1000);
            }
            let busy = h.q.average.value();
            for t in 2..=5 {
                h.depart(t * MS);
            }
            h.depart(9 * MS);
            // 7.5 packet times idle.
            h.arrive(16 * MS + MS / 2, 0, 1000);
            (busy, h.q.average.value())
        };
        let (busy, after) = average_after_idle(ns2(RedConfig::default()));
        let expected = (1.0 - w_q).powi(8) * busy;
        assert!((after - expected).abs() < 1e-15 * busy, "{after} vs {expected}");
        let (busy, after) = average_after_idle(RedConfig::default());
        let expected = (1.0 - w_q).powf(7.5) * busy;
        assert!((after - expected).abs() < 1e-15 * busy, "{after} vs {expected}");
    }

    #[test]
    fn ns2_profile_byte_buffer_admits_while_fewer_bytes_than_the_limit_are_queued() {
        let held_after_5 = |cfg: RedConfig| {
            let mut h = QdiscHarness::new(Box::new(red(RedConfig {
                bytes: true,
                limit_bytes: Some(Bytes(3000)),
                min_th: Some(1000.0),
                max_th: Some(3000.0),
                ..cfg
            })));
            (0..5).filter(|_| h.arrive(0, 0, 1400) == Verdict::Enqueued).count()
        };
        // 0, 1400 and 2800 bytes queued are each below 3000: the third packet is admitted and the buffer holds 4200.
        assert_eq!(held_after_5(ns2(RedConfig::default())), 3);
        assert_eq!(held_after_5(RedConfig::default()), 2);
    }
}
