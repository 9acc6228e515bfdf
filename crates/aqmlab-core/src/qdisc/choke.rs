//! CHOKe, "CHOose and Keep for responsive flows, CHOose and Kill for unresponsive flows"
//! (R. Pan, B. Prabhakar, K. Psounis, "CHOKe: a stateless active queue management scheme for
//! approximating fair bandwidth allocation", IEEE INFOCOM 2000), as Linux
//! `net/sched/sch_choke.c` implements it: a RED queue (`red.rs`, reused whole) with one more
//! step on each arrival.
//!
//! RED's average is updated; when it is at or above `min_th`, packets are drawn at random from
//! the queue (Linux: one, at a uniformly random position) and compared with the arrival by flow.
//! If a drawn packet is of the arrival's flow, both are dropped (`choke_match`). Otherwise RED
//! decides as it always does: an early drop (or ECN mark) with RED's probability between the
//! thresholds, a forced drop above `max_th`, an overflow at `limit`. A match leaves RED's
//! `count` as it was (Linux). CHOKe keeps no per-flow state: a flow with many packets queued is
//! often drawn, so the harder it pushes beyond its share, the more it loses. Tang, Wang and Low
//! ("Understanding CHOKe: throughput and spatial characteristics", IEEE/ACM ToN 12(4), 2004)
//! prove that with many TCPs an unresponsive flow's share peaks at 1/(e + 1) ≈ 0.269 when it
//! sends slightly faster than the link and falls to zero as its rate grows.
//!
//! `candidates` = m > 1 is the paper's variant with several drop candidates, read as: m distinct
//! packets are drawn (without replacement); if any is of the arrival's flow, the arrival and
//! every drawn packet of its flow are dropped. Thresholds and the average count packets
//! (tc-choke(8): "RED uses bytes whereas choke counts packets").

use super::red::{Red, RedConfig, Region};
use super::{DropReason, Gauges, LinkInfo, QdiscConfig, QdiscCtx, QueueDisc, Verdict};
use crate::error::ScenarioError;
use crate::packet::PacketId;
use crate::rng::Rng;
use crate::units::Bytes;
use crate::validate::require_positive;
use rand::seq::index;
use rand::SeedableRng;
use serde::Deserialize;

/// Which CHOKe runs: this file's, the paper's step over F–J's RED (`red.rs`); `profile = "linux"`
/// is Linux's sch_choke, with tc's words ([`super::choke_linux`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChokeProfile {
    #[default]
    Paper,
}

/// `type = "choke"`; every field optional. Defaults: iproute2's tc (`tc/q_choke.c`), which derives
/// the thresholds from `limit` after Floyd's REDparameters.txt.
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ChokeConfig {
    /// `"paper"`, the default (`"linux"` reads [`super::choke_linux::ChokeLinuxConfig`] instead).
    pub profile: ChokeProfile,
    /// Buffer in packets: 1000. tc requires a `limit`; 1000 is Linux's default `txqueuelen`, as
    /// drop-tail's default here.
    pub limit: u64,
    /// Default ⌊max_th / 3⌋ (tc: `qth_min = qth_max / 3`): 83 packets with the default limit.
    pub min_th: Option<f64>,
    /// Default ⌊limit / 4⌋ (tc: `qth_max = limit / 4`): 250 packets.
    pub max_th: Option<f64>,
    /// RED's max_p: 0.02 (tc `probability 0.02`).
    pub max_p: f64,
    /// RED's EWMA weight: 0.002 (F–J, RED's default here). tc instead derives it from `burst`
    /// (2⁻⁶ at limit 1000).
    pub w_q: f64,
    /// Packet size that idle time is counted in: 1000 B (tc `avpkt 1000`).
    pub mean_pktsize: Bytes,
    /// Mark ECN-capable arrivals instead of RED's early drop (tc `ecn`): off. A match is always a drop.
    pub ecn: bool,
    /// Packets drawn per arrival, the paper's m: 1 (the basic CHOKe; Linux).
    pub candidates: u32,
}

impl Default for ChokeConfig {
    fn default() -> Self {
        ChokeConfig {
            profile: ChokeProfile::Paper,
            limit: 1000,
            min_th: None,
            max_th: None,
            max_p: 0.02,
            w_q: 0.002,
            mean_pktsize: Bytes(1000),
            ecn: false,
            candidates: 1,
        }
    }
}

impl ChokeConfig {
    /// The RED queue underneath, with tc's threshold defaults resolved.
    fn red(&self) -> RedConfig {
        let max_th = self.max_th.unwrap_or((self.limit / 4) as f64);
        RedConfig {
            limit: Some(self.limit),
            min_th: Some(self.min_th.unwrap_or((max_th / 3.0).floor())),
            max_th: Some(max_th),
            max_p: self.max_p,
            w_q: self.w_q,
            mean_pktsize: self.mean_pktsize,
            ecn: self.ecn,
            ..RedConfig::default()
        }
    }
}

impl QdiscConfig for ChokeConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        // RED's own checks; its field names are CHOKe's.
        self.red().validate(path)?;
        require_positive(&format!("{path}.candidates"), self.candidates as f64)
    }

    fn build(&self, link: &LinkInfo, mut rng: Rng) -> Box<dyn QueueDisc> {
        let red = Red::new(&self.red(), link, Rng::from_rng(&mut rng).expect("PCG seeds from PCG"));
        Box::new(Choke {
            red,
            candidates: self.candidates as usize,
            rng,
            stats: Stats::default(),
        })
    }
}

/// What CHOKe counts beyond the engine's drop table (sch_choke.c's `matched`).
#[derive(Default)]
struct Stats {
    /// Arrivals dropped by a match; the `choke_match` drops are these and the drawn packets.
    matches: u64,
}

pub struct Choke {
    /// The FIFO, RED's average and RED's decision.
    red: Red,
    /// Packets drawn per arrival (m).
    candidates: usize,
    /// The draws' stream (RED has its own).
    rng: Rng,
    stats: Stats,
}

impl Choke {
    /// Draws the candidates and drops those of the arrival's flow; whether there were any.
    fn drop_matches(&mut self, id: PacketId, ctx: &mut QdiscCtx) -> bool {
        let queue = self.red.queue_mut();
        if queue.is_empty() {
            return false;
        }
        let arrival = &ctx.packets[id];
        let same_flow = |i: usize| {
            let drawn = &ctx.packets[queue.get(i).expect("drawn within the queue")];
            (drawn.flow, drawn.kind) == (arrival.flow, arrival.kind)
        };
        let drawn = self.candidates.min(queue.len());
        let mut matched: Vec<usize> = index::sample(&mut self.rng, queue.len(), drawn)
            .into_iter()
            .filter(|&i| same_flow(i))
            .collect();
        // From the back, so that the positions still to remove stay where they were.
        matched.sort_unstable_by(|a, b| b.cmp(a));
        for &i in &matched {
            let victim = queue.remove(i).expect("drawn within the queue");
            ctx.drop_packet(victim, DropReason::ChokeMatch);
        }
        !matched.is_empty()
    }
}

impl QueueDisc for Choke {
    fn enqueue(&mut self, id: PacketId, ctx: &mut QdiscCtx) -> Verdict {
        let avg = self.red.average_on_arrival(ctx);
        // Is the queue small? Then no draw (sch_choke.c); otherwise compare with random packets.
        if self.red.curve().region(avg) != Region::Below && self.drop_matches(id, ctx) {
            self.stats.matches += 1;
            return Verdict::Dropped(DropReason::ChokeMatch);
        }
        self.red.admit(id, avg, ctx)
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        self.red.dequeue(ctx)
    }

    fn gauges(&self) -> Gauges {
        self.red.gauges()
    }

    fn set_link_rate(&mut self, rate_bps: f64) {
        self.red.set_link_rate(rate_bps);
    }

    fn can_mark(&self) -> bool {
        self.red.can_mark()
    }

    fn counters(&self) -> Vec<(&'static str, f64)> {
        vec![("matches", self.stats.matches as f64)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testing::{link, QdiscHarness};
    use crate::rng::stream;

    const LINK: LinkInfo = link(8e6);

    /// A CHOKe queue whose average is the queue the arrival finds (w_q = 1), drawing from `min_th`
    /// = 10 packets on, with RED's early drop all but off (p_b ≤ 10⁻⁹) below max_th = 200.
    fn choke(candidates: u32, seed: u64) -> QdiscHarness<dyn QueueDisc> {
        let config = ChokeConfig {
            limit: 300,
            min_th: Some(10.0),
            max_th: Some(200.0),
            max_p: 1e-9,
            w_q: 1.0,
            candidates,
            ..Default::default()
        };
        config.validate("q").unwrap();
        QdiscHarness::new(config.build(&LINK, stream(seed, "choke-test")))
    }

    /// Flows in the queue, head first.
    fn queued_flows(h: &mut QdiscHarness<dyn QueueDisc>) -> Vec<u32> {
        std::iter::from_fn(|| h.depart(0).map(|p| p.flow)).collect()
    }

    #[test]
    fn a_drawn_packet_of_the_arrivals_flow_is_dropped_with_it() {
        // Ten packets below min_th are never compared: flow 7 at positions 0, 3, 6, 9.
        let flows = [7, 1, 2, 7, 3, 4, 7, 5, 6, 7];
        let mut trials_matched = 0;
        for seed in 0..200 {
            let mut h = choke(1, seed);
            for &flow in &flows {
                assert_eq!(h.arrive(0, flow, 1000), Verdict::Enqueued);
            }
            // The 11th arrival finds avg = 10 = min_th and draws one packet.
            match h.arrive(0, 7, 1000) {
                Verdict::Dropped(DropReason::ChokeMatch) => {
                    trials_matched += 1;
                    // Exactly one queued packet went with it, of flow 7; the others stay, in order.
                    assert_eq!(h.dropped.len(), 1);
                    assert_eq!((h.dropped[0].0.flow, h.dropped[0].1), (7, DropReason::ChokeMatch));
                    let rest = queued_flows(&mut h);
                    assert_eq!(rest.iter().filter(|&&f| f == 7).count(), 3);
                    assert_eq!(
                        rest.iter().filter(|&&f| f != 7).collect::<Vec<_>>(),
                        [&1, &2, &3, &4, &5, &6]
                    );
                }
                verdict => {
                    assert_eq!(verdict, Verdict::Enqueued);
                    assert!(h.dropped.is_empty());
                    assert_eq!(h.backlog.packets, 11);
                }
            }
        }
        // P(match) = 4/10: 80 ± 6.9 of 200 trials; 4σ.
        assert!(
            (trials_matched as f64 - 80.0).abs() < 4.0 * 6.93,
            "{trials_matched} of 200"
        );
    }

    #[test]
    fn several_candidates_match_as_draws_without_replacement() {
        // k = 4 packets of flow 7 among n = 10; m = 3 drawn: P(no match) = C(6,3)/C(10,3) = 1/6, and
        // each drawn packet is of flow 7 with probability 4/10, so E[packets dropped with it] = 1.2.
        let flows = [7, 1, 2, 7, 3, 4, 7, 5, 6, 7];
        let trials = 3000;
        let (mut matched, mut victims) = (0u32, 0usize);
        for seed in 0..trials {
            let mut h = choke(3, seed);
            for &flow in &flows {
                h.arrive(0, flow, 1000);
            }
            if h.arrive(0, 7, 1000) == Verdict::Dropped(DropReason::ChokeMatch) {
                matched += 1;
                victims += h.dropped.len();
                assert!(h.dropped.iter().all(|(p, _)| p.flow == 7));
                assert_eq!(h.q.counters().last(), Some(&("matches", 1.0)));
            }
        }
        let p = 5.0 / 6.0;
        let sigma = (trials as f64 * p * (1.0 - p)).sqrt();
        assert!(
            (matched as f64 - trials as f64 * p).abs() < 4.0 * sigma,
            "{matched} of {trials}"
        );
        // Victims per trial: mean 1.2, variance of the hypergeometric count 3·0.4·0.6·7/9 = 0.56.
        let sigma = (trials as f64 * 0.56).sqrt();
        assert!((victims as f64 - 1.2 * trials as f64).abs() < 4.0 * sigma, "{victims}");
    }

    #[test]
    fn no_match_leaves_the_arrival_to_red() {
        let mut h = choke(1, 1);
        for flow in 0..10 {
            h.arrive(0, flow, 1000);
        }
        // A new flow never matches; RED's p_b is 10⁻⁹ at avg 10, so the arrival is queued.
        assert_eq!(h.arrive(0, 99, 1000), Verdict::Enqueued);
        // Above max_th RED's forced drop applies to a flow that is not drawn.
        let config = ChokeConfig {
            limit: 50,
            min_th: Some(1.0),
            max_th: Some(5.0),
            max_p: 1e-9,
            w_q: 1.0,
            ..Default::default()
        };
        let mut h = QdiscHarness::new(config.build(&LINK, stream(1, "choke-test")));
        for flow in 0..5 {
            h.arrive(0, flow, 1000);
        }
        assert_eq!(h.arrive(0, 99, 1000), Verdict::Dropped(DropReason::Forced));
        assert_eq!(h.drops(DropReason::ChokeMatch), 0);
    }

    #[test]
    fn defaults_follow_tc_and_errors_name_the_field() {
        let red = ChokeConfig::default().red();
        assert_eq!(
            (red.min_th, red.max_th, red.limit),
            (Some(83.0), Some(250.0), Some(1000))
        );
        let err = ChokeConfig {
            candidates: 0,
            ..Default::default()
        }
        .validate("q")
        .unwrap_err()
        .to_string();
        assert!(err.starts_with("q.candidates: must be > 0"), "{err}");
        let err = ChokeConfig {
            min_th: Some(300.0),
            ..Default::default()
        }
        .validate("q")
        .unwrap_err()
        .to_string();
        assert_eq!(err, "q.min_th: must be < max_th (250), got 300");
    }
}
