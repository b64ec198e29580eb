//! `compare`: one report across finished runs, written atomically into a directory.
//!
//! Runs of different models are refused. Their metrics with the same name measure
//! different things (`timeouts` is an RTO expiry for TCP and a connection attempt that
//! hit its deadline for gRPC; `calls` counts client calls in `calls` and every write,
//! retries included, in `occ`), so a table that put them side by side would mislead: a comparison
//! is made only of runs that simulate the same model.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use super::data::{RunSet, SummaryRow};
use super::{Better, ReportError, significance, write_report};
use crate::output::terminal::{Value, Wide};
use backoffsim_core::run::destination::{Destination, ownership};
use backoffsim_core::run::interrupt::Interrupted;
use backoffsim_core::worlds::catalogue;

/// Loads `runs` (each one's variants labelled by run) and refuses runs of different
/// models.
pub fn load(runs: &[PathBuf]) -> Result<RunSet, ReportError> {
    let data = RunSet::load_many(runs)?;
    check_same_model(&data)?;
    Ok(data)
}

/// Writes the plots and reports of `data` into the claimed `dest` (replacing it only
/// once all is written). Returns the files written.
pub fn write(data: &RunSet, dest: &Destination) -> Result<Vec<String>, ReportError> {
    let out = dest.path();
    let staging = dest.stage().map_err(|e| ReportError::io(out, e))?;
    // The signature is what lets a later `compare -o` here replace this report: a
    // report.md without one is taken for a user's.
    let signature = format!("\n{}\n", ownership::report_signature("compare"));
    let files = write_report(data, &mut |name, bytes| {
        if name == "report.md" {
            staging.write(name, &[bytes, signature.as_bytes()].concat())
        } else {
            staging.write(name, bytes)
        }
    })?;
    backoffsim_core::run::interrupt::check()?;
    staging.commit().map_err(|e| ReportError::io(out, e))?;
    Ok(files)
}

/// What the `best` column says where the best mean is not clearly apart from another.
pub const NOT_SIGNIFICANT: &str = "no significant difference";

/// What it says where a variant has a single replication: no interval, so no test.
pub const UNTESTED: &str = "— (1 replication)";

/// The runs side by side, as `compare` prints them: a row per metric (and sweep cell)
/// that `keeps` keeps, a column per labelled variant, and the best variant where its
/// difference to every other is significant (see [`best`]).
pub fn table(data: &RunSet, keeps: &dyn Fn(&str) -> bool) -> Result<Wide, Interrupted> {
    let names: Vec<String> = data.variants.iter().map(|v| v.name.clone()).collect();
    let entries = data.summary.iter().filter(|r| keeps(&r.metric)).map(|r| {
        (
            r.variant.as_str(),
            r.point.as_slice(),
            r.metric.as_str(),
            r.unit.as_str(),
            (r.n > 0).then_some(Value { mean: r.mean, ci95: r.ci }),
        )
    });
    let mut wide = Wide::of(&super::plot::short_keys(&data.sweep_keys), &names, entries);
    wide.ranked = names.len() > 1;
    let models = super::models(data);
    let index = data.stats()?;
    let pairs = Pairs::of(data, keeps)?;
    for row in &mut wide.rows {
        backoffsim_core::run::interrupt::check()?;
        let stats: Vec<Option<&SummaryRow>> = names.iter().map(|n| index.get(n, &row.point, &row.metric)).collect();
        let interval = |i: usize, j: usize| pairs.interval(data, &stats, i, j, &row.point, &row.metric);
        let verdict = best(&names, &stats, catalogue::better(&row.metric, &models), interval);
        row.best = verdict;
    }
    Ok(wide)
}

/// Each variant's values by replication, so that the variants of one run, which share
/// their random numbers, are compared pair by pair.
pub struct Pairs<'a>(BTreeMap<(&'a str, &'a [String], &'a str), BTreeMap<u32, f64>>);

impl<'a> Pairs<'a> {
    pub fn of(data: &'a RunSet, keeps: &dyn Fn(&str) -> bool) -> Result<Self, Interrupted> {
        let mut values: BTreeMap<(&str, &[String], &str), BTreeMap<u32, f64>> = BTreeMap::new();
        for r in data.replications.iter().filter(|r| keeps(&r.metric)) {
            backoffsim_core::run::interrupt::check()?;
            if let Some(v) = r.value {
                values.entry((&r.variant, &r.point, &r.metric)).or_default().insert(r.replication, v);
            }
        }
        Ok(Pairs(values))
    }

    /// The 95 % interval of variant `i`'s mean minus variant `j`'s (indices into
    /// `data.variants` and `stats`): paired where both are of one run and their
    /// replications are at hand, Welch's otherwise.
    pub fn interval(
        &self,
        data: &RunSet,
        stats: &[Option<&SummaryRow>],
        i: usize,
        j: usize,
        point: &[String],
        metric: &str,
    ) -> Option<(f64, f64)> {
        let (a, b) = (stats[i]?, stats[j]?);
        let (vi, vj) = (&data.variants[i], &data.variants[j]);
        match (self.0.get(&(vi.name.as_str(), point, metric)), self.0.get(&(vj.name.as_str(), point, metric))) {
            (Some(x), Some(y)) if vi.run == vj.run => significance::paired(x, y),
            _ => significance::welch((a.n, a.mean, a.sd), (b.n, b.mean, b.sd)),
        }
    }
}

/// How the variant with the best mean stands against every other.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ranking {
    /// The 95 % interval of its difference to every other variant excludes zero.
    Apart(usize),
    /// One such interval includes zero.
    NotApart,
    /// An interval cannot be computed (one replication): best by the mean alone.
    Untested(usize),
}

/// The best variant's [`Ranking`]; `None` when fewer than two variants have a value.
pub fn rank(
    stats: &[Option<&SummaryRow>],
    better: Better,
    interval: impl Fn(usize, usize) -> Option<(f64, f64)>,
) -> Option<Ranking> {
    let mut have: Vec<usize> = (0..stats.len()).filter(|&i| stats[i].is_some()).collect();
    if have.len() < 2 {
        return None;
    }
    let mean = |i: usize| stats[i].map_or(f64::NAN, |s| s.mean);
    // Best first; the sort is stable, so equal means keep the variants' order.
    have.sort_by(|&a, &b| match better {
        Better::Lower => mean(a).total_cmp(&mean(b)),
        Better::Higher => mean(b).total_cmp(&mean(a)),
    });
    let top = have[0];
    let apart: Vec<Option<bool>> =
        have[1..].iter().map(|&j| interval(top, j).map(significance::excludes_zero)).collect();
    Some(if apart.contains(&Some(false)) {
        Ranking::NotApart
    } else if apart.contains(&None) {
        Ranking::Untested(top)
    } else {
        Ranking::Apart(top)
    })
}

/// The variant with the best mean, named only when the 95 % interval of its difference
/// to every other variant excludes zero; [`NOT_SIGNIFICANT`] when one includes it,
/// [`UNTESTED`] when one cannot be computed; empty when the metric has no better
/// direction or fewer than two variants have a value.
pub fn best(
    names: &[String],
    stats: &[Option<&SummaryRow>],
    better: Option<Better>,
    interval: impl Fn(usize, usize) -> Option<(f64, f64)>,
) -> String {
    match better.and_then(|better| rank(stats, better, interval)) {
        None => String::new(),
        Some(Ranking::Apart(i)) => names[i].clone(),
        Some(Ranking::NotApart) => NOT_SIGNIFICANT.to_string(),
        Some(Ranking::Untested(_)) => UNTESTED.to_string(),
    }
}

/// The model each run simulated (`tcp`, `grpc`, `occ`, `calls`; several joined by `+`
/// should one run mix them), in run order.
pub fn run_models(data: &RunSet) -> Vec<String> {
    (0..data.runs.len())
        .map(|i| {
            let models: BTreeSet<&str> = data
                .variants
                .iter()
                .filter(|v| v.run == i)
                .filter_map(|v| v.params.iter().find(|(k, _)| k == "model").map(|(_, m)| m.as_str()))
                .collect();
            if models.is_empty() { "unknown".to_string() } else { models.into_iter().collect::<Vec<_>>().join("+") }
        })
        .collect()
}

/// Refuses runs of different models, naming each run's model and any metric names they
/// share only by name.
pub fn check_same_model(data: &RunSet) -> Result<(), ReportError> {
    let models = run_models(data);
    if models.iter().collect::<BTreeSet<_>>().len() <= 1 {
        return Ok(());
    }
    let metrics_of = |i: usize| -> BTreeSet<&str> {
        data.summary
            .iter()
            .filter(|r| data.variant(&r.variant).is_some_and(|v| v.run == i))
            .map(|r| r.metric.as_str())
            .collect()
    };
    let mut shared = metrics_of(0);
    for i in 1..data.runs.len() {
        let theirs = metrics_of(i);
        shared.retain(|m| theirs.contains(m));
    }
    let runs: Vec<String> =
        data.runs.iter().zip(&models).map(|(r, m)| format!("{} ran model `{m}`", r.dir.display())).collect();
    let why = if shared.is_empty() {
        "they share no metric".to_string()
    } else {
        format!(
            "the metric names they share ({}) measure different things in each model",
            shared.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(", ")
        )
    };
    Err(ReportError::Incomparable(format!(
        "cannot compare runs of different models: {}; {why}. Compare runs of one model \
         (e.g. one scenario with two seeds, or two scenarios of the same model)",
        runs.join(", ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(mean: f64) -> SummaryRow {
        SummaryRow {
            variant: String::new(),
            point: vec![],
            metric: "m".into(),
            unit: "s".into(),
            n: 3,
            mean,
            sd: Some(1.0),
            ci: None,
        }
    }

    /// A best variant is one whose difference to every other is significant at 95 %:
    /// the interval of the difference excludes 0. Otherwise none is named.
    #[test]
    fn the_best_is_named_only_when_its_difference_to_every_other_excludes_zero() {
        let names: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
        let (a, b, c) = (row(1.0), row(5.0), row(9.0));
        let stats = [Some(&a), Some(&b), Some(&c)];
        let apart = |_: usize, _: usize| Some((-5.0, -3.0));
        assert_eq!(best(&names, &stats, Some(Better::Lower), apart), "a");
        assert_eq!(best(&names, &stats, Some(Better::Higher), apart), "c");
        // `a` is apart from `c` but not from `b`: no best.
        let near = |_: usize, j: usize| Some(if j == 1 { (-5.0, 0.5) } else { (-9.0, -7.0) });
        assert_eq!(best(&names, &stats, Some(Better::Lower), near), NOT_SIGNIFICANT);
        // Without an interval (one replication), there is no test.
        assert_eq!(best(&names, &stats, Some(Better::Lower), |_, _| None), UNTESTED);
        // No direction, or one value alone: nothing to rank.
        assert_eq!(best(&names, &stats, None, apart), "");
        assert_eq!(best(&names, &[Some(&a), None, None], Some(Better::Lower), apart), "");
    }
}
