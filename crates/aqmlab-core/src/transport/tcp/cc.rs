//! The interface between the linux sender (`sender/linux.rs`) and a congestion control
//! module, as include/net/tcp.h's `struct tcp_congestion_ops`: the modules (`cong.rs`, the
//! registry and Reno as tcp_cong.c; `cubic.rs`; `bbr.rs`) see the sender's [`Window`] in
//! `cong_avoid` and `ssthresh`, an [`AckSample`] in `pkts_acked`, and a module that sets cwnd
//! itself (`cong_control`, BBR) reads the [`Connection`], its [`CaState`] included.
//!
//! Times are exact seconds where Linux counts jiffies and microseconds.

/// The sender's congestion state as a module that sets cwnd itself tells them apart
/// (`icsk_ca_state`: Open, Disorder and CWR are all below Recovery).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaState {
    Open,
    Recovery,
    Loss,
}

/// What a module that sets cwnd itself (`cong_control`, BBR) reads of the connection on an ACK
/// (`struct tcp_sock`).
#[derive(Clone, Copy, Debug)]
pub struct Connection {
    pub now: f64,
    pub cwnd: u64,
    /// `snd_cwnd_clamp`: the receiver window.
    pub clamp: u64,
    /// tcp_packets_in_flight() after the ACK.
    pub in_flight: u64,
    /// `tp->delivered`, `tp->delivered_mstamp` (seconds) and `tp->lost`.
    pub delivered: u64,
    pub delivered_at: f64,
    pub lost: u64,
    pub state: CaState,
    pub srtt: Option<f64>,
    /// `tcp_wstamp_ns`: the earliest departure of the next packet (seconds).
    pub next_departure: f64,
    /// `mss_cache`: the packet size, bytes.
    pub mss: f64,
}

/// The sender's window as the module sees it, in packets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Window {
    pub cwnd: u64,
    pub ssthresh: u64,
    /// `snd_cwnd_clamp`: the receiver window.
    pub clamp: u64,
}

impl Window {
    /// A window of `cwnd` and `ssthresh` packets with a receiver window that does not limit it.
    #[cfg(test)]
    pub fn unclamped(cwnd: u64, ssthresh: u64) -> Self {
        Window {
            cwnd,
            ssthresh,
            clamp: 10_000,
        }
    }

    /// tcp_in_slow_start().
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// tcp_slow_start(): cwnd grows by the packets acked, up to ssthresh; returns the acked
    /// packets left over for congestion avoidance.
    pub fn slow_start(&mut self, acked: u64) -> u64 {
        let cwnd = (self.cwnd + acked).min(self.ssthresh);
        let left = acked - (cwnd - self.cwnd);
        self.cwnd = cwnd.min(self.clamp);
        left
    }
}

/// What the sender knows when an ACK brings an RTT sample (cubictcp_acked()'s inputs).
#[derive(Clone, Copy, Debug)]
pub struct AckSample {
    pub now: f64,
    /// The RTT the ACK measured, seconds.
    pub rtt: f64,
    /// The cumulative ACK and the next packet to send (`snd_una`, `snd_nxt`).
    pub snd_una: u64,
    pub snd_nxt: u64,
    /// The pacing rate Linux would set (bytes/s; tcp_update_pacing_rate()), or 0 before an RTT estimate.
    pub pacing_rate: f64,
    /// The one-way delay the ACK echoes, seconds: the receiver's measure of the data packet that
    /// triggered it (RFC 6817 §2.4.1; what LEDBAT reads).
    pub one_way_delay: f64,
    /// Packets in flight before the ACK (`struct ack_sample`'s `in_flight`: tcp_ack()'s
    /// `prior_in_flight`).
    pub prior_in_flight: u64,
}
