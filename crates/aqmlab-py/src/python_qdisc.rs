//! The bridge that runs a queue discipline written in Python (`type = "python"`, issue 35)
//! as an ordinary [`QueueDisc`]: the core's `qdisc::external` provider.
//!
//! `aqmlab.python_qdisc` (Python) finds the class and checks its parameters; this file calls the
//! object's `enqueue(packet, link)` and `dequeue(link)` for the engine. A packet crosses as a
//! [`Packet`] view (its id and headers, a copy: the packet itself stays in the engine's arena);
//! `link` is the discipline's one [`Link`] object, which tells the clock, the backlog and the
//! rate, draws from the discipline's own random stream, and takes the verbs (`drop`, `mark`),
//! applied through the engine's `QdiscCtx` when the call returns. Every rule of the engine's
//! contract a Python discipline could break is checked here and reported by name
//! (`QdiscCtx::fail`), as is an exception in its code; the exception itself is kept for the
//! Python caller of the run ([`take_exception`]), which shows the user's traceback.

use aqmlab_core::packet::{Ecn, Packet as CorePacket, PacketId, PacketKind};
use aqmlab_core::qdisc::external::{ExternalConfig, ExternalQdiscs};
use aqmlab_core::qdisc::{Backlog, DropReason, Gauges, LinkInfo, QdiscCtx, QueueDisc, ReasonName, Verdict};
use aqmlab_core::rng::{self, Rng};
use aqmlab_core::time::{to_secs, Time};
use aqmlab_core::{Scenario, ScenarioError};
use pyo3::exceptions::PyValueError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::{PyDict, PyString};
use std::cell::RefCell;
use std::sync::{Arc, Mutex};

thread_local! {
    /// The flows of the scenario whose network this thread is building ([`building`]): a
    /// provider's `build` sees one link, not the scenario. Their names are made for Python at
    /// the first Python discipline, so that a scenario without one pays nothing for them.
    static BUILDING: RefCell<Option<FlowNames>> = const { RefCell::new(None) };
}

enum FlowNames {
    Pending(Box<Scenario>),
    /// By flow id.
    Made(Arc<[Py<PyString>]>),
}

/// Runs `build`, which makes `scenario`'s network, with the flows' names at hand for the Python
/// disciplines it builds (their packets' `flow_name`).
pub fn building<T>(scenario: &Scenario, build: impl FnOnce() -> T) -> T {
    BUILDING.with(|b| *b.borrow_mut() = Some(FlowNames::Pending(Box::new(scenario.clone()))));
    let built = build();
    BUILDING.with(|b| b.borrow_mut().take());
    built
}

/// The names of the flows of the network being built, by flow id (none outside [`building`]).
fn flow_names(py: Python<'_>) -> Arc<[Py<PyString>]> {
    BUILDING.with(|b| {
        let mut slot = b.borrow_mut();
        let names = match slot.take() {
            Some(FlowNames::Made(names)) => names,
            Some(FlowNames::Pending(scenario)) => {
                let flows = scenario.expanded_flows();
                flows.iter().map(|f| PyString::new(py, &f.name).unbind()).collect()
            }
            None => Arc::from([]),
        };
        *slot = Some(FlowNames::Made(names.clone()));
        names
    })
}

/// The exception that stopped the last run, for the Python caller to chain to its error.
static EXCEPTION: Mutex<Option<PyErr>> = Mutex::new(None);

/// The exception a Python discipline raised in the run that just failed, if any.
pub fn take_exception() -> Option<PyErr> {
    EXCEPTION.lock().unwrap_or_else(|e| e.into_inner()).take()
}

/// A packet as a router sees it, for a Python discipline: a copy of its headers, with the id
/// that names it to the engine.
#[pyclass(module = "aqmlab._core", frozen)]
pub struct Packet {
    #[pyo3(get)]
    id: PacketId,
    /// The flow's id (the `flows` table's `id`).
    #[pyo3(get)]
    flow: u32,
    /// The flow's name (the `flows` table's `name`: `web[2]`).
    #[pyo3(get)]
    flow_name: Py<PyString>,
    /// Bytes on the wire.
    #[pyo3(get)]
    size: u32,
    /// `"data"` or `"ack"`.
    #[pyo3(get)]
    kind: &'static str,
    /// `"not-ect"`, `"ect"` (ECT(0), RFC 3168), `"ect1"` (ECT(1), the L4S identifier of RFC 9331)
    /// or `"ce"`.
    #[pyo3(get)]
    ecn: &'static str,
    /// CSFQ's label (the flow's rate estimate, bit/s), 0 when unlabelled.
    #[pyo3(get)]
    label: f64,
    /// When it entered this queue (s).
    #[pyo3(get)]
    enqueued_at: f64,
}

fn ecn_name(ecn: Ecn) -> &'static str {
    match ecn {
        Ecn::NotEct => "not-ect",
        Ecn::Ect0 => "ect",
        Ecn::Ect1 => "ect1",
        Ecn::Ce => "ce",
    }
}

impl Packet {
    fn of(py: Python<'_>, id: PacketId, p: &CorePacket, flow_names: &[Py<PyString>]) -> Packet {
        Packet {
            id,
            flow: p.flow,
            flow_name: match flow_names.get(p.flow as usize) {
                Some(name) => name.clone_ref(py),
                None => PyString::new(py, &format!("flow{}", p.flow)).unbind(),
            },
            size: p.size,
            kind: match p.kind {
                PacketKind::Data => "data",
                PacketKind::Ack => "ack",
            },
            ecn: ecn_name(p.ecn),
            label: p.label,
            enqueued_at: to_secs(p.enqueued_at),
        }
    }
}

#[pymethods]
impl Packet {
    fn __repr__(&self) -> String {
        format!(
            "<Packet {} of flow {} ({}): {}, {} B, {}>",
            self.id, self.flow, self.flow_name, self.kind, self.size, self.ecn
        )
    }
}

/// What a verb asked of the engine during one call.
enum Request {
    Drop(PacketId, DropReason),
    Mark(PacketId),
}

/// The link a Python discipline serves, as its methods see it during a call: the clock, the
/// queue's backlog as the link counts it, the rate, the discipline's random stream, and the
/// verbs.
#[pyclass(module = "aqmlab._core")]
pub struct Link {
    /// Simulated time (s), and in integer nanoseconds, the engine's own clock (for arithmetic
    /// that must come out as a built-in discipline's does).
    #[pyo3(get)]
    now: f64,
    #[pyo3(get)]
    now_ns: u64,
    /// Packets and bytes queued (the arrival not counted yet, a packet being dequeued still
    /// counted; less those dropped in this call).
    #[pyo3(get)]
    backlog_packets: usize,
    #[pyo3(get)]
    backlog_bytes: u64,
    /// The link's rate now (bit/s); it changes with `rate_changes`.
    #[pyo3(get)]
    rate_bps: f64,
    /// Its propagation delay (s).
    #[pyo3(get)]
    delay: f64,
    rng: Rng,
    requests: Vec<Request>,
    /// A verb's error that its Python caller may have swallowed: the run stops on it anyway.
    broken: Option<String>,
}

#[pymethods]
impl Link {
    /// A uniform draw from [0, 1) from the discipline's own stream (seeded from the scenario's
    /// seed and the link, as a built-in discipline's).
    fn random(&mut self) -> f64 {
        rng::uniform(&mut self.rng)
    }

    /// Drops `packet`, the arrival or one the discipline holds, for `reason`: a built-in reason
    /// (`"overflow"`, `"early"`, ...) or one of its own naming, which the drops table shows.
    #[pyo3(signature = (packet, reason = None))]
    fn drop(&mut self, packet: &Bound<'_, PyAny>, reason: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let packet = self.packet_of(packet, "drop")?;
        let reason = match reason.map(|r| r.downcast::<PyString>()) {
            None => DropReason::Overflow,
            Some(Ok(name)) => ReasonName::reason(name.to_str()?).map_err(|e| self.broke(format!("drop: {e}")))?,
            Some(Err(_)) => {
                let what = reason.map(|r| r.get_type().name().map(|n| n.to_string())).transpose()?;
                let what = what.unwrap_or_default();
                return Err(self.broke(format!("drop: the reason must be a string, got {what}")));
            }
        };
        self.backlog_packets = self.backlog_packets.saturating_sub(1);
        self.backlog_bytes = self.backlog_bytes.saturating_sub(u64::from(packet.size));
        self.requests.push(Request::Drop(packet.id, reason));
        Ok(())
    }

    /// Marks `packet` Congestion Experienced instead of dropping it (RFC 3168): only an
    /// ECN-capable one (`packet.ecn == "ect"`).
    fn mark(&mut self, packet: &Bound<'_, PyAny>) -> PyResult<()> {
        let packet = self.packet_of(packet, "mark")?;
        if packet.ecn == "not-ect" {
            return Err(self.broke(format!(
                "mark: packet {} is not ECN-capable (its ecn is \"not-ect\")",
                packet.id
            )));
        }
        self.requests.push(Request::Mark(packet.id));
        Ok(())
    }
}

impl Link {
    fn packet_of<'py>(&mut self, packet: &Bound<'py, PyAny>, verb: &str) -> PyResult<PyRef<'py, Packet>> {
        packet.downcast::<Packet>().map(|p| p.borrow()).map_err(|_| {
            let what = packet.get_type().name().map(|n| n.to_string()).unwrap_or_default();
            self.broke(format!("{verb}: expected a packet the engine gave, got {what}"))
        })
    }

    fn broke(&mut self, what: String) -> PyErr {
        self.broken.get_or_insert(what.clone());
        PyValueError::new_err(what)
    }

    fn see(&mut self, now: Time, backlog: Backlog) {
        self.now = to_secs(now);
        self.now_ns = now;
        self.backlog_packets = backlog.packets;
        self.backlog_bytes = backlog.bytes;
    }
}

/// The provider the module installs: finds classes through `aqmlab.python_qdisc`.
pub struct PythonQdiscs;

fn mechanism_module(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    static MODULE: GILOnceCell<Py<PyAny>> = GILOnceCell::new();
    MODULE
        .get_or_try_init(py, || py.import("aqmlab.python_qdisc").map(|m| m.into_any().unbind()))
        .map(|m| m.bind(py))
}

fn params_json(config: &ExternalConfig) -> String {
    serde_json::Value::Object(config.params.clone()).to_string()
}

impl ExternalQdiscs for PythonQdiscs {
    fn validate(&self, config: &ExternalConfig, path: &str) -> Result<(), ScenarioError> {
        Python::with_gil(|py| {
            mechanism_module(py)?.call_method1("validate", (&config.class, params_json(config), path))?;
            Ok::<_, PyErr>(())
        })
        // `aqmlab.python_qdisc` words the message, naming the field.
        .map_err(|e| Python::with_gil(|py| ScenarioError::new("", e.value(py).to_string())))
    }

    fn build(&self, config: &ExternalConfig, link: &LinkInfo, rng: Rng) -> Box<dyn QueueDisc> {
        Python::with_gil(|py| {
            let view = Link {
                now: 0.0,
                now_ns: 0,
                backlog_packets: 0,
                backlog_bytes: 0,
                rate_bps: link.rate_bps,
                delay: to_secs(link.delay),
                rng,
                requests: Vec::new(),
                broken: None,
            };
            let built = mechanism_module(py)
                .and_then(|m| m.call_method1("build", (&config.class, params_json(config))))
                .and_then(|object| Ok((object.unbind(), Py::new(py, view)?)));
            let qdisc = match built {
                Ok((object, link)) => PythonQdisc::new(py, object, Some(link), &config.class),
                Err(e) => PythonQdisc::new(py, py.None(), None, &config.class).raising(py, e),
            };
            Box::new(qdisc)
        })
    }
}

/// One link's Python discipline.
struct PythonQdisc {
    object: Py<PyAny>,
    link: Option<Py<Link>>,
    /// The class's name, for messages.
    class: String,
    /// By flow id, for the packets' `flow_name`.
    flow_names: Arc<[Py<PyString>]>,
    /// By packet id, whether the discipline holds it (an arrival it did not drop, not yet
    /// dequeued or dropped), and how many it holds.
    held: Vec<bool>,
    holding: usize,
    /// The first failure, until the engine takes it through the next call's `QdiscCtx`.
    failure: Option<String>,
    /// Once it failed the run stops: later calls do nothing.
    failed: bool,
    can_mark: bool,
}

impl PythonQdisc {
    /// The discipline of `object` serving `link` (None when the class could not be made).
    fn new(py: Python<'_>, object: Py<PyAny>, link: Option<Py<Link>>, class: &str) -> Self {
        let can_mark = object
            .bind(py)
            .getattr(intern!(py, "can_mark"))
            .and_then(|v| v.is_truthy())
            .unwrap_or(false);
        PythonQdisc {
            object,
            link,
            // Its name in messages: the class's, not the path to it.
            class: class.rsplit(':').next().unwrap_or(class).to_owned(),
            flow_names: flow_names(py),
            held: Vec::new(),
            holding: 0,
            failure: None,
            failed: false,
            can_mark,
        }
    }

    /// Made once by validate(), the class raised when made again for a link: the run stops at
    /// the first packet.
    fn raising(mut self, py: Python<'_>, e: PyErr) -> Self {
        self.raised(py, e, "__init__", None);
        self
    }

    fn holds(&self, id: PacketId) -> bool {
        self.held.get(id as usize).copied().unwrap_or(false)
    }

    fn hold(&mut self, id: PacketId, yes: bool) {
        let i = id as usize;
        if self.held.len() <= i {
            self.held.resize(i + 1, false);
        }
        self.held[i] = yes;
        if yes {
            self.holding += 1;
        } else {
            self.holding -= 1;
        }
    }

    /// Stops the run with `what`, the first failure kept.
    fn fail(&mut self, what: String) {
        self.failed = true;
        self.failure.get_or_insert(what);
    }

    /// The user's method raised `e`: the message names the class, the method and the packet;
    /// the exception is kept for the caller's traceback.
    fn raised(&mut self, py: Python<'_>, e: PyErr, method: &str, packet: Option<&CorePacket>) {
        let about = packet.map_or(String::new(), |p| {
            let view = Packet::of(py, 0, p, &self.flow_names);
            let flow = format!("flow {} ({})", view.flow, view.flow_name);
            format!(" (the arrival: {flow}, {}, {} B)", view.kind, view.size)
        });
        let kind = e.get_type(py).name().map(|n| n.to_string()).unwrap_or_default();
        self.fail(format!("{}.{method} raised {kind}: {}{about}", self.class, e.value(py)));
        let mut slot = EXCEPTION.lock().unwrap_or_else(|e| e.into_inner());
        slot.get_or_insert(e);
    }

    /// Applies what the call asked (`requests`), checking each against the contract; gives
    /// whether the arrival (if any) was dropped, and for what.
    fn apply(&mut self, link: &mut Link, ctx: &mut QdiscCtx, method: &str) -> Option<DropReason> {
        if let Some(broken) = link.broken.take() {
            self.fail(format!("{}.{method}: {broken}", self.class));
        }
        let arrival = ctx.arrival();
        let mut dropped = None;
        for request in link.requests.drain(..) {
            match request {
                Request::Drop(id, reason) if Some(id) == arrival && dropped.is_none() => dropped = Some(reason),
                Request::Drop(id, reason) if self.holds(id) => {
                    self.hold(id, false);
                    ctx.drop_packet(id, reason);
                }
                Request::Mark(id) if Some(id) == arrival && dropped.is_none() || self.holds(id) => ctx.mark(id),
                Request::Drop(id, _) | Request::Mark(id) => {
                    let verb = if matches!(request, Request::Drop(..)) {
                        "dropped"
                    } else {
                        "marked"
                    };
                    self.fail(format!(
                        "{}.{method} {verb} packet {id}, which it does not hold (dropped or dequeued already, or never given)",
                        self.class
                    ));
                }
            }
        }
        dropped
    }

    /// Runs `call(object, link)` with the link showing `ctx`'s clock and backlog, then applies
    /// its verbs; None when it raised (then it failed).
    fn call<T>(
        &mut self,
        ctx: &mut QdiscCtx,
        method: &str,
        packet: Option<&CorePacket>,
        call: impl FnOnce(Python<'_>, &Py<PyAny>, &Py<Link>) -> PyResult<T>,
    ) -> Option<(T, Option<DropReason>)> {
        Python::with_gil(|py| {
            let link = self
                .link
                .as_ref()
                .expect("a discipline that was built has its link")
                .clone_ref(py);
            link.borrow_mut(py).see(ctx.now, ctx.backlog());
            let result = call(py, &self.object, &link);
            let dropped = self.apply(&mut link.borrow_mut(py), ctx, method);
            match result {
                Ok(value) => Some((value, dropped)),
                Err(e) => {
                    self.raised(py, e, method, packet);
                    None
                }
            }
        })
    }

    /// Hands the engine the failure, once (the engine stops the run at its end of slice).
    fn report(&mut self, ctx: &mut QdiscCtx) {
        if let Some(failure) = self.failure.take() {
            ctx.fail(failure);
        }
    }
}

impl QueueDisc for PythonQdisc {
    fn enqueue(&mut self, id: PacketId, ctx: &mut QdiscCtx) -> Verdict {
        if self.failed {
            self.report(ctx);
            return Verdict::Dropped(DropReason::Overflow);
        }
        let header = ctx.packets[id];
        let names = Arc::clone(&self.flow_names);
        let called = self.call(ctx, "enqueue", Some(&header), |py, object, link| {
            let packet = Py::new(py, Packet::of(py, id, &header, &names))?;
            object.call_method1(py, intern!(py, "enqueue"), (packet, link.clone_ref(py)))
        });
        self.report(ctx);
        match called {
            Some((_, Some(reason))) => Verdict::Dropped(reason),
            Some((_, None)) => {
                self.hold(id, true);
                Verdict::Enqueued
            }
            // The run stops; the arrival is dropped so that the engine's accounting holds.
            None => Verdict::Dropped(DropReason::Overflow),
        }
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        if self.failed {
            self.report(ctx);
            return None;
        }
        let called = self.call(ctx, "dequeue", None, |py, object, link| {
            let next = object.call_method1(py, intern!(py, "dequeue"), (link.clone_ref(py),))?;
            let next = next.bind(py);
            if next.is_none() {
                return Ok(Err(None));
            }
            Ok(match next.downcast::<Packet>() {
                Ok(packet) => Ok(packet.borrow().id),
                Err(_) => Err(Some(next.get_type().name()?.to_string())),
            })
        });
        let next = match called {
            Some((Ok(id), _)) if self.holds(id) => {
                self.hold(id, false);
                Some(id)
            }
            Some((Ok(id), _)) => {
                self.fail(format!(
                    "{}.dequeue returned packet {id}, which it does not hold (dropped or dequeued already, or never given)",
                    self.class
                ));
                None
            }
            Some((Err(Some(what)), _)) => {
                self.fail(format!(
                    "{}.dequeue returned a {what}; it returns a packet it holds, or None",
                    self.class
                ));
                None
            }
            Some((Err(None), _)) if self.holding > 0 => {
                self.fail(format!(
                    "{}.dequeue returned None while it holds {} packet(s): it may return None only when it holds none",
                    self.class, self.holding
                ));
                None
            }
            _ => None,
        };
        self.report(ctx);
        next
    }

    fn gauges(&self) -> Gauges {
        Python::with_gil(|py| {
            let average = self
                .object
                .bind(py)
                .call_method0(intern!(py, "gauges"))
                .ok()
                .and_then(|g| g.downcast_into::<PyDict>().ok())
                .and_then(|g| g.get_item("average").ok().flatten())
                .and_then(|v| v.extract::<f64>().ok());
            Gauges {
                average,
                hit_frequency: None,
            }
        })
    }

    fn can_mark(&self) -> bool {
        self.can_mark
    }

    fn counters(&self) -> Vec<(&'static str, f64)> {
        Python::with_gil(|py| {
            let Ok(counters) = self.object.bind(py).call_method0(intern!(py, "counters")) else {
                return Vec::new();
            };
            let Ok(counters) = counters.downcast_into::<PyDict>() else {
                return Vec::new();
            };
            let mut rows: Vec<(String, f64)> = counters
                .iter()
                .filter_map(|(k, v)| Some((k.extract::<String>().ok()?, v.extract::<f64>().ok()?)))
                .collect();
            rows.sort_by(|a, b| a.0.cmp(&b.0));
            rows.into_iter()
                .map(|(name, value)| (intern_counter(&name), value))
                .collect()
        })
    }

    fn set_link_rate(&mut self, rate_bps: f64) {
        if let Some(link) = &self.link {
            Python::with_gil(|py| {
                link.borrow_mut(py).rate_bps = rate_bps;
            });
        }
    }
}

/// A counter's name, kept once for the process.
fn intern_counter(name: &str) -> &'static str {
    static NAMES: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&kept) = names.iter().find(|&&n| n == name) {
        return kept;
    }
    let kept: &'static str = Box::leak(name.to_owned().into_boxed_str());
    names.push(kept);
    kept
}
