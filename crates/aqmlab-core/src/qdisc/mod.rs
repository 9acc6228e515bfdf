//! Queue disciplines: one algorithm per file, all behind [`QueueDisc`].
//!
//! A qdisc sees what a router sees: packet headers (flow id, size, ECN bits,
//! CSFQ label), the clock and its own state. Every drop carries a
//! [`DropReason`]; drops of packets other than the arriving one (e.g. DRR's
//! longest-queue push-out) go through [`QdiscCtx::drop_packet`], ECN marks through
//! [`QdiscCtx::mark`].
//!
//! To add a discipline, write `my_qdisc.rs` in the order every file here follows
//! (`red.rs` is the model; Linux `red.h`'s `red_parms` / `red_vars` / `red_stats`):
//! 1. a header: the paper and section, the algorithm in a few lines, and how
//!    any unclear text was read;
//! 2. the config, `#[serde(default, deny_unknown_fields)]` with one `impl Default`;
//!    each field's doc gives its default and where it comes from; it implements
//!    [`QdiscConfig`] (`validate` names the field, `build` boxes `MyQdisc::new`);
//! 3. `Params`: the parameters in effect, resolved once in `new`;
//! 4. the qdisc struct: `params`, then the algorithm's variables, then `stats`
//!    (what [`QueueDisc::counters`] reports besides state);
//! 5. `impl QueueDisc`, then unit tests driven by `testing::QdiscHarness`;
//!
//! then add one line to the `tagged_registry!` invocation below and the qdisc's row to
//! `docs/scenario.md`.

use crate::error::ScenarioError;
use crate::packet::{Ecn, FlowId, PacketArena, PacketId, PacketKind};
use crate::rng::Rng;
use crate::time::Time;
use crate::validate::{tagged_registry, take_tag};
use serde::Deserialize;
use std::collections::VecDeque;

pub mod active_flows;
pub mod bred;
pub mod buckets;
pub mod choke;
pub mod choke_linux;
pub mod codel;
pub mod csfq;
pub mod droptail;
pub mod drr;
pub mod dualpi2;
pub mod external;
pub mod fq_codel;
pub mod fred;
pub mod loss;
pub mod lqd;
pub mod pie;
pub mod pie_linux;
pub mod pushout;
pub mod red;
pub mod red_linux;
pub mod red_pd;
pub mod sfb;
pub mod sfq;
pub mod sfq_ns2;
pub mod sred;
#[cfg(test)]
pub(crate) mod testing;

/// Why a packet was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DropReason {
    /// Buffer full (tail drop).
    Overflow,
    /// RED-style probabilistic early drop (average between thresholds).
    Early,
    /// Forced drop: average above max_th (or 2·max_th in gentle mode).
    Forced,
    /// A per-flow limit (FRED max_q / strikes, BRED l2/W_m, ...).
    PerFlowLimit,
    /// CSFQ probabilistic drop `1 - alpha/label`.
    Csfq,
    /// Pushed out of a full shared buffer (DRR's and LQD's longest-queue drop).
    Pushout,
    /// Configured loss model (Bernoulli, periodic or scripted): not congestion.
    Loss,
    /// SRED's probabilistic drop p_zap (eq. 4.4 / 5.1).
    Sred,
    /// CoDel's head drop in the dropping state (RFC 8289).
    Codel,
    /// RED-PD's pre-filter: a monitored flow's preferential drop.
    PreFilter,
    /// CHOKe: the arrival and the queued packet(s) drawn to compare with it, of the same flow.
    ChokeMatch,
    /// SFB: a flow found non-responsive (every one of its bins at p = 1), beyond its penalty rate.
    Penalty,
    /// A reason of a discipline's own naming (a user's `type = "python"` qdisc).
    Named(ReasonName),
}

/// A drop reason a discipline names itself ([`DropReason::Named`]), interned for the process:
/// the name is kept once and the reason stays a small `Copy` value. Reasons order by their
/// names, so the drops table is in the same order in every process, whatever was named first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ReasonName(u16);

/// The names interned so far; each is kept for the life of the process.
static REASON_NAMES: std::sync::RwLock<Vec<&'static str>> = std::sync::RwLock::new(Vec::new());
/// Distinct names a process may intern: enough for any set of mechanisms, small enough that a
/// discipline making up names per packet is stopped.
pub const MAX_REASON_NAMES: usize = 1000;

impl ReasonName {
    /// The reason called `name`: a built-in one by its own name (`"overflow"`), else one of a
    /// discipline's own: 1 to 40 lowercase letters, digits and `_`, starting with a letter.
    pub fn reason(name: &str) -> Result<DropReason, String> {
        if let Some(&builtin) = DropReason::BUILTIN.iter().find(|r| r.as_str() == name) {
            return Ok(builtin);
        }
        let well_formed = (1..=40).contains(&name.len())
            && name.starts_with(|c: char| c.is_ascii_lowercase())
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if !well_formed {
            return Err(format!(
                "a drop reason is 1 to 40 lowercase letters, digits and `_`, starting with a letter; got {name:?}"
            ));
        }
        let mut names = REASON_NAMES.write().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = names.iter().position(|&n| n == name) {
            return Ok(DropReason::Named(ReasonName(i as u16)));
        }
        if names.len() >= MAX_REASON_NAMES {
            return Err(format!(
                "more than {MAX_REASON_NAMES} drop reasons were named; {name:?} is one too many"
            ));
        }
        names.push(Box::leak(name.to_owned().into_boxed_str()));
        Ok(DropReason::Named(ReasonName(names.len() as u16 - 1)))
    }

    pub fn as_str(self) -> &'static str {
        REASON_NAMES.read().unwrap_or_else(|e| e.into_inner())[self.0 as usize]
    }
}

impl Ord for ReasonName {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl PartialOrd for ReasonName {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl DropReason {
    /// Every reason of the engine's own.
    pub const BUILTIN: [DropReason; 12] = [
        DropReason::Overflow,
        DropReason::Early,
        DropReason::Forced,
        DropReason::PerFlowLimit,
        DropReason::Csfq,
        DropReason::Pushout,
        DropReason::Loss,
        DropReason::Sred,
        DropReason::Codel,
        DropReason::PreFilter,
        DropReason::ChokeMatch,
        DropReason::Penalty,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            DropReason::Overflow => "overflow",
            DropReason::Early => "early",
            DropReason::Forced => "forced",
            DropReason::PerFlowLimit => "per_flow_limit",
            DropReason::Csfq => "csfq",
            DropReason::Pushout => "pushout",
            DropReason::Loss => "loss",
            DropReason::Sred => "sred",
            DropReason::Codel => "codel",
            DropReason::PreFilter => "pre_filter",
            DropReason::ChokeMatch => "choke_match",
            DropReason::Penalty => "penalty",
            DropReason::Named(name) => name.as_str(),
        }
    }
}

/// Outcome for the arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Enqueued,
    Dropped(DropReason),
}

/// What a qdisc did to packets besides its verdict on the arrival, for the engine to record:
/// drops of packets already queued ([`QdiscCtx::drop_packet`]) and ECN marks ([`QdiscCtx::mark`]).
/// The engine takes both out after every enqueue and dequeue.
#[derive(Debug, Default)]
pub struct QdiscEvents {
    pub drops: Vec<(PacketId, DropReason)>,
    pub marks: Vec<PacketId>,
    /// A discipline from outside the crate failed ([`QdiscCtx::fail`]): the run stops.
    pub failure: Option<String>,
}

/// The packets and bytes in a link's queue, counted outside the discipline from what it
/// answers: an arrival it queues (`Verdict::Enqueued`), a packet it drops from the queue
/// ([`QdiscCtx::drop_packet`]) and a packet it dequeues. Counted once for every discipline,
/// as ns-3's `QueueDisc` base class keeps `GetNPackets()` / `GetNBytes()`; a discipline that
/// needs its length (RED's average, a buffer bound) reads it with [`QdiscCtx::backlog`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Backlog {
    pub packets: usize,
    pub bytes: u64,
}

impl Backlog {
    fn add(&mut self, size: u32) {
        self.packets += 1;
        self.bytes += u64::from(size);
    }

    fn remove(&mut self, size: u32) {
        self.packets -= 1;
        self.bytes -= u64::from(size);
    }

    /// The queue with an arrival of `size` bytes in it (an enqueue's backlog does not count the
    /// arrival yet).
    pub fn with(mut self, size: u32) -> Backlog {
        self.add(size);
        self
    }

    /// The queue a departing packet of `size` bytes leaves behind (a dequeue's backlog still
    /// counts the packet it is taking).
    pub fn without(mut self, size: u32) -> Backlog {
        self.remove(size);
        self
    }

    /// Offers `id` to `qdisc` as a link does, counting it in if queued.
    pub fn offer<Q: QueueDisc + ?Sized>(
        &mut self,
        qdisc: &mut Q,
        id: PacketId,
        now: Time,
        packets: &mut PacketArena,
        events: &mut QdiscEvents,
    ) -> Verdict {
        let size = packets[id].size;
        let mut ctx = QdiscCtx::new(now, packets, events, self);
        ctx.arrival = Some(id);
        let verdict = qdisc.enqueue(id, &mut ctx);
        if verdict == Verdict::Enqueued && ctx.arrival.is_some() {
            self.add(size);
        }
        verdict
    }

    /// Asks `qdisc` for its next packet as a link does, counting it out.
    pub fn take<Q: QueueDisc + ?Sized>(
        &mut self,
        qdisc: &mut Q,
        now: Time,
        packets: &mut PacketArena,
        events: &mut QdiscEvents,
    ) -> Option<PacketId> {
        let id = qdisc.dequeue(&mut QdiscCtx::new(now, packets, events, self))?;
        self.remove(packets[id].size);
        Some(id)
    }
}

/// What a qdisc may touch while it works: the clock, packet headers, the queue's length, and
/// the lists of packets it drops besides the arriving one and of those it marks.
pub struct QdiscCtx<'a> {
    pub now: Time,
    pub packets: &'a mut PacketArena,
    events: &'a mut QdiscEvents,
    backlog: &'a mut Backlog,
    /// The packet being offered, until the qdisc drops it with [`Self::drop_packet`] (FQ-CoDel's
    /// fattest queue may be its own): it is not in the backlog yet.
    arrival: Option<PacketId>,
}

impl<'a> QdiscCtx<'a> {
    fn new(now: Time, packets: &'a mut PacketArena, events: &'a mut QdiscEvents, backlog: &'a mut Backlog) -> Self {
        QdiscCtx {
            now,
            packets,
            events,
            backlog,
            arrival: None,
        }
    }

    /// Drops a packet that was already in the queue (push-out, head drop).
    pub fn drop_packet(&mut self, id: PacketId, reason: DropReason) {
        if self.arrival == Some(id) {
            self.arrival = None;
        } else {
            self.backlog.remove(self.packets[id].size);
        }
        self.events.drops.push((id, reason));
    }

    /// Marks `id` (the arrival, or a packet being dequeued) Congestion Experienced instead of
    /// dropping it (RFC 3168 §5); the engine counts the mark by (flow, link), as it counts drops.
    pub fn mark(&mut self, id: PacketId) {
        self.packets[id].ecn = Ecn::Ce;
        self.events.marks.push(id);
    }

    /// Stops the run: a discipline written outside the crate ([`external`]) failed or broke the
    /// engine's contract; `message` says how (the first failure is kept).
    pub fn fail(&mut self, message: String) {
        self.events.failure.get_or_insert(message);
    }

    /// The packet being offered to `enqueue`, while the discipline has not dropped it.
    pub fn arrival(&self) -> Option<PacketId> {
        self.arrival
    }

    /// The queue as it stands: the packets queued before this call, less those dropped in
    /// it; neither the arrival being offered nor a packet being dequeued changes it until the
    /// qdisc returns.
    pub fn backlog(&self) -> Backlog {
        *self.backlog
    }
}

/// The queue discipline at the sending end of a link. The link counts what it holds
/// ([`Backlog`]).
///
/// ECN: a qdisc that marks instead of dropping calls [`QdiscCtx::mark`] (and, for the arrival,
/// returns `Enqueued`); the engine counts marks by (flow, link) and reports a link's total as its
/// `ecn_marks` counter when the discipline [`can_mark`](QueueDisc::can_mark).
pub trait QueueDisc: Send {
    /// Offers an arriving packet. On `Dropped` the caller frees it.
    fn enqueue(&mut self, id: PacketId, ctx: &mut QdiscCtx) -> Verdict;
    /// Next packet to transmit, if any: `None` only when it holds none.
    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId>;
    /// What the discipline shows of its state beside the queue, sampled with it.
    fn gauges(&self) -> Gauges {
        Gauges::default()
    }
    /// Whether the discipline marks ECN-capable packets ([`QdiscCtx::mark`]) under some
    /// configuration: its link then reports `ecn_marks` first among its counters, 0 included.
    fn can_mark(&self) -> bool {
        false
    }
    /// Algorithm-specific counters reported at the end of a run. The engine already
    /// counts every drop by (flow, link, [`DropReason`]) and every mark, so these report only
    /// what that cannot: sub-reasons of a reason (`<what>_drops`, e.g. BRED's `wm_drops`) and
    /// state (`n_hat`, `avgcq`, `alpha_bps`, `peak_active_flows`).
    fn counters(&self) -> Vec<(&'static str, f64)> {
        Vec::new()
    }
    /// Per-flow measurement a discipline keeps besides its decision (SRED's §VIII
    /// candidate statistics), reported at the end of a run.
    fn flow_counters(&self) -> Vec<FlowCounters> {
        Vec::new()
    }
    /// The link's rate changed (`rate_changes`) to `rate_bps`. A discipline that computes
    /// with the rate it was built with ([`LinkInfo::rate_bps`]) uses this one from now on.
    fn set_link_rate(&mut self, _rate_bps: f64) {}
}

/// A discipline's state sampled with its queue (`simulation.sample_interval`): one hook for every
/// algorithm's gauge, each `None` where the discipline has none.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Gauges {
    /// The averaged queue (RED's `avg`, in packets or bytes as configured).
    pub average: Option<f64>,
    /// SRED's hit frequency P(t) (eq. 3.2).
    pub hit_frequency: Option<f64>,
}

/// One flow's (one direction's) measurement-only counters at a qdisc.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowCounters {
    pub flow: FlowId,
    pub kind: PacketKind,
    pub counters: Vec<(&'static str, f64)>,
}

/// What a qdisc is told about the link it serves.
#[derive(Clone, Copy, Debug)]
pub struct LinkInfo {
    /// The rate at the start; a link with `rate_changes` tells its queue each new one
    /// ([`QueueDisc::set_link_rate`]).
    pub rate_bps: f64,
    pub delay: Time,
    /// Start of the measurement window (`simulation.warmup`), for measurement-only statistics.
    pub measure_from: Time,
}

/// A qdisc's configuration, as read from a scenario file.
pub trait QdiscConfig {
    /// Checks the parameters; errors name the field under `path` (e.g. `topology.bottleneck.qdisc.max_p`).
    fn validate(&self, path: &str) -> Result<(), ScenarioError>;
    /// Builds the qdisc for one link; `rng` is its own random stream.
    fn build(&self, link: &LinkInfo, rng: Rng) -> Box<dyn QueueDisc>;
}

tagged_registry! {
    /// Queue discipline selected by `type` in a scenario file.
    QdiscSpec: dyn QdiscConfig {
        "droptail" => DropTail(droptail::DropTailConfig),
        "red" => Red(Profiled<red::RedConfig, red_linux::RedLinuxConfig>),
        "red_pd" => RedPd(red_pd::RedPdConfig),
        "fred" => Fred(fred::FredConfig),
        "bred" => Bred(bred::BredConfig),
        "csfq" => Csfq(csfq::CsfqConfig),
        "drr" => Drr(drr::DrrConfig),
        "sred" => Sred(sred::SredConfig),
        "codel" => Codel(codel::CodelConfig),
        "fq_codel" => FqCodel(fq_codel::FqCodelConfig),
        "pie" => Pie(Profiled<pie::PieConfig, pie_linux::PieLinuxConfig>),
        "dualpi2" => DualPi2(Profiled<dualpi2::rfc9332::DualPi2Config, dualpi2::linux::DualPi2LinuxConfig>),
        "sfq" => Sfq(sfq::SfqConfig),
        "choke" => Choke(Profiled<choke::ChokeConfig, choke_linux::ChokeLinuxConfig>),
        "sfb" => Sfb(sfb::SfbConfig),
        "lqd" => Lqd(lqd::LqdConfig),
        // Boxed: its list of scripted drops would enlarge every QdiscSpec.
        "loss" => Loss(Box<loss::LossConfig>),
        // A class of the user's, run by the program embedding the core (aqmlab's Python package).
        "python" => Python(Box<external::ExternalConfig>),
    }
}

impl<'de> Deserialize<'de> for QdiscSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let mut value = serde_json::Value::deserialize(d)?;
        let tag = take_tag(&mut value, Self::NAMES).map_err(D::Error::custom)?;
        Self::from_tagged(&tag, value).map_err(D::Error::custom)
    }
}

/// A qdisc table with a Linux twin: `profile = "linux"` reads `L`, the discipline as Linux's
/// `sch_*.c` runs it, with the parameter names and units of `tc qdisc add`; any other profile, or
/// none, reads `P`, the paper-faithful one, whose own `profile` field takes the other names.
#[derive(Clone, Debug)]
pub enum Profiled<P, L> {
    Paper(P),
    Linux(L),
}

/// The profile that selects a discipline's Linux twin.
pub const LINUX_PROFILE: &str = "linux";

impl<'de, P: serde::de::DeserializeOwned, L: serde::de::DeserializeOwned> Deserialize<'de> for Profiled<P, L> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let mut value = serde_json::Value::deserialize(d)?;
        let linux = value.get("profile").and_then(|p| p.as_str()) == Some(LINUX_PROFILE);
        let read = if linux {
            value.as_object_mut().map(|table| table.remove("profile"));
            crate::validate::from_tagged_value(value).map(Profiled::Linux)
        } else {
            crate::validate::from_tagged_value(value).map(Profiled::Paper)
        };
        read.map_err(D::Error::custom)
    }
}

impl<P: QdiscConfig, L: QdiscConfig> QdiscConfig for Profiled<P, L> {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        match self {
            Profiled::Paper(config) => config.validate(path),
            Profiled::Linux(config) => config.validate(path),
        }
    }
    fn build(&self, link: &LinkInfo, rng: Rng) -> Box<dyn QueueDisc> {
        match self {
            Profiled::Paper(config) => config.build(link, rng),
            Profiled::Linux(config) => config.build(link, rng),
        }
    }
}

impl<C: QdiscConfig + ?Sized> QdiscConfig for Box<C> {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        (**self).validate(path)
    }
    fn build(&self, link: &LinkInfo, rng: Rng) -> Box<dyn QueueDisc> {
        (**self).build(link, rng)
    }
}

impl Default for QdiscSpec {
    fn default() -> Self {
        QdiscSpec::DropTail(droptail::DropTailConfig::default())
    }
}

/// A buffer bound in packets, bytes, or both (a packet is admitted only if both hold).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limit {
    pub packets: Option<u64>,
    pub bytes: Option<u64>,
}

impl Limit {
    pub fn new(packets: Option<u64>, bytes: Option<u64>) -> Self {
        Limit { packets, bytes }
    }

    /// The bound a scenario sets with `limit` / `limit_bytes`, or `default` when it sets neither.
    pub fn configured(packets: Option<u64>, bytes: Option<u64>, default: Limit) -> Self {
        match (packets, bytes) {
            (None, None) => default,
            (p, b) => Limit { packets: p, bytes: b },
        }
    }

    /// Whether a queue of `queued_packets` / `queued_bytes` is within the bound
    /// (push-out disciplines admit first, then drop until this holds).
    pub fn holds(&self, queued_packets: usize, queued_bytes: u64) -> bool {
        self.packets.is_none_or(|p| queued_packets as u64 <= p) && self.bytes.is_none_or(|b| queued_bytes <= b)
    }

    /// Fraction of the bound in use (the larger of the packet and byte fractions).
    pub fn occupancy(&self, queued_packets: usize, queued_bytes: u64) -> f64 {
        let packets = self.packets.map_or(0.0, |p| queued_packets as f64 / p as f64);
        let bytes = self.bytes.map_or(0.0, |b| queued_bytes as f64 / b as f64);
        packets.max(bytes)
    }

    /// Whether a packet of `size` bytes fits beside `queued_packets` / `queued_bytes`.
    pub fn admits(&self, queued_packets: usize, queued_bytes: u64, size: u32) -> bool {
        self.packets.is_none_or(|p| (queued_packets as u64) < p)
            && self.bytes.is_none_or(|b| queued_bytes + size as u64 <= b)
    }

    pub fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        if self.packets == Some(0) {
            return Err(ScenarioError::new(format!("{path}.limit"), "must be > 0, got 0"));
        }
        if self.bytes == Some(0) {
            return Err(ScenarioError::new(format!("{path}.limit_bytes"), "must be > 0, got 0"));
        }
        Ok(())
    }
}

/// Packets a [`Fifo`] keeps inside itself before it spills to the heap. Access links
/// rarely queue more, and with 10⁴ flows their queues' separate buffers were a cache
/// miss at every enqueue and dequeue (issue 15).
const FIFO_INLINE: usize = 4;

/// A FIFO of packet handles: the storage most disciplines share. It keeps no byte count: the
/// link counts the qdisc's ([`Backlog`]), and a discipline of several queues that needs one per
/// queue keeps it beside the queue (FQ-CoDel). The oldest [`FIFO_INLINE`] packets sit in a ring
/// inside the struct, the rest behind them on the heap.
#[derive(Default)]
pub struct Fifo {
    /// The oldest packets, `ring[head]` first; full whenever `spill` holds any.
    ring: [PacketId; FIFO_INLINE],
    head: u8,
    ring_len: u8,
    /// The packets behind the ring's, oldest first.
    spill: VecDeque<PacketId>,
}

impl Fifo {
    fn ring_at(&self, index: usize) -> usize {
        (self.head as usize + index) % FIFO_INLINE
    }

    /// Puts `id` at the tail of the ring, which has room.
    fn ring_push(&mut self, id: PacketId) {
        self.ring[self.ring_at(self.ring_len as usize)] = id;
        self.ring_len += 1;
    }

    /// The ring lost a packet: the oldest spilled one takes the free place at its tail.
    fn refill(&mut self) {
        if let Some(id) = self.spill.pop_front() {
            self.ring_push(id);
        }
    }

    pub fn push(&mut self, id: PacketId) {
        if (self.ring_len as usize) < FIFO_INLINE {
            self.ring_push(id);
        } else {
            self.spill.push_back(id);
        }
    }

    /// Takes the head; asks for the next head's packet to be fetched into the cache, as a
    /// link dequeues it one transmission later.
    pub fn pop(&mut self, packets: &PacketArena) -> Option<PacketId> {
        if self.ring_len == 0 {
            return None;
        }
        let id = self.ring[self.head as usize];
        self.head = ((self.head as usize + 1) % FIFO_INLINE) as u8;
        self.ring_len -= 1;
        self.refill();
        if let Some(next) = self.front() {
            packets.prefetch_hop_fields(next);
        }
        Some(id)
    }

    /// Removes the packet at the tail (a drop from the back of the queue).
    pub fn pop_back(&mut self) -> Option<PacketId> {
        let id = match self.spill.pop_back() {
            Some(id) => id,
            None if self.ring_len > 0 => {
                self.ring_len -= 1;
                self.ring[self.ring_at(self.ring_len as usize)]
            }
            None => return None,
        };
        Some(id)
    }

    /// The packet at the head, if any.
    pub fn front(&self) -> Option<PacketId> {
        self.get(0)
    }

    /// The packet `index` places behind the head.
    pub fn get(&self, index: usize) -> Option<PacketId> {
        if index < self.ring_len as usize {
            Some(self.ring[self.ring_at(index)])
        } else {
            self.spill.get(index - self.ring_len as usize).copied()
        }
    }

    /// Removes the packet `index` places behind the head (a drop from inside the queue); costs
    /// O(length).
    pub fn remove(&mut self, index: usize) -> Option<PacketId> {
        let id = if index < self.ring_len as usize {
            let id = self.ring[self.ring_at(index)];
            for i in index..self.ring_len as usize - 1 {
                self.ring[self.ring_at(i)] = self.ring[self.ring_at(i + 1)];
            }
            self.ring_len -= 1;
            self.refill();
            id
        } else {
            self.spill.remove(index - self.ring_len as usize)?
        };
        Some(id)
    }

    pub fn len(&self) -> usize {
        self.ring_len as usize + self.spill.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ring_len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Packet;
    use rand::Rng as _;

    /// Random pushes, pops from both ends, removals and lookups, across the ring's edge and
    /// deep into the spill, give what a plain `VecDeque` gives.
    #[test]
    fn the_fifo_behaves_as_a_plain_deque_across_its_inline_ring() {
        let mut rng = crate::rng::stream(1, "fifo");
        let mut packets = PacketArena::default();
        let ids: Vec<PacketId> = (0..64)
            .map(|i| {
                packets.alloc(Packet {
                    size: 100 + i,
                    ..Default::default()
                })
            })
            .collect();
        let (mut fifo, mut model) = (Fifo::default(), VecDeque::new());
        let mut deepest = 0;
        for _ in 0..20_000 {
            match rng.gen_range(0..10) {
                0..=4 => {
                    let id = ids[rng.gen_range(0..ids.len())];
                    fifo.push(id);
                    model.push_back(id);
                }
                5..=6 => assert_eq!(fifo.pop(&packets), model.pop_front()),
                7 => assert_eq!(fifo.pop_back(), model.pop_back()),
                8 => {
                    let at = rng.gen_range(0..=model.len());
                    assert_eq!(fifo.remove(at), model.remove(at));
                }
                _ => {
                    let at = rng.gen_range(0..=model.len());
                    assert_eq!(fifo.get(at), model.get(at).copied());
                }
            }
            deepest = deepest.max(model.len());
            assert_eq!(fifo.len(), model.len());
            assert_eq!(fifo.is_empty(), model.is_empty());
            assert_eq!(fifo.front(), model.front().copied());
        }
        assert!(deepest > 3 * FIFO_INLINE, "the spill was used: {deepest} deep");
    }
}
