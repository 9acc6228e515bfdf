//! SFQ as ns-2.35 runs it (`Queue/SFQ`, queue/sfq.cc; McKenney, INFOCOM 1990): the
//! `variant = "ns2"` of `type = "sfq"` ([`super::sfq::SfqConfig`]), which the papers' ns-2 ran.
//!
//! Each packet goes to one of `buckets` FIFOs by a hash of its source and destination node
//! (hash() below; ns-2's node addresses are aqmlab's node indices, as the exporter numbers them).
//! The non-empty FIFOs form a ring served one packet per turn, whatever its size; a FIFO that
//! receives its first packet joins the ring just behind the one being served, and leaves it
//! when it empties. An arrival is refused when, with `used` packets in its FIFO and `left` =
//! limit − packets queued (the one on the link not counted):
//! - `used ≥ ⌊left / 2⌋`: its FIFO already holds half the free buffer, or
//! - `left < buckets` and `used > ⌊limit / buckets⌋`: the buffer is nearly full and the FIFO holds
//!   more than an equal share, or
//! - `left ≤ 0`.
//!
//! So no packet is ever pushed out, and a lone flow holds at most about a third of the buffer.
//! Flows whose node pairs meet in a bucket share one FIFO, as in ns-2 (`colliding_flows`).

use super::buckets::Collisions;
use super::{DropReason, Fifo, QdiscCtx, QueueDisc, Verdict};
use crate::packet::{NodeId, PacketId};
use std::collections::{HashMap, VecDeque};

/// sfq.cc hash(): `k = saddr + daddr`, `(k + (k >> 8) + ~(k >> 4)) % ((2 << 19) - 1)` in C's int
/// arithmetic ("modulo a large prime"), before the modulo by `buckets_`. Non-negative for k ≥ 1,
/// which two distinct nodes always give.
pub fn hash(src: NodeId, dst: NodeId) -> u32 {
    let k = i64::from(src) + i64::from(dst);
    // Rust's `%` truncates as C's does.
    ((k + (k >> 8) + !(k >> 4)) % ((2 << 19) - 1)) as u32
}

pub struct SfqNs2 {
    // Parameters.
    /// `maxqueue_`: packets in all FIFOs.
    limit: i64,
    /// `buckets_`.
    buckets: u32,
    /// `fairshare = maxqueue_ / buckets_`, in whole packets.
    fair_share: i64,
    // Variables.
    /// The non-empty FIFOs by bucket, and the ring of their buckets: the front is `active`, served next.
    fifos: HashMap<u32, Fifo>,
    ring: VecDeque<u32>,
    // Measurement only.
    collisions: Collisions,
}

impl SfqNs2 {
    pub fn new(limit: u64, buckets: u32) -> Self {
        // ns-2 counts in C ints; a limit beyond i64 is as good as unbounded.
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        SfqNs2 {
            limit,
            buckets,
            fair_share: limit / i64::from(buckets),
            fifos: HashMap::new(),
            ring: VecDeque::new(),
            collisions: Collisions::default(),
        }
    }

    /// sfq.cc enque()'s drop test for an arrival to a FIFO holding `used` packets, with `occupied`
    /// packets in all FIFOs.
    fn refuses(&self, used: i64, occupied: i64) -> bool {
        let left = self.limit - occupied;
        used >= left >> 1 || (left < i64::from(self.buckets) && used > self.fair_share) || left <= 0
    }
}

impl QueueDisc for SfqNs2 {
    fn enqueue(&mut self, id: PacketId, ctx: &mut QdiscCtx) -> Verdict {
        let p = ctx.packets[id];
        let bucket = hash(p.src, p.dst) % self.buckets;
        self.collisions.note(bucket, p.flow);
        let used = self.fifos.get(&bucket).map_or(0, |f| f.len() as i64);
        if self.refuses(used, ctx.backlog().packets as i64) {
            return Verdict::Dropped(DropReason::Overflow);
        }
        // activate(): a FIFO that was empty joins the ring just behind the one being served.
        let fifo = self.fifos.entry(bucket).or_insert_with(|| {
            self.ring.push_back(bucket);
            Fifo::default()
        });
        fifo.push(id);
        Verdict::Enqueued
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        let &bucket = self.ring.front()?;
        let fifo = self.fifos.get_mut(&bucket).expect("ring buckets have a FIFO");
        let id = fifo.pop(ctx.packets).expect("ring FIFOs hold packets");
        // One packet per turn: an emptied FIFO leaves the ring (idle()), any other goes to its back.
        if fifo.is_empty() {
            self.fifos.remove(&bucket);
            self.ring.pop_front();
        } else {
            self.ring.rotate_left(1);
        }
        Some(id)
    }

    fn counters(&self) -> Vec<(&'static str, f64)> {
        vec![("colliding_flows", self.collisions.count() as f64)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{FlowId, Packet};
    use crate::qdisc::testing::QdiscHarness;

    /// Flow `flow` from node `src` to node 1 (buckets below: hash(src, 1) = src for 1 ≤ src ≤ 14).
    fn packet(flow: FlowId, src: NodeId, size: u32) -> Packet {
        Packet {
            flow,
            src,
            dst: 1,
            size,
            ..Default::default()
        }
    }

    fn sfq(limit: u64, buckets: u32) -> QdiscHarness<SfqNs2> {
        QdiscHarness::new(Box::new(SfqNs2::new(limit, buckets)))
    }

    #[test]
    fn the_hash_is_ns2s() {
        // k = 15: 15 + 0 + ~0 = 14; k = 300: 300 + 1 + ~18 = 282; k = 40: 40 + 0 + ~2 = 37.
        assert_eq!((hash(14, 1), hash(100, 200), hash(2, 38)), (14, 282, 37));
        assert_eq!(hash(1, 14), hash(14, 1));
    }

    #[test]
    fn an_arrival_is_refused_when_its_fifo_holds_half_the_free_buffer() {
        // limit 8, 2 buckets (fair share 4): the left-< buckets rule never applies before the half rule.
        let mut h = sfq(8, 2);
        let admitted = |h: &mut QdiscHarness<SfqNs2>, src| {
            (0..8)
                .take_while(|_| h.offer(0, packet(src, src, 1000)).0 == Verdict::Enqueued)
                .count()
        };
        // Flow 3 (bucket 1): used 0, 1, 2 against ⌊8/2⌋, ⌊7/2⌋, ⌊6/2⌋; the 4th (3 ≥ ⌊5/2⌋) is refused.
        assert_eq!(admitted(&mut h, 3), 3);
        // Flow 4 (bucket 0) finds 5 free: 0 < 2, 1 < 2, then 2 ≥ ⌊3/2⌋.
        assert_eq!(admitted(&mut h, 4), 2);
        assert_eq!((h.backlog.packets, h.drops(DropReason::Overflow)), (5, 2));
    }

    #[test]
    fn near_full_a_fifo_above_its_equal_share_is_refused() {
        // limit 20, 16 buckets: fair share 1. A lone flow's 6th packet finds left 15 < 16 and
        // used 5 > 1: refused, though it holds less than half the free buffer (5 < ⌊15/2⌋).
        let mut h = sfq(20, 16);
        let verdicts: Vec<_> = (0..6).map(|_| h.offer(0, packet(1, 3, 1000)).0).collect();
        assert_eq!(verdicts.iter().filter(|&&v| v == Verdict::Enqueued).count(), 5);
        assert_eq!(verdicts[5], Verdict::Dropped(DropReason::Overflow));
    }

    #[test]
    fn one_packet_per_turn_and_newcomers_join_behind_the_one_served() {
        let mut h = sfq(100, 16);
        // Flow 1's packets are five times flow 2's: still one each per turn (Linux's SFQ would send by bytes).
        for _ in 0..3 {
            h.offer(0, packet(1, 3, 1500));
        }
        for _ in 0..2 {
            h.offer(0, packet(2, 4, 300));
        }
        assert_eq!(h.depart_flow(0), 1);
        // Flow 3 arrives while flow 2 is at the front: it joins behind flow 1, the ring's last.
        h.offer(0, packet(3, 5, 1000));
        let order: Vec<_> = (0..5).map(|_| h.depart_flow(0)).collect();
        assert_eq!(order, vec![2, 1, 3, 2, 1]);
        assert!(h.depart(0).is_none());
    }

    #[test]
    fn flows_whose_nodes_meet_in_a_bucket_share_a_fifo() {
        // hash(3, 1) = 3 and hash(20, 1) = 21 + 0 + ~1 = 19: the same bucket of 16.
        let mut h = sfq(100, 16);
        h.offer(0, packet(1, 3, 1000));
        h.offer(0, packet(2, 20, 1000));
        h.offer(0, packet(3, 4, 1000));
        assert_eq!((0..3).map(|_| h.depart_flow(0)).collect::<Vec<_>>(), vec![1, 3, 2]);
        assert_eq!(h.q.counters(), vec![("colliding_flows", 2.0)]);
    }
}
