//! LQD, longest queue drop on one shared FIFO buffer (B. Suter, T. V. Lakshman, D. Stiliadis,
//! A. K. Choudhury, "Design considerations for supporting TCP with per-flow queueing", IEEE
//! INFOCOM 1998), the gateway BRED §5.2.2 (Fig. 12) compares itself with.
//!
//! Packets leave first in, first out; the router only accounts how much of the buffer each flow
//! (flow id, as DRR) holds. An arrival is always admitted, and while the buffer is over its bound
//! packets of the flow holding the most are pushed out (`pushout.rs`, the rule DRR runs too).
//! BRED §2 describes the LQD it compares with: "a packet of the flow with maximum number of
//! packets in the buffer is dropped such that the chosen packet is farthest from the end of the
//! buffer" — counted in packets, the head of that flow's packets (`longest_by = "packets"`,
//! `pushout = "head"`, the defaults); "dropping packets from the front was proposed in [11]",
//! Suter et al., so that TCP senders learn of the loss a queue's worth of time sooner.
//!
//! Storage: each flow's packets in arrival order (the [`FlowBacklog`] DRR keeps too), and the
//! FIFO as (flow, arrival number) entries; an entry whose packet was pushed out is skipped when
//! it reaches the head.

use super::droptail::DropTailConfig;
use super::pushout::{End, FlowBacklog, Occupancy, PushOut};
use super::{Limit, LinkInfo, QdiscConfig, QdiscCtx, QueueDisc, Verdict};
use crate::error::ScenarioError;
use crate::packet::{FlowId, PacketId};
use crate::rng::Rng;
use crate::units::Bytes;
use serde::Deserialize;
use std::collections::VecDeque;

/// `type = "lqd"`; every field optional.
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LqdConfig {
    /// Shared buffer in packets and/or bytes; with neither, 1000 packets (as drop-tail, Linux's
    /// default `txqueuelen`; LQD has no Linux qdisc).
    pub limit: Option<u64>,
    pub limit_bytes: Option<Bytes>,
    /// What the longest flow holds the most of: `"packets"` (BRED §2, "maximum number of packets
    /// in the buffer") or `"bytes"`.
    pub longest_by: Occupancy,
    /// End of that flow's packets pushed out: `"head"` (BRED §2, "farthest from the end of the
    /// buffer"; Suter et al.'s drop from front) or `"tail"`.
    pub pushout: End,
}

impl Default for LqdConfig {
    fn default() -> Self {
        LqdConfig {
            limit: None,
            limit_bytes: None,
            longest_by: Occupancy::Packets,
            pushout: End::Head,
        }
    }
}

impl LqdConfig {
    /// The buffer is drop-tail's, default included.
    fn limit(&self) -> Limit {
        DropTailConfig {
            limit: self.limit,
            limit_bytes: self.limit_bytes,
        }
        .limit()
    }
}

impl QdiscConfig for LqdConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        self.limit().validate(path)
    }

    fn build(&self, _link: &LinkInfo, _rng: Rng) -> Box<dyn QueueDisc> {
        Box::new(Lqd::new(self))
    }
}

pub struct Lqd {
    pushout: PushOut,
    /// Per-flow packets, the flows holding any in the order they came to.
    backlog: FlowBacklog,
    /// The FIFO: (flow, arrival number) of each packet queued, or pushed out since it arrived.
    order: VecDeque<(FlowId, u64)>,
}

impl Lqd {
    pub fn new(config: &LqdConfig) -> Self {
        Lqd {
            pushout: PushOut {
                limit: config.limit(),
                longest_by: config.longest_by,
                end: config.pushout,
            },
            backlog: FlowBacklog::default(),
            order: VecDeque::new(),
        }
    }
}

impl QueueDisc for Lqd {
    fn enqueue(&mut self, id: PacketId, ctx: &mut QdiscCtx) -> Verdict {
        self.backlog.push(id, ctx);
        self.order.push_back((ctx.packets[id].flow, self.backlog.arrivals()));
        self.pushout.enforce(&mut self.backlog, id, ctx)
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        loop {
            let (flow, arrival) = self.order.pop_front()?;
            // Otherwise that packet was pushed out: skip its entry.
            if self.backlog.head(flow).is_some_and(|(n, _)| n == arrival) {
                return Some(self.backlog.take(flow, End::Head, ctx));
            }
        }
    }

    fn counters(&self) -> Vec<(&'static str, f64)> {
        // Most flows ever holding packets at once: the size of the per-flow accounting in use.
        vec![("peak_active_flows", self.backlog.peak_active() as f64)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Packet;
    use crate::qdisc::testing::QdiscHarness;
    use crate::qdisc::DropReason::Pushout;
    use Verdict::{Dropped, Enqueued};

    fn lqd(config: LqdConfig) -> QdiscHarness<Lqd> {
        config.validate("q").unwrap();
        QdiscHarness::new(Box::new(Lqd::new(&config)))
    }

    fn packet(flow: u32, size: u32, seq: u64) -> Packet {
        Packet {
            flow,
            size,
            seq,
            ..Default::default()
        }
    }

    /// The queue's packets in departure order, as (flow, seq).
    fn departures(h: &mut QdiscHarness<Lqd>) -> Vec<(u32, u64)> {
        std::iter::from_fn(|| h.depart(0).map(|p| (p.flow, p.seq))).collect()
    }

    #[test]
    fn serves_first_in_first_out_across_flows() {
        let mut h = lqd(LqdConfig::default());
        for (flow, seq) in [(1, 0), (2, 0), (1, 1), (3, 0), (2, 1)] {
            assert_eq!(h.offer(0, packet(flow, 1000, seq)).0, Enqueued);
        }
        assert_eq!(departures(&mut h), [(1, 0), (2, 0), (1, 1), (3, 0), (2, 1)]);
    }

    #[test]
    fn a_full_buffer_pushes_out_the_head_of_the_flow_with_most_packets() {
        let mut h = lqd(LqdConfig {
            limit: Some(5),
            ..Default::default()
        });
        // Flow 1: three 500-byte packets; flow 2: two of 1500 (more bytes, fewer packets).
        for (flow, size, seq) in [(1, 500, 0), (2, 1500, 0), (1, 500, 1), (2, 1500, 1), (1, 500, 2)] {
            h.offer(0, packet(flow, size, seq));
        }
        // A sixth packet (flow 3) overfills the buffer: flow 1's oldest packet goes.
        assert_eq!(h.offer(0, packet(3, 1000, 0)).0, Enqueued);
        assert_eq!(
            h.dropped.iter().map(|(p, r)| (p.flow, p.seq, *r)).collect::<Vec<_>>(),
            [(1, 0, Pushout)]
        );
        // The FIFO skips the pushed-out packet and keeps everyone else's order.
        assert_eq!(departures(&mut h), [(2, 0), (1, 1), (2, 1), (1, 2), (3, 0)]);
    }

    #[test]
    fn bytes_and_tail_are_options() {
        let mut h = lqd(LqdConfig {
            limit: Some(5),
            longest_by: Occupancy::Bytes,
            pushout: End::Tail,
            ..Default::default()
        });
        for (flow, size, seq) in [(1, 500, 0), (2, 1500, 0), (1, 500, 1), (2, 1500, 1), (1, 500, 2)] {
            h.offer(0, packet(flow, size, seq));
        }
        // Flow 2 holds the most bytes (3000): its newest packet goes.
        h.offer(0, packet(3, 1000, 0));
        assert_eq!((h.dropped[0].0.flow, h.dropped[0].0.seq), (2, 1));
        // Flows 1 and 2 now tie at 1500 bytes; the first to have queued (1) loses its newest.
        assert_eq!(h.offer(0, packet(4, 100, 0)).0, Enqueued);
        assert_eq!((h.dropped[1].0.flow, h.dropped[1].0.seq), (1, 2));
        // An arrival that alone makes its flow the longest is its own victim at the tail.
        assert_eq!(h.offer(0, packet(5, 2000, 0)).0, Dropped(Pushout));
        assert_eq!(departures(&mut h), [(1, 0), (2, 0), (1, 1), (3, 0), (4, 0)]);
        assert_eq!(h.q.counters(), vec![("peak_active_flows", 5.0)]);
    }

    #[test]
    fn an_unknown_end_is_an_error() {
        let err = serde_json::from_value::<LqdConfig>(serde_json::json!({ "pushout": "middle" }))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("unknown variant `middle`, expected `head` or `tail`"),
            "{err}"
        );
    }
}
