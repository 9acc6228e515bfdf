//! Fairness measures: Jain's index and max-min fair shares by water-filling.

/// Jain's fairness index (Σx)² / (n·Σx²): 1 when all equal, 1/n when one takes all.
pub fn jain_index(x: &[f64]) -> f64 {
    let sum: f64 = x.iter().sum();
    let sum_sq: f64 = x.iter().map(|v| v * v).sum();
    if x.is_empty() || sum_sq == 0.0 {
        return 1.0;
    }
    sum * sum / (x.len() as f64 * sum_sq)
}

/// Max-min fair rates by progressive filling.
///
/// `capacity[l]` is link `l`'s rate; flow `f` crosses `routes[f]` and wants at
/// most `demand[f]` (`f64::INFINITY` for an elastic flow). All unfrozen flows
/// grow together; a flow freezes when it meets its demand or a link on its
/// route saturates.
pub fn max_min_shares(capacity: &[f64], routes: &[Vec<u32>], demand: &[f64]) -> Vec<f64> {
    let n = routes.len();
    let mut rate = vec![0.0; n];
    let mut frozen = vec![false; n];
    let mut remaining: Vec<f64> = capacity.to_vec();
    loop {
        let mut users = vec![0usize; capacity.len()];
        for f in (0..n).filter(|&f| !frozen[f]) {
            for &l in &routes[f] {
                users[l as usize] += 1;
            }
        }
        // The largest common increment before some link saturates or some flow meets its demand.
        let mut step = f64::INFINITY;
        for (l, &u) in users.iter().enumerate() {
            if u > 0 {
                step = step.min(remaining[l] / u as f64);
            }
        }
        for f in (0..n).filter(|&f| !frozen[f]) {
            step = step.min(demand[f] - rate[f]);
        }
        if !step.is_finite() {
            break; // only flows without routes remain: their demand is unbounded and unconstrained
        }
        let active: Vec<usize> = (0..n).filter(|&f| !frozen[f]).collect();
        if active.is_empty() {
            break;
        }
        for &f in &active {
            rate[f] += step;
            for &l in &routes[f] {
                remaining[l as usize] -= step;
            }
        }
        let tight = |l: u32| remaining[l as usize] <= 1e-9 * capacity[l as usize].max(1.0);
        for &f in &active {
            if rate[f] >= demand[f] - 1e-12 * demand[f].abs().max(1.0) || routes[f].iter().any(|&l| tight(l)) {
                frozen[f] = true;
            }
        }
    }
    rate
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_extremes() {
        assert!((jain_index(&[1.0, 1.0, 1.0, 1.0]) - 1.0).abs() < 1e-12);
        assert!((jain_index(&[1.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
    }

    #[test]
    fn water_filling_single_link_with_small_demands() {
        // RED-PD Fig. 14: 11 CBR flows on 10 Mbps; max-min shares 0.1, 0.5, 1.0 then 1.05 for the rest.
        let demand: Vec<f64> = std::iter::once(0.1).chain((1..11).map(|i| 0.5 * i as f64)).collect();
        let routes = vec![vec![0u32]; 11];
        let share = max_min_shares(&[10.0], &routes, &demand);
        assert!((share[0] - 0.1).abs() < 1e-9 && (share[1] - 0.5).abs() < 1e-9 && (share[2] - 1.0).abs() < 1e-9);
        for s in &share[3..] {
            assert!((s - 1.05).abs() < 1e-9, "{s}");
        }
    }

    #[test]
    fn water_filling_parking_lot() {
        // Two links of capacity 1; flow 0 crosses both, flows 1 and 2 one each: all get 1/2.
        let routes = vec![vec![0, 1], vec![0], vec![1]];
        let share = max_min_shares(&[1.0, 1.0], &routes, &[f64::INFINITY; 3]);
        assert_eq!(share, vec![0.5, 0.5, 0.5]);
        // Make link 1 bigger: flow 2 takes the rest of link 1.
        let share = max_min_shares(&[1.0, 3.0], &routes, &[f64::INFINITY; 3]);
        assert!((share[0] - 0.5).abs() < 1e-9 && (share[1] - 0.5).abs() < 1e-9 && (share[2] - 2.5).abs() < 1e-9);
    }
}
