//! FQ-CoDel, "Flow Queue CoDel" (Hoeiland-Joergensen et al., RFC 8290; Linux
//! `net/sched/sch_fq_codel.c` for the overflow rule).
//!
//! Packets are hashed by flow into `flows` queues (RFC 8290 §4.1.1), each with its own
//! CoDel state ([`CodelState`], §4.2) and a deficit-round-robin credit of `quantum` bytes
//! (§4.2). Queues that become active join the *new* list and are served before the *old*
//! list (sparse-flow priority, §4.1.2–4.1.3): a queue whose credit runs out moves to the
//! tail of the old list with `quantum` more; a new queue found empty moves to the old list
//! (so it cannot stay new forever, §4.2), an old queue found empty leaves the lists. When the
//! packet count exceeds `limit` or the bytes exceed `memory_limit`, packets are dropped from
//! the head of the queue with the most bytes: up to `drop_batch` packets, stopping once half
//! of its bytes are gone (§4.1.1; Linux fq_codel_drop()).
//!
//! `profile = "linux"` runs each queue's CoDel with Linux's arithmetic (`codel/linux.rs`), whose
//! MTU test reads the whole qdisc's backlog (sch_fq_codel.c passes `sch->qstats.backlog`), not the
//! flow queue's as RFC 8290's pseudocode; and `memory_limit` counts what Linux charges a packet,
//! its `skb->truesize`: its length and [`TRUESIZE_OVERHEAD`].

use super::buckets::flow_hash;
use super::codel::queue::{CodelQueue, CodelStats};
use super::codel::{CeThreshold, CodelConfig, CodelParams, CodelProfile, CodelState};
use super::{DropReason, Fifo, LinkInfo, QdiscConfig, QdiscCtx, QueueDisc, Verdict};
use crate::error::ScenarioError;
use crate::packet::{PacketArena, PacketId};
use crate::rng::Rng;
use crate::units::{Bytes, Seconds};
use crate::validate::require_positive;
use rand::Rng as _;
use serde::Deserialize;
use std::collections::VecDeque;

/// What Linux charges a queued packet beyond its length (`skb->truesize` − length): the
/// `sk_buff`, its shared info and the slab's rounding. Measured in Linux 6.1 (User-Mode Linux)
/// on the dumbbell of `aqmlab validate linux`, fq_codel's `memory_used` against its backlog:
/// 899 ± 64 bytes per packet of TCP and UDP frames of 1514 bytes.
pub const TRUESIZE_OVERHEAD: u64 = 900;

/// Which FQ-CoDel runs: RFC 8290's, or Linux's (module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FqCodelProfile {
    #[default]
    Rfc8290,
    Linux,
}

/// `type = "fq_codel"`; every field optional (defaults: RFC 8290 §5.1 and Linux tc). The names
/// are tc fq_codel's.
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FqCodelConfig {
    /// `"rfc8290"` (the default) or `"linux"`.
    pub profile: FqCodelProfile,
    /// Number of flow queues: 1024 (RFC 8290 §5.1.1 "flows").
    pub flows: u32,
    /// Packets in all queues together: 10240 (§5.1.1 "limit").
    pub limit: u64,
    /// Bytes in all queues together: 32 MB (Linux `memory_limit`); `linux` counts truesize.
    pub memory_limit: Bytes,
    /// DRR credit per round: 1514 bytes, one Ethernet MTU (§5.1.1 "quantum").
    pub quantum: Bytes,
    /// Packets dropped at most per overflow: 64 (Linux `drop_batch`).
    pub drop_batch: u32,
    /// CoDel's target, interval, MTU and ECN in each queue (codel.rs; §5.1.1: 5 ms, 100 ms, on).
    pub target: Seconds,
    pub interval: Seconds,
    /// 1500 B; `linux`: 1514, the device's `psched_mtu`.
    pub mtu: Option<Bytes>,
    pub ecn: bool,
    /// Linux's step for DCTCP on each queue ([`CeThreshold`]; tc `ce_threshold`,
    /// `ce_threshold_selector VALUE/MASK`): off.
    pub ce_threshold: Option<Seconds>,
    pub ce_threshold_selector: u8,
    pub ce_threshold_mask: u8,
}

impl Default for FqCodelConfig {
    fn default() -> Self {
        let codel = CodelConfig::default();
        FqCodelConfig {
            profile: FqCodelProfile::Rfc8290,
            flows: 1024,
            limit: 10240,
            memory_limit: Bytes(32 << 20),
            quantum: Bytes(1514),
            drop_batch: 64,
            target: codel.target,
            interval: codel.interval,
            mtu: codel.mtu,
            // RFC 8290 §5.1.1: "ECN is enabled by default".
            ecn: true,
            ce_threshold: codel.ce_threshold,
            ce_threshold_selector: codel.ce_threshold_selector,
            ce_threshold_mask: codel.ce_threshold_mask,
        }
    }
}

impl FqCodelConfig {
    fn codel(&self) -> CodelConfig {
        CodelConfig {
            profile: match self.profile {
                FqCodelProfile::Rfc8290 => CodelProfile::Rfc8289,
                FqCodelProfile::Linux => CodelProfile::Linux,
            },
            target: self.target,
            interval: self.interval,
            mtu: self.mtu,
            ecn: self.ecn,
            ce_threshold: self.ce_threshold,
            ce_threshold_selector: self.ce_threshold_selector,
            ce_threshold_mask: self.ce_threshold_mask,
            ..CodelConfig::default()
        }
    }
}

impl QdiscConfig for FqCodelConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        let field = |name: &str| format!("{path}.{name}");
        for (name, value) in [
            ("flows", self.flows as f64),
            ("limit", self.limit as f64),
            ("memory_limit", self.memory_limit.0 as f64),
            ("quantum", self.quantum.0 as f64),
            ("drop_batch", self.drop_batch as f64),
        ] {
            require_positive(&field(name), value)?;
        }
        self.codel().validate_at(field)
    }

    fn build(&self, _link: &LinkInfo, mut rng: Rng) -> Box<dyn QueueDisc> {
        let params = Params {
            codel: self.codel().params(),
            ce_threshold: self.codel().ce_threshold(),
            linux: self.profile == FqCodelProfile::Linux,
            flows: self.flows,
            limit: self.limit,
            memory_limit: self.memory_limit.0,
            quantum: self.quantum.0 as i64,
            drop_batch: self.drop_batch,
            // Linux draws its hash perturbation at setup; ours comes from the qdisc's own stream.
            perturbation: rng.gen(),
        };
        Box::new(FqCodel {
            queues: (0..self.flows)
                .map(|_| FlowQueue {
                    fifo: FlowFifo::default(),
                    codel: CodelState::new(&params.codel),
                    deficit: 0,
                    list: List::Inactive,
                })
                .collect(),
            params,
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            stats: FqCodelStats::default(),
        })
    }
}

/// Where a queue is in the scheduler (RFC 8290 §4.1.2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum List {
    #[default]
    Inactive,
    New,
    Old,
}

/// A flow queue's packets and their bytes, which the link does not count (it counts the whole
/// qdisc's): RFC 8290's CoDel reads them in its MTU test, the overflow drop to find the fattest
/// queue.
#[derive(Default)]
struct FlowFifo {
    fifo: Fifo,
    bytes: u64,
}

impl FlowFifo {
    fn push(&mut self, id: PacketId, packets: &PacketArena) {
        self.bytes += u64::from(packets[id].size);
        self.fifo.push(id);
    }
}

impl CodelQueue for FlowFifo {
    fn pop(&mut self, packets: &PacketArena) -> Option<PacketId> {
        let id = self.fifo.pop(packets)?;
        self.bytes -= u64::from(packets[id].size);
        Some(id)
    }

    fn bytes_behind(&self, _head: PacketId, _ctx: &QdiscCtx) -> u64 {
        self.bytes
    }
}

struct FlowQueue {
    fifo: FlowFifo,
    codel: CodelState,
    deficit: i64,
    list: List,
}

#[derive(Default)]
struct FqCodelStats {
    codel: CodelStats,
    /// Queues that joined the new list (Linux `new_flow_count`).
    new_flows: u64,
    /// Arrivals that found the queues over their limit (Linux `drop_overlimit`).
    overlimit: u64,
}

/// The parameters in effect, resolved once in `build`.
struct Params {
    /// Each queue's CoDel.
    codel: CodelParams,
    ce_threshold: Option<CeThreshold>,
    /// Linux's profile: the MTU test on the whole backlog, memory in truesize.
    linux: bool,
    /// Number of flow queues.
    flows: u32,
    /// Packets and bytes ([`FqCodel::charge`]) in all queues together.
    limit: u64,
    memory_limit: u64,
    /// DRR credit per round, bytes.
    quantum: i64,
    drop_batch: u32,
    /// The flow hash's key.
    perturbation: u64,
}

/// The parameters, then the queues and the scheduler's two lists, then the counters.
pub struct FqCodel {
    params: Params,
    queues: Vec<FlowQueue>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    stats: FqCodelStats,
}

impl FqCodel {
    /// What `packets` packets of `bytes` bytes count toward `memory_limit`: their bytes, or with
    /// `linux` their truesize.
    fn charge(&self, packets: u64, bytes: u64) -> u64 {
        let overhead = if self.params.linux { TRUESIZE_OVERHEAD } else { 0 };
        bytes + packets * overhead
    }

    /// Linux fq_codel_drop(): from the head of the queue holding the most bytes, up to
    /// `drop_batch` packets, until half its bytes are gone.
    fn drop_from_fattest(&mut self, ctx: &mut QdiscCtx) {
        let fattest = (0..self.queues.len())
            .max_by_key(|&i| self.queues[i].fifo.bytes)
            .expect("at least one queue");
        let queue = &mut self.queues[fattest];
        let threshold = queue.fifo.bytes / 2;
        let mut dropped_bytes = 0;
        for _ in 0..self.params.drop_batch {
            let Some(id) = queue.fifo.pop(ctx.packets) else { break };
            dropped_bytes += ctx.packets[id].size as u64;
            ctx.drop_packet(id, DropReason::Overflow);
            if dropped_bytes >= threshold {
                break;
            }
        }
    }
}

impl QueueDisc for FqCodel {
    fn enqueue(&mut self, id: PacketId, ctx: &mut QdiscCtx) -> Verdict {
        let p = ctx.packets[id];
        // §4.1.1: the queue of a flow (one direction of it), by a perturbed hash.
        let index = flow_hash(p.flow, p.kind, self.params.perturbation, self.params.flows);
        self.queues[index as usize].fifo.push(id, ctx.packets);
        let queue = &mut self.queues[index as usize];
        if queue.list == List::Inactive {
            // §4.1.2: a queue that becomes active joins the new list with a full quantum.
            queue.list = List::New;
            queue.deficit = self.params.quantum;
            self.new_flows.push_back(index);
            self.stats.new_flows += 1;
        }
        // The arrival counted in with what the link holds.
        let queued = ctx.backlog().with(p.size);
        let (packets, bytes) = (queued.packets as u64, queued.bytes);
        if packets > self.params.limit || self.charge(packets, bytes) > self.params.memory_limit {
            self.stats.overlimit += 1;
            self.drop_from_fattest(ctx);
        }
        // The arrival may itself have been dropped from the fattest queue: the engine
        // counts that drop through ctx.drop_packet, so the arrival is reported enqueued.
        Verdict::Enqueued
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        loop {
            // §4.2: new queues first, then old ones.
            let (index, from_new) = match (self.new_flows.front(), self.old_flows.front()) {
                (Some(&i), _) => (i, true),
                (None, Some(&i)) => (i, false),
                (None, None) => return None,
            };
            let queue = &mut self.queues[index as usize];
            let list = if from_new {
                &mut self.new_flows
            } else {
                &mut self.old_flows
            };
            if queue.deficit <= 0 {
                // Credit spent: more credit, to the tail of the old list.
                queue.deficit += self.params.quantum;
                list.pop_front();
                queue.list = List::Old;
                self.old_flows.push_back(index);
                continue;
            }
            let next = queue
                .codel
                .dequeue(&self.params.codel, &mut queue.fifo, ctx, &mut self.stats.codel);
            let Some(id) = next else {
                list.pop_front();
                if from_new && !self.old_flows.is_empty() {
                    // §4.2: an emptied new queue goes to the old list, not straight out.
                    queue.list = List::Old;
                    self.old_flows.push_back(index);
                } else {
                    queue.list = List::Inactive;
                }
                continue;
            };
            queue.deficit -= ctx.packets[id].size as i64;
            if let Some(step) = &self.params.ce_threshold {
                step.apply(id, ctx, &mut self.stats.codel);
            }
            return Some(id);
        }
    }

    fn can_mark(&self) -> bool {
        true
    }

    fn counters(&self) -> Vec<(&'static str, f64)> {
        let mut counters = vec![
            ("dropping_entries", self.stats.codel.dropping_entries as f64),
            ("new_flows", self.stats.new_flows as f64),
            ("overlimit", self.stats.overlimit as f64),
        ];
        if self.params.ce_threshold.is_some() {
            counters.push(("ce_mark", self.stats.codel.ce_marks as f64));
        }
        counters
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Packet;
    use crate::qdisc::testing::{link, QdiscHarness, MS};
    use crate::rng::stream;
    use crate::time::Time;

    const LINK: LinkInfo = link(10e6);

    fn fq(config: FqCodelConfig) -> QdiscHarness<dyn QueueDisc> {
        QdiscHarness::new(config.build(&LINK, stream(1, "fq_codel")))
    }

    fn packet(flow: u32, size: u32, t: Time) -> Packet {
        Packet {
            flow,
            size,
            enqueued_at: t,
            ..Default::default()
        }
    }

    #[test]
    fn a_sparse_flow_is_served_before_a_backlogged_one() {
        let mut h = fq(FqCodelConfig::default());
        for _ in 0..100 {
            h.offer(0, packet(1, 1500, 0));
        }
        // The bulk queue has been served for a while and sits on the old list.
        for ms in 1..=10 {
            assert_eq!(h.depart_flow(ms * MS), 1);
        }
        h.offer(11 * MS, packet(2, 100, 11 * MS));
        assert_eq!(h.depart_flow(11 * MS), 2, "the new queue goes first");
        assert_eq!(h.depart_flow(12 * MS), 1);
    }

    #[test]
    fn backlogged_queues_share_bytes_equally_whatever_their_packet_sizes() {
        let mut h = fq(FqCodelConfig::default());
        for _ in 0..3000 {
            // Flow 1 sends 1500-byte packets, flow 2 300-byte ones; both always backlogged.
            // They all arrive at 0, before the first departure (so no sojourn is negative).
            h.offer(0, packet(1, 1500, 0));
            for _ in 0..5 {
                h.offer(0, packet(2, 300, 0));
            }
        }
        let mut bytes = [0u64; 3];
        // Serve 1 MB within a few ms of arrival (no CoDel drops: sojourns stay small).
        for k in 0..1200 {
            let p = h.depart(k * MS / 100).expect("backlogged");
            bytes[p.flow as usize] += p.size as u64;
        }
        let share = bytes[1] as f64 / (bytes[1] + bytes[2]) as f64;
        // DRR with a 1514-byte quantum: each round gives each queue one quantum, ± one packet.
        assert!((share - 0.5).abs() < 0.01, "{bytes:?}");
    }

    #[test]
    fn overflow_drops_from_the_fattest_queue() {
        let mut h = fq(FqCodelConfig {
            limit: 100,
            ..Default::default()
        });
        for _ in 0..90 {
            h.offer(0, packet(1, 1000, 0));
        }
        for _ in 0..10 {
            h.offer(0, packet(2, 1000, 0));
        }
        assert_eq!(h.drops(DropReason::Overflow), 0);
        h.offer(0, packet(2, 1000, 0));
        // 101 > 100 packets: half of flow 1's 90 000 bytes at most, capped at 64 packets.
        assert_eq!(h.drops(DropReason::Overflow), 45);
        assert!(h.dropped.iter().all(|(p, _)| p.flow == 1));
        assert_eq!(h.backlog.packets, 101 - 45);
    }

    #[test]
    fn linux_counts_memory_in_truesize() {
        // 19 000 bytes of memory: 19 packets of 1000 bytes by length, but 10 by truesize (1900 each).
        let overflows_at = |profile| {
            let mut h = fq(FqCodelConfig {
                profile,
                memory_limit: Bytes(19_000),
                ..Default::default()
            });
            (1..100).find(|_| {
                h.offer(0, packet(1, 1000, 0));
                h.drops(DropReason::Overflow) > 0
            })
        };
        assert_eq!(overflows_at(FqCodelProfile::Rfc8290), Some(20));
        assert_eq!(overflows_at(FqCodelProfile::Linux), Some(11));
    }

    #[test]
    fn ce_threshold_marks_ect_packets_above_it_whatever_codels_state() {
        use crate::packet::Ecn;
        let step = |selector, mask| FqCodelConfig {
            profile: FqCodelProfile::Linux,
            ce_threshold: Some(Seconds(0.001)),
            ce_threshold_selector: selector,
            ce_threshold_mask: mask,
            ..Default::default()
        };
        // Sojourns of 0.5 and 1.5 ms, well under CoDel's 5 ms target: only the step can mark.
        let marked = |config: FqCodelConfig, ecn: Ecn, sojourn: Time| {
            let mut h = fq(config);
            h.offer(
                0,
                Packet {
                    ecn,
                    ..packet(1, 1000, 0)
                },
            );
            (
                h.depart(sojourn).expect("queued").ecn == Ecn::Ce,
                h.q.counters().last().copied(),
            )
        };
        assert_eq!(marked(step(0, 0), Ecn::Ect0, MS / 2), (false, Some(("ce_mark", 0.0))));
        assert_eq!(
            marked(step(0, 0), Ecn::Ect0, 3 * MS / 2),
            (true, Some(("ce_mark", 1.0)))
        );
        assert!(!marked(step(0, 0), Ecn::NotEct, 3 * MS / 2).0);
        // ce_threshold_selector 0x1/0x3: ECT(1) only.
        assert!(marked(step(1, 3), Ecn::Ect1, 3 * MS / 2).0);
        assert!(!marked(step(1, 3), Ecn::Ect0, 3 * MS / 2).0);
        // Without ce_threshold there is no such counter (results of other runs keep their columns).
        let counters = fq(FqCodelConfig::default()).q.counters();
        assert!(counters.iter().all(|(name, _)| *name != "ce_mark"));
        let err = step(1, 2).validate("q").unwrap_err().to_string();
        assert!(
            err.starts_with("q.ce_threshold_selector: has bits outside ce_threshold_mask"),
            "{err}"
        );
    }

    #[test]
    fn errors_name_the_field() {
        let err = FqCodelConfig {
            quantum: Bytes(0),
            ..Default::default()
        }
        .validate("q")
        .unwrap_err()
        .to_string();
        assert!(err.starts_with("q.quantum: must be > 0"), "{err}");
    }
}
