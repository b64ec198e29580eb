//! `backoffsim check FILE`: validate a scenario without running it (`-`: standard input).

use std::io::Write;
use std::path::Path;

use super::CliError;
use crate::scenario::{arg_label, load_arg_with};

pub fn check(file: &Path, overrides: super::run::OverrideArgs) -> Result<(), CliError> {
    let scenario = load_arg_with(file, overrides.overrides()?)?;
    let names: Vec<&str> = scenario.variants.iter().map(|v| v.name.as_str()).collect();
    writeln!(
        std::io::stdout(),
        "{}: ok — scenario `{}`, {} variant(s) ({}), {} run(s) of {} replication(s) each, horizon {}",
        arg_label(file),
        scenario.name,
        names.len(),
        names.join(", "),
        scenario.jobs() / u64::from(scenario.replications),
        scenario.replications,
        scenario.horizon
    )
    .map_err(CliError::from_stdout)
}
