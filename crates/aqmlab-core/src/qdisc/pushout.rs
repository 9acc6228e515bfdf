//! Longest-queue drop on a shared buffer (B. Suter, T. V. Lakshman, D. Stiliadis,
//! A. K. Choudhury, "Design considerations for supporting TCP with per-flow queueing", IEEE
//! INFOCOM 1998): an arrival is always admitted, and while the buffer is over its bound a packet
//! is pushed out of the flow that holds the most of it (`DropReason::Pushout`), from the head or
//! the tail of that flow's packets. The arrival itself is the victim when it alone makes its
//! flow the longest and the tail is chosen, or when its flow holds nothing else.
//!
//! One implementation serves both disciplines that drop this way: DRR (`drr.rs`, per-flow
//! queues served round robin) and LQD (`lqd.rs`, one FIFO). Each keeps its packets as it needs
//! and shows them to [`PushOut`] through [`FlowQueues`].
//!
//! Cost: the longest flow is found by scanning the backlogged flows, only when the buffer
//! overflows; there are never more backlogged flows than packets in the buffer, so the scan is
//! bounded by the buffer size, not by the number of flows.

use super::{DropReason, Limit, QdiscCtx, Verdict};
use crate::packet::{FlowId, PacketId};
use serde::Deserialize;

/// Which end of the longest flow's packets loses one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum End {
    /// Its oldest packet: the one farthest from the tail of the buffer.
    #[default]
    Head,
    /// Its newest packet.
    Tail,
}

/// What the longest flow is longest in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Occupancy {
    Packets,
    Bytes,
}

/// Per-flow queues as the push-out sees them.
pub trait FlowQueues {
    /// Packets and bytes buffered over all flows.
    fn totals(&self) -> (usize, u64);
    /// The flows with packets buffered, in the order that breaks ties (the first wins).
    fn backlogged(&self) -> impl Iterator<Item = FlowId> + '_;
    /// Packets and bytes `flow` has buffered.
    fn occupancy(&self, flow: FlowId) -> (usize, u64);
    /// Takes one packet of `flow`, at `end`, out of the buffer (a backlogged flow).
    fn remove(&mut self, flow: FlowId, end: End, ctx: &QdiscCtx) -> PacketId;
}

/// The push-out rule: the buffer's bound, the measure of "longest" and the end dropped from.
#[derive(Clone, Copy, Debug)]
pub struct PushOut {
    pub limit: Limit,
    pub longest_by: Occupancy,
    pub end: End,
}

impl PushOut {
    /// Pushes packets out of the longest flow until the buffer is within its bound, after
    /// `arrival` was queued; the arrival's verdict (dropped if it was pushed out itself).
    pub fn enforce(&self, queues: &mut impl FlowQueues, arrival: PacketId, ctx: &mut QdiscCtx) -> Verdict {
        let mut verdict = Verdict::Enqueued;
        while !self.holds(queues) {
            let victim = queues.remove(self.longest(queues), self.end, ctx);
            if victim == arrival {
                verdict = Verdict::Dropped(DropReason::Pushout);
            } else {
                ctx.drop_packet(victim, DropReason::Pushout);
            }
        }
        verdict
    }

    fn holds(&self, queues: &impl FlowQueues) -> bool {
        let (packets, bytes) = queues.totals();
        self.limit.holds(packets, bytes)
    }

    /// The backlogged flow holding the most (the first in tie order among equals).
    fn longest(&self, queues: &impl FlowQueues) -> FlowId {
        let size = |flow| {
            let (packets, bytes) = queues.occupancy(flow);
            match self.longest_by {
                Occupancy::Packets => packets as u64,
                Occupancy::Bytes => bytes,
            }
        };
        let mut flows = queues.backlogged();
        let mut best = flows.next().expect("an overfull buffer has a backlogged flow");
        let mut best_size = size(best);
        for flow in flows {
            if size(flow) > best_size {
                (best, best_size) = (flow, size(flow));
            }
        }
        best
    }
}
