//! TCP sink (ns-2 one-way style receiver): cumulative ACKs (the next expected
//! packet), an out-of-order buffer, optional delayed ACKs, SACK blocks
//! (RFC 2018) for the SACK variant, and ECN echo.
//!
//! The ACK echoes the send time and retransmit flag of the oldest packet it
//! acknowledges (RFC 7323 timestamp echo), so the sender can take RTT samples
//! and apply Karn's rule.

use super::timer::Timer;
use super::{TcpParams, Variant};
use crate::packet::{Ecn, Packet, PacketKind, MAX_SACK_BLOCKS};
use crate::time::Time;
use crate::transport::{Agent, AgentCtx};

/// Size of a pure ACK on the wire (IP + TCP headers), bytes.
pub const ACK_SIZE: u32 = 40;

pub struct TcpSink {
    sack: bool,
    delayed_ack: bool,
    delack_timeout: Time,
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
    /// A packet covered by the next ACK arrived with Congestion Experienced (RFC 3168).
    ce: bool,
    delack: Timer,
}

impl TcpSink {
    pub fn new(opts: &TcpParams) -> Self {
        TcpSink {
            sack: opts.variant == Variant::Sack,
            delayed_ack: opts.delayed_ack,
            delack_timeout: opts.delack_timeout.nanos(),
            rcv_nxt: 0,
            ranges: Vec::new(),
            recent: Vec::new(),
            unacked: 0,
            echo: (0, false),
            ce: false,
            delack: Timer::new(0),
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
        let mut ack = Packet {
            kind: PacketKind::Ack,
            size: ACK_SIZE,
            seq: self.rcv_nxt,
            sent_at: self.echo.0,
            retransmit: self.echo.1,
            ece: self.ce,
            ..Default::default()
        };
        if self.sack {
            self.sack_blocks(&mut ack);
        }
        ctx.send(ack);
        self.unacked = 0;
        self.ce = false;
        self.delack.clear();
    }
}

impl Agent for TcpSink {
    fn start(&mut self, _ctx: &mut AgentCtx) {}

    fn receive(&mut self, p: &Packet, ctx: &mut AgentCtx) {
        if p.kind != PacketKind::Data {
            return;
        }
        self.ce |= p.ecn == Ecn::Ce;
        if self.unacked == 0 {
            self.echo = (p.sent_at, p.retransmit);
        }
        if p.seq != self.rcv_nxt {
            // Out of order or a duplicate: acknowledge at once (RFC 5681 §4.2).
            if p.seq > self.rcv_nxt {
                self.insert(p.seq);
                if self.sack {
                    self.recent.insert(0, p.seq);
                }
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
        // RFC 5681 §4.2: ACK at once a packet that fills a gap; otherwise at
        // least every second packet, or when the delayed-ACK timer expires.
        if filled_gap || !self.delayed_ack || self.unacked >= 2 {
            self.send_ack(ctx);
        } else if !self.delack.is_set() {
            self.delack.set(ctx.now + self.delack_timeout, ctx);
        }
    }

    fn timer(&mut self, token: u64, ctx: &mut AgentCtx) {
        if self.delack.expired(token, ctx) && self.unacked > 0 {
            self.send_ack(ctx);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::tcp::TcpOptions;
    use crate::transport::TraceSample;

    struct Harness {
        sink: TcpSink,
        outbox: Vec<Packet>,
        timers: Vec<(Time, u64)>,
        delivered: u64,
    }

    impl Harness {
        fn new(opts: TcpOptions) -> Self {
            Harness {
                sink: TcpSink::new(&opts.resolve()),
                outbox: Vec::new(),
                timers: Vec::new(),
                delivered: 0,
            }
        }

        fn data(&mut self, now: Time, seq: u64) -> Vec<Packet> {
            let p = Packet {
                kind: PacketKind::Data,
                size: 1000,
                seq,
                sent_at: now,
                ..Default::default()
            };
            let mut trace: Vec<TraceSample> = Vec::new();
            let mut ctx = AgentCtx::new(now, 0, 1.0, 1, 0, &mut self.outbox, &mut self.timers, Some(&mut trace));
            self.sink.receive(&p, &mut ctx);
            self.delivered += ctx.delivered();
            self.outbox.drain(..).collect()
        }

        fn fire(&mut self, now: Time, token: u64) -> Vec<Packet> {
            let mut ctx = AgentCtx::new(now, 0, 1.0, 1, 0, &mut self.outbox, &mut self.timers, None);
            self.sink.timer(token, &mut ctx);
            self.outbox.drain(..).collect()
        }
    }

    fn blocks(p: &Packet) -> Vec<(u64, u64)> {
        p.sack[..p.sack_len as usize].to_vec()
    }

    #[test]
    fn cumulative_acks_and_out_of_order_buffer() {
        let mut h = Harness::new(TcpOptions::default());
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
        let mut h = Harness::new(TcpOptions {
            variant: Variant::Sack,
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
        let mut h = Harness::new(TcpOptions {
            delayed_ack: true,
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
        let mut h = Harness::new(TcpOptions::default());
        let p = Packet {
            kind: PacketKind::Data,
            size: 1000,
            seq: 0,
            ecn: Ecn::Ce,
            ..Default::default()
        };
        let mut ctx = AgentCtx::new(0, 0, 1.0, 1, 0, &mut h.outbox, &mut h.timers, None);
        h.sink.receive(&p, &mut ctx);
        assert!(h.outbox[0].ece);
        h.outbox.clear();
        assert!(!h.data(1, 1)[0].ece);
    }
}
