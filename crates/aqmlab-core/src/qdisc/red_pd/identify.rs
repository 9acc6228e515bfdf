//! RED-PD's identification (§4.2–4.3): time cut into drop-list intervals of eq. 3's length,
//! each interval's list of the flows RED dropped from, and the flows in K of the last M lists
//! (or with K drops in them, §4.3's single list) identified at each close.

use super::{FlowInterval, Identification, Ns2Clock, Ns2Rules, Params, RedPd};
use crate::packet::FlowId;
use crate::time::{from_secs, Time};
use std::collections::BTreeMap;

/// One (closed) drop-list interval: the flows RED dropped from, with their drops.
#[derive(Clone, Debug, Default)]
pub(super) struct DropList {
    pub(super) length: Time,
    pub(super) drops: BTreeMap<FlowId, f64>,
}

impl Params {
    /// Eq. 3's drop-list interval `(K/M)·R/√(1.5p)`, within [min_interval, max_interval], in seconds.
    pub(super) fn interval(&self, p: f64) -> f64 {
        let eq3 = self.k as f64 / self.m as f64 * self.target_rtt / (1.5 * p).sqrt();
        eq3.clamp(self.min_interval, self.max_interval)
    }
}

impl RedPd {
    /// Ends the open interval at `interval_end`: §4.2's drop rate and list, then
    /// identification, increases and releases as of that instant.
    pub(super) fn close_interval(&mut self) {
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
        self.clock.now = self.clock.end;
        if self.params.identification != Identification::Off {
            self.identify(end, last, ambient, &flows);
        }
        // Eq. 3 at the averaged rate, or at the fixed one (ns-2 `calculateB` under `P_testFRp_`).
        let p = self.params.fixed_p.unwrap_or(ambient);
        let length = self.params.interval(p);
        let monitor = self.params.identification == Identification::Monitor;
        self.interval_end = match self.params.ns2 {
            None => {
                if monitor {
                    self.release(end);
                }
                end + from_secs(length).max(1)
            }
            Some(rules) => {
                // `calculateB` records only the lengths it computes from p > 0.
                if p > 0.0 {
                    self.recorded_intervals.push_back(length);
                    if self.recorded_intervals.len() > rules.recorded_intervals {
                        self.recorded_intervals.pop_front();
                    }
                }
                // `sched-detect-reward`: the next close at `now + B`, this close's release at
                // `now + 0.001`, on ns-2's clock.
                let close = self.clock.end;
                self.clock = Ns2Clock {
                    start: close,
                    end: close + length,
                    release: close + rules.release_delay,
                    now: close,
                };
                if monitor {
                    self.release_due = Some(from_secs(self.clock.release));
                }
                from_secs(self.clock.end).max(end + 1)
            }
        };
        self.interval_start = end;
        self.interval_arrivals = 0.0;
        self.interval_drops = 0.0;
    }

    /// The length of the last `n` intervals: a wait of n intervals (ns-2 `minLastChange`).
    pub(super) fn last_intervals(&self, n: usize) -> Time {
        self.lists.iter().rev().take(n).map(|l| l.length).sum()
    }

    /// ns-2's wait of `n` intervals (`minLastChange n`), s: the last `n` recorded lengths, which
    /// leave out the first interval and those at p = 0 and, at a release, include the interval
    /// just scheduled, summed newest first in doubles as ns-2 does; at least `min_wait`.
    pub(super) fn recorded_wait(&self, n: usize, rules: Ns2Rules) -> f64 {
        let recorded = self.recorded_intervals.iter().rev().take(n).fold(0.0, |sum, b| sum + b);
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
    pub(super) fn identify(&mut self, now: Time, last: f64, ambient: f64, flows: &BTreeMap<FlowId, FlowInterval>) {
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
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::super::*;
    use super::*;
    use crate::qdisc::testing::{QdiscHarness, MS};
    use crate::rng::stream;
    use crate::time::NANOS_PER_SEC;
    use crate::units::Bytes;

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
            closing(&mut h, 9_900 * MS, 10 * NANOS_PER_SEC);
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
}
