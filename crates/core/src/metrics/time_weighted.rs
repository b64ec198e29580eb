//! A value that holds from one change to the next (a step function of time), summarised
//! by how long it held each value: its time-weighted mean and quantiles.
//!
//! Used for the RTO: what matters to a connection is the timer value in force at each
//! instant, not the values at the moments it changed. An RTO that sat at 1 s for a minute
//! and at 4 s for 100 ms has a time-weighted p99 of 1 s; counted per change it would look
//! like half its life was spent at 4 s.

use std::collections::BTreeMap;

use crate::engine::time::SimTime;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct TimeWeighted {
    /// The value in force and since when; `None` before the first `set` and after `finish`.
    current: Option<(SimTime, u64)>,
    finished: bool,
    /// Nanoseconds spent at each value. Ordered, so quantiles walk it in value order and
    /// nothing depends on hash order.
    held: BTreeMap<u64, u64>,
}

impl TimeWeighted {
    /// From `now` on the value is `value`. Times must not decrease; after `finish`
    /// nothing changes.
    pub fn set(&mut self, now: SimTime, value: u64) {
        if self.finished {
            return;
        }
        match self.current {
            Some((_, v)) if v == value => {}
            Some((since, v)) => {
                *self.held.entry(v).or_default() += now.saturating_since(since).as_nanos();
                self.current = Some((now, value));
            }
            None => self.current = Some((now, value)),
        }
    }

    /// The life being measured ends at `end`: the value in force holds until then. Only
    /// the first call counts.
    pub fn finish(&mut self, end: SimTime) {
        if self.finished {
            return;
        }
        if let Some((since, v)) = self.current.take() {
            *self.held.entry(v).or_default() += end.saturating_since(since).as_nanos();
        }
        self.finished = true;
    }

    fn total(&self) -> u64 {
        self.held.values().sum()
    }

    /// The time-weighted mean (in the values' unit); `None` over no time at all.
    pub fn mean(&self) -> Option<f64> {
        let total = self.total();
        (total > 0).then(|| self.held.iter().map(|(&v, &t)| v as f64 * t as f64).sum::<f64>() / total as f64)
    }

    /// The time-weighted `f`-quantile (0 ≤ f ≤ 1): the smallest value that was in force, at
    /// or below, for at least a fraction `f` of the time (the nearest-rank rule, with time
    /// in place of a count). `None` over no time at all.
    pub fn quantile(&self, f: f64) -> Option<u64> {
        let total = self.total();
        if total == 0 {
            return None;
        }
        let need = f * total as f64;
        let mut below = 0u64;
        for (&v, &t) in &self.held {
            below += t;
            if below as f64 >= need && t > 0 {
                return Some(v);
            }
        }
        self.held.iter().rev().find(|(_, t)| **t > 0).map(|(&v, _)| v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    fn at(s: f64) -> SimTime {
        SimTime((s * S as f64).round() as u64)
    }

    /// 1 s for 1.2 s, 2 s for 2 s, 4 s for 0.1 s: the golden-small connection's RTO.
    fn golden() -> TimeWeighted {
        let mut w = TimeWeighted::default();
        w.set(at(0.0), S);
        w.set(at(0.1), S); // unchanged: no new step
        w.set(at(1.2), 2 * S);
        w.set(at(3.2), 4 * S);
        w.finish(at(3.3));
        w
    }

    #[test]
    fn the_mean_weights_each_value_by_how_long_it_held() {
        let mean = golden().mean().unwrap() / S as f64;
        assert!((mean - 5.6 / 3.3).abs() < 1e-12, "{mean}");
    }

    #[test]
    fn quantiles_count_time_not_changes() {
        let w = golden();
        // 1 s holds 36 % of the time, up to 2 s 97 %: the median is 2 s, the p99 4 s.
        assert_eq!(w.quantile(0.0), Some(S));
        assert_eq!(w.quantile(0.36), Some(S));
        assert_eq!(w.quantile(0.5), Some(2 * S));
        assert_eq!(w.quantile(0.96), Some(2 * S));
        assert_eq!(w.quantile(0.99), Some(4 * S));
        assert_eq!(w.quantile(1.0), Some(4 * S));
    }

    #[test]
    fn an_even_split_puts_the_median_on_the_lower_value() {
        let mut w = TimeWeighted::default();
        w.set(at(0.0), 10);
        w.set(at(1.0), 30);
        w.finish(at(2.0));
        assert_eq!(w.quantile(0.5), Some(10));
        assert_eq!(w.mean(), Some(20.0));
    }

    #[test]
    fn changes_after_the_end_and_values_held_for_no_time_do_not_count() {
        let mut w = TimeWeighted::default();
        w.set(at(0.0), 5);
        w.set(at(2.0), 7); // set and ended at the same instant
        w.finish(at(2.0));
        w.set(at(3.0), 100);
        w.finish(at(9.0));
        assert_eq!((w.mean(), w.quantile(1.0)), (Some(5.0), Some(5)));
    }

    #[test]
    fn no_time_gives_no_value() {
        let mut w = TimeWeighted::default();
        assert_eq!((w.mean(), w.quantile(0.5)), (None, None));
        w.set(at(1.0), 5);
        w.finish(at(1.0));
        assert_eq!((w.mean(), w.quantile(0.5)), (None, None));
    }
}
