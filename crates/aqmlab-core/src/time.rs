//! Simulated time: integer nanoseconds, so that runs are exact and portable.

/// Simulated time in nanoseconds since the start of the run.
pub type Time = u64;

pub const NANOS_PER_SEC: u64 = 1_000_000_000;

/// Seconds (f64) to nanoseconds, rounded to the nearest nanosecond.
pub fn from_secs(s: f64) -> Time {
    (s * NANOS_PER_SEC as f64).round().max(0.0) as Time
}

/// Nanoseconds to seconds.
pub fn to_secs(t: Time) -> f64 {
    t as f64 / NANOS_PER_SEC as f64
}

/// Time to serialize `bytes` on a link of `rate_bps`, rounded up to a whole nanosecond.
pub fn tx_time(bytes: u32, rate_bps: f64) -> Time {
    ((bytes as f64 * 8.0 * NANOS_PER_SEC as f64) / rate_bps).ceil() as Time
}
