//! Thinning of large traces before drawing, without changing the picture.

/// Time slices a line keeps its extremes in when it is thinned.
pub(crate) const LINE_BUCKETS: usize = 2000;
/// Lines with fewer points than this are drawn as they are.
pub(crate) const THIN_ABOVE: usize = 4000;

/// Thins a line ordered by x to at most four points per slice of `[x0, x1]`: the first,
/// the lowest, the highest and the last, in x order. At [`LINE_BUCKETS`] slices across a
/// 1000-pixel plot the drawn line looks the same.
pub(crate) fn thin_line(points: &[(f64, f64)], x0: f64, x1: f64) -> Vec<(f64, f64)> {
    if points.len() <= THIN_ABOVE || x1 <= x0 {
        return points.to_vec();
    }
    let slice = |x: f64| (((x - x0) / (x1 - x0)) * LINE_BUCKETS as f64).floor() as i64;
    let mut out = Vec::new();
    let mut i = 0;
    while i < points.len() {
        let b = slice(points[i].0);
        let mut j = i;
        let (mut lo, mut hi) = (i, i);
        while j < points.len() && slice(points[j].0) == b {
            if points[j].1 < points[lo].1 {
                lo = j;
            }
            if points[j].1 > points[hi].1 {
                hi = j;
            }
            j += 1;
        }
        let mut keep = vec![i, lo, hi, j - 1];
        keep.sort_unstable();
        keep.dedup();
        out.extend(keep.into_iter().map(|k| points[k]));
        i = j;
    }
    out
}

/// Thins scattered points to one per cell of a grid finer than the pixels (2000 columns,
/// 1000 rows of the plotted range; `ylog` for a log axis), keeping the first in each.
pub(crate) fn thin_points(
    points: &[(f64, f64)],
    (x0, x1): (f64, f64),
    (y0, y1): (f64, f64),
    ylog: bool,
) -> Vec<(f64, f64)> {
    if points.len() <= THIN_ABOVE || x1 <= x0 || y1 <= y0 {
        return points.to_vec();
    }
    let fy = |y: f64| {
        if ylog { y.max(f64::MIN_POSITIVE).ln() } else { y }
    };
    let (fy0, fy1) = (fy(y0), fy(y1));
    let mut seen = std::collections::BTreeSet::new();
    points
        .iter()
        .copied()
        .filter(|&(x, y)| {
            let cx = ((x - x0) / (x1 - x0) * 2000.0).floor() as i64;
            let cy = ((fy(y) - fy0) / (fy1 - fy0) * 1000.0).floor() as i64;
            seen.insert((cx, cy))
        })
        .collect()
}

/// Thins marks along a time axis (retransmissions under a panel) to the first in each of
/// [`LINE_BUCKETS`] slices of `[x0, x1]`: 100,000 marks a few pixels wide would cover one
/// another anyway.
pub(crate) fn thin_marks(xs: &[f64], x0: f64, x1: f64) -> Vec<f64> {
    if xs.len() <= THIN_ABOVE || x1 <= x0 {
        return xs.to_vec();
    }
    let mut seen = std::collections::BTreeSet::new();
    xs.iter().copied().filter(|x| seen.insert(((x - x0) / (x1 - x0) * LINE_BUCKETS as f64).floor() as i64)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thinning_a_line_keeps_its_extremes_in_order() {
        let pts: Vec<(f64, f64)> = (0..100_000).map(|i| (i as f64 / 1000.0, ((i * 7919) % 1000) as f64)).collect();
        let thin = thin_line(&pts, 0.0, 100.0);
        assert!(thin.len() <= 4 * LINE_BUCKETS, "{}", thin.len());
        assert!(thin.windows(2).all(|w| w[0].0 <= w[1].0));
        let max = |p: &[(f64, f64)]| p.iter().map(|p| p.1).fold(f64::MIN, f64::max);
        let min = |p: &[(f64, f64)]| p.iter().map(|p| p.1).fold(f64::MAX, f64::min);
        assert_eq!((max(&thin), min(&thin)), (max(&pts), min(&pts)));
        assert_eq!(thin.first(), pts.first());
        assert_eq!(thin.last(), pts.last());
    }

    #[test]
    fn thinning_marks_keeps_the_first_in_each_slice_and_leaves_few_alone() {
        let few: Vec<f64> = (0..THIN_ABOVE).map(|i| i as f64 * 1e-3).collect();
        assert_eq!(thin_marks(&few, 0.0, 100.0), few);
        // 100,000 retransmissions, one a second, on a 100,000 s axis: one per 50 s slice.
        let many: Vec<f64> = (0..100_000).map(f64::from).collect();
        let thin = thin_marks(&many, 0.0, 100_000.0);
        assert_eq!(thin.len(), LINE_BUCKETS);
        assert_eq!((thin[0], thin[1]), (0.0, 50.0));
    }

    #[test]
    fn thinning_points_keeps_one_per_grid_cell_and_leaves_small_sets_alone() {
        let few: Vec<(f64, f64)> = (0..100).map(|i| (i as f64, 1.0)).collect();
        assert_eq!(thin_points(&few, (0.0, 100.0), (0.5, 2.0), true), few);
        // 200 000 samples of a 100 ms RTT over 60 s collapse to one row of cells.
        let many: Vec<(f64, f64)> = (0..200_000).map(|i| (i as f64 * 0.0003, 0.1 + (i % 7) as f64 * 1e-7)).collect();
        let thin = thin_points(&many, (0.0, 60.0), (0.01, 10.0), true);
        assert!(thin.len() <= 2001, "{}", thin.len());
        assert_eq!(thin[0], many[0]);
    }
}
