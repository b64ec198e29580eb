//! What a report says, independent of how it is written: the question, the variants and
//! the parameters that tell them apart, the metrics with their intervals, differences
//! to the baseline and the best variant per metric, and the plots. `markdown` and
//! `html` only format this.

use std::collections::{BTreeMap, BTreeSet};

use super::Better;
use super::compare::Ranking;
use super::data::RunSet;
use super::param_sets::{self, Members};
use super::plot::{Kind, Redraw, fmt_num};
use backoffsim_core::run::interrupt::Interrupted;
use backoffsim_core::worlds::catalogue;

pub struct Report {
    pub title: String,
    /// The question each run asks: `(run label, description)`; one entry when the runs
    /// share it.
    pub questions: Vec<(String, String)>,
    /// One line of facts per run (seed, replications, horizon, version).
    pub facts: Vec<String>,
    /// Variants with their descriptions, in order; the first is the baseline.
    pub variants: Vec<(String, String)>,
    /// Parameters whose values differ between variants, the first [`MAX_PARAMS`] of them.
    pub params: Vec<ParamRow>,
    /// How many more differ than `params` lists (their values are in `manifest.json`).
    pub params_more: usize,
    pub tables: Vec<MetricTable>,
    pub notes: Vec<String>,
    /// Each variant minus the baseline, replication by replication (one run only).
    pub paired: super::paired::PairedTable,
    pub plots: Vec<PlotRef>,
    /// Example commands that re-draw a plot from this run.
    pub redraw: Vec<String>,
}

pub struct ParamRow {
    pub key: String,
    /// One value per variant; `None` where the variant has no such parameter.
    pub values: Vec<Option<String>>,
}

impl ParamRow {
    /// Whether variant `i`'s value differs from the baseline's.
    pub fn differs(&self, i: usize) -> bool {
        i > 0 && self.values[i] != self.values[0]
    }
}

/// A table of metrics: without a sweep, one row per metric; with one, a table per
/// metric with one row per sweep point. Columns are the variants.
pub struct MetricTable {
    /// The metric (and its unit and direction) of a per-metric table.
    pub heading: Option<String>,
    /// Header of the first column(s): `metric` or the sweep keys.
    pub first: Vec<String>,
    /// Whether the table has the `unit` and `better` columns (one row per metric).
    pub per_metric_rows: bool,
    pub columns: Vec<String>,
    pub rows: Vec<MetricRow>,
    /// Whether a `best` column is shown (more than one variant).
    pub ranked: bool,
}

pub struct MetricRow {
    pub label: Vec<String>,
    pub unit: String,
    pub better: Option<Better>,
    pub cells: Vec<Option<Cell>>,
    pub verdict: Verdict,
}

pub struct Cell {
    /// `mean ± half-width` (or the mean alone without an interval).
    pub text: String,
    /// Replications behind the value, when fewer than the run had.
    pub n_note: Option<u64>,
    /// Relative difference to the baseline, e.g. `+12 %`; `None` in the baseline column.
    pub rel: Option<String>,
    pub best: bool,
}

pub enum Verdict {
    /// The metric has no direction.
    Unranked,
    /// Fewer than two variants have a value.
    NoContest,
    /// The best mean is not apart from another beyond chance.
    NotApart,
    /// Apart from every other variant beyond chance, or, with one replication and so no
    /// intervals, best by the mean alone.
    Best {
        name: String,
    },
    Tie(Vec<String>),
}

impl Verdict {
    pub fn text(&self) -> String {
        match self {
            Verdict::Unranked => "not ranked".into(),
            Verdict::NoContest => String::new(),
            Verdict::NotApart => super::compare::NOT_SIGNIFICANT.to_string(),
            Verdict::Best { name } => name.clone(),
            Verdict::Tie(names) => format!("tie: {}", names.join(", ")),
        }
    }
}

pub struct PlotRef {
    /// File name without extension (`rto`).
    pub stem: String,
    pub title: String,
    pub caption: String,
    /// What each panel shows, `(panel, sentence)`, for plots whose numbers differ per panel.
    pub panels: Vec<(String, String)>,
}

/// A column of a [`MetricTable`], in the order every format lays them out.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Column<'a> {
    /// One of the first columns: `metric`, or a sweep key.
    First(&'a str),
    Unit,
    Better,
    /// A variant's values; the first of several is the baseline the others are compared to.
    Variant {
        name: &'a str,
        baseline: bool,
    },
    Best,
}

/// A row's entry under one [`Column`].
#[derive(Clone, Copy)]
pub enum Entry<'a> {
    First(&'a str),
    Unit(&'a str),
    Better(Option<Better>),
    Variant(Option<&'a Cell>),
    Best(&'a Verdict),
}

impl MetricTable {
    /// The table's columns: the first ones, `unit` and `better` where each row is a
    /// metric, one per variant, and `best` where the variants are ranked.
    pub fn layout(&self) -> Vec<Column<'_>> {
        let mut out: Vec<Column<'_>> = self.first.iter().map(|f| Column::First(f)).collect();
        if self.per_metric_rows {
            out.extend([Column::Unit, Column::Better]);
        }
        let several = self.columns.len() > 1;
        out.extend(
            self.columns.iter().enumerate().map(|(i, c)| Column::Variant { name: c, baseline: i == 0 && several }),
        );
        if self.ranked {
            out.push(Column::Best);
        }
        out
    }

    /// `row`'s entries, one under each of [`MetricTable::layout`]'s columns.
    pub fn entries<'a>(&self, row: &'a MetricRow) -> Vec<Entry<'a>> {
        let mut out: Vec<Entry<'a>> = row.label.iter().map(|l| Entry::First(l)).collect();
        if self.per_metric_rows {
            out.extend([Entry::Unit(&row.unit), Entry::Better(row.better)]);
        }
        out.extend(row.cells.iter().map(|c| Entry::Variant(c.as_ref())));
        if self.ranked {
            out.push(Entry::Best(&row.verdict));
        }
        out
    }
}

/// The direction of a metric, as a table shows it.
pub fn better_text(b: Option<Better>) -> &'static str {
    match b {
        Some(Better::Lower) => "lower",
        Some(Better::Higher) => "higher",
        None => "—",
    }
}

/// `mean ± half-width`: four significant digits for the mean, two for the interval.
pub fn mean_ci(mean: f64, ci: Option<(f64, f64)>) -> String {
    match ci {
        Some((lo, hi)) => format!("{} ± {}", fmt_num(mean, 4), fmt_num((hi - lo) / 2.0, 2)),
        None => fmt_num(mean, 4),
    }
}

/// The relative difference of `v` to the baseline `base`, as `+12 %`.
pub fn relative(v: f64, base: f64) -> String {
    if v == base {
        return "±0 %".into();
    }
    if base == 0.0 {
        return format!("{}{}", if v > 0.0 { "+" } else { "" }, fmt_num(v, 3)) + " vs 0";
    }
    let r = (v - base) / base.abs() * 100.0;
    let digits = if (r * 10.0).round().abs() >= 100.0 { 0 } else { 1 };
    let s = format!("{r:+.digits$}");
    let s = if s == "+0.0" || s == "-0.0" || s == "+0" || s == "-0" {
        // Differs, but by less than the rounding: say so rather than "0".
        if r > 0.0 { "+<0.1".to_string() } else { "-<0.1".to_string() }
    } else {
        s
    };
    format!("{s} %")
}

/// Parameters a report's table lists: a variant whose path has a list of 100,000
/// blackouts of its own differs in 200,000 keys, and the table says how many it left out.
pub const MAX_PARAMS: usize = 100;

/// Builds the report of `data`; `plots` are the kinds drawn beside it. It gives up at a
/// requested interrupt, looking at the flag once per table row it builds.
pub fn build(data: &RunSet, plots: &[Kind]) -> Result<Report, Interrupted> {
    let names: Vec<String> = data.variants.iter().map(|v| v.name.clone()).collect();
    let multi_run = data.runs.len() > 1;
    let title = if multi_run {
        format!("Comparison: {}", data.runs.iter().map(|r| r.label.as_str()).collect::<Vec<_>>().join(" vs "))
    } else {
        data.runs.first().map(|r| r.scenario.clone()).unwrap_or_default()
    };
    let mut questions: Vec<(String, String)> = Vec::new();
    for r in &data.runs {
        if !questions.iter().any(|(_, d)| *d == r.description) {
            questions.push((r.label.clone(), r.description.clone()));
        }
    }
    if questions.len() == 1 {
        questions[0].0.clear();
    }
    let facts = data
        .runs
        .iter()
        .map(|r| {
            let mut parts = Vec::new();
            if multi_run {
                parts.push(format!("{} = {} ({})", r.label, r.dir.display(), r.scenario));
            }
            if let Some(s) = r.seed {
                parts.push(format!("seed {s}"));
            }
            if let Some(n) = r.replications {
                parts.push(format!("{n} replication{} per variant", if n == 1 { "" } else { "s" }));
            }
            if !r.horizon.is_empty() {
                parts.push(format!("{} of simulated time each", r.horizon));
            }
            if !r.version.is_empty() {
                parts.push(format!("backoffsim {}", r.version));
            }
            if r.scenario_sha256.len() >= 12 {
                parts.push(format!("scenario sha256 {}", &r.scenario_sha256[..12]));
            }
            parts.join(" · ")
        })
        .collect();
    let variants = data.variants.iter().map(|v| (v.name.clone(), v.description.clone())).collect();

    let mut notes = Vec::new();
    let mut params = param_rows(data)?;
    let params_more = params.len().saturating_sub(MAX_PARAMS);
    params.truncate(MAX_PARAMS);
    let listing = super::numbered::listing(&data.metrics(), &super::models(data))?;
    let (tables, table_notes) = metric_tables(data, &names, &listing.listed)?;
    notes.extend(table_notes);
    notes.extend(listing.notes);

    let plot_refs = plots.iter().map(|k| plot_ref(*k, data)).collect::<Result<_, _>>()?;
    // `plot` draws from one run: name the first run and its own variant names.
    let dir = data.runs.first().map(|r| shell_word(&r.dir.display().to_string())).unwrap_or_default();
    let first_variant = data
        .variants
        .first()
        .map(|v| {
            let label = &data.runs[v.run].label;
            v.name.strip_prefix(&format!("{label}:")).filter(|_| !label.is_empty()).unwrap_or(&v.name).to_string()
        })
        .unwrap_or_default();
    let first_metric = data.metrics().first().map(|m| m.0.clone()).unwrap_or_default();
    // A window worth zooming into: the link coming back, or an RTT change.
    let (from, to) = data
        .variants
        .first()
        .and_then(|v| v.blackouts.first().map(|b| b.1).or(v.rtt_changes.first().map(|c| c.0)))
        .map(|t| ((t - 5.0).max(0.0), t + 10.0))
        .unwrap_or((0.0, data.horizon_s().unwrap_or(60.0) / 4.0));
    let (from, to) = (fmt_num(from, 4), fmt_num(to, 4));
    // With a sweep, the per-cell plots redraw one cell: the last, often the extreme.
    let cell = match (data.sweep_keys.first(), data.points().last()) {
        (Some(_), Some(p)) if !p[0].is_empty() && !p[0].contains(char::is_whitespace) => {
            format!(" --cell {}={}", super::plot::short_keys(&data.sweep_keys)[0], p[0])
        }
        _ => String::new(),
    };
    let context =
        Redraw { dir: &dir, variant: &first_variant, cell: &cell, from: &from, to: &to, metric: &first_metric };
    let redraw = plots.iter().map(|k| k.redraw(&context)).collect();
    let paired = super::paired::table(data, &listing.listed)?;
    Ok(Report {
        title,
        questions,
        facts,
        variants,
        params,
        params_more,
        tables,
        notes,
        paired,
        plots: plot_refs,
        redraw,
    })
}

/// `word` as one shell word: as it is when it is plain, else in single quotes.
fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./:@%+=,".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// Parameters whose values are not the same for every variant, in the manifest's key
/// order. With several runs, the run-level settings (scenario, seed, replications,
/// horizon, version, scenario hash) are compared too.
fn param_rows(data: &RunSet) -> Result<Vec<ParamRow>, Interrupted> {
    if data.variants.len() < 2 {
        return Ok(Vec::new());
    }
    let run_level = |r: &super::data::RunInfo| -> Vec<(String, String)> {
        let mut out = vec![("scenario".to_string(), r.scenario.clone())];
        if let Some(s) = r.seed {
            out.push(("seed".into(), s.to_string()));
        }
        if let Some(s) = r.replications {
            out.push(("replications".into(), s.to_string()));
        }
        out.push(("horizon".into(), r.horizon.clone()));
        out.push(("backoffsim_version".into(), r.version.clone()));
        out.push(("scenario_sha256".into(), r.scenario_sha256.chars().take(12).collect()));
        out
    };
    let runs: Vec<Vec<(String, String)>> = data.runs.iter().map(run_level).collect();
    // Every variant's parameters by key, the first value of a key where it has several,
    // and every key in order of first appearance: a path with 100,000 blackouts has
    // 200,000 keys, each looked up once per variant.
    // A list that is a set (`retry_on[0]`, `retry_on[1]`…) is one row, its members
    // gathered per variant (see `param_sets`).
    let mut keys: Vec<&str> = Vec::new();
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    let mut by_key: Vec<BTreeMap<&str, &str>> = Vec::new();
    let mut sets: Vec<BTreeMap<&str, Members<'_>>> = Vec::new();
    for v in &data.variants {
        let mut m = BTreeMap::new();
        let mut own_sets: BTreeMap<&str, Members<'_>> = BTreeMap::new();
        for (k, value) in runs.get(v.run).into_iter().flatten().chain(&v.params) {
            backoffsim_core::run::interrupt::check()?;
            let (k, member) = match param_sets::member_of(k) {
                Some(base) => (base, Some(value.as_str())),
                // An empty list is flattened to `[]`: a set without members.
                None if value == "[]" && param_sets::is_set(k) => (k.as_str(), None),
                None => (k.as_str(), Some(value.as_str())),
            };
            if seen.insert(k) {
                keys.push(k);
            }
            if param_sets::is_set(k) {
                let set = own_sets.entry(k).or_default();
                member.into_iter().for_each(|x| set.add(x));
            } else if let Some(value) = member {
                m.entry(k).or_insert(value);
            }
        }
        by_key.push(m);
        sets.push(own_sets);
    }
    let names: Vec<&str> = data.variants.iter().map(|v| v.name.as_str()).collect();
    let mut rows = Vec::new();
    for key in keys {
        backoffsim_core::run::interrupt::check()?;
        if param_sets::is_set(key) {
            let of: Vec<Option<Members<'_>>> = sets.iter().map(|s| s.get(key).cloned()).collect();
            if param_sets::differ(&of) {
                rows.push(ParamRow { key: key.to_string(), values: param_sets::cells(&of, &names) });
            }
            continue;
        }
        let values: Vec<Option<&str>> = by_key.iter().map(|p| p.get(key).copied()).collect();
        if values.iter().any(|v| *v != values[0]) {
            rows.push(ParamRow {
                key: key.to_string(),
                values: values.into_iter().map(|v| v.map(String::from)).collect(),
            });
        }
    }
    Ok(rows)
}

fn plot_ref(kind: Kind, data: &RunSet) -> Result<PlotRef, Interrupted> {
    let (title, caption) = kind.caption(data)?;
    let panels = kind.panels(data);
    backoffsim_core::run::interrupt::check()?;
    Ok(PlotRef { stem: kind.name().to_string(), title, caption, panels })
}

fn label_of(keys: &[String], point: &[String]) -> Vec<String> {
    keys.iter().zip(point).map(|(_, v)| if v.is_empty() { "—".to_string() } else { v.clone() }).collect()
}

mod tables;

use tables::metric_tables;
pub use tables::point_text;
#[cfg(test)]
use tables::verdict;

#[cfg(test)]
mod tests;
