//! The report's metric tables: per metric, each variant's mean and interval, its
//! difference to the baseline, and the verdict on which variant is best, with the notes
//! that explain the marks.

use super::*;

/// The metric tables of the `listed` metrics and the notes that explain their marks.
pub(super) fn metric_tables(
    data: &RunSet,
    names: &[String],
    listed: &BTreeSet<String>,
) -> Result<(Vec<MetricTable>, Vec<String>), Interrupted> {
    let mut metrics = data.metrics();
    metrics.retain(|(m, _)| listed.contains(m));
    let models = crate::models(data);
    let points = data.points();
    let sweep = !data.sweep_keys.is_empty();
    let ranked = names.len() > 1;
    let max_n = data.summary.iter().map(|r| r.n).max().unwrap_or(0);
    let mut notes = Vec::new();
    let mut any_overlap = false;
    let mut any_no_ci = false;
    let mut any_n = false;
    let mut missing: Vec<(String, Vec<String>)> = Vec::new();

    let index = data.stats()?;
    let pairs = crate::compare::Pairs::of(data, &|m| listed.contains(m))?;
    let mut row_for = |metric: &str, unit: &str, point: &[String], label: Vec<String>| {
        let stats: Vec<Option<&crate::data::SummaryRow>> = names.iter().map(|v| index.get(v, point, metric)).collect();
        let base = stats.first().copied().flatten();
        let better = catalogue::better(metric, &models);
        let interval = |i: usize, j: usize| pairs.interval(data, &stats, i, j, point, metric);
        let verdict = verdict(names, &stats, better, interval);
        if let Verdict::NotApart = verdict {
            any_overlap = true;
        }
        if stats.iter().flatten().any(|s| s.ci.is_none()) {
            any_no_ci = true;
        }
        // A set: every one of thousands of variants can tie.
        let best_names: BTreeSet<&str> = match &verdict {
            Verdict::Best { name } => BTreeSet::from([name.as_str()]),
            Verdict::Tie(n) => n.iter().map(String::as_str).collect(),
            _ => BTreeSet::new(),
        };
        let lacking: Vec<String> =
            names.iter().zip(&stats).filter(|(_, s)| s.is_none()).map(|(n, _)| n.clone()).collect();
        // Every variant lacking it is said too when the run lists the metric without a value.
        let listed_empty = || data.absent.iter().any(|r| r.metric == metric && r.point == point);
        if !lacking.is_empty() && (lacking.len() < names.len() || listed_empty()) {
            let what = if point.iter().any(|p| !p.is_empty()) {
                format!("{metric} at {}", point_text(&data.sweep_keys, point))
            } else {
                metric.to_string()
            };
            missing.push((what, lacking));
        }
        let cells = names
            .iter()
            .zip(&stats)
            .enumerate()
            .map(|(i, (name, s))| {
                s.map(|s| {
                    let n_note = (s.n < max_n).then_some(s.n);
                    if n_note.is_some() {
                        any_n = true;
                    }
                    Cell {
                        text: mean_ci(s.mean, s.ci),
                        n_note,
                        rel: match base {
                            Some(b) if i > 0 => Some(relative(s.mean, b.mean)),
                            _ => None,
                        },
                        best: ranked && best_names.contains(&name.as_str()),
                    }
                })
            })
            .collect();
        MetricRow { label, unit: unit.to_string(), better, cells, verdict }
    };

    let mut tables = Vec::new();
    if !sweep {
        let point = points.first().cloned().unwrap_or_default();
        let mut rows = Vec::new();
        for (m, u) in &metrics {
            backoffsim_core::run::interrupt::check()?;
            rows.push(row_for(m, u, &point, vec![metric_label(m, &models)]));
        }
        tables.push(MetricTable {
            heading: None,
            first: vec!["metric".into()],
            per_metric_rows: true,
            columns: names.to_vec(),
            rows,
            ranked,
        });
    } else {
        for (m, u) in &metrics {
            let mut rows: Vec<MetricRow> = Vec::new();
            let shown = |p: &Vec<String>| {
                names.iter().any(|v| index.get(v, p, m).is_some())
                    || data.absent.iter().any(|r| &r.metric == m && &r.point == p)
            };
            for p in points.iter().filter(|p| shown(p)) {
                backoffsim_core::run::interrupt::check()?;
                rows.push(row_for(m, u, p, label_of(&data.sweep_keys, p)));
            }
            tables.push(MetricTable {
                heading: Some(catalogue::heading(m, u, &models)),
                first: data.sweep_keys.clone(),
                per_metric_rows: false,
                columns: names.to_vec(),
                rows,
                ranked,
            });
        }
    }
    if ranked {
        notes.push(
            "Best: the variant with the best mean, for metrics where lower or higher is clearly \
             better (as the table says), named only where the 95 % interval of its difference \
             to every other variant excludes zero (paired replication by replication within a \
             run, Welch's between runs); others are not ranked."
                .to_string(),
        );
    }
    if any_overlap {
        notes.push(
            "No significant difference: the best mean is within chance of another variant's at \
             this number of replications."
                .to_string(),
        );
    }
    if any_no_ci {
        notes.push(
            "Values without ± come from a single replication: there is no confidence interval, \
             and a best variant is by the mean alone."
                .to_string(),
        );
    }
    if any_n {
        notes.push(format!(
            "(n = k): only k of the {max_n} replications had a value (e.g. the estimate never \
             converged in the others); the mean is over those k."
        ));
    }
    for (what, lacking) in missing {
        notes.push(if data.runs.len() > 1 {
            format!(
                "`{what}` has no value for {} (—): that run does not measure it, or none of \
                 its replications had a value.",
                lacking.join(", ")
            )
        } else {
            let metric = what.split(' ').next().unwrap_or_default();
            format!("`{what}` has no value for {} (—): {}.", lacking.join(", "), catalogue::no_value(metric))
        });
    }
    Ok((tables, notes))
}

/// A metric as a table row names it: its title and its id, which is what
/// `summary.csv` and `plot --metric` use (`Peak attempt rate (peak_attempt_rate)`).
fn metric_label(id: &str, models: &[catalogue::ModelId]) -> String {
    let title = catalogue::title(id, models);
    if title == id { id.to_string() } else { format!("{title} ({id})") }
}

pub fn point_text(keys: &[String], point: &[String]) -> String {
    keys.iter().zip(point).map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(", ")
}

/// `interval(i, j)`: the 95 % interval of variant `i`'s mean minus variant `j`'s.
pub(super) fn verdict(
    names: &[String],
    stats: &[Option<&crate::data::SummaryRow>],
    better: Option<Better>,
    interval: impl Fn(usize, usize) -> Option<(f64, f64)>,
) -> Verdict {
    let Some(better) = better else {
        return Verdict::Unranked;
    };
    let have: Vec<(&String, &crate::data::SummaryRow)> =
        names.iter().zip(stats).filter_map(|(n, s)| s.map(|s| (n, s))).collect();
    if have.len() < 2 {
        return Verdict::NoContest;
    }
    let best = have
        .iter()
        .map(|(_, s)| s.mean)
        .reduce(|a, b| match better {
            Better::Lower => a.min(b),
            Better::Higher => a.max(b),
        })
        .unwrap_or(f64::NAN);
    let same = |v: f64| (v - best).abs() <= 1e-12 * best.abs().max(1e-300);
    let tied: Vec<String> = have.iter().filter(|(_, s)| same(s.mean)).map(|(n, _)| (*n).clone()).collect();
    if tied.len() > 1 {
        return Verdict::Tie(tied);
    }
    // The same rule as `compare`'s table: a variant is best only where the 95 % interval
    // of its difference to every other excludes zero.
    match crate::compare::rank(stats, better, interval) {
        Some(Ranking::NotApart) => Verdict::NotApart,
        Some(Ranking::Apart(i) | Ranking::Untested(i)) => Verdict::Best { name: names[i].clone() },
        None => Verdict::NoContest,
    }
}
