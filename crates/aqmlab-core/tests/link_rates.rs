//! Links whose rate changes over time (`rate_changes`, issue 26 item 13).

mod common;
use common::{error_of, simulate};

/// A 12 Mbit/s CBR into a 10 Mbit/s drop-tail bottleneck that drops to `after` at 10 s:
/// the link is always busy, so it delivers its rate in every 1-s bin.
fn overloaded(after: &str) -> String {
    format!(
        r#"
[simulation]
duration = "20s"
warmup = "2s"
[topology]
type = "dumbbell"
bottleneck = {{ rate = "10Mbps", delay = "5ms", qdisc = {{ type = "droptail", limit = 50 }}, rate_changes = [{{ at = "10s", rate = "{after}" }}] }}
[[flows]]
type = "cbr"
rate = "12Mbps"
"#
    )
}

#[test]
fn a_link_delivers_its_rate_before_and_after_it_halves() {
    let r = simulate(&overloaded("5Mbps"));
    let bin = |t: f64| r.throughput.iter().find(|b| b.time == t).expect("a bin").bps;
    // Whole bins on either side (the bins by the change hold the packets in flight across it).
    for t in 2..=8 {
        let bps = bin(t as f64);
        assert!((bps / 10e6 - 1.0).abs() < 0.01, "{t} s: {bps}");
    }
    for t in 11..=19 {
        let bps = bin(t as f64);
        assert!((bps / 5e6 - 1.0).abs() < 0.01, "{t} s: {bps}");
    }
    // The link's rate in the results, and the flow's fair share, are its mean over the
    // window: 8 s at 10 Mbit/s and 10 s at 5 Mbit/s.
    let mean = (8.0 * 10e6 + 10.0 * 5e6) / 18.0;
    let link = r.links.iter().find(|l| l.name == "L->R").unwrap();
    assert!((link.rate_bps / mean - 1.0).abs() < 1e-12, "{}", link.rate_bps);
    assert!((r.flows[0].fair_share_bps / mean - 1.0).abs() < 1e-12);
    assert!(r.summary.utilisation[0].1 > 0.999, "{:?}", r.summary.utilisation);
}

/// One link from A to B at 1 Mbit/s (8 ms per 1000-byte packet), halved at 4 ms: the CBR's
/// first packet, sent at 0, is on the link then and ends at 8 ms at the old rate; its
/// second, sent at 8 ms, takes 16 ms at the new one.
#[test]
fn the_packet_on_the_link_finishes_at_the_old_rate() {
    let r = simulate(
        r#"
[simulation]
duration = "1s"
[topology]
type = "graph"
nodes = ["A", "B"]
links = [{ from = "A", to = "B", rate = "1Mbps", delay = 0, rate_changes = [{ at = "4ms", rate = "500kbps" }] }]
[[flows]]
type = "cbr"
src = "A"
dst = "B"
rate = "1Mbps"
stop = "10ms"
"#,
    );
    let f = &r.flows[0];
    assert_eq!((f.sent_packets, f.delivered_packets), (2, 2));
    assert!((f.max_delay - 0.016).abs() < 1e-12, "{}", f.max_delay);
    assert!((f.mean_delay - 0.012).abs() < 1e-12, "{}", f.mean_delay);
}

#[test]
fn rate_changes_are_checked_naming_the_change() {
    let changes = |list: &str| error_of(&overloaded("5Mbps").replace(r#"[{ at = "10s", rate = "5Mbps" }]"#, list));
    let path = "topology.bottleneck.rate_changes";
    assert_eq!(
        changes(r#"[{ at = "10s", rate = "5Mbps" }, { at = "5s", rate = "8Mbps" }]"#),
        format!("{path}[1].at: must be later than the change before (10s), got 5s")
    );
    assert_eq!(
        changes(r#"[{ at = "10s", rate = "5Mbps" }, { at = "10s", rate = "8Mbps" }]"#),
        format!("{path}[1].at: must be later than the change before (10s), got 10s")
    );
    assert_eq!(
        changes(r#"[{ at = "25s", rate = "5Mbps" }]"#),
        format!("{path}[0].at: must be < simulation.duration (20s), got 25s")
    );
    assert_eq!(
        changes(r#"[{ at = "10s", rate = 0 }]"#),
        format!("{path}[0].rate: must be > 0, got 0")
    );
    assert_eq!(
        changes(r#"[{ at = "10s", rate = "-5Mbps" }]"#),
        format!("{path}[0].rate: must be > 0, got -5Mbps")
    );
    assert_eq!(
        changes(r#"[{ at = "10s" }]"#),
        format!("{path}[0]: missing field `rate`")
    );
}

/// A graph's link and a parking lot's congested links take changes too.
#[test]
fn graph_and_parking_lot_links_change_rate() {
    let graph = simulate(
        r#"
[simulation]
duration = "20s"
warmup = "2s"
[topology]
type = "graph"
nodes = ["A", "B", "C"]
links = [
  { from = "A", to = "B", rate = "100Mbps", delay = "1ms" },
  { from = "B", to = "C", rate = "10Mbps", delay = "1ms", monitor = true, rate_changes = [{ at = "10s", rate = "2Mbps" }] },
]
[[flows]]
type = "cbr"
src = "A"
dst = "C"
rate = "12Mbps"
"#,
    );
    let after = graph.throughput.iter().find(|b| b.time == 15.0).unwrap().bps;
    assert!((after / 2e6 - 1.0).abs() < 0.01, "{after}");
    let lot = simulate(
        r#"
[simulation]
duration = "20s"
warmup = "2s"
[topology]
type = "parking_lot"
congested_links = 2
link = { rate = "10Mbps", delay = "1ms", rate_changes = [{ at = "10s", rate = "2Mbps" }] }
[[flows]]
type = "cbr"
rate = "12Mbps"
"#,
    );
    let after = lot.throughput.iter().find(|b| b.time == 15.0).unwrap().bps;
    assert!((after / 2e6 - 1.0).abs() < 0.01, "{after}");
}

/// CSFQ judges congestion against the link's rate C (§2.2.2): an 8 Mbit/s CBR is below
/// 10 Mbit/s and then above the 5 Mbit/s the link drops to. With C kept at 10 Mbit/s the
/// queue would only overflow; with C the current rate CSFQ drops it down to C itself.
#[test]
fn csfq_judges_congestion_against_the_current_rate() {
    let r = simulate(
        r#"
[simulation]
duration = "20s"
warmup = "2s"
[topology]
type = "dumbbell"
bottleneck = { rate = "10Mbps", delay = "5ms", qdisc = { type = "csfq" }, rate_changes = [{ at = "10s", rate = "5Mbps" }] }
[[flows]]
type = "cbr"
rate = "8Mbps"
"#,
    );
    let drops = |reason: &str| {
        r.drops
            .iter()
            .filter(|d| d.reason == reason)
            .map(|d| d.count)
            .sum::<u64>()
    };
    // 10 s at 3 Mbit/s too many: about 3750 packets of 1000 B to drop.
    assert!(
        drops("csfq") > 3000,
        "csfq {} overflow {}",
        drops("csfq"),
        drops("overflow")
    );
    assert!(
        drops("overflow") < drops("csfq") / 10,
        "csfq {} overflow {}",
        drops("csfq"),
        drops("overflow")
    );
}
