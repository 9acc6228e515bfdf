//! Scenario files as a user writes them (issue 26 items 5 and 6): every quantity with its
//! unit, implausible values refused, and errors that say what was meant.

mod common;
use aqmlab_core::Scenario;
use common::error_of;

/// A valid one-flow dumbbell; tests replace parts of it.
const BASE: &str = r#"
[simulation]
duration = "10s"
[topology]
type = "dumbbell"
access_delay = "1ms"
bottleneck = { rate = "10Mbps", delay = "5ms", qdisc = { type = "droptail" } }
[[flows]]
type = "tcp"
"#;

fn with(from: &str, to: &str) -> String {
    assert!(BASE.contains(from), "{from}");
    BASE.replace(from, to)
}

#[test]
fn a_file_writes_every_quantity_with_its_unit() {
    assert!(Scenario::from_toml_str(BASE).is_ok());
    assert_eq!(
        error_of(&with("access_delay = \"1ms\"", "access_delay = 10")),
        r#"topology.access_delay: a bare number; write its unit: "10s" if you meant 10 s"#
    );
    assert_eq!(
        error_of(&with("access_delay = \"1ms\"", "access_delay = 0.002")),
        r#"topology.access_delay: a bare number; write its unit: "2ms" if you meant 0.002 s"#
    );
    // Read as bit/s the number keeps its meaning (issue 34 item 5: not "6000000Mbps")...
    assert_eq!(
        error_of(&with("rate = \"10Mbps\"", "rate = 6000000")),
        r#"topology.bottleneck.rate: a bare number; write its unit: "6Mbps" if you meant 6000000 bit/s"#
    );
    // ... and where that is no rate at all (10 bit/s is below 1kbps), the usual unit is suggested.
    assert_eq!(
        error_of(&with("rate = \"10Mbps\"", "rate = 10")),
        r#"topology.bottleneck.rate: a bare number; write its unit, e.g. "10Mbps""#
    );
    assert_eq!(
        error_of(&with("duration = \"10s\"", "duration = \"60\"")),
        r#"simulation.duration: "60" has no unit; write it: "60s" if you meant 60 s"#
    );
    assert_eq!(
        error_of(&with("type = \"tcp\"", "type = \"tcp\"\npacket_size = 1500")),
        r#"flows[0].packet_size: a bare number; write its unit: "1500B" if you meant 1500 bytes"#
    );
    // Zero is zero in every unit; a space before the unit is SI's spelling.
    assert!(Scenario::from_toml_str(&with("access_delay = \"1ms\"", "access_delay = 0")).is_ok());
    let spaced = Scenario::from_toml_str(&with("\"10Mbps\"", "\"10 Mbps\"")).unwrap();
    let aqmlab_core::scenario::TopologySpec::Dumbbell(d) = &spaced.topology else {
        panic!("a dumbbell")
    };
    assert_eq!(d.bottleneck.rate.unwrap().0, 10e6);
}

#[test]
fn a_program_s_bare_numbers_are_base_units() {
    let json = r#"{"simulation": {"duration": 10}, "topology": {"type": "dumbbell",
        "bottleneck": {"rate": 1e7, "delay": 0.005}}, "flows": [{"type": "tcp", "packet_size": 1500}]}"#;
    let scenario = Scenario::from_json_str(json).unwrap();
    assert_eq!(scenario.simulation.duration.0, 10.0);
    // The same text as a file's content: its units are required.
    assert_eq!(
        Scenario::from_file_json_str(json).unwrap_err().to_string(),
        r#"simulation.duration: a bare number; write its unit: "10s" if you meant 10 s"#
    );
}

#[test]
fn implausible_rates_and_delays_are_refused() {
    assert_eq!(
        error_of(&with("\"10Mbps\"", "\"10bps\"")),
        r#"topology.bottleneck.rate: must be 0 or at least 1000 bit/s (1kbps), got "10bps""#
    );
    assert_eq!(
        error_of(&with("delay = \"5ms\"", "delay = \"200s\"")),
        "topology.bottleneck.delay: must be at most 100s (a one-way propagation delay), got 200s"
    );
    assert_eq!(
        error_of(&with("type = \"tcp\"", "type = \"tcp\"\nsink_delay = \"2min\"")),
        "flows[0].sink_delay: must be at most 100s (a one-way propagation delay), got 120s"
    );
    assert!(Scenario::from_toml_str(&with("delay = \"5ms\"", "delay = \"100s\"")).is_ok());
}

#[test]
fn a_negative_time_is_shown_in_its_unit() {
    assert_eq!(
        error_of(&with("delay = \"5ms\"", "delay = \"-5ms\"")),
        "topology.bottleneck.delay: must be >= 0, got -5ms"
    );
    assert_eq!(
        error_of(&with("\"10Mbps\"", "\"-10Mbps\"")),
        "topology.bottleneck.rate: must be > 0, got -10Mbps"
    );
}

#[test]
fn a_misspelt_name_is_suggested() {
    assert_eq!(
        error_of(&with("type = \"tcp\"", "type = \"tcp\"\nacess_delay = \"2ms\"")),
        "flows[0].acess_delay: unknown field `acess_delay`, did you mean `access_delay`?"
    );
    assert_eq!(
        error_of(&with("type = \"droptail\"", "type = \"fq-codel\"")),
        "topology.bottleneck.qdisc.type: unknown type `fq-codel`, did you mean `fq_codel`?"
    );
    assert_eq!(
        error_of(&with("type = \"dumbbell\"", "type = \"dumbell\"")),
        "topology.type: unknown type `dumbell`, did you mean `dumbbell`?"
    );
    // Issue 34 item 10: the README calls CBR flows UDP; `udp` is answered, not accepted.
    assert_eq!(
        error_of(&with("type = \"tcp\"", "type = \"udp\"\nrate = \"5Mbps\"")),
        "flows[0].type: unknown type `udp`: aqmlab's UDP sources are `cbr` (constant bit rate, `rate`) and \
         `onoff` (`rate` in ON periods of mean `on_time`, silent for `off_time`)"
    );
    assert_eq!(
        error_of(&with("\"10Mbps\"", "\"10mbps\"")),
        r#"topology.bottleneck.rate: invalid rate "10mbps": unknown unit "mbps", did you mean "Mbps"? (use one of bps, b/s, kbps, Kbps, kb/s, Mbps, Mb/s, Gbps, Gb/s, kbit, mbit, gbit)"#
    );
    assert_eq!(
        error_of(&with("type = \"tcp\"", "type = \"tcp\"\ntcp = { varaint = \"reno\" }")),
        "flows[0].tcp.varaint: unknown field `varaint`, did you mean `variant`?"
    );
    assert_eq!(
        error_of(&with("duration = \"10s\"", "duraton = \"10s\"")),
        "simulation.duraton: unknown field `duraton`, did you mean `duration`?"
    );
    // Nothing near: every field of a tcp flow is listed, its own and every flow's.
    assert_eq!(
        error_of(&with("type = \"tcp\"", "type = \"tcp\"\nrate = \"1Mbps\"")),
        "flows[0].rate: unknown field `rate`, expected one of `name`, `count`, `src`, `dst`, `access_rate`, \
         `access_delay`, `sink_delay`, `hop`, `start`, `start_jitter`, `stop`, `packet_size`, `weight`, `pauses`, `tcp`, `workload`"
    );
}

#[test]
fn a_dumbbell_s_link_lists_only_a_link_s_fields() {
    assert_eq!(
        error_of(&with("delay = \"5ms\",", "delay = \"5ms\", monitor = true,")),
        "topology.bottleneck.monitor: unknown field `monitor`, expected one of `rate`, `trace`, `trace_repeat`, \
         `delay`, `qdisc`, `reverse_qdisc`, `rate_changes`"
    );
    // A graph's link has its ends and `monitor` besides, and lists them all.
    let graph = r#"
[simulation]
duration = "1s"
[topology]
type = "graph"
nodes = ["a", "b"]
links = [{ from = "a", to = "b", rate = "1Mbps", delay = "1ms", monitr = true }]
[[flows]]
type = "cbr"
src = "a"
dst = "b"
rate = "100kbps"
"#;
    assert_eq!(
        error_of(graph),
        "topology.links[0].monitr: unknown field `monitr`, did you mean `monitor`?"
    );
    assert_eq!(
        error_of(&graph.replace(", monitr = true", ", color = 1")),
        "topology.links[0].color: unknown field `color`, expected one of `from`, `to`, `monitor`, `rate`, `trace`, \
         `trace_repeat`, `delay`, `qdisc`, `reverse_qdisc`, `rate_changes`"
    );
    assert_eq!(
        error_of(&graph.replace("from = \"a\", ", "").replace(", monitr = true", "")),
        "topology.links[0]: missing field `from`"
    );
}

#[test]
fn an_inline_table_over_lines_says_to_write_a_table() {
    // Issue 34 item 10: the parser's "invalid inline table" alone does not say why.
    let spread = with(
        r#"bottleneck = { rate = "10Mbps", delay = "5ms","#,
        "bottleneck = { rate = \"10Mbps\", delay = \"5ms\",\n ",
    );
    assert_eq!(
        error_of(&spread),
        "line 7, column 46: invalid inline table: TOML's inline tables { ... } are one line; over several \
         lines, write it as the table [topology.bottleneck], one `key = value` a line"
    );
}
