//! Python bindings (module `aqmlab._core`): conversion only, no logic.
//!
//! Scenarios cross the boundary as JSON text and results come back as JSON
//! text; the Python package turns them into dicts and DataFrames. Every
//! scenario problem is raised as `ScenarioError` (a `ValueError`) whose text
//! names the field, e.g. `flows[3].rate: must be > 0, got -1`; a bug of the
//! simulator (an internal error) as a `RuntimeError` "internal error: ...".
//!
//! Runs release the GIL and check for signals every [`EVENTS_PER_SLICE`]
//! events, so Ctrl-C stops them: `KeyboardInterrupt("interrupted at 12.3 s of
//! 100 s simulated")`.

use aqmlab_core::metrics::Results;
use aqmlab_core::time::{from_secs, to_secs, Time};
use aqmlab_core::{Error, InternalError, Scenario, ScenarioError as CoreError};
use pyo3::create_exception;
use pyo3::exceptions::{PyKeyboardInterrupt, PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use std::sync::Mutex;

mod python_qdisc;

create_exception!(
    aqmlab._core,
    MechanismError,
    PyRuntimeError,
    "A queue discipline written in Python failed or broke the engine's contract; the message names \
     the class, the method, the link and the simulated time, and the exception it raised is its cause."
);

create_exception!(
    aqmlab._core,
    ScenarioError,
    PyValueError,
    "A scenario value is invalid; the message names the field."
);

fn to_py(e: CoreError) -> PyErr {
    ScenarioError::new_err(e.to_string())
}

fn internal_to_py(e: InternalError) -> PyErr {
    PyRuntimeError::new_err(e.to_string())
}

/// The user's discipline failed: its message, with the exception its code raised (if it did)
/// as the cause, for the user's traceback.
fn mechanism_to_py(e: aqmlab_core::MechanismError) -> PyErr {
    let err = MechanismError::new_err(e.to_string());
    if let Some(cause) = python_qdisc::take_exception() {
        Python::with_gil(|py| err.set_cause(py, Some(cause)));
    }
    err
}

fn error_to_py(e: Error) -> PyErr {
    match e {
        Error::Scenario(e) => to_py(e),
        Error::Mechanism(e) => mechanism_to_py(e),
        Error::Internal(e) => internal_to_py(e),
    }
}

/// Events run between two checks for signals: a few milliseconds of work.
const EVENTS_PER_SLICE: u64 = 1 << 16;

/// Runs `sim` until `until` without the GIL, in slices, running Python's signal
/// handlers between them. Ctrl-C's KeyboardInterrupt is raised again with how
/// far the run got; any other error a handler raises is passed on as it is.
fn run_interruptibly(
    py: Python<'_>,
    sim: &mut aqmlab_core::sim::Simulation,
    until: Time,
    duration: f64,
) -> PyResult<()> {
    // A discipline written in Python is called for every packet: the run keeps the GIL rather
    // than take it back for each call.
    let python = sim.qdisc_types().any(|t| t == "python");
    let slice = |sim: &mut aqmlab_core::sim::Simulation| {
        if python {
            sim.run_events(until, EVENTS_PER_SLICE)
        } else {
            py.allow_threads(|| sim.run_events(until, EVENTS_PER_SLICE))
        }
    };
    while !slice(sim) {
        if let Err(e) = py.check_signals() {
            if e.is_instance_of::<PyKeyboardInterrupt>(py) {
                let at = to_secs(sim.now());
                return Err(PyKeyboardInterrupt::new_err(format!(
                    "interrupted at {at:.1} s of {duration} s simulated"
                )));
            }
            return Err(e);
        }
    }
    Ok(())
}

fn parse(scenario_json: &str) -> PyResult<Scenario> {
    Scenario::from_json_str(scenario_json).map_err(to_py)
}

/// The simulation of `scenario`, its Python disciplines (if any) told the flows' names.
fn build(scenario: &Scenario) -> PyResult<aqmlab_core::sim::Simulation> {
    python_qdisc::building(scenario, || aqmlab_core::sim::Simulation::build(scenario)).map_err(to_py)
}

/// Validates a scenario given as JSON text; raises ScenarioError naming the bad field.
/// `file=True`: the content of a scenario file, where every quantity must carry its unit
/// (a bare number is an error saying what to write); otherwise a bare number is in base units.
#[pyfunction]
#[pyo3(signature = (scenario_json, file = false))]
fn validate(scenario_json: &str, file: bool) -> PyResult<()> {
    if file {
        Scenario::from_file_json_str(scenario_json).map(|_| ()).map_err(to_py)
    } else {
        parse(scenario_json).map(|_| ())
    }
}

/// The scenario given as JSON text as the core resolves it, as JSON text: `simulation` (its
/// settings, defaults filled in), `nodes`, `links` (each direction in the engine's order: name,
/// from, to, rate in bit/s, rate_changes, delay in s, monitored, qdisc with its defaults filled
/// in, qdisc_path) and `flows` (after `count` expansion: id, name, group, path, type, src,
/// dst, route and reverse_route (the links its data and its ACKs cross), start in s as a run draws it, stop, packet_size, weight, settings). Builds and runs
/// nothing; raises ScenarioError naming the bad field.
///
///     >>> json.loads(resolve(scenario_json))["links"][0]["rate"]
///     10000000.0
#[pyfunction]
fn resolve(scenario_json: &str) -> PyResult<String> {
    let scenario = parse(scenario_json)?;
    let resolved = aqmlab_core::net::resolved::resolve(&scenario).map_err(to_py)?;
    Ok(serde_json::to_string(&resolved).expect("the resolved scenario is plain data"))
}

/// The results as JSON text: every table, or with `summary_only` the summary, flows and drop
/// counts (what a summary is made of; the queue samples and throughput bins are most of a
/// whole result's bytes, issue 21's start-up goal).
fn results_json(results: &Results, summary_only: bool) -> String {
    if !summary_only {
        return results.to_json();
    }
    let tables = serde_json::json!({
        "summary": results.summary,
        "flows": results.flows,
        "drops": results.drops,
    });
    serde_json::to_string(&tables).expect("results are plain data")
}

/// Runs a scenario given as JSON text to its end and returns the results as JSON text
/// (with `summary_only`, only the summary, flows and drop counts).
/// The simulation runs without the GIL; Ctrl-C raises KeyboardInterrupt.
#[pyfunction]
#[pyo3(signature = (scenario_json, summary_only = false))]
fn run(py: Python<'_>, scenario_json: &str, summary_only: bool) -> PyResult<String> {
    let scenario = parse(scenario_json)?;
    let mut sim = build(&scenario)?;
    run_interruptibly(py, &mut sim, Time::MAX, scenario.simulation.duration.0)?;
    let results = py.allow_threads(move || sim.results().map(|r| results_json(&r, summary_only)));
    results.map_err(error_to_py)
}

/// A simulation that Python advances in steps (for progress reports).
///
/// `Simulation(scenario_json)`, optionally `capture_into(folder)`, then
/// `run_until(seconds)` as often as wanted, then `results()`. The engine runs
/// without the GIL.
#[pyclass(module = "aqmlab._core")]
struct Simulation {
    // The engine is `Send` but not `Sync`; the mutex makes the Python object shareable.
    inner: Mutex<aqmlab_core::sim::Simulation>,
    duration: f64,
}

impl Simulation {
    fn engine(&self) -> std::sync::MutexGuard<'_, aqmlab_core::sim::Simulation> {
        // A panic while simulating is a bug that already surfaced as an exception; the state is still readable.
        self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[pymethods]
impl Simulation {
    #[new]
    fn new(scenario_json: &str) -> PyResult<Self> {
        let scenario = parse(scenario_json)?;
        let sim = build(&scenario)?;
        Ok(Simulation {
            inner: Mutex::new(sim),
            duration: scenario.simulation.duration.0,
        })
    }

    /// Writes the packet captures `simulation.pcap` asks for into `folder` as the
    /// run goes (call before `run_until`); returns their paths. Raises OSError
    /// naming the file that cannot be written.
    fn capture_into(&self, folder: std::path::PathBuf) -> PyResult<Vec<std::path::PathBuf>> {
        Ok(self.engine().capture_into(&folder)?)
    }

    /// Processes every event up to `seconds` of simulated time (capped at the duration).
    /// Ctrl-C raises KeyboardInterrupt; the simulation can go on from where it stopped.
    fn run_until(&self, py: Python<'_>, seconds: f64) -> PyResult<()> {
        if seconds.is_nan() {
            return Err(PyValueError::new_err("run_until: seconds must be a number, got NaN"));
        }
        let until = from_secs(seconds.max(0.0));
        let mut engine = self.engine();
        run_interruptibly(py, &mut engine, until, self.duration)
    }

    /// Simulated time reached, seconds.
    #[getter]
    fn now(&self) -> f64 {
        to_secs(self.engine().now())
    }

    /// The scenario's `simulation.duration`, seconds.
    #[getter]
    fn duration(&self) -> f64 {
        self.duration
    }

    /// Results so far as JSON text (with `summary_only`, as `run`'s), the captures written
    /// out so far (raises RuntimeError if packet conservation fails: a simulator bug; OSError
    /// if a capture cannot be written).
    #[pyo3(signature = (summary_only = false))]
    fn results(&self, py: Python<'_>, summary_only: bool) -> PyResult<String> {
        self.engine().flush_captures()?;
        py.allow_threads(|| self.engine().results().map(|r| results_json(&r, summary_only)))
            .map_err(error_to_py)
    }

    /// Only the summary of the results so far, as JSON text (what `aqmlab bench` reads of a scale
    /// point: at 10⁶ flows the tables' text would be gigabytes). Raises as `results`.
    fn summary(&self, py: Python<'_>) -> PyResult<String> {
        let summary = |r: Results| serde_json::to_string(&r.summary).expect("the summary is plain data");
        py.allow_threads(|| self.engine().results().map(summary))
            .map_err(error_to_py)
    }
}

fn emulate_error_to_py(e: aqmlab_core::emulate::EmulateError) -> PyErr {
    use aqmlab_core::emulate::EmulateError;
    match e {
        EmulateError::Scenario(e) => to_py(e),
        EmulateError::System(e) => PyOSError::new_err(e.to_string()),
        EmulateError::Mechanism(e) => mechanism_to_py(e),
        EmulateError::Internal(e) => internal_to_py(e),
    }
}

/// The scenario's network in real time between real Linux endpoints (`aqmlab emulate`).
///
/// `Emulation(scenario_json, capture_dir=None)` checks the scenario (ScenarioError naming
/// what emulation cannot express), opens the captures `simulation.pcap` asks for in
/// `capture_dir` (OSError naming a file that cannot be written), makes the namespaces,
/// devices and sockets (OSError if the machine refuses, e.g. without root) and starts the
/// clock. Then `wait(seconds)` until it returns
/// True, and `finish()` for `(results_json, stats_json)`; `close()` (or Ctrl-C in `wait`)
/// stops every thread and removes every namespace.
#[pyclass(module = "aqmlab._core")]
struct Emulation {
    inner: Mutex<Option<aqmlab_core::emulate::Emulation>>,
    duration: f64,
    notes: Vec<String>,
    capture_files: Vec<std::path::PathBuf>,
}

impl Emulation {
    fn with<T>(&self, f: impl FnOnce(&aqmlab_core::emulate::Emulation) -> T) -> Option<T> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner()).as_ref().map(f)
    }
}

#[pymethods]
impl Emulation {
    #[new]
    #[pyo3(signature = (scenario_json, capture_dir = None))]
    fn new(py: Python<'_>, scenario_json: &str, capture_dir: Option<std::path::PathBuf>) -> PyResult<Self> {
        let scenario = parse(scenario_json)?;
        let emulation = py
            .allow_threads(|| {
                python_qdisc::building(&scenario, || {
                    aqmlab_core::emulate::Emulation::start(&scenario, capture_dir.as_deref())
                })
            })
            .map_err(emulate_error_to_py)?;
        Ok(Emulation {
            duration: emulation.duration(),
            notes: emulation.notes().to_vec(),
            capture_files: emulation.capture_files().to_vec(),
            inner: Mutex::new(Some(emulation)),
        })
    }

    /// Waits up to `seconds` (without the GIL, checking for signals every 50 ms); True once
    /// the emulation has reached its duration (or was closed).
    fn wait(&self, py: Python<'_>, seconds: f64) -> PyResult<bool> {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs_f64(seconds.clamp(0.0, 3600.0));
        loop {
            if self.with(|e| e.is_finished()).unwrap_or(true) {
                return Ok(true);
            }
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return Ok(false);
            }
            py.allow_threads(|| std::thread::sleep(left.min(std::time::Duration::from_millis(50))));
            py.check_signals()?;
        }
    }

    /// Seconds since the clock started.
    #[getter]
    fn elapsed(&self) -> f64 {
        self.with(|e| e.elapsed()).unwrap_or(self.duration)
    }

    #[getter]
    fn duration(&self) -> f64 {
        self.duration
    }

    /// What is taken differently from a simulation (e.g. the simulated TCP's options).
    #[getter]
    fn notes(&self) -> Vec<String> {
        self.notes.clone()
    }

    /// The capture files being written (`simulation.pcap`), complete once `finish` returns.
    #[getter]
    fn capture_files(&self) -> Vec<std::path::PathBuf> {
        self.capture_files.clone()
    }

    /// Stops every thread and removes the namespaces with their devices and sockets.
    fn close(&self, py: Python<'_>) {
        let emulation = self.inner.lock().unwrap_or_else(|p| p.into_inner()).take();
        py.allow_threads(move || drop(emulation));
    }

    /// Waits for the end and returns `(results_json, stats_json)`; removes the namespaces.
    fn finish(&self, py: Python<'_>) -> PyResult<(String, String)> {
        let emulation = self.inner.lock().unwrap_or_else(|p| p.into_inner()).take();
        let emulation = emulation.ok_or_else(|| PyRuntimeError::new_err("the emulation was closed"))?;
        let (results, stats) = py
            .allow_threads(move || emulation.finish())
            .map_err(emulate_error_to_py)?;
        Ok((results.to_json(), serde_json::to_string(&stats).expect("plain data")))
    }
}

/// Runs the TCP validation suite (closed-form checks) and returns its rows as JSON text:
/// a list of {key, metric, model, ours, tolerance, pass, note}.
#[pyfunction]
fn validate_tcp(py: Python<'_>) -> PyResult<String> {
    py.allow_threads(aqmlab_core::validation::tcp::run)
        .map(|rows| serde_json::to_string(&rows).expect("rows are plain data"))
        .map_err(error_to_py)
}

/// A command-line option's time in seconds: `"10s"`, `"500ms"`, or a bare number of seconds;
/// raises ScenarioError saying what is wrong (the caller names the option).
#[pyfunction]
fn seconds_option(text: &str) -> PyResult<f64> {
    aqmlab_core::units::Seconds::from_option(text)
        .map(|seconds| seconds.0)
        .map_err(ScenarioError::new_err)
}

/// What to write for the TOML syntax error in a scenario file's text (an inline table spread
/// over lines), or None: the Python front reads TOML with tomllib and adds this to its message.
#[pyfunction]
fn toml_syntax_hint(text: &str) -> Option<String> {
    aqmlab_core::scenario::syntax::hint(text)
}

/// BRED eq. 14: upper bound on one non-conforming CBR flow's throughput, as a fraction
/// of the link rate, with `n_c` non-conforming CBR flows and `n_t` conforming flows.
#[pyfunction]
fn bred_cbr_bound(alpha: f64, beta: f64, n_c: u32, n_t: u32) -> f64 {
    aqmlab_core::metrics::bounds::bred_cbr_bound(alpha, beta, n_c, n_t)
}

/// Jain's fairness index (Σx)² / (n·Σx²) (BRED eq. 17's fairness quotient).
#[pyfunction]
fn jain_index(values: Vec<f64>) -> f64 {
    aqmlab_core::metrics::jain_index(&values)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(resolve, m)?)?;
    m.add_function(wrap_pyfunction!(validate_tcp, m)?)?;
    m.add_function(wrap_pyfunction!(bred_cbr_bound, m)?)?;
    m.add_function(wrap_pyfunction!(jain_index, m)?)?;
    m.add_function(wrap_pyfunction!(toml_syntax_hint, m)?)?;
    m.add_function(wrap_pyfunction!(seconds_option, m)?)?;
    m.add_class::<Simulation>()?;
    m.add_class::<Emulation>()?;
    m.add_class::<python_qdisc::Packet>()?;
    m.add_class::<python_qdisc::Link>()?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("MechanismError", m.py().get_type::<MechanismError>())?;
    // Disciplines written in Python (`type = "python"`) are found through `aqmlab.python_qdisc`.
    aqmlab_core::qdisc::external::install(Box::new(python_qdisc::PythonQdiscs));
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
