//! The discrete-event engine: the clock, the event queue, and the
//! [`Simulation`] that dispatches events and forwards packets between agents,
//! queues and links. What happens is counted by a [`Recorder`], which also
//! assembles the results.
//!
//! This file is the engine's state and its event loop with all that the loop calls: every event
//! and every hop of a packet runs here, in one module, so that the compiler inlines the packet
//! path as a whole and a change to it is measured as one (BENCHMARKS.md, cachegrind). What runs
//! once or only from outside is beside it: setting a run up from a scenario (`setup.rs`), what a
//! driver between slices asks and tells (`drive.rs`: captures, the clock, real endpoints'
//! packets), the events (`event.rs`) and their order (`calendar.rs`).

pub mod calendar;
mod drive;
pub mod event;
mod setup;

use crate::cache::prefetch;
use crate::error::{Error, InternalError, MechanismError};
use crate::metrics::{InFlight, Recorder, Results};
use crate::net::{Discipline, Network};
use crate::packet::{DoubleFree, FlowId, Packet, PacketArena, PacketId};
use crate::qdisc::{DropReason, QdiscEvents, Verdict};
use crate::scenario::Scenario;
use crate::time::Time;
use crate::transport::{Agent, AgentCtx, Token};
use calendar::EventQueue;
use event::{AgentId, Event, Role};

/// Builds and runs a validated scenario. An [`Error::Internal`] is a bug in
/// the simulator (e.g. packets not conserved), not a problem of the scenario.
pub fn run(scenario: &Scenario) -> Result<Results, Error> {
    let mut sim = Simulation::build(scenario)?;
    sim.run_to_end();
    sim.results()
}

/// How many events ahead of the next the engine starts fetching what an event will touch
/// (see `fetch_named_by`).
const FETCH_AHEAD: usize = 3;

/// A flow's two agents and what the engine tells them about their flow.
struct FlowAgents {
    sender: Box<dyn Agent>,
    receiver: Box<dyn Agent>,
    weight: f64,
    traced: bool,
}

pub struct Simulation {
    now: Time,
    end: Time,
    sample_interval: Time,
    events: EventQueue,
    packets: PacketArena,
    net: Network,
    flows: Vec<FlowAgents>,
    recorder: Recorder,
    // Scratch buffers reused across events: no allocation on the packet path.
    outbox: Vec<Packet>,
    timers: Vec<(Time, Token)>,
    qdisc_events: QdiscEvents,
    /// The first broken invariant seen while running (a double free, a freed
    /// packet dequeued); [`Simulation::results`] reports it.
    fault: Option<InternalError>,
    /// The first failure of a discipline from outside the crate (`qdisc::external`).
    failure: Option<MechanismError>,
    /// Drop-tail ends of transmission that happened without running (see `catch_up`): the
    /// results count them among the events, as the run is the same.
    lazy_events: u64,
    /// The links `simulation.pcap` names (id, file stem), and whether their drops are captured too.
    capture_links: Vec<(u32, String)>,
    capture_drops: bool,
}

impl Simulation {
    /// Runs until the configured duration.
    pub fn run_to_end(&mut self) {
        self.run_until(self.end);
    }

    /// Runs all events strictly before time `until` (capped at the duration).
    pub fn run_until(&mut self, until: Time) {
        self.run_events(until, u64::MAX);
    }

    /// Like [`run_until`](Self::run_until), but returns after at most
    /// `max_events` events; true once `until` is reached. A caller runs a long
    /// simulation in such slices to do something between them (the Python
    /// bindings check for Ctrl-C); the events and the results are the same
    /// however the run is sliced.
    /// A discipline from outside the crate that failed ends the run: true from the next slice
    /// on, and [`results`](Self::results) gives its error.
    pub fn run_events(&mut self, until: Time, max_events: u64) -> bool {
        if self.failure.is_some() {
            return true;
        }
        let until = until.min(self.end);
        for _ in 0..max_events {
            let Some((t, event)) = self.events.pop_before(until) else {
                self.now = until;
                return true;
            };
            self.now = t;
            // With thousands of flows the packets in flight, the links and the agents outgrow
            // the cache: fetch what the next events will touch while this one runs.
            if let Some(later) = self.events.ahead(FETCH_AHEAD) {
                self.fetch_named_by(later);
            }
            if let Some(sooner) = self.events.ahead(FETCH_AHEAD - 1) {
                self.fetch_found_through(sooner);
            }
            match event {
                Event::TxDone { link } => {
                    self.net.links[link as usize].transmitting = false;
                    self.start_transmission(link);
                }
                Event::Arrive { packet, next, .. } => {
                    self.packets[packet].hop += 1;
                    self.enqueue(next, packet);
                }
                Event::Deliver { packet, to } => self.deliver(packet, to),
                Event::Start { agent } => self.call_agent(agent, |a, ctx, _| a.start(ctx)),
                Event::Timer { agent, token } => self.call_agent(agent, |a, ctx, _| a.timer(token, ctx)),
                Event::Sample => {
                    self.recorder.sample(self.now, &self.net);
                    self.events.schedule(self.now + self.sample_interval, Event::Sample);
                }
                Event::RateChange { link, change } => self.change_rate(link, change),
            }
        }
        false
    }

    /// Asks the processor to fetch into the cache, without waiting, what `event` will touch
    /// and the event names: its packet, link, flow's agents and route, and their counters.
    #[inline]
    fn fetch_named_by(&self, event: &Event) {
        match *event {
            Event::Arrive { packet, next, .. } => {
                self.packets.prefetch_hop_fields(packet);
                self.net.links[next as usize].prefetch();
                self.recorder.prefetch_link(next);
            }
            Event::Deliver { packet, to } => {
                self.packets.prefetch(packet);
                self.fetch_flow(to.flow);
            }
            Event::TxDone { link } => {
                self.net.links[link as usize].prefetch();
                self.recorder.prefetch_link(link);
            }
            Event::Start { agent } | Event::Timer { agent, .. } => self.fetch_flow(agent.flow),
            Event::Sample | Event::RateChange { .. } => {}
        }
    }

    fn fetch_flow(&self, flow: FlowId) {
        prefetch(&self.flows[flow as usize]);
        prefetch(&self.net.routes[flow as usize]);
        self.recorder.prefetch_flow(flow, self.now);
    }

    /// The second step for an event whose [`fetch_named_by`](Self::fetch_named_by) was asked
    /// for an event earlier: what is found through what that fetched (the agent behind the
    /// flow's entry, the links of its route).
    #[inline]
    fn fetch_found_through(&self, event: &Event) {
        let agent = match *event {
            Event::Deliver { to, .. } => to,
            Event::Start { agent } | Event::Timer { agent, .. } => agent,
            _ => return,
        };
        let agents = &self.flows[agent.flow as usize];
        match agent.role {
            Role::Sender => prefetch(agents.sender.as_ref()),
            Role::Receiver => prefetch(agents.receiver.as_ref()),
        }
        self.net.prefetch_path(agent.flow);
    }

    /// Calls `agent` (`f` gets the packets too, for the one it receives), then schedules the
    /// timers it set and sends the packets it sent.
    fn call_agent(&mut self, agent: AgentId, f: impl FnOnce(&mut dyn Agent, &mut AgentCtx, &PacketArena)) {
        let AgentId { flow, role } = agent;
        let route = &self.net.routes[flow as usize];
        let (local, peer) = match role {
            Role::Sender => (route.src, route.dst),
            Role::Receiver => (route.dst, route.src),
        };
        let agents = &mut self.flows[flow as usize];
        let trace = agents.traced.then(|| self.recorder.traces());
        let mut ctx = AgentCtx::new(self.now, &mut self.outbox, &mut self.timers)
            .for_flow(flow, agents.weight)
            .between(local, peer)
            .traced(trace);
        match role {
            Role::Sender => f(agents.sender.as_mut(), &mut ctx, &self.packets),
            Role::Receiver => f(agents.receiver.as_mut(), &mut ctx, &self.packets),
        }
        let delivered = ctx.delivered();
        self.recorder.on_goodput(flow, delivered, self.now);
        // Both buffers are read in place, then cleared, not drained: with `drain` (the outbox
        // taken out of `self` around `admit` and `enqueue`, which need all of it) the engine's
        // loop ran 7.7 M more instructions on bench-ns3-a (cachegrind). Sound because neither
        // `admit` nor `enqueue` calls an agent (a delivery is always an event of its own); if one
        // ever did, its `clear` would cut this loop short: the assertion guards it.
        for &(at, token) in &self.timers {
            self.events.schedule(at.max(self.now), Event::Timer { agent, token });
        }
        self.timers.clear();
        let sent = self.outbox.len();
        for i in 0..sent {
            let p = self.outbox[i];
            let id = self.admit(p);
            self.enqueue(self.net.path(flow, p.kind)[0], id);
        }
        debug_assert_eq!(self.outbox.len(), sent, "an agent was called while its outbox was read");
        self.outbox.clear();
    }

    /// A packet an agent sent enters the network at its first link (the caller enqueues it there).
    fn admit(&mut self, p: Packet) -> PacketId {
        let id = self.packets.alloc(p);
        self.packets[id].hop = 1;
        self.recorder.on_sent(&p, self.now);
        id
    }

    /// A link's rate changes: the packet it is sending (if any) finishes at the old rate, as
    /// its end was scheduled when it started; the next starts at the new one. Its queue is
    /// told, for the disciplines that compute with the rate (RED's idle decay, CSFQ's C).
    fn change_rate(&mut self, link: u32, change: u32) {
        let l = &mut self.net.links[link as usize];
        let (_, rate) = l.rates[change as usize + 1];
        l.set_rate(rate);
        l.queue.qdisc_mut().set_link_rate(rate);
    }

    /// A packet reaches its destination, where agent `to` takes it.
    fn deliver(&mut self, id: PacketId, to: AgentId) {
        if let Err(DoubleFree(id)) = self.packets.free(id) {
            let p = &self.packets[id];
            let link = *self.net.path(p.flow, p.kind).last().expect("a route has links");
            return self.fault(link, format!("packet {id} delivered after it was freed"));
        }
        // A freed packet's slot keeps it until a packet sent later takes the slot, after the
        // agent has returned: the agent reads it in place, not a copy (issue 21).
        self.recorder.on_delivered(&self.packets[id], self.now);
        self.call_agent(to, |a, ctx, packets| a.receive(&packets[id], ctx));
    }

    fn enqueue(&mut self, link: u32, id: PacketId) {
        self.catch_up(link);
        let p = &mut self.packets[id];
        p.enqueued_at = self.now;
        let l = &self.net.links[link as usize];
        // A packet that finds a drop-tail link idle (so its queue empty) and fits is sent at
        // once: into the queue and straight out again is the same run (drop-tail keeps no
        // counters), and most hops are such, onto an access link.
        if let Discipline::DropTail(q) = &l.queue.discipline {
            if !l.transmitting && l.queue.backlog.packets == 0 && q.admits_alone(p.size) {
                return self.transmit(link, id);
            }
        }
        let verdict =
            self.net.links[link as usize]
                .queue
                .enqueue(id, self.now, &mut self.packets, &mut self.qdisc_events);
        self.record_qdisc_marks(link);
        if let Verdict::Dropped(reason) = verdict {
            self.discard(link, id, reason);
        }
        self.flush_qdisc_drops(link);
        let l = &mut self.net.links[link as usize];
        if !l.transmitting {
            self.start_transmission(link);
        } else if let Some((done, seq)) = l.lazy_tx_done.take() {
            // A packet may now wait for the end of the transmission: it runs where it would have.
            self.events.schedule_reserved(done, seq, Event::TxDone { link });
        }
    }

    /// A drop-tail link's lazy end of transmission that comes before the event being run has
    /// happened: it found the queue empty (no packet came to wait for it), so it only ended
    /// the transmission. A drop-tail's dequeue of nothing changes nothing, so skipping it is
    /// the same run.
    fn catch_up(&mut self, link: u32) {
        let l = &mut self.net.links[link as usize];
        if l.lazy_tx_done.is_some_and(|end| end < self.events.current()) {
            l.lazy_tx_done = None;
            l.transmitting = false;
            self.lazy_events += 1;
        }
    }

    fn start_transmission(&mut self, link: u32) {
        let queue = &mut self.net.links[link as usize].queue;
        let next = queue.dequeue(self.now, &mut self.packets, &mut self.qdisc_events);
        self.record_qdisc_marks(link);
        self.flush_qdisc_drops(link);
        let Some(id) = next else {
            // Read here, not kept from the dequeue (neither marks nor the drops' flush change
            // it): a value live across those calls cost a larger prologue on every dequeue.
            let left = self.net.links[link as usize].queue.backlog;
            if left.packets > 0 {
                let what = format!(
                    "the qdisc sent nothing with {} packet(s) ({} bytes) queued",
                    left.packets, left.bytes
                );
                self.fault(link, what);
            }
            return;
        };
        if !self.packets.is_live(id) {
            return self.fault(link, format!("the qdisc dequeued packet {id}, which was already freed"));
        }
        self.transmit(link, id);
    }

    /// `link` starts sending packet `id`.
    fn transmit(&mut self, link: u32, id: PacketId) {
        let done = self.net.links[link as usize].tx_end(self.now, self.packets[id].size);
        let l = &self.net.links[link as usize];
        let p = &self.packets[id];
        let at_far_end = if p.dst == l.to {
            let to = AgentId::addressee(p);
            Event::Deliver { packet: id, to }
        } else {
            let next = self.net.path(p.flow, p.kind)[p.hop as usize];
            Event::Arrive { link, packet: id, next }
        };
        // A drop-tail link's end of transmission waits to be needed unless a packet waits already.
        let tx_done = if matches!(l.queue.discipline, Discipline::DropTail(_)) && l.queue.backlog.packets == 0 {
            Some((done, self.events.reserve()))
        } else {
            self.events.schedule(done, Event::TxDone { link });
            None
        };
        self.events.schedule(done + l.delay, at_far_end);
        let l = &mut self.net.links[link as usize];
        l.transmitting = true;
        l.lazy_tx_done = tx_done;
        self.recorder.on_tx(link, id, &self.packets[id], self.now, done);
    }

    /// Records the packets the qdisc of `link` marked (before any is freed: a marked arrival may
    /// still overflow the buffer). Checked at every enqueue and dequeue, so only the check is
    /// inline; few of them mark.
    #[inline]
    fn record_qdisc_marks(&mut self, link: u32) {
        if !self.qdisc_events.marks.is_empty() {
            self.record_marks(link);
        }
    }

    #[cold]
    fn record_marks(&mut self, link: u32) {
        while let Some(id) = self.qdisc_events.marks.pop() {
            self.recorder.on_mark(&self.packets[id], link, self.now);
        }
    }

    /// Frees the packets the qdisc of `link` dropped besides the arriving one.
    fn flush_qdisc_drops(&mut self, link: u32) {
        while let Some((id, reason)) = self.qdisc_events.drops.pop() {
            self.discard(link, id, reason);
        }
        if self.qdisc_events.failure.is_some() {
            self.stop_for_mechanism(link);
        }
    }

    /// The discipline of `link`, one from outside the crate, failed: the run stops at the end
    /// of this slice of events with its message, the link and the time.
    #[cold]
    fn stop_for_mechanism(&mut self, link: u32) {
        let what = self.qdisc_events.failure.take().expect("called on a failure");
        let name = &self.net.links[link as usize].name;
        let at = crate::time::to_secs(self.now);
        self.failure
            .get_or_insert_with(|| MechanismError(format!("the qdisc of link {name} at {at} s: {what}")));
    }

    /// Frees a dropped packet and records the drop.
    fn discard(&mut self, link: u32, id: PacketId, reason: DropReason) {
        match self.packets.free(id) {
            Ok(()) => self.recorder.on_drop(id, &self.packets[id], link, reason, self.now),
            Err(DoubleFree(id)) => self.fault(
                link,
                format!("packet {id} dropped ({}) after it was freed", reason.as_str()),
            ),
        }
    }

    /// Keeps the first broken invariant, with where and when it broke.
    #[cold]
    fn fault(&mut self, link: u32, what: String) {
        let name = &self.net.links[link as usize].name;
        let at = crate::time::to_secs(self.now);
        self.fault
            .get_or_insert_with(|| InternalError(format!("link {link} ({name}) at {at} s: {what}")));
    }

    /// Where the packets still in the network are, counted where they are:
    /// in a link's queue, or on a link (serializing or propagating: its
    /// `Arrive` is pending). Agents hold none: what they send goes from their
    /// outbox into a queue within the same event.
    fn in_flight(&self) -> InFlight {
        InFlight {
            queued: self.net.links.iter().map(|l| l.queue.backlog.packets as u64).sum(),
            on_links: self
                .events
                .count_pending(|e| matches!(e, Event::Arrive { .. } | Event::Deliver { .. })),
        }
    }

    /// The results so far (rates over the configured window); the error of a discipline from
    /// outside the crate that failed; an internal error if an invariant broke while running,
    /// or if packets were not conserved (sent = delivered + dropped + queued + on links).
    pub fn results(&self) -> Result<Results, Error> {
        // A user's discipline that failed may have broken the engine's checks after it.
        if let Some(failure) = &self.failure {
            return Err(failure.clone().into());
        }
        if let Some(fault) = &self.fault {
            return Err(fault.clone().into());
        }
        let senders = self.flows.iter().map(|f| f.sender.stats()).collect();
        // The lazy ends of transmission before the clock happened too (see `catch_up`).
        let skipped = self
            .net
            .links
            .iter()
            .filter(|l| l.lazy_tx_done.is_some_and(|(t, _)| t < self.now));
        let events = self.events.processed() + self.lazy_events + skipped.count() as u64;
        Ok(self.recorder.finish(&self.net, senders, self.in_flight(), events)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::droptail::DropTail;
    use crate::qdisc::testing::{Breakage, Broken};
    use crate::qdisc::Limit;
    use std::path::Path;

    /// 15 Mb/s offered to a 10 Mb/s drop-tail of 50 packets: at the end the
    /// queue is full and every link on the path carries packets.
    const OVERLOAD: &str = r#"
[simulation]
duration = "2s"
[topology]
type = "dumbbell"
bottleneck = { rate = "10Mbps", delay = "5ms", qdisc = { type = "droptail", limit = 50 } }
[[flows]]
type = "cbr"
rate = "15Mbps"
"#;

    /// Runs `OVERLOAD` with `qdisc` on the bottleneck (its own drop-tail when `None`).
    fn run_with(qdisc: Option<Box<dyn crate::qdisc::QueueDisc>>) -> Result<Results, Error> {
        run_text_with(OVERLOAD, qdisc)
    }

    /// Runs the scenario `text` with `qdisc` on its bottleneck `L->R` (its own when `None`).
    fn run_text_with(text: &str, qdisc: Option<Box<dyn crate::qdisc::QueueDisc>>) -> Result<Results, Error> {
        let scenario = Scenario::from_toml_str(text).unwrap();
        let mut sim = Simulation::build(&scenario).unwrap();
        if let Some(q) = qdisc {
            let bottleneck = sim.net.links.iter().position(|l| l.name == "L->R").unwrap();
            sim.net.links[bottleneck].queue.discipline = Discipline::Boxed(q);
        }
        sim.run_to_end();
        sim.results()
    }

    #[test]
    fn a_run_in_slices_of_events_is_the_same_run() {
        let scenario = Scenario::from_toml_str(OVERLOAD).unwrap();
        let mut whole = Simulation::build(&scenario).unwrap();
        whole.run_to_end();
        let mut sliced = Simulation::build(&scenario).unwrap();
        let mut slices = 1;
        while !sliced.run_events(whole.end, 1000) {
            slices += 1;
        }
        let popped = whole.events.processed();
        assert_eq!(slices, popped.div_ceil(1000) + popped.is_multiple_of(1000) as u64);
        let (whole, sliced) = (whole.results().unwrap(), sliced.results().unwrap());
        assert_eq!(whole.to_json(), sliced.to_json());
    }

    /// Drop-tail links end their transmissions lazily (`Link::lazy_tx_done`): the same run,
    /// event for event, as with every end of transmission scheduled (a boxed drop-tail).
    #[test]
    fn lazy_ends_of_transmission_make_the_same_run_with_fewer_events_popped() {
        let text = format!(
            "{OVERLOAD}\n[[flows]]\ntype = \"tcp\"\ncount = 8\ntcp = {{ window = 64 }}\naccess_rate = \"20Mbps\"\n"
        );
        let scenario = Scenario::from_toml_str(&text).unwrap();
        let mut lazy = Simulation::build(&scenario).unwrap();
        let mut eager = Simulation::build(&scenario).unwrap();
        let mut boxed = 0;
        for link in &mut eager.net.links {
            let placeholder = Discipline::Boxed(Box::new(DropTail::new(Limit::new(Some(1), None))));
            if let Discipline::DropTail(q) = std::mem::replace(&mut link.queue.discipline, placeholder) {
                link.queue.discipline = Discipline::Boxed(Box::new(q));
                boxed += 1;
            }
        }
        assert_eq!(boxed, eager.net.links.len(), "every link of the scenario is drop-tail");
        lazy.run_to_end();
        eager.run_to_end();
        let (popped_lazy, popped_eager) = (lazy.events.processed(), eager.events.processed());
        assert!(
            (popped_lazy as f64) < 0.8 * popped_eager as f64,
            "lazy {popped_lazy}, eager {popped_eager}"
        );
        let (lazy, eager) = (lazy.results().unwrap(), eager.results().unwrap());
        assert!(lazy.summary.packets_dropped > 100);
        assert_eq!(lazy.summary.events, popped_eager);
        assert_eq!(lazy.to_json(), eager.to_json());
    }

    #[test]
    fn a_sound_run_conserves_packets_counted_where_they_are() {
        let r = run_with(None).unwrap();
        let s = &r.summary;
        assert!(s.packets_dropped > 0);
        // 50 queued at the bottleneck, plus those on the access and bottleneck links.
        assert!(s.packets_in_flight > 50, "in flight {}", s.packets_in_flight);
        assert_eq!(
            s.packets_sent,
            s.packets_delivered + s.packets_dropped + s.packets_in_flight
        );
    }

    /// The records of a libpcap file: (seconds, nanoseconds) of each.
    fn pcap_times(path: &Path) -> Vec<(u32, u32)> {
        let bytes = std::fs::read(path).unwrap();
        let le = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
        let mut at = 24;
        let mut times = Vec::new();
        while at < bytes.len() {
            times.push((le(at), le(at + 4)));
            at += 16 + le(at + 8) as usize;
        }
        assert_eq!(at, bytes.len(), "records end with the file");
        times
    }

    #[test]
    fn a_captured_link_has_a_record_per_packet_sent_and_per_drop_in_time_order() {
        let text = OVERLOAD.replace("duration", "pcap = [\"L->R\", \"src0-L\"]\npcap_drops = true\nduration");
        let scenario = Scenario::from_toml_str(&text).unwrap();
        let dir = std::env::temp_dir().join(format!("aqmlab-capture-test-{}", std::process::id()));
        let mut sim = Simulation::build(&scenario).unwrap();
        let files = sim.capture_into(&dir).unwrap();
        sim.run_to_end();
        sim.flush_captures().unwrap();
        let r = sim.results().unwrap();
        let names: Vec<_> = files.iter().map(|f| f.file_name().unwrap().to_str().unwrap()).collect();
        assert_eq!(
            names,
            ["L-R.pcap", "L-R.drops.pcap", "src0-L.pcap", "src0-L.drops.pcap"]
        );
        let link = |name: &str| r.links.iter().find(|l| l.name == name).unwrap();
        let (sent, dropped) = (pcap_times(&files[0]), pcap_times(&files[1]));
        assert_eq!(sent.len() as u64, link("L->R").packets_sent);
        assert_eq!(dropped.len() as u64, link("L->R").drops);
        assert!(dropped.len() > 100 && sent.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(pcap_times(&files[2]).len() as u64, link("src0->L").packets_sent);
        // IPv4's TTL (64) less the routers crossed: none on the access link, one on the bottleneck.
        let first_ttl = |path: &Path| std::fs::read(path).unwrap()[24 + 16 + 8];
        assert_eq!((first_ttl(&files[2]), first_ttl(&files[0])), (64, 63));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn capture_links_are_named_or_refused_naming_the_entry() {
        let with = |list: &str| {
            let text = OVERLOAD.replace("duration", &format!("pcap = {list}\nduration"));
            Simulation::build(&Scenario::from_toml_str(&text).unwrap()).map(|_| ())
        };
        assert_eq!(with(r#"["L->R", "dst0-R"]"#), Ok(()));
        assert_eq!(
            with(r#"["L->R", "L->X"]"#).unwrap_err().to_string(),
            r#"simulation.pcap[1]: unknown link "L->X" (links: L->R, R->L, src0->L, L->src0, R->dst0, dst0->R)"#
        );
        assert_eq!(
            with(r#"["L->R", "L-R"]"#).unwrap_err().to_string(),
            r#"simulation.pcap[1]: link "L->R" is listed twice"#
        );
    }

    #[test]
    fn a_qdisc_that_forgets_a_packet_is_caught_when_it_sends_nothing() {
        // The source stops at 1 s and the queue drains: all but the packet the qdisc forgot, which
        // the link still counts in it.
        let text = format!("{OVERLOAD}stop = \"1s\"\n");
        let err = run_text_with(&text, Some(Box::new(Broken::new(Breakage::ForgetsArrival(100))))).unwrap_err();
        assert_eq!(
            err.to_string(),
            "internal error: link 0 (L->R) at 1.50108 s: the qdisc sent nothing with 1 packet(s) (1000 bytes) queued"
        );
    }

    #[test]
    fn a_discipline_that_fails_stops_the_run_with_its_message_not_an_internal_error() {
        let scenario = Scenario::from_toml_str(OVERLOAD).unwrap();
        let mut sim = Simulation::build(&scenario).unwrap();
        let bottleneck = sim.net.links.iter().position(|l| l.name == "L->R").unwrap();
        sim.net.links[bottleneck].queue.discipline = Discipline::Boxed(Box::new(Broken::new(Breakage::Fails(100))));
        assert!(!sim.run_events(Time::MAX, 10_000), "the slice ends where it would");
        let stopped_at = sim.now();
        // The run is over: no later slice runs an event, however long.
        assert!(sim.run_events(Time::MAX, 1 << 20) && sim.now() == stopped_at);
        let err = sim.results().unwrap_err();
        assert!(matches!(err, Error::Mechanism(_)), "{err:?}");
        // Its forgotten arrival broke the engine's check too: the failure is reported, first.
        assert_eq!(
            err.to_string(),
            "the qdisc of link L->R at 0.053879967 s: Broken.enqueue raised at arrival 100"
        );
    }

    #[test]
    fn a_packet_dropped_twice_is_caught() {
        let err = run_with(Some(Box::new(Broken::new(Breakage::DropsTwice(100))))).unwrap_err();
        // The first drop freed packet 8 and counted it; the second is refused, not counted twice.
        assert_eq!(
            err.to_string(),
            "internal error: link 0 (L->R) at 0.053879967 s: packet 8 dropped (overflow) after it was freed"
        );
    }
}
