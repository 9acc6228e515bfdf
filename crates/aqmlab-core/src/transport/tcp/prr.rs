//! Proportional Rate Reduction (RFC 6937) as Linux runs it in recovery (tcp_input.c
//! tcp_init_cwnd_reduction(), tcp_cwnd_reduction()), in packets.
//!
//! On each ACK that delivers data during recovery the window becomes in-flight + sndcnt:
//! - while more than ssthresh packets are in flight, sending follows the deliveries
//!   scaled by ssthresh/RecoverFS: sndcnt = ⌈prr_delivered·ssthresh/RecoverFS⌉ − prr_out
//!   (RFC 6937 §3, proportional part), where Linux's RecoverFS is `prior_cwnd`, the
//!   window when recovery began (the RFC's is the pipe then);
//! - at or below ssthresh, the slow start reduction bound (SSRB): at most one packet more
//!   than delivered, sndcnt = min(ssthresh − in-flight, max(prr_delivered − prr_out,
//!   delivered) + 1), the +1 only on an ACK that advanced the cumulative ACK without
//!   newly marking a loss;
//! - the first ACK of recovery sends at least one packet (the fast retransmission).

/// PRR's state for one recovery.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Prr {
    /// RecoverFS: cwnd when recovery began (`prior_cwnd`).
    pub recover_fs: u64,
    /// Packets delivered (cumulatively or by SACK) since recovery began (`prr_delivered`).
    pub delivered: u64,
    /// Packets sent since recovery began (`prr_out`).
    pub out: u64,
}

impl Prr {
    /// tcp_init_cwnd_reduction(): recovery begins with the window `cwnd`.
    pub fn start(cwnd: u64) -> Self {
        Prr {
            recover_fs: cwnd.max(1),
            delivered: 0,
            out: 0,
        }
    }

    /// tcp_cwnd_reduction(): the window after an ACK that delivered `newly_delivered`
    /// packets, with `in_flight` packets in flight after it; `una_advanced_no_loss`: it moved
    /// the cumulative ACK and marked no new loss. None when it delivered nothing (the window stays).
    pub fn cwnd(
        &mut self,
        ssthresh: u64,
        in_flight: u64,
        newly_delivered: u64,
        una_advanced_no_loss: bool,
    ) -> Option<u64> {
        if newly_delivered == 0 {
            return None;
        }
        self.delivered += newly_delivered;
        let sndcnt = if in_flight > ssthresh {
            (ssthresh * self.delivered)
                .div_ceil(self.recover_fs)
                .saturating_sub(self.out)
        } else {
            let bound = self.delivered.saturating_sub(self.out).max(newly_delivered) + u64::from(una_advanced_no_loss);
            bound.min(ssthresh - in_flight)
        };
        // "Force a fast retransmit upon entering fast recovery".
        let sndcnt = sndcnt.max(u64::from(self.out == 0));
        Some(in_flight + sndcnt)
    }

    /// Packets sent in recovery (`prr_out`).
    pub fn sent(&mut self, packets: u64) {
        self.out += packets;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proportional_while_in_flight_is_above_ssthresh() {
        // cwnd 20 cut to ssthresh 14; 18 in flight, one delivered per ACK, everything allowed is sent.
        let mut prr = Prr::start(20);
        let mut in_flight = 18;
        for ack in 1..=10u64 {
            let cwnd = prr.cwnd(14, in_flight, 1, false).unwrap();
            let sent = cwnd - in_flight;
            prr.sent(sent);
            in_flight += sent;
            // RFC 6937: after ack deliveries, ⌈ack · 14/20⌉ packets have been sent.
            assert_eq!(prr.out, (ack * 14).div_ceil(20), "ACK {ack}");
            in_flight -= 1;
        }
    }

    #[test]
    fn ssrb_below_ssthresh_and_the_forced_retransmission() {
        // In flight far below ssthresh: at most one more than delivered (slow start).
        let mut prr = Prr::start(20);
        assert_eq!(prr.cwnd(14, 5, 2, true), Some(5 + 3));
        prr.sent(3);
        // Without the cumulative ACK moving, exactly the delivered packets.
        assert_eq!(prr.cwnd(14, 6, 2, false), Some(6 + 2));
        // Bounded by ssthresh − in flight.
        assert_eq!(prr.cwnd(14, 13, 4, true), Some(14));
        // Nothing delivered: the window stays.
        assert_eq!(prr.cwnd(14, 13, 0, true), None);
        // The first ACK of recovery sends one even when the proportion allows none.
        let mut prr = Prr::start(100);
        assert_eq!(prr.cwnd(10, 90, 1, false), Some(91));
    }
}
