//! What both CoDel state machines (`rfc8289.rs`, `linux.rs`) share, as Linux's `codel.h`
//! holds what `codel_impl.h` runs for sch_codel.c and sch_fq_codel.c: the queue a state machine
//! serves ([`CodelQueue`], `codel_impl.h`'s dequeue and drop callbacks), the drop or mark it
//! applies, and what it counts.

use crate::packet::{Ecn, PacketArena, PacketId};
use crate::qdisc::{DropReason, Fifo, QdiscCtx};

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
