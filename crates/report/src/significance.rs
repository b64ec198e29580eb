//! Whether two variants' means differ beyond chance: the 95 % interval of the difference
//! of the means, and whether it excludes zero. Variants of one run share their random
//! numbers replication by replication, so their difference is paired (see
//! [`super::paired`]); variants of different runs do not, so theirs is Welch's
//! unpaired interval.

use std::collections::BTreeMap;

use backoffsim_core::metrics::stats::{Estimate, t975};

/// Welch's 95 % interval of `mean_a − mean_b` from each side's `(n, mean, sd)`, with the
/// Welch–Satterthwaite degrees of freedom rounded down (a slightly wider interval,
/// never a narrower one). `None` when a side has fewer than two replications: one value
/// says nothing of the spread.
pub fn welch(a: (u64, f64, Option<f64>), b: (u64, f64, Option<f64>)) -> Option<(f64, f64)> {
    let (na, ma, sa) = (a.0 as f64, a.1, a.2?);
    let (nb, mb, sb) = (b.0 as f64, b.1, b.2?);
    if na < 2.0 || nb < 2.0 {
        return None;
    }
    let d = ma - mb;
    let (va, vb) = (sa * sa / na, sb * sb / nb);
    let se2 = va + vb;
    if se2 == 0.0 {
        // Both sides the same value in every replication: the difference is exact.
        return Some((d, d));
    }
    let df = se2 * se2 / (va * va / (na - 1.0) + vb * vb / (nb - 1.0));
    let half = t975((df.floor() as usize).max(1)) * se2.sqrt();
    Some((d - half, d + half))
}

/// The paired 95 % interval of the mean of `a − b` over the replications both have.
pub fn paired(a: &BTreeMap<u32, f64>, b: &BTreeMap<u32, f64>) -> Option<(f64, f64)> {
    let diffs: Vec<f64> = a.iter().filter_map(|(r, x)| b.get(r).map(|y| x - y)).collect();
    Estimate::of(&diffs)?.ci95
}

/// Whether an interval lies wholly on one side of zero.
pub fn excludes_zero((lo, hi): (f64, f64)) -> bool {
    lo > 0.0 || hi < 0.0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Welch (1947), with Satterthwaite's degrees of freedom: by hand, se² = 4/4 + 1/4 =
    /// 1.25, df = 1.25² / (1²/3 + 0.25²/3) = 4.41 → 4, t(4) = 2.776, half = 2.776 × 1.118.
    #[test]
    fn welchs_interval_matches_hand_computation() {
        let (lo, hi) = welch((4, 10.0, Some(2.0)), (4, 7.0, Some(1.0))).unwrap();
        let half = 2.776 * 1.25f64.sqrt();
        assert!((lo - (3.0 - half)).abs() < 1e-9 && (hi - (3.0 + half)).abs() < 1e-9, "{lo} {hi}");
        assert!(!excludes_zero((lo, hi)), "a difference of 3 with these spreads is within chance");
        // Ten times the replications, and the same spreads exclude it.
        assert!(excludes_zero(welch((40, 10.0, Some(2.0)), (40, 7.0, Some(1.0))).unwrap()));
    }

    #[test]
    fn exact_values_differ_exactly_and_one_replication_says_nothing() {
        assert_eq!(welch((3, 2.0, Some(0.0)), (3, 1.0, Some(0.0))), Some((1.0, 1.0)));
        assert_eq!(welch((3, 1.0, Some(0.0)), (3, 1.0, Some(0.0))), Some((0.0, 0.0)));
        assert!(!excludes_zero((0.0, 0.0)));
        assert_eq!(welch((1, 2.0, None), (3, 1.0, Some(0.5))), None);
    }

    #[test]
    fn pairing_uses_only_the_replications_both_sides_have() {
        let a = BTreeMap::from([(0, 11.0), (1, 41.0), (2, 21.0), (3, 5.0)]);
        let b = BTreeMap::from([(0, 10.0), (1, 40.0), (2, 20.0)]);
        assert_eq!(paired(&a, &b), Some((1.0, 1.0)), "every shared pair differs by exactly 1");
    }
}
