//! Per-active-flow accounting (FRED §4, BRED §3): a table holding state only
//! for flows that have packets in the buffer. An entry is created by a flow's
//! first accepted packet and released when its last buffered packet leaves, so
//! the table never holds more entries than the buffer holds packets, however
//! many flows have crossed the queue.

use crate::packet::{FlowId, Packet, PacketKind};
use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// What a router can tell flows apart by: the flow id (the papers' address/port
/// tuple) and the direction, since a flow's ACKs carry the swapped addresses.
pub type FlowKey = u64;

pub fn flow_key(packet: &Packet) -> FlowKey {
    ((packet.flow as u64) << 1) | (packet.kind == PacketKind::Ack) as u64
}

/// The flow and direction a [`FlowKey`] stands for.
pub fn flow_of(key: FlowKey) -> (FlowId, PacketKind) {
    let kind = if key & 1 == 1 {
        PacketKind::Ack
    } else {
        PacketKind::Data
    };
    ((key >> 1) as FlowId, kind)
}

/// One active flow: its buffered amount (packets or bytes, as the qdisc counts)
/// and the discipline's own per-flow state `S` (FRED's strikes; `()` for BRED).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FlowEntry<S> {
    pub qlen: u64,
    pub state: S,
}

/// Multiplicative hashing of the integer key: cheap, and lookups never depend
/// on iteration order, so runs stay deterministic.
#[derive(Default)]
pub struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u64(&mut self, key: u64) {
        self.0 = key.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// State of the flows with packets buffered, and the peak number of them.
pub struct ActiveFlows<S> {
    table: HashMap<FlowKey, FlowEntry<S>, BuildHasherDefault<KeyHasher>>,
    peak: usize,
}

impl<S> Default for ActiveFlows<S> {
    fn default() -> Self {
        ActiveFlows {
            table: HashMap::default(),
            peak: 0,
        }
    }
}

impl<S: Copy + Default> ActiveFlows<S> {
    /// The flow's state, or the fresh state of a flow with nothing buffered.
    pub fn get(&self, key: FlowKey) -> FlowEntry<S> {
        self.table.get(&key).copied().unwrap_or_default()
    }

    /// Mutable state of a flow that has packets buffered.
    pub fn get_mut(&mut self, key: FlowKey) -> Option<&mut FlowEntry<S>> {
        self.table.get_mut(&key)
    }

    /// Accounts an accepted packet of `units` (creating the flow's state on its first packet).
    pub fn add(&mut self, key: FlowKey, units: u64) -> &mut FlowEntry<S> {
        let active = self.table.len();
        let entry = match self.table.entry(key) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => {
                self.peak = self.peak.max(active + 1);
                e.insert(FlowEntry::default())
            }
        };
        entry.qlen += units;
        entry
    }

    /// Accounts a departed packet of `units`; the flow's state is deleted when nothing of it is left.
    pub fn remove(&mut self, key: FlowKey, units: u64) {
        let entry = self
            .table
            .get_mut(&key)
            .expect("a departing packet belongs to an active flow");
        entry.qlen -= units;
        if entry.qlen == 0 {
            self.table.remove(&key);
        }
    }

    /// Flows with packets buffered (the papers' `Nactive`).
    pub fn active(&self) -> usize {
        self.table.len()
    }

    /// Largest number of flows ever held at once: the size of the per-flow state.
    pub fn peak(&self) -> usize {
        self.peak
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_lives_only_while_a_flow_has_packets_buffered() {
        let mut flows: ActiveFlows<u32> = ActiveFlows::default();
        flows.add(1, 1).state = 7;
        flows.add(1, 1);
        flows.add(2, 1);
        assert_eq!((flows.active(), flows.peak()), (2, 2));
        assert_eq!(flows.get(1), FlowEntry { qlen: 2, state: 7 });
        flows.remove(1, 1);
        assert_eq!(flows.get(1).qlen, 1);
        flows.remove(1, 1);
        // Released: a returning flow starts afresh (its strike is forgotten).
        assert_eq!(flows.get(1), FlowEntry { qlen: 0, state: 0 });
        assert_eq!(flows.active(), 1);
        for key in 10..1000 {
            flows.add(key, 1);
            flows.remove(key, 1);
        }
        assert_eq!((flows.active(), flows.peak()), (1, 2));
    }

    #[test]
    fn data_and_ack_directions_are_different_flows() {
        let data = Packet {
            flow: 3,
            ..Default::default()
        };
        let ack = Packet {
            flow: 3,
            kind: PacketKind::Ack,
            ..Default::default()
        };
        assert_ne!(flow_key(&data), flow_key(&ack));
        assert_eq!(flow_of(flow_key(&ack)), (3, PacketKind::Ack));
        assert_eq!(flow_of(flow_key(&data)), (3, PacketKind::Data));
        assert_ne!(
            flow_key(&data),
            flow_key(&Packet {
                flow: 4,
                ..Default::default()
            })
        );
    }
}
