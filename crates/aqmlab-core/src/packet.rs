//! Packets and the arena that owns them. Events and queues carry `PacketId`
//! handles; a packet is allocated once at its source and freed when it is
//! delivered or dropped, so the hot path does no heap allocation.

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

/// ECN codepoint (RFC 3168), as a router sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Ecn {
    #[default]
    NotEct,
    Ect,
    Ce,
}

/// Up to three SACK blocks `[start, end)` in packet sequence numbers (RFC 2018).
pub const MAX_SACK_BLOCKS: usize = 3;

/// What a router can see of a packet (headers) plus the transport fields the
/// endpoints need. Qdiscs must only read `flow`, `size`, `kind`, `ecn`,
/// `label`, `weight` and `enqueued_at`, as a real router would.
#[derive(Clone, Copy, Debug, Default)]
pub struct Packet {
    pub flow: FlowId,
    pub src: NodeId,
    pub dst: NodeId,
    /// Size on the wire in bytes (used for serialization and byte-mode queues).
    pub size: u32,
    pub kind: PacketKind,
    pub ecn: Ecn,
    /// TCP: ECN-echo flag on ACKs.
    pub ece: bool,
    /// Data: sequence number in packets. Ack: cumulative ack (next expected).
    pub seq: u64,
    /// Time the sender stamped the data packet (echoed in the ACK for RTT samples).
    pub sent_at: Time,
    /// Set on a retransmitted data packet (Karn's rule uses it via the echo).
    pub retransmit: bool,
    pub sack: [(u64, u64); MAX_SACK_BLOCKS],
    pub sack_len: u8,
    /// CSFQ label: the flow's normalised rate estimate in bits/s (0 = unlabelled).
    pub label: f64,
    /// CSFQ weight of the flow (1.0 unless weighted CSFQ).
    pub weight: f64,
    /// When the packet entered the current queue (set by the link).
    pub enqueued_at: Time,
    /// Links traversed so far (the simulator's forwarding state, not a header field).
    pub hop: u16,
}

/// Slab of packets with a free list.
#[derive(Default)]
pub struct PacketArena {
    slots: Vec<Packet>,
    free: Vec<PacketId>,
    live: usize,
}

impl PacketArena {
    pub fn alloc(&mut self, p: Packet) -> PacketId {
        self.live += 1;
        if let Some(id) = self.free.pop() {
            self.slots[id as usize] = p;
            id
        } else {
            self.slots.push(p);
            (self.slots.len() - 1) as PacketId
        }
    }

    pub fn free(&mut self, id: PacketId) {
        self.live -= 1;
        self.free.push(id);
    }

    /// Packets allocated and not yet freed (in queues or on links).
    pub fn live(&self) -> usize {
        self.live
    }
}

impl std::ops::Index<PacketId> for PacketArena {
    type Output = Packet;
    fn index(&self, id: PacketId) -> &Packet {
        &self.slots[id as usize]
    }
}

impl std::ops::IndexMut<PacketId> for PacketArena {
    fn index_mut(&mut self, id: PacketId) -> &mut Packet {
        &mut self.slots[id as usize]
    }
}
