//! Setting a run up: a [`Simulation`] from a scenario, its flows' agents made, their starts and
//! the links' rate changes scheduled.

use super::calendar::EventQueue;
use super::event::{AgentId, Event, Role};
use super::{FlowAgents, Simulation};
use crate::cache;
use crate::error::ScenarioError;
use crate::metrics::{pcap, Recorder};
use crate::net::Network;
use crate::packet::PacketArena;
use crate::qdisc::QdiscEvents;
use crate::rng;
use crate::scenario::{ExpandedFlow, Scenario};
use crate::time::Time;
use crate::transport::{Agent, FlowKind};

/// Room made at the start for what is in flight per flow (the scale series' TCP flows, issue 40:
/// at most 13 packets and 26 pending events per flow at 10⁴ flows): beyond it the tables grow.
const PACKETS_PER_FLOW: usize = 16;
const EVENTS_PER_FLOW: usize = 32;

/// Moves the links, the routes and the flows' agents, read at every hop and every delivery in
/// no order, into huge pages ([`cache::collapse_into_huge_pages`]; nothing for a few flows). The
/// agents were made one after another, each in a few small allocations: they lie between the
/// lowest and the highest of their addresses.
fn settle_in_huge_pages(net: &Network, flows: &[FlowAgents]) {
    cache::collapse_table(&net.links);
    cache::collapse_table(&net.routes);
    cache::collapse_table(flows);
    let agents = flows.iter().flat_map(|f| {
        let (sender, receiver) = (
            f.sender.as_ref() as *const dyn Agent,
            f.receiver.as_ref() as *const dyn Agent,
        );
        [sender as *const u8 as usize, receiver as *const u8 as usize]
    });
    if let (Some(lowest), Some(highest)) = (agents.clone().min(), agents.max()) {
        cache::collapse_into_huge_pages(lowest, highest);
    }
}

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
        let mut events = EventQueue::with_room_for(expanded.len() * EVENTS_PER_FLOW);
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
        settle_in_huge_pages(&net, &flows);
        let recorder = Recorder::new(scenario, &expanded, net.links.len(), &net.monitored);
        recorder.settle_in_huge_pages();
        let sample_interval = sim.sample_interval.nanos();
        if sample_interval > 0 && !net.monitored.is_empty() {
            events.schedule(0, Event::Sample);
        }
        Ok(Simulation {
            now: 0,
            end,
            sample_interval,
            events,
            packets: PacketArena::with_room_for(expanded.len() * PACKETS_PER_FLOW),
            recorder,
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
