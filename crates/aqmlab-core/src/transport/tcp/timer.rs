//! A restartable timer on top of [`AgentCtx::set_timer`], which cannot cancel.
//!
//! TCP restarts its retransmission timer on nearly every ACK. Scheduling an
//! engine event each time would leave one stale event per ACK in the queue.
//! Instead the timer keeps its deadline and at most one engine event no later
//! than it: when that event fires early (the deadline moved later) it is
//! re-armed for the deadline; a deadline moved earlier schedules a new event
//! and the old one is recognised as stale by its generation.

use crate::time::Time;
use crate::transport::AgentCtx;

/// Tokens carry `generation << KIND_BITS | kind`, so an agent can run several timers.
const KIND_BITS: u32 = 2;

#[derive(Clone, Debug)]
pub struct Timer {
    kind: u64,
    deadline: Option<Time>,
    /// Time of the engine event currently pending for this timer, if any.
    scheduled: Option<Time>,
    generation: u64,
}

impl Timer {
    /// `kind` (0..4) tells an agent's timers apart; see [`kind_of`].
    pub fn new(kind: u64) -> Self {
        debug_assert!(kind < 1 << KIND_BITS);
        Timer {
            kind,
            deadline: None,
            scheduled: None,
            generation: 0,
        }
    }

    /// (Re)starts the timer to expire at `at`.
    pub fn set(&mut self, at: Time, ctx: &mut AgentCtx) {
        self.deadline = Some(at);
        if self.scheduled.is_none_or(|s| s > at) {
            self.generation += 1;
            self.scheduled = Some(at);
            ctx.set_timer(at, self.generation << KIND_BITS | self.kind);
        }
    }

    pub fn clear(&mut self) {
        self.deadline = None;
    }

    pub fn is_set(&self) -> bool {
        self.deadline.is_some()
    }

    pub fn deadline(&self) -> Option<Time> {
        self.deadline
    }

    /// Handles a fired token of this timer's kind; true when the timer expired now.
    pub fn expired(&mut self, token: u64, ctx: &mut AgentCtx) -> bool {
        if token >> KIND_BITS != self.generation || self.scheduled.is_none() {
            return false;
        }
        self.scheduled = None;
        match self.deadline {
            Some(at) if at > ctx.now => {
                self.set(at, ctx);
                false
            }
            Some(_) => {
                self.deadline = None;
                true
            }
            None => false,
        }
    }
}

/// Which timer a fired token belongs to.
pub fn kind_of(token: u64) -> u64 {
    token & ((1 << KIND_BITS) - 1)
}
