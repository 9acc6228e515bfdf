//! RED-PD's pre-filter probabilities (§5.1–5.2, §6.2): an identified flow's raised by eq. 5's
//! quantum (or doubled), a flow in none of the last M lists released (β, p_d, P_minThresh, l),
//! and §6.2's test that declares a flow unresponsive.

use super::{FlowInterval, Ns2Rules, Params, RedPd};
use crate::packet::FlowId;
use crate::time::{to_secs, Time};
use std::collections::{BTreeMap, VecDeque};

/// The most a first identification starts a flow at (ns-2 monitoring.tcl: `newTarget` ≥ 0.5).
const MAX_INITIAL_PROBABILITY: f64 = 0.5;

/// (β, p_d, P_minThresh, l) of §5.2: how a monitored flow is released.
#[derive(Clone, Copy, Debug)]
pub(super) struct Release {
    pub(super) beta: f64,
    pub(super) max_decrease: f64,
    pub(super) min_probability: f64,
    /// l, in drop-list intervals.
    pub(super) wait: usize,
}

impl Release {
    /// §5.1–5.2: divide by β or subtract p_d, whichever reduces less.
    pub(super) fn decrease(&self, p: f64) -> f64 {
        (p / self.beta).max(p - self.max_decrease)
    }

    /// ns-2 (monitoring.tcl `do_reward`): subtract p_d above β·p_d, else divide by β. For β = 2
    /// this is [`Self::decrease`]; for β = 1.5 it subtracts from 0.075 up, where `decrease`
    /// divides up to 0.15 (P = 0.12: 0.07, not 0.08).
    pub(super) fn decrease_ns2(&self, p: f64) -> f64 {
        if p > self.beta * self.max_decrease {
            p - self.max_decrease
        } else {
            p / self.beta
        }
    }
}

impl Params {
    /// §5.1: the probability after an increase by eq. 5's `quantum` at ambient drop rate `p`.
    pub(super) fn raised(&self, probability: f64, quantum: f64, p: f64, unresponsive: bool) -> f64 {
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

/// A monitored flow (§5.1).
#[derive(Clone, Debug)]
pub(super) struct Monitored {
    /// Pre-filter drop probability.
    pub(super) probability: f64,
    pub(super) unresponsive: bool,
    /// When the probability last changed (set, raised or cut).
    pub(super) last_change: Time,
    /// `ns2`: the same on ns-2's clock ([`Ns2Clock`]; monitoring.tcl `mon_flow_hist_(fid,lastChange)`).
    pub(super) changed_ns2: f64,
    /// §6.2 (paper): arrivals and drops (pre-filter + RED) since `period_start`.
    pub(super) arrivals: f64,
    pub(super) drops: f64,
    pub(super) period_start: Time,
    /// §6.2: (arrival rate, drop rate) of the latest periods (`ns2`: intervals), oldest first.
    pub(super) history: VecDeque<(f64, f64)>,
    /// Arrivals since the flow's last pre-filter drop (`uniformize`; ns-2's `count`).
    pub(super) since_drop: f64,
}

impl Monitored {
    /// A flow monitored from `now` at `probability`.
    pub(super) fn new(probability: f64, now: Time) -> Self {
        Monitored {
            probability,
            unresponsive: false,
            last_change: now,
            changed_ns2: to_secs(now),
            arrivals: 0.0,
            drops: 0.0,
            period_start: now,
            history: VecDeque::new(),
            since_drop: 0.0,
        }
    }
}

impl RedPd {
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
    pub(super) fn raise(&mut self, now: Time, identified: Vec<(FlowId, f64)>, p: f64) {
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
    pub(super) fn raise_ns2(
        &mut self,
        now: Time,
        identified: Vec<(FlowId, f64)>,
        p: f64,
        flows: &BTreeMap<FlowId, FlowInterval>,
        rules: Ns2Rules,
    ) {
        let increase_wait = self.recorded_wait(self.params.m - 1, rules);
        // Times on ns-2's clock: the close's, and the interval's length (`elapsed`).
        let clock = self.clock.now;
        let elapsed = clock - self.clock.start;
        for (flow, quantum) in Self::quanta(identified, p) {
            let last_change = match self.monitored.get(&flow) {
                Some(m) => m.changed_ns2,
                None => self.unmonitored_at.get(&flow).copied().unwrap_or(0.0),
            };
            if clock - last_change < increase_wait {
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
                        changed_ns2: clock,
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
                    m.changed_ns2 = clock;
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
    pub(super) fn release(&mut self, now: Time) {
        // (responsive, unresponsive): the paper's wait of the last l intervals, ns-2's in seconds.
        let waits = [self.params.responsive.wait, self.params.unresponsive.wait].map(|n| {
            let recorded = self.params.ns2.map(|rules| self.recorded_wait(n, rules));
            (self.last_intervals(n), recorded)
        });
        let clock = self.clock.now;
        let lists = &self.lists;
        let params = &self.params;
        let records = &mut self.records;
        let unmonitored_at = &mut self.unmonitored_at;
        self.monitored.retain(|flow, m| {
            if lists.iter().any(|l| l.drops.contains_key(flow)) {
                return true;
            }
            let release = if m.unresponsive {
                params.unresponsive
            } else {
                params.responsive
            };
            let waited = match waits[usize::from(m.unresponsive)] {
                (intervals, None) => now.saturating_sub(m.last_change) >= intervals,
                // On ns-2's clock: `[$ns_ now] - $lastChange >= [$self minLastChange n]`.
                (_, Some(recorded)) => clock - m.changed_ns2 >= recorded,
            };
            if !waited {
                return true;
            }
            m.last_change = now;
            m.changed_ns2 = clock;
            let keep = match params.ns2 {
                None => {
                    m.probability = release.decrease(m.probability);
                    m.probability >= release.min_probability
                }
                // Compared as ns-2 does, on 1 − P (`targetBW_ >= 0.995`).
                Some(_) if 1.0 - m.probability >= 1.0 - release.min_probability => {
                    unmonitored_at.insert(*flow, clock);
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

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::super::*;
    use super::*;
    use crate::qdisc::testing::MS;
    use crate::time::NANOS_PER_SEC;

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
            closing(&mut h, 9_900 * MS, 10 * NANOS_PER_SEC);
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
            h.q.recorded_intervals = VecDeque::from([0.08; 5]);
            monitor(&mut h, 1, 0.1, now - since);
            h.q.unmonitored_at.insert(2, to_secs(now - since));
            closing(&mut h, now - 80 * MS, now);
            h.q.identify(now, 0.02, 0.02, &flows);
            (probability(&h, 1), probability(&h, 2))
        };
        assert_eq!(round(399 * MS), (Some(0.1), None));
        let (raised, started) = round(401 * MS);
        assert!(raised.unwrap() > 0.1 && started.is_some());
        // Longer recorded intervals wait their sum: 4 × 150 ms.
        let mut h = red_pd(ns2(RedPdConfig::default()));
        lists(&mut h, 150 * MS, &[(1, 5.0)]);
        h.q.recorded_intervals = VecDeque::from([0.15; 5]);
        monitor(&mut h, 1, 0.1, now - 599 * MS);
        closing(&mut h, now - 150 * MS, now);
        h.q.identify(now, 0.02, 0.02, &flows);
        assert_eq!(probability(&h, 1), Some(0.1));
        closing(&mut h, now - 150 * MS, now + 2 * MS);
        h.q.identify(now + 2 * MS, 0.02, 0.02, &flows);
        assert!(probability(&h, 1).unwrap() > 0.1);

        // A release keeps the unmonitor time: re-identified 0.3 s later, the flow waits.
        let mut h = red_pd(ns2(RedPdConfig::default()));
        lists(&mut h, 80 * MS, &[]);
        monitor(&mut h, 1, 0.005, 0);
        closing(&mut h, now - 80 * MS, now);
        h.q.release(now);
        assert_eq!((probability(&h, 1), h.q.unmonitored_at.get(&1)), (None, Some(&10.0)));
        lists(&mut h, 80 * MS, &[(1, 5.0)]);
        closing(&mut h, now + 220 * MS, now + 300 * MS);
        h.q.identify(now + 300 * MS, 0.02, 0.02, &flows);
        assert_eq!(probability(&h, 1), None);
        closing(&mut h, now + 320 * MS, now + 401 * MS);
        h.q.identify(now + 401 * MS, 0.02, 0.02, &flows);
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
            closing(&mut h, now - NANOS_PER_SEC, now);
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
        closing(&mut h, 9_500 * MS, 10 * NANOS_PER_SEC);
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
        // unresponsive ones 5 (1 s). (Waits as long as the time elapsed: the next test.)
        let now = 10 * NANOS_PER_SEC;
        let release = |profile, start: f64, unresponsive: bool, since: Time| {
            let mut h = red_pd(RedPdConfig {
                profile,
                ..Default::default()
            });
            lists(&mut h, 200 * MS, &[]);
            h.q.recorded_intervals = VecDeque::from([0.2; 5]);
            monitor(&mut h, 1, start, now - since);
            h.q.monitored.get_mut(&1).unwrap().unresponsive = unresponsive;
            closing(&mut h, now - 200 * MS, now);
            h.q.release(now);
            probability(&h, 1)
        };
        let ns2 = RedPdProfile::Ns2;
        let paper = RedPdProfile::Paper;
        // At P_minThresh exactly: unmonitored, not cut.
        assert_eq!(release(ns2, 0.005, false, 601 * MS), None);
        // Just above: cut to half, below P_minThresh, and kept for one more round (the paper
        // unmonitors it in this round).
        assert_eq!(release(ns2, 0.0099, false, 601 * MS), Some(0.00495));
        assert_eq!(release(paper, 0.0099, false, 600 * MS), None);
        assert_eq!(release(ns2, 0.0099, false, 599 * MS), Some(0.0099));
        // Unresponsive: P > 0.075 loses 0.05 (the paper's max(P/1.5, P − 0.05) gives 0.08).
        let cut = release(ns2, 0.12, true, 1001 * MS).unwrap();
        assert!((cut - 0.07).abs() < 1e-15, "{cut}");
        assert!((release(paper, 0.12, true, 1000 * MS).unwrap() - 0.08).abs() < 1e-15);
        assert_eq!(release(ns2, 0.12, true, 999 * MS), Some(0.12));
        assert_eq!(release(ns2, 0.06, true, 1001 * MS), Some(0.06 / 1.5));
        assert_eq!(release(ns2, 0.0025, true, 1001 * MS), None);
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
            h.q.recorded_intervals = VecDeque::from([0.2; 4]);
            (h.q.interval_start, h.q.interval_end) = (9_800 * MS, 10 * NANOS_PER_SEC);
            (h.q.clock.start, h.q.clock.end) = (9.8, 10.0);
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
        assert_eq!(run(RedPdProfile::Ns2, 9_200 * MS), [0.3, 0.3, 0.25]);
        assert_eq!(run(RedPdProfile::Ns2, 9_202 * MS), [0.3, 0.3, 0.3]);
        // The paper's engine cuts at the close after the last 3 closed intervals, 0.6 s.
        assert_eq!(run(RedPdProfile::Paper, 9_400 * MS), [0.25, 0.25, 0.25]);
    }

    #[test]
    fn ns2_waits_as_long_as_the_time_elapsed_end_as_ns2s_double_clock_rounds() {
        // A flow never listed, intervals at 10R = 0.4 s (a drop rate of 0.01 %, recorded): a
        // responsive flow waits 3 intervals between cuts, 1.2 s, and 3 intervals elapse. On ns-2's
        // clock (`now + 0.4` in doubles) 1.2 s after 10.1 s is a little more than 1.2 (cut); after
        // 15.916 s a little less (cut one interval later). The times are ns-2's (test-suite-red-pd
        // `complete`, default seed: loosened at 15.917044419622092, then at 17.517044419622088).
        let cuts = |start: f64| {
            let mut h = red_pd(ns2(RedPdConfig::default()));
            (h.q.clock.end, h.q.interval_end) = (start, from_secs(start));
            h.q.recorded_intervals = VecDeque::from([0.4; 5]);
            monitor(&mut h, 1, 0.3, 0);
            // (close, ns-2's time) of each cut.
            let mut cuts = Vec::new();
            for close in 0..8 {
                close_with(&mut h, 10_000.0, &[(2, 1.0)]);
                let before = probability(&h, 1);
                let due = h.q.release_due.expect("a release follows each close");
                h.q.advance(due);
                if probability(&h, 1) != before {
                    cuts.push((close, h.q.clock.now));
                }
            }
            cuts
        };
        let early: Vec<_> = cuts(10.1).into_iter().map(|(close, _)| close).collect();
        assert_eq!(early, [0, 3, 6]);
        assert_eq!(
            cuts(15.916044419622093)[..2],
            [(0, 15.917044419622092), (4, 17.517_044_419_622_09)]
        );
    }
}
