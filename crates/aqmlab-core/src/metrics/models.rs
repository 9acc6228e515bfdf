//! Closed-form TCP models (RED-PD §4.1 and the sources named per function),
//! rates in packets per second.
//!
//! `rtt` and `t_rto` in seconds, `p` the packet loss probability, `b` the
//! number of packets acknowledged per ACK (1, or 2 with delayed ACKs).

/// Square-root law (RED-PD eq. 1, Mathis et al. 1997): sqrt(3/(2b)) / (RTT·sqrt(p));
/// with b = 1 this is RED-PD's sqrt(1.5) / (RTT·sqrt(p)).
pub fn square_root_law(rtt: f64, p: f64, b: f64) -> f64 {
    (1.5 / b).sqrt() / (rtt * p.sqrt())
}

/// The periodic-loss cycle of an ACK-clocked Reno/NewReno/SACK sender, round
/// by round (TCP review Q3; the square-root law is its limit for small p).
/// One packet in 1/p is lost; the window W at the loss is found from the
/// packets per cycle:
/// - growth: windows W/2 … W−1, each for b rounds (one packet per b RTTs):
///   b·(3W²/8 − W/4) packets in b·W/2 rounds;
/// - the loss round: the full window W goes out after the lost packet,
///   because the sender learns of the loss one RTT later;
/// - the recovery round at W/2 without growth.
///
/// So 1/p = b·(3W²/8 − W/4) + 3W/2 packets (3W²/8 + 5W/4 for b = 1) in
/// b·W/2 + 2 rounds, and the rate is packets per cycle / (rounds·RTT).
pub fn periodic_loss_cycle(rtt: f64, p: f64, b: f64) -> f64 {
    // Positive root of (3b/8)·W² + (3/2 − b/4)·W − 1/p = 0.
    let (qa, qb, qc) = (3.0 * b / 8.0, 1.5 - b / 4.0, -1.0 / p);
    let w = (-qb + (qb * qb - 4.0 * qa * qc).sqrt()) / (2.0 * qa);
    (1.0 / p) / ((b * w / 2.0 + 2.0) * rtt)
}

/// PFTK (Padhye et al. 1998, RED-PD eq. 2 with b = 1):
/// 1 / (RTT·sqrt(2bp/3) + t_RTO·min(1, 3·sqrt(3bp/8))·p·(1 + 32p²)).
/// RED-PD approximates t_RTO by 4·RTT. The min(1, ·) of PFTK binds only above p ≈ 0.3.
pub fn pftk(rtt: f64, p: f64, t_rto: f64, b: f64) -> f64 {
    let timeouts = t_rto * (3.0 * (3.0 * b * p / 8.0).sqrt()).min(1.0) * p * (1.0 + 32.0 * p * p);
    1.0 / (rtt * (2.0 * b * p / 3.0).sqrt() + timeouts)
}

/// Link utilisation of one long-lived Reno-style flow through a drop-tail
/// buffer of `buffer` packets on a path whose bandwidth-delay product is `bdp`
/// packets (fluid sawtooth, Lakshman & Madhow 1997 §3; Appenzeller et al. 2004 §2).
/// The window oscillates between (P+B)/2 and P+B: below P it sends W/RTT
/// and grows one packet per RTT, above P the link is busy. Integrating both
/// phases gives 3(P+B)² / (4(P² + PB + B²)); with B ≥ P the link never idles.
pub fn single_flow_utilisation(bdp: f64, buffer: f64) -> f64 {
    if buffer >= bdp {
        return 1.0;
    }
    let (p, b) = (bdp, buffer);
    3.0 * (p + b).powi(2) / (4.0 * (p * p + p * b + b * b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-3 * b
    }

    #[test]
    fn square_root_law_by_hand() {
        // RTT 40 ms, p = 1 %: 1.224745 / (0.04 · 0.1) = 306.19 packets/s.
        assert!(close(square_root_law(0.04, 0.01, 1.0), 306.19));
        // RTT 100 ms, p = 2 %: 1.224745 / (0.1 · 0.141421) = 86.603.
        assert!(close(square_root_law(0.1, 0.02, 1.0), 86.603));
        // Delayed ACKs (b = 2) scale the rate by 1/sqrt(2).
        assert!(close(
            square_root_law(0.1, 0.02, 2.0) / square_root_law(0.1, 0.02, 1.0),
            std::f64::consts::FRAC_1_SQRT_2
        ));
    }

    #[test]
    fn periodic_loss_cycle_by_hand() {
        // p = 2 %: 3W²/8 + 5W/4 = 50 -> W = 10 exactly; 50 packets in 7 RTT (the
        // review's trace: windows 10 | 5 | 5 6 7 8 9) -> 71.429 packets/s, 0.825 of the law.
        assert!(close(periodic_loss_cycle(0.1, 0.02, 1.0), 71.429));
        assert!(close(
            periodic_loss_cycle(0.1, 0.02, 1.0) / square_root_law(0.1, 0.02, 1.0),
            0.8248
        ));
        // p = 0.5 %: W = 21.4874 from 0.375W² + 1.25W = 200; 12.7437 RTT -> 156.94, 0.906 of the law.
        assert!(close(periodic_loss_cycle(0.1, 0.005, 1.0), 156.94));
        // Delayed ACKs, p = 1 %: 0.75W² + W = 100 -> W = 10.8996; 12.8996 RTT -> 77.522.
        assert!(close(periodic_loss_cycle(0.1, 0.01, 2.0), 77.522));
        // For small p the two extra rounds vanish relative to W/2: the square-root law is the limit.
        for b in [1.0, 2.0] {
            let ratio = periodic_loss_cycle(0.1, 1e-7, b) / square_root_law(0.1, 1e-7, b);
            assert!((ratio - 1.0).abs() < 2e-3, "b = {b}: {ratio}");
        }
    }

    #[test]
    fn pftk_by_hand() {
        // RTT 40 ms, p = 1 %, t_RTO = 160 ms: 0.04·sqrt(0.02/3) = 0.0032660;
        // 0.16 · 3·sqrt(0.00375) · 0.01 · 1.0032 = 0.00029488; 1 / 0.0035609 = 280.83.
        assert!(close(pftk(0.04, 0.01, 0.16, 1.0), 280.83));
        // p = 5 %: 0.0073030 + 0.16 · 0.410792 · 0.05 · 1.08 = 0.0108522 -> 92.147,
        // i.e. 0.673 of the square-root law (136.93), as RED-PD §4.1 notes for higher loss.
        assert!(close(pftk(0.04, 0.05, 0.16, 1.0), 92.147));
        assert!(close(
            pftk(0.04, 0.05, 0.16, 1.0) / square_root_law(0.04, 0.05, 1.0),
            0.6730
        ));
        // Delayed ACKs, RTT 100 ms, p = 1 %, t_RTO = 400 ms: 0.0115470 + 0.4 · 0.259808 · 0.01 · 1.0032 -> 79.431.
        assert!(close(pftk(0.1, 0.01, 0.4, 2.0), 79.431));
        // p = 50 %: the timeout factor is capped at 1: 0.057735 + 0.4 · 0.5 · 9 = 1.857735 -> 0.53829.
        assert!(close(pftk(0.1, 0.5, 0.4, 1.0), 0.53829));
    }

    #[test]
    fn single_flow_utilisation_by_hand() {
        // No buffer: the classic 3/4; B = P/4: 3·1.5625 / (4·1.3125) = 0.89286; B ≥ P: 1.
        assert!(close(single_flow_utilisation(100.0, 0.0), 0.75));
        assert!(close(single_flow_utilisation(100.0, 25.0), 0.892857));
        assert_eq!(single_flow_utilisation(100.0, 100.0), 1.0);
        assert_eq!(single_flow_utilisation(100.0, 250.0), 1.0);
    }
}
