//! The jitter formulas more than one model draws with: one uniform `r` ∈ [0, 1) turned
//! into a sleep, in f64 nanoseconds as the libraries and Brooker's study compute them.
//! The retry policies ([`super::retry::jitter`]) and the OCC clients ([`super::occ`])
//! both read them here, so `full`, `equal` and `decorrelated` mean one thing.

use crate::engine::time::SimDuration;

/// f64 nanoseconds of a duration.
pub(crate) fn f(d: SimDuration) -> f64 {
    d.as_nanos() as f64
}

/// Whole nanoseconds of an f64, truncated toward zero, saturating; NaN and negatives
/// give zero.
pub(crate) fn ns(x: f64) -> SimDuration {
    if x.is_nan() || x <= 0.0 {
        SimDuration::ZERO
    } else if x >= u64::MAX as f64 {
        SimDuration::MAX
    } else {
        SimDuration::from_nanos(x as u64)
    }
}

/// Full jitter: uniform over `[0, d)`.
pub(crate) fn full(d: SimDuration, r: f64) -> SimDuration {
    ns(f(d) * r)
}

/// Equal jitter: half of `d`, plus uniform over the other half.
pub(crate) fn equal(d: SimDuration, r: f64) -> SimDuration {
    let half = f(d) / 2.0;
    ns(half + half * r)
}

/// Decorrelated jitter (Brooker 2015) before the cap: uniform between `base` and three
/// times the previous sleep (`base` when the range is empty).
pub(crate) fn decorrelated(base: SimDuration, prev: SimDuration, r: f64) -> SimDuration {
    let hi = f(prev) * 3.0;
    let lo = f(base);
    ns(lo + (hi - lo).max(0.0) * r)
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: SimDuration = SimDuration::from_secs(1);

    #[test]
    fn each_formula_spans_its_range_from_the_lowest_draw_to_the_highest() {
        let below_one = 1.0 - f64::EPSILON / 2.0;
        assert_eq!((full(S, 0.0), full(S, 0.5)), (SimDuration::ZERO, SimDuration::from_millis(500)));
        assert_eq!((equal(S, 0.0), equal(S, 0.5)), (SimDuration::from_millis(500), SimDuration::from_millis(750)));
        // In f64 the highest draw can round up to the whole of `d`, never past it.
        assert!(equal(S, below_one) <= S && full(S, below_one) < S);
        let (base, prev) = (SimDuration::from_millis(100), SimDuration::from_millis(200));
        assert_eq!(decorrelated(base, prev, 0.0), base);
        assert_eq!(decorrelated(base, prev, 0.5), SimDuration::from_millis(350));
        // A previous sleep below a third of the base leaves nothing to draw from.
        assert_eq!(decorrelated(base, SimDuration::from_millis(10), 0.9), base);
    }

    #[test]
    fn conversions_saturate_and_refuse_nan() {
        assert_eq!(ns(f64::NAN), SimDuration::ZERO);
        assert_eq!(ns(-1.0), SimDuration::ZERO);
        assert_eq!(ns(1e30), SimDuration::MAX);
        assert_eq!(ns(f(S) + 0.9), S);
    }
}
