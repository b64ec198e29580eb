//! Statistics over replications: mean, sample standard deviation and a 95 % confidence
//! interval from Student's t, since replication counts are small.

/// The summary of one metric over replications.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation (n − 1); `None` with fewer than two observations.
    pub sd: Option<f64>,
    /// 95 % confidence interval for the mean; `None` with fewer than two observations.
    pub ci95: Option<(f64, f64)>,
}

/// Two-sided 97.5 % quantiles of Student's t for 1 to 30 degrees of freedom
/// (standard tables, e.g. NIST/SEMATECH e-Handbook, table 1.3.6.7.2).
const T975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
    2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
];

/// The 97.5 % quantile of Student's t with `df` degrees of freedom.
pub fn t975(df: usize) -> f64 {
    match df {
        0 => f64::NAN,
        1..=30 => T975[df - 1],
        _ => {
            // Cornish–Fisher expansion around the normal quantile; within 1e-4 of the
            // exact value from 31 degrees of freedom on.
            let z: f64 = 1.959_963_984_540_054;
            let d = df as f64;
            z + (z.powi(3) + z) / (4.0 * d) + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * d * d)
        }
    }
}

impl Estimate {
    /// Summarizes observations; `None` when there are none.
    pub fn of(values: &[f64]) -> Option<Estimate> {
        let &first = values.first()?;
        let n = values.len();
        if values.iter().all(|v| v.to_bits() == first.to_bits()) {
            // One value, or equal ones: their mean is the value itself and they spread not
            // at all, where summing and dividing would leave 1e-17 of float noise on both.
            // One value has no spread to speak of.
            let spread = n >= 2;
            return Some(Estimate {
                n,
                mean: first,
                sd: spread.then_some(0.0),
                ci95: spread.then_some((first, first)),
            });
        }
        // Two values or more from here. Summation in the given order: the caller passes
        // replications in index order, so the result does not depend on which thread
        // finished first.
        let mean = values.iter().sum::<f64>() / n as f64;
        let var = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1) as f64;
        let sd = var.sqrt();
        let half = t975(n - 1) * sd / (n as f64).sqrt();
        Some(Estimate { n, mean, sd: Some(sd), ci95: Some((mean - half, mean + half)) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_sd_and_interval_match_hand_computation() {
        // 1, 2, 3, 4, 5: mean 3, sample variance 10/4 = 2.5, sd 1.5811;
        // half-width t(4) · sd / √5 = 2.776 · 1.5811 / 2.2361 = 1.9629.
        let e = Estimate::of(&[1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
        assert_eq!(e.n, 5);
        assert!((e.mean - 3.0).abs() < 1e-12);
        assert!((e.sd.unwrap() - 1.581_138_8).abs() < 1e-6);
        let (lo, hi) = e.ci95.unwrap();
        assert!((lo - (3.0 - 1.962_9)).abs() < 1e-3 && (hi - (3.0 + 1.962_9)).abs() < 1e-3);
    }

    #[test]
    fn equal_observations_have_their_value_as_mean_and_no_spread() {
        // Ten 0.308s summed in order and divided by ten give 0.30799999999999994 in
        // floating point (tcp-karn's linux median RTO showed "± 0.000000000000000056").
        let e = Estimate::of(&[0.308; 10]).unwrap();
        assert_eq!((e.mean, e.sd, e.ci95), (0.308, Some(0.0), Some((0.308, 0.308))));
    }

    #[test]
    fn one_observation_has_no_spread_and_none_has_no_estimate() {
        let e = Estimate::of(&[7.0]).unwrap();
        assert_eq!((e.mean, e.sd, e.ci95), (7.0, None, None));
        assert!(Estimate::of(&[]).is_none());
    }

    #[test]
    fn t_quantile_tends_to_the_normal_one() {
        assert_eq!(t975(1), 12.706);
        assert!((t975(40) - 2.021).abs() < 1e-3);
        assert!((t975(120) - 1.980).abs() < 1e-3);
        assert!((t975(100_000) - 1.960).abs() < 1e-3);
    }
}
