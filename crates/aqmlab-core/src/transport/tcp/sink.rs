//! TCP sink (ns-2 one-way style receiver): cumulative ACKs (the next expected
//! packet), an out-of-order buffer, optional delayed ACKs, SACK blocks
//! (RFC 2018) for the SACK variant, and ECN echo.
//!
//! The ACK echoes the send time and retransmit flag of the oldest packet it
//! acknowledges (RFC 7323 timestamp echo), so the sender can take RTT samples
//! and apply Karn's rule; and the one-way delay of the newest data packet, its arrival
//! less its send time (RFC 6817 §2.4.1's receiver, which LEDBAT reads).
//!
//! Under the linux profile the ACKs are Linux 6.1's ([`LinuxAcks`], tcp_input.c
//! tcp_event_data_recv(), __tcp_ack_snd_check(), tcp_send_delayed_ack(); tcp_timer.c
//! tcp_delack_timer_handler()):
//! - quick ACKs: every packet is acknowledged at once for the first 16 ACKs of a
//!   connection (TCP_MAX_QUICKACKS; the window allows more), again after a gap longer
//!   than the receiver's RTO, and after a duplicate;
//! - otherwise an ACK once more than one full packet is unacknowledged (every second
//!   packet), or when the delayed-ACK timer fires after `ato`: 40 ms (TCP_ATO_MIN) at
//!   first, moving towards half of itself plus the gap between packets (at least 20 ms
//!   gone), doubled when the timer fires, at most the receiver's RTO; a packet that
//!   finds the timer within ato/4 of firing is acknowledged at once;
//! - out of order: the first 3 duplicate ACKs for one cumulative ACK go at once, later
//!   ones are compressed (`tcp_comp_sack_nr` 44 at most, sent after `tcp_comp_sack_delay_ns`
//!   1 ms, which is below 5 % of RTTs over 20 ms); a packet that empties the
//!   out-of-order queue is acknowledged at once.
//!
//! The receiver's RTO bounds `ato`: with no handshake modelled it is TCP_TIMEOUT_INIT, 1 s.

use super::{CongestionControl, EcnFeedback, Profile, TcpParams, Variant};
use crate::packet::{Ecn, Packet, PacketKind, MAX_SACK_BLOCKS};
use crate::time::{from_secs, Time};
use crate::transport::timer::{Generation, Restartable};
use crate::transport::{Agent, AgentCtx, TimerKind, Token};

crate::timer_kinds! {
    /// The sink's timers.
    enum SinkTimer {
        /// The delayed ACK (`delack`).
        DelAck { generation: Generation },
        /// Linux's compressed duplicate ACKs (`LinuxAck::compressed_timer`).
        CompressedAck { generation: Generation },
    }
}

/// TCP_MAX_QUICKACKS.
const LINUX_MAX_QUICKACKS: u32 = 16;
/// TCP_ATO_MIN = HZ/25.
const LINUX_ATO_MIN: f64 = 0.04;
/// The receiver's RTO: TCP_TIMEOUT_INIT, as it measures no RTT here.
const LINUX_RECEIVER_RTO: f64 = 1.0;
/// tcp_send_delayed_ack(): `max_ato = HZ / 2`.
const LINUX_MAX_ATO: f64 = 0.5;
/// TCP_FASTRETRANS_THRESH: duplicate ACKs sent at once before compression.
const LINUX_FASTRETRANS_THRESH: u32 = 3;
/// `tcp_comp_sack_nr` 44 and `tcp_comp_sack_delay_ns` 1 ms.
const LINUX_COMP_SACK_NR: u32 = 44;
const LINUX_COMP_SACK_DELAY: f64 = 0.001;

/// The linux profile's ACK state (`icsk_ack` and the compressed-SACK fields of `tcp_sock`).
#[derive(Clone, Debug)]
struct LinuxAcks {
    /// ACKs left to send at once (`icsk_ack.quick`).
    quick: u32,
    /// The delayed-ACK timeout, seconds (`icsk_ack.ato`; 0: no data yet).
    ato: f64,
    /// When the last in-order packet arrived (`lrcvtime`).
    last_received: Time,
    /// Duplicate ACKs sent at once for `dup_ack_of` (`dup_ack_counter`, `compressed_ack_rcv_nxt`).
    dup_acks: u32,
    dup_ack_of: u64,
    /// ACKs withheld since the last one sent (`compressed_ack`).
    compressed: u32,
    /// The cumulative ACK last sent (`rcv_wup`).
    rcv_wup: u64,
    compressed_timer: Restartable<SinkTimer>,
}

impl LinuxAcks {
    fn new() -> Self {
        LinuxAcks {
            quick: 0,
            ato: 0.0,
            last_received: 0,
            dup_acks: 0,
            dup_ack_of: 0,
            compressed: 0,
            rcv_wup: 0,
            compressed_timer: Restartable::new(|generation| SinkTimer::CompressedAck { generation }),
        }
    }

    /// tcp_incr_quickack(): at least `TCP_MAX_QUICKACKS` quick ACKs (the window allows them).
    fn incr_quickack(&mut self) {
        self.quick = self.quick.max(LINUX_MAX_QUICKACKS);
    }

    /// tcp_event_data_recv(): an in-order packet adapts `ato`.
    fn data_received(&mut self, now: Time) {
        if self.ato == 0.0 {
            self.incr_quickack();
            self.ato = LINUX_ATO_MIN;
        } else {
            let gap = crate::time::to_secs(now - self.last_received);
            if gap <= LINUX_ATO_MIN / 2.0 {
                self.ato = self.ato / 2.0 + LINUX_ATO_MIN / 2.0;
            } else if gap < self.ato {
                self.ato = (self.ato / 2.0 + gap).min(LINUX_RECEIVER_RTO);
            } else if gap > LINUX_RECEIVER_RTO {
                self.incr_quickack();
            }
        }
        self.last_received = now;
    }

    /// tcp_event_ack_sent(): an ACK of `rcv_nxt` went out; leaving quick-ACK mode deflates `ato`.
    fn ack_sent(&mut self, rcv_nxt: u64) {
        self.rcv_wup = rcv_nxt;
        if self.quick == 1 {
            self.ato = LINUX_ATO_MIN;
        }
        self.quick = self.quick.saturating_sub(1);
        self.compressed = 0;
        self.compressed_timer.clear();
    }
}

/// Size of a pure ACK on the wire (IP + TCP headers), bytes.
pub const ACK_SIZE: u32 = 40;

/// How the sink tells the sender of CE marks, with the state it keeps for it.
#[derive(Clone, Copy, Debug)]
enum EcnEcho {
    /// RFC 3168: ECE on the next ACK after a CE-marked packet (`ce`: one is owed).
    Classic { ce: bool },
    /// RFC 8257 §3.2 (Linux 6.1 dctcp_ece_ack_update()): ECE on every ACK while the last packet
    /// was CE (`ce_state`); when the state changes, a delayed ACK is sent first for the packets
    /// before (with the old state), and the packet is acknowledged at once.
    Dctcp { ce_state: bool },
    /// Accurate ECN: every ACK carries the CE count; a CE packet after a non-CE one is
    /// acknowledged at once (change-triggered ACK, draft-ietf-tcpm-accurate-ecn §3.2.2.5.1).
    Accurate { received_ce: u32, last_ce: bool },
}

/// What a data packet's ECN field asks of the ACKs ([`EcnEcho::on_data`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum EchoAction {
    None,
    /// Acknowledge this packet at once.
    AckNow,
    /// Send the delayed ACK for the packets before this one first, then acknowledge it at once.
    AckPriorThenNow,
}

impl EcnEcho {
    fn new(opts: &TcpParams) -> Self {
        match (opts.ecn_feedback, opts.cc) {
            (EcnFeedback::Accurate, _) => EcnEcho::Accurate {
                received_ce: 0,
                last_ce: false,
            },
            (EcnFeedback::Classic, CongestionControl::Dctcp) => EcnEcho::Dctcp { ce_state: false },
            (EcnFeedback::Classic, _) => EcnEcho::Classic { ce: false },
        }
    }

    /// A data packet arrived, marked CE or not.
    fn on_data(&mut self, ce: bool) -> EchoAction {
        match self {
            EcnEcho::Classic { ce: owed } => {
                *owed |= ce;
                EchoAction::None
            }
            EcnEcho::Dctcp { ce_state } => {
                let changed = *ce_state != ce;
                *ce_state = ce;
                if changed {
                    EchoAction::AckPriorThenNow
                } else {
                    EchoAction::None
                }
            }
            EcnEcho::Accurate { received_ce, last_ce } => {
                let rise = ce && !*last_ce;
                *received_ce += u32::from(ce);
                *last_ce = ce;
                if rise {
                    EchoAction::AckNow
                } else {
                    EchoAction::None
                }
            }
        }
    }

    /// Writes the echo into `ack`; `ce_state` is the state it reports (the DCTCP receiver's
    /// prior state for the ACK of the packets before a change).
    fn fill(&mut self, ack: &mut Packet, ce_state: Option<bool>) {
        match self {
            EcnEcho::Classic { ce } => {
                ack.ece = *ce;
                *ce = false;
            }
            EcnEcho::Dctcp { ce_state: now } => ack.ece = ce_state.unwrap_or(*now),
            EcnEcho::Accurate { received_ce, .. } => ack.ce_packets = *received_ce,
        }
    }
}

/// What the sink runs with, resolved once in [`TcpSink::new`] from the flow's [`TcpParams`]: never
/// changed by the algorithm.
#[derive(Clone, Copy, Debug)]
struct SinkParams {
    /// SACK blocks in every ACK (the SACK variant).
    sack: bool,
    /// RFC 5681 §4.2's delayed ACK; under the linux profile, Linux's ACK rules.
    delayed_ack: bool,
    /// RFC 5681's delayed-ACK timeout.
    delack_timeout: Time,
}

/// The sink: its parameters, then what it has received and owes an ACK for, then its timers.
pub struct TcpSink {
    params: SinkParams,
    /// Linux's ACK state (linux profile with delayed ACKs), else RFC 5681's rules.
    linux: Option<LinuxAcks>,
    /// Next expected packet: the cumulative ACK.
    rcv_nxt: u64,
    /// Out-of-order packets above `rcv_nxt`: sorted, disjoint `[start, end)` ranges.
    ranges: Vec<(u64, u64)>,
    /// Recent out-of-order arrivals, newest first: orders the SACK blocks (RFC 2018 §4).
    recent: Vec<u64>,
    /// In-order packets received but not yet acknowledged (delayed ACK).
    unacked: u32,
    /// Send time and retransmit flag the next ACK echoes.
    echo: (Time, bool),
    /// The newest data packet's one-way delay, which the next ACK echoes (RFC 6817 §2.4.1).
    one_way_delay: Time,
    /// The ECN feedback.
    ecn: EcnEcho,
    delack: Restartable<SinkTimer>,
}

impl TcpSink {
    pub fn new(opts: &TcpParams) -> Self {
        TcpSink {
            params: SinkParams {
                sack: opts.variant == Variant::Sack,
                delayed_ack: opts.delayed_ack,
                delack_timeout: opts.delack_timeout.nanos(),
            },
            linux: (opts.profile == Profile::Linux && opts.delayed_ack).then(LinuxAcks::new),
            rcv_nxt: 0,
            ranges: Vec::new(),
            recent: Vec::new(),
            unacked: 0,
            echo: (0, false),
            one_way_delay: 0,
            ecn: EcnEcho::new(opts),
            delack: Restartable::new(|generation| SinkTimer::DelAck { generation }),
        }
    }

    /// Adds `seq > rcv_nxt` to the out-of-order ranges, merging neighbours.
    fn insert(&mut self, seq: u64) {
        let i = self.ranges.partition_point(|r| r.1 < seq);
        match self.ranges.get(i).copied() {
            Some((start, end)) if start <= seq => {
                if seq == end {
                    self.ranges[i].1 = seq + 1;
                    if self.ranges.get(i + 1).is_some_and(|r| r.0 == seq + 1) {
                        self.ranges[i].1 = self.ranges.remove(i + 1).1;
                    }
                }
            }
            Some((start, _)) if start == seq + 1 => self.ranges[i].0 = seq,
            _ => self.ranges.insert(i, (seq, seq + 1)),
        }
    }

    fn range_of(&self, seq: u64) -> Option<(u64, u64)> {
        let i = self.ranges.partition_point(|r| r.0 <= seq).checked_sub(1)?;
        let r = self.ranges[i];
        (seq < r.1).then_some(r)
    }

    /// RFC 2018 §4: the first block holds the most recent arrival, then the
    /// most recently reported other blocks; free slots take the highest remaining ranges.
    fn sack_blocks(&mut self, ack: &mut Packet) {
        let mut n = 0;
        let mut kept = 0;
        for i in 0..self.recent.len() {
            let seq = self.recent[i];
            let Some(block) = self.range_of(seq) else { continue };
            if ack.sack[..n].contains(&block) {
                continue;
            }
            ack.sack[n] = block;
            n += 1;
            self.recent[kept] = seq;
            kept += 1;
            if n == MAX_SACK_BLOCKS {
                break;
            }
        }
        self.recent.truncate(kept);
        for &block in self.ranges.iter().rev() {
            if n == MAX_SACK_BLOCKS {
                break;
            }
            if !ack.sack[..n].contains(&block) {
                ack.sack[n] = block;
                n += 1;
            }
        }
        ack.sack_len = n as u8;
    }

    fn send_ack(&mut self, ctx: &mut AgentCtx) {
        self.send_ack_reporting(None, ctx);
    }

    /// Sends the ACK, its ECN echo reporting `ce_state` if given (see [`EcnEcho::fill`]).
    fn send_ack_reporting(&mut self, ce_state: Option<bool>, ctx: &mut AgentCtx) {
        let mut ack = Packet {
            kind: PacketKind::Ack,
            size: ACK_SIZE,
            seq: self.rcv_nxt,
            sent_at: self.echo.0,
            retransmit: self.echo.1,
            one_way_delay: self.one_way_delay,
            ..Default::default()
        };
        self.ecn.fill(&mut ack, ce_state);
        if self.params.sack {
            self.sack_blocks(&mut ack);
        }
        ctx.send(ack);
        self.unacked = 0;
        self.delack.clear();
        if let Some(linux) = &mut self.linux {
            linux.ack_sent(self.rcv_nxt);
        }
    }

    /// __tcp_ack_snd_check() after a new data packet; `at_once`: it emptied the out-of-order
    /// queue, or its CE mark asks for an ACK now (ICSK_ACK_NOW).
    fn linux_ack(&mut self, at_once: bool, ctx: &mut AgentCtx) {
        let Some(linux) = &mut self.linux else { return };
        // More than one full packet unacknowledged (rcv_nxt − rcv_wup > rcv_mss), quick-ACK
        // mode, or ICSK_ACK_NOW.
        if self.rcv_nxt - linux.rcv_wup >= 2 || linux.quick > 0 || at_once {
            return self.send_ack(ctx);
        }
        if self.ranges.is_empty() {
            return self.linux_delay_ack(ctx);
        }
        // Out of order: compressed SACKs after the first three duplicate ACKs.
        if linux.compressed >= LINUX_COMP_SACK_NR {
            return self.send_ack(ctx);
        }
        if linux.dup_ack_of != self.rcv_nxt {
            linux.dup_ack_of = self.rcv_nxt;
            linux.dup_acks = 0;
        }
        if linux.dup_acks < LINUX_FASTRETRANS_THRESH {
            linux.dup_acks += 1;
            return self.send_ack(ctx);
        }
        linux.compressed += 1;
        if !linux.compressed_timer.is_set() {
            linux
                .compressed_timer
                .set(ctx.now + from_secs(LINUX_COMP_SACK_DELAY), ctx);
        }
    }

    /// tcp_send_delayed_ack(): arm the timer for `ato`, keeping an earlier deadline, or ACK
    /// at once when that deadline is within ato/4.
    fn linux_delay_ack(&mut self, ctx: &mut AgentCtx) {
        let Some(linux) = &self.linux else { return };
        let ato = from_secs(linux.ato.min(LINUX_MAX_ATO));
        match self.delack.deadline() {
            Some(at) if at <= ctx.now + ato / 4 => self.send_ack(ctx),
            Some(_) => {}
            None => self.delack.set(ctx.now + ato, ctx),
        }
    }
}

impl Agent for TcpSink {
    fn start(&mut self, _ctx: &mut AgentCtx) {}

    fn receive(&mut self, p: &Packet, ctx: &mut AgentCtx) {
        if p.kind != PacketKind::Data {
            return;
        }
        let ce = p.ecn == Ecn::Ce;
        let echo = self.ecn.on_data(ce);
        if echo == EchoAction::AckPriorThenNow && self.unacked > 0 {
            // dctcp_ece_ack_update(): the delayed ACK goes first, with the prior CE state.
            self.send_ack_reporting(Some(!ce), ctx);
        }
        let ack_now = echo != EchoAction::None;
        self.one_way_delay = ctx.now - p.sent_at;
        if self.unacked == 0 {
            self.echo = (p.sent_at, p.retransmit);
        }
        if p.seq != self.rcv_nxt {
            // Out of order or a duplicate: acknowledge at once (RFC 5681 §4.2); Linux
            // compresses duplicate ACKs after the third.
            if p.seq > self.rcv_nxt {
                self.insert(p.seq);
                if self.params.sack {
                    self.recent.insert(0, p.seq);
                }
                if self.linux.is_some() {
                    return self.linux_ack(false, ctx);
                }
            } else if let Some(linux) = &mut self.linux {
                // tcp_data_queue(): a packet received before enters quick-ACK mode
                // (tcp_enter_quickack_mode()), acknowledged at once.
                linux.incr_quickack();
                linux.ato = LINUX_ATO_MIN;
            }
            self.send_ack(ctx);
            return;
        }
        let filled_gap = !self.ranges.is_empty();
        let before = self.rcv_nxt;
        self.rcv_nxt += 1;
        if self.ranges.first().is_some_and(|r| r.0 == self.rcv_nxt) {
            self.rcv_nxt = self.ranges.remove(0).1;
        }
        ctx.deliver((self.rcv_nxt - before) * u64::from(p.size));
        self.unacked += 1;
        if let Some(linux) = &mut self.linux {
            linux.data_received(ctx.now);
            return self.linux_ack(ack_now || (filled_gap && self.ranges.is_empty()), ctx);
        }
        // RFC 5681 §4.2: ACK at once a packet that fills a gap; otherwise at
        // least every second packet, or when the delayed-ACK timer expires.
        if ack_now || filled_gap || !self.params.delayed_ack || self.unacked >= 2 {
            self.send_ack(ctx);
        } else if !self.delack.is_set() {
            self.delack.set(ctx.now + self.params.delack_timeout, ctx);
        }
    }

    fn timer(&mut self, token: Token, ctx: &mut AgentCtx) {
        match SinkTimer::from_token(token) {
            SinkTimer::DelAck { generation } => {
                if self.delack.expired(generation, ctx) && self.unacked > 0 {
                    if let Some(linux) = &mut self.linux {
                        // tcp_delack_timer_handler(): "Delayed ACK missed: inflate ATO".
                        linux.ato = (2.0 * linux.ato).min(LINUX_RECEIVER_RTO);
                    }
                    self.send_ack(ctx);
                }
            }
            SinkTimer::CompressedAck { generation } => {
                let fired = self
                    .linux
                    .as_mut()
                    .is_some_and(|l| l.compressed_timer.expired(generation, ctx) && l.compressed > 0);
                if fired {
                    // tcp_compressed_ack_kick().
                    self.send_ack(ctx);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::tcp::TcpOptions;
    use crate::transport::testing::AgentHarness;

    /// A sink driven by hand, its variables traced.
    fn sink(opts: TcpOptions) -> AgentHarness<TcpSink> {
        AgentHarness::receiver(TcpSink::new(&opts.resolve())).traced()
    }

    impl AgentHarness<TcpSink> {
        /// Data packet `seq` arrives at `now`; returns the ACKs sent.
        fn data(&mut self, now: Time, seq: u64) -> Vec<Packet> {
            let p = Packet {
                kind: PacketKind::Data,
                size: 1000,
                seq,
                sent_at: now,
                ..Default::default()
            };
            self.receive(now, &p)
        }
    }

    fn blocks(p: &Packet) -> Vec<(u64, u64)> {
        p.sack[..p.sack_len as usize].to_vec()
    }

    #[test]
    fn cumulative_acks_and_out_of_order_buffer() {
        let mut h = sink(TcpOptions::default());
        assert_eq!(h.data(0, 0)[0].seq, 1);
        assert_eq!(h.data(1, 2)[0].seq, 1); // hole at 1: duplicate ACK
        assert_eq!(h.data(2, 3)[0].seq, 1);
        assert_eq!(h.delivered, 1000);
        let ack = h.data(3, 1);
        assert_eq!(ack[0].seq, 4); // the hole filled: 1..4 delivered at once
        assert_eq!(ack[0].size, ACK_SIZE);
        assert_eq!(h.delivered, 4000);
        assert_eq!(h.data(4, 2)[0].seq, 4); // an old duplicate is acknowledged, not delivered
        assert_eq!(h.delivered, 4000);
        assert_eq!(blocks(&ack[0]), vec![]); // no SACK blocks unless the variant is sack
    }

    #[test]
    fn sack_blocks_newest_first() {
        let mut h = sink(TcpOptions {
            variant: Some(Variant::Sack),
            ..Default::default()
        });
        h.data(0, 0);
        assert_eq!(blocks(&h.data(1, 2)[0]), vec![(2, 3)]);
        assert_eq!(blocks(&h.data(2, 4)[0]), vec![(4, 5), (2, 3)]);
        assert_eq!(blocks(&h.data(3, 6)[0]), vec![(6, 7), (4, 5), (2, 3)]);
        assert_eq!(blocks(&h.data(4, 8)[0]), vec![(8, 9), (6, 7), (4, 5)]);
        assert_eq!(blocks(&h.data(5, 3)[0]), vec![(2, 5), (8, 9), (6, 7)]); // 3 joins 2 and 4
        let ack = h.data(6, 1);
        assert_eq!(ack[0].seq, 5);
        assert_eq!(blocks(&ack[0]), vec![(8, 9), (6, 7)]);
    }

    #[test]
    fn delayed_ack_every_second_packet_or_timeout() {
        let mut h = sink(TcpOptions {
            delayed_ack: Some(true),
            ..Default::default()
        });
        assert!(h.data(0, 0).is_empty());
        assert_eq!(h.timers.len(), 1);
        let ack = h.data(10, 1);
        assert_eq!((ack[0].seq, ack[0].sent_at), (2, 0)); // echoes the older packet
        assert!(h.data(20, 2).is_empty());
        // The event still pending for the first deadline serves the new one: it re-arms itself.
        assert_eq!(h.timers.len(), 1);
        let (at0, token0) = h.timers[0];
        assert!(h.fire(at0, token0).is_empty());
        let (at1, token1) = h.timers[1];
        assert_eq!(at1, 20 + 100_000_000);
        assert_eq!(h.fire(at1, token1)[0].seq, 3);
        assert!(h.fire(at1, token1).is_empty()); // a repeated (stale) token does nothing
                                                 // Out of order: acknowledged at once even with delayed ACKs.
        assert_eq!(h.data(30, 5)[0].seq, 3);
    }

    #[test]
    fn echoes_congestion_experienced_once() {
        let mut h = sink(TcpOptions::default());
        let p = Packet {
            kind: PacketKind::Data,
            size: 1000,
            seq: 0,
            ecn: Ecn::Ce,
            ..Default::default()
        };
        assert!(h.receive(0, &p)[0].ece);
        assert!(!h.data(1, 1)[0].ece);
    }

    fn linux_sink() -> AgentHarness<TcpSink> {
        sink(TcpOptions {
            profile: crate::transport::tcp::Profile::Linux,
            ..Default::default()
        })
    }

    /// Fires the pending timer events in time order until one sends an ACK: its time and the ACK.
    fn next_ack(h: &mut AgentHarness<TcpSink>) -> (Time, Packet) {
        loop {
            let (at, mut sent) = h.fire_next().expect("a pending timer");
            if let Some(ack) = sent.pop() {
                return (at, ack);
            }
        }
    }

    const MS: Time = 1_000_000;

    #[test]
    fn linux_quick_acks_then_every_second_packet_or_ato() {
        let mut h = linux_sink();
        // The first 16 ACKs go at once (TCP_MAX_QUICKACKS).
        for seq in 0..16 {
            assert_eq!(h.data(seq * MS, seq).len(), 1, "quick ACK {seq}");
        }
        // Then every second packet.
        assert!(h.data(16 * MS, 16).is_empty());
        assert_eq!(h.data(17 * MS, 17)[0].seq, 18);
        // A lone packet waits for the delayed-ACK timer: ato 40 ms (TCP_ATO_MIN).
        assert!(h.data(18 * MS, 18).is_empty());
        let (at, ack) = next_ack(&mut h);
        assert_eq!((at, ack.seq), (58 * MS, 19));
        // The missed delayed ACK doubled ato to 80 ms; a packet 41 ms after the last one
        // (below ato) makes it 80/2 + 41 = 81 ms.
        h.timers.clear();
        assert!(h.data(59 * MS, 19).is_empty());
        let (at, ack) = next_ack(&mut h);
        assert_eq!((at, ack.seq), (140 * MS, 20));
    }

    #[test]
    fn linux_compresses_duplicate_acks_after_the_third() {
        let mut h = linux_sink();
        for seq in 0..16 {
            h.data(seq * MS, seq);
        }
        // Packet 16 lost: three duplicate ACKs at once, then one per 1 ms (or 44 packets).
        for seq in 17..20 {
            assert_eq!(h.data(seq * MS, seq)[0].seq, 16, "dup ACK {seq}");
        }
        assert!(h.data(20 * MS, 20).is_empty() && h.data(20 * MS + 1, 21).is_empty());
        let (at, ack) = next_ack(&mut h);
        assert_eq!((at, ack.seq, blocks(&ack)[0]), (21 * MS, 16, (17, 22)));
        // The retransmission fills the hole and empties the out-of-order queue: an ACK at once.
        assert_eq!(h.data(23 * MS, 16)[0].seq, 22);
    }

    /// A sink that delays ACKs (every second packet) under `cc` and `feedback`.
    fn ecn_sink(cc: CongestionControl, feedback: EcnFeedback) -> AgentHarness<TcpSink> {
        sink(TcpOptions {
            delayed_ack: Some(true),
            cc: Some(cc),
            ecn: Some(crate::transport::tcp::EcnOption::On(true)),
            ecn_feedback: Some(feedback),
            ..Default::default()
        })
    }

    /// Data packet `seq` at `now`, marked CE or not.
    fn marked(h: &mut AgentHarness<TcpSink>, now: Time, seq: u64, ce: bool) -> Vec<Packet> {
        let p = Packet {
            kind: PacketKind::Data,
            size: 1000,
            seq,
            ecn: if ce { Ecn::Ce } else { Ecn::Ect0 },
            ..Default::default()
        };
        h.receive(now, &p)
    }

    #[test]
    fn dctcp_receiver_echoes_the_ce_state_and_acks_its_changes_at_once() {
        let mut h = ecn_sink(CongestionControl::Dctcp, EcnFeedback::Classic);
        // Unmarked: every second packet, no ECE.
        assert!(marked(&mut h, 0, 0, false).is_empty());
        let ack = marked(&mut h, 1, 1, false);
        assert_eq!((ack[0].seq, ack[0].ece), (2, false));
        // Packet 2 unmarked waits; packet 3 marked changes the state: the delayed ACK of 2 goes
        // first without ECE, then 3's at once with ECE (RFC 8257 §3.2).
        assert!(marked(&mut h, 2, 2, false).is_empty());
        let acks = marked(&mut h, 3, 3, true);
        assert_eq!(
            acks.iter().map(|a| (a.seq, a.ece)).collect::<Vec<_>>(),
            vec![(3, false), (4, true)]
        );
        // While marked, ECE on every ACK, every second packet.
        assert!(marked(&mut h, 4, 4, true).is_empty());
        assert!(marked(&mut h, 5, 5, true)[0].ece);
        // Back to unmarked: acknowledged at once without ECE.
        assert!(!marked(&mut h, 6, 6, false)[0].ece);
    }

    #[test]
    fn accurate_feedback_counts_every_ce_packet() {
        let mut h = ecn_sink(CongestionControl::Prague, EcnFeedback::Accurate);
        let mut acks = Vec::new();
        for (seq, ce) in [false, true, true, false, true, true, true, false]
            .into_iter()
            .enumerate()
        {
            acks.extend(marked(&mut h, seq as Time, seq as u64, ce));
        }
        // A CE packet after an unmarked one is acknowledged at once: after 1 and after 4.
        let counts: Vec<_> = acks.iter().map(|a| (a.seq, a.ce_packets, a.ece)).collect();
        assert_eq!(counts, vec![(2, 1, false), (4, 2, false), (5, 3, false), (7, 5, false)]);
        // Classic feedback tells only that one of the packets an ACK covers was marked.
        let mut h = ecn_sink(CongestionControl::Reno, EcnFeedback::Classic);
        assert!(marked(&mut h, 0, 0, true).is_empty());
        let ack = marked(&mut h, 1, 1, true);
        assert_eq!((ack[0].ece, ack[0].ce_packets), (true, 0));
    }
}
