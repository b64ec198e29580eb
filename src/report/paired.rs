//! Paired differences against the baseline: replication r of every variant draws the
//! same random numbers (common random numbers), so variant − baseline per replication
//! cancels the noise both share. The interval of the mean of those differences is
//! what tells a small effect from noise with few replications; the unpaired intervals
//! of the two means can overlap while it excludes zero.

use std::collections::BTreeMap;

use super::data::RunSet;
use crate::human::{fmt_num, fmt_num_beside};
use crate::metrics::stats::Estimate;

/// One variant against the baseline on one metric in one sweep cell.
#[derive(Clone, Debug, PartialEq)]
pub struct PairedDiff {
    pub variant: String,
    pub point: Vec<String>,
    pub metric: String,
    pub unit: String,
    /// Mean, sd and 95 % interval of (variant − baseline) over the replications where
    /// both have a value.
    pub diff: Estimate,
}

impl PairedDiff {
    /// Whether the interval lies wholly on one side of zero; `None` without an interval.
    pub fn excludes_zero(&self) -> Option<bool> {
        self.diff.ci95.map(|(lo, hi)| lo > 0.0 || hi < 0.0)
    }
}

/// The paired differences of every other variant against the first, per cell and metric
/// in the summary's order. Only within one run: variants of different runs (`compare`)
/// need not share their random numbers.
pub fn paired(data: &RunSet) -> Vec<PairedDiff> {
    let (Some(baseline), [_]) = (data.variants.first(), data.runs.as_slice()) else {
        return Vec::new();
    };
    // (variant, point, metric) → value by replication.
    let mut values: BTreeMap<(&str, &[String], &str), BTreeMap<u32, f64>> = BTreeMap::new();
    for r in &data.replications {
        if let Some(v) = r.value.filter(|v| v.is_finite()) {
            values.entry((&r.variant, &r.point, &r.metric)).or_default().insert(r.replication, v);
        }
    }
    let mut out = Vec::new();
    for row in data.summary.iter().filter(|s| s.variant != baseline.name) {
        let key = |variant| (variant, row.point.as_slice(), row.metric.as_str());
        let (Some(base), Some(other)) = (values.get(&key(baseline.name.as_str())), values.get(&key(&row.variant)))
        else {
            continue;
        };
        let diffs: Vec<f64> = other.iter().filter_map(|(r, v)| base.get(r).map(|b| v - b)).collect();
        if let Some(diff) = Estimate::of(&diffs) {
            out.push(PairedDiff {
                variant: row.variant.clone(),
                point: row.point.clone(),
                metric: row.metric.clone(),
                unit: row.unit.clone(),
                diff,
            });
        }
    }
    out
}

/// What the section says before its table; `{baseline}` is replaced by the name.
pub const INTRO: &str = "Replication r of every variant draws the same random numbers as replication r of the \
baseline, {baseline}, so each variant is compared with it replication by replication: the mean of \
(variant − baseline) over the pairs, with its 95 % interval. Shared noise cancels, so this interval is \
narrower than the two means' intervals suggest; `zero` says whether it excludes 0 (a difference the \
replications show) or includes it.";

/// The report's table of paired differences: its header and its rows of text, grouped
/// by cell and metric so that the variants' differences on one metric sit together.
/// The last column says whether the interval excludes zero.
pub struct PairedTable {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// Differences left out because the variant equalled the baseline in every pair.
    pub equal: usize,
}

/// What the difference column reports for a variant, cell and metric, as table text.
pub fn table(data: &RunSet) -> PairedTable {
    let mut header = super::plot::short_keys(&data.sweep_keys);
    header.extend(["metric", "unit", "variant", "difference", "95 % interval", "pairs", "zero"].map(String::from));
    let points = data.points();
    let mut metrics: Vec<&str> = Vec::new();
    for r in &data.summary {
        if !metrics.contains(&r.metric.as_str()) {
            metrics.push(&r.metric);
        }
    }
    let variants = data.variant_names();
    let place = |p: &PairedDiff| {
        let at = |list: &[&str], x: &str| list.iter().position(|y| *y == x).unwrap_or(usize::MAX);
        (
            points.iter().position(|q| *q == p.point).unwrap_or(usize::MAX),
            at(&metrics, &p.metric),
            at(&variants, &p.variant),
        )
    };
    let mut diffs = paired(data);
    diffs.sort_by_key(|p| place(p));
    let all = diffs.len();
    diffs.retain(|p| !(p.diff.mean == 0.0 && p.diff.sd == Some(0.0)));
    let rows = diffs
        .into_iter()
        .map(|p| {
            let mut row = p.point.clone();
            let interval =
                p.diff.ci95.map_or("—".to_string(), |(lo, hi)| format!("{} to {}", fmt_num(lo, 3), fmt_num(hi, 3)));
            let zero = match p.excludes_zero() {
                Some(true) => "excluded",
                Some(false) => "inside",
                None => "—",
            };
            row.extend([
                p.metric,
                p.unit,
                p.variant,
                p.diff.ci95.map_or(fmt_num(p.diff.mean, 4), |(lo, hi)| fmt_num_beside(p.diff.mean, (hi - lo) / 2.0, 4)),
                interval,
                p.diff.n.to_string(),
                zero.to_string(),
            ]);
            row
        })
        .collect::<Vec<_>>();
    PairedTable { header, equal: all - rows.len(), rows }
}

/// The sentence under the table about the differences left out, if any were.
pub fn equal_note(t: &PairedTable) -> Option<String> {
    match t.equal {
        0 => None,
        1 => Some("One difference is not listed: there the variant equalled the baseline in every pair.".into()),
        n => Some(format!("{n} differences are not listed: there the variant equalled the baseline in every pair.")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::data::{ReplicationRow, RunInfo, SummaryRow, VariantInfo};

    fn rep(variant: &str, replication: u32, value: f64) -> ReplicationRow {
        ReplicationRow { variant: variant.into(), point: vec![], replication, metric: "m".into(), value: Some(value) }
    }

    fn summary(variant: &str) -> SummaryRow {
        SummaryRow {
            variant: variant.into(),
            point: vec![],
            metric: "m".into(),
            unit: "s".into(),
            n: 4,
            mean: 0.0,
            sd: None,
            ci: None,
        }
    }

    #[test]
    fn a_shift_hidden_by_shared_noise_is_found_by_pairing() {
        // The replications vary from 10 to 40 in both variants; b is always 1 higher.
        let noise = [10.0, 40.0, 20.0, 30.0];
        let mut data = RunSet {
            runs: vec![RunInfo::default()],
            variants: ["a", "b"].iter().map(|n| VariantInfo { name: n.to_string(), ..Default::default() }).collect(),
            summary: vec![summary("a"), summary("b")],
            ..Default::default()
        };
        for (r, x) in noise.iter().enumerate() {
            data.replications.push(rep("a", r as u32, *x));
            data.replications.push(rep("b", r as u32, x + 1.0 + 0.1 * r as f64));
        }
        let p = paired(&data);
        assert_eq!(p.len(), 1);
        let d = &p[0];
        assert_eq!((d.variant.as_str(), d.diff.n), ("b", 4));
        assert!((d.diff.mean - 1.15).abs() < 1e-12, "{d:?}");
        assert_eq!(d.excludes_zero(), Some(true));
        // Unpaired, the two means' intervals (±20 or so) overlap completely.
        let a = Estimate::of(&noise).unwrap().ci95.unwrap();
        assert!(a.1 - a.0 > 20.0 * (d.diff.ci95.unwrap().1 - d.diff.ci95.unwrap().0));
    }

    #[test]
    fn only_replications_both_variants_have_are_paired_and_other_runs_are_not() {
        let mut data = RunSet {
            runs: vec![RunInfo::default()],
            variants: ["a", "b"].iter().map(|n| VariantInfo { name: n.to_string(), ..Default::default() }).collect(),
            summary: vec![summary("a"), summary("b")],
            ..Default::default()
        };
        data.replications =
            vec![rep("a", 0, 1.0), rep("a", 1, 2.0), rep("a", 2, 3.0), rep("b", 1, 5.0), rep("b", 2, 5.0)];
        data.replications.push(ReplicationRow { value: None, ..rep("b", 0, 0.0) });
        let p = paired(&data);
        assert_eq!((p[0].diff.n, p[0].diff.mean), (2, 2.5));
        data.runs.push(RunInfo::default());
        assert!(paired(&data).is_empty(), "runs of compare need not share random numbers");
    }
}
