//! A bursty video source (RFC 7928 §7, "bursty video frames"), flow type `video`: `fps`
//! frames a second (default 25), each sent at once as a burst of `packet_size` packets; the
//! frames carry `rate` bits/s on average. A frame carries `rate / fps / 8` bytes, whole packets
//! only: the first k frames carry the whole packets of k such frames, so what is left over goes
//! into the next frame, bursts differ by at most one packet and the mean rate is exact. Unresponsive, like the other UDP sources; the receiver is
//! [`UdpSink`].

use super::udp::{udp_packet, UdpSink};
use super::{Agent, AgentCtx, FlowConfig, Offer, TimerKind, Token};
use crate::error::ScenarioError;
use crate::rng::Rng;
use crate::time::{from_secs, Time};
use crate::units::Rate;
use crate::validate::require_positive;
use serde::Deserialize;

/// A `video` flow's settings.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VideoConfig {
    /// Mean bit rate of the frames, on the wire.
    pub rate: Rate,
    /// Frames a second; 25 (PAL's frame rate).
    #[serde(default = "VideoConfig::default_fps")]
    pub fps: f64,
}

impl VideoConfig {
    fn default_fps() -> f64 {
        25.0
    }
}

impl FlowConfig for VideoConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        require_positive(&format!("{path}.rate"), self.rate)?;
        require_positive(&format!("{path}.fps"), self.fps)?;
        if self.fps > 1000.0 {
            return Err(ScenarioError::new(
                format!("{path}.fps"),
                format!("must be at most 1000 frames a second, got {}", self.fps),
            ));
        }
        Ok(())
    }

    fn demand_bps(&self) -> Option<f64> {
        Some(self.rate.0)
    }

    fn cannot_pause(&self) -> Option<&'static str> {
        None
    }

    fn build(&self, size: u32, offer: &Offer, _rng: Rng) -> (Box<dyn Agent>, Box<dyn Agent>) {
        let source = VideoSource {
            size,
            frame_bytes: self.rate.0 / self.fps / 8.0,
            fps: self.fps,
            offer: offer.clone(),
            start: 0,
            frames: 0,
            seq: 0,
        };
        (Box::new(source), Box::new(UdpSink))
    }
}

crate::timer_kinds! {
    /// The video source's timer.
    enum VideoTimer {
        /// The next frame is due.
        Frame,
    }
}

/// Sends a burst of packets every 1/`fps` s from its start. A frame due in a pause is not sent
/// (the encoder's output in a pause is lost, not queued).
pub struct VideoSource {
    size: u32,
    /// Bytes a frame carries on average.
    frame_bytes: f64,
    fps: f64,
    offer: Offer,
    start: Time,
    /// Frames due so far (sent or paused): frame k is due at start + k/fps, without drift.
    frames: u64,
    /// Packets the frames so far carried (sent, or lost in a pause): the next one's number.
    seq: u64,
}

impl VideoSource {
    fn frame(&mut self, ctx: &mut AgentCtx) {
        if ctx.now >= self.offer.stop {
            return;
        }
        self.frames += 1;
        // The whole packets of the frames so far (a billionth of a packet up: 20500-byte frames
        // of 1000-byte packets are 41 packets per two frames, not 40.999999...).
        let due = (self.frames as f64 * self.frame_bytes / f64::from(self.size) + 1e-9).floor() as u64;
        if self.offer.offers(ctx.now) {
            while self.seq < due {
                ctx.send(udp_packet(self.size, self.seq, ctx.now, crate::packet::Ecn::NotEct));
                self.seq += 1;
            }
        } else {
            // A frame in a pause is lost: the packets it would have carried are not owed.
            self.seq = self.seq.max(due);
        }
        let next = self.start + from_secs(self.frames as f64 / self.fps);
        ctx.set_timer(next.max(ctx.now + 1), VideoTimer::Frame);
    }
}

impl Agent for VideoSource {
    fn start(&mut self, ctx: &mut AgentCtx) {
        self.start = ctx.now;
        self.frame(ctx);
    }

    fn receive(&mut self, _packet: &crate::packet::Packet, _ctx: &mut AgentCtx) {}

    fn timer(&mut self, token: Token, ctx: &mut AgentCtx) {
        let VideoTimer::Frame = VideoTimer::from_token(token);
        self.frame(ctx);
    }
}
