//! What a run leaves on disk: `summary.csv`, `manifest.json` and the tables the model
//! produced (`trace.csv`, `attempts.csv`, `cdf.csv`, `connections.csv`), written together
//! and swapped in atomically.

mod handover;
pub mod summary;
mod tables;

use std::path::PathBuf;

use serde::Serialize;

use crate::destination::Destination;
use crate::metrics::catalogue;
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
    /// Ctrl-C or SIGTERM while the files were written: the staging directory is removed.
    #[error("interrupted while writing the results")]
    Interrupted,
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
    /// What every metric the run's models can write means, in catalogue order, so that
    /// a reader of `summary.csv` needs nothing else.
    metrics: Vec<ManifestMetric>,
    files: Vec<String>,
}

#[derive(Serialize)]
struct ManifestMetric {
    /// The model that writes it: an id may mean different things in two models.
    model: &'static str,
    /// A numbered family (`spread_attempt{k}`) keeps `{k}` for the number.
    id: &'static str,
    title: &'static str,
    unit: &'static str,
    /// `lower`, `higher`, or null when neither is better.
    better: Option<&'static str>,
    doc: &'static str,
}

/// The catalogue entries of the models `scenario` runs, each model's in catalogue order.
fn metric_catalogue(scenario: &Scenario) -> Vec<ManifestMetric> {
    let mut models: Vec<catalogue::Model> =
        scenario.variants.iter().flat_map(|v| v.cells.iter().map(|c| c.spec.model())).collect();
    models.sort();
    models.dedup();
    models
        .into_iter()
        .flat_map(|m| {
            crate::scenario::models::metrics(m).into_iter().map(move |e| ManifestMetric {
                model: m.name(),
                id: e.id,
                title: e.title,
                unit: e.unit,
                better: e.better.map(|b| match b {
                    catalogue::Better::Lower => "lower",
                    catalogue::Better::Higher => "higher",
                }),
                doc: e.doc,
            })
        })
        .collect()
}

#[derive(Serialize)]
struct ManifestVariant<'a> {
    name: &'a str,
    description: &'a str,
    /// The first cell's fully resolved parameters; other cells differ in the swept keys,
    /// whose values `cells` lists, and in what follows from them (each swept cell's
    /// `parameters` has it all).
    parameters: &'a ModelSpec,
    cells: Vec<ManifestCell<'a>>,
}

#[derive(Serialize)]
struct ManifestCell<'a> {
    /// The swept values, in the order of `sweep_keys`.
    sweep: &'a [String],
    /// Events handled by each replication, in replication order.
    events: Vec<u64>,
    /// The cell's fully resolved parameters, written when the variant has several cells:
    /// a swept value can move what plots draw per cell (a restart's down time, a
    /// blackout), and a derived value (e.g. the server outage `calls.outage` makes) is
    /// not in `sweep`.
    #[serde(skip_serializing_if = "Option::is_none")]
    parameters: Option<&'a ModelSpec>,
}

/// Every (variant, cell) with its replications, in output order.
fn groups<'a>(scenario: &'a Scenario, outcome: &'a Outcome) -> Vec<summary::Group<'a>> {
    scenario
        .variants
        .iter()
        .zip(&outcome.results)
        .flat_map(|(v, cells)| {
            v.cells.iter().zip(cells).map(|(cell, reps)| summary::Group { variant: &v.name, sweep: &cell.sweep, reps })
        })
        .collect()
}

/// The summary rows of a finished run, as `summary.csv` holds them.
pub fn summary_rows(scenario: &Scenario, outcome: &Outcome) -> Vec<summary::SummaryRow> {
    summary::summarize(&groups(scenario, outcome))
}

/// Writes every result file of `outcome` into the claimed `dest`, replacing what was
/// there only once all of it is written.
pub fn write_results(scenario: &Scenario, outcome: &Outcome, dest: &Destination) -> Result<PathBuf, OutputError> {
    let dir = dest.path();
    let io = |source| OutputError::Io { dir: dir.display().to_string(), source };
    let staging = dest.stage().map_err(io)?;
    let groups = groups(scenario, outcome);

    let rows = summary::summarize(&groups);
    let keys = &scenario.sweep_keys;
    let mut files = vec!["manifest.json", "summary.csv", "replications.csv"];
    staging.write("summary.csv", &summary::write_csv(keys, &rows)?).map_err(io)?;
    staging.write("replications.csv", &tables::replications(keys, &groups)?).map_err(io)?;
    let tcp = scenario.variants.iter().any(|v| v.cells.iter().any(|c| matches!(c.spec, ModelSpec::Tcp(_))));
    let has = |f: &dyn Fn(&crate::metrics::ReplicationResult) -> bool| groups.iter().any(|g| g.reps.iter().any(f));
    let written = handover::Written { attempts: has(&|r| r.bins.is_some()), cdf: has(&|r| !r.quantiles.is_empty()) };
    let tables: [(&'static str, bool, tables::Writer); 5] = [
        ("trace.csv", tcp || has(&|r| !r.trace.is_empty()), tables::trace),
        ("attempts.csv", written.attempts, tables::attempts),
        ("cdf.csv", written.cdf, tables::cdf),
        ("connections.csv", has(&|r| !r.connections.is_empty()), tables::connections),
        ("series.csv", has(&|r| r.series.is_some()), tables::series),
    ];
    let stop = || if crate::interrupt::requested() { Err(OutputError::Interrupted) } else { Ok(()) };
    for (name, wanted, write) in tables {
        stop()?;
        if wanted {
            staging.write(name, &write(keys, &groups)?).map_err(io)?;
            files.push(name);
        }
    }

    let mut manifest = Manifest {
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
                        parameters: (v.cells.len() > 1).then_some(&cell.spec),
                    })
                    .collect(),
            })
            .collect(),
        metrics: metric_catalogue(scenario),
        files: files.into_iter().map(String::from).collect(),
    };
    let to_json = |m: &Manifest| -> Result<Vec<u8>, OutputError> {
        let mut json = serde_json::to_vec_pretty(m)?;
        json.push(b'\n');
        Ok(json)
    };
    staging.write("manifest.json", &to_json(&manifest)?).map_err(io)?;

    // Plots and reports are drawn from the results in memory, the same values `plot` and
    // `compare` read from the files; the report names the directory as the user gave it,
    // not the staging directory. Then the manifest lists them too.
    stop()?;
    let data = handover::run_set(&serde_json::to_value(&manifest)?, dir, keys, &groups, &rows, written);
    let drawn = crate::report::write_report(&data, &mut |name, bytes| staging.write(name, bytes))?;
    manifest.files.extend(drawn);
    staging.write("manifest.json", &to_json(&manifest)?).map_err(io)?;
    stop()?;
    staging.commit().map_err(io)
}
