//! Traffic sources and sinks ("agents"), ns-2 style: a flow is a sender agent
//! at its source node and a receiver agent at its destination node. Agents
//! exchange packets through the network and see nothing of the routers.
//!
//! To add a flow type: write its config (implementing [`FlowConfig`]) next to
//! its agents (as `udp.rs`, `tfrc.rs` and `tcp/` do), then add one line to the
//! `tagged_registry!` invocation in [`flow`].

pub mod flow;
pub mod ns2_rtt;
pub mod rlm;
pub mod tcp;
#[cfg(test)]
pub(crate) mod testing;
pub mod tfrc;
pub mod tfrc_ns2;
pub mod timer;
pub mod udp;
pub mod video;

use crate::error::ScenarioError;
use crate::packet::{FlowId, NodeId, Packet};
use crate::rng::Rng;
use crate::time::Time;
use serde::Serialize;

pub use flow::{FlowCommon, FlowKind, FlowSpec};
pub use timer::{TimerKind, Token};

/// The config of one flow type, as read from a scenario file.
pub trait FlowConfig {
    /// Checks the parameters; errors name the field under `path` (e.g. `flows[0].rate`).
    fn validate(&self, path: &str) -> Result<(), ScenarioError>;
    /// Offered load in bits/s for a rate-driven flow; None for an elastic one (TCP).
    fn demand_bps(&self) -> Option<f64>;
    /// Whether the flow records its transport variables (`traces`).
    fn traced(&self) -> bool {
        false
    }
    /// Why the flow's source cannot pause (`pauses`), if it cannot.
    fn cannot_pause(&self) -> Option<&'static str> {
        Some("only tcp flows with the infinite workload, cbr, onoff and video flows pause")
    }
    /// Builds the (sender, receiver) pair; `size` is the data packet size in
    /// bytes, `offer` when the application offers data, `rng` the flow's random stream.
    fn build(&self, size: u32, offer: &Offer, rng: Rng) -> (Box<dyn Agent>, Box<dyn Agent>);
}

/// The ECN codepoint a source sends its data packets with (`ecn`; RFC 3168 §5): not
/// ECN-capable, ECT(0) (classic ECN), or ECT(1), the L4S identifier (RFC 9331 §4.1) that a
/// dual-queue AQM classifies into its low-latency queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Codepoint {
    #[default]
    NotEct,
    Ect0,
    Ect1,
}

impl Codepoint {
    pub fn ecn(self) -> crate::packet::Ecn {
        match self {
            Codepoint::NotEct => crate::packet::Ecn::NotEct,
            Codepoint::Ect0 => crate::packet::Ecn::Ect0,
            Codepoint::Ect1 => crate::packet::Ecn::Ect1,
        }
    }
}

/// When a sender's application offers data: from the flow's start until `stop`, except in
/// its `pauses` (`[at, until)` each, sorted and disjoint; a flow's `pauses`).
#[derive(Clone, Debug, PartialEq)]
pub struct Offer {
    pub stop: Time,
    pub pauses: Vec<(Time, Time)>,
}

impl Offer {
    /// Data until `stop`, without pauses.
    pub fn until(stop: Time) -> Self {
        Offer {
            stop,
            pauses: Vec::new(),
        }
    }

    /// Whether the application offers data at `now`.
    #[inline]
    pub fn offers(&self, now: Time) -> bool {
        now < self.stop && self.paused_until(now).is_none()
    }

    /// The end of the pause `now` is in, if it is in one.
    #[inline]
    pub fn paused_until(&self, now: Time) -> Option<Time> {
        self.pauses
            .iter()
            .find(|&&(at, until)| at <= now && now < until)
            .map(|&(_, until)| until)
    }
}

/// Everything an agent may do when it is called: send packets, set timers,
/// report delivered data and trace variables.
pub struct AgentCtx<'a> {
    pub now: Time,
    flow: FlowId,
    weight: f64,
    local: NodeId,
    peer: NodeId,
    outbox: &'a mut Vec<Packet>,
    timers: &'a mut Vec<(Time, Token)>,
    delivered: u64,
    trace: Option<&'a mut Vec<TraceSample>>,
}

impl<'a> AgentCtx<'a> {
    /// A call at `now` of flow 0's agent at node 0 with peer node 1, weight 1, not traced;
    /// the engine says which with [`for_flow`](Self::for_flow), [`between`](Self::between) and
    /// [`traced`](Self::traced).
    #[inline]
    pub fn new(now: Time, outbox: &'a mut Vec<Packet>, timers: &'a mut Vec<(Time, Token)>) -> Self {
        AgentCtx {
            now,
            flow: 0,
            weight: 1.0,
            local: 0,
            peer: 1,
            outbox,
            timers,
            delivered: 0,
            trace: None,
        }
    }

    /// The agent's flow and the flow's weight (CSFQ's, carried by its packets).
    #[inline]
    pub fn for_flow(self, flow: FlowId, weight: f64) -> Self {
        AgentCtx { flow, weight, ..self }
    }

    /// The agent's node and its peer's.
    #[inline]
    pub fn between(self, local: NodeId, peer: NodeId) -> Self {
        AgentCtx { local, peer, ..self }
    }

    /// Where traced variables go; `None`: the flow is not traced.
    #[inline]
    pub fn traced(self, trace: Option<&'a mut Vec<TraceSample>>) -> Self {
        AgentCtx { trace, ..self }
    }

    /// Sends a packet to the peer agent (flow, weight, source and destination are filled in).
    pub fn send(&mut self, mut packet: Packet) {
        packet.flow = self.flow;
        packet.weight = self.weight;
        packet.src = self.local;
        packet.dst = self.peer;
        self.outbox.push(packet);
    }

    /// Calls the agent's `timer` with `kind`'s token at time `at`. Timers cannot be
    /// cancelled: an agent ignores a stale one by its [`timer::Generation`].
    pub fn set_timer(&mut self, at: Time, kind: impl TimerKind) {
        self.timers.push((at, kind.to_token()));
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
    /// A timer set with [`AgentCtx::set_timer`] fired: the agent's own kind, read back with
    /// [`TimerKind::from_token`].
    fn timer(&mut self, token: Token, ctx: &mut AgentCtx);
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
