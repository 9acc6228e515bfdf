//! DualPI2, the DualQ Coupled AQM with a PI2 base (De Schepper, Briscoe & White, RFC 9332; Linux
//! `net/sched/sch_dualpi2.c`, mainline since 6.17).
//!
//! Two FIFOs share one link: the L queue for L4S packets (ECN field ECT(1) or CE, RFC 9332 §2.3
//! and RFC 9331 §4.1), the C queue for the rest. One PI controller, run every `tupdate`, sets a
//! base probability p′ from the queueing delay; the C queue drops (or marks) with p_C = p′² and
//! the L queue marks with p_CL = k·p′ (k = 2, §2.1 eq. (1)), or with its own shallow AQM on its
//! own sojourn where that is higher (p_L = max(p_CL, native), §2.5.1.1). So a Classic flow, whose
//! rate goes as 1/√p, and a Scalable one, whose rate goes as 1/p, get about the same rate while
//! the L queue stays a few packets deep. A scheduler between the queues lets L go first while
//! guaranteeing C a share (§4.2.2). When p′ is so high that p_CL saturates (overload, §4.2.1),
//! L packets are dropped as Classic ones are.
//!
//! Two readings, as `pie.rs` / `pie_linux.rs`: [`rfc9332`] is Appendix A's pseudocode
//! (`type = "dualpi2"`), [`linux`] is sch_dualpi2.c (`profile = "linux"`, tc's words); this file
//! holds what both use: the two queues and the classifier. Neither has RFC 9330 §8.2's (or the
//! queue-protection draft's) per-flow queue protection: Linux's sch_dualpi2 has none, only the
//! scheduler's weight and the overload rule.

pub mod linux;
pub mod rfc9332;

use super::Fifo;
use crate::packet::{Ecn, PacketArena, PacketId};
use crate::time::Time;
use serde::Deserialize;

/// Which ECN codepoints go to the L queue: tc dualpi2's `l4s_ect` | `any_ect` (Linux
/// `TC_DUALPI2_ECN_MASK_L4S_ECT` = 1, `_ANY_ECT` = 3, a mask over the ECN field).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Classification {
    /// ECT(1) and CE (RFC 9332 §2.3: "ECN field ... ECT(1) or CE"; Linux's default).
    #[default]
    L4sEct,
    /// Every ECN-capable packet, ECT(0) included (for DCTCP senders that set ECT(0)).
    AnyEct,
}

impl Classification {
    /// Whether a packet carrying `ecn` is queued in L: its ECN bits (Not-ECT 00, ECT(1) 01,
    /// ECT(0) 10, CE 11) against the mask (sch_dualpi2.c dualpi2_skb_classify: `cb->ect & q->ecn_mask`).
    pub fn is_l4s(self, ecn: Ecn) -> bool {
        let bits = match ecn {
            Ecn::NotEct => 0b00,
            Ecn::Ect1 => 0b01,
            Ecn::Ect0 => 0b10,
            Ecn::Ce => 0b11,
        };
        let mask = match self {
            Classification::L4sEct => 0b01,
            Classification::AnyEct => 0b11,
        };
        bits & mask != 0
    }
}

/// The two queues: `l` (L4S) and `c` (Classic), each a FIFO of the packets it holds.
#[derive(Default)]
pub struct DualQueue {
    pub l: Fifo,
    pub c: Fifo,
}

/// Which of the two queues.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Queue {
    L,
    C,
}

impl DualQueue {
    pub fn push(&mut self, queue: Queue, id: PacketId) {
        match queue {
            Queue::L => self.l.push(id),
            Queue::C => self.c.push(id),
        }
    }

    pub fn pop(&mut self, queue: Queue, packets: &PacketArena) -> Option<PacketId> {
        match queue {
            Queue::L => self.l.pop(packets),
            Queue::C => self.c.pop(packets),
        }
    }

    /// How long the head of `fifo` has waited at `now`: 0 when it is empty (RFC 9332 A.1's
    /// `cq.time()`, "queuing time of first-in Classic packet"; Linux get_queue_delays).
    pub fn head_sojourn(fifo: &Fifo, now: Time, packets: &PacketArena) -> Time {
        fifo.front().map_or(0, |head| now - packets[head].enqueued_at)
    }
}

/// What the AQM does with a packet it judges: both readings' verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Pass,
    Mark,
    Drop,
}

/// What both readings count besides the engine's drop and mark tables (Linux's
/// `packets_in_l` / `packets_in_c`, and the drops and marks of each queue).
#[derive(Clone, Copy, Debug, Default)]
pub struct DualStats {
    /// Packets queued in L and in C.
    pub l_packets: u64,
    pub c_packets: u64,
    /// Marks and AQM drops in each queue (overflow drops are the engine's `overflow`).
    pub l_marks: u64,
    pub c_marks: u64,
    pub l_drops: u64,
    pub c_drops: u64,
}

impl DualStats {
    pub fn counters(&self) -> [(&'static str, f64); 6] {
        [
            ("l_packets", self.l_packets as f64),
            ("c_packets", self.c_packets as f64),
            ("l_marks", self.l_marks as f64),
            ("c_marks", self.c_marks as f64),
            ("l_drops", self.l_drops as f64),
            ("c_drops", self.c_drops as f64),
        ]
    }

    pub fn count_mark(&mut self, queue: Queue) {
        match queue {
            Queue::L => self.l_marks += 1,
            Queue::C => self.c_marks += 1,
        }
    }

    pub fn count_drop(&mut self, queue: Queue) {
        match queue {
            Queue::L => self.l_drops += 1,
            Queue::C => self.c_drops += 1,
        }
    }

    pub fn count_arrival(&mut self, queue: Queue) {
        match queue {
            Queue::L => self.l_packets += 1,
            Queue::C => self.c_packets += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classification_reads_the_ecn_bits_through_the_mask() {
        let l4s = [Ecn::NotEct, Ecn::Ect0, Ecn::Ect1, Ecn::Ce].map(|e| Classification::L4sEct.is_l4s(e));
        assert_eq!(l4s, [false, false, true, true]);
        let any = [Ecn::NotEct, Ecn::Ect0, Ecn::Ect1, Ecn::Ce].map(|e| Classification::AnyEct.is_l4s(e));
        assert_eq!(any, [false, true, true, true]);
    }
}
