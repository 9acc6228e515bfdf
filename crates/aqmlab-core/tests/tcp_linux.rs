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
