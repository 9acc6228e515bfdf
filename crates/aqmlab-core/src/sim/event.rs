//! What happens at an instant, and to whom: the engine's event vocabulary. The
//! calendar that orders events is `calendar.rs`.

use crate::packet::{FlowId, Packet, PacketId, PacketKind};
use crate::transport::Token;

/// What happens at an instant. Small and `Copy`: packets travel as handles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A link finished serializing its current packet.
    TxDone { link: u32 },
    /// A packet reaches the far end of `link`, to go on by `next`, the next link of its route.
    /// (Decided when it was sent, while its packet was in the cache; so are `Deliver`'s fields.)
    Arrive { link: u32, packet: PacketId, next: u32 },
    /// A packet reaches its destination, the far end of its route's last link, where agent
    /// `to` takes it.
    Deliver { packet: PacketId, to: AgentId },
    /// An agent starts (at its flow's start time).
    Start { agent: AgentId },
    /// An agent's timer fires; `token` is the agent's own (`transport::timer`).
    Timer { agent: AgentId, token: Token },
    /// Periodic sampling of monitored queues.
    Sample,
    /// A link's rate changes to its `change`-th new rate (`Link::rates[change + 1]`).
    RateChange { link: u32, change: u32 },
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

#[cfg(test)]
mod tests {
    use super::*;

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
