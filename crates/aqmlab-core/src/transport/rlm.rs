//! RLM, Receiver-driven Layered Multicast (S. McCanne, V. Jacobson, M. Vetterli,
//! SIGCOMM 1996), as CSFQ §3.3 runs it: "Each source uses a seven layer encoding, where
//! layer i sends 2^(i+4) Kbps; each layer is modeled by a UDP traffic source" (i = 1…7:
//! 32, 64, …, 2048 kbps; the first five sum to 0.992 Mbps, CSFQ footnote 7).
//!
//! The source sends the layers its receiver subscribes to, each a CBR at
//! `base_rate · 2^(i−1)`. The receiver adapts its subscription:
//! - every join-timer T_J of the next layer it tries that layer (a *join experiment*);
//! - losses right after a join experiment fail it: the receiver drops the layer, backs
//!   the layer's T_J off by α (and raises the T_J of every layer above to at least it),
//!   and folds the time the loss took to show into its *detection-time* estimate T_D;
//! - other losses are first ignored for a while (hysteresis, state H), then measured
//!   (state M): above `loss_threshold` it drops its top layer (state D, then steady S);
//! - in S, every T_D the T_J of its current layer relaxes by β towards `join_timer_min`.
//!
//! The RLM paper is not in our papers; its rules and every default here are those of ns-2's
//! RLM (`tcl/rlm/rlm.tcl` and `rlm-ns.tcl`, 1996–98, "See McCanne's thesis"), which is what
//! CSFQ ran (§3: "ns-2 … provide[s] accurate packet-level implementation for … RLM";
//! ns-2's `tcl/ex/test-rlm.tcl` has CSFQ's seven rates and 1000-byte packets). Names: T_J,
//! T_D, α, β as in RLM; ns-2's `rlm_param(...)` beside each default.
//!
//! aqmlab has no multicast routing. A session is one source and one receiver on a unicast
//! path; join and leave (graft and prune) are control packets the receiver sends back to the
//! source, which starts or stops sending the layer when they arrive (one path delay), or
//! `graft_latency` / `prune_latency` after the receiver's decision when those are set.
//!
//! Two ns-2 corners are closed: the receiver never leaves the base layer (ns-2 could drop to
//! no layer, where a join needs the current layer to be "getting packets" and none ever is),
//! and a drop from the top layer restarts the join-timer (ns-2 sets none at the top, so a
//! receiver that had once held every layer would never try again).

use super::timer::Generation;
use super::{Agent, AgentCtx, FlowConfig, Offer, TimerKind, Token};
use crate::error::ScenarioError;
use crate::packet::{Ecn, Packet, PacketKind};
use crate::rng::Rng;
use crate::time::{from_secs, to_secs, Time};
use crate::units::{Rate, Seconds, MAX_RATE_BPS};
use crate::validate::{require_in, require_non_negative, require_positive};
use rand::{Rng as _, SeedableRng};
use rand_distr::{Distribution, Exp};
use serde::Deserialize;

/// Size of a join or leave message on the wire (a TCP ACK's 40 bytes).
const CONTROL_BYTES: u32 = 40;
/// The most layers a session may have (the level travels in a byte; 2^31 × base is far past any link).
const MAX_LAYERS: u32 = 32;

/// An `rlm` flow's settings; every field optional.
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RlmConfig {
    /// Layers of the encoding: 7 (CSFQ §3.3 "a seven layer encoding"; ns-2 test-rlm.tcl's seven rates).
    pub layers: u32,
    /// Layer 1's rate; layer i sends `base_rate · 2^(i−1)`: 32 kbps (CSFQ §3.3 "2^(i+4) Kbps", i = 1).
    pub base_rate: Rate,
    /// Each layer's gaps uniform in [0.5, 1.5) × its mean gap (CSFQ footnote 4's "UDP"; ns-2
    /// test-rlm.tcl `random_ 1`); default off, as for `cbr`.
    pub jitter: bool,
    /// α, the join-timer back-off factor of a failed join experiment: 2 (`rlm_param(alpha) 2`).
    pub alpha: f64,
    /// β, the join-timer relaxation factor per detection time in S: 0.75 (`rlm_param(beta) 0.75`).
    pub beta: f64,
    /// T_J's floor and initial value: 5 s (`rlm_param(init-tj) 5`).
    pub join_timer_min: Seconds,
    /// T_J's ceiling: 60 s (`rlm_param(max) 60`, which overrides the 600 s set just before it).
    pub join_timer_max: Seconds,
    /// T_D's initial value: 5 s (`rlm_param(init-td) 5`).
    pub detection_time: Seconds,
    /// T_D's initial mean deviation: 2 s (`rlm_param(init-td-var) 2`).
    pub detection_deviation: Seconds,
    /// Gain of T_D's moving average: 0.25 (`rlm_param(g1) 0.25`).
    pub detection_gain: f64,
    /// Gain of its deviation's moving average: 0.25 (`rlm_param(g2) 0.25`).
    pub deviation_gain: f64,
    /// In M, drop a layer when lost / (lost + received) exceeds this: 0.25 (ns-2 `exceed_loss_thresh`).
    pub loss_threshold: f64,
    /// … once at least this many packets arrived in M: 10 (ns-2 `exceed_loss_thresh`).
    pub loss_min_packets: u32,
    /// From a join decision to the source sending the layer; default: the control packet's trip.
    pub graft_latency: Option<Seconds>,
    /// From a leave decision to the source stopping the layer; default: the control packet's trip.
    pub prune_latency: Option<Seconds>,
    /// Record the receiver's subscription (`layers`) in `traces` when it changes.
    pub trace: bool,
}

impl Default for RlmConfig {
    fn default() -> Self {
        RlmConfig {
            layers: 7,
            base_rate: Rate(32e3),
            jitter: false,
            alpha: 2.0,
            beta: 0.75,
            join_timer_min: Seconds(5.0),
            join_timer_max: Seconds(60.0),
            detection_time: Seconds(5.0),
            detection_deviation: Seconds(2.0),
            detection_gain: 0.25,
            deviation_gain: 0.25,
            loss_threshold: 0.25,
            loss_min_packets: 10,
            graft_latency: None,
            prune_latency: None,
            trace: false,
        }
    }
}

impl RlmConfig {
    /// Layer `i`'s rate (1-based), bits/s.
    fn layer_rate(&self, i: u32) -> f64 {
        self.base_rate.0 * 2f64.powi(i as i32 - 1)
    }
}

impl FlowConfig for RlmConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        let field = |name: &str| format!("{path}.{name}");
        require_in(&field("layers"), self.layers as f64, 1.0, MAX_LAYERS as f64)?;
        require_positive(&field("base_rate"), self.base_rate)?;
        let top = self.layer_rate(self.layers);
        if top > MAX_RATE_BPS {
            return Err(ScenarioError::new(
                field("base_rate"),
                format!(
                    "layer {} would send {top:e} bit/s, above the {MAX_RATE_BPS:e} limit of any rate",
                    self.layers
                ),
            ));
        }
        if !(self.alpha >= 1.0 && self.alpha.is_finite()) {
            return Err(ScenarioError::new(
                field("alpha"),
                format!("must be >= 1, got {}", self.alpha),
            ));
        }
        if !(self.beta > 0.0 && self.beta <= 1.0) {
            return Err(ScenarioError::new(
                field("beta"),
                format!("must be in (0, 1], got {}", self.beta),
            ));
        }
        require_positive(&field("join_timer_min"), self.join_timer_min)?;
        if self.join_timer_max.0 < self.join_timer_min.0 {
            return Err(ScenarioError::new(
                field("join_timer_max"),
                format!(
                    "must be >= join_timer_min ({}), got {}",
                    self.join_timer_min, self.join_timer_max
                ),
            ));
        }
        require_positive(&field("detection_time"), self.detection_time)?;
        require_non_negative(&field("detection_deviation"), self.detection_deviation)?;
        require_in(&field("detection_gain"), self.detection_gain, 0.0, 1.0)?;
        require_in(&field("deviation_gain"), self.deviation_gain, 0.0, 1.0)?;
        require_in(&field("loss_threshold"), self.loss_threshold, 0.0, 1.0)?;
        require_positive(&field("loss_min_packets"), self.loss_min_packets as f64)?;
        for (name, latency) in [
            ("graft_latency", self.graft_latency),
            ("prune_latency", self.prune_latency),
        ] {
            if let Some(latency) = latency {
                require_non_negative(&field(name), latency)?;
            }
        }
        Ok(())
    }

    /// Every layer: what the source sends with the receiver at the top.
    fn demand_bps(&self) -> Option<f64> {
        Some((1..=self.layers).map(|i| self.layer_rate(i)).sum())
    }

    fn traced(&self) -> bool {
        self.trace
    }

    fn build(&self, size: u32, offer: &Offer, mut rng: Rng) -> (Box<dyn Agent>, Box<dyn Agent>) {
        let receiver_rng = Rng::from_rng(&mut rng).expect("PCG seeds from PCG");
        (
            Box::new(RlmSource::new(self, size, offer.stop, rng)),
            Box::new(RlmReceiver::new(self, receiver_rng)),
        )
    }
}

crate::timer_kinds! {
    /// The source's timers.
    enum SourceTimer {
        /// Send the next packet of `layer` (0-based); stale once the layer stopped or started
        /// again since (`RlmSource::generation`).
        Send { layer: u8, generation: Generation },
        /// Apply the receiver's request number `request`: send `level` layers from now (after
        /// the graft or prune latency).
        Apply { request: u32, level: u8 },
    }
}

/// The layered source: one CBR per subscribed layer, started and stopped by the receiver's
/// control packets (the graft and prune of a multicast tree, here at the source).
pub struct RlmSource {
    size: u32,
    /// Mean gap of each layer's packets, s (index 0 = layer 1).
    gaps: Vec<f64>,
    jitter: bool,
    stop: Time,
    graft_latency: Option<Time>,
    prune_latency: Option<Time>,
    /// Layers being sent.
    level: usize,
    /// Per layer: bumped at each start and stop, so that a stopped layer's pending send is ignored.
    generation: Vec<Generation>,
    /// Per layer: the next sequence number (a layer's numbers run on across stops).
    next_seq: Vec<u64>,
    /// The newest request applied: an older one that takes effect later is ignored.
    applied_request: Option<u32>,
    rng: Rng,
}

impl RlmSource {
    fn new(config: &RlmConfig, size: u32, stop: Time, rng: Rng) -> Self {
        let layers = config.layers as usize;
        RlmSource {
            size,
            gaps: (1..=config.layers)
                .map(|i| size as f64 * 8.0 / config.layer_rate(i))
                .collect(),
            jitter: config.jitter,
            stop,
            graft_latency: config.graft_latency.map(|s| s.nanos()),
            prune_latency: config.prune_latency.map(|s| s.nanos()),
            level: 0,
            generation: vec![Generation::default(); layers],
            next_seq: vec![0; layers],
            applied_request: None,
            rng,
        }
    }

    /// Sends the next packet of `layer` (0-based) and schedules the one after.
    fn send(&mut self, layer: usize, ctx: &mut AgentCtx) {
        if ctx.now >= self.stop {
            return;
        }
        ctx.send(Packet {
            size: self.size,
            seq: self.next_seq[layer],
            layer: layer as u8 + 1,
            sent_at: ctx.now,
            ecn: Ecn::NotEct,
            ..Default::default()
        });
        self.next_seq[layer] += 1;
        let factor = if self.jitter { self.rng.gen_range(0.5..1.5) } else { 1.0 };
        let gap = from_secs(self.gaps[layer] * factor).max(1);
        let (generation, layer) = (self.generation[layer], layer as u8);
        ctx.set_timer(ctx.now + gap, SourceTimer::Send { layer, generation });
    }

    /// Sends `level` layers from now: starts the ones added, stops the ones removed.
    fn subscribe(&mut self, level: usize, ctx: &mut AgentCtx) {
        let (old, new) = (self.level, level.min(self.gaps.len()));
        self.level = new;
        for layer in new.min(old)..new.max(old) {
            self.generation[layer].advance();
            if new > old {
                self.send(layer, ctx);
            }
        }
    }

    /// Applies request number `request` for `level` layers, unless a newer one was applied.
    fn apply(&mut self, request: u32, level: u8, ctx: &mut AgentCtx) {
        if self.applied_request.is_some_and(|newest| request <= newest) {
            return;
        }
        self.applied_request = Some(request);
        self.subscribe(level as usize, ctx);
    }
}

impl Agent for RlmSource {
    fn start(&mut self, ctx: &mut AgentCtx) {
        // The receiver starts with the base layer (ns-2 MMG init: "start out with at least one group").
        self.subscribe(1, ctx);
    }

    /// A join or leave: the receiver's new level in `layer`, the request's number in `seq`.
    fn receive(&mut self, packet: &Packet, ctx: &mut AgentCtx) {
        // The receiver numbers its requests in a u32 (`RlmReceiver::requests`).
        let (request, level) = (packet.seq as u32, packet.layer);
        let latency = if level as usize > self.level {
            self.graft_latency
        } else {
            self.prune_latency
        };
        match latency {
            Some(latency) if packet.sent_at + latency > ctx.now => {
                ctx.set_timer(packet.sent_at + latency, SourceTimer::Apply { request, level })
            }
            _ => self.apply(request, level, ctx),
        }
    }

    fn timer(&mut self, token: Token, ctx: &mut AgentCtx) {
        match SourceTimer::from_token(token) {
            SourceTimer::Apply { request, level } => self.apply(request, level, ctx),
            SourceTimer::Send { layer, generation } => {
                let layer = layer as usize;
                if layer < self.level && self.generation[layer].is_current(generation) {
                    self.send(layer, ctx);
                }
            }
        }
    }
}

/// The receiver's state (RLM's state machine; ns-2 `state_` /S, /H, /M, /D).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Steady: losses are examined (a failed join experiment, or congestion to watch).
    Steady,
    /// Hysteresis: losses ignored for a detection time before they are measured.
    Hysteresis,
    /// Measurement: losses counted; above the threshold the top layer goes.
    Measurement,
    /// Just dropped a layer: losses ignored while the drop takes effect.
    Drop,
}

crate::timer_kinds! {
    /// The receiver's two timers; a later setting or a cancel makes a pending one stale.
    enum ReceiverTimer {
        /// The join-timer: try the next layer.
        Join { generation: Generation },
        /// The detection timer: the end of a state's wait (T_D based).
        Detection { generation: Generation },
    }
}

/// What the receiver knows of one layer.
#[derive(Clone, Debug)]
struct Layer {
    /// T_J: the join-timer for trying this layer, s.
    join_timer: f64,
    /// When the receiver last added this layer (ns-2 `add_time_`).
    added_at: Option<Time>,
    /// When its last join experiment on this layer started (ns-2 `join_ts_`, `pending_ts_`).
    experiment_at: Option<Time>,
    /// The sequence number expected next; None until a packet arrives after the join.
    expected: Option<u64>,
    /// A packet arrived since the last join (ns-2 `getting-pkts`).
    receiving: bool,
}

/// Parameters resolved from [`RlmConfig`]: times in seconds.
#[derive(Clone, Debug)]
struct Params {
    alpha: f64,
    beta: f64,
    join_timer_min: f64,
    join_timer_max: f64,
    detection_gain: f64,
    deviation_gain: f64,
    loss_threshold: f64,
    loss_min_packets: u64,
}

/// The RLM receiver: counts each subscribed layer's losses from its sequence numbers and
/// runs RLM's join experiments and drops.
pub struct RlmReceiver {
    params: Params,
    layers: Vec<Layer>,
    /// Layers subscribed (1 ..= layers.len()).
    level: usize,
    state: State,
    /// T_D and its mean deviation, s.
    detection: f64,
    deviation: f64,
    /// Packets received and lost on the subscribed layers, whole run.
    received: u64,
    lost: u64,
    /// (received, lost) when M began.
    measured_from: (u64, u64),
    /// The generation of the pending join-timer and detection timer.
    join_generation: Generation,
    detection_generation: Generation,
    join_timer_pending: bool,
    /// Join and leave requests sent (the next one's number).
    requests: u32,
    rng: Rng,
}

impl RlmReceiver {
    fn new(config: &RlmConfig, rng: Rng) -> Self {
        let layer = Layer {
            join_timer: config.join_timer_min.0,
            added_at: None,
            experiment_at: None,
            expected: None,
            receiving: false,
        };
        RlmReceiver {
            params: Params {
                alpha: config.alpha,
                beta: config.beta,
                join_timer_min: config.join_timer_min.0,
                join_timer_max: config.join_timer_max.0,
                detection_gain: config.detection_gain,
                deviation_gain: config.deviation_gain,
                loss_threshold: config.loss_threshold,
                loss_min_packets: config.loss_min_packets as u64,
            },
            layers: vec![layer; config.layers as usize],
            level: 0,
            state: State::Steady,
            detection: config.detection_time.0,
            deviation: config.detection_deviation.0,
            received: 0,
            lost: 0,
            measured_from: (0, 0),
            join_generation: Generation::default(),
            detection_generation: Generation::default(),
            join_timer_pending: false,
            requests: 0,
            rng,
        }
    }

    /// Layer `level` (1-based).
    fn layer(&mut self, level: usize) -> &mut Layer {
        &mut self.layers[level - 1]
    }

    /// Whether `at` is recent enough to still show in the losses: within T_D + 2·deviation (ns-2 `is-recent`).
    fn is_recent(&self, at: Option<Time>, now: Time) -> bool {
        at.is_some_and(|at| to_secs(at) + self.detection + 2.0 * self.deviation > to_secs(now))
    }

    fn set_timer(timer: ReceiverTimer, delay: f64, ctx: &mut AgentCtx) {
        ctx.set_timer(ctx.now + from_secs(delay).max(1), timer);
    }

    fn cancel_join_timer(&mut self) {
        self.join_generation.advance();
        self.join_timer_pending = false;
    }

    /// The join-timer for the next layer: T_J/2 plus an exponential of mean T_J cut at 4·T_J
    /// (ns-2 `set_TJ_timer`, `trunc_exponential`); none at the top layer.
    fn set_join_timer(&mut self, ctx: &mut AgentCtx) {
        let Some(next) = self.layers.get(self.level) else {
            return;
        };
        let mean = next.join_timer;
        let exp = Exp::new(1.0 / mean).expect("T_J > 0");
        let draw = loop {
            let x = exp.sample(&mut self.rng);
            if x < 4.0 * mean {
                break x;
            }
        };
        let generation = self.join_generation.advance();
        Self::set_timer(ReceiverTimer::Join { generation }, mean / 2.0 + draw, ctx);
        self.join_timer_pending = true;
    }

    /// T_D + 1.5·deviation (ns-2 `set_TD_timer_conservative`).
    fn set_detection_timer(&mut self, ctx: &mut AgentCtx) {
        self.set_detection_timer_in(self.detection + 1.5 * self.deviation, ctx);
    }

    fn set_detection_timer_in(&mut self, delay: f64, ctx: &mut AgentCtx) {
        let generation = self.detection_generation.advance();
        Self::set_timer(ReceiverTimer::Detection { generation }, delay, ctx);
    }

    /// Tells the source the new level and records it.
    fn request(&mut self, ctx: &mut AgentCtx) {
        ctx.send(Packet {
            kind: PacketKind::Ack,
            size: CONTROL_BYTES,
            seq: u64::from(self.requests),
            layer: self.level as u8,
            sent_at: ctx.now,
            ..Default::default()
        });
        self.requests += 1;
        ctx.trace("layers", self.level as f64);
    }

    fn add_layer(&mut self, ctx: &mut AgentCtx) {
        self.level += 1;
        let now = ctx.now;
        let layer = self.layer(self.level);
        layer.added_at = Some(now);
        layer.expected = None;
        layer.receiving = false;
        self.request(ctx);
    }

    /// Leaves the top layer, never the base layer (module header).
    fn drop_layer(&mut self, ctx: &mut AgentCtx) {
        if self.level > 1 {
            self.level -= 1;
            self.request(ctx);
        }
        if !self.join_timer_pending {
            self.set_join_timer(ctx);
        }
    }

    /// T_J ← α·T_J for the layer whose experiment failed, at most T_J^max; every layer above
    /// it at least that (ns-2 `backoff`, `peg-backoff`).
    fn back_off(&mut self, level: usize) {
        let backed_off = (self.layers[level - 1].join_timer * self.params.alpha).min(self.params.join_timer_max);
        self.layers[level - 1].join_timer = backed_off;
        for layer in &mut self.layers[level..] {
            layer.join_timer = layer.join_timer.max(backed_off);
        }
    }

    /// A failed experiment's detection delay enters T_D and its deviation (ns-2 `rlm_update_D`).
    fn update_detection(&mut self, sample: f64) {
        let deviation = (sample - self.detection).abs();
        self.detection += self.params.detection_gain * (sample - self.detection);
        self.deviation += self.params.deviation_gain * (deviation - self.deviation);
    }

    /// The highest layer whose join experiment is recent (ns-2 `highest_level_pending`).
    fn pending_experiment(&self, now: Time) -> Option<usize> {
        (1..=self.layers.len())
            .rev()
            .find(|&level| self.is_recent(self.layers[level - 1].experiment_at, now))
    }

    fn enter_measurement(&mut self, ctx: &mut AgentCtx) {
        self.state = State::Measurement;
        // T_D + (level/2 + 1.5)·deviation (ns-2 `set_TD_timer_wait`).
        let wait = self.detection + (self.level as f64 / 2.0 + 1.5) * self.deviation;
        self.set_detection_timer_in(wait, ctx);
        self.measured_from = (self.received, self.lost);
    }

    fn enter(&mut self, state: State, ctx: &mut AgentCtx) {
        self.state = state;
        self.set_detection_timer(ctx);
    }

    /// In M: more than `loss_threshold` of the packets since M began lost, over at least
    /// `loss_min_packets` received (ns-2 `exceed_loss_thresh`).
    fn loss_exceeds_threshold(&self) -> bool {
        let received = self.received - self.measured_from.0;
        let lost = self.lost - self.measured_from.1;
        received >= self.params.loss_min_packets && lost as f64 / (lost + received) as f64 > self.params.loss_threshold
    }

    /// A gap in a subscribed layer's sequence (ns-2 `log-loss`).
    fn on_loss(&mut self, ctx: &mut AgentCtx) {
        match self.state {
            State::Measurement => {
                if self.loss_exceeds_threshold() {
                    self.drop_layer(ctx);
                    self.enter(State::Drop, ctx);
                }
            }
            State::Steady => {
                self.detection_generation.advance();
                if let Some(level) = self.pending_experiment(ctx.now) {
                    // A join experiment is under way: it failed (RLM's learning).
                    self.back_off(level);
                    if level == self.level {
                        let started = self.layers[level - 1].experiment_at.expect("pending");
                        self.update_detection(to_secs(ctx.now - started));
                        self.drop_layer(ctx);
                        return self.enter(State::Drop, ctx);
                    }
                    if level == self.level + 1 {
                        // The experiment above us just ran: restart our own join-timer.
                        self.cancel_join_timer();
                        self.set_join_timer(ctx);
                    }
                }
                if self.is_recent(self.layers[self.level - 1].added_at, ctx.now) {
                    self.enter_measurement(ctx);
                } else {
                    self.enter(State::Hysteresis, ctx);
                }
            }
            State::Hysteresis | State::Drop => {}
        }
    }

    /// The join-timer fired: in S, with no experiment of ours still recent and the current
    /// layer arriving, join the next layer (ns-2 `trigger_TJ`).
    fn on_join_timer(&mut self, ctx: &mut AgentCtx) {
        self.join_timer_pending = false;
        let now = ctx.now;
        let recent_experiment = (1..=self.level).any(|level| self.is_recent(self.layers[level - 1].experiment_at, now));
        if self.state == State::Steady && !recent_experiment && self.current_layer_arriving(now) {
            self.add_layer(ctx);
            self.layer(self.level).experiment_at = Some(now);
        }
        self.set_join_timer(ctx);
    }

    /// Whether the top layer's packets arrive since its join; if not after more than T_D,
    /// T_D grows to 1.2 × that wait (ns-2 `current_layer_getting_packets`: a long path).
    fn current_layer_arriving(&mut self, now: Time) -> bool {
        let layer = &self.layers[self.level - 1];
        if layer.receiving {
            return true;
        }
        let waited = to_secs(now - layer.added_at.unwrap_or(now));
        if waited > self.detection {
            self.detection = 1.2 * waited;
        }
        false
    }

    /// The detection timer fired: H → M, D and M → S, and in S relax T_J of the current
    /// layer by β (ns-2 `trigger_TD`, `relax_TJ`).
    fn on_detection_timer(&mut self, ctx: &mut AgentCtx) {
        match self.state {
            State::Hysteresis => self.enter_measurement(ctx),
            State::Drop | State::Measurement => self.enter(State::Steady, ctx),
            State::Steady => {
                let (beta, floor) = (self.params.beta, self.params.join_timer_min);
                let layer = self.layer(self.level);
                layer.join_timer = (layer.join_timer * beta).max(floor);
                self.set_detection_timer(ctx);
            }
        }
    }
}

impl Agent for RlmReceiver {
    /// Subscribed to the base layer, which the source starts with by itself.
    fn start(&mut self, ctx: &mut AgentCtx) {
        self.level = 1;
        self.layer(1).added_at = Some(ctx.now);
        ctx.trace("layers", 1.0);
        self.set_join_timer(ctx);
    }

    fn receive(&mut self, packet: &Packet, ctx: &mut AgentCtx) {
        ctx.deliver(packet.size as u64);
        let level = packet.layer as usize;
        if level == 0 || level > self.level {
            return; // a layer left, still arriving until the prune takes effect
        }
        let layer = self.layer(level);
        layer.receiving = true;
        let gap = layer.expected.map_or(0, |expected| packet.seq.saturating_sub(expected));
        layer.expected = Some(packet.seq + 1);
        self.received += 1;
        if gap > 0 {
            self.lost += gap;
            self.on_loss(ctx);
        }
    }

    fn timer(&mut self, token: Token, ctx: &mut AgentCtx) {
        match ReceiverTimer::from_token(token) {
            ReceiverTimer::Join { generation } if self.join_generation.is_current(generation) => {
                self.on_join_timer(ctx)
            }
            ReceiverTimer::Detection { generation } if self.detection_generation.is_current(generation) => {
                self.on_detection_timer(ctx)
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::stream;
    use crate::time::from_secs;
    use crate::transport::testing::AgentHarness;

    const JOIN: fn(ReceiverTimer) -> bool = |timer| matches!(timer, ReceiverTimer::Join { .. });
    const DETECTION: fn(ReceiverTimer) -> bool = |timer| matches!(timer, ReceiverTimer::Detection { .. });

    fn receiver() -> AgentHarness<RlmReceiver> {
        let mut rlm = AgentHarness::receiver(RlmReceiver::new(&RlmConfig::default(), stream(1, "rlm")));
        rlm.start(0);
        rlm
    }

    fn data(layer: u8, seq: u64) -> Packet {
        Packet {
            size: 1000,
            layer,
            seq,
            ..Default::default()
        }
    }

    fn layers(sent: Vec<Packet>) -> Vec<u8> {
        sent.iter().map(|p| p.layer).collect()
    }

    impl AgentHarness<RlmReceiver> {
        /// Packet `seq` of `layer` arrives at `secs`; returns the levels the receiver asked for.
        fn arrive(&mut self, secs: f64, layer: u8, seq: u64) -> Vec<u8> {
            layers(self.receive(from_secs(secs), &data(layer, seq)))
        }

        /// Fires the newest pending `timer` at `secs`; returns the levels asked for.
        fn fire_at(&mut self, secs: f64, timer: fn(ReceiverTimer) -> bool) -> Vec<u8> {
            layers(self.fire_latest(from_secs(secs), timer))
        }

        /// Ends a drop (D → S) at `secs` by its detection timer.
        fn settle(&mut self, secs: f64) {
            if self.agent.state == State::Drop {
                self.fire_at(secs, DETECTION);
            }
            assert_eq!(self.agent.state, State::Steady);
        }

        fn join_timer(&self, level: usize) -> f64 {
            self.agent.layers[level - 1].join_timer
        }

        /// A join experiment on layer 2 at `secs` (layer 1 arriving), failing after `delay`.
        fn failed_experiment(&mut self, secs: f64, delay: f64) {
            self.settle(secs - 0.2);
            let next = self.agent.layers[0].expected.unwrap_or(0);
            self.arrive(secs - 0.1, 1, next);
            assert_eq!(self.fire_at(secs, JOIN), vec![2], "joins layer 2");
            self.arrive(secs + delay / 2.0, 2, 0);
            assert_eq!(
                self.arrive(secs + delay, 2, 2),
                vec![1],
                "a loss fails it: back to layer 1"
            );
        }
    }

    #[test]
    fn a_failed_join_experiment_backs_the_layers_join_timer_off_by_alpha() {
        let mut rlm = receiver();
        assert_eq!(rlm.join_timer(2), 5.0, "T_J starts at join_timer_min");
        rlm.failed_experiment(20.0, 0.5);
        // α = 2: layer 2's T_J doubles; every layer above it is raised to at least that.
        assert_eq!(rlm.join_timer(2), 10.0);
        assert!((3..=7).all(|level| rlm.join_timer(level) == 10.0));
        assert_eq!(rlm.join_timer(1), 5.0, "the layer below is left alone");
        // The failure's detection delay (0.5 s) enters T_D and its deviation with gain 1/4:
        // T_D = 5 + (0.5 - 5)/4, deviation = 2 + (|0.5 - 5| - 2)/4.
        assert_eq!(rlm.agent.detection, 3.875);
        assert_eq!(rlm.agent.deviation, 2.625);
        // A second failure, once the first is no longer recent, doubles it again.
        rlm.failed_experiment(60.0, 0.5);
        assert_eq!(rlm.join_timer(2), 20.0);
    }

    #[test]
    fn the_join_timer_backs_off_no_further_than_join_timer_max() {
        let mut rlm = receiver();
        for i in 0..6 {
            rlm.failed_experiment(20.0 + 40.0 * i as f64, 0.5);
        }
        // 5 · 2^6 = 320 s, held at the 60 s ceiling.
        assert_eq!(rlm.join_timer(2), 60.0);
    }

    #[test]
    fn steady_detection_periods_relax_the_current_layers_join_timer_by_beta() {
        let mut rlm = receiver();
        rlm.failed_experiment(20.0, 0.5);
        rlm.failed_experiment(60.0, 0.5);
        assert_eq!(rlm.join_timer(2), 20.0);
        // Layer 2 joined again, no loss: a success. Each detection period in S then relaxes
        // the current layer's T_J by β = 0.75.
        rlm.settle(99.0);
        rlm.arrive(99.9, 1, rlm.agent.layers[0].expected.unwrap_or(0));
        assert_eq!(rlm.fire_at(100.0, JOIN), vec![2]);
        rlm.fire_at(101.0, DETECTION);
        assert_eq!(rlm.join_timer(2), 15.0);
        rlm.fire_at(102.0, DETECTION);
        assert_eq!(rlm.join_timer(2), 11.25);
        assert_eq!(rlm.join_timer(1), 5.0, "held at join_timer_min");
    }

    /// Congestion that is not a join experiment: losses are ignored for a while (H), then
    /// measured (M); the top layer goes only when more than a quarter of the packets are lost.
    #[test]
    fn measured_losses_above_the_threshold_drop_the_top_layer() {
        for (every, dropped) in [(3, true), (5, false)] {
            let mut rlm = receiver();
            // Layer 2 joined at 20 s; at 60 s the experiment is long past.
            rlm.arrive(19.9, 1, 0);
            rlm.fire_at(20.0, JOIN);
            let mut seq = 0;
            let mut asked = vec![];
            for k in 0..60u64 {
                // Lose one packet in `every` (k counts arrivals; a skipped number is a loss).
                seq += if k % (every - 1) == 0 && k > 0 { 2 } else { 1 };
                asked.extend(rlm.arrive(60.0 + 0.01 * k as f64, 2, seq));
                if k == 0 {
                    assert_eq!(rlm.agent.state, State::Steady);
                }
                if k == every - 1 {
                    assert_eq!(rlm.agent.state, State::Hysteresis, "the first loss starts H");
                    rlm.fire_at(60.005 + 0.01 * k as f64, DETECTION);
                    assert_eq!(rlm.agent.state, State::Measurement);
                }
            }
            assert_eq!(asked == vec![1], dropped, "1 lost in {every}: {asked:?}");
        }
    }

    fn source(config: RlmConfig) -> AgentHarness<RlmSource> {
        let mut src = AgentHarness::sender(RlmSource::new(&config, 1000, from_secs(100.0), stream(1, "rlm")));
        src.start(0);
        src
    }

    impl AgentHarness<RlmSource> {
        /// A request for `level` layers (number `request`, decided at `decided`) arriving at `secs`.
        fn request(&mut self, secs: f64, decided: f64, request: u64, level: u8) -> Vec<Packet> {
            let control = Packet {
                kind: PacketKind::Ack,
                seq: request,
                layer: level,
                sent_at: from_secs(decided),
                ..Default::default()
            };
            self.receive(from_secs(secs), &control)
        }
    }

    fn count(layers: &[u8], layer: u8) -> usize {
        layers.iter().filter(|&&l| l == layer).count()
    }

    #[test]
    fn the_source_sends_the_requested_layers_at_their_rates_from_the_graft_and_prune_latency() {
        let graft = RlmConfig {
            graft_latency: Some(Seconds(0.5)),
            prune_latency: Some(Seconds(0.25)),
            ..RlmConfig::default()
        };
        let mut src = source(graft);
        // Layer 1 from the start: 32 kbps of 1000-byte packets, one every 0.25 s (after the
        // one sent at 0, which the harness does not keep).
        assert_eq!(count(&layers(src.run_until(from_secs(1.9))), 1), 7);
        // Two layers asked for at 2 s, arriving at 2.01 s: sent from 2.5 s (graft latency).
        assert!(src.request(2.01, 2.0, 0, 2).is_empty());
        let sent = layers(src.run_until(from_secs(2.49)));
        assert_eq!(count(&sent, 2), 0);
        // Layer 2 from 2.5 s: 64 kbps, 8 packets a second (the first at 2.5 s itself).
        assert_eq!(count(&layers(src.run_until(from_secs(3.49))), 2), 8);
        // A stale request (an older number) arriving late changes nothing.
        src.request(3.5, 1.0, 0, 1);
        assert_eq!(count(&layers(src.run_until(from_secs(3.99))), 2), 4);
        // Back to one layer at 4 s: stopped from 4.25 s (prune latency).
        src.request(4.01, 4.0, 1, 1);
        let sent = layers(src.run_until(from_secs(5.9)));
        assert_eq!(count(&sent, 2), 2, "4.0 and 4.125 s");
        assert_eq!(count(&sent, 1), 8);
    }

    #[test]
    fn without_latencies_the_source_follows_a_request_when_it_arrives() {
        let mut src = source(RlmConfig::default());
        layers(src.run_until(from_secs(0.5)));
        let sent = src.request(0.6, 0.5, 0, 3);
        assert_eq!(sent.iter().map(|p| p.layer).collect::<Vec<_>>(), vec![2, 3]);
        // Layers 1–3 for one second: 4 + 8 + 16 packets.
        let sent = layers(src.run_until(from_secs(1.599)));
        assert_eq!((count(&sent, 1), count(&sent, 2), count(&sent, 3)), (4, 7, 15));
    }

    #[test]
    fn demand_is_every_layer() {
        // CSFQ §3.3: seven layers of 2^(i+4) kbps, 32 + 64 + ... + 2048 = 4064 kbps.
        assert_eq!(RlmConfig::default().demand_bps(), Some(4_064_000.0));
    }
}
