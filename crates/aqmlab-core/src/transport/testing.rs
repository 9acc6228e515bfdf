//! Test support: an agent driven by hand, as `qdisc::testing::QdiscHarness` drives a qdisc.

use super::{Agent, AgentCtx, TimerKind, Token, TraceSample};
use crate::packet::{NodeId, Packet};
use crate::time::Time;

/// One agent of flow 0 between nodes 0 (the sender's) and 1 (the receiver's), called at
/// times the test chooses; it keeps what the agent sent, set, delivered and traced.
pub(crate) struct AgentHarness<A> {
    pub agent: A,
    /// The time of the latest call.
    pub now: Time,
    /// Every packet the agent sent, in order.
    pub sent: Vec<Packet>,
    /// Timers set and not fired yet, in the order set.
    pub timers: Vec<(Time, Token)>,
    /// Bytes handed to the application (`AgentCtx::deliver`), whole run.
    pub delivered: u64,
    /// Traced variables, when `traced`.
    pub traces: Vec<TraceSample>,
    traced: bool,
    local: NodeId,
    peer: NodeId,
}

impl<A: Agent> AgentHarness<A> {
    /// A sender: at node 0, sending to node 1.
    pub fn sender(agent: A) -> Self {
        Self::at(agent, 0, 1)
    }

    /// A receiver: at node 1, answering node 0.
    pub fn receiver(agent: A) -> Self {
        Self::at(agent, 1, 0)
    }

    fn at(agent: A, local: NodeId, peer: NodeId) -> Self {
        AgentHarness {
            agent,
            now: 0,
            sent: Vec::new(),
            timers: Vec::new(),
            delivered: 0,
            traces: Vec::new(),
            traced: false,
            local,
            peer,
        }
    }

    /// Turns variable tracing on (`AgentCtx::tracing`).
    pub fn traced(mut self) -> Self {
        self.traced = true;
        self
    }

    /// Calls the agent at `now`; returns the packets it sent in this call.
    pub fn call(&mut self, now: Time, f: impl FnOnce(&mut A, &mut AgentCtx)) -> Vec<Packet> {
        self.now = now;
        let before = self.sent.len();
        let mut ctx = AgentCtx::new(now, &mut self.sent, &mut self.timers)
            .between(self.local, self.peer)
            .traced(self.traced.then_some(&mut self.traces));
        f(&mut self.agent, &mut ctx);
        self.delivered += ctx.delivered();
        self.sent[before..].to_vec()
    }

    pub fn start(&mut self, now: Time) -> Vec<Packet> {
        self.call(now, |agent, ctx| agent.start(ctx))
    }

    pub fn receive(&mut self, now: Time, packet: &Packet) -> Vec<Packet> {
        self.call(now, |agent, ctx| agent.receive(packet, ctx))
    }

    /// Fires `token` at `now` (whether or not it is pending; a stale one must do nothing).
    pub fn fire(&mut self, now: Time, token: Token) -> Vec<Packet> {
        self.call(now, |agent, ctx| agent.timer(token, ctx))
    }

    /// The timer set last among those whose kind `is` accepts.
    pub fn latest<K: TimerKind>(&self, is: impl Fn(K) -> bool) -> (Time, Token) {
        *self
            .timers
            .iter()
            .rev()
            .find(|(_, token)| is(K::from_token(*token)))
            .expect("a pending timer of that kind")
    }

    /// Fires the timer set last among those whose kind `is` accepts, at `now`.
    pub fn fire_latest<K: TimerKind>(&mut self, now: Time, is: impl Fn(K) -> bool) -> Vec<Packet> {
        let (_, token) = self.latest(is);
        self.fire(now, token)
    }

    /// Fires the next pending timer in the engine's order (by time, then in the order set) at
    /// its time, taking it off the pending list; returns its time and the packets sent.
    pub fn fire_next(&mut self) -> Option<(Time, Vec<Packet>)> {
        let first = (0..self.timers.len()).min_by_key(|&i| (self.timers[i].0, i))?;
        let (at, token) = self.timers.remove(first);
        Some((at, self.fire(at, token)))
    }

    /// Fires every pending timer due by `until`, as [`fire_next`](Self::fire_next); returns
    /// the packets sent.
    pub fn run_until(&mut self, until: Time) -> Vec<Packet> {
        let mut sent = Vec::new();
        while self.timers.iter().any(|&(at, _)| at <= until) {
            sent.extend(self.fire_next().expect("a pending timer").1);
        }
        sent
    }
}
