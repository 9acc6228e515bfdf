//! Input that once crashed or exhausted the process is a field error: numbers
//! that are not finite or beyond their kind's limit, and sizes that would be
//! allocated in proportion to the duration or to counts (issue 14 item 1).

mod common;
use common::error_of;

/// A valid 10 s dumbbell with one CBR flow; tests replace parts of it.
const BASE: &str = r#"
[simulation]
duration = "10s"
[topology]
type = "dumbbell"
bottleneck = { rate = "10Mbps", delay = "5ms" }
[[flows]]
type = "cbr"
rate = "5Mbps"
"#;

fn with(from: &str, to: &str) -> String {
    assert!(BASE.contains(from), "{from}");
    BASE.replace(from, to)
}

#[test]
fn non_finite_numbers_are_named_wherever_they_are() {
    assert!(aqmlab_core::Scenario::from_toml_str(BASE).is_ok());
    for (value, shown) in [("nan", "nan"), ("inf", "inf"), ("-inf", "-inf")] {
        assert_eq!(
            error_of(&with("rate = \"5Mbps\"", &format!("rate = {value}"))),
            format!("flows[0].rate: must be a finite number, got {shown}")
        );
    }
    // TOML's own parser refuses 1e400 (Python's reads it as inf, caught as above).
    assert_eq!(
        error_of(&with("rate = \"5Mbps\"", "rate = 1e400")),
        "line 9, column 8: invalid floating-point number"
    );
    // A plain number without a unit type is caught the same way, before its field reads it.
    assert_eq!(
        error_of(&with("type = \"cbr\"", "type = \"cbr\"\nweight = nan")),
        "flows[0].weight: must be a finite number, got nan"
    );
    assert_eq!(
        error_of(&with(
            "delay = \"5ms\" }",
            "delay = \"5ms\", qdisc = { type = \"red\", max_p = inf } }"
        )),
        "topology.bottleneck.qdisc.max_p: must be a finite number, got inf"
    );
    assert_eq!(
        error_of(&with("\"5Mbps\"", "\"1e400Mbps\"")),
        r#"flows[0].rate: must be a finite number, got "1e400Mbps""#
    );
}

#[test]
fn quantities_beyond_their_kind_s_limit_are_refused() {
    assert_eq!(
        error_of(&with("duration = \"10s\"", "duration = \"9223372036854775807s\"")),
        r#"simulation.duration: must be at most 1e9 s, got "9223372036854775807s""#
    );
    assert_eq!(
        error_of(&with("\"10Mbps\"", "\"2000Gbps\"")),
        r#"topology.bottleneck.rate: must be at most 1e12 bit/s, got "2000Gbps""#
    );
}

#[test]
fn tables_that_grow_with_the_duration_are_bounded() {
    // 1e9 s in 1 µs bins would be 1e15 bins: 8 PB, allocated before the first event.
    assert_eq!(
        error_of(&with(
            "duration = \"10s\"",
            "duration = \"1000000000s\"\nthroughput_bin = \"1us\""
        )),
        "simulation.throughput_bin: 0.000001 s over a 1000000000 s run makes 1000000000000000 rows of throughput \
         (1000000000000000 bins x 1 flows); at most 10000000 are kept, use a wider bin"
    );
    assert_eq!(
        error_of(&with(
            "duration = \"10s\"",
            "duration = \"10s\"\nsample_interval = \"1ns\""
        )),
        "simulation.sample_interval: 0.000000001 s over a 10 s run makes 10000000000 queue samples \
         (10000000000 x 1 monitored links); at most 10000000 are kept, use a longer interval"
    );
    // At the limit it is accepted: 10 flows of 1e6 bins.
    let at_limit = with("duration = \"10s\"", "duration = \"10s\"\nthroughput_bin = \"10us\"")
        .replace("rate = \"5Mbps\"", "rate = \"5Mbps\"\ncount = 10");
    assert!(aqmlab_core::Scenario::from_toml_str(&at_limit).is_ok());
    assert!(error_of(&at_limit.replace("count = 10", "count = 11"))
        .starts_with("simulation.throughput_bin: 0.00001 s over a 10 s run makes 11000000 rows"));
}

#[test]
fn counts_that_multiply_flows_or_links_are_bounded() {
    assert_eq!(
        error_of(&with("rate = \"5Mbps\"", "rate = \"5Mbps\"\ncount = 4294967295")),
        "flows[0].count: makes 4294967295 flows in all; at most 1000000 are allowed"
    );
    let two = format!("{BASE}[[flows]]\ntype = \"cbr\"\nname = \"b\"\nrate = \"1Mbps\"\ncount = 999999\n");
    assert!(
        aqmlab_core::Scenario::from_toml_str(&two).is_ok(),
        "a million flows are allowed"
    );
    assert_eq!(
        error_of(&two.replace("count = 999999", "count = 1000000")),
        "flows[1].count: makes 1000001 flows in all; at most 1000000 are allowed"
    );
    let lot = r#"
[simulation]
duration = "1s"
[topology]
type = "parking_lot"
congested_links = 101
link = { rate = "10Mbps", delay = "1ms" }
[[flows]]
type = "cbr"
rate = "1Mbps"
"#;
    assert_eq!(error_of(lot), "topology.congested_links: must be at most 100, got 101");
}

#[test]
fn a_path_through_a_list_has_no_stray_dot() {
    // Found by the fuzz: `flows[0].tcp.[0]`.
    let text = with("type = \"cbr\"\nrate = \"5Mbps\"", "type = \"tcp\"\ntcp = [1]");
    assert_eq!(
        error_of(&text),
        "flows[0].tcp[0]: invalid type: integer `1`, expected string or map"
    );
}

#[test]
fn a_missing_table_is_named() {
    assert_eq!(
        error_of(&BASE.replace("[simulation]\nduration = \"10s\"\n", "")),
        "simulation: missing (a scenario has [simulation], [topology] and [[flows]])"
    );
}

#[test]
fn hours_are_a_time_unit() {
    let long = with("duration = \"10s\"", "duration = \"2h\"\nwarmup = \"1 hour\"");
    let scenario = aqmlab_core::Scenario::from_toml_str(&long).unwrap();
    assert_eq!(scenario.simulation.duration.0, 7200.0);
    assert_eq!(scenario.simulation.warmup.0, 3600.0);
}

/// Found by the fuzz: ON and OFF periods far below a nanosecond rounded to 0, and
/// the source turned ON and OFF forever at one instant (the run never ended).
#[test]
fn periods_shorter_than_the_clock_s_tick_are_refused_and_a_tick_moves_it() {
    let onoff = |period: &str| {
        with("duration = \"10s\"", "duration = \"1ms\"").replace(
            "type = \"cbr\"\nrate = \"5Mbps\"",
            &format!("type = \"onoff\"\nrate = \"5Mbps\"\non_time = {period}\noff_time = {period}"),
        )
    };
    assert_eq!(
        error_of(&onoff("\"1e-300s\"")),
        r#"flows[0].off_time: must be 0 or at least 1e-9 s (the clock's tick), got "1e-300s""#
    );
    // Mean periods of one tick: the first ON period comes within nanoseconds (every OFF
    // period lasts at least a tick), its packet goes out, and the next is due after the
    // end (1000 B at 5 Mbps = 1.6 ms): the run ends having sent exactly one.
    let results = aqmlab_core::run(&common::scenario(&onoff("\"1ns\""))).unwrap();
    assert_eq!(results.flows[0].sent_packets, 1);
}
