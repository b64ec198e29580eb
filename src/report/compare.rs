//! `compare`: one report across finished runs, written atomically into a directory.

use std::path::{Path, PathBuf};

use super::data::RunSet;
use super::{ReportError, write_report};
use crate::output::staging::Staging;

/// Loads `runs`, labels each one's variants by run, and writes the plots and reports
/// into `out` (replacing it only once all is written). Returns the files written.
pub fn compare(runs: &[PathBuf], out: &Path) -> Result<Vec<String>, ReportError> {
    let data = RunSet::load_many(runs)?;
    let staging = Staging::begin(out).map_err(|e| ReportError::io(out, e))?;
    let files = write_report(&data, &mut |name, bytes| staging.write(name, bytes))?;
    staging.commit().map_err(|e| ReportError::io(out, e))?;
    Ok(files)
}
