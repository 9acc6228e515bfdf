//! RLM end to end (issue 12): a receiver alone on a link settles at the most layers whose
//! cumulative rate fits the link, and keeps probing the next one; beside a CBR that takes
//! half the link it settles one level lower. And an `rlm` flow's table, checked when the
//! scenario is read.

mod common;

use aqmlab_core::Results;
use common::{error_of, simulate};

/// CSFQ §3.3's layers: layer i sends 2^(i+4) kbps, i = 1…7.
const BASE_BPS: f64 = 32e3;
const LAYERS: u32 = 7;
const DURATION: f64 = 600.0;
/// The receiver climbs one layer per join experiment, at most one per T_D + 2·deviation
/// (9 s with the initial estimates): 4 layers take about 50 s. Measure after 100 s.
const SETTLED_FROM: f64 = 100.0;

/// The most layers whose cumulative rate base·(2^n − 1) fits in `capacity_bps`.
fn layers_that_fit(capacity_bps: f64) -> u32 {
    (1..=LAYERS)
        .take_while(|&n| BASE_BPS * (2f64.powi(n as i32) - 1.0) <= capacity_bps)
        .last()
        .unwrap_or(0)
}

/// An RLM session (flow 0) on a 1 Mbps, 1 ms link with a 64 KB drop-tail buffer (CSFQ §3's
/// buffer), beside `cross` (more `[[flows]]`).
fn run(seed: u64, cross: &str) -> Results {
    simulate(&format!(
        r#"
[simulation]
duration = "{DURATION}s"
warmup = "{SETTLED_FROM}s"
seed = {seed}
[topology]
type = "dumbbell"
access_rate = "100Mbps"
bottleneck = {{ rate = "1Mbps", delay = "1ms", qdisc = {{ type = "droptail", limit_bytes = "64KB" }} }}
[[flows]]
name = "rlm"
type = "rlm"
trace = true
{cross}
"#
    ))
}

/// The receiver's subscription after `SETTLED_FROM`: its time average, and the levels it
/// took there in order.
fn subscription(results: &Results) -> (f64, Vec<u32>) {
    let changes: Vec<(f64, f64)> = results
        .traces
        .iter()
        .filter(|t| t.flow == 0 && t.var == "layers")
        .map(|t| (t.time, t.value))
        .collect();
    let mut weighted = 0.0;
    let mut levels = vec![];
    for (i, &(at, level)) in changes.iter().enumerate() {
        let until = changes.get(i + 1).map_or(DURATION, |next| next.0);
        let (from, until) = (at.max(SETTLED_FROM), until.min(DURATION));
        if until > from {
            weighted += level * (until - from);
            levels.push(level as u32);
        }
    }
    (weighted / (DURATION - SETTLED_FROM), levels)
}

/// Settled at `expected` layers: that level at least 97 % of the time (each probe of the
/// next layer lasts about one detection time, ~1 s, every 20–85 s), never two above it, and
/// still probing: at least 3 join experiments of `expected + 1` in the 500 s (the
/// join-timer backs off to at most 60 s: one try per 85 s on average).
fn assert_settled(results: &Results, expected: u32) {
    let (mean, levels) = subscription(results);
    assert!(
        mean >= expected as f64 && mean <= expected as f64 + 0.03,
        "mean level {mean:.3}, expected {expected}: {levels:?}"
    );
    assert!(levels.iter().all(|&l| l == expected || l == expected + 1), "{levels:?}");
    let probes = levels.iter().filter(|&&l| l == expected + 1).count();
    eprintln!("settled at {expected}: mean level {mean:.3}, {probes} probes");
    assert!(probes >= 3, "{probes} probes of layer {}: {levels:?}", expected + 1);
}

#[test]
fn alone_a_receiver_settles_at_the_layers_that_fit_the_link_and_keeps_probing() {
    // 1 Mbps: five layers (0.992 Mbps) fit, six (2.016 Mbps) do not.
    assert_eq!(layers_that_fit(1e6), 5);
    for seed in 1..=3 {
        let results = run(seed, "");
        assert_settled(&results, 5);
        // Its goodput: five layers' 0.992 Mbps plus what the probes get through, at most the link.
        let goodput = results.flows[0].goodput_bps;
        assert!((0.992e6..=1e6).contains(&goodput), "seed {seed}: {goodput}");
    }
}

#[test]
fn beside_a_cbr_taking_half_the_link_it_settles_one_level_lower() {
    // 0.5 Mbps left: four layers (0.48 Mbps) fit, five do not.
    assert_eq!(layers_that_fit(0.5e6), 4);
    let cbr = "[[flows]]\nname = \"cbr\"\ntype = \"cbr\"\nrate = \"500kbps\"\njitter = true";
    for seed in 1..=3 {
        let results = run(seed, cbr);
        assert_settled(&results, 4);
        // The CBR keeps its half: the probes cost it at most a few per cent.
        let cbr = results.flows[1].goodput_bps;
        assert!(cbr >= 0.97 * 0.5e6, "seed {seed}: CBR {cbr}");
    }
}

#[test]
fn errors_name_the_field() {
    let error = |fields: &str| {
        error_of(&format!(
            "[simulation]\nduration = \"10s\"\n[topology]\ntype = \"dumbbell\"\n\
             bottleneck = {{ rate = \"1Mbps\", delay = \"1ms\" }}\n[[flows]]\ntype = \"rlm\"\n{fields}\n"
        ))
    };
    assert_eq!(error("layers = 0"), "flows[0].layers: must be in [1, 32], got 0");
    assert_eq!(
        error("layers = 32\nbase_rate = \"1Mbps\""),
        "flows[0].base_rate: layer 32 would send 2.147483648e15 bit/s, above the 1e12 limit of any rate"
    );
    assert_eq!(error("beta = 0"), "flows[0].beta: must be in (0, 1], got 0");
    assert_eq!(error("alpha = 0.5"), "flows[0].alpha: must be >= 1, got 0.5");
    assert_eq!(
        error("join_timer_max = \"1s\""),
        "flows[0].join_timer_max: must be >= join_timer_min (5s), got 1s"
    );
    assert_eq!(
        error("loss_threshold = 2"),
        "flows[0].loss_threshold: must be in [0, 1], got 2"
    );
    assert_eq!(
        error("prune_latency = \"-1s\""),
        "flows[0].prune_latency: must be >= 0, got -1s"
    );
    assert!(error("rate = 1").starts_with("flows[0].rate: unknown field `rate`"));
}
