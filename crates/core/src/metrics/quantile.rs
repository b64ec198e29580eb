//! Quantiles by the nearest-rank rule, for every per-client distribution: the
//! simulations' metrics and CDFs and `explain`'s table read them here.

use super::QUANTILE_STEP;

names! {
    /// The per-client distributions a world writes to `cdf.csv`
    /// ([`super::ReplicationResult::quantiles`]), by name.
    Distribution {
        /// gRPC: from a disconnect until the channel is connected again. Not a summary
        /// metric: its summaries are the `reconnect_p*` quantiles.
        ReconnectTime = "reconnect_time",
        /// calls: from a call's start to its success, over all calls started.
        TimeToSuccess = "time_to_success",
        /// calls: from a call's start to its final give-up, over all calls started.
        TimeToGiveup = "time_to_giveup",
        /// calls: the time a finished call slept between attempts.
        TotalSleep = "total_sleep",
        /// jobs: from a job's creation to its delivery, over the jobs created.
        CompletionTime = "completion_time",
    }
}

/// The `f`-quantile (0 ≤ f ≤ 1) of sorted values by the nearest-rank rule: the smallest
/// value with at least a fraction `f` of the values at or below it.
pub fn quantile(sorted: &[u64], f: f64) -> Option<u64> {
    quantile_of(sorted, sorted.len(), f)
}

/// The `f`-quantile of a population of `population` members of which only `sorted`
/// finished (the rest never did, as if infinite): `None` when fewer than a fraction `f`
/// finished. "Time until 50 % reconnected" must not be computed over those who did.
pub fn quantile_of(sorted: &[u64], population: usize, f: f64) -> Option<u64> {
    let population = population.max(sorted.len());
    if population == 0 {
        return None;
    }
    let rank = ((f * population as f64).ceil() as usize).max(1);
    sorted.get(rank - 1).copied()
}

/// A distribution as [`super::ReplicationResult::quantiles`] holds it: the quantile at
/// each fraction 0, [`QUANTILE_STEP`], 2·[`QUANTILE_STEP`], … 1, in seconds, stopping
/// where the rest of the population never got there.
pub fn cdf_secs(sorted: &[u64], population: usize) -> Vec<f64> {
    let points = (1.0 / QUANTILE_STEP).round() as usize + 1;
    (0..points)
        .map_while(|i| quantile_of(sorted, population, i as f64 * QUANTILE_STEP).map(|v| v as f64 / 1e9))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_quantiles() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(quantile(&v, 0.5), Some(50));
        assert_eq!(quantile(&v, 0.99), Some(99));
        assert_eq!(quantile(&v, 1.0), Some(100));
        assert_eq!(quantile(&v, 0.0), Some(1));
        assert_eq!(quantile(&[], 0.5), None);
    }

    #[test]
    fn quantiles_of_a_population_count_the_unfinished_as_never() {
        let done = [10, 20, 30];
        // 3 of 10 finished: the 30 % quantile exists, the median does not.
        assert_eq!(quantile_of(&done, 10, 0.3), Some(30));
        assert_eq!(quantile_of(&done, 10, 0.5), None);
        assert_eq!(quantile_of(&done, 3, 1.0), Some(30));
    }

    #[test]
    fn a_cdf_has_a_point_per_step_and_stops_where_the_unfinished_start() {
        let all: Vec<u64> = (1..=100).map(|s| s * 1_000_000_000).collect();
        let cdf = cdf_secs(&all, 100);
        assert_eq!(cdf.len(), 101);
        assert_eq!((cdf[0], cdf[50], cdf[100]), (1.0, 50.0, 100.0));
        // 3 of 10 finished: fractions 0 to 0.3 exist, the rest never happened.
        let cdf = cdf_secs(&[1_000_000_000, 2_000_000_000, 3_000_000_000], 10);
        assert_eq!(cdf.len(), 31);
        assert_eq!(cdf.last(), Some(&3.0));
        assert!(cdf_secs(&[], 5).is_empty());
    }
}
