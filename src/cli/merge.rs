//! `backoffsim merge DIR… -o OUT`: the parts `run --shard K/N` wrote, back into the
//! results one whole `run` writes, byte for byte.

use std::path::PathBuf;

use clap::Args;

use super::CliError;
use backoffsim_core::run::shard::merge::{MergeError, merge as merge_parts};

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The part directories, every shard of one run exactly once (a shell glob does).
    #[arg(required = true, value_name = "DIR")]
    pub parts: Vec<PathBuf>,
    /// Results directory [default: the scenario's name under results/]. It is replaced
    /// whole, so it must be new, empty, or a directory backoffsim wrote.
    #[arg(long, short)]
    pub out: Option<PathBuf>,
    /// No messages on stderr.
    #[arg(long, short)]
    pub quiet: bool,
    /// Print the summary as JSON Lines, as `run --json` does.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub table: super::table::TableArgs,
}

pub fn merge(args: MergeArgs) -> Result<(), CliError> {
    super::signals::install().map_err(CliError::Failed)?;
    // Parts are read and checked on a thread of their own, abandoned at a Ctrl-C.
    let parts = args.parts.clone();
    let merged = backoffsim_core::run::interrupt::abandonable(move || merge_parts(&parts))
        .map_err(|_| CliError::Interrupted("every earlier result".into()))?
        .map_err(|e| match e {
            MergeError::Parts(message) => CliError::Usage(message),
            MergeError::Scenario(e) => CliError::Scenario(e),
        })?;
    args.table.metrics.check(&super::run::models(&merged.scenario))?;
    let out = args.out.unwrap_or_else(|| PathBuf::from("results").join(&merged.scenario.name));
    let dest = super::run::claim(&out)?;
    if !args.quiet {
        eprintln!("backoffsim: merging {} parts of `{}`", merged.parts, merged.scenario.name);
    }
    super::run::finish(&merged.scenario, &merged.outcome, &dest, args.quiet, args.json, &args.table)
}
