//! RED on a dumbbell bottleneck: drop rate against the Floyd–Jacobson formula,
//! the average's place between the thresholds, and scenario-file errors.

mod common;

use aqmlab_core::{run, Results, Scenario};
use common::{error_of, scenario};

/// One CBR flow at `cbr_rate` through a 10 Mb/s bottleneck with `qdisc`.
fn cbr_scenario(duration: &str, warmup: &str, qdisc: &str, cbr_rate: &str) -> Scenario {
    let text = format!(
        r#"
        [simulation]
        duration = "{duration}"
        warmup = "{warmup}"
        seed = 3
        record_drops = true
        [topology]
        type = "dumbbell"
        bottleneck = {{ rate = "10Mbps", delay = "1ms", qdisc = {qdisc} }}
        [[flows]]
        type = "cbr"
        rate = "{cbr_rate}"
        "#
    );
    scenario(&text)
}

fn error(qdisc: &str) -> String {
    let text = format!(
        r#"
        [simulation]
        duration = "1s"
        [topology]
        type = "dumbbell"
        bottleneck = {{ rate = "10Mbps", delay = "1ms", qdisc = {qdisc} }}
        [[flows]]
        type = "cbr"
        rate = "1Mbps"
        "#
    );
    error_of(&text)
}

/// Long-run fraction of arrivals RED drops at a fixed p_b, from the closed form
/// derived in qdisc/red.rs: P(gap > k) = max(0, (1 − (k+1)·p_b)/(1 − p_b)), fraction = 1/E[gap].
fn uniformized_drop_fraction(p_b: f64) -> f64 {
    let mut mean_gap = 0.0;
    let mut k = 0.0;
    loop {
        let survival = (1.0 - (k + 1.0) * p_b) / (1.0 - p_b);
        if survival <= 0.0 {
            return 1.0 / mean_gap;
        }
        mean_gap += survival;
        k += 1.0;
    }
}

fn window_drops(results: &Results, reason: &str) -> u64 {
    results
        .drops
        .iter()
        .filter(|d| d.reason == reason)
        .map(|d| d.window_count)
        .sum()
}

#[test]
fn constant_rate_overload_drops_at_the_red_rate_for_the_measured_average() {
    // 15 Mb/s of CBR into 10 Mb/s: RED must drop a third of the arrivals, which
    // with max_p 0.5 over [20, 80] needs p_b ≈ 1/6, i.e. avg ≈ 40 packets.
    let (min_th, max_th, max_p) = (20.0, 80.0, 0.5);
    let qdisc = format!("{{ type = \"red\", limit = 200, min_th = {min_th}, max_th = {max_th}, max_p = {max_p} }}");
    let results = run(&cbr_scenario("25s", "5s", &qdisc, "15Mbps")).unwrap();
    let averages: Vec<f64> = results
        .queue
        .iter()
        .filter(|s| s.time >= 5.0)
        .map(|s| s.average.unwrap())
        .collect();
    let (lowest, highest) = averages
        .iter()
        .fold((f64::MAX, f64::MIN), |(lo, hi), &a| (lo.min(a), hi.max(a)));
    assert!(
        lowest > min_th && highest < max_th,
        "average left [min_th, max_th]: {lowest}..{highest}"
    );
    // The formula evaluated at each sampled average (samples every 10 ms, so
    // arrivals are weighted evenly in time, as a CBR's are).
    let predicted = averages
        .iter()
        .map(|a| uniformized_drop_fraction(max_p * (a - min_th) / (max_th - min_th)))
        .sum::<f64>()
        / averages.len() as f64;
    let arrivals = results.flows[0].window_sent_packets as f64;
    let measured = window_drops(&results, "early") as f64 / arrivals;
    assert_eq!(window_drops(&results, "forced") + window_drops(&results, "overflow"), 0);
    // Counting noise: 37 500 arrivals at p_b ≈ 1/6 (gaps uniform on {1..5}: mean 3,
    // variance 2) give σ ≈ √(37 500·2/27) ≈ 53 drops of ~12 500, 0.4 %; the
    // window edges add a few packets. 2 % is 3σ with room for the average's drift within a gap.
    assert!(
        (measured - predicted).abs() < 0.02 * predicted,
        "measured {measured:.4}, predicted {predicted:.4} (mean avg {:.2})",
        averages.iter().sum::<f64>() / averages.len() as f64
    );
    // Conservation: the drops are exactly what the link cannot carry.
    assert!((measured - 1.0 / 3.0).abs() < 0.01, "drop fraction {measured}");

    // Count-based uniformization: CBR packets arrive every 0.8 ms·(10/15), so the
    // time between drops gives the gap in packets. A geometric gap with the same
    // mean m has variance m(m − 1); uniform gaps on {1..5} have 2 against 6.
    let interval = 1000.0 * 8.0 / 15e6;
    let times: Vec<f64> = results
        .drop_log
        .iter()
        .filter(|d| d.time >= 5.0)
        .map(|d| d.time)
        .collect();
    let gaps: Vec<f64> = times.windows(2).map(|w| ((w[1] - w[0]) / interval).round()).collect();
    let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
    let variance = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / (gaps.len() - 1) as f64;
    let geometric = mean * (mean - 1.0);
    assert!(
        variance < 0.5 * geometric,
        "gap variance {variance:.3}, geometric {geometric:.3} (mean gap {mean:.3})"
    );
}

#[test]
fn fixed_p_drops_each_arrival_with_the_configured_probability() {
    // 5 Mb/s of 1000-byte packets for 160 s: 100 000 arrivals, well under the link rate.
    let p = 0.1;
    let results = run(&cbr_scenario(
        "160s",
        "0s",
        &format!("{{ type = \"red\", fixed_p = {p} }}"),
        "5Mbps",
    ))
    .unwrap();
    let arrivals = results.flows[0].window_sent_packets as f64;
    let drops = window_drops(&results, "early") as f64;
    let sigma = (arrivals * p * (1.0 - p)).sqrt();
    assert!(
        (drops - arrivals * p).abs() < 3.0 * sigma,
        "{drops} drops of {arrivals}, expected {} ± {sigma:.0}",
        arrivals * p
    );
    // An empty queue: every drop is fixed_p's, none forced or overflowed.
    assert_eq!(window_drops(&results, "forced") + window_drops(&results, "overflow"), 0);
}

#[test]
fn bad_red_parameters_name_the_field() {
    let path = "topology.bottleneck.qdisc";
    assert_eq!(
        error(r#"{ type = "red", min_th = 20 }"#),
        format!("{path}.min_th: must be < max_th (15), got 20")
    );
    assert_eq!(
        error(r#"{ type = "red", min_th = 20, max_th = 10 }"#),
        format!("{path}.min_th: must be < max_th (10), got 20")
    );
    assert_eq!(
        error(r#"{ type = "red", max_p = 2 }"#),
        format!("{path}.max_p: must be in (0, 1], got 2")
    );
    assert_eq!(
        error(r#"{ type = "red", max_p = 0 }"#),
        format!("{path}.max_p: must be in (0, 1], got 0")
    );
    assert_eq!(
        error(r#"{ type = "red", w_q = 0 }"#),
        format!("{path}.w_q: must be in (0, 1], got 0")
    );
    assert_eq!(
        error(r#"{ type = "red", w_q = -0.002 }"#),
        format!("{path}.w_q: must be in (0, 1], got -0.002")
    );
    assert_eq!(
        error(r#"{ type = "red", limit = 10 }"#),
        format!("{path}.max_th: must be <= limit (10), got 15")
    );
    assert_eq!(
        error(r#"{ type = "red", bytes = true, limit_bytes = "10000B" }"#),
        format!("{path}.max_th: must be <= limit_bytes (10000), got 15000")
    );
    assert_eq!(
        error(r#"{ type = "red", fixed_p = 1.5 }"#),
        format!("{path}.fixed_p: must be in [0, 1], got 1.5")
    );
    assert!(error(r#"{ type = "red", maxp = 0.1 }"#).contains("unknown field `maxp`"));
}

/// A set of TCP flows keeps RED's average between the thresholds: the drops
/// RED makes there are what holds the flows back (F–J §1, FRED §3). With the
/// average above max_th every arrival would be dropped; below min_th none is.
#[test]
fn tcp_flows_hold_the_average_between_the_thresholds() {
    let text = r#"
        [simulation]
        duration = "60s"
        warmup = "10s"
        sample_interval = "10ms"
        seed = 5
        [topology]
        type = "dumbbell"
        access_delay = "10ms"
        bottleneck = { rate = "10Mbps", delay = "10ms", qdisc = { type = "red", limit = 100, min_th = 15, max_th = 45, max_p = 0.1 } }
        [[flows]]
        type = "tcp"
        count = 20
        start_jitter = "2s"
    "#;
    let r = run(&scenario(text)).unwrap();
    let averages: Vec<f64> = r
        .queue
        .iter()
        .filter(|q| q.time >= 10.0)
        .map(|q| q.average.unwrap())
        .collect();
    let inside = averages.iter().filter(|&&a| (15.0..45.0).contains(&a)).count() as f64 / averages.len() as f64;
    let mean = averages.iter().sum::<f64>() / averages.len() as f64;
    assert!(
        inside > 0.95,
        "avg inside [min_th, max_th) in {:.1} % of samples, mean {mean:.1}",
        inside * 100.0
    );
    assert!(window_drops(&r, "early") > 0 && window_drops(&r, "forced") + window_drops(&r, "overflow") == 0);
    let (_, util) = &r.summary.utilisation[0];
    assert!(*util > 0.95, "utilisation {util}");
}
