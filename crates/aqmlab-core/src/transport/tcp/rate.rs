//! Delivery rate estimation for BBR (net/ipv4/tcp_rate.c; draft-cheng-iccrg-delivery-rate-estimation):
//! each packet sent remembers how much had been delivered and when (`tx.delivered`,
//! `tx.delivered_mstamp`, `tx.first_tx_mstamp`, `tx.is_app_limited`); an ACK that delivers
//! it (cumulatively or by SACK) turns that into a rate sample, delivered packets over the
//! longer of the send phase and the ACK phase of the window they span.
//!
//! - tcp_rate_skb_sent(): with nothing outstanding the sample's clocks restart at the send.
//! - tcp_rate_skb_delivered(): of the packets an ACK delivers, the one sent last (the highest
//!   `tx.delivered`) gives the sample; a SACKed packet counts once, not again when the
//!   cumulative ACK passes it.
//! - tcp_rate_gen(): `delivered` = packets delivered since that packet was sent, over
//!   max(send phase, ACK phase); an interval below the minimum RTT is no sample.
//! - tcp_rate_check_app_limited(): a sender with nothing to send and room in cwnd marks the
//!   samples of the packets then in flight application-limited (`app_limited`).
//!
//! The RTT the sample carries (tcp_clean_rtx_queue()'s `ca_rtt_us`) is that of the packet
//! sent last among those delivered, never-retransmitted ones only (Karn).

use crate::time::{to_secs, Time};
use std::collections::VecDeque;

/// What a packet remembers when sent (`TCP_SKB_CB(skb)->tx` and its send time).
#[derive(Clone, Copy, Debug)]
struct Tx {
    sent: Time,
    /// `first_tx_mstamp`: the send time of the packet last delivered when this one left.
    first_tx: Time,
    /// `delivered_mstamp`, `delivered`: when and how much had been delivered when this one left.
    delivered_at: Time,
    delivered: u64,
    app_limited: bool,
    retransmitted: bool,
}

/// One ACK's rate sample (`struct rate_sample`), in packets and seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RateSample {
    /// Packets delivered over `interval` (0 with no valid interval).
    pub delivered: u64,
    /// The sample's interval; None: no valid sample (`interval_us` −1).
    pub interval: Option<f64>,
    /// `prior_delivered`: the connection's delivered count when the sampled packet was sent.
    pub prior_delivered: u64,
    pub app_limited: bool,
    /// Packets this ACK delivered (`acked_sacked`) and marked lost (`losses`).
    pub acked_sacked: u64,
    pub losses: u64,
    /// The RTT of the packet sent last among those delivered (`rtt_us`), if any was never resent.
    pub rtt: Option<f64>,
    /// Packets in flight before the ACK (`prior_in_flight`).
    pub prior_in_flight: u64,
}

impl RateSample {
    /// The delivery rate, packets per second, of a valid sample.
    pub fn rate(&self) -> Option<f64> {
        self.interval.map(|i| self.delivered as f64 / i)
    }
}

/// The sampled packet of the ACK being processed.
#[derive(Clone, Copy, Debug, Default)]
struct Pending {
    prior: Option<Tx>,
    /// The send phase: the sampled packet's send time less its `first_tx`.
    send_interval: Time,
    /// The latest send time of a never-resent packet delivered.
    rtt_sent: Option<Time>,
}

/// The connection's delivery counters (`tp->delivered`, `delivered_mstamp`, `first_tx_mstamp`,
/// `app_limited`, `lost`) and each outstanding packet's [`Tx`].
#[derive(Clone, Debug, Default)]
pub struct DeliveryRate {
    /// Sequence number of `tx[0]`.
    base: u64,
    /// None: delivered by SACK already (or never sent).
    tx: VecDeque<Option<Tx>>,
    /// Packets delivered so far, cumulatively or by SACK (`tp->delivered`).
    pub delivered: u64,
    /// When the last delivery happened (`tp->delivered_mstamp`).
    pub delivered_at: Time,
    /// Packets marked lost so far (`tp->lost`).
    pub lost: u64,
    first_tx: Time,
    /// The delivered count at which the application-limited period ends (0: none).
    app_limited: u64,
    pending: Pending,
}

impl DeliveryRate {
    /// tcp_rate_skb_sent(): packet `seq` leaves at `now` with `packets_out` outstanding before it.
    pub fn sent(&mut self, seq: u64, now: Time, packets_out: u64) {
        if packets_out == 0 {
            self.first_tx = now;
            self.delivered_at = now;
        }
        let tx = Tx {
            sent: now,
            first_tx: self.first_tx,
            delivered_at: self.delivered_at,
            delivered: self.delivered,
            app_limited: self.app_limited != 0,
            retransmitted: seq < self.base + self.tx.len() as u64,
        };
        if packets_out == 0 {
            self.base = seq;
            self.tx.clear();
        }
        match seq.checked_sub(self.base).map(|i| i as usize) {
            Some(i) if i < self.tx.len() => self.tx[i] = Some(tx),
            Some(i) => {
                self.tx.resize(i, None);
                self.tx.push_back(Some(tx));
            }
            None => {}
        }
    }

    /// tcp_rate_skb_delivered() for one packet.
    fn deliver(&mut self, seq: u64) {
        let Some(tx) = seq
            .checked_sub(self.base)
            .and_then(|i| self.tx.get_mut(i as usize))
            .and_then(Option::take)
        else {
            return;
        };
        let p = &mut self.pending;
        if p.prior.is_none_or(|prior| tx.delivered > prior.delivered) {
            p.prior = Some(tx);
            p.send_interval = tx.sent - tx.first_tx;
            self.first_tx = tx.sent;
        }
        if !tx.retransmitted {
            p.rtt_sent = p.rtt_sent.max(Some(tx.sent));
        }
    }

    /// SACK block `[start, end)`.
    pub fn sack(&mut self, start: u64, end: u64) {
        for seq in start.max(self.base)..end.min(self.base + self.tx.len() as u64) {
            self.deliver(seq);
        }
    }

    /// The cumulative ACK moved to `una`.
    pub fn ack(&mut self, una: u64) {
        while self.base < una {
            self.deliver(self.base);
            self.tx.pop_front();
            self.base += 1;
        }
    }

    /// tcp_rate_gen(): the ACK at `now` delivered `delivered` packets and marked `lost` lost;
    /// `min_rtt` is the connection's least RTT (tcp_min_rtt()).
    pub fn sample(
        &mut self,
        now: Time,
        delivered: u64,
        lost: u64,
        min_rtt: Option<Time>,
        prior_in_flight: u64,
    ) -> RateSample {
        let p = std::mem::take(&mut self.pending);
        self.delivered += delivered;
        self.lost += lost;
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        if delivered > 0 {
            self.delivered_at = now;
        }
        let mut rs = RateSample {
            acked_sacked: delivered,
            losses: lost,
            rtt: p.rtt_sent.map(|sent| to_secs(now - sent)),
            prior_in_flight,
            ..RateSample::default()
        };
        let Some(prior) = p.prior else { return rs };
        rs.prior_delivered = prior.delivered;
        rs.app_limited = prior.app_limited;
        // The send phase and the ACK phase of the window: the longer one.
        let interval = p.send_interval.max(now - prior.delivered_at);
        if min_rtt.is_some_and(|m| interval < m) {
            return rs;
        }
        rs.delivered = self.delivered - prior.delivered;
        rs.interval = Some(to_secs(interval));
        rs
    }

    /// `tp->app_limited = delivered + in flight` (or 1): samples until those are delivered are
    /// application-limited. tcp_rate_check_app_limited() sets it when the sender has nothing
    /// to send, room in cwnd and no lost packet waiting; bbr_update_min_rtt() in PROBE_RTT.
    pub fn set_app_limited(&mut self, in_flight: u64) {
        self.app_limited = (self.delivered + in_flight).max(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Time = 1_000_000;

    #[test]
    fn a_window_delivered_at_the_bottleneck_rate_samples_that_rate() {
        // 10 packets sent at 0, 1, …, 9 ms with nothing outstanding before the first; ACKed one
        // by one at 50, 51, …, 59 ms: the tenth ACK's sample spans the ACK phase from the
        // first delivery's clock (0) — 10 packets over 59 ms — not the 9 ms send phase.
        let mut r = DeliveryRate::default();
        for seq in 0..10 {
            r.sent(seq, seq * MS, seq);
        }
        let mut last = RateSample::default();
        for seq in 0..10 {
            r.ack(seq + 1);
            last = r.sample(50 * MS + seq * MS, 1, 0, Some(50 * MS), 10 - seq);
        }
        assert_eq!((last.delivered, last.prior_delivered), (10, 0));
        assert!((last.interval.unwrap() - 0.059).abs() < 1e-12);
        assert!((last.rtt.unwrap() - 0.050).abs() < 1e-12);
        // The next packet, sent at 59 ms after 10 delivered, samples one packet at the
        // delivery clock's pace: 1 packet over max(0, ack phase).
        r.sent(10, 59 * MS, 0);
        r.ack(11);
        let s = r.sample(110 * MS, 1, 0, Some(50 * MS), 1);
        assert_eq!((s.delivered, s.prior_delivered), (1, 10));
        assert!((s.interval.unwrap() - 0.051).abs() < 1e-12);
    }

    #[test]
    fn a_sacked_packet_counts_once_and_short_intervals_are_no_sample() {
        let mut r = DeliveryRate::default();
        for seq in 0..4 {
            r.sent(seq, 0, seq);
        }
        r.sack(2, 4);
        let s = r.sample(10 * MS, 2, 0, None, 4);
        assert_eq!(s.delivered, 2);
        // The cumulative ACK passing 2 and 3 delivers only 0 and 1; the sample is packet 0's:
        // all 4 were delivered since it was sent.
        r.ack(4);
        let s = r.sample(11 * MS, 2, 0, None, 2);
        assert_eq!((s.acked_sacked, s.delivered, r.delivered), (2, 4, 4));
        // Below the minimum RTT the interval is not trusted.
        r.sent(4, 11 * MS, 0);
        r.ack(5);
        assert_eq!(r.sample(12 * MS, 1, 0, Some(5 * MS), 1).interval, None);
    }
}
