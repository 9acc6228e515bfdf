//! The event queue: a binary heap ordered by (time, insertion sequence), so
//! simultaneous events run in the order they were scheduled — deterministic.

use crate::packet::{FlowId, Packet, PacketId, PacketKind};
use crate::time::Time;

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

impl Entry {
    /// Earlier first; at equal times, scheduled first.
    fn key(&self) -> (Time, u64) {
        (self.time, self.seq)
    }
}

/// The pending events: a binary min-heap on (time, seq) in a `Vec`. Written
/// out rather than `std`'s `BinaryHeap` so that the compiler inlines it into
/// the engine before link-time optimisation: with `BinaryHeap` it re-read
/// each new event from memory, or not, depending on unrelated code, which
/// cost up to 7 % of a run.
#[derive(Default)]
pub struct EventQueue {
    /// `heap[i]` is due no later than its children `heap[2i + 1]` and `heap[2i + 2]`.
    heap: Vec<Entry>,
    next_seq: u64,
    processed: u64,
}

impl EventQueue {
    #[inline]
    pub fn schedule(&mut self, time: Time, event: Event) {
        let entry = Entry {
            time,
            seq: self.next_seq,
            event,
        };
        self.next_seq += 1;
        // Sift up: later parents move down until the entry's place is found.
        let mut hole = self.heap.len();
        self.heap.push(entry);
        while hole > 0 {
            let parent = (hole - 1) / 2;
            if self.heap[parent].key() <= entry.key() {
                break;
            }
            self.heap[hole] = self.heap[parent];
            hole = parent;
        }
        self.heap[hole] = entry;
    }

    /// Removes and returns the earliest event strictly before `until`.
    #[inline]
    pub fn pop_before(&mut self, until: Time) -> Option<(Time, Event)> {
        let first = *self.heap.first()?;
        if first.time >= until {
            return None;
        }
        let last = self.heap.pop().expect("not empty");
        let len = self.heap.len();
        if len > 0 {
            // Sift down: the last entry takes the root's place; earlier children move up.
            let mut hole = 0;
            loop {
                let left = 2 * hole + 1;
                if left >= len {
                    break;
                }
                let right = left + 1;
                let child = if right < len && self.heap[right].key() < self.heap[left].key() {
                    right
                } else {
                    left
                };
                if last.key() <= self.heap[child].key() {
                    break;
                }
                self.heap[hole] = self.heap[child];
                hole = child;
            }
            self.heap[hole] = last;
        }
        self.processed += 1;
        Some((first.time, first.event))
    }

    pub fn processed(&self) -> u64 {
        self.processed
    }

    /// How many pending events `is` picks out: a scan, for end-of-run checks only.
    pub fn count_pending(&self, is: impl Fn(&Event) -> bool) -> u64 {
        self.heap.iter().filter(|e| is(&e.event)).count() as u64
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

    /// Interleaved schedules and pops, with many ties, come out in (time, seq) order.
    #[test]
    fn pops_in_time_then_schedule_order() {
        use rand::Rng as _;
        let mut rng = crate::rng::stream(1, "events");
        let mut q = EventQueue::default();
        let mut pending = Vec::new(); // (time, seq) of what the queue holds
        let (mut seq, mut now) = (0, 0);
        for _ in 0..5000 {
            if rng.gen_bool(0.6) || pending.is_empty() {
                let time = now + rng.gen_range(0..20);
                q.schedule(time, Event::TxDone { link: seq as u32 });
                pending.push((time, seq));
                seq += 1;
            } else {
                pending.sort_unstable();
                let (time, first) = pending.remove(0);
                assert_eq!(
                    q.pop_before(Time::MAX),
                    Some((time, Event::TxDone { link: first as u32 }))
                );
                now = time;
            }
        }
        assert_eq!(q.processed(), seq - pending.len() as u64);
    }

    /// Events are copied in and out of the heap on every step.
    #[test]
    fn an_event_fits_in_two_words() {
        assert_eq!(std::mem::size_of::<Event>(), 16);
    }

    #[test]
    fn packets_are_addressed_to_the_agent_at_their_destination() {
        let mut packet = Packet {
            flow: 3,
            kind: PacketKind::Ack,
            ..Default::default()
        };
        assert_eq!(
            AgentId::addressee(&packet),
            AgentId {
                flow: 3,
                role: Role::Sender
            }
        );
        packet.kind = PacketKind::Data;
        assert_eq!(
            AgentId::addressee(&packet),
            AgentId {
                flow: 3,
                role: Role::Receiver
            }
        );
    }
}
