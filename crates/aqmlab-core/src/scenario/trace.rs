//! A link capacity trace in Mahimahi's format (`trace = "cell.up"` in a link table): one line
//! per delivery opportunity, the millisecond at which it comes; several lines with one
//! millisecond are several opportunities in it. Read as Mahimahi's mm-link reads it
//! (src/frontend/link_queue.cc, LinkQueue's constructor): every line a whole number, none
//! empty, non-decreasing, at least one, the last above 0. The trace repeats after its last
//! millisecond (mm-link's default; `base_timestamp_ += schedule_.back()` on wrapping), so an
//! opportunity at 0 comes at the same instant as the last one of the loop before.

use crate::time::Time;
use serde::{Deserialize, Deserializer};
use std::sync::Arc;

/// Bytes one delivery opportunity carries: Mahimahi's `PACKET_SIZE` (link_queue.hh: 1504,
/// "default max TUN payload size"). Bytes an opportunity has left after a packet serve the
/// next ones waiting (link_queue.cc rationalize(): "restore the surplus bytes").
pub const OPPORTUNITY_BYTES: u32 = 1504;

/// A trace of at most this many lines is read (it is held for the whole run): ten million
/// lines is about 2.8 hours at 12 Mbit/s, Mahimahi's cellular traces are 10⁴–10⁶.
pub const MAX_TRACE_LINES: usize = 10_000_000;

/// The opportunities of a trace, as read from its file.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkTrace {
    /// The file as the scenario names it.
    pub file: String,
    /// Each opportunity's time within one loop, nanoseconds, non-decreasing.
    pub times: Arc<[Time]>,
}

impl LinkTrace {
    /// Parses a trace's text; errors name the line (`line 3: ...`).
    pub fn parse(file: &str, text: &str) -> Result<LinkTrace, String> {
        let mut times: Vec<Time> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let at = |what: String| format!("{file}: line {}: {what}", i + 1);
            if times.len() == MAX_TRACE_LINES {
                return Err(at(format!("a trace has at most {MAX_TRACE_LINES} lines")));
            }
            let ms: u64 = line
                .trim()
                .parse()
                .map_err(|_| at(format!("must be a whole number of milliseconds, got {line:?}")))?;
            let time = ms
                .checked_mul(1_000_000)
                .filter(|t| *t <= crate::time::from_secs(crate::time::MAX_SECONDS))
                .ok_or_else(|| at(format!("{ms} ms is beyond the longest run")))?;
            if let Some(&before) = times.last() {
                if time < before {
                    return Err(at(format!(
                        "timestamps must not decrease: {ms} ms after {} ms",
                        before / 1_000_000
                    )));
                }
            }
            times.push(time);
        }
        match times.last() {
            None => Err(format!(
                "{file}: no timestamps (a trace has a line per delivery opportunity)"
            )),
            Some(0) => Err(format!("{file}: the trace must last more than 0 ms")),
            Some(_) => Ok(LinkTrace {
                file: file.to_string(),
                times: times.into(),
            }),
        }
    }

    /// How long one loop lasts: its last opportunity's time.
    pub fn period(&self) -> Time {
        *self.times.last().expect("parse keeps at least one")
    }

    /// The mean capacity of the trace, bits/s: its opportunities' bytes over its period.
    pub fn mean_rate_bps(&self) -> f64 {
        let bits = self.times.len() as f64 * f64::from(OPPORTUNITY_BYTES) * 8.0;
        bits / crate::time::to_secs(self.period())
    }
}

/// A trace is written as the path of its file, which is read when the scenario is.
impl<'de> Deserialize<'de> for LinkTrace {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let file = String::deserialize(d)?;
        let text = std::fs::read_to_string(&file).map_err(|e| D::Error::custom(format!("{file}: {e}")))?;
        LinkTrace::parse(&file, &text).map_err(D::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_milliseconds_and_repeats_are_several_opportunities() {
        let t = LinkTrace::parse("t", "1\n1\n3\n").unwrap();
        assert_eq!(&t.times[..], &[1_000_000, 1_000_000, 3_000_000]);
        assert_eq!(t.period(), 3_000_000);
        // Three opportunities of 1504 bytes in 3 ms.
        assert_eq!(t.mean_rate_bps(), 3.0 * 1504.0 * 8.0 / 0.003);
    }

    #[test]
    fn errors_name_the_file_and_the_line() {
        let cases = [
            ("", "t: no timestamps"),
            ("0\n0\n", "t: the trace must last more than 0 ms"),
            (
                "1\n\n2\n",
                "t: line 2: must be a whole number of milliseconds, got \"\"",
            ),
            ("1\n5\n3\n", "t: line 3: timestamps must not decrease: 3 ms after 5 ms"),
            (
                "1\n2.5\n",
                "t: line 2: must be a whole number of milliseconds, got \"2.5\"",
            ),
            ("-1\n", "t: line 1: must be a whole number"),
        ];
        for (text, expected) in cases {
            let err = LinkTrace::parse("t", text).unwrap_err();
            assert!(err.starts_with(expected), "{text:?}: {err}");
        }
    }
}
