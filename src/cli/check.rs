//! `backoffsim check FILE`: validate a scenario without running it (`-`: standard input),
//! and say what running it would cost, as the resource guard of `run` estimates it.

use std::io::Write;
use std::path::Path;

use super::CliError;
use backoffsim_core::run::guard::{self, Limits};
use backoffsim_core::scenario::arg_label;

pub fn check(file: &Path, overrides: super::run::OverrideArgs) -> Result<(), CliError> {
    super::signals::install().map_err(CliError::Failed)?;
    let scenario = super::run::load(file, overrides.overrides()?)?;
    let names: Vec<&str> = scenario.variants.iter().map(|v| v.name.as_str()).collect();
    let threads = super::run::threads(None);
    let totals = guard::totals(&scenario, threads);
    let limits = Limits { total_events: guard::DEFAULT_TOTAL_EVENTS, available_memory: guard::available_memory() };
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{}: ok — scenario `{}`, {} variant(s) ({}), {} run(s) of {} replication(s) each, horizon {}",
        backoffsim_core::input::escaped(&arg_label(file)),
        scenario.name,
        names.len(),
        names.join(", "),
        scenario.jobs() / u64::from(scenario.replications),
        scenario.replications,
        scenario.horizon
    )
    .map_err(CliError::from_stdout)?;
    writeln!(
        out,
        "estimate: {} events per replication at most, {} in all; peak memory about {} with {} \
         replication(s) at once",
        guard::about(totals.worst.events),
        guard::count(totals.events),
        guard::bytes(totals.memory()),
        totals.threads,
    )
    .map_err(CliError::from_stdout)?;
    // A valid scenario checks (exit 0) even when `run` would refuse it; the user is told.
    if let Err(refusal) = guard::check(&scenario, &totals, limits) {
        let why = match super::run::refusal(&scenario, refusal) {
            CliError::Scenario(e) => e.diagnostics.iter().map(|d| d.headline()).collect::<Vec<_>>().join("; "),
            e => e.to_string(),
        };
        writeln!(out, "run would refuse this without --force: {why}").map_err(CliError::from_stdout)?;
    }
    Ok(())
}
