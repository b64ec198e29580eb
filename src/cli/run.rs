//! `backoffsim run FILE`: run a scenario and write its results atomically.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::CliError;
use crate::output::{summary, summary_rows, write_results};
use crate::scenario::load_file;
use crate::sim::{RunOptions, run_scenario};

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The scenario file (TOML).
    pub file: PathBuf,
    /// Master seed; overrides the scenario's `seed`.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Replications per variant; overrides the scenario's `replications`.
    #[arg(long)]
    pub replications: Option<u32>,
    /// Results directory [default: results/<scenario name>].
    #[arg(long, short)]
    pub out: Option<PathBuf>,
    /// Worker threads [default: one per core]. Results do not depend on it.
    #[arg(long)]
    pub threads: Option<usize>,
    /// No progress or messages on stderr.
    #[arg(long, short)]
    pub quiet: bool,
}

pub fn run(args: RunArgs) -> Result<(), CliError> {
    let mut scenario = load_file(&args.file)?;
    if let Some(seed) = args.seed {
        scenario.seed = seed;
    }
    if let Some(r) = args.replications {
        if r == 0 {
            return Err(CliError::Usage("--replications must be at least 1".into()));
        }
        scenario.replications = r;
    }
    if args.threads == Some(0) {
        return Err(CliError::Usage("--threads must be at least 1".into()));
    }
    let out = args.out.unwrap_or_else(|| PathBuf::from("results").join(&scenario.name));

    let jobs = scenario.jobs();
    let bar = if args.quiet {
        ProgressBar::hidden()
    } else {
        let bar = ProgressBar::with_draw_target(Some(jobs), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} runs, {elapsed}")
                .expect("valid template")
                .progress_chars("=> "),
        );
        bar.set_prefix(scenario.name.clone());
        bar
    };
    let opts = RunOptions { threads: args.threads.unwrap_or(0) };
    let outcome = run_scenario(&scenario, opts, &|| bar.inc(1)).map_err(|e| CliError::Failed(e.to_string()));
    bar.finish_and_clear();
    let outcome = outcome?;
    let dir = write_results(&scenario, &outcome, &out).map_err(|e| CliError::Failed(e.to_string()))?;
    if !args.quiet {
        eprintln!("backoffsim: wrote {}", dir.display());
    }

    let rows = summary_rows(&scenario, &outcome);
    let mut stdout = std::io::stdout().lock();
    print_table(&mut stdout, &rows).map_err(CliError::from_stdout)
}

/// The summary as a plain table a person reads in the terminal.
fn print_table(w: &mut impl Write, rows: &[summary::SummaryRow]) -> std::io::Result<()> {
    let cells: Vec<[String; 4]> = rows
        .iter()
        .map(|r| {
            let e = &r.estimate;
            let ci = e.ci95.map(|(lo, hi)| format!("± {}", short((hi - lo) / 2.0))).unwrap_or_default();
            [r.variant.clone(), r.metric.clone(), format!("{} {}", short(e.mean), ci), r.unit.clone()]
        })
        .collect();
    let header = ["variant", "metric", "mean (95% CI)", "unit"];
    let width = |i: usize| cells.iter().map(|c| c[i].chars().count()).chain([header[i].len()]).max().unwrap_or(0);
    let (w0, w1, w2) = (width(0), width(1), width(2));
    writeln!(w, "{:w0$}  {:w1$}  {:w2$}  {}", header[0], header[1], header[2], header[3])?;
    for c in &cells {
        writeln!(w, "{:w0$}  {:w1$}  {:w2$}  {}", c[0], c[1], c[2], c[3])?;
    }
    Ok(())
}

/// Four significant digits: enough to read, not so many that columns explode.
fn short(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let digits = (3 - v.abs().log10().floor() as i32).max(0) as usize;
    format!("{v:.digits$}")
}
