//! Engine-level behaviour: determinism, conservation, UDP delivery, routing, errors.

mod common;

use aqmlab_core::scenario::Scenario;
use aqmlab_core::{run, Results};
use common::{error_of, scenario, simulate};

fn dumbbell(qdisc: &str, flows: &str) -> String {
    format!(
        r#"
[simulation]
duration = "20s"
warmup = "2s"
seed = 7
[topology]
type = "dumbbell"
bottleneck = {{ rate = "10Mbps", delay = "5ms", qdisc = {qdisc} }}
{flows}
"#
    )
}

const CBR_MIX: &str = r#"
[[flows]]
type = "cbr"
rate = "3Mbps"
jitter = true
count = 3
[[flows]]
type = "onoff"
rate = "4Mbps"
on_time = "0.5s"
off_time = "0.5s"
"#;

fn assert_conserved(r: &Results) {
    let s = &r.summary;
    assert_eq!(
        s.packets_sent,
        s.packets_delivered + s.packets_dropped + s.packets_in_flight
    );
}

#[test]
fn same_seed_same_results_different_seed_different_results() {
    let text = dumbbell(r#"{ type = "droptail", limit = 20 }"#, CBR_MIX);
    let a = run(&scenario(&text)).unwrap();
    let b = run(&scenario(&text)).unwrap();
    assert_eq!(a.to_json(), b.to_json());
    assert!(a.summary.packets_dropped > 0, "the mix overloads the link");
    let c = run(&scenario(&text.replace("seed = 7", "seed = 8"))).unwrap();
    assert_ne!(a.to_json(), c.to_json());
    assert_conserved(&a);
    assert_conserved(&c);
}

#[test]
fn cbr_below_link_rate_is_delivered_at_its_rate() {
    let flows = "[[flows]]\ntype = \"cbr\"\nrate = \"4Mbps\"\njitter = true\n";
    let r = run(&scenario(&dumbbell(r#"{ type = "droptail", limit = 50 }"#, flows))).unwrap();
    let f = &r.flows[0];
    assert!((f.goodput_bps - 4e6).abs() / 4e6 < 0.01, "goodput {}", f.goodput_bps);
    assert_eq!(f.dropped_packets, 0);
    assert_conserved(&r);
}

#[test]
fn cbr_above_link_rate_saturates_a_droptail_link() {
    let flows = "[[flows]]\ntype = \"cbr\"\nrate = \"15Mbps\"\n";
    let r = run(&scenario(&dumbbell(r#"{ type = "droptail", limit = 50 }"#, flows))).unwrap();
    let (_, util) = &r.summary.utilisation[0];
    assert!(*util >= 0.99, "utilisation {util}");
    let f = &r.flows[0];
    assert!((f.goodput_bps - 10e6).abs() / 10e6 < 0.01, "goodput {}", f.goodput_bps);
    // A third of what is offered cannot fit.
    assert!((f.loss_rate - 1.0 / 3.0).abs() < 0.01, "loss {}", f.loss_rate);
    assert!(r.drops.iter().all(|d| d.reason == "overflow" && d.link == 0));
    assert_conserved(&r);
}

#[test]
fn onoff_source_averages_its_duty_cycle() {
    let flows = "[[flows]]\ntype = \"onoff\"\nrate = \"4Mbps\"\non_time = \"0.2s\"\noff_time = \"0.2s\"\n";
    let text = dumbbell(r#"{ type = "droptail", limit = 100 }"#, flows).replace("20s", "400s");
    let r = run(&scenario(&text)).unwrap();
    // Mean rate 2 Mbps; ~1000 on/off cycles give a relative standard error of about 3 %.
    let g = r.flows[0].goodput_bps;
    assert!((g - 2e6).abs() / 2e6 < 0.1, "goodput {g}");
}

#[test]
fn rate_changes_show_in_the_throughput_series() {
    let flows = "[[flows]]\ntype = \"cbr\"\nrate = \"1Mbps\"\nrate_changes = [{ at = \"10s\", rate = \"3Mbps\" }]\n";
    let r = run(&scenario(&dumbbell(r#"{ type = "droptail" }"#, flows))).unwrap();
    let bin = |t: f64| r.throughput.iter().find(|b| b.time == t).unwrap().bps;
    assert!((bin(5.0) - 1e6).abs() < 2e4, "{}", bin(5.0));
    assert!((bin(15.0) - 3e6).abs() < 3e4, "{}", bin(15.0));
}

#[test]
fn graph_routes_take_the_fewest_hops_and_rtt_adds_up() {
    let text = r#"
[simulation]
duration = "5s"
[topology]
type = "graph"
nodes = ["a", "b", "c", "d"]
links = [
  { from = "a", to = "b", rate = "10Mbps", delay = "1ms" },
  { from = "b", to = "c", rate = "10Mbps", delay = "1ms" },
  { from = "c", to = "d", rate = "10Mbps", delay = "1ms" },
  { from = "a", to = "d", rate = "2Mbps", delay = "20ms", monitor = true },
]
[[flows]]
type = "cbr"
src = "a"
dst = "d"
rate = "1Mbps"
"#;
    let r = run(&scenario(text)).unwrap();
    let f = &r.flows[0];
    assert!(
        (f.base_rtt - 0.040).abs() < 1e-12,
        "one hop of 20 ms each way: {}",
        f.base_rtt
    );
    let direct = r.links.iter().find(|l| l.name == "a->d").unwrap();
    assert!(direct.packets_sent > 600);
    assert_eq!(r.links.iter().find(|l| l.name == "a->b").unwrap().packets_sent, 0);
    assert!(!r.queue.is_empty() && r.queue.iter().all(|q| q.link == direct.id));
}

#[test]
fn max_min_fair_shares_are_reported_per_flow() {
    let flows = "[[flows]]\ntype = \"cbr\"\nrate = \"1Mbps\"\n[[flows]]\ntype = \"cbr\"\nrate = \"8Mbps\"\ncount = 2\n";
    let r = run(&scenario(&dumbbell(r#"{ type = "droptail" }"#, flows))).unwrap();
    let shares: Vec<f64> = r.flows.iter().map(|f| f.fair_share_bps).collect();
    assert_eq!(shares, vec![1e6, 4.5e6, 4.5e6]);
}

#[test]
fn bad_scenarios_name_the_field() {
    let ok = dumbbell(
        r#"{ type = "droptail", limit = 50 }"#,
        "[[flows]]\ntype = \"cbr\"\nrate = \"5Mbps\"\n",
    );
    assert!(Scenario::from_toml_str(&ok).is_ok());
    assert_eq!(
        error_of(&ok.replace("5Mbps", "-1Mbps")),
        "flows[0].rate: must be > 0, got -1Mbps"
    );
    assert_eq!(
        error_of(&ok.replace("duration = \"20s\"", "")),
        "simulation: missing field `duration`"
    );
    assert_eq!(
        error_of(&ok.replace("\"droptail\"", "\"fifo\"")),
        format!(
            "topology.bottleneck.qdisc.type: unknown type `fifo`, expected one of {}",
            aqmlab_core::qdisc::QdiscSpec::NAMES.join(", ")
        )
    );
    assert!(error_of(&ok.replace("limit = 50", "limit = 50, lmit = 3"))
        .starts_with("topology.bottleneck.qdisc.lmit: unknown field `lmit`"));
    assert_eq!(
        error_of(&ok.replace("limit = 50", "limit = 0")),
        "topology.bottleneck.qdisc.limit: must be > 0, got 0"
    );
    assert_eq!(
        error_of(&ok.replace("\"5Mbps\"", "\"5 parsecs\""))
            .split(':')
            .next()
            .unwrap(),
        "flows[0].rate"
    );
    assert_eq!(
        error_of(&ok.replace("warmup = \"2s\"", "warmup = \"30s\"")),
        "simulation.warmup: must be < duration (20s), got 30s"
    );
    assert_eq!(
        error_of(&ok.replace("type = \"cbr\"", "type = \"cbr\"\nsrc = \"x\""))
            .split(':')
            .next()
            .unwrap(),
        "flows[0].src"
    );
    // A flow's name keys its random streams, so two flows may not share one, even a generated one.
    let two = format!("{ok}[[flows]]\nname = \"x\"\ntype = \"cbr\"\nrate = \"1Mbps\"\n");
    assert!(Scenario::from_toml_str(&two).is_ok());
    assert_eq!(
        error_of(&two.replace("name = \"x\"", "name = \"flow0\"")),
        "flows[1].name: flow name \"flow0\" is already used by flows[0]; each flow needs its own name (it keys the flow's random streams)"
    );
    assert_eq!(
        error_of(&two.replace("name = \"x\"", "name = \"x\"\ncount = 2").replace("[[flows]]\ntype", "[[flows]]\nname = \"x[1]\"\ntype")),
        "flows[1].name: flow name \"x[1]\" is already used by flows[0]; each flow needs its own name (it keys the flow's random streams)"
    );
    let graph = r#"
[simulation]
duration = "1s"
[topology]
type = "graph"
nodes = ["a", "b"]
links = [{ from = "a", to = "b", rate = "1Mbps", delay = "1ms" }]
[[flows]]
type = "cbr"
src = "a"
dst = "z"
rate = "100kbps"
"#;
    assert_eq!(error_of(graph), "flows[0].dst: unknown node \"z\"");
    assert_eq!(
        error_of(&graph.replace("to = \"b\"", "to = \"q\"")),
        "topology.links[0].to: unknown node \"q\""
    );
    assert_eq!(
        error_of(&graph.replace("type = \"graph\"", "type = \"ring\"")),
        "topology.type: unknown type `ring`, expected one of dumbbell, graph, parking_lot"
    );
}

#[test]
fn json_and_toml_give_the_same_scenario() {
    let toml_text = dumbbell(r#"{ type = "droptail", limit = 20 }"#, CBR_MIX);
    let value: toml::Value = toml::from_str(&toml_text).unwrap();
    let json_text = serde_json::to_string(&value).unwrap();
    let a = run(&scenario(&toml_text)).unwrap();
    let b = run(&Scenario::from_json_str(&json_text).unwrap()).unwrap();
    assert_eq!(a.to_json(), b.to_json());
}

/// Each flow type takes the settings every flow has plus its own; errors name the field.
#[test]
fn flow_types_take_only_their_own_settings() {
    let cbr = dumbbell(
        r#"{ type = "droptail" }"#,
        "[[flows]]\ntype = \"cbr\"\nrate = \"5Mbps\"\nstart = \"1s\"\n",
    );
    assert!(Scenario::from_toml_str(&cbr).is_ok());
    assert_eq!(
        error_of(&cbr.replace("start = \"1s\"", "tcp = { window = 8 }")),
        "flows[0].tcp: unknown field `tcp`, expected one of `name`, `count`, `src`, `dst`, `access_rate`, `access_delay`, `sink_delay`, `hop`, `start`, `start_jitter`, `stop`, `packet_size`, `weight`, `pauses`, `rate`, `jitter`, `rate_changes`, `ecn`"
    );
    assert_eq!(
        error_of(&cbr.replace("rate = \"5Mbps\"", "")),
        "flows[0]: missing field `rate`"
    );
    assert_eq!(
        error_of(&cbr.replace("start = \"1s\"", "start = \"30s\"")),
        "flows[0].start: must be < simulation.duration (20s), got 30s"
    );
    assert_eq!(
        error_of(&cbr.replace("start = \"1s\"", "start = \"soon\""))
            .split(':')
            .next()
            .unwrap(),
        "flows[0].start"
    );
    assert_eq!(
        error_of(&cbr.replace("\"cbr\"", "\"ftp\"")),
        "flows[0].type: unknown type `ftp`, expected one of tcp, cbr, onoff, tfrc, rlm, video"
    );
    // What README and the demo call UDP is named (issue 34 item 10).
    assert!(error_of(&cbr.replace("\"cbr\"", "\"udp\""))
        .starts_with("flows[0].type: unknown type `udp`: aqmlab's UDP sources are `cbr`"));
    assert_eq!(
        error_of(&cbr.replace("type = \"cbr\"", "")),
        "flows[0]: missing field `type` (one of tcp, cbr, onoff, tfrc, rlm, video)"
    );
    let onoff = cbr
        .replace("\"cbr\"", "\"onoff\"")
        .replace("start = \"1s\"", "on_time = \"1s\"\noff_time = \"1s\"");
    assert!(Scenario::from_toml_str(&onoff).is_ok());
    assert_eq!(
        error_of(&onoff.replace("off_time = \"1s\"", "")),
        "flows[0]: missing field `off_time`"
    );
    assert_eq!(
        error_of(&onoff.replace("off_time = \"1s\"", "off_time = 0")),
        "flows[0].off_time: must be > 0, got 0"
    );
    assert_eq!(
        error_of(&onoff.replace("off_time = \"1s\"", "off_time = \"1s\"\njitter = true")),
        "flows[0].jitter: unknown field `jitter`, expected one of `name`, `count`, `src`, `dst`, `access_rate`, `access_delay`, `sink_delay`, `hop`, `start`, `start_jitter`, `stop`, `packet_size`, `weight`, `pauses`, `rate`, `on_time`, `off_time`, `ecn`"
    );
}

/// A flow's random stream, and the streams of its access links' qdiscs, are
/// keyed by the flow's name: inserting a flow before it, or growing an earlier
/// group, leaves its start jitter, CBR jitter, ON-OFF periods and access-link
/// losses as they were. The link is fast and lightly loaded, so flows do not
/// interact and every difference would come from a reshuffled stream.
#[test]
fn inserting_a_flow_leaves_other_named_flows_randomness_alone() {
    let before = r#"
[simulation]
duration = "20s"
seed = 3
throughput_bin = "0.1s"
[topology]
type = "dumbbell"
bottleneck = { rate = "1Gbps", delay = "5ms" }
access_qdisc = { type = "loss", model = "bernoulli", p = 0.05 }
[[flows]]
name = "group"
type = "cbr"
rate = "1Mbps"
jitter = true
start_jitter = "1s"
count = 2
[[flows]]
name = "probe"
type = "onoff"
rate = "2Mbps"
on_time = "0.3s"
off_time = "0.3s"
start_jitter = "1s"
"#;
    let inserted =
        "[[flows]]\nname = \"inserted\"\ntype = \"cbr\"\nrate = \"1Mbps\"\njitter = true\nstart_jitter = \"1s\"\n";
    let after = before.replace("count = 2", "count = 3").replace(
        "[[flows]]\nname = \"probe\"",
        &format!("{inserted}[[flows]]\nname = \"probe\""),
    );
    let (a, b) = (simulate(before), simulate(&after));
    let names = |r: &Results| r.flows.iter().map(|f| f.name.clone()).collect::<Vec<_>>();
    assert_eq!(names(&a), ["group[0]", "group[1]", "probe"]);
    assert_eq!(names(&b), ["group[0]", "group[1]", "group[2]", "inserted", "probe"]);
    // What a flow's own randomness decides: how much it sends, what its access link drops,
    // and when its packets arrive (goodput per 0.1 s bin).
    let row = |r: &Results, name: &str| {
        let f = r.flows.iter().find(|f| f.name == name).unwrap();
        let bins: Vec<f64> = r.throughput.iter().filter(|t| t.flow == f.id).map(|t| t.bps).collect();
        (
            f.sent_packets,
            f.delivered_packets,
            f.dropped_packets,
            f.goodput_bps,
            bins,
        )
    };
    for name in ["group[0]", "group[1]", "probe"] {
        let (sent, _, dropped, _, _) = row(&a, name);
        assert!(sent > 1000 && dropped > 0, "{name}: {sent} sent, {dropped} dropped");
        assert_eq!(row(&a, name), row(&b, name), "{name}");
    }
    // The inserted flows draw from their own streams: not copies of a neighbour's.
    assert_ne!(row(&b, "inserted").4, row(&b, "group[2]").4);
}
