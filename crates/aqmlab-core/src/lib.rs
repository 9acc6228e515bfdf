//! aqmlab-core: a deterministic, packet-level discrete-event simulator of
//! router queue management and fair bandwidth allocation.
//!
//! Data flows one way: a [`scenario::Scenario`] (parsed and validated) builds a
//! [`sim::Simulation`], which runs and returns [`metrics::Results`] (plain data).
//! The core never prints, reads no files it was not given, and is independent
//! of Python.
//!
//! ```
//! let text = r#"
//! [simulation]
//! duration = "2s"
//! [topology]
//! type = "dumbbell"
//! bottleneck = { rate = "10Mbps", delay = "1ms", qdisc = { type = "droptail", limit = 50 } }
//! [[flows]]
//! type = "cbr"
//! rate = "5Mbps"
//! "#;
//! let scenario = aqmlab_core::scenario::Scenario::from_toml_str(text).unwrap();
//! let results = aqmlab_core::run(&scenario).unwrap();
//! let goodput = results.flows[0].goodput_bps;
//! assert!((goodput - 5e6).abs() / 5e6 < 0.02);
//! ```

pub mod metrics;
pub mod net;
pub mod qdisc;
pub mod scenario;
pub mod sim;
pub mod transport;
pub mod validation;

pub use metrics::Results;
pub use scenario::{Scenario, ScenarioError};

/// Builds and runs a validated scenario.
pub fn run(scenario: &Scenario) -> Result<Results, ScenarioError> {
    let mut sim = sim::Simulation::build(scenario)?;
    sim.run_to_end();
    sim.results()
}
