//! The discrete-event engine: clock, event queue, random streams, and the
//! [`Simulation`] that moves packets between agents, queues and links.

pub mod events;

use crate::error::ScenarioError;
use crate::metrics::{
    self, DropCount, DropEvent, FlowResult, LinkResult, QueueSample, Results, Summary, ThroughputBin,
};
use crate::net::{FlowRoute, Network};
use crate::packet::{PacketArena, PacketId, PacketKind};
use crate::qdisc::{DropReason, QdiscCtx, Verdict};
use crate::rng;
use crate::scenario::Scenario;
use crate::time::{from_secs, to_secs, tx_time, Time};
use crate::transport::{Agent, AgentCtx, AgentStats, TraceSample};
use events::{Event, EventQueue};
use rand::Rng as _;
use std::collections::BTreeMap;

/// Timer token the engine uses to start an agent.
const START: u64 = u64::MAX;

#[derive(Default)]
struct FlowCounters {
    sent_packets: u64,
    sent_bytes: u64,
    delivered_packets: u64,
    dropped_packets: u64,
    window_sent_packets: u64,
    window_dropped_packets: u64,
    window_goodput_bytes: u64,
    /// Goodput bytes per throughput bin.
    bins: Vec<u64>,
}

#[derive(Default)]
struct LinkCounters {
    busy_in_window: Time,
    packets_sent: u64,
    drops: u64,
    busy: bool,
}

struct FlowInfo {
    name: String,
    kind: &'static str,
    route: FlowRoute,
    demand_bps: f64,
    weight: f64,
    traced: bool,
}

pub struct Simulation {
    now: Time,
    end: Time,
    warmup: Time,
    bin: Time,
    sample_interval: Time,
    record_drops: bool,
    name: Option<String>,
    seed: u64,
    events: EventQueue,
    packets: PacketArena,
    net: Network,
    link_counters: Vec<LinkCounters>,
    flows: Vec<FlowInfo>,
    counters: Vec<FlowCounters>,
    /// Agent `2f` is flow `f`'s sender, `2f + 1` its receiver.
    agents: Vec<Box<dyn Agent>>,
    drops: BTreeMap<(u32, u32, DropReason), (u64, u64)>,
    drop_log: Vec<DropEvent>,
    queue_samples: Vec<QueueSample>,
    traces: Vec<TraceSample>,
    total_sent: u64,
    total_delivered: u64,
    total_dropped: u64,
    // Scratch buffers reused across events: no allocation on the packet path.
    outbox: Vec<crate::packet::Packet>,
    timers: Vec<(Time, u64)>,
    qdisc_drops: Vec<(PacketId, DropReason)>,
}

impl Simulation {
    pub fn build(scenario: &Scenario) -> Result<Simulation, ScenarioError> {
        let sim = &scenario.simulation;
        let net = Network::build(scenario)?;
        let end = sim.duration.nanos();
        let bin = sim.throughput_bin.nanos().max(1);
        let n_bins = end.div_ceil(bin) as usize;
        let mut events = EventQueue::default();
        let mut flows = Vec::new();
        let mut agents: Vec<Box<dyn Agent>> = Vec::new();
        for (f, route) in scenario.expanded_flows().into_iter().zip(&net.routes) {
            let mut rng = rng::stream(sim.seed, &format!("flow/{}", f.id));
            let start = f.spec.start.nanos()
                + if f.spec.start_jitter.0 > 0.0 {
                    from_secs(rng.gen_range(0.0..f.spec.start_jitter.0))
                } else {
                    0
                };
            let stop = f.spec.stop.map_or(end, |s| s.nanos());
            let (sender, receiver) = f.spec.build_agents(stop, rng);
            agents.push(sender);
            agents.push(receiver);
            events.schedule(
                start,
                Event::Timer {
                    agent: 2 * f.id,
                    token: START,
                },
            );
            events.schedule(
                start,
                Event::Timer {
                    agent: 2 * f.id + 1,
                    token: START,
                },
            );
            flows.push(FlowInfo {
                name: f.name,
                kind: f.spec.type_name(),
                route: route.clone(),
                demand_bps: f.spec.demand_bps().unwrap_or(f64::INFINITY),
                weight: f.spec.weight,
                traced: f.spec.tcp.trace,
            });
        }
        let sample_interval = sim.sample_interval.nanos();
        if sample_interval > 0 && net.links.iter().any(|l| l.monitored) {
            events.schedule(0, Event::Sample);
        }
        Ok(Simulation {
            now: 0,
            end,
            warmup: sim.warmup.nanos(),
            bin,
            sample_interval,
            record_drops: sim.record_drops,
            name: scenario.name.clone(),
            seed: sim.seed,
            events,
            packets: PacketArena::default(),
            link_counters: net.links.iter().map(|_| LinkCounters::default()).collect(),
            counters: flows
                .iter()
                .map(|_| FlowCounters {
                    bins: vec![0; n_bins],
                    ..Default::default()
                })
                .collect(),
            net,
            flows,
            agents,
            drops: BTreeMap::new(),
            drop_log: Vec::new(),
            queue_samples: Vec::new(),
            traces: Vec::new(),
            total_sent: 0,
            total_delivered: 0,
            total_dropped: 0,
            outbox: Vec::new(),
            timers: Vec::new(),
            qdisc_drops: Vec::new(),
        })
    }

    pub fn now(&self) -> Time {
        self.now
    }

    /// Runs until the configured duration.
    pub fn run_to_end(&mut self) {
        self.run_until(self.end);
    }

    /// Runs all events strictly before time `until` (capped at the duration).
    pub fn run_until(&mut self, until: Time) {
        let until = until.min(self.end);
        while let Some((t, event)) = self.events.pop_before(until) {
            self.now = t;
            match event {
                Event::TxDone { link } => {
                    self.link_counters[link as usize].busy = false;
                    self.start_transmission(link);
                }
                Event::Arrive { link, packet } => self.arrive(link, packet),
                Event::Timer { agent, token } => self.call_agent(agent, |a, ctx| {
                    if token == START {
                        a.start(ctx)
                    } else {
                        a.timer(token, ctx)
                    }
                }),
                Event::Sample => self.sample(),
            }
        }
        self.now = until;
    }

    fn in_window(&self) -> bool {
        self.now >= self.warmup
    }

    fn call_agent(&mut self, agent: u32, f: impl FnOnce(&mut dyn Agent, &mut AgentCtx)) {
        let flow = agent / 2;
        let is_sender = agent.is_multiple_of(2);
        let info = &self.flows[flow as usize];
        let (local, peer) = if is_sender {
            (info.route.src, info.route.dst)
        } else {
            (info.route.dst, info.route.src)
        };
        let trace = if info.traced { Some(&mut self.traces) } else { None };
        let mut ctx = AgentCtx::new(
            self.now,
            flow,
            info.weight,
            local,
            peer,
            &mut self.outbox,
            &mut self.timers,
            trace,
        );
        f(self.agents[agent as usize].as_mut(), &mut ctx);
        let delivered = ctx.delivered();
        if delivered > 0 {
            let c = &mut self.counters[flow as usize];
            c.bins[(self.now / self.bin) as usize] += delivered;
            if self.now >= self.warmup {
                c.window_goodput_bytes += delivered;
            }
        }
        for (at, token) in self.timers.drain(..) {
            self.events.schedule(at.max(self.now), Event::Timer { agent, token });
        }
        let mut outbox = std::mem::take(&mut self.outbox);
        for p in outbox.drain(..) {
            let route = &self.flows[flow as usize].route;
            let first = if p.kind == PacketKind::Data {
                route.forward[0]
            } else {
                route.reverse[0]
            };
            let id = self.packets.alloc(p);
            self.packets[id].hop = 1;
            self.total_sent += 1;
            if p.kind == PacketKind::Data {
                let in_window = self.in_window();
                let c = &mut self.counters[flow as usize];
                c.sent_packets += 1;
                c.sent_bytes += p.size as u64;
                c.window_sent_packets += in_window as u64;
            }
            self.enqueue(first, id);
        }
        self.outbox = outbox;
    }

    fn arrive(&mut self, link: u32, id: PacketId) {
        let node = self.net.links[link as usize].to;
        let p = self.packets[id];
        if p.dst == node {
            self.packets.free(id);
            self.total_delivered += 1;
            let agent = if p.kind == PacketKind::Data {
                self.counters[p.flow as usize].delivered_packets += 1;
                2 * p.flow + 1
            } else {
                2 * p.flow
            };
            self.call_agent(agent, |a, ctx| a.receive(&p, ctx));
        } else {
            let route = &self.flows[p.flow as usize].route;
            let path = if p.kind == PacketKind::Data {
                &route.forward
            } else {
                &route.reverse
            };
            let next = path[p.hop as usize];
            self.packets[id].hop += 1;
            self.enqueue(next, id);
        }
    }

    fn enqueue(&mut self, link: u32, id: PacketId) {
        self.packets[id].enqueued_at = self.now;
        let mut ctx = QdiscCtx::new(self.now, &mut self.packets, &mut self.qdisc_drops);
        let verdict = self.net.links[link as usize].qdisc.enqueue(id, &mut ctx);
        if let Verdict::Dropped(reason) = verdict {
            self.record_drop(link, id, reason);
        }
        self.flush_qdisc_drops(link);
        if !self.link_counters[link as usize].busy {
            self.start_transmission(link);
        }
    }

    fn start_transmission(&mut self, link: u32) {
        let mut ctx = QdiscCtx::new(self.now, &mut self.packets, &mut self.qdisc_drops);
        let next = self.net.links[link as usize].qdisc.dequeue(&mut ctx);
        self.flush_qdisc_drops(link);
        let Some(id) = next else { return };
        let l = &self.net.links[link as usize];
        let done = self.now + tx_time(self.packets[id].size, l.rate_bps);
        self.events.schedule(done, Event::TxDone { link });
        self.events.schedule(done + l.delay, Event::Arrive { link, packet: id });
        let c = &mut self.link_counters[link as usize];
        c.busy = true;
        c.packets_sent += 1;
        let (from, to) = (self.now.max(self.warmup), done.min(self.end));
        c.busy_in_window += to.saturating_sub(from);
    }

    fn flush_qdisc_drops(&mut self, link: u32) {
        while let Some((id, reason)) = self.qdisc_drops.pop() {
            self.record_drop(link, id, reason);
        }
    }

    fn record_drop(&mut self, link: u32, id: PacketId, reason: DropReason) {
        let p = self.packets[id];
        self.packets.free(id);
        self.total_dropped += 1;
        self.link_counters[link as usize].drops += 1;
        let in_window = self.in_window();
        let entry = self.drops.entry((p.flow, link, reason)).or_default();
        entry.0 += 1;
        entry.1 += in_window as u64;
        if p.kind == PacketKind::Data {
            let c = &mut self.counters[p.flow as usize];
            c.dropped_packets += 1;
            c.window_dropped_packets += in_window as u64;
        }
        if self.record_drops {
            self.drop_log.push(DropEvent {
                time: to_secs(self.now),
                flow: p.flow,
                link,
                reason: reason.as_str(),
            });
        }
    }

    fn sample(&mut self) {
        for (i, l) in self.net.links.iter().enumerate().filter(|(_, l)| l.monitored) {
            self.queue_samples.push(QueueSample {
                time: to_secs(self.now),
                link: i as u32,
                packets: l.qdisc.len_packets() as u64,
                bytes: l.qdisc.len_bytes(),
                average: l.qdisc.average(),
            });
        }
        self.events.schedule(self.now + self.sample_interval, Event::Sample);
    }

    /// Collects the results; checks packet conservation (sent = delivered + dropped + in flight).
    pub fn results(&self) -> Result<Results, ScenarioError> {
        let in_flight = self.packets.live() as u64;
        if self.total_sent != self.total_delivered + self.total_dropped + in_flight {
            return Err(ScenarioError::new(
                "simulation",
                format!(
                    "packet conservation violated: sent {} != delivered {} + dropped {} + in flight {}",
                    self.total_sent, self.total_delivered, self.total_dropped, in_flight
                ),
            ));
        }
        let window = to_secs(self.end - self.warmup);
        let capacity: Vec<f64> = self.net.links.iter().map(|l| l.rate_bps).collect();
        let routes: Vec<Vec<u32>> = self.flows.iter().map(|f| f.route.forward.clone()).collect();
        let demand: Vec<f64> = self.flows.iter().map(|f| f.demand_bps).collect();
        let shares = metrics::max_min_shares(&capacity, &routes, &demand);
        let link_delay = |ls: &[u32]| {
            ls.iter()
                .map(|&l| to_secs(self.net.links[l as usize].delay))
                .sum::<f64>()
        };
        let mut flows = Vec::with_capacity(self.flows.len());
        let mut transfers = Vec::new();
        for (id, (info, c)) in self.flows.iter().zip(&self.counters).enumerate() {
            let stats: AgentStats = self.agents[2 * id].stats();
            transfers.extend(stats.transfers);
            let goodput = c.window_goodput_bytes as f64 * 8.0 / window;
            flows.push(FlowResult {
                id: id as u32,
                name: info.name.clone(),
                kind: info.kind,
                src: self.net.nodes[info.route.src as usize].clone(),
                dst: self.net.nodes[info.route.dst as usize].clone(),
                base_rtt: link_delay(&info.route.forward) + link_delay(&info.route.reverse),
                sent_packets: c.sent_packets,
                sent_bytes: c.sent_bytes,
                delivered_packets: c.delivered_packets,
                dropped_packets: c.dropped_packets,
                window_sent_packets: c.window_sent_packets,
                window_dropped_packets: c.window_dropped_packets,
                loss_rate: if c.window_sent_packets > 0 {
                    c.window_dropped_packets as f64 / c.window_sent_packets as f64
                } else {
                    0.0
                },
                goodput_bps: goodput,
                fair_share_bps: shares[id],
                normalised_goodput: if shares[id] > 0.0 { goodput / shares[id] } else { 0.0 },
                timeouts: stats.timeouts,
                fast_retransmits: stats.fast_retransmits,
                retransmitted_packets: stats.retransmitted_packets,
            });
        }
        let links: Vec<LinkResult> = self
            .net
            .links
            .iter()
            .zip(&self.link_counters)
            .enumerate()
            .map(|(i, (l, c))| LinkResult {
                id: i as u32,
                name: l.name.clone(),
                qdisc: l.qdisc_type,
                rate_bps: l.rate_bps,
                delay: to_secs(l.delay),
                utilisation: to_secs(c.busy_in_window) / window,
                packets_sent: c.packets_sent,
                drops: c.drops,
                counters: l
                    .qdisc
                    .counters()
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), v))
                    .collect(),
            })
            .collect();
        let mut throughput = Vec::new();
        let bin_secs = to_secs(self.bin);
        for (id, c) in self.counters.iter().enumerate() {
            for (b, &bytes) in c.bins.iter().enumerate() {
                // The last bin may be partial.
                let width = to_secs(((b as Time + 1) * self.bin).min(self.end) - b as Time * self.bin);
                throughput.push(ThroughputBin {
                    time: b as f64 * bin_secs,
                    flow: id as u32,
                    bps: bytes as f64 * 8.0 / width,
                });
            }
        }
        let normalised: Vec<f64> = flows.iter().map(|f| f.normalised_goodput).collect();
        let summary = Summary {
            name: self.name.clone(),
            seed: self.seed,
            duration: to_secs(self.end),
            warmup: to_secs(self.warmup),
            events: self.events.processed(),
            packets_sent: self.total_sent,
            packets_delivered: self.total_delivered,
            packets_dropped: self.total_dropped,
            packets_in_flight: in_flight,
            jain_index: metrics::jain_index(&normalised),
            utilisation: links
                .iter()
                .zip(&self.net.links)
                .filter(|(_, l)| l.monitored)
                .map(|(r, _)| (r.name.clone(), r.utilisation))
                .collect(),
        };
        Ok(Results {
            summary,
            flows,
            links,
            drops: self
                .drops
                .iter()
                .map(|(&(flow, link, reason), &(count, window_count))| DropCount {
                    flow,
                    link,
                    reason: reason.as_str(),
                    count,
                    window_count,
                })
                .collect(),
            throughput,
            queue: self.queue_samples.clone(),
            drop_log: self.drop_log.clone(),
            traces: self.traces.clone(),
            transfers,
        })
    }
}
