//! Field checks shared by every part of the schema: range checks whose error
//! names the field, and `type`-tagged tables (`qdisc = { type = "red", ... }`)
//! whose errors keep the path of the field inside them.

use crate::error::{closest, ScenarioError};
use crate::units::Seconds;
use std::fmt;

/// `path: must be > 0, got value` unless `value > 0`; a quantity ([`crate::units`]) is
/// shown with its unit (`got -5ms`).
pub fn require_positive(path: &str, value: impl Into<f64> + fmt::Display + Copy) -> Result<(), ScenarioError> {
    let v: f64 = value.into();
    if v > 0.0 && v.is_finite() {
        Ok(())
    } else {
        Err(ScenarioError::new(path, format!("must be > 0, got {value}")))
    }
}

/// `path: must be >= 0, got value` unless `value >= 0`, shown as [`require_positive`] does.
pub fn require_non_negative(path: &str, value: impl Into<f64> + fmt::Display + Copy) -> Result<(), ScenarioError> {
    let v: f64 = value.into();
    if v >= 0.0 && v.is_finite() {
        Ok(())
    } else {
        Err(ScenarioError::new(path, format!("must be >= 0, got {value}")))
    }
}

/// `path: must be in (0, 1], got value` unless it is: a probability or a weight that acts.
pub fn require_probability(path: &str, value: f64) -> Result<(), ScenarioError> {
    if value > 0.0 && value <= 1.0 {
        Ok(())
    } else {
        Err(ScenarioError::new(path, format!("must be in (0, 1], got {value}")))
    }
}

/// The lower bound of [`require_above`] and [`require_at_least`]: a number (`1.0`, shown `1`)
/// or another field's value (`Bound::field("min_th", 8.0)`, shown `min_th (8)`).
#[derive(Clone, Copy, Debug)]
pub struct Bound<'a> {
    value: f64,
    field: Option<&'a str>,
}

impl<'a> Bound<'a> {
    pub fn field(name: &'a str, value: f64) -> Self {
        Bound {
            value,
            field: Some(name),
        }
    }
}

impl From<f64> for Bound<'_> {
    fn from(value: f64) -> Self {
        Bound { value, field: None }
    }
}

impl fmt::Display for Bound<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.field {
            Some(name) => write!(f, "{name} ({})", self.value),
            None => write!(f, "{}", self.value),
        }
    }
}

/// `path: must be > bound, got value` unless `value > bound` (a NaN is not).
pub fn require_above<'a>(path: &str, value: f64, bound: impl Into<Bound<'a>>) -> Result<(), ScenarioError> {
    let bound = bound.into();
    if value > bound.value {
        Ok(())
    } else {
        Err(ScenarioError::new(path, format!("must be > {bound}, got {value}")))
    }
}

/// `path: must be >= bound, got value` unless `value >= bound` (a NaN is not).
pub fn require_at_least<'a>(path: &str, value: f64, bound: impl Into<Bound<'a>>) -> Result<(), ScenarioError> {
    let bound = bound.into();
    if value >= bound.value {
        Ok(())
    } else {
        Err(ScenarioError::new(path, format!("must be >= {bound}, got {value}")))
    }
}

/// The longest one-way propagation delay of a link: 100 s. A longer one is a slip
/// (`delay = 10` in a dict is ten seconds), not a network.
pub const MAX_LINK_DELAY: Seconds = Seconds(100.0);

/// A link's one-way delay: at least 0 and at most [`MAX_LINK_DELAY`].
pub fn require_link_delay(path: &str, delay: Seconds) -> Result<(), ScenarioError> {
    require_non_negative(path, delay)?;
    if delay > MAX_LINK_DELAY {
        return Err(ScenarioError::new(
            path,
            format!("must be at most {MAX_LINK_DELAY} (a one-way propagation delay), got {delay}"),
        ));
    }
    Ok(())
}

/// `path: must be in [lo, hi], got value` unless it is.
pub fn require_in(path: &str, value: f64, lo: f64, hi: f64) -> Result<(), ScenarioError> {
    if (lo..=hi).contains(&value) {
        Ok(())
    } else {
        Err(ScenarioError::new(
            path,
            format!("must be in [{lo}, {hi}], got {value}"),
        ))
    }
}

/// Appends `key` to a field path: `.key`, or `."key"` quoted when it is not a
/// plain name (an empty key, spaces, dots), so that every error starts with a
/// path a reader can find.
pub fn push_key(path: &mut String, key: &str) {
    if !path.is_empty() {
        path.push('.');
    }
    if !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        path.push_str(key);
    } else {
        path.push_str(&format!("{key:?}"));
    }
}

/// The path serde was at, as errors show it: `flows[0].rate` (see [`push_key`]).
pub fn path_text(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for segment in path {
        match segment {
            Segment::Seq { index } => out.push_str(&format!("[{index}]")),
            Segment::Map { key } | Segment::Enum { variant: key } => push_key(&mut out, key),
            Segment::Unknown => push_key(&mut out, "?"),
        }
    }
    out
}

/// Every float in a TOML document is finite (TOML can write `nan` and `inf`,
/// JSON cannot): the first that is not is an error at its path, before any
/// field reads it, so that no field needs its own check.
pub fn require_finite_floats(table: &toml::Table) -> Result<(), ScenarioError> {
    fn walk(value: &toml::Value, path: String) -> Result<(), ScenarioError> {
        match value {
            toml::Value::Float(v) if !v.is_finite() => Err(ScenarioError::new(
                path,
                format!("must be a finite number, got {}", crate::units::show_number(*v)),
            )),
            toml::Value::Table(t) => t.iter().try_for_each(|(key, v)| {
                let mut inner = path.clone();
                push_key(&mut inner, key);
                walk(v, inner)
            }),
            toml::Value::Array(items) => items
                .iter()
                .enumerate()
                .try_for_each(|(i, v)| walk(v, format!("{path}[{i}]"))),
            _ => Ok(()),
        }
    }
    table.iter().try_for_each(|(key, v)| {
        let mut path = String::new();
        push_key(&mut path, key);
        walk(v, path)
    })
}

/// Separates the field path carried inside a nested error message from the message.
const PATH_MARK: char = '\u{1}';

/// Joins `outer` (where serde was) with a path carried inside `message` by a
/// nested [`from_tagged_value`] call.
pub(crate) fn join_nested(outer: &str, message: &str) -> (String, String) {
    let outer = if outer == "." { "" } else { outer };
    if let Some(rest) = message.strip_prefix(PATH_MARK) {
        if let Some((inner, msg)) = rest.split_once(PATH_MARK) {
            let path = match (outer.is_empty(), inner.is_empty()) {
                (true, _) => inner.to_string(),
                (_, true) => outer.to_string(),
                // An index joins without a dot: `flows[0].tcp[0]`.
                _ if inner.starts_with('[') => format!("{outer}{inner}"),
                _ => format!("{outer}.{inner}"),
            };
            return (path, msg.to_string());
        }
    }
    (outer.to_string(), message.to_string())
}

/// Deserializes the variant `T` of a `type`-tagged table from `value`, keeping
/// the field path of any error (serde's own tagged enums lose it).
pub fn from_tagged_value<T: serde::de::DeserializeOwned>(value: serde_json::Value) -> Result<T, String> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let (path, msg) = join_nested(&path_text(e.path()), &e.inner().to_string());
        format!("{PATH_MARK}{path}{PATH_MARK}{msg}")
    })
}

/// An error about the field `path` below the one serde is reading, for
/// `D::Error::custom` (the message then names `outer.path`).
pub fn error_at(path: &str, message: impl std::fmt::Display) -> String {
    format!("{PATH_MARK}{path}{PATH_MARK}{message}")
}

/// serde's `unknown field `x`, expected one of `a`, `b`` (or `unknown variant `x`, ...` for a
/// value of a choice such as `cc`), when one of the expected names is near `x` (see
/// [`closest`]): `unknown field `x`, did you mean `a`?`; any other message as it is.
pub fn suggest_field(message: &str) -> String {
    let Some((kind, rest)) = ["unknown field `", "unknown variant `"]
        .into_iter()
        .find_map(|prefix| Some((prefix, message.strip_prefix(prefix)?)))
    else {
        return message.to_string();
    };
    let Some((word, expected)) = rest.split_once('`') else {
        return message.to_string();
    };
    // The names are the quoted words: ", expected one of `a`, `b`".
    let names = expected.split('`').skip(1).step_by(2);
    match closest(word, names) {
        Some(near) => format!("{kind}{word}`, did you mean `{near}`?"),
        None => message.to_string(),
    }
}

/// Reads and removes the `type` tag of a table, checking it is one of `names`.
pub fn take_tag(value: &mut serde_json::Value, names: &[&str]) -> Result<String, String> {
    take_tag_hinted(value, names, &[])
}

/// [`take_tag`], where a type in `hints` (a name other tools use, not one of `names`) is
/// answered with its hint rather than a near name: `("udp", "... `cbr` ... or `onoff` ...")`.
pub fn take_tag_hinted(
    value: &mut serde_json::Value,
    names: &[&str],
    hints: &[(&str, &str)],
) -> Result<String, String> {
    let err = |msg: String| format!("{PATH_MARK}type{PATH_MARK}{msg}");
    let table = value
        .as_object_mut()
        .ok_or_else(|| format!("{PATH_MARK}{PATH_MARK}expected a table with a `type` field"))?;
    let tag = match table.remove("type") {
        None => {
            return Err(format!(
                "{PATH_MARK}{PATH_MARK}missing field `type` (one of {})",
                names.join(", ")
            ))
        }
        Some(serde_json::Value::String(s)) => s,
        Some(other) => return Err(err(format!("expected a string, got {other}"))),
    };
    if !names.contains(&tag.as_str()) {
        let hint = hints.iter().find(|(name, _)| *name == tag).map(|(_, hint)| hint);
        return Err(err(match (hint, closest(&tag, names.iter().copied())) {
            (Some(hint), _) => format!("unknown type `{tag}`: {hint}"),
            (None, Some(near)) => format!("unknown type `{tag}`, did you mean `{near}`?"),
            (None, None) => format!("unknown type `{tag}`, expected one of {}", names.join(", ")),
        }));
    }
    Ok(tag)
}

/// A table's keys and values, as serde_json holds them.
pub type Table = serde_json::Map<String, serde_json::Value>;

/// Splits a table between two structs by their field names (serde's `flatten` cannot be
/// combined with `deny_unknown_fields`): the keys of `first`, and the rest. A key neither
/// has is an error listing the fields of both, so that it is suggested whichever it is near.
pub fn split_fields(table: Table, first: &[&str], second: &[&str]) -> Result<(Table, Table), String> {
    let known = |key: &str| first.contains(&key) || second.contains(&key);
    if let Some(key) = table.keys().find(|key| !known(key)) {
        let expected: Vec<String> = first.iter().chain(second).map(|f| format!("`{f}`")).collect();
        let mut path = String::new();
        push_key(&mut path, key);
        let message = format!("unknown field `{key}`, expected one of {}", expected.join(", "));
        return Err(error_at(&path, message));
    }
    Ok(table.into_iter().partition(|(key, _)| first.contains(&key.as_str())))
}

/// The field names of struct `T` as its derived `Deserialize` accepts them.
/// serde hands them to `deserialize_struct`; this deserializer only writes
/// them down. With them a flat table can be split between two structs, which
/// serde's `flatten` cannot do while keeping `deny_unknown_fields`.
pub fn struct_fields<T: serde::de::DeserializeOwned>() -> &'static [&'static str] {
    use serde::de::{self, Visitor};
    struct FieldNames<'a>(&'a mut &'static [&'static str]);
    impl<'de> de::Deserializer<'de> for FieldNames<'_> {
        type Error = de::value::Error;
        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
            Err(de::Error::custom("not a struct"))
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _name: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Self::Error> {
            *self.0 = fields;
            Err(de::Error::custom("field names recorded"))
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
            option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
        }
    }
    let mut fields: &'static [&'static str] = &[];
    let _ = T::deserialize(FieldNames(&mut fields));
    fields
}

/// Defines a `type`-tagged enum with one config per variant, the shape of
/// every "pick one by name" table in a scenario (`qdisc = { type = "red", ... }`,
/// a flow's `type`): the enum, `NAMES`, `from_tagged` (the variant named by a
/// tag, from the table's other keys, keeping field paths in errors),
/// `type_name`, and `config()`, the variant's config as `&dyn Trait` for
/// dispatch. Adding a variant is one line where the enum is declared.
macro_rules! tagged_registry {
    ($(#[$meta:meta])* $registry:ident: dyn $config_trait:path { $($name:literal => $variant:ident($config:ty)),* $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, Debug)]
        pub enum $registry {
            $($variant($config),)*
        }

        impl $registry {
            /// Names accepted in `type`.
            pub const NAMES: &'static [&'static str] = &[$($name),*];

            /// The variant named `tag` (checked by [`take_tag`](crate::validate::take_tag)), read from the table's other keys.
            pub fn from_tagged(tag: &str, value: serde_json::Value) -> Result<Self, String> {
                match tag {
                    $($name => crate::validate::from_tagged_value(value).map($registry::$variant),)*
                    _ => unreachable!("take_tag checked the name"),
                }
            }

            /// The fields of the variant named `tag`, as its config's `Deserialize` accepts them.
            pub fn fields(tag: &str) -> &'static [&'static str] {
                match tag {
                    $($name => crate::validate::struct_fields::<$config>(),)*
                    _ => &[],
                }
            }

            pub fn type_name(&self) -> &'static str {
                match self { $($registry::$variant(_) => $name,)* }
            }

            /// The variant's config.
            pub fn config(&self) -> &dyn $config_trait {
                match self { $($registry::$variant(config) => config,)* }
            }
        }
    };
}
pub(crate) use tagged_registry;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_field_near_a_known_one_is_suggested() {
        assert_eq!(
            suggest_field("unknown field `varaint`, expected one of `profile`, `variant`, `window`"),
            "unknown field `varaint`, did you mean `variant`?"
        );
        assert_eq!(
            suggest_field("unknown field `x`, expected `tcp` or `workload`"),
            "unknown field `x`, expected `tcp` or `workload`"
        );
        assert_eq!(suggest_field("must be > 0, got -1"), "must be > 0, got -1");
        assert_eq!(
            suggest_field("unknown variant `cubc`, expected `cubic` or `reno`"),
            "unknown variant `cubc`, did you mean `cubic`?"
        );
    }

    #[test]
    fn struct_fields_lists_the_names_serde_accepts() {
        #[derive(serde::Deserialize)]
        #[allow(dead_code)]
        struct Example {
            plain: u32,
            #[serde(rename = "type")]
            kind: String,
            #[serde(default)]
            optional: Option<f64>,
        }
        assert_eq!(struct_fields::<Example>(), ["plain", "type", "optional"]);
        assert!(struct_fields::<u32>().is_empty());
    }

    #[test]
    fn range_checks_name_the_field_and_the_bound_and_refuse_nan() {
        let error = |result: Result<(), ScenarioError>| result.unwrap_err().to_string();
        assert!(require_probability("q.p", 1.0).is_ok());
        assert_eq!(error(require_probability("q.p", 0.0)), "q.p: must be in (0, 1], got 0");
        assert!(require_above("q.beta", 1.5, 1.0).is_ok());
        assert_eq!(error(require_above("q.beta", 1.0, 1.0)), "q.beta: must be > 1, got 1");
        assert_eq!(
            error(require_above("q.max_th", 8.0, Bound::field("min_th", 8.0))),
            "q.max_th: must be > min_th (8), got 8"
        );
        assert!(require_at_least("q.min_q", 1.0, 1.0).is_ok());
        assert_eq!(
            error(require_at_least("q.min_q", f64::NAN, 1.0)),
            "q.min_q: must be >= 1, got NaN"
        );
    }
}
