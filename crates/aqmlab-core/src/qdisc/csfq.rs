//! Core-Stateless Fair Queueing (Stoica, Shenker, Zhang, SIGCOMM 1998).
//!
//! An island of routers approximates fair queueing with FIFO queues. The
//! first CSFQ router on a flow's path (its *edge*) estimates the flow's rate
//! and writes it into the packet's `label`; every router (edge or *core*)
//! estimates the link's fair share `alpha` from aggregate rates only, drops an
//! arriving packet with probability `max(0, 1 - alpha/label)` (Eq. 2) and
//! rewrites the label of a forwarded packet to `min(label, alpha)` (§2.2.3).
//!
//! The code mirrors that split:
//! - [`CsfqEdge`]: the per-flow state of an edge router, a `Vec` of
//!   [`RateEstimator`]s indexed by flow id (Eq. 3).
//! - [`CsfqCore`]: the fair-share estimator and drop rule (Eqs. 2, 5, 6 and
//!   Figure 2). It is `Copy` and a few words long, so it cannot hold a per-flow
//!   collection: the unit test `core_keeps_no_per_flow_state` checks both.
//! - [`Csfq`]: the qdisc (`type = "csfq"`), a FIFO that runs the edge
//!   estimator on packets that arrive unlabelled (`role = "auto"`: this router
//!   is the first CSFQ router the packet meets, which is the paper's definition
//!   of an edge, §3) and the core on every packet. `role = "core"` never labels
//!   (an unlabelled packet then has label 0 and is never dropped early);
//!   `role = "edge"` re-estimates every packet, as at the entry of a new island
//!   (§2.6). A flow is a flow id (one scenario flow), not a hash of addresses.
//!
//! Weighted CSFQ (§2.3): the edge writes `r/w` with `w = packet.weight`, so
//! labels and `alpha` are normalised rates and Eq. 2 becomes
//! `max(0, 1 - alpha·w/r)` unchanged in code.
//!
//! Buffer rules of §2.2.2. The clean copy of the text breaks off at "we use a
//! simple heuristic: every"; the rest survives only in the column-interleaved
//! copy, with words of the other column mixed in:
//! - "every time the buffer overflows, α is decreased by a small fixed
//!   percentage (taken to be 1% in our simulations) ... α does not decrease by
//!   more than 25%" between two window updates: `overflow_decrease`,
//!   `max_decrease`.
//! - "If the link becomes uncongested by the test in Figure 2, then we assume
//!   that it remains ingested \[a\]s long as the buffer occupancy is less than
//!   some predefined threshold ... a threshold that is half of the total
//!   buffer capacity". We read "ingested" as "uncongested": the sentence is introduced by "there is
//!   little reason to consider a link congested if the buffer is almost
//!   empty", and "remains congested while the buffer is nearly empty" would
//!   contradict it. Rule implemented: while the link is uncongested, `A >= C`
//!   switches it to congested only once the occupancy reaches
//!   `buffer_threshold` (0.5) of the buffer; below that the packet is handled
//!   by the uncongested branch of Figure 2.
//!
//! Choices the paper leaves open, documented where they are made: the first
//! packet of an estimator (no inter-arrival time yet) is treated as `T -> 0`
//! with a zero previous rate, i.e. `l/K`; before the first window update the
//! fair share is unknown (`alpha = ∞`: no early drops, labels unchanged), and
//! the first congested update starts from the largest label of its window.

use super::{DropReason, Fifo, Limit, LinkInfo, QdiscConfig, QdiscCtx, QueueDisc, Verdict};
use crate::error::ScenarioError;
use crate::packet::{FlowId, PacketId};
use crate::rng::Rng;
use crate::time::{from_secs, to_secs, Time};
use crate::units::{Bytes, Seconds};
use crate::validate::{require_in, require_positive};
use rand::Rng as _;
use serde::Deserialize;

/// Which part of CSFQ this router runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CsfqRole {
    /// Label packets that arrive unlabelled (first CSFQ router on their path), core for all.
    #[default]
    Auto,
    /// Re-estimate and relabel every packet (entry of a new island, §2.6), core for all.
    Edge,
    /// Core only: keep no per-flow state, never write a label.
    Core,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CsfqConfig {
    /// Buffer in packets and/or bytes; with neither, 64 KB (§3).
    pub limit: Option<u64>,
    pub limit_bytes: Option<Bytes>,
    /// Default `auto`.
    pub role: CsfqRole,
    /// Flow rate averaging constant K (Eq. 3); 100 ms (§3).
    pub k: Seconds,
    /// Aggregate rate averaging constant K_alpha (Eq. 5); 100 ms (§3).
    pub k_alpha: Seconds,
    /// Congestion decision window K_c (§2.2.2); 100 ms (§3).
    pub k_c: Seconds,
    /// Occupancy (fraction of the buffer) below which an uncongested link stays uncongested (§2.2.2: half).
    pub buffer_threshold: f64,
    /// Fraction by which alpha drops on each buffer overflow (§2.2.2: 1 %).
    pub overflow_decrease: f64,
    /// Largest total decrease of alpha by overflows between two window updates (§2.2.2: 25 %).
    pub max_decrease: f64,
    /// Rewrite forwarded labels to min(label, alpha) (§2.2.3); default on, off only for ablation.
    pub relabel: bool,
}

impl Default for CsfqConfig {
    fn default() -> Self {
        CsfqConfig {
            limit: None,
            limit_bytes: None,
            role: CsfqRole::Auto,
            k: Seconds(0.1),
            k_alpha: Seconds(0.1),
            k_c: Seconds(0.1),
            buffer_threshold: 0.5,
            overflow_decrease: 0.01,
            max_decrease: 0.25,
            relabel: true,
        }
    }
}

impl CsfqConfig {
    /// "a buffer of 64 KB" (§3).
    pub const DEFAULT_LIMIT_BYTES: u64 = 64_000;

    fn limit(&self) -> Limit {
        Limit::configured(
            self.limit,
            self.limit_bytes.map(|b| b.0),
            Limit::new(None, Some(Self::DEFAULT_LIMIT_BYTES)),
        )
    }
}

impl QdiscConfig for CsfqConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        self.limit().validate(path)?;
        for (field, value) in [("k", self.k), ("k_alpha", self.k_alpha), ("k_c", self.k_c)] {
            require_positive(&format!("{path}.{field}"), value)?;
        }
        require_in(&format!("{path}.buffer_threshold"), self.buffer_threshold, 0.0, 1.0)?;
        require_in(&format!("{path}.overflow_decrease"), self.overflow_decrease, 0.0, 1.0)?;
        require_in(&format!("{path}.max_decrease"), self.max_decrease, 0.0, 1.0)
    }

    fn build(&self, link: &LinkInfo, rng: Rng) -> Box<dyn QueueDisc> {
        Box::new(Csfq::new(self, link, rng))
    }
}

/// Exponential averaging of a rate with weight `e^{-T/K}` (Eq. 3 per flow, Eq. 5 for the aggregate):
/// `r_new = (1 - e^{-T/K})·l/T + e^{-T/K}·r_old`.
#[derive(Clone, Copy, Debug, Default)]
pub struct RateEstimator {
    rate_bps: f64,
    last_arrival: Option<Time>,
}

impl RateEstimator {
    /// Accounts a packet of `size` bytes arriving at `now`; returns the new estimate in bits/s.
    pub fn update(&mut self, now: Time, size: u32, k_secs: f64) -> f64 {
        let bits = size as f64 * 8.0;
        // First packet: T -> 0 with r_old = 0 (the paper does not say); (1 - e^{-x})/x -> 1.
        let t = self.last_arrival.map_or(0.0, |last| to_secs(now.saturating_sub(last)));
        let x = t / k_secs;
        let gain = if x > 0.0 { -(-x).exp_m1() / x } else { 1.0 };
        // (1 - e^{-T/K})·l/T written as gain·l/K, exact also for T = 0 (simultaneous arrivals).
        self.rate_bps = gain * bits / k_secs + (-x).exp() * self.rate_bps;
        self.last_arrival = Some(now);
        self.rate_bps
    }

    pub fn rate_bps(&self) -> f64 {
        self.rate_bps
    }
}

/// Edge router state: one rate estimate per flow (§2.2.1), indexed by flow id.
pub struct CsfqEdge {
    k_secs: f64,
    flows: Vec<RateEstimator>,
}

impl CsfqEdge {
    pub fn new(k_secs: f64) -> Self {
        CsfqEdge {
            k_secs,
            flows: Vec::new(),
        }
    }

    /// Updates flow `flow`'s estimate with an arriving packet and returns its label `r/w` (§2.3).
    pub fn label(&mut self, flow: FlowId, now: Time, size: u32, weight: f64) -> f64 {
        let i = flow as usize;
        if i >= self.flows.len() {
            self.flows.resize(i + 1, RateEstimator::default());
        }
        self.flows[i].update(now, size, self.k_secs) / weight
    }

    /// Flows this edge has seen (its per-flow state).
    pub fn flows(&self) -> usize {
        self.flows.iter().filter(|f| f.last_arrival.is_some()).count()
    }
}

/// The core router's parameters (§2.2.2), resolved once.
#[derive(Clone, Copy, Debug)]
struct CoreParams {
    capacity_bps: f64,
    k_alpha: f64,
    k_c: Time,
    buffer_threshold: f64,
    overflow_decrease: f64,
    max_decrease: f64,
}

/// The core router's algorithm (§2.2.2, Figure 2): aggregate state only.
#[derive(Clone, Copy, Debug)]
pub struct CsfqCore {
    params: CoreParams,
    /// Â: aggregate arrival rate (Eq. 5).
    arrival: RateEstimator,
    /// F̂: rate of packets the dropper accepted ("an analogous formula", §2.2.2).
    accepted: RateEstimator,
    /// Normalised fair share; ∞ until the first window update.
    alpha: f64,
    /// Alpha as set by the last window update: overflows cut at most `max_decrease` below it.
    alpha_at_update: f64,
    /// Largest label seen since the window started (`tmp_alpha` of Figure 2).
    max_label: f64,
    congested: bool,
    window_start: Time,
}

impl CsfqCore {
    /// The link's rate changed: C, against which the arrival rate is judged, is the new rate.
    pub fn set_link_rate(&mut self, rate_bps: f64) {
        self.params.capacity_bps = rate_bps;
    }

    pub fn new(config: &CsfqConfig, capacity_bps: f64) -> Self {
        CsfqCore {
            params: CoreParams {
                capacity_bps,
                k_alpha: config.k_alpha.0,
                k_c: from_secs(config.k_c.0),
                buffer_threshold: config.buffer_threshold,
                overflow_decrease: config.overflow_decrease,
                max_decrease: config.max_decrease,
            },
            arrival: RateEstimator::default(),
            accepted: RateEstimator::default(),
            alpha: f64::INFINITY,
            alpha_at_update: f64::INFINITY,
            max_label: 0.0,
            congested: false,
            window_start: 0,
        }
    }

    /// Current fair share estimate (bits/s, normalised by weight); ∞ when none yet.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// Eq. 2: `max(0, 1 - alpha/label)`; an unlabelled packet (label 0) is never dropped.
    pub fn drop_probability(&self, label: f64) -> f64 {
        if label > self.alpha {
            1.0 - self.alpha / label
        } else {
            0.0
        }
    }

    /// `estimate_alpha(p, dropped)` of Figure 2, for a packet of `size` bytes and `label`
    /// arriving at `now` while the buffer is `occupancy` full (fraction).
    pub fn on_arrival(&mut self, now: Time, size: u32, label: f64, dropped: bool, occupancy: f64) {
        let params = &self.params;
        let a = self.arrival.update(now, size, params.k_alpha);
        let f = if dropped {
            self.accepted.rate_bps()
        } else {
            self.accepted.update(now, size, params.k_alpha)
        };
        // §2.2.2: an uncongested link stays uncongested while the buffer is below the threshold.
        let congested_now = a >= params.capacity_bps && (self.congested || occupancy >= params.buffer_threshold);
        let window_over = now > self.window_start + params.k_c;
        if congested_now {
            if !self.congested {
                self.congested = true;
                self.window_start = now;
            } else if window_over {
                // Eq. 6: alpha_new = alpha_old · C / F̂; the first update starts from the largest label.
                let old = if self.alpha.is_finite() {
                    self.alpha
                } else {
                    self.max_label
                };
                if old > 0.0 && f > 0.0 {
                    self.set_alpha(old * self.params.capacity_bps / f);
                }
                self.window_start = now;
                self.max_label = 0.0;
            }
            // Tracked while congested too, only to seed the first Eq. 6 update.
            self.max_label = self.max_label.max(label);
        } else if self.congested {
            self.congested = false;
            self.window_start = now;
            self.max_label = 0.0;
        } else if !window_over {
            self.max_label = self.max_label.max(label);
        } else {
            // Uncongested for K_c: alpha = largest label seen (∞ when no labelled packet came).
            self.set_alpha(if self.max_label > 0.0 {
                self.max_label
            } else {
                f64::INFINITY
            });
            self.window_start = now;
            self.max_label = 0.0;
        }
    }

    /// §2.2.2: each overflow cuts alpha by `overflow_decrease`, at most `max_decrease` in total between updates.
    pub fn on_overflow(&mut self) {
        let floor = self.alpha_at_update * (1.0 - self.params.max_decrease);
        self.alpha = (self.alpha * (1.0 - self.params.overflow_decrease)).max(floor);
    }

    fn set_alpha(&mut self, alpha: f64) {
        self.alpha = alpha;
        self.alpha_at_update = alpha;
    }
}

/// The qdisc's own parameters; the core keeps its own ([`CsfqCore`]), the edge its K.
#[derive(Clone, Copy, Debug)]
struct Params {
    role: CsfqRole,
    relabel: bool,
    limit: Limit,
}

/// The `csfq` qdisc: optional edge labelling, core dropping, FIFO service.
pub struct Csfq {
    params: Params,
    /// Per-flow rate estimates; `None` for `role = "core"`.
    edge: Option<CsfqEdge>,
    core: CsfqCore,
    fifo: Fifo,
    rng: Rng,
}

impl Csfq {
    pub fn new(config: &CsfqConfig, link: &LinkInfo, rng: Rng) -> Self {
        Csfq {
            params: Params {
                role: config.role,
                relabel: config.relabel,
                limit: config.limit(),
            },
            edge: (config.role != CsfqRole::Core).then(|| CsfqEdge::new(config.k.0)),
            core: CsfqCore::new(config, link.rate_bps),
            fifo: Fifo::default(),
            rng,
        }
    }
}

impl QueueDisc for Csfq {
    fn enqueue(&mut self, id: PacketId, ctx: &mut QdiscCtx) -> Verdict {
        let now = ctx.now;
        let packet = &mut ctx.packets[id];
        if let Some(edge) = &mut self.edge {
            if self.params.role == CsfqRole::Edge || packet.label == 0.0 {
                packet.label = edge.label(packet.flow, now, packet.size, packet.weight);
            }
        }
        let (size, label) = (packet.size, packet.label);
        let prob = self.core.drop_probability(label);
        // Figure 2: drop if prob > unifrand(0, 1).
        let dropped = prob > 0.0 && prob > self.rng.gen::<f64>();
        let queued = ctx.backlog();
        let occupancy = self.params.limit.occupancy(queued.packets, queued.bytes);
        // Figure 2 updates F before enqueue(p): a packet the dropper accepted counts even if the buffer overflows.
        self.core.on_arrival(now, size, label, dropped, occupancy);
        if dropped {
            return Verdict::Dropped(DropReason::Csfq);
        }
        if !self.params.limit.admits(queued.packets, queued.bytes, size) {
            self.core.on_overflow();
            return Verdict::Dropped(DropReason::Overflow);
        }
        if self.params.relabel {
            // §2.2.3: L_new = min(L_old, alpha); never raises a label (alpha = ∞ leaves it).
            ctx.packets[id].label = label.min(self.core.alpha());
        }
        self.fifo.push(id);
        Verdict::Enqueued
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        self.fifo.pop(ctx.packets)
    }

    fn set_link_rate(&mut self, rate_bps: f64) {
        self.core.set_link_rate(rate_bps);
    }

    fn counters(&self) -> Vec<(&'static str, f64)> {
        let mut out = vec![("edge_flows", self.edge.as_ref().map_or(0, CsfqEdge::flows) as f64)];
        if self.core.alpha().is_finite() {
            out.push(("alpha_bps", self.core.alpha()));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Packet;
    use crate::qdisc::testing::QdiscHarness;
    use crate::rng::stream;

    const MS: Time = 1_000_000;

    #[test]
    fn core_keeps_no_per_flow_state() {
        // Structural: a `Copy` type cannot own a heap collection (Vec, HashMap, Box, ...),
        // and a size bound rules out inline per-flow arrays: today 17 words (136 bytes).
        fn assert_copy<T: Copy>() {}
        assert_copy::<CsfqCore>();
        assert!(
            std::mem::size_of::<CsfqCore>() <= 20 * 8,
            "CsfqCore is {} bytes",
            std::mem::size_of::<CsfqCore>()
        );
        // Behavioural: an `auto` router fed packets of a thousand flows that an upstream edge
        // labelled keeps no state for them; only an unlabelled packet makes it an edge.
        // (A bug that re-estimated every packet, as `role = "edge"` does, gives 1000.)
        let link = LinkInfo {
            rate_bps: 10e6,
            delay: 0,
            measure_from: 0,
        };
        let mut h = QdiscHarness::new(Box::new(Csfq::new(&CsfqConfig::default(), &link, stream(1, "t"))));
        for flow in 0..1000 {
            let now = flow as Time * MS;
            let labelled = Packet {
                flow,
                size: 1000,
                weight: 1.0,
                label: 1e6,
                ..Default::default()
            };
            assert_eq!(h.offer(now, labelled).1.label, 1e6, "uncongested core leaves labels");
            h.depart(now);
        }
        assert_eq!(h.q.counters()[0], ("edge_flows", 0.0));
        h.arrive(1000 * MS, 7, 1000);
        assert_eq!(h.q.counters()[0], ("edge_flows", 1.0));
    }

    #[test]
    fn edge_estimate_converges_to_cbr_rate_within_2_percent_after_5k() {
        // 1 Mbps of 1000-byte packets, one every 8 ms; K = 100 ms.
        let k = 0.1;
        let mut e = RateEstimator::default();
        let gap = 8 * MS;
        let mut t = 0;
        while t <= 5 * 100 * MS {
            e.update(t, 1000, k);
            t += gap;
        }
        assert!((e.rate_bps() - 1e6).abs() / 1e6 < 0.02, "estimate {}", e.rate_bps());
        // Mixed sizes at the same byte rate (§2.7: e^{-T/K} makes the estimate size-insensitive).
        let mut e = RateEstimator::default();
        let mut t = 0;
        for i in 0.. {
            let size = if i % 2 == 0 { 500 } else { 1500 };
            e.update(t, size, k);
            t += size as Time * 8 * 1000; // 1 Mbps: 8 µs per byte
            if t > 5 * 100 * MS {
                break;
            }
        }
        // The estimate swings by about l/K around the mean; average over one period.
        let before = e.rate_bps();
        e.update(t, 500, k);
        let mean = (before + e.rate_bps()) / 2.0;
        assert!((mean - 1e6).abs() / 1e6 < 0.02, "estimate {mean}");
    }

    #[test]
    fn simultaneous_arrivals_add_l_over_k() {
        let mut e = RateEstimator::default();
        assert_eq!(e.update(5, 1000, 0.1), 8000.0 / 0.1);
        assert_eq!(e.update(5, 1000, 0.1), 2.0 * 8000.0 / 0.1);
    }

    fn core(k_c_ms: u64) -> CsfqCore {
        let cfg = CsfqConfig {
            k_c: Seconds(k_c_ms as f64 / 1e3),
            ..Default::default()
        };
        CsfqCore::new(&cfg, 10e6)
    }

    /// Feeds `n` identical flows at `rate` each (round robin, 1000-byte packets) through the
    /// core's Eq. 2 drop rule for `secs`; returns alpha at the end.
    fn drive(core: &mut CsfqCore, n: u32, rate: f64, secs: f64, rng: &mut Rng) -> f64 {
        let gap = from_secs(1000.0 * 8.0 / (rate * n as f64));
        let mut t = 0;
        let mut edge = CsfqEdge::new(0.1);
        while to_secs(t) < secs {
            for f in 0..n {
                let label = edge.label(f, t, 1000, 1.0);
                let dropped = core.drop_probability(label) > rng.gen::<f64>();
                core.on_arrival(t, 1000, label, dropped, 0.6);
                t += gap;
            }
        }
        core.alpha()
    }

    #[test]
    fn congested_core_converges_to_the_fair_share() {
        // csfq-eq6: N identical CBR flows above C/N -> alpha within 10 % of C/N after 10 K_c.
        let mut rng = stream(3, "t");
        for (n, rate) in [(4, 5e6), (10, 2e6), (32, 1e6)] {
            let mut c = core(100);
            let alpha = drive(&mut c, n, rate, 2.0, &mut rng);
            let fair = 10e6 / n as f64;
            assert!((alpha - fair).abs() / fair < 0.10, "n={n}: alpha {alpha} vs {fair}");
        }
    }

    #[test]
    fn uncongested_core_sets_alpha_to_the_largest_label() {
        let mut c = core(100);
        for i in 0..300u64 {
            // 1 Mbps aggregate: far below C; labels cycle through 1, 2, 3 Mbps.
            c.on_arrival(i * 8 * MS, 1000, 1e6 * (1 + i % 3) as f64, false, 0.0);
        }
        assert_eq!(c.alpha(), 3e6);
        assert_eq!(c.drop_probability(3e6), 0.0);
        assert!((c.drop_probability(6e6) - 0.5).abs() < 1e-12);
        assert_eq!(
            c.drop_probability(0.0),
            0.0,
            "unlabelled packets are never dropped early"
        );
    }

    #[test]
    fn overflow_cuts_alpha_by_1_percent_at_most_25_percent_per_update() {
        let mut c = core(100);
        c.set_alpha(1e6);
        c.on_overflow();
        assert!((c.alpha() - 0.99e6).abs() < 1e-6);
        for _ in 0..100 {
            c.on_overflow();
        }
        assert!((c.alpha() - 0.75e6).abs() < 1e-6, "alpha {}", c.alpha());
    }

    #[test]
    fn an_uncongested_link_stays_uncongested_below_half_buffer() {
        // A >= C from the first packets (10 Mbps of back-to-back packets on a 5 Mbps link),
        // but the buffer stays below half: no congested window, so alpha comes from labels.
        let mut c = CsfqCore::new(&CsfqConfig::default(), 5e6);
        for i in 0..400u64 {
            c.on_arrival(i * 8 * MS / 10, 1000, 7e6, false, 0.3);
        }
        assert!(!c.congested);
        assert_eq!(c.alpha(), 7e6);
        // The same arrivals with the buffer half full are congestion: Eq. 6 halves alpha (F = 2C).
        let mut c = CsfqCore::new(&CsfqConfig::default(), 5e6);
        for i in 0..400u64 {
            c.on_arrival(i * 8 * MS / 10, 1000, 7e6, false, 0.5);
        }
        assert!(c.congested);
        assert!(c.alpha() < 7e6 * 0.6, "alpha {}", c.alpha());
    }

    #[test]
    fn relabelling_lowers_labels_to_the_updated_alpha_and_keeps_the_rest() {
        // Random labels (some unlabelled) from 50 flows overloading a 10 Mbps link.
        let link = LinkInfo {
            rate_bps: 10e6,
            delay: 0,
            measure_from: 0,
        };
        let mut h = QdiscHarness::new(Box::new(Csfq::new(&CsfqConfig::default(), &link, stream(5, "q"))));
        let mut rng = stream(6, "labels");
        let (mut checked, mut lowered) = (0, 0);
        let mut next_tx: Time = 0;
        for i in 0..200_000u64 {
            let now = i * 40_000; // 25 000 packets/s of 1000 bytes: 200 Mbps offered
            let label = if rng.gen::<f64>() < 0.2 {
                0.0
            } else {
                rng.gen_range(1e5..2e7)
            };
            let packet = Packet {
                flow: (i % 50) as u32,
                size: 1000,
                weight: 1.0,
                label,
                ..Default::default()
            };
            if let (Verdict::Enqueued, packet) = h.offer(now, packet) {
                let out = packet.label;
                // §2.2.3 with the alpha this packet's update left (Fig. 2 relabels after
                // estimate_alpha): a label above it becomes exactly alpha, any other is kept.
                let alpha = h.q.core.alpha();
                if label > 0.0 {
                    let expected = if label > alpha { alpha } else { label };
                    assert_eq!(out, expected, "label {label}, alpha {alpha}");
                    checked += 1;
                    lowered += (out < label) as u32;
                } else {
                    assert!(out > 0.0, "the edge labels unlabelled packets");
                }
            }
            while next_tx <= now {
                h.depart(now);
                next_tx += 800_000; // 10 Mbps
            }
        }
        assert!(
            checked > 2_000 && lowered > 1_000,
            "checked {checked}, lowered {lowered}"
        );
    }

    /// A core (labels written by hand) on a 10 Mb/s link whose buffer never fills, K = 100 ms,
    /// and the half-buffer rule off, so that Â alone decides congestion (the branches of Fig. 2).
    fn fig2_core(k_c: f64) -> QdiscHarness<Csfq> {
        let cfg = CsfqConfig {
            role: CsfqRole::Core,
            limit_bytes: Some(Bytes(100_000_000)),
            buffer_threshold: 0.0,
            k_c: Seconds(k_c),
            ..Default::default()
        };
        let link = LinkInfo {
            rate_bps: 10e6,
            delay: 0,
            measure_from: 0,
        };
        QdiscHarness::new(Box::new(Csfq::new(&cfg, &link, stream(11, "fig2"))))
    }

    fn labelled(label: f64) -> Packet {
        Packet {
            size: 1000,
            weight: 1.0,
            label,
            ..Default::default()
        }
    }

    /// Offers labelled packets every `gap` from `*t` on until `stop(core)` holds after one;
    /// returns that packet's verdict and forwarded label, and the alpha before it.
    fn offer_until(
        h: &mut QdiscHarness<Csfq>,
        t: &mut Time,
        gap: Time,
        label: f64,
        stop: impl Fn(&CsfqCore) -> bool,
    ) -> (Verdict, Packet, f64) {
        loop {
            *t += gap;
            let before = h.q.core.alpha();
            let (verdict, packet) = h.offer(*t, labelled(label));
            if stop(&h.q.core) {
                return (verdict, packet, before);
            }
            assert!(*t < 10 * 1000 * MS, "the branch never came");
        }
    }

    #[test]
    fn fig2_congestion_starts_when_a_reaches_c_and_eq6_updates_alpha_only_after_k_c() {
        // 20 Mb/s of packets labelled 2 Mb/s (as ten 2 Mb/s flows), 0.4 ms apart.
        let mut h = fig2_core(0.1);
        let gap = 400_000;
        let mut t = 0;
        // Branch 1 (Â ≥ C, uncongested): congested, window starts now, alpha untouched.
        // Â of a rate-r input from zero reaches C at K_alpha·ln(r/(r − C)) = 69.3 ms.
        offer_until(&mut h, &mut t, gap, 2e6, |c| c.congested);
        assert!(h.q.core.arrival.rate_bps() >= 10e6);
        assert!((to_secs(t) - 0.1 * 2f64.ln()).abs() < 0.002, "congested at {t}");
        assert_eq!(h.q.core.window_start, t);
        assert_eq!(h.q.core.alpha(), f64::INFINITY);
        let start = t;
        // Branch 2 (congested, within K_c): nothing changes, up to now = start + K_c inclusive
        // (Fig. 2 updates when now > start + K_c).
        while t < start + 100 * MS {
            t += gap;
            h.offer(t, labelled(2e6));
            assert_eq!((h.q.core.alpha(), h.q.core.window_start), (f64::INFINITY, start));
        }
        // Branch 3 (congested for more than K_c): Eq. 6, alpha = alpha_old·C/F̂, the first time
        // from the window's largest label; F̂ counts accepted packets only (all of them so far).
        t += gap;
        h.offer(t, labelled(2e6));
        let f = h.q.core.accepted.rate_bps();
        assert_eq!(h.q.core.alpha(), 2e6 * 10e6 / f);
        // F̂ from zero at 169 ms: 20 Mb/s·(1 − e^{−1.69}) = 16.3 Mb/s, so alpha ≈ 2·10/16.3 Mb/s.
        assert!((h.q.core.alpha() - 1.22e6).abs() < 0.02e6, "alpha {}", h.q.core.alpha());
        assert_eq!(h.q.core.window_start, t);
        // Eq. 2 now drops about half; the next updates use alpha itself and F̂ (≠ Â), and every
        // forwarded label is the alpha left by its own arrival (Fig. 2 relabels after the update).
        let mut updates = 0;
        while updates < 3 {
            let start = h.q.core.window_start;
            let (verdict, packet, before) = offer_until(&mut h, &mut t, gap, 2e6, |c| c.window_start != start);
            assert_eq!(
                t,
                start + 100 * MS + gap,
                "an update exactly one K_c and a packet later"
            );
            let (alpha, f, a) = (
                h.q.core.alpha(),
                h.q.core.accepted.rate_bps(),
                h.q.core.arrival.rate_bps(),
            );
            assert_eq!(alpha, before * 10e6 / f);
            assert!(a > 1.25 * f, "Â {a} includes the dropped packets, F̂ {f} does not");
            if verdict == Verdict::Enqueued && alpha != before {
                assert_eq!(packet.label, alpha);
                updates += 1;
            }
        }
    }

    #[test]
    fn fig2_leaving_congestion_resets_tmp_alpha_and_an_uncongested_window_takes_its_largest_label() {
        let mut h = fig2_core(0.1);
        let mut t = 0;
        // Congested with labels of 7 Mb/s until the first Eq. 6 update: alpha ≈ 3.5 Mb/s.
        offer_until(&mut h, &mut t, 400_000, 7e6, |c| c.alpha().is_finite());
        let congested_alpha = h.q.core.alpha();
        // Then one packet per 20 ms: Â decays below C. The packet that switches the link to
        // uncongested (branch 4) restarts the window and forgets the labels seen so far,
        // its own (9 Mb/s) included.
        offer_until(&mut h, &mut t, 20 * MS, 9e6, |c| !c.congested);
        assert!(h.q.core.arrival.rate_bps() < 10e6);
        assert_eq!(h.q.core.window_start, t);
        assert_eq!(h.q.core.alpha(), congested_alpha);
        // Branch 5: within the window (up to start + K_c inclusive) alpha keeps its value and
        // tmp_alpha collects the labels; branch 6: the first packet after it sets alpha to
        // their largest, without its own label (8 Mb/s).
        for label in [3e6, 5e6, 4e6, 3e6, 6e6] {
            t += 20 * MS;
            h.offer(t, labelled(label));
            assert_eq!(h.q.core.alpha(), congested_alpha);
        }
        t += 20 * MS;
        h.offer(t, labelled(8e6));
        assert_eq!(h.q.core.alpha(), 6e6);
        assert_eq!(h.q.core.window_start, t);
        // A window of unlabelled packets only: alpha = ∞, where Fig. 2 would give tmp_alpha = 0
        // (and drop every labelled packet for the next K_c). Documented choice (module header).
        for _ in 0..6 {
            t += 20 * MS;
            h.offer(t, labelled(0.0));
        }
        assert_eq!(h.q.core.alpha(), f64::INFINITY);
        assert_eq!(h.q.core.drop_probability(1e9), 0.0);
    }

    #[test]
    fn eq2_at_a_fixed_alpha_drops_one_minus_alpha_over_r_and_forwards_min_r_alpha() {
        // K_c of a day: no window update moves alpha; departures keep the buffer empty.
        let mut h = fig2_core(86_400.0);
        let alpha = 1e6;
        h.q.core.set_alpha(alpha);
        let n = 40_000;
        for (i, ratio) in [0.5, 1.0, 1.25, 2.0, 4.0].into_iter().enumerate() {
            let r = ratio * alpha;
            let before = h.drops(DropReason::Csfq);
            for k in 0..n {
                let t = (i * n + k) as Time * 100_000;
                if let (Verdict::Enqueued, packet) = h.offer(t, labelled(r)) {
                    assert_eq!(packet.label, r.min(alpha));
                }
                h.depart(t);
            }
            assert_eq!(h.q.core.alpha(), alpha);
            let drops = (h.drops(DropReason::Csfq) - before) as f64;
            let p = (1.0 - alpha / r).max(0.0);
            let sigma = (n as f64 * p * (1.0 - p)).sqrt();
            assert!(
                (drops - n as f64 * p).abs() <= 3.0 * sigma,
                "r = {ratio}·alpha: {drops} drops of {n}, expected {} ± {}",
                n as f64 * p,
                3.0 * sigma
            );
            // The forwarded rate r·(1 − p) is min(r, alpha).
            let forwarded = r * (n as f64 - drops) / n as f64;
            assert!((forwarded - r.min(alpha)).abs() <= 3.0 * r * sigma / n as f64);
        }
    }

    #[test]
    fn footnote_6_does_not_hold_for_this_estimator_overflow_precedes_detection() {
        // Fn. 6: an idle link suddenly loaded by identical UDPs "will not experience buffer
        // overflow before the algorithm detects the congestion, as long as the aggregate
        // arrival rate is less than 10 times the link capacity" (the proof is in [22]). Here:
        // ten CBR flows at a·C in total from t = 0 into an idle 10 Mb/s, 64 KB CSFQ link,
        // served at C. The queue (64 packets) overflows at 64 KB·8/((a − 1)·C); Â reaches C only
        // at K_alpha·ln(a/(a − 1)) (congested from then on, the buffer being over half full), and
        // the first Eq. 6 update, hence the first CSFQ drop, comes a K_c later.
        let tx = 800_000; // 1000 bytes at 10 Mb/s
        for (a, overflow_ms, detected_ms) in [(2.0, 51.2, 69.3), (5.0, 12.8, 22.3), (9.5, 6.0, 11.1)] {
            let link = LinkInfo {
                rate_bps: 10e6,
                delay: 0,
                measure_from: 0,
            };
            let mut h = QdiscHarness::new(Box::new(Csfq::new(&CsfqConfig::default(), &link, stream(2, "fn6"))));
            let gap = from_secs(8000.0 / (a * 10e6));
            let (mut overflow, mut detected, mut first_drop) = (None, None, None);
            let mut link_free: Time = 0;
            for i in 0u64.. {
                let t = i * gap;
                while h.backlog.packets > 0 && link_free <= t {
                    h.depart(link_free);
                    link_free += tx;
                }
                let packet = Packet {
                    flow: (i % 10) as u32,
                    size: 1000,
                    weight: 1.0,
                    ..Default::default()
                };
                let verdict = h.offer(t, packet).0;
                if link_free <= t && h.depart(t).is_some() {
                    link_free = t + tx;
                }
                match verdict {
                    Verdict::Dropped(DropReason::Overflow) => overflow = overflow.or(Some(t)),
                    Verdict::Dropped(DropReason::Csfq) => first_drop = first_drop.or(Some(t)),
                    _ => {}
                }
                if h.q.core.congested {
                    detected = detected.or(Some(t));
                }
                if first_drop.is_some() {
                    break;
                }
                assert!(t < 1000 * MS, "{a}·C: no CSFQ drop in a second");
            }
            let ms = |t: Option<Time>| to_secs(t.expect("happened")) * 1e3;
            let (overflow, detected, first_drop) = (ms(overflow), ms(detected), ms(first_drop));
            eprintln!("fn 6, {a}·C: overflow {overflow:.1} ms, congested {detected:.1} ms, first CSFQ drop {first_drop:.1} ms");
            assert!((overflow - overflow_ms).abs() < 1.0, "{a}·C: overflow at {overflow} ms");
            assert!(
                (detected - detected_ms).abs() < 1.0,
                "{a}·C: congested at {detected} ms"
            );
            assert!(
                first_drop > detected + 100.0 && first_drop < detected + 110.0,
                "{a}·C: first drop {first_drop} ms"
            );
            assert!(overflow < detected, "{a}·C: the footnote would hold");
        }
    }

    #[test]
    fn validation_names_the_field() {
        let bad = |cfg: CsfqConfig| cfg.validate("q").unwrap_err().to_string();
        assert_eq!(
            bad(CsfqConfig {
                k_c: Seconds(0.0),
                ..Default::default()
            }),
            "q.k_c: must be > 0, got 0"
        );
        assert_eq!(
            bad(CsfqConfig {
                buffer_threshold: 1.5,
                ..Default::default()
            }),
            "q.buffer_threshold: must be in [0, 1], got 1.5"
        );
        assert_eq!(
            bad(CsfqConfig {
                max_decrease: -0.1,
                ..Default::default()
            }),
            "q.max_decrease: must be in [0, 1], got -0.1"
        );
        assert_eq!(
            bad(CsfqConfig {
                limit_bytes: Some(Bytes(0)),
                ..Default::default()
            }),
            "q.limit_bytes: must be > 0, got 0"
        );
        assert!(CsfqConfig::default().validate("q").is_ok());
        assert_eq!(CsfqConfig::default().limit(), Limit::new(None, Some(64_000)));
    }
}
