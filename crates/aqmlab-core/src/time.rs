//! Simulated time: integer nanoseconds, so that runs are exact and portable.

/// Simulated time in nanoseconds since the start of the run.
pub type Time = u64;

pub const NANOS_PER_SEC: u64 = 1_000_000_000;

/// The longest time a scenario may give: 1e9 s (about 32 years). In nanoseconds this is 1e18,
/// so a run's clock (a u64) can add several such times without overflowing; `units` refuses
/// a longer one where it is read.
pub const MAX_SECONDS: f64 = 1e9;
/// The shortest time other than 0: the clock's tick, 1 ns. A shorter one would round to 0,
/// and a period of 0 can repeat forever without the clock moving on.
pub const MIN_SECONDS: f64 = 1e-9;

/// A time no run reaches: 2^62 ns (146 years). Durations and every other time
/// of a scenario are at most 1e18 ns ([`MAX_SECONDS`]), so the clock plus a
/// few intervals clamped here stays below `u64::MAX`, however small a rate is.
pub const FAR_FUTURE: Time = 1 << 62;

/// Seconds (f64) to nanoseconds, rounded to the nearest nanosecond and clamped to [0, FAR_FUTURE].
pub fn from_secs(s: f64) -> Time {
    ((s * NANOS_PER_SEC as f64).round().max(0.0) as Time).min(FAR_FUTURE)
}

/// Nanoseconds to seconds.
pub fn to_secs(t: Time) -> f64 {
    t as f64 / NANOS_PER_SEC as f64
}

/// Time to serialize `bytes` on a link of `rate_bps`, rounded up to a whole nanosecond
/// (at most FAR_FUTURE).
pub fn tx_time(bytes: u32, rate_bps: f64) -> Time {
    (((bytes as f64 * 8.0 * NANOS_PER_SEC as f64) / rate_bps).ceil() as Time).min(FAR_FUTURE)
}
