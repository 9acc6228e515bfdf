//! Traffic for RFC 7928's characterization (issue 38): flows that pause and resume (`pauses`,
//! §8.2.5), links whose capacity follows a Mahimahi trace (`trace`, §8.2.6) and bursty video
//! frames (`type = "video"`, §7).

mod common;
use aqmlab_core::Results;
use common::{error_of, simulate, trace};

/// One flow of `flow` (its lines after `type`) through a 10 Mbit/s, 10 ms drop-tail bottleneck
/// for 12 s, its application paused from 4 s to 8 s; 0.5-s bins.
fn paused(flow: &str) -> Results {
    simulate(&format!(
        r#"
[simulation]
duration = "12s"
throughput_bin = "0.5s"
[topology]
type = "dumbbell"
bottleneck = {{ rate = "10Mbps", delay = "10ms", qdisc = {{ type = "droptail", limit = 50 }} }}
[[flows]]
{flow}
pauses = [{{ at = "4s", until = "8s" }}]
"#
    ))
}

/// The flow's goodput in the bin starting at `t` seconds.
fn bin(r: &Results, t: f64) -> f64 {
    r.throughput.iter().find(|b| b.time == t).expect("a bin").bps
}

/// Goodput is zero once the queue has drained after the pause starts, until it ends; in the
/// 3.5 s after the pause the flow gets at least 90 % of its mean goodput in the 3.5 s before.
fn assert_gap_and_recovery(r: &Results, label: &str) {
    for t in [4.5, 5.0, 6.0, 7.0, 7.5] {
        assert_eq!(bin(r, t), 0.0, "{label}: {t} s");
    }
    assert!(bin(r, 4.0) > 0.0, "{label}: the queue drains after the pause starts");
    let mean = |from: f64| (0..7).map(|i| bin(r, from + 0.5 * i as f64)).sum::<f64>() / 7.0;
    let (before, after) = (mean(0.5), mean(8.5));
    assert!(before > 5e6 && after >= 0.9 * before, "{label}: {before} -> {after}");
}

/// cwnd's traced values at `t` and the last one before it.
fn cwnd_around(r: &Results, t: f64) -> (f64, Vec<f64>) {
    let cwnd = trace(r, "cwnd");
    let before = cwnd.iter().rev().find(|(time, _)| *time < t).expect("a cwnd before").1;
    let at = cwnd.iter().filter(|(time, _)| *time == t).map(|(_, v)| *v).collect();
    (before, at)
}

#[test]
fn a_paused_tcp_flow_sends_nothing_and_restarts_from_the_restart_window() {
    // RFC 5681 §4.1: idle 4 s, far more than an RTO, so cwnd = RW = min(IW, cwnd) = 1.
    let r = paused("type = \"tcp\"\ntcp = { trace = true }");
    assert_gap_and_recovery(&r, "rfc");
    let (before, at) = cwnd_around(&r, 8.0);
    assert!(before > 10.0, "{before}");
    assert_eq!(at, vec![1.0]);
    let ssthresh = trace(&r, "ssthresh");
    assert!(ssthresh.iter().all(|(t, _)| *t != 8.0), "ssthresh stays: {ssthresh:?}");
}

#[test]
fn the_ns2_agent_resumes_with_its_window() {
    let r = paused("type = \"tcp\"\ntcp = { profile = \"ns2\", window = 64, trace = true }");
    assert_gap_and_recovery(&r, "ns2");
    // No restart: the whole window (64) goes out at the resume, and cwnd first changes on an
    // ACK, at least one round trip (20 ms of propagation) later.
    let (before, at) = cwnd_around(&r, 8.0);
    assert!(at.is_empty(), "{at:?}");
    assert_eq!(before, 64.0);
    let next = trace(&r, "cwnd").into_iter().find(|(t, _)| *t > 8.0).unwrap().0;
    assert!(next >= 8.02, "{next}");
}

#[test]
fn linux_restarts_the_window_after_idle_and_keeps_three_quarters_in_ssthresh() {
    let r = paused("type = \"tcp\"\ntcp = { profile = \"linux\", cc = \"reno\", trace = true }");
    assert_gap_and_recovery(&r, "linux");
    // tcp_cwnd_restart(): 4 s idle is ~20 RTOs of 200 ms, so cwnd halves down to
    // min(IW 10, cwnd); ssthresh = max(ssthresh, 3/4 cwnd).
    let (before, at) = cwnd_around(&r, 8.0);
    assert!(before > 13.0, "{before}");
    assert_eq!(at, vec![10.0]);
    let ssthresh = trace(&r, "ssthresh");
    let ss_before = ssthresh.iter().rev().find(|(t, _)| *t < 8.0).unwrap().1;
    let expected = ss_before.max(((before as u64 >> 1) + (before as u64 >> 2)) as f64);
    let ss_at = ssthresh.iter().rev().find(|(t, _)| *t <= 8.0).unwrap().1;
    assert_eq!(ss_at, expected, "ssthresh before {ss_before}, cwnd before {before}");
}

#[test]
fn a_paused_cbr_is_silent_and_resumes_at_the_end_of_the_pause() {
    let r = paused("type = \"cbr\"\nrate = \"9Mbps\"");
    for t in [4.5, 5.0, 7.5] {
        assert_eq!(bin(&r, t), 0.0, "{t} s");
    }
    // 9 Mbit/s in whole bins on either side.
    for t in [3.0, 3.5, 8.5, 11.0] {
        let bps = bin(&r, t);
        assert!((bps / 9e6 - 1.0).abs() < 0.01, "{t} s: {bps}");
    }
}

#[test]
fn pause_errors_name_the_field() {
    let scenario = |flow: &str, pauses: &str| {
        format!(
            r#"
[simulation]
duration = "100s"
[topology]
type = "dumbbell"
bottleneck = {{ rate = "10Mbps", delay = "10ms" }}
[[flows]]
type = "tcp"
[[flows]]
{flow}
pauses = {pauses}
"#
        )
    };
    let tcp = "type = \"tcp\"\nstart = \"1s\"";
    let cases = [
        (
            tcp,
            r#"[{ at = "40s", until = "60s" }, { at = "50s", until = "70s" }]"#,
            "flows[1].pauses[1].at: must be > the previous pause's until (60s), got 50s",
        ),
        (
            tcp,
            r#"[{ at = "40s", until = "30s" }]"#,
            "flows[1].pauses[0].until: must be > at (40s), got 30s",
        ),
        (
            tcp,
            r#"[{ at = "90s", until = "120s" }]"#,
            "flows[1].pauses[0].until: must be <= simulation.duration (100s), got 120s",
        ),
        (
            "type = \"tcp\"\nstop = \"80s\"",
            r#"[{ at = "70s", until = "90s" }]"#,
            "flows[1].pauses[0].until: must be <= stop (80s), got 90s",
        ),
        (
            tcp,
            r#"[{ at = "1s", until = "2s" }]"#,
            "flows[1].pauses[0].at: must be > the flow's start + start_jitter (1s), got 1s",
        ),
        (tcp, r#"[{ at = "2s", till = "3s" }]"#, "unknown field `till`"),
        (
            "type = \"tcp\"\nworkload = { type = \"web\", pareto_mean = 10, think_time = \"1s\" }",
            r#"[{ at = "2s", until = "3s" }]"#,
            "flows[1].pauses: only the infinite workload pauses",
        ),
        (
            "type = \"tcp\"\ntcp = { profile = \"linux\", cc = \"bbr\" }",
            r#"[{ at = "2s", until = "3s" }]"#,
            r#"flows[1].pauses: not simulated under cc = "bbr""#,
        ),
        (
            "type = \"tfrc\"",
            r#"[{ at = "2s", until = "3s" }]"#,
            "flows[1].pauses: only tcp flows with the infinite workload, cbr, onoff and video flows pause",
        ),
    ];
    for (flow, pauses, expected) in cases {
        let err = error_of(&scenario(flow, pauses));
        assert!(err.contains(expected), "{flow} {pauses}:\n{err}");
    }
}

/// A trace shipped with the docs (docs/examples/traces/).
fn shipped(name: &str) -> String {
    format!("{}/../../docs/examples/traces/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// A trace file of `text` written for one test.
fn written(name: &str, text: &str) -> String {
    let path = std::env::temp_dir().join(format!("aqmlab-traffic-{}-{name}", std::process::id()));
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

/// Bits/s of a saturated trace link of `per_second` opportunities of 1504 bytes (Mahimahi's
/// PACKET_SIZE): the bytes an opportunity has left serve the next packet.
fn trace_rate(per_second: f64) -> f64 {
    per_second * 1504.0 * 8.0
}

/// A 15 Mbit/s CBR of 1500-byte packets into a drop-tail link whose capacity is the trace
/// `trace`, for `duration`; 1-s bins.
fn cbr_over_trace(trace: &str, duration: &str, graph: bool) -> Results {
    let topology = if graph {
        format!(
            r#"type = "graph"
nodes = ["A", "B"]
links = [{{ from = "A", to = "B", trace = "{trace}", delay = "5ms", qdisc = {{ type = "droptail", limit = 50 }} }}]"#
        )
    } else {
        format!(
            r#"type = "dumbbell"
bottleneck = {{ trace = "{trace}", delay = "5ms", qdisc = {{ type = "droptail", limit = 50 }} }}"#
        )
    };
    let ends = if graph { "src = \"A\"\ndst = \"B\"" } else { "" };
    simulate(&format!(
        r#"
[simulation]
duration = "{duration}"
[topology]
{topology}
[[flows]]
type = "cbr"
rate = "15Mbps"
packet_size = "1500B"
{ends}
"#
    ))
}

/// Within one 1500-byte packet per 1-s bin of `bps`.
fn assert_bin_rate(r: &Results, t: f64, bps: f64) {
    let got = bin(r, t);
    assert!((got - bps).abs() <= 12_000.0, "{t} s: {got}, expected {bps}");
}

#[test]
fn a_trace_of_one_opportunity_per_millisecond_carries_12_mbit_s_on_any_link() {
    // 1000 opportunities of 1504 bytes a second: 12.032 Mbit/s of 1500-byte packets, as the 4
    // bytes each leaves go to the next packet.
    for graph in [false, true] {
        let r = cbr_over_trace(&shipped("const-12mbps.up"), "10s", graph);
        for t in 1..10 {
            assert_bin_rate(&r, t as f64, trace_rate(1000.0));
        }
        // Its rate is the opportunities in the window [0, 10 s): at 1, 2, ..., 9999 ms.
        let link = r
            .links
            .iter()
            .find(|l| l.name == if graph { "A->B" } else { "L->R" })
            .unwrap();
        assert!(
            (link.rate_bps / trace_rate(999.9) - 1.0).abs() < 1e-12,
            "{}",
            link.rate_bps
        );
        assert!(link.utilisation > 0.999, "{}", link.utilisation);
    }
}

#[test]
fn goodput_follows_a_stepped_trace_and_the_trace_repeats() {
    // 12 Mbit/s (1000 opportunities/s) for 5 s, then 250/s for 5 s; then again.
    let r = cbr_over_trace(&shipped("stepped-12-3mbps.up"), "20s", false);
    for lap in [0.0, 10.0] {
        for t in [1.0, 2.0, 3.0, 4.0] {
            assert_bin_rate(&r, lap + t, trace_rate(1000.0));
        }
        for t in [6.0, 7.0, 8.0, 9.0] {
            assert_bin_rate(&r, lap + t, trace_rate(250.0));
        }
    }
    // The link's rate is the opportunities in the window [0, 20 s): 6250 per 10-s loop, less
    // the second loop's last, at 20 s.
    let link = r.links.iter().find(|l| l.name == "L->R").unwrap();
    assert!(
        (link.rate_bps / trace_rate(12_499.0 / 20.0) - 1.0).abs() < 1e-12,
        "{}",
        link.rate_bps
    );
    // A TCP flow over the same link takes most of each step.
    let tcp = simulate(&format!(
        r#"
[simulation]
duration = "20s"
[topology]
type = "dumbbell"
bottleneck = {{ trace = "{}", delay = "5ms", qdisc = {{ type = "droptail", limit = 100 }} }}
[[flows]]
type = "tcp"
packet_size = "1500B"
tcp = {{ profile = "linux" }}
"#,
        shipped("stepped-12-3mbps.up")
    ));
    let mean = |from: f64| (0..4).map(|i| bin(&tcp, from + i as f64)).sum::<f64>() / 4.0;
    for (from, capacity) in [(1.0, 1000.0), (6.0, 250.0), (11.0, 1000.0), (16.0, 250.0)] {
        // At most the capacity, give or take a packet per bin at the edges.
        let share = mean(from) / trace_rate(capacity);
        assert!(
            share > 0.9 && share <= 1.0 + 12_000.0 / trace_rate(capacity),
            "{from} s: {share}"
        );
    }
}

#[test]
fn trace_errors_name_the_field_and_the_line() {
    let link = |fields: &str| {
        format!(
            r#"
[simulation]
duration = "10s"
[topology]
type = "dumbbell"
bottleneck = {{ {fields}, delay = "5ms" }}
[[flows]]
type = "tcp"
"#
        )
    };
    let empty = written("empty.up", "");
    let unsorted = written("unsorted.up", "1\n2\n5\n3\n");
    let blank = written("blank.up", "1\n\n2\n");
    let short = written("short.up", "1\n2\n1000\n");
    let missing = written("missing.up", "1\n");
    std::fs::remove_file(&missing).unwrap();
    let cases = [
        (
            format!(r#"trace = "{empty}""#),
            format!("topology.bottleneck.trace: {empty}: no timestamps"),
        ),
        (
            format!(r#"trace = "{unsorted}""#),
            format!("topology.bottleneck.trace: {unsorted}: line 4: timestamps must not decrease: 3 ms after 5 ms"),
        ),
        (
            format!(r#"trace = "{blank}""#),
            format!("topology.bottleneck.trace: {blank}: line 2: must be a whole number of milliseconds"),
        ),
        (
            format!(r#"trace = "{missing}""#),
            format!("topology.bottleneck.trace: {missing}: No such file"),
        ),
        (
            format!(r#"trace = "{short}", rate = "10Mbps""#),
            "topology.bottleneck.rate: not used with `trace`".to_string(),
        ),
        (
            format!(r#"trace = "{short}", rate_changes = [{{ at = "1s", rate = "1Mbps" }}]"#),
            "topology.bottleneck.rate_changes: not used with `trace`".to_string(),
        ),
        (
            format!(r#"trace = "{short}", trace_repeat = false"#),
            "topology.bottleneck.trace_repeat: false, but the trace lasts 1s, less than simulation.duration (10s)"
                .to_string(),
        ),
        (
            r#"qdisc = { type = "droptail" }"#.to_string(),
            "topology.bottleneck.rate: required (or a `trace` of the capacity)".to_string(),
        ),
    ];
    for (fields, expected) in cases {
        let err = error_of(&link(&fields));
        assert!(err.starts_with(&expected), "{fields}:\n{err}");
    }
    for file in [empty, unsorted, blank, short] {
        std::fs::remove_file(file).unwrap();
    }
}

/// The bursts a `video` flow of `rate` delivers through 100 Mbit/s links in 2 s: the bytes
/// and the first 1-ms bin of each run of bins with deliveries.
fn video_bursts(rate: &str) -> Vec<(f64, usize)> {
    let r = simulate(&format!(
        r#"
[simulation]
duration = "2s"
throughput_bin = "1ms"
[topology]
type = "dumbbell"
access_rate = "100Mbps"
bottleneck = {{ rate = "100Mbps", delay = "5ms" }}
[[flows]]
type = "video"
rate = "{rate}"
"#
    ));
    let mut bursts: Vec<(f64, usize)> = Vec::new();
    let mut previous = 0.0;
    for (i, b) in r.throughput.iter().enumerate() {
        let bytes = b.bps * 1e-3 / 8.0;
        if bytes > 0.0 {
            if previous == 0.0 {
                bursts.push((0.0, i));
            }
            bursts.last_mut().unwrap().0 += bytes;
        }
        previous = bytes;
    }
    bursts
}

#[test]
fn video_frames_arrive_as_bursts_every_frame_interval() {
    // 4 Mbit/s at 25 frames/s: 20000 bytes, 20 packets of 1000 B, every 40 ms.
    let bursts = video_bursts("4Mbps");
    assert_eq!(bursts.len(), 50, "{bursts:?}");
    for pair in bursts.windows(2) {
        assert_eq!(pair[1].1 - pair[0].1, 40, "{bursts:?}");
    }
    assert!(
        bursts.iter().all(|(bytes, _)| (bytes - 20_000.0).abs() < 1e-6),
        "{bursts:?}"
    );
    // 4.1 Mbit/s: 20500 bytes a frame, so 20 and 21 packets in turn.
    let sizes: Vec<f64> = video_bursts("4.1Mbps").iter().map(|(bytes, _)| bytes.round()).collect();
    assert!(sizes.iter().all(|b| *b == 20_000.0 || *b == 21_000.0), "{sizes:?}");
    assert_eq!(sizes.iter().sum::<f64>(), 50.0 * 20_500.0);
}
