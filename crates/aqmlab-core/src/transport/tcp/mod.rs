//! TCP as the papers simulated it: ns-2 style one-way agents (a sender and a
//! sink), sequence numbers and windows in packets, packet sizes used only for
//! serialization. Variants Tahoe, Reno, NewReno and SACK share one sender and
//! differ only in loss recovery ([`sender`]); the sink ([`sink`]) sends
//! cumulative ACKs, optionally delayed, with SACK blocks and ECN echo.
//!
//! The `[flows.tcp]` sub-table of a TCP flow, e.g.
//! `tcp = { variant = "sack", window = 64, delayed_ack = true }`.
//! Workload: an infinite source (default), one transfer of `packets`, or web
//! mode: transfers of Pareto-distributed size (`pareto_mean`, `pareto_shape`)
//! separated by exponential think times (`think_time`) that start when the
//! previous transfer is fully acknowledged (SRED §7). Each transfer opens a
//! new connection: cwnd, ssthresh and the RTT estimate start afresh.

pub mod rto;
pub mod sack;
pub mod sender;
pub mod sink;
pub mod timer;

use super::Agent;
use crate::error::ScenarioError;
use crate::rng::Rng;
use crate::time::Time;
use crate::units::Seconds;
use crate::validate::{require_non_negative, require_positive};
use serde::{Deserialize, Serialize};

/// Loss recovery algorithm.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Variant {
    /// Fast retransmit, then slow start from one packet (BRED §4).
    Tahoe,
    /// Fast retransmit and fast recovery with window inflation (RFC 5681).
    Reno,
    /// Reno plus partial-ACK retransmissions (FRED §11.2, RFC 6582).
    #[default]
    NewReno,
    /// SACK blocks (RFC 2018) and a scoreboard with pipe (RFC 6675), like ns-2's Sack1.
    Sack,
}

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct TcpOptions {
    pub variant: Variant,
    /// Maximum (receiver) window in packets; the default does not limit typical runs.
    pub window: u64,
    /// Initial congestion window in packets (ns-2 windowInit_ = 1).
    pub initial_window: u64,
    /// Initial slow-start threshold in packets (default: `window`, i.e. "arbitrarily high", RFC 5681 §3.1).
    pub initial_ssthresh: Option<f64>,
    /// Acknowledge every second packet, or after `delack_timeout` (RFC 5681 §4.2).
    pub delayed_ack: bool,
    /// ns-2 DelAckSink interval_ = 100 ms.
    pub delack_timeout: Seconds,
    /// Lower bound of the RTO: 200 ms, the floor of the papers' ns-2 (two
    /// 100 ms clock ticks) and of Linux; RFC 6298 recommends 1 s.
    pub min_rto: Seconds,
    /// Clock granularity G in RTO = SRTT + max(G, 4·RTTVAR) (RFC 6298): 10 ms,
    /// ns-2's later tcpTick_. The papers' ns-2 ticked every 100 ms; "100ms"
    /// approximates it (our timers and RTT samples stay exact, not in ticks).
    pub timer_granularity: Seconds,
    /// RTO before the first RTT sample: 3 s (SRED §7, RFC 2988).
    pub initial_rto: Seconds,
    /// Send data as ECN-capable and halve the window on ECN-echo, once per window (RFC 3168).
    pub ecn: bool,
    /// FRED §11.3: on each of the first two duplicate ACKs while the window is
    /// below 10 packets, send a new packet (or re-send the last one if the
    /// window allows no new data), so that tiny windows still reach three
    /// duplicate ACKs. RFC 3042 "limited transmit" is the standardised form.
    pub tiny_window: bool,
    /// Record cwnd, ssthresh and RTO (packets, packets, seconds) when they change.
    pub trace: bool,
    /// One finite transfer of this many packets.
    pub packets: Option<u64>,
    /// Web mode: mean transfer size in packets (Pareto).
    pub pareto_mean: Option<f64>,
    /// Web mode: Pareto shape (default 1.2, RED-PD §7.4).
    pub pareto_shape: Option<f64>,
    /// Web mode: mean of the exponential think time between transfers.
    pub think_time: Option<Seconds>,
}

impl Default for TcpOptions {
    fn default() -> Self {
        TcpOptions {
            variant: Variant::default(),
            window: 1000,
            initial_window: 1,
            initial_ssthresh: None,
            delayed_ack: false,
            delack_timeout: Seconds(0.1),
            min_rto: Seconds(0.2),
            timer_granularity: Seconds(0.01),
            initial_rto: Seconds(3.0),
            ecn: false,
            tiny_window: false,
            trace: false,
            packets: None,
            pareto_mean: None,
            pareto_shape: None,
            think_time: None,
        }
    }
}

impl TcpOptions {
    /// RED-PD §7.4: "pareto with average 24 packets and shape parameter 1.2".
    pub const DEFAULT_PARETO_SHAPE: f64 = 1.2;

    pub fn is_default(&self) -> bool {
        *self == TcpOptions::default()
    }

    /// Checks every option; errors name the field under `path` (e.g. `flows[0].tcp.window`).
    pub fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        let field = |name: &str| format!("{path}.{name}");
        if self.window == 0 {
            return Err(ScenarioError::new(field("window"), "must be >= 1 packet, got 0"));
        }
        if self.initial_window == 0 || self.initial_window > self.window {
            return Err(ScenarioError::new(
                field("initial_window"),
                format!(
                    "must be in [1, window = {}] packets, got {}",
                    self.window, self.initial_window
                ),
            ));
        }
        if let Some(s) = self.initial_ssthresh {
            if !(s >= 1.0 && s.is_finite()) {
                return Err(ScenarioError::new(
                    field("initial_ssthresh"),
                    format!("must be >= 1 packet, got {s}"),
                ));
            }
        }
        require_positive(&field("delack_timeout"), self.delack_timeout.0)?;
        require_non_negative(&field("min_rto"), self.min_rto.0)?;
        require_non_negative(&field("timer_granularity"), self.timer_granularity.0)?;
        require_positive(&field("initial_rto"), self.initial_rto.0)?;
        if self.packets == Some(0) {
            return Err(ScenarioError::new(field("packets"), "must be >= 1, got 0"));
        }
        match self.pareto_mean {
            Some(mean) => {
                if self.packets.is_some() {
                    return Err(ScenarioError::new(
                        field("packets"),
                        "cannot be combined with pareto_mean (web mode): choose one workload",
                    ));
                }
                if !(mean >= 1.0 && mean.is_finite()) {
                    return Err(ScenarioError::new(
                        field("pareto_mean"),
                        format!("must be >= 1 packet, got {mean}"),
                    ));
                }
                if let Some(shape) = self.pareto_shape {
                    if !(shape > 1.0 && shape.is_finite()) {
                        return Err(ScenarioError::new(
                            field("pareto_shape"),
                            format!("must be > 1 (a finite mean), got {shape}"),
                        ));
                    }
                }
                let think = self.think_time.ok_or_else(|| {
                    ScenarioError::new(field("think_time"), "required in web mode (with pareto_mean)")
                })?;
                require_non_negative(&field("think_time"), think.0)?;
            }
            None => {
                for (name, set) in [
                    ("pareto_shape", self.pareto_shape.is_some()),
                    ("think_time", self.think_time.is_some()),
                ] {
                    if set {
                        return Err(ScenarioError::new(
                            field(name),
                            "only used in web mode: set pareto_mean too",
                        ));
                    }
                }
            }
        }
        Ok(())
    }
}

/// Builds a flow's (sender, sink) pair; `size` is the data packet size in bytes,
/// `stop` the time after which no new data is sent.
pub fn build(opts: &TcpOptions, size: u32, stop: Time, rng: Rng) -> (Box<dyn Agent>, Box<dyn Agent>) {
    (
        Box::new(sender::TcpSender::new(opts, size, stop, rng)),
        Box::new(sink::TcpSink::new(opts)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<TcpOptions, String> {
        let opts: TcpOptions = toml::from_str(text).map_err(|e| e.to_string())?;
        opts.validate("flows[0].tcp").map_err(|e| e.to_string())?;
        Ok(opts)
    }

    #[test]
    fn defaults_and_variant_names() {
        let o = parse("").unwrap();
        assert!(o.is_default());
        assert_eq!(o.variant, Variant::NewReno);
        assert_eq!(
            (o.window, o.initial_window, o.initial_rto.0, o.delack_timeout.0),
            (1000, 1, 3.0, 0.1)
        );
        assert_eq!(parse("variant = \"sack\"\nwindow = 64").unwrap().variant, Variant::Sack);
        assert!(!parse("variant = \"tahoe\"").unwrap().is_default());
        assert!(parse("variant = \"vegas\"").unwrap_err().contains("unknown variant"));
        assert!(parse("windw = 3").unwrap_err().contains("unknown field"));
    }

    #[test]
    fn errors_name_the_field() {
        let cases = [
            ("window = 0", "flows[0].tcp.window: must be >= 1 packet, got 0"),
            (
                "window = 8\ninitial_window = 9",
                "flows[0].tcp.initial_window: must be in [1, window = 8] packets, got 9",
            ),
            (
                "initial_ssthresh = 0.5",
                "flows[0].tcp.initial_ssthresh: must be >= 1 packet, got 0.5",
            ),
            ("delack_timeout = 0", "flows[0].tcp.delack_timeout: must be > 0, got 0"),
            ("min_rto = -1", "flows[0].tcp.min_rto: must be >= 0, got -1"),
            (
                "timer_granularity = \"-1ms\"",
                "flows[0].tcp.timer_granularity: must be >= 0, got -0.001",
            ),
            ("initial_rto = 0", "flows[0].tcp.initial_rto: must be > 0, got 0"),
            ("packets = 0", "flows[0].tcp.packets: must be >= 1, got 0"),
            (
                "pareto_mean = 24\npackets = 3",
                "flows[0].tcp.packets: cannot be combined with pareto_mean",
            ),
            (
                "pareto_mean = 0.5\nthink_time = 1",
                "flows[0].tcp.pareto_mean: must be >= 1 packet, got 0.5",
            ),
            (
                "pareto_mean = 24\npareto_shape = 1\nthink_time = 1",
                "flows[0].tcp.pareto_shape: must be > 1 (a finite mean), got 1",
            ),
            ("pareto_mean = 24", "flows[0].tcp.think_time: required in web mode"),
            (
                "pareto_mean = 24\nthink_time = -1",
                "flows[0].tcp.think_time: must be >= 0, got -1",
            ),
            ("think_time = 1", "flows[0].tcp.think_time: only used in web mode"),
            ("pareto_shape = 1.5", "flows[0].tcp.pareto_shape: only used in web mode"),
        ];
        for (text, expected) in cases {
            let err = parse(text).unwrap_err();
            assert!(err.starts_with(expected), "{text:?}: {err}");
        }
        assert!(parse("pareto_mean = 24\npareto_shape = 1.5\nthink_time = \"100ms\"").is_ok());
    }
}
