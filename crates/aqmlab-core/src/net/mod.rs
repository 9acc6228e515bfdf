//! The network: nodes, full-duplex links (two simplex links, each with a qdisc
//! at its sending end), static shortest-path routes, and topology builders.

use crate::error::ScenarioError;
use crate::packet::{NodeId, PacketArena, PacketId, PacketKind};
use crate::qdisc::droptail::DropTail;
use crate::qdisc::{Backlog, LinkInfo, QdiscEvents, QdiscSpec, QueueDisc, Verdict};
use crate::rng::stream;
use crate::rng::Rng;
use crate::scenario::trace::LinkTrace;
use crate::scenario::{ExpandedFlow, HostLinks, LinkSpec, Scenario, TopologySpec};

pub mod resolved;
pub mod trace;
use crate::time::{self, from_secs, Time};
use crate::transport::udp::RateChange;
use crate::units::{Rate, Seconds};
use std::collections::{HashMap, VecDeque};

/// One direction of a link. What every hop reads comes first, in the first two cache
/// lines (a link starts a line): with 10⁴ flows the links no longer fit in the cache,
/// and the engine fetches the next event's link ahead (issue 15).
#[repr(C, align(64))]
pub struct Link {
    pub to: NodeId,
    /// Whether it is serializing a packet (the engine's: its `TxDone` is pending, or lazy).
    pub transmitting: bool,
    /// A drop-tail link's end of transmission while it is not scheduled: its place in the
    /// event order (time, seq). It is scheduled only if a packet arrives to wait for it (the
    /// engine's `enqueue`): most access links never queue, so most of their ends of
    /// transmission found nothing to send.
    pub lazy_tx_done: Option<(Time, u64)>,
    /// The current rate (see `rates`); changed with [`Link::set_rate`].
    rate_bps: f64,
    /// The size of the last packet serialized and its time at `rate_bps` (see
    /// [`Link::tx_time`]).
    tx_memo: (u32, Time),
    /// A link whose capacity follows a trace: its opportunities, in place of `rate_bps`.
    delivery: Option<Box<trace::DeliveryClock>>,
    pub delay: Time,
    pub queue: LinkQueue,
    pub name: String,
    pub from: NodeId,
    pub qdisc_type: &'static str,
    pub monitored: bool,
    /// The link's rates in time: (from when, bits/s), the first from 0; `rate_bps` is the
    /// current one (the engine applies each change at its time).
    pub rates: Vec<(Time, f64)>,
}

impl Link {
    /// Asks for the fields every hop reads to be fetched into the cache (see [`crate::cache`]).
    #[inline]
    pub fn prefetch(&self) {
        crate::cache::prefetch_first(self, std::mem::offset_of!(Link, name));
    }

    /// Time to serialize a packet of `bytes` at the current rate ([`time::tx_time`]). A link
    /// carries packets of one size (data one way, ACKs the other): the last size's time is
    /// kept, as the division and rounding (a call to libm's `ceil`) cost 3 % of a run (issue 21).
    #[inline]
    pub fn tx_time(&mut self, bytes: u32) -> Time {
        if self.tx_memo.0 != bytes {
            self.tx_memo = (bytes, time::tx_time(bytes, self.rate_bps));
        }
        self.tx_memo.1
    }

    /// When a packet of `bytes` that starts now has left: `tx_time` later, or at the trace's
    /// opportunity that completes it.
    #[inline]
    pub fn tx_end(&mut self, now: Time, bytes: u32) -> Time {
        if let Some(clock) = &mut self.delivery {
            return clock.departure(now, bytes);
        }
        now + self.tx_time(bytes)
    }

    /// Changes the rate from now on (its queue is told by the caller).
    pub fn set_rate(&mut self, rate_bps: f64) {
        self.rate_bps = rate_bps;
        self.tx_memo = NO_TX_MEMO;
    }

    /// The time average of the link's rate over `[from, to)`, bits/s (its rate if it never changes).
    pub fn mean_rate(&self, from: Time, to: Time) -> f64 {
        if let Some(clock) = &self.delivery {
            return clock.mean_rate(from, to);
        }
        if let [(_, rate)] = self.rates[..] {
            return rate;
        }
        let mut bits = 0.0;
        for (i, &(start, rate)) in self.rates.iter().enumerate() {
            let end = self.rates.get(i + 1).map_or(Time::MAX, |&(next, _)| next);
            let (start, end) = (start.max(from), end.min(to));
            if end > start {
                bits += rate * (end - start) as f64;
            }
        }
        bits / (to - from) as f64
    }
}

/// A [`Link::tx_memo`] that holds for every rate: a packet of no bytes takes no time.
const NO_TX_MEMO: (u32, Time) = (0, 0);

/// A link's queue: its discipline and the packets and bytes it holds ([`Backlog`], counted
/// here for every discipline). Drop-tail, the queue of every access link, lives inside the
/// link: with 10⁴ flows a queue of its own elsewhere in memory was one more cache miss at
/// most hops (issue 15). Every other discipline is boxed.
pub struct LinkQueue {
    pub backlog: Backlog,
    pub discipline: Discipline,
}

/// A link's queue discipline, inline (drop-tail) or boxed; either is used as a `dyn QueueDisc`.
pub enum Discipline {
    DropTail(DropTail),
    Boxed(Box<dyn QueueDisc>),
}

impl LinkQueue {
    fn build(spec: &QdiscSpec, link: &LinkInfo, rng: Rng) -> LinkQueue {
        let discipline = match spec {
            QdiscSpec::DropTail(config) => Discipline::DropTail(config.unboxed()),
            other => Discipline::Boxed(other.config().build(link, rng)),
        };
        LinkQueue {
            backlog: Backlog::default(),
            discipline,
        }
    }

    /// Offers an arriving packet to the discipline ([`Backlog::offer`]).
    #[inline]
    pub fn enqueue(&mut self, id: PacketId, now: Time, packets: &mut PacketArena, events: &mut QdiscEvents) -> Verdict {
        match &mut self.discipline {
            Discipline::DropTail(q) => self.backlog.offer(q, id, now, packets, events),
            Discipline::Boxed(q) => self.backlog.offer(q.as_mut(), id, now, packets, events),
        }
    }

    /// The discipline's next packet ([`Backlog::take`]).
    #[inline]
    pub fn dequeue(&mut self, now: Time, packets: &mut PacketArena, events: &mut QdiscEvents) -> Option<PacketId> {
        match &mut self.discipline {
            Discipline::DropTail(q) => self.backlog.take(q, now, packets, events),
            Discipline::Boxed(q) => self.backlog.take(q.as_mut(), now, packets, events),
        }
    }

    /// The discipline, for what it reports.
    pub fn qdisc(&self) -> &dyn QueueDisc {
        match &self.discipline {
            Discipline::DropTail(q) => q,
            Discipline::Boxed(q) => q.as_ref(),
        }
    }

    pub fn qdisc_mut(&mut self) -> &mut dyn QueueDisc {
        match &mut self.discipline {
            Discipline::DropTail(q) => q,
            Discipline::Boxed(q) => q.as_mut(),
        }
    }
}

/// A flow's place in the network: its endpoints and where its paths lie in
/// [`Network::path`]'s table (kept there, side by side for all flows, so that looking up a
/// packet's next link touches a few bytes per flow, not two vectors of its own).
#[derive(Clone, Copy, Debug)]
pub struct FlowRoute {
    pub src: NodeId,
    pub dst: NodeId,
    /// Start of the links from `src` to `dst` (data direction) in `hops`; the links back
    /// from `dst` to `src` (ACK direction) follow them, up to `end`.
    forward: u32,
    reverse: u32,
    end: u32,
}

pub struct Network {
    pub nodes: Vec<String>,
    pub links: Vec<Link>,
    /// One route per expanded flow, in the order of [`Scenario::expanded_flows`].
    pub routes: Vec<FlowRoute>,
    /// The links of every route's paths, one after another.
    hops: Vec<u32>,
    /// The monitored links (sampled and summarised), in link order.
    pub monitored: Vec<u32>,
}

impl Network {
    /// The links a packet of `kind` of `flow` crosses: data forward, ACKs in reverse.
    #[inline]
    pub fn path(&self, flow: u32, kind: PacketKind) -> &[u32] {
        route_links(&self.routes, &self.hops, flow, kind)
    }

    /// Asks for the links of `flow`'s paths to be fetched into the cache (see [`crate::cache`]).
    #[inline]
    pub fn prefetch_path(&self, flow: u32) {
        let r = &self.routes[flow as usize];
        if let Some(hops) = self.hops.get(r.forward as usize..r.end as usize) {
            crate::cache::prefetch(hops);
        }
    }
}

/// One direction of a link as the scenario resolves it, before its queue is built: what
/// [`Network::build`] builds, and what [`resolved`] shows.
pub struct LinkPlan<'a> {
    /// `L->R`, as results name it.
    pub name: String,
    pub from: NodeId,
    pub to: NodeId,
    /// The link's rates in time: (from when, bits/s), the first from 0.
    pub rates: Vec<(Time, f64)>,
    pub delay: Time,
    pub qdisc: &'a QdiscSpec,
    /// The scenario's field its qdisc table is read from (`topology.bottleneck.qdisc`).
    pub qdisc_path: String,
    pub monitored: bool,
    /// The capacity trace it follows, if any (its `rates` then hold the trace's mean).
    pub trace: Option<&'a LinkTrace>,
    /// Keys the qdisc's random stream: its ends' stream keys (see `Builder::stream_keys`).
    stream_key: String,
}

impl LinkPlan<'_> {
    fn build(self, scenario: &Scenario) -> Link {
        let rate = self.rates[0].1;
        let info = LinkInfo {
            rate_bps: rate,
            delay: self.delay,
            measure_from: from_secs(scenario.simulation.warmup.0),
        };
        let rng = stream(scenario.simulation.seed, &format!("link/{}/qdisc", self.stream_key));
        Link {
            to: self.to,
            transmitting: false,
            lazy_tx_done: None,
            rate_bps: rate,
            tx_memo: NO_TX_MEMO,
            delivery: self.trace.map(|t| Box::new(trace::DeliveryClock::new(t))),
            delay: self.delay,
            queue: LinkQueue::build(self.qdisc, &info, rng),
            name: self.name,
            from: self.from,
            qdisc_type: self.qdisc.type_name(),
            monitored: self.monitored,
            rates: self.rates,
        }
    }
}

/// A scenario's network before anything in it is built: the nodes, every link direction in
/// the order the engine numbers them, and each expanded flow's route.
pub struct NetworkPlan<'a> {
    pub nodes: Vec<String>,
    pub links: Vec<LinkPlan<'a>>,
    /// One route per expanded flow, in the order of [`Scenario::expanded_flows`].
    pub routes: Vec<FlowRoute>,
    /// The links of every route's paths, one after another.
    hops: Vec<u32>,
}

/// The links of `flow`'s path for packets of `kind`, from its route and the table of hops.
#[inline]
fn route_links<'h>(routes: &[FlowRoute], hops: &'h [u32], flow: u32, kind: PacketKind) -> &'h [u32] {
    let r = &routes[flow as usize];
    let (start, end) = match kind {
        PacketKind::Data => (r.forward, r.reverse),
        PacketKind::Ack => (r.reverse, r.end),
    };
    &hops[start as usize..end as usize]
}

/// What the builder needs to make a full-duplex link: a scenario's link, or a host's access link.
struct Duplex<'s> {
    rate: Rate,
    trace: Option<&'s LinkTrace>,
    delay: Seconds,
    qdisc: &'s QdiscSpec,
    reverse_qdisc: &'s QdiscSpec,
    rate_changes: &'s [RateChange],
    /// The fields of `qdisc` and `reverse_qdisc`.
    qdisc_paths: [String; 2],
}

impl<'s> Duplex<'s> {
    /// A scenario's link, found at `path` (`topology.links[2]`).
    fn of(l: &'s LinkSpec, path: &str) -> Self {
        // A trace's mean capacity is the rate the disciplines that read one are given.
        let rate = l
            .rate
            .unwrap_or_else(|| Rate(l.trace.as_ref().map_or(0.0, |t| t.mean_rate_bps())));
        Duplex {
            rate,
            trace: l.trace.as_ref(),
            delay: l.delay,
            qdisc: &l.qdisc,
            reverse_qdisc: &l.reverse_qdisc,
            rate_changes: &l.rate_changes,
            qdisc_paths: [format!("{path}.qdisc"), format!("{path}.reverse_qdisc")],
        }
    }
}

struct Builder<'a> {
    nodes: Vec<String>,
    /// Per node, the name that keys the random streams of its links' qdiscs:
    /// a router's own name; for a host, its flow's name (`web[2]/src`), which
    /// does not change when flows are inserted before it, unlike `src<id>`.
    stream_keys: Vec<String>,
    index: HashMap<String, NodeId>,
    links: Vec<LinkPlan<'a>>,
}

impl<'a> Builder<'a> {
    fn node(&mut self, name: String) -> NodeId {
        self.keyed_node(name.clone(), name)
    }

    fn keyed_node(&mut self, name: String, stream_key: String) -> NodeId {
        let id = self.nodes.len() as NodeId;
        self.index.insert(name.clone(), id);
        self.nodes.push(name);
        self.stream_keys.push(stream_key);
        id
    }

    fn simplex(&mut self, from: NodeId, to: NodeId, link: &Duplex<'a>, reverse: bool, monitored: bool) {
        let (f, t) = (from as usize, to as usize);
        let changes = link.rate_changes.iter().map(|c| (c.at.nanos(), c.rate.0));
        self.links.push(LinkPlan {
            name: format!("{}->{}", self.nodes[f], self.nodes[t]),
            from,
            to,
            rates: std::iter::once((0, link.rate.0)).chain(changes).collect(),
            delay: link.delay.nanos(),
            qdisc: if reverse { link.reverse_qdisc } else { link.qdisc },
            qdisc_path: link.qdisc_paths[usize::from(reverse)].clone(),
            monitored,
            trace: link.trace,
            stream_key: format!("{}->{}", self.stream_keys[f], self.stream_keys[t]),
        });
    }

    fn duplex(&mut self, from: NodeId, to: NodeId, link: Duplex<'a>, monitored: bool) {
        self.simplex(from, to, &link, false, monitored);
        self.simplex(to, from, &link, true, false);
    }

    /// Gives flow `f` its own source and sink hosts, joined to routers `first` and
    /// `last` by access links; returns its endpoints.
    fn attach_hosts(
        &mut self,
        f: &ExpandedFlow,
        hosts: &HostLinks<'a>,
        first: NodeId,
        last: NodeId,
    ) -> (NodeId, NodeId) {
        let common = &f.spec.common;
        let src = self.keyed_node(format!("src{}", f.id), format!("{}/src", f.name));
        let dst = self.keyed_node(format!("dst{}", f.id), format!("{}/dst", f.name));
        let access = |delay: Seconds| Duplex {
            rate: common.access_rate.unwrap_or(hosts.rate),
            trace: None,
            delay,
            qdisc: hosts.qdisc,
            reverse_qdisc: hosts.qdisc,
            rate_changes: &[],
            qdisc_paths: [ACCESS_QDISC.into(), ACCESS_QDISC.into()],
        };
        self.duplex(src, first, access(common.access_delay.unwrap_or(hosts.delay)), false);
        self.duplex(last, dst, access(common.sink_delay.unwrap_or(hosts.sink_delay)), false);
        (src, dst)
    }
}

/// The field every access link's qdisc is read from, both directions.
const ACCESS_QDISC: &str = "topology.access_qdisc";

impl<'a> NetworkPlan<'a> {
    /// The network of `scenario`; an error names a flow that has no route.
    pub fn new(scenario: &'a Scenario) -> Result<Self, ScenarioError> {
        let mut b = Builder {
            nodes: Vec::new(),
            stream_keys: Vec::new(),
            index: HashMap::new(),
            links: Vec::new(),
        };
        let flows = scenario.expanded_flows();
        let mut endpoints = Vec::with_capacity(flows.len());
        match &scenario.topology {
            TopologySpec::Dumbbell(d) => {
                let left = b.node("L".into());
                let right = b.node("R".into());
                b.duplex(left, right, Duplex::of(&d.bottleneck, "topology.bottleneck"), true);
                for f in &flows {
                    endpoints.push(b.attach_hosts(f, &d.hosts(), left, right));
                }
            }
            TopologySpec::ParkingLot(p) => {
                let routers: Vec<NodeId> = (0..=p.congested_links).map(|i| b.node(format!("R{i}"))).collect();
                for pair in routers.windows(2) {
                    b.duplex(pair[0], pair[1], Duplex::of(&p.link, "topology.link"), true);
                }
                for f in &flows {
                    let (first, last) = match f.spec.common.hop {
                        Some(hop) => (routers[hop as usize], routers[hop as usize + 1]),
                        None => (routers[0], routers[routers.len() - 1]),
                    };
                    endpoints.push(b.attach_hosts(f, &p.hosts(), first, last));
                }
            }
            TopologySpec::Graph(g) => {
                for n in &g.nodes {
                    b.node(n.clone());
                }
                for (i, l) in g.links.iter().enumerate() {
                    let (from, to) = (b.index[&l.from], b.index[&l.to]);
                    b.duplex(
                        from,
                        to,
                        Duplex::of(&l.link, &format!("topology.links[{i}]")),
                        l.monitor,
                    );
                }
                for f in &flows {
                    let src = b.index[f.spec.common.src.as_deref().expect("validated")];
                    let dst = b.index[f.spec.common.dst.as_deref().expect("validated")];
                    endpoints.push((src, dst));
                }
            }
        }
        let ends: Vec<(NodeId, NodeId)> = b.links.iter().map(|l| (l.from, l.to)).collect();
        let mut router = Router::new(&ends, b.nodes.len());
        let mut routes = Vec::with_capacity(endpoints.len());
        let mut hops = Vec::new();
        for (&(src, dst), flow) in endpoints.iter().zip(&flows) {
            let mut route_between = |a: NodeId, c: NodeId| {
                router.path(a, c).ok_or_else(|| {
                    ScenarioError::new(
                        format!("{}.dst", flow.path),
                        format!("no route from {:?} to {:?}", b.nodes[a as usize], b.nodes[c as usize]),
                    )
                })
            };
            let forward = hops.len() as u32;
            hops.extend(route_between(src, dst)?);
            let reverse = hops.len() as u32;
            hops.extend(route_between(dst, src)?);
            routes.push(FlowRoute {
                src,
                dst,
                forward,
                reverse,
                end: hops.len() as u32,
            });
        }
        Ok(NetworkPlan {
            nodes: b.nodes,
            links: b.links,
            routes,
            hops,
        })
    }

    /// The links a packet of `kind` of `flow` crosses, as [`Network::path`].
    pub fn path(&self, flow: u32, kind: PacketKind) -> &[u32] {
        route_links(&self.routes, &self.hops, flow, kind)
    }
}

/// Hop-count shortest paths (ties: lowest link index first) as lists of links, each searched once.
struct Router<'l> {
    /// Per link, the nodes it joins (from, to).
    ends: &'l [(NodeId, NodeId)],
    /// Per node, the links leaving it and the links entering it, in link order.
    outgoing: Vec<Vec<u32>>,
    incoming: Vec<Vec<u32>>,
    searched: HashMap<(NodeId, NodeId), Option<Vec<u32>>>,
}

impl<'l> Router<'l> {
    fn new(ends: &'l [(NodeId, NodeId)], nodes: usize) -> Self {
        let mut outgoing = vec![Vec::new(); nodes];
        let mut incoming = vec![Vec::new(); nodes];
        for (i, &(from, to)) in ends.iter().enumerate() {
            outgoing[from as usize].push(i as u32);
            incoming[to as usize].push(i as u32);
        }
        Router {
            ends,
            outgoing,
            incoming,
            searched: HashMap::new(),
        }
    }

    /// The path from `src` to `dst`. A node with one link out (every host of a dumbbell or a
    /// parking lot) can only start a path by it, and a node with one link in can only end one
    /// by it: those links are taken as they are and the search runs between their other ends
    /// (the routers), once per pair. The path is the one a breadth-first search from `src`
    /// finds (a leaf adds no other node to the search), and a search from each of thousands
    /// of hosts through a network of thousands of hosts would cost the square of the flows.
    fn path(&mut self, src: NodeId, dst: NodeId) -> Option<Vec<u32>> {
        let (mut from, mut to) = (src, dst);
        let mut first = None;
        if let [out] = self.outgoing[from as usize][..] {
            if from != to {
                first = Some(out);
                from = self.ends[out as usize].1;
            }
        }
        let mut last = None;
        if let [into] = self.incoming[to as usize][..] {
            if from != to {
                last = Some(into);
                to = self.ends[into as usize].0;
            }
        }
        let between = match self.searched.get(&(from, to)) {
            Some(path) => path.clone(),
            None => {
                let path = self.search(from, to);
                self.searched.insert((from, to), path.clone());
                path
            }
        }?;
        Some(first.into_iter().chain(between).chain(last).collect())
    }

    /// Breadth-first search from `src`, following each node's links in link order.
    fn search(&self, src: NodeId, dst: NodeId) -> Option<Vec<u32>> {
        let mut via: Vec<Option<u32>> = vec![None; self.outgoing.len()];
        let mut seen = vec![false; self.outgoing.len()];
        let mut queue = VecDeque::from([src]);
        seen[src as usize] = true;
        while let Some(n) = queue.pop_front() {
            if n == dst {
                let mut path = Vec::new();
                let mut at = dst;
                while let Some(l) = via[at as usize] {
                    path.push(l);
                    at = self.ends[l as usize].0;
                }
                path.reverse();
                return Some(path);
            }
            for &l in &self.outgoing[n as usize] {
                let to = self.ends[l as usize].1;
                if !seen[to as usize] {
                    seen[to as usize] = true;
                    via[to as usize] = Some(l);
                    queue.push_back(to);
                }
            }
        }
        None
    }
}

impl Network {
    pub fn build(scenario: &Scenario) -> Result<Network, ScenarioError> {
        let plan = NetworkPlan::new(scenario)?;
        let links: Vec<Link> = plan.links.into_iter().map(|l| l.build(scenario)).collect();
        let monitored = (0..links.len() as u32)
            .filter(|&i| links[i as usize].monitored)
            .collect();
        Ok(Network {
            nodes: plan.nodes,
            links,
            routes: plan.routes,
            hops: plan.hops,
            monitored,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two equally short ways from `a` to `d` (via `c`, listed first, and via `b`), hosts `h1`
    /// and `h2` on one link each, `h3` on two; `x` and `y` joined only to each other, `z` to nothing.
    const GRAPH: &str = r#"
[simulation]
duration = "1s"
[topology]
type = "graph"
nodes = ["h1", "a", "b", "c", "d", "h2", "h3", "x", "y", "z"]
links = [
  { from = "h1", to = "a", rate = "1Mbps", delay = "1ms" },
  { from = "a", to = "c", rate = "1Mbps", delay = "1ms" },
  { from = "a", to = "b", rate = "1Mbps", delay = "1ms" },
  { from = "b", to = "d", rate = "1Mbps", delay = "1ms" },
  { from = "c", to = "d", rate = "1Mbps", delay = "1ms" },
  { from = "d", to = "h2", rate = "1Mbps", delay = "1ms" },
  { from = "h3", to = "b", rate = "1Mbps", delay = "1ms" },
  { from = "h3", to = "c", rate = "1Mbps", delay = "1ms" },
  { from = "x", to = "y", rate = "1Mbps", delay = "1ms" },
]
[[flows]]
type = "cbr"
src = "h1"
dst = "h2"
rate = "1Mbps"
"#;

    fn ends(net: &Network) -> Vec<(NodeId, NodeId)> {
        net.links.iter().map(|l| (l.from, l.to)).collect()
    }

    fn names<'n>(net: &'n Network, path: &[u32]) -> Vec<&'n str> {
        path.iter().map(|&l| net.links[l as usize].name.as_str()).collect()
    }

    #[test]
    fn leaves_shortcut_the_search_without_changing_a_path() {
        let net = Network::build(&Scenario::from_toml_str(GRAPH).unwrap()).unwrap();
        assert_eq!(
            names(&net, net.path(0, PacketKind::Data)),
            ["h1->a", "a->c", "c->d", "d->h2"]
        );
        assert_eq!(
            names(&net, net.path(0, PacketKind::Ack)),
            ["h2->d", "d->b", "b->a", "a->h1"]
        );
        let ends = ends(&net);
        let mut router = Router::new(&ends, net.nodes.len());
        for src in 0..net.nodes.len() as NodeId {
            for dst in 0..net.nodes.len() as NodeId {
                assert_eq!(router.path(src, dst), router.search(src, dst), "{src} -> {dst}");
            }
        }
    }

    #[test]
    fn a_dumbbell_is_searched_once_per_direction_whatever_its_flows() {
        let text = r#"
[simulation]
duration = "1s"
[topology]
type = "dumbbell"
bottleneck = { rate = "10Mbps", delay = "1ms" }
[[flows]]
type = "cbr"
rate = "1Mbps"
count = 50
"#;
        let net = Network::build(&Scenario::from_toml_str(text).unwrap()).unwrap();
        let ends = ends(&net);
        let mut router = Router::new(&ends, net.nodes.len());
        for (flow, route) in net.routes.iter().enumerate() {
            let forward = net.path(flow as u32, PacketKind::Data);
            let reverse = net.path(flow as u32, PacketKind::Ack);
            assert_eq!(router.path(route.src, route.dst).as_deref(), Some(forward));
            assert_eq!(router.search(route.src, route.dst).as_deref(), Some(forward));
            assert_eq!(router.path(route.dst, route.src).as_deref(), Some(reverse));
        }
        let (left, right) = (0, 1); // the routers come first
        let mut searched: Vec<_> = router.searched.keys().copied().collect();
        searched.sort();
        assert_eq!(searched, [(left, right), (right, left)]);
    }
}
