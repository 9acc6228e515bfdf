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

/// One flow over a path of 1 Gb/s links without access or sink delay, so that the bottleneck's
/// `qdisc` is its only loss; `delay` (s) one way at the bottleneck, drops logged, no queue
/// samples. `simulation` holds the `[simulation]` table's other lines, `flow` the flow's.
pub fn one_flow_path(simulation: &str, delay: f64, qdisc: &str, flow: &str) -> Results {
    simulate(&format!(
        r#"
[simulation]
{simulation}
record_drops = true
sample_interval = 0
[topology]
type = "dumbbell"
access_rate = "1Gbps"
access_delay = 0
sink_delay = 0
bottleneck = {{ rate = "1Gbps", delay = "{delay}s", qdisc = {qdisc} }}
[[flows]]
{flow}
"#
    ))
}

/// A qdisc that drops the first transmissions of flow 0's packets `seqs`.
pub fn scripted_loss(seqs: &[u64]) -> String {
    format!(r#"{{ type = "loss", model = "scripted", flow = 0, seqs = {seqs:?} }}"#)
}

/// The traced values of `var`: (time, value).
pub fn trace(r: &Results, var: &str) -> Vec<(f64, f64)> {
    r.traces
        .iter()
        .filter(|t| t.var == var)
        .map(|t| (t.time, t.value))
        .collect()
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
