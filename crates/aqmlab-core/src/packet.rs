//! Packets and the arena that owns them. Events and queues carry `PacketId`
//! handles; a packet is allocated once at its source and freed when it is
//! delivered or dropped, so the hot path does no heap allocation.

use crate::cache;
use crate::time::Time;

pub type PacketId = u32;
pub type FlowId = u32;
pub type NodeId = u32;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PacketKind {
    #[default]
    Data,
    Ack,
}

/// ECN codepoint (RFC 3168 §5), as a router sees it. ECT(0) is classic ECN's; ECT(1) is the
/// L4S identifier (RFC 9331 §4.1): a queue that has an L4S queue classifies on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Ecn {
    #[default]
    NotEct,
    Ect0,
    Ect1,
    Ce,
}

/// Up to three SACK blocks `[start, end)` in packet sequence numbers (RFC 2018).
pub const MAX_SACK_BLOCKS: usize = 3;

/// What a router can see of a packet (headers) plus the transport fields the
/// endpoints need. Qdiscs must only read `flow`, `src`, `dst`, `size`, `kind`,
/// `ecn`, `label`, `weight` and `enqueued_at`, as a real router would.
///
/// The fields are in the order given (`repr(C)`) so that everything a hop reads or
/// writes (the router's fields, `dst` and `hop`) lies in the first 48 bytes, which share
/// a cache line with the live flag of [`PacketArena`]'s slot: a packet crossing a router
/// costs one line, the endpoints read the rest (issue 15).
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
pub struct Packet {
    pub flow: FlowId,
    pub src: NodeId,
    pub dst: NodeId,
    /// Size on the wire in bytes (used for serialization and byte-mode queues).
    pub size: u32,
    /// When the packet entered the current queue (set by the link).
    pub enqueued_at: Time,
    /// CSFQ label: the flow's normalised rate estimate in bits/s (0 = unlabelled).
    pub label: f64,
    /// CSFQ weight of the flow (1.0 unless weighted CSFQ).
    pub weight: f64,
    /// The link of its route it is on or queued for, counted from 1 (the simulator's
    /// forwarding state, not a header field; a capture derives the TTL from it).
    pub hop: u16,
    pub kind: PacketKind,
    pub ecn: Ecn,
    /// TCP: ECN-echo flag on ACKs.
    pub ece: bool,
    /// Set on a retransmitted data packet (Karn's rule uses it via the echo).
    pub retransmit: bool,
    pub sack_len: u8,
    /// RLM: the layer (1-based) of a data packet; on a control packet, the number of
    /// layers the receiver subscribes to (0 for every other transport).
    pub layer: u8,
    /// Data: sequence number in packets. Ack: cumulative ack (next expected).
    pub seq: u64,
    /// Time the sender stamped the data packet (echoed in the ACK for RTT samples).
    pub sent_at: Time,
    /// Ack: the one-way delay of the data packet that triggered it, its arrival less its
    /// `sent_at` (RFC 6817 §2.4.1's receiver; one clock, so TCP timestamps' TSval − TSecr
    /// without the clocks' offset). Zero on data packets.
    pub one_way_delay: Time,
    /// Ack under accurate ECN feedback: the CE-marked data packets the receiver has had so far
    /// (AccECN's packet counter r.cep, draft-ietf-tcpm-accurate-ecn §3.2). Zero otherwise.
    pub ce_packets: u32,
    pub sack: [(u64, u64); MAX_SACK_BLOCKS],
    /// TFRC's header fields (RFC 5348 §3.2), zero for other transports.
    pub tfrc: TfrcHeader,
}

/// What a TFRC data packet and a TFRC feedback packet carry besides the
/// sequence number and timestamp (RFC 5348 §3.2.1, §3.2.2).
#[derive(Clone, Copy, Debug, Default)]
pub struct TfrcHeader {
    /// Data: the sender's RTT estimate R in seconds (0 before it has one).
    pub rtt: f64,
    /// Feedback: X_recv, the rate the receiver received data at, bytes/s.
    pub receive_rate: f64,
    /// Feedback: p, the receiver's loss event rate.
    pub loss_event_rate: f64,
    /// Data, ns-2's TFRC (`tcp/tfrc.cc` sendpkt()): the sender's t_RTO (s), its round number
    /// (feedbacks and no-feedback expiries so far), and whether it wants a report at once.
    pub tzero: f64,
    pub round: u32,
    pub urgent: bool,
}

/// Slab of packets with a free list. Each slot knows whether it holds a live
/// packet, so a packet freed twice is refused rather than put on the free list
/// twice (which would give two later packets the same slot).
#[derive(Default)]
pub struct PacketArena {
    slots: Vec<Slot>,
    free: Vec<PacketId>,
}

/// A slot starts a cache line, and the live bit comes first, so that it shares the line
/// of the packet's hop fields: checking or freeing a packet touches no other.
#[repr(C, align(64))]
struct Slot {
    live: bool,
    packet: Packet,
}

/// A packet was freed when its slot was already free: a bug in whoever freed it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DoubleFree(pub PacketId);

impl PacketArena {
    /// An arena with room for `packets` in flight at once before it grows, in huge pages
    /// ([`cache::reserve_in_huge_pages`]): packets are read at every hop, in no order.
    pub fn with_room_for(packets: usize) -> PacketArena {
        let mut arena = PacketArena::default();
        cache::reserve_in_huge_pages(&mut arena.slots, packets);
        arena
    }

    pub fn alloc(&mut self, packet: Packet) -> PacketId {
        let slot = Slot { packet, live: true };
        if let Some(id) = self.free.pop() {
            self.slots[id as usize] = slot;
            id
        } else {
            self.slots.push(slot);
            (self.slots.len() - 1) as PacketId
        }
    }

    /// Returns the slot of `id` to the free list, unless it is already free.
    pub fn free(&mut self, id: PacketId) -> Result<(), DoubleFree> {
        let slot = &mut self.slots[id as usize];
        if !slot.live {
            return Err(DoubleFree(id));
        }
        slot.live = false;
        self.free.push(id);
        Ok(())
    }

    /// Asks the processor to fetch the slot of `id` into its cache, without waiting for it:
    /// the engine names the packet of the next event while it runs the current one.
    #[inline]
    pub fn prefetch(&self, id: PacketId) {
        if let Some(slot) = self.slots.get(id as usize) {
            cache::prefetch(slot);
        }
    }

    /// Like [`prefetch`](Self::prefetch), only the first cache line: what a hop reads.
    #[inline]
    pub fn prefetch_hop_fields(&self, id: PacketId) {
        if let Some(slot) = self.slots.get(id as usize) {
            cache::prefetch_first(slot, 64);
        }
    }

    /// Whether `id` holds a packet that was allocated and not yet freed.
    pub fn is_live(&self, id: PacketId) -> bool {
        self.slots[id as usize].live
    }
}

impl std::ops::Index<PacketId> for PacketArena {
    type Output = Packet;
    fn index(&self, id: PacketId) -> &Packet {
        &self.slots[id as usize].packet
    }
}

impl std::ops::IndexMut<PacketId> for PacketArena {
    fn index_mut(&mut self, id: PacketId) -> &mut Packet {
        &mut self.slots[id as usize].packet
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_freed_twice_is_refused_and_not_handed_out_twice() {
        let mut arena = PacketArena::default();
        let a = arena.alloc(Packet::default());
        assert_eq!(arena.free(a), Ok(()));
        assert!(!arena.is_live(a));
        assert_eq!(arena.free(a), Err(DoubleFree(a)));
        let (b, c) = (arena.alloc(Packet::default()), arena.alloc(Packet::default()));
        assert_ne!(b, c);
        assert!(arena.is_live(b) && arena.is_live(c));
    }
}
