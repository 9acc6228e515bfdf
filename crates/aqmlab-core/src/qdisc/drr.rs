//! Deficit Round Robin (Shreedhar & Varghese, SIGCOMM 1995) with longest-queue
//! drop, the fairness yardstick of the CSFQ paper (§3: "when the buffer is full
//! the packet from the longest queue is dropped").
//!
//! Each flow (flow id) has its own FIFO, created on first use. Flows with
//! packets wait in an active list, a newly active flow at its tail with no
//! deficit. The flow at its head earns `quantum` bytes when its turn begins and
//! sends while its deficit covers the head packet; otherwise its turn ends and
//! it moves to the tail. A flow whose queue empties leaves the list and forgets
//! its deficit.
//!
//! Quantum: at least the largest packet keeps the work per packet O(1)
//! (Shreedhar–Varghese); much more than the packet size costs a flow that
//! keeps emptying its queue the deficit it forfeits (with 1000-byte packets and
//! a 1500-byte quantum, flow 0 of CSFQ Fig. 3a, which sends exactly its fair
//! share, got 15 % less than its share instead of 5 %).
//!
//! Buffer: one shared bound (`limit` packets and/or `limit_bytes`) with
//! longest-queue drop (`pushout.rs`, shared with LQD). As ns-2's `Queue/DRR`
//! (which the CSFQ paper ran) does, an arrival is always admitted and, while
//! the bound is exceeded, the packet at the head of the longest queue in bytes
//! is pushed out (`DropReason::Pushout`); that can be the arrival itself when
//! it is alone in the longest queue. `pushout = "tail"` drops the longest
//! queue's newest packet instead. Ties go to the first flow in round-robin order,
//! starting at the flow being served.
//!
//! Profiles ([`DrrProfile`]): `paper` (the default) is Shreedhar–Varghese's
//! deficit rule above; `ns2` is ns-2.35's `queue/drr.cc`, which differs in one
//! rule, measured against ns-2 in `validate ns2`'s `drr-small-*` cases. ns-2
//! marks a flow's turn begun (`turn = 1`, drr.cc `deque()`) when it adds the
//! quantum, and clears the mark when the turn ends or the flow's queue is served
//! empty, but not when a push-out empties it (`enque()`'s drop loop calls
//! `idle()` alone) nor when the flow becomes active again (`enque()` resets
//! `deficitCounter` only). A flow pushed out empty during its turn therefore
//! comes back with its turn marked begun and no deficit: its next turn adds no
//! quantum, ends at once, and it waits a further round.
use super::pushout::{End, FlowBacklog, Occupancy, PushOut};
use super::{Limit, LinkInfo, QdiscConfig, QdiscCtx, QueueDisc, Verdict};
use crate::error::ScenarioError;
use crate::packet::PacketId;
use crate::rng::Rng;
use crate::units::Bytes;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct DrrConfig {
    /// Shared buffer in packets and/or bytes; with neither, 64 KB (CSFQ §3).
    pub limit: Option<u64>,
    pub limit_bytes: Option<Bytes>,
    /// Bytes a flow earns per round; default 1000, the CSFQ experiments' packet size (§3.4: "1 packet = 1 KB").
    pub quantum: Bytes,
    /// End of the longest queue that loses a packet: `"head"` (ns-2 `Queue/DRR`) or `"tail"`.
    pub pushout: End,
    /// Whose deficit rule runs: `"paper"` (Shreedhar–Varghese) or `"ns2"` (ns-2.35's `drr.cc`).
    pub profile: DrrProfile,
}

/// Which DRR runs (module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DrrProfile {
    /// Shreedhar & Varghese 1995, Fig. 3: a flow that leaves the round forgets its turn.
    #[default]
    Paper,
    /// ns-2.35's `queue/drr.cc`: a flow pushed out empty during its turn keeps it marked begun.
    Ns2,
}

impl Default for DrrConfig {
    fn default() -> Self {
        DrrConfig {
            limit: None,
            limit_bytes: None,
            quantum: Bytes(1000),
            pushout: End::Head,
            profile: DrrProfile::Paper,
        }
    }
}

impl DrrConfig {
    /// "a buffer of 64 KB" (CSFQ §3).
    pub const DEFAULT_LIMIT_BYTES: u64 = 64_000;

    fn limit(&self) -> Limit {
        Limit::configured(
            self.limit,
            self.limit_bytes.map(|b| b.0),
            Limit::new(None, Some(Self::DEFAULT_LIMIT_BYTES)),
        )
    }

    /// The table with every default filled in (`net::resolved`): the shared buffer.
    pub fn resolved(&self) -> Self {
        let limit = self.limit();
        DrrConfig {
            limit: limit.packets,
            limit_bytes: limit.bytes.map(Bytes),
            ..self.clone()
        }
    }
}

impl QdiscConfig for DrrConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        self.limit().validate(path)?;
        if self.quantum.0 == 0 {
            return Err(ScenarioError::new(
                format!("{path}.quantum"),
                "must be > 0 bytes, got 0",
            ));
        }
        Ok(())
    }

    fn build(&self, _link: &LinkInfo, _rng: Rng) -> Box<dyn QueueDisc> {
        Box::new(Drr::new(self))
    }
}

/// DRR's parameters in effect.
#[derive(Clone, Copy, Debug)]
struct Params {
    /// The shared buffer and its longest-queue drop (in bytes, as ns-2).
    pushout: PushOut,
    /// Bytes.
    quantum: u64,
    /// A flow joining the round starts its turns afresh (`paper`), or keeps the mark of a turn
    /// that a push-out interrupted (`ns2`).
    joins_afresh: bool,
}

/// What DRR keeps per flow.
#[derive(Clone, Copy, Debug, Default)]
struct Turn {
    /// Bytes the flow may still send.
    deficit: u64,
    /// Its turn has begun: this turn's quantum is in `deficit` (ns-2's `turn`).
    begun: bool,
}

pub struct Drr {
    params: Params,
    /// Per-flow queues, each flow with its turn; the active flows in round-robin order.
    backlog: FlowBacklog<Turn>,
}

impl Drr {
    pub fn new(config: &DrrConfig) -> Self {
        Drr {
            params: Params {
                pushout: PushOut {
                    limit: config.limit(),
                    longest_by: Occupancy::Bytes,
                    end: config.pushout,
                },
                quantum: config.quantum.0,
                joins_afresh: config.profile == DrrProfile::Paper,
            },
            backlog: FlowBacklog::default(),
        }
    }
}

impl QueueDisc for Drr {
    fn enqueue(&mut self, id: PacketId, ctx: &mut QdiscCtx) -> Verdict {
        if self.backlog.push(id, ctx) {
            // A flow joining the round has no deficit (Shreedhar–Varghese Fig. 3; drr.cc enque()
            // `deficitCounter=0`); its first turn gives it a quantum.
            let turn = self.backlog.state_mut(ctx.packets[id].flow);
            turn.deficit = 0;
            if self.params.joins_afresh {
                turn.begun = false;
            }
        }
        // Longest-queue drop (CSFQ §3; ns-2 drops the head of the longest queue in bytes).
        self.params.pushout.enforce(&mut self.backlog, id, ctx)
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        loop {
            let flow = self.backlog.first_active()?;
            let (_, head) = self.backlog.head(flow).expect("active flows have packets");
            let size = ctx.packets[head].size as u64;
            let quantum = self.params.quantum;
            let turn = self.backlog.state_mut(flow);
            if !turn.begun {
                turn.deficit += quantum;
                turn.begun = true;
            }
            if size <= turn.deficit {
                turn.deficit -= size;
                let packet = self.backlog.take(flow, End::Head, ctx);
                if self.backlog.head(flow).is_none() {
                    // Served empty: it leaves the round and forgets its turn (drr.cc deque()).
                    *self.backlog.state_mut(flow) = Turn::default();
                }
                return Some(packet);
            }
            // Not enough deficit: the turn ends, and the flow waits for the next round.
            turn.begun = false;
            self.backlog.rotate();
        }
    }

    fn counters(&self) -> Vec<(&'static str, f64)> {
        // Most flows ever queued at once: the size of the per-flow state in use.
        vec![("peak_active_flows", self.backlog.peak_active() as f64)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Packet;
    use crate::qdisc::testing::QdiscHarness;
    use crate::qdisc::DropReason;
    use DropReason::Pushout;
    use Verdict::{Dropped, Enqueued};

    fn drr(limit: Option<u64>, quantum: u64) -> QdiscHarness<Drr> {
        QdiscHarness::new(Box::new(Drr::new(&DrrConfig {
            limit,
            quantum: Bytes(quantum),
            ..Default::default()
        })))
    }

    /// A packet of `size` bytes, told apart from its flow's others by `seq`.
    fn packet(flow: u32, size: u32, seq: u64) -> Packet {
        Packet {
            flow,
            size,
            seq,
            ..Default::default()
        }
    }

    /// The pushed-out packets so far, as (flow, seq, reason).
    fn pushed_out(h: &QdiscHarness<Drr>) -> Vec<(u32, u64, DropReason)> {
        h.dropped.iter().map(|(p, reason)| (p.flow, p.seq, *reason)).collect()
    }

    #[test]
    fn serves_bytes_not_packets_per_round() {
        // Quantum 1500: per round flow 0 sends one 1500-byte packet, flow 1 three of 500.
        let mut h = drr(None, 1500);
        for i in 0..6 {
            assert_eq!(h.offer(0, packet(0, 1500, i)).0, Enqueued);
            for k in 0..3 {
                assert_eq!(h.offer(0, packet(1, 500, 3 * i + k)).0, Enqueued);
            }
        }
        let mut order = Vec::new();
        while let Some(p) = h.depart(0) {
            order.push(p.flow);
        }
        assert_eq!(&order[..8], &[0, 1, 1, 1, 0, 1, 1, 1]);
        assert_eq!(order.len(), 24);
        assert_eq!((h.backlog.packets, h.backlog.bytes), (0, 0));
        assert_eq!(h.q.counters(), vec![("peak_active_flows", 2.0)]);
    }

    #[test]
    fn full_buffer_pushes_out_the_head_of_the_longest_queue() {
        let mut h = drr(Some(4), 1500);
        for seq in 0..3 {
            h.offer(0, packet(7, 1000, seq));
        }
        h.offer(0, packet(2, 1000, 0));
        // Buffer full (4 packets): an arrival of a short flow is admitted, flow 7 loses its head.
        assert_eq!(h.offer(0, packet(2, 1000, 1)).0, Enqueued);
        assert_eq!(pushed_out(&h), vec![(7, 0, Pushout)]);
        // Flows 7 and 2 now tie at 2 packets; a third flow's arrival hits the first in round order (7).
        assert_eq!(h.offer(0, packet(3, 1000, 0)).0, Enqueued);
        assert_eq!(pushed_out(&h)[1], (7, 1, Pushout));
        // ns-2 drops the head, not the tail, of the longest queue, even when the arrival made it longest.
        let mut h = drr(Some(1), 1500);
        assert_eq!(h.offer(0, packet(1, 1000, 0)).0, Enqueued);
        assert_eq!(h.offer(0, packet(1, 1000, 1)).0, Enqueued);
        assert_eq!(pushed_out(&h), vec![(1, 0, Pushout)]);
        // The arrival is the victim when it alone forms the longest queue (1500 > 1000 bytes).
        assert_eq!(h.offer(0, packet(4, 1500, 0)).0, Dropped(Pushout));
        assert_eq!(pushed_out(&h).len(), 1);
        assert_eq!(h.depart(0).map(|p| (p.flow, p.seq)), Some((1, 1)));
        assert!(h.depart(0).is_none());
    }

    #[test]
    fn tail_pushout_drops_the_newest_packet_of_the_longest_queue() {
        let mut h = QdiscHarness::new(Box::new(Drr::new(&DrrConfig {
            limit: Some(4),
            pushout: End::Tail,
            ..Default::default()
        })));
        for seq in 0..3 {
            h.offer(0, packet(7, 1000, seq));
        }
        h.offer(0, packet(2, 1000, 0));
        assert_eq!(h.offer(0, packet(2, 1000, 1)).0, Enqueued);
        assert_eq!(pushed_out(&h), vec![(7, 2, Pushout)]);
        // An arrival that makes its own queue the longest is itself the newest packet there.
        assert_eq!(h.offer(0, packet(2, 1000, 2)).0, Dropped(Pushout));
        assert_eq!(pushed_out(&h).len(), 1);
    }

    #[test]
    fn ns2_keeps_the_turn_of_a_flow_pushed_out_empty() {
        // Five flows of 1000-byte packets on a 4000-byte buffer, quantum 1000. Flow 1 sends one
        // packet of its turn; then every queue holds one packet, and the next arrival pushes out
        // the first of the tie from the flow being served: flow 1's last packet, mid-turn.
        let run = |profile| {
            let mut h = QdiscHarness::new(Box::new(Drr::new(&DrrConfig {
                limit_bytes: Some(Bytes(4000)),
                profile,
                ..Default::default()
            })));
            let mut sent = Vec::new();
            let mut depart = |h: &mut QdiscHarness<Drr>| sent.push(h.depart(0).map(|p| (p.flow, p.seq)).unwrap());
            for (flow, seq) in [(1, 0), (1, 1), (2, 0)] {
                h.offer(0, packet(flow, 1000, seq));
            }
            depart(&mut h);
            for flow in [3, 4, 5] {
                assert_eq!(h.offer(0, packet(flow, 1000, 0)).0, Enqueued);
            }
            assert_eq!(pushed_out(&h), vec![(1, 1, Pushout)]);
            depart(&mut h);
            // Flow 1 comes back behind 3, 4 and 5; flow 3 comes back behind it.
            h.offer(0, packet(1, 1000, 2));
            depart(&mut h);
            h.offer(0, packet(3, 1000, 1));
            while h.backlog.packets > 0 {
                depart(&mut h);
            }
            assert_eq!(pushed_out(&h).len(), 1);
            sent
        };
        let before = [(1, 0), (2, 0), (3, 0), (4, 0), (5, 0)];
        assert_eq!(run(DrrProfile::Paper), [&before[..], &[(1, 2), (3, 1)]].concat());
        // ns-2: flow 1's next turn adds no quantum and ends at once, so flow 3 goes first.
        assert_eq!(run(DrrProfile::Ns2), [&before[..], &[(3, 1), (1, 2)]].concat());
    }

    #[test]
    fn validation_names_the_field() {
        let err = DrrConfig {
            quantum: Bytes(0),
            ..Default::default()
        }
        .validate("q")
        .unwrap_err();
        assert_eq!(err.to_string(), "q.quantum: must be > 0 bytes, got 0");
        let err = DrrConfig {
            limit: Some(0),
            ..Default::default()
        }
        .validate("q")
        .unwrap_err();
        assert_eq!(err.to_string(), "q.limit: must be > 0, got 0");
    }
}
