//! Setting a run up: a [`Simulation`] from a scenario, its flows' agents made, their starts and
//! the links' rate changes scheduled.

use super::calendar::EventQueue;
use super::event::{AgentId, Event, Role};
use super::{FlowAgents, Simulation};
use crate::error::ScenarioError;
use crate::metrics::{pcap, Recorder};
use crate::net::Network;
use crate::packet::PacketArena;
use crate::qdisc::QdiscEvents;
use crate::rng;
use crate::scenario::{ExpandedFlow, Scenario};
use crate::time::Time;
use crate::transport::{Agent, FlowKind};

impl Simulation {
    pub fn build(scenario: &Scenario) -> Result<Simulation, ScenarioError> {
        for (i, spec) in scenario.flows.iter().enumerate() {
            if let FlowKind::Tcp(tcp) = &spec.kind {
                tcp.tcp.require_simulated_cc(&format!("flows[{i}].tcp"))?;
            }
        }
        Self::build_with(scenario, |f, stop, rng| f.spec.build_agents(stop, rng))
    }

    /// Like [`build`](Self::build), with each flow's (sender, receiver) agents made by
    /// `agents(flow, stop, rng)` (`stop`: when the sender stops; `rng`: the flow's stream, its
    /// start already drawn). `aqmlab emulate` gives agents that relay real endpoints' packets.
    pub fn build_with(
        scenario: &Scenario,
        mut agents: impl FnMut(&ExpandedFlow, Time, rng::Rng) -> (Box<dyn Agent>, Box<dyn Agent>),
    ) -> Result<Simulation, ScenarioError> {
        let sim = &scenario.simulation;
        let net = Network::build(scenario)?;
        let capture_links = pcap::resolve_links(&sim.pcap, &net)?;
        let end = sim.duration.nanos();
        let expanded = scenario.expanded_flows();
        let mut events = EventQueue::default();
        // Scheduled first: a change at the instant of another event comes before it.
        for (link, l) in net.links.iter().enumerate() {
            for (change, &(at, _)) in l.rates.iter().skip(1).enumerate() {
                let (link, change) = (link as u32, change as u32);
                events.schedule(at, Event::RateChange { link, change });
            }
        }
        let mut flows = Vec::with_capacity(expanded.len());
        for f in &expanded {
            let common = &f.spec.common;
            let mut rng = rng::stream(sim.seed, &format!("flow/{}", f.name));
            let start = common.draw_start(&mut rng);
            let stop = common.stop.map_or(end, |s| s.nanos());
            let (sender, receiver) = agents(f, stop, rng);
            for role in [Role::Sender, Role::Receiver] {
                let agent = AgentId { flow: f.id, role };
                events.schedule(start, Event::Start { agent });
            }
            flows.push(FlowAgents {
                sender,
                receiver,
                weight: common.weight,
                traced: f.spec.kind.config().traced(),
            });
        }
        let sample_interval = sim.sample_interval.nanos();
        if sample_interval > 0 && !net.monitored.is_empty() {
            events.schedule(0, Event::Sample);
        }
        Ok(Simulation {
            now: 0,
            end,
            sample_interval,
            events,
            packets: PacketArena::default(),
            recorder: Recorder::new(scenario, &expanded, net.links.len(), &net.monitored),
            net,
            flows,
            outbox: Vec::new(),
            timers: Vec::new(),
            qdisc_events: QdiscEvents::default(),
            fault: None,
            failure: None,
            lazy_events: 0,
            capture_links,
            capture_drops: sim.pcap_drops,
        })
    }
}
