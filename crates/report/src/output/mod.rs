//! What a run leaves on disk: `summary.csv`, `manifest.json` and the tables the model
//! produced (`trace.csv`, `attempts.csv`, `cdf.csv`, `connections.csv`), written together
//! and swapped in atomically.

pub(crate) mod columns;
mod handover;
mod manifest;
pub mod summary;
mod tables;
pub mod terminal;

use std::path::PathBuf;

use manifest::Manifest;

use backoffsim_core::run::Outcome;
use backoffsim_core::run::destination::Destination;
use backoffsim_core::run::interrupt::Aside;
use backoffsim_core::scenario::{ModelSpec, Scenario};

#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error("cannot write results to {dir}: {source}")]
    Io { dir: String, source: std::io::Error },
    #[error("cannot write CSV: {0}")]
    Csv(#[from] csv::Error),
    #[error("cannot write JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("cannot write the plots and reports: {0}")]
    Report(#[from] crate::ReportError),
    /// Ctrl-C or SIGTERM while the files were written: the staging directory is removed.
    #[error("interrupted while writing the results")]
    Interrupted,
}

impl From<backoffsim_core::run::interrupt::Interrupted> for OutputError {
    fn from(_: backoffsim_core::run::interrupt::Interrupted) -> Self {
        OutputError::Interrupted
    }
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
    // A write that stopped for a Ctrl-C (see `Staging::write`) is an interrupt, not a
    // failure.
    let io = |source| {
        if backoffsim_core::run::interrupt::requested() {
            OutputError::Interrupted
        } else {
            OutputError::Io { dir: dir.display().to_string(), source }
        }
    };
    let staging = dest.stage().map_err(io)?;
    let groups = groups(scenario, outcome);

    // The summary, and the report's copy of every row, are freed aside: millions of
    // small allocations must not hold up the way out of an interrupted run.
    let rows = Aside::new(summary::summarize_or_stop(&groups)?);
    let keys = &scenario.sweep_keys;
    let columns = columns::SweepColumns::of(keys, groups.iter().map(|g| g.sweep));
    let mut files = vec!["manifest.json", "summary.csv", "replications.csv"];
    staging.write("summary.csv", &summary::write_csv(&columns, &rows)?).map_err(io)?;
    staging.write("replications.csv", &tables::replications(&columns, &groups)?).map_err(io)?;
    let tcp = scenario.variants.iter().any(|v| v.cells.iter().any(|c| matches!(c.spec, ModelSpec::Tcp(_))));
    let has =
        |f: &dyn Fn(&backoffsim_core::metrics::ReplicationResult) -> bool| groups.iter().any(|g| g.reps.iter().any(f));
    let written = handover::Written { attempts: has(&|r| r.bins.is_some()), cdf: has(&|r| !r.quantiles.is_empty()) };
    let tables: [(&'static str, bool, tables::Writer); 5] = [
        ("trace.csv", tcp || has(&|r| !r.trace.is_empty()), tables::trace),
        ("attempts.csv", written.attempts, tables::attempts),
        ("cdf.csv", written.cdf, tables::cdf),
        ("connections.csv", has(&|r| !r.connections.is_empty()), tables::connections),
        ("series.csv", has(&|r| r.series.is_some()), tables::series),
    ];
    for (name, wanted, write) in tables {
        if wanted {
            staging.write(name, &write(&columns, &groups)?).map_err(io)?;
            files.push(name);
        }
    }

    let mut manifest = Manifest::of(scenario, outcome, files.into_iter().map(String::from).collect())?;
    staging.write("manifest.json", &manifest.json()?).map_err(io)?;
    // The report's facts, read from the tree `manifest.json` parses to, beside a wait that
    // looks at the flag: the reading cannot stop part way, and the tree of a manifest of
    // 100,000 blackouts takes long to read. The tree is built here, so that the memory it
    // frees on the reading thread returns to this thread's.
    let tree = manifest.tree()?;
    let at = dir.to_path_buf();
    let (run, variants) =
        backoffsim_core::run::interrupt::abandonable(move || crate::data::of_manifest(&tree, &at, String::new()))?;
    // Plots and reports are drawn from the results in memory, the same values `plot` and
    // `compare` read from the files; the report names the directory as the user gave it,
    // not the staging directory. Then the manifest lists them too.
    let data = Aside::new(handover::run_set(run, variants, keys, &groups, &rows, written)?);
    let drawn = crate::write_report(&data, &mut |name, bytes| staging.write(name, bytes)).map_err(|e| match e {
        // A write that failed because it stopped (see `Staging::write`) was interrupted too.
        _ if backoffsim_core::run::interrupt::requested() => OutputError::Interrupted,
        e => OutputError::Report(e),
    })?;
    manifest.files.extend(drawn);
    staging.write("manifest.json", &manifest.json()?).map_err(io)?;
    backoffsim_core::run::interrupt::check()?;
    staging.commit().map_err(io)
}
