//! CHOKe as Linux runs it (`type = "choke", profile = "linux"`): `net/sched/sch_choke.c` over
//! the RED arithmetic of `include/net/red.h` ([`super::red_linux`]), configured as `tc qdisc add ...
//! choke` configures it (iproute2 `tc/q_choke.c`). Against `choke.rs` (the paper's CHOKe over
//! F–J's RED):
//! - the average, thresholds and limit count packets; the weight is 2^−Wlog from `burst` as tc
//!   computes it (with `min·avpkt` bytes), the drop spacing is red.h's;
//! - a packet is drawn to compare with the arrival only when the average is strictly above `min`
//!   (`qavg <= qth_min` is "queue small"), where `choke.rs` draws at or above;
//! - the forced drop starts strictly above `max` (RED's at or above);
//! - a match drops both packets and leaves RED's count as it was;
//! - the queue is a ring whose dropped packets leave holes: the draw picks a uniformly random slot
//!   of the ring, holes included, tries three times to find a packet and otherwise takes the head
//!   (choke_peek_random); holes leave the ring only at its head.

use super::red_linux::{RedAction, RedParms, RedVars, TcRed};
use super::{DropReason, Gauges, LinkInfo, QdiscConfig, QdiscCtx, QueueDisc, Verdict};
use crate::error::ScenarioError;
use crate::packet::{Ecn, PacketId};
use crate::rng::Rng;
use crate::units::{Bytes, Rate};
use rand::Rng as _;
use serde::Deserialize;
use std::collections::VecDeque;

/// sch_choke's `CHOKE_MAX_QUEUE`.
const MAX_QUEUE: u64 = 128 * 1024 - 1;

/// `type = "choke", profile = "linux"`: tc choke's words. `limit` and `bandwidth` are required,
/// as tc requires them.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ChokeLinuxConfig {
    /// Packets (tc `limit PACKETS`).
    pub limit: Option<u64>,
    /// Packets; default max / 3 (tc).
    pub min: Option<u64>,
    /// Packets; default limit / 4 (tc).
    pub max: Option<u64>,
    /// Packets a burst may hold: sets Wlog. Default (2·min + max) / 3 (tc).
    pub burst: Option<u64>,
    /// Mean packet size for the weight and the idle table: 1000 B (tc).
    pub avpkt: Option<Bytes>,
    /// max_P: 0.02 (tc).
    pub probability: Option<f64>,
    /// The link's rate, for the idle table (tc `bandwidth`).
    pub bandwidth: Option<Rate>,
    /// Mark ECN-capable arrivals instead of RED's drops; a match is always a drop (tc `ecn`).
    pub ecn: bool,
    /// With `ecn`, drop rather than mark above `max` (tc `harddrop`).
    pub harddrop: bool,
}

impl ChokeLinuxConfig {
    /// tc's command line resolved with its defaults.
    fn tc(&self) -> TcRed {
        let limit = self.limit.unwrap_or(0);
        let avpkt = self.avpkt.map_or(1000, |b| b.0);
        let max = self.max.unwrap_or(limit / 4);
        let min = self.min.unwrap_or(max / 3);
        TcRed {
            min,
            max,
            min_bytes: min * avpkt,
            avpkt,
            burst: self.burst.unwrap_or((2 * min + max) / 3),
            probability: self.probability.unwrap_or(0.02),
            bandwidth_bps: self.bandwidth.map_or(0.0, |r| r.0),
        }
    }
}

impl QdiscConfig for ChokeLinuxConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        let field = |name: &str| format!("{path}.{name}");
        let required = |name: &str| {
            ScenarioError::new(
                field(name),
                "required by tc choke (limit PACKETS, bandwidth RATE), e.g. limit = 64, bandwidth = \"10mbit\"",
            )
        };
        let limit = self.limit.ok_or_else(|| required("limit"))?;
        if !(1..=MAX_QUEUE).contains(&limit) {
            return Err(ScenarioError::new(
                field("limit"),
                format!("must be in 1..={MAX_QUEUE} packets (sch_choke CHOKE_MAX_QUEUE), got {limit}"),
            ));
        }
        if !self.bandwidth.ok_or_else(|| required("bandwidth"))?.0.is_normal() {
            return Err(ScenarioError::new(field("bandwidth"), "must be > 0"));
        }
        if self.avpkt.is_some_and(|b| b.0 == 0) {
            return Err(ScenarioError::new(field("avpkt"), "must be > 0, got 0"));
        }
        if let Some(p) = self.probability {
            if !(p > 0.0 && p < 1.0) {
                return Err(ScenarioError::new(
                    field("probability"),
                    format!("must be in (0, 1) (tc passes it as a 32-bit fraction), got {p}"),
                ));
            }
        }
        let tc = self.tc();
        // tc q_choke.c's checks.
        if tc.max > limit {
            return Err(ScenarioError::new(
                field("max"),
                format!("must be <= limit ({limit}), got {}", tc.max),
            ));
        }
        if tc.min >= tc.max {
            return Err(ScenarioError::new(
                field("min"),
                format!("must be < max ({}), got {}", tc.max, tc.min),
            ));
        }
        tc.parms()
            .map(|_| ())
            .map_err(|(word, message)| ScenarioError::new(field(word), message))
    }

    fn build(&self, _link: &LinkInfo, rng: Rng) -> Box<dyn QueueDisc> {
        Box::new(ChokeLinux::new(self, rng))
    }
}

/// What sch_choke counts beyond the engine's drop table.
#[derive(Default)]
struct Stats {
    /// Arrivals dropped by a match (`matched`).
    matches: u64,
}

pub struct ChokeLinux {
    parms: RedParms,
    limit: u64,
    ecn: bool,
    harddrop: bool,
    /// The ring from head to tail; `None` is a hole a match left (the link's backlog is
    /// `sch->q.qlen`, the packets without the holes).
    ring: VecDeque<Option<PacketId>>,
    vars: RedVars,
    rng: Rng,
    stats: Stats,
}

impl ChokeLinux {
    pub fn new(cfg: &ChokeLinuxConfig, rng: Rng) -> Self {
        ChokeLinux {
            parms: cfg.tc().parms().expect("validated"),
            limit: cfg.limit.expect("validated"),
            ecn: cfg.ecn,
            harddrop: cfg.harddrop,
            ring: VecDeque::new(),
            vars: RedVars::default(),
            rng,
            stats: Stats::default(),
        }
    }

    /// choke_zap_head_holes: the head moves past holes.
    fn zap_head_holes(&mut self) {
        while self.ring.front() == Some(&None) {
            self.ring.pop_front();
        }
    }

    /// choke_peek_random: a random slot of the ring, holes included; three tries, then the head.
    fn peek_random(&mut self) -> usize {
        for _ in 0..3 {
            // prandom_u32_max(n): the top of a 32-bit draw times n.
            let index = ((u64::from(self.rng.gen::<u32>()) * self.ring.len() as u64) >> 32) as usize;
            if self.ring[index].is_some() {
                return index;
            }
        }
        0
    }

    /// choke_match_random: the drawn packet's slot, if it is of the arrival's flow.
    fn match_random(&mut self, id: PacketId, ctx: &QdiscCtx) -> Option<usize> {
        if self.ring.is_empty() {
            return None;
        }
        let index = self.peek_random();
        let drawn = &ctx.packets[self.ring[index].expect("peek_random finds a packet")];
        let arrival = &ctx.packets[id];
        ((drawn.flow, drawn.kind) == (arrival.flow, arrival.kind)).then_some(index)
    }

    /// choke_drop_by_idx.
    fn drop_by_index(&mut self, index: usize, ctx: &mut QdiscCtx) {
        let victim = self.ring[index].take().expect("a packet at the drawn slot");
        if index == 0 {
            self.zap_head_holes();
        }
        ctx.drop_packet(victim, DropReason::ChokeMatch);
    }

    /// Marks the arrival CE if it may be; whether it was.
    fn mark(&mut self, id: PacketId, ctx: &mut QdiscCtx) -> bool {
        let packet = &mut ctx.packets[id];
        if !self.ecn || packet.ecn == Ecn::NotEct {
            return false;
        }
        ctx.mark(id);
        true
    }
}

impl QueueDisc for ChokeLinux {
    /// choke_enqueue.
    fn enqueue(&mut self, id: PacketId, ctx: &mut QdiscCtx) -> Verdict {
        let qlen = ctx.backlog().packets as u64;
        let qavg = self.parms.calc_qavg(&mut self.vars, qlen, ctx.now);
        if self.parms.at_or_below_min(qavg) {
            // Is queue small?
            self.vars.reset_count();
        } else {
            // Draw a packet at random from the queue and compare flows.
            if let Some(index) = self.match_random(id, ctx) {
                self.stats.matches += 1;
                self.drop_by_index(index, ctx);
                return Verdict::Dropped(DropReason::ChokeMatch);
            }
            if self.parms.above_max(qavg) {
                self.vars.reset_count();
                if self.harddrop || !self.mark(id, ctx) {
                    return Verdict::Dropped(DropReason::Forced);
                }
            } else if self.parms.between(&mut self.vars, qavg, &mut self.rng) == RedAction::ProbMark
                && !self.mark(id, ctx)
            {
                return Verdict::Dropped(DropReason::Early);
            }
        }
        // Admit the new packet.
        if ctx.backlog().packets as u64 >= self.limit {
            return Verdict::Dropped(DropReason::Overflow);
        }
        self.ring.push_back(Some(id));
        Verdict::Enqueued
    }

    /// choke_dequeue: an empty ring starts an idle period.
    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        let Some(head) = self.ring.pop_front() else {
            self.vars.start_idle(ctx.now);
            return None;
        };
        let id = head.expect("the head is never a hole");
        self.zap_head_holes();
        Some(id)
    }

    fn gauges(&self) -> Gauges {
        Gauges {
            average: Some(self.parms.average(&self.vars)),
            ..Gauges::default()
        }
    }

    fn can_mark(&self) -> bool {
        true
    }

    fn counters(&self) -> Vec<(&'static str, f64)> {
        vec![("matches", self.stats.matches as f64)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testing::QdiscHarness;
    use crate::qdisc::QdiscEvents;
    use crate::rng::stream;

    /// The demo's CHOKe as a Linux user types it (`choke limit 64 min 16 max 32 avpkt 1000 burst 100
    /// probability 0.1 bandwidth 10mbit`).
    fn demo() -> ChokeLinuxConfig {
        ChokeLinuxConfig {
            limit: Some(64),
            min: Some(16),
            max: Some(32),
            avpkt: Some(Bytes(1000)),
            burst: Some(100),
            probability: Some(0.1),
            bandwidth: Some(Rate(10e6)),
            ..Default::default()
        }
    }

    fn choke(cfg: &ChokeLinuxConfig) -> QdiscHarness<ChokeLinux> {
        cfg.validate("q").unwrap();
        QdiscHarness::new(Box::new(ChokeLinux::new(cfg, stream(1, "choke-linux"))))
    }

    #[test]
    fn the_weight_is_tcs_from_min_times_avpkt() {
        // tc_red_eval_ewma(16·1000, 100, 1000): as RED's demo, Wlog 9.
        assert_eq!(demo().tc().parms().unwrap().wlog(), 9);
        // tc's defaults: max = 64/4 = 16, min = 16/3 = 5, burst = (10 + 16)/3 = 8.
        let tc = ChokeLinuxConfig {
            min: None,
            max: None,
            burst: None,
            ..demo()
        }
        .tc();
        assert_eq!((tc.min, tc.max, tc.burst), (5, 16, 8));
    }

    /// Puts `n` packets of `flow` in the ring.
    fn fill(h: &mut QdiscHarness<ChokeLinux>, flow: u32, n: u64) {
        for _ in 0..n {
            let id = h.arena.alloc(crate::packet::Packet {
                flow,
                size: 1000,
                ..Default::default()
            });
            h.q.ring.push_back(Some(id));
            h.backlog.add(1000);
        }
    }

    #[test]
    fn nothing_is_drawn_while_the_average_is_at_min_and_one_above_it_is() {
        let mut h = choke(&demo());
        // 16 packets queued, all of flow 1: an update at backlog 16 leaves any average in
        // [16, 17) packets where it is (q + 16 − ⌊q / 2^9⌋ = q), so the arrival finds the average set.
        fill(&mut h, 1, 16);
        let qth_min = 16u64 << 9;
        // At qavg = qth_min exactly (Linux's "queue small"), a flow-1 arrival is not compared.
        h.q.vars = RedVars::with_qavg(qth_min);
        assert_eq!(h.arrive(0, 1, 1000), Verdict::Enqueued);
        assert_eq!(h.q.stats.matches, 0);
        // One unit above (2^-9 packet): the draw, which can only find flow 1, matches.
        h.q.ring.pop_back();
        h.backlog.remove(1000);
        h.q.vars = RedVars::with_qavg(qth_min + 1);
        assert_eq!(h.arrive(0, 1, 1000), Verdict::Dropped(DropReason::ChokeMatch));
        assert_eq!((h.drops(DropReason::ChokeMatch), h.q.stats.matches), (2, 1));
    }

    #[test]
    fn a_match_leaves_a_hole_that_the_draw_can_hit() {
        let mut h = choke(&demo());
        for flow in [1, 2, 3] {
            fill(&mut h, flow, 1);
        }
        let mut events = QdiscEvents::default();
        let mut ctx = QdiscCtx::new(0, &mut h.arena, &mut events, &mut h.backlog);
        // The middle packet dropped: a hole, counted in the ring's length but not in qlen.
        h.q.drop_by_index(1, &mut ctx);
        assert_eq!((h.q.ring.len(), ctx.backlog().packets), (3, 2));
        // The head dropped: the head moves past the hole to the last packet.
        h.q.drop_by_index(0, &mut ctx);
        assert_eq!((h.q.ring.len(), ctx.backlog().packets), (1, 1));
        // Draws over a ring of [packet, hole, hole] find the packet or fall back to the head: always slot 0.
        h.q.ring.push_back(None);
        h.q.ring.push_back(None);
        assert!((0..100).all(|_| h.q.peek_random() == 0));
    }

    #[test]
    fn forced_drops_start_above_max_and_the_limit_counts_packets() {
        let mut h = choke(&ChokeLinuxConfig {
            limit: Some(40),
            ..demo()
        });
        // 32 packets of flow 1 queued hold the average at 32 (scaled, as above). At max exactly,
        // RED's region: an arrival of another flow, never matched, is the first there and passes.
        fill(&mut h, 1, 32);
        h.q.vars = RedVars::with_qavg(32 << 9);
        assert_eq!(h.arrive(0, 2, 1000), Verdict::Enqueued);
        // One unit above max: a forced drop (unless the draw matches: flow 3 has nothing queued).
        h.q.ring.pop_back();
        h.backlog.remove(1000);
        h.q.vars = RedVars::with_qavg((32 << 9) + 1);
        assert_eq!(h.arrive(0, 3, 1000), Verdict::Dropped(DropReason::Forced));
        // The limit: 40 packets, whatever their size.
        let mut h = choke(&ChokeLinuxConfig {
            limit: Some(40),
            burst: Some(1000),
            ..demo()
        });
        for _ in 0..40 {
            assert_eq!(h.arrive(0, 2, 64), Verdict::Enqueued);
        }
        assert_eq!(h.arrive(0, 3, 64), Verdict::Dropped(DropReason::Overflow));
    }

    #[test]
    fn errors_name_the_tc_word() {
        let err = |cfg: ChokeLinuxConfig| cfg.validate("q").unwrap_err().to_string();
        assert!(err(ChokeLinuxConfig { limit: None, ..demo() }).starts_with("q.limit: required by tc choke"));
        assert!(err(ChokeLinuxConfig {
            bandwidth: None,
            ..demo()
        })
        .starts_with("q.bandwidth: required"));
        assert_eq!(
            err(ChokeLinuxConfig {
                max: Some(100),
                ..demo()
            }),
            "q.max: must be <= limit (64), got 100"
        );
        assert_eq!(
            err(ChokeLinuxConfig {
                min: Some(32),
                ..demo()
            }),
            "q.min: must be < max (32), got 32"
        );
    }
}
