//! Self-checks of the simulator against closed-form models: each suite runs
//! small, fast simulations and compares what it measures with what a model
//! predicts. The Python CLI prints them (`aqmlab validate <suite>`).

pub mod tcp;

use serde::Serialize;

/// One check: a measured quantity, the model's value, and whether the
/// measurement is within the stated tolerance.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// Stable name of the check for scripts and tests ("cycle.reno.p1"); it stays when `metric`'s wording changes.
    pub key: String,
    /// What is compared, with its parameters (variant, loss model, p, unit).
    pub metric: String,
    pub model: f64,
    pub ours: f64,
    /// The acceptance rule, e.g. "±3%", "= 0" or ">= 0.99".
    pub tolerance: String,
    pub pass: bool,
    /// Why the model and the measurement may differ, where that needs saying (else empty).
    pub note: String,
}

impl Row {
    /// Passes when |ours / model − 1| <= `tolerance`.
    pub fn within(key: String, metric: String, model: f64, ours: f64, tolerance: f64) -> Row {
        Row {
            pass: (ours / model - 1.0).abs() <= tolerance,
            tolerance: format!("±{}%", tolerance * 100.0),
            ..Row::new(key, metric, model, ours)
        }
    }

    /// Passes when ours equals the model exactly (counts, packets).
    pub fn exact(key: String, metric: String, model: f64, ours: f64) -> Row {
        Row {
            pass: ours == model,
            tolerance: format!("= {model}"),
            ..Row::new(key, metric, model, ours)
        }
    }

    /// Passes when ours >= `bound`.
    pub fn at_least(key: String, metric: String, model: f64, ours: f64, bound: f64) -> Row {
        Row {
            pass: ours >= bound,
            tolerance: format!(">= {bound}"),
            ..Row::new(key, metric, model, ours)
        }
    }

    fn new(key: String, metric: String, model: f64, ours: f64) -> Row {
        Row {
            key,
            metric,
            model,
            ours,
            tolerance: String::new(),
            pass: false,
            note: String::new(),
        }
    }
}
