//! Field checks shared by every part of the schema: range checks whose error
//! names the field, and `type`-tagged tables (`qdisc = { type = "red", ... }`)
//! whose errors keep the path of the field inside them.

use crate::error::ScenarioError;

/// `path: must be > 0, got value` unless `value > 0`.
pub fn require_positive(path: &str, value: f64) -> Result<(), ScenarioError> {
    if value > 0.0 && value.is_finite() {
        Ok(())
    } else {
        Err(ScenarioError::new(path, format!("must be > 0, got {value}")))
    }
}

/// `path: must be >= 0, got value` unless `value >= 0`.
pub fn require_non_negative(path: &str, value: f64) -> Result<(), ScenarioError> {
    if value >= 0.0 && value.is_finite() {
        Ok(())
    } else {
        Err(ScenarioError::new(path, format!("must be >= 0, got {value}")))
    }
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
        let (path, msg) = join_nested(&e.path().to_string(), &e.inner().to_string());
        format!("{PATH_MARK}{path}{PATH_MARK}{msg}")
    })
}

/// Reads and removes the `type` tag of a table, checking it is one of `names`.
pub fn take_tag(value: &mut serde_json::Value, names: &[&str]) -> Result<String, String> {
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
        return Err(err(format!(
            "unknown type `{tag}`, expected one of {}",
            names.join(", ")
        )));
    }
    Ok(tag)
}
