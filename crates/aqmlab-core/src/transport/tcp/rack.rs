//! The linux profile's retransmission queue: per packet outstanding, whether it is SACKed,
//! marked lost, retransmitted and when it was last sent (Linux's `TCPCB_SACKED_ACKED`,
//! `TCPCB_LOST`, `TCPCB_SACKED_RETRANS` and `skb_mstamp`), with RACK's loss detection
//! (RFC 8985; net/ipv4/tcp_recovery.c).
//!
//! - RACK remembers the send time of the most recently sent packet that was delivered
//!   (cumulatively or by SACK; tcp_rack_advance()). A retransmitted packet delivered sooner
//!   than the minimum RTT after its retransmission was the original's delivery and does
//!   not count (ibid.).
//! - A packet not SACKed, sent before that one, is lost (tcp_rack_detect_loss()) once
//!   RACK's reordering window has passed. With no reordering seen the window is zero in
//!   recovery, after a timeout and once `reordering` (3) packets are SACKed
//!   (tcp_rack_reo_wnd()); otherwise it is min RTT / 4 and a timer would mark the loss
//!   later: that timer is not modelled (nothing is marked then), so recovery still needs
//!   3 SACKed packets. A retransmission is lost by the same rule, which is what lets Linux
//!   repair it without a timeout.
//! - Packets in flight are Linux's packets_out − sacked_out − lost_out + retrans_out
//!   (tcp_packets_in_flight()): a lost packet leaves the network, its retransmission
//!   re-enters it.
//! - A timeout marks every packet not SACKed lost and keeps the SACKed ones (tcp_enter_loss()).

use crate::time::Time;
use std::collections::VecDeque;

/// Linux's `tp->reordering` default (`sysctl_tcp_reordering` 3).
pub const REORDERING: u64 = 3;

#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    /// When it was last sent.
    sent: Time,
    sacked: bool,
    lost: bool,
    /// A retransmission is in flight (`TCPCB_SACKED_RETRANS`).
    retrans: bool,
    /// Sent more than once (`TCPCB_EVER_RETRANS`).
    ever_retrans: bool,
}

#[derive(Clone, Debug, Default)]
pub struct RackBoard {
    /// Sequence number of `slots[0]`: the cumulative ACK point.
    base: u64,
    /// One slot per packet sent and not cumulatively acknowledged.
    slots: VecDeque<Slot>,
    /// RACK.xmit_ts and RACK.end_seq of the most recently sent delivered packet.
    rack: Option<(Time, u64)>,
    /// The least RTT of a packet sent once (tcp_min_rtt()).
    min_rtt: Option<Time>,
    /// Linux's counters over `slots`: SACKed; lost and not SACKed; retransmission in
    /// flight and not SACKed (only lost packets are retransmitted, so these are lost too).
    sacked_out: u64,
    lost_out: u64,
    retrans_out: u64,
}

impl RackBoard {
    fn slot(&mut self, seq: u64) -> Option<&mut Slot> {
        seq.checked_sub(self.base).and_then(|i| self.slots.get_mut(i as usize))
    }

    /// Packet `seq` leaves at `now`: new (it must be the next one) or a retransmission.
    pub fn sent(&mut self, seq: u64, now: Time) {
        if seq >= self.base + self.slots.len() as u64 {
            debug_assert_eq!(seq, self.base + self.slots.len() as u64);
            self.slots.push_back(Slot {
                sent: now,
                ..Slot::default()
            });
        } else if let Some(s) = self.slot(seq) {
            let counted = !s.sacked && !s.retrans;
            s.sent = now;
            s.retrans = true;
            s.ever_retrans = true;
            self.retrans_out += u64::from(counted);
        }
    }

    /// A delivered packet sent at `sent`: RACK's newest delivered send time (tcp_rack_advance()).
    fn advance_rack(&mut self, seq: u64, slot: Slot, now: Time) {
        let rtt = now.saturating_sub(slot.sent);
        if slot.ever_retrans && self.min_rtt.is_some_and(|m| rtt < m) {
            return;
        }
        if !slot.ever_retrans {
            self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
        }
        if self.rack.is_none_or(|(t, s)| (slot.sent, seq) > (t, s)) {
            self.rack = Some((slot.sent, seq));
        }
    }

    /// SACK block `[start, end)`; returns the packets it SACKed for the first time.
    pub fn sack(&mut self, start: u64, end: u64, now: Time) -> u64 {
        let end = end.min(self.base + self.slots.len() as u64);
        let mut newly = 0;
        for seq in start.max(self.base)..end {
            let i = (seq - self.base) as usize;
            let slot = self.slots[i];
            if !slot.sacked {
                self.slots[i].sacked = true;
                self.sacked_out += 1;
                self.lost_out -= u64::from(slot.lost);
                self.retrans_out -= u64::from(slot.retrans);
                newly += 1;
                self.advance_rack(seq, slot, now);
            }
        }
        newly
    }

    /// The cumulative ACK moved to `una`; returns the packets it delivered that were not SACKed.
    pub fn ack(&mut self, una: u64, now: Time) -> u64 {
        let mut delivered = 0;
        while self.base < una {
            let Some(slot) = self.slots.pop_front() else {
                self.base = una;
                break;
            };
            if slot.sacked {
                self.sacked_out -= 1;
            } else {
                self.lost_out -= u64::from(slot.lost);
                self.retrans_out -= u64::from(slot.retrans);
                delivered += 1;
                self.advance_rack(self.base, slot, now);
            }
            self.base += 1;
        }
        delivered
    }

    /// tcp_rack_detect_loss() with a reordering window of zero: marks lost every packet not
    /// SACKed sent before RACK's packet, a retransmission included; returns how many it marked.
    /// `zero_window`: RACK's window is zero (in recovery or loss, or `REORDERING` SACKed).
    pub fn detect_loss(&mut self, zero_window: bool) -> u64 {
        let Some(rack) = self.rack.filter(|_| zero_window || self.sacked_out >= REORDERING) else {
            return 0;
        };
        let mut marked = 0;
        for (i, s) in self.slots.iter_mut().enumerate() {
            let sent_before = (s.sent, self.base + i as u64) < rack;
            // A packet already lost and not yet retransmitted waits for its retransmission.
            let waiting = s.lost && !s.retrans;
            if !s.sacked && sent_before && !waiting {
                self.lost_out += u64::from(!s.lost);
                self.retrans_out -= u64::from(s.retrans);
                s.lost = true;
                s.retrans = false;
                marked += 1;
            }
        }
        marked
    }

    /// tcp_enter_loss(): every packet not SACKed is lost, no retransmission in flight.
    pub fn all_lost(&mut self) {
        for s in self.slots.iter_mut().filter(|s| !s.sacked) {
            s.lost = true;
            s.retrans = false;
        }
        self.lost_out = self.slots.len() as u64 - self.sacked_out;
        self.retrans_out = 0;
    }

    /// The first packet marked lost and not retransmitted (tcp_xmit_retransmit_queue()).
    pub fn next_lost(&self) -> Option<u64> {
        if self.lost_out == self.retrans_out {
            return None;
        }
        let i = self.slots.iter().position(|s| s.lost && !s.retrans && !s.sacked)?;
        Some(self.base + i as u64)
    }

    pub fn sacked_out(&self) -> u64 {
        self.sacked_out
    }

    pub fn lost_out(&self) -> u64 {
        self.lost_out
    }

    /// tcp_packets_in_flight(): packets_out − sacked_out − lost_out + retrans_out.
    pub fn in_flight(&self) -> u64 {
        self.slots.len() as u64 - self.sacked_out - self.lost_out + self.retrans_out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl RackBoard {
        /// The counters, recounted from the slots.
        fn recount(&self) -> (u64, u64, u64) {
            let count = |f: fn(&Slot) -> bool| self.slots.iter().filter(|s| f(s)).count() as u64;
            (
                count(|s| s.sacked),
                count(|s| s.lost && !s.sacked),
                count(|s| s.retrans && !s.sacked),
            )
        }

        fn counters(&self) -> (u64, u64, u64) {
            (self.sacked_out, self.lost_out, self.retrans_out)
        }
    }

    const MS: Time = 1_000_000;

    /// Packets 0..n sent 1 ms apart.
    fn board(n: u64) -> RackBoard {
        let mut b = RackBoard::default();
        for seq in 0..n {
            b.sent(seq, seq * MS);
        }
        b
    }

    #[test]
    fn packets_sent_before_the_newest_delivered_are_lost_once_three_are_sacked() {
        let mut b = board(10);
        // 0 delivered, 1 and 2 missing, 3 and 4 SACKed: fewer than `reordering`, nothing lost.
        assert_eq!(b.ack(1, 50 * MS), 1);
        assert_eq!(b.sack(3, 5, 51 * MS), 2);
        assert_eq!(b.detect_loss(false), 0);
        assert_eq!(b.in_flight(), 7);
        // The third SACKed packet (6): 1, 2 and 5, sent before 6, are lost; 7..10 are not.
        assert_eq!(b.sack(6, 7, 52 * MS), 1);
        assert_eq!(b.detect_loss(false), 3);
        assert_eq!((b.sacked_out(), b.lost_out(), b.in_flight()), (3, 3, 3));
        assert_eq!(b.next_lost(), Some(1));
        // Retransmitting 1 puts it back in flight; it is not lost again until a packet
        // sent after the retransmission is delivered.
        b.sent(1, 60 * MS);
        assert_eq!((b.next_lost(), b.in_flight()), (Some(2), 4));
        assert_eq!(b.sack(7, 8, 62 * MS), 1);
        assert_eq!(b.detect_loss(true), 0);
        b.sent(10, 70 * MS);
        assert_eq!(b.sack(10, 11, 120 * MS), 1);
        // 10 was sent after the retransmission of 1: the retransmission is lost; so are 8 and 9.
        assert_eq!(b.detect_loss(true), 3);
        assert_eq!(b.next_lost(), Some(1));
        assert_eq!(b.counters(), b.recount());
    }

    #[test]
    fn an_original_delivered_after_its_retransmission_does_not_move_rack() {
        let mut b = board(5);
        assert_eq!(b.ack(1, 40 * MS), 1); // min RTT 40 ms
        b.all_lost();
        assert_eq!((b.lost_out(), b.in_flight()), (4, 0));
        b.sent(1, 300 * MS);
        // Packet 1's SACK 5 ms after its retransmission is the original's: RACK stays at packet 0.
        assert_eq!(b.sack(1, 2, 305 * MS), 1);
        assert_eq!(b.rack, Some((0, 0)));
        // A timeout keeps SACKed packets: 2..5 are lost and go first.
        assert_eq!(b.next_lost(), Some(2));
        assert_eq!(b.counters(), b.recount());
        assert_eq!(b.ack(5, 400 * MS), 3);
        assert_eq!((b.in_flight(), b.next_lost()), (0, None));
        assert_eq!(b.counters(), (0, 0, 0));
    }
}
