//! Results of a run (plain data), the [`Recorder`] that collects them, the
//! fairness measures computed on them, and packet captures ([`pcap`]).

pub mod bounds;
pub mod fairness;
pub mod models;
pub mod pcap;
pub mod queue_delay;
pub mod recorder;

use crate::transport::{TraceSample, Transfer};
use serde::Serialize;

pub use bounds::bred_cbr_bound;
pub use fairness::{jain_index, max_min_shares};
pub use queue_delay::{DelayBin, DelayStats, FlowDelay, GroupDelay};
pub use recorder::{InFlight, Recorder};

#[derive(Clone, Debug, Serialize)]
pub struct Results {
    pub summary: Summary,
    pub flows: Vec<FlowResult>,
    pub links: Vec<LinkResult>,
    /// Drop counts by flow, link and reason (whole run).
    pub drops: Vec<DropCount>,
    /// ECN marks (packets set CE by a link's qdisc) by flow and link, for the pairs with a mark;
    /// left out when no packet was marked.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub marks: Vec<MarkCount>,
    /// Per-flow goodput in bins of `simulation.throughput_bin`.
    pub throughput: Vec<ThroughputBin>,
    /// Queue samples of monitored links.
    pub queue: Vec<QueueSample>,
    /// Per-packet queueing delay (sojourn) on monitored links, by (flow, link) and by
    /// (flow group, link), over the window (`simulation.queue_delay` says which are kept).
    pub queue_delay: Vec<FlowDelay>,
    pub queue_delay_groups: Vec<GroupDelay>,
    /// Each flow group's queueing delay per throughput bin on monitored links, when
    /// `simulation.queue_delay_series` is set; left out otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub queue_delay_series: Vec<DelayBin>,
    /// Every drop, when `simulation.record_drops` is set.
    pub drop_log: Vec<DropEvent>,
    /// Traced transport variables (cwnd, ssthresh, rto, rtt, srtt, rttvar, ...) of flows with tracing on.
    pub traces: Vec<TraceSample>,
    /// Finite transfers (web objects) with their completion times.
    pub transfers: Vec<Transfer>,
    /// Per-flow measurement kept by a link's qdisc (SRED's §VIII candidate statistics).
    pub qdisc_flows: Vec<QdiscFlowResult>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    pub name: Option<String>,
    pub seed: u64,
    pub duration: f64,
    pub warmup: f64,
    pub events: u64,
    pub packets_sent: u64,
    pub packets_delivered: u64,
    pub packets_dropped: u64,
    pub packets_in_flight: u64,
    /// Jain's index of goodput normalised by each flow's max-min fair share.
    pub jain_index: f64,
    /// Utilisation of each monitored link over the measurement window.
    pub utilisation: Vec<(String, f64)>,
}

#[derive(Clone, Debug, Serialize)]
pub struct FlowResult {
    pub id: u32,
    pub name: String,
    /// Its `[[flows]]` entry's name (the flows of one `count` share it), or its own name.
    pub group: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub src: String,
    pub dst: String,
    /// Two-way propagation delay along the flow's route, seconds.
    pub base_rtt: f64,
    pub sent_packets: u64,
    pub sent_bytes: u64,
    /// Data packets that reached the receiver (duplicates included).
    pub delivered_packets: u64,
    /// Data packets dropped anywhere (whole run).
    pub dropped_packets: u64,
    /// Measurement window: data packets sent and dropped, and their ratio.
    pub window_sent_packets: u64,
    pub window_dropped_packets: u64,
    pub loss_rate: f64,
    /// New in-order bytes handed to the receiving application in the window, per second.
    pub goodput_bps: f64,
    /// Max-min fair share over the flow's route (water-filling on link rates and flow demands).
    pub fair_share_bps: f64,
    pub normalised_goodput: f64,
    /// One-way delay (sent to delivered, queueing included) of the data packets delivered in
    /// the window: mean and largest, seconds (0 when none was).
    pub mean_delay: f64,
    pub max_delay: f64,
    pub timeouts: u64,
    pub fast_retransmits: u64,
    pub retransmitted_packets: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct LinkResult {
    pub id: u32,
    pub name: String,
    pub qdisc: &'static str,
    /// Its rate; the mean over the measurement window for a link with `rate_changes`.
    pub rate_bps: f64,
    pub delay: f64,
    /// Fraction of the measurement window the link was transmitting.
    pub utilisation: f64,
    pub packets_sent: u64,
    pub drops: u64,
    /// Qdisc-specific counters (e.g. `peak_active_flows`); first `ecn_marks`, the link's marks,
    /// when its discipline can mark.
    pub counters: Vec<(String, f64)>,
}

/// One flow direction's qdisc counters on one link.
#[derive(Clone, Debug, Serialize)]
pub struct QdiscFlowResult {
    pub link: u32,
    pub flow: u32,
    /// `"data"` or `"ack"`: a router tells a flow's two directions apart.
    pub direction: &'static str,
    pub counters: Vec<(String, f64)>,
}

#[derive(Clone, Debug, Serialize)]
pub struct DropCount {
    pub flow: u32,
    pub link: u32,
    pub reason: &'static str,
    pub count: u64,
    pub window_count: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct MarkCount {
    pub flow: u32,
    pub link: u32,
    pub count: u64,
    pub window_count: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct ThroughputBin {
    pub time: f64,
    pub flow: u32,
    pub bps: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct QueueSample {
    pub time: f64,
    pub link: u32,
    pub packets: u64,
    pub bytes: u64,
    pub average: Option<f64>,
    /// SRED's hit frequency P(t); absent for other disciplines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hit_frequency: Option<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct DropEvent {
    pub time: f64,
    pub flow: u32,
    pub link: u32,
    pub reason: &'static str,
}

impl Results {
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("results are plain data")
    }
}
