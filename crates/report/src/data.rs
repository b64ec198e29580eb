//! What plots and reports read: everything they show is what the files of a run
//! directory hold (`manifest.json`, `summary.csv`, `trace.csv`, and, where the model
//! writes them, `attempts.csv` and `cdf.csv`), never more from the engine, so `plot` and
//! `compare` work on runs made earlier, elsewhere or by another version. A run hands the
//! same values over in memory (`output::handover`) rather than re-reading its files.
//!
//! Several runs load into one [`RunSet`] whose variants are labelled by run
//! (`run1:linux`), so a comparison across runs is the same report as one run's.

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
        let mut seen: BTreeSet<&str> = BTreeSet::new();
        self.summary.iter().filter(|r| seen.insert(&r.metric)).map(|r| (r.metric.clone(), r.unit.clone())).collect()
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
    let order = metric_order(&rows);
    let (absent, summary) = rows.into_iter().partition(|r| r.n == 0);
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
    Ok(RunSet {
        runs: vec![run],
        variants,
        sweep_keys,
        summary,
        absent,
        order,
        replications,
        trace,
        attempts,
        cdf,
        series,
    })
}

/// A run's facts and variants as its manifest states them: the value read from
/// `manifest.json`, or the one a run is about to write, which it hands over to the
/// report with its results in memory instead of re-reading them. Variants are labelled
/// `label:name` when `label` is not empty.
pub fn of_manifest(manifest: &Value, dir: &Path, label: String) -> (RunInfo, Vec<VariantInfo>) {
    let prefix = |name: &str| {
        if label.is_empty() { name.to_string() } else { format!("{label}:{name}") }
    };
    let str_of = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let horizon = str_of(manifest, "horizon");
    let variants: Vec<VariantInfo> = manifest
        .get("variants")
        .and_then(Value::as_array)
        .map(|vs| vs.iter().map(|v| variant_info(v, &prefix)).collect())
        .unwrap_or_default();
    let run = RunInfo {
        label: label.clone(),
        dir: dir.to_path_buf(),
        scenario: str_of(manifest, "scenario"),
        description: str_of(manifest, "description"),
        seed: manifest.get("seed").and_then(Value::as_u64),
        replications: manifest.get("replications").and_then(Value::as_u64),
        horizon_s: SimDuration::parse(&horizon).ok().map(|d| d.as_secs_f64()),
        horizon,
        version: str_of(manifest, "backoffsim_version"),
        scenario_sha256: str_of(manifest, "scenario_sha256"),
    };
    (run, variants)
}

fn variant_info(v: &Value, prefix: &dyn Fn(&str) -> String) -> VariantInfo {
    let params = v.get("parameters").cloned().unwrap_or(Value::Null);
    let mut flat = Vec::new();
    flatten("", &params, &mut flat);
    let base = facts_of(&params);
    let mut cells: Vec<CellInfo> = v
        .get("cells")
        .and_then(Value::as_array)
        .map(|cs| {
            cs.iter()
                .map(|c| CellInfo {
                    point: c
                        .get("sweep")
                        .and_then(Value::as_array)
                        .map(|p| p.iter().map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_string)).collect())
                        .unwrap_or_default(),
                    facts: c.get("parameters").map(facts_of).unwrap_or_else(|| base.clone()),
                })
                .collect()
        })
        .unwrap_or_default();
    if cells.is_empty() {
        cells.push(CellInfo { point: Vec::new(), facts: base.clone() });
    }
    VariantInfo {
        name: prefix(v.get("name").and_then(Value::as_str).unwrap_or("?")),
        run: 0,
        description: v.get("description").and_then(Value::as_str).unwrap_or("").to_string(),
        params: flat,
        blackouts: base.blackouts,
        base_rtt: base.base_rtt,
        rtt_changes: base.rtt_changes,
        cells,
    }
}

/// The schedules in a manifest's resolved parameters.
fn facts_of(params: &Value) -> CellFacts {
    let secs =
        |v: Option<&Value>| v.and_then(Value::as_str).and_then(|s| SimDuration::parse(s).ok()).map(|d| d.as_secs_f64());
    let list = |section: &str, key: &str| {
        params.get(section).and_then(|p| p.get(key)).and_then(Value::as_array).cloned().unwrap_or_default()
    };
    let span = |b: &Value, length: &str| {
        let at = secs(b.get("at"))?;
        Some((at, at + secs(b.get(length))?))
    };
    let blackouts = list("path", "blackout").iter().filter_map(|b| span(b, "duration")).collect();
    let rtt_changes =
        list("path", "rtt_change").iter().filter_map(|c| Some((secs(c.get("at"))?, secs(c.get("rtt"))?))).collect();
    let mut down: Vec<Down> = list("server", "restart")
        .iter()
        .filter_map(|r| span(r, "down"))
        .map(|(from, to)| Down { from, to, restart: true })
        .chain(list("server", "outage").iter().filter_map(|o| span(o, "duration")).map(|(from, to)| Down {
            from,
            to,
            restart: false,
        }))
        .filter(|d| d.to > d.from)
        .collect();
    down.sort_by(|a, b| a.from.total_cmp(&b.from));
    let calls = params.get("calls").filter(|_| params.get("model").and_then(Value::as_str) == Some("calls"));
    let calls_start = calls.map(|c| CallsStart {
        at: secs(c.get("start")).unwrap_or(0.0),
        spread: secs(c.get("start_spread")).unwrap_or(0.0),
        repeats: c.get("interval").is_some_and(|i| !i.is_null()),
    });
    let server = |key: &str| params.get("server").and_then(|s| s.get(key)).and_then(Value::as_str);
    let brownouts = list("server", "brownout")
        .iter()
        .filter_map(|b| {
            let (from, to) = span(b, "duration")?;
            let num = |k: &str| b.get(k).and_then(Value::as_f64);
            Some(Brownout { from, to, fail_fraction: num("fail_fraction"), slowdown: num("slowdown") })
        })
        .filter(|b| b.to > b.from)
        .collect();
    let provider_down = params
        .pointer("/jobs/provider/0/down")
        .and_then(Value::as_array)
        .map(|downs| downs.iter().filter_map(|d| span(d, "duration")).filter(|(a, b)| b > a).collect())
        .unwrap_or_default();
    CellFacts {
        blackouts,
        base_rtt: secs(params.get("path").and_then(|p| p.get("base_rtt"))),
        rtt_changes,
        down,
        down_silent: server("down_behavior") == Some("blackhole"),
        overload_drops: server("overload") == Some("drop"),
        calls_start,
        brownouts,
        provider_down,
        retry_share_alert: params.pointer("/calls/monitor/retry_share_alert").and_then(Value::as_f64),
    }
}

/// Flattens JSON to `a.b.c = value` pairs; array elements are keyed `a[0]`, an empty
/// array or object is one pair with the value `[]` / `{}`, and null reads `none`.
pub fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, String)>) {
    let key = |k: &str| {
        if prefix.is_empty() { k.to_string() } else { format!("{prefix}.{k}") }
    };
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, v) in m {
                flatten(&key(k), v, out);
            }
        }
        Value::Array(a) if !a.is_empty() => {
            for (i, v) in a.iter().enumerate() {
                flatten(&format!("{prefix}[{i}]"), v, out);
            }
        }
        Value::Object(_) => out.push((prefix.to_string(), "{}".into())),
        Value::Array(_) => out.push((prefix.to_string(), "[]".into())),
        Value::Null => out.push((prefix.to_string(), "none".into())),
        Value::String(s) => out.push((prefix.to_string(), s.clone())),
        other => out.push((prefix.to_string(), other.to_string())),
    }
}

/// The metrics of `rows` with their units, in order of first appearance.
pub fn metric_order(rows: &[SummaryRow]) -> Vec<(String, String)> {
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    rows.iter().filter(|r| seen.insert(&r.metric)).map(|r| (r.metric.clone(), r.unit.clone())).collect()
}

fn read_summary(
    path: &Path,
    bounds: &Bounds,
    prefix: &dyn Fn(&str) -> String,
) -> Result<(Vec<String>, Vec<SummaryRow>), ReportError> {
    let t = Table::read(path)?;
    let variant = t.col("variant")?;
    let metric = t.col("metric")?;
    if metric <= variant {
        return Err(ReportError::Bad { file: t.file.clone(), why: "`variant` must come before `metric`".into() });
    }
    // A swept duration's column in seconds sits beside its label: the label is the key.
    let columns = &t.headers[variant + 1..metric];
    let keys = crate::output::columns::keys_of(columns);
    let at: Vec<usize> =
        keys.iter().filter_map(|k| columns.iter().position(|c| c == k)).map(|c| variant + 1 + c).collect();
    let (unit, n, mean, sd, lo, hi) =
        (t.col("unit")?, t.col("replications")?, t.col("mean")?, t.col("sd")?, t.col("ci95_low")?, t.col("ci95_high")?);
    let most = bounds.replications.unwrap_or(u64::MAX);
    let mut rows = Vec::with_capacity(t.row_count());
    for i in 0..t.row_count() {
        let count = t.whole(i, n, most)?;
        if count == 0 {
            // A metric no replication has a value for is listed with nothing else.
            for c in [mean, sd, lo, hi] {
                if t.num(i, c)?.is_some() {
                    return Err(t.bad(i, c, "has a value while `replications` is 0: no replication gave one"));
                }
            }
            rows.push(SummaryRow {
                variant: prefix(t.str(i, variant)),
                point: at.iter().map(|&c| t.str(i, c).to_string()).collect(),
                metric: t.str(i, metric).to_string(),
                unit: t.str(i, unit).to_string(),
                n: 0,
                mean: f64::NAN,
                sd: None,
                ci: None,
            });
            continue;
        }
        let mean_value = t.req(i, mean)?;
        let ci = match (t.num(i, lo)?, t.num(i, hi)?) {
            (Some(l), Some(h)) if l > h => {
                return Err(t.bad(i, lo, &format!("{l} is above ci95_high {h}: an interval's low end is its lower")));
            }
            (Some(l), Some(h)) if !(l..=h).contains(&mean_value) => {
                return Err(t.bad(i, mean, &format!("{mean_value} is outside its interval [{l}, {h}]")));
            }
            (Some(l), Some(h)) => Some((l, h)),
            (None, None) => None,
            (Some(_), None) => return Err(t.bad(i, hi, "is empty while ci95_low is not: an interval has both ends")),
            (None, Some(_)) => return Err(t.bad(i, lo, "is empty while ci95_high is not: an interval has both ends")),
        };
        rows.push(SummaryRow {
            variant: prefix(t.str(i, variant)),
            point: at.iter().map(|&c| t.str(i, c).to_string()).collect(),
            metric: t.str(i, metric).to_string(),
            unit: t.str(i, unit).to_string(),
            n: count,
            mean: mean_value,
            sd: t.within(i, sd, f64::MAX, "")?,
            ci,
        });
    }
    Ok((keys, rows))
}

fn read_replications(
    path: &Path,
    keys: &[String],
    bounds: &Bounds,
    prefix: &dyn Fn(&str) -> String,
) -> Result<Vec<ReplicationRow>, ReportError> {
    let t = Table::read(path)?;
    let cells = t.cols(keys);
    let (variant, rep, metric, value) = (t.col("variant")?, t.col("replication")?, t.col("metric")?, t.col("value")?);
    let mut rows = Vec::with_capacity(t.row_count());
    for i in 0..t.row_count() {
        rows.push(ReplicationRow {
            variant: prefix(t.str(i, variant)),
            point: t.point(i, &cells),
            replication: replication(&t, i, rep, bounds)?,
            metric: t.str(i, metric).to_string(),
            value: t.num(i, value)?,
        });
    }
    Ok(rows)
}

/// A replication's index, below the run's replications.
fn replication(t: &Table, row: usize, col: usize, bounds: &Bounds) -> Result<u32, ReportError> {
    // A run counts replications in u32: a manifest claiming more does not widen that.
    Ok(t.whole(row, col, bounds.last_replication().min(u64::from(u32::MAX)))? as u32)
}

fn read_trace(
    path: &Path,
    keys: &[String],
    bounds: &Bounds,
    prefix: &dyn Fn(&str) -> String,
) -> Result<Vec<TraceRow>, ReportError> {
    let t = Table::read(path)?;
    let cells = t.cols(keys);
    let (time, client, variant, rep, event) =
        (t.col("time_s")?, t.col("client")?, t.col("variant")?, t.col("replication")?, t.col("event")?);
    let (sample, srtt, rto) = (t.col("sample_s")?, t.col("srtt_s")?, t.col("rto_s")?);
    let horizon = bounds.horizon_words();
    let mut rows = Vec::with_capacity(t.row_count());
    let mut last_variant = (String::new(), String::new());
    for i in 0..t.row_count() {
        let v = t.str(i, variant);
        if v != last_variant.0 {
            last_variant = (v.to_string(), prefix(v));
        }
        rows.push(TraceRow {
            time: t.req_within(i, time, bounds.horizon_s, &horizon)?,
            client: t.whole(i, client, u64::from(u32::MAX))? as u32,
            variant: last_variant.1.clone(),
            point: t.point(i, &cells),
            replication: replication(&t, i, rep, bounds)?,
            event: t.str(i, event).to_string(),
            sample: t.within(i, sample, f64::MAX, "")?,
            srtt: t.within(i, srtt, f64::MAX, "")?,
            rto: t.within(i, rto, f64::MAX, "")?,
        });
    }
    Ok(rows)
}

/// A time bin's width: more than zero.
fn bin_width(t: &Table, row: usize, col: usize) -> Result<f64, ReportError> {
    match t.req(row, col)? {
        w if w > 0.0 => Ok(w),
        _ => Err(t.bad(row, col, &format!("`{}` is not a bin width: a bin is wider than 0", t.str(row, col).trim()))),
    }
}

fn read_attempts(
    path: &Path,
    keys: &[String],
    bounds: &Bounds,
    prefix: &dyn Fn(&str) -> String,
) -> Result<Vec<AttemptRow>, ReportError> {
    let t = Table::read(path)?;
    let cells = t.cols(keys);
    let (variant, rep, start, width, attempts, refused) = (
        t.col("variant")?,
        t.col("replication")?,
        t.col("bin_start_s")?,
        t.col("bin_width_s")?,
        t.col("attempts")?,
        t.col("refused")?,
    );
    let horizon = bounds.horizon_words();
    let most = u64::from(u32::MAX);
    (0..t.row_count())
        .map(|i| {
            let count = t.whole(i, attempts, most)?;
            let refusals = if t.str(i, refused).trim().is_empty() { 0 } else { t.whole(i, refused, most)? };
            if refusals > count {
                return Err(t.bad(i, refused, &format!("{refusals} is more than the bin's {count} attempts")));
            }
            Ok(AttemptRow {
                variant: prefix(t.str(i, variant)),
                point: t.point(i, &cells),
                replication: replication(&t, i, rep, bounds)?,
                bin_start: t.req_within(i, start, bounds.horizon_s, &horizon)?,
                bin_width: bin_width(&t, i, width)?,
                attempts: count as f64,
                refused: refusals as f64,
            })
        })
        .collect()
}

fn read_cdf(path: &Path, keys: &[String], prefix: &dyn Fn(&str) -> String) -> Result<Vec<CdfRow>, ReportError> {
    let t = Table::read(path)?;
    let cells = t.cols(keys);
    let (variant, metric, fraction, value) =
        (t.col("variant")?, t.col("metric")?, t.col("fraction")?, t.col("value_s")?);
    let mut rows = Vec::with_capacity(t.row_count());
    for i in 0..t.row_count() {
        let share = t.req_within(i, fraction, 1.0, "1: a fraction is from 0 to 1")?;
        // A quantile that does not exist (nobody reconnected) is left empty: skip it.
        if let Some(v) = t.within(i, value, f64::MAX, "")? {
            rows.push(CdfRow {
                variant: prefix(t.str(i, variant)),
                point: t.point(i, &cells),
                metric: t.str(i, metric).to_string(),
                fraction: share,
                value: v,
            });
        }
    }
    Ok(rows)
}

fn read_series(
    path: &Path,
    keys: &[String],
    bounds: &Bounds,
    prefix: &dyn Fn(&str) -> String,
) -> Result<SeriesTable, ReportError> {
    let t = Table::read(path)?;
    let cells = t.cols(keys);
    let (variant, rep, start, width) =
        (t.col("variant")?, t.col("replication")?, t.col("bin_start_s")?, t.col("bin_width_s")?);
    // The model's columns are everything after the bin's width.
    let first = width + 1;
    let columns = t.headers[first..].to_vec();
    let horizon = bounds.horizon_words();
    let mut rows = Vec::with_capacity(t.row_count());
    let mut last_variant = (String::new(), String::new());
    for i in 0..t.row_count() {
        let v = t.str(i, variant);
        if v != last_variant.0 {
            last_variant = (v.to_string(), prefix(v));
        }
        rows.push(SeriesRow {
            variant: last_variant.1.clone(),
            point: t.point(i, &cells),
            replication: replication(&t, i, rep, bounds)?,
            bin_start: t.req_within(i, start, bounds.horizon_s, &horizon)?,
            bin_width: bin_width(&t, i, width)?,
            values: (first..t.headers.len()).map(|c| t.num(i, c)).collect::<Result<_, _>>()?,
        });
    }
    Ok(SeriesTable { columns, rows })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cell_facts_read_restarts_outages_blackouts_and_the_calls_start() {
        let v: Value = serde_json::json!({
            "model": "calls",
            "calls": {"start": "5s", "start_spread": "0s", "interval": null},
            "server": {
                "restart": [{"at": "100s", "down": "20s"}],
                "outage": [{"at": "10s", "duration": "30s"}, {"at": "50s", "duration": "0s"}],
                "down_behavior": "blackhole"
            },
            "path": {"base_rtt": "100ms", "blackout": [{"at": "1s", "duration": "2s"}], "rtt_change": []}
        });
        let f = facts_of(&v);
        // In time order, and a zero-length outage is no down time.
        assert_eq!(
            f.down,
            [Down { from: 10.0, to: 40.0, restart: false }, Down { from: 100.0, to: 120.0, restart: true }]
        );
        assert_eq!(f.blackouts, [(1.0, 3.0)]);
        assert_eq!(f.base_rtt, Some(0.1));
        assert!(f.down_silent && !f.overload_drops);
        assert_eq!(f.calls_start, Some(CallsStart { at: 5.0, spread: 0.0, repeats: false }));
    }

    #[test]
    fn cell_facts_read_brownouts_the_first_providers_down_time_and_the_retry_share_alert() {
        let v: Value = serde_json::json!({
            "calls": {"monitor": {"retry_share_alert": 0.25}},
            "server": {"brownout": [{"at": "1min", "duration": "30s", "fail_fraction": 0.5, "slowdown": 3.0},
                                    {"at": "5min", "duration": "0s"}]},
            "jobs": {"provider": [{"down": [{"at": "10s", "duration": "90min"}]}, {"down": [{"at": "0s", "duration": "5s"}]}]}
        });
        let f = facts_of(&v);
        // A zero-length brownout is none; only the first provider's down time is drawn.
        assert_eq!(f.brownouts, [Brownout { from: 60.0, to: 90.0, fail_fraction: Some(0.5), slowdown: Some(3.0) }]);
        assert_eq!(f.provider_down, [(10.0, 10.0 + 5400.0)]);
        assert_eq!(f.retry_share_alert, Some(0.25));
        assert_eq!(facts_of(&serde_json::json!({})).retry_share_alert, None);
    }

    fn bounds() -> Bounds {
        Bounds { horizon: "1min".into(), horizon_s: 60.0, replications: Some(2) }
    }

    fn series_file(body: &str) -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("series.csv");
        std::fs::write(&path, body).unwrap();
        (tmp, path)
    }

    #[test]
    fn series_csv_reads_the_models_columns_after_the_bin_width_with_empty_cells_as_none() {
        let (_tmp, path) = series_file(
            "variant,k,replication,bin_start_s,bin_width_s,attempts,retry_share\n\
             base,a,0,0,0.5,10,0.1\n\
             base,a,0,0.5,0.5,0,\n",
        );
        let t = read_series(&path, &["k".to_string()], &bounds(), &|n| format!("r:{n}")).unwrap();
        assert_eq!(t.columns, ["attempts", "retry_share"]);
        assert_eq!(t.rows.len(), 2);
        assert_eq!(t.rows[1].variant, "r:base");
        assert_eq!(t.rows[1].point, ["a"]);
        assert_eq!((t.rows[1].bin_start, t.rows[1].bin_width), (0.5, 0.5));
        assert_eq!(t.rows[1].values, [Some(0.0), None]);
    }

    #[test]
    fn a_malformed_series_csv_names_the_file_the_line_and_the_column() {
        let (_tmp, path) = series_file(
            "variant,replication,bin_start_s,bin_width_s,attempts,capacity\n\
             base,0,0,1,10,5\n\
             base,0,1,1,12,lots\n",
        );
        let e = read_series(&path, &[], &bounds(), &|n| n.to_string()).unwrap_err().to_string();
        assert!(
            e.contains("series.csv") && e.contains("line 3") && e.contains("`capacity`") && e.contains("`lots`"),
            "{e}"
        );
        let (_tmp, path) = series_file("variant,replication,bin_start_s,bin_width_s,attempts\nbase,0,,1,3\n");
        let e = read_series(&path, &[], &bounds(), &|n| n.to_string()).unwrap_err().to_string();
        assert!(e.contains("line 2, column `bin_start_s` is empty"), "{e}");
        let (_tmp, path) = series_file("variant,replication,bin_start_s,attempts\nbase,0,0,3\n");
        let e = read_series(&path, &[], &bounds(), &|n| n.to_string()).unwrap_err().to_string();
        assert!(e.contains("no column `bin_width_s`"), "{e}");
    }

    /// The error `read` gives for `body` as the file `name`.
    fn refused<T: std::fmt::Debug>(name: &str, body: &str, read: impl Fn(&Path) -> Result<T, ReportError>) -> String {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join(name);
        std::fs::write(&path, body).unwrap();
        read(&path).unwrap_err().to_string()
    }

    #[test]
    fn a_summary_row_that_no_run_writes_is_refused_at_its_line_and_column() {
        let head = "variant,metric,unit,replications,mean,sd,ci95_low,ci95_high\n";
        let read = |p: &Path| read_summary(p, &bounds(), &|n| n.to_string());
        let says = |row: &str, expected: &str| {
            let e = refused("summary.csv", &format!("{head}a,x,s,2,1,0.5,0.5,1.5\n{row}\n"), read);
            assert!(e.contains(&format!("summary.csv: line 3, {expected}")), "{row}: {e}");
        };
        says("a,y,s,2,NaN,1,0,2", "column `mean`: `NaN` is not a finite number");
        says("a,y,s,2,1,inf,0,2", "column `sd`: `inf` is not a finite number");
        says("a,y,s,2,1,-1,0,2", "column `sd`: `-1` is negative");
        says("a,y,s,2,1,1,2,0", "column `ci95_low`: 2 is above ci95_high 0");
        says("a,y,s,2,5,1,0,2", "column `mean`: 5 is outside its interval [0, 2]");
        says("a,y,s,2,1,1,0,", "column `ci95_high`: is empty while ci95_low is not");
        says("a,y,s,0,1,,,", "column `mean`: has a value while `replications` is 0");
        says("a,y,s,-2,1,,,", "column `replications`: `-2` is not a whole number");
        says("a,y,s,3,1,1,0,2", "column `replications`: 3 is beyond 2, the most it can be here");
        let ok = format!("{head}a,x,s,1,1,,,\na,y,s,2,1,0,1,1\n");
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("summary.csv"), ok).unwrap();
        assert_eq!(read(&tmp.path().join("summary.csv")).unwrap().1.len(), 2);
    }

    #[test]
    fn times_beyond_the_horizon_and_impossible_counts_are_refused() {
        let trace = |p: &Path| read_trace(p, &[], &bounds(), &|n| n.to_string());
        let head = "time_s,client,variant,replication,event,segment,sample_s,srtt_s,rto_s\n";
        let e = refused("trace.csv", &format!("{head}1e300,0,a,0,send,1,,,1\n"), trace);
        assert!(e.contains("line 2, column `time_s`: `1e300` is beyond the run's horizon (1min"), "{e}");
        let e = refused("trace.csv", &format!("{head}1,0,a,2,send,1,,,1\n"), trace);
        assert!(e.contains("line 2, column `replication`: 2 is beyond 1"), "{e}");
        let e = refused("trace.csv", &format!("{head}1,0,a,0,send,1,,,-3\n"), trace);
        assert!(e.contains("line 2, column `rto_s`: `-3` is negative"), "{e}");

        let attempts = |p: &Path| read_attempts(p, &[], &bounds(), &|n| n.to_string());
        let head = "variant,replication,bin_start_s,bin_width_s,attempts,refused\n";
        let e = refused("attempts.csv", &format!("{head}a,0,0,1,3,4\n"), attempts);
        assert!(e.contains("line 2, column `refused`: 4 is more than the bin's 3 attempts"), "{e}");
        let e = refused("attempts.csv", &format!("{head}a,0,0,1,-3,0\n"), attempts);
        assert!(e.contains("line 2, column `attempts`: `-3` is not a whole number"), "{e}");
        let e = refused("attempts.csv", &format!("{head}a,0,61,1,3,0\n"), attempts);
        assert!(e.contains("line 2, column `bin_start_s`: `61` is beyond the run's horizon"), "{e}");
        let e = refused("attempts.csv", &format!("{head}a,0,0,0,3,0\n"), attempts);
        assert!(e.contains("line 2, column `bin_width_s`: `0` is not a bin width"), "{e}");

        let cdf = |p: &Path| read_cdf(p, &[], &|n| n.to_string());
        let e = refused("cdf.csv", "variant,metric,fraction,value_s\na,x,1.5,2\n", cdf);
        assert!(e.contains("line 2, column `fraction`: `1.5` is beyond 1: a fraction is from 0 to 1"), "{e}");
        let e = refused("replications.csv", "variant,replication,metric,unit,value\na,0,x,s,nan\n", |p| {
            read_replications(p, &[], &bounds(), &|n| n.to_string())
        });
        assert!(e.contains("line 2, column `value`: `nan` is not a finite number"), "{e}");
    }

    #[test]
    fn merged_runs_keep_a_series_table_each_with_points_on_the_union_of_sweep_keys() {
        let table = |variant: &str, point: Vec<String>, column: &str| SeriesTable {
            columns: vec![column.to_string()],
            rows: vec![SeriesRow {
                variant: variant.into(),
                point,
                replication: 0,
                bin_start: 0.0,
                bin_width: 1.0,
                values: vec![Some(1.0)],
            }],
        };
        let a = RunSet {
            sweep_keys: vec!["x".into()],
            series: Some(vec![table("a:v", vec!["1".into()], "attempts")]),
            ..RunSet::default()
        };
        let b = RunSet {
            sweep_keys: vec!["y".into()],
            series: Some(vec![table("b:v", vec!["2".into()], "created")]),
            ..RunSet::default()
        };
        let none = RunSet::default();
        let m = merge(vec![a, none, b]);
        let tables = m.series.unwrap();
        assert_eq!(tables.len(), 2);
        assert_eq!(tables[0].rows[0].point, ["1", ""]);
        assert_eq!(tables[1].rows[0].point, ["", "2"]);
        assert_eq!(tables[1].columns, ["created"]);
        assert!(merge(vec![RunSet::default()]).series.is_none());
    }

    #[test]
    fn a_swept_cell_takes_its_own_schedule_and_others_the_variants() {
        let v: Value = serde_json::json!({
            "name": "base",
            "parameters": {"server": {"restart": [{"at": "5s", "down": "10s"}]}},
            "cells": [
                {"sweep": ["a"], "parameters": {"server": {"restart": [{"at": "5s", "down": "30s"}]}}},
                {"sweep": ["b"]}
            ]
        });
        let info = variant_info(&v, &|n| n.to_string());
        let set = RunSet { variants: vec![info], sweep_keys: vec!["k".into()], ..RunSet::default() };
        assert_eq!(set.facts("base", &["a".to_string()]).down[0].to, 35.0);
        assert_eq!(set.facts("base", &["b".to_string()]).down[0].to, 15.0);
    }

    #[test]
    fn flattening_keys_objects_arrays_and_nulls() {
        let v: Value = serde_json::json!({
            "rto": {"profile": "linux", "hz": null},
            "path": {"blackout": [{"at": "10s", "duration": "30s"}], "rtt_change": []},
            "k": 4
        });
        let mut out = Vec::new();
        flatten("", &v, &mut out);
        let got: Vec<String> = out.iter().map(|(k, v)| format!("{k}={v}")).collect();
        assert_eq!(
            got,
            [
                "k=4",
                "path.blackout[0].at=10s",
                "path.blackout[0].duration=30s",
                "path.rtt_change=[]",
                "rto.hz=none",
                "rto.profile=linux"
            ]
        );
    }
}
