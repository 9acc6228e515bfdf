//! TCP behaviour end to end: closed-form validation, loss recovery per
//! variant on scripted losses, tiny windows, RTT bias, finite transfers, determinism.

mod common;

use aqmlab_core::Results;
use common::{error_of, one_flow_path, scripted_loss, simulate};

/// The validation table, one line per row, for failure messages.
fn table(rows: &[aqmlab_core::validation::Row]) -> String {
    rows.iter()
        .map(|r| {
            format!(
                "{:48} model {:9.3} ours {:9.3} ratio {:6.3} {:8} {} {}\n",
                r.key,
                r.model,
                r.ours,
                r.ours / r.model,
                r.tolerance,
                if r.pass { "pass" } else { "FAIL" },
                r.note
            )
        })
        .collect()
}

#[test]
fn validation_suite_passes() {
    let rows = aqmlab_core::validation::tcp::run().unwrap();
    let table = table(&rows);
    let keys: std::collections::BTreeSet<_> = rows.iter().map(|r| r.key.as_str()).collect();
    assert_eq!(keys.len(), rows.len(), "keys are unique:\n{table}");
    assert!(rows.len() >= 24, "{table}");
    // Each family of checks is present, for every variant it covers.
    for variant in ["reno", "newreno", "sack"] {
        for key in [
            format!("cycle.{variant}.p0.5"),
            format!("cycle.{variant}.p1"),
            format!("cycle.{variant}.p2"),
            format!("cycle.{variant}.delack.p0.1"),
            format!("sqrt.{variant}.p0.1"),
            format!("timeouts.{variant}.p1"),
            format!("fr_per_loss.{variant}.p1"),
            format!("droptail.{variant}.b50"),
        ] {
            assert!(keys.contains(key.as_str()), "{key} missing:\n{table}");
        }
    }
    for key in [
        "pftk.reno.p1.seed1",
        "pftk.reno.p5.seed3",
        "bernoulli.sack_over_reno.p3",
        "droptail.newreno.b12",
        "scripted.reno.two_losses.timeouts",
        "scripted.newreno.two_losses.timeouts",
        "scripted.newreno.timeout_in_recovery.ssthresh",
    ] {
        assert!(keys.contains(key), "{key} missing:\n{table}");
    }
    for row in &rows {
        assert!(row.pass && row.note.is_empty(), "{} failed:\n{table}", row.key);
    }
}

const RTT: f64 = 0.040;

/// One flow with a receiver window of 16 packets over a 40 ms path whose
/// bottleneck drops the first transmissions of `seqs`; delivery binned per millisecond.
fn scripted(variant: &str, seqs: &[u64], extra: &str) -> Results {
    one_flow_path(
        "duration = \"4s\"\nthroughput_bin = \"1ms\"",
        0.02,
        &scripted_loss(seqs),
        &format!("type = \"tcp\"\ntcp = {{ variant = \"{variant}\", window = 16, trace = true {extra} }}"),
    )
}

/// Seconds from the first scripted drop until the receiver has all data up to the last dropped packet.
fn recovery_time(r: &Results, last_seq: u64) -> f64 {
    let first_drop = r.drop_log.first().expect("a drop").time;
    let needed = (last_seq + 1) * 1000;
    let mut delivered = 0.0;
    for bin in r.throughput.iter().filter(|b| b.flow == 0) {
        delivered += bin.bps * 0.001 / 8.0;
        if delivered + 0.5 >= needed as f64 {
            return bin.time + 0.001 - first_drop;
        }
    }
    panic!("data up to {last_seq} never delivered");
}

fn min_cwnd_after_drop(r: &Results) -> f64 {
    let first_drop = r.drop_log.first().expect("a drop").time;
    r.traces
        .iter()
        .filter(|t| t.var == "cwnd" && t.time > first_drop)
        .map(|t| t.value)
        .fold(f64::INFINITY, f64::min)
}

const LOSSES: [&[u64]; 3] = [&[100], &[100, 103], &[100, 103, 106]];

#[test]
fn tahoe_slow_starts_after_fast_retransmit() {
    for seqs in LOSSES {
        let r = scripted("tahoe", seqs, "");
        let f = &r.flows[0];
        assert_eq!(r.drop_log.len(), seqs.len(), "{seqs:?}");
        assert_eq!((f.timeouts, f.fast_retransmits), (0, 1), "{seqs:?}");
        assert_eq!(min_cwnd_after_drop(&r), 1.0, "{seqs:?}");
    }
}

#[test]
fn reno_halves_on_one_loss_and_times_out_on_three() {
    let r = scripted("reno", LOSSES[0], "");
    assert_eq!((r.flows[0].timeouts, r.flows[0].fast_retransmits), (0, 1));
    assert_eq!(min_cwnd_after_drop(&r), 8.0); // window 16 halved, no slow start
    let r = scripted("reno", LOSSES[2], "");
    assert!(r.flows[0].timeouts >= 1, "{:?}", r.flows[0]);
    assert_eq!(min_cwnd_after_drop(&r), 1.0);
}

#[test]
fn newreno_recovers_multiple_losses_without_timeout() {
    let mut times = Vec::new();
    for seqs in LOSSES {
        let r = scripted("newreno", seqs, "");
        let f = &r.flows[0];
        assert_eq!(
            (f.timeouts, f.fast_retransmits, f.retransmitted_packets),
            (0, 1, seqs.len() as u64),
            "{seqs:?}"
        );
        assert!(min_cwnd_after_drop(&r) >= 2.0, "{seqs:?}");
        times.push(recovery_time(&r, *seqs.last().unwrap()) / RTT);
    }
    // One partial-ACK round trip per further loss (FRED §11.2).
    assert!(
        times[1] - times[0] > 0.9 && times[2] - times[1] > 0.9,
        "recovery in RTTs: {times:?}"
    );
}

#[test]
fn sack_recovers_multiple_losses_within_a_round_trip() {
    for seqs in LOSSES {
        let r = scripted("sack", seqs, "");
        let f = &r.flows[0];
        assert_eq!(
            (f.timeouts, f.fast_retransmits, f.retransmitted_packets),
            (0, 1, seqs.len() as u64),
            "{seqs:?}"
        );
        // One RTT until three duplicate ACKs reach the sender, then all holes are
        // retransmitted together and arrive half an RTT later.
        let rtts = recovery_time(&r, *seqs.last().unwrap()) / RTT;
        assert!(rtts < 1.75, "{seqs:?}: recovered in {rtts} RTT");
    }
    let newreno = recovery_time(&scripted("newreno", LOSSES[2], ""), 106);
    let sack = recovery_time(&scripted("sack", LOSSES[2], ""), 106);
    assert!(newreno - sack > 1.5 * RTT, "newreno {newreno} s, sack {sack} s");
}

#[test]
fn tiny_window_recovers_by_fast_retransmit() {
    let tiny = |on: bool| {
        let text = format!(
            r#"
[simulation]
duration = "3s"
[topology]
type = "dumbbell"
bottleneck = {{ rate = "10Mbps", delay = "10ms", qdisc = {{ type = "loss", model = "scripted", flow = 0, seqs = [50] }} }}
[[flows]]
type = "tcp"
tcp = {{ window = 3, tiny_window = {on} }}
"#
        );
        simulate(&text).flows[0].clone()
    };
    let with = tiny(true);
    assert_eq!((with.timeouts, with.fast_retransmits), (0, 1));
    let without = tiny(false);
    assert_eq!((without.timeouts, without.fast_retransmits), (1, 0));
    assert!(with.goodput_bps > without.goodput_bps);
}

#[test]
fn short_rtt_flow_gets_more_over_droptail() {
    let r = simulate(
        r#"
[simulation]
duration = "60s"
warmup = "10s"
seed = 3
[topology]
type = "dumbbell"
sink_delay = 0
bottleneck = { rate = "10Mbps", delay = "1ms", qdisc = { type = "droptail", limit = 62 } }
[[flows]]
type = "tcp"
access_delay = "9ms"
[[flows]]
type = "tcp"
access_delay = "39ms"
"#,
    );
    assert!((r.flows[0].base_rtt - 0.020).abs() < 1e-9 && (r.flows[1].base_rtt - 0.080).abs() < 1e-9);
    let ratio = r.flows[0].goodput_bps / r.flows[1].goodput_bps;
    assert!((2.0..=8.0).contains(&ratio), "short/long goodput ratio {ratio}");
    assert!(r.links[0].utilisation > 0.9, "{}", r.links[0].utilisation);
}

#[test]
fn finite_transfer_delivers_exactly_its_packets_and_reports_completion() {
    let r = simulate(
        r#"
[simulation]
duration = "5s"
[topology]
type = "dumbbell"
access_rate = "1Gbps"
access_delay = 0
sink_delay = 0
bottleneck = { rate = "1Gbps", delay = "50ms" }
[[flows]]
type = "tcp"
start = "1s"
workload = { type = "transfer", packets = 100 }
"#,
    );
    let delivered = r.flows[0].goodput_bps * 5.0 / 8.0 / 1000.0;
    assert!((delivered - 100.0).abs() < 1e-9, "{delivered}");
    assert_eq!(r.transfers.len(), 1);
    let t = &r.transfers[0];
    assert_eq!((t.flow, t.packets, t.start), (0, 100, 1.0));
    // Slow start from one packet: 1 + 2 + 4 + 8 + 16 + 32 = 63 packets in six RTTs, the rest in the seventh.
    let rtts = (t.end.expect("completed") - t.start) / 0.1;
    assert!((7.0..7.05).contains(&rtts), "{rtts} RTTs");
}

#[test]
fn web_transfers_each_start_a_new_connection() {
    let r = simulate(
        r#"
[simulation]
duration = "20s"
[topology]
type = "dumbbell"
bottleneck = { rate = "10Mbps", delay = "10ms" }
[[flows]]
type = "tcp"
tcp = { trace = true }
workload = { type = "web", pareto_mean = 12, think_time = "200ms" }
"#,
    );
    let done: Vec<_> = r.transfers.iter().filter(|t| t.end.is_some()).collect();
    assert!(done.len() > 20, "{} transfers", done.len());
    for pair in r.transfers.windows(2) {
        // The next transfer starts after the previous one completed (think time >= 0).
        assert!(pair[1].start >= pair[0].end.unwrap(), "{pair:?}");
    }
    let mean = done.iter().map(|t| t.packets as f64).sum::<f64>() / done.len() as f64;
    assert!(mean > 3.0 && mean < 60.0, "mean size {mean}");
    // Each transfer starts from cwnd = 1 and the initial 3 s RTO (SRED §7).
    for t in &done[1..] {
        let at_start = |var: &str| {
            r.traces
                .iter()
                .rev()
                .find(|s| s.var == var && s.time <= t.start)
                .map(|s| s.value)
        };
        assert_eq!(at_start("cwnd"), Some(1.0), "{t:?}");
        assert_eq!(at_start("rto"), Some(3.0), "{t:?}");
    }
    let delivered = r.flows[0].goodput_bps * 20.0 / 8.0 / 1000.0;
    let completed: u64 = done.iter().map(|t| t.packets).sum();
    assert!(delivered >= completed as f64, "{delivered} < {completed}");
}

#[test]
fn runs_are_deterministic() {
    let text = r#"
[simulation]
duration = "10s"
seed = 7
[topology]
type = "dumbbell"
bottleneck = { rate = "10Mbps", delay = "10ms", qdisc = { type = "loss", model = "bernoulli", p = 0.02, limit = 30 } }
[[flows]]
type = "tcp"
count = 2
start_jitter = "1s"
tcp = { variant = "sack", delayed_ack = true }
[[flows]]
type = "tcp"
tcp = { variant = "reno", trace = true }
workload = { type = "web", pareto_mean = 10, think_time = "100ms" }
"#;
    let a = simulate(text).to_json();
    let b = simulate(text).to_json();
    assert!(a.len() > 1000);
    assert_eq!(a, b);
}

/// One TCP flow with a window above the path's bandwidth-delay product fills an
/// uncongested 10 Mbps link (issue 2): 20 ms RTT × 10 Mbps = 25 packets of 1000 B,
/// window 64, and a buffer that holds the window so that slow start never overflows it.
#[test]
fn single_tcp_flow_fills_an_uncongested_link() {
    for variant in ["reno", "newreno", "sack"] {
        let r = simulate(&format!(
            r#"
[simulation]
duration = "30s"
warmup = "5s"
[topology]
type = "dumbbell"
access_delay = "4ms"
sink_delay = "4ms"
bottleneck = {{ rate = "10Mbps", delay = "2ms", qdisc = {{ type = "droptail", limit = 100 }} }}
[[flows]]
type = "tcp"
tcp = {{ variant = "{variant}", window = 64 }}
"#
        ));
        let (_, util) = &r.summary.utilisation[0];
        let f = &r.flows[0];
        assert!(*util > 0.95, "{variant}: utilisation {util}");
        assert_eq!(f.dropped_packets, 0, "{variant}");
        assert!(f.goodput_bps > 0.95 * 10e6, "{variant}: goodput {}", f.goodput_bps);
    }
}

/// A one-flow dumbbell whose TCP flow has `settings` (lines of the `[[flows]]` table).
fn tcp_flow(settings: &str) -> String {
    format!(
        r#"
[simulation]
duration = "5s"
[topology]
type = "dumbbell"
bottleneck = {{ rate = "10Mbps", delay = "10ms" }}
[[flows]]
type = "tcp"
{settings}
"#
    )
}

#[test]
fn workload_errors_name_the_field() {
    let cases = [
        (
            r#"workload = { type = "transfer", packets = 0 }"#,
            "flows[0].workload.packets: must be >= 1, got 0",
        ),
        (
            r#"workload = { type = "transfer", packets = 3, pareto_mean = 24 }"#,
            "flows[0].workload.pareto_mean: unknown field `pareto_mean`, expected `packets`",
        ),
        (
            r#"workload = { type = "web", pareto_mean = 0.5, think_time = "1s" }"#,
            "flows[0].workload.pareto_mean: must be >= 1 packet, got 0.5",
        ),
        (
            r#"workload = { type = "web", pareto_mean = 24, pareto_shape = 1, think_time = "1s" }"#,
            "flows[0].workload.pareto_shape: must be > 1 (a finite mean), got 1",
        ),
        (
            r#"workload = { type = "web", pareto_mean = 24 }"#,
            "flows[0].workload: missing field `think_time`",
        ),
        (
            r#"workload = { type = "web", pareto_mean = 24, think_time = "-1s" }"#,
            "flows[0].workload.think_time: must be >= 0, got -1s",
        ),
        (
            r#"workload = { type = "infinite", think_time = "1s" }"#,
            "flows[0].workload.think_time: unknown field `think_time`",
        ),
        (
            r#"workload = { type = "transfer", pareto_shape = 1.5 }"#,
            "flows[0].workload.pareto_shape: unknown field `pareto_shape`, expected `packets`",
        ),
        (
            r#"workload = { type = "ftp" }"#,
            "flows[0].workload.type: unknown type `ftp`, expected one of infinite, transfer, web, neidhardt",
        ),
        (
            r#"workload = { packets = 3 }"#,
            "flows[0].workload: missing field `type` (one of infinite, transfer, web, neidhardt)",
        ),
    ];
    for (settings, expected) in cases {
        let err = error_of(&tcp_flow(settings));
        assert!(err.starts_with(expected), "{settings}: {err}");
    }
    simulate(&tcp_flow(
        r#"workload = { type = "web", pareto_mean = 24, pareto_shape = 1.5, think_time = "100ms" }"#,
    ));
    simulate(&tcp_flow(r#"workload = { type = "infinite" }"#));
}

/// Scenario files are a user interface: the workload keys that left `tcp`
/// say where they went, with the values the file gave them.
#[test]
fn old_workload_keys_say_what_to_write_instead() {
    let cases = [
        (
            "tcp = { packets = 100 }",
            r#"flows[0].tcp.packets: moved: write workload = { type = "transfer", packets = 100 } in the flow"#,
        ),
        (
            r#"tcp = { variant = "reno", pareto_mean = 10, think_time = 0.1, trace = true }"#,
            r#"flows[0].tcp.pareto_mean: moved: write workload = { type = "web", pareto_mean = 10, think_time = 0.1 } in the flow"#,
        ),
        (
            r#"tcp = { think_time = "1s", pareto_shape = 1.5 }"#,
            r#"flows[0].tcp.pareto_shape: moved: write workload = { type = "web", pareto_shape = 1.5, think_time = "1s" } in the flow"#,
        ),
    ];
    for (settings, expected) in cases {
        assert_eq!(error_of(&tcp_flow(settings)), expected);
    }
    let json = r#"{"simulation": {"duration": 5},
        "topology": {"type": "dumbbell", "bottleneck": {"rate": "10Mbps", "delay": 0.01}},
        "flows": [{"type": "tcp", "tcp": {"packets": 7}}]}"#;
    assert_eq!(
        aqmlab_core::Scenario::from_json_str(json).unwrap_err().to_string(),
        r#"flows[0].tcp.packets: moved: write workload = { type = "transfer", packets = 7 } in the flow"#
    );
}

/// TCP is window-controlled: the rate settings of UDP flows are not part of its schema.
#[test]
fn tcp_flows_have_no_rate() {
    for (settings, field) in [
        (r#"rate = "1Mbps""#, "rate"),
        ("jitter = true", "jitter"),
        (r#"on_time = "1s""#, "on_time"),
    ] {
        assert_eq!(
            error_of(&tcp_flow(settings)),
            format!(
                "flows[0].{field}: unknown field `{field}`, expected one of `name`, `count`, `src`, `dst`, \
                 `access_rate`, `access_delay`, `sink_delay`, `hop`, `start`, `start_jitter`, `stop`, `packet_size`, \
                 `weight`, `pauses`, `tcp`, `workload`"
            )
        );
    }
}

/// A window of one packet over an uncongested path: nothing ever waits in a queue, so every
/// RTT sample is the path's propagation RTT (`base_rtt`) plus the serialization of the data
/// packet and its ACK on the three links, and SRTT converges to it while RTTVAR decays.
#[test]
fn srtt_is_the_propagation_rtt_plus_serialization_on_an_uncongested_path() {
    let run = |tcp: &str| {
        simulate(&format!(
            r#"
[simulation]
duration = "10s"
[topology]
type = "dumbbell"
access_rate = "100Mbps"
access_delay = "10ms"
sink_delay = "10ms"
bottleneck = {{ rate = "10Mbps", delay = "20ms" }}
[[flows]]
type = "tcp"
tcp = {{ window = 1, trace = true {tcp} }}
"#
        ))
    };
    // 1000 B at 100, 10 and 100 Mbit/s; the 40-byte ACK likewise.
    let serialization = 2.0 * 80e-6 + 800e-6 + 2.0 * 3.2e-6 + 32e-6;
    let r = run("");
    let rtt = r.flows[0].base_rtt + serialization;
    assert!((r.flows[0].base_rtt - 0.080).abs() < 1e-12);
    let samples = common::trace(&r, "rtt");
    assert!(samples.len() > 100, "{} samples", samples.len());
    assert!(samples.iter().all(|&(_, v)| (v - rtt).abs() < 1e-9), "{samples:?}");
    let (_, srtt) = *common::trace(&r, "srtt").last().unwrap();
    assert!((srtt - rtt).abs() < 1e-9, "srtt {srtt}, rtt {rtt}");
    let (_, rttvar) = *common::trace(&r, "rttvar").last().unwrap();
    assert!(rttvar < 1e-6, "rttvar {rttvar}");
    // ns-2 counts samples in ticks of its clock: with 1 ms ticks SRTT is within one of the RTT.
    let r = run(r#", profile = "ns2", timer_granularity = "1ms""#);
    let (_, srtt) = *common::trace(&r, "srtt").last().unwrap();
    assert!((srtt - rtt).abs() <= 1e-3, "ns2 srtt {srtt}, rtt {rtt}");
    assert!(common::trace(&r, "rtt").iter().all(|&(_, v)| (v - rtt).abs() < 1e-9));
}
