//! Traffic sources and sinks ("agents"), ns-2 style: a flow is a sender agent
//! at its source node and a receiver agent at its destination node. Agents
//! exchange packets through the network and see nothing of the routers.

pub mod tcp;
pub mod udp;

use crate::error::ScenarioError;
use crate::packet::{FlowId, NodeId, Packet};
use crate::rng::Rng;
use crate::time::Time;
use crate::units::{Bytes, Rate, Seconds};
use crate::validate::{require_non_negative, require_positive};
use serde::{Deserialize, Serialize};

/// Everything an agent may do when it is called: send packets, set timers,
/// report delivered data and trace variables.
pub struct AgentCtx<'a> {
    pub now: Time,
    flow: FlowId,
    weight: f64,
    local: NodeId,
    peer: NodeId,
    outbox: &'a mut Vec<Packet>,
    timers: &'a mut Vec<(Time, u64)>,
    delivered: u64,
    trace: Option<&'a mut Vec<TraceSample>>,
}

impl<'a> AgentCtx<'a> {
    #[allow(clippy::too_many_arguments)] // built only by the engine, once per agent call
    pub fn new(
        now: Time,
        flow: FlowId,
        weight: f64,
        local: NodeId,
        peer: NodeId,
        outbox: &'a mut Vec<Packet>,
        timers: &'a mut Vec<(Time, u64)>,
        trace: Option<&'a mut Vec<TraceSample>>,
    ) -> Self {
        AgentCtx {
            now,
            flow,
            weight,
            local,
            peer,
            outbox,
            timers,
            delivered: 0,
            trace,
        }
    }

    /// Sends a packet to the peer agent (flow, weight, source and destination are filled in).
    pub fn send(&mut self, mut packet: Packet) {
        packet.flow = self.flow;
        packet.weight = self.weight;
        packet.src = self.local;
        packet.dst = self.peer;
        self.outbox.push(packet);
    }

    /// Calls the agent's `timer(token)` at time `at`. Timers cannot be
    /// cancelled: an agent ignores a stale token (keep a generation counter).
    pub fn set_timer(&mut self, at: Time, token: u64) {
        self.timers.push((at, token));
    }

    /// A receiver reports `bytes` of new, in-order data handed to the application (goodput).
    pub fn deliver(&mut self, bytes: u64) {
        self.delivered += bytes;
    }

    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    /// The flow this agent belongs to (e.g. to label the transfers it reports).
    pub fn flow(&self) -> FlowId {
        self.flow
    }

    /// Whether variable tracing is on for this flow (skip computing trace values otherwise).
    pub fn tracing(&self) -> bool {
        self.trace.is_some()
    }

    /// Records a traced variable (cwnd, ssthresh, rto, ...) at the current time.
    pub fn trace(&mut self, var: &'static str, value: f64) {
        let (now, flow) = (self.now, self.flow);
        if let Some(t) = self.trace.as_deref_mut() {
            t.push(TraceSample {
                time: crate::time::to_secs(now),
                flow,
                var,
                value,
            });
        }
    }
}

/// A sender or receiver endpoint.
pub trait Agent: Send {
    /// Called once at the flow's start time.
    fn start(&mut self, ctx: &mut AgentCtx);
    /// A packet of this flow reached this agent's node.
    fn receive(&mut self, packet: &Packet, ctx: &mut AgentCtx);
    /// A timer set with [`AgentCtx::set_timer`] fired.
    fn timer(&mut self, token: u64, ctx: &mut AgentCtx);
    /// End-of-run counters.
    fn stats(&self) -> AgentStats {
        AgentStats::default()
    }
}

/// Counters an agent reports at the end of a run (zero where not applicable).
#[derive(Clone, Debug, Default, Serialize)]
pub struct AgentStats {
    pub timeouts: u64,
    pub fast_retransmits: u64,
    pub retransmitted_packets: u64,
    pub transfers: Vec<Transfer>,
}

/// One finite transfer (a web object): when it started, when its last byte was acknowledged.
#[derive(Clone, Debug, Serialize)]
pub struct Transfer {
    pub flow: FlowId,
    pub start: f64,
    pub end: Option<f64>,
    pub packets: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct TraceSample {
    pub time: f64,
    pub flow: FlowId,
    pub var: &'static str,
    pub value: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FlowType {
    /// Long-lived or finite TCP transfer.
    Tcp,
    /// Constant bit rate UDP.
    Cbr,
    /// UDP that alternates exponential ON (sending at `rate`) and OFF periods.
    Onoff,
}

/// A CBR rate change at a given time (RED-PD §5.2/§7.3).
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RateChange {
    pub at: Seconds,
    pub rate: Rate,
}

/// One flow (or `count` identical flows) in a scenario file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    #[serde(rename = "type")]
    pub kind: FlowType,
    pub name: Option<String>,
    /// Expands into this many identical flows (named `name[i]`).
    #[serde(default = "one")]
    pub count: u32,
    /// Graph topology: source and destination node names.
    pub src: Option<String>,
    pub dst: Option<String>,
    /// Dumbbell: this flow's access link rate and delays (default: the topology's).
    pub access_rate: Option<Rate>,
    pub access_delay: Option<Seconds>,
    pub sink_delay: Option<Seconds>,
    /// Parking lot: cross traffic of congested link `hop` only (default: through all links).
    pub hop: Option<u32>,
    #[serde(default)]
    pub start: Seconds,
    /// Start uniformly at random in `[start, start + start_jitter)` (RED-PD §7: within 10 s).
    #[serde(default)]
    pub start_jitter: Seconds,
    pub stop: Option<Seconds>,
    /// Data packet size on the wire, bytes.
    #[serde(default = "default_packet_size")]
    pub packet_size: Bytes,
    /// CSFQ weight (weighted CSFQ §2.3).
    #[serde(default = "one_f64")]
    pub weight: f64,

    // --- UDP (cbr, onoff) ---
    /// Sending rate (ON rate for onoff), bits/s on the wire.
    pub rate: Option<Rate>,
    /// CBR: inter-packet gap uniform in [0.5, 1.5) x interval (CSFQ §3).
    #[serde(default)]
    pub jitter: bool,
    #[serde(default)]
    pub rate_changes: Vec<RateChange>,
    /// ON-OFF: mean ON and OFF periods (exponential).
    pub on_time: Option<Seconds>,
    pub off_time: Option<Seconds>,

    // --- TCP ---
    #[serde(default)]
    pub tcp: tcp::TcpOptions,
}

fn one() -> u32 {
    1
}
fn one_f64() -> f64 {
    1.0
}
fn default_packet_size() -> Bytes {
    Bytes(1000)
}

impl FlowSpec {
    /// `nodes` is the graph's node list (None for a dumbbell).
    pub fn validate(&self, path: &str, nodes: Option<&[String]>, duration: f64) -> Result<(), ScenarioError> {
        if self.count == 0 {
            return Err(ScenarioError::new(format!("{path}.count"), "must be >= 1, got 0"));
        }
        match nodes {
            Some(nodes) => {
                for (field, value) in [("src", &self.src), ("dst", &self.dst)] {
                    match value {
                        None => {
                            return Err(ScenarioError::new(
                                format!("{path}.{field}"),
                                "required in a graph topology",
                            ))
                        }
                        Some(n) if !nodes.contains(n) => {
                            return Err(ScenarioError::new(
                                format!("{path}.{field}"),
                                format!("unknown node {n:?}"),
                            ))
                        }
                        _ => {}
                    }
                }
                if self.src == self.dst {
                    return Err(ScenarioError::new(format!("{path}.dst"), "must differ from src"));
                }
            }
            None => {
                for (field, value) in [("src", &self.src), ("dst", &self.dst)] {
                    if value.is_some() {
                        return Err(ScenarioError::new(format!("{path}.{field}"), "not used in a dumbbell or parking_lot (each flow has its own source and sink); use a graph topology"));
                    }
                }
            }
        }
        if let Some(r) = self.access_rate {
            require_positive(&format!("{path}.access_rate"), r.0)?;
        }
        for (field, value) in [("access_delay", self.access_delay), ("sink_delay", self.sink_delay)] {
            if let Some(v) = value {
                require_non_negative(&format!("{path}.{field}"), v.0)?;
            }
        }
        require_non_negative(&format!("{path}.start"), self.start.0)?;
        require_non_negative(&format!("{path}.start_jitter"), self.start_jitter.0)?;
        if self.start.0 >= duration {
            return Err(ScenarioError::new(
                format!("{path}.start"),
                format!("must be < simulation.duration ({duration}), got {}", self.start.0),
            ));
        }
        if let Some(stop) = self.stop {
            if stop.0 <= self.start.0 {
                return Err(ScenarioError::new(
                    format!("{path}.stop"),
                    format!("must be > start ({}), got {}", self.start.0, stop.0),
                ));
            }
        }
        if self.packet_size.0 < 40 || self.packet_size.0 > 65_535 {
            return Err(ScenarioError::new(
                format!("{path}.packet_size"),
                format!("must be in [40, 65535] bytes, got {}", self.packet_size.0),
            ));
        }
        require_positive(&format!("{path}.weight"), self.weight)?;
        match self.kind {
            FlowType::Cbr | FlowType::Onoff => {
                let rate = self.rate.ok_or_else(|| {
                    ScenarioError::new(
                        format!("{path}.rate"),
                        format!("required for {} flows", self.type_name()),
                    )
                })?;
                require_positive(&format!("{path}.rate"), rate.0)?;
                for (i, c) in self.rate_changes.iter().enumerate() {
                    require_non_negative(&format!("{path}.rate_changes[{i}].at"), c.at.0)?;
                    require_positive(&format!("{path}.rate_changes[{i}].rate"), c.rate.0)?;
                }
                if self.kind == FlowType::Onoff {
                    for (field, value) in [("on_time", self.on_time), ("off_time", self.off_time)] {
                        let v = value
                            .ok_or_else(|| ScenarioError::new(format!("{path}.{field}"), "required for onoff flows"))?;
                        require_positive(&format!("{path}.{field}"), v.0)?;
                    }
                }
                if !self.tcp.is_default() {
                    return Err(ScenarioError::new(
                        format!("{path}.tcp"),
                        format!("only for tcp flows, this one is {}", self.type_name()),
                    ));
                }
            }
            FlowType::Tcp => {
                for (field, set) in [
                    ("rate", self.rate.is_some()),
                    ("jitter", self.jitter),
                    ("rate_changes", !self.rate_changes.is_empty()),
                    ("on_time", self.on_time.is_some()),
                    ("off_time", self.off_time.is_some()),
                ] {
                    if set {
                        return Err(ScenarioError::new(
                            format!("{path}.{field}"),
                            "not used by tcp flows (they are window-controlled)",
                        ));
                    }
                }
                self.tcp.validate(&format!("{path}.tcp"))?;
            }
        }
        Ok(())
    }

    pub fn type_name(&self) -> &'static str {
        match self.kind {
            FlowType::Tcp => "tcp",
            FlowType::Cbr => "cbr",
            FlowType::Onoff => "onoff",
        }
    }

    /// Offered load in bits/s when the flow is rate-driven (None for TCP: elastic).
    pub fn demand_bps(&self) -> Option<f64> {
        let rate = self.rate?.0;
        match self.kind {
            FlowType::Cbr => Some(self.rate_changes.iter().fold(rate, |m, c| m.max(c.rate.0))),
            FlowType::Onoff => {
                let (on, off) = (self.on_time?.0, self.off_time?.0);
                Some(rate * on / (on + off))
            }
            FlowType::Tcp => None,
        }
    }

    /// Builds the (sender, receiver) pair; `stop` is when the sender stops (end of run if unset).
    pub fn build_agents(&self, stop: Time, rng: Rng) -> (Box<dyn Agent>, Box<dyn Agent>) {
        let size = self.packet_size.0 as u32;
        match self.kind {
            FlowType::Cbr => (Box::new(udp::Cbr::new(self, stop, rng)), Box::new(udp::UdpSink)),
            FlowType::Onoff => (Box::new(udp::OnOff::new(self, stop, rng)), Box::new(udp::UdpSink)),
            FlowType::Tcp => tcp::build(&self.tcp, size, stop, rng),
        }
    }
}
