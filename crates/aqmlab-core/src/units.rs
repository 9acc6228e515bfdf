//! Quantities with units, read from a number in base units or a string with a
//! unit: rates (`"10Mbps"`, `"1.5 Mb/s"`, `2e6`), times (`"1ms"`, `"2s"`,
//! `0.5`) and sizes (`"64KB"` = 64 000 bytes, `"64KiB"` = 65 536 bytes, `1000`).

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
                let convert: fn(f64) -> Result<$inner, String> = $convert;
                convert(v).map($name)
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
                        let convert: fn(f64) -> Result<$inner, String> = $convert;
                        convert(v).map($name).map_err(E::custom)
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$name, E> {
                        self.visit_f64(v as f64)
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$name, E> {
                        self.visit_f64(v as f64)
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

unit_type!(Rate, f64, RATE_UNITS, "rate", |v| Ok(v));
unit_type!(Seconds, f64, TIME_UNITS, "time", |v| Ok(v));
unit_type!(Bytes, u64, SIZE_UNITS, "size", |v| {
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
    }
}
