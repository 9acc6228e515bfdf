//! TFRC end to end (transport/tfrc.rs, RFC 5348): the sending rate against the
//! throughput equation under periodic loss, the loss event rate estimate, the
//! response to a step in the loss rate, and sharing a RED link with TCP.

mod common;

use aqmlab_core::transport::tfrc::equation_rate;
use aqmlab_core::Results;
use common::{one_flow_path, scripted_loss, simulate, trace};

/// One TFRC flow over a 100 ms path of 1 Gb/s links (no queueing) whose
/// bottleneck runs `qdisc`; drops logged.
fn lossy_path(qdisc: &str, duration: f64, warmup: f64) -> Results {
    one_flow_path(
        &format!("duration = \"{duration}s\"\nwarmup = \"{warmup}s\""),
        0.05,
        qdisc,
        "type = \"tfrc\"\ntrace = true",
    )
}

fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = values.fold((0.0, 0), |(s, n), v| (s + v, n + 1));
    sum / n as f64
}

/// Periodic loss (`model = "periodic"`: every 1/p-th packet) makes every loss
/// interval exactly 1/p packets, 9, 4.8 and 2.5 RTTs apart at these rates:
/// one loss event each. So the receiver's p must be the configured p, and the
/// sender's rate the equation's at p and the path's 100 ms.
#[test]
fn under_periodic_loss_the_rate_is_the_equation_s_and_p_is_the_loss_rate() {
    let (duration, warmup) = (200.0, 50.0);
    for p in [0.01, 0.02, 0.05] {
        let r = lossy_path(
            &format!(r#"{{ type = "loss", model = "periodic", p = {p} }}"#),
            duration,
            warmup,
        );
        let flow = &r.flows[0];
        let sent = flow.window_sent_packets as f64 * 1000.0 / (duration - warmup);
        let model = equation_rate(1000.0, flow.base_rtt, p);
        // Measured: 0.9997, 0.9998, 1.0006 of the equation.
        assert!((sent / model - 1.0).abs() < 0.15, "p {p}: {sent:.0} B/s vs {model:.0}");
        let estimate = mean(trace(&r, "p").into_iter().filter(|&(t, _)| t >= warmup).map(|(_, v)| v));
        // Measured: 1.000, 1.000, 0.997 of p (the open interval, up to 1/p + 3
        // packets long before a loss is declared, raises the mean briefly).
        assert!((estimate / p - 1.0).abs() < 0.10, "p {p}: estimate {estimate:.5}");
        // §6.2: feedback once per RTT (2000 in 200 s), and at most one more per
        // loss event: at once when it raises p, which happens here only when a
        // feedback caught the open interval raising the mean just before.
        // Measured: 2024, 2054, 2212 (bounds 2000 + 227, + 295, + 371).
        let feedback = (r.summary.packets_sent - flow.sent_packets) as f64;
        let (per_rtt, events) = (duration / flow.base_rtt, flow.dropped_packets as f64);
        assert!(
            (0.98 * per_rtt..=per_rtt + events).contains(&feedback),
            "p {p}: {feedback} feedback, {events} loss events"
        );
    }
}

/// §4.2: slow start from W_init/R (RFC 3390: 4000 B for 1000-byte packets,
/// over R = 100 ms: 320 kb/s), at most doubling per feedback (one per RTT);
/// §6.3.1: after the first loss X is set from the receive rate, which TFRC
/// takes as "half of the sending rate when the loss occurred".
#[test]
fn slow_start_doubles_from_w_init_and_the_first_loss_halves_the_rate() {
    let r = lossy_path(&scripted_loss(&[3000]), 4.0, 0.0);
    // The first feedback that reports the loss.
    let reported = trace(&r, "p").iter().find(|(_, p)| *p > 0.0).expect("a loss").0;
    let x = trace(&r, "x_bps");
    let split = x.iter().position(|(t, _)| *t >= reported).expect("X after the loss");
    let (before, after) = x.split_at(split);
    assert!((before[0].1 / 320_000.0 - 1.0).abs() < 0.01, "{:?}", before[0]);
    for pair in before.windows(2) {
        assert!(pair[1].1 <= 2.0 * pair[0].1 * 1.001, "{pair:?}");
    }
    // Measured: 0.32 to 130 Mb/s in 17 RTTs, doubling every two RTTs: 2X_recv
    // lags X by one RTT (0.64, 0.96, 2.08, 4.0, 8.2, 16.2, 32.5, 64.9 Mb/s).
    for pair in before.windows(3).skip(2) {
        assert!(pair[2].1 >= 1.5 * pair[0].1, "{pair:?}");
    }
    // Measured: 70.9 Mb/s after 129.9, 0.546 of it.
    let at_loss = before.last().unwrap().1;
    let ratio = after[0].1 / at_loss;
    assert!((0.4..=0.6).contains(&ratio), "{ratio}: {at_loss} then {:?}", after[0]);
}

/// A step in the loss rate at packet 4000 (after 33 s at 1 %): losses every
/// 100th packet, then every `every`-th. Returns the RTTs from the last loss
/// at 1 % until X is half its mean over the 10 s before.
fn halving_time(every: u64) -> f64 {
    let boundary = 4000;
    let mut seqs: Vec<u64> = (1..=boundary / 100).map(|k| k * 100 - 1).collect();
    seqs.extend((1..=400).map(|k| boundary + k * every - 1));
    let r = lossy_path(&scripted_loss(&seqs), 80.0, 0.0);
    let step = r.drop_log[(boundary / 100 - 1) as usize].time;
    let x = trace(&r, "x_bps");
    let before = mean(
        x.iter()
            .filter(|(t, _)| *t > step - 10.0 && *t <= step)
            .map(|(_, v)| *v),
    );
    let halved = x
        .iter()
        .find(|(t, v)| *t > step && *v <= before / 2.0)
        .expect("X halves")
        .0;
    (halved - step) / r.flows[0].base_rtt
}

/// Persistent congestion, a loss event every RTT (here a loss every 4th
/// packet at 6–11 packets per RTT): 4 to 8 RTTs to halve, the figure TFRC's
/// authors give for persistent congestion (issue 12 cites RFC 5348 §1).
/// By §5.4's weights the fifth RTT's interval brings X below half (I_mean
/// 85, 70, 55, 40, 27 packets), reported about 1.5 RTTs later. Measured: 7.0 RTTs.
#[test]
fn persistent_congestion_halves_the_rate_in_4_to_8_rtts() {
    let rtts = halving_time(4);
    assert!((4.0..=8.0).contains(&rtts), "{rtts} RTTs");
}

/// From 1 % to 4 % (a loss every 25th packet): at 11 packets per RTT that is
/// a loss event only every 2.2–4.3 RTTs, so the 4–8 RTTs of persistent
/// congestion do not apply. By §5.4's weights, I_mean goes 87.5, 75, 62.5,
/// 50, 40, 32.5 packets as 25-packet intervals replace the 100-packet ones,
/// and the equation at R = 100 ms first falls below half at the sixth: that
/// loss is sent 17.6 RTTs after the step (the sum of 25 packets over X·R at
/// each step), and declared and reported 1–3 RTTs later. Measured: 18.3 RTTs.
#[test]
fn a_step_from_1_to_4_percent_halves_the_rate_at_the_sixth_short_interval() {
    let rtts = halving_time(25);
    assert!((17.6..=20.6).contains(&rtts), "{rtts} RTTs");
}

/// One TFRC and one TCP (NewReno) with the same 60 ms RTT on a 10 Mb/s RED
/// link share within a factor of 2 (issue 12's bound: TFRC's known mild bias
/// against or for TCP). Measured TFRC/TCP goodput: 0.880, 0.867, 0.820.
#[test]
fn tfrc_and_tcp_with_equal_rtts_share_a_red_link_within_a_factor_of_2() {
    for seed in 1..=3 {
        let r = simulate(&format!(
            r#"
[simulation]
duration = "100s"
warmup = "20s"
seed = {seed}
sample_interval = 0
[topology]
type = "dumbbell"
access_rate = "100Mbps"
access_delay = "10ms"
sink_delay = "10ms"
bottleneck = {{ rate = "10Mbps", delay = "10ms", qdisc = {{ type = "red", limit = 100, gentle = true }} }}
[[flows]]
type = "tfrc"
start_jitter = "1s"
[[flows]]
type = "tcp"
start_jitter = "1s"
"#
        ));
        let ratio = r.flows[0].goodput_bps / r.flows[1].goodput_bps;
        assert!((0.5..=2.0).contains(&ratio), "seed {seed}: TFRC/TCP {ratio:.3}");
    }
}

#[test]
fn tfrc_errors_name_the_field() {
    let flow = |extra: &str| {
        format!(
            "[simulation]\nduration = \"10s\"\n[topology]\ntype = \"dumbbell\"\nbottleneck = {{ rate = \"10Mbps\", delay = \"10ms\" }}\n[[flows]]\ntype = \"tfrc\"\n{extra}\n"
        )
    };
    let cases = [
        ("initial_rate = 0", "flows[0].initial_rate: must be > 0, got 0"),
        ("rate = \"1Mbps\"", "flows[0].rate: unknown field"),
        ("history_discounting = 1", "flows[0].history_discounting: invalid type"),
        ("rto_tick = 0", "flows[0].rto_tick: must be > 0, got 0"),
    ];
    for (extra, expected) in cases {
        let err = common::error_of(&flow(extra));
        assert!(err.starts_with(expected), "{extra}: {err}");
    }
}
