//! Quantities with units, read from a number in base units or a string with a
//! unit: rates (`"10Mbps"`, `"1.5 Mb/s"`, `2e6`), times (`"1ms"`, `"2s"`,
//! `0.5`, `"1h"`) and sizes (`"64KB"` = 64 000 bytes, `"64KiB"` = 65 536 bytes, `1000`).
//!
//! Every quantity of a scenario is read here, so this is where each is checked
//! for being a finite number no larger than its kind's limit ([`MAX_RATE_BPS`],
//! [`MAX_SECONDS`], [`MAX_BYTES`]), and a time for being 0 or at least one tick of
//! the clock ([`MIN_SECONDS`]); whether it may be zero or negative is the field's
//! own check (`validate`).

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize};
use std::fmt;

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
/// The longest time: 1e9 s (about 32 years). In nanoseconds this is 1e18, so a
/// run's clock (a u64) can add several such times without overflowing.
pub const MAX_SECONDS: f64 = 1e9;
/// The shortest time other than 0: the clock's tick, 1 ns. A shorter one would
/// round to 0, and a period of 0 can repeat forever without the clock moving on.
pub const MIN_SECONDS: f64 = 1e-9;
/// The largest size: 1e12 bytes (1 TB).
pub const MAX_BYTES: f64 = 1e12;

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

fn parse_with(s: &str, units: &[(&str, f64)], what: &str) -> Result<f64, String> {
    let (value, unit) = split_number(s).ok_or_else(|| format!("invalid {what} {s:?}"))?;
    units
        .iter()
        .find(|(u, _)| *u == unit)
        .map(|(_, scale)| value * scale)
        .ok_or_else(|| {
            let names: Vec<&str> = units.iter().map(|(u, _)| *u).filter(|u| !u.is_empty()).collect();
            format!(
                "invalid {what} {s:?}: unknown unit {unit:?} (use one of {})",
                names.join(", ")
            )
        })
}

const RATE_UNITS: &[(&str, f64)] = &[
    ("", 1.0),
    ("bps", 1.0),
    ("b/s", 1.0),
    ("kbps", 1e3),
    ("Kbps", 1e3),
    ("kb/s", 1e3),
    ("Mbps", 1e6),
    ("Mb/s", 1e6),
    ("Gbps", 1e9),
    ("Gb/s", 1e9),
];
const TIME_UNITS: &[(&str, f64)] = &[
    ("", 1.0),
    ("s", 1.0),
    ("ms", 1e-3),
    ("us", 1e-6),
    ("ns", 1e-9),
    ("min", 60.0),
    ("h", 3600.0),
    ("hour", 3600.0),
];
const SIZE_UNITS: &[(&str, f64)] = &[
    ("", 1.0),
    ("B", 1.0),
    ("KB", 1e3),
    ("kB", 1e3),
    ("MB", 1e6),
    ("KiB", 1024.0),
    ("MiB", 1048576.0),
];

macro_rules! unit_type {
    ($name:ident, $inner:ty, $units:expr, $what:literal, $convert:expr) => {
        #[derive(Clone, Copy, Debug, PartialEq, PartialOrd, Serialize, Default)]
        #[serde(transparent)]
        pub struct $name(pub $inner);

        impl std::str::FromStr for $name {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                let v = parse_with(s, $units, $what)?;
                let convert: fn(f64, &dyn fmt::Display) -> Result<$inner, String> = $convert;
                convert(v, &format_args!("{s:?}")).map($name)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        write!(f, "a {} (a number or a string with a unit)", $what)
                    }
                    fn visit_str<E: de::Error>(self, s: &str) -> Result<$name, E> {
                        s.parse().map_err(E::custom)
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$name, E> {
                        let convert: fn(f64, &dyn fmt::Display) -> Result<$inner, String> = $convert;
                        convert(v, &show_number(v)).map($name).map_err(E::custom)
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$name, E> {
                        let convert: fn(f64, &dyn fmt::Display) -> Result<$inner, String> = $convert;
                        convert(v as f64, &v).map($name).map_err(E::custom)
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$name, E> {
                        let convert: fn(f64, &dyn fmt::Display) -> Result<$inner, String> = $convert;
                        convert(v as f64, &v).map($name).map_err(E::custom)
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

unit_type!(Rate, f64, RATE_UNITS, "rate", |v, shown| bounded(
    v,
    MAX_RATE_BPS,
    "bit/s",
    shown
));
unit_type!(Seconds, f64, TIME_UNITS, "time", |v, shown| {
    let v = bounded(v, MAX_SECONDS, "s", shown)?;
    if v != 0.0 && v.abs() < MIN_SECONDS {
        Err(format!(
            "must be 0 or at least {MIN_SECONDS:e} s (the clock's tick), got {shown}"
        ))
    } else {
        Ok(v)
    }
});
unit_type!(Bytes, u64, SIZE_UNITS, "size", |v, shown| {
    let v = bounded(v, MAX_BYTES, "bytes", shown)?;
    if v < 0.0 || v.fract() != 0.0 {
        Err(format!("must be a whole, non-negative number of bytes, got {v}"))
    } else {
        Ok(v as u64)
    }
});

impl Seconds {
    pub fn nanos(self) -> crate::time::Time {
        crate::time::from_secs(self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units() {
        assert_eq!("10Mbps".parse::<Rate>().unwrap().0, 10e6);
        assert_eq!("1.5 Mb/s".parse::<Rate>().unwrap().0, 1.5e6);
        assert_eq!("64kbps".parse::<Rate>().unwrap().0, 64e3);
        assert_eq!("1ms".parse::<Seconds>().unwrap().0, 1e-3);
        assert_eq!("2".parse::<Seconds>().unwrap().0, 2.0);
        assert_eq!("64KB".parse::<Bytes>().unwrap().0, 64_000);
        assert_eq!("64KiB".parse::<Bytes>().unwrap().0, 65_536);
        assert_eq!("1e3".parse::<Rate>().unwrap().0, 1000.0);
        let err = "10 furlongs".parse::<Rate>().unwrap_err();
        assert!(err.contains("unknown unit \"furlongs\""), "{err}");
        // Units are case-sensitive: "mbps" would be ambiguous between milli and mega.
        assert!("10mbps".parse::<Rate>().is_err());
        assert_eq!("2h".parse::<Seconds>().unwrap().0, 7200.0);
        assert_eq!("1 hour".parse::<Seconds>().unwrap().0, 3600.0);
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
            r#"invalid rate "2Tbps": unknown unit "Tbps" (use one of bps, b/s, kbps, Kbps, kb/s, Mbps, Mb/s, Gbps, Gb/s)"#
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
