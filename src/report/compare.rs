//! `compare`: one report across finished runs, written atomically into a directory.
//!
//! Runs of different models are refused. Their metrics with the same name measure
//! different things (`timeouts` is an RTO expiry for TCP and a connection attempt that
//! hit its deadline for gRPC; `calls` counts client calls in `calls` and every write,
//! retries included, in `occ`), so a table that put them side by side would mislead: a comparison
//! is made only of runs that simulate the same model.

use std::collections::BTreeSet;
use std::path::PathBuf;

use super::data::RunSet;
use super::{ReportError, write_report};
use crate::destination::Destination;

/// Loads `runs`, labels each one's variants by run, and writes the plots and reports
/// into the claimed `dest` (replacing it only once all is written). Returns the files
/// written.
pub fn compare(runs: &[PathBuf], dest: &Destination) -> Result<Vec<String>, ReportError> {
    let out = dest.path();
    let data = RunSet::load_many(runs)?;
    check_same_model(&data)?;
    let staging = dest.stage().map_err(|e| ReportError::io(out, e))?;
    let files = write_report(&data, &mut |name, bytes| staging.write(name, bytes))?;
    crate::interrupt::check()?;
    staging.commit().map_err(|e| ReportError::io(out, e))?;
    Ok(files)
}

/// The model each run simulated (`tcp`, `grpc`, `occ`, `calls`; several joined by `+`
/// should one run mix them), in run order.
pub fn run_models(data: &RunSet) -> Vec<String> {
    (0..data.runs.len())
        .map(|i| {
            let models: BTreeSet<&str> = data
                .variants
                .iter()
                .filter(|v| v.run == i)
                .filter_map(|v| v.params.iter().find(|(k, _)| k == "model").map(|(_, m)| m.as_str()))
                .collect();
            if models.is_empty() { "unknown".to_string() } else { models.into_iter().collect::<Vec<_>>().join("+") }
        })
        .collect()
}

/// Refuses runs of different models, naming each run's model and any metric names they
/// share only by name.
pub fn check_same_model(data: &RunSet) -> Result<(), ReportError> {
    let models = run_models(data);
    if models.iter().collect::<BTreeSet<_>>().len() <= 1 {
        return Ok(());
    }
    let metrics_of = |i: usize| -> BTreeSet<&str> {
        data.summary
            .iter()
            .filter(|r| data.variant(&r.variant).is_some_and(|v| v.run == i))
            .map(|r| r.metric.as_str())
            .collect()
    };
    let mut shared = metrics_of(0);
    for i in 1..data.runs.len() {
        let theirs = metrics_of(i);
        shared.retain(|m| theirs.contains(m));
    }
    let runs: Vec<String> =
        data.runs.iter().zip(&models).map(|(r, m)| format!("{} ran model `{m}`", r.dir.display())).collect();
    let why = if shared.is_empty() {
        "they share no metric".to_string()
    } else {
        format!(
            "the metric names they share ({}) measure different things in each model",
            shared.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(", ")
        )
    };
    Err(ReportError::Incomparable(format!(
        "cannot compare runs of different models: {}; {why}. Compare runs of one model \
         (e.g. one scenario with two seeds, or two scenarios of the same model)",
        runs.join(", ")
    )))
}
