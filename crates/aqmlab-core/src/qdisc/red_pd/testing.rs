//! What the tests of RED-PD's parts share: the qdisc on a harness, and its state set by hand.

use super::identify::DropList;
use super::prefilter::Monitored;
use super::*;
use crate::qdisc::testing::{link, QdiscHarness};
use crate::rng::stream;

/// A 1000-byte packet takes exactly 1 ms at 8 Mb/s.
pub(super) const LINK: LinkInfo = link(8e6);

pub(super) fn red_pd(cfg: RedPdConfig) -> QdiscHarness<RedPd> {
    cfg.validate("q").unwrap();
    let red = Red::new(&cfg.output_queue(), &LINK, stream(7, "red-pd-test/red"));
    QdiscHarness::new(Box::new(RedPd::new(&cfg, red, stream(7, "red-pd-test"), 0)))
}

/// RED-PD over a RED queue that drops every arrival with probability `p` (§7.1's controlled queue).
pub(super) fn fixed(p: f64) -> RedPdConfig {
    RedPdConfig {
        red: RedConfig {
            fixed_p: Some(p),
            ..Default::default()
        },
        ..Default::default()
    }
}

pub(super) fn monitor(h: &mut QdiscHarness<RedPd>, flow: FlowId, probability: f64, now: Time) {
    h.q.monitored.insert(flow, Monitored::new(probability, now));
}

pub(super) fn probability(h: &QdiscHarness<RedPd>, flow: FlowId) -> Option<f64> {
    h.q.monitored.get(&flow).map(|m| m.probability)
}

/// Closes the open interval with RED's `drops` of `arrivals`, as the flows in `listed` suffered them.
pub(super) fn close_with(h: &mut QdiscHarness<RedPd>, arrivals: f64, listed: &[(FlowId, f64)]) {
    h.q.interval_arrivals = arrivals;
    h.q.interval_drops = listed.iter().map(|&(_, d)| d).sum();
    h.q.current = listed.iter().copied().collect();
    h.q.close_interval();
}

/// Puts five closed lists of `length` each, `drops` per flow in every one.
pub(super) fn lists(h: &mut QdiscHarness<RedPd>, length: Time, drops: &[(FlowId, f64)]) {
    h.q.lists = (0..5)
        .map(|_| DropList {
            length,
            drops: drops.iter().copied().collect(),
        })
        .collect();
}

/// A history of (arrival rate, drop rate) records, oldest first.
pub(super) fn history(records: &[(f64, f64)]) -> VecDeque<(f64, f64)> {
    records.iter().copied().collect()
}

pub(super) fn ns2(cfg: RedPdConfig) -> RedPdConfig {
    RedPdConfig {
        profile: RedPdProfile::Ns2,
        ..cfg
    }
}

/// Sets the engine's clocks as at the close of [start, now]: ours and ns-2's.
pub(super) fn closing(h: &mut QdiscHarness<RedPd>, start: Time, now: Time) {
    h.q.interval_start = start;
    (h.q.clock.start, h.q.clock.now) = (to_secs(start), to_secs(now));
}

/// The flows' arrivals and drops (pre-filter + RED) in the interval just closed, `ns2`'s counters.
pub(super) fn seen(flows: &[(FlowId, f64, f64)]) -> BTreeMap<FlowId, FlowInterval> {
    flows
        .iter()
        .map(|&(flow, arrivals, drops)| (flow, FlowInterval { arrivals, drops }))
        .collect()
}
