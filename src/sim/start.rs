//! When each client of a world starts: the models share one rule so that `start_spread`
//! means the same in every section.

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
}
