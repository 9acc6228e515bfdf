//! The web-like sources' distributions: what a [`Workload`](super::Workload) of type
//! `web` or `neidhardt` draws for each transfer's size and the think time after it.
//!
//! - `web` (RED-PD §7.4): Pareto sizes in packets, exponential think times.
//! - `neidhardt` (SRED §VII): file sizes in bytes per Neidhardt's fit to the Bestavros and
//!   Crovella web traces, eq. 7.1, P{F > f} = (1 + (f/μ)^α)^−1 (a log-logistic law with
//!   median μ), cut into segments; think times per eq. 7.2, a two-component mixture of the
//!   same law, re-drawn while below a minimum ("if the think-time came out below 50 msec
//!   we re-sampled").

use rand_distr::{Distribution, Exp, Pareto};
use std::f64::consts::PI;

/// The log-logistic law of SRED eq. 7.1: P{X > x} = (1 + (x/median)^shape)^−1.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LogLogistic {
    pub median: f64,
    pub shape: f64,
}

impl LogLogistic {
    /// P{X > x}.
    pub fn survival(&self, x: f64) -> f64 {
        1.0 / (1.0 + (x / self.median).powf(self.shape))
    }

    /// The mean, finite for shape > 1: median·α^−1·Γ(1/α)·Γ(1 − 1/α) (SRED §VII), which by
    /// Euler's reflection formula is median·b/sin(b) with b = π/α.
    pub fn mean(&self) -> f64 {
        let b = PI / self.shape;
        self.median * b / b.sin()
    }

    /// Inverse transform: x = median·(u/(1 − u))^(1/shape) for u uniform in (0, 1).
    pub fn sample<R: rand::Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        let u: f64 = rng.gen_range(f64::EPSILON..1.0);
        self.median * (u / (1.0 - u)).powf(1.0 / self.shape)
    }
}

/// How many packets each transfer has.
pub enum FileSize {
    /// Pareto in packets, rounded, at least one.
    Pareto(Pareto<f64>),
    /// Log-logistic in bytes, carried in segments of `segment` bytes (the last one partial).
    Bytes { law: LogLogistic, segment: f64 },
}

impl FileSize {
    /// A Pareto with this mean (packets) and shape (> 1): its scale is mean·(shape − 1)/shape.
    pub fn pareto(mean: f64, shape: f64) -> Self {
        FileSize::Pareto(Pareto::new(mean * (shape - 1.0) / shape, shape).expect("validated: mean >= 1, shape > 1"))
    }

    pub fn packets<R: rand::Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        match self {
            FileSize::Pareto(p) => (p.sample(rng).round() as u64).max(1),
            FileSize::Bytes { law, segment } => ((law.sample(rng) / segment).ceil() as u64).max(1),
        }
    }
}

/// The think time after a transfer, in seconds.
pub enum ThinkTime {
    None,
    Exponential(Exp<f64>),
    /// Each component (weight, law) drawn with its weight; draws below `min` are re-drawn.
    Mixture {
        components: Vec<(f64, LogLogistic)>,
        min: f64,
    },
}

impl ThinkTime {
    /// Exponential with this mean, or none for a mean of 0.
    pub fn exponential(mean: f64) -> Self {
        if mean > 0.0 {
            ThinkTime::Exponential(Exp::new(1.0 / mean).expect("validated: think_time > 0"))
        } else {
            ThinkTime::None
        }
    }

    pub fn sample<R: rand::Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        match self {
            ThinkTime::None => 0.0,
            ThinkTime::Exponential(e) => e.sample(rng),
            ThinkTime::Mixture { components, min } => loop {
                let draw = Self::component(components, rng.gen::<f64>()).sample(rng);
                if draw >= *min {
                    return draw;
                }
            },
        }
    }

    /// The component a uniform `u` picks by cumulative weight (weights sum to 1).
    fn component(components: &[(f64, LogLogistic)], u: f64) -> &LogLogistic {
        let mut cumulative = 0.0;
        for (weight, law) in components {
            cumulative += weight;
            if u < cumulative {
                return law;
            }
        }
        &components.last().expect("validated: at least one component").1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::stream;

    /// SRED eq. 7.1 with Neidhardt's fit: "μ = 2190, α = 1.15066".
    const FILE: LogLogistic = LogLogistic {
        median: 2190.0,
        shape: 1.15066,
    };
    /// SRED eq. 7.2's two components, "p_h = .4953916 ... μ_l = .0245032, α_l = 3.252665".
    const HIGH: (f64, LogLogistic) = (
        0.4953916,
        LogLogistic {
            median: 1.0,
            shape: 1.243437,
        },
    );
    const LOW: (f64, LogLogistic) = (
        0.5046084,
        LogLogistic {
            median: 0.0245032,
            shape: 3.252665,
        },
    );

    fn median(mut xs: Vec<f64>) -> f64 {
        xs.sort_by(f64::total_cmp);
        xs[xs.len() / 2]
    }

    #[test]
    fn eq_7_1_mean_is_the_papers_and_the_sample_median_is_mu() {
        // "The mean is 14954 bytes": the closed form gives 14954.2.
        assert!((FILE.mean() - 14954.0).abs() < 0.5, "{}", FILE.mean());
        // The sample median of 10^6 draws: its standard error is 1/(2 f(μ) √n) = 2μ/(α √n) ≈ 3.8
        // bytes, so ±3 % (66 bytes) is far outside the noise and fails a wrong inverse transform.
        let mut rng = stream(7, "web");
        let draws: Vec<f64> = (0..1_000_000).map(|_| FILE.sample(&mut rng)).collect();
        let m = median(draws);
        assert!((m / 2190.0 - 1.0).abs() < 0.03, "median {m}");
    }

    #[test]
    fn eq_7_2_mean_and_the_re_drawn_minimum() {
        // "The mean of this distribution is 2.18 seconds" (before re-drawing below 50 ms).
        let mean = HIGH.0 * HIGH.1.mean() + LOW.0 * LOW.1.mean();
        assert!((mean - 2.18).abs() < 0.005, "{mean}");
        // With the minimum, no draw is below 50 ms, and the draws follow the law conditioned on
        // T >= 50 ms: P{T > 1 s | T >= 50 ms} = P{T > 1 s} / P{T >= 50 ms} = 0.2499 / 0.5289.
        let think = ThinkTime::Mixture {
            components: vec![HIGH, LOW],
            min: 0.05,
        };
        let mut rng = stream(8, "web");
        let draws: Vec<f64> = (0..200_000).map(|_| think.sample(&mut rng)).collect();
        assert!(draws.iter().all(|&t| t >= 0.05));
        let survival = |t: f64| HIGH.0 * HIGH.1.survival(t) + LOW.0 * LOW.1.survival(t);
        let expected = survival(1.0) / survival(0.05);
        let measured = draws.iter().filter(|&&t| t > 1.0).count() as f64 / draws.len() as f64;
        // 3σ of a binomial proportion over 200 000 draws: 3·√(0.47·0.53/200 000) = 0.0034.
        assert!((measured - expected).abs() < 0.0034, "{measured} vs {expected}");
    }

    #[test]
    fn file_sizes_are_whole_segments() {
        let sizes = FileSize::Bytes {
            law: FILE,
            segment: 536.0,
        };
        let mut rng = stream(9, "web");
        let packets: Vec<f64> = (0..100_001).map(|_| sizes.packets(&mut rng) as f64).collect();
        // The median file, 2190 bytes, is ceil(2190/536) = 5 segments; no transfer is empty.
        assert_eq!(median(packets.clone()), 5.0);
        assert!(packets.iter().all(|&p| p >= 1.0));
    }
}
