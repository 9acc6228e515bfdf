//! FRED, Flow Random Early Drop (Lin & Morris, "Dynamics of Random Early
//! Detection", SIGCOMM 1997), exactly as the §4.5 pseudocode gives it.
//!
//! RED's averaged queue and random drop, plus per-active-flow accounting kept
//! only for flows with packets buffered: `qlen` (buffered packets) and `strike`
//! (times the flow tried to exceed `max_q`). Each flow may buffer `min_q`
//! packets without loss (§4.1); only "robust" flows, with at least
//! `max(min_q, avgcq)` packets buffered, see RED's random drop (§4.2); a flow
//! above `max_q`, or a struck flow above the average per-flow queue `avgcq`,
//! is dropped (§4.3). The average is sampled on arrival and on departure, not
//! on a dropped arrival unless the queue is empty, and decays over idle time
//! (§4.4). Options: the many-flow "two packet buffer" mode (§6) and byte mode
//! (§7).
//!
//! Reading of the garbled pseudocode (see the paper's §4.5): "max_q = min_th"
//! always, then block A "if (avg >= max_th) max_q = 2"; line B is the
//! `qlen > 2·avgcq` condition; block C is the drop-tail clause.
//!
//! Where FRED and [`super::red`] differ, and why:
//! - Idle period. RED (F–J, ns-2 red.cc) starts it when a dequeue finds nothing
//!   to send, i.e. after the last transmission. FRED §4.5 starts it at the
//!   departure that leaves the queue empty ("if q == 0 && packet departed:
//!   q_time = time"), i.e. when the last packet is dequeued for transmission;
//!   we follow the paper. Arrivals during that last transmission therefore see
//!   an idle decay, not an EWMA sample of q = 0 (negligible at w_q = 0.002).
//! - `count` on a buffer overflow. §4.5 does not say what a full buffer does;
//!   its `count` is "number of packets since last drop", so an
//!   overflow restarts it as in RED (ns-2 red.cc: `count = 0`), unless below
//!   min_th (−1 kept). Non-adaptive (strike) drops leave `count` alone, as §4.5
//!   returns before touching it.

use super::active_flows::{flow_key, ActiveFlows, FlowKey};
use super::red::{uniformized, DropCurve, IdleRule, RedAverage, Region};
use super::{Backlog, DropReason, Fifo, Gauges, Limit, LinkInfo, QdiscConfig, QdiscCtx, QueueDisc, Verdict};
use crate::error::ScenarioError;
use crate::packet::PacketId;
use crate::rng::Rng;
use crate::units::Bytes;
use crate::validate::{require_above, require_at_least, require_in, require_positive, Bound};
use rand::Rng as _;
use serde::Deserialize;

/// FRED's parameters. Queue quantities (`min_th`, `max_th`, `min_q`) are in
/// packets, or in bytes with `bytes = true` (as RED).
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FredConfig {
    /// Buffer size in packets (default 64, the buffer of §3.3 / Fig. 5).
    pub limit: Option<u64>,
    /// Buffer size in bytes; required in byte mode.
    pub limit_bytes: Option<Bytes>,
    /// Count queues in bytes (§7).
    pub bytes: bool,
    /// Default buffer/4 (§4.5: min_th = MIN(buffer size / 4, RTT); the RTT is unknown to the queue).
    pub min_th: Option<f64>,
    /// Default 2·min_th (§4.5).
    pub max_th: Option<f64>,
    /// Default 0.02 (§4.5).
    pub max_p: f64,
    /// Default 0.002 (§4.5).
    pub w_q: f64,
    /// Packets a flow may always buffer. Default (§4.5 "2 for small buffers, 4 for large"):
    /// 2 up to 64 packets of buffer (every buffer the paper simulated, 16–64, used 2), 4 above.
    pub min_q: Option<f64>,
    /// Size of the "typical small packet" whose transmission time is one idle
    /// slot in the idle-time decay, bytes (ns-2/ns-3 RED `mean_pktsize`, 500).
    pub mean_pktsize: Bytes,
    /// MaximumPacketSize of byte mode (§7), bytes (the paper gives none; Ethernet's 1500).
    pub max_packet_size: Bytes,
    /// §6 many-flow extension: above max_th, each flow may buffer two packets.
    pub two_packet_buffer: bool,
}

impl Default for FredConfig {
    fn default() -> Self {
        FredConfig {
            limit: None,
            limit_bytes: None,
            bytes: false,
            min_th: None,
            max_th: None,
            max_p: 0.02,
            w_q: 0.002,
            min_q: None,
            mean_pktsize: Bytes(500),
            max_packet_size: Bytes(1500),
            two_packet_buffer: false,
        }
    }
}

impl FredConfig {
    pub const DEFAULT_LIMIT_PACKETS: u64 = 64;
    /// Buffers above this many packets are "large" for the min_q default.
    pub const SMALL_BUFFER_PACKETS: f64 = 64.0;

    fn limit(&self) -> Limit {
        match (self.bytes, self.limit) {
            (false, None) => Limit::new(Some(Self::DEFAULT_LIMIT_PACKETS), self.limit_bytes.map(|b| b.0)),
            _ => Limit::new(self.limit, self.limit_bytes.map(|b| b.0)),
        }
    }

    fn params(&self) -> Params {
        let packet = if self.bytes { self.max_packet_size.0 as f64 } else { 1.0 };
        let limit = self.limit();
        let buffer = if self.bytes {
            limit.bytes.unwrap_or(0)
        } else {
            limit.packets.unwrap_or(0)
        } as f64;
        let min_th = self.min_th.unwrap_or(buffer / 4.0);
        let small_buffer = buffer <= Self::SMALL_BUFFER_PACKETS * packet;
        Params {
            limit,
            packet,
            min_th,
            max_th: self.max_th.unwrap_or(2.0 * min_th),
            min_q: self.min_q.unwrap_or(if small_buffer { 2.0 } else { 4.0 } * packet),
            max_p: self.max_p,
            w_q: self.w_q,
            bytes: self.bytes,
            two_packet_buffer: self.two_packet_buffer,
        }
    }
}

impl QdiscConfig for FredConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        if self.bytes && self.limit_bytes.is_none() {
            return Err(ScenarioError::new(
                format!("{path}.limit_bytes"),
                "required when bytes = true",
            ));
        }
        self.limit().validate(path)?;
        let params = self.params();
        require_positive(&format!("{path}.min_th"), params.min_th)?;
        require_above(
            &format!("{path}.max_th"),
            params.max_th,
            Bound::field("min_th", params.min_th),
        )?;
        require_in(&format!("{path}.max_p"), params.max_p, 0.0, 1.0)?;
        require_positive(&format!("{path}.w_q"), params.w_q)?;
        require_in(&format!("{path}.w_q"), params.w_q, 0.0, 1.0)?;
        require_at_least(&format!("{path}.min_q"), params.min_q, 1.0)?;
        require_positive(&format!("{path}.mean_pktsize"), self.mean_pktsize.0 as f64)?;
        require_positive(&format!("{path}.max_packet_size"), self.max_packet_size.0 as f64)
    }

    fn build(&self, link: &LinkInfo, rng: Rng) -> Box<dyn QueueDisc> {
        Box::new(Fred::new(self, link, rng))
    }
}

/// The parameters in effect, with the paper's defaults filled in; queue quantities in packets or bytes.
#[derive(Clone, Copy, Debug)]
struct Params {
    limit: Limit,
    /// One packet in queue units: 1, or MaximumPacketSize in byte mode (§7 multiplies constants by it).
    packet: f64,
    min_th: f64,
    max_th: f64,
    min_q: f64,
    max_p: f64,
    w_q: f64,
    bytes: bool,
    two_packet_buffer: bool,
}

impl Params {
    /// RED's drop curve (§4.5 computes p_b as RED does).
    fn curve(&self) -> DropCurve {
        DropCurve {
            min_th: self.min_th,
            max_th: self.max_th,
            max_p: self.max_p,
            gentle: false,
        }
    }
}

/// What FRED keeps per active flow besides its `qlen`.
#[derive(Clone, Copy, Debug, Default)]
struct FredFlow {
    /// Times the flow tried to exceed its share (§4.3), while it has packets buffered.
    strikes: u32,
}

/// What FRED counts beyond the engine's drop table.
#[derive(Default)]
struct Stats {
    /// `per_flow_limit` drops by the §4.3 non-adaptive rule, each a strike (the rest are §6's two-packet rule).
    strike_drops: u64,
}

pub struct Fred {
    params: Params,
    fifo: Fifo,
    /// Per-active-flow `qlen` and strikes.
    flows: ActiveFlows<FredFlow>,
    /// RED's `avg`, sampled on arrival and departure, with idle decay in `mean_pktsize` slots (§4.4).
    average: RedAverage,
    avgcq: f64,
    /// Packets since the last drop (−1 below min_th, as RED).
    count: f64,
    rng: Rng,
    stats: Stats,
}

impl Fred {
    pub fn new(config: &FredConfig, link: &LinkInfo, rng: Rng) -> Self {
        let params = config.params();
        Fred {
            params,
            fifo: Fifo::default(),
            flows: ActiveFlows::default(),
            average: RedAverage::new(params.w_q, config.mean_pktsize.0, link.rate_bps, IdleRule::Decay),
            avgcq: params.packet,
            count: -1.0,
            rng,
            stats: Stats::default(),
        }
    }

    fn units(&self, size: u32) -> u64 {
        if self.params.bytes {
            size as u64
        } else {
            1
        }
    }

    fn queue(&self, backlog: Backlog) -> f64 {
        if self.params.bytes {
            backlog.bytes as f64
        } else {
            backlog.packets as f64
        }
    }

    /// avgcq = avg / Nactive (avg when no flow is active), at least one packet.
    fn refresh_avgcq(&mut self) {
        let active = self.flows.active().max(1) as f64;
        self.avgcq = (self.average.value() / active).max(self.params.packet);
    }

    /// RED's p_a from avg (§4.5), with p_b scaled by PacketSize/MaximumPacketSize in byte mode (§7).
    fn drop_probability(&self, size: u32) -> f64 {
        let mut p_b = match self.params.curve().region(self.average.value()) {
            Region::Below => return 0.0,
            Region::Early(p_b) => p_b,
            Region::Forced => return 1.0,
        };
        if self.params.bytes {
            p_b *= size as f64 / self.params.packet;
        }
        uniformized(p_b, self.count, false)
    }

    /// The §4.5 decision for an arriving packet of flow `key`: `Some(reason)` drops it.
    fn decide(&mut self, key: FlowKey, size: u32) -> Option<DropReason> {
        let params = self.params;
        let flow = self.flows.get(key);
        let (qlen, strikes) = (flow.qlen as f64, flow.state.strikes);
        let region = params.curve().region(self.average.value());
        let congested = region == Region::Forced;
        // Block A (deleted by §6): above max_th a flow may hold only 2 packets.
        let max_q = if congested && !params.two_packet_buffer {
            2.0 * params.packet
        } else {
            params.min_th
        };
        // Line B (deleted by §6): above max_th, more than twice the average per-flow queue.
        let line_b = !params.two_packet_buffer && congested && qlen > 2.0 * self.avgcq;
        // §4.3 non-adaptive flows: over max_q, or struck before and over the average flow.
        if qlen >= max_q || line_b || (qlen >= self.avgcq && strikes > 1) {
            // Each condition needs qlen > 0 (max_q and avgcq are positive): the flow has state.
            if let Some(flow) = self.flows.get_mut(key) {
                flow.state.strikes += 1;
            }
            self.stats.strike_drops += 1;
            return Some(DropReason::PerFlowLimit);
        }
        match region {
            Region::Below => {
                // No drop mode.
                self.count = -1.0;
                None
            }
            Region::Early(_) => {
                // Random drop mode, only for robust flows (§4.2).
                self.count += 1.0;
                if qlen >= params.min_q.max(self.avgcq) && self.rng.gen::<f64>() < self.drop_probability(size) {
                    self.count = 0.0;
                    return Some(DropReason::Early);
                }
                None
            }
            // Block C: drop-tail mode; §6 replaces it by "at most two packets per flow".
            Region::Forced if params.two_packet_buffer => {
                if qlen >= 2.0 * params.packet {
                    self.count = 0.0;
                    return Some(DropReason::PerFlowLimit);
                }
                None
            }
            Region::Forced => {
                self.count = 0.0;
                Some(DropReason::Forced)
            }
        }
    }
}

impl QueueDisc for Fred {
    fn enqueue(&mut self, id: PacketId, ctx: &mut QdiscCtx) -> Verdict {
        let packet = &ctx.packets[id];
        let (key, size) = (flow_key(packet), packet.size);
        // §4.4: an arrival at an empty queue brings the average up to date (idle decay) before
        // deciding, even if the packet is then dropped; any other arrival is sampled once accepted.
        // (§4.5 samples an accepted arrival at an empty queue twice; the second decays over zero time.)
        let queued = ctx.backlog();
        let q = self.queue(queued);
        let empty = q == 0.0;
        if empty {
            self.average.on_arrival(q, ctx.now);
            self.refresh_avgcq();
        }
        let reason = match self.decide(key, size) {
            None if !self.params.limit.admits(queued.packets, queued.bytes, size) => Some(DropReason::Overflow),
            decision => decision,
        };
        if let Some(reason) = reason {
            if reason == DropReason::Overflow {
                // A drop restarts count (module header), as in RED.
                self.count = self.count.min(0.0);
            }
            if empty {
                // The queue stays empty, idle from now on: §4.5's "q_time = time", which "original RED missed".
                self.average.on_idle(ctx.now);
            }
            return Verdict::Dropped(reason);
        }
        if !empty {
            self.average.on_arrival(q, ctx.now);
        }
        self.flows.add(key, self.units(size));
        self.refresh_avgcq();
        self.fifo.push(id);
        Verdict::Enqueued
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        let id = self.fifo.pop(ctx.packets)?;
        let packet = &ctx.packets[id];
        let (key, units) = (flow_key(packet), self.units(packet.size));
        // §4.4: departures sample the queue too, the one they leave behind.
        let q = self.queue(ctx.backlog().without(packet.size));
        self.average.on_departure(q, ctx.now);
        if q == 0.0 {
            self.average.on_idle(ctx.now); // §4.5: "if q == 0 && packet departed: q_time = time"
        }
        self.refresh_avgcq();
        self.flows.remove(key, units);
        Some(id)
    }

    fn gauges(&self) -> Gauges {
        Gauges {
            average: Some(self.average.value()),
            ..Gauges::default()
        }
    }

    fn set_link_rate(&mut self, rate_bps: f64) {
        self.average.set_link_rate(rate_bps);
    }

    fn counters(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("active_flows", self.flows.active() as f64),
            ("peak_active_flows", self.flows.peak() as f64),
            ("avgcq", self.avgcq),
            ("strike_drops", self.stats.strike_drops as f64),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Packet;
    use crate::qdisc::testing::{link, QdiscHarness, MS};
    use crate::rng::stream;
    use crate::time::from_secs;

    /// 10 Mb/s: a 1000-byte packet takes 0.8 ms.
    const LINK: LinkInfo = link(10e6);

    /// A FRED queue driven by hand: arrivals and departures at chosen times.
    fn fred(cfg: FredConfig) -> QdiscHarness<Fred> {
        cfg.validate("q").expect("valid test config");
        QdiscHarness::new(Box::new(Fred::new(&cfg, &LINK, stream(1, "fred-test"))))
    }

    impl QdiscHarness<Fred> {
        /// The flow's `qlen` and strikes.
        fn flow(&self, flow: u32) -> (u64, u32) {
            let entry = self.q.flows.get(flow_key(&Packet {
                flow,
                ..Default::default()
            }));
            (entry.qlen, entry.state.strikes)
        }

        /// Puts the average at `avg`, as if the queue had been at that level for a while.
        fn set_average(&mut self, avg: f64) {
            self.q.average.set_value(avg);
            self.q.refresh_avgcq();
        }
    }

    /// Thresholds 8/16 on 64 packets; w_q so small that an average set by hand stays put.
    fn rules(max_p: f64) -> FredConfig {
        FredConfig {
            limit: Some(64),
            min_th: Some(8.0),
            max_th: Some(16.0),
            min_q: Some(2.0),
            max_p,
            w_q: 1e-9,
            ..Default::default()
        }
    }

    use DropReason::{Early, Forced, Overflow, PerFlowLimit};
    use Verdict::{Dropped, Enqueued};

    #[test]
    fn flows_below_min_q_are_accepted_even_when_a_drop_is_certain() {
        let mut h = fred(rules(1.0));
        for flow in [1, 1, 1, 1, 1, 1, 1, 2, 3, 4, 5, 6] {
            assert_eq!(h.arrive(0, flow, 1000), Enqueued);
        }
        // Congested: avg 12 between min_th and max_th, p_b = 1·(12−8)/(16−8) = 0.5; avgcq = 12/6 = 2.
        h.set_average(12.0);
        assert_eq!(h.q.avgcq, 2.0);
        assert_eq!(h.arrive(0, 7, 1000), Enqueued); // new flow; count 0
        assert_eq!(h.arrive(0, 2, 1000), Enqueued); // 1 < min_q; count 1
        assert_eq!(h.arrive(0, 7, 1000), Enqueued); // 1 < min_q; count 2, so p_a = 0.5/(1−2·0.5) is certain
        assert_eq!(h.arrive(0, 1, 1000), Dropped(Early)); // robust (7 ≥ 2): dropped, count reset to 0
                                                          // A flow *at* min_q is robust: count 1 gives p_a = 0.5/(1−0.5) = 1.
        assert_eq!(h.flow(2).0, 2);
        assert_eq!(h.arrive(0, 2, 1000), Dropped(Early));
        assert_eq!(h.q.stats.strike_drops, 0);
    }

    #[test]
    fn random_drop_spares_flows_below_the_average_per_flow_queue() {
        let mut h = fred(rules(1.0));
        for flow in [1, 1, 1, 1, 1, 1, 1, 2, 2, 2] {
            assert_eq!(h.arrive(0, flow, 1000), Enqueued);
        }
        // Two active flows: avgcq = 12/2 = 6 > min_q, so robust means qlen ≥ 6 (§4.2).
        h.set_average(12.0);
        assert_eq!(h.arrive(0, 2, 1000), Enqueued); // 3 < 6, count 0
        assert_eq!(h.arrive(0, 2, 1000), Enqueued); // 4 < 6, count 1
        assert_eq!(h.arrive(0, 2, 1000), Enqueued); // 5 < 6, count 2: a robust flow now drops surely
        assert_eq!(h.arrive(0, 1, 1000), Dropped(Early));
        assert_eq!(h.arrive(0, 2, 1000), Dropped(Early)); // 6 ≥ avgcq: robust now
        assert_eq!((h.flow(1).0, h.flow(2).0), (7, 6));
    }

    #[test]
    fn a_flow_exceeding_max_q_gains_a_strike_and_is_dropped() {
        let mut h = fred(rules(0.0));
        // Below max_th, max_q = min_th = 8.
        for _ in 0..8 {
            assert_eq!(h.arrive(0, 1, 1000), Enqueued);
        }
        assert_eq!(h.arrive(0, 1, 1000), Dropped(PerFlowLimit));
        assert_eq!(h.flow(1), (8, 1));
        assert_eq!(h.arrive(0, 1, 1000), Dropped(PerFlowLimit));
        assert_eq!(h.flow(1), (8, 2));
        assert_eq!(h.arrive(0, 2, 1000), Enqueued);
        assert_eq!((h.q.stats.strike_drops, h.drops(PerFlowLimit)), (2, 2));
    }

    #[test]
    fn a_struck_flow_is_held_to_the_average_per_flow_queue() {
        let mut h = fred(rules(0.0));
        for _ in 0..10 {
            h.arrive(0, 1, 1000); // 8 accepted, 2 struck
        }
        for flow in [2, 2, 2, 3, 3, 3] {
            assert_eq!(h.arrive(0, flow, 1000), Enqueued);
        }
        for k in 1..=6 {
            assert_eq!(h.depart_flow(k * MS), 1);
        }
        assert_eq!(h.flow(1), (2, 2));
        // avg 9 with 3 active flows: avgcq = 3.
        h.set_average(9.0);
        assert_eq!(h.arrive(7 * MS, 1, 1000), Enqueued); // 2 < avgcq
        assert_eq!(h.arrive(7 * MS, 1, 1000), Dropped(PerFlowLimit)); // 3 ≥ avgcq with 2 strikes
        assert_eq!(h.flow(1), (3, 3));
        // The same queue length is fine for a flow without strikes.
        assert_eq!(h.arrive(7 * MS, 2, 1000), Enqueued);
        assert_eq!(h.flow(2), (4, 0));
    }

    #[test]
    fn above_max_th_flows_hold_two_packets_and_the_rest_is_tail_dropped() {
        let mut h = fred(rules(0.0));
        for flow in [1, 1, 2] {
            h.arrive(0, flow, 1000);
        }
        h.set_average(16.0);
        // Block A: max_q = 2 — a non-adaptive drop, with a strike.
        assert_eq!(h.arrive(0, 1, 1000), Dropped(PerFlowLimit));
        assert_eq!(h.flow(1), (2, 1));
        // Block C: drop-tail mode for everything else, no strike.
        assert_eq!(h.arrive(0, 2, 1000), Dropped(Forced));
        assert_eq!(h.arrive(0, 9, 1000), Dropped(Forced));
        assert_eq!(h.flow(2), (1, 0));
        assert_eq!(h.q.count, 0.0);
    }

    #[test]
    fn two_packet_buffer_admits_each_flows_first_two_packets_above_max_th() {
        // §6 / Fig. 8 parameters with the buffer doubled to 32.
        let config = |two_packet_buffer| FredConfig {
            limit: Some(32),
            min_th: Some(4.0),
            max_th: Some(8.0),
            w_q: 1e-9,
            two_packet_buffer,
            ..Default::default()
        };
        let mut h = fred(config(true));
        for flow in 1..=15 {
            assert_eq!(h.arrive(0, flow, 1000), Enqueued);
            assert_eq!(h.arrive(0, flow, 1000), Enqueued);
        }
        h.set_average(10.0);
        assert_eq!(h.arrive(0, 16, 1000), Enqueued);
        assert_eq!(h.arrive(0, 16, 1000), Enqueued);
        assert_eq!(h.arrive(0, 16, 1000), Dropped(PerFlowLimit)); // a third packet
        assert_eq!(h.arrive(0, 1, 1000), Dropped(PerFlowLimit));
        assert_eq!(h.arrive(0, 17, 1000), Dropped(Overflow)); // 32 packets: the buffer is full
        assert_eq!(h.q.stats.strike_drops, 0);

        // Basic FRED in the same state tail-drops the newcomer.
        let mut h = fred(config(false));
        for flow in 1..=15 {
            h.arrive(0, flow, 1000);
            h.arrive(0, flow, 1000);
        }
        h.set_average(10.0);
        assert_eq!(h.arrive(0, 16, 1000), Dropped(Forced));
    }

    #[test]
    fn the_average_tracks_a_draining_queue_through_departures() {
        // §4.4's example: avg = q = 500, then 250 departures before the next arrival.
        let mut h = fred(FredConfig {
            limit: Some(1000),
            min_th: Some(600.0),
            max_th: Some(1200.0),
            ..Default::default()
        });
        for i in 0..500 {
            assert_eq!(h.arrive(0, i % 50, 1000), Enqueued);
        }
        h.set_average(500.0);
        for k in 1..=250 {
            h.depart_flow(k * from_secs(0.0008));
        }
        // Computed by hand (w_q = 0.002): 250 samples at q = 499, 498, …, 250 take
        // avg from 500 to 446.4927; the next arrival samples q = 250: 446.0997.
        // RED, sampling on arrival only, would be at 0.998·500 + 0.002·250 = 499.5.
        assert!((h.q.average.value() - 446.4927).abs() < 1e-4, "{}", h.q.average.value());
        h.arrive(250 * from_secs(0.0008) + 1, 0, 1000);
        assert!((h.q.average.value() - 446.0997).abs() < 1e-4, "{}", h.q.average.value());
    }

    #[test]
    fn idle_time_decays_the_average_and_one_instant_is_sampled_once() {
        let mut h = fred(FredConfig {
            w_q: 0.5,
            mean_pktsize: Bytes(1000),
            ..Default::default()
        });
        // Arrivals sample q before the packet: 0, 1, 2 → avg 0, 0.5, 1.25.
        for _ in 0..3 {
            h.arrive(0, 1, 1000);
        }
        assert_eq!(h.q.average.value(), 1.25);
        // Departures sample q after it: 2, 1, 0 → 1.625, 1.3125, 0.65625; idle from 3 ms.
        for k in 1..=3 {
            h.depart_flow(k * MS);
        }
        assert_eq!(h.q.average.value(), 0.65625);
        assert_eq!(h.q.flows.active(), 0);
        // 8 ms idle = 10 slots of 0.8 ms (1000 bytes at 10 Mb/s): avg · 0.5^10.
        h.arrive(11 * MS, 1, 1000);
        assert!(
            (h.q.average.value() - 0.65625 / 1024.0).abs() < 1e-12,
            "{}",
            h.q.average.value()
        );
        // The departure at the arrival's instant would sample the same queue again: skipped.
        let before = h.q.average.value();
        h.depart_flow(11 * MS);
        assert_eq!(h.q.average.value(), before);
        assert_eq!(h.q.average.idle_since(), Some(11 * MS));
    }

    #[test]
    fn a_dropped_arrival_moves_the_average_only_at_an_empty_queue() {
        let mut h = fred(FredConfig {
            min_th: Some(8.0),
            max_th: Some(16.0),
            w_q: 0.5,
            mean_pktsize: Bytes(1000),
            ..Default::default()
        });
        for _ in 0..8 {
            h.arrive(0, 1, 1000);
        }
        let avg = h.q.average.value();
        assert_eq!(h.arrive(MS, 1, 1000), Dropped(PerFlowLimit));
        assert_eq!(h.q.average.value(), avg);
        for k in 1..=8 {
            h.depart_flow(k * MS);
        }
        // Idle since 8 ms; 4 slots later the decay brings 320 down to 20 ≥ max_th: tail drop, after the decay.
        h.set_average(320.0);
        assert_eq!(h.arrive(8 * MS + 4 * from_secs(0.0008), 2, 1000), Dropped(Forced));
        assert!((h.q.average.value() - 20.0).abs() < 1e-9, "{}", h.q.average.value());
    }

    #[test]
    fn a_departure_refreshes_avgcq_before_the_flow_leaves() {
        // §4.5 "for each departing packet: calculate average queue length; if (qlen_i == 0)
        // Nactive--": the flow that empties still counts in avgcq until the next event.
        let mut h = fred(rules(0.0));
        for flow in [1, 2, 2, 2] {
            assert_eq!(h.arrive(0, flow, 1000), Enqueued);
        }
        h.set_average(12.0);
        assert_eq!(h.q.avgcq, 6.0);
        assert_eq!(h.depart_flow(MS), 1);
        assert_eq!(h.q.flows.active(), 1);
        // avg/2, not avg/1: a bug that removed the flow first would give 12.
        assert!(
            (h.q.avgcq - h.q.average.value() / 2.0).abs() < 1e-12,
            "avgcq {}",
            h.q.avgcq
        );
        assert!((h.q.avgcq - 6.0).abs() < 1e-6);
        // The next arrival refreshes it with one active flow... and itself: 2 flows again.
        assert_eq!(h.arrive(2 * MS, 3, 1000), Enqueued);
        assert!((h.q.avgcq - h.q.average.value() / 2.0).abs() < 1e-12);
        // A departure that leaves the flow buffered keeps Nactive: avg/2.
        assert_eq!(h.depart_flow(3 * MS), 2);
        assert_eq!(h.q.flows.active(), 2);
    }

    #[test]
    fn count_counts_early_region_arrivals_and_restarts_at_queue_drops_not_at_strikes() {
        // max_p = 0: the early region never drops at random, so count moves by the rules alone.
        let mut h = fred(FredConfig {
            limit: Some(12),
            ..rules(0.0)
        });
        for flow in [1, 1, 1, 1, 1, 1, 1, 1, 2, 3] {
            assert_eq!(h.arrive(0, flow, 1000), Enqueued);
        }
        assert_eq!(h.q.count, -1.0); // avg < min_th
        h.set_average(12.0); // early region
        assert_eq!(h.arrive(0, 4, 1000), Enqueued);
        assert_eq!(h.arrive(0, 5, 1000), Enqueued); // 12 packets: the buffer is full
        assert_eq!(h.q.count, 1.0); // incremented for every early-region arrival
                                    // A strike drop returns before count (§4.5): still 1.
        assert_eq!(h.arrive(0, 1, 1000), Dropped(PerFlowLimit));
        assert_eq!(h.q.count, 1.0);
        // An arrival the rules accept but the buffer cannot hold: counted, then restarted by
        // the drop (as RED; a bug that ignored overflows leaves 2).
        assert_eq!(h.arrive(0, 6, 1000), Dropped(Overflow));
        assert_eq!(h.q.count, 0.0);
        // Below min_th an overflow keeps count at −1 (a bug resetting to 0 would not).
        h.set_average(2.0);
        assert_eq!(h.arrive(0, 6, 1000), Dropped(Overflow));
        assert_eq!(h.q.count, -1.0);
    }

    #[test]
    fn byte_mode_counts_bytes() {
        let config = FredConfig {
            bytes: true,
            limit_bytes: Some(Bytes(64_000)),
            min_th: Some(16_000.0),
            max_th: Some(32_000.0),
            max_p: 0.0,
            w_q: 1e-9,
            ..Default::default()
        };
        // min_q defaults to 2 MaximumPacketSize (a small buffer: 64 000 ≤ 64·1500 bytes).
        assert_eq!(config.params().min_q, 3000.0);
        let mut h = fred(config);
        // max_q = min_th = 16 000 bytes: 32 packets of 500 bytes, or 16 of 1000.
        for _ in 0..32 {
            assert_eq!(h.arrive(0, 1, 500), Enqueued);
        }
        assert_eq!(h.arrive(0, 1, 500), Dropped(PerFlowLimit));
        for _ in 0..16 {
            assert_eq!(h.arrive(0, 2, 1000), Enqueued);
        }
        assert_eq!(h.arrive(0, 2, 1000), Dropped(PerFlowLimit));
        assert_eq!((h.flow(1).0, h.flow(2).0), (16_000, 16_000));
        assert_eq!((h.backlog.packets, h.backlog.bytes), (48, 32_000));
        // §7: p_b scales with PacketSize / MaximumPacketSize.
        h.q.params.max_p = 0.02;
        h.q.count = 0.0;
        h.set_average(24_000.0);
        assert!((h.q.drop_probability(1500) - 0.01).abs() < 1e-12);
        assert!((h.q.drop_probability(750) - 0.005).abs() < 1e-12);
    }

    #[test]
    fn defaults_follow_the_paper_and_errors_name_the_field() {
        let params = FredConfig::default().params();
        assert_eq!(
            (params.min_th, params.max_th, params.min_q, params.max_p, params.w_q),
            (16.0, 32.0, 2.0, 0.02, 0.002)
        );
        let large = FredConfig {
            limit: Some(200),
            ..Default::default()
        }
        .params();
        assert_eq!((large.min_th, large.max_th, large.min_q), (50.0, 100.0, 4.0));
        let err = |cfg: FredConfig| cfg.validate("q").unwrap_err().to_string();
        assert_eq!(
            err(FredConfig {
                min_q: Some(0.0),
                ..Default::default()
            }),
            "q.min_q: must be >= 1, got 0"
        );
        assert_eq!(
            err(FredConfig {
                min_th: Some(8.0),
                max_th: Some(8.0),
                ..Default::default()
            }),
            "q.max_th: must be > min_th (8), got 8"
        );
        assert_eq!(
            err(FredConfig {
                max_p: 2.0,
                ..Default::default()
            }),
            "q.max_p: must be in [0, 1], got 2"
        );
        assert_eq!(
            err(FredConfig {
                w_q: 0.0,
                ..Default::default()
            }),
            "q.w_q: must be > 0, got 0"
        );
        assert_eq!(
            err(FredConfig {
                bytes: true,
                ..Default::default()
            }),
            "q.limit_bytes: required when bytes = true"
        );
        assert_eq!(
            err(FredConfig {
                limit: Some(0),
                ..Default::default()
            }),
            "q.limit: must be > 0, got 0"
        );
    }
}
