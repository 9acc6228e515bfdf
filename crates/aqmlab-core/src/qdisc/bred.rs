//! BRED, Balanced RED (Anjum & Tassiulas, "Balanced-RED: An Algorithm to
//! Achieve Fairness in the Internet", CSHCN T.R. 99-9, 1999).
//!
//! A FIFO that decides on each arrival from the number of packets its flow
//! already has buffered (`qlen`, kept only for flows with packets in the
//! buffer, §3): below `l1` accept; from `l1` to `l2` drop with probability
//! `p1`; above `l2` drop with probability `p2`; at `W_m` always drop.
//! Unless given explicitly, the thresholds follow the number of active flows
//! through the estimate N̂ (§5.1, eq. 12, 15, 16):
//! N̂ ← (1 − w_n)·N̂ + w_n·N_active, l2 = B / (2·[N̂]), l1 = β·l2,
//! W_m = α·l2, p2 = √N̂ / (√N̂ + 10), p1 = p2 / 10.
//!
//! Readings of unclear spots: "[N̂]" (eq. 15) is taken as the integer part,
//! at least 1. N̂ is sampled at every arrival, with N_active counting the
//! arriving flow (§3 step 1 counts a flow as active before deciding on its
//! packet); a flow whose packet is then dropped gets no state.

use super::active_flows::{flow_key, ActiveFlows};
use super::{Backlog, DropReason, Fifo, Limit, LinkInfo, QdiscConfig, QdiscCtx, QueueDisc, Verdict};
use crate::error::ScenarioError;
use crate::packet::PacketId;
use crate::rng::Rng;
use crate::validate::{require_in, require_positive};
use rand::Rng as _;
use serde::Deserialize;

/// BRED's parameters: the buffer, and each threshold or probability either
/// explicit or derived from N̂ by eq. 12, 15.
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BredConfig {
    /// Buffer size B in packets (default 150, §5.1 Fig. 5a: 400 ms at 1.5 Mb/s).
    pub limit: u64,
    /// Default β·l2 (eq. 12).
    pub l1: Option<f64>,
    /// Default B / (2·[N̂]) (eq. 15).
    pub l2: Option<f64>,
    /// W_m; default α·l2 (eq. 12).
    pub w_m: Option<f64>,
    /// Default p2 / 10 (eq. 15).
    pub p1: Option<f64>,
    /// Default √N̂ / (√N̂ + 10) (eq. 15).
    pub p2: Option<f64>,
    /// W_m = α·l2 (§4.3.2: α = 1.3).
    pub alpha: f64,
    /// l1 = β·l2 (§4.3.2: β = 0.9).
    pub beta: f64,
    /// Weight of the N̂ average (eq. 16: w_n = 0.02).
    pub w_n: f64,
}

impl Default for BredConfig {
    fn default() -> Self {
        BredConfig {
            limit: 150,
            l1: None,
            l2: None,
            w_m: None,
            p1: None,
            p2: None,
            alpha: 1.3,
            beta: 0.9,
            w_n: 0.02,
        }
    }
}

impl BredConfig {
    fn limit(&self) -> Limit {
        Limit::new(Some(self.limit), None)
    }

    fn params(&self) -> Params {
        Params {
            limit: self.limit(),
            buffer: self.limit as f64,
            l1: self.l1,
            l2: self.l2,
            w_m: self.w_m,
            p1: self.p1,
            p2: self.p2,
            alpha: self.alpha,
            beta: self.beta,
            w_n: self.w_n,
        }
    }
}

impl QdiscConfig for BredConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        self.limit().validate(path)?;
        for (field, value) in [("l1", self.l1), ("l2", self.l2), ("w_m", self.w_m)] {
            if let Some(v) = value {
                require_positive(&format!("{path}.{field}"), v)?;
            }
        }
        for (field, value) in [("p1", self.p1), ("p2", self.p2)] {
            if let Some(v) = value {
                require_in(&format!("{path}.{field}"), v, 0.0, 1.0)?;
            }
        }
        // §3: l1 ≤ l2 < W_m, checked where both ends are explicit.
        if let (Some(l1), Some(l2)) = (self.l1, self.l2) {
            if l1 > l2 {
                return Err(ScenarioError::new(
                    format!("{path}.l1"),
                    format!("must be <= l2 ({l2}), got {l1}"),
                ));
            }
        }
        for (field, value) in [("l1", self.l1), ("l2", self.l2)] {
            if let (Some(v), Some(w_m)) = (value, self.w_m) {
                if v >= w_m {
                    return Err(ScenarioError::new(
                        format!("{path}.w_m"),
                        format!("must be > {field} ({v}), got {w_m}"),
                    ));
                }
            }
        }
        if !(self.alpha > 1.0 && self.alpha.is_finite()) {
            return Err(ScenarioError::new(
                format!("{path}.alpha"),
                format!("must be > 1 (eq. 12), got {}", self.alpha),
            ));
        }
        require_positive(&format!("{path}.beta"), self.beta)?;
        require_in(&format!("{path}.beta"), self.beta, 0.0, 1.0)?;
        require_positive(&format!("{path}.w_n"), self.w_n)?;
        require_in(&format!("{path}.w_n"), self.w_n, 0.0, 1.0)
    }

    fn build(&self, _link: &LinkInfo, rng: Rng) -> Box<dyn QueueDisc> {
        Box::new(Bred::new(self, rng))
    }
}

/// The parameters in effect. A threshold or probability left unset is derived
/// from N̂ on every arrival ([`Params::thresholds`]).
#[derive(Clone, Copy, Debug)]
struct Params {
    limit: Limit,
    /// B, the buffer in packets.
    buffer: f64,
    l1: Option<f64>,
    l2: Option<f64>,
    w_m: Option<f64>,
    p1: Option<f64>,
    p2: Option<f64>,
    alpha: f64,
    beta: f64,
    w_n: f64,
}

impl Params {
    /// The thresholds for an active-flow estimate `n_hat`: explicit values, else eq. 12 and 15.
    fn thresholds(&self, n_hat: f64) -> Thresholds {
        let flows = n_hat.floor().max(1.0);
        let l2 = self.l2.unwrap_or(self.buffer / (2.0 * flows));
        let p2 = self.p2.unwrap_or(n_hat.sqrt() / (n_hat.sqrt() + 10.0));
        Thresholds {
            l1: self.l1.unwrap_or(self.beta * l2),
            l2,
            w_m: self.w_m.unwrap_or(self.alpha * l2),
            p1: self.p1.unwrap_or(p2 / 10.0),
            p2,
        }
    }
}

/// The per-flow thresholds (packets) and drop probabilities in effect.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Thresholds {
    pub l1: f64,
    pub l2: f64,
    pub w_m: f64,
    pub p1: f64,
    pub p2: f64,
}

/// What BRED counts beyond the engine's drop table: which band dropped (§3).
#[derive(Default)]
struct Stats {
    /// `per_flow_limit` drops at `qlen ≥ W_m`.
    wm_drops: u64,
    /// `per_flow_limit` drops with probability p2, `qlen > l2`.
    p2_drops: u64,
    // The p1 band's drops are the engine's `early` drops: no counter of their own.
}

pub struct Bred {
    params: Params,
    fifo: Fifo,
    /// Per-active-flow `qlen`.
    flows: ActiveFlows<()>,
    /// Estimate of the number of active flows (eq. 16).
    n_hat: f64,
    rng: Rng,
    stats: Stats,
}

impl Bred {
    pub fn new(config: &BredConfig, rng: Rng) -> Self {
        Bred {
            params: config.params(),
            fifo: Fifo::default(),
            flows: ActiveFlows::default(),
            n_hat: 0.0,
            rng,
            stats: Stats::default(),
        }
    }

    /// The thresholds in effect for the current N̂.
    pub fn thresholds(&self) -> Thresholds {
        self.params.thresholds(self.n_hat)
    }

    pub fn n_hat(&self) -> f64 {
        self.n_hat
    }

    fn with_probability(&mut self, p: f64) -> bool {
        self.rng.gen::<f64>() < p
    }

    /// §3 "for each arriving packet": `Some(reason)` drops it.
    fn decide(&mut self, qlen: f64, size: u32, queued: Backlog) -> Option<DropReason> {
        let thresholds = self.thresholds();
        if qlen >= thresholds.w_m {
            self.stats.wm_drops += 1;
            return Some(DropReason::PerFlowLimit);
        }
        if !self.params.limit.admits(queued.packets, queued.bytes, size) {
            return Some(DropReason::Overflow);
        }
        if qlen > thresholds.l2 {
            if self.with_probability(thresholds.p2) {
                self.stats.p2_drops += 1;
                return Some(DropReason::PerFlowLimit);
            }
        } else if qlen >= thresholds.l1 && self.with_probability(thresholds.p1) {
            // The p1 band is the early warning for adaptive flows (§4.2).
            return Some(DropReason::Early);
        }
        None
    }
}

impl QueueDisc for Bred {
    fn enqueue(&mut self, id: PacketId, ctx: &mut QdiscCtx) -> Verdict {
        let packet = &ctx.packets[id];
        let (key, size) = (flow_key(packet), packet.size);
        let qlen = self.flows.get(key).qlen;
        // Eq. 16, with the arriving flow counted as active (§3 step 1).
        let n_active = self.flows.active() + (qlen == 0) as usize;
        self.n_hat = (1.0 - self.params.w_n) * self.n_hat + self.params.w_n * n_active as f64;
        if let Some(reason) = self.decide(qlen as f64, size, ctx.backlog()) {
            return Verdict::Dropped(reason);
        }
        self.flows.add(key, 1);
        self.fifo.push(id);
        Verdict::Enqueued
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        let id = self.fifo.pop(ctx.packets)?;
        self.flows.remove(flow_key(&ctx.packets[id]), 1);
        Some(id)
    }

    fn counters(&self) -> Vec<(&'static str, f64)> {
        let t = self.thresholds();
        vec![
            ("active_flows", self.flows.active() as f64),
            ("peak_active_flows", self.flows.peak() as f64),
            ("n_hat", self.n_hat),
            ("l1", t.l1),
            ("l2", t.l2),
            ("w_m", t.w_m),
            ("p1", t.p1),
            ("p2", t.p2),
            ("wm_drops", self.stats.wm_drops as f64),
            ("p2_drops", self.stats.p2_drops as f64),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Packet;
    use crate::qdisc::testing::QdiscHarness;
    use crate::rng::stream;
    use DropReason::{Early, Overflow, PerFlowLimit};

    /// A BRED queue driven by hand (BRED ignores time).
    fn bred(cfg: BredConfig, seed: u64) -> QdiscHarness<Bred> {
        cfg.validate("q").expect("valid test config");
        QdiscHarness::new(Box::new(Bred::new(&cfg, stream(seed, "bred-test"))))
    }

    #[test]
    fn drops_follow_the_flows_band_p1_then_p2_then_always() {
        let config = BredConfig {
            limit: 100,
            l1: Some(3.0),
            l2: Some(6.0),
            w_m: Some(9.0),
            p1: Some(0.1),
            p2: Some(0.4),
            ..Default::default()
        };
        let trials = 20_000;
        // Boundaries: qlen = l1 and qlen = l2 are both in the p1 band (§3 step 4: l2 ≥ qlen ≥ l1).
        for (qlen, p, reason) in [
            (2, 0.0, Early),
            (3, 0.1, Early),
            (6, 0.1, Early),
            (7, 0.4, PerFlowLimit),
            (8, 0.4, PerFlowLimit),
            (9, 1.0, PerFlowLimit),
        ] {
            let mut h = bred(config.clone(), qlen);
            while h.backlog.packets < qlen as usize {
                h.arrive(0, 1, 500);
            }
            // The counter of the flow's band (§3) counts exactly these drops (p1: the `early` reason).
            let band_drops = |h: &QdiscHarness<Bred>| match qlen {
                ..=6 => h.drops(Early),
                7 | 8 => h.q.stats.p2_drops,
                _ => h.q.stats.wm_drops,
            };
            let before = band_drops(&h);
            let mut drops = 0;
            for _ in 0..trials {
                // Only flow 1 is buffered, so a departure restores its qlen after an accepted arrival.
                match h.arrive(0, 1, 500) {
                    Verdict::Enqueued => assert_eq!(h.depart_flow(0), 1),
                    Verdict::Dropped(r) => {
                        assert_eq!(r, reason, "qlen {qlen}");
                        drops += 1;
                    }
                }
                assert_eq!(
                    h.q.flows
                        .get(flow_key(&Packet {
                            flow: 1,
                            ..Default::default()
                        }))
                        .qlen,
                    qlen
                );
            }
            assert_eq!(band_drops(&h) - before, drops, "qlen {qlen}");
            let mean = p * trials as f64;
            let sigma = (trials as f64 * p * (1.0 - p)).sqrt();
            assert!(
                (drops as f64 - mean).abs() <= 3.0 * sigma,
                "qlen {qlen}: {drops} drops, expected {mean} ± {}",
                3.0 * sigma
            );
        }
    }

    #[test]
    fn n_hat_follows_eq_16_and_state_is_released() {
        let mut h = bred(BredConfig::default(), 1);
        // N_active at each arrival counts the arriving flow; by hand with w_n = 0.02:
        h.arrive(0, 1, 500); // N_active 1: 0.02
        assert!((h.q.n_hat() - 0.02).abs() < 1e-12);
        h.arrive(0, 1, 500); // 1: 0.98·0.02 + 0.02 = 0.0396
        assert!((h.q.n_hat() - 0.0396).abs() < 1e-12);
        h.arrive(0, 2, 500); // 2: 0.98·0.0396 + 0.04 = 0.078808
        assert!((h.q.n_hat() - 0.078808).abs() < 1e-12);
        assert_eq!(h.depart_flow(0), 1); // flow 1 keeps one packet
        h.arrive(0, 3, 500); // 3: 0.98·0.078808 + 0.06 = 0.13723184
        assert!((h.q.n_hat() - 0.13723184).abs() < 1e-12);
        // Ten flows with one packet each; the head's flow sends again as it leaves: N_active = 10.
        for _ in 0..3 {
            h.depart_flow(0);
        }
        for flow in 0..10 {
            h.arrive(0, flow, 500);
        }
        for _ in 0..2000 {
            let flow = h.depart_flow(0);
            assert_eq!(h.arrive(0, flow, 500), Verdict::Enqueued);
        }
        // 0.98^2000 ≈ 3e-18 of the start is left.
        assert!((h.q.n_hat() - 10.0).abs() < 1e-9, "{}", h.q.n_hat());
        assert_eq!((h.q.flows.active(), h.q.flows.peak()), (10, 10));
        for _ in 0..10 {
            h.depart_flow(0);
        }
        assert_eq!(h.q.flows.active(), 0);
    }

    #[test]
    fn defaults_derive_from_n_hat_by_eq_12_and_15_and_explicit_values_override() {
        let config = BredConfig::default();
        // B = 150, N̂ = 10: l2 = 150/20 = 7.5, l1 = 0.9·7.5 = 6.75, W_m = 1.3·7.5 = 9.75,
        // p2 = √10/(√10 + 10) = 3.16228/13.16228 = 0.240253, p1 = 0.0240253.
        let t = config.params().thresholds(10.0);
        assert_eq!((t.l2, t.l1, t.w_m), (7.5, 6.75, 9.75));
        assert!(
            (t.p2 - 0.240253).abs() < 1e-6 && (t.p1 - 0.0240253).abs() < 1e-7,
            "{t:?}"
        );
        // [N̂] is the integer part (at least one flow); p2 uses N̂ itself.
        assert_eq!(config.params().thresholds(10.9).l2, 7.5);
        assert!(config.params().thresholds(10.9).p2 > t.p2);
        assert_eq!(config.params().thresholds(0.3).l2, 75.0);
        let explicit = BredConfig {
            l2: Some(5.0),
            p2: Some(0.3),
            ..Default::default()
        }
        .params()
        .thresholds(10.0);
        assert_eq!((explicit.l1, explicit.w_m), (4.5, 6.5));
        assert!((explicit.p1 - 0.03).abs() < 1e-12);
        let p1_only = BredConfig {
            p1: Some(0.05),
            ..Default::default()
        }
        .params()
        .thresholds(10.0);
        assert_eq!((p1_only.p1, p1_only.l2), (0.05, 7.5));
    }

    /// A 4-packet buffer whose per-flow bands never act, so every drop is an overflow.
    fn four_packet_buffer() -> BredConfig {
        BredConfig {
            limit: 4,
            l1: Some(10.0),
            l2: Some(10.0),
            w_m: Some(20.0),
            ..Default::default()
        }
    }

    #[test]
    fn the_buffer_limit_is_an_overflow_drop() {
        let mut h = bred(four_packet_buffer(), 1);
        for flow in 0..4 {
            assert_eq!(h.arrive(0, flow, 500), Verdict::Enqueued);
        }
        assert_eq!(h.arrive(0, 9, 500), Verdict::Dropped(Overflow));
        assert_eq!(h.q.flows.active(), 4);
    }

    #[test]
    fn a_new_flows_dropped_first_packet_counts_once_in_n_hat_and_leaves_no_state() {
        // §3 step 1 ("if qlen == 0, N_active++") counts the arriving flow in its own N̂ sample;
        // when that packet is dropped (here by overflow) the flow must not stay counted.
        let mut h = bred(four_packet_buffer(), 1);
        let mut expected = 0.0;
        // N_active seen by each arrival: flows 0..3 arrive (1, 2, 3, 4), new flow 9 is dropped (5),
        // then buffered flow 0 (4: a leaked flow 9 would give 5) and new flow 8 (5, not 6).
        for (flow, n_active, verdict) in [
            (0, 1.0, Verdict::Enqueued),
            (1, 2.0, Verdict::Enqueued),
            (2, 3.0, Verdict::Enqueued),
            (3, 4.0, Verdict::Enqueued),
            (9, 5.0, Verdict::Dropped(Overflow)),
            (0, 4.0, Verdict::Dropped(Overflow)),
            (8, 5.0, Verdict::Dropped(Overflow)),
        ] {
            assert_eq!(h.arrive(0, flow, 500), verdict, "flow {flow}");
            expected = 0.98 * expected + 0.02 * n_active;
            assert!(
                (h.q.n_hat() - expected).abs() < 1e-12,
                "flow {flow}: {} vs {expected}",
                h.q.n_hat()
            );
        }
        assert_eq!((h.q.flows.active(), h.q.flows.peak()), (4, 4));
    }

    #[test]
    fn invalid_parameters_name_the_field() {
        let err = |cfg: BredConfig| cfg.validate("q").unwrap_err().to_string();
        assert_eq!(
            err(BredConfig {
                alpha: 1.0,
                ..Default::default()
            }),
            "q.alpha: must be > 1 (eq. 12), got 1"
        );
        assert_eq!(
            err(BredConfig {
                beta: 0.0,
                ..Default::default()
            }),
            "q.beta: must be > 0, got 0"
        );
        assert_eq!(
            err(BredConfig {
                beta: 1.5,
                ..Default::default()
            }),
            "q.beta: must be in [0, 1], got 1.5"
        );
        assert_eq!(
            err(BredConfig {
                w_n: 0.0,
                ..Default::default()
            }),
            "q.w_n: must be > 0, got 0"
        );
        assert_eq!(
            err(BredConfig {
                p2: Some(2.0),
                ..Default::default()
            }),
            "q.p2: must be in [0, 1], got 2"
        );
        assert_eq!(
            err(BredConfig {
                l1: Some(8.0),
                l2: Some(6.0),
                ..Default::default()
            }),
            "q.l1: must be <= l2 (6), got 8"
        );
        assert_eq!(
            err(BredConfig {
                l2: Some(6.0),
                w_m: Some(6.0),
                ..Default::default()
            }),
            "q.w_m: must be > l2 (6), got 6"
        );
        assert_eq!(
            err(BredConfig {
                l1: Some(0.0),
                ..Default::default()
            }),
            "q.l1: must be > 0, got 0"
        );
        assert_eq!(
            err(BredConfig {
                limit: 0,
                ..Default::default()
            }),
            "q.limit: must be > 0, got 0"
        );
    }
}
