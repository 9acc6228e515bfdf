//! Longest-queue drop on a shared buffer (B. Suter, T. V. Lakshman, D. Stiliadis,
//! A. K. Choudhury, "Design considerations for supporting TCP with per-flow queueing", IEEE
//! INFOCOM 1998): an arrival is always admitted, and while the buffer is over its bound a packet
//! is pushed out of the flow that holds the most of it (`DropReason::Pushout`), from the head or
//! the tail of that flow's packets. The arrival itself is the victim when it alone makes its
//! flow the longest and the tail is chosen, or when its flow holds nothing else.
//!
//! One implementation serves both disciplines that drop this way: DRR (`drr.rs`, per-flow
//! queues served round robin) and LQD (`lqd.rs`, one FIFO). Both keep their packets in a
//! [`FlowBacklog`], which [`PushOut`] pushes packets out of; each serves it in its own order.
//!
//! Cost: the longest flow is found by scanning the backlogged flows, only when the buffer
//! overflows; there are never more backlogged flows than packets in the buffer, so the scan is
//! bounded by the buffer size, not by the number of flows.

use super::{DropReason, Limit, QdiscCtx, Verdict};
use crate::packet::{FlowId, PacketId};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Which end of the longest flow's packets loses one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
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

/// One flow's packets in the buffer, oldest first, with their arrival numbers.
#[derive(Default)]
struct FlowPackets<S> {
    packets: VecDeque<(u64, PacketId)>,
    bytes: u64,
    /// What the discipline keeps per flow beside its packets (DRR's deficit).
    state: S,
}

/// Each flow's packets in one shared buffer (flow id as the flow) and the flows holding any (the
/// totals over all flows are the link's [`Backlog`](super::Backlog)).
#[derive(Default)]
pub struct FlowBacklog<S = ()> {
    /// Indexed by flow id, created on first use.
    flows: Vec<FlowPackets<S>>,
    /// Flows holding packets, in the order they came to (DRR's round; ties in length go to the first).
    active: VecDeque<FlowId>,
    /// Packets queued so far: the newest one's arrival number.
    arrivals: u64,
    /// Most flows ever holding packets at once: the size of the per-flow state in use.
    peak_active: usize,
}

impl<S: Default> FlowBacklog<S> {
    /// Queues `id` behind its flow's packets (as arrival number [`Self::arrivals`]); true when
    /// the flow held none and has joined the tail of the active flows.
    pub fn push(&mut self, id: PacketId, ctx: &QdiscCtx) -> bool {
        let flow = ctx.packets[id].flow;
        if flow as usize >= self.flows.len() {
            self.flows.resize_with(flow as usize + 1, FlowPackets::default);
        }
        let queue = &mut self.flows[flow as usize];
        let joined = queue.packets.is_empty();
        if joined {
            self.active.push_back(flow);
            self.peak_active = self.peak_active.max(self.active.len());
        }
        let size = ctx.packets[id].size as u64;
        self.arrivals += 1;
        queue.packets.push_back((self.arrivals, id));
        queue.bytes += size;
        joined
    }
}

impl<S> FlowBacklog<S> {
    /// Takes the packet at `end` of `flow`'s packets (a backlogged flow), keeping its bytes and
    /// the active flows right.
    pub fn take(&mut self, flow: FlowId, end: End, ctx: &QdiscCtx) -> PacketId {
        let queue = &mut self.flows[flow as usize];
        let (_, id) = match end {
            End::Head => queue.packets.pop_front(),
            End::Tail => queue.packets.pop_back(),
        }
        .expect("active flows have packets");
        let size = ctx.packets[id].size as u64;
        queue.bytes -= size;
        if queue.packets.is_empty() {
            let at = self
                .active
                .iter()
                .position(|&f| f == flow)
                .expect("an emptied flow was active");
            self.active.remove(at);
        }
        id
    }

    /// `flow`'s oldest packet and its arrival number, if it holds any.
    pub fn head(&self, flow: FlowId) -> Option<(u64, PacketId)> {
        self.flows.get(flow as usize)?.packets.front().copied()
    }

    /// The first of the active flows.
    pub fn first_active(&self) -> Option<FlowId> {
        self.active.front().copied()
    }

    /// Moves the first active flow to the tail of the active flows.
    pub fn rotate(&mut self) {
        self.active.rotate_left(1);
    }

    /// What the discipline keeps for `flow` (a flow that has held packets).
    pub fn state_mut(&mut self, flow: FlowId) -> &mut S {
        &mut self.flows[flow as usize].state
    }

    /// How many packets have been queued so far: the newest one's arrival number.
    pub fn arrivals(&self) -> u64 {
        self.arrivals
    }

    pub fn peak_active(&self) -> usize {
        self.peak_active
    }

    /// Packets and bytes `flow` holds (a flow that has held packets).
    fn occupancy(&self, flow: FlowId) -> (usize, u64) {
        let queue = &self.flows[flow as usize];
        (queue.packets.len(), queue.bytes)
    }
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
    pub fn enforce<S>(&self, backlog: &mut FlowBacklog<S>, arrival: PacketId, ctx: &mut QdiscCtx) -> Verdict {
        let size = ctx.packets[arrival].size;
        let mut verdict = Verdict::Enqueued;
        loop {
            // The link counts the arrival in once it is queued.
            let buffer = match verdict {
                Verdict::Enqueued => ctx.backlog().with(size),
                Verdict::Dropped(_) => ctx.backlog(),
            };
            if self.limit.holds(buffer.packets, buffer.bytes) {
                return verdict;
            }
            let victim = backlog.take(self.longest(backlog), self.end, ctx);
            if victim == arrival {
                verdict = Verdict::Dropped(DropReason::Pushout);
            } else {
                ctx.drop_packet(victim, DropReason::Pushout);
            }
        }
    }

    /// The backlogged flow holding the most (the first in tie order among equals).
    fn longest<S>(&self, backlog: &FlowBacklog<S>) -> FlowId {
        let size = |flow| {
            let (packets, bytes) = backlog.occupancy(flow);
            match self.longest_by {
                Occupancy::Packets => packets as u64,
                Occupancy::Bytes => bytes,
            }
        };
        let mut flows = backlog.active.iter().copied();
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
