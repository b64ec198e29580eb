//! What a run leaves on disk: `trace.csv`, `summary.csv` and `manifest.json`, written
//! together and swapped in atomically.

pub mod staging;
pub mod summary;

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::metrics::trace::{opt_secs, secs};
use crate::scenario::{ModelSpec, Scenario};
use crate::sim::Outcome;

#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error("cannot write results to {dir}: {source}")]
    Io { dir: String, source: std::io::Error },
    #[error("cannot write CSV: {0}")]
    Csv(#[from] csv::Error),
    #[error("cannot write JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("cannot write the plots and reports: {0}")]
    Report(#[from] crate::report::ReportError),
}

#[derive(Serialize)]
struct Manifest<'a> {
    backoffsim_version: &'static str,
    scenario: &'a str,
    description: &'a str,
    scenario_sha256: &'a str,
    seed: u64,
    replications: u32,
    horizon: String,
    max_events: u64,
    variants: Vec<ManifestVariant<'a>>,
    files: Vec<String>,
}

#[derive(Serialize)]
struct ManifestVariant<'a> {
    name: &'a str,
    description: &'a str,
    /// Events handled by each replication, in replication order.
    events: Vec<u64>,
    parameters: &'a ModelSpec,
}

/// Writes every result file of `outcome` into `dir`, replacing what was there only once
/// all of it is written.
pub fn write_results(
    scenario: &Scenario,
    outcome: &Outcome,
    dir: &Path,
) -> Result<PathBuf, OutputError> {
    let io = |source| OutputError::Io {
        dir: dir.display().to_string(),
        source,
    };
    let staging = staging::Staging::begin(dir).map_err(io)?;
    let names: Vec<String> = scenario.variants.iter().map(|v| v.name.clone()).collect();

    let rows = summary::summarize(&names, &outcome.results);
    staging
        .write("summary.csv", &summary::write_csv(&rows)?)
        .map_err(io)?;
    staging
        .write("trace.csv", &trace_csv(&names, outcome)?)
        .map_err(io)?;

    let mut manifest = Manifest {
        backoffsim_version: env!("CARGO_PKG_VERSION"),
        scenario: &scenario.name,
        description: &scenario.description,
        scenario_sha256: &scenario.source_sha256,
        seed: scenario.seed,
        replications: scenario.replications,
        horizon: scenario.horizon.to_string(),
        max_events: scenario.max_events,
        variants: scenario
            .variants
            .iter()
            .zip(&outcome.results)
            .map(|(v, reps)| ManifestVariant {
                name: &v.name,
                description: &v.description,
                events: reps.iter().map(|r| r.events).collect(),
                parameters: &v.spec,
            })
            .collect(),
        files: ["manifest.json", "summary.csv", "trace.csv"]
            .map(String::from)
            .to_vec(),
    };
    let to_json = |m: &Manifest| -> Result<Vec<u8>, OutputError> {
        let mut json = serde_json::to_vec_pretty(m)?;
        json.push(b'\n');
        Ok(json)
    };
    staging
        .write("manifest.json", &to_json(&manifest)?)
        .map_err(io)?;

    // Plots and reports are drawn from the files just written, as `backoffsim plot` and
    // `compare` draw them from finished runs; then the manifest lists them too.
    let data = crate::report::data::RunSet::load(&staging.path(""))?;
    let drawn = crate::report::write_report(&data, &mut |name, bytes| staging.write(name, bytes))?;
    manifest.files.extend(drawn);
    staging
        .write("manifest.json", &to_json(&manifest)?)
        .map_err(io)?;
    staging.commit().map_err(io)
}

fn trace_csv(names: &[String], outcome: &Outcome) -> Result<Vec<u8>, csv::Error> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "time_s",
        "client",
        "variant",
        "replication",
        "event",
        "segment",
        "sample_s",
        "srtt_s",
        "rttvar_s",
        "rto_s",
        "backoffs",
    ])?;
    for (name, reps) in names.iter().zip(&outcome.results) {
        for (r, rep) in reps.iter().enumerate() {
            for row in &rep.trace {
                w.write_record([
                    secs(row.time.as_nanos()),
                    row.client.to_string(),
                    name.clone(),
                    r.to_string(),
                    row.event.to_string(),
                    row.segment.map(|s| s.to_string()).unwrap_or_default(),
                    opt_secs(row.sample),
                    opt_secs(row.srtt),
                    opt_secs(row.rttvar),
                    secs(row.rto.as_nanos()),
                    row.backoffs.to_string(),
                ])?;
            }
        }
    }
    w.into_inner().map_err(|e| e.into_error().into())
}
