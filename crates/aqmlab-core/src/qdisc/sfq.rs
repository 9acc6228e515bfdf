//! SFQ, Stochastic Fairness Queueing (McKenney, INFOCOM 1990), in two variants
//! ([`SfqVariant`]): Linux's `net/sched/sch_sfq.c` (the default, here) and ns-2.35's
//! queue/sfq.cc (`variant = "ns2"`, [`super::sfq_ns2`]), which share only the idea.
//!
//! Linux: each packet is hashed by flow (and direction) into one of `divisor` buckets; each bucket
//! with packets is a queue, and at most `flows` queues are active at once (a packet that
//! would need one more is dropped). The active queues are served round robin with a credit of
//! `quantum` bytes per turn (Linux's allot: a queue whose credit is spent goes to the back with
//! one more quantum). When `limit` packets are queued, an arrival makes SFQ drop the tail
//! packet of the longest queue (sfq_drop()). Every `perturb` seconds the hash is re-keyed
//! (0: never); packets already queued stay in their bucket, as in the original SFQ (Linux
//! since 3.3 also moves them). Flows that land in a bucket another flow is using collide:
//! they share one queue's share, which `colliding_flows` counts.

use super::buckets::{flow_hash, Collisions};
use super::sfq_ns2::SfqNs2;
use super::{DropReason, Fifo, LinkInfo, QdiscConfig, QdiscCtx, QueueDisc, Verdict};
use crate::error::ScenarioError;
use crate::packet::PacketId;
use crate::rng::Rng;
use crate::time::{from_secs, Time};
use crate::units::{Bytes, Seconds};
use crate::validate::{require_non_negative, require_positive};
use rand::Rng as _;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, VecDeque};

/// Which SFQ runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SfqVariant {
    /// Linux sch_sfq: a byte quantum per turn; over the limit the longest queue's tail is dropped.
    #[default]
    Linux,
    /// ns-2.35 queue/sfq.cc: one packet per turn; an arrival whose queue holds half the free
    /// buffer is refused.
    Ns2,
}

/// `type = "sfq"`; every field optional. `divisor` and `limit` default by variant; `flows`,
/// `quantum` and `perturb` are Linux's alone.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct SfqConfig {
    pub variant: SfqVariant,
    /// Hash buckets: linux 1024 (`divisor`), ns2 16 (`buckets_`).
    pub divisor: Option<u32>,
    /// Queues active at once: 128 (`flows`).
    pub flows: Option<u32>,
    /// Packets in all queues: linux 127 (`limit`), ns2 40 (`maxqueue_`).
    pub limit: Option<u64>,
    /// Credit per turn: 1514 bytes, one Ethernet MTU (`quantum`).
    pub quantum: Option<Bytes>,
    /// Re-key the hash this often: 0 s, never (`perturb`).
    pub perturb: Option<Seconds>,
}

/// Linux sch_sfq.c's defaults.
const LINUX_DIVISOR: u32 = 1024;
const LINUX_FLOWS: u32 = 128;
const LINUX_LIMIT: u64 = 127;
const LINUX_QUANTUM: Bytes = Bytes(1514);
/// ns-2.35 SFQ::SFQ(): `buckets_ = 16`, `maxqueue_ = 40`.
const NS2_BUCKETS: u32 = 16;
const NS2_LIMIT: u64 = 40;

impl SfqConfig {
    fn divisor(&self) -> u32 {
        self.divisor.unwrap_or(match self.variant {
            SfqVariant::Linux => LINUX_DIVISOR,
            SfqVariant::Ns2 => NS2_BUCKETS,
        })
    }

    fn limit(&self) -> u64 {
        self.limit.unwrap_or(match self.variant {
            SfqVariant::Linux => LINUX_LIMIT,
            SfqVariant::Ns2 => NS2_LIMIT,
        })
    }

    /// The table with every default filled in (`net::resolved`): the variant's divisor and
    /// limit and, for linux, `flows`, `quantum` and `perturb` (which ns2 has not).
    pub fn resolved(&self) -> Self {
        let linux = self.variant == SfqVariant::Linux;
        SfqConfig {
            variant: self.variant,
            divisor: Some(self.divisor()),
            limit: Some(self.limit()),
            flows: linux.then(|| self.flows.unwrap_or(LINUX_FLOWS)),
            quantum: linux.then(|| self.quantum.unwrap_or(LINUX_QUANTUM)),
            perturb: linux.then(|| self.perturb.unwrap_or(Seconds(0.0))),
        }
    }
}

impl QdiscConfig for SfqConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        let field = |name: &str| format!("{path}.{name}");
        require_positive(&field("divisor"), self.divisor() as f64)?;
        require_positive(&field("limit"), self.limit() as f64)?;
        if self.variant == SfqVariant::Ns2 {
            let linux_only = [
                ("flows", self.flows.is_some()),
                ("quantum", self.quantum.is_some()),
                ("perturb", self.perturb.is_some()),
            ];
            if let Some((name, _)) = linux_only.into_iter().find(|&(_, written)| written) {
                return Err(ScenarioError::new(
                    field(name),
                    "only the linux variant has it; ns-2's SFQ takes limit and divisor",
                ));
            }
        }
        require_positive(&field("flows"), self.flows.unwrap_or(LINUX_FLOWS) as f64)?;
        require_positive(&field("quantum"), self.quantum.unwrap_or(LINUX_QUANTUM).0 as f64)?;
        require_non_negative(&field("perturb"), self.perturb.unwrap_or(Seconds(0.0)))
    }

    fn build(&self, _link: &LinkInfo, mut rng: Rng) -> Box<dyn QueueDisc> {
        if self.variant == SfqVariant::Ns2 {
            return Box::new(SfqNs2::new(self.limit(), self.divisor()));
        }
        let perturb = from_secs(self.perturb.map_or(0.0, |p| p.0));
        Box::new(Sfq {
            divisor: self.divisor(),
            max_active: self.flows.unwrap_or(LINUX_FLOWS) as usize,
            limit: self.limit(),
            quantum: self.quantum.unwrap_or(LINUX_QUANTUM).0 as i64,
            perturb,
            key: rng.gen(),
            next_perturbation: perturb,
            rng,
            slots: HashMap::new(),
            active: VecDeque::new(),
            collisions: Collisions::default(),
        })
    }
}

/// One active bucket's queue.
#[derive(Default)]
struct Slot {
    fifo: Fifo,
    allot: i64,
}

pub struct Sfq {
    divisor: u32,
    max_active: usize,
    limit: u64,
    quantum: i64,
    perturb: Time,
    key: u64,
    next_perturbation: Time,
    rng: Rng,
    /// The active buckets' queues, and their round-robin order.
    slots: HashMap<u32, Slot>,
    active: VecDeque<u32>,
    collisions: Collisions,
}

impl Sfq {
    fn rekey(&mut self, now: Time) {
        while self.perturb > 0 && now >= self.next_perturbation {
            self.key = self.rng.gen();
            self.collisions.rekeyed();
            self.next_perturbation += self.perturb;
        }
    }

    /// sfq_drop(): the tail packet of the longest queue.
    fn drop_from_longest(&mut self, ctx: &mut QdiscCtx) {
        let Some((&bucket, _)) = self
            .slots
            .iter()
            .max_by_key(|(&b, s)| (s.fifo.len(), std::cmp::Reverse(b)))
        else {
            return;
        };
        let slot = self.slots.get_mut(&bucket).expect("found above");
        let id = slot.fifo.pop_back().expect("the longest queue has a packet");
        ctx.drop_packet(id, DropReason::Overflow);
        if slot.fifo.is_empty() {
            self.slots.remove(&bucket);
            self.active.retain(|&b| b != bucket);
        }
    }
}

impl QueueDisc for Sfq {
    fn enqueue(&mut self, id: PacketId, ctx: &mut QdiscCtx) -> Verdict {
        self.rekey(ctx.now);
        let p = ctx.packets[id];
        let bucket = flow_hash(p.flow, p.kind, self.key, self.divisor);
        self.collisions.note(bucket, p.flow);
        if !self.slots.contains_key(&bucket) {
            if self.slots.len() >= self.max_active {
                return Verdict::Dropped(DropReason::Overflow);
            }
            self.slots.insert(
                bucket,
                Slot {
                    fifo: Fifo::default(),
                    allot: self.quantum,
                },
            );
            self.active.push_back(bucket);
        }
        self.slots.get_mut(&bucket).expect("inserted above").fifo.push(id);
        // The arrival counted in with what the link holds.
        if ctx.backlog().with(p.size).packets as u64 > self.limit {
            self.drop_from_longest(ctx);
        }
        Verdict::Enqueued
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        self.rekey(ctx.now);
        loop {
            let &bucket = self.active.front()?;
            let slot = self.slots.get_mut(&bucket).expect("active buckets have a slot");
            if slot.allot <= 0 {
                // Credit spent: one more quantum, to the back of the round.
                slot.allot += self.quantum;
                self.active.rotate_left(1);
                continue;
            }
            let id = slot.fifo.pop(ctx.packets).expect("active slots hold packets");
            let size = ctx.packets[id].size;
            slot.allot -= size as i64;
            if slot.fifo.is_empty() {
                self.slots.remove(&bucket);
                self.active.pop_front();
            }
            return Some(id);
        }
    }

    fn counters(&self) -> Vec<(&'static str, f64)> {
        vec![("colliding_flows", self.collisions.count() as f64)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Packet;
    use crate::qdisc::testing::{link, QdiscHarness};
    use crate::rng::stream;

    const LINK: LinkInfo = link(10e6);

    fn sfq(config: SfqConfig) -> QdiscHarness<dyn QueueDisc> {
        QdiscHarness::new(config.build(&LINK, stream(1, "sfq")))
    }

    fn packet(flow: u32, size: u32) -> Packet {
        Packet {
            flow,
            size,
            ..Default::default()
        }
    }

    #[test]
    fn backlogged_flows_share_bytes_equally() {
        let mut h = sfq(SfqConfig {
            limit: Some(10_000),
            ..Default::default()
        });
        for _ in 0..2000 {
            h.offer(0, packet(1, 1500));
            for _ in 0..5 {
                h.offer(0, packet(2, 300));
            }
        }
        let mut bytes = [0u64; 3];
        for _ in 0..1500 {
            let p = h.depart(0).expect("backlogged");
            bytes[p.flow as usize] += p.size as u64;
        }
        // One quantum per turn each, ± one packet per round.
        let share = bytes[1] as f64 / (bytes[1] + bytes[2]) as f64;
        assert!((share - 0.5).abs() < 0.01, "{bytes:?}");
    }

    #[test]
    fn a_full_queue_drops_the_tail_of_the_longest() {
        let mut h = sfq(SfqConfig::default());
        for _ in 0..100 {
            h.offer(0, packet(1, 1000));
        }
        for _ in 0..27 {
            h.offer(0, packet(2, 1000));
        }
        assert_eq!(h.drops(DropReason::Overflow), 0);
        h.offer(0, packet(2, 1000));
        // 128 > 127: flow 1's queue (100) is the longest.
        assert_eq!(h.drops(DropReason::Overflow), 1);
        assert_eq!(h.dropped[0].0.flow, 1);
        assert_eq!(h.backlog.packets, 127);
    }

    #[test]
    fn few_buckets_make_flows_collide() {
        let collisions = |divisor: u32| {
            let mut h = sfq(SfqConfig {
                divisor: Some(divisor),
                ..Default::default()
            });
            for flow in 0..32 {
                h.offer(0, packet(flow, 1000));
            }
            h.q.counters()[0].1
        };
        // A flow is alone in its bucket with probability (1 − 1/buckets)^31. In 8 buckets that is
        // 0.016: 0.5 lone flows expected, so at least 27 of 32 collide (5 alone is a ~1e-4 event);
        // in 1024 buckets 0.97, so 0.96 colliding flows are expected and more than 6 is ~1e-4.
        assert!(collisions(8) >= 27.0, "{}", collisions(8));
        assert!(collisions(1024) <= 6.0, "{}", collisions(1024));
    }

    #[test]
    fn errors_name_the_field() {
        let err = SfqConfig {
            flows: Some(0),
            ..Default::default()
        }
        .validate("q")
        .unwrap_err()
        .to_string();
        assert!(err.starts_with("q.flows: must be > 0"), "{err}");
        let err = SfqConfig {
            variant: SfqVariant::Ns2,
            quantum: Some(Bytes(1000)),
            ..Default::default()
        }
        .validate("q")
        .unwrap_err()
        .to_string();
        assert_eq!(
            err,
            "q.quantum: only the linux variant has it; ns-2's SFQ takes limit and divisor"
        );
    }
}
