//! `run --json`: the summary as JSON Lines on stdout, for programs. One object per line,
//! each `{"type": …, "data": {…}}`:
//!
//! - `{"type":"summary","data":{"variant":"linux","sweep":{"calls.outage":"30s"},
//!   "metric":"timeouts","unit":"count","replications":5,"mean":2.4,"sd":0.5,
//!   "ci95_low":1.8,"ci95_high":3.0}}`: one per row of `summary.csv`, in its order.
//!   `sweep` maps each swept key to its value as the CSV writes it (`{}` without a
//!   sweep), in the scenario's key order; `sd` and the interval are `null` with fewer
//!   than two replications.
//! - `{"type":"run","data":{"scenario":"tcp-blackout","seed":1,"replications":1,
//!   "out_dir":"results/tcp-blackout","files":["manifest.json",…]}}`: last, once the
//!   results are in place; `out_dir` is the directory as given (or the default), `files`
//!   what the manifest lists.
//!
//! The lines depend only on the scenario and seed (and `out_dir` on `--out`), never on
//! threads or time; progress and messages stay on stderr.

use std::io::{self, Write};
use std::path::Path;

use serde::Serialize;
use serde::ser::SerializeMap;

use backoffsim_report::output::summary::SummaryRow;

#[derive(Serialize)]
#[serde(tag = "type", content = "data", rename_all = "lowercase")]
enum Line<'a> {
    Summary(Summary<'a>),
    Run(Run<'a>),
}

#[derive(Serialize)]
struct Summary<'a> {
    variant: &'a str,
    sweep: Sweep<'a>,
    metric: &'a str,
    unit: &'a str,
    replications: usize,
    /// `null` when no replication had a value.
    mean: Option<f64>,
    sd: Option<f64>,
    ci95_low: Option<f64>,
    ci95_high: Option<f64>,
}

/// The swept keys and values as one object, in the scenario's key order.
struct Sweep<'a>(&'a [String], &'a [String]);

impl Serialize for Sweep<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in self.0.iter().zip(self.1) {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

#[derive(Serialize)]
pub struct Run<'a> {
    pub scenario: &'a str,
    pub seed: u64,
    pub replications: u32,
    pub out_dir: String,
    pub files: Vec<String>,
}

/// Writes one `summary` line per row, then the `run` line.
pub fn write(w: &mut impl Write, sweep_keys: &[String], rows: &[SummaryRow], run: Run<'_>) -> io::Result<()> {
    for r in rows {
        let e = r.estimate.as_ref();
        let line = Line::Summary(Summary {
            variant: &r.variant,
            sweep: Sweep(sweep_keys, &r.sweep),
            metric: &r.metric,
            unit: &r.unit,
            replications: e.map_or(0, |e| e.n),
            mean: e.map(|e| e.mean),
            sd: e.and_then(|e| e.sd),
            ci95_low: e.and_then(|e| e.ci95).map(|c| c.0),
            ci95_high: e.and_then(|e| e.ci95).map(|c| c.1),
        });
        serde_json::to_writer(&mut *w, &line)?;
        writeln!(w)?;
    }
    serde_json::to_writer(&mut *w, &Line::Run(run))?;
    writeln!(w)?;
    w.flush()
}

/// The files the manifest of the finished run in `dir` lists.
pub fn manifest_files(dir: &Path) -> io::Result<Vec<String>> {
    let text = std::fs::read_to_string(dir.join("manifest.json"))?;
    let manifest: serde_json::Value = serde_json::from_str(&text).map_err(io::Error::other)?;
    Ok(manifest["files"]
        .as_array()
        .map(|fs| fs.iter().filter_map(|f| f.as_str().map(String::from)).collect())
        .unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use backoffsim_core::metrics::stats::Estimate;

    fn row(sweep: &[&str], n: usize, ci: Option<(f64, f64)>) -> SummaryRow {
        SummaryRow {
            variant: "linux".into(),
            sweep: sweep.iter().map(|s| s.to_string()).collect(),
            metric: "timeouts".into(),
            unit: "count".into(),
            estimate: Some(Estimate { n, mean: 2.5, sd: ci.map(|_| 0.5), ci95: ci }),
        }
    }

    fn run() -> Run<'static> {
        Run { scenario: "s", seed: 7, replications: 2, out_dir: "out".into(), files: vec!["manifest.json".into()] }
    }

    #[test]
    fn each_row_is_one_enveloped_line_and_the_run_line_comes_last() {
        let keys = ["b.key".to_string(), "a.key".to_string()];
        let mut buf = Vec::new();
        write(&mut buf, &keys, &[row(&["2", "30s"], 2, Some((1.0, 4.0))), row(&["3", "1min"], 1, None)], run())
            .unwrap();
        let text = String::from_utf8(buf).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            r#"{"type":"summary","data":{"variant":"linux","sweep":{"b.key":"2","a.key":"30s"},"metric":"timeouts","unit":"count","replications":2,"mean":2.5,"sd":0.5,"ci95_low":1.0,"ci95_high":4.0}}"#
        );
        // One replication: no spread, no interval.
        assert!(lines[1].contains(r#""sd":null,"ci95_low":null,"ci95_high":null"#), "{}", lines[1]);
        assert_eq!(
            lines[2],
            r#"{"type":"run","data":{"scenario":"s","seed":7,"replications":2,"out_dir":"out","files":["manifest.json"]}}"#
        );
        assert_eq!(lines.len(), 3);
    }

    #[test]
    fn without_a_sweep_the_sweep_is_an_empty_object() {
        let mut buf = Vec::new();
        write(&mut buf, &[], &[row(&[], 1, None)], run()).unwrap();
        assert!(String::from_utf8(buf).unwrap().contains(r#""sweep":{},"#));
    }
}
