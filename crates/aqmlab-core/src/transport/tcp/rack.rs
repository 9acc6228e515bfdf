//! The linux profile's retransmission queue: per packet outstanding, whether it is SACKed,
//! marked lost, retransmitted and when it was last sent (Linux's `TCPCB_SACKED_ACKED`,
//! `TCPCB_LOST`, `TCPCB_SACKED_RETRANS` and `skb_mstamp`), with RACK's loss detection
//! (RFC 8985; net/ipv4/tcp_recovery.c).
//!
//! - RACK remembers the send time of the most recently sent packet that was delivered
//!   (cumulatively or by SACK) and the RTT of the packet delivered last (RFC 8985 §6.2
//!   step 2, tcp_rack_advance()). A retransmitted packet delivered sooner than the minimum
//!   RTT after its retransmission was the original's delivery and does not count (ibid.).
//! - A packet not SACKed, sent before that one, is lost (RFC 8985 §6.2 step 5,
//!   tcp_rack_detect_loss()) once RACK.rtt + the reordering window have passed since it
//!   was sent. With no reordering seen the window is zero in recovery, after a timeout and
//!   once `reordering` (3) packets are SACKed; otherwise it is min(min RTT / 4, SRTT)
//!   (tcp_rack_reo_wnd()). A packet still within it is left to the reordering timer
//!   ([`Detection::expires_in`]). A retransmission is lost by the same rule, which is what
//!   lets Linux repair it without a timeout.
//! - Packets in flight are Linux's packets_out − sacked_out − lost_out + retrans_out
//!   (tcp_packets_in_flight()): a lost packet leaves the network, its retransmission
//!   re-enters it.
//! - A timeout marks every packet not SACKed lost and keeps the SACKed ones (tcp_enter_loss()).

use crate::time::Time;
use std::collections::VecDeque;

/// Linux's `tp->reordering` default (`sysctl_tcp_reordering` 3).
pub const REORDERING: u64 = 3;

/// What one pass of loss detection found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Detection {
    /// Packets newly marked lost.
    pub marked: u64,
    /// The longest a packet sent before RACK's still has before it is deemed lost
    /// (tcp_rack_detect_loss()'s `reo_timeout`): when the reordering timer is due.
    pub expires_in: Option<Time>,
}

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
    /// RACK.rtt: the RTT of the packet delivered last.
    rack_rtt: Time,
    /// RACK moved since the last detection (`rack.advanced`).
    advanced: bool,
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
        self.rack_rtt = rtt;
        self.advanced = true;
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

    /// RACK's reordering window (tcp_rack_reo_wnd(); no reordering is ever seen here): zero
    /// when `recovering` (in recovery or after a timeout) or once `REORDERING` packets are
    /// SACKed, else min(min RTT / 4, `srtt`).
    pub fn reo_wnd(&self, recovering: bool, srtt: Time) -> Time {
        if recovering || self.sacked_out >= REORDERING {
            return 0;
        }
        self.min_rtt.map_or(Time::MAX, |m| m / 4).min(srtt)
    }

    /// tcp_rack_mark_lost(): detection on an ACK, only when it moved RACK.
    pub fn mark_lost(&mut self, reo_wnd: Time, now: Time) -> Detection {
        if !std::mem::take(&mut self.advanced) {
            return Detection::default();
        }
        self.detect_loss(reo_wnd, now)
    }

    /// tcp_rack_detect_loss(): marks lost every packet not SACKed, a retransmission included,
    /// that was sent before RACK's packet at least RACK.rtt + `reo_wnd` before `now`.
    pub fn detect_loss(&mut self, reo_wnd: Time, now: Time) -> Detection {
        let mut found = Detection::default();
        let Some(rack) = self.rack else { return found };
        let deadline = self.rack_rtt.saturating_add(reo_wnd);
        for (i, s) in self.slots.iter_mut().enumerate() {
            // A packet already lost and not yet retransmitted waits for its retransmission.
            let waiting = s.lost && !s.retrans;
            if s.sacked || waiting || (s.sent, self.base + i as u64) >= rack {
                continue;
            }
            let waited = now - s.sent;
            if waited >= deadline {
                self.lost_out += u64::from(!s.lost);
                self.retrans_out -= u64::from(s.retrans);
                s.lost = true;
                s.retrans = false;
                found.marked += 1;
            } else {
                found.expires_in = found.expires_in.max(Some(deadline - waited));
            }
        }
        found
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
        if self.lost_out == 0 {
            return None;
        }
        let i = self.slots.iter().position(|s| s.lost && !s.retrans && !s.sacked)?;
        Some(self.base + i as u64)
    }

    /// The send time of the oldest packet outstanding (the RTO runs from it: tcp_rto_delta_us()).
    pub fn head_sent(&self) -> Option<Time> {
        self.slots.front().map(|s| s.sent)
    }

    /// tcp_any_retrans_done(): a retransmission in flight, or the oldest packet was ever resent.
    pub fn any_retrans_done(&self) -> bool {
        self.retrans_out > 0 || self.slots.front().is_some_and(|s| s.ever_retrans)
    }

    /// Packets sent and not cumulatively acknowledged (`packets_out`).
    pub fn packets_out(&self) -> u64 {
        self.slots.len() as u64
    }

    pub fn sacked_out(&self) -> u64 {
        self.sacked_out
    }

    pub fn lost_out(&self) -> u64 {
        self.lost_out
    }

    pub fn retrans_out(&self) -> u64 {
        self.retrans_out
    }

    /// tcp_min_rtt(): the least RTT of a packet sent once.
    pub fn min_rtt(&self) -> Option<Time> {
        self.min_rtt
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
        let srtt = 50 * MS;
        // 0 delivered (min RTT 50 ms), 1 and 2 missing, 3 and 4 SACKed: fewer than `reordering`,
        // so the window is min RTT / 4 (RFC 8985 §6.2 step 4: min_RTT/4, at most SRTT).
        assert_eq!(b.ack(1, 50 * MS), 1);
        assert_eq!(b.sack(3, 5, 51 * MS), 2);
        let reo_wnd = b.reo_wnd(false, srtt);
        assert_eq!(reo_wnd, 47 * MS / 4, "min RTT 47 ms (packet 4)");
        // RACK.rtt 47 ms (packet 4, delivered last): 1 and 2 wait until RACK.rtt + reo_wnd
        // after their send, the later one (2, sent at 2 ms) last.
        let found = b.mark_lost(reo_wnd, 51 * MS);
        assert_eq!(found.marked, 0);
        assert_eq!(found.expires_in, Some(2 * MS + 47 * MS + reo_wnd - 51 * MS));
        assert_eq!(b.in_flight(), 7);
        // An ACK that does not move RACK detects nothing (tcp_rack_mark_lost()).
        assert_eq!(b.mark_lost(reo_wnd, 60 * MS), Detection::default());
        // The third SACKed packet (6): the window is zero; 1, 2 and 5, sent before 6, are lost.
        assert_eq!(b.sack(6, 7, 52 * MS), 1);
        assert_eq!(b.reo_wnd(false, srtt), 0);
        assert_eq!(b.mark_lost(0, 52 * MS).marked, 3);
        assert_eq!((b.sacked_out(), b.lost_out(), b.in_flight()), (3, 3, 3));
        assert_eq!(b.next_lost(), Some(1));
        // Retransmitting 1 puts it back in flight; it is not lost again until a packet
        // sent after the retransmission is delivered.
        b.sent(1, 60 * MS);
        assert_eq!((b.next_lost(), b.in_flight()), (Some(2), 4));
        assert_eq!(b.sack(7, 8, 62 * MS), 1);
        assert_eq!(b.mark_lost(0, 62 * MS).marked, 0);
        b.sent(10, 70 * MS);
        assert_eq!(b.sack(10, 11, 120 * MS), 1);
        // 10 was sent after the retransmission of 1: the retransmission is lost; so are 8 and 9.
        assert_eq!(b.mark_lost(0, 120 * MS).marked, 3);
        assert_eq!(b.next_lost(), Some(1));
        assert_eq!(b.counters(), b.recount());
    }

    #[test]
    fn the_reordering_window_expires_rack_rtt_plus_reo_wnd_after_the_send() {
        // RFC 8985 §6.2 step 5: lost once now >= xmit_ts + RACK.rtt + reo_wnd.
        let mut b = board(4);
        assert_eq!(b.ack(1, 40 * MS), 1); // min RTT 40 ms
        assert_eq!(b.sack(2, 3, 42 * MS), 1); // RACK.rtt 40 ms, packet 1 (sent at 1 ms) missing
        let reo_wnd = b.reo_wnd(false, 40 * MS);
        assert_eq!(reo_wnd, 10 * MS);
        let due = MS + 40 * MS + reo_wnd;
        assert_eq!(b.mark_lost(reo_wnd, 42 * MS).expires_in, Some(due - 42 * MS));
        assert_eq!(b.detect_loss(reo_wnd, due - 1).marked, 0);
        assert_eq!(b.detect_loss(reo_wnd, due).marked, 1);
        assert_eq!(b.next_lost(), Some(1));
        // The window is at most SRTT, and zero when recovering.
        assert_eq!(b.reo_wnd(false, 5 * MS), 5 * MS);
        assert_eq!(b.reo_wnd(true, 40 * MS), 0);
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
