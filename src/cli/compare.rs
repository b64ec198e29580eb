//! `backoffsim compare RUN_DIR RUN_DIR… [-o DIR]`: finished runs of one model side by
//! side on stdout, and with `-o` one report across them; runs of different models are
//! refused with exit 2 (see `report::compare`).

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use super::CliError;
use super::plot::usage;
use super::table::MetricArgs;
use backoffsim_core::run::destination::Destination;

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Run directories (what `backoffsim run` wrote), all of one model (tcp, grpc, occ
    /// or calls); their variants are labelled by directory name (`dir:variant`), or
    /// `run1:`, `run2:`, … when names repeat.
    #[arg(required = true, num_args = 1..)]
    pub run_dirs: Vec<PathBuf>,
    /// Also write a report (plots, report.md, report.html) into this directory
    /// [default: only print the table]. It is replaced whole, so it must be new, empty,
    /// or a directory backoffsim wrote.
    #[arg(long, short)]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub metrics: MetricArgs,
    /// No messages on stderr.
    #[arg(long, short)]
    pub quiet: bool,
}

pub fn compare(args: CompareArgs) -> Result<(), CliError> {
    super::signals::install().map_err(CliError::Failed)?;
    if let Some(out) = &args.out {
        for d in &args.run_dirs {
            if std::fs::canonicalize(d).ok() == std::fs::canonicalize(out).ok() && d.exists() {
                return Err(CliError::Usage(format!(
                    "the output directory {} is one of the runs compared: choose another -o",
                    out.display()
                )));
            }
        }
    }
    // The output directory is replaced whole: refuse one that holds something else
    // before the runs are read.
    let dest = match &args.out {
        Some(out) => Some(Destination::claim(out, "--out").map_err(|e| CliError::Usage(e.to_string()))?),
        None => None,
    };
    let stopped = |place: String| {
        move |e| match e {
            // Also a write that failed because it stopped (see `Staging::write`).
            _ if backoffsim_core::run::interrupt::requested() => CliError::Interrupted(place.clone()),
            e => usage(e),
        }
    };
    let place = args.out.as_ref().map_or("every earlier result".to_string(), |o| o.display().to_string());
    let data = backoffsim_report::compare::load(&args.run_dirs).map_err(stopped(place.clone()))?;
    args.metrics.check(&backoffsim_report::models(&data))?;
    let table = backoffsim_report::compare::table(&data, &|m| args.metrics.keeps(m))
        .map_err(|_| CliError::Interrupted(place.clone()))?;
    if let Some(dest) = &dest {
        let files = backoffsim_report::compare::write(&data, dest).map_err(stopped(place))?;
        if !args.quiet {
            eprintln!(
                "backoffsim: wrote {} ({})",
                backoffsim_core::input::escaped(&dest.path().display().to_string()),
                files.join(", ")
            );
        }
    }
    let mut stdout = std::io::stdout().lock();
    table.write(&mut stdout).and_then(|()| stdout.flush()).map_err(CliError::from_stdout)?;
    // Ranked rows whose best is not apart from the rest: say what that means, once.
    if !args.quiet && table.rows.iter().any(|r| !r.best.is_empty() && data.variant(&r.best).is_none()) {
        eprintln!(
            "backoffsim: best names a variant only where the 95 % interval of its difference to every other \
             excludes 0 (paired within a run, Welch's between runs); a variant of one replication has no interval"
        );
    }
    Ok(())
}
