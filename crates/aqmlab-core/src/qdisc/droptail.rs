//! Drop-tail FIFO: accept while the buffer has room, drop the arrival otherwise.

use super::{DropReason, Fifo, Limit, LinkInfo, QdiscConfig, QdiscCtx, QueueDisc, Verdict};
use crate::error::ScenarioError;
use crate::packet::PacketId;
use crate::rng::Rng;
use crate::units::Bytes;
use serde::{Deserialize, Serialize};

/// `limit` in packets and/or `limit_bytes`; with neither, 1000 packets.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct DropTailConfig {
    pub limit: Option<u64>,
    pub limit_bytes: Option<Bytes>,
}

impl DropTailConfig {
    pub const DEFAULT_LIMIT_PACKETS: u64 = 1000;

    pub(super) fn limit(&self) -> Limit {
        Limit::configured(
            self.limit,
            self.limit_bytes.map(|b| b.0),
            Limit::new(Some(Self::DEFAULT_LIMIT_PACKETS), None),
        )
    }

    /// The table with every default filled in (`net::resolved`): the bound the queue keeps.
    pub fn resolved(&self) -> Self {
        let limit = self.limit();
        DropTailConfig {
            limit: limit.packets,
            limit_bytes: limit.bytes.map(Bytes),
        }
    }
}

impl DropTailConfig {
    /// The queue itself, for a link to hold without a box (see `net::LinkQueue`).
    pub fn unboxed(&self) -> DropTail {
        DropTail::new(self.limit())
    }
}

impl QdiscConfig for DropTailConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        self.limit().validate(path)
    }

    fn build(&self, _link: &LinkInfo, _rng: Rng) -> Box<dyn QueueDisc> {
        Box::new(self.unboxed())
    }
}

pub struct DropTail {
    // Parameter
    limit: Limit,
    // Variable
    fifo: Fifo,
}

impl DropTail {
    pub fn new(limit: Limit) -> Self {
        DropTail {
            limit,
            fifo: Fifo::default(),
        }
    }

    /// Whether a packet of `size` bytes fits in the empty queue (the engine sends such a
    /// packet at once when the link is idle and its queue empty).
    pub fn admits_alone(&self, size: u32) -> bool {
        self.limit.admits(0, 0, size)
    }
}

impl QueueDisc for DropTail {
    fn enqueue(&mut self, id: PacketId, ctx: &mut QdiscCtx) -> Verdict {
        let queued = ctx.backlog();
        if !self.limit.admits(queued.packets, queued.bytes, ctx.packets[id].size) {
            return Verdict::Dropped(DropReason::Overflow);
        }
        self.fifo.push(id);
        Verdict::Enqueued
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        self.fifo.pop(ctx.packets)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Packet;
    use crate::qdisc::testing::QdiscHarness;
    use crate::rng::stream;

    #[test]
    fn drops_arrivals_beyond_the_byte_limit_and_keeps_fifo_order() {
        let cfg = DropTailConfig {
            limit: None,
            limit_bytes: Some(Bytes(2500)),
        };
        let link = LinkInfo {
            rate_bps: 1e6,
            delay: 0,
            measure_from: 0,
        };
        let mut h = QdiscHarness::new(cfg.build(&link, stream(1, "t")));
        let packet = |seq| Packet {
            size: 1000,
            seq,
            ..Default::default()
        };
        assert_eq!(h.offer(0, packet(0)).0, Verdict::Enqueued);
        assert_eq!(h.offer(0, packet(1)).0, Verdict::Enqueued);
        assert_eq!(h.offer(0, packet(2)).0, Verdict::Dropped(DropReason::Overflow));
        assert_eq!(h.backlog.bytes, 2000);
        assert_eq!(h.depart(0).map(|p| p.seq), Some(0));
        assert_eq!(h.depart(0).map(|p| p.seq), Some(1));
        assert!(h.depart(0).is_none());
    }
}
