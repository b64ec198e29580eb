//! When each client of a world starts: the models share one rule so that `start_spread`
//! means the same in every section, and one rule for a client that repeats its calls to
//! start in steady state.

use rand::{Rng, RngExt};

use crate::engine::time::SimDuration;

/// A client's start offset, uniform over `[0, spread)` from the client's own workload
/// draws. Without a spread nothing is drawn, so a scenario's other draws do not depend
/// on whether it spreads its clients.
pub fn offset<R: Rng + ?Sized>(spread: SimDuration, workload: &mut R) -> SimDuration {
    if spread > SimDuration::ZERO {
        SimDuration(workload.random_range(0..spread.as_nanos()))
    } else {
        SimDuration::ZERO
    }
}

/// The wait from an arbitrary moment to a repeating client's next call when the client
/// has been running for ever: the stationary residual (forward recurrence) time of its
/// renewal process. Of a deterministic process of period `interval` it is uniform over
/// `[0, interval)`; of a Poisson process of mean gap `interval` it is exponential with the
/// same mean, the process being memoryless. One draw either way.
pub fn residual<R: Rng + ?Sized>(interval: SimDuration, poisson: bool, workload: &mut R) -> SimDuration {
    if poisson { exponential(interval, workload) } else { offset(interval, workload) }
}

/// An exponential duration of mean `mean`, by inversion of one uniform draw; libm's log
/// is the same on every machine.
pub fn exponential<R: Rng + ?Sized>(mean: SimDuration, workload: &mut R) -> SimDuration {
    let u: f64 = workload.random();
    let ns = -libm::log(1.0 - u) * mean.as_nanos() as f64;
    SimDuration(ns.round().min(u64::MAX as f64) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::{CounterRng, Purpose, Seeds};

    #[test]
    fn no_spread_starts_at_once_and_draws_nothing() {
        let mut rng = CounterRng::at(Seeds::new(1).counter_key(0, 0, Purpose::Workload), 0);
        assert_eq!(offset(SimDuration::ZERO, &mut rng), SimDuration::ZERO);
        assert_eq!(rng.index(), 0);
    }

    #[test]
    fn offsets_stay_below_the_spread_and_use_one_draw() {
        let spread = SimDuration::from_millis(3);
        for client in 0..200 {
            let mut rng = CounterRng::at(Seeds::new(7).counter_key(0, client, Purpose::Workload), 0);
            assert!(offset(spread, &mut rng) < spread);
            assert_eq!(rng.index(), 1);
        }
    }

    /// Residuals of `n` clients' streams, in seconds.
    fn residuals(n: u64, interval: SimDuration, poisson: bool) -> Vec<f64> {
        (0..n)
            .map(|client| {
                let mut rng = CounterRng::at(Seeds::new(3).counter_key(0, client, Purpose::Workload), 0);
                let r = residual(interval, poisson, &mut rng);
                assert_eq!(rng.index(), 1, "one draw per client");
                r.as_secs_f64()
            })
            .collect()
    }

    #[test]
    fn a_periodic_clients_stationary_residual_is_uniform_over_its_period() {
        // Renewal theory: the forward recurrence time of a renewal process with gap G has
        // density P(G > x) / E[G]; for G = T fixed that is uniform on [0, T): mean T/2,
        // variance T²/12.
        let r = residuals(20_000, SimDuration::from_secs(2), false);
        assert!(r.iter().all(|&x| (0.0..2.0).contains(&x)));
        let mean = r.iter().sum::<f64>() / r.len() as f64;
        // Standard error √(4/12 / 20000) ≈ 0.0041: within 4 of them.
        assert!((mean - 1.0).abs() < 0.017, "{mean}");
        let below_half = r.iter().filter(|&&x| x < 0.5).count() as f64 / r.len() as f64;
        assert!((below_half - 0.25).abs() < 0.013, "{below_half}");
    }

    #[test]
    fn a_poisson_clients_stationary_residual_is_exponential_with_the_mean_gap() {
        // For G exponential of mean m the forward recurrence density P(G > x) / m is the
        // same exponential (memorylessness): mean m, P(R > m) = 1/e.
        let r = residuals(20_000, SimDuration::from_secs(2), true);
        let mean = r.iter().sum::<f64>() / r.len() as f64;
        // Standard error 2/√20000 ≈ 0.014: within 4 of them.
        assert!((mean - 2.0).abs() < 0.057, "{mean}");
        let above_mean = r.iter().filter(|&&x| x > 2.0).count() as f64 / r.len() as f64;
        assert!((above_mean - (-1.0f64).exp()).abs() < 0.014, "{above_mean}");
        // Unbounded: some residuals are longer than the mean gap by far.
        assert!(r.iter().any(|&x| x > 10.0));
    }
}
