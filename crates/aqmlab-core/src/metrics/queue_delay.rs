//! Per-packet queueing delay on monitored links: each transmitted packet's sojourn, from
//! its arrival at the link's queue to the start of its transmission (the time CoDel's
//! sojourn and ns-3's `QueueDisc` sojourn measure), kept as a distribution per (flow, link)
//! and per (flow group, link).
//!
//! The backlog of a queue divided by its rate is not what any packet waits under a
//! scheduler: FQ-CoDel serves a thin flow's packets ahead of a bulk flow's queue, so the
//! link's bytes over rate overstates the thin flow's wait and says nothing per flow
//! (issue 34). A distribution per (flow, link) is an HDR histogram (Gil Tene's
//! HdrHistogram, the `hdrhistogram` crate): two significant digits (a quantile within 1 %
//! of its value) above [`RESOLUTION_NS`], growing with the largest delay recorded, a few
//! kilobytes each; the mean and the maximum are kept exactly beside it.
//!
//! Packets a queue drops have no sojourn here (a drop at dequeue, CoDel's, is a drop); only
//! transmissions that start in the measurement window (at or after `warmup`) count.
//!
//! With `simulation.queue_delay_series`, each group's delays on each monitored link are also
//! kept per `throughput_bin` (packets, mean, maximum): the delay beside the `throughput`
//! table's goodput over time, which RFC 7928 §2.7's delay–goodput picture samples.

use crate::packet::FlowId;
use crate::scenario::{ExpandedFlow, QueueDelayDetail};
use crate::time::{to_secs, Time};
use hdrhistogram::Histogram;
use serde::Serialize;
use std::collections::HashMap;

/// Two significant digits: quantiles within 1 % (HdrHistogram's precision parameter).
const SIGNIFICANT_DIGITS: u8 = 2;
/// Delays below a microsecond are told apart to 512 ns: far under a packet's serialization
/// at any link rate aqmlab models, and it halves a histogram's buckets against 1 ns.
const RESOLUTION_NS: u64 = 1_000;

/// The distribution of one (flow or group, link)'s delays.
#[derive(Clone)]
struct Sojourns {
    histogram: Histogram<u32>,
    sum: Time,
    max: Time,
}

impl Sojourns {
    fn new() -> Self {
        let mut histogram = Histogram::new_with_bounds(RESOLUTION_NS, 2 * RESOLUTION_NS, SIGNIFICANT_DIGITS)
            .expect("the bounds and precision are valid");
        histogram.auto(true);
        Sojourns {
            histogram,
            sum: 0,
            max: 0,
        }
    }

    fn record(&mut self, delay: Time) {
        // Resizes to take any delay (`auto`; `saturating_record` would clamp it instead); a
        // bucket's count saturates rather than wrap.
        self.histogram
            .record(delay)
            .expect("an auto-resizing histogram of u64 values on a 64-bit target takes any value");
        self.sum += delay;
        self.max = self.max.max(delay);
    }

    fn add(&mut self, other: &Sojourns) {
        self.histogram
            .add(&other.histogram)
            .expect("an auto-resizing histogram takes any value");
        self.sum += other.sum;
        self.max = self.max.max(other.max);
    }

    fn stats(&self) -> DelayStats {
        let packets = self.histogram.len();
        let quantile = |q: f64| to_secs(self.histogram.value_at_quantile(q).min(self.max));
        DelayStats {
            packets,
            mean: to_secs(self.sum) / packets as f64,
            median: quantile(0.5),
            p90: quantile(0.9),
            p99: quantile(0.99),
            max: to_secs(self.max),
        }
    }
}

/// A distribution's summary, seconds. A quantile is the upper end of its histogram bucket
/// (within 1 %), at most the exact maximum.
#[derive(Clone, Debug, Serialize)]
pub struct DelayStats {
    pub packets: u64,
    pub mean: f64,
    pub median: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
}

/// One (flow, monitored link)'s queueing delay.
#[derive(Clone, Debug, Serialize)]
pub struct FlowDelay {
    pub flow: u32,
    pub link: u32,
    #[serde(flatten)]
    pub stats: DelayStats,
}

/// One (flow group, monitored link)'s queueing delay: its flows' packets together.
#[derive(Clone, Debug, Serialize)]
pub struct GroupDelay {
    pub group: String,
    pub link: u32,
    /// The group's flows (those of its `[[flows]]` entry).
    pub flows: u32,
    #[serde(flatten)]
    pub stats: DelayStats,
}

/// One (flow group, monitored link, time bin)'s queueing delay: the packets whose transmission
/// started in the bin.
#[derive(Clone, Debug, Serialize)]
pub struct DelayBin {
    /// The bin's start, seconds.
    pub time: f64,
    pub link: u32,
    pub group: String,
    pub packets: u64,
    pub mean: f64,
    pub max: f64,
}

/// A bin's running figures.
#[derive(Clone, Copy, Default)]
struct BinSums {
    packets: u64,
    sum: Time,
    max: Time,
}

/// The per-bin delays of every (monitored link, group), when kept.
struct Series {
    bin: Time,
    bins: usize,
    /// `(slot * groups + group) * bins + bin`.
    sums: Vec<BinSums>,
}

/// The distributions a run keeps: a slot per (key, monitored link), where a key is a flow
/// (`QueueDelayDetail::Flows`) or a flow group (`Groups`).
pub struct QueueDelays {
    detail: QueueDelayDetail,
    /// Each flow's group, numbered in order of first appearance.
    group_of: Vec<u32>,
    group_names: Vec<String>,
    keys: usize,
    /// By monitored link (its place in `monitored`) and key, created at its first packet.
    slots: Vec<Option<Box<Sojourns>>>,
    monitored: Vec<u32>,
    series: Option<Series>,
}

/// A link whose delays are not kept (see [`QueueDelays::slot_of`]).
pub const NOT_KEPT: u32 = u32::MAX;

impl QueueDelays {
    /// `series`: the bin width and bins per run, when the per-bin delays are kept.
    pub fn new(
        detail: QueueDelayDetail,
        flows: &[ExpandedFlow],
        monitored: &[u32],
        series: Option<(Time, usize)>,
    ) -> Self {
        let mut numbers: HashMap<&str, u32> = HashMap::new();
        let mut group_names = Vec::new();
        let group_of = flows
            .iter()
            .map(|f| {
                *numbers.entry(&f.group).or_insert_with(|| {
                    group_names.push(f.group.clone());
                    group_names.len() as u32 - 1
                })
            })
            .collect();
        let keys = match detail {
            QueueDelayDetail::Flows => flows.len(),
            QueueDelayDetail::Groups => group_names.len(),
            QueueDelayDetail::Off => 0,
        };
        let monitored = if keys == 0 { Vec::new() } else { monitored.to_vec() };
        let series = series.filter(|_| keys > 0).map(|(bin, bins)| Series {
            bin,
            bins,
            sums: vec![BinSums::default(); monitored.len() * group_names.len() * bins],
        });
        QueueDelays {
            detail,
            group_of,
            group_names,
            keys,
            slots: vec![None; keys * monitored.len()],
            monitored,
            series,
        }
    }

    /// What [`record`](Self::record) is given for `link`: its place among the monitored
    /// links, or [`NOT_KEPT`]. The recorder keeps it with the link's counters, which every
    /// transmission reads anyway.
    pub fn slot_of(&self, link: u32) -> u32 {
        self.monitored
            .iter()
            .position(|&m| m == link)
            .map_or(NOT_KEPT, |i| i as u32)
    }

    /// A packet of `flow` waited `delay` in the queue of the monitored link at `slot`, until `now`.
    #[inline]
    pub fn record(&mut self, slot: u32, flow: FlowId, delay: Time, now: Time) {
        let key = match self.detail {
            QueueDelayDetail::Groups => self.group_of[flow as usize] as usize,
            _ => flow as usize,
        };
        self.slots[slot as usize * self.keys + key]
            .get_or_insert_with(|| Box::new(Sojourns::new()))
            .record(delay);
        if let Some(series) = &mut self.series {
            let group = self.group_of[flow as usize] as usize;
            let bin = ((now / series.bin) as usize).min(series.bins - 1);
            let sums = &mut series.sums[(slot as usize * self.group_names.len() + group) * series.bins + bin];
            sums.packets += 1;
            sums.sum += delay;
            sums.max = sums.max.max(delay);
        }
    }

    /// The rows of the `queue_delay_series` table (by link, then group in flow order, then
    /// time; bins without a packet left out; empty unless kept).
    pub fn series(&self) -> Vec<DelayBin> {
        let Some(series) = &self.series else {
            return Vec::new();
        };
        let per_key = series.sums.chunks(series.bins);
        let keys = (self.monitored.iter()).flat_map(|&link| self.group_names.iter().map(move |g| (link, g)));
        keys.zip(per_key)
            .flat_map(|((link, group), bins)| {
                bins.iter()
                    .enumerate()
                    .filter(|(_, b)| b.packets > 0)
                    .map(move |(i, b)| DelayBin {
                        time: to_secs(i as Time * series.bin),
                        link,
                        group: group.clone(),
                        packets: b.packets,
                        mean: to_secs(b.sum) / b.packets as f64,
                        max: to_secs(b.max),
                    })
            })
            .collect()
    }

    /// The rows of the `queue_delay` table (by link, then flow; empty unless kept per flow).
    pub fn flows(&self) -> Vec<FlowDelay> {
        if self.detail != QueueDelayDetail::Flows {
            return Vec::new();
        }
        self.kept()
            .map(|(link, key, sojourns)| FlowDelay {
                flow: key as u32,
                link,
                stats: sojourns.stats(),
            })
            .collect()
    }

    /// The rows of the `queue_delay_groups` table (by link, then group in flow order): kept
    /// per group, or merged from the group's flows (exact: the histograms are alike).
    pub fn groups(&self) -> Vec<GroupDelay> {
        let mut members = vec![0u32; self.group_names.len()];
        self.group_of.iter().for_each(|&g| members[g as usize] += 1);
        let mut rows = Vec::new();
        for (slot, &link) in self.monitored.iter().enumerate() {
            let mut merged: Vec<Option<Sojourns>> = vec![None; self.group_names.len()];
            for (key, sojourns) in self.kept_at(slot) {
                let group = match self.detail {
                    QueueDelayDetail::Groups => key,
                    _ => self.group_of[key] as usize,
                };
                match &mut merged[group] {
                    Some(total) => total.add(sojourns),
                    empty => *empty = Some(sojourns.clone()),
                }
            }
            rows.extend(merged.iter().enumerate().filter_map(|(group, sojourns)| {
                Some(GroupDelay {
                    group: self.group_names[group].clone(),
                    link,
                    flows: members[group],
                    stats: sojourns.as_ref()?.stats(),
                })
            }));
        }
        rows
    }

    /// Every distribution kept: (link, key, it), by link, then key.
    fn kept(&self) -> impl Iterator<Item = (u32, usize, &Sojourns)> + '_ {
        (self.monitored.iter().enumerate())
            .flat_map(move |(slot, &link)| self.kept_at(slot).map(move |(key, s)| (link, key, s)))
    }

    /// The distributions kept for the monitored link at `slot`: (key, it), by key.
    fn kept_at(&self, slot: usize) -> impl Iterator<Item = (usize, &Sojourns)> + '_ {
        self.slots[slot * self.keys..(slot + 1) * self.keys]
            .iter()
            .enumerate()
            .filter_map(|(key, s)| s.as_deref().map(|s| (key, s)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Scenario;

    const MS: Time = 1_000_000;

    /// Three flows, the first two of the group `tcp`, the third `video`.
    fn scenario(detail: &str) -> Scenario {
        Scenario::from_toml_str(&format!(
            r#"
[simulation]
duration = "1s"
queue_delay = "{detail}"
[topology]
type = "dumbbell"
bottleneck = {{ rate = "1Mbps", delay = "1ms" }}
[[flows]]
name = "tcp"
type = "tcp"
count = 2
[[flows]]
name = "video"
type = "cbr"
rate = "100kbps"
"#
        ))
        .unwrap()
    }

    /// Flow 0 waits 1..=100 ms (one packet each), flow 1 waits 200 ms twice, flow 2 once 5 ms.
    fn recorded(detail: &str) -> QueueDelays {
        let scenario = scenario(detail);
        let sim = &scenario.simulation;
        let series = Some((100 * MS, (sim.duration.nanos() / (100 * MS)) as usize));
        let mut delays = QueueDelays::new(sim.queue_delay, &scenario.expanded_flows(), &[7], series);
        let slot = delays.slot_of(7);
        assert_eq!(delays.slot_of(3), NOT_KEPT);
        if slot == NOT_KEPT {
            return delays;
        }
        // Flow 0's packet of `ms` leaves at 10·ms ms (in bin ms / 10), the others at 0.5 s.
        (1..=100).for_each(|ms| delays.record(slot, 0, ms * MS, 10 * ms * MS - 1));
        delays.record(slot, 1, 200 * MS, 500 * MS);
        delays.record(slot, 1, 200 * MS, 500 * MS);
        delays.record(slot, 2, 5 * MS, 500 * MS);
        delays
    }

    #[test]
    fn a_flows_quantiles_are_within_one_percent_and_its_mean_and_max_exact() {
        let rows = recorded("flows").flows();
        assert_eq!(
            rows.iter().map(|r| (r.flow, r.link)).collect::<Vec<_>>(),
            [(0, 7), (1, 7), (2, 7)]
        );
        let first = &rows[0].stats;
        assert_eq!(first.packets, 100);
        assert!((first.mean - 0.0505).abs() < 1e-12, "{}", first.mean);
        assert_eq!(first.max, 0.1);
        for (got, want) in [(first.median, 0.050), (first.p90, 0.090), (first.p99, 0.099)] {
            assert!(got >= want && got <= want * 1.01, "{got} against {want}");
        }
        // A quantile never exceeds the largest delay (a bucket's upper end may).
        assert_eq!(rows[1].stats.p99, 0.2);
    }

    #[test]
    fn a_groups_distribution_merges_its_flows_and_is_the_same_kept_per_group() {
        let merged = recorded("flows").groups();
        let kept = recorded("groups").groups();
        let summary = |rows: &[GroupDelay]| {
            rows.iter()
                .map(|r| {
                    (
                        r.group.clone(),
                        r.flows,
                        r.stats.packets,
                        r.stats.median,
                        r.stats.p99,
                        r.stats.max,
                    )
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(summary(&merged), summary(&kept));
        assert_eq!(merged[0].group, "tcp");
        assert_eq!((merged[0].flows, merged[0].stats.packets), (2, 102));
        assert_eq!(merged[0].stats.max, 0.2);
        // 102 packets: 100 of 1..=100 ms and two of 200 ms; the 99th percentile is a 200-ms one.
        assert_eq!(merged[0].stats.p99, 0.2);
        assert_eq!((merged[1].group.as_str(), merged[1].stats.packets), ("video", 1));
        assert!(recorded("groups").flows().is_empty());
    }

    #[test]
    fn nothing_is_kept_when_off() {
        let delays = recorded("off");
        assert_eq!(delays.slot_of(7), NOT_KEPT);
        assert!(delays.flows().is_empty() && delays.groups().is_empty() && delays.series().is_empty());
    }

    #[test]
    fn the_series_keeps_each_groups_packets_per_bin_whatever_the_detail() {
        for detail in ["flows", "groups"] {
            let rows = recorded(detail).series();
            let tcp: Vec<_> = rows.iter().filter(|r| r.group == "tcp").collect();
            // Bins of 100 ms over 1 s: flow 0's ten packets a bin (1..=10 ms in the first,
            // 91..=100 ms in the last), flow 1's two 200-ms packets in bin 5 with 5 of flow 0's.
            assert_eq!(tcp.len(), 10, "{detail}");
            assert_eq!(
                (tcp[0].time, tcp[0].packets, tcp[0].mean, tcp[0].max),
                (0.0, 10, 0.0055, 0.01)
            );
            assert_eq!((tcp[5].packets, tcp[5].max), (12, 0.2));
            assert!((tcp[5].mean - (0.555 + 0.4) / 12.0).abs() < 1e-12); // 51..=60 ms and 2 x 200 ms
            assert_eq!((tcp[9].time, tcp[9].max), (0.9, 0.1));
            let video: Vec<_> = rows
                .iter()
                .filter(|r| r.group == "video")
                .map(|r| (r.time, r.packets))
                .collect();
            assert_eq!(video, [(0.5, 1)], "{detail}");
            assert!(rows.iter().all(|r| r.link == 7));
        }
    }
}
