//! The linux profile end to end: CUBIC's window against RFC 9438's closed form after one loss.

mod common;

use common::{one_flow_path, scripted_loss, trace};

/// A traced variable: (time, value).
type Trace = Vec<(f64, f64)>;

/// RFC 9438 §5.1: C = 0.4 and β_cubic = 0.7 (Linux: 410/1024 and 717/1024).
const C: f64 = 0.4;
const BETA: f64 = 0.7;
const RTT: f64 = 0.1;

/// One CUBIC flow over a 100 ms path of 1 Gb/s (no queue: the RTT stays 100 ms) whose
/// packet 1000 is lost once, in slow start; its cwnd and ssthresh traces.
fn cubic_after_one_loss() -> (Trace, Trace) {
    let r = one_flow_path(
        "duration = \"30s\"",
        0.05,
        &scripted_loss(&[1000]),
        r#"type = "tcp"
tcp = { profile = "linux", cc = "cubic", window = 5000, trace = true }"#,
    );
    (trace(&r, "cwnd"), trace(&r, "ssthresh"))
}

/// W(t) = C (t − K)³ + W_max with K = ∛(W_max (1 − β)/C) (RFC 9438 eqs. 1–2).
fn w_cubic(t: f64, w_max: f64) -> f64 {
    let k = (w_max * (1.0 - BETA) / C).cbrt();
    C * (t - k).powi(3) + w_max
}

#[test]
fn cubic_window_follows_the_closed_form_after_one_loss() {
    let (cwnd, ssthresh) = cubic_after_one_loss();
    // The reduction: the first finite ssthresh; W_max is cwnd just before it.
    let &(loss_at, cut) = ssthresh.iter().find(|(_, s)| *s < 5000.0).expect("a reduction");
    let w_max = cwnd.iter().take_while(|(t, _)| *t < loss_at).last().unwrap().1;
    assert_eq!(cut, (w_max * 717.0 / 1024.0).floor(), "ssthresh = W_max·β");
    // The epoch starts when recovery ends: the fast retransmission's round trip after the
    // loss was detected (the path never queues).
    let t0 = loss_at + RTT;
    let k = (w_max * (1.0 - BETA) / C).cbrt();
    assert!(k > 8.0 && t0 + 2.0 * k < 30.0, "K = {k:.2} s fits the run");
    // From one RTT into the epoch to 2K (beyond W_max, into the convex region), within 2 %
    // (0.7 % measured: the window grows in the bursts the 1 Gb/s link makes of each RTT's
    // packets, reaching W one RTT ahead at each).
    let mut worst: f64 = 0.0;
    let mut checked = 0;
    for &(t, w) in cwnd.iter().filter(|(t, _)| *t > t0 + 0.1 && *t < t0 + 2.0 * k) {
        let model = w_cubic(t - t0, w_max);
        worst = worst.max((w - model).abs() / model);
        checked += 1;
    }
    assert!(checked > 500, "{checked} samples");
    assert!(
        worst < 0.02,
        "worst relative error {worst:.4} (W_max {w_max}, K {k:.2} s)"
    );
}

/// One BBR flow alone on a 10 Mbit/s link of 40 ms RTT (BDP 50 packets of 1000 bytes) with a
/// drop-tail buffer of 2 BDP; 30 s measured from 5 s, the queue sampled every 10 ms.
fn bbr_alone(seed: u64) -> aqmlab_core::Results {
    common::simulate(&format!(
        r#"
[simulation]
duration = "30s"
warmup = "5s"
seed = {seed}
sample_interval = "10ms"
[topology]
type = "dumbbell"
access_rate = "1Gbps"
access_delay = 0
sink_delay = 0
bottleneck = {{ rate = "10Mbps", delay = "20ms", qdisc = {{ type = "droptail", limit = 100 }} }}
[[flows]]
type = "tcp"
tcp = {{ profile = "linux", cc = "bbr" }}
"#
    ))
}

#[test]
fn one_bbr_flow_fills_a_10_mbit_link_with_a_queue_near_zero() {
    for seed in 1..=3 {
        let r = bbr_alone(seed);
        let goodput = r.flows[0].goodput_bps;
        // Measured 98.2 % (seeds 1–3): PROBE_RTT's 200 ms at 4 packets per 10 s costs ~2 %.
        assert!(goodput >= 0.95 * 10e6, "seed {seed}: {goodput} b/s");
        // The standing queue: the least queue in each second. Measured 0–3 packets (≤ 2.4 ms,
        // 6 % of the BDP: the bandwidth filter's max over 10 rounds sits a little above the
        // link's rate); the 5/4 phase adds up to a quarter BDP for one min_rtt in 8.
        let bottleneck: Vec<_> = r.queue.iter().filter(|q| q.link == 0 && q.time >= 5.0).collect();
        for second in 5..30 {
            let least = bottleneck
                .iter()
                .filter(|q| q.time >= f64::from(second) && q.time < f64::from(second + 1))
                .map(|q| q.packets)
                .min()
                .unwrap();
            assert!(least <= 5, "seed {seed}: {least} packets standing in second {second}");
        }
    }
}
