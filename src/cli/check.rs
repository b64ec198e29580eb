//! `backoffsim check FILE`: validate a scenario without running it.

use std::io::Write;
use std::path::Path;

use super::CliError;
use crate::scenario::load_file;

pub fn check(file: &Path) -> Result<(), CliError> {
    let scenario = load_file(file)?;
    let names: Vec<&str> = scenario.variants.iter().map(|v| v.name.as_str()).collect();
    writeln!(
        std::io::stdout(),
        "{}: ok — scenario `{}`, {} variant(s) ({}), {} replication(s), horizon {}",
        file.display(),
        scenario.name,
        names.len(),
        names.join(", "),
        scenario.replications,
        scenario.horizon
    )
    .map_err(CliError::from_stdout)
}
