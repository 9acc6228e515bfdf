//! Closed-form bounds the papers compare simulations against.

/// BRED's heuristic upper bound on the throughput of one non-conforming CBR
/// flow, as a fraction of the link rate (Anjum & Tassiulas eq. 14, which
/// prints it in percent: η_cu = 100α / (α·n_c + 0.5·β·n_t)).
///
/// Each of the `n_c` non-conforming CBR flows holds W_m = α·l2 packets, each of
/// the `n_t` conforming flows (TCP or CBR within its share) 0.5·β·l2 on
/// average, and a FIFO serves flows in proportion to their buffer occupancy.
pub fn bred_cbr_bound(alpha: f64, beta: f64, n_c: u32, n_t: u32) -> f64 {
    alpha / (alpha * n_c as f64 + 0.5 * beta * n_t as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bred_cbr_bound_reproduces_the_papers_printed_values() {
        // By hand, α = 1.3, β = 0.9 (0.5·β = 0.45):
        //   n_c = 3, n_t = 7: 1.3 / (3.9 + 3.15) = 1.3 / 7.05 = 0.184397; × 1.5 Mb/s = 0.27660 (§5.1: ".2766")
        //   n_c = 2, n_t = 7: 1.3 / (2.6 + 3.15) = 1.3 / 5.75 = 0.226087; × 4.5 Mb/s = 1.01739 (§5.1: "1.0174")
        //   n_c = 2, n_t = 4: 1.3 / (2.6 + 1.8)  = 1.3 / 4.4  = 0.295455; × 4.5 Mb/s = 1.32955 (§5.1: "1.3295")
        //   n_c = 3, n_t = 4: 1.3 / (3.9 + 1.8)  = 1.3 / 5.7  = 0.228070; × 4.5 Mb/s = 1.02632 (§5.1: "1.0263")
        for (n_c, n_t, link_mbps, mbps) in [
            (3, 7, 1.5, 0.27660),
            (2, 7, 4.5, 1.01739),
            (2, 4, 4.5, 1.32955),
            (3, 4, 4.5, 1.02632),
        ] {
            let bound = bred_cbr_bound(1.3, 0.9, n_c, n_t) * link_mbps;
            assert!((bound - mbps).abs() < 5e-5, "n_c={n_c} n_t={n_t}: {bound}");
        }
        // A lone non-conforming flow with no competitor may take the whole link.
        assert_eq!(bred_cbr_bound(1.3, 0.9, 1, 0), 1.0);
    }
}
