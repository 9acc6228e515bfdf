//! `tcp = { profile = "ns2" }` against the default `"rfc"` profile, end to end:
//! NewReno's Slow-but-Steady timer (review defect #2), ns-2's tick-counted RTO,
//! and the ssthresh a timeout during recovery leaves (defect #1).

mod common;

use aqmlab_core::Results;
use common::{one_flow_path, scripted_loss, trace};

/// One flow over a 1 Gbps path with one-way delay `delay` (s) whose bottleneck
/// drops the first transmissions of `seqs`.
fn run(tcp: &str, delay: f64, seqs: &[u64]) -> Results {
    let qdisc = if seqs.is_empty() {
        r#"{ type = "droptail" }"#.to_string()
    } else {
        scripted_loss(seqs)
    };
    one_flow_path(
        "duration = \"4s\"",
        delay,
        &qdisc,
        &format!("type = \"tcp\"\ntcp = {{ trace = true, {tcp} }}"),
    )
}

/// Review defect #2: window 40, RTT 40 ms, six losses in one window (200, 203, …, 215).
const SIX_LOSSES: [u64; 6] = [200, 203, 206, 209, 212, 215];

#[test]
fn six_losses_in_a_window_time_out_under_rfc_but_not_under_slow_but_steady_ns2() {
    // rfc: RFC 6582 "Impatient" — only the first partial ACK restarts the 200 ms timer,
    // which expires before the sixth retransmission is acknowledged.
    let rfc = run(r#"variant = "newreno", window = 40"#, 0.02, &SIX_LOSSES);
    let f = &rfc.flows[0];
    assert_eq!((f.timeouts, f.fast_retransmits), (1, 1), "{f:?}");
    // The timeout came during recovery with 40 packets outstanding: ssthresh = FlightSize/2 = 20
    // (RFC 5681 eq. 4), not half the already-halved 20 (= 10) as before.
    let ssthresh = trace(&rfc, "ssthresh");
    let after_timeout = ssthresh.last().unwrap().1;
    assert_eq!(after_timeout, 20.0, "{ssthresh:?}");

    // ns2: tcp-newreno.cc restarts the timer on every partial ACK (newreno_changes1_ 0):
    // one retransmission per RTT, no timeout.
    let ns2 = run(
        r#"profile = "ns2", variant = "newreno", window = 40"#,
        0.02,
        &SIX_LOSSES,
    );
    let f = &ns2.flows[0];
    assert_eq!(
        (f.timeouts, f.fast_retransmits, f.retransmitted_packets),
        (0, 1, 6),
        "{f:?}"
    );
    // ssthresh was halved once, from window()/2 = 20.
    let ssthresh = trace(&ns2, "ssthresh");
    assert_eq!(
        ssthresh.iter().map(|s| s.1).collect::<Vec<_>>(),
        vec![40.0, 20.0],
        "{ssthresh:?}"
    );
}

#[test]
fn ns2_rto_is_counted_in_100ms_ticks_by_hand() {
    // RTT 200 ms + 24 µs of serialization: every timed packet crosses 2 tick boundaries
    // (3 only if a boundary fell inside those 24 µs: 0.024 % per sample).
    let r = run(r#"profile = "ns2""#, 0.1, &[]);
    let rto = trace(&r, "rto");
    // rtxcur_init_ 6 s; first sample 2 ticks: srtt·8 = 16, rttvar·4 = 4, RTO = (4·8 + 16) >> 3 = 6 ticks;
    // second: delta 0, rttvar·4 = 4 - (4 >> 2) = 3, RTO = (3·8 + 16) >> 3 = 5 ticks, and 3 - (3 >> 2) = 3 stays.
    let values: Vec<f64> = rto.iter().map(|s| s.1).collect();
    assert_eq!(values.len(), 3, "{rto:?}");
    for (got, want) in values.iter().zip([6.0, 0.6, 0.5]) {
        assert!((got - want).abs() < 1e-9, "{rto:?}");
    }
    // One sample per round trip: the first packet's ACK (t = 0.2 s), then the first packet
    // sent after it (t = 0.4 s), although two ACKs arrive in that round.
    assert!(
        (rto[1].0 - 0.2).abs() < 1e-3 && (rto[2].0 - 0.4).abs() < 1e-3,
        "{rto:?}"
    );
    // RFC 6298 from every ACK, exact: SRTT + max(G, 4·RTTVAR) decays towards 0.21 s.
    let r = run(r#"variant = "newreno""#, 0.1, &[]);
    let last = trace(&r, "rto").last().unwrap().1;
    assert!((0.2..0.22).contains(&last), "{last}");
}

#[test]
fn ns2_congestion_avoidance_grows_less_than_a_packet_per_rtt() {
    // From ssthresh 10, no loss, 2 s at RTT 200 ms (10 rounds): ns-2's cwnd_ += 1/cwnd_
    // grows floor(w)/w per round; the rfc counter grows exactly 1 per round.
    let settings = "initial_ssthresh = 10, initial_window = 10, window = 100";
    let cwnd_at = |r: &Results, t: f64| trace(r, "cwnd").iter().take_while(|s| s.0 <= t).last().unwrap().1;
    let ns2 = run(&format!(r#"profile = "ns2", {settings}"#), 0.1, &[]);
    let rfc = run(settings, 0.1, &[]);
    // After the first round of 10 ACKs: 10 + Σ 1/cwnd ≈ 10.95 (ns-2) vs 11 (rfc).
    let mut w: f64 = 10.0;
    for _ in 0..10 {
        w += 1.0 / w;
    }
    assert!((cwnd_at(&ns2, 0.25) - w).abs() < 1e-9, "{}", cwnd_at(&ns2, 0.25));
    assert_eq!(cwnd_at(&rfc, 0.25), 11.0);
    // After ten rounds the rfc window is 20; ns-2's is smaller by about one packet.
    let (n, f) = (cwnd_at(&ns2, 2.05), cwnd_at(&rfc, 2.05));
    assert_eq!(f, 20.0);
    assert!(n < 19.5 && n > 18.0, "ns2 {n}, rfc {f}");
}
