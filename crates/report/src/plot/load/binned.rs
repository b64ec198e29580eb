//! A panel's bins: the mean over replications of every column, merged where there are
//! too many to draw.

use std::collections::BTreeMap;

use super::{MAX_BINS, MIN_STEP_PX, PLOT_WIDTH, Steps};
use crate::data::SeriesTable;
use crate::plot::fmt_secs;

/// The mean over replications of every column, per bin, within the figure's window.
pub(super) struct Binned {
    /// Each bin's span, the last cut at the horizon.
    pub(super) spans: Vec<(f64, f64)>,
    pub(super) columns: Vec<String>,
    /// `values[column][bin]`: the mean over the replications that have a value (and over
    /// the merged bins).
    pub(super) values: Vec<Vec<Option<f64>>>,
    /// Each bin's seconds per bin of the file: its length, or the mean length of the
    /// file's bins merged into it.
    pub(super) per_bin: Vec<f64>,
    /// How many of the file's bins each bin is (1 unless there were more than
    /// [`MAX_BINS`]).
    pub(super) merged: usize,
    pub(super) reps: usize,
    /// The length of the figure's time window.
    pub(super) window: f64,
}

/// One bin over replications: its start and width, and each column's sum and count of
/// values.
type Sums = (f64, f64, Vec<(f64, u32)>);

impl Binned {
    pub(super) fn of(
        table: &SeriesTable,
        variant: &str,
        point: &[String],
        horizon: Option<f64>,
        window: (f64, f64),
    ) -> Binned {
        let n = table.columns.len();
        let mut bins: BTreeMap<i64, Sums> = BTreeMap::new();
        let mut reps = std::collections::BTreeSet::new();
        for r in table.rows.iter().filter(|r| r.variant == variant && r.point == point) {
            reps.insert(r.replication);
            if r.bin_width <= 0.0 || horizon.is_some_and(|h| h > 0.0 && r.bin_start >= h) {
                continue;
            }
            let key = (r.bin_start / r.bin_width).round() as i64;
            let e = bins.entry(key).or_insert_with(|| (r.bin_start, r.bin_width, vec![(0.0, 0); n]));
            for (acc, v) in e.2.iter_mut().zip(&r.values) {
                if let Some(v) = v {
                    acc.0 += v;
                    acc.1 += 1;
                }
            }
        }
        let mut out = Binned {
            spans: Vec::new(),
            columns: table.columns.clone(),
            values: vec![Vec::new(); n],
            per_bin: Vec::new(),
            merged: 1,
            reps: reps.len(),
            window: window.1 - window.0,
        };
        for (start, width, sums) in bins.into_values() {
            let end = horizon.filter(|h| *h > start).map_or(start + width, |h| (start + width).min(h));
            let mid = (start + end) / 2.0;
            if mid < window.0 || mid > window.1 {
                continue;
            }
            out.spans.push((start, end));
            out.per_bin.push(end - start);
            for (c, (sum, count)) in sums.into_iter().enumerate() {
                out.values[c].push((count > 0).then(|| sum / f64::from(count)));
            }
        }
        out.merge();
        out
    }

    /// Merges runs of bins into one where there are more than [`MAX_BINS`], so a line
    /// keeps a couple of pixels a bin: each value becomes the mean over the merged bins
    /// that have one, which keeps a count's rate (its mean over the bins' mean length) and
    /// a level's average.
    pub(super) fn merge(&mut self) {
        let k = self.spans.len().div_ceil(MAX_BINS);
        if k <= 1 {
            return;
        }
        self.merged = k;
        let mean = |xs: &mut dyn Iterator<Item = f64>| {
            let (sum, n) = xs.fold((0.0, 0u32), |(s, n), x| (s + x, n + 1));
            (n > 0).then(|| sum / f64::from(n))
        };
        self.per_bin = self.per_bin.chunks(k).map(|c| mean(&mut c.iter().copied()).unwrap_or(0.0)).collect();
        self.spans = self.spans.chunks(k).map(|c| (c[0].0, c[c.len() - 1].1)).collect();
        for col in &mut self.values {
            *col = col.chunks(k).map(|c| mean(&mut c.iter().flatten().copied())).collect();
        }
    }

    pub(super) fn col(&self, name: &str) -> Option<&[Option<f64>]> {
        self.columns.iter().position(|c| c == name).map(|i| self.values[i].as_slice())
    }

    /// A count per bin as a rate per second.
    pub(super) fn rate(&self, name: &str) -> Option<Vec<Option<f64>>> {
        let v = self.col(name)?;
        Some(v.iter().zip(&self.per_bin).map(|(v, w)| v.filter(|_| *w > 0.0).map(|v| v / w)).collect())
    }

    /// `num / den` per bin in percent, where `den` is positive: pooled over replications,
    /// as the means share the same divisor.
    pub(super) fn share(&self, num: &str, den: &str) -> Option<Vec<Option<f64>>> {
        let (n, d) = (self.col(num)?, self.col(den)?);
        Some(
            n.iter()
                .zip(d)
                .map(|(n, d)| Some(n.unwrap_or(0.0) * 100.0 / (*d)?).filter(|_| d.is_some_and(|d| d > 0.0)))
                .collect(),
        )
    }

    /// The line of `values`: a step per bin where bins are wide enough to see them, else
    /// through the bins' middles (steps a pixel or two wide would draw the bin-to-bin
    /// noise as a solid band).
    pub(super) fn steps(&self, values: &[Option<f64>]) -> Steps {
        let span = self.spans.last().map_or(0.0, |l| l.1) - self.spans.first().map_or(0.0, |f| f.0);
        let wide = span > 0.0 && self.spans.len() as f64 <= f64::from(PLOT_WIDTH) / MIN_STEP_PX * (span / self.window);
        let mut out = Vec::new();
        let mut cur = Vec::new();
        for (&(a, b), v) in self.spans.iter().zip(values) {
            match v {
                Some(v) if wide => cur.extend([(a, *v), (b, *v)]),
                Some(v) => cur.push(((a + b) / 2.0, *v)),
                None if !cur.is_empty() => out.push(std::mem::take(&mut cur)),
                None => {}
            }
        }
        if !cur.is_empty() {
            out.push(cur);
        }
        out
    }

    /// The mean of `values` over the bins in `[from, to)`.
    pub(super) fn mean(&self, values: &[Option<f64>], from: f64, to: f64) -> Option<f64> {
        let inside: Vec<f64> = self
            .spans
            .iter()
            .zip(values)
            .filter(|((a, b), _)| *a >= from && *b <= to)
            .filter_map(|(_, v)| *v)
            .collect();
        (!inside.is_empty()).then(|| inside.iter().sum::<f64>() / inside.len() as f64)
    }

    /// The largest value and the start of its (first) bin.
    pub(super) fn peak(&self, values: &[Option<f64>]) -> Option<(f64, f64)> {
        self.spans
            .iter()
            .zip(values)
            .filter_map(|((a, _), v)| v.map(|v| (v, *a)))
            .fold(None, |best, (v, a)| if best.is_none_or(|(b, _)| v > b) { Some((v, a)) } else { best })
    }

    /// The spans a panel's note compares: before the first incident (or the first tenth
    /// of the window without one), and the last tenth of the window.
    pub(super) fn before_and_end(&self, incident: Option<(f64, &str)>) -> ((f64, f64, String), (f64, f64, String)) {
        let (Some(&(first, _)), Some(&(_, last))) = (self.spans.first(), self.spans.last()) else {
            return ((0.0, 0.0, String::new()), (0.0, 0.0, String::new()));
        };
        let tenth = ((last - first) / 10.0).max(self.spans[0].1 - self.spans[0].0);
        let before = match incident.filter(|(t, _)| *t > self.spans[0].1) {
            Some((t, what)) => (first, t, format!("before {what} at {}", fmt_secs(t))),
            None => (first, first + tenth, format!("over the first {}", fmt_secs(tenth))),
        };
        (before, (last - tenth, last, format!("over the last {}", fmt_secs(tenth))))
    }
}
