//! TCP as the papers simulated it: ns-2 style one-way agents (a sender and a
//! sink), sequence numbers and windows in packets, packet sizes used only for
//! serialization. The sender ([`sender`]) is one of two recovery families, picked by
//! the profile: the Reno family (variants Tahoe, Reno, NewReno and SACK, by the RFCs or
//! ns-2) or Linux's (RACK, PRR, Tail Loss Probes, a congestion control module); the sink
//! ([`sink`]) sends cumulative ACKs, optionally delayed, with SACK blocks and ECN echo.
//!
//! A `tcp` flow has TCP options in its `tcp` sub-table, e.g.
//! `tcp = { variant = "sack", window = 64, delayed_ack = true }`, and a
//! [`Workload`]: an infinite source (default), one transfer
//! (`workload = { type = "transfer", packets = 100 }`), or web mode:
//! transfers of Pareto-distributed size separated by exponential think times
//! that start when the previous transfer is fully acknowledged (SRED §7),
//! `workload = { type = "web", pareto_mean = 24, think_time = "1s" }`. Each
//! transfer opens a new connection: cwnd, ssthresh and the RTT estimate start afresh.
//!
//! `profile` picks the TCP being reproduced: `"rfc"` (default) follows today's
//! RFCs (5681, 6298, 6582, 6675); `"ns2"` reproduces ns-2's one-way agents of
//! 1997–2001, which every paper here ran; `"linux"` is Linux 6.1's TCP with the
//! congestion control `cc` (`"cubic"`, its default, `"reno"`, `"bbr"` or `"ledbat"`, RFC 6817's
//! LEDBAT with its parameters in `ledbat = { ... }`; see [`Profile`]).
//! The options a profile sets have no fixed default: left out, they take the
//! profile's value ([`TcpOptions::resolve`]); written out, they override it.

pub mod bbr;
pub mod cc;
pub mod cong;
pub mod cubic;
pub mod dctcp;
pub mod ledbat;
pub mod prague;
pub mod prr;
pub mod rack;
pub mod rate;
pub mod rto;
pub mod sack;
pub mod sender;
pub mod sink;
pub mod web;

use super::{Agent, Codepoint, FlowConfig, Offer};
use crate::error::ScenarioError;
use crate::rng::Rng;
use crate::units::{Bytes, Seconds};
use crate::validate::{error_at, from_tagged_value, require_non_negative, require_positive, take_tag};
use ledbat::LedbatConfig;
use serde::{Deserialize, Deserializer, Serialize};

/// A `tcp` flow's settings.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TcpFlow {
    #[serde(default, deserialize_with = "options_or_moved")]
    pub tcp: TcpOptions,
    #[serde(default)]
    pub workload: Workload,
}

impl FlowConfig for TcpFlow {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        self.tcp.validate(&format!("{path}.tcp"))?;
        self.workload.validate(&format!("{path}.workload"))
    }

    /// Elastic: TCP takes what the network leaves it.
    fn demand_bps(&self) -> Option<f64> {
        None
    }

    fn traced(&self) -> bool {
        self.tcp.trace
    }

    /// An infinite source pauses (each transfer of the others is a connection of its own); BBR's
    /// own rule after idle (bbr_cwnd_event()) is not simulated.
    fn cannot_pause(&self) -> Option<&'static str> {
        if self.workload != Workload::Infinite {
            Some("only the infinite workload pauses (a transfer workload has its own think times)")
        } else if self.tcp.congestion_control() == CongestionControl::Bbr {
            Some(
                r#"not simulated under cc = "bbr": its restart after idle (tcp_bbr.c bbr_cwnd_event()) is not modelled"#,
            )
        } else {
            None
        }
    }

    fn build(&self, size: u32, offer: &Offer, rng: Rng) -> (Box<dyn Agent>, Box<dyn Agent>) {
        let params = self.tcp.resolve();
        (
            sender::build(&params, &self.workload, size, offer.clone(), rng),
            Box::new(sink::TcpSink::new(&params)),
        )
    }
}

/// The workload keys that `tcp` had before the workload became its own table,
/// with the workload type each now belongs to.
const MOVED: [(&str, &str); 4] = [
    ("packets", "transfer"),
    ("pareto_mean", "web"),
    ("pareto_shape", "web"),
    ("think_time", "web"),
];

/// Reads `tcp = { ... }`. A workload key written there gets an error that
/// says what to write instead (scenario files are a user interface).
fn options_or_moved<'de, D: Deserializer<'de>>(d: D) -> Result<TcpOptions, D::Error> {
    use serde::de::Error;
    let value = serde_json::Value::deserialize(d)?;
    let table = value.as_object();
    if let Some(&(key, kind)) = MOVED
        .iter()
        .find(|(key, _)| table.is_some_and(|t| t.contains_key(*key)))
    {
        let settings: String = MOVED
            .iter()
            .filter(|(_, k)| *k == kind)
            .filter_map(|(name, _)| table?.get(*name).map(|v| format!(", {name} = {v}")))
            .collect();
        let message = format!(r#"moved: write workload = {{ type = "{kind}"{settings} }} in the flow"#);
        return Err(D::Error::custom(error_at(key, message)));
    }
    from_tagged_value(value).map_err(D::Error::custom)
}

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
    /// SACK blocks (RFC 2018) and a scoreboard with pipe (RFC 6675); under the ns2
    /// profile ns-2's Sack1, whose pipe is arithmetic (tcp-sack1.cc).
    Sack,
}

/// How congestion avoidance grows cwnd per new ACK (slow start is +1 per ACK in all three).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CongestionAvoidance {
    /// +1 once cwnd ACKs have arrived: one packet per RTT (RFC 5681 §3.1; Linux's snd_cwnd_cnt).
    PerWindow,
    /// +1/cwnd per ACK: RFC 5681 eq. (3); ns-2 tcp.cc opencwnd() with `windowOption_ 1`;
    /// BSD's `incr = maxseg*maxseg/cw` (NetBSD 1.2 tcp_input.c).
    PerAck,
    /// 4.4BSD-Lite tcp_input.c: `incr = maxseg*maxseg/cw + maxseg/8` per ACK, i.e.
    /// +1/cwnd + 1/8 packet ("to help larger windows open quickly enough").
    Bsd44,
}

/// Which TCP the agents reproduce; it supplies the defaults of the options
/// left out and picks the sender: `linux` the linux family, `rfc` and `ns2` the Reno family by
/// their rules (`sender/`, `transport::ns2_rtt`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// Today's standards: congestion avoidance +1 per window of ACKs (RFC 5681
    /// §3.1), an RTT sample from every ACK in exact time (RFC 6298), NewReno's
    /// "Impatient" timer and careful exit (RFC 6582).
    #[default]
    Rfc,
    /// ns-2's one-way agents of 1997–2001, the papers' simulator:
    /// `cwnd_ += 1/cwnd_` per ACK, one packet timed per RTT on a 100 ms tick,
    /// NewReno "Slow-but-Steady" with the era's exit and deflation rules.
    Ns2,
    /// Linux 6.1 (net/ipv4/tcp_*.c): SACK, initial window 10, RTO = SRTT +
    /// max(RTTVAR, 200 ms), the receiver's quick and delayed ACKs, and the
    /// congestion control module [`Cc`] (`cc`) for growth and ssthresh.
    Linux,
}

/// Linux's congestion control module (`net.ipv4.tcp_congestion_control`), `cc`. Under the
/// linux profile the simulator runs `cubic` (its default), `reno` ([`cc`]), `bbr`
/// ([`bbr`]) and `ledbat` ([`ledbat`], RFC 6817, which Linux does not ship); `aqmlab emulate`
/// sets any of the first three on the flow's real socket (`TCP_CONGESTION`). Elsewhere the
/// simulator's TCP is the Reno family (`variant`), which `reno` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CongestionControl {
    /// tcp_cong.c's tcp_reno_cong_avoid() and tcp_reno_ssthresh().
    Reno,
    /// tcp_cubic.c with HyStart (RFC 9438), Linux's default since 2.6.19.
    Cubic,
    /// tcp_bbr.c, BBR v1 as Linux 6.1 runs it ([`bbr`]), paced by the sender (Linux's
    /// internal pacing, as without the fq qdisc).
    Bbr,
    /// RFC 6817's LEDBAT ([`ledbat`]), with the parameters of `ledbat = { ... }`.
    Ledbat,
    /// tcp_dctcp.c, DCTCP (RFC 8257, [`dctcp`]): ECT(0) as Linux 6.1 sends it, the receiver's
    /// ECE state machine of RFC 8257 §3.2 under classic feedback.
    Dctcp,
    /// The L4S team's tcp_prague.c ([`prague`]): ECT(1), accurate ECN feedback, paced.
    Prague,
}

impl CongestionControl {
    /// The name Linux knows it by (`/proc/sys/net/ipv4/tcp_available_congestion_control`);
    /// `ledbat` is the out-of-tree modules' name, which no Linux 6.1 has.
    pub fn linux_name(self) -> &'static str {
        match self {
            CongestionControl::Reno => "reno",
            CongestionControl::Cubic => "cubic",
            CongestionControl::Bbr => "bbr",
            CongestionControl::Ledbat => "ledbat",
            CongestionControl::Dctcp => "dctcp",
            CongestionControl::Prague => "prague",
        }
    }
}

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct TcpOptions {
    pub profile: Profile,
    /// Loss recovery (profile default: rfc and ns2 `newreno`, linux `sack`, the only one it runs).
    pub variant: Option<Variant>,
    /// Linux's congestion control module (default: linux profile `cubic`, else `reno`);
    /// what the simulator runs of it: [`TcpOptions::require_simulated_cc`].
    pub cc: Option<CongestionControl>,
    /// LEDBAT's parameters (RFC 6817 §2.5), read only with `cc = "ledbat"` (default: the RFC's).
    pub ledbat: Option<LedbatConfig>,
    /// Maximum (receiver) window in packets (profile default).
    pub window: Option<u64>,
    /// Initial congestion window in packets (profile default; under `cc = "ledbat"` INIT_CWND, 2).
    pub initial_window: Option<u64>,
    /// Congestion-avoidance growth rule (profile default: rfc `per_window`, ns2 `per_ack`).
    pub congestion_avoidance: Option<CongestionAvoidance>,
    /// Initial slow-start threshold in packets (default: `window`, i.e. "arbitrarily high", RFC 5681 §3.1).
    pub initial_ssthresh: Option<f64>,
    /// Acknowledge every second packet, or after `delack_timeout` (RFC 5681 §4.2)
    /// (profile default: rfc and ns2 false; linux true, with Linux's rules, see [`sink`]).
    pub delayed_ack: Option<bool>,
    /// ns-2 DelAckSink interval_ = 100 ms.
    pub delack_timeout: Option<Seconds>,
    /// Lower bound of the RTO (profile default).
    pub min_rto: Option<Seconds>,
    /// Clock granularity (profile default): G of RFC 6298 under `rfc`, the
    /// tick `tcpTick_` that RTT samples and the RTO are counted in under `ns2`.
    pub timer_granularity: Option<Seconds>,
    /// RTO before the first RTT sample (profile default).
    pub initial_rto: Option<Seconds>,
    /// Send data as ECN-capable and reduce the window on ECN-echo, once per window (RFC 3168):
    /// `true` (ECT(0)), `false`, or the codepoint, `"ect0"` or `"ect1"` (default: `cc =
    /// "dctcp"` ECT(0), `"prague"` ECT(1), else off).
    pub ecn: Option<EcnOption>,
    /// How the receiver tells the sender of CE marks (default `classic`; `accurate` under
    /// `cc = "prague"`, which needs it).
    pub ecn_feedback: Option<EcnFeedback>,
    /// FRED §11.3: on each of the first two duplicate ACKs while the window is
    /// below 10 packets, send a new packet (or re-send the last one if the
    /// window allows no new data), so that tiny windows still reach three
    /// duplicate ACKs. RFC 3042 "limited transmit" is the standardised form.
    pub tiny_window: bool,
    /// Record cwnd, ssthresh, RTO, SRTT and RTTVAR (packets, packets, seconds) when they
    /// change, and every RTT sample (`rtt`, seconds); under `cc = "bbr"` also the pacing
    /// rate (`pacing_rate`, bytes/s), under `cc = "ledbat"` the base delay (`base_delay`, seconds).
    pub trace: bool,
}

/// The options with every default filled in from the profile: what the agents run with.
#[derive(Clone, Debug, PartialEq)]
pub struct TcpParams {
    pub profile: Profile,
    pub variant: Variant,
    pub cc: CongestionControl,
    pub ledbat: LedbatConfig,
    pub window: u64,
    pub initial_window: u64,
    pub congestion_avoidance: CongestionAvoidance,
    pub initial_ssthresh: f64,
    pub delayed_ack: bool,
    pub delack_timeout: Seconds,
    pub min_rto: Seconds,
    pub timer_granularity: Seconds,
    pub initial_rto: Seconds,
    /// The data packets' codepoint (NotEct: not ECN-capable).
    pub ecn: Codepoint,
    pub ecn_feedback: EcnFeedback,
    pub tiny_window: bool,
    pub trace: bool,
}

/// `ecn` as a scenario writes it: on or off (on is ECT(0)), or the codepoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EcnOption {
    On(bool),
    Codepoint(Codepoint),
}

impl<'de> Deserialize<'de> for EcnOption {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = EcnOption;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(r#"true, false, "ect0", "ect1" or "not-ect""#)
            }
            fn visit_bool<E: serde::de::Error>(self, on: bool) -> Result<EcnOption, E> {
                Ok(EcnOption::On(on))
            }
            fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<EcnOption, E> {
                Codepoint::deserialize(serde::de::value::StrDeserializer::<E>::new(name)).map(EcnOption::Codepoint)
            }
        }
        d.deserialize_any(Visitor)
    }
}

/// How the receiver tells the sender of CE marks (`ecn_feedback`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EcnFeedback {
    /// RFC 3168 §6.1.3: ECE on the ACK of a CE-marked packet (under `cc = "dctcp"` RFC 8257
    /// §3.2's receiver: ECE mirrors the last packet's CE state, and a change of it is
    /// acknowledged at once, the delayed ACK for the packets before it first).
    #[default]
    Classic,
    /// Accurate ECN (draft-ietf-tcpm-accurate-ecn §3.2): every ACK carries the count of
    /// CE-marked packets received, and a CE packet after a non-CE one is acknowledged at once
    /// (§3.2.2.5.1's change-triggered ACK). The count is exact here: ACE's 3-bit wrap is not
    /// modelled.
    Accurate,
}

/// The defaults a profile supplies: variant, window, initial window, growth, delayed ACKs,
/// min RTO, clock granularity, initial RTO.
struct ProfileDefaults {
    variant: Variant,
    delayed_ack: bool,
    window: u64,
    initial_window: u64,
    congestion_avoidance: CongestionAvoidance,
    min_rto: f64,
    timer_granularity: f64,
    initial_rto: f64,
}

impl Profile {
    fn defaults(self) -> ProfileDefaults {
        match self {
            Profile::Rfc => ProfileDefaults {
                variant: Variant::NewReno,
                delayed_ack: false,
                // Large enough not to limit typical runs.
                window: 1000,
                // ns-2 windowInit_ = 1 (RFC 5681 allows up to 4).
                initial_window: 1,
                // RFC 5681 §3.1: about one packet per RTT.
                congestion_avoidance: CongestionAvoidance::PerWindow,
                // The floor of the papers' ns-2 (two 100 ms ticks) and of Linux; RFC 6298 recommends 1 s.
                min_rto: 0.2,
                // ns-2's later tcpTick_ (10 ms, from 2002); the RTO's G term, samples stay exact.
                timer_granularity: 0.01,
                // SRED §7, RFC 2988.
                initial_rto: 3.0,
            },
            // tcl/lib/ns-default.tcl of 1997–2001 (e.g. ns-2.1b6, 2000).
            Profile::Ns2 => ProfileDefaults {
                variant: Variant::NewReno,
                delayed_ack: false,
                // `Agent/TCP set window_ 20`.
                window: 20,
                // `windowInit_ 1` (2 only from 2001-05-26).
                initial_window: 1,
                // `windowOption_ 1`.
                congestion_avoidance: CongestionAvoidance::PerAck,
                // `minrto_` did not exist before 2001-05 (then 0); rtt_timeout() floors at 2 ticks.
                min_rto: 0.0,
                // `tcpTick_ 0.1` (0.01 only from 2002-03-07).
                timer_granularity: 0.1,
                // `rtxcur_init_ 6.0` (3 s only from 2006-01-23).
                initial_rto: 6.0,
            },
            // Linux 6.1's defaults (include/net/tcp.h, sysctl defaults).
            Profile::Linux => ProfileDefaults {
                // `tcp_sack 1`; recovery is Linux's SACK recovery, the only one modelled.
                variant: Variant::Sack,
                // Linux always delays ACKs (tcp_input.c __tcp_ack_snd_check()).
                delayed_ack: true,
                // tcp_rmem max 6 MiB with `tcp_adv_win_scale 1` advertises 3 MiB: ~2000 1500-byte packets.
                window: 2000,
                // TCP_INIT_CWND 10 (RFC 6928).
                initial_window: 10,
                // Not read: `cc` grows the window.
                congestion_avoidance: CongestionAvoidance::PerWindow,
                // TCP_RTO_MIN = HZ/5, the floor of the RTTVAR term (tcp_input.c tcp_rtt_estimator()).
                min_rto: 0.2,
                // Not read: samples and timers are exact (jiffies are not modelled).
                timer_granularity: 0.0,
                // TCP_TIMEOUT_INIT = HZ (RFC 6298).
                initial_rto: 1.0,
            },
        }
    }
}

impl TcpOptions {
    /// Fills in what the scenario left out from the profile's defaults.
    pub fn resolve(&self) -> TcpParams {
        let d = self.profile.defaults();
        let window = self.window.unwrap_or(d.window);
        TcpParams {
            profile: self.profile,
            variant: self.variant.unwrap_or(d.variant),
            cc: self.congestion_control(),
            ledbat: self.ledbat.unwrap_or_default(),
            window,
            initial_window: self.initial_window.unwrap_or(match self.congestion_control() {
                // RFC 6817 §2.5.
                CongestionControl::Ledbat => ledbat::INIT_CWND,
                _ => d.initial_window,
            }),
            congestion_avoidance: self.congestion_avoidance.unwrap_or(d.congestion_avoidance),
            initial_ssthresh: self.initial_ssthresh.unwrap_or(window as f64),
            delayed_ack: self.delayed_ack.unwrap_or(d.delayed_ack),
            // ns-2 DelAckSink interval_ = 100 ms in the rfc and ns2 profiles (linux's adapts, sink.rs).
            delack_timeout: self.delack_timeout.unwrap_or(Seconds(0.1)),
            min_rto: self.min_rto.unwrap_or(Seconds(d.min_rto)),
            timer_granularity: self.timer_granularity.unwrap_or(Seconds(d.timer_granularity)),
            initial_rto: self.initial_rto.unwrap_or(Seconds(d.initial_rto)),
            ecn: match self.ecn {
                Some(EcnOption::On(true)) => Codepoint::Ect0,
                Some(EcnOption::On(false)) => Codepoint::NotEct,
                Some(EcnOption::Codepoint(c)) => c,
                // tcp_dctcp.c INET_ECN_xmit(); tcp_prague.c `TCP_ECN_ECT_1`.
                None => match self.congestion_control() {
                    CongestionControl::Dctcp => Codepoint::Ect0,
                    CongestionControl::Prague => Codepoint::Ect1,
                    _ => Codepoint::NotEct,
                },
            },
            ecn_feedback: self.ecn_feedback.unwrap_or(match self.congestion_control() {
                CongestionControl::Prague => EcnFeedback::Accurate,
                _ => EcnFeedback::Classic,
            }),
            tiny_window: self.tiny_window,
            trace: self.trace,
        }
    }

    /// The congestion control the flow runs: `cc`, else the profile's (Linux's default
    /// `cubic` under linux, the Reno family elsewhere). `aqmlab emulate` gives it to the socket.
    pub fn congestion_control(&self) -> CongestionControl {
        self.cc.unwrap_or(match self.profile {
            Profile::Linux => CongestionControl::Cubic,
            Profile::Rfc | Profile::Ns2 => CongestionControl::Reno,
        })
    }

    /// What the simulator runs: CUBIC, BBR, LEDBAT, DCTCP and Prague only under the linux
    /// profile (the Reno family has no module interface); `run` says so, naming `path.cc`.
    pub fn require_simulated_cc(&self, path: &str) -> Result<(), ScenarioError> {
        match (self.profile, self.congestion_control()) {
            (
                Profile::Rfc | Profile::Ns2,
                cc @ (CongestionControl::Ledbat | CongestionControl::Dctcp | CongestionControl::Prague),
            ) => Err(ScenarioError::new(
                format!("{path}.cc"),
                format!(
                    r#""{}" is a module of the linux profile's congestion control interface: write profile = "linux"; the rfc and ns2 profiles' TCP is the Reno family (`variant`)"#,
                    cc.linux_name()
                ),
            )),
            (Profile::Rfc | Profile::Ns2, cc @ (CongestionControl::Cubic | CongestionControl::Bbr)) => {
                Err(ScenarioError::new(
                    format!("{path}.cc"),
                    format!(
                        r#""{}" is Linux's: write profile = "linux" (the simulator's Linux TCP) or run it with `aqmlab emulate`; the rfc and ns2 profiles' TCP is the Reno family (`variant`)"#,
                        cc.linux_name()
                    ),
                ))
            }
            _ => Ok(()),
        }
    }

    /// Checks every option as resolved; errors name the field under `path` (e.g. `flows[0].tcp.window`).
    pub fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        let field = |name: &str| format!("{path}.{name}");
        self.check_profile_fields(&field)?;
        let p = self.resolve();
        match (&self.ledbat, p.cc) {
            (Some(ledbat), CongestionControl::Ledbat) => ledbat.validate(&field("ledbat"))?,
            (Some(_), cc) => {
                return Err(ScenarioError::new(
                    field("ledbat"),
                    format!(r#"read only with cc = "ledbat", got cc = "{}""#, cc.linux_name()),
                ))
            }
            (None, _) => {}
        }
        self.check_ecn(&field, &p)?;
        if p.window == 0 {
            return Err(ScenarioError::new(field("window"), "must be >= 1 packet, got 0"));
        }
        if p.initial_window == 0 || p.initial_window > p.window {
            return Err(ScenarioError::new(
                field("initial_window"),
                format!(
                    "must be in [1, window = {}] packets, got {}",
                    p.window, p.initial_window
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
        require_positive(&field("delack_timeout"), p.delack_timeout)?;
        require_non_negative(&field("min_rto"), p.min_rto)?;
        match p.profile {
            Profile::Rfc | Profile::Linux => require_non_negative(&field("timer_granularity"), p.timer_granularity)?,
            // ns-2 counts RTT samples in ticks: a zero tick has no meaning there.
            Profile::Ns2 => require_positive(&field("timer_granularity"), p.timer_granularity)?,
        }
        require_positive(&field("initial_rto"), p.initial_rto)?;
        Ok(())
    }

    /// DCTCP and Prague need ECN (`TCP_CONG_NEEDS_ECN`), Prague accurate feedback
    /// (`TCP_CONG_NEEDS_ACCECN`); feedback without ECN would be silently unread.
    fn check_ecn(&self, field: &dyn Fn(&str) -> String, p: &TcpParams) -> Result<(), ScenarioError> {
        let cc = p.cc.linux_name();
        if matches!(p.cc, CongestionControl::Dctcp | CongestionControl::Prague) && p.ecn == Codepoint::NotEct {
            return Err(ScenarioError::new(
                field("ecn"),
                format!(r#"cc = "{cc}" needs ECN (TCP_CONG_NEEDS_ECN): leave `ecn` out, or write "ect0" or "ect1""#),
            ));
        }
        if p.cc == CongestionControl::Prague && p.ecn_feedback == EcnFeedback::Classic {
            return Err(ScenarioError::new(
                field("ecn_feedback"),
                r#"cc = "prague" needs accurate ECN feedback (TCP_CONG_NEEDS_ACCECN): leave `ecn_feedback` out or write "accurate""#,
            ));
        }
        if self.ecn_feedback.is_some() && p.ecn == Codepoint::NotEct {
            return Err(ScenarioError::new(
                field("ecn_feedback"),
                "read only when the flow is ECN-capable: set `ecn` too, or leave it out",
            ));
        }
        Ok(())
    }

    /// The options one profile reads and another does not: written under the wrong
    /// profile they would be silently ignored, so they are refused, saying why.
    fn check_profile_fields(&self, field: &dyn Fn(&str) -> String) -> Result<(), ScenarioError> {
        if self.profile != Profile::Linux {
            return Ok(());
        }
        let unread = [
            (
                self.congestion_avoidance.is_some(),
                "congestion_avoidance",
                "growth is the `cc` module's",
            ),
            (
                self.timer_granularity.is_some(),
                "timer_granularity",
                "its RTT samples and timers are exact",
            ),
            (
                self.delack_timeout.is_some(),
                "delack_timeout",
                "its delayed-ACK timeout adapts from 40 ms as Linux's (tcp_input.c tcp_event_data_recv())",
            ),
            (self.tiny_window, "tiny_window", "FRED's rule is not Linux's"),
        ];
        if let Some((_, name, why)) = unread.into_iter().find(|(set, _, _)| *set) {
            return Err(ScenarioError::new(
                field(name),
                format!("not used by the linux profile ({why}): leave it out"),
            ));
        }
        match self.variant {
            Some(v) if v != Variant::Sack => Err(ScenarioError::new(
                field("variant"),
                format!(
                    r#"the linux profile runs Linux's SACK recovery: write variant = "sack" or leave it out, got "{}""#,
                    v.name()
                ),
            )),
            _ => Ok(()),
        }
    }
}

impl Variant {
    /// The name a scenario file writes.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Tahoe => "tahoe",
            Variant::Reno => "reno",
            Variant::NewReno => "newreno",
            Variant::Sack => "sack",
        }
    }
}

/// What the application gives TCP to send (`workload = { type = ... }` in a tcp flow).
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Workload {
    /// An infinite backlog (`type = "infinite"`, the default).
    #[default]
    Infinite,
    /// One finite transfer (`type = "transfer"`).
    Transfer(TransferWorkload),
    /// Web mode (`type = "web"`).
    Web(WebWorkload),
    /// SRED §VII's web-like source (`type = "neidhardt"`).
    Neidhardt(NeidhardtWorkload),
}

/// One transfer of `packets` packets; its completion time is reported in `transfers`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TransferWorkload {
    pub packets: u64,
}

/// Transfers of Pareto-distributed size separated by exponential think times.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct WebWorkload {
    /// Mean transfer size in packets.
    pub pareto_mean: f64,
    /// Pareto shape; 1.2 (RED-PD §7.4: "pareto with average 24 packets and shape parameter 1.2").
    #[serde(default = "WebWorkload::default_shape")]
    pub pareto_shape: f64,
    /// Mean of the exponential think time between transfers (0: none).
    pub think_time: Seconds,
}

impl WebWorkload {
    fn default_shape() -> f64 {
        1.2
    }
}

/// SRED §VII's web-like source: files of eq. 7.1's size in bytes, each a new connection,
/// then a think time of eq. 7.2 that starts when the file's last packet is acknowledged.
/// Every setting defaults to the paper's.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct NeidhardtWorkload {
    /// Median file size μ of eq. 7.1 ("μ = 2190" bytes).
    pub median: Bytes,
    /// α of eq. 7.1 ("α = 1.15066": finite mean, 14954 bytes, infinite variance).
    pub shape: f64,
    /// File bytes per packet: SRED §VI's MSS of 536 bytes.
    pub segment: Bytes,
    /// Eq. 7.2's mixture components (weights sum to 1).
    pub think: Vec<ThinkComponent>,
    /// Think times below this are drawn again ("if the think-time came out below 50 msec we re-sampled").
    pub think_min: Seconds,
}

/// One component of SRED eq. 7.2: with probability `weight`, a think time with
/// P{T > t} = (1 + (t/median)^shape)^−1.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ThinkComponent {
    pub weight: f64,
    pub median: Seconds,
    pub shape: f64,
}

impl ThinkComponent {
    fn law(&self) -> web::LogLogistic {
        web::LogLogistic {
            median: self.median.0,
            shape: self.shape,
        }
    }
}

impl Default for NeidhardtWorkload {
    fn default() -> Self {
        NeidhardtWorkload {
            median: Bytes(2190),
            shape: 1.15066,
            segment: Bytes(536),
            // SRED §VII: "p_h = .4953916, p_l = .5046084, μ_h = 1.0, α_h = 1.243437, μ_l = .0245032,
            // α_l = 3.252665" (Neidhardt's think times divided by 10, as the paper does).
            think: vec![
                ThinkComponent {
                    weight: 0.4953916,
                    median: Seconds(1.0),
                    shape: 1.243437,
                },
                ThinkComponent {
                    weight: 0.5046084,
                    median: Seconds(0.0245032),
                    shape: 3.252665,
                },
            ],
            think_min: Seconds(0.05),
        }
    }
}

impl NeidhardtWorkload {
    pub fn file_size(&self) -> web::FileSize {
        web::FileSize::Bytes {
            law: web::LogLogistic {
                median: self.median.0 as f64,
                shape: self.shape,
            },
            segment: self.segment.0 as f64,
        }
    }

    pub fn think_time(&self) -> web::ThinkTime {
        let components = self.think.iter().map(|c| (c.weight, c.law())).collect();
        web::ThinkTime::Mixture {
            components,
            min: self.think_min.0,
        }
    }

    fn validate(&self, field: impl Fn(&str) -> String) -> Result<(), ScenarioError> {
        require_positive(&field("median"), self.median.0 as f64)?;
        require_positive(&field("segment"), self.segment.0 as f64)?;
        if !(self.shape > 1.0 && self.shape.is_finite()) {
            return Err(ScenarioError::new(
                field("shape"),
                format!("must be > 1 (a finite mean), got {}", self.shape),
            ));
        }
        if self.think.is_empty() {
            return Err(ScenarioError::new(field("think"), "must have at least one component"));
        }
        for (i, c) in self.think.iter().enumerate() {
            let at = |name: &str| field(&format!("think[{i}].{name}"));
            if !(c.weight > 0.0 && c.weight <= 1.0) {
                return Err(ScenarioError::new(
                    at("weight"),
                    format!("must be in (0, 1], got {}", c.weight),
                ));
            }
            require_positive(&at("median"), c.median)?;
            require_positive(&at("shape"), c.shape)?;
        }
        let total: f64 = self.think.iter().map(|c| c.weight).sum();
        if (total - 1.0).abs() > 1e-6 {
            return Err(ScenarioError::new(
                field("think"),
                format!("weights must sum to 1, got {total}"),
            ));
        }
        // A minimum most draws miss would make the re-drawing loop spin.
        let p_min: f64 = self.think_time_survival(self.think_min.0);
        if !(self.think_min.0 >= 0.0 && p_min >= 0.01) {
            return Err(ScenarioError::new(
                field("think_min"),
                format!(
                    "must be >= 0 and leave at least 1 % of think times above it, got {} s ({:.2e} above)",
                    self.think_min.0, p_min
                ),
            ));
        }
        Ok(())
    }

    /// P{T > t} of the think-time mixture before re-drawing.
    fn think_time_survival(&self, t: f64) -> f64 {
        self.think.iter().map(|c| c.weight * c.law().survival(t)).sum()
    }
}

/// `type = "infinite"` takes no settings.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Infinite {}

impl<'de> Deserialize<'de> for Workload {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let mut value = serde_json::Value::deserialize(d)?;
        match take_tag(&mut value, &["infinite", "transfer", "web", "neidhardt"])
            .map_err(D::Error::custom)?
            .as_str()
        {
            "infinite" => from_tagged_value::<Infinite>(value).map(|_| Workload::Infinite),
            "transfer" => from_tagged_value(value).map(Workload::Transfer),
            "web" => from_tagged_value(value).map(Workload::Web),
            _ => from_tagged_value(value).map(Workload::Neidhardt),
        }
        .map_err(D::Error::custom)
    }
}

impl Workload {
    /// Checks the settings; errors name the field under `path` (e.g. `flows[0].workload.packets`).
    pub fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        let field = |name: &str| format!("{path}.{name}");
        match self {
            Workload::Infinite => Ok(()),
            Workload::Transfer(t) if t.packets == 0 => Err(ScenarioError::new(field("packets"), "must be >= 1, got 0")),
            Workload::Transfer(_) => Ok(()),
            Workload::Web(w) => {
                if !(w.pareto_mean >= 1.0 && w.pareto_mean.is_finite()) {
                    return Err(ScenarioError::new(
                        field("pareto_mean"),
                        format!("must be >= 1 packet, got {}", w.pareto_mean),
                    ));
                }
                if !(w.pareto_shape > 1.0 && w.pareto_shape.is_finite()) {
                    return Err(ScenarioError::new(
                        field("pareto_shape"),
                        format!("must be > 1 (a finite mean), got {}", w.pareto_shape),
                    ));
                }
                require_non_negative(&field("think_time"), w.think_time)
            }
            Workload::Neidhardt(n) => n.validate(field),
        }
    }
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
        assert_eq!(o, TcpOptions::default());
        let p = o.resolve();
        assert_eq!(
            (p.profile, p.variant, p.delayed_ack),
            (Profile::Rfc, Variant::NewReno, false)
        );
        assert_eq!(
            (p.window, p.initial_window, p.initial_rto.0, p.delack_timeout.0),
            (1000, 1, 3.0, 0.1)
        );
        assert_eq!(
            (p.min_rto.0, p.timer_granularity.0, p.initial_ssthresh),
            (0.2, 0.01, 1000.0)
        );
        assert_eq!(
            parse("variant = \"sack\"\nwindow = 64").unwrap().variant,
            Some(Variant::Sack)
        );
        assert_ne!(parse("variant = \"tahoe\"").unwrap(), TcpOptions::default());
        assert!(parse("variant = \"vegas\"").unwrap_err().contains("unknown variant"));
        assert!(parse("windw = 3").unwrap_err().contains("unknown field"));
    }

    #[test]
    fn the_ns2_profile_supplies_the_era_defaults_and_explicit_fields_win() {
        let p = parse(r#"profile = "ns2""#).unwrap().resolve();
        // ns-default.tcl of 1997–2001: window_ 20, windowInit_ 1, rtxcur_init_ 6.0, tcpTick_ 0.1, no minrto_.
        assert_eq!(
            (p.profile, p.window, p.initial_window, p.initial_ssthresh),
            (Profile::Ns2, 20, 1, 20.0)
        );
        assert_eq!(
            (p.initial_rto.0, p.timer_granularity.0, p.min_rto.0, p.delack_timeout.0),
            (6.0, 0.1, 0.0, 0.1)
        );
        let p = parse("profile = \"ns2\"\nwindow = 64\ninitial_rto = \"3s\"\nmin_rto = \"1s\"")
            .unwrap()
            .resolve();
        assert_eq!(
            (p.window, p.initial_ssthresh, p.initial_rto.0, p.min_rto.0),
            (64, 64.0, 3.0, 1.0)
        );
        assert_eq!(p.timer_granularity.0, 0.1);
        // The initial window is checked against the profile's window.
        assert!(parse("profile = \"ns2\"\ninitial_window = 21")
            .unwrap_err()
            .contains("initial_window: must be in [1, window = 20] packets, got 21"));
        assert!(parse("profile = \"ns2\"\ntimer_granularity = 0")
            .unwrap_err()
            .contains("timer_granularity: must be > 0"));
        assert!(parse(r#"profile = "bsd""#).unwrap_err().contains("unknown variant"));
    }

    #[test]
    fn the_linux_profile_supplies_linux_defaults_and_refuses_what_it_does_not_read() {
        let p = parse(r#"profile = "linux""#).unwrap().resolve();
        // TCP_INIT_CWND 10, TCP_RTO_MIN 200 ms, TCP_TIMEOUT_INIT 1 s, SACK, delayed ACKs, CUBIC.
        assert_eq!(
            (p.variant, p.cc, p.initial_window, p.delayed_ack),
            (Variant::Sack, CongestionControl::Cubic, 10, true)
        );
        assert_eq!((p.min_rto.0, p.initial_rto.0, p.window), (0.2, 1.0, 2000));
        assert_eq!(
            parse("profile = \"linux\"\ncc = \"reno\"").unwrap().resolve().cc,
            CongestionControl::Reno
        );
        let cases = [
            ("profile = \"linux\"\ncc = \"bic\"", "unknown variant `bic`"),
            (
                "profile = \"linux\"\nvariant = \"newreno\"",
                r#"flows[0].tcp.variant: the linux profile runs Linux's SACK recovery: write variant = "sack" or leave it out, got "newreno""#,
            ),
            (
                "profile = \"linux\"\ncongestion_avoidance = \"per_ack\"",
                "flows[0].tcp.congestion_avoidance: not used by the linux profile (growth is the `cc` module's): leave it out",
            ),
            (
                "profile = \"linux\"\ndelack_timeout = \"40ms\"",
                "flows[0].tcp.delack_timeout: not used by the linux profile",
            ),
        ];
        for (text, expected) in cases {
            let err = parse(text).unwrap_err();
            assert!(err.contains(expected), "{text:?}: {err}");
        }
        // What the simulator runs of `cc`: CUBIC and BBR under the linux profile only.
        let simulated = |text: &str| {
            let opts = parse(text).unwrap();
            opts.require_simulated_cc("flows[0].tcp").map_err(|e| e.to_string())
        };
        assert!(simulated("profile = \"linux\"\ncc = \"cubic\"").is_ok());
        assert!(simulated(r#"cc = "reno""#).is_ok());
        let err = simulated(r#"cc = "cubic""#).unwrap_err();
        assert!(
            err.starts_with(r#"flows[0].tcp.cc: "cubic" is Linux's: write profile = "linux""#),
            "{err}"
        );
        assert!(simulated("profile = \"linux\"\ncc = \"bbr\"").is_ok());
        let err = simulated(r#"cc = "bbr""#).unwrap_err();
        assert!(
            err.starts_with(r#"flows[0].tcp.cc: "bbr" is Linux's: write profile = "linux""#),
            "{err}"
        );
        // A misspelt field is suggested, as for the other fields.
        let err: String = parse("profile = \"linux\"\ncongestion = \"cubic\"").unwrap_err();
        assert!(err.contains("unknown field `congestion`"), "{err}");
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
            ("min_rto = -1", "flows[0].tcp.min_rto: must be >= 0, got -1s"),
            // A time is shown in its unit, not as -0.001 (s).
            (
                "timer_granularity = \"-1ms\"",
                "flows[0].tcp.timer_granularity: must be >= 0, got -1ms",
            ),
            ("initial_rto = 0", "flows[0].tcp.initial_rto: must be > 0, got 0"),
        ];
        for (text, expected) in cases {
            let err = parse(text).unwrap_err();
            assert!(err.starts_with(expected), "{text:?}: {err}");
        }
    }
}
