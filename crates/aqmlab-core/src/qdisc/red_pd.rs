//! RED-PD, RED with Preferential Dropping (R. Mahajan, S. Floyd, "Controlling
//! High-Bandwidth Flows at the Congested Router", ACIRI, Nov. 2000; § and
//! equation numbers below are the paper's), on top of [`super::red`].
//!
//! A pre-filter in front of a RED queue drops the packets of *monitored* flows,
//! each with its own probability; other flows go straight to RED (Fig. 10).
//! - Identification (§4.2): time is cut into drop-list intervals of
//!   `(K/M)·R/√(1.5p)` (eq. 3: K/M of the congestion epoch of a TCP with the
//!   target RTT R at the ambient drop rate p). Each interval's list holds the
//!   flows RED dropped (or marked) packets of, with their counts; pre-filter
//!   drops are not listed (§5.1). A flow in at least K of the last M lists is
//!   identified. The single-list scheme (§4.3) instead identifies a flow with
//!   at least K drops in the last K·CL seconds (the same M lists, summed).
//! - Preferential dropping (§5.1): an identified flow's probability rises by
//!   eq. 5's quantum `(drop_flow / avg_drop_count)·p`, or doubles instead when
//!   the quantum exceeds the flow's existing drop rate (pre-filter + output
//!   queue), at most once per M − 1 intervals (§5.2). A monitored flow in none
//!   of the last M lists has its probability cut to `max(P/β, P − p_d)` (§5.1,
//!   §5.2: whichever reduces less) at most once per `l` intervals, and is
//!   unmonitored once it falls below `P_minThresh`. A responsive flow's pre-filter
//!   acts only while RED's average is at least min_th and more than one packet is
//!   queued (§1.2).
//! - Unresponsive flows (§6.2): each time a monitored flow's probability is
//!   raised, its arrival rate and drop rate (pre-filter + RED) since the last
//!   raise are recorded. For each pair of records whose drop rates differ by a
//!   factor 1/x (0.1 < x < 1), the arrival rate should have fallen to about √x
//!   of its value (eq. 1); a flow with too many pairs that did not is declared
//!   unresponsive and gets larger increases and the slower release set.
//!
//! Two profiles ([`RedPdProfile`]) choose whose engine runs. Both share the above, the
//! pre-filter and the parameters; ns-2's RED-PD is ns-2.35 `queue/red-pd.cc` (the pre-filter)
//! and `tcl/ex/red-pd/monitoring.tcl`, `helper.tcl` (the identification engine), both by the
//! paper's authors, who ran the paper's simulations with them.
//!
//! `paper` (the default) is the paper's text. Where the text leaves a choice open it follows
//! ns-2's engine:
//! - the ambient p is RED's drops over RED's arrivals in the interval just
//!   closed, exponentially averaged over intervals with weight 0.5 (§4.2 gives
//!   no weight; `insertNCalDropRate` uses 0.5, as §7.3's Fig. 16 plots); eq. 3
//!   uses the average, eq. 5 the smaller of it and the last interval's rate
//!   (`do_detect`'s `usableDropRate`); with RED's `fixed_p`, eq. 3 uses `fixed_p`
//!   (`calculateB` under `P_testFRp_`) and the pre-filter acts whatever the queue
//!   (red-pd.cc in that mode);
//! - intervals are kept within [2R, 10R] (`Mintime_`, `Maxtime_`): eq. 3 is
//!   infinite at p = 0;
//! - a first identification starts monitoring at `min(quantum, 2p, 0.5)` (§4.4's
//!   "small initial dropping probability"); a probability that would pass 1
//!   keeps 1/(1 + f) of its complement instead (f = 1, or `unresponsive_increase`);
//! - unresponsive flows: increases × `unresponsive_increase` (2: `3·P` or
//!   `P + 2·quantum`), and their pre-filter acts whatever the queue (`noidle`
//!   off, as ns-2's `noidle_`) or while more than one packet is queued; the
//!   pairwise test and its verdict thresholds are `check-unresponsive`'s.
//!
//! Where the text says otherwise, `paper` keeps the text: the pre-filter drops independently
//! with probability P (§5.2's analysis takes P as the fraction dropped); the doubling test
//! compares the quantum with the flow's whole drop rate P + (1 − P)·p (§5.1: "the flow's
//! existing drop rate"); identification starts at once, and a round may act at any drop
//! rate; waits count exactly the last M − 1 or l intervals; a flow is unmonitored in the
//! decrease that takes P below P_minThresh (eq. 7 counts rounds so); an unresponsive flow's
//! decrease is max(P/β, P − p_d) (§5.2: "whichever reduces less"); a flow's history is
//! recorded over the whole period between raises (§6.2's "successive periods"), and an
//! unresponsive flow is declared responsive again when the same test over its latest records
//! clears it, besides being forgotten when it is unmonitored (§6.2).
//!
//! `ns2` runs ns-2.35's engine, for the reproductions of runs made with it (its validation
//! suite; the paper's figures). Beside the above it:
//! - starts the engine at `engine_start`, 10.1 s (`helper.tcl`'s `sched-detect-reward 10.1`):
//!   the first list covers [0, 10.1 s], so no flow is identified before the third close;
//! - acts in a round (monitors, raises) only when the last interval's drop rate exceeds
//!   0.1 %, and only on flows that had drops, pre-filter or RED, in that interval ("don't
//!   punish a flow if he had zero drops in the last interval");
//! - counts the lists, p and the history in bytes in either RED mode (its flow monitor's unit);
//! - waits, before any change, for the sum of the last n interval lengths it computed from
//!   p > 0 (`minLastChange`: neither the first interval nor those at p = 0 count), at least
//!   0.4 s; new flows wait too (from time 0: only an early `engine_start` makes that bite),
//!   and a released flow from its unmonitoring, which ns-2 does not forget;
//! - doubles when the quantum exceeds P alone (`oldDropP`); 0.5 doubled is 1;
//! - records one §6.2 record per change: the arrival rate and the drop fraction (pre-filter
//!   and RED) over the interval just closed, the first from the interval before monitoring; a
//!   responsive flow is tested before the interval's record is appended, and a declared flow
//!   stays unresponsive until unmonitored;
//! - releases 1 ms after the close (`do_reward`), its wait including the interval just
//!   scheduled; unmonitors a flow at or below P_minThresh there, before cutting (one round
//!   later than `paper`); cuts P − p_d above β·p_d, else P/β (unresponsive: P − 0.05 above
//!   0.075, where `paper` divides up to 0.15);
//! - spaces pre-filter drops as RED does (`uniformize` on by default);
//! - treats `red.fixed_p` as ns-2's FRp mode: a fixed loss (drop reason `loss`) in front of
//!   RED, whose own drops continue behind it (`paper`: `fixed_p` replaces RED's curve, as
//!   §7.1 describes the mode, "rather than as determined by RED dynamics");
//! - runs RED's `ns2` profile unless `red.profile` is set.
//!
//! Left out of `ns2`, each minor: the 50-flow cap on one list (`MaxDropList_`); ns-2's float
//! rounding where a wait equals the time elapsed exactly (ours are whole nanoseconds and
//! pass); `qlen > 1` counted in bytes in ns-2's byte-queue mode; the pre-filter's `count`
//! kept across unmonitoring; ECN marks, which ns-2 does not see and we list as drops.
//!
//! Byte mode (§6.4): RED in byte mode drops a packet with a probability in proportion
//! to its size, and eq. 5 counts the drops in bytes ("the counting of drops in Equation 5
//! should be done in terms of bytes"); the ambient p is then bytes dropped over bytes
//! arrived (as ns-2, which counts bytes in either mode). Because byte-mode RED already drops
//! a flow's packets in proportion to its byte rate, counting them in bytes weighs each by its
//! size once more: at the same byte rate a flow of 1000-byte packets gets twice the quantum
//! of one of 500-byte packets. `quantum_in_bytes = false` counts eq. 5's drops in packets.
//!
//! Beyond the paper, for its measurements and for ns-2's validation suite:
//! `identification = "count"` identifies and counts without monitoring (Fig. 9: the
//! pre-filter must not change the later rounds; ns-2 `testIdent_`), `"off"` leaves
//! monitoring to `schedule`, scripted monitor / unmonitor / unresponsive commands at given
//! times (ns-2 red-pd.cc's `monitor-flow`, `unmonitor-flow`, `unresponsive-flow`), and
//! `unresponsive_penalty` multiplies an unresponsive flow's pre-filter probability
//! (ns-2 `unresponsive_penalty_`).
//!
//! Per flow ever identified or monitored, `flow_counters` reports (measurement only) whether
//! it is monitored and unresponsive at the end, its pre-filter probability then, its
//! identifications, the time it was monitored, when it was first monitored, first declared
//! unresponsive and last released, and the identification rounds from the warmup on in which
//! it was identified (`counters` has the rounds: each interval close with M lists).
//!
//! Cost: an unmonitored flow's arrival costs one map lookup; drop lists hold
//! only flows that had RED drops (state bounded by drops, not by flows), and
//! the work at each interval's end is linear in the flows listed and monitored.
//! `ns2` also counts every flow's bytes in the open interval, as ns-2's per-flow monitor
//! does: one more lookup per arrival and one entry per flow active in the interval.

use super::red::{uniformized, Red, RedConfig, RedProfile};
use super::{DropReason, FlowCounters, LinkInfo, QdiscConfig, QdiscCtx, QueueDisc, Verdict};
use crate::error::ScenarioError;
use crate::packet::{Ecn, FlowId, PacketId, PacketKind};
use crate::rng::Rng;
use crate::time::{from_secs, to_secs, Time};
use crate::units::Seconds;
use crate::validate::{
    require_above, require_at_least, require_non_negative, require_positive, require_probability, Bound,
};
use rand::{Rng as _, SeedableRng};
use serde::Deserialize;
use std::collections::{BTreeMap, VecDeque};

/// The most a first identification starts a flow at (ns-2 monitoring.tcl: `newTarget` ≥ 0.5).
const MAX_INITIAL_PROBABILITY: f64 = 0.5;

/// ns-2's engine starts 10.1 s after it is created (helper.tcl `sched-detect-reward 10.1`; at 0 s in its suite).
const NS2_ENGINE_START: f64 = 10.1;

/// RED-PD's parameters; the output queue's are RED's, in `red`.
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RedPdConfig {
    /// Whose identification engine runs: the paper's (default, so that files written before
    /// profiles existed keep their meaning) or ns-2.35's (module docs).
    pub profile: RedPdProfile,
    /// The output queue (RED's defaults; §7.2 gives none). Under `ns2` its `profile` defaults to
    /// RED's `ns2` and its `fixed_p` is ns-2's FRp loss in front of it.
    pub red: RedConfig,
    /// When the first drop-list interval closes; it covers [0, engine_start]. Unset: the first
    /// interval is an ordinary eq. 3 one (at p unknown, 10R); `ns2`: 10.1 s (helper.tcl).
    pub engine_start: Option<Seconds>,
    /// Target RTT R of the reference TCP: 40 ms (§7.2 "Unless otherwise specified").
    pub target_rtt: Seconds,
    /// K, congestion epochs per identification period and lists a flow must be in: 3 (§4.2).
    pub k: u32,
    /// M, drop lists kept: 5 (§4.2 "a value of M = 5 has worked well").
    pub m: u32,
    /// Single-list identification (§4.3): ≥ K drops in the last K·CL seconds.
    pub single_list: bool,
    /// Shortest drop-list interval: 2R (ns-2 helper.tcl `Mintime_`).
    pub min_interval: Option<Seconds>,
    /// Longest drop-list interval, the length at p = 0: 10R (ns-2 helper.tcl `Maxtime_`).
    pub max_interval: Option<Seconds>,
    /// Weight of the last interval in the ambient drop-rate average: 0.5 (ns-2 monitoring.tcl).
    pub drop_rate_weight: f64,
    /// β, responsive flows: 2 (§5.2).
    pub beta: f64,
    /// p_d, the largest decrease in one step, responsive flows: 0.05 (§5.2).
    pub max_decrease: f64,
    /// P_minThresh, below which a responsive flow is unmonitored: 0.005 (§5.2).
    pub min_probability: f64,
    /// l, intervals between decreases, responsive flows: 3 (§5.2).
    pub decrease_wait: u32,
    /// The §6.2 test for unresponsive flows: on (ns-2 red-pd.tcl `unresponsive_test_ 1`).
    pub unresponsive_test: bool,
    /// β for unresponsive flows: 1.5 (§5.2).
    pub unresponsive_beta: f64,
    /// p_d for unresponsive flows: 0.05 (§5.2).
    pub unresponsive_max_decrease: f64,
    /// P_minThresh for unresponsive flows: 0.0025 (§5.2).
    pub unresponsive_min_probability: f64,
    /// l for unresponsive flows: 5 (§5.2).
    pub unresponsive_decrease_wait: u32,
    /// Factor on an unresponsive flow's increase: 2 (ns-2 monitoring.tcl; §6.2 says only "bigger quanta").
    pub unresponsive_increase: f64,
    /// Records (arrival rate, drop rate) kept per monitored flow for §6.2: 5 (ns-2 `Hist_Max_`).
    pub history: u32,
    /// Pre-filter an unresponsive flow only while more than one packet is queued; off: whatever
    /// the queue (ns-2 red-pd.cc `noidle_`, default false).
    pub noidle: bool,
    /// Space pre-filter drops as RED spaces its own, `P/(1 − count·P)` with `count` the flow's
    /// arrivals since its last pre-filter drop (ns-2 red-pd.cc `modify_p`); off: each arrival is
    /// dropped independently with probability P, the fraction §5.2's analysis assumes. Unset:
    /// off under `paper`, on under `ns2`.
    pub uniformize: Option<bool>,
    /// In byte mode, count eq. 5's drops in bytes: on (§6.4); off, in packets.
    pub quantum_in_bytes: bool,
    /// What identification does: monitor (§4–§5).
    pub identification: Identification,
    /// Scripted monitoring commands (ns-2 red-pd.cc's, which its validation suite issues): none.
    pub schedule: Vec<ScheduledAction>,
    /// Factor on an unresponsive flow's pre-filter probability: 1 (ns-2 `unresponsive_penalty_`).
    pub unresponsive_penalty: f64,
}

/// Whose identification engine runs (module docs).
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum RedPdProfile {
    /// The paper's text, read where it is silent as ns-2's engine settles it.
    #[default]
    Paper,
    /// ns-2.35's engine (`tcl/ex/red-pd/monitoring.tcl`, `helper.tcl`) and pre-filter
    /// (`queue/red-pd.cc`), as the paper's authors ran them.
    Ns2,
}

/// What identification does with the flows it finds (§4.2).
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Identification {
    /// Identified flows are monitored, their probability raised and released (§5).
    #[default]
    Monitor,
    /// Identified flows are counted (`identified_rounds`) and left alone, so that every round
    /// sees the flow as it sends (§4.4's Fig. 9 simulations; ns-2 monitoring.tcl `testIdent`).
    Count,
    /// No identification: only `schedule` monitors flows (ns-2's RED/PD queue without its
    /// identification engine, as in its validation suite's `simple`, `unresponsive`, `frp`).
    Off,
}

/// A scripted command at time `at` for flow `flow` (its id).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScheduledAction {
    pub at: Seconds,
    pub flow: FlowId,
    pub action: Action,
    /// `monitor`: the pre-filter probability.
    pub probability: Option<f64>,
}

/// ns-2 red-pd.cc's commands.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// Monitor the flow (or set its probability, if monitored): `monitor-flow`.
    Monitor,
    /// Stop monitoring it and forget its history: `unmonitor-flow`.
    Unmonitor,
    /// Declare a monitored flow unresponsive: `unresponsive-flow`.
    Unresponsive,
}

impl Default for RedPdConfig {
    fn default() -> Self {
        RedPdConfig {
            profile: RedPdProfile::Paper,
            red: RedConfig::default(),
            engine_start: None,
            target_rtt: Seconds(0.040),
            k: 3,
            m: 5,
            single_list: false,
            min_interval: None,
            max_interval: None,
            drop_rate_weight: 0.5,
            beta: 2.0,
            max_decrease: 0.05,
            min_probability: 0.005,
            decrease_wait: 3,
            unresponsive_test: true,
            unresponsive_beta: 1.5,
            unresponsive_max_decrease: 0.05,
            unresponsive_min_probability: 0.0025,
            unresponsive_decrease_wait: 5,
            unresponsive_increase: 2.0,
            history: 5,
            noidle: false,
            uniformize: None,
            quantum_in_bytes: true,
            identification: Identification::Monitor,
            schedule: Vec::new(),
            unresponsive_penalty: 1.0,
        }
    }
}

impl RedPdConfig {
    fn params(&self, measure_from: Time) -> Params {
        let r = self.target_rtt.0;
        let ns2 = (self.profile == RedPdProfile::Ns2).then(|| Ns2Rules {
            // monitoring.tcl `do_detect`: `if { $currDropRate > 0.001 }`.
            min_drop_rate: 0.001,
            // helper.tcl `minTimetoConsider_ 0.400`, the floor of `minLastChange`.
            min_wait: from_secs(0.400),
            // monitoring.tcl `sched-detect-reward`: `do_reward` 0.001 s after `do_detect`.
            release_delay: from_secs(0.001),
            // helper.tcl `BList_`: as many lengths as the longest wait reads (5 by default).
            recorded_intervals: (self.m.max(self.decrease_wait).max(self.unresponsive_decrease_wait)) as usize,
            fixed_loss_in_bytes: self.red.bytes,
        });
        // ns-2's flow monitor counts bytes whatever RED's mode.
        let bytes = self.red.bytes || ns2.is_some();
        Params {
            target_rtt: r,
            k: self.k as usize,
            m: self.m as usize,
            single_list: self.single_list,
            min_interval: self.min_interval.map_or(2.0 * r, |s| s.0),
            max_interval: self.max_interval.map_or(10.0 * r, |s| s.0),
            drop_rate_weight: self.drop_rate_weight,
            responsive: Release {
                beta: self.beta,
                max_decrease: self.max_decrease,
                min_probability: self.min_probability,
                wait: self.decrease_wait as usize,
            },
            unresponsive: Release {
                beta: self.unresponsive_beta,
                max_decrease: self.unresponsive_max_decrease,
                min_probability: self.unresponsive_min_probability,
                wait: self.unresponsive_decrease_wait as usize,
            },
            unresponsive_test: self.unresponsive_test,
            unresponsive_increase: self.unresponsive_increase,
            history: self.history as usize,
            noidle: self.noidle,
            uniformize: self.uniformize.unwrap_or(ns2.is_some()),
            identification: self.identification,
            unresponsive_penalty: self.unresponsive_penalty,
            min_th: self.red.min_th(),
            fixed_p: self.red.fixed_p,
            bytes,
            list_in_bytes: bytes && self.quantum_in_bytes,
            mean_pktsize: self.red.mean_pktsize.0 as f64,
            engine_start: self
                .engine_start
                .map(|s| from_secs(s.0))
                .or(ns2.map(|_| from_secs(NS2_ENGINE_START))),
            ns2,
            measure_from,
        }
    }

    /// The output queue's RED. Under `ns2`: RED's `ns2` profile unless `red.profile` is set, and
    /// without `fixed_p`, which RED-PD applies in front of RED instead (ns-2's FRp mode).
    fn output_queue(&self) -> RedConfig {
        let mut red = self.red.clone();
        if self.profile == RedPdProfile::Ns2 {
            red.profile.get_or_insert(RedProfile::Ns2);
            red.fixed_p = None;
        }
        red
    }
}

impl QdiscConfig for RedPdConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        self.red.validate(&format!("{path}.red"))?;
        let field = |name: &str| format!("{path}.{name}");
        require_positive(&field("target_rtt"), self.target_rtt)?;
        if let Some(start) = self.engine_start {
            require_positive(&field("engine_start"), start)?;
        }
        if self.k == 0 {
            return Err(ScenarioError::new(field("k"), "must be >= 1, got 0"));
        }
        if self.m < self.k {
            return Err(ScenarioError::new(
                field("m"),
                format!("must be >= k ({}), got {}", self.k, self.m),
            ));
        }
        let params = self.params(0);
        require_positive(&field("min_interval"), params.min_interval)?;
        let min_interval = Bound::field("min_interval", params.min_interval);
        require_at_least(&field("max_interval"), params.max_interval, min_interval)?;
        require_probability(&field("drop_rate_weight"), self.drop_rate_weight)?;
        for (prefix, release) in [("", params.responsive), ("unresponsive_", params.unresponsive)] {
            require_above(&field(&format!("{prefix}beta")), release.beta, 1.0)?;
            require_probability(&field(&format!("{prefix}max_decrease")), release.max_decrease)?;
            require_probability(&field(&format!("{prefix}min_probability")), release.min_probability)?;
            if release.wait == 0 {
                return Err(ScenarioError::new(
                    field(&format!("{prefix}decrease_wait")),
                    "must be >= 1, got 0",
                ));
            }
        }
        require_at_least(&field("unresponsive_increase"), self.unresponsive_increase, 1.0)?;
        if self.history < 2 {
            return Err(ScenarioError::new(
                field("history"),
                format!("must be >= 2 (the test compares records), got {}", self.history),
            ));
        }
        require_at_least(&field("unresponsive_penalty"), self.unresponsive_penalty, 1.0)?;
        for (i, scheduled) in self.schedule.iter().enumerate() {
            let entry = |name: &str| field(&format!("schedule[{i}].{name}"));
            require_non_negative(&entry("at"), scheduled.at)?;
            match (scheduled.action, scheduled.probability) {
                (Action::Monitor, Some(p)) => require_probability(&entry("probability"), p)?,
                (Action::Monitor, None) => {
                    return Err(ScenarioError::new(
                        entry("probability"),
                        "required for action \"monitor\"",
                    ))
                }
                (_, Some(_)) => {
                    return Err(ScenarioError::new(
                        entry("probability"),
                        "only used by action \"monitor\"",
                    ))
                }
                (_, None) => {}
            }
        }
        Ok(())
    }

    fn build(&self, link: &LinkInfo, mut rng: Rng) -> Box<dyn QueueDisc> {
        // RED draws from a stream of its own, seeded from this qdisc's.
        let red = Red::new(
            &self.output_queue(),
            link,
            Rng::from_rng(&mut rng).expect("PCG seeds from PCG"),
        );
        Box::new(RedPd::new(self, red, rng, link.measure_from))
    }
}

/// (β, p_d, P_minThresh, l) of §5.2: how a monitored flow is released.
#[derive(Clone, Copy, Debug)]
struct Release {
    beta: f64,
    max_decrease: f64,
    min_probability: f64,
    /// l, in drop-list intervals.
    wait: usize,
}

impl Release {
    /// §5.1–5.2: divide by β or subtract p_d, whichever reduces less.
    fn decrease(&self, p: f64) -> f64 {
        (p / self.beta).max(p - self.max_decrease)
    }

    /// ns-2 (monitoring.tcl `do_reward`): subtract p_d above β·p_d, else divide by β. For β = 2
    /// this is [`Self::decrease`]; for β = 1.5 it subtracts from 0.075 up, where `decrease`
    /// divides up to 0.15 (P = 0.12: 0.07, not 0.08).
    fn decrease_ns2(&self, p: f64) -> f64 {
        if p > self.beta * self.max_decrease {
            p - self.max_decrease
        } else {
            p / self.beta
        }
    }
}

/// The rules of ns-2's engine and pre-filter that the paper does not state or states
/// otherwise (`profile = "ns2"`; module docs), resolved.
#[derive(Clone, Copy, Debug)]
struct Ns2Rules {
    /// No monitoring or increase in a round unless the interval just closed had a drop rate above this.
    min_drop_rate: f64,
    /// The shortest wait before a flow's probability changes again.
    min_wait: Time,
    /// Releases run this long after the interval closes.
    release_delay: Time,
    /// Interval lengths kept for the waits (ns-2's `BList_`).
    recorded_intervals: usize,
    /// The FRp loss (`red.fixed_p`) scaled by size/mean_pktsize: RED's byte mode.
    fixed_loss_in_bytes: bool,
}

/// The parameters in effect; times in seconds.
#[derive(Clone, Copy, Debug)]
struct Params {
    target_rtt: f64,
    k: usize,
    m: usize,
    single_list: bool,
    min_interval: f64,
    max_interval: f64,
    drop_rate_weight: f64,
    responsive: Release,
    unresponsive: Release,
    unresponsive_test: bool,
    unresponsive_increase: f64,
    history: usize,
    noidle: bool,
    uniformize: bool,
    identification: Identification,
    unresponsive_penalty: f64,
    /// RED's min_th, the pre-filter's gate (§1.2).
    min_th: f64,
    fixed_p: Option<f64>,
    /// Count arrivals and drops in bytes: in RED's byte mode (§6.4), and always under `ns2`.
    bytes: bool,
    /// The drop lists (eq. 5's drop counts) in bytes: byte mode with `quantum_in_bytes`.
    list_in_bytes: bool,
    /// RED's mean packet size, bytes: §4.3's K drops when the lists count bytes.
    mean_pktsize: f64,
    /// When the first interval closes; None: eq. 3's first interval.
    engine_start: Option<Time>,
    /// ns-2's rules; None: the paper's.
    ns2: Option<Ns2Rules>,
    /// The warmup: identification rounds are counted from here (measurement only).
    measure_from: Time,
}

impl Params {
    /// Eq. 3's drop-list interval `(K/M)·R/√(1.5p)`, within [min_interval, max_interval], in seconds.
    fn interval(&self, p: f64) -> f64 {
        let eq3 = self.k as f64 / self.m as f64 * self.target_rtt / (1.5 * p).sqrt();
        eq3.clamp(self.min_interval, self.max_interval)
    }

    /// §5.1: the probability after an increase by eq. 5's `quantum` at ambient drop rate `p`.
    fn raised(&self, probability: f64, quantum: f64, p: f64, unresponsive: bool) -> f64 {
        let existing = match self.ns2 {
            // The flow's existing drop rate: the pre-filter's, then the output queue's on what passes.
            None => probability + (1.0 - probability) * p,
            // ns-2 compares with the pre-filter's probability alone (`oldDropP`).
            Some(_) => probability,
        };
        // "If this increase quantum is more than the flow's existing drop rate, then we just double".
        let step = if quantum > existing { probability } else { quantum };
        let factor = if unresponsive { self.unresponsive_increase } else { 1.0 };
        let next = probability + factor * step;
        // ns-2 keeps a probability of exactly 1 (a target of 0 is not below 0): 0.5 doubled.
        if next < 1.0 || (next == 1.0 && self.ns2.is_some()) {
            next
        } else {
            // ns-2: a flow past 1 keeps 1/(1 + factor) of what it passed.
            1.0 - (1.0 - probability) / (1.0 + factor)
        }
    }
}

/// One (closed) drop-list interval: the flows RED dropped from, with their drops.
#[derive(Clone, Debug, Default)]
struct DropList {
    length: Time,
    drops: BTreeMap<FlowId, f64>,
}

/// A monitored flow (§5.1).
#[derive(Clone, Debug)]
struct Monitored {
    /// Pre-filter drop probability.
    probability: f64,
    unresponsive: bool,
    /// When the probability last changed (set, raised or cut).
    last_change: Time,
    /// §6.2 (paper): arrivals and drops (pre-filter + RED) since `period_start`.
    arrivals: f64,
    drops: f64,
    period_start: Time,
    /// §6.2: (arrival rate, drop rate) of the latest periods (`ns2`: intervals), oldest first.
    history: VecDeque<(f64, f64)>,
    /// Arrivals since the flow's last pre-filter drop (`uniformize`; ns-2's `count`).
    since_drop: f64,
}

impl Monitored {
    /// A flow monitored from `now` at `probability`.
    fn new(probability: f64, now: Time) -> Self {
        Monitored {
            probability,
            unresponsive: false,
            last_change: now,
            arrivals: 0.0,
            drops: 0.0,
            period_start: now,
            history: VecDeque::new(),
            since_drop: 0.0,
        }
    }
}

/// `ns2`: one flow's arrivals and drops (pre-filter + RED) in the open interval, in bytes, as
/// ns-2's per-flow monitor counts them for the engine.
#[derive(Clone, Copy, Debug, Default)]
struct FlowInterval {
    arrivals: f64,
    drops: f64,
}

/// A [`ScheduledAction`] resolved: when, which flow, what.
#[derive(Clone, Copy, Debug)]
struct Scripted {
    at: Time,
    flow: FlowId,
    command: Command,
}

#[derive(Clone, Copy, Debug)]
enum Command {
    Monitor(f64),
    Unmonitor,
    Unresponsive,
}

/// What RED-PD counts beyond the engine's drop table (pre-filter drops are its `pre_filter` reason).
#[derive(Default)]
struct Stats {
    /// Identifications that started monitoring a flow.
    monitor_starts: u64,
    /// Times a monitored flow was declared unresponsive.
    unresponsive_declarations: u64,
    peak_monitored_flows: usize,
    /// Identification rounds (interval closes with M lists) from the warmup on.
    identification_rounds: u64,
}

/// A flow's monitoring history, reported through `flow_counters` (measurement only; kept
/// for flows ever identified, so bounded by identifications, not by flows).
#[derive(Clone, Debug, Default)]
struct FlowRecord {
    /// Identifications that started monitoring the flow.
    identifications: u32,
    /// Seconds monitored in the spans that ended, and when the open span started.
    monitored_seconds: f64,
    monitored_since: Option<Time>,
    first_monitored: Option<Time>,
    first_unresponsive: Option<Time>,
    last_released: Option<Time>,
    /// Identification rounds from the warmup on that identified the flow.
    identified_rounds: u64,
}

impl FlowRecord {
    /// The flow is monitored from `now` on.
    fn monitored_from(&mut self, now: Time) {
        self.monitored_since = Some(now);
        self.first_monitored.get_or_insert(now);
    }

    /// The flow is unmonitored at `now`.
    fn released(&mut self, now: Time) {
        let since = self.monitored_since.take().unwrap_or(now);
        self.monitored_seconds += to_secs(now - since);
        self.last_released = Some(now);
    }
}

pub struct RedPd {
    params: Params,
    /// The output queue.
    red: Red,
    rng: Rng,
    /// The open interval: when it started and ends; RED's arrivals, drops and drop list so far.
    interval_start: Time,
    interval_end: Time,
    interval_arrivals: f64,
    interval_drops: f64,
    current: BTreeMap<FlowId, f64>,
    /// The last M closed lists, oldest first.
    lists: VecDeque<DropList>,
    /// Exponentially averaged ambient drop rate; None before the first interval closes.
    ambient: Option<f64>,
    monitored: BTreeMap<FlowId, Monitored>,
    /// `ns2`: the open interval per flow (every flow that arrived in it).
    interval_flows: BTreeMap<FlowId, FlowInterval>,
    /// `ns2`: the lengths of the intervals scheduled at p > 0, newest last (`BList_`), for the waits.
    recorded_intervals: VecDeque<Time>,
    /// `ns2`: when the engine unmonitored each flow not monitored now (ns-2 keeps its `lastChange`).
    unmonitored_at: BTreeMap<FlowId, Time>,
    /// `ns2`: when the release of the last closed interval runs.
    release_due: Option<Time>,
    records: BTreeMap<FlowId, FlowRecord>,
    /// The scripted commands in time order, and the next one due.
    schedule: Vec<Scripted>,
    next_scripted: usize,
    stats: Stats,
}

impl RedPd {
    fn new(cfg: &RedPdConfig, red: Red, rng: Rng, measure_from: Time) -> Self {
        let params = cfg.params(measure_from);
        let mut schedule: Vec<Scripted> = cfg
            .schedule
            .iter()
            .map(|a| Scripted {
                at: from_secs(a.at.0),
                flow: a.flow,
                command: match a.action {
                    Action::Monitor => Command::Monitor(a.probability.expect("validated")),
                    Action::Unmonitor => Command::Unmonitor,
                    Action::Unresponsive => Command::Unresponsive,
                },
            })
            .collect();
        // Stable: commands at the same time keep the file's order.
        schedule.sort_by_key(|s| s.at);
        // The first interval: to the engine's start, or eq. 3 at the configured fixed_p or p = 0 (p unknown).
        let first = params
            .engine_start
            .unwrap_or_else(|| from_secs(params.interval(params.fixed_p.unwrap_or(0.0))));
        RedPd {
            params,
            red,
            rng,
            interval_start: 0,
            interval_end: first,
            interval_arrivals: 0.0,
            interval_drops: 0.0,
            current: BTreeMap::new(),
            lists: VecDeque::new(),
            ambient: None,
            monitored: BTreeMap::new(),
            interval_flows: BTreeMap::new(),
            recorded_intervals: VecDeque::new(),
            unmonitored_at: BTreeMap::new(),
            release_due: None,
            records: BTreeMap::new(),
            schedule,
            next_scripted: 0,
            stats: Stats::default(),
        }
    }

    /// Closes every interval that ended by `now` and runs the commands and releases due, in
    /// time order (at the same time: commands, then a release, then the close).
    fn advance(&mut self, now: Time) {
        loop {
            let scripted = self.schedule.get(self.next_scripted).copied();
            let next = [scripted.map(|s| s.at), self.release_due, Some(self.interval_end)]
                .into_iter()
                .flatten()
                .min()
                .expect("an interval is always open");
            if next > now {
                break;
            }
            match scripted {
                Some(scripted) if scripted.at == next => {
                    self.next_scripted += 1;
                    self.run(scripted);
                }
                _ if self.release_due == Some(next) => {
                    self.release_due = None;
                    self.release(next);
                }
                _ => self.close_interval(),
            }
        }
    }

    /// A scripted command (ns-2 red-pd.cc's); one for a flow that is not monitored, other
    /// than `monitor`, does nothing.
    fn run(&mut self, Scripted { at, flow, command }: Scripted) {
        match command {
            Command::Monitor(probability) => {
                if let Some(m) = self.monitored.get_mut(&flow) {
                    m.probability = probability;
                    m.last_change = at;
                } else {
                    self.monitored.insert(flow, Monitored::new(probability, at));
                    self.records.entry(flow).or_default().monitored_from(at);
                    self.stats.peak_monitored_flows = self.stats.peak_monitored_flows.max(self.monitored.len());
                }
            }
            Command::Unmonitor => {
                if self.monitored.remove(&flow).is_some() {
                    self.records.entry(flow).or_default().released(at);
                }
            }
            Command::Unresponsive => {
                if let Some(m) = self.monitored.get_mut(&flow).filter(|m| !m.unresponsive) {
                    m.unresponsive = true;
                    self.stats.unresponsive_declarations += 1;
                    self.records
                        .entry(flow)
                        .or_default()
                        .first_unresponsive
                        .get_or_insert(at);
                }
            }
        }
    }

    /// Ends the open interval at `interval_end`: §4.2's drop rate and list, then
    /// identification, increases and releases as of that instant.
    fn close_interval(&mut self) {
        let end = self.interval_end;
        let last = if self.interval_arrivals > 0.0 {
            self.interval_drops / self.interval_arrivals
        } else {
            0.0
        };
        let w = self.params.drop_rate_weight;
        let ambient = self.ambient.map_or(last, |a| w * last + (1.0 - w) * a);
        self.ambient = Some(ambient);
        self.lists.push_back(DropList {
            length: end - self.interval_start,
            drops: std::mem::take(&mut self.current),
        });
        if self.lists.len() > self.params.m {
            self.lists.pop_front();
        }
        let flows = std::mem::take(&mut self.interval_flows);
        if self.params.identification != Identification::Off {
            self.identify(end, last, ambient, &flows);
        }
        // Eq. 3 at the averaged rate, or at the fixed one (ns-2 `calculateB` under `P_testFRp_`).
        let p = self.params.fixed_p.unwrap_or(ambient);
        let next = from_secs(self.params.interval(p)).max(1);
        let monitor = self.params.identification == Identification::Monitor;
        match self.params.ns2 {
            None if monitor => self.release(end),
            None => {}
            Some(rules) => {
                // `calculateB` records only the lengths it computes from p > 0.
                if p > 0.0 {
                    self.recorded_intervals.push_back(next);
                    if self.recorded_intervals.len() > rules.recorded_intervals {
                        self.recorded_intervals.pop_front();
                    }
                }
                if monitor {
                    self.release_due = Some(end + rules.release_delay);
                }
            }
        }
        self.interval_start = end;
        self.interval_end = end + next;
        self.interval_arrivals = 0.0;
        self.interval_drops = 0.0;
    }

    /// The length of the last `n` intervals: a wait of n intervals (ns-2 `minLastChange`).
    fn last_intervals(&self, n: usize) -> Time {
        self.lists.iter().rev().take(n).map(|l| l.length).sum()
    }

    /// ns-2's wait of `n` intervals (`minLastChange n`): the last `n` recorded lengths, which
    /// leave out the first interval and those at p = 0 and, at a release, include the interval
    /// just scheduled; at least `min_wait`.
    fn recorded_wait(&self, n: usize, rules: Ns2Rules) -> Time {
        let recorded: Time = self.recorded_intervals.iter().rev().take(n).sum();
        recorded.max(rules.min_wait)
    }

    /// Flows identified in the last M lists (§4.2, or §4.3's single list), with their drops there.
    fn identified(&self) -> Vec<(FlowId, f64)> {
        let mut seen: BTreeMap<FlowId, (usize, f64)> = BTreeMap::new();
        for list in &self.lists {
            for (&flow, &drops) in &list.drops {
                let entry = seen.entry(flow).or_default();
                entry.0 += 1;
                entry.1 += drops;
            }
        }
        let k = self.params.k;
        // Packets, or bytes of mean-size packets when the lists count bytes, for §4.3's "K or more drops".
        let k_drops = k as f64
            * if self.params.list_in_bytes {
                self.params.mean_pktsize
            } else {
                1.0
            };
        seen.into_iter()
            .filter(|&(_, (lists, drops))| {
                if self.params.single_list {
                    drops >= k_drops
                } else {
                    lists >= k
                }
            })
            .map(|(flow, (_, drops))| (flow, drops))
            .collect()
    }

    /// §4.2's identification at `now`, counted as a round once M lists are kept and the
    /// warmup is over; then, unless only counting, §5.1's increases. `last` is the drop rate of
    /// the interval just closed, `ambient` the average; `flows` the interval per flow (`ns2`).
    fn identify(&mut self, now: Time, last: f64, ambient: f64, flows: &BTreeMap<FlowId, FlowInterval>) {
        let identified = self.identified();
        if self.lists.len() == self.params.m && now >= self.params.measure_from {
            self.stats.identification_rounds += 1;
            for &(flow, _) in &identified {
                self.records.entry(flow).or_default().identified_rounds += 1;
            }
        }
        if self.params.identification != Identification::Monitor || identified.is_empty() {
            return;
        }
        // Eq. 5's p: the smaller of the average and the last rate (ns-2 `usableDropRate`).
        let p = last.min(ambient);
        match self.params.ns2 {
            None => self.raise(now, identified, p),
            Some(rules) if last > rules.min_drop_rate => self.raise_ns2(now, identified, p, flows, rules),
            Some(_) => {}
        }
    }

    /// Eq. 5's quantum for each `identified` flow (with its drops) at ambient drop rate `p`.
    fn quanta(identified: Vec<(FlowId, f64)>, p: f64) -> impl Iterator<Item = (FlowId, f64)> {
        let avg_drop_count = identified.iter().map(|&(_, d)| d).sum::<f64>() / identified.len() as f64;
        identified
            .into_iter()
            .map(move |(flow, drops)| (flow, drops / avg_drop_count * p))
    }

    /// Starts monitoring an identified flow (§5.1).
    fn start_monitoring(&mut self, flow: FlowId, monitored: Monitored, now: Time) {
        self.monitored.insert(flow, monitored);
        self.stats.monitor_starts += 1;
        let record = self.records.entry(flow).or_default();
        record.identifications += 1;
        record.monitored_from(now);
        self.stats.peak_monitored_flows = self.stats.peak_monitored_flows.max(self.monitored.len());
    }

    /// §5.1: raise the probability of each `identified` flow (with its drops), or start
    /// monitoring it; `p` is the ambient drop rate for eq. 5.
    fn raise(&mut self, now: Time, identified: Vec<(FlowId, f64)>, p: f64) {
        let increase_wait = self.last_intervals(self.params.m - 1);
        for (flow, quantum) in Self::quanta(identified, p) {
            match self.monitored.get_mut(&flow) {
                None => {
                    let start = quantum.min(2.0 * p).min(MAX_INITIAL_PROBABILITY);
                    self.start_monitoring(flow, Monitored::new(start, now), now);
                }
                // §5.2: after an increase, wait M − 1 intervals.
                Some(m) if now - m.last_change >= increase_wait => {
                    if self.params.unresponsive_test {
                        let was = m.unresponsive;
                        record_period(m, now, self.params.history);
                        m.unresponsive = unresponsive(&m.history);
                        if m.unresponsive && !was {
                            self.stats.unresponsive_declarations += 1;
                            let record = self.records.entry(flow).or_default();
                            record.first_unresponsive.get_or_insert(now);
                        }
                    }
                    m.probability = self.params.raised(m.probability, quantum, p, m.unresponsive);
                    m.last_change = now;
                }
                Some(_) => {}
            }
        }
    }

    /// ns-2's increases (monitoring.tcl `do_detect`), as [`Self::raise`] but: every flow waits
    /// M − 1 recorded intervals since its last change, a flow released earlier included; a flow
    /// without drops (pre-filter or RED) in the interval just closed is left alone; the §6.2
    /// test runs on a responsive flow before the interval's record is appended, over one record
    /// per change (the interval before it, the first one from before monitoring), and never
    /// clears a flow; the doubling test compares the quantum with P alone.
    fn raise_ns2(
        &mut self,
        now: Time,
        identified: Vec<(FlowId, f64)>,
        p: f64,
        flows: &BTreeMap<FlowId, FlowInterval>,
        rules: Ns2Rules,
    ) {
        let increase_wait = self.recorded_wait(self.params.m - 1, rules);
        let elapsed = to_secs(now - self.interval_start);
        for (flow, quantum) in Self::quanta(identified, p) {
            let last_change = match self.monitored.get(&flow) {
                Some(m) => m.last_change,
                None => self.unmonitored_at.get(&flow).copied().unwrap_or(0),
            };
            if now.saturating_sub(last_change) < increase_wait {
                continue;
            }
            // "don't punish a flow if he had zero drops in the last interval".
            let Some(seen) = flows.get(&flow).filter(|seen| seen.drops > 0.0) else {
                continue;
            };
            let record = (seen.arrivals / elapsed, seen.drops / seen.arrivals);
            match self.monitored.get_mut(&flow) {
                None => {
                    let start = quantum.min(2.0 * p).min(MAX_INITIAL_PROBABILITY);
                    let monitored = Monitored {
                        history: VecDeque::from([record]),
                        ..Monitored::new(start, now)
                    };
                    self.unmonitored_at.remove(&flow);
                    self.start_monitoring(flow, monitored, now);
                }
                Some(m) => {
                    if self.params.unresponsive_test && !m.unresponsive && unresponsive(&m.history) {
                        m.unresponsive = true;
                        self.stats.unresponsive_declarations += 1;
                        let record = self.records.entry(flow).or_default();
                        record.first_unresponsive.get_or_insert(now);
                    }
                    m.probability = self.params.raised(m.probability, quantum, p, m.unresponsive);
                    m.last_change = now;
                    m.history.push_back(record);
                    if m.history.len() > self.params.history {
                        m.history.pop_front();
                    }
                }
            }
        }
    }

    /// §5.1–5.2: cut the probability of monitored flows in none of the last M lists, at most
    /// once per l intervals; unmonitor it below P_minThresh. `ns2` (monitoring.tcl `do_reward`):
    /// the wait is ns-2's (it includes the interval just scheduled), and a flow at P_minThresh or
    /// below is unmonitored instead of cut, one round later than the paper counts.
    fn release(&mut self, now: Time) {
        let (responsive_wait, unresponsive_wait) = match self.params.ns2 {
            None => (
                self.last_intervals(self.params.responsive.wait),
                self.last_intervals(self.params.unresponsive.wait),
            ),
            Some(rules) => (
                self.recorded_wait(self.params.responsive.wait, rules),
                self.recorded_wait(self.params.unresponsive.wait, rules),
            ),
        };
        let lists = &self.lists;
        let params = &self.params;
        let records = &mut self.records;
        let unmonitored_at = &mut self.unmonitored_at;
        self.monitored.retain(|flow, m| {
            if lists.iter().any(|l| l.drops.contains_key(flow)) {
                return true;
            }
            let (release, wait) = if m.unresponsive {
                (params.unresponsive, unresponsive_wait)
            } else {
                (params.responsive, responsive_wait)
            };
            if now.saturating_sub(m.last_change) < wait {
                return true;
            }
            m.last_change = now;
            let keep = match params.ns2 {
                None => {
                    m.probability = release.decrease(m.probability);
                    m.probability >= release.min_probability
                }
                // Compared as ns-2 does, on 1 − P (`targetBW_ >= 0.995`).
                Some(_) if 1.0 - m.probability >= 1.0 - release.min_probability => {
                    unmonitored_at.insert(*flow, now);
                    false
                }
                Some(_) => {
                    m.probability = release.decrease_ns2(m.probability);
                    true
                }
            };
            if !keep {
                records.entry(*flow).or_default().released(now);
            }
            keep
        });
    }

    /// Whether the pre-filter may drop now: (from a responsive flow, from an unresponsive one)
    /// (§1.2; ns-2 red-pd.cc).
    fn prefilter_active(&self) -> (bool, bool) {
        let queued = self.red.len_packets() > 1;
        let fixed = self.params.fixed_p.is_some();
        (
            fixed || (self.red.average().unwrap_or(0.0) >= self.params.min_th && queued),
            fixed || queued || !self.params.noidle,
        )
    }
}

/// ns-2's FRp loss probability for a packet of `size` bytes: `p`, times size/mean_pktsize in byte mode.
fn fixed_loss(p: f64, size: f64, rules: Ns2Rules, mean_pktsize: f64) -> f64 {
    if rules.fixed_loss_in_bytes {
        p * size / mean_pktsize
    } else {
        p
    }
}

/// §6.2: closes `m`'s current period into its history (the last `keep` periods).
fn record_period(m: &mut Monitored, now: Time, keep: usize) {
    let seconds = to_secs(now - m.period_start);
    if m.arrivals > 0.0 && seconds > 0.0 {
        m.history.push_back((m.arrivals / seconds, m.drops / m.arrivals));
        if m.history.len() > keep {
            m.history.pop_front();
        }
    }
    m.arrivals = 0.0;
    m.drops = 0.0;
    m.period_start = now;
}

/// §6.2's test over (arrival rate, drop rate) records: for each pair whose drop
/// rate rose from p1 to p2 with 0.1 < x = p1/p2 < 1, a conformant flow's arrival
/// rate should fall to about √x of its value (eq. 1); a pair in which it stayed
/// above is "bad". The verdict thresholds are ns-2's `check-unresponsive`.
fn unresponsive(history: &VecDeque<(f64, f64)>) -> bool {
    let (mut good, mut bad) = (0u32, 0u32);
    for &(rate1, p1) in history {
        for &(rate2, p2) in history {
            if p1 < p2 && p1 / p2 > 0.1 {
                if rate2 / rate1 > (p1 / p2).sqrt() {
                    bad += 1;
                } else {
                    good += 1;
                }
            }
        }
    }
    (good == 0 && bad >= 3) || (good == 1 && bad >= 4) || (good >= 2 && bad >= 4 * good)
}

impl QueueDisc for RedPd {
    fn enqueue(&mut self, id: PacketId, ctx: &mut QdiscCtx) -> Verdict {
        self.advance(ctx.now);
        let packet = ctx.packets[id];
        let amount = if self.params.bytes { packet.size as f64 } else { 1.0 };
        let listed = if self.params.list_in_bytes {
            packet.size as f64
        } else {
            1.0
        };
        let size = packet.size as f64;
        let ns2 = self.params.ns2;
        if ns2.is_some() {
            self.interval_flows.entry(packet.flow).or_default().arrivals += size;
        }
        let (responsive_active, unresponsive_active) = self.prefilter_active();
        if let Some(m) = self.monitored.get_mut(&packet.flow) {
            let active = if m.unresponsive {
                unresponsive_active
            } else {
                responsive_active
            };
            let probability = if m.unresponsive {
                (m.probability * self.params.unresponsive_penalty).min(1.0)
            } else {
                m.probability
            };
            let probability = if self.params.uniformize {
                uniformized(probability, m.since_drop, false)
            } else {
                probability
            };
            let drop = active && self.rng.gen::<f64>() < probability;
            m.arrivals += amount;
            if drop {
                m.drops += amount;
                m.since_drop = 0.0;
                if ns2.is_some() {
                    self.interval_flows.entry(packet.flow).or_default().drops += size;
                }
                return Verdict::Dropped(DropReason::PreFilter);
            }
            m.since_drop += 1.0;
        }
        self.interval_arrivals += amount;
        let verdict = match (ns2, self.params.fixed_p) {
            // ns-2's FRp mode: a fixed loss in front of RED, which still runs (red-pd.cc).
            (Some(rules), Some(p)) if self.rng.gen::<f64>() < fixed_loss(p, size, rules, self.params.mean_pktsize) => {
                Verdict::Dropped(DropReason::Loss)
            }
            _ => self.red.enqueue(id, ctx),
        };
        // §4.2: "a separate list of the dropped or marked packets".
        let marked = packet.ecn != Ecn::Ce && ctx.packets[id].ecn == Ecn::Ce;
        if matches!(verdict, Verdict::Dropped(_)) || marked {
            self.interval_drops += amount;
            *self.current.entry(packet.flow).or_default() += listed;
            if let Some(m) = self.monitored.get_mut(&packet.flow) {
                m.drops += amount;
            }
            if ns2.is_some() {
                self.interval_flows.entry(packet.flow).or_default().drops += size;
            }
        }
        verdict
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        self.advance(ctx.now);
        self.red.dequeue(ctx)
    }

    fn len_packets(&self) -> usize {
        self.red.len_packets()
    }

    fn len_bytes(&self) -> u64 {
        self.red.len_bytes()
    }

    fn average(&self) -> Option<f64> {
        self.red.average()
    }

    fn set_link_rate(&mut self, rate_bps: f64) {
        self.red.set_link_rate(rate_bps);
    }

    fn counters(&self) -> Vec<(&'static str, f64)> {
        let mut counters = self.red.counters();
        counters.extend([
            ("monitored_flows", self.monitored.len() as f64),
            ("peak_monitored_flows", self.stats.peak_monitored_flows as f64),
            ("monitor_starts", self.stats.monitor_starts as f64),
            (
                "unresponsive_flows",
                self.monitored.values().filter(|m| m.unresponsive).count() as f64,
            ),
            ("unresponsive_declarations", self.stats.unresponsive_declarations as f64),
            ("ambient_drop_rate", self.ambient.unwrap_or(0.0)),
            ("drop_list_interval", to_secs(self.interval_end - self.interval_start)),
            ("identification_rounds", self.stats.identification_rounds as f64),
        ]);
        counters
    }

    /// Every flow ever identified or monitored; times in seconds from the start of the run, `NaN` when
    /// the event never happened; "now" is the end of the last interval closed.
    fn flow_counters(&self) -> Vec<FlowCounters> {
        let now = self.interval_start;
        let at = |t: Option<Time>| t.map_or(f64::NAN, to_secs);
        self.records
            .iter()
            .map(|(&flow, r)| {
                let monitored = self.monitored.get(&flow);
                let open = r
                    .monitored_since
                    .map_or(0.0, |since| to_secs(now.saturating_sub(since)));
                FlowCounters {
                    flow,
                    // RED-PD keys flows by id alone, as the paper's routers do by flow.
                    kind: PacketKind::Data,
                    counters: vec![
                        ("monitored", monitored.is_some() as u8 as f64),
                        ("unresponsive", monitored.is_some_and(|m| m.unresponsive) as u8 as f64),
                        ("prefilter_probability", monitored.map_or(0.0, |m| m.probability)),
                        ("identifications", r.identifications as f64),
                        ("time_monitored", r.monitored_seconds + open),
                        ("first_monitored_at", at(r.first_monitored)),
                        ("unresponsive_at", at(r.first_unresponsive)),
                        ("last_released_at", at(r.last_released)),
                        ("identified_rounds", r.identified_rounds as f64),
                    ],
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testing::{link, QdiscHarness, MS};
    use crate::rng::stream;
    use crate::time::NANOS_PER_SEC;
    use crate::units::Bytes;

    /// A 1000-byte packet takes exactly 1 ms at 8 Mb/s.
    const LINK: LinkInfo = link(8e6);

    fn red_pd(cfg: RedPdConfig) -> QdiscHarness<RedPd> {
        cfg.validate("q").unwrap();
        let red = Red::new(&cfg.output_queue(), &LINK, stream(7, "red-pd-test/red"));
        QdiscHarness::new(Box::new(RedPd::new(&cfg, red, stream(7, "red-pd-test"), 0)))
    }

    /// RED-PD over a RED queue that drops every arrival with probability `p` (§7.1's controlled queue).
    fn fixed(p: f64) -> RedPdConfig {
        RedPdConfig {
            red: RedConfig {
                fixed_p: Some(p),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    fn monitor(h: &mut QdiscHarness<RedPd>, flow: FlowId, probability: f64, now: Time) {
        h.q.monitored.insert(flow, Monitored::new(probability, now));
    }

    fn probability(h: &QdiscHarness<RedPd>, flow: FlowId) -> Option<f64> {
        h.q.monitored.get(&flow).map(|m| m.probability)
    }

    /// Closes the open interval with RED's `drops` of `arrivals`, as the flows in `listed` suffered them.
    fn close_with(h: &mut QdiscHarness<RedPd>, arrivals: f64, listed: &[(FlowId, f64)]) {
        h.q.interval_arrivals = arrivals;
        h.q.interval_drops = listed.iter().map(|&(_, d)| d).sum();
        h.q.current = listed.iter().copied().collect();
        h.q.close_interval();
    }

    #[test]
    fn drop_list_interval_is_eq3_at_the_averaged_drop_rate() {
        let params = RedPdConfig::default().params(0);
        // Targets 1.B (redpd-eq3), K/M = 3/5, R = 40 ms: 0.196 s at p = 1 %, 0.088 s at 5 %.
        for (p, derived) in [(0.01f64, 0.196), (0.05, 0.088)] {
            let eq3 = 0.6 * 0.040 / (1.5 * p).sqrt();
            assert_eq!(params.interval(p), eq3);
            assert!((eq3 - derived).abs() < 5e-4, "{eq3}");
        }
        // 0.062 s at 10 % is below ns-2's 2R floor, which min_interval = 0 lifts; p = 0 gets the 10R ceiling.
        assert_eq!(params.interval(0.10), 0.080);
        let unclamped = RedPdConfig {
            min_interval: Some(Seconds(1e-9)),
            ..Default::default()
        };
        assert!((unclamped.params(0).interval(0.10) - 0.062).abs() < 5e-4);
        assert_eq!(params.interval(0.0), 0.400);

        // The interval in use: 1 % in the first interval, then EWMA 0.5 of 1 % and 5 % = 3 %.
        let mut h = red_pd(RedPdConfig::default());
        assert_eq!(h.q.interval_end, 400 * MS);
        close_with(&mut h, 1000.0, &[(1, 10.0)]);
        assert_eq!(
            h.q.interval_end - h.q.interval_start,
            from_secs(0.6 * 0.040 / 0.015f64.sqrt())
        );
        close_with(&mut h, 1000.0, &[(1, 50.0)]);
        assert!((h.q.ambient.unwrap() - 0.03).abs() < 1e-15);
        let length = h.q.interval_end - h.q.interval_start;
        assert!(
            length.abs_diff(from_secs(0.6 * 0.040 / 0.045f64.sqrt())) <= 1,
            "{length}"
        );
    }

    #[test]
    fn a_flow_is_identified_in_k_of_the_last_m_lists_not_in_k_minus_1() {
        // Every arrival is dropped by RED: a packet puts its flow on the interval's list.
        // Intervals are 2R = 80 ms (eq. 3 at p = 1 is below the floor).
        let mut h = red_pd(fixed(1.0));
        let interval = 80 * MS;
        // Flow 1 in lists 0 and 1 (K − 1 = 2 of them); flow 2 in lists 0, 2 and 4 (K = 3).
        for (i, flows) in [vec![1, 2], vec![1], vec![2], vec![], vec![2]].into_iter().enumerate() {
            for flow in flows {
                h.arrive(i as Time * interval + 10 * MS, flow, 1000);
            }
            assert!(h.q.monitored.is_empty(), "identified before the 5th list closed");
        }
        // The next arrival (flow 3, 5th interval) closes list 4.
        h.arrive(5 * interval + 10 * MS, 3, 1000);
        assert_eq!(h.q.monitored.keys().copied().collect::<Vec<_>>(), vec![2]);
        assert_eq!(h.q.stats.monitor_starts, 1);

        // Single list (§4.3): three drops in one list identify; three lists with one drop each do too.
        let mut h = red_pd(RedPdConfig {
            single_list: true,
            ..fixed(1.0)
        });
        for _ in 0..3 {
            h.arrive(10 * MS, 1, 1000);
        }
        for _ in 0..2 {
            h.arrive(10 * MS, 2, 1000);
        }
        h.arrive(interval + 10 * MS, 3, 1000);
        assert_eq!(h.q.monitored.keys().copied().collect::<Vec<_>>(), vec![1]);
        // ... while the multiple-list scheme ignores flow 1's three drops in a single list.
        let mut h = red_pd(fixed(1.0));
        for _ in 0..3 {
            h.arrive(10 * MS, 1, 1000);
        }
        for i in 1..=5 {
            h.arrive(i * interval + 10 * MS, 3, 1000);
        }
        assert!(!h.q.monitored.contains_key(&1));
    }

    #[test]
    fn byte_mode_counts_drops_in_bytes() {
        // §6.4: with RED in byte mode, eq. 5 counts bytes, and the ambient drop rate is bytes
        // over bytes. Flow 1 sends four 500-byte packets, flow 2 two 1000-byte ones: the same
        // bytes, twice the packets; RED drops them all (fixed_p = 1 for the mean size, 500 B).
        // ns-2's engine counts bytes in packet mode too (its `fixed_p` drops are its FRp loss).
        for (profile, bytes, quantum_in_bytes, listed, total) in [
            (RedPdProfile::Paper, false, true, [(1, 4.0), (2, 2.0)], 6.0),
            (RedPdProfile::Paper, true, true, [(1, 2000.0), (2, 2000.0)], 4000.0),
            (RedPdProfile::Paper, true, false, [(1, 4.0), (2, 2.0)], 4000.0),
            (RedPdProfile::Ns2, false, true, [(1, 2000.0), (2, 2000.0)], 4000.0),
        ] {
            let mut cfg = RedPdConfig {
                profile,
                quantum_in_bytes,
                ..fixed(1.0)
            };
            cfg.red.bytes = bytes;
            cfg.red.mean_pktsize = Bytes(500);
            let mut h = red_pd(cfg);
            (0..4).for_each(|_| _ = h.arrive(0, 1, 500));
            (0..2).for_each(|_| _ = h.arrive(0, 2, 1000));
            assert_eq!(
                h.q.current,
                BTreeMap::from(listed),
                "{profile:?}, bytes = {bytes}, {quantum_in_bytes}"
            );
            assert_eq!((h.q.interval_arrivals, h.q.interval_drops), (total, total));
        }
    }

    #[test]
    fn count_mode_identifies_without_monitoring_and_counts_rounds_from_the_warmup() {
        // RED drops every arrival: a flow is listed in each 80 ms interval (2R) it sends in.
        // Flow 1 sends in the intervals of `pattern`, flow 2 in all of them.
        let cfg = RedPdConfig {
            identification: Identification::Count,
            ..fixed(1.0)
        };
        let red = Red::new(&cfg.red, &LINK, stream(7, "red-pd-test/red"));
        let warmup = 500 * MS;
        let mut h = QdiscHarness::new(Box::new(RedPd::new(&cfg, red, stream(7, "red-pd-test"), warmup)));
        let interval = 80 * MS;
        let pattern = [1, 1, 0, 1, 0, 0, 1, 1, 1, 0, 1, 0, 0, 0, 1, 1, 0, 1, 1, 1];
        for (i, &sends) in pattern.iter().enumerate() {
            let t = i as Time * interval + 10 * MS;
            if sends == 1 {
                h.arrive(t, 1, 1000);
            }
            h.arrive(t, 2, 1000);
        }
        // Closes list 19 (the last of `pattern`).
        h.arrive(pattern.len() as Time * interval + 10 * MS, 3, 1000);
        // A round is a close with M = 5 lists (list 4 on), from the warmup: lists 6 to 19
        // close at 560 ms … 1.6 s. Flow 1 is identified where 3 of its last 5 intervals sent.
        let rounds: Vec<usize> = (4..pattern.len())
            .filter(|&i| (i as Time + 1) * interval >= warmup)
            .collect();
        let expected = rounds
            .iter()
            .filter(|&&i| pattern[i - 4..=i].iter().sum::<i32>() >= 3)
            .count();
        let counters = h.q.counters();
        let counter = |name: &str| counters.iter().find(|c| c.0 == name).unwrap().1;
        assert_eq!(counter("identification_rounds"), rounds.len() as f64);
        let identified = |flow: FlowId| {
            let rows = h.q.flow_counters();
            let row = rows.iter().find(|r| r.flow == flow).unwrap();
            row.counters.iter().find(|c| c.0 == "identified_rounds").unwrap().1
        };
        assert_eq!((identified(1), identified(2)), (expected as f64, rounds.len() as f64));
        assert!(expected > 0 && expected < rounds.len());
        // Nothing monitored, nothing pre-filtered.
        assert!(h.q.monitored.is_empty());
        assert_eq!((counter("monitor_starts"), h.drops(DropReason::PreFilter)), (0.0, 0));
    }

    #[test]
    fn count_mode_identifies_a_cbr_flow_as_often_as_eq4() {
        // §4.4: a flow at γ·f(R,p) through a queue dropping each packet with probability p sends
        // γK/(Mp) packets per eq. 3 interval; P(1) = 1 − (1 − p)^(γK/(Mp)) and it is identified
        // in a round with P(at least K of M) (eq. 4). γ = 1, p = 5 %: 12 packets, P(1) = 0.460,
        // eq. 4 = 0.425 (targets 1.B, redpd-eq4).
        let (p, gamma) = (0.05, 1.0);
        let mut h = red_pd(RedPdConfig {
            identification: Identification::Count,
            min_interval: Some(Seconds(1e-9)),
            ..fixed(p)
        });
        let f = 1.5f64.sqrt() / (0.040 * p.sqrt());
        let gap = from_secs(1.0 / (gamma * f));
        let p1 = 1.0 - (1.0 - p).powf(gamma * 3.0 / (5.0 * p));
        let binomial = |j: i32| [1.0, 5.0, 10.0, 10.0, 5.0, 1.0][j as usize] * p1.powi(j) * (1.0 - p1).powi(5 - j);
        let eq4: f64 = (3..=5).map(binomial).sum();
        assert!((eq4 - 0.425).abs() < 5e-4, "{eq4}");
        let mut t = 0;
        while h.q.stats.identification_rounds < 20_000 {
            h.arrive(t, 1, 1000);
            h.depart(t);
            t += gap;
        }
        let identified = h.q.records.get(&1).map_or(0, |r| r.identified_rounds);
        let fraction = identified as f64 / 20_000.0;
        // Overlapping rounds share lists: the fraction's variance is at most (2M − 1)·¼/n,
        // σ ≤ 0.011 for n = 20 000; three of those.
        assert!(
            (fraction - eq4).abs() < 0.035,
            "identified in {fraction} of the rounds, eq. 4 {eq4}"
        );
        assert!(h.q.monitored.is_empty());
    }

    #[test]
    fn schedule_monitors_penalises_and_unmonitors_at_the_given_times() {
        // ns-2's validation suite `unresponsive` in small: no identification; flow 1 monitored at
        // 1 s with 0.2, declared unresponsive at 2 s (penalty 3: 0.6), unmonitored at 3 s. RED
        // drops 10 % of everything, so flow 2 is in every list, but nothing identifies it.
        let mut h = red_pd(RedPdConfig {
            identification: Identification::Off,
            unresponsive_penalty: 3.0,
            schedule: vec![
                ScheduledAction {
                    at: Seconds(1.0),
                    flow: 1,
                    action: Action::Monitor,
                    probability: Some(0.2),
                },
                ScheduledAction {
                    at: Seconds(3.0),
                    flow: 1,
                    action: Action::Unmonitor,
                    probability: None,
                },
                ScheduledAction {
                    at: Seconds(2.0),
                    flow: 1,
                    action: Action::Unresponsive,
                    probability: None,
                },
            ],
            ..fixed(0.1)
        });
        let mut prefiltered = [[0u32; 4]; 2];
        let mut t = 0;
        while t < 4 * NANOS_PER_SEC {
            for flow in [1, 2] {
                if h.arrive(t, flow, 1000) == Verdict::Dropped(DropReason::PreFilter) {
                    prefiltered[flow as usize - 1][(t / NANOS_PER_SEC) as usize] += 1;
                }
                h.depart(t);
            }
            t += MS;
        }
        // 1000 arrivals a second: binomial σ = 13 at 0.2, 15 at 0.6.
        let [one, two] = prefiltered;
        assert_eq!((one[0], one[3], two), (0, 0, [0; 4]), "{prefiltered:?}");
        assert!(one[1].abs_diff(200) < 40 && one[2].abs_diff(600) < 45, "{one:?}");
        let rows = h.q.flow_counters();
        assert_eq!(rows.len(), 1);
        let value = |name: &str| rows[0].counters.iter().find(|c| c.0 == name).unwrap().1;
        assert_eq!(
            [
                "monitored",
                "identifications",
                "first_monitored_at",
                "unresponsive_at",
                "last_released_at"
            ]
            .map(value),
            [0.0, 0.0, 1.0, 2.0, 3.0]
        );
        assert!((value("time_monitored") - 2.0).abs() < 1e-9);
    }

    /// Puts five closed lists of `length` each, `drops` per flow in every one.
    fn lists(h: &mut QdiscHarness<RedPd>, length: Time, drops: &[(FlowId, f64)]) {
        h.q.lists = (0..5)
            .map(|_| DropList {
                length,
                drops: drops.iter().copied().collect(),
            })
            .collect();
    }

    #[test]
    fn increase_is_eq5_quantum_or_doubles_when_the_quantum_exceeds_the_existing_rate() {
        // Over the last 5 lists flow 1 had 25 drops and flow 2 had 5: avg_drop_count = 15, so at
        // p = 2 % eq. 5 gives quanta 25/15·p = 0.0333 and 5/15·p = 0.00667 (ratio = drop ratio).
        let p = 0.02;
        let now = 10 * NANOS_PER_SEC;
        let setup = |p1: f64, p2: f64, unresponsive: bool| {
            // The §6.2 test off: the flags below stay as set.
            let mut h = red_pd(RedPdConfig {
                unresponsive_test: false,
                ..Default::default()
            });
            lists(&mut h, 100 * MS, &[(1, 5.0), (2, 1.0)]);
            monitor(&mut h, 1, p1, 0);
            monitor(&mut h, 2, p2, 0);
            h.q.monitored.values_mut().for_each(|m| m.unresponsive = unresponsive);
            h
        };
        let mut h = setup(0.01, 0.2, false);
        h.q.identify(now, p, p, &BTreeMap::new());
        // Flow 1: the quantum exceeds its existing drop rate 0.01 + 0.99·p = 0.0298: doubled.
        assert_eq!(probability(&h, 1), Some(0.02));
        // Flow 2: existing 0.2 + 0.8·p = 0.216 > quantum: P + quantum.
        assert!((probability(&h, 2).unwrap() - (0.2 + 0.02 / 3.0)).abs() < 1e-15);

        // Unresponsive: twice the step (ns-2: 3·P when doubling, P + 2·quantum otherwise).
        let mut h = setup(0.01, 0.2, true);
        h.q.identify(now, p, p, &BTreeMap::new());
        assert_eq!(probability(&h, 1), Some(0.03));
        assert!((probability(&h, 2).unwrap() - (0.2 + 2.0 * 0.02 / 3.0)).abs() < 1e-15);

        // Within M − 1 intervals (4 × 100 ms) of the last change: no increase.
        let mut h = setup(0.01, 0.2, false);
        h.q.identify(399 * MS, p, p, &BTreeMap::new());
        assert_eq!((probability(&h, 1), probability(&h, 2)), (Some(0.01), Some(0.2)));

        // Unmonitored flows start at min(quantum, 2p): 0.0333 and 0.00667.
        let mut h = red_pd(RedPdConfig::default());
        lists(&mut h, 100 * MS, &[(1, 5.0), (2, 1.0)]);
        h.q.identify(now, p, p, &BTreeMap::new());
        assert!((probability(&h, 1).unwrap() - 0.02 * 25.0 / 15.0).abs() < 1e-15);
        assert!((probability(&h, 2).unwrap() - 0.02 * 5.0 / 15.0).abs() < 1e-15);
        // ... at most 2p: 50 drops against an average of 20 would give 2.5·p.
        let mut h = red_pd(RedPdConfig::default());
        lists(&mut h, 100 * MS, &[(1, 10.0), (2, 1.0), (3, 1.0)]);
        h.q.identify(now, p, p, &BTreeMap::new());
        assert_eq!(probability(&h, 1), Some(2.0 * p));
    }

    #[test]
    fn a_probability_past_one_keeps_half_its_complement() {
        let params = RedPdConfig::default().params(0);
        assert_eq!(params.raised(0.9, 0.3, 0.01, false), 0.95);
        assert!((params.raised(0.9, 0.3, 0.01, true) - (1.0 - 0.1 / 3.0)).abs() < 1e-15);
    }

    #[test]
    fn release_divides_by_beta_or_subtracts_p_d_whichever_is_less_every_l_intervals() {
        let mut h = red_pd(RedPdConfig::default());
        // Flow 1 in none of the lists, flow 2 in one (of K = 3 needed): hysteresis, no change.
        lists(&mut h, 100 * MS, &[]);
        h.q.lists[4].drops.insert(2, 1.0);
        monitor(&mut h, 1, 0.3, 0);
        monitor(&mut h, 2, 0.3, 0);
        // l = 3 intervals of 100 ms.
        h.q.release(299 * MS);
        assert_eq!(probability(&h, 1), Some(0.3));
        h.q.release(300 * MS);
        // 0.3/2 = 0.15 would cut more than p_d = 0.05.
        assert_eq!((probability(&h, 1), probability(&h, 2)), (Some(0.25), Some(0.3)));
        monitor(&mut h, 1, 0.06, 0);
        h.q.release(300 * MS);
        assert_eq!(probability(&h, 1), Some(0.03));
        // Below P_minThresh = 0.005: unmonitored.
        monitor(&mut h, 1, 0.0099, 0);
        h.q.release(300 * MS);
        assert_eq!(probability(&h, 1), None);
        // Unresponsive: β = 1.5, l = 5 intervals; 0.12/1.5 = 0.08 cuts less than 0.05.
        monitor(&mut h, 3, 0.12, 0);
        h.q.monitored.get_mut(&3).unwrap().unresponsive = true;
        h.q.release(499 * MS);
        assert_eq!(probability(&h, 3), Some(0.12));
        h.q.release(500 * MS);
        assert!((probability(&h, 3).unwrap() - 0.08).abs() < 1e-15);
    }

    #[test]
    fn release_time_matches_eq7_worked_example() {
        // §5.2: P = 0.75, p = 1 % → n = 13 subtractive and m = 5 multiplicative rounds of
        // l = 3 intervals: "The release time for p = 1% comes out to be 10.58 seconds".
        // RED drops every arrival with p = 1 %, so eq. 3 runs at p = 1 %: 0.19596 s intervals.
        let mut h = red_pd(fixed(0.01));
        // Flow 2 clocks the intervals (its drops list it, not flow 1, which sends nothing).
        let mut t = 0;
        while t < 2 * NANOS_PER_SEC {
            h.arrive(t, 2, 1000);
            t += 5 * MS;
        }
        let start = h.q.interval_start;
        monitor(&mut h, 1, 0.75, start);
        let mut steps = vec![0.75];
        let released = loop {
            h.arrive(t, 2, 1000);
            t += 5 * MS;
            match probability(&h, 1) {
                Some(p) if p != *steps.last().unwrap() => steps.push(p),
                Some(_) => {}
                None => break h.q.interval_start,
            }
            assert!(t < 30 * NANOS_PER_SEC, "not released: {steps:?}");
        };
        // Rounds: the cuts seen, plus the one that took P below P_minThresh and released the
        // flow. Subtractive rounds start above 2·p_d (where p_d < P/2), the rest are halvings.
        let rounds = steps.len();
        let subtractive = steps.iter().filter(|&&p| p > 0.1 + 1e-9).count();
        assert_eq!((subtractive, rounds - subtractive), (13, 5), "{steps:?}");
        let seconds = to_secs(released - start);
        assert!((seconds - 10.58).abs() < 0.005, "released after {seconds} s");
    }

    #[test]
    fn flow_counters_report_identification_monitoring_and_release() {
        // Fixed p = 1 %: every interval is eq. 3's 0.19596 s. Flow 1 sends 1000 pkt/s (3.3·f(R,p))
        // for 5 s, then stops; flow 2 (200 pkt/s) keeps the intervals closing; flow 3 sends one
        // packet a second, so it is in at most one of any M = 5 lists (0.98 s) and is never listed.
        let mut h = red_pd(fixed(0.01));
        let value = |h: &QdiscHarness<RedPd>, flow: FlowId, name: &str| {
            let rows = h.q.flow_counters();
            let row = rows.iter().find(|r| r.flow == flow)?;
            Some(row.counters.iter().find(|c| c.0 == name).unwrap().1)
        };
        let mut t = 0;
        while t < 5 * NANOS_PER_SEC {
            h.arrive(t, 1, 1000);
            if t % (5 * MS) == 0 {
                h.arrive(t, 2, 1000);
            }
            if t % NANOS_PER_SEC == 0 {
                h.arrive(t, 3, 1000);
            }
            t += MS;
        }
        assert_eq!(value(&h, 1, "monitored"), Some(1.0));
        assert_eq!(value(&h, 1, "prefilter_probability"), probability(&h, 1));
        assert!(probability(&h, 1).unwrap() > 0.0);
        // §4.2: identified no earlier than the close of the K-th list.
        let first = value(&h, 1, "first_monitored_at").unwrap();
        assert!(first >= 3.0 * 0.19596 - 1e-4, "identified at {first} s");
        assert!(value(&h, 1, "last_released_at").unwrap().is_nan());
        assert_eq!(value(&h, 3, "identifications"), None);
        // Flow 1 stops; it is released once its probability falls below P_minThresh (§5.2).
        while probability(&h, 1).is_some() {
            h.arrive(t, 2, 1000);
            t += 5 * MS;
            assert!(t < 30 * NANOS_PER_SEC, "flow 1 not released");
        }
        let released = value(&h, 1, "last_released_at").unwrap();
        assert!(released > 5.0, "released at {released} s");
        assert_eq!(value(&h, 1, "monitored"), Some(0.0));
        assert_eq!(value(&h, 1, "prefilter_probability"), Some(0.0));
        let spans = value(&h, 1, "identifications").unwrap();
        assert!(spans >= 1.0);
        if spans == 1.0 {
            let monitored = value(&h, 1, "time_monitored").unwrap();
            assert!(
                (monitored - (released - first)).abs() < 1e-9,
                "{monitored} vs {released} − {first}"
            );
        }
    }

    #[test]
    fn prefilter_drops_only_above_min_th_with_more_than_one_packet_queued() {
        // w_q = 1: RED's average is the queue the last arrival found; min_th = 5.
        let mut h = red_pd(RedPdConfig {
            red: RedConfig {
                w_q: 1.0,
                ..Default::default()
            },
            ..Default::default()
        });
        monitor(&mut h, 1, 1.0, 0);
        for _ in 0..3 {
            h.arrive(0, 2, 1000);
        }
        // Average 2 < min_th: flow 1 passes its pre-filter (probability 1) untouched.
        assert_eq!(h.arrive(0, 1, 1000), Verdict::Enqueued);
        for _ in 0..4 {
            h.arrive(0, 2, 1000);
        }
        assert!(h.q.average().unwrap() >= 5.0);
        assert_eq!(h.arrive(0, 1, 1000), Verdict::Dropped(DropReason::PreFilter));
        // The average stays (it moves on arrivals) but one packet is left: no pre-filter drop.
        while h.q.len_packets() > 1 {
            h.depart(0);
        }
        assert!(h.q.average().unwrap() >= 5.0);
        assert_eq!(h.arrive(0, 1, 1000), Verdict::Enqueued);
        // An unresponsive flow is dropped whatever the queue (ns-2's noidle_ off): average now 1.
        h.q.monitored.get_mut(&1).unwrap().unresponsive = true;
        assert_eq!(h.arrive(0, 1, 1000), Verdict::Dropped(DropReason::PreFilter));
        // ... unless `noidle`, which spares it while at most one packet is queued.
        h.depart(0);
        h.q.params.noidle = true;
        assert_eq!(h.arrive(0, 1, 1000), Verdict::Enqueued);
        // Pre-filter drops are counted as such and kept off the drop list (§5.1).
        assert_eq!(h.drops(DropReason::PreFilter), 2);
        assert!(!h.q.current.contains_key(&1));
        let m = &h.q.monitored[&1];
        assert_eq!((m.arrivals, m.drops), (5.0, 2.0));
    }

    /// A history of (arrival rate, drop rate) records, oldest first.
    fn history(records: &[(f64, f64)]) -> VecDeque<(f64, f64)> {
        records.iter().copied().collect()
    }

    #[test]
    fn unresponsive_test_declares_a_flow_whose_rate_does_not_fall_as_the_root_of_its_drop_rate() {
        // A CBR flow: its drop rate doubles twice, its arrival rate stays. Three pairs, all bad.
        assert!(unresponsive(&history(&[(500.0, 0.05), (500.0, 0.10), (500.0, 0.20)])));
        // Two records are one pair: not enough to judge.
        assert!(!unresponsive(&history(&[(500.0, 0.05), (500.0, 0.20)])));
        // A conformant flow (eq. 1): the drop rate quadruples, the arrival rate halves (√4).
        // Binary fractions keep x and √x exact: the pairs sit on the √x line, which is good.
        let conformant = [(400.0, 1.0 / 64.0), (200.0, 4.0 / 64.0), (100.0, 16.0 / 64.0)];
        assert!(!unresponsive(&history(&conformant)));
        // One that falls by only the fourth root of x each time: bad pairs.
        assert!(unresponsive(&history(&[
            (400.0, 1.0 / 64.0),
            (400.0 / 2f64.sqrt(), 4.0 / 64.0),
            (200.0, 16.0 / 64.0),
            (200.0 / 2f64.sqrt(), 64.0 / 64.0),
        ])));
    }

    #[test]
    fn an_unresponsive_flow_is_declared_responsive_once_its_latest_records_behave() {
        let mut m = Monitored::new(0.1, 0);
        // Each period lasts 1 s: `rate` arrivals, `rate·p` drops.
        let mut verdicts = Vec::new();
        let mut now = 0;
        let cbr = [(512.0, 1.0 / 4096.0), (512.0, 2.0 / 4096.0), (512.0, 4.0 / 4096.0)];
        let conformant = (0..5).map(|i| (256.0 / 2f64.powi(i), 16.0 * 4f64.powi(i) / 4096.0));
        for (rate, p) in cbr.into_iter().chain(conformant) {
            m.arrivals = rate;
            m.drops = rate * p;
            now += NANOS_PER_SEC;
            record_period(&mut m, now, 5);
            verdicts.push(unresponsive(&m.history));
        }
        // The third record makes three bad pairs (good 0, bad 3): declared. The fourth adds one
        // good pair (4 → 16: x = 1/4, rate halved) and one bad (2 → 16: x = 1/8, rate halved, not
        // ÷2.8): good 1, bad 4, still declared. The fifth adds a second good pair (16 → 64):
        // good 2, bad 4 < 4·good: responsive again, and so on as the CBR records age out.
        assert_eq!(verdicts, [false, false, true, true, false, false, false, false]);
    }

    #[test]
    fn a_cbr_flow_above_the_reference_tcp_is_monitored_and_declared_unresponsive() {
        // Ambient p = 5 %: f(R, p) = √1.5/(0.04·√0.05) = 137 packets/s. Flow 1 sends 500/s
        // (3.7·f), flow 2 sends 50/s (0.37·f).
        let mut h = red_pd(fixed(0.05));
        let (mut t, mut passed) = (0, 0);
        while t < 20 * NANOS_PER_SEC {
            let verdict = h.arrive(t, 1, 1000);
            passed += (t >= 10 * NANOS_PER_SEC && verdict != Verdict::Dropped(DropReason::PreFilter)) as u32;
            if t % (20 * MS) == 0 {
                h.arrive(t, 2, 1000);
            }
            // The link sends everything: only RED's fixed_p and the pre-filter drop.
            while h.depart(t).is_some() {}
            t += 2 * MS;
        }
        let heavy = &h.q.monitored[&1];
        assert!(heavy.unresponsive, "{heavy:?}");
        assert!(h.q.monitored.get(&2).is_none_or(|m| !m.unresponsive));
        assert_eq!(h.q.stats.unresponsive_declarations, 1);
        // Over the last 10 s the pre-filter holds flow 1's arrivals at the output queue to at most
        // f(R, p), RED-PD's target rate (§5), without starving it. Eq. 4 identifies flows below f
        // too, and an unresponsive flow's larger increases overshoot, so the rate sits below f.
        let f = 1.5f64.sqrt() / (0.040 * 0.05f64.sqrt());
        let rate = passed as f64 / 10.0;
        assert!(rate <= f && rate >= 0.1 * f, "{rate} packets/s into RED, f(R, p) = {f}");
    }

    #[test]
    fn uniformize_spaces_prefilter_drops_as_red_does_by_default_under_ns2() {
        // At P = 1/4 the k-th arrival after a drop is dropped with probability P/(1 − (k−1)·P):
        // gaps uniform on {1, …, 4}, mean 2.5, so 40 % of arrivals go (independent drops: 25 %).
        // The gaps' variance is (4² − 1)/12 = 1.25; renewal theory gives the count's σ.
        let n = 40_000;
        let independent = (0.25, (n as f64 * 0.25 * 0.75).sqrt());
        let spaced = (0.4, (n as f64 * 1.25 / 2.5f64.powi(3)).sqrt());
        for (profile, uniformize, (fraction, sigma)) in [
            (RedPdProfile::Paper, None, independent),
            (RedPdProfile::Paper, Some(true), spaced),
            (RedPdProfile::Ns2, None, spaced),
            (RedPdProfile::Ns2, Some(false), independent),
        ] {
            // RED drops nothing (fixed_p = 0); fixed_p also keeps the pre-filter gate open.
            let mut h = red_pd(RedPdConfig {
                profile,
                uniformize,
                ..fixed(0.0)
            });
            monitor(&mut h, 1, 0.25, 0);
            for i in 0..n {
                h.arrive(i, 1, 1000);
                h.depart(i);
            }
            let drops = h.drops(DropReason::PreFilter) as f64;
            assert!(
                (drops - fraction * n as f64).abs() < 3.0 * sigma,
                "{profile:?}, uniformize {uniformize:?}: {drops} of {n}"
            );
        }
    }

    fn ns2(cfg: RedPdConfig) -> RedPdConfig {
        RedPdConfig {
            profile: RedPdProfile::Ns2,
            ..cfg
        }
    }

    /// The flows' arrivals and drops (pre-filter + RED) in the interval just closed, `ns2`'s counters.
    fn seen(flows: &[(FlowId, f64, f64)]) -> BTreeMap<FlowId, FlowInterval> {
        flows
            .iter()
            .map(|&(flow, arrivals, drops)| (flow, FlowInterval { arrivals, drops }))
            .collect()
    }

    #[test]
    fn ns2_engine_starts_at_10_1_s_and_its_first_list_covers_the_start() {
        // Every arrival is lost (FRp, p = 1), so a flow is listed in each interval it sends in;
        // intervals after the first are 2R = 80 ms. Flow 1 sends every 100 ms.
        let mut h = red_pd(ns2(fixed(1.0)));
        assert_eq!(h.q.interval_end, 10_100 * MS);
        for t in (0..=10_000).step_by(100) {
            h.arrive(t * MS, 1, 1000);
        }
        assert!(h.q.lists.is_empty() && h.q.monitored.is_empty());
        // 10.15 s closes [0, 10.1] with the flow's 101 losses; 10.23 s closes the second list.
        h.arrive(10_150 * MS, 1, 1000);
        assert_eq!(h.q.lists[0].length, 10_100 * MS);
        assert_eq!(h.q.lists[0].drops, BTreeMap::from([(1, 101_000.0)]));
        h.arrive(10_230 * MS, 1, 1000);
        assert_eq!(h.q.lists.len(), 2);
        assert!(h.q.monitored.is_empty());
        // The third list (K = 3) closes at 10.26 s: monitored then, not before.
        h.arrive(10_259 * MS, 1, 1000);
        assert!(h.q.monitored.is_empty());
        h.arrive(10_260 * MS, 1, 1000);
        assert_eq!(h.q.monitored.keys().copied().collect::<Vec<_>>(), vec![1]);
        assert_eq!(h.q.records[&1].first_monitored, Some(10_260 * MS));
        // The paper's engine starts at once: its first interval is eq. 3's at p unknown, 10R.
        assert_eq!(red_pd(RedPdConfig::default()).q.interval_end, 400 * MS);
        let started = RedPdConfig {
            engine_start: Some(Seconds(2.0)),
            ..Default::default()
        };
        assert_eq!(red_pd(started).q.interval_end, 2000 * MS);
    }

    #[test]
    fn ns2_neither_monitors_nor_raises_at_a_last_drop_rate_of_0_1_percent_or_less() {
        // Flows 1 and 2 in all five lists and dropped in the last interval; flow 2 monitored at 0.1.
        let round = |profile, last: f64| {
            let mut h = red_pd(RedPdConfig {
                profile,
                ..Default::default()
            });
            lists(&mut h, 100 * MS, &[(1, 5.0), (2, 5.0)]);
            monitor(&mut h, 2, 0.1, 0);
            let flows = seen(&[(1, 100_000.0, 5000.0), (2, 100_000.0, 5000.0)]);
            // An average above the floor: only the last interval's rate gates.
            h.q.identify(10 * NANOS_PER_SEC, last, 0.01, &flows);
            (probability(&h, 1), probability(&h, 2))
        };
        assert_eq!(round(RedPdProfile::Ns2, 0.001), (None, Some(0.1)));
        let (started, raised) = round(RedPdProfile::Ns2, 0.0011);
        assert_eq!(started, Some(0.0011));
        assert!((raised.unwrap() - 0.1011).abs() < 1e-15, "{raised:?}");
        // The paper has no floor.
        assert_eq!(round(RedPdProfile::Paper, 0.001).0, Some(0.001));
    }

    #[test]
    fn ns2_leaves_a_flow_without_drops_in_the_last_interval_alone() {
        // Flows 1–4 in lists 0–3; flows 2 and 3 in the last list too. Flow 3 and 4 monitored at 0.1.
        // In the interval just closed flow 1 had no drops, flow 2 RED's, flow 3 pre-filter drops
        // only (none by RED: `seen` counts them, the list does not), flow 4 none.
        let round = |profile| {
            let mut h = red_pd(RedPdConfig {
                profile,
                ..Default::default()
            });
            lists(&mut h, 100 * MS, &[(1, 5.0), (2, 5.0), (3, 5.0), (4, 5.0)]);
            h.q.lists[4].drops = BTreeMap::from([(2, 5.0)]);
            monitor(&mut h, 3, 0.1, 0);
            monitor(&mut h, 4, 0.1, 0);
            let flows = seen(&[
                (1, 9000.0, 0.0),
                (2, 9000.0, 5000.0),
                (3, 9000.0, 1000.0),
                (4, 9000.0, 0.0),
            ]);
            h.q.identify(10 * NANOS_PER_SEC, 0.02, 0.02, &flows);
            [1, 2, 3, 4].map(|flow| probability(&h, flow))
        };
        let [one, two, three, four] = round(RedPdProfile::Ns2);
        assert_eq!((one, four), (None, Some(0.1)));
        assert!(two.is_some());
        assert!(three.unwrap() > 0.1, "{three:?}");
        // The paper's engine raises every identified flow.
        let [one, .., four] = round(RedPdProfile::Paper);
        assert!(one.is_some() && four.unwrap() > 0.1);
    }

    #[test]
    fn ns2_waits_at_least_0_4_s_counting_recorded_intervals_and_across_unmonitoring() {
        let now = 10 * NANOS_PER_SEC;
        let flows = seen(&[(1, 9000.0, 1000.0), (2, 9000.0, 1000.0)]);
        // Four recorded 80-ms intervals wait 320 ms: the 0.4 s floor holds. Flow 1 is monitored
        // and flow 2 was unmonitored by the engine, `since` before `now`.
        let round = |since: Time| {
            let mut h = red_pd(ns2(RedPdConfig::default()));
            lists(&mut h, 80 * MS, &[(1, 5.0), (2, 5.0)]);
            h.q.recorded_intervals = VecDeque::from([80 * MS; 5]);
            monitor(&mut h, 1, 0.1, now - since);
            h.q.unmonitored_at.insert(2, now - since);
            h.q.identify(now, 0.02, 0.02, &flows);
            (probability(&h, 1), probability(&h, 2))
        };
        assert_eq!(round(399 * MS), (Some(0.1), None));
        let (raised, started) = round(400 * MS);
        assert!(raised.unwrap() > 0.1 && started.is_some());
        // Longer recorded intervals wait their sum: 4 × 150 ms.
        let mut h = red_pd(ns2(RedPdConfig::default()));
        lists(&mut h, 150 * MS, &[(1, 5.0)]);
        h.q.recorded_intervals = VecDeque::from([150 * MS; 5]);
        monitor(&mut h, 1, 0.1, now - 599 * MS);
        h.q.identify(now, 0.02, 0.02, &flows);
        assert_eq!(probability(&h, 1), Some(0.1));
        h.q.identify(now + MS, 0.02, 0.02, &flows);
        assert!(probability(&h, 1).unwrap() > 0.1);

        // A release keeps the unmonitor time: re-identified 0.3 s later, the flow waits.
        let mut h = red_pd(ns2(RedPdConfig::default()));
        lists(&mut h, 80 * MS, &[]);
        monitor(&mut h, 1, 0.005, 0);
        h.q.release(now);
        assert_eq!((probability(&h, 1), h.q.unmonitored_at.get(&1)), (None, Some(&now)));
        lists(&mut h, 80 * MS, &[(1, 5.0)]);
        h.q.identify(now + 300 * MS, 0.02, 0.02, &flows);
        assert_eq!(probability(&h, 1), None);
        h.q.identify(now + 400 * MS, 0.02, 0.02, &flows);
        assert!(probability(&h, 1).is_some());
        assert!(!h.q.unmonitored_at.contains_key(&1));
        // The paper's engine monitors a released flow again at once.
        let mut h = red_pd(RedPdConfig::default());
        lists(&mut h, 80 * MS, &[]);
        monitor(&mut h, 1, 0.005, 0);
        h.q.release(now);
        lists(&mut h, 80 * MS, &[(1, 5.0)]);
        h.q.identify(now + 80 * MS, 0.02, 0.02, &BTreeMap::new());
        assert!(probability(&h, 1).is_some());
    }

    #[test]
    fn ns2_tests_before_appending_the_interval_and_never_clears_a_flow() {
        let mut h = red_pd(ns2(RedPdConfig::default()));
        lists(&mut h, 100 * MS, &[(1, 5.0)]);
        // Two stored records of a CBR whose drop rate doubled; the next interval doubles it again.
        monitor(&mut h, 1, 0.1, 0);
        h.q.monitored.get_mut(&1).unwrap().history = history(&[(500.0, 0.05), (500.0, 0.10)]);
        // Then five intervals of a conformant flow: the drop rate × 4, the rate ÷ 2 (eq. 1).
        let intervals = [(500.0, 0.2), (500.0, 0.4)]
            .into_iter()
            .chain((0..5).map(|i| (400.0 / 2f64.powi(i), 4f64.powi(i) / 1024.0)));
        let mut verdicts = Vec::new();
        for (i, (rate, p)) in intervals.enumerate() {
            // One-second intervals: the record is (rate, p).
            let now = (10 + i as Time) * NANOS_PER_SEC;
            h.q.interval_start = now - NANOS_PER_SEC;
            h.q.identify(now, 0.05, 0.05, &seen(&[(1, rate, rate * p)]));
            verdicts.push(h.q.monitored[&1].unresponsive);
        }
        // With three records a CBR makes three bad pairs; the first increase saw only two (the
        // third was appended after the test), so the flow is declared at the second.
        assert_eq!(verdicts, [false, true, true, true, true, true, true]);
        assert_eq!(h.q.stats.unresponsive_declarations, 1);
        // Its last five records are conformant (§6.2 would clear it), and it stays unresponsive.
        let m = &h.q.monitored[&1];
        assert_eq!(m.history.len(), 5);
        assert!(!unresponsive(&m.history));
    }

    #[test]
    fn ns2_first_record_is_the_interval_before_monitoring() {
        // Flow 1 in all five lists, 100 kB arrived and 5 kB dropped by RED in the 0.5-s interval.
        let mut h = red_pd(ns2(RedPdConfig::default()));
        lists(&mut h, 100 * MS, &[(1, 5.0)]);
        h.q.interval_start = 9_500 * MS;
        h.q.identify(10 * NANOS_PER_SEC, 0.02, 0.02, &seen(&[(1, 100_000.0, 5000.0)]));
        assert_eq!(h.q.monitored[&1].history, history(&[(200_000.0, 0.05)]));
    }

    #[test]
    fn ns2_doubles_when_the_quantum_exceeds_the_probability_alone() {
        let paper = RedPdConfig::default().params(0);
        let ns2 = ns2(RedPdConfig::default()).params(0);
        // P = 0.01, quantum 0.02 at p = 0.02: above P, below P + (1 − P)·p = 0.0298.
        assert_eq!(ns2.raised(0.01, 0.02, 0.02, false), 0.02);
        assert_eq!(paper.raised(0.01, 0.02, 0.02, false), 0.03);
        // Unresponsive: 3·P.
        assert_eq!(ns2.raised(0.01, 0.02, 0.02, true), 0.03);
        // The largest first probability, 0.5, doubled: exactly 1 in ns-2, 0.75 in the paper's reading.
        assert_eq!(ns2.raised(0.5, 0.6, 0.02, false), 1.0);
        assert_eq!(paper.raised(0.5, 0.6, 0.02, false), 0.75);
    }

    #[test]
    fn ns2_release_unmonitors_at_p_min_inclusive_before_cutting_and_cuts_unresponsive_flows_more() {
        // No flow listed; five recorded 200-ms intervals: responsive flows wait 3 of them (0.6 s),
        // unresponsive ones 5 (1 s).
        let now = 10 * NANOS_PER_SEC;
        let release = |profile, start: f64, unresponsive: bool, since: Time| {
            let mut h = red_pd(RedPdConfig {
                profile,
                ..Default::default()
            });
            lists(&mut h, 200 * MS, &[]);
            h.q.recorded_intervals = VecDeque::from([200 * MS; 5]);
            monitor(&mut h, 1, start, now - since);
            h.q.monitored.get_mut(&1).unwrap().unresponsive = unresponsive;
            h.q.release(now);
            probability(&h, 1)
        };
        let ns2 = RedPdProfile::Ns2;
        let paper = RedPdProfile::Paper;
        // At P_minThresh exactly: unmonitored, not cut.
        assert_eq!(release(ns2, 0.005, false, 600 * MS), None);
        // Just above: cut to half, below P_minThresh, and kept for one more round (the paper
        // unmonitors it in this round).
        assert_eq!(release(ns2, 0.0099, false, 600 * MS), Some(0.00495));
        assert_eq!(release(paper, 0.0099, false, 600 * MS), None);
        assert_eq!(release(ns2, 0.0099, false, 599 * MS), Some(0.0099));
        // Unresponsive: P > 0.075 loses 0.05 (the paper's max(P/1.5, P − 0.05) gives 0.08).
        let cut = release(ns2, 0.12, true, 1000 * MS).unwrap();
        assert!((cut - 0.07).abs() < 1e-15, "{cut}");
        assert!((release(paper, 0.12, true, 1000 * MS).unwrap() - 0.08).abs() < 1e-15);
        assert_eq!(release(ns2, 0.12, true, 999 * MS), Some(0.12));
        assert_eq!(release(ns2, 0.06, true, 1000 * MS), Some(0.06 / 1.5));
        assert_eq!(release(ns2, 0.0025, true, 1000 * MS), None);
    }

    #[test]
    fn ns2_release_runs_1_ms_after_the_close_and_waits_for_the_interval_just_scheduled() {
        // Five closed 200-ms lists, four of them recorded; flow 1 monitored at 0.3 and never
        // listed. The interval closing at 10 s has a drop rate of 0.1 %: eq. 3 gives 0.62 s,
        // clamped to 0.4 s and recorded, so at 10.001 s the wait of 3 is 0.4 + 0.2 + 0.2 s.
        let run = |profile, last_change: Time| {
            let mut h = red_pd(RedPdConfig {
                profile,
                ..Default::default()
            });
            lists(&mut h, 200 * MS, &[]);
            h.q.recorded_intervals = VecDeque::from([200 * MS; 4]);
            (h.q.interval_start, h.q.interval_end) = (9_800 * MS, 10 * NANOS_PER_SEC);
            monitor(&mut h, 1, 0.3, last_change);
            let mut steps = Vec::new();
            for t in [10_000, 10_000, 10_001] {
                if h.q.interval_end == t * MS {
                    close_with(&mut h, 1000.0, &[(2, 1.0)]);
                } else {
                    h.arrive(t * MS, 2, 1000);
                }
                steps.push(probability(&h, 1).unwrap());
            }
            steps
        };
        assert_eq!(run(RedPdProfile::Ns2, 9_201 * MS), [0.3, 0.3, 0.25]);
        assert_eq!(run(RedPdProfile::Ns2, 9_202 * MS), [0.3, 0.3, 0.3]);
        // The paper's engine cuts at the close after the last 3 closed intervals, 0.6 s.
        assert_eq!(run(RedPdProfile::Paper, 9_400 * MS), [0.25, 0.25, 0.25]);
    }

    #[test]
    fn ns2_frp_is_a_fixed_loss_in_front_of_red() {
        // 400 arrivals, nothing sent: RED's average (w_q = 1: the queue) passes max_th = 15.
        let offer = |profile| {
            let mut cfg = RedPdConfig {
                profile,
                identification: Identification::Off,
                ..fixed(0.5)
            };
            cfg.red.w_q = 1.0;
            cfg.red.limit = Some(100);
            let mut h = red_pd(cfg);
            for _ in 0..400 {
                h.arrive(0, 1, 1000);
            }
            let reasons = [
                DropReason::Loss,
                DropReason::Early,
                DropReason::Forced,
                DropReason::Overflow,
            ];
            (reasons.map(|r| h.drops(r)), h.q.current.clone())
        };
        // ns-2: half lost (σ = 10), RED forced-drops the rest past max_th (and may drop early
        // before); both are listed and count in the drop rate, in bytes.
        let ([loss, early, forced, overflow], listed) = offer(RedPdProfile::Ns2);
        assert!(loss.abs_diff(200) < 30, "{loss}");
        assert!(forced > 150 && overflow == 0, "{forced} {overflow}");
        assert_eq!(listed[&1], (loss + early + forced) as f64 * 1000.0);
        // The paper's fixed_p replaces RED's curve: only the fixed drops, then the buffer.
        let ([loss, early, forced, overflow], _) = offer(RedPdProfile::Paper);
        assert_eq!((loss, forced), (0, 0));
        assert!(early.abs_diff(200) < 30 && overflow > 50, "{early} {overflow}");
    }

    #[test]
    fn ns2_profile_runs_red_as_ns2_unless_red_profile_is_set() {
        let config = |text: &str| -> RedPdConfig { toml::from_str(text).unwrap() };
        let ns2 = config(r#"profile = "ns2""#);
        assert_eq!(ns2.output_queue().profile, Some(RedProfile::Ns2));
        let chosen = config("profile = \"ns2\"\nred = { profile = \"floyd93\", fixed_p = 0.1 }");
        let red = chosen.output_queue();
        assert_eq!((red.profile, red.fixed_p), (Some(RedProfile::Floyd93), None));
        assert_eq!(chosen.params(0).fixed_p, Some(0.1));
        let paper = config("red = { fixed_p = 0.1 }");
        assert_eq!(
            (paper.output_queue().profile, paper.output_queue().fixed_p),
            (None, Some(0.1))
        );
        assert_eq!(
            config("engine_start = 0").validate("q").unwrap_err().to_string(),
            "q.engine_start: must be > 0, got 0"
        );
    }
}
