//! RED-PD's scripted commands (ns-2.35 red-pd.cc's `monitor-flow`, `unmonitor-flow`,
//! `unresponsive-flow`), which ns-2's validation suite issues at given times.

use super::prefilter::Monitored;
use super::RedPd;
use crate::error::ScenarioError;
use crate::packet::FlowId;
use crate::time::{from_secs, to_secs, Time};
use crate::units::Seconds;
use crate::validate::{require_non_negative, require_probability};
use serde::Deserialize;

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

/// A [`ScheduledAction`] resolved: when, which flow, what.
#[derive(Clone, Copy, Debug)]
pub(super) struct Scripted {
    pub(super) at: Time,
    flow: FlowId,
    command: Command,
}

#[derive(Clone, Copy, Debug)]
enum Command {
    Monitor(f64),
    Unmonitor,
    Unresponsive,
}

/// The schedule's entries: each `at` at least 0, and a probability with `monitor` and with it alone.
pub(super) fn validate(schedule: &[ScheduledAction], field: impl Fn(&str) -> String) -> Result<(), ScenarioError> {
    for (i, scheduled) in schedule.iter().enumerate() {
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

/// The commands in time order (at the same time, in the file's order).
pub(super) fn resolve(schedule: &[ScheduledAction]) -> Vec<Scripted> {
    let mut scripted: Vec<Scripted> = schedule
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
    scripted.sort_by_key(|s| s.at);
    scripted
}

impl RedPd {
    /// A scripted command (ns-2 red-pd.cc's); one for a flow that is not monitored, other
    /// than `monitor`, does nothing.
    pub(super) fn run(&mut self, Scripted { at, flow, command }: Scripted) {
        match command {
            Command::Monitor(probability) => {
                if let Some(m) = self.monitored.get_mut(&flow) {
                    m.probability = probability;
                    m.last_change = at;
                    m.changed_ns2 = to_secs(at);
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
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::super::*;
    use crate::qdisc::testing::MS;
    use crate::time::NANOS_PER_SEC;

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
}
