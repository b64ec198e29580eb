//! `backoffsim compare RUN_DIR RUN_DIR… -o DIR`: one report across finished runs of one
//! model; runs of different models are refused with exit 2 (see `report::compare`).

use std::path::PathBuf;

use clap::Args;

use super::CliError;
use super::plot::usage;
use crate::destination::Destination;

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Run directories (what `backoffsim run` wrote), all of one model (tcp, grpc, occ
    /// or calls); their variants are labelled by directory name (`dir:variant`), or
    /// `run1:`, `run2:`, … when names repeat.
    #[arg(required = true, num_args = 1..)]
    pub run_dirs: Vec<PathBuf>,
    /// The directory the report, its plots and report.html go to. It is replaced whole,
    /// so it must be new, empty, or a directory backoffsim wrote.
    #[arg(long, short)]
    pub out: PathBuf,
    /// No messages on stderr.
    #[arg(long, short)]
    pub quiet: bool,
}

pub fn compare(args: CompareArgs) -> Result<(), CliError> {
    crate::interrupt::install().map_err(CliError::Failed)?;
    for d in &args.run_dirs {
        if std::fs::canonicalize(d).ok() == std::fs::canonicalize(&args.out).ok() && d.exists() {
            return Err(CliError::Usage(format!(
                "the output directory {} is one of the runs compared: choose another -o",
                args.out.display()
            )));
        }
    }
    // The output directory is replaced whole: refuse one that holds something else.
    let dest = Destination::claim(&args.out, "--out").map_err(|e| CliError::Usage(e.to_string()))?;
    let files = crate::report::compare::compare(&args.run_dirs, &dest).map_err(|e| match e {
        // Also a write that failed because it stopped (see `Staging::write`).
        _ if crate::interrupt::requested() => CliError::Interrupted(dest.path().display().to_string()),
        e => usage(e),
    })?;
    if !args.quiet {
        eprintln!(
            "backoffsim: wrote {} ({})",
            crate::input::escaped(&args.out.display().to_string()),
            files.join(", ")
        );
    }
    Ok(())
}
