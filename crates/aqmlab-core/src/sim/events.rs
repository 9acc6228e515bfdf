//! The event queue: a binary heap ordered by (time, insertion sequence), so
//! simultaneous events run in the order they were scheduled — deterministic.

use crate::packet::{FlowId, Packet, PacketId, PacketKind};
use crate::time::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// What happens at an instant. Small and `Copy`: packets travel as handles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A link finished serializing its current packet.
    TxDone { link: u32 },
    /// A packet reaches the far end of a link.
    Arrive { link: u32, packet: PacketId },
    /// An agent starts (at its flow's start time).
    Start { agent: AgentId },
    /// An agent's timer fires; `token` is the agent's own.
    Timer { agent: AgentId, token: u64 },
    /// Periodic sampling of monitored queues.
    Sample,
}

/// Which end of its flow an agent is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// At the flow's source: sends data, receives ACKs.
    Sender,
    /// At the flow's destination: receives data, sends ACKs.
    Receiver,
}

/// One of a flow's two agents.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AgentId {
    pub flow: FlowId,
    pub role: Role,
}

impl AgentId {
    /// The agent `packet` is addressed to: data goes to the receiver, ACKs to the sender.
    pub fn addressee(packet: &Packet) -> AgentId {
        let role = match packet.kind {
            PacketKind::Data => Role::Receiver,
            PacketKind::Ack => Role::Sender,
        };
        AgentId {
            flow: packet.flow,
            role,
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    time: Time,
    seq: u64,
    event: Event,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.time == other.time && self.seq == other.seq
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: BinaryHeap is a max-heap and we want the earliest first.
        (other.time, other.seq).cmp(&(self.time, self.seq))
    }
}

#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    next_seq: u64,
    processed: u64,
}

impl EventQueue {
    pub fn schedule(&mut self, time: Time, event: Event) {
        self.heap.push(Entry {
            time,
            seq: self.next_seq,
            event,
        });
        self.next_seq += 1;
    }

    /// Removes and returns the earliest event strictly before `until`.
    pub fn pop_before(&mut self, until: Time) -> Option<(Time, Event)> {
        if self.heap.peek()?.time >= until {
            return None;
        }
        let e = self.heap.pop()?;
        self.processed += 1;
        Some((e.time, e.event))
    }

    pub fn processed(&self) -> u64 {
        self.processed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_first_then_fifo_on_ties() {
        let mut q = EventQueue::default();
        q.schedule(5, Event::Sample);
        q.schedule(3, Event::TxDone { link: 1 });
        q.schedule(3, Event::TxDone { link: 2 });
        assert_eq!(q.pop_before(10), Some((3, Event::TxDone { link: 1 })));
        assert_eq!(q.pop_before(10), Some((3, Event::TxDone { link: 2 })));
        assert_eq!(q.pop_before(5), None);
        assert_eq!(q.pop_before(10), Some((5, Event::Sample)));
        assert_eq!(q.processed(), 3);
    }

    /// Events are copied in and out of the heap on every step: naming the agent
    /// (flow and role) must not make them larger than the old `u32` agent index did.
    #[test]
    fn an_event_fits_in_two_words() {
        assert_eq!(std::mem::size_of::<Event>(), 16);
    }
}
