//! A qdisc driven by hand, as the engine drives it: the shared harness of the qdisc unit tests.

use super::droptail::DropTail;
use super::{Backlog, DropReason, Limit, LinkInfo, QdiscCtx, QdiscEvents, QueueDisc, Verdict};
use crate::packet::{FlowId, Packet, PacketArena, PacketId};
use crate::time::Time;
use std::collections::BTreeMap;

/// One millisecond, for writing test times.
pub(crate) const MS: Time = 1_000_000;

/// A link of `rate_bps` with no delay, measured from the start: the qdisc unit tests' link.
pub(crate) const fn link(rate_bps: f64) -> LinkInfo {
    LinkInfo {
        rate_bps,
        delay: 0,
        measure_from: 0,
    }
}

/// A queue discipline with its own packet arena. Like the engine, it counts the queue's
/// [`Backlog`], frees a dropped arrival and the packets the qdisc pushes out, and tallies
/// every drop by reason and every mark (the engine's tables, for one link).
pub(crate) struct QdiscHarness<Q: ?Sized> {
    pub arena: PacketArena,
    /// What the queue holds, as the link counts it.
    pub backlog: Backlog,
    /// Packets the qdisc dropped besides the arriving one (push-outs), in order, with their reasons.
    pub dropped: Vec<(Packet, DropReason)>,
    drops: BTreeMap<DropReason, u64>,
    /// Packets the qdisc marked CE.
    pub marks: u64,
    events: QdiscEvents,
    pub q: Box<Q>,
}

impl<Q: QueueDisc + ?Sized> QdiscHarness<Q> {
    pub fn new(q: Box<Q>) -> Self {
        QdiscHarness {
            arena: PacketArena::default(),
            backlog: Backlog::default(),
            dropped: Vec::new(),
            drops: BTreeMap::new(),
            marks: 0,
            events: QdiscEvents::default(),
            q,
        }
    }

    /// Offers `packet` at `t`: the verdict, and the packet as the qdisc left it (ECN mark, CSFQ label).
    pub fn offer(&mut self, t: Time, packet: Packet) -> (Verdict, Packet) {
        let id = self.arena.alloc(packet);
        let verdict = self
            .backlog
            .offer(self.q.as_mut(), id, t, &mut self.arena, &mut self.events);
        let packet = self.arena[id];
        if let Verdict::Dropped(reason) = verdict {
            self.arena.free(id).expect("the harness frees each packet once");
            *self.drops.entry(reason).or_default() += 1;
        }
        self.flush_events();
        (verdict, packet)
    }

    /// Offers a data packet of `size` bytes of `flow` at `t`.
    pub fn arrive(&mut self, t: Time, flow: FlowId, size: u32) -> Verdict {
        let packet = Packet {
            flow,
            size,
            ..Default::default()
        };
        self.offer(t, packet).0
    }

    /// Sends the next packet at `t`, if the qdisc has one (it has none only when empty).
    pub fn depart(&mut self, t: Time) -> Option<Packet> {
        let id = self.backlog.take(self.q.as_mut(), t, &mut self.arena, &mut self.events);
        self.flush_events();
        if id.is_none() {
            assert_eq!(
                self.backlog,
                Backlog::default(),
                "the qdisc sent nothing while holding packets"
            );
        }
        let id = id?;
        let packet = self.arena[id];
        self.arena.free(id).expect("the harness frees each packet once");
        Some(packet)
    }

    /// Sends the next packet at `t`, which must exist; returns its flow.
    pub fn depart_flow(&mut self, t: Time) -> FlowId {
        self.depart(t).expect("queue not empty").flow
    }

    /// Drops so far for `reason`, arrivals and push-outs together.
    pub fn drops(&self, reason: DropReason) -> u64 {
        self.drops.get(&reason).copied().unwrap_or(0)
    }

    fn flush_events(&mut self) {
        self.marks += self.events.marks.drain(..).count() as u64;
        for (id, reason) in self.events.drops.drain(..) {
            self.dropped.push((self.arena[id], reason));
            self.arena.free(id).expect("the harness frees each packet once");
            *self.drops.entry(reason).or_default() += 1;
        }
    }
}

/// The one bug a [`Broken`] qdisc has, at its `n`th arrival.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Breakage {
    /// Accepts the arrival and forgets it: never sent, never dropped.
    ForgetsArrival(u64),
    /// Drops the arrival twice: as its verdict and again through `drop_packet`.
    DropsTwice(u64),
    /// Says it failed (`QdiscCtx::fail`), as a discipline from outside the crate does, and
    /// then forgets the arrival (which the engine would catch after the failure).
    Fails(u64),
}

/// A drop-tail FIFO with one deliberate bug, to show that the engine's checks catch it.
pub(crate) struct Broken {
    fifo: DropTail,
    breakage: Breakage,
    arrivals: u64,
}

impl Broken {
    pub fn new(breakage: Breakage) -> Self {
        Broken {
            fifo: DropTail::new(Limit::new(Some(1000), None)),
            breakage,
            arrivals: 0,
        }
    }
}

impl QueueDisc for Broken {
    fn enqueue(&mut self, id: PacketId, ctx: &mut QdiscCtx) -> Verdict {
        self.arrivals += 1;
        match self.breakage {
            Breakage::ForgetsArrival(n) if n == self.arrivals => Verdict::Enqueued,
            Breakage::DropsTwice(n) if n == self.arrivals => {
                ctx.drop_packet(id, DropReason::Overflow);
                Verdict::Dropped(DropReason::Overflow)
            }
            Breakage::Fails(n) if n == self.arrivals => {
                ctx.fail(format!("Broken.enqueue raised at arrival {n}"));
                Verdict::Enqueued
            }
            _ => self.fifo.enqueue(id, ctx),
        }
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        self.fifo.dequeue(ctx)
    }
}
