//! aqmlab-core: a deterministic, packet-level discrete-event simulator of
//! router queue management and fair bandwidth allocation.
//!
//! Data flows one way: a [`scenario::Scenario`] (parsed and validated) builds a
//! [`sim::Simulation`], which runs and returns [`metrics::Results`] (plain data).
//! The core never prints, reads no files it was not given, writes only the
//! packet captures it is asked for (`Simulation::capture_into`), and is
//! independent of Python.
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

// The layers, bottom up. A module uses only its own layer and the layers above it in this
// list; nothing points back up (ARCHITECTURE.md's table, which tests/layers.rs checks the
// code against). This file declares them and holds no code.

// 1. Vocabulary: errors, units, field checks, time, random streams, packets, prefetch.
pub mod cache;
pub mod error;
pub mod packet;
pub mod rng;
pub mod time;
pub mod units;
pub mod validate;

// 2. Mechanisms: queue disciplines and transports, each with its own config.
pub mod qdisc;
pub mod transport;

// 3. The scenario file: topology and flows, composed of the configs above.
pub mod scenario;

// 4. The network a scenario describes: nodes, links with their qdiscs, routes.
pub mod net;

// 5. Measurement: what a run records, and the results it returns.
pub mod metrics;

// 6. The engine that runs it all, and the checks that drive the engine.
pub mod sim;
pub mod validation;

// 7. The engine in real time between real Linux endpoints (`aqmlab emulate`).
pub mod emulate;

// The front door, the names a program using the core needs first (the example above).
pub use error::{Error, InternalError, MechanismError, ScenarioError};
pub use metrics::Results;
pub use scenario::Scenario;
pub use sim::run;
