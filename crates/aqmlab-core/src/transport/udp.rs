//! UDP sources (CBR, ON-OFF) and the UDP sink. Unresponsive: they ignore drops.

use super::{Agent, AgentCtx, FlowSpec};
use crate::packet::{Ecn, Packet};
use crate::rng::Rng;
use crate::time::{from_secs, Time};
use rand::Rng as _;
use rand_distr::{Distribution, Exp};

fn interval_for(rate_bps: f64, size: u32) -> f64 {
    size as f64 * 8.0 / rate_bps
}

const SEND: u64 = 0;
const FIRST_RATE_CHANGE: u64 = 1;

/// Constant bit rate: one packet every `size·8/rate` seconds, optionally
/// jittered uniformly in [0.5, 1.5) of that (CSFQ §3), with scheduled rate changes.
pub struct Cbr {
    size: u32,
    interval: f64,
    jitter: bool,
    changes: Vec<(Time, f64)>,
    stop: Time,
    seq: u64,
    rng: Rng,
}

impl Cbr {
    pub fn new(spec: &FlowSpec, stop: Time, rng: Rng) -> Self {
        let size = spec.packet_size.0 as u32;
        Cbr {
            size,
            interval: interval_for(spec.rate.expect("validated").0, size),
            jitter: spec.jitter,
            changes: spec
                .rate_changes
                .iter()
                .map(|c| (from_secs(c.at.0), interval_for(c.rate.0, size)))
                .collect(),
            stop,
            seq: 0,
            rng,
        }
    }

    fn next_gap(&mut self) -> Time {
        let factor = if self.jitter { self.rng.gen_range(0.5..1.5) } else { 1.0 };
        from_secs(self.interval * factor).max(1)
    }
}

fn udp_packet(size: u32, seq: u64, now: Time) -> Packet {
    Packet {
        size,
        seq,
        sent_at: now,
        ecn: Ecn::NotEct,
        ..Default::default()
    }
}

impl Agent for Cbr {
    fn start(&mut self, ctx: &mut AgentCtx) {
        for (i, &(at, _)) in self.changes.iter().enumerate() {
            ctx.set_timer(at.max(ctx.now), FIRST_RATE_CHANGE + i as u64);
        }
        self.timer(SEND, ctx);
    }

    fn receive(&mut self, _packet: &Packet, _ctx: &mut AgentCtx) {}

    fn timer(&mut self, token: u64, ctx: &mut AgentCtx) {
        if token >= FIRST_RATE_CHANGE {
            self.interval = self.changes[(token - FIRST_RATE_CHANGE) as usize].1;
            return;
        }
        if ctx.now >= self.stop {
            return;
        }
        ctx.send(udp_packet(self.size, self.seq, ctx.now));
        self.seq += 1;
        let gap = self.next_gap();
        ctx.set_timer(ctx.now + gap, SEND);
    }
}

/// ON-OFF source: exponential ON periods at the peak `rate`, exponential OFF periods.
pub struct OnOff {
    size: u32,
    interval: Time,
    on: Exp<f64>,
    off: Exp<f64>,
    on_until: Time,
    stop: Time,
    seq: u64,
    rng: Rng,
}

impl OnOff {
    pub fn new(spec: &FlowSpec, stop: Time, rng: Rng) -> Self {
        let size = spec.packet_size.0 as u32;
        OnOff {
            size,
            interval: from_secs(interval_for(spec.rate.expect("validated").0, size)).max(1),
            on: Exp::new(1.0 / spec.on_time.expect("validated").0).expect("validated > 0"),
            off: Exp::new(1.0 / spec.off_time.expect("validated").0).expect("validated > 0"),
            on_until: 0,
            stop,
            seq: 0,
            rng,
        }
    }
}

impl Agent for OnOff {
    fn start(&mut self, ctx: &mut AgentCtx) {
        self.on_until = ctx.now + from_secs(self.on.sample(&mut self.rng));
        self.timer(SEND, ctx);
    }

    fn receive(&mut self, _packet: &Packet, _ctx: &mut AgentCtx) {}

    fn timer(&mut self, _token: u64, ctx: &mut AgentCtx) {
        if ctx.now >= self.stop {
            return;
        }
        if ctx.now >= self.on_until {
            // The ON period ended: stay silent for an OFF period, then start a new ON period.
            let resume = ctx.now + from_secs(self.off.sample(&mut self.rng));
            self.on_until = resume + from_secs(self.on.sample(&mut self.rng));
            ctx.set_timer(resume, SEND);
            return;
        }
        ctx.send(udp_packet(self.size, self.seq, ctx.now));
        self.seq += 1;
        ctx.set_timer(ctx.now + self.interval, SEND);
    }
}

/// Counts every arriving packet as delivered.
pub struct UdpSink;

impl Agent for UdpSink {
    fn start(&mut self, _ctx: &mut AgentCtx) {}

    fn receive(&mut self, packet: &Packet, ctx: &mut AgentCtx) {
        ctx.deliver(packet.size as u64);
    }

    fn timer(&mut self, _token: u64, _ctx: &mut AgentCtx) {}
}
