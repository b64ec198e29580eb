//! Paired differences against the baseline: replication r of every variant draws the
//! same random numbers (common random numbers), so variant − baseline per replication
//! cancels the noise both share. The interval of the mean of those differences is
//! what tells a small effect from noise with few replications; the unpaired intervals
//! of the two means can overlap while it excludes zero.

use std::collections::{BTreeMap, BTreeSet};

use super::data::RunSet;
use backoffsim_core::human::{fmt_num, fmt_num_beside};
use backoffsim_core::metrics::stats::Estimate;
use backoffsim_core::run::interrupt::Interrupted;

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
pub fn paired(data: &RunSet) -> Result<Vec<PairedDiff>, Interrupted> {
    let (Some(baseline), [_]) = (data.variants.first(), data.runs.as_slice()) else {
        return Ok(Vec::new());
    };
    // (variant, point, metric) → value by replication.
    let mut values: BTreeMap<(&str, &[String], &str), BTreeMap<u32, f64>> = BTreeMap::new();
    for r in &data.replications {
        backoffsim_core::run::interrupt::check()?;
        if let Some(v) = r.value.filter(|v| v.is_finite()) {
            values.entry((&r.variant, &r.point, &r.metric)).or_default().insert(r.replication, v);
        }
    }
    let mut out = Vec::new();
    for row in data.summary.iter().filter(|s| s.variant != baseline.name) {
        backoffsim_core::run::interrupt::check()?;
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
    Ok(out)
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
    /// Differences left out beyond the first [`MAX_ROWS`].
    pub more: usize,
}

/// Differences the table lists: a run of 40,000 variants has hundreds of thousands, a
/// table nobody reads, and the report says how many it left out.
pub const MAX_ROWS: usize = 1000;

/// What the difference column reports for a variant, cell and metric, as table text.
/// Only the `listed` metrics are in it (see [`super::numbered`]). It gives up at a
/// requested interrupt, looking at the flag once per difference.
pub fn table(data: &RunSet, listed: &BTreeSet<String>) -> Result<PairedTable, Interrupted> {
    let mut header = super::plot::short_keys(&data.sweep_keys);
    header.extend(["metric", "unit", "variant", "difference", "95 % interval", "pairs", "zero"].map(String::from));
    // Each point, metric and variant by its place in the run: looked up, not searched,
    // once per difference.
    fn places<'a>(items: impl Iterator<Item = &'a str>) -> BTreeMap<&'a str, usize> {
        let mut out = BTreeMap::new();
        for item in items {
            let next = out.len();
            out.entry(item).or_insert(next);
        }
        out
    }
    let points = data.points();
    let mut point_at: BTreeMap<&[String], usize> = BTreeMap::new();
    for (i, p) in points.iter().enumerate() {
        point_at.entry(p.as_slice()).or_insert(i);
    }
    let metrics = places(data.summary.iter().map(|r| r.metric.as_str()));
    let variants = places(data.variants.iter().map(|v| v.name.as_str()));
    let place = |p: &PairedDiff| {
        let at = |map: &BTreeMap<&str, usize>, x: &str| map.get(x).copied().unwrap_or(usize::MAX);
        (
            point_at.get(p.point.as_slice()).copied().unwrap_or(usize::MAX),
            at(&metrics, &p.metric),
            at(&variants, &p.variant),
        )
    };
    let diffs = paired(data)?;
    // Each listed difference's place, and its index to keep equal places in order; only
    // the first MAX_ROWS are sorted, so 800,000 differences cost little more than a pass.
    let mut keyed: Vec<((usize, usize, usize), usize)> = Vec::new();
    let mut equal = 0;
    for (i, p) in diffs.iter().enumerate() {
        backoffsim_core::run::interrupt::check()?;
        if !listed.contains(&p.metric) {
            continue;
        }
        if p.diff.mean == 0.0 && p.diff.sd == Some(0.0) {
            equal += 1;
        } else {
            keyed.push((place(p), i));
        }
    }
    let more = keyed.len().saturating_sub(MAX_ROWS);
    if more > 0 {
        keyed.select_nth_unstable(MAX_ROWS);
        keyed.truncate(MAX_ROWS);
    }
    keyed.sort_unstable();
    let mut diffs: Vec<Option<PairedDiff>> = diffs.into_iter().map(Some).collect();
    let diffs: Vec<PairedDiff> = keyed.into_iter().filter_map(|(_, i)| diffs[i].take()).collect();
    let mut rows = Vec::with_capacity(diffs.len());
    for p in diffs {
        backoffsim_core::run::interrupt::check()?;
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
        rows.push(row);
    }
    Ok(PairedTable { header, rows, equal, more })
}

/// The sentence under the table about the differences left out, if any were.
pub fn equal_note(t: &PairedTable) -> Option<String> {
    match t.equal {
        0 => None,
        1 => Some("One difference is not listed: there the variant equalled the baseline in every pair.".into()),
        n => Some(format!("{n} differences are not listed: there the variant equalled the baseline in every pair.")),
    }
}

/// The sentence under the table about the differences beyond its last row, if any.
pub fn more_note(t: &PairedTable) -> Option<String> {
    (t.more > 0).then(|| {
        format!(
            "The first {MAX_ROWS} differences are listed, and {} more are not: replications.csv holds every \
             replication's values to pair.",
            t.more
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{ReplicationRow, RunInfo, SummaryRow, VariantInfo};

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
        let p = paired(&data).unwrap();
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
    fn the_table_lists_the_first_differences_in_the_runs_order_and_counts_the_rest() {
        // A baseline and 1,200 variants, each 0.5 above it, one of them equal to it; the
        // variants listed in an order their names do not sort in.
        let names: Vec<String> =
            std::iter::once("base".to_string()).chain((0..1200).map(|i| format!("v{}", (i * 7) % 1200))).collect();
        let mut data = RunSet {
            runs: vec![RunInfo::default()],
            variants: names.iter().map(|n| VariantInfo { name: n.clone(), ..Default::default() }).collect(),
            summary: names.iter().map(|n| summary(n)).collect(),
            ..Default::default()
        };
        for (i, n) in names.iter().enumerate() {
            for r in 0..3 {
                let shift = if i == 0 || n == "v600" { 0.0 } else { 0.5 };
                data.replications.push(rep(n, r, f64::from(r) + shift));
            }
        }
        let all = BTreeSet::from(["m".to_string()]);
        let t = table(&data, &all).unwrap();
        assert_eq!((t.rows.len(), t.more, t.equal), (MAX_ROWS, 1199 - MAX_ROWS, 1));
        let listed: Vec<&str> = t.rows.iter().map(|r| r[2].as_str()).collect();
        let expected: Vec<&str> =
            names[1..].iter().map(String::as_str).filter(|n| *n != "v600").take(MAX_ROWS).collect();
        assert_eq!(listed, expected, "the variants' order in the run, not their names'");
        assert!(more_note(&t).is_some_and(|n| n.contains("199 more")), "{:?}", more_note(&t));
        // Nothing was cut from a table of a few rows.
        let kept = |v: &str| ["base", "v0", "v7"].contains(&v);
        let mut few = data.clone();
        few.variants.retain(|v| kept(&v.name));
        few.summary.retain(|r| kept(&r.variant));
        few.replications.retain(|r| kept(&r.variant));
        let few = table(&few, &all).unwrap();
        assert_eq!((few.rows.len(), few.more), (2, 0));
        assert_eq!(more_note(&few), None);
        // An unlisted metric (a numbered family cut short) has no rows.
        assert!(table(&data, &BTreeSet::new()).unwrap().rows.is_empty());
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
        let p = paired(&data).unwrap();
        assert_eq!((p[0].diff.n, p[0].diff.mean), (2, 2.5));
        data.runs.push(RunInfo::default());
        assert!(paired(&data).unwrap().is_empty(), "runs of compare need not share random numbers");
    }
}
