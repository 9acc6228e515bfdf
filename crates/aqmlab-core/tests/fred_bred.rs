//! FRED and BRED end to end: per-flow state is released under churn, and both
//! protect flows below their fair share from heavy unresponsive flows.

mod common;

use aqmlab_core::metrics::{bred_cbr_bound, FlowResult, Results};
use aqmlab_core::run;
use common::{counter, error_of, scenario};

/// 10 000 CBR flows in 100 waves of 100, one wave every 50 ms, each flow
/// sending 2–3 packets at 600 kb/s for 20–40 ms: 60 Mb/s offered to 10 Mb/s
/// while a wave lasts. All flows share one path, so only the flow ids differ.
fn churn(qdisc: &str) -> Results {
    let mut text = format!(
        r#"
[simulation]
duration = "6s"
sample_interval = 0
[topology]
type = "graph"
nodes = ["src", "L", "R", "dst"]
links = [
  {{ from = "src", to = "L", rate = "1Gbps", delay = "1ms" }},
  {{ from = "L", to = "R", rate = "10Mbps", delay = "1ms", qdisc = {qdisc} }},
  {{ from = "R", to = "dst", rate = "1Gbps", delay = "1ms" }},
]
"#
    );
    for wave in 0..100 {
        let start = wave as f64 * 0.05;
        text += &format!(
            "[[flows]]\ntype = \"cbr\"\nsrc = \"src\"\ndst = \"dst\"\ncount = 100\nrate = \"600kbps\"\nstart = \"{start}s\"\nstart_jitter = \"20ms\"\nstop = \"{}s\"\n",
            start + 0.04
        );
    }
    run(&scenario(&text)).expect("run")
}

#[test]
fn churn_of_10000_flows_keeps_state_bounded_by_the_buffer() {
    for qdisc in [r#"{ type = "fred", limit = 64 }"#, r#"{ type = "bred", limit = 64 }"#] {
        let r = churn(qdisc);
        assert_eq!(r.flows.len(), 10_000);
        let served = r.flows.iter().filter(|f| f.delivered_packets > 0).count();
        let peak = counter(&r, "L->R", "peak_active_flows");
        // Thousands of flows held state at some time, never more than the 64 buffered packets at once.
        assert!(served > 5_000, "{qdisc}: {served} flows served");
        assert!((32.0..=64.0).contains(&peak), "{qdisc}: peak {peak}");
        // The run ends long after the last wave: every flow's state has been released.
        assert_eq!(counter(&r, "L->R", "active_flows"), 0.0, "{qdisc}");
        assert_eq!(r.summary.packets_in_flight, 0);
    }
}

fn dumbbell(rate: &str, qdisc: &str, flows: &str) -> Results {
    let text = format!(
        r#"
[simulation]
duration = "25s"
warmup = "5s"
[topology]
type = "dumbbell"
bottleneck = {{ rate = "{rate}", delay = "5ms", qdisc = {qdisc} }}
{flows}
"#
    );
    run(&scenario(&text)).expect("run")
}

fn named<'a>(r: &'a Results, prefix: &'a str) -> impl Iterator<Item = &'a FlowResult> {
    r.flows.iter().filter(move |f| f.name.starts_with(prefix))
}

/// One 8 Mb/s CBR and four 1 Mb/s CBRs (below the 2 Mb/s fair share) on 10 Mb/s:
/// the max-min shares are 1 Mb/s for each light flow and 6 Mb/s for the heavy one.
const UNEQUAL_CBR: &str = r#"
[[flows]]
name = "heavy"
type = "cbr"
rate = "8Mbps"
jitter = true
[[flows]]
name = "light"
type = "cbr"
rate = "1Mbps"
count = 4
jitter = true
"#;

#[test]
fn fred_spares_flows_below_their_share_and_holds_a_heavy_cbr_to_its_share() {
    let r = dumbbell("10Mbps", r#"{ type = "fred" }"#, UNEQUAL_CBR);
    // A light flow holds about one packet (1 Mb/s × a few ms of queueing), below min_q = 2 and
    // avgcq, so no FRED rule applies to it: its loss should be near zero; 1% leaves room for transients.
    for f in named(&r, "light") {
        assert!(f.loss_rate < 0.01, "{}: loss {}", f.name, f.loss_rate);
    }
    // The heavy flow is struck and held to avgcq (§4.3), so it gets what the light flows leave:
    // 10 − 4 = 6 Mb/s. ±3% covers the light flows' jittered rates over the 20 s window.
    let heavy = named(&r, "heavy").next().unwrap();
    assert!((heavy.goodput_bps - 6e6).abs() < 0.18e6, "heavy {}", heavy.goodput_bps);
    assert!(counter(&r, "L->R", "strike_drops") > 0.0);
    assert!(counter(&r, "L->R", "peak_active_flows") <= 5.0);

    // Drop-tail in the same setting drops from everyone alike: the light flows lose > 10%.
    let tail = dumbbell("10Mbps", r#"{ type = "droptail", limit = 64 }"#, UNEQUAL_CBR);
    for f in named(&tail, "light") {
        assert!(f.loss_rate > 0.10, "droptail {}: loss {}", f.name, f.loss_rate);
    }
    assert!(named(&tail, "heavy").next().unwrap().goodput_bps > 6.5e6);
}

/// BRED §5.1 Fig. 5a's link and buffer (1.5 Mb/s, 150 packets of 500 bytes) with three
/// heavy CBRs at 1.5, 1 and 0.5 Mb/s and seven CBRs at 0.1 Mb/s, below the 0.15 Mb/s fair
/// share. Max-min: 0.1 Mb/s for each light flow, (1.5 − 0.7)/3 = 0.267 Mb/s for each heavy one.
// Names are unique (they key the flows' random streams); `named` matches the prefix.
const BRED_MIX: &str = r#"
[[flows]]
name = "heavy-1.5"
type = "cbr"
rate = "1.5Mbps"
jitter = true
packet_size = "500B"
[[flows]]
name = "heavy-1"
type = "cbr"
rate = "1Mbps"
jitter = true
packet_size = "500B"
[[flows]]
name = "heavy-0.5"
type = "cbr"
rate = "0.5Mbps"
jitter = true
packet_size = "500B"
[[flows]]
name = "light"
type = "cbr"
rate = "0.1Mbps"
count = 7
jitter = true
packet_size = "500B"
"#;

#[test]
fn bred_spares_conforming_flows_and_keeps_heavy_cbrs_under_the_eq14_bound() {
    // Eq. 14 with n_c = 3, n_t = 7: 0.2766 Mb/s per heavy CBR.
    let bound = bred_cbr_bound(1.3, 0.9, 3, 7) * 1.5e6;
    for limit in [150, 50] {
        let r = dumbbell("1.5Mbps", &format!(r#"{{ type = "bred", limit = {limit} }}"#), BRED_MIX);
        // Tolerances of bred-fig5a: a CBR at or below its share gets ≥ 95% of its rate;
        // a heavy CBR stays under the bound + 15%.
        for f in named(&r, "light") {
            assert!(
                f.goodput_bps >= 0.95 * 0.1e6 && f.loss_rate < 0.01,
                "limit {limit} {}: {} b/s, loss {}",
                f.name,
                f.goodput_bps,
                f.loss_rate
            );
        }
        // Each heavy CBR fills its W_m whatever its rate, so they share about equally; ±10%
        // because the slowest (a packet per 8 ms against a 2.7 ms packet time) refills its W_m
        // less promptly after a departure.
        for f in named(&r, "heavy") {
            assert!(
                f.goodput_bps <= 1.15 * bound,
                "limit {limit} {}: {} > {bound}",
                f.name,
                f.goodput_bps
            );
            assert!(
                (f.goodput_bps / (0.8e6 / 3.0) - 1.0).abs() < 0.10,
                "limit {limit} {}: {}",
                f.name,
                f.goodput_bps
            );
        }
        // The light flows wait behind the heavy ones long enough to stay active: N̂ sees ten (eq. 16).
        assert!((counter(&r, "L->R", "n_hat") - 10.0).abs() < 0.5);
    }
    // Drop-tail shares in proportion to the offered rates: the fastest CBR passes the bound
    // and the light flows are starved.
    let tail = dumbbell("1.5Mbps", r#"{ type = "droptail", limit = 150 }"#, BRED_MIX);
    assert!(named(&tail, "heavy").next().unwrap().goodput_bps > 1.15 * bound);
    assert!(named(&tail, "light").all(|f| f.goodput_bps < 0.5 * 0.1e6));
    let heavy: Vec<f64> = named(&tail, "heavy").map(|f| f.goodput_bps).collect();
    assert!(heavy[0] > 3.0 * heavy[2], "{heavy:?}");
}

#[test]
fn scenario_errors_name_the_qdisc_field() {
    let text = |qdisc: &str| {
        format!(
            "[simulation]\nduration = \"1s\"\n[topology]\ntype = \"dumbbell\"\nbottleneck = {{ rate = \"10Mbps\", delay = \"1ms\", qdisc = {qdisc} }}\n[[flows]]\ntype = \"cbr\"\nrate = \"1Mbps\"\n"
        )
    };
    let err = |qdisc: &str| error_of(&text(qdisc));
    assert_eq!(
        err(r#"{ type = "fred", min_q = 0 }"#),
        "topology.bottleneck.qdisc.min_q: must be >= 1, got 0"
    );
    assert_eq!(
        err(r#"{ type = "bred", alpha = 0.5 }"#),
        "topology.bottleneck.qdisc.alpha: must be > 1 (eq. 12), got 0.5"
    );
    assert!(err(r#"{ type = "fred", maxq = 3 }"#).contains("unknown field `maxq`"));
}
