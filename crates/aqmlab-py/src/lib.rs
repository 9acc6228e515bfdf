//! Python bindings (module `aqmlab._core`): conversion only, no logic.

use aqmlab_core::scenario::Scenario;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

fn parse(scenario_json: &str) -> PyResult<Scenario> {
    Scenario::from_json_str(scenario_json).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Validates a scenario given as JSON text; raises ValueError naming the bad field.
#[pyfunction]
fn validate(scenario_json: &str) -> PyResult<()> {
    parse(scenario_json).map(|_| ())
}

/// Runs a scenario given as JSON text and returns the results as JSON text.
/// The simulation runs without the GIL.
#[pyfunction]
fn run(py: Python<'_>, scenario_json: &str) -> PyResult<String> {
    let scenario = parse(scenario_json)?;
    py.allow_threads(|| aqmlab_core::run(&scenario).map(|r| r.to_json())).map_err(|e| PyValueError::new_err(e.to_string()))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
