//! Scenario files: the serde schema and its validation.
//!
//! A scenario is read from TOML (or JSON, which the Python front uses) into
//! [`Scenario`]; [`Scenario::validate`] then checks every value. Every error
//! names the field it is about, e.g. `flows[3].rate: must be > 0, got -1`.
//!
//! Sizes that grow with a scenario's numbers rather than with its text are
//! bounded here, each with an error naming the field and the limit: the
//! flows (`count` summed), a parking lot's links, and the time-series tables
//! (throughput bins, queue samples), which are allocated for the whole run.

use crate::error::ScenarioError;
use crate::qdisc::QdiscSpec;
use crate::rng::{stream, Rng};
use crate::time::{to_secs, Time};
use crate::transport::udp::RateChange;
use crate::transport::FlowSpec;
use crate::units::{reading_file, Rate, Seconds};
use crate::validate::{
    from_tagged_value, join_nested, path_text, require_finite_floats, require_link_delay, require_non_negative,
    require_positive, split_fields, struct_fields, suggest_field, take_tag,
};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};

pub mod syntax;
pub mod trace;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    #[serde(default)]
    pub name: Option<String>,
    pub simulation: SimulationSpec,
    pub topology: TopologySpec,
    pub flows: Vec<FlowSpec>,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SimulationSpec {
    pub duration: Seconds,
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Statistics (goodput, drops, utilisation) are measured from `warmup` to `duration`.
    #[serde(default)]
    pub warmup: Seconds,
    /// Bin width of the per-flow throughput time series.
    #[serde(default = "default_bin")]
    pub throughput_bin: Seconds,
    /// Period of queue-length samples on monitored links (0 = off).
    #[serde(default = "default_sample_interval")]
    pub sample_interval: Seconds,
    /// Keep every drop (time, flow, link, reason), not only the counts.
    #[serde(default)]
    pub record_drops: bool,
    /// Links (by name, `L->R`, or file name, `L-R`) whose transmitted packets are
    /// written to `<link>.pcap` when the run is given an output folder
    /// (`metrics::pcap`); checked against the network when it is built.
    #[serde(default)]
    pub pcap: Vec<String>,
    /// With `pcap`, also write the packets those links' queues drop, to `<link>.drops.pcap`.
    #[serde(default)]
    pub pcap_drops: bool,
    /// What the per-packet queueing delay of monitored links is kept for (`metrics::queue_delay`).
    #[serde(default)]
    pub queue_delay: QueueDelayDetail,
    /// Also keep each flow group's queueing delay per `throughput_bin` on monitored links (the
    /// `queue_delay_series` table: RFC 7928 §2.7's delay beside goodput over time).
    #[serde(default)]
    pub queue_delay_series: bool,
}

/// Whose distribution of per-packet queueing delay a monitored link keeps: one histogram of
/// a few kilobytes each ([`crate::metrics::queue_delay`]), so a run of 10⁵ flows keeps
/// its groups' only.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum QueueDelayDetail {
    /// Each flow's, and each flow group's (its flows' merged).
    #[default]
    Flows,
    /// Each flow group's only (a `[[flows]]` entry with a `count` is one group).
    Groups,
    Off,
}

/// Most flows a scenario may expand to (`count` summed): each has its agents, its
/// hosts and access links, a route and its statistics, a few kilobytes in all
/// (BENCHMARKS.md, the scale series), so a million flows take several gigabytes.
pub const MAX_FLOWS: u64 = 1_000_000;
/// Most congested links of a parking lot: a flow through all of them has a
/// route this long, and there may be [`MAX_FLOWS`] flows.
pub const MAX_CONGESTED_LINKS: u32 = 100;
/// Most rows a time-series table may have (throughput bins of every flow, queue
/// samples of every monitored link): 10 M rows are 80–400 MB while running.
pub const MAX_SERIES_ROWS: u64 = 10_000_000;

impl SimulationSpec {
    /// The throughput bins of one flow: `duration / throughput_bin`, rounded up.
    pub fn throughput_bins(&self) -> u64 {
        self.duration.nanos().div_ceil(self.bin_width())
    }

    /// Bin width in nanoseconds (at least one).
    pub fn bin_width(&self) -> Time {
        self.throughput_bin.nanos().max(1)
    }

    /// The queue samples of one monitored link: one every `sample_interval` from 0 (none when 0).
    pub fn queue_samples(&self) -> u64 {
        match self.sample_interval.nanos() {
            0 => 0,
            interval => self.duration.nanos().div_ceil(interval),
        }
    }
}

fn default_seed() -> u64 {
    1
}
fn default_true() -> bool {
    true
}
fn default_bin() -> Seconds {
    Seconds(1.0)
}
fn default_sample_interval() -> Seconds {
    Seconds(0.01)
}

/// A full-duplex link: the dumbbell's bottleneck, a parking lot's congested links, a
/// graph's links. Its rate (and its changes) and delay are both directions'; `qdisc`
/// serves the forward direction (`L -> R`, `Ri -> Ri+1`, a graph link's `from -> to`),
/// `reverse_qdisc` the other.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    /// Required unless `trace` gives the capacity.
    #[serde(default)]
    pub rate: Option<Rate>,
    /// The capacity as a Mahimahi trace ([`trace`]), in place of `rate`.
    #[serde(default)]
    pub trace: Option<trace::LinkTrace>,
    /// Whether the trace loops after its last line (Mahimahi's default); without, the run
    /// must end within it (mm-link stops: "reached end of link recording").
    #[serde(default = "default_true")]
    pub trace_repeat: bool,
    pub delay: Seconds,
    #[serde(default)]
    pub qdisc: QdiscSpec,
    #[serde(default)]
    pub reverse_qdisc: QdiscSpec,
    /// New rates at given times, in increasing order (`sim` applies them).
    #[serde(default)]
    pub rate_changes: Vec<RateChange>,
}

/// A link of a graph: the nodes it joins, whether its queue is sampled, and the link.
/// Written as one table (`{ from = "A", to = "B", rate = ..., monitor = true }`), split
/// here so that a dumbbell's or parking lot's link has none of the graph's fields.
#[derive(Clone, Debug)]
pub struct GraphLinkSpec {
    pub from: String,
    pub to: String,
    /// Sample the `from -> to` queue over time (a dumbbell's and a parking lot's congested links always are).
    pub monitor: bool,
    pub link: LinkSpec,
}

/// The fields a graph's link has besides the [`LinkSpec`].
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GraphLinkEnds {
    from: String,
    to: String,
    #[serde(default)]
    monitor: bool,
}

impl<'de> Deserialize<'de> for GraphLinkSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let serde_json::Value::Object(table) = serde_json::Value::deserialize(d)? else {
            return Err(D::Error::custom("expected a table (a link)"));
        };
        let (ends, link) = split_fields(table, struct_fields::<GraphLinkEnds>(), struct_fields::<LinkSpec>())
            .map_err(D::Error::custom)?;
        let ends: GraphLinkEnds = from_tagged_value(ends.into()).map_err(D::Error::custom)?;
        Ok(GraphLinkSpec {
            from: ends.from,
            to: ends.to,
            monitor: ends.monitor,
            link: from_tagged_value(link.into()).map_err(D::Error::custom)?,
        })
    }
}

#[derive(Clone, Debug)]
pub enum TopologySpec {
    /// Each flow has its own source and sink, behind a left and a right router joined by `bottleneck`.
    Dumbbell(DumbbellSpec),
    /// Named nodes and links; flows give `src` and `dst`.
    Graph(GraphSpec),
    /// A chain of congested links with cross traffic on each (CSFQ §3.2, Fig. 5).
    ParkingLot(ParkingLotSpec),
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DumbbellSpec {
    pub bottleneck: LinkSpec,
    /// Default rate of the access links (per flow: `access_rate`).
    #[serde(default = "default_access_rate")]
    pub access_rate: Rate,
    /// Default one-way delay of a source's access link (per flow: `access_delay`).
    #[serde(default = "default_access_delay")]
    pub access_delay: Seconds,
    /// Default one-way delay of a sink's access link (per flow: `sink_delay`).
    #[serde(default = "default_access_delay")]
    pub sink_delay: Seconds,
    /// Queue at each access link's sending end.
    #[serde(default)]
    pub access_qdisc: QdiscSpec,
}

impl DumbbellSpec {
    pub fn hosts(&self) -> HostLinks<'_> {
        HostLinks {
            rate: self.access_rate,
            delay: self.access_delay,
            sink_delay: self.sink_delay,
            qdisc: &self.access_qdisc,
        }
    }
}

/// Routers `R0 … RK` in a chain joined by `congested_links` = K identical links
/// `Ri -> Ri+1`. As in a dumbbell, every flow has its own source and sink host.
/// A flow with `hop = i` is cross traffic of link i (enters at `Ri`, leaves at
/// `Ri+1`); a flow without `hop` crosses every link (CSFQ Fig. 5's UDP-0).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParkingLotSpec {
    pub congested_links: u32,
    /// Every congested link (rate, delay, qdisc, reverse_qdisc, rate_changes); all are monitored.
    pub link: LinkSpec,
    /// Default rate of the access links (per flow: `access_rate`).
    #[serde(default = "default_access_rate")]
    pub access_rate: Rate,
    /// Default one-way delay of a source's access link (per flow: `access_delay`).
    #[serde(default = "default_access_delay")]
    pub access_delay: Seconds,
    /// Default one-way delay of a sink's access link (per flow: `sink_delay`).
    #[serde(default = "default_access_delay")]
    pub sink_delay: Seconds,
    /// Queue at each access link's sending end.
    #[serde(default)]
    pub access_qdisc: QdiscSpec,
}

impl ParkingLotSpec {
    pub fn hosts(&self) -> HostLinks<'_> {
        HostLinks {
            rate: self.access_rate,
            delay: self.access_delay,
            sink_delay: self.sink_delay,
            qdisc: &self.access_qdisc,
        }
    }
}

/// The access links that join each flow's own source and sink hosts to the
/// routers (dumbbell, parking lot); a flow overrides them with `access_rate`,
/// `access_delay` and `sink_delay`.
pub struct HostLinks<'a> {
    pub rate: Rate,
    pub delay: Seconds,
    pub sink_delay: Seconds,
    pub qdisc: &'a QdiscSpec,
}

impl HostLinks<'_> {
    fn validate(&self) -> Result<(), ScenarioError> {
        require_positive("topology.access_rate", self.rate)?;
        require_link_delay("topology.access_delay", self.delay)?;
        require_link_delay("topology.sink_delay", self.sink_delay)?;
        self.qdisc.config().validate("topology.access_qdisc")
    }
}

impl<'de> Deserialize<'de> for TopologySpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let mut value = serde_json::Value::deserialize(d)?;
        match take_tag(&mut value, &["dumbbell", "graph", "parking_lot"])
            .map_err(D::Error::custom)?
            .as_str()
        {
            "dumbbell" => from_tagged_value(value).map(TopologySpec::Dumbbell),
            "parking_lot" => from_tagged_value(value).map(TopologySpec::ParkingLot),
            _ => from_tagged_value(value).map(TopologySpec::Graph),
        }
        .map_err(D::Error::custom)
    }
}

fn default_access_rate() -> Rate {
    Rate(100e6)
}
fn default_access_delay() -> Seconds {
    Seconds(1e-3)
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GraphSpec {
    pub nodes: Vec<String>,
    pub links: Vec<GraphLinkSpec>,
}

/// One flow after `count` expansion: flow ids are assigned in file order.
pub struct ExpandedFlow<'a> {
    pub id: u32,
    pub name: String,
    /// The flows of one named `[[flows]]` entry share its name as their group; an unnamed
    /// flow is a group of its own.
    pub group: String,
    pub spec: &'a FlowSpec,
    /// Where the flow was declared, for error messages (`flows[2]`).
    pub path: String,
}

impl ExpandedFlow<'_> {
    /// The flow's own random stream (`flow/<name>`, see [`crate::rng`]): its start is drawn
    /// from it first ([`crate::transport::FlowCommon::draw_start`]), then its agents draw from it.
    pub fn stream(&self, seed: u64) -> Rng {
        stream(seed, &format!("flow/{}", self.name))
    }
}

impl Scenario {
    /// Flows with `count` expanded; flow `i` of a spec named `web` is `web[i]`
    /// (or `flow<id>` when unnamed). The name is the flow's identity: it keys the
    /// flow's random streams (see [`crate::rng`]), so names are unique.
    pub fn expanded_flows(&self) -> Vec<ExpandedFlow<'_>> {
        let mut out = Vec::new();
        for (i, spec) in self.flows.iter().enumerate() {
            let common = &spec.common;
            for k in 0..common.count {
                let id = out.len() as u32;
                let name = match (&common.name, common.count) {
                    (Some(n), 1) => n.clone(),
                    (Some(n), _) => format!("{n}[{k}]"),
                    (None, _) => format!("flow{id}"),
                };
                out.push(ExpandedFlow {
                    id,
                    group: common.name.clone().unwrap_or_else(|| name.clone()),
                    name,
                    spec,
                    path: format!("flows[{i}]"),
                });
            }
        }
        out
    }

    /// A scenario file's text: every quantity carries its unit (see [`crate::units`]).
    pub fn from_toml_str(text: &str) -> Result<Scenario, ScenarioError> {
        let document: toml::Table = text.parse().map_err(|e| syntax_error(text, &e))?;
        require_finite_floats(&document)?;
        let de = toml::Deserializer::new(text);
        let scenario: Scenario = reading_file(|| serde_path_to_error::deserialize(de))
            .map_err(|e| located(&path_text(e.path()), e.inner().message().trim()))?;
        scenario.validate()?;
        Ok(scenario)
    }

    /// A scenario a program wrote as JSON (a Python dict): a bare number is a quantity in
    /// base units (bit/s, s, bytes).
    pub fn from_json_str(text: &str) -> Result<Scenario, ScenarioError> {
        Self::from_json(text, false)
    }

    /// A scenario file's content as JSON (the Python front reads the TOML itself): every
    /// quantity carries its unit, as in [`Scenario::from_toml_str`].
    pub fn from_file_json_str(text: &str) -> Result<Scenario, ScenarioError> {
        Self::from_json(text, true)
    }

    fn from_json(text: &str, file: bool) -> Result<Scenario, ScenarioError> {
        let de = &mut serde_json::Deserializer::from_str(text);
        let read = || serde_path_to_error::deserialize(de);
        let scenario: Scenario = if file { reading_file(read) } else { read() }.map_err(|e| {
            let mut msg = e.inner().to_string();
            // serde_json appends " at line L column C", which means nothing to a user who passed a dict.
            if let Some(i) = msg.rfind(" at line ") {
                msg.truncate(i);
            }
            located(&path_text(e.path()), &msg)
        })?;
        scenario.validate()?;
        Ok(scenario)
    }

    /// Checks every value; the first problem found is returned.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        let sim = &self.simulation;
        require_positive("simulation.duration", sim.duration)?;
        require_non_negative("simulation.warmup", sim.warmup)?;
        if sim.warmup >= sim.duration {
            return Err(ScenarioError::new(
                "simulation.warmup",
                format!("must be < duration ({}), got {}", sim.duration, sim.warmup),
            ));
        }
        require_positive("simulation.throughput_bin", sim.throughput_bin)?;
        require_non_negative("simulation.sample_interval", sim.sample_interval)?;
        if self.flows.is_empty() {
            return Err(ScenarioError::new("flows", "at least one flow is required"));
        }
        let nodes: Option<&[String]> = match &self.topology {
            TopologySpec::Dumbbell(d) => {
                validate_link(&d.bottleneck, "topology.bottleneck", sim.duration)?;
                d.hosts().validate()?;
                None
            }
            TopologySpec::ParkingLot(p) => {
                if p.congested_links == 0 {
                    return Err(ScenarioError::new("topology.congested_links", "must be >= 1, got 0"));
                }
                if p.congested_links > MAX_CONGESTED_LINKS {
                    return Err(ScenarioError::new(
                        "topology.congested_links",
                        format!("must be at most {MAX_CONGESTED_LINKS}, got {}", p.congested_links),
                    ));
                }
                validate_link(&p.link, "topology.link", sim.duration)?;
                p.hosts().validate()?;
                None
            }
            TopologySpec::Graph(g) => {
                if g.nodes.is_empty() {
                    return Err(ScenarioError::new("topology.nodes", "at least one node is required"));
                }
                for (i, n) in g.nodes.iter().enumerate() {
                    if g.nodes[..i].contains(n) {
                        return Err(ScenarioError::new(
                            format!("topology.nodes[{i}]"),
                            format!("duplicate node {n:?}"),
                        ));
                    }
                }
                for (i, l) in g.links.iter().enumerate() {
                    let path = format!("topology.links[{i}]");
                    for (field, name) in [("from", &l.from), ("to", &l.to)] {
                        if !g.nodes.contains(name) {
                            return Err(ScenarioError::new(
                                format!("{path}.{field}"),
                                format!("unknown node {name:?}"),
                            ));
                        }
                    }
                    if l.from == l.to {
                        return Err(ScenarioError::new(
                            format!("{path}.to"),
                            format!("a link must join two different nodes, got {:?} twice", l.to),
                        ));
                    }
                    validate_link(&l.link, &path, sim.duration)?;
                }
                Some(&g.nodes)
            }
        };
        let mut flows = 0u64;
        for (i, f) in self.flows.iter().enumerate() {
            f.validate(&format!("flows[{i}]"), nodes, sim.duration)?;
            flows += u64::from(f.common.count);
            if flows > MAX_FLOWS {
                return Err(ScenarioError::new(
                    format!("flows[{i}].count"),
                    format!("makes {flows} flows in all; at most {MAX_FLOWS} are allowed"),
                ));
            }
            match (&self.topology, f.common.hop) {
                (TopologySpec::ParkingLot(p), Some(hop)) if hop >= p.congested_links => {
                    return Err(ScenarioError::new(
                        format!("flows[{i}].hop"),
                        format!("must be < topology.congested_links ({}), got {hop}", p.congested_links),
                    ));
                }
                (TopologySpec::Dumbbell(_) | TopologySpec::Graph(_), Some(_)) => {
                    return Err(ScenarioError::new(
                        format!("flows[{i}].hop"),
                        "only used by a parking_lot topology",
                    ));
                }
                _ => {}
            }
        }
        self.validate_series(flows)?;
        self.validate_unique_names()
    }

    /// The time series of `flows` flows and the monitored links fit in [`MAX_SERIES_ROWS`].
    fn validate_series(&self, flows: u64) -> Result<(), ScenarioError> {
        let sim = &self.simulation;
        let bins = sim.throughput_bins();
        let rows = bins.saturating_mul(flows);
        if rows > MAX_SERIES_ROWS {
            return Err(ScenarioError::new(
                "simulation.throughput_bin",
                format!(
                    "{} s over a {} s run makes {rows} rows of throughput ({bins} bins x {flows} flows); \
                     at most {MAX_SERIES_ROWS} are kept, use a wider bin",
                    to_secs(sim.bin_width()),
                    to_secs(sim.duration.nanos())
                ),
            ));
        }
        let monitored = match &self.topology {
            TopologySpec::Dumbbell(_) => 1,
            TopologySpec::ParkingLot(p) => u64::from(p.congested_links),
            TopologySpec::Graph(g) => g.links.iter().filter(|l| l.monitor).count() as u64,
        };
        if sim.queue_delay_series {
            if sim.queue_delay == QueueDelayDetail::Off {
                return Err(ScenarioError::new(
                    "simulation.queue_delay_series",
                    "needs the queueing delay kept: simulation.queue_delay = \"groups\" or \"flows\", not \"off\"",
                ));
            }
            let groups = self
                .expanded_flows()
                .iter()
                .map(|f| f.group.as_str())
                .collect::<HashSet<_>>()
                .len() as u64;
            let rows = bins.saturating_mul(groups).saturating_mul(monitored);
            if rows > MAX_SERIES_ROWS {
                return Err(ScenarioError::new(
                    "simulation.queue_delay_series",
                    format!(
                        "{bins} bins x {groups} flow groups x {monitored} monitored links make {rows} rows; \
                         at most {MAX_SERIES_ROWS} are kept, use a wider simulation.throughput_bin"
                    ),
                ));
            }
        }
        let samples = sim.queue_samples();
        let rows = samples.saturating_mul(monitored);
        if rows > MAX_SERIES_ROWS {
            return Err(ScenarioError::new(
                "simulation.sample_interval",
                format!(
                    "{} s over a {} s run makes {rows} queue samples ({samples} x {monitored} monitored links); \
                     at most {MAX_SERIES_ROWS} are kept, use a longer interval",
                    to_secs(sim.sample_interval.nanos()),
                    to_secs(sim.duration.nanos())
                ),
            ));
        }
        Ok(())
    }

    /// Every expanded flow has its own name, since the name keys its random streams.
    fn validate_unique_names(&self) -> Result<(), ScenarioError> {
        let mut seen: HashMap<String, String> = HashMap::new();
        for f in self.expanded_flows() {
            if let Some(first) = seen.get(&f.name) {
                return Err(ScenarioError::new(
                    format!("{}.name", f.path),
                    format!(
                        "flow name {:?} is already used by {first}; each flow needs its own name (it keys the flow's random streams)",
                        f.name
                    ),
                ));
            }
            seen.insert(f.name, f.path);
        }
        Ok(())
    }
}

/// A TOML syntax error, which has no field yet: it is named by its line and column.
fn syntax_error(text: &str, e: &toml::de::Error) -> ScenarioError {
    let Some(span) = e.span() else {
        return ScenarioError::new("", e.message().trim());
    };
    let before = &text[..span.start.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before[before.rfind('\n').map_or(0, |i| i + 1)..].chars().count() + 1;
    // The parser's first line ("invalid inline table"), then what to write where there is a hint.
    let message = match syntax::error_hint(text, e) {
        Some(hint) => format!("{}: {hint}", e.message().lines().next().unwrap_or_default()),
        None => e.message().trim().to_string(),
    };
    ScenarioError::new(format!("line {line}, column {column}"), message)
}

/// The error serde reported at `path`; one about the whole scenario (a missing
/// `[simulation]`, `[topology]` or `[[flows]]`) is put at the missing field.
fn located(path: &str, message: &str) -> ScenarioError {
    let (path, message) = join_nested(path, message);
    let message = suggest_field(&message);
    match message
        .strip_prefix("missing field `")
        .and_then(|m| m.strip_suffix('`'))
    {
        Some(field) if path.is_empty() => {
            ScenarioError::new(field, "missing (a scenario has [simulation], [topology] and [[flows]])")
        }
        _ => ScenarioError::new(path, message),
    }
}

fn validate_link(l: &LinkSpec, path: &str, duration: Seconds) -> Result<(), ScenarioError> {
    let field = |name: &str| format!("{path}.{name}");
    match (&l.rate, &l.trace) {
        (Some(_), None) if !l.trace_repeat => {
            return Err(ScenarioError::new(field("trace_repeat"), "only with `trace`"));
        }
        (Some(rate), None) => require_positive(&field("rate"), *rate)?,
        (None, None) => {
            return Err(ScenarioError::new(
                field("rate"),
                "required (or a `trace` of the capacity)",
            ))
        }
        (Some(_), Some(_)) => {
            return Err(ScenarioError::new(
                field("rate"),
                "not used with `trace`, which gives the capacity: leave one out",
            ))
        }
        (None, Some(trace)) => {
            if !l.rate_changes.is_empty() {
                return Err(ScenarioError::new(
                    field("rate_changes"),
                    "not used with `trace`, which gives the capacity over time",
                ));
            }
            if !l.trace_repeat && trace.period() < duration.nanos() {
                return Err(ScenarioError::new(
                    field("trace_repeat"),
                    format!(
                        "false, but the trace lasts {}, less than simulation.duration ({duration}): Mahimahi stops at the end of a recording",
                        Seconds(to_secs(trace.period()))
                    ),
                ));
            }
        }
    }
    require_link_delay(&format!("{path}.delay"), l.delay)?;
    validate_rate_changes(&l.rate_changes, &format!("{path}.rate_changes"), duration)?;
    l.qdisc.config().validate(&format!("{path}.qdisc"))?;
    l.reverse_qdisc.config().validate(&format!("{path}.reverse_qdisc"))
}

/// A link's rate changes: each within the run, later than the one before, to a rate > 0.
fn validate_rate_changes(changes: &[RateChange], path: &str, duration: Seconds) -> Result<(), ScenarioError> {
    for (i, change) in changes.iter().enumerate() {
        let at = format!("{path}[{i}].at");
        require_non_negative(&at, change.at)?;
        if change.at >= duration {
            return Err(ScenarioError::new(
                at,
                format!("must be < simulation.duration ({duration}), got {}", change.at),
            ));
        }
        if let Some(before) = i.checked_sub(1).map(|j| changes[j].at) {
            if change.at <= before {
                return Err(ScenarioError::new(
                    at,
                    format!("must be later than the change before ({before}), got {}", change.at),
                ));
            }
        }
        require_positive(&format!("{path}[{i}].rate"), change.rate)?;
    }
    Ok(())
}
