//! Helpers shared by the integration tests (`mod common;` in each test file).
#![allow(dead_code)] // each test file uses a subset

use aqmlab_core::{run, Results, Scenario};

/// Parses a scenario that must be valid (panics with the error and the text otherwise).
pub fn scenario(text: &str) -> Scenario {
    Scenario::from_toml_str(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// Runs a valid scenario.
pub fn simulate(text: &str) -> Results {
    run(&scenario(text)).unwrap()
}

/// The error a scenario that must be invalid is rejected with.
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
