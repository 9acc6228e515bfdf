//! A scenario as the core resolves it, before anything is built or run: the simulation's
//! settings, the nodes, every link direction in the engine's order (rate in bit/s, delay in
//! s, its qdisc's table with the defaults filled in), and every flow after `count` expansion
//! (name, group, endpoints, the links its data and its ACKs cross, its start drawn from its own stream as a run draws it, its
//! type's settings with the defaults filled in). Every value is in base units (bit/s, s,
//! bytes) and named by the scenario's field names.
//!
//! The Python front reads it (`aqmlab._core.resolve`) instead of repeating the core's
//! defaults, units and expansion: the ns-2 export writes it as Tcl.

use super::NetworkPlan;
use crate::error::ScenarioError;
use crate::packet::PacketKind;
use crate::qdisc::{Profiled, QdiscSpec, LINUX_PROFILE};
use crate::scenario::{Scenario, SimulationSpec};
use crate::time::to_secs;
use crate::transport::tcp::{TcpFlow, Workload};
use crate::transport::udp::RateChange;
use crate::transport::Codepoint;
use crate::transport::FlowKind;
use crate::units::{Bytes, Rate, Seconds};
use serde::Serialize;
use serde_json::{json, Value};

/// The resolved scenario (module docs).
#[derive(Debug, Serialize)]
pub struct Resolved<'a> {
    pub simulation: &'a SimulationSpec,
    pub nodes: Vec<String>,
    pub links: Vec<Link>,
    pub flows: Vec<Flow>,
}

/// One direction of a link, numbered as the results number it.
#[derive(Debug, Serialize)]
pub struct Link {
    pub index: usize,
    /// `L->R`, as the results name it.
    pub name: String,
    /// The nodes it joins, as indices into `nodes`.
    pub from: u32,
    pub to: u32,
    /// Bits/s from the start; then `rate_changes`.
    pub rate: Rate,
    pub rate_changes: Vec<RateChange>,
    pub delay: Seconds,
    /// Sampled and summarised (a dumbbell's bottleneck, a parking lot's congested links,
    /// a graph's `monitor = true`).
    pub monitored: bool,
    /// `type` and, for droptail, red (but its linux profile, which gives `profile` only), drr
    /// and sfq, every parameter with its default filled in; other disciplines give their type.
    pub qdisc: Value,
    /// The scenario's field the qdisc table is read from (`topology.bottleneck.qdisc`).
    pub qdisc_path: String,
    /// Its capacity follows a trace (`trace`): `rate` is then the trace's mean.
    pub traced: bool,
}

/// One flow after `count` expansion.
#[derive(Debug, Serialize)]
pub struct Flow {
    pub id: u32,
    /// `web[2]`, or `flow<id>` when unnamed.
    pub name: String,
    /// The name of its `[[flows]]` entry (its own name when unnamed).
    pub group: String,
    /// Where it was declared (`flows[1]`).
    pub path: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Its source and destination nodes, as indices into `nodes`.
    pub src: u32,
    pub dst: u32,
    /// The links its data crosses, in order, and the links its ACKs cross back (indices into `links`).
    pub route: Vec<u32>,
    pub reverse_route: Vec<u32>,
    /// Seconds: `start`, plus the draw from the flow's stream in `[0, start_jitter)`.
    pub start: f64,
    pub stop: Option<Seconds>,
    pub packet_size: Bytes,
    pub weight: f64,
    /// It pauses (`pauses`).
    pub paused: bool,
    /// Its type's settings: tcp `{tcp, workload}` with every option the profile sets filled
    /// in (`workload`: its type, and a transfer's `packets`); cbr, onoff and tfrc their tables;
    /// rlm and video nothing.
    pub settings: Value,
}

/// `scenario` resolved (module docs), or the error naming a flow without a route. It builds
/// nothing: no queue, no agent.
pub fn resolve(scenario: &Scenario) -> Result<Resolved<'_>, ScenarioError> {
    let plan = NetworkPlan::new(scenario)?;
    let links = plan
        .links
        .iter()
        .enumerate()
        .map(|(index, l)| Link {
            index,
            name: l.name.clone(),
            from: l.from,
            to: l.to,
            rate: Rate(l.rates[0].1),
            rate_changes: l.rates[1..]
                .iter()
                .map(|&(at, rate)| RateChange {
                    at: Seconds(to_secs(at)),
                    rate: Rate(rate),
                })
                .collect(),
            delay: Seconds(to_secs(l.delay)),
            monitored: l.monitored,
            qdisc: qdisc_table(l.qdisc),
            qdisc_path: l.qdisc_path.clone(),
            traced: l.trace.is_some(),
        })
        .collect();
    let seed = scenario.simulation.seed;
    let flows = scenario
        .expanded_flows()
        .into_iter()
        .zip(&plan.routes)
        .map(|(f, r)| {
            let common = &f.spec.common;
            Flow {
                id: f.id,
                start: to_secs(common.draw_start(&mut f.stream(seed))),
                kind: f.spec.kind.type_name(),
                src: r.src,
                dst: r.dst,
                route: plan.path(f.id, PacketKind::Data).to_vec(),
                reverse_route: plan.path(f.id, PacketKind::Ack).to_vec(),
                stop: common.stop,
                packet_size: common.packet_size,
                weight: common.weight,
                paused: !common.pauses.is_empty(),
                settings: flow_settings(&f.spec.kind),
                name: f.name,
                group: f.group,
                path: f.path,
            }
        })
        .collect();
    Ok(Resolved {
        simulation: &scenario.simulation,
        nodes: plan.nodes,
        links,
        flows,
    })
}

fn to_value(settings: impl Serialize) -> Value {
    serde_json::to_value(settings).expect("settings are plain data")
}

fn qdisc_table(spec: &QdiscSpec) -> Value {
    let mut table = match spec {
        QdiscSpec::DropTail(c) => to_value(c.resolved()),
        QdiscSpec::Red(Profiled::Paper(c)) => to_value(c.resolved()),
        QdiscSpec::Drr(c) => to_value(c.resolved()),
        QdiscSpec::Sfq(c) => to_value(c.resolved()),
        QdiscSpec::Red(Profiled::Linux(_))
        | QdiscSpec::Pie(Profiled::Linux(_))
        | QdiscSpec::DualPi2(Profiled::Linux(_))
        | QdiscSpec::Choke(Profiled::Linux(_)) => {
            json!({ "profile": LINUX_PROFILE })
        }
        _ => json!({}),
    };
    table["type"] = spec.type_name().into();
    table
}

fn flow_settings(kind: &FlowKind) -> Value {
    match kind {
        FlowKind::Tcp(tcp) => tcp_settings(tcp),
        FlowKind::Cbr(c) => to_value(c),
        FlowKind::OnOff(c) => to_value(c),
        FlowKind::Tfrc(c) => to_value(c.resolved()),
        FlowKind::Rlm(_) | FlowKind::Video(_) => json!({}),
    }
}

fn tcp_settings(flow: &TcpFlow) -> Value {
    let p = flow.tcp.resolve();
    let workload = match &flow.workload {
        Workload::Infinite => json!({ "type": "infinite" }),
        Workload::Transfer(t) => json!({ "type": "transfer", "packets": t.packets }),
        Workload::Web(_) => json!({ "type": "web" }),
        Workload::Neidhardt(_) => json!({ "type": "neidhardt" }),
    };
    let mut settings = json!({
        "tcp": {
            "profile": p.profile,
            "variant": p.variant,
            "cc": p.cc,
            "window": p.window,
            "initial_window": p.initial_window,
            "congestion_avoidance": p.congestion_avoidance,
            "initial_ssthresh": p.initial_ssthresh,
            "delayed_ack": p.delayed_ack,
            "delack_timeout": p.delack_timeout,
            "min_rto": p.min_rto,
            "timer_granularity": p.timer_granularity,
            "initial_rto": p.initial_rto,
            "ecn": p.ecn,
            "tiny_window": p.tiny_window,
            "trace": p.trace,
        },
        "workload": workload,
    });
    // Feedback is read only with ECN, and refused without it.
    if p.ecn != Codepoint::NotEct {
        settings["tcp"]["ecn_feedback"] = json!(p.ecn_feedback);
    }
    settings
}

#[cfg(test)]
mod tests {
    use super::*;

    const DUMBBELL: &str = r#"
[simulation]
duration = "10s"
seed = 3
[topology]
type = "dumbbell"
bottleneck = { rate = "10Mbps", delay = "5ms", qdisc = { type = "red", bytes = true, limit_bytes = "50KB" } }
access_rate = "1Gbps"
[[flows]]
name = "web"
type = "tcp"
count = 2
start = "1s"
start_jitter = "2s"
tcp = { profile = "ns2" }
[[flows]]
type = "cbr"
rate = "2Mbps"
"#;

    #[test]
    fn a_dumbbell_resolves_as_the_engine_builds_it() {
        let scenario = Scenario::from_toml_str(DUMBBELL).unwrap();
        let resolved = resolve(&scenario).unwrap();
        let net = super::super::Network::build(&scenario).unwrap();
        for f in &resolved.flows {
            assert_eq!(f.route, net.path(f.id, PacketKind::Data), "{}", f.name);
            assert_eq!(f.reverse_route, net.path(f.id, PacketKind::Ack), "{}", f.name);
        }
        assert_eq!(resolved.nodes, net.nodes);
        let names: Vec<&str> = resolved.links.iter().map(|l| l.name.as_str()).collect();
        let built: Vec<&str> = net.links.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, built);
        let bottleneck = &resolved.links[0];
        assert_eq!((bottleneck.rate.0, bottleneck.delay.0), (10e6, 0.005));
        // Byte mode: the thresholds default to 5 and 15 mean packets of 1000 bytes.
        assert_eq!(bottleneck.qdisc["min_th"], 5000.0);
        assert_eq!(bottleneck.qdisc["max_th"], 15000.0);
        assert_eq!(bottleneck.qdisc["limit"], Value::Null);
        assert_eq!(bottleneck.qdisc["profile"], "floyd93");
        assert_eq!(resolved.links[1].qdisc_path, "topology.bottleneck.reverse_qdisc");
        let access = &resolved.links[2];
        assert_eq!((access.rate.0, access.delay.0), (1e9, 0.001));
        assert_eq!(
            access.qdisc,
            json!({ "type": "droptail", "limit": 1000, "limit_bytes": null })
        );
        let names: Vec<&str> = resolved.flows.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["web[0]", "web[1]", "flow2"]);
        assert_eq!(resolved.flows[1].settings["tcp"]["window"], 20);
        for f in &resolved.flows[..2] {
            assert!((1.0..3.0).contains(&f.start), "{}: {}", f.name, f.start);
        }
        assert_ne!(resolved.flows[0].start, resolved.flows[1].start);
        assert_eq!(resolved.flows[2].start, 0.0);
    }
}
