//! UDP sources (CBR, ON-OFF) and the UDP sink. Unresponsive: they ignore drops.
//!
//! Flow types `cbr` (`rate`, optional `jitter` and `rate_changes`) and `onoff`
//! (`rate`, `on_time`, `off_time`).

use super::{Agent, AgentCtx, Codepoint, FlowConfig, Offer, TimerKind, Token};
use crate::error::ScenarioError;
use crate::packet::{Ecn, Packet};
use crate::rng::Rng;
use crate::time::{from_secs, Time};
use crate::units::{Rate, Seconds};
use crate::validate::{require_non_negative, require_positive};
use rand::Rng as _;
use rand_distr::{Distribution, Exp};
use serde::{Deserialize, Serialize};

/// A `cbr` flow's settings.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CbrConfig {
    /// Sending rate, bits/s on the wire.
    pub rate: Rate,
    /// Inter-packet gap uniform in [0.5, 1.5) x interval (CSFQ §3); default off.
    #[serde(default)]
    pub jitter: bool,
    /// New rates at given times; default none.
    #[serde(default)]
    pub rate_changes: Vec<RateChange>,
    /// The packets' ECN codepoint: `"not-ect"` (default), `"ect0"` or `"ect1"` (an
    /// unresponsive flow in an L4S queue, RFC 9330 §8.2).
    #[serde(default)]
    pub ecn: Codepoint,
}

/// A new rate from a given time: a CBR source's (RED-PD §5.2/§7.3) or a link's.
#[derive(Clone, Copy, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RateChange {
    pub at: Seconds,
    pub rate: Rate,
}

impl FlowConfig for CbrConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        require_positive(&format!("{path}.rate"), self.rate)?;
        for (i, c) in self.rate_changes.iter().enumerate() {
            require_non_negative(&format!("{path}.rate_changes[{i}].at"), c.at)?;
            require_positive(&format!("{path}.rate_changes[{i}].rate"), c.rate)?;
        }
        Ok(())
    }

    /// The highest rate it ever sends at.
    fn demand_bps(&self) -> Option<f64> {
        Some(self.rate_changes.iter().fold(self.rate.0, |m, c| m.max(c.rate.0)))
    }

    fn cannot_pause(&self) -> Option<&'static str> {
        None
    }

    fn build(&self, size: u32, offer: &Offer, rng: Rng) -> (Box<dyn Agent>, Box<dyn Agent>) {
        (Box::new(Cbr::new(self, size, offer.clone(), rng)), Box::new(UdpSink))
    }
}

/// An `onoff` flow's settings.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct OnOffConfig {
    /// Sending rate during ON periods, bits/s on the wire.
    pub rate: Rate,
    /// Mean ON and OFF periods (exponential).
    pub on_time: Seconds,
    pub off_time: Seconds,
    /// The packets' ECN codepoint, as a `cbr` flow's.
    #[serde(default)]
    pub ecn: Codepoint,
}

impl FlowConfig for OnOffConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        require_positive(&format!("{path}.rate"), self.rate)?;
        require_positive(&format!("{path}.on_time"), self.on_time)?;
        require_positive(&format!("{path}.off_time"), self.off_time)
    }

    /// The mean rate: the ON rate times the ON fraction of the time.
    fn demand_bps(&self) -> Option<f64> {
        let (on, off) = (self.on_time.0, self.off_time.0);
        Some(self.rate.0 * on / (on + off))
    }

    fn cannot_pause(&self) -> Option<&'static str> {
        None
    }

    fn build(&self, size: u32, offer: &Offer, rng: Rng) -> (Box<dyn Agent>, Box<dyn Agent>) {
        (Box::new(OnOff::new(self, size, offer.clone(), rng)), Box::new(UdpSink))
    }
}

fn interval_for(rate_bps: f64, size: u32) -> f64 {
    size as f64 * 8.0 / rate_bps
}

crate::timer_kinds! {
    /// The CBR source's timers.
    enum CbrTimer {
        /// The next packet.
        Send,
        /// The `index`-th of the scheduled rate changes takes effect.
        RateChange { index: u32 },
    }
}

crate::timer_kinds! {
    /// The ON-OFF source's timer.
    enum OnOffTimer {
        /// The next packet of an ON period, or the end of an OFF period.
        Next,
    }
}

/// Constant bit rate: one packet every `size·8/rate` seconds, optionally
/// jittered uniformly in [0.5, 1.5) of that (CSFQ §3), with scheduled rate changes. A packet
/// due in a pause is sent when the pause ends, and the gaps go on from there.
pub struct Cbr {
    size: u32,
    ecn: Ecn,
    interval: f64,
    jitter: bool,
    changes: Vec<(Time, f64)>,
    offer: Offer,
    seq: u64,
    rng: Rng,
}

impl Cbr {
    pub fn new(config: &CbrConfig, size: u32, offer: Offer, rng: Rng) -> Self {
        Cbr {
            size,
            ecn: config.ecn.ecn(),
            interval: interval_for(config.rate.0, size),
            jitter: config.jitter,
            changes: config
                .rate_changes
                .iter()
                .map(|c| (from_secs(c.at.0), interval_for(c.rate.0, size)))
                .collect(),
            offer,
            seq: 0,
            rng,
        }
    }

    fn next_gap(&mut self) -> Time {
        let factor = if self.jitter { self.rng.gen_range(0.5..1.5) } else { 1.0 };
        from_secs(self.interval * factor).max(1)
    }

    /// Sends the next packet and sets the timer for the one after. Always inline (a hint was
    /// not followed in every build): `timer` calls it for every packet, and the call cost
    /// 0.6 M instructions on bench-ns3-a (cachegrind).
    #[inline(always)]
    fn send(&mut self, ctx: &mut AgentCtx) {
        if ctx.now >= self.offer.stop {
            return;
        }
        if let Some(until) = self.offer.paused_until(ctx.now) {
            ctx.set_timer(until, CbrTimer::Send);
            return;
        }
        ctx.send(udp_packet(self.size, self.seq, ctx.now, self.ecn));
        self.seq += 1;
        let gap = self.next_gap();
        ctx.set_timer(ctx.now + gap, CbrTimer::Send);
    }
}

/// A UDP source's data packet (the video source's too).
pub(super) fn udp_packet(size: u32, seq: u64, now: Time, ecn: Ecn) -> Packet {
    Packet {
        size,
        seq,
        sent_at: now,
        ecn,
        ..Default::default()
    }
}

impl Agent for Cbr {
    fn start(&mut self, ctx: &mut AgentCtx) {
        for (index, &(at, _)) in (0..).zip(&self.changes) {
            ctx.set_timer(at.max(ctx.now), CbrTimer::RateChange { index });
        }
        self.send(ctx);
    }

    fn receive(&mut self, _packet: &Packet, _ctx: &mut AgentCtx) {}

    fn timer(&mut self, token: Token, ctx: &mut AgentCtx) {
        match CbrTimer::from_token(token) {
            CbrTimer::Send => self.send(ctx),
            CbrTimer::RateChange { index } => self.interval = self.changes[index as usize].1,
        }
    }
}

/// ON-OFF source: exponential ON periods at the peak `rate`, exponential OFF periods. A
/// pause silences it whatever the period; the periods run on meanwhile, drawn as without it.
pub struct OnOff {
    size: u32,
    ecn: Ecn,
    interval: Time,
    on: Exp<f64>,
    off: Exp<f64>,
    on_until: Time,
    offer: Offer,
    seq: u64,
    rng: Rng,
}

impl OnOff {
    pub fn new(config: &OnOffConfig, size: u32, offer: Offer, rng: Rng) -> Self {
        OnOff {
            size,
            ecn: config.ecn.ecn(),
            interval: from_secs(interval_for(config.rate.0, size)).max(1),
            on: Exp::new(1.0 / config.on_time.0).expect("validated > 0"),
            off: Exp::new(1.0 / config.off_time.0).expect("validated > 0"),
            on_until: 0,
            offer,
            seq: 0,
            rng,
        }
    }

    /// Sends the next packet of an ON period, or starts an OFF period when the ON period is over.
    fn next(&mut self, ctx: &mut AgentCtx) {
        if ctx.now >= self.offer.stop {
            return;
        }
        if ctx.now >= self.on_until {
            // The ON period ended: stay silent for an OFF period, then start a new ON period.
            // At least 1 ns, so that periods shorter than the clock's tick still move it on.
            let resume = ctx.now + from_secs(self.off.sample(&mut self.rng)).max(1);
            self.on_until = resume + from_secs(self.on.sample(&mut self.rng));
            ctx.set_timer(resume, OnOffTimer::Next);
            return;
        }
        if self.offer.offers(ctx.now) {
            ctx.send(udp_packet(self.size, self.seq, ctx.now, self.ecn));
            self.seq += 1;
        }
        ctx.set_timer(ctx.now + self.interval, OnOffTimer::Next);
    }
}

impl Agent for OnOff {
    fn start(&mut self, ctx: &mut AgentCtx) {
        self.on_until = ctx.now + from_secs(self.on.sample(&mut self.rng));
        self.next(ctx);
    }

    fn receive(&mut self, _packet: &Packet, _ctx: &mut AgentCtx) {}

    fn timer(&mut self, token: Token, ctx: &mut AgentCtx) {
        let OnOffTimer::Next = OnOffTimer::from_token(token);
        self.next(ctx);
    }
}

/// Counts every arriving packet as delivered.
pub struct UdpSink;

impl Agent for UdpSink {
    fn start(&mut self, _ctx: &mut AgentCtx) {}

    fn receive(&mut self, packet: &Packet, ctx: &mut AgentCtx) {
        ctx.deliver(packet.size as u64);
    }

    fn timer(&mut self, _token: Token, _ctx: &mut AgentCtx) {}
}
