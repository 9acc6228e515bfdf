//! Self-checks of the simulator against closed-form models: each suite runs
//! small, fast simulations and compares what it measures with what a model
//! predicts. The Python CLI prints them (`aqmlab validate <suite>`).

pub mod tcp;

use serde::Serialize;

/// One check: a measured quantity, the model's value, and whether the
/// measurement is within the stated tolerance.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// What is compared, with its parameters (variant, loss model, p, RTT, unit).
    pub metric: String,
    pub model: f64,
    pub ours: f64,
    /// The acceptance rule, e.g. "±15%" or "[0.6, 0.85]".
    pub tolerance: String,
    pub pass: bool,
}
