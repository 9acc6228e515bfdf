//! Helpers shared by the integration tests (each tests/*.rs compiles this module on its own).
// Each test file uses a subset of these helpers.
#![allow(dead_code)]

use aqmlab_core::{Results, Scenario};

pub fn scenario(text: &str) -> Scenario {
    Scenario::from_toml_str(text).unwrap_or_else(|e| panic!("{e}"))
}

pub fn error_of(text: &str) -> String {
    Scenario::from_toml_str(text)
        .expect_err("scenario should be rejected")
        .to_string()
}

/// The qdisc counter `name` of link `link` (e.g. `"L->R"`).
pub fn counter(results: &Results, link: &str, name: &str) -> f64 {
    let link = results.links.iter().find(|l| l.name == link).expect("link exists");
    link.counters
        .iter()
        .find(|(k, _)| k == name)
        .unwrap_or_else(|| panic!("no counter {name}"))
        .1
}
