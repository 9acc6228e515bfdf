//! Deficit Round Robin (Shreedhar & Varghese, SIGCOMM 1995) with longest-queue
//! drop, the fairness yardstick of the CSFQ paper (§3: "when the buffer is full
//! the packet from the longest queue is dropped").
//!
//! Each flow (flow id) has its own FIFO, created on first use. Flows with
//! packets wait in an active list; the flow at its head may send while its
//! deficit covers the head packet, otherwise it earns `quantum` more bytes and
//! moves to the tail. A flow whose queue empties leaves the list and forgets
//! its deficit.
//!
//! Quantum: at least the largest packet keeps the work per packet O(1)
//! (Shreedhar–Varghese); much more than the packet size costs a flow that
//! keeps emptying its queue the deficit it forfeits (with 1000-byte packets and
//! a 1500-byte quantum, flow 0 of CSFQ Fig. 3a, which sends exactly its fair
//! share, got 15 % less than its share instead of 5 %).
//!
//! Buffer: one shared bound (`limit` packets and/or `limit_bytes`) with
//! longest-queue drop (`pushout.rs`, shared with LQD). As ns-2's `Queue/DRR`
//! (which the CSFQ paper ran) does, an arrival is always admitted and, while
//! the bound is exceeded, the packet at the head of the longest queue in bytes
//! is pushed out (`DropReason::Pushout`); that can be the arrival itself when
//! it is alone in the longest queue. `pushout = "tail"` drops the longest
//! queue's newest packet instead. Ties go to the first flow in round-robin order.

use super::pushout::{End, FlowBacklog, Occupancy, PushOut};
use super::{Limit, LinkInfo, QdiscConfig, QdiscCtx, QueueDisc, Verdict};
use crate::error::ScenarioError;
use crate::packet::PacketId;
use crate::rng::Rng;
use crate::units::Bytes;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct DrrConfig {
    /// Shared buffer in packets and/or bytes; with neither, 64 KB (CSFQ §3).
    pub limit: Option<u64>,
    pub limit_bytes: Option<Bytes>,
    /// Bytes a flow earns per round; default 1000, the CSFQ experiments' packet size (§3.4: "1 packet = 1 KB").
    pub quantum: Bytes,
    /// End of the longest queue that loses a packet: `"head"` (ns-2 `Queue/DRR`) or `"tail"`.
    pub pushout: End,
}

impl Default for DrrConfig {
    fn default() -> Self {
        DrrConfig {
            limit: None,
            limit_bytes: None,
            quantum: Bytes(1000),
            pushout: End::Head,
        }
    }
}

impl DrrConfig {
    /// "a buffer of 64 KB" (CSFQ §3).
    pub const DEFAULT_LIMIT_BYTES: u64 = 64_000;

    fn limit(&self) -> Limit {
        Limit::configured(
            self.limit,
            self.limit_bytes.map(|b| b.0),
            Limit::new(None, Some(Self::DEFAULT_LIMIT_BYTES)),
        )
    }

    /// The table with every default filled in (`net::resolved`): the shared buffer.
    pub fn resolved(&self) -> Self {
        let limit = self.limit();
        DrrConfig {
            limit: limit.packets,
            limit_bytes: limit.bytes.map(Bytes),
            ..self.clone()
        }
    }
}

impl QdiscConfig for DrrConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        self.limit().validate(path)?;
        if self.quantum.0 == 0 {
            return Err(ScenarioError::new(
                format!("{path}.quantum"),
                "must be > 0 bytes, got 0",
            ));
        }
        Ok(())
    }

    fn build(&self, _link: &LinkInfo, _rng: Rng) -> Box<dyn QueueDisc> {
        Box::new(Drr::new(self))
    }
}

/// DRR's parameters in effect.
#[derive(Clone, Copy, Debug)]
struct Params {
    /// The shared buffer and its longest-queue drop (in bytes, as ns-2).
    pushout: PushOut,
    /// Bytes.
    quantum: u64,
}

pub struct Drr {
    params: Params,
    /// Per-flow queues, each flow with its deficit (bytes); the active flows in round-robin order.
    backlog: FlowBacklog<u64>,
}

impl Drr {
    pub fn new(config: &DrrConfig) -> Self {
        Drr {
            params: Params {
                pushout: PushOut {
                    limit: config.limit(),
                    longest_by: Occupancy::Bytes,
                    end: config.pushout,
                },
                quantum: config.quantum.0,
            },
            backlog: FlowBacklog::default(),
        }
    }
}

impl QueueDisc for Drr {
    fn enqueue(&mut self, id: PacketId, ctx: &mut QdiscCtx) -> Verdict {
        if self.backlog.push(id, ctx) {
            // A flow joining the round starts with one quantum (Shreedhar–Varghese Fig. 3).
            *self.backlog.state_mut(ctx.packets[id].flow) = self.params.quantum;
        }
        // Longest-queue drop (CSFQ §3; ns-2 drops the head of the longest queue in bytes).
        self.params.pushout.enforce(&mut self.backlog, id, ctx)
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        loop {
            let flow = self.backlog.first_active()?;
            let (_, head) = self.backlog.head(flow).expect("active flows have packets");
            let size = ctx.packets[head].size as u64;
            let deficit = self.backlog.state_mut(flow);
            if size <= *deficit {
                *deficit -= size;
                return Some(self.backlog.take(flow, End::Head, ctx));
            }
            // Not enough deficit: earn a quantum and wait for the next round.
            *deficit += self.params.quantum;
            self.backlog.rotate();
        }
    }

    fn counters(&self) -> Vec<(&'static str, f64)> {
        // Most flows ever queued at once: the size of the per-flow state in use.
        vec![("peak_active_flows", self.backlog.peak_active() as f64)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Packet;
    use crate::qdisc::testing::QdiscHarness;
    use crate::qdisc::DropReason;
    use DropReason::Pushout;
    use Verdict::{Dropped, Enqueued};

    fn drr(limit: Option<u64>, quantum: u64) -> QdiscHarness<Drr> {
        QdiscHarness::new(Box::new(Drr::new(&DrrConfig {
            limit,
            quantum: Bytes(quantum),
            ..Default::default()
        })))
    }

    /// A packet of `size` bytes, told apart from its flow's others by `seq`.
    fn packet(flow: u32, size: u32, seq: u64) -> Packet {
        Packet {
            flow,
            size,
            seq,
            ..Default::default()
        }
    }

    /// The pushed-out packets so far, as (flow, seq, reason).
    fn pushed_out(h: &QdiscHarness<Drr>) -> Vec<(u32, u64, DropReason)> {
        h.dropped.iter().map(|(p, reason)| (p.flow, p.seq, *reason)).collect()
    }

    #[test]
    fn serves_bytes_not_packets_per_round() {
        // Quantum 1500: per round flow 0 sends one 1500-byte packet, flow 1 three of 500.
        let mut h = drr(None, 1500);
        for i in 0..6 {
            assert_eq!(h.offer(0, packet(0, 1500, i)).0, Enqueued);
            for k in 0..3 {
                assert_eq!(h.offer(0, packet(1, 500, 3 * i + k)).0, Enqueued);
            }
        }
        let mut order = Vec::new();
        while let Some(p) = h.depart(0) {
            order.push(p.flow);
        }
        assert_eq!(&order[..8], &[0, 1, 1, 1, 0, 1, 1, 1]);
        assert_eq!(order.len(), 24);
        assert_eq!((h.backlog.packets, h.backlog.bytes), (0, 0));
        assert_eq!(h.q.counters(), vec![("peak_active_flows", 2.0)]);
    }

    #[test]
    fn full_buffer_pushes_out_the_head_of_the_longest_queue() {
        let mut h = drr(Some(4), 1500);
        for seq in 0..3 {
            h.offer(0, packet(7, 1000, seq));
        }
        h.offer(0, packet(2, 1000, 0));
        // Buffer full (4 packets): an arrival of a short flow is admitted, flow 7 loses its head.
        assert_eq!(h.offer(0, packet(2, 1000, 1)).0, Enqueued);
        assert_eq!(pushed_out(&h), vec![(7, 0, Pushout)]);
        // Flows 7 and 2 now tie at 2 packets; a third flow's arrival hits the first in round order (7).
        assert_eq!(h.offer(0, packet(3, 1000, 0)).0, Enqueued);
        assert_eq!(pushed_out(&h)[1], (7, 1, Pushout));
        // ns-2 drops the head, not the tail, of the longest queue, even when the arrival made it longest.
        let mut h = drr(Some(1), 1500);
        assert_eq!(h.offer(0, packet(1, 1000, 0)).0, Enqueued);
        assert_eq!(h.offer(0, packet(1, 1000, 1)).0, Enqueued);
        assert_eq!(pushed_out(&h), vec![(1, 0, Pushout)]);
        // The arrival is the victim when it alone forms the longest queue (1500 > 1000 bytes).
        assert_eq!(h.offer(0, packet(4, 1500, 0)).0, Dropped(Pushout));
        assert_eq!(pushed_out(&h).len(), 1);
        assert_eq!(h.depart(0).map(|p| (p.flow, p.seq)), Some((1, 1)));
        assert!(h.depart(0).is_none());
    }

    #[test]
    fn tail_pushout_drops_the_newest_packet_of_the_longest_queue() {
        let mut h = QdiscHarness::new(Box::new(Drr::new(&DrrConfig {
            limit: Some(4),
            pushout: End::Tail,
            ..Default::default()
        })));
        for seq in 0..3 {
            h.offer(0, packet(7, 1000, seq));
        }
        h.offer(0, packet(2, 1000, 0));
        assert_eq!(h.offer(0, packet(2, 1000, 1)).0, Enqueued);
        assert_eq!(pushed_out(&h), vec![(7, 2, Pushout)]);
        // An arrival that makes its own queue the longest is itself the newest packet there.
        assert_eq!(h.offer(0, packet(2, 1000, 2)).0, Dropped(Pushout));
        assert_eq!(pushed_out(&h).len(), 1);
    }

    #[test]
    fn validation_names_the_field() {
        let err = DrrConfig {
            quantum: Bytes(0),
            ..Default::default()
        }
        .validate("q")
        .unwrap_err();
        assert_eq!(err.to_string(), "q.quantum: must be > 0 bytes, got 0");
        let err = DrrConfig {
            limit: Some(0),
            ..Default::default()
        }
        .validate("q")
        .unwrap_err();
        assert_eq!(err.to_string(), "q.limit: must be > 0, got 0");
    }
}
