//! The `[[flows]]` schema: what every flow has ([`FlowCommon`]: name, count,
//! endpoints, start and stop, packet size, ...) and what its `type` selects
//! ([`FlowKind`]: the config of a TCP, CBR, ON-OFF or TFRC flow, which lives next
//! to its agents as the qdisc configs live next to their qdiscs).
//!
//! A flow is written as one flat table (`type = "cbr"`, `rate = "5Mbps"`,
//! `start = 1`). serde's `flatten` would reassemble it from the two parts, but
//! not together with `deny_unknown_fields`, so [`FlowSpec`]'s `Deserialize`
//! splits the table itself: the keys [`FlowCommon`] declares go to it, the
//! rest to the config of the type. A key neither has is an error naming the path
//! and listing the fields of both (`flows[0].rate: unknown field ...` for a rate on
//! a tcp flow, `did you mean `access_delay`?` for `acess_delay`).

use super::{rlm, tcp, tfrc, udp, video, Agent, FlowConfig, Offer};
use crate::error::ScenarioError;
use crate::rng::Rng;
use crate::time::{from_secs, Time};
use crate::units::{Bytes, Rate, Seconds};
use crate::validate::{
    from_tagged_value, require_link_delay, require_non_negative, require_positive, split_fields, struct_fields,
    tagged_registry, take_tag_hinted,
};
use rand::Rng as _;
use serde::Deserialize;

/// What every flow has, whatever its type.
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FlowCommon {
    /// Default `flow<id>`.
    pub name: Option<String>,
    /// Expands into this many identical flows (named `name[i]`); default 1.
    pub count: u32,
    /// Graph topology: source and destination node names.
    pub src: Option<String>,
    pub dst: Option<String>,
    /// Dumbbell: this flow's access link rate and delays (default: the topology's).
    pub access_rate: Option<Rate>,
    pub access_delay: Option<Seconds>,
    pub sink_delay: Option<Seconds>,
    /// Parking lot: cross traffic of congested link `hop` only (default: through all links).
    pub hop: Option<u32>,
    pub start: Seconds,
    /// Start uniformly at random in `[start, start + start_jitter)` (RED-PD §7: within 10 s).
    pub start_jitter: Seconds,
    /// When the sender stops sending new data (default: the end of the run).
    pub stop: Option<Seconds>,
    /// Data packet size on the wire; 1000 B, the papers' packets.
    pub packet_size: Bytes,
    /// CSFQ weight (weighted CSFQ §2.3); default 1.
    pub weight: f64,
    /// Times the application offers no data (RFC 7928 §8.2.5), sorted and disjoint.
    pub pauses: Vec<Pause>,
}

/// The application offers no new data from `at` until `until` (`pauses = [{ at = "40s",
/// until = "60s" }]`); what the transport does meanwhile and after is its own (docs/scenario.md).
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pause {
    pub at: Seconds,
    pub until: Seconds,
}

impl Default for FlowCommon {
    fn default() -> Self {
        FlowCommon {
            name: None,
            count: 1,
            src: None,
            dst: None,
            access_rate: None,
            access_delay: None,
            sink_delay: None,
            hop: None,
            start: Seconds(0.0),
            start_jitter: Seconds(0.0),
            stop: None,
            packet_size: Bytes(1000),
            weight: 1.0,
            pauses: Vec::new(),
        }
    }
}

impl FlowCommon {
    /// The start time, uniform in `[start, start + start_jitter)`; draws from
    /// `rng` (the flow's stream) only when there is jitter.
    pub fn draw_start(&self, rng: &mut Rng) -> Time {
        let jitter = if self.start_jitter.0 > 0.0 {
            from_secs(rng.gen_range(0.0..self.start_jitter.0))
        } else {
            0
        };
        self.start.nanos() + jitter
    }

    /// `nodes` is the graph's node list (None for a dumbbell or parking lot).
    fn validate(&self, path: &str, nodes: Option<&[String]>, duration: Seconds) -> Result<(), ScenarioError> {
        let field = |name: &str| format!("{path}.{name}");
        if self.count == 0 {
            return Err(ScenarioError::new(field("count"), "must be >= 1, got 0"));
        }
        match nodes {
            Some(nodes) => {
                for (name, value) in [("src", &self.src), ("dst", &self.dst)] {
                    match value {
                        None => return Err(ScenarioError::new(field(name), "required in a graph topology")),
                        Some(n) if !nodes.contains(n) => {
                            return Err(ScenarioError::new(field(name), format!("unknown node {n:?}")))
                        }
                        _ => {}
                    }
                }
                if self.src == self.dst {
                    return Err(ScenarioError::new(field("dst"), "must differ from src"));
                }
            }
            None => {
                for (name, value) in [("src", &self.src), ("dst", &self.dst)] {
                    if value.is_some() {
                        return Err(ScenarioError::new(field(name), "not used in a dumbbell or parking_lot (each flow has its own source and sink); use a graph topology"));
                    }
                }
            }
        }
        if let Some(r) = self.access_rate {
            require_positive(&field("access_rate"), r)?;
        }
        for (name, value) in [("access_delay", self.access_delay), ("sink_delay", self.sink_delay)] {
            if let Some(v) = value {
                require_link_delay(&field(name), v)?;
            }
        }
        require_non_negative(&field("start"), self.start)?;
        require_non_negative(&field("start_jitter"), self.start_jitter)?;
        if self.start >= duration {
            return Err(ScenarioError::new(
                field("start"),
                format!("must be < simulation.duration ({duration}), got {}", self.start),
            ));
        }
        if let Some(stop) = self.stop {
            if stop <= self.start {
                return Err(ScenarioError::new(
                    field("stop"),
                    format!("must be > start ({}), got {stop}", self.start),
                ));
            }
        }
        if self.packet_size.0 < 40 || self.packet_size.0 > 65_535 {
            return Err(ScenarioError::new(
                field("packet_size"),
                format!("must be in [40, 65535] bytes, got {}", self.packet_size.0),
            ));
        }
        require_positive(&field("weight"), self.weight)?;
        self.validate_pauses(&field, duration)
    }

    /// Each pause starts after the flow's start (its latest, with jitter) and after the
    /// previous pause ends, and ends after it starts, within the run and before `stop`.
    fn validate_pauses(&self, field: &dyn Fn(&str) -> String, duration: Seconds) -> Result<(), ScenarioError> {
        let end = self.stop.unwrap_or(duration);
        let mut earliest = (
            Seconds(self.start.0 + self.start_jitter.0),
            "the flow's start + start_jitter",
        );
        for (i, pause) in self.pauses.iter().enumerate() {
            let at = |name: &str| field(&format!("pauses[{i}].{name}"));
            if pause.at <= earliest.0 {
                return Err(ScenarioError::new(
                    at("at"),
                    format!("must be > {} ({}), got {}", earliest.1, earliest.0, pause.at),
                ));
            }
            if pause.until <= pause.at {
                return Err(ScenarioError::new(
                    at("until"),
                    format!("must be > at ({}), got {}", pause.at, pause.until),
                ));
            }
            if pause.until > end {
                let bound = if self.stop.is_some() {
                    "stop"
                } else {
                    "simulation.duration"
                };
                return Err(ScenarioError::new(
                    at("until"),
                    format!("must be <= {bound} ({end}), got {}", pause.until),
                ));
            }
            earliest = (pause.until, "the previous pause's until");
        }
        Ok(())
    }

    /// When the application offers data: until `stop`, except in the pauses.
    pub fn offer(&self, stop: Time) -> Offer {
        let pauses = self.pauses.iter().map(|p| (p.at.nanos(), p.until.nanos())).collect();
        Offer { stop, pauses }
    }
}

tagged_registry! {
    /// What a flow's `type` selects, with the settings of that type.
    FlowKind: dyn FlowConfig {
        "tcp" => Tcp(tcp::TcpFlow),
        "cbr" => Cbr(udp::CbrConfig),
        "onoff" => OnOff(udp::OnOffConfig),
        "tfrc" => Tfrc(tfrc::TfrcConfig),
        "rlm" => Rlm(rlm::RlmConfig),
        "video" => Video(video::VideoConfig),
    }
}

/// Flow types other tools name that are not aqmlab's, each with what to write instead. The
/// README and the demo call the CBR flows UDP, and both sources send UDP (issue 34 item 10).
const TYPE_HINTS: &[(&str, &str)] = &[(
    "udp",
    "aqmlab's UDP sources are `cbr` (constant bit rate, `rate`) and `onoff` (`rate` in ON periods of mean `on_time`, silent for `off_time`)",
)];

/// One flow (or `count` identical flows) in a scenario file.
#[derive(Clone, Debug)]
pub struct FlowSpec {
    pub common: FlowCommon,
    pub kind: FlowKind,
}

impl<'de> Deserialize<'de> for FlowSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let mut value = serde_json::Value::deserialize(d)?;
        let tag = take_tag_hinted(&mut value, FlowKind::NAMES, TYPE_HINTS).map_err(D::Error::custom)?;
        let table = std::mem::take(value.as_object_mut().expect("take_tag checked it is a table"));
        let (common, own) =
            split_fields(table, struct_fields::<FlowCommon>(), FlowKind::fields(&tag)).map_err(D::Error::custom)?;
        Ok(FlowSpec {
            common: from_tagged_value(common.into()).map_err(D::Error::custom)?,
            kind: FlowKind::from_tagged(&tag, own.into()).map_err(D::Error::custom)?,
        })
    }
}

impl FlowSpec {
    /// `nodes` is the graph's node list (None for a dumbbell or parking lot).
    pub fn validate(&self, path: &str, nodes: Option<&[String]>, duration: Seconds) -> Result<(), ScenarioError> {
        self.common.validate(path, nodes, duration)?;
        let config = self.kind.config();
        if let Some(why) = config.cannot_pause().filter(|_| !self.common.pauses.is_empty()) {
            return Err(ScenarioError::new(format!("{path}.pauses"), why));
        }
        config.validate(path)
    }

    /// Builds the (sender, receiver) pair; `stop` is when the sender stops.
    pub fn build_agents(&self, stop: Time, rng: Rng) -> (Box<dyn Agent>, Box<dyn Agent>) {
        let offer = self.common.offer(stop);
        self.kind.config().build(self.common.packet_size.0 as u32, &offer, rng)
    }
}
