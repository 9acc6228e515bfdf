//! Quantities with units: rates (`"10Mbps"`, `"1.5 Mb/s"`), times (`"1ms"`, `"2s"`,
//! `"1h"`) and sizes (`"64KB"` = 64 000 bytes, `"64KiB"` = 65 536 bytes, `"1000B"`).
//!
//! The rule (docs/scenario.md, "Units"): a string carries its unit; a number is in
//! base units (bit/s, s, bytes) where a program writes it (a Python dict, JSON), but
//! in a scenario *file* a quantity must carry its unit, so that `delay = 10` (ten
//! seconds, not milliseconds) cannot slip through: it is an error saying what to
//! write. Zero needs no unit anywhere. Whoever reads a file says so with
//! [`reading_file`].
//!
//! Every quantity of a scenario is read here, so this is where each is checked
//! for being a finite number no larger than its kind's limit ([`MAX_RATE_BPS`],
//! [`MAX_SECONDS`], [`MAX_BYTES`]), a rate for being 0 or at least [`MIN_RATE_BPS`],
//! and a time for being 0 or at least one tick of the clock ([`MIN_SECONDS`]; the clock's
//! bounds are `time`'s);
//! whether it may be zero or negative is the field's own check (`validate`).

use crate::time::{from_secs, Time, MAX_SECONDS, MIN_SECONDS};
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize};
use std::cell::Cell;
use std::fmt;

thread_local! {
    /// Whether the scenario being read on this thread is a file (see [`reading_file`]).
    static READING_FILE: Cell<bool> = const { Cell::new(false) };
}

/// Runs `read` (a scenario's deserialization) as the reading of a file: a quantity
/// written as a bare number other than 0 is an error. The flag is the thread's
/// while `read` runs, as serde gives a `Deserialize` no context of its own.
pub fn reading_file<T>(read: impl FnOnce() -> T) -> T {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            READING_FILE.set(self.0);
        }
    }
    let _restore = Restore(READING_FILE.replace(true));
    read()
}

fn split_number(s: &str) -> Option<(f64, String)> {
    let s = s.trim();
    let end = s
        .char_indices()
        .find(|&(i, c)| {
            !(c.is_ascii_digit()
                || c == '.'
                || c == '-'
                || c == '+'
                || ((c == 'e' || c == 'E') && i > 0 && !s[i + 1..].starts_with(|c: char| c.is_ascii_alphabetic())))
        })
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    let value: f64 = s[..end].parse().ok()?;
    Some((value, s[end..].trim().to_string()))
}

/// A number as a scenario file spells it (`nan`, `inf`, `-inf`, `0.5`, and
/// `1e-300` rather than 300 digits).
pub fn show_number(v: f64) -> String {
    match v {
        v if v.is_nan() => "nan".into(),
        v if v.is_infinite() => (if v > 0.0 { "inf" } else { "-inf" }).into(),
        v if v != 0.0 && !(1e-5..1e16).contains(&v.abs()) => format!("{v:e}"),
        v => v.to_string(),
    }
}

/// The fastest link or source: 1 Tbit/s. Transmission times are whole
/// nanoseconds, and at this rate a 125-byte packet already takes only one.
pub const MAX_RATE_BPS: f64 = 1e12;
/// The largest size: 1e12 bytes (1 TB).
pub const MAX_BYTES: f64 = 1e12;
/// The slowest link or source other than 0: 1 kbit/s. A 1000-byte packet takes 8 s at
/// this rate; anything slower is a slip (`rate = 10` in a dict is 10 bit/s), not an
/// experiment on queue management.
pub const MIN_RATE_BPS: f64 = 1e3;

/// `v` if it is finite and at most `max`; `shown` is how the input spelled it.
fn bounded(v: f64, max: f64, unit: &str, shown: &dyn fmt::Display) -> Result<f64, String> {
    if !v.is_finite() {
        Err(format!("must be a finite number, got {shown}"))
    } else if v > max {
        Err(format!("must be at most {max:e} {unit}, got {shown}"))
    } else {
        Ok(v)
    }
}

/// A quantity's kind: its name, units (name, scale to the base unit), its base unit as
/// messages name it, and what an error suggests for a number written without a unit.
struct Kind {
    what: &'static str,
    units: &'static [(&'static str, f64)],
    base: &'static str,
    /// `v` base units as its type shows it (`Display`: `"6Mbps"`), if that is a valid quantity.
    show: fn(f64) -> Option<String>,
    /// The unit suggested for a number that is no valid quantity in base units: `rate = 10`
    /// is 10 bit/s, below the minimum, so "10Mbps" is suggested.
    usual: &'static str,
}

impl Kind {
    /// What to write for the number spelled `number` (`v` in base units): the quantity it is
    /// in base units, in its largest whole unit (`: "6Mbps" if you meant 6000000 bit/s`), so
    /// that the suggestion keeps the number's meaning rather than putting a unit after it
    /// ("6000000Mbps", issue 34 item 5); or, if that is not a valid quantity, the number in the
    /// kind's usual unit (`, e.g. "10Mbps"`).
    fn unit_hint(&self, v: f64, number: &str) -> String {
        match (self.show)(v) {
            Some(quantity) => format!(": \"{quantity}\" if you meant {number} {}", self.base),
            None => format!(", e.g. \"{number}{}\"", self.usual),
        }
    }

    /// A number and its unit, e.g. `"10Mbps"` or `"1.5 Mb/s"` (a space is allowed, as SI writes
    /// it); a number without a unit is an error unless it is 0.
    fn parse(&self, s: &str) -> Result<f64, String> {
        let (value, unit) = split_number(s).ok_or_else(|| format!("invalid {} {s:?}", self.what))?;
        if unit.is_empty() {
            return if value == 0.0 {
                Ok(0.0)
            } else {
                Err(format!(
                    "{s:?} has no unit; write it{}",
                    self.unit_hint(value, s.trim())
                ))
            };
        }
        if let Some((_, scale)) = self.units.iter().find(|(u, _)| *u == unit) {
            return Ok(value * scale);
        }
        if self.what == "size" && ["k", "kb", "m", "mb"].contains(&unit.to_ascii_lowercase().as_str()) {
            // tc (iproute2 get_size) reads "k" and "kb" as 1024 bytes, "m" and "mb" as 1024²: the
            // suggestion by case alone would be "KB" or "MB", 1000s, and silently change the size.
            let binary = if unit.to_ascii_lowercase().starts_with('k') {
                "KiB"
            } else {
                "MiB"
            };
            let decimal = if binary == "KiB" { "KB" } else { "MB" };
            return Err(format!(
                "invalid size {s:?}: tc's {unit:?} is {binary} (1024-based); write \"{value}{binary}\", or \"{value}{decimal}\" for 1000s"
            ));
        }
        let names: Vec<&str> = self.units.iter().map(|(u, _)| *u).collect();
        // Only a unit that differs in case is suggested: units are too short for edits to
        // tell a slip from another unit ("Tbps" is one letter from "bps").
        let hint = names
            .iter()
            .find(|u| u.eq_ignore_ascii_case(&unit))
            .map_or(String::new(), |u| format!(", did you mean {u:?}?"));
        Err(format!(
            "invalid {} {s:?}: unknown unit {unit:?}{hint} (use one of {})",
            self.what,
            names.join(", ")
        ))
    }

    /// A number where a quantity was expected: base units, except in a file (see [`reading_file`]).
    fn number(&self, v: f64, shown: &dyn fmt::Display) -> Result<f64, String> {
        if READING_FILE.get() && v != 0.0 && v.is_finite() {
            Err(format!(
                "a bare number; write its unit{}",
                self.unit_hint(v, &shown.to_string())
            ))
        } else {
            Ok(v)
        }
    }
}

const RATE_UNITS: &[(&str, f64)] = &[
    ("bps", 1.0),
    ("b/s", 1.0),
    ("kbps", 1e3),
    ("Kbps", 1e3),
    ("kb/s", 1e3),
    ("Mbps", 1e6),
    ("Mb/s", 1e6),
    ("Gbps", 1e9),
    ("Gb/s", 1e9),
    // tc's spellings (iproute2 get_rate), which mean the same: a Linux user's `10mbit`.
    ("kbit", 1e3),
    ("mbit", 1e6),
    ("gbit", 1e9),
];
const TIME_UNITS: &[(&str, f64)] = &[
    ("s", 1.0),
    ("ms", 1e-3),
    ("us", 1e-6),
    ("ns", 1e-9),
    ("min", 60.0),
    ("h", 3600.0),
    ("hour", 3600.0),
];
const SIZE_UNITS: &[(&str, f64)] = &[
    ("B", 1.0),
    ("KB", 1e3),
    ("kB", 1e3),
    ("MB", 1e6),
    ("KiB", 1024.0),
    ("MiB", 1048576.0),
];
const RATE: Kind = Kind {
    what: "rate",
    units: RATE_UNITS,
    base: "bit/s",
    show: |v| Rate::from_base(v, &v).ok().map(|q| q.to_string()),
    usual: "Mbps",
};
const TIME: Kind = Kind {
    what: "time",
    units: TIME_UNITS,
    base: "s",
    show: |v| Seconds::from_base(v, &v).ok().map(|q| q.to_string()),
    usual: "ms",
};
const SIZE: Kind = Kind {
    what: "size",
    units: SIZE_UNITS,
    base: "bytes",
    show: |v| Bytes::from_base(v, &v).ok().map(|q| q.to_string()),
    usual: "KB",
};

macro_rules! unit_type {
    ($name:ident, $inner:ty, $kind:expr, $convert:expr) => {
        #[derive(Clone, Copy, Debug, PartialEq, PartialOrd, Serialize, Default)]
        #[serde(transparent)]
        pub struct $name(pub $inner);

        impl $name {
            /// `v` in base units, checked as every quantity of its kind; `shown` is how the
            /// input spelled it.
            fn from_base(v: f64, shown: &dyn fmt::Display) -> Result<Self, String> {
                let convert: fn(f64, &dyn fmt::Display) -> Result<$inner, String> = $convert;
                convert(v, shown).map($name)
            }
        }

        impl std::str::FromStr for $name {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                $name::from_base($kind.parse(s)?, &format_args!("{s:?}"))
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        write!(f, "a {} (a string with a unit)", $kind.what)
                    }
                    fn visit_str<E: de::Error>(self, s: &str) -> Result<$name, E> {
                        s.parse().map_err(E::custom)
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$name, E> {
                        self.number(v, &show_number(v))
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$name, E> {
                        self.number(v as f64, &v)
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$name, E> {
                        self.number(v as f64, &v)
                    }
                }
                impl V {
                    fn number<E: de::Error>(self, v: f64, shown: &dyn fmt::Display) -> Result<$name, E> {
                        $kind
                            .number(v, shown)
                            .and_then(|v| $name::from_base(v, shown))
                            .map_err(E::custom)
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

unit_type!(Rate, f64, RATE, |v, shown| {
    let v = bounded(v, MAX_RATE_BPS, RATE.base, shown)?;
    if v > 0.0 && v < MIN_RATE_BPS {
        Err(format!(
            "must be 0 or at least {MIN_RATE_BPS} bit/s (1kbps), got {shown}"
        ))
    } else {
        Ok(v)
    }
});
unit_type!(Seconds, f64, TIME, |v, shown| {
    let v = bounded(v, MAX_SECONDS, TIME.base, shown)?;
    if v != 0.0 && v.abs() < MIN_SECONDS {
        Err(format!(
            "must be 0 or at least {MIN_SECONDS:e} s (the clock's tick), got {shown}"
        ))
    } else {
        Ok(v)
    }
});
unit_type!(Bytes, u64, SIZE, |v, shown| {
    let v = bounded(v, MAX_BYTES, SIZE.base, shown)?;
    if v < 0.0 || v.fract() != 0.0 {
        Err(format!("must be a whole, non-negative number of bytes, got {v}"))
    } else {
        Ok(v as u64)
    }
});

impl Seconds {
    pub fn nanos(self) -> Time {
        from_secs(self.0)
    }

    /// A time as a command-line option gives it: with its unit (`"10s"`, `"500ms"`), or a bare
    /// number of seconds, as options took before they took units (issue 34 item 9); checked
    /// as every time is.
    pub fn from_option(text: &str) -> Result<Seconds, String> {
        match text.trim().parse::<f64>() {
            Ok(v) => Seconds::from_base(v, &format_args!("{:?}", text.trim())),
            Err(_) => text.parse(),
        }
    }
}

/// `v` in the largest of `units` (name, scale; largest first) that leaves a number of at
/// least 1, as an error shows it: `"-5ms"` for -0.005 s, `"10Mbps"`; 0 has no unit.
fn show_in(v: f64, units: &[(&str, f64)]) -> String {
    if v == 0.0 || !v.is_finite() {
        return show_number(v);
    }
    let (unit, scale) = units
        .iter()
        .find(|(_, scale)| v.abs() >= *scale)
        .unwrap_or(&units[units.len() - 1]);
    // Nine decimals hide the binary noise of the scaling (0.005 / 1e-3 = 5.000000000000001).
    let number = format!("{:.9}", v / scale);
    let number = number.trim_end_matches('0').trim_end_matches('.');
    format!("{number}{unit}")
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&show_in(
            self.0,
            &[("Gbps", 1e9), ("Mbps", 1e6), ("kbps", 1e3), ("bps", 1.0)],
        ))
    }
}

impl fmt::Display for Seconds {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&show_in(
            self.0,
            &[("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)],
        ))
    }
}

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self.0 {
            0 => f.write_str("0"),
            n => write!(f, "{n}B"),
        }
    }
}

/// A quantity in its base unit, for the range checks of `validate`, which show it with its unit.
macro_rules! base_unit_value {
    ($($name:ident),*) => {$(
        impl From<$name> for f64 {
            fn from(q: $name) -> f64 {
                q.0 as f64
            }
        }
    )*};
}
base_unit_value!(Rate, Seconds, Bytes);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units() {
        assert_eq!("10Mbps".parse::<Rate>().unwrap().0, 10e6);
        assert_eq!("1.5 Mb/s".parse::<Rate>().unwrap().0, 1.5e6);
        assert_eq!("64kbps".parse::<Rate>().unwrap().0, 64e3);
        assert_eq!("1ms".parse::<Seconds>().unwrap().0, 1e-3);
        assert_eq!("64KB".parse::<Bytes>().unwrap().0, 64_000);
        assert_eq!("64KiB".parse::<Bytes>().unwrap().0, 65_536);
        assert_eq!("1e3bps".parse::<Rate>().unwrap().0, 1000.0);
        // SI writes a space between the number and its unit; it is allowed.
        assert_eq!("10 Mbps".parse::<Rate>().unwrap().0, 10e6);
        let err = "10 furlongs".parse::<Rate>().unwrap_err();
        assert!(err.contains("unknown unit \"furlongs\" (use one of bps,"), "{err}");
        // Units are case-sensitive: "mbps" would be ambiguous between milli and mega.
        assert_eq!(
            "10mbps".parse::<Rate>().unwrap_err(),
            r#"invalid rate "10mbps": unknown unit "mbps", did you mean "Mbps"? (use one of bps, b/s, kbps, Kbps, kb/s, Mbps, Mb/s, Gbps, Gb/s, kbit, mbit, gbit)"#
        );
        assert_eq!("2h".parse::<Seconds>().unwrap().0, 7200.0);
        assert_eq!("1 hour".parse::<Seconds>().unwrap().0, 3600.0);
    }

    #[test]
    fn a_string_carries_its_unit_and_zero_needs_none() {
        assert_eq!(
            "60".parse::<Seconds>().unwrap_err(),
            r#""60" has no unit; write it: "60s" if you meant 60 s"#
        );
        assert_eq!(
            "1e3".parse::<Rate>().unwrap_err(),
            r#""1e3" has no unit; write it: "1kbps" if you meant 1e3 bit/s"#
        );
        assert_eq!("0".parse::<Seconds>().unwrap().0, 0.0);
    }

    #[test]
    fn a_bare_number_means_base_units_except_in_a_file() {
        assert_eq!(from_number::<Seconds>(10.0).unwrap().0, 10.0);
        let in_file = |v: f64| reading_file(|| from_number::<Seconds>(v));
        assert_eq!(
            in_file(10.0).unwrap_err(),
            r#"a bare number; write its unit: "10s" if you meant 10 s"#
        );
        assert_eq!(
            in_file(0.01).unwrap_err(),
            r#"a bare number; write its unit: "10ms" if you meant 0.01 s"#
        );
        assert_eq!(in_file(0.0).unwrap().0, 0.0);
        assert_eq!(
            reading_file(|| from_number::<Bytes>(1500.0)).unwrap_err(),
            r#"a bare number; write its unit: "1500B" if you meant 1500 bytes"#
        );
        // Issue 34 item 5: the suggestion keeps the number's meaning, not "6000000Mbps".
        assert_eq!(
            reading_file(|| from_number::<Rate>(6e6)).unwrap_err(),
            r#"a bare number; write its unit: "6Mbps" if you meant 6000000 bit/s"#
        );
        assert_eq!(
            reading_file(|| from_number::<Rate>(1.5e6)).unwrap_err(),
            r#"a bare number; write its unit: "1.5Mbps" if you meant 1500000 bit/s"#
        );
        // 10 bit/s is below the slowest rate: then the number is suggested in the usual unit.
        assert_eq!(
            reading_file(|| from_number::<Rate>(10.0)).unwrap_err(),
            r#"a bare number; write its unit, e.g. "10Mbps""#
        );
        assert_eq!(
            reading_file(|| from_number::<Bytes>(1.5)).unwrap_err(),
            r#"a bare number; write its unit, e.g. "1.5KB""#
        );
        // The file's rule ends with the file.
        assert_eq!(from_number::<Seconds>(10.0).unwrap().0, 10.0);
    }

    #[test]
    fn an_option_s_time_takes_its_unit_or_is_seconds() {
        assert_eq!(Seconds::from_option("10s").unwrap().0, 10.0);
        assert_eq!(Seconds::from_option("250ms").unwrap().0, 0.25);
        assert_eq!(Seconds::from_option(" 10 ").unwrap().0, 10.0);
        assert_eq!(Seconds::from_option("1e-3").unwrap().0, 1e-3);
        assert_eq!(
            Seconds::from_option("10x").unwrap_err(),
            r#"invalid time "10x": unknown unit "x" (use one of s, ms, us, ns, min, h, hour)"#
        );
        assert_eq!(
            Seconds::from_option("inf").unwrap_err(),
            r#"must be a finite number, got "inf""#
        );
    }

    #[test]
    fn tc_spellings_of_rates_are_read_and_of_binary_sizes_explained() {
        assert_eq!("10mbit".parse::<Rate>().unwrap().0, 10e6);
        assert_eq!("64kbit".parse::<Rate>().unwrap().0, 64e3);
        // tc's "kb" is 1024 bytes: not taken for aqmlab's "KB" (1000) by its case.
        assert_eq!(
            "64kb".parse::<Bytes>().unwrap_err(),
            r#"invalid size "64kb": tc's "kb" is KiB (1024-based); write "64KiB", or "64KB" for 1000s"#
        );
        assert!("2M"
            .parse::<Bytes>()
            .unwrap_err()
            .contains(r#"write "2MiB", or "2MB" for 1000s"#));
    }

    #[test]
    fn a_rate_below_one_kbps_is_refused() {
        assert_eq!(
            from_number::<Rate>(10.0).unwrap_err(),
            "must be 0 or at least 1000 bit/s (1kbps), got 10"
        );
        assert_eq!(
            "500bps".parse::<Rate>().unwrap_err(),
            r#"must be 0 or at least 1000 bit/s (1kbps), got "500bps""#
        );
        assert_eq!("1kbps".parse::<Rate>().unwrap().0, 1e3);
        assert_eq!(from_number::<Rate>(-5.0).unwrap().0, -5.0); // the field says it must be > 0
    }

    #[test]
    fn quantities_show_in_their_largest_whole_unit() {
        assert_eq!(Seconds(-0.005).to_string(), "-5ms");
        assert_eq!(Seconds(2.5).to_string(), "2.5s");
        assert_eq!(Seconds(1e-9).to_string(), "1ns");
        assert_eq!(Seconds(0.0).to_string(), "0");
        assert_eq!(Rate(10e6).to_string(), "10Mbps");
        assert_eq!(Rate(-1.5e6).to_string(), "-1.5Mbps");
        assert_eq!(Rate(64e3).to_string(), "64kbps");
        assert_eq!(Rate(10.0).to_string(), "10bps");
        assert_eq!(Bytes(1500).to_string(), "1500B");
    }

    /// Parses a quantity as serde reads a number from a file.
    fn from_number<T: serde::de::DeserializeOwned>(v: f64) -> Result<T, String> {
        T::deserialize(serde::de::value::F64Deserializer::<serde::de::value::Error>::new(v)).map_err(|e| e.to_string())
    }

    #[test]
    fn every_quantity_is_finite_and_within_its_limit() {
        assert_eq!(
            from_number::<Rate>(f64::NAN).unwrap_err(),
            "must be a finite number, got nan"
        );
        assert_eq!(
            from_number::<Seconds>(f64::INFINITY).unwrap_err(),
            "must be a finite number, got inf"
        );
        assert_eq!(
            from_number::<Bytes>(f64::NEG_INFINITY).unwrap_err(),
            "must be a finite number, got -inf"
        );
        assert_eq!(
            "1e400Mbps".parse::<Rate>().unwrap_err(),
            r#"must be a finite number, got "1e400Mbps""#
        );
        // Finite in the file, infinite once scaled to base units.
        assert_eq!(
            "1e300Gbps".parse::<Rate>().unwrap_err(),
            r#"must be a finite number, got "1e300Gbps""#
        );
        assert_eq!(
            "2Tbps".parse::<Rate>().unwrap_err(),
            r#"invalid rate "2Tbps": unknown unit "Tbps" (use one of bps, b/s, kbps, Kbps, kb/s, Mbps, Mb/s, Gbps, Gb/s, kbit, mbit, gbit)"#
        );
        assert_eq!(
            "1001Gbps".parse::<Rate>().unwrap_err(),
            r#"must be at most 1e12 bit/s, got "1001Gbps""#
        );
        assert_eq!(
            from_number::<Seconds>(1e10).unwrap_err(),
            "must be at most 1e9 s, got 10000000000"
        );
        assert_eq!(
            from_number::<Bytes>(1e13).unwrap_err(),
            "must be at most 1e12 bytes, got 10000000000000"
        );
        // The limits themselves are accepted; the sign is each field's own check.
        assert_eq!(from_number::<Rate>(MAX_RATE_BPS).unwrap().0, 1e12);
        assert_eq!("1e9s".parse::<Seconds>().unwrap().0, 1e9);
        assert_eq!(from_number::<Seconds>(-1.0).unwrap().0, -1.0);
        assert_eq!(
            from_number::<Seconds>(1e-300).unwrap_err(),
            "must be 0 or at least 1e-9 s (the clock's tick), got 1e-300"
        );
        assert_eq!("1ns".parse::<Seconds>().unwrap().0, 1e-9);
    }
}
