//! LEDBAT (RFC 6817, `cc = "ledbat"`) end to end, checked against what the RFC's rules predict.
//!
//! None of these paths draws from a random stream (one clock, no random qdisc, the TCPs'
//! rules are deterministic): seeds 1–3 give the same numbers to the last digit (measured),
//! so each band below comes from the closed form (one packet's serialization, the queue-delay
//! histogram's 1 % buckets), not from a seed spread.

mod common;

use aqmlab_core::Results;

/// 1000-byte packets at 10 Mb/s: one packet's serialization, seconds.
const PACKET_TIME: f64 = 0.0008;

/// A dumbbell of 1 Gb/s access links without delay and a `rate` bottleneck of 20 ms one way
/// (RTT 40 ms) under a drop-tail buffer of `limit` packets; `link` adds to the bottleneck's
/// table, `flows` are the `[[flows]]` tables.
fn dumbbell(seed: u64, (duration, warmup): (f64, f64), (rate, limit, link): (&str, u32, &str), flows: &str) -> Results {
    common::simulate(&format!(
        r#"
[simulation]
duration = "{duration}s"
warmup = "{warmup}s"
seed = {seed}
sample_interval = "100ms"
[topology]
type = "dumbbell"
access_rate = "1Gbps"
access_delay = 0
sink_delay = 0
bottleneck = {{ rate = "{rate}", delay = "20ms", qdisc = {{ type = "droptail", limit = {limit} }}{link} }}
{flows}
"#
    ))
}

/// A LEDBAT flow; `ledbat` holds the `ledbat = { ... }` table's fields.
fn ledbat_flow(ledbat: &str) -> String {
    format!(
        r#"[[flows]]
type = "tcp"
tcp = {{ profile = "linux", cc = "ledbat", trace = true, ledbat = {{ {ledbat} }} }}
"#
    )
}

/// Flow `flow`'s mean goodput over the throughput bins in [from, to), b/s.
fn goodput(r: &Results, flow: u32, from: f64, to: f64) -> f64 {
    let bins: Vec<f64> = r
        .throughput
        .iter()
        .filter(|b| b.flow == flow && b.time >= from && b.time < to)
        .map(|b| b.bps)
        .collect();
    bins.iter().sum::<f64>() / bins.len() as f64
}

#[test]
fn one_ledbat_flow_keeps_the_standing_queue_at_target_and_fills_the_link() {
    // RFC 6817 §2.4.2: the window grows while queuing_delay < TARGET and shrinks above it, so
    // alone on a large buffer (2000 packets: no loss) the bottleneck's sojourn settles at
    // TARGET. Measured (seeds 1–3, from 40 s to 90 s): median 25.56 ms for 25 ms (the MIN
    // filter reads the least of the last samples, so the median sits up to a packet, 0.8 ms,
    // above), 98.57 ms for 100 ms; utilisation 1.0000, no drop.
    for target in [0.025, 0.1] {
        for seed in 1..=3 {
            let r = dumbbell(
                seed,
                (90.0, 40.0),
                ("10Mbps", 2000, ""),
                &ledbat_flow(&format!(r#"target = "{}ms""#, target * 1e3)),
            );
            let median = r.queue_delay[0].stats.median;
            assert!(
                (median - target).abs() <= 0.05 * target + PACKET_TIME,
                "target {target} s, seed {seed}: median sojourn {median} s"
            );
            let utilisation = r.links[0].utilisation;
            assert!(
                utilisation >= 0.9,
                "target {target} s, seed {seed}: utilisation {utilisation}"
            );
            assert_eq!(r.links[0].drops, 0);
        }
    }
}

#[test]
fn ledbat_yields_to_reno_and_takes_the_link_back_when_reno_stops() {
    // A Reno flow (Linux's tcp_cong.c, SACK recovery) fills the 100-packet buffer (80 ms of
    // queue, over three times TARGET = 25 ms) and stops at 60 s. Measured (seeds 1–3): LEDBAT's
    // share from 10 s to 60 s 1.76 % (176 kb/s of 10 Mb/s; Reno 9.82 Mb/s); from 65 s on it
    // carries 10.0 Mb/s, having regained the link within 2 s of Reno's stop.
    for seed in 1..=3 {
        let flows = format!(
            r#"{}
[[flows]]
type = "tcp"
stop = "60s"
tcp = {{ profile = "linux", cc = "reno" }}
"#,
            ledbat_flow(r#"target = "25ms""#)
        );
        let r = dumbbell(seed, (120.0, 10.0), ("10Mbps", 100, ""), &flows);
        let (ledbat, reno) = (goodput(&r, 0, 10.0, 60.0), goodput(&r, 1, 10.0, 60.0));
        let share = ledbat / (ledbat + reno);
        assert!(share < 0.05, "seed {seed}: LEDBAT's share {share:.4} beside Reno");
        assert!(reno > 0.9 * 10e6, "seed {seed}: Reno {reno} b/s");
        let after = goodput(&r, 0, 62.0, 120.0);
        assert!(after >= 0.95 * 10e6, "seed {seed}: LEDBAT alone again {after} b/s");
    }
}

#[test]
fn the_base_delay_takes_a_shorter_path_at_once_and_a_longer_one_only_at_a_rollover() {
    // The one-way delay of the path: 20 ms of propagation, a packet's serialization at the
    // bottleneck (1000 B: 8 ms at 1 Mb/s, 0.8 ms at 10 Mb/s) and at the two 1 Gb/s access
    // links (8 µs each). The bottleneck goes from 1 to 10 Mb/s at 30 s and back to 1 Mb/s at
    // 90 s. RFC 6817 §2.4.2 update_base_delay(): a lower delay is the base delay at once; a
    // higher one only when the minutes that saw the lower have rolled out, so the base delay
    // rises only at the first ACK of a minute (here BASE_HISTORY = 2).
    let base_delays = |ledbat: &str| {
        let r = dumbbell(
            1,
            (240.0, 0.0),
            (
                "1Mbps",
                2000,
                r#", rate_changes = [{ at = "30s", rate = "10Mbps" }, { at = "90s", rate = "1Mbps" }]"#,
            ),
            &ledbat_flow(ledbat),
        );
        common::trace(&r, "base_delay")
    };
    let base = base_delays(r#"target = "25ms", base_history = 2"#);
    let slow_path = 0.020 + 0.008 + 2.0 * 8e-6;
    let fast_path = 0.020 + 0.0008 + 2.0 * 8e-6;
    assert!((base[0].1 - slow_path).abs() < 1e-9, "first sample {:?}", base[0]);
    // The queue built at 1 Mb/s drains at 10 Mb/s within a second (measured: 21.616 ms at
    // 30.05 s, a packet that queued behind the last slow one, then the path's 20.816 ms).
    let reached = base
        .iter()
        .find(|(_, d)| (d - fast_path).abs() < 1e-9)
        .expect("the shorter path");
    assert!(
        reached.0 > 30.0 && reached.0 < 31.0,
        "the shorter path at once: {reached:?}"
    );
    assert!(base.iter().all(|(_, d)| *d >= fast_path - 1e-9), "{base:?}");
    let rises: Vec<_> = base.windows(2).filter(|w| w[1].1 > w[0].1).map(|w| w[1]).collect();
    assert!(!rises.is_empty(), "{base:?}");
    for (t, delay) in &rises {
        let into_minute = t % 60.0;
        assert!(
            into_minute < 0.1,
            "a rise at {t} s ({delay} s), not at a rollover: {base:?}"
        );
        assert!(*t >= 120.0, "the 10 Mb/s minutes roll out from 120 s on, not {t}");
    }
    // With the default BASE_HISTORY of 10 minutes nothing rolls out in 4 minutes: the base
    // delay never rises.
    let base = base_delays(r#"target = "25ms""#);
    assert!(base.windows(2).all(|w| w[1].1 < w[0].1), "{base:?}");
    assert!((base[base.len() - 1].1 - fast_path).abs() < 1e-9, "{base:?}");
}

#[test]
fn bad_ledbat_settings_are_refused_naming_the_field() {
    let scenario = |tcp: &str| {
        format!(
            "[simulation]\nduration = \"1s\"\n[topology]\ntype = \"dumbbell\"\nbottleneck = {{ rate = \"10Mbps\", delay = \"1ms\" }}\n[[flows]]\ntype = \"tcp\"\ntcp = {tcp}\n"
        )
    };
    let error = |tcp: &str| common::error_of(&scenario(tcp));
    assert!(
        error(r#"{ profile = "linux", cc = "ledbat", ledbat = { target = "150ms" } }"#)
            .starts_with("flows[0].tcp.ledbat.target: must be at most 100ms (RFC 6817 §2.5")
    );
    assert!(error(r#"{ profile = "linux", cc = "ledbat", ledbat = { gain = 0 } }"#)
        .starts_with("flows[0].tcp.ledbat.gain: must be in (0, 1], got 0"));
    assert!(
        error(r#"{ profile = "linux", cc = "ledbat", ledbat = { allowed_increase = -1 } }"#)
            .starts_with("flows[0].tcp.ledbat.allowed_increase: must be > 0")
    );
    assert!(
        error(r#"{ profile = "linux", cc = "ledbat", ledbat = { base_history = 0 } }"#)
            .starts_with("flows[0].tcp.ledbat.base_history: must be in [1, 1000], got 0")
    );
    assert!(error(r#"{ profile = "linux", cc = "ledbat", ledbat = { noise = 1 } }"#).contains("noise"));
    assert!(
        error(r#"{ profile = "linux", cc = "cubic", ledbat = { target = "25ms" } }"#)
            .starts_with(r#"flows[0].tcp.ledbat: read only with cc = "ledbat", got cc = "cubic""#)
    );
    let rfc = aqmlab_core::run(&common::scenario(&scenario(r#"{ cc = "ledbat" }"#))).unwrap_err();
    assert!(
        rfc.to_string()
            .starts_with(r#"flows[0].tcp.cc: "ledbat" is a module of the linux profile's"#),
        "{rfc}"
    );
}

#[test]
fn same_seed_same_results() {
    let run = || {
        let flows = format!(
            "{}[[flows]]\ntype = \"tcp\"\nstart = \"2s\"\nstop = \"10s\"\n",
            ledbat_flow(r#"target = "25ms""#)
        );
        serde_json::to_string(&dumbbell(7, (20.0, 0.0), ("10Mbps", 100, ""), &flows)).unwrap()
    };
    assert_eq!(run(), run());
}
