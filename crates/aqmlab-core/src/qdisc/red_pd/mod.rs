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
//! - keeps the engine's times on ns-2's clock, a double ([`Ns2Clock`]: `sched-detect-reward`,
//!   `minLastChange`): a wait as long as the time elapsed, as with intervals clamped to 10R or
//!   2R, ends as its rounding falls. From 16 s to 32 s each `+ 0.4` or `+ 0.08` rounds down, so
//!   such a wait mostly takes one interval more (in the suite's `complete` ns-2 cut a flow 1.6 s
//!   after its last change 148 times and 1.2 s after 29 times; whole nanoseconds always took 1.2);
//! - spaces pre-filter drops as RED does (`uniformize` on by default);
//! - treats `red.fixed_p` as ns-2's FRp mode: a fixed loss (drop reason `loss`) in front of
//!   RED, whose own drops continue behind it (`paper`: `fixed_p` replaces RED's curve, as
//!   §7.1 describes the mode, "rather than as determined by RED dynamics");
//! - runs RED's `ns2` profile unless `red.profile` is set.
//!
//! Left out of `ns2`, each minor: the 50-flow cap on one list (`MaxDropList_`); `qlen > 1`
//! counted in bytes in ns-2's byte-queue mode; the pre-filter's `count`
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
//!
//! The parts, each with its tests: `identify.rs` (the drop lists, eq. 3's interval, K of the
//! last M), `prefilter.rs` (eq. 5's increases, the releases, §6.2's test), `ns2_script.rs`
//! (ns-2's scripted commands); here the configuration, the state and the qdisc.

mod identify;
mod ns2_script;
mod prefilter;
#[cfg(test)]
mod testing;

pub use ns2_script::{Action, ScheduledAction};

use super::red::{uniformized, Red, RedConfig, RedProfile};
use super::{DropReason, FlowCounters, Gauges, LinkInfo, QdiscConfig, QdiscCtx, QueueDisc, Verdict};
use crate::error::ScenarioError;
use crate::packet::{Ecn, FlowId, PacketId, PacketKind};
use crate::rng::Rng;
use crate::time::{from_secs, to_secs, Time};
use crate::units::Seconds;
use crate::validate::{require_above, require_at_least, require_positive, require_probability, Bound};
use identify::DropList;
use ns2_script::Scripted;
use prefilter::{Monitored, Release};
use rand::{Rng as _, SeedableRng};
use serde::Deserialize;
use std::collections::{BTreeMap, VecDeque};

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
            min_wait: 0.400,
            // monitoring.tcl `sched-detect-reward`: `do_reward` 0.001 s after `do_detect`.
            release_delay: 0.001,
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
            engine_start: self.engine_start.map(|s| s.0).or(ns2.map(|_| NS2_ENGINE_START)),
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
        ns2_script::validate(&self.schedule, field)
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

/// The rules of ns-2's engine and pre-filter that the paper does not state or states
/// otherwise (`profile = "ns2"`; module docs), resolved.
#[derive(Clone, Copy, Debug)]
struct Ns2Rules {
    /// No monitoring or increase in a round unless the interval just closed had a drop rate above this.
    min_drop_rate: f64,
    /// The shortest wait before a flow's probability changes again, s.
    min_wait: f64,
    /// Releases run this long after the interval closes, s.
    release_delay: f64,
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
    /// When the first interval closes, s; None: eq. 3's first interval.
    engine_start: Option<f64>,
    /// ns-2's rules; None: the paper's.
    ns2: Option<Ns2Rules>,
    /// The warmup: identification rounds are counted from here (measurement only).
    measure_from: Time,
}

/// `ns2`: the engine's times on ns-2's clock, a double in seconds. monitoring.tcl schedules each
/// close (`do_detect`) at `now + B` and its release (`do_reward`) 0.001 s after that, and a wait
/// compares `now − lastChange` with a sum of B's (`minLastChange`), all in doubles: where the wait
/// is as long as the time elapsed (equal intervals, as when B is clamped to 2R or 10R, or the 0.4 s
/// floor), the rounding of these sums decides, and how they round depends on the clock's binade.
#[derive(Clone, Copy, Debug, Default)]
struct Ns2Clock {
    /// The open interval's start (`last_detect_`) and end (the next `do_detect`).
    start: f64,
    end: f64,
    /// The release of the interval that closed last.
    release: f64,
    /// The time of the engine's action running now: a close or a release.
    now: f64,
}

/// `ns2`: one flow's arrivals and drops (pre-filter + RED) in the open interval, in bytes, as
/// ns-2's per-flow monitor counts them for the engine.
#[derive(Clone, Copy, Debug, Default)]
struct FlowInterval {
    arrivals: f64,
    drops: f64,
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
    /// `ns2`: the engine's times on ns-2's clock.
    clock: Ns2Clock,
    /// `ns2`: the lengths (s) of the intervals scheduled at p > 0, newest last (`BList_`), for the waits.
    recorded_intervals: VecDeque<f64>,
    /// `ns2`: when (ns-2's clock) the engine unmonitored each flow not monitored now (ns-2 keeps
    /// its `lastChange`).
    unmonitored_at: BTreeMap<FlowId, f64>,
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
        // The first interval: to the engine's start, or eq. 3 at the configured fixed_p or p = 0 (p unknown).
        let first = params
            .engine_start
            .unwrap_or_else(|| params.interval(params.fixed_p.unwrap_or(0.0)));
        RedPd {
            params,
            red,
            rng,
            interval_start: 0,
            interval_end: from_secs(first),
            interval_arrivals: 0.0,
            interval_drops: 0.0,
            current: BTreeMap::new(),
            lists: VecDeque::new(),
            ambient: None,
            monitored: BTreeMap::new(),
            interval_flows: BTreeMap::new(),
            clock: Ns2Clock {
                end: first,
                ..Ns2Clock::default()
            },
            recorded_intervals: VecDeque::new(),
            unmonitored_at: BTreeMap::new(),
            release_due: None,
            records: BTreeMap::new(),
            schedule: ns2_script::resolve(&cfg.schedule),
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
                    self.clock.now = self.clock.release;
                    self.release(next);
                }
                _ => self.close_interval(),
            }
        }
    }

    /// Whether the pre-filter may drop now, with `queued` packets in the queue: (from a responsive
    /// flow, from an unresponsive one) (§1.2; ns-2 red-pd.cc).
    fn prefilter_active(&self, queued: usize) -> (bool, bool) {
        let queued = queued > 1;
        let fixed = self.params.fixed_p.is_some();
        (
            fixed || (self.red.gauges().average.unwrap_or(0.0) >= self.params.min_th && queued),
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
        let (responsive_active, unresponsive_active) = self.prefilter_active(ctx.backlog().packets);
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
        vec![
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
        ]
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
    use super::testing::*;
    use super::*;
    use crate::qdisc::testing::{QdiscHarness, MS};
    use crate::time::NANOS_PER_SEC;

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
        assert!(h.q.gauges().average.unwrap() >= 5.0);
        assert_eq!(h.arrive(0, 1, 1000), Verdict::Dropped(DropReason::PreFilter));
        // The average stays (it moves on arrivals) but one packet is left: no pre-filter drop.
        while h.backlog.packets > 1 {
            h.depart(0);
        }
        assert!(h.q.gauges().average.unwrap() >= 5.0);
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
