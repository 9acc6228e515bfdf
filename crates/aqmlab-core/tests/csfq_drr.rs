//! CSFQ and DRR against max-min fair shares, with UDP sources (CSFQ paper §3).

mod common;

use aqmlab_core::{run, Results};
use common::{counter, error_of, scenario};

fn results(text: &str) -> Results {
    run(&scenario(text)).unwrap()
}

/// A 10 Mbps, 1 ms dumbbell (CSFQ §3 defaults) measured over 10 s after 2 s of warm-up.
fn dumbbell(qdisc: &str, flows: &str) -> String {
    format!(
        r#"
[simulation]
duration = "12s"
warmup = "2s"
seed = 1
[topology]
type = "dumbbell"
bottleneck = {{ rate = "10Mbps", delay = "1ms", qdisc = {qdisc} }}
{flows}
"#
    )
}

/// CSFQ Fig. 3a: 32 jittered CBR flows, flow i sends (i+1) × its 0.3125 Mbps fair share.
fn fig3a(qdisc: &str) -> Results {
    let flows: String = (0..32)
        .map(|i| {
            format!(
                "[[flows]]\ntype = \"cbr\"\nrate = \"{}bps\"\njitter = true\n",
                (i + 1) as f64 * 312_500.0
            )
        })
        .collect();
    let r = results(&dumbbell(qdisc, &flows));
    for f in &r.flows {
        assert!(
            (f.fair_share_bps - 312_500.0).abs() < 1.0,
            "water-filling gives {}",
            f.fair_share_bps
        );
    }
    r
}

/// Each flow's goodput relative to its max-min share, minus one.
fn deviations(r: &Results) -> Vec<f64> {
    r.flows.iter().map(|f| f.goodput_bps / f.fair_share_bps - 1.0).collect()
}

fn max_abs(d: &[f64]) -> f64 {
    d.iter().fold(0.0, |m, x| m.max(x.abs()))
}

fn print(label: &str, d: &[f64]) {
    let pct: Vec<String> = d.iter().map(|x| format!("{:+.1}", 100.0 * x)).collect();
    eprintln!("{label} (% of max-min share): {}", pct.join(" "));
}

#[test]
fn csfq_fig3a_throughputs_are_within_15_percent_of_max_min_shares() {
    let d = deviations(&fig3a(r#"{ type = "csfq" }"#));
    print("csfq fig3a", &d);
    assert!(max_abs(&d) <= 0.15, "largest deviation {:.3}", max_abs(&d));
}

#[test]
fn drr_fig3a_throughputs_are_within_3_percent_of_max_min_shares() {
    let d = deviations(&fig3a(r#"{ type = "drr" }"#));
    print("drr fig3a, 64 KB", &d);
    // Flows 1..31 are backlogged: DRR serves them exactly.
    assert!(max_abs(&d[1..]) <= 0.03, "largest deviation {:.3}", max_abs(&d[1..]));
    // Flow 0 sends exactly its share, so its queue is critically loaded, and with 32 flows
    // in 64 packets of buffer it is pushed out whenever it reaches ~2 packets (the
    // paper's Fig. 4 explanation of DRR with < 3 buffers per flow): it loses a little.
    assert!((-0.10..=0.03).contains(&d[0]), "flow 0 {:.3}", d[0]);
    // Give every flow 8 packets of buffer and flow 0 is served exactly too.
    let d = deviations(&fig3a(r#"{ type = "drr", limit_bytes = "256KB" }"#));
    print("drr fig3a, 256 KB", &d);
    assert!(max_abs(&d) <= 0.03, "largest deviation {:.3}", max_abs(&d));
}

/// CSFQ Fig. 5: `links` congested 10 Mbps links, ten 2 Mbps UDP cross flows on each,
/// and UDP-0 (flow 0) through all of them at `through_rate`.
fn parking_lot(qdisc: &str, links: u32, through_rate: &str) -> String {
    let mut text = format!(
        r#"
[simulation]
duration = "12s"
warmup = "2s"
[topology]
type = "parking_lot"
congested_links = {links}
link = {{ rate = "10Mbps", delay = "1ms", qdisc = {qdisc} }}
[[flows]]
type = "cbr"
name = "udp0"
rate = "{through_rate}"
jitter = true
"#
    );
    for hop in 0..links {
        text += &format!("[[flows]]\ntype = \"cbr\"\nrate = \"2Mbps\"\njitter = true\ncount = 10\nhop = {hop}\n");
    }
    text
}

#[test]
fn parking_lot_throughputs_match_water_filling() {
    for (qdisc, tolerance) in [(r#"{ type = "csfq" }"#, 0.15), (r#"{ type = "drr" }"#, 0.03)] {
        // UDP-0 at its fair share 10/11 Mbps (Fig. 6a), then greedy at 2 Mbps.
        for through in ["0.909091Mbps", "2Mbps"] {
            let r = results(&parking_lot(qdisc, 4, through));
            assert_eq!(r.flows.len(), 41);
            assert!(
                (r.flows[0].fair_share_bps - 10e6 / 11.0).abs() < 10.0,
                "share {}",
                r.flows[0].fair_share_bps
            );
            let d = deviations(&r);
            print(&format!("{qdisc} parking lot, udp0 at {through}"), &d);
            assert!(
                max_abs(&d) <= tolerance,
                "{qdisc}: largest deviation {:.3}",
                max_abs(&d)
            );
            // Each congested link is saturated.
            for (name, util) in &r.summary.utilisation {
                assert!(*util > 0.98, "{name}: utilisation {util}");
            }
        }
    }
}

#[test]
fn csfq_labels_a_flow_only_at_its_first_router() {
    let r = results(&parking_lot(r#"{ type = "csfq" }"#, 3, "2Mbps"));
    let edge_flows = |name: &str| counter(&r, name, "edge_flows");
    // R0 labels UDP-0 and its ten cross flows; R1 and R2 label only their own cross flows.
    assert_eq!(
        [edge_flows("R0->R1"), edge_flows("R1->R2"), edge_flows("R2->R3")],
        [11.0, 10.0, 10.0]
    );
}

#[test]
fn a_pure_core_drops_by_the_labels_an_upstream_edge_wrote() {
    // Fig. 8 with R2 -> R3 a pure core: flows 1 and 2 arrive there labelled by R1, flow 3
    // (whose first CSFQ router is R2) unlabelled. The core keeps no per-flow state, drops
    // flows 1 and 2 by their labels (a core that ignored labels would not drop them), and
    // never drops flow 3 early (label 0), which only the buffer limits.
    let r = results(&FIG8.replace(
        r#"{ from = "R2", to = "R3", rate = "10Mbps", delay = "1ms", qdisc = { type = "csfq" }"#,
        r#"{ from = "R2", to = "R3", rate = "10Mbps", delay = "1ms", qdisc = { type = "csfq", role = "core" }"#,
    ));
    assert_eq!(counter(&r, "R2->R3", "edge_flows"), 0.0);
    let link = r.links.iter().find(|l| l.name == "R2->R3").expect("link").id;
    let drops = |flow: u32, reason: &str| -> u64 {
        r.drops
            .iter()
            .filter(|d| d.link == link && d.flow == flow && d.reason == reason)
            .map(|d| d.count)
            .sum()
    };
    eprintln!(
        "core R2->R3 csfq drops by flow: {:?}, flow 3 overflow {}",
        [drops(0, "csfq"), drops(1, "csfq"), drops(2, "csfq")],
        drops(2, "overflow")
    );
    assert!(drops(0, "csfq") > 100 && drops(1, "csfq") > 100);
    assert_eq!(drops(2, "csfq"), 0);
    assert!(drops(2, "overflow") > 0);
}

#[test]
fn weighted_csfq_shares_in_ratio_1_2_3() {
    let flows: String = (1..=3)
        .map(|w| format!("[[flows]]\ntype = \"cbr\"\nrate = \"10Mbps\"\njitter = true\nweight = {w}\n"))
        .collect();
    let r = results(&dumbbell(r#"{ type = "csfq" }"#, &flows));
    let g: Vec<f64> = r.flows.iter().map(|f| f.goodput_bps).collect();
    eprintln!(
        "weighted csfq goodput (Mbps): {:?}",
        g.iter().map(|x| x / 1e6).collect::<Vec<_>>()
    );
    for (i, w) in [1.0, 2.0, 3.0].iter().enumerate() {
        let ratio = g[i] / g[0] / w;
        assert!(
            (ratio - 1.0).abs() <= 0.15,
            "flow {i}: goodput / flow 0 / weight = {ratio:.3}"
        );
        // Weighted max-min: 10 Mbps split 1:2:3.
        assert!(
            (g[i] - 10e6 * w / 6.0).abs() / (10e6 * w / 6.0) <= 0.15,
            "flow {i}: {}",
            g[i]
        );
    }
}

#[test]
fn drr_is_byte_fair_across_packet_sizes() {
    let flows = "[[flows]]\ntype = \"cbr\"\nrate = \"10Mbps\"\njitter = true\npacket_size = \"500B\"\ncount = 2\n\
                 [[flows]]\ntype = \"cbr\"\nrate = \"10Mbps\"\njitter = true\npacket_size = \"1500B\"\ncount = 2\n";
    let r = results(&dumbbell(r#"{ type = "drr" }"#, flows));
    let d = deviations(&r);
    print("drr 500 B vs 1500 B", &d);
    assert!(max_abs(&d) <= 0.03, "largest deviation {:.3}", max_abs(&d));
}

#[test]
fn drr_longest_queue_drop_hits_the_heaviest_flow() {
    // 1, 1.5 and 8 Mbps on 5 Mbps: max-min shares 1, 1.5, 2.5; only the 8 Mbps flow overflows.
    let flows = "[[flows]]\ntype = \"cbr\"\nrate = \"1Mbps\"\njitter = true\n\
                 [[flows]]\ntype = \"cbr\"\nrate = \"1.5Mbps\"\njitter = true\n\
                 [[flows]]\ntype = \"cbr\"\nrate = \"8Mbps\"\njitter = true\n";
    let r = results(&dumbbell(r#"{ type = "drr" }"#, flows).replace("10Mbps", "5Mbps"));
    assert_eq!((r.flows[0].dropped_packets, r.flows[1].dropped_packets), (0, 0));
    assert!(r.flows[2].dropped_packets > 1000);
    assert!(
        r.drops.iter().all(|d| d.flow == 2 && d.reason == "pushout"),
        "{:?}",
        r.drops
    );
    let d = deviations(&r);
    print("drr 1 / 1.5 / 8 Mbps on 5 Mbps", &d);
    assert!(max_abs(&d) <= 0.03, "largest deviation {:.3}", max_abs(&d));
}

const FIG8: &str = include_str!("../../../scenarios/csfq-fig8-relabel.toml");

#[test]
fn fig8_relabelling_gives_each_flow_a_third_of_link_2() {
    let r = results(FIG8);
    let g: Vec<f64> = r.flows.iter().map(|f| f.goodput_bps / 1e6).collect();
    eprintln!("fig8 with relabelling (Mbps): {g:?}");
    // Table 4 (UDP): 3.36, 3.32, 3.28 Mbps; tolerance ±5 % of 10/3.
    for (i, x) in g.iter().enumerate() {
        assert!(
            (x - 10.0 / 3.0).abs() / (10.0 / 3.0) <= 0.05,
            "flow {}: {x:.3} Mbps",
            i + 1
        );
    }
    // Without relabelling R2 sees flows 1 and 2 labelled 10 Mbps while they arrive at 5:
    // Eq. 2 then settles at alpha = 5 Mbps, flows 1 and 2 get 2.5 Mbps and flow 3 gets 5.
    let r = results(&FIG8.replace(
        r#"qdisc = { type = "csfq" }"#,
        r#"qdisc = { type = "csfq", relabel = false }"#,
    ));
    let g: Vec<f64> = r.flows.iter().map(|f| f.goodput_bps / 1e6).collect();
    eprintln!("fig8 without relabelling (Mbps): {g:?}");
    assert!(g[0] < 2.8 && g[1] < 2.8 && g[2] > 4.5, "{g:?}");
}

#[test]
fn parking_lot_and_qdisc_errors_name_the_field() {
    let text = parking_lot(r#"{ type = "csfq" }"#, 2, "2Mbps");
    assert_eq!(
        error_of(&text.replace("hop = 1", "hop = 2")),
        "flows[2].hop: must be < topology.congested_links (2), got 2"
    );
    assert_eq!(
        error_of(&text.replace("congested_links = 2", "congested_links = 0")),
        "topology.congested_links: must be >= 1, got 0"
    );
    assert_eq!(
        error_of(&text.replace("link = {", "link = { from = \"A\",")),
        "topology.link.from: unknown field `from`, expected one of `rate`, `trace`, `trace_repeat`, `delay`, \
         `qdisc`, `reverse_qdisc`, `rate_changes`"
    );
    assert_eq!(
        error_of(&text.replace("type = \"csfq\"", "type = \"csfq\", k_c = 0")),
        "topology.link.qdisc.k_c: must be > 0, got 0"
    );
    assert_eq!(
        error_of(&text.replace("type = \"csfq\"", "type = \"csfq\", role = \"middle\""))
            .split(':')
            .next()
            .unwrap(),
        "topology.link.qdisc.role"
    );
    let dumbbell_with_hop = dumbbell(
        r#"{ type = "drr", quantum = 0 }"#,
        "[[flows]]\ntype = \"cbr\"\nrate = \"1Mbps\"\n",
    );
    assert_eq!(
        error_of(&dumbbell_with_hop),
        "topology.bottleneck.qdisc.quantum: must be > 0 bytes, got 0"
    );
    let dumbbell_with_hop = dumbbell(
        r#"{ type = "drr" }"#,
        "[[flows]]\ntype = \"cbr\"\nrate = \"1Mbps\"\nhop = 0\n",
    );
    assert_eq!(
        error_of(&dumbbell_with_hop),
        "flows[0].hop: only used by a parking_lot topology"
    );
    assert_eq!(
        error_of(&text.replace("name = \"udp0\"", "name = \"udp0\"\nsrc = \"R0\"")),
        "flows[0].src: not used in a dumbbell or parking_lot (each flow has its own source and sink); use a graph topology"
    );
}
