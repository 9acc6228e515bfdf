//! PIE, "Proportional Integral controller Enhanced" (Pan et al., RFC 8033, whose §4–§5
//! pseudocode this follows).
//!
//! Arrivals are dropped at random with probability `drop_prob`, which a PI controller
//! updates every `t_update` from the queueing delay: p = α·(qdelay − target) + β·(qdelay −
//! qdelay_old), scaled down while drop_prob is small (§4.2's auto-tuning table: ÷2048 below
//! 10⁻⁶ … ÷2 below 0.1), capped at +2 % per update once drop_prob ≥ 0.1, and decayed by 2 %
//! per update while the queue stays empty. The queueing delay is the sojourn time of the last
//! packet dequeued (§5.2's timestamp method; 0 once the queue is empty). No early drop while
//! `max_burst` of allowance is left, while the delay is below target/2 and drop_prob < 0.2,
//! or with fewer than two MTUs queued (§4.1). Options: de-randomised drops (§5.1) and ECN
//! marking below `ecn_threshold` (§5.1). The controller runs lazily at each enqueue and
//! dequeue, catching up on every `t_update` boundary passed since the last one. Linux's extra
//! +2 % when the delay exceeds 250 ms is not in the RFC and not here.

use super::{DropReason, Fifo, Limit, LinkInfo, QdiscConfig, QdiscCtx, QueueDisc, Verdict};
use crate::error::ScenarioError;
use crate::packet::{Ecn, PacketId};
use crate::rng::Rng;
use crate::time::{from_secs, to_secs, Time};
use crate::units::{Bytes, Seconds};
use crate::validate::{require_non_negative, require_positive};
use rand::Rng as _;
use serde::Deserialize;

/// Which PIE runs: this file's, RFC 8033's pseudocode; `profile = "linux"` is Linux's sch_pie,
/// with tc's words ([`super::pie_linux`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
pub enum PieProfile {
    #[default]
    #[serde(rename = "rfc8033")]
    Rfc8033,
}

/// `type = "pie"`; every field optional (defaults: RFC 8033 §5 and Linux sch_pie).
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PieConfig {
    /// `"rfc8033"`, the default (`"linux"` reads [`super::pie_linux::PieLinuxConfig`] instead).
    pub profile: PieProfile,
    /// Target queueing delay QDELAY_REF: 15 ms (RFC 8033 §5.1).
    pub target: Seconds,
    /// Controller period T_UPDATE: 15 ms (§5.1).
    pub t_update: Seconds,
    /// α, per second: 0.125 (§5.1).
    pub alpha: f64,
    /// β, per second: 1.25 (§5.1).
    pub beta: f64,
    /// Burst allowance MAX_BURST: 150 ms (§5.1).
    pub max_burst: Seconds,
    /// Tail-drop limit in packets: 1000 (Linux sch_pie `limit`).
    pub limit: u64,
    /// Below two of these queued, no early drop (§4.1 "2 * MEAN_PKTSIZE"; Linux: the MTU): 1500 bytes.
    pub mtu: Bytes,
    /// §5.1's optional de-randomisation: off.
    pub derandomize: bool,
    /// Mark ECN-capable packets while drop_prob is at most `ecn_threshold` (§5.1): off.
    pub ecn: bool,
    /// 10 % (§5.1 "mark_ecnth").
    pub ecn_threshold: f64,
}

impl Default for PieConfig {
    fn default() -> Self {
        PieConfig {
            profile: PieProfile::Rfc8033,
            target: Seconds(0.015),
            t_update: Seconds(0.015),
            alpha: 0.125,
            beta: 1.25,
            max_burst: Seconds(0.15),
            limit: 1000,
            mtu: Bytes(1500),
            derandomize: false,
            ecn: false,
            ecn_threshold: 0.1,
        }
    }
}

impl QdiscConfig for PieConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        let field = |name: &str| format!("{path}.{name}");
        for (name, value) in [
            ("target", self.target.0),
            ("t_update", self.t_update.0),
            ("alpha", self.alpha),
            ("beta", self.beta),
            ("mtu", self.mtu.0 as f64),
        ] {
            require_positive(&field(name), value)?;
        }
        require_non_negative(&field("max_burst"), self.max_burst)?;
        if !(0.0..=1.0).contains(&self.ecn_threshold) {
            return Err(ScenarioError::new(
                field("ecn_threshold"),
                format!("must be in [0, 1], got {}", self.ecn_threshold),
            ));
        }
        Limit::new(Some(self.limit), None).validate(path)
    }

    fn build(&self, _link: &LinkInfo, rng: Rng) -> Box<dyn QueueDisc> {
        Box::new(Pie::new(self, rng))
    }
}

struct Params {
    /// Seconds, as the controller's arithmetic uses them.
    target: f64,
    t_update: Time,
    alpha: f64,
    beta: f64,
    max_burst: Time,
    limit: Limit,
    mtu: u64,
    derandomize: bool,
    ecn: bool,
    ecn_threshold: f64,
}

pub struct Pie {
    params: Params,
    fifo: Fifo,
    rng: Rng,
    drop_prob: f64,
    /// Queueing delay now and at the previous update, seconds.
    qdelay: f64,
    qdelay_old: f64,
    burst_allowance: Time,
    /// §5.1: the probability accumulated since the last drop (de-randomisation).
    accu_prob: f64,
    next_update: Time,
}

impl Pie {
    pub fn new(config: &PieConfig, rng: Rng) -> Self {
        let max_burst = from_secs(config.max_burst.0);
        Pie {
            params: Params {
                target: config.target.0,
                t_update: from_secs(config.t_update.0),
                alpha: config.alpha,
                beta: config.beta,
                max_burst,
                limit: Limit::new(Some(config.limit), None),
                mtu: config.mtu.0,
                derandomize: config.derandomize,
                ecn: config.ecn,
                ecn_threshold: config.ecn_threshold,
            },
            fifo: Fifo::default(),
            rng,
            drop_prob: 0.0,
            qdelay: 0.0,
            qdelay_old: 0.0,
            burst_allowance: max_burst,
            accu_prob: 0.0,
            next_update: 0,
        }
    }

    /// RFC 8033 §4.2 calculate_drop_prob(), for the current `self.qdelay`.
    fn update(&mut self) {
        let p = &self.params;
        let mut delta = p.alpha * (self.qdelay - p.target) + p.beta * (self.qdelay - self.qdelay_old);
        // §4.2: auto-tuning, smaller steps while the drop probability is small.
        let scale = [
            (0.000001, 2048.0),
            (0.00001, 512.0),
            (0.0001, 128.0),
            (0.001, 32.0),
            (0.01, 8.0),
            (0.1, 2.0),
        ]
        .iter()
        .find(|&&(below, _)| self.drop_prob < below)
        .map_or(1.0, |&(_, divisor)| divisor);
        delta /= scale;
        // §4.2: "Cap Drop Adjustment".
        if self.drop_prob >= 0.1 && delta > 0.02 {
            delta = 0.02;
        }
        self.drop_prob += delta;
        // §4.2: exponential decay once the queue has stayed empty.
        if self.qdelay == 0.0 && self.qdelay_old == 0.0 {
            self.drop_prob *= 0.98;
        }
        self.drop_prob = self.drop_prob.clamp(0.0, 1.0);
        self.burst_allowance = self.burst_allowance.saturating_sub(p.t_update);
        // §4.2: the burst allowance is restored once the queue is quiet again.
        if self.drop_prob == 0.0 && self.qdelay < p.target / 2.0 && self.qdelay_old < p.target / 2.0 {
            self.burst_allowance = p.max_burst;
        }
        self.qdelay_old = self.qdelay;
    }

    /// Runs every controller update due by `now`.
    fn catch_up(&mut self, now: Time) {
        while now >= self.next_update {
            self.update();
            self.next_update += self.params.t_update;
        }
    }

    /// RFC 8033 §4.1 / §5.1 drop_early(): whether the arriving packet, finding `queued_bytes`, is
    /// dropped early.
    fn drop_early(&mut self, queued_bytes: u64) -> bool {
        let p = &self.params;
        if self.burst_allowance > 0 {
            return false;
        }
        if (self.qdelay_old < p.target / 2.0 && self.drop_prob < 0.2) || queued_bytes <= 2 * p.mtu {
            return false;
        }
        if p.derandomize {
            if self.drop_prob == 0.0 {
                self.accu_prob = 0.0;
            }
            self.accu_prob += self.drop_prob;
            if self.accu_prob < 0.85 {
                return false;
            }
            if self.accu_prob >= 8.5 {
                self.accu_prob = 0.0;
                return true;
            }
        }
        let drop = self.rng.gen::<f64>() < self.drop_prob;
        if drop {
            self.accu_prob = 0.0;
        }
        drop
    }
}

impl QueueDisc for Pie {
    fn enqueue(&mut self, id: PacketId, ctx: &mut QdiscCtx) -> Verdict {
        self.catch_up(ctx.now);
        let queued = ctx.backlog();
        if !self
            .params
            .limit
            .admits(queued.packets, queued.bytes, ctx.packets[id].size)
        {
            return Verdict::Dropped(DropReason::Overflow);
        }
        if self.drop_early(queued.bytes) {
            // §5.1: mark instead while the probability is low enough.
            if self.params.ecn && ctx.packets[id].ecn != Ecn::NotEct && self.drop_prob <= self.params.ecn_threshold {
                ctx.mark(id);
            } else {
                return Verdict::Dropped(DropReason::Early);
            }
        }
        self.fifo.push(id);
        Verdict::Enqueued
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        self.catch_up(ctx.now);
        let id = self.fifo.pop(ctx.packets);
        // §5.2: the queueing delay by timestamps, the sojourn of the packet leaving.
        self.qdelay = match id {
            Some(id) if !self.fifo.is_empty() => to_secs(ctx.now - ctx.packets[id].enqueued_at),
            _ => 0.0,
        };
        id
    }

    fn can_mark(&self) -> bool {
        true
    }

    fn counters(&self) -> Vec<(&'static str, f64)> {
        vec![("drop_prob", self.drop_prob)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Packet;
    use crate::qdisc::testing::{link, QdiscHarness, MS};
    use crate::rng::stream;

    const LINK: LinkInfo = link(10e6);

    fn pie() -> Pie {
        Pie::new(&PieConfig::default(), stream(1, "pie"))
    }

    #[test]
    fn the_update_is_rfc_8033_arithmetic() {
        let mut q = pie();
        // drop_prob 0.05, delay 20 ms after 15 ms: α·5 ms + β·5 ms = 0.006875, halved below 0.1.
        q.drop_prob = 0.05;
        q.qdelay_old = 0.015;
        q.qdelay = 0.020;
        q.update();
        assert!((q.drop_prob - (0.05 + 0.006875 / 2.0)).abs() < 1e-12, "{}", q.drop_prob);
        // Below 10⁻⁶ the step is divided by 2048.
        q.drop_prob = 0.0;
        q.qdelay_old = 0.0;
        q.qdelay = 0.030;
        q.update();
        assert!((q.drop_prob - (0.125 * 0.015 + 1.25 * 0.030) / 2048.0).abs() < 1e-15);
        // At or above 0.1 a step is at most 0.02: 0.125·0.485 + 1.25·0.5 would be 0.69.
        q.drop_prob = 0.3;
        q.qdelay_old = 0.0;
        q.qdelay = 0.5;
        q.update();
        assert!((q.drop_prob - 0.32).abs() < 1e-12);
        // An empty queue twice in a row: the probability decays by 2 % (after a negative step).
        q.drop_prob = 0.5;
        q.qdelay_old = 0.0;
        q.qdelay = 0.0;
        q.update();
        assert!((q.drop_prob - (0.5 - 0.125 * 0.015) * 0.98).abs() < 1e-12);
    }

    #[test]
    fn no_early_drop_during_the_burst_allowance() {
        let mut h = QdiscHarness::new(PieConfig::default().build(&LINK, stream(2, "pie")));
        // 2 packets arrive per ms, 1 leaves: the queue and its delay grow from 0.
        let mut first_drop = None;
        for ms in 0..400 {
            for _ in 0..2 {
                let packet = Packet {
                    size: 1000,
                    enqueued_at: ms * MS,
                    ..Default::default()
                };
                if matches!(h.offer(ms * MS, packet).0, Verdict::Dropped(DropReason::Early)) && first_drop.is_none() {
                    first_drop = Some(ms);
                }
            }
            h.depart(ms * MS);
        }
        // The 150 ms allowance is spent in 10 updates of 15 ms: nothing is dropped before.
        let first = first_drop.expect("PIE drops once the allowance is spent");
        assert!(first >= 150, "first early drop at {first} ms");
    }

    #[test]
    fn errors_name_the_field() {
        let err = PieConfig {
            ecn_threshold: 1.5,
            ..Default::default()
        }
        .validate("q")
        .unwrap_err()
        .to_string();
        assert_eq!(err, "q.ecn_threshold: must be in [0, 1], got 1.5");
    }
}
