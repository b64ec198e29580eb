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
    sweep_keys: &'a [String],
    variants: Vec<ManifestVariant<'a>>,
    files: Vec<&'static str>,
}

#[derive(Serialize)]
struct ManifestVariant<'a> {
    name: &'a str,
    description: &'a str,
    /// The first cell's fully resolved parameters; other cells differ only in the swept
    /// keys, whose values `cells` lists.
    parameters: &'a ModelSpec,
    cells: Vec<ManifestCell<'a>>,
}

#[derive(Serialize)]
struct ManifestCell<'a> {
    /// The swept values, in the order of `sweep_keys`.
    sweep: &'a [String],
    /// Events handled by each replication, in replication order.
    events: Vec<u64>,
}

/// Every (variant, cell) with its replications, in output order.
fn groups<'a>(scenario: &'a Scenario, outcome: &'a Outcome) -> Vec<summary::Group<'a>> {
    scenario
        .variants
        .iter()
        .zip(&outcome.results)
        .flat_map(|(v, cells)| {
            v.cells
                .iter()
                .zip(cells)
                .map(|(cell, reps)| summary::Group {
                    variant: &v.name,
                    sweep: &cell.sweep,
                    reps,
                })
        })
        .collect()
}

/// The summary rows of a finished run, as `summary.csv` holds them.
pub fn summary_rows(scenario: &Scenario, outcome: &Outcome) -> Vec<summary::SummaryRow> {
    summary::summarize(&groups(scenario, outcome))
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
    let groups = groups(scenario, outcome);

    let rows = summary::summarize(&groups);
    staging
        .write(
            "summary.csv",
            &summary::write_csv(&scenario.sweep_keys, &rows)?,
        )
        .map_err(io)?;
    staging
        .write("trace.csv", &trace_csv(&scenario.sweep_keys, &groups)?)
        .map_err(io)?;

    let manifest = Manifest {
        backoffsim_version: env!("CARGO_PKG_VERSION"),
        scenario: &scenario.name,
        description: &scenario.description,
        scenario_sha256: &scenario.source_sha256,
        seed: scenario.seed,
        replications: scenario.replications,
        horizon: scenario.horizon.to_string(),
        max_events: scenario.max_events,
        sweep_keys: &scenario.sweep_keys,
        variants: scenario
            .variants
            .iter()
            .zip(&outcome.results)
            .map(|(v, cells)| ManifestVariant {
                name: &v.name,
                description: &v.description,
                parameters: &v.cells[0].spec,
                cells: v
                    .cells
                    .iter()
                    .zip(cells)
                    .map(|(cell, reps)| ManifestCell {
                        sweep: &cell.sweep,
                        events: reps.iter().map(|r| r.events).collect(),
                    })
                    .collect(),
            })
            .collect(),
        files: vec!["manifest.json", "summary.csv", "trace.csv"],
    };
    let mut json = serde_json::to_vec_pretty(&manifest)?;
    json.push(b'\n');
    staging.write("manifest.json", &json).map_err(io)?;
    staging.commit().map_err(io)
}

/// `trace.csv`: `time_s, client, variant, <sweep keys…>, replication, event, segment,
/// sample_s, srtt_s, rttvar_s, rto_s, backoffs`.
fn trace_csv(sweep_keys: &[String], groups: &[summary::Group<'_>]) -> Result<Vec<u8>, csv::Error> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header = vec!["time_s", "client", "variant"];
    header.extend(sweep_keys.iter().map(String::as_str));
    header.extend([
        "replication",
        "event",
        "segment",
        "sample_s",
        "srtt_s",
        "rttvar_s",
        "rto_s",
        "backoffs",
    ]);
    w.write_record(&header)?;
    for g in groups {
        for (r, rep) in g.reps.iter().enumerate() {
            for row in &rep.trace {
                let mut record = vec![
                    secs(row.time.as_nanos()),
                    row.client.to_string(),
                    g.variant.to_string(),
                ];
                record.extend(g.sweep.iter().cloned());
                record.extend([
                    r.to_string(),
                    row.event.to_string(),
                    row.segment.map(|s| s.to_string()).unwrap_or_default(),
                    opt_secs(row.sample),
                    opt_secs(row.srtt),
                    opt_secs(row.rttvar),
                    secs(row.rto.as_nanos()),
                    row.backoffs.to_string(),
                ]);
                w.write_record(&record)?;
            }
        }
    }
    w.into_inner().map_err(|e| e.into_error().into())
}
