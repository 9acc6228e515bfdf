//! What both CoDel state machines (`rfc8289.rs`, `linux.rs`) share, as Linux's `codel.h`
//! holds what `codel_impl.h` runs for sch_codel.c and sch_fq_codel.c: the queue a state machine
//! serves ([`CodelQueue`], `codel_impl.h`'s dequeue and drop callbacks), the drop or mark it
//! applies, and what it counts.

use crate::packet::{Ecn, PacketArena, PacketId};
use crate::qdisc::{DropReason, Fifo, QdiscCtx};
use crate::time::Time;

/// The queue a CoDel state machine serves: its head, and the bytes queued behind the head, which
/// RFC 8289's MTU test reads ("more than one MTU is queued").
pub trait CodelQueue {
    /// Takes the head packet.
    fn pop(&mut self, packets: &PacketArena) -> Option<PacketId>;
    /// Bytes still queued behind `head`, just taken by [`Self::pop`].
    fn bytes_behind(&self, head: PacketId, ctx: &QdiscCtx) -> u64;
}

/// `type = "codel"`'s one queue is the whole qdisc: the link counts its bytes, `head` among them
/// until the dequeue returns ([`QdiscCtx::backlog`]).
impl CodelQueue for Fifo {
    fn pop(&mut self, packets: &PacketArena) -> Option<PacketId> {
        Fifo::pop(self, packets)
    }

    fn bytes_behind(&self, head: PacketId, ctx: &QdiscCtx) -> u64 {
        ctx.backlog().without(ctx.packets[head].size).bytes
    }
}

/// What CoDel counts besides the engine's drop and mark tables.
#[derive(Clone, Copy, Debug, Default)]
pub struct CodelStats {
    /// Times the dropping state was entered.
    pub dropping_entries: u64,
    /// Packets that left above the `ce_threshold` (Linux `ce_mark`).
    pub ce_marks: u64,
}

/// Linux's `ce_threshold` (codel_impl.h, the end of codel_dequeue; sch_codel and sch_fq_codel
/// alike), the step DCTCP wants (RFC 8257 §3): a packet leaving with a sojourn above the
/// threshold is marked CE if ECN-capable, whatever CoDel's state. With a `mask` (Linux 5.16's
/// `ce_threshold_selector`), only packets whose DS field, masked, equals `selector`: aqmlab's
/// packets carry no DSCP, so the DS field is the ECN bits (ECT(1) = 1, ECT(0) = 2, CE = 3).
#[derive(Clone, Copy, Debug)]
pub struct CeThreshold {
    pub threshold: Time,
    pub selector: u8,
    pub mask: u8,
}

impl CeThreshold {
    /// Marks `id`, just dequeued, if it is above the threshold and selected; counts it as Linux's
    /// `ce_mark` does (a packet already CE too, which the engine does not count again).
    pub fn apply(&self, id: PacketId, ctx: &mut QdiscCtx, stats: &mut CodelStats) {
        if ctx.now - ctx.packets[id].enqueued_at <= self.threshold {
            return;
        }
        let ecn = ctx.packets[id].ecn;
        let ds_field = match ecn {
            Ecn::NotEct => 0,
            Ecn::Ect1 => 1,
            Ecn::Ect0 => 2,
            Ecn::Ce => 3,
        };
        if self.mask != 0 && ds_field & self.mask != self.selector {
            return;
        }
        match ecn {
            Ecn::NotEct => {}
            Ecn::Ce => stats.ce_marks += 1,
            Ecn::Ect0 | Ecn::Ect1 => {
                stats.ce_marks += 1;
                ctx.mark(id);
            }
        }
    }
}

/// Drops `id`, or marks it CE and keeps it when `ecn` is on and the packet is ECN-capable
/// (Linux codel_dequeue()); whether it was dropped.
#[inline]
pub(super) fn drop_or_mark(ecn: bool, id: PacketId, ctx: &mut QdiscCtx) -> bool {
    if ecn && ctx.packets[id].ecn != Ecn::NotEct {
        ctx.mark(id);
        return false;
    }
    ctx.drop_packet(id, DropReason::Codel);
    true
}
