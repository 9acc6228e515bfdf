//! What a run records while it runs, and the [`Results`] it assembles at the end.
//!
//! The engine tells the recorder what happens to each packet (`on_sent`,
//! `on_delivered`, `on_drop`, `on_tx`, `on_goodput`) and when to sample the
//! monitored queues; the recorder does all the counting, as ns-3's `QueueDisc`
//! base class does, so neither the engine nor the qdiscs count drops by reason, nor marks.
//! Flow counts are of data packets; ACKs count only in the run's totals, which
//! [`Recorder::finish`] checks for packet conservation before it assembles the
//! tables. "In the window" means at or after `simulation.warmup`. The links
//! `simulation.pcap` names are also captured to files (`pcap`) once
//! [`Recorder::open_captures`] is given a folder; under `aqmlab emulate` their records
//! are the real packets' headers ([`Recorder::capture_real`]).

use super::pcap::{FlowWire, Frame, LinkCapture};
use super::queue_delay::{QueueDelays, NOT_KEPT};
use super::{
    jain_index, max_min_shares, DropCount, DropEvent, FlowResult, LinkResult, MarkCount, QdiscFlowResult, QueueSample,
    Results, Summary, ThroughputBin,
};
use crate::error::InternalError;
use crate::net::Network;
use crate::packet::{FlowId, Packet, PacketId, PacketKind};
use crate::qdisc::DropReason;
use crate::scenario::{ExpandedFlow, Scenario};
use crate::time::{to_secs, Time};
use crate::transport::{AgentStats, FlowKind, TraceSample};
use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

/// What the results call a flow, fixed when the run is built.
struct FlowLabel {
    name: String,
    group: String,
    kind: &'static str,
    /// Offered load for the max-min fair share (infinite: elastic, e.g. TCP).
    demand_bps: f64,
    /// How its packets look in a capture file.
    wire: FlowWire,
}

/// How packet `id` looks in a capture: the real packet's headers it stands for (with the
/// ECN field it has now: a queue may have marked it), else headers synthesised from it.
fn frame(real_frames: &[Option<Frame>], flows: &[FlowLabel], id: PacketId, packet: &Packet) -> Frame {
    match real_frames.get(id as usize) {
        Some(Some(real)) => {
            let mut frame = real.clone();
            frame.set_ecn(packet.ecn);
            frame
        }
        _ => Frame::of(packet, flows[packet.flow as usize].wire),
    }
}

/// One flow's data packets and goodput.
#[derive(Default)]
struct FlowStats {
    sent_packets: u64,
    sent_bytes: u64,
    delivered_packets: u64,
    dropped_packets: u64,
    window_sent_packets: u64,
    window_dropped_packets: u64,
    window_goodput_bytes: u64,
    /// Data packets delivered in the window, and their summed and largest one-way delay.
    window_delivered: u64,
    window_delay_sum: Time,
    window_delay_max: Time,
}

/// One simplex link's transmissions and drops.
struct LinkStats {
    /// Its slot in `queue_delays` (`NOT_KEPT` unless monitored): read by every transmission,
    /// as the counters beside it are.
    delay_slot: u32,
    /// Time spent transmitting within the window.
    busy_in_window: Time,
    packets_sent: u64,
    drops: u64,
    /// Packets its qdisc marked CE.
    marks: u64,
}

/// The drop table's key; its order (flow, link, reason) is the order of the `drops` rows.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct DropKey {
    flow: FlowId,
    link: u32,
    reason: DropReason,
}

/// The mark table's key; its order is the order of the `marks` rows.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct MarkKey {
    flow: FlowId,
    link: u32,
}

#[derive(Default)]
struct DropTally {
    total: u64,
    in_window: u64,
}

/// The packets still in the network at the end, each counted where it is
/// (not from the allocation counters that sending and freeing move).
#[derive(Clone, Copy, Debug, Default)]
pub struct InFlight {
    /// In the links' queues (the qdiscs' own counts).
    pub queued: u64,
    /// On a link: serializing or propagating.
    pub on_links: u64,
}

impl InFlight {
    pub fn total(&self) -> u64 {
        self.queued + self.on_links
    }
}

/// Packets of every kind over the whole run.
#[derive(Default)]
struct Totals {
    sent: u64,
    delivered: u64,
    dropped: u64,
}

pub struct Recorder {
    name: Option<String>,
    seed: u64,
    warmup: Time,
    end: Time,
    bin: Time,
    record_drops: bool,
    flows: Vec<FlowLabel>,
    flow_stats: Vec<FlowStats>,
    /// Goodput bytes per flow and throughput bin: flow `f`'s bins are
    /// `goodput_bins[f * n_bins..(f + 1) * n_bins]`, in one table so that the engine can
    /// name the one it will add to without reading anything first (see `prefetch_flow`).
    goodput_bins: Vec<u64>,
    n_bins: usize,
    link_stats: Vec<LinkStats>,
    drops: BTreeMap<DropKey, DropTally>,
    marks: BTreeMap<MarkKey, DropTally>,
    drop_log: Vec<DropEvent>,
    queue_samples: Vec<QueueSample>,
    traces: Vec<TraceSample>,
    totals: Totals,
    queue_delays: QueueDelays,
    /// By link, its capture files; empty unless captures were opened.
    captures: Vec<Option<LinkCapture>>,
    /// Under emulation, with captures open: by packet id, the real packet's headers.
    real_frames: Vec<Option<Frame>>,
}

impl Recorder {
    /// A recorder for `flows` (the scenario's, expanded) over `links` simplex links, of which
    /// `monitored` are sampled and have their queueing delays kept.
    pub fn new(scenario: &Scenario, flows: &[ExpandedFlow], links: usize, monitored: &[u32]) -> Self {
        let sim = &scenario.simulation;
        let end = sim.duration.nanos();
        let bin = sim.bin_width();
        // Bounded by the scenario's validation (`MAX_SERIES_ROWS`).
        let n_bins = sim.throughput_bins() as usize;
        let series = sim.queue_delay_series.then_some((bin, n_bins));
        let queue_delays = QueueDelays::new(sim.queue_delay, flows, monitored, series);
        Recorder {
            name: scenario.name.clone(),
            seed: sim.seed,
            warmup: sim.warmup.nanos(),
            end,
            bin,
            record_drops: sim.record_drops,
            flows: flows
                .iter()
                .map(|f| FlowLabel {
                    name: f.name.clone(),
                    group: f.group.clone(),
                    kind: f.spec.kind.type_name(),
                    demand_bps: f.spec.kind.config().demand_bps().unwrap_or(f64::INFINITY),
                    wire: FlowWire::new(
                        matches!(f.spec.kind, FlowKind::Tcp(_)),
                        f.spec.common.packet_size.0 as u32,
                    ),
                })
                .collect(),
            flow_stats: flows.iter().map(|_| FlowStats::default()).collect(),
            goodput_bins: vec![0; flows.len() * n_bins],
            n_bins,
            link_stats: (0..links as u32)
                .map(|link| LinkStats {
                    delay_slot: queue_delays.slot_of(link),
                    busy_in_window: 0,
                    packets_sent: 0,
                    drops: 0,
                    marks: 0,
                })
                .collect(),
            drops: BTreeMap::new(),
            marks: BTreeMap::new(),
            drop_log: Vec::new(),
            queue_samples: Vec::new(),
            traces: Vec::new(),
            totals: Totals::default(),
            queue_delays,
            captures: Vec::new(),
            real_frames: Vec::new(),
        }
    }

    /// Moves the counters every packet adds to (per flow, per link, the goodput bins) into huge
    /// pages: with 10⁶ flows they are 280 MB read in no order ([`crate::cache::collapse_table`]).
    pub fn settle_in_huge_pages(&self) {
        crate::cache::collapse_table(&self.flow_stats);
        crate::cache::collapse_table(&self.goodput_bins);
        crate::cache::collapse_table(&self.link_stats);
    }

    /// Starts capturing each of `links` (link id, file stem) into `dir` (created
    /// if missing), with its drops too when `drops`; returns the files. Packets
    /// recorded before are not in them.
    pub fn open_captures(&mut self, dir: &Path, links: &[(u32, String)], drops: bool) -> io::Result<Vec<PathBuf>> {
        if links.is_empty() {
            return Ok(Vec::new());
        }
        std::fs::create_dir_all(dir).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", dir.display())))?;
        self.captures.resize_with(self.link_stats.len(), || None);
        let mut paths = Vec::new();
        for (link, stem) in links {
            let capture = LinkCapture::create(dir, stem, drops)?;
            paths.extend(capture.paths().map(Path::to_path_buf));
            self.captures[*link as usize] = Some(capture);
        }
        Ok(paths)
    }

    /// Packet `id` stands for the real IPv4 packet `bytes` (`aqmlab emulate`): the captures
    /// record its headers rather than synthesised ones. Nothing is kept unless a link is captured.
    pub fn capture_real(&mut self, id: PacketId, bytes: &[u8]) {
        if self.captures.is_empty() {
            return;
        }
        let id = id as usize;
        if self.real_frames.len() <= id {
            self.real_frames.resize(id + 1, None);
        }
        self.real_frames[id] = Some(Frame::captured(bytes));
    }

    /// Writes out what the capture files hold so far; the first write error, naming the file.
    pub fn flush_captures(&mut self) -> io::Result<()> {
        self.captures.iter_mut().flatten().try_for_each(LinkCapture::flush)
    }

    fn in_window(&self, now: Time) -> bool {
        now >= self.warmup
    }

    /// Where traced flows' agents write their samples.
    pub fn traces(&mut self) -> &mut Vec<TraceSample> {
        &mut self.traces
    }

    /// An agent sent `packet`.
    pub fn on_sent(&mut self, packet: &Packet, now: Time) {
        self.totals.sent += 1;
        if packet.kind == PacketKind::Data {
            let in_window = self.in_window(now);
            let s = &mut self.flow_stats[packet.flow as usize];
            s.sent_packets += 1;
            s.sent_bytes += packet.size as u64;
            s.window_sent_packets += in_window as u64;
        }
    }

    /// `packet` reached its destination node.
    pub fn on_delivered(&mut self, packet: &Packet, now: Time) {
        self.totals.delivered += 1;
        if packet.kind == PacketKind::Data {
            let in_window = self.in_window(now);
            let s = &mut self.flow_stats[packet.flow as usize];
            s.delivered_packets += 1;
            if in_window {
                let delay = now - packet.sent_at;
                s.window_delivered += 1;
                s.window_delay_sum += delay;
                s.window_delay_max = s.window_delay_max.max(delay);
            }
        }
    }

    /// A receiver of `flow` handed `bytes` of new in-order data to its application.
    pub fn on_goodput(&mut self, flow: FlowId, bytes: u64, now: Time) {
        if bytes == 0 {
            return;
        }
        let in_window = self.in_window(now);
        let bin = self.bin_index(flow, now);
        self.goodput_bins[bin] += bytes;
        let s = &mut self.flow_stats[flow as usize];
        if in_window {
            s.window_goodput_bytes += bytes;
        }
    }

    /// Asks for `link`'s counters to be fetched into the cache (the engine knows the next event's link).
    #[inline]
    pub fn prefetch_link(&self, link: u32) {
        if let Some(stats) = self.link_stats.get(link as usize) {
            crate::cache::prefetch(stats);
        }
    }

    fn bin_index(&self, flow: FlowId, now: Time) -> usize {
        flow as usize * self.n_bins + (now / self.bin) as usize
    }

    /// Asks for `flow`'s counters, and its goodput bin at `now`, to be fetched into the cache
    /// (the engine knows the flow of an event ahead).
    #[inline]
    pub fn prefetch_flow(&self, flow: FlowId, now: Time) {
        if let Some(stats) = self.flow_stats.get(flow as usize) {
            crate::cache::prefetch(stats);
        }
        if let Some(bin) = self.goodput_bins.get(self.bin_index(flow, now)) {
            crate::cache::prefetch(bin);
        }
    }

    /// `link`'s qdisc dropped `packet` (id `id`) for `reason`.
    pub fn on_drop(&mut self, id: PacketId, packet: &Packet, link: u32, reason: DropReason, now: Time) {
        let in_window = self.in_window(now) as u64;
        self.totals.dropped += 1;
        self.link_stats[link as usize].drops += 1;
        let key = DropKey {
            flow: packet.flow,
            link,
            reason,
        };
        let tally = self.drops.entry(key).or_default();
        tally.total += 1;
        tally.in_window += in_window;
        if packet.kind == PacketKind::Data {
            let s = &mut self.flow_stats[packet.flow as usize];
            s.dropped_packets += 1;
            s.window_dropped_packets += in_window;
        }
        if !self.captures.is_empty() {
            self.capture(link, id, packet, now, LinkCapture::on_drop);
        }
        if self.record_drops {
            self.drop_log.push(DropEvent {
                time: to_secs(now),
                flow: packet.flow,
                link,
                reason: reason.as_str(),
            });
        }
    }

    /// `link`'s qdisc marked `packet` CE.
    pub fn on_mark(&mut self, packet: &Packet, link: u32, now: Time) {
        let in_window = self.in_window(now) as u64;
        self.link_stats[link as usize].marks += 1;
        let tally = self
            .marks
            .entry(MarkKey {
                flow: packet.flow,
                link,
            })
            .or_default();
        tally.total += 1;
        tally.in_window += in_window;
    }

    /// Writes packet `id` into `link`'s capture with `write` (`LinkCapture::on_tx` or
    /// `on_drop`), if the link is captured. Out of line and cold: most runs capture nothing,
    /// and the frame it builds inline cost every `on_tx` a larger prologue and epilogue and kept
    /// it out of `transmit` (cachegrind, bench-ns3-a: 12 M instructions a run; BENCHMARKS.md).
    #[cold]
    #[inline(never)]
    fn capture(
        &mut self,
        link: u32,
        id: PacketId,
        packet: &Packet,
        now: Time,
        write: fn(&mut LinkCapture, &Frame, Time),
    ) {
        if let Some(Some(capture)) = self.captures.get_mut(link as usize) {
            write(capture, &frame(&self.real_frames, &self.flows, id, packet), now);
        }
    }

    /// `link` transmits `packet` (id `id`) from `now` until `done`; it waited in the link's
    /// queue since `packet.enqueued_at`.
    pub fn on_tx(&mut self, link: u32, id: PacketId, packet: &Packet, now: Time, done: Time) {
        if !self.captures.is_empty() {
            self.capture(link, id, packet, now, LinkCapture::on_tx);
        }
        let s = &mut self.link_stats[link as usize];
        s.packets_sent += 1;
        let (from, to) = (now.max(self.warmup), done.min(self.end));
        s.busy_in_window += to.saturating_sub(from);
        let slot = s.delay_slot;
        if slot != NOT_KEPT {
            self.record_delay(slot, packet, now);
        }
    }

    /// A monitored link's `packet` starts its transmission `now`. Out of line, so that `on_tx`
    /// stays small enough to inline into every transmission (most are on links not monitored).
    #[inline(never)]
    fn record_delay(&mut self, slot: u32, packet: &Packet, now: Time) {
        if self.in_window(now) {
            self.queue_delays
                .record(slot, packet.flow, now - packet.enqueued_at, now);
        }
    }

    /// Samples the queue of every monitored link.
    pub fn sample(&mut self, now: Time, net: &Network) {
        for &i in &net.monitored {
            let l = &net.links[i as usize];
            let gauges = l.queue.qdisc().gauges();
            self.queue_samples.push(QueueSample {
                time: to_secs(now),
                link: i,
                packets: l.queue.backlog.packets as u64,
                bytes: l.queue.backlog.bytes,
                average: gauges.average,
                hit_frequency: gauges.hit_frequency,
            });
        }
    }

    /// Every packet sent was delivered, dropped, or is still in the network.
    fn check_conservation(&self, in_flight: InFlight) -> Result<(), InternalError> {
        let t = &self.totals;
        if t.sent == t.delivered + t.dropped + in_flight.total() {
            return Ok(());
        }
        Err(InternalError(format!(
            "packet conservation violated: sent {} != delivered {} + dropped {} + queued {} + on links {}",
            t.sent, t.delivered, t.dropped, in_flight.queued, in_flight.on_links
        )))
    }

    /// The results so far: `senders` are the flows' sender statistics in flow
    /// order, `in_flight` the packets still in the network, `events` the number
    /// of events processed. Rates are over the configured window.
    pub fn finish(
        &self,
        net: &Network,
        senders: Vec<AgentStats>,
        in_flight: InFlight,
        events: u64,
    ) -> Result<Results, InternalError> {
        self.check_conservation(in_flight)?;
        let window = to_secs(self.end - self.warmup);
        // A link whose rate changes offers its mean rate over the window.
        let capacity: Vec<f64> = net.links.iter().map(|l| l.mean_rate(self.warmup, self.end)).collect();
        let routes: Vec<Vec<u32>> = (0..net.routes.len() as u32)
            .map(|f| net.path(f, PacketKind::Data).to_vec())
            .collect();
        let demand: Vec<f64> = self.flows.iter().map(|f| f.demand_bps).collect();
        let shares = max_min_shares(&capacity, &routes, &demand);
        let link_delay = |ls: &[u32]| ls.iter().map(|&l| to_secs(net.links[l as usize].delay)).sum::<f64>();
        let mut flows = Vec::with_capacity(self.flows.len());
        let mut transfers = Vec::new();
        for (id, ((label, s), sender)) in self.flows.iter().zip(&self.flow_stats).zip(senders).enumerate() {
            let route = &net.routes[id];
            transfers.extend(sender.transfers);
            let goodput = s.window_goodput_bytes as f64 * 8.0 / window;
            flows.push(FlowResult {
                id: id as u32,
                name: label.name.clone(),
                group: label.group.clone(),
                kind: label.kind,
                src: net.nodes[route.src as usize].clone(),
                dst: net.nodes[route.dst as usize].clone(),
                base_rtt: link_delay(net.path(id as u32, PacketKind::Data))
                    + link_delay(net.path(id as u32, PacketKind::Ack)),
                sent_packets: s.sent_packets,
                sent_bytes: s.sent_bytes,
                delivered_packets: s.delivered_packets,
                dropped_packets: s.dropped_packets,
                window_sent_packets: s.window_sent_packets,
                window_dropped_packets: s.window_dropped_packets,
                loss_rate: if s.window_sent_packets > 0 {
                    s.window_dropped_packets as f64 / s.window_sent_packets as f64
                } else {
                    0.0
                },
                goodput_bps: goodput,
                fair_share_bps: shares[id],
                normalised_goodput: if shares[id] > 0.0 { goodput / shares[id] } else { 0.0 },
                mean_delay: if s.window_delivered > 0 {
                    to_secs(s.window_delay_sum) / s.window_delivered as f64
                } else {
                    0.0
                },
                max_delay: to_secs(s.window_delay_max),
                timeouts: sender.timeouts,
                fast_retransmits: sender.fast_retransmits,
                retransmitted_packets: sender.retransmitted_packets,
            });
        }
        let links: Vec<LinkResult> = net
            .links
            .iter()
            .zip(&self.link_stats)
            .enumerate()
            .map(|(i, (l, s))| LinkResult {
                id: i as u32,
                name: l.name.clone(),
                qdisc: l.qdisc_type,
                rate_bps: capacity[i],
                delay: to_secs(l.delay),
                utilisation: to_secs(s.busy_in_window) / window,
                packets_sent: s.packets_sent,
                drops: s.drops,
                counters: {
                    let qdisc = l.queue.qdisc();
                    let marks = qdisc.can_mark().then_some(("ecn_marks", s.marks as f64));
                    marks
                        .into_iter()
                        .chain(qdisc.counters())
                        .map(|(k, v)| (k.to_string(), v))
                        .collect()
                },
            })
            .collect();
        let normalised: Vec<f64> = flows.iter().map(|f| f.normalised_goodput).collect();
        let summary = Summary {
            name: self.name.clone(),
            seed: self.seed,
            duration: to_secs(self.end),
            warmup: to_secs(self.warmup),
            events,
            packets_sent: self.totals.sent,
            packets_delivered: self.totals.delivered,
            packets_dropped: self.totals.dropped,
            packets_in_flight: in_flight.total(),
            jain_index: jain_index(&normalised),
            utilisation: links
                .iter()
                .zip(&net.links)
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
                .map(|(key, tally)| DropCount {
                    flow: key.flow,
                    link: key.link,
                    reason: key.reason.as_str(),
                    count: tally.total,
                    window_count: tally.in_window,
                })
                .collect(),
            marks: self
                .marks
                .iter()
                .map(|(key, tally)| MarkCount {
                    flow: key.flow,
                    link: key.link,
                    count: tally.total,
                    window_count: tally.in_window,
                })
                .collect(),
            throughput: self.throughput(),
            queue: self.queue_samples.clone(),
            queue_delay: self.queue_delays.flows(),
            queue_delay_groups: self.queue_delays.groups(),
            queue_delay_series: self.queue_delays.series(),
            drop_log: self.drop_log.clone(),
            traces: self.traces.clone(),
            transfers,
            qdisc_flows: Self::qdisc_flows(net),
        })
    }

    /// The per-flow counters of every link's qdisc, link by link.
    fn qdisc_flows(net: &Network) -> Vec<QdiscFlowResult> {
        let mut rows = Vec::new();
        for (link, l) in net.links.iter().enumerate() {
            rows.extend(l.queue.qdisc().flow_counters().into_iter().map(|f| QdiscFlowResult {
                link: link as u32,
                flow: f.flow,
                direction: match f.kind {
                    PacketKind::Data => "data",
                    PacketKind::Ack => "ack",
                },
                counters: f.counters.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
            }));
        }
        rows
    }

    /// Goodput per flow and bin; the last bin may be partial.
    fn throughput(&self) -> Vec<ThroughputBin> {
        let bin_secs = to_secs(self.bin);
        let mut out = Vec::new();
        for (flow, bins) in self.goodput_bins.chunks(self.n_bins.max(1)).enumerate() {
            for (b, &bytes) in bins.iter().enumerate() {
                let width = to_secs(((b as Time + 1) * self.bin).min(self.end) - b as Time * self.bin);
                out.push(ThroughputBin {
                    time: b as f64 * bin_secs,
                    flow: flow as u32,
                    bps: bytes as f64 * 8.0 / width,
                });
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    const ONE_FLOW: &str = r#"
[simulation]
duration = "1s"
[topology]
type = "dumbbell"
bottleneck = { rate = "1Mbps", delay = "1ms" }
[[flows]]
type = "cbr"
rate = "100kbps"
"#;

    /// A packet that leaves no trace (neither delivered, nor dropped, nor in the
    /// arena) breaks conservation, and that is reported as the simulator's bug.
    #[test]
    fn a_lost_packet_is_an_internal_error() {
        let scenario = Scenario::from_toml_str(ONE_FLOW).unwrap();
        let net = Network::build(&scenario).unwrap();
        let mut recorder = Recorder::new(&scenario, &scenario.expanded_flows(), net.links.len(), &net.monitored);
        recorder.on_sent(&Packet::default(), 0);
        let on_link = InFlight { queued: 0, on_links: 1 };
        assert!(recorder.finish(&net, vec![AgentStats::default()], on_link, 0).is_ok());
        let err = recorder
            .finish(&net, vec![AgentStats::default()], InFlight::default(), 0)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "internal error: packet conservation violated: sent 1 != delivered 0 + dropped 0 + queued 0 + on links 0"
        );
        assert!(matches!(Error::from(err), Error::Internal(_)));
    }
}
