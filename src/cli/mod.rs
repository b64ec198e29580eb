//! The command line: one file per subcommand. Each parses its arguments into library
//! calls and returns a `CliError` that `main` turns into an exit code.

mod aligned;
pub mod capture;
pub mod check;
pub mod compare;
pub mod completions;
pub mod explain;
pub mod json;
pub mod keys;
pub mod merge;
pub mod metrics;
pub mod plot;
pub mod presets;
pub mod rto;
pub mod run;
mod signals;
pub mod ss_log;
pub mod table;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use backoffsim_core::scenario::ScenarioError;

#[derive(Debug, Parser)]
#[command(
    name = "backoffsim",
    version,
    about = "A deterministic discrete-event simulator of retry timing",
    long_about = "A deterministic discrete-event simulator of retry timing: RFC 6298 TCP \
                  retransmission timers, gRPC connection backoff and client retry policies. \
                  The same scenario and seed give byte-identical results on any machine and \
                  for any thread count."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a scenario file and write its results (CSVs, manifest, plots and a report).
    ///
    /// Ctrl-C or SIGTERM stops the run within milliseconds: nothing is written, earlier
    /// results stay as they were, and the exit code is 130.
    Run(run::RunArgs),
    /// Merge the parts of a sharded run (`run --shard K/N`) into the results one whole
    /// run writes, byte for byte.
    Merge(merge::MergeArgs),
    /// Check a scenario file without running it.
    Check {
        /// The scenario file (TOML); `-` reads it from standard input.
        file: PathBuf,
        #[command(flatten)]
        overrides: run::OverrideArgs,
    },
    /// Re-draw one plot (SVG or PNG) from a finished run directory.
    Plot(plot::PlotArgs),
    /// Print finished runs of one model side by side; with `-o`, also write one report
    /// (Markdown + HTML, with plots) across them.
    Compare(compare::CompareArgs),
    /// Work with the retransmission-timer estimators directly.
    Rto {
        #[command(subcommand)]
        command: rto::RtoCommand,
    },
    /// List the retry presets: real libraries' retry behaviour, with their sources.
    Presets,
    /// List the metrics a run writes: id, title, unit, which way is better, what it measures.
    Metrics(metrics::MetricsArgs),
    /// Explain a retry policy: delays per attempt, worst cases, cap, attempts.
    Explain(explain::ExplainArgs),
    /// List every scenario key: type, default (per profile where it depends on one),
    /// range and meaning.
    Keys(keys::KeysArgs),
    /// Print a JSON Schema (draft-07) of scenario files, for editors (taplo, Even Better TOML).
    Schema,
    /// Print a shell completion script (bash, zsh, fish, elvish or powershell).
    Completions(completions::CompletionsArgs),
    /// Print the man page (roff), e.g. `backoffsim man > backoffsim.1`.
    Man,
}

/// Why a command failed, and so which exit code it gives.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Bad arguments or bad input: exit 2.
    #[error("{0}")]
    Usage(String),
    /// A scenario file that does not check: exit 2.
    #[error("{0}")]
    Scenario(#[from] ScenarioError),
    /// The run itself failed: exit 1.
    #[error("{0}")]
    Failed(String),
    /// The reader of our output went away (e.g. `| head`): not a failure.
    #[error("broken pipe")]
    BrokenPipe,
    /// Ctrl-C or SIGTERM: exit 130, nothing written.
    #[error("interrupted: nothing was written, and {0} is as it was")]
    Interrupted(String),
}

impl CliError {
    pub fn exit_code(&self) -> i32 {
        match self {
            CliError::BrokenPipe => 0,
            CliError::Interrupted(_) => backoffsim_core::run::interrupt::EXIT_CODE,
            CliError::Failed(_) => 1,
            CliError::Usage(_) | CliError::Scenario(_) => 2,
        }
    }

    /// An I/O error on stdout: a closed pipe is fine, anything else is a failure.
    pub fn from_stdout(e: std::io::Error) -> Self {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            CliError::BrokenPipe
        } else {
            CliError::Failed(format!("cannot write to standard output: {e}"))
        }
    }
}

pub fn dispatch(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        Command::Run(args) => run::run(args),
        Command::Merge(args) => merge::merge(args),
        Command::Check { file, overrides } => check::check(&file, overrides),
        Command::Rto { command } => rto::rto(command),
        Command::Presets => presets::presets(),
        Command::Explain(args) => explain::explain(args),
        Command::Metrics(args) => metrics::metrics(args),
        Command::Keys(args) => keys::keys(args),
        Command::Schema => keys::schema(),
        Command::Plot(args) => plot::plot(args),
        Command::Compare(args) => compare::compare(args),
        Command::Completions(args) => completions::completions(args),
        Command::Man => completions::man(),
    }
}
