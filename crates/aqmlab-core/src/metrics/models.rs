//! Closed-form TCP throughput models (RED-PD §4.1), in packets per second.
//!
//! `rtt` and `t_rto` in seconds, `p` the packet loss probability, `b` the
//! number of packets acknowledged per ACK (1, or 2 with delayed ACKs).

/// Square-root law (RED-PD eq. 1, Mathis et al.): sqrt(3/(2b)) / (RTT·sqrt(p));
/// with b = 1 this is RED-PD's sqrt(1.5) / (RTT·sqrt(p)).
pub fn square_root_law(rtt: f64, p: f64, b: f64) -> f64 {
    (1.5 / b).sqrt() / (rtt * p.sqrt())
}

/// The square-root law's sawtooth with one fast-recovery round trip added per
/// loss, for periodic loss and one ACK per packet. The window grows from W/2 to
/// W in W/2 round trips (3W²/8 packets), then spends one round trip recovering
/// at W/2 without growing (W/2 more packets): 3W²/8 + W/2 = 1/p packets per
/// cycle of (W/2 + 1)·RTT. This is what Reno, NewReno and SACK senders do; the
/// plain law omits the recovery round, which matters when W is small (high p).
pub fn square_root_law_with_recovery(rtt: f64, p: f64) -> f64 {
    // Positive root of 3W²/8 + W/2 − 1/p = 0.
    let (a, b, c) = (3.0 / 8.0, 0.5, -1.0 / p);
    let w = (-b + (b * b - 4.0 * a * c).sqrt()) / (2.0 * a);
    (1.0 / p) / ((w / 2.0 + 1.0) * rtt)
}

/// PFTK (Padhye et al. 1998, RED-PD eq. 2 with b = 1):
/// 1 / (RTT·sqrt(2bp/3) + t_RTO·min(1, 3·sqrt(3bp/8))·p·(1 + 32p²)).
/// RED-PD approximates t_RTO by 4·RTT. The min(1, ·) of PFTK binds only above p ≈ 0.3.
pub fn pftk(rtt: f64, p: f64, t_rto: f64, b: f64) -> f64 {
    let timeouts = t_rto * (3.0 * (3.0 * b * p / 8.0).sqrt()).min(1.0) * p * (1.0 + 32.0 * p * p);
    1.0 / (rtt * (2.0 * b * p / 3.0).sqrt() + timeouts)
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
    fn recovery_round_by_hand() {
        // p = 2 %: 3W²/8 + W/2 = 50 -> W = 10.8955; cycle 6.4478 RTT -> 7.7546 packets per RTT.
        assert!(close(square_root_law_with_recovery(0.1, 0.02), 77.546));
        // p = 0.5 %: W = 22.4405; cycle 12.2203 RTT -> 16.366 packets per RTT, 0.945 of the plain law.
        assert!(close(square_root_law_with_recovery(0.1, 0.005), 163.66));
        // For small p the extra round trip vanishes relative to W/2: the plain law is the limit.
        assert!((square_root_law_with_recovery(0.1, 1e-6) / square_root_law(0.1, 1e-6, 1.0) - 1.0).abs() < 2e-3);
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
}
