//! TCP against closed-form models and exact event counts.
//!
//! One long-lived flow crosses a dumbbell with 1 Gbps access links. Unless a
//! check says otherwise the bottleneck is 1 Gbps too, so queueing and
//! serialization are negligible and the RTT is the 100 ms propagation delay,
//! and it runs the `loss` qdisc (periodic, Bernoulli or scripted drops). The
//! rate measured is the flow's sending rate (packets/s, retransmissions
//! included: what the models describe) after a warm-up of 20 loss events, over
//! 200 more (1000 for Bernoulli loss); each model is evaluated at the loss
//! rate the flow saw. Without queueing the system is scale-invariant in the
//! RTT (40, 100 and 200 ms gave the same ratios to three decimals), so one RTT
//! is enough; the rows vary what changes behaviour instead.
//!
//! - `cycle.*`: periodic loss against the exact periodic-loss cycle
//!   ([`periodic_loss_cycle`], TCP review Q3), ±3 % (the residual ±2 % comes
//!   from integer ssthresh and where the drop falls in a round), each variant
//!   at p = 0.5/1/2 %; with delayed ACKs (b = 2) at p = 0.1 %. At higher p
//!   delayed ACKs fall further below the b = 2 cycle (0.95 at 0.2 %, 0.87 at
//!   1 %): the model takes one ACK per two packets, but a window with an odd
//!   number of packets leaves one waiting for the 100 ms delayed-ACK timer.
//! - `sqrt.*`: periodic loss at p ≤ 0.1 % against the square-root law
//!   (RED-PD eq. 1), ±5 %: its O(1/W) error (the cycle's two extra rounds) is
//!   4 % at 0.1 % and 3 % at 0.05 %.
//! - `timeouts.*`, `fr_per_loss.*`: after the warm-up, periodic loss causes no
//!   timeout and exactly one fast retransmit per loss (Tahoe included).
//! - `pftk.*`: Reno, the variant PFTK models, under Bernoulli loss with
//!   t_RTO = 4·RTT (RED-PD eq. 2), three seeds per loss rate, ±10 %. Reno runs
//!   6–9 % below PFTK: PFTK assumes that after a loss the rest of its round is
//!   lost too, so it counts one loss indication per round, while independent
//!   losses give Reno more windows with two losses, each a timeout
//!   (`scripted.reno.two_losses.timeouts`).
//! - `bernoulli.*`: NewReno and SACK recover multiple losses per window that
//!   make Reno time out, so under Bernoulli loss they send at least Reno's rate.
//! - `droptail.*`: a 10 Mbps drop-tail bottleneck (base RTT 40 ms, BDP 50
//!   packets) instead of a loss module: link utilisation against the fluid
//!   sawtooth ([`single_flow_utilisation`]), ±3 %.
//! - `scripted.*`: scripted losses in one window: Reno times out on two,
//!   NewReno does not; a timeout during NewReno recovery sets
//!   ssthresh = FlightSize/2 (RFC 5681 eq. 4).

use super::Row;
use crate::error::Error;
use crate::metrics::models::{periodic_loss_cycle, pftk, single_flow_utilisation, square_root_law};
use crate::metrics::FlowResult;
use crate::scenario::Scenario;
use crate::sim::Simulation;
use crate::time::from_secs;

/// Base RTT of the loss-module runs, seconds.
const RTT: f64 = 0.1;
const VARIANTS: [&str; 3] = ["reno", "newreno", "sack"];
const WARMUP_LOSSES: f64 = 20.0;
const MEASURED_LOSSES: f64 = 200.0;
/// Bernoulli runs measure over 1000 loss events: with 200, the rate of one
/// seed varies by ±5 % (timeouts are rare and random); with 1000, by ±1.5 %.
const BERNOULLI_LOSSES: f64 = 1000.0;
const DELAYED_ACK: &str = ", delayed_ack = true";
/// Bytes per data packet (the flows' default).
const PACKET_BYTES: f64 = 1000.0;

/// One flow of `variant` with `tcp` extra options (", delayed_ack = true") over
/// a bottleneck of `rate` and the given qdisc (an inline TOML table).
struct Setup<'a> {
    variant: &'a str,
    tcp: String,
    rate: &'a str,
    rtt: f64,
    qdisc: String,
    seed: u64,
    warmup: f64,
    duration: f64,
}

impl Setup<'_> {
    fn scenario(&self, trace: bool) -> Result<Scenario, Error> {
        let text = format!(
            r#"
[simulation]
duration = "{duration}s"
warmup = "{warmup}s"
seed = {seed}
sample_interval = 0
throughput_bin = "{duration}s"
[topology]
type = "dumbbell"
access_rate = "1Gbps"
access_delay = 0
sink_delay = 0
bottleneck = {{ rate = "{rate}", delay = "{delay}s", qdisc = {qdisc} }}
[[flows]]
type = "tcp"
tcp = {{ variant = "{variant}", trace = {trace} {tcp} }}
"#,
            duration = self.duration,
            warmup = self.warmup,
            seed = self.seed,
            rate = self.rate,
            delay = self.rtt / 2.0,
            qdisc = self.qdisc,
            variant = self.variant,
            tcp = self.tcp,
        );
        Ok(Scenario::from_toml_str(&text)?)
    }
}

/// What one run measured over its window.
#[derive(Clone, Copy, Debug)]
struct Measurement {
    /// Sending rate, packets/s.
    rate: f64,
    loss_rate: f64,
    rtt: f64,
    /// Bottleneck utilisation.
    utilisation: f64,
    /// Counted between two instants with no loss awaiting detection (see [`quiet_instant`]).
    losses: u64,
    fast_retransmits: u64,
    timeouts: u64,
}

/// The flow's (drops, fast retransmits, timeouts) so far.
fn counts(sim: &Simulation) -> Result<[u64; 3], Error> {
    let flow: FlowResult = sim.results()?.flows.swap_remove(0);
    Ok([flow.dropped_packets, flow.fast_retransmits, flow.timeouts])
}

/// Steps `sim` from `from` over `span` seconds in steps of `step` and returns
/// the counts where drops − fast retransmits is smallest: an instant at which
/// every loss so far has been answered (a loss waits about one RTT for its
/// three duplicate ACKs). Between two such instants, losses and fast
/// retransmits match exactly iff each loss got exactly one.
fn quiet_instant(sim: &mut Simulation, from: f64, span: f64, step: f64) -> Result<[u64; 3], Error> {
    let mut best: Option<[u64; 3]> = None;
    let mut t = from;
    while t <= from + span + 1e-9 {
        sim.run_until(from_secs(t));
        let c = counts(sim)?;
        if best.is_none_or(|b| (c[0] as i64 - c[1] as i64) < (b[0] as i64 - b[1] as i64)) {
            best = Some(c);
        }
        t += step;
    }
    Ok(best.expect("at least one step"))
}

/// Runs `setup`; `cycle` (seconds between losses, roughly) sizes the search for quiet instants.
fn measure(setup: &Setup, cycle: f64) -> Result<Measurement, Error> {
    let mut sim = Simulation::build(&setup.scenario(false)?)?;
    let step = setup.rtt / 4.0;
    let span = 1.5 * cycle;
    let start = quiet_instant(&mut sim, setup.warmup, span, step)?;
    let end = quiet_instant(&mut sim, setup.duration - span, span, step)?;
    sim.run_to_end();
    let results = sim.results()?;
    let flow = &results.flows[0];
    let bottleneck = results
        .links
        .iter()
        .find(|l| l.name == "L->R")
        .expect("dumbbell bottleneck");
    Ok(Measurement {
        rate: flow.window_sent_packets as f64 / (setup.duration - setup.warmup),
        loss_rate: flow.loss_rate,
        rtt: flow.base_rtt,
        utilisation: bottleneck.utilisation,
        losses: end[0] - start[0],
        fast_retransmits: end[1] - start[1],
        timeouts: end[2] - start[2],
    })
}

/// One flow over the 1 Gbps path with `model` loss at rate `p`; `expected_rate`
/// (packets/s) sizes the run to the warm-up plus the measured loss events.
fn loss_run(
    variant: &str,
    model: &str,
    p: f64,
    seed: u64,
    tcp: String,
    expected_rate: f64,
) -> Result<Measurement, Error> {
    let losses_per_second = p * expected_rate;
    let warmup = WARMUP_LOSSES / losses_per_second;
    let measured = if model == "bernoulli" {
        BERNOULLI_LOSSES
    } else {
        MEASURED_LOSSES
    };
    let setup = Setup {
        variant,
        tcp,
        rate: "1Gbps",
        rtt: RTT,
        qdisc: format!(r#"{{ type = "loss", model = "{model}", p = {p} }}"#),
        seed,
        warmup,
        duration: warmup + measured / losses_per_second,
    };
    measure(&setup, 1.0 / losses_per_second)
}

fn percent(p: f64) -> String {
    format!("{}", p * 100.0)
}

/// After the warm-up of a periodic-loss run: no timeouts, one fast retransmit per loss.
fn push_counts(rows: &mut Vec<Row>, variant: &str, pc: &str, m: &Measurement) {
    rows.push(Row::exact(
        format!("timeouts.{variant}.p{pc}"),
        format!("{variant}, periodic loss p={pc}%: timeouts after warm-up"),
        0.0,
        m.timeouts as f64,
    ));
    rows.push(Row::exact(
        format!("fr_per_loss.{variant}.p{pc}"),
        format!(
            "{variant}, periodic loss p={pc}%: fast retransmits per loss after warm-up ({} losses)",
            m.losses
        ),
        1.0,
        m.fast_retransmits as f64 / m.losses as f64,
    ));
}

/// Periodic loss against the cycle model (±3 %), with event counts at p = 1 %.
fn periodic_rows(rows: &mut Vec<Row>) -> Result<(), Error> {
    for variant in VARIANTS {
        for p in [0.005, 0.01, 0.02] {
            let m = loss_run(
                variant,
                "periodic",
                p,
                1,
                String::new(),
                periodic_loss_cycle(RTT, p, 1.0),
            )?;
            let pc = percent(p);
            rows.push(Row::within(
                format!("cycle.{variant}.p{pc}"),
                format!("{variant}, periodic loss p={pc}%: rate vs periodic-loss cycle [pkt/s]"),
                periodic_loss_cycle(m.rtt, m.loss_rate, 1.0),
                m.rate,
                0.03,
            ));
            if p == 0.01 {
                push_counts(rows, variant, &pc, &m);
            }
        }
        let p = 0.001;
        let m = loss_run(
            variant,
            "periodic",
            p,
            1,
            DELAYED_ACK.into(),
            periodic_loss_cycle(RTT, p, 2.0),
        )?;
        rows.push(Row::within(
            format!("cycle.{variant}.delack.p0.1"),
            format!("{variant} delayed ACK, periodic loss p=0.1%: rate vs periodic-loss cycle, b=2 [pkt/s]"),
            periodic_loss_cycle(m.rtt, m.loss_rate, 2.0),
            m.rate,
            0.03,
        ));
    }
    // Tahoe has no recovery phase to model here, but its loss detection is the same.
    let m = loss_run(
        "tahoe",
        "periodic",
        0.01,
        1,
        String::new(),
        periodic_loss_cycle(RTT, 0.01, 1.0),
    )?;
    push_counts(rows, "tahoe", "1", &m);
    for (variant, p) in [
        ("reno", 0.001),
        ("newreno", 0.001),
        ("sack", 0.001),
        ("newreno", 0.0005),
    ] {
        let m = loss_run(variant, "periodic", p, 1, String::new(), square_root_law(RTT, p, 1.0))?;
        let pc = percent(p);
        rows.push(Row::within(
            format!("sqrt.{variant}.p{pc}"),
            format!("{variant}, periodic loss p={pc}%: rate vs square-root law [pkt/s]"),
            square_root_law(m.rtt, m.loss_rate, 1.0),
            m.rate,
            0.05,
        ));
    }
    Ok(())
}

/// Bernoulli loss: Reno against PFTK per seed; NewReno and SACK at least Reno's rate.
fn bernoulli_rows(rows: &mut Vec<Row>) -> Result<(), Error> {
    let rto = 4.0 * RTT;
    let tcp = || format!(", min_rto = \"{rto}s\"");
    for p in [0.01, 0.03, 0.05] {
        let pc = percent(p);
        let mut reno = Vec::new();
        for seed in [1, 2, 3] {
            let m = loss_run("reno", "bernoulli", p, seed, tcp(), pftk(RTT, p, rto, 1.0))?;
            rows.push(Row::within(
                format!("pftk.reno.p{pc}.seed{seed}"),
                format!("reno, Bernoulli loss p={pc}% seed {seed}: rate vs PFTK, t_RTO=4·RTT [pkt/s]"),
                pftk(m.rtt, m.loss_rate, 4.0 * m.rtt, 1.0),
                m.rate,
                0.10,
            ));
            reno.push(m.rate);
        }
        if p == 0.03 {
            let reno_mean = reno.iter().sum::<f64>() / reno.len() as f64;
            for variant in ["newreno", "sack"] {
                let mut ours = 0.0;
                for seed in [1, 2, 3] {
                    ours += loss_run(variant, "bernoulli", p, seed, tcp(), pftk(RTT, p, rto, 1.0))?.rate / 3.0;
                }
                rows.push(Row::at_least(
                    format!("bernoulli.{variant}_over_reno.p{pc}"),
                    format!("{variant} / reno rate, Bernoulli loss p={pc}%, mean of 3 seeds"),
                    1.0,
                    ours / reno_mean,
                    1.0,
                ));
            }
        }
    }
    Ok(())
}

/// A 10 Mbps drop-tail bottleneck, base RTT 40 ms (BDP 50 packets), buffer B packets.
fn droptail_rows(rows: &mut Vec<Row>) -> Result<(), Error> {
    let (rtt, rate_bps) = (0.04, 10e6);
    let bdp = rate_bps * rtt / (8.0 * PACKET_BYTES);
    for (variant, buffer) in [
        ("reno", 50),
        ("newreno", 50),
        ("sack", 50),
        ("newreno", 25),
        ("newreno", 12),
    ] {
        let setup = Setup {
            variant,
            tcp: String::new(),
            rate: "10Mbps",
            rtt,
            qdisc: format!(r#"{{ type = "droptail", limit = {buffer} }}"#),
            seed: 1,
            warmup: 20.0,
            duration: 120.0,
        };
        let m = measure(&setup, (bdp + buffer as f64) / 2.0 * rtt)?;
        rows.push(Row::within(
            format!("droptail.{variant}.b{buffer}"),
            format!("{variant}, drop-tail {buffer} packets, BDP {bdp} packets: bottleneck utilisation"),
            single_flow_utilisation(bdp, buffer as f64),
            m.utilisation,
            0.03,
        ));
    }
    Ok(())
}

/// One flow with receiver window `window` over a 40 ms, 1 Gbps path whose
/// bottleneck drops the first transmissions of `seqs`; cwnd and ssthresh traced.
fn scripted(variant: &str, window: u64, seqs: &[u64]) -> Result<crate::Results, Error> {
    let setup = Setup {
        variant,
        tcp: format!(", window = {window}"),
        rate: "1Gbps",
        rtt: 0.04,
        qdisc: format!(r#"{{ type = "loss", model = "scripted", flow = 0, seqs = {seqs:?} }}"#),
        seed: 1,
        warmup: 0.0,
        duration: 4.0,
    };
    crate::sim::run(&setup.scenario(true)?)
}

/// Scripted losses within one window.
fn scripted_rows(rows: &mut Vec<Row>) -> Result<(), Error> {
    let two = [100, 103];
    for (variant, timeouts) in [("reno", 1.0), ("newreno", 0.0)] {
        let flow = scripted(variant, 20, &two)?.flows.swap_remove(0);
        rows.push(Row::exact(
            format!("scripted.{variant}.two_losses.timeouts"),
            format!("{variant}, window 20, packets 100 and 103 lost: timeouts"),
            timeouts,
            flow.timeouts as f64,
        ));
    }
    let flow = scripted("newreno", 20, &two)?.flows.swap_remove(0);
    rows.push(Row::exact(
        "scripted.newreno.two_losses.retransmissions".into(),
        "newreno, window 20, packets 100 and 103 lost: retransmitted packets (one fast retransmit, one partial ACK)"
            .into(),
        2.0,
        flow.retransmitted_packets as f64,
    ));
    // Eight losses in a window of 40: NewReno repairs one per RTT, and its
    // retransmit timer, restarted only on the first partial ACK (RFC 6582 §4,
    // "Impatient"), fires 200 ms later, mid-recovery. The receiver window
    // bounds the flight, so FlightSize = 40 when it fires.
    let (window, seqs) = (40, [200, 203, 206, 209, 212, 215, 218, 221]);
    let results = scripted("newreno", window, &seqs)?;
    let first_timeout = results
        .traces
        .iter()
        .find(|t| t.var == "cwnd" && t.value == 1.0 && t.time > 0.0)
        .map(|t| t.time);
    let ssthresh = first_timeout.and_then(|at| {
        results
            .traces
            .iter()
            .rev()
            .find(|t| t.var == "ssthresh" && t.time <= at)
            .map(|t| t.value)
    });
    // RFC 5681 eq. 4: FlightSize/2 (the window caps FlightSize at `window`), not half of the
    // already-halved ssthresh (TCP review defect #1).
    rows.push(Row::exact(
        "scripted.newreno.timeout_in_recovery.ssthresh".into(),
        format!("newreno, window {window}, 8 losses in it: ssthresh after the timeout in recovery [packets]"),
        window as f64 / 2.0,
        ssthresh.unwrap_or(f64::NAN),
    ));
    Ok(())
}

/// The whole suite, one row per check.
pub fn run() -> Result<Vec<Row>, Error> {
    let mut rows = Vec::new();
    periodic_rows(&mut rows)?;
    bernoulli_rows(&mut rows)?;
    droptail_rows(&mut rows)?;
    scripted_rows(&mut rows)?;
    Ok(rows)
}
