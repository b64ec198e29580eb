//! backoffsim's outputs: the files a run writes ([`output`]: summaries, tables, CSVs,
//! the manifest), and the plots and reports drawn from finished runs, what a user looks
//! at. It sits on `backoffsim-core` and below the command line.
//!
//! Everything here reads a [`data::RunSet`]: the one a run hands over in memory as it
//! ends (rendering into the results it is about to commit), or one loaded from the files
//! of finished run directories, for `plot` (one picture) and `compare` (one report
//! across runs). Both hold the same values, so a re-drawn plot is the run's own.

pub mod compare;
pub mod contents;
pub mod data;
pub mod html;
pub mod manifest;
pub mod markdown;
pub mod numbered;
pub mod output;
pub mod paired;
pub mod param_sets;
pub mod plot;
pub mod significance;
pub mod table;

use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The directory has no `manifest.json`.
    #[error(
        "{dir} is not a run directory: it has no manifest.json (a run directory is what \
         `backoffsim run` writes, e.g. results/tcp-blackout)"
    )]
    NotARun { dir: String },
    /// What the plot or report needs is not in the run.
    #[error("{0}")]
    Missing(String),
    #[error("cannot read {file}: {why}")]
    Bad { file: String, why: String },
    #[error("cannot access {file}: {source}")]
    Io { file: String, source: std::io::Error },
    #[error("cannot draw the plot: {0}")]
    Draw(String),
    /// Runs that cannot be put in one report (e.g. of different models).
    #[error("{0}")]
    Incomparable(String),
    /// Ctrl-C or SIGTERM while plotting or reporting (see [`backoffsim_core::run::interrupt`]).
    #[error("interrupted")]
    Interrupted,
}

impl From<backoffsim_core::run::interrupt::Interrupted> for ReportError {
    fn from(_: backoffsim_core::run::interrupt::Interrupted) -> Self {
        ReportError::Interrupted
    }
}

/// Draws every plot that applies to `data` (SVG and PNG), then `report.md` and
/// `report.html`, handing each file to `write` by name. Returns the names in the order
/// written.
pub fn write_report(
    data: &data::RunSet,
    write: &mut dyn FnMut(&str, &[u8]) -> std::io::Result<()>,
) -> Result<Vec<String>, ReportError> {
    let mut files = Vec::new();
    let mut put = |name: String, bytes: &[u8], files: &mut Vec<String>| {
        write(&name, bytes).map_err(|e| ReportError::io(Path::new(&name), e))?;
        files.push(name);
        Ok::<(), ReportError>(())
    };
    let kinds: Vec<plot::Kind> = plot::Kind::ALL.into_iter().filter(|k| k.missing(data).is_none()).collect();
    let opts = plot::PlotOptions::default();
    let mut svgs = Vec::new();
    for k in &kinds {
        backoffsim_core::run::interrupt::check()?;
        let svg = plot::render(*k, data, &opts, plot::Format::Svg)?;
        backoffsim_core::run::interrupt::check()?;
        let png = plot::render(*k, data, &opts, plot::Format::Png)?;
        put(format!("{}.svg", k.name()), &svg, &mut files)?;
        put(format!("{}.png", k.name()), &png, &mut files)?;
        svgs.push((k.name().to_string(), String::from_utf8(svg).map_err(|e| ReportError::Draw(e.to_string()))?));
    }
    backoffsim_core::run::interrupt::check()?;
    let report = contents::build(data, &kinds)?;
    put("report.md".into(), markdown::render(&report)?.as_bytes(), &mut files)?;
    put("report.html".into(), html::render(&report, &svgs)?.as_bytes(), &mut files)?;
    // Freeing a report of thousands of variants takes long, and nothing waits for it.
    backoffsim_core::run::interrupt::drop_aside(report);
    Ok(files)
}

impl ReportError {
    pub(crate) fn io(file: &Path, source: std::io::Error) -> Self {
        ReportError::Io { file: file.display().to_string(), source }
    }
}

pub use backoffsim_core::worlds::catalogue::Better;
use backoffsim_core::worlds::catalogue::ModelId;

/// The models of the runs in `data`, from each variant's `model` parameter, so metric
/// ids read with their model's meaning.
pub fn models(data: &data::RunSet) -> Vec<ModelId> {
    let mut out: Vec<ModelId> = data
        .variants
        .iter()
        .flat_map(|v| v.params.iter().filter(|(k, _)| k == "model").filter_map(|(_, m)| ModelId::from_name(m)))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Who a per-member distribution is over, for titles and axes: the jobs of a queue, the
/// clients of every other model.
pub(crate) fn population(models: &[ModelId]) -> &'static str {
    // The calls model's distributions are over logical calls, many per client.
    match models {
        [] => "clients",
        _ if models.iter().all(|&m| m == ModelId::Jobs) => "jobs",
        _ if models.iter().all(|&m| m == ModelId::Calls) => "calls",
        _ => "clients",
    }
}
