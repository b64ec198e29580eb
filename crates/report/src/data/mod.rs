//! What plots and reports read: everything they show is what the files of a run
//! directory hold (`manifest.json`, `summary.csv`, `trace.csv`, and, where the model
//! writes them, `attempts.csv` and `cdf.csv`), never more from the engine, so `plot` and
//! `compare` work on runs made earlier, elsewhere or by another version. A run hands the
//! same values over in memory (`output::handover`) rather than re-reading its files.
//!
//! Several runs load into one [`RunSet`] whose variants are labelled by run
//! (`run1:linux`), so a comparison across runs is the same report as one run's.

mod manifest_facts;
mod readers;

pub use manifest_facts::of_manifest;
#[cfg(test)]
use manifest_facts::{facts_of, flatten, variant_info};
pub use readers::metric_order;
use readers::{read_attempts, read_cdf, read_replications, read_series, read_summary, read_trace};

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::ReportError;
use super::manifest::{self, Bounds};
use super::table::Table;
use backoffsim_core::engine::time::SimDuration;

/// One run directory's manifest-level facts.
#[derive(Clone, Debug, Default)]
pub struct RunInfo {
    /// How this run's variants are prefixed in a comparison (empty for a single run).
    pub label: String,
    pub dir: PathBuf,
    pub scenario: String,
    pub description: String,
    pub seed: Option<u64>,
    pub replications: Option<u64>,
    /// The horizon as the manifest writes it (`1min`).
    pub horizon: String,
    pub horizon_s: Option<f64>,
    pub version: String,
    pub scenario_sha256: String,
}

/// A variant of one run, with its resolved parameters.
#[derive(Clone, Debug, Default)]
pub struct VariantInfo {
    /// The name plots and tables show: `linux`, or `run1:linux` in a comparison.
    pub name: String,
    /// Index into [`RunSet::runs`].
    pub run: usize,
    pub description: String,
    /// The resolved model spec flattened to dotted keys, in the manifest's key order.
    pub params: Vec<(String, String)>,
    /// Blackouts `(start, end)` in seconds, from `parameters.path.blackout`.
    pub blackouts: Vec<(f64, f64)>,
    /// The path's base RTT and its scheduled changes `(at, rtt)`, in seconds.
    pub base_rtt: Option<f64>,
    pub rtt_changes: Vec<(f64, f64)>,
    /// Every sweep cell of the variant with what plots draw behind its data; one cell
    /// (with an empty point) without a sweep.
    pub cells: Vec<CellInfo>,
}

/// One sweep cell of a variant.
#[derive(Clone, Debug, PartialEq)]
pub struct CellInfo {
    /// The swept values, in [`RunSet::sweep_keys`] order.
    pub point: Vec<String>,
    pub facts: CellFacts,
}

/// The schedules of one cell, in seconds: a swept value can move any of them, so plots
/// take them per cell.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CellFacts {
    /// Path blackouts `(start, end)`.
    pub blackouts: Vec<(f64, f64)>,
    pub base_rtt: Option<f64>,
    /// Scheduled path RTT changes `(at, rtt)`.
    pub rtt_changes: Vec<(f64, f64)>,
    /// When the server is down: restarts and outages, in time order.
    pub down: Vec<Down>,
    /// Whether the down server answers nothing (`down_behavior = "blackhole"`), so the
    /// attempts it gets are neither accepted nor refused.
    pub down_silent: bool,
    /// Whether a full accept queue drops SYNs (`overload = "drop"`) instead of refusing.
    pub overload_drops: bool,
    /// When the calls model's first calls start.
    pub calls_start: Option<CallsStart>,
    /// When the server serves slowly or fails some calls (`server.brownout`).
    pub brownouts: Vec<Brownout>,
    /// When the jobs model's first provider is down (`jobs.provider[0].down`), `(from, to)`.
    pub provider_down: Vec<(f64, f64)>,
    /// The retries' share of server calls above which the calls model's monitor alerts
    /// (`calls.monitor.retry_share_alert`), a fraction.
    pub retry_share_alert: Option<f64>,
}

/// A span in which the server is degraded but up.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Brownout {
    pub from: f64,
    pub to: f64,
    /// The share of calls it fails, and how many times slower it serves the rest.
    pub fail_fraction: Option<f64>,
    pub slowdown: Option<f64>,
}

/// A span in which the server answers nobody.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Down {
    pub from: f64,
    pub to: f64,
    /// A restart, which drops every connection as it begins (an outage does not).
    pub restart: bool,
}

/// When the calls model's clients make their first calls.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CallsStart {
    pub at: f64,
    /// First calls are spread uniformly over `[at, at + spread)`.
    pub spread: f64,
    /// Whether clients make further calls (an `interval`), so calls start at many times.
    pub repeats: bool,
}

/// One row of `summary.csv`.
#[derive(Clone, Debug, PartialEq)]
pub struct SummaryRow {
    pub variant: String,
    /// The values of the sweep keys, in [`RunSet::sweep_keys`] order ("" where a run has
    /// no such key).
    pub point: Vec<String>,
    pub metric: String,
    pub unit: String,
    pub n: u64,
    pub mean: f64,
    pub sd: Option<f64>,
    pub ci: Option<(f64, f64)>,
}

/// One row of `replications.csv`: a metric's value in one replication.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplicationRow {
    pub variant: String,
    pub point: Vec<String>,
    pub replication: u32,
    pub metric: String,
    pub value: Option<f64>,
}

/// One row of `trace.csv`, times in seconds.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceRow {
    pub time: f64,
    pub client: u32,
    pub variant: String,
    /// The sweep cell, in [`RunSet::sweep_keys`] order (empty without a sweep).
    pub point: Vec<String>,
    pub replication: u32,
    pub event: String,
    pub sample: Option<f64>,
    pub srtt: Option<f64>,
    pub rto: Option<f64>,
    /// The congestion window and slow-start threshold in segments, and the recovery
    /// state's name: empty on a listener's rows, and in a file written before they were.
    pub cwnd: Option<u32>,
    pub ssthresh: Option<u32>,
    pub ca_state: Option<String>,
}

/// One row of `attempts.csv`: connection attempts the server saw in one time bin.
#[derive(Clone, Debug, PartialEq)]
pub struct AttemptRow {
    pub variant: String,
    /// The sweep cell, in [`RunSet::sweep_keys`] order (empty without a sweep).
    pub point: Vec<String>,
    pub replication: u32,
    pub bin_start: f64,
    pub bin_width: f64,
    pub attempts: f64,
    pub refused: f64,
}

/// One row of `cdf.csv`: the `fraction` quantile of `metric`, the mean over replications
/// of each replication's quantile.
#[derive(Clone, Debug, PartialEq)]
pub struct CdfRow {
    pub variant: String,
    /// The sweep cell, in [`RunSet::sweep_keys`] order (empty without a sweep).
    pub point: Vec<String>,
    pub metric: String,
    pub fraction: f64,
    pub value: f64,
}

/// One run's `series.csv`: quantities per time bin, from 0 to the horizon, in columns
/// the model names (see [`backoffsim_core::metrics::series`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SeriesTable {
    /// The model's columns, in the file's order (after `bin_width_s`).
    pub columns: Vec<String>,
    pub rows: Vec<SeriesRow>,
}

/// One row of `series.csv`: one time bin of one replication.
#[derive(Clone, Debug, PartialEq)]
pub struct SeriesRow {
    pub variant: String,
    /// The sweep cell, in [`RunSet::sweep_keys`] order (empty without a sweep).
    pub point: Vec<String>,
    pub replication: u32,
    pub bin_start: f64,
    pub bin_width: f64,
    /// One value per column of the table; `None` where the file's cell is empty (a
    /// share of nothing, a capacity the model does not have).
    pub values: Vec<Option<f64>>,
}

/// One or more finished runs, ready to plot and report.
#[derive(Clone, Debug, Default)]
pub struct RunSet {
    pub runs: Vec<RunInfo>,
    pub variants: Vec<VariantInfo>,
    pub sweep_keys: Vec<String>,
    pub summary: Vec<SummaryRow>,
    /// Rows of `summary.csv` without a value (no replication had one): `n` is 0 and the
    /// numbers mean nothing. Kept apart so that nothing that computes with the summary
    /// meets them; the report shows them as —, with the reason.
    pub absent: Vec<SummaryRow>,
    /// Every metric of `summary` and `absent` with its unit, in the order `summary.csv`
    /// lists them; empty where the set was built without it.
    pub order: Vec<(String, String)>,
    /// Empty for a run written before `replications.csv` existed.
    pub replications: Vec<ReplicationRow>,
    pub trace: Vec<TraceRow>,
    /// `None` when no run has `attempts.csv`.
    pub attempts: Option<Vec<AttemptRow>>,
    /// `None` when no run has `cdf.csv`.
    pub cdf: Option<Vec<CdfRow>>,
    /// One table per run that has `series.csv` (runs of different models name different
    /// columns); `None` when no run has one.
    pub series: Option<Vec<SeriesTable>>,
}

impl RunSet {
    /// Loads one run directory; variants keep their own names.
    pub fn load(dir: &Path) -> Result<RunSet, ReportError> {
        load_run(dir, String::new())
    }

    /// One run's set from its manifest's facts and its summary rows, before its other
    /// tables: the rows no replication gave a value are set apart and the metrics keep the
    /// summary's order. A run read from its files and a run handed over in memory both
    /// come through here, so the report sees the same rows either way.
    pub fn of_summary(
        run: RunInfo,
        variants: Vec<VariantInfo>,
        sweep_keys: Vec<String>,
        rows: Vec<SummaryRow>,
    ) -> RunSet {
        let order = metric_order(&rows);
        let (absent, summary) = rows.into_iter().partition(|r| r.n == 0);
        RunSet { runs: vec![run], variants, sweep_keys, summary, absent, order, ..RunSet::default() }
    }

    /// Loads several run directories into one set, each run's variants labelled
    /// `label:variant`. Labels are the directories' names, or `run1`, `run2`, … when
    /// those are not unique.
    pub fn load_many(dirs: &[PathBuf]) -> Result<RunSet, ReportError> {
        if dirs.len() == 1 {
            return RunSet::load(&dirs[0]);
        }
        let names: Vec<String> = dirs
            .iter()
            .map(|d| {
                std::fs::canonicalize(d)
                    .unwrap_or_else(|_| d.clone())
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            })
            .collect();
        let unique = names.iter().collect::<BTreeSet<_>>().len() == names.len() && names.iter().all(|n| !n.is_empty());
        let mut sets = Vec::new();
        for (i, dir) in dirs.iter().enumerate() {
            let label = if unique { names[i].clone() } else { format!("run{}", i + 1) };
            sets.push(load_run(dir, label)?);
        }
        Ok(merge(sets))
    }

    /// The variants' names in order.
    pub fn variant_names(&self) -> Vec<&str> {
        self.variants.iter().map(|v| v.name.as_str()).collect()
    }

    pub fn variant(&self, name: &str) -> Option<&VariantInfo> {
        self.variants.iter().find(|v| v.name == name)
    }

    /// The longest horizon of the runs, in seconds.
    pub fn horizon_s(&self) -> Option<f64> {
        self.runs.iter().filter_map(|r| r.horizon_s).fold(None, |a, h| Some(a.map_or(h, |a: f64| a.max(h))))
    }

    /// Metrics in order of first appearance, with their unit.
    pub fn metrics(&self) -> Vec<(String, String)> {
        if !self.order.is_empty() {
            return self.order.clone();
        }
        metric_order(&self.summary)
    }

    /// Sweep points in order of first appearance (one empty point without a sweep).
    pub fn points(&self) -> Vec<Vec<String>> {
        let mut seen: BTreeSet<&[String]> = BTreeSet::new();
        let mut out: Vec<Vec<String>> =
            self.summary.iter().filter(|r| seen.insert(&r.point)).map(|r| r.point.clone()).collect();
        if out.is_empty() {
            out.push(vec![String::new(); self.sweep_keys.len()]);
        }
        out
    }

    /// The summary indexed by (variant, point, metric), for work that looks up many
    /// cells: [`RunSet::stat`] searches every row. It gives up at a requested interrupt.
    pub fn stats(&self) -> Result<Stats<'_>, backoffsim_core::run::interrupt::Interrupted> {
        let mut by = BTreeMap::new();
        for r in &self.summary {
            backoffsim_core::run::interrupt::check()?;
            by.entry((r.variant.as_str(), r.point.as_slice(), r.metric.as_str())).or_insert(r);
        }
        Ok(Stats(by))
    }

    /// The schedules of `variant` in the cell at `point`: the cell's own when the run
    /// recorded them, else the variant's.
    pub fn facts(&self, variant: &str, point: &[String]) -> CellFacts {
        let Some(v) = self.variant(variant) else { return CellFacts::default() };
        v.cells.iter().find(|c| c.point == point).or(v.cells.first()).map(|c| c.facts.clone()).unwrap_or_default()
    }

    pub fn stat(&self, variant: &str, point: &[String], metric: &str) -> Option<&SummaryRow> {
        self.summary.iter().find(|r| r.variant == variant && r.point == point && r.metric == metric)
    }
}

/// A run set's summary rows by (variant, point, metric); the first row where the
/// summary has several.
pub struct Stats<'a>(BTreeMap<(&'a str, &'a [String], &'a str), &'a SummaryRow>);

impl<'a> Stats<'a> {
    /// What [`RunSet::stat`] finds, in logarithmic time.
    pub fn get<'k>(&'k self, variant: &'k str, point: &'k [String], metric: &'k str) -> Option<&'a SummaryRow> {
        // The keys borrow from the run set for 'a; a lookup's for less, which the map's
        // keys can be seen as too.
        let by: &'k BTreeMap<(&'k str, &'k [String], &'k str), &'a SummaryRow> = &self.0;
        by.get(&(variant, point, metric)).copied()
    }
}

fn merge(sets: Vec<RunSet>) -> RunSet {
    let mut out = RunSet::default();
    for s in &sets {
        for k in &s.sweep_keys {
            if !out.sweep_keys.contains(k) {
                out.sweep_keys.push(k.clone());
            }
        }
    }
    for s in sets {
        let offset = out.runs.len();
        let keys = s.sweep_keys;
        // Each run's points onto the union of the runs' sweep keys.
        let all = out.sweep_keys.clone();
        let remap = |point: &mut Vec<String>| {
            *point = all
                .iter()
                .map(|k| keys.iter().position(|x| x == k).and_then(|i| point.get(i).cloned()).unwrap_or_default())
                .collect();
        };
        out.runs.extend(s.runs);
        out.variants.extend(s.variants.into_iter().map(|mut v| {
            v.run += offset;
            v.cells.iter_mut().for_each(|c| remap(&mut c.point));
            v
        }));
        out.summary.extend(s.summary.into_iter().map(|mut r| {
            remap(&mut r.point);
            r
        }));
        out.absent.extend(s.absent.into_iter().map(|mut r| {
            remap(&mut r.point);
            r
        }));
        for m in s.order {
            if !out.order.contains(&m) {
                out.order.push(m);
            }
        }
        out.replications.extend(s.replications.into_iter().map(|mut r| {
            remap(&mut r.point);
            r
        }));
        out.trace.extend(s.trace.into_iter().map(|mut r| {
            remap(&mut r.point);
            r
        }));
        if let Some(a) = s.attempts {
            out.attempts.get_or_insert_with(Vec::new).extend(a.into_iter().map(|mut r| {
                remap(&mut r.point);
                r
            }));
        }
        if let Some(c) = s.cdf {
            out.cdf.get_or_insert_with(Vec::new).extend(c.into_iter().map(|mut r| {
                remap(&mut r.point);
                r
            }));
        }
        if let Some(tables) = s.series {
            out.series.get_or_insert_with(Vec::new).extend(tables.into_iter().map(|mut t| {
                t.rows.iter_mut().for_each(|r| remap(&mut r.point));
                t
            }));
        }
    }
    out
}

fn load_run(dir: &Path, label: String) -> Result<RunSet, ReportError> {
    let manifest_path = dir.join("manifest.json");
    if !manifest_path.is_file() {
        return Err(ReportError::NotARun { dir: dir.display().to_string() });
    }
    let text = std::fs::read_to_string(&manifest_path).map_err(|e| ReportError::io(&manifest_path, e))?;
    let manifest: Value = serde_json::from_str(&text)
        .map_err(|e| ReportError::Bad { file: manifest_path.display().to_string(), why: e.to_string() })?;
    let bounds = manifest::check(&manifest_path.display().to_string(), &text)?;
    let prefix = |name: &str| {
        if label.is_empty() { name.to_string() } else { format!("{label}:{name}") }
    };
    let (run, variants) = of_manifest(&manifest, dir, label.clone());

    let summary_path = dir.join("summary.csv");
    let (sweep_keys, rows) =
        if summary_path.is_file() { read_summary(&summary_path, &bounds, &prefix)? } else { (Vec::new(), Vec::new()) };
    // The sweep keys are read from the CSV header (the columns between `variant` and
    // `metric`, less the swept durations' columns in seconds), which is what the rows are
    // read by; the manifest's `sweep_keys` lists the same names.
    let keys = &sweep_keys;
    let replications_path = dir.join("replications.csv");
    let replications = if replications_path.is_file() {
        read_replications(&replications_path, keys, &bounds, &prefix)?
    } else {
        Vec::new()
    };
    let trace_path = dir.join("trace.csv");
    let trace = if trace_path.is_file() { read_trace(&trace_path, keys, &bounds, &prefix)? } else { Vec::new() };
    let attempts_path = dir.join("attempts.csv");
    let attempts =
        if attempts_path.is_file() { Some(read_attempts(&attempts_path, keys, &bounds, &prefix)?) } else { None };
    let cdf_path = dir.join("cdf.csv");
    let cdf = if cdf_path.is_file() { Some(read_cdf(&cdf_path, keys, &prefix)?) } else { None };
    let series_path = dir.join("series.csv");
    let series =
        if series_path.is_file() { Some(vec![read_series(&series_path, keys, &bounds, &prefix)?]) } else { None };
    Ok(RunSet { replications, trace, attempts, cdf, series, ..RunSet::of_summary(run, variants, sweep_keys, rows) })
}

#[cfg(test)]
mod tests;
