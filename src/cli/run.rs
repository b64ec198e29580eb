//! `backoffsim run FILE`: run a scenario and write its results atomically.

use std::path::{Path, PathBuf};

use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::CliError;
use super::table::TableArgs;
use backoffsim_core::engine::progress::Progress;
use backoffsim_core::run::destination::Destination;
use backoffsim_core::run::guard::{self, Limits, Refusal};
use backoffsim_core::run::shard::{Shard, part};
use backoffsim_core::run::{Outcome, RunOptions, Work, assemble, run_places};
use backoffsim_core::scenario::{Overrides, Scenario, ScenarioError, load_arg_with};
use backoffsim_report::output::{summary, summary_rows, write_results};

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The scenario file (TOML); `-` reads it from standard input.
    pub file: PathBuf,
    #[command(flatten)]
    pub overrides: OverrideArgs,
    /// Results directory [default: the scenario's name under results/]. It is replaced
    /// whole, so it must be new, empty, or a directory backoffsim wrote.
    #[arg(long, short)]
    pub out: Option<PathBuf>,
    /// Worker threads [default: one per core; at most four per core]. Results do not
    /// depend on it.
    #[arg(long)]
    pub threads: Option<usize>,
    /// No progress or messages on stderr.
    #[arg(long, short)]
    pub quiet: bool,
    /// The run's total event budget, over every replication of every cell and variant
    /// [default: 10000000000, a quarter to half an hour on two cores]. A run estimated
    /// above it is refused before it starts, and a run that exceeds it stops (exit 1,
    /// nothing written).
    #[arg(long, value_name = "N")]
    pub max_events: Option<u64>,
    /// Run even if the resource guard estimates the run exceeds the total event budget or
    /// the available memory, or one replication its `max_events`. The budgets still
    /// hold: a replication past `max_events`, or the run past `--max-events`, stops it.
    #[arg(long)]
    pub force: bool,
    /// Print the summary as JSON Lines instead of the table: one
    /// {"type":"summary","data":{…}} per row, then {"type":"run","data":{…}}.
    #[arg(long)]
    pub json: bool,
    /// Run only the K-th of N slices of the runs (K from 0 to N-1, as Slurm arrays and
    /// Kubernetes Indexed Jobs number their tasks) and write a part for `backoffsim
    /// merge`, not results [default --out: results/NAME.shard-K-of-N, NAME the scenario's].
    #[arg(long, value_name = "K/N", conflicts_with = "json")]
    pub shard: Option<Shard>,
    #[command(flatten)]
    pub table: TableArgs,
}

/// The scenario keys a command line may set; `check` takes them too, so that it checks
/// what `run` would run.
#[derive(Debug, Args, Clone, Copy)]
pub struct OverrideArgs {
    /// Master seed; overrides the scenario's `seed`.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Replications per variant; overrides the scenario's `replications`.
    #[arg(long)]
    pub replications: Option<u32>,
}

impl OverrideArgs {
    pub fn overrides(self) -> Result<Overrides, CliError> {
        if self.replications == Some(0) {
            return Err(CliError::Usage("--replications must be at least 1".into()));
        }
        Ok(Overrides { seed: self.seed, replications: self.replications })
    }
}

pub fn run(args: RunArgs) -> Result<(), CliError> {
    // First of all: a Ctrl-C from here on is honoured at the next check, never by the
    // default action, which would leave the place claimed below half-repaired.
    super::signals::install().map_err(CliError::Failed)?;
    let overrides = args.overrides.overrides()?;
    check_threads(args.threads)?;
    // Laid over the file before it is checked: a `[trace]` that names a replication the
    // override removes is refused, not silently left empty.
    let scenario = load(&args.file, overrides)?;
    // Before minutes of simulation: a typo in `--metric` is found at once.
    args.table.metrics.check(&models(&scenario))?;
    if args.max_events == Some(0) {
        return Err(CliError::Usage("--max-events must be at least 1".into()));
    }
    let total_events = args.max_events.unwrap_or(guard::DEFAULT_TOTAL_EVENTS);
    let work = Work::of(&scenario);
    let places = args.shard.map_or(work.all(), |shard| shard.places(work.len()));
    // Before anything is written or staged: a refused run leaves no trace.
    if !args.force {
        let limits = Limits { total_events, available_memory: guard::available_memory() };
        let totals = guard::totals_of(&scenario, &work, places, threads(args.threads));
        guard::check(&scenario, &totals, limits).map_err(|r| refusal(&scenario, r))?;
    }
    let out = args.out.unwrap_or_else(|| match args.shard {
        Some(s) => PathBuf::from("results").join(format!("{}.shard-{}-of-{}", scenario.name, s.index, s.count)),
        None => PathBuf::from("results").join(&scenario.name),
    });
    // Held from here to the end: nobody else writes there while this run works.
    let dest = claim(&out)?;

    let opts = RunOptions { threads: args.threads.unwrap_or(0), max_events: Some(total_events) };
    let interrupted = || CliError::Interrupted(dest.path().display().to_string());
    let progress = Progress::new();
    let runs = places.count();
    let whole = scenario.horizon.as_nanos() as f64 * runs as f64;
    let results = with_progress_bar(args.quiet, &scenario.name, runs, whole, &progress, || {
        run_places(&scenario, &work, places, opts, &progress)
    });
    if backoffsim_core::run::interrupt::requested() {
        return Err(interrupted());
    }
    let results = results.map_err(|e| CliError::Failed(failure(e)))?;
    let Some(shard) = args.shard else {
        return finish(&scenario, &assemble(&scenario, results), &dest, args.quiet, args.json, &args.table);
    };
    let dir = part::write(&scenario, shard, &work, &results, &dest).map_err(|e| match e {
        part::WriteError::Interrupted => interrupted(),
        e => CliError::Failed(e.to_string()),
    })?;
    if !args.quiet {
        eprintln!(
            "backoffsim: wrote shard {shard} ({} of {} runs) to {}; `backoffsim merge` takes all {} parts",
            results.len(),
            work.len(),
            backoffsim_core::input::escaped(&dir.display().to_string()),
            shard.count
        );
    }
    Ok(())
}

/// Loads the scenario `file` with `overrides`, stopping within milliseconds of a Ctrl-C
/// however large the file: the parse, which cannot look at the flag itself, runs on a
/// thread of its own and is abandoned at a stop.
pub fn load(file: &Path, overrides: Overrides) -> Result<Scenario, CliError> {
    let file = file.to_path_buf();
    let scenario = backoffsim_core::run::interrupt::abandonable(move || load_arg_with(&file, overrides))
        .map_err(|_| CliError::Interrupted("every earlier result".into()))?
        .map_err(CliError::from)?;
    warn(&scenario);
    Ok(scenario)
}

/// The scenario's warnings on stderr, one line each, placed as errors are. Even with
/// `--quiet`, which silences progress: a warning says the results answer less than the
/// file asks, which a script running quietly needs to hear most.
fn warn(scenario: &Scenario) {
    for w in &scenario.warnings {
        eprintln!("backoffsim: warning: {}", w.headline());
    }
}

/// What a failed run says: the simulation's error, with the knob that stops it when it
/// is a budget, and that nothing was written.
fn failure(e: backoffsim_core::run::SimError) -> String {
    format!("{e}; nothing was written")
}

/// The most threads `--threads` may ask for: four per core. More only share the cores
/// (results never depend on the count), and each costs a stack.
pub fn max_threads() -> usize {
    4 * std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn check_threads(threads: Option<usize>) -> Result<(), CliError> {
    match threads {
        Some(0) => Err(CliError::Usage("--threads must be at least 1".into())),
        Some(n) if n > max_threads() => Err(CliError::Usage(format!(
            "--threads {n}: at most {} on this machine (four per core): more threads than cores only share \
             them, and the results are the same for any count",
            max_threads()
        ))),
        _ => Ok(()),
    }
}

/// Steps of the bar: parts per million of the run's simulated time, so that neither a
/// long horizon times many runs overflows it nor a short one moves it in jumps.
const BAR_STEPS: u64 = 1_000_000;

/// How often the bar reads the run's progress and redraws: a replication of a million
/// channels takes seconds, and a bar that stands still that long looks hung.
const BAR_EVERY: std::time::Duration = std::time::Duration::from_millis(200);

/// Runs `work` under a bar on stderr showing the simulated time reached over all `runs`
/// (`whole` nanoseconds in all), the runs finished and an estimate of the time left; no
/// bar with `--quiet`, nor where stderr is not a terminal (indicatif draws nothing there).
/// The bar only reads `progress`, on a thread of its own, so it cannot change a result.
fn with_progress_bar<T>(
    quiet: bool,
    name: &str,
    runs: u64,
    whole: f64,
    progress: &Progress,
    work: impl FnOnce() -> T,
) -> T {
    if quiet {
        return work();
    }
    let bar = ProgressBar::with_draw_target(Some(BAR_STEPS), ProgressDrawTarget::stderr());
    if bar.is_hidden() {
        return work();
    }
    bar.set_style(
        ProgressStyle::with_template(
            "{prefix} [{bar:30}] {percent:>3}% of simulated time, {msg} runs, {elapsed}, about {eta} left",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    let show = |bar: &ProgressBar| {
        let share = if whole > 0.0 { progress.reached().as_nanos() as f64 / whole } else { 0.0 };
        bar.set_message(format!("{}/{runs}", progress.finished()));
        bar.set_position((share.min(1.0) * BAR_STEPS as f64) as u64);
    };
    show(&bar);
    bar.set_prefix(name.to_string());
    let (done, wait) = std::sync::mpsc::channel::<()>();
    let (bar_ref, show) = (&bar, &show);
    let result = std::thread::scope(|s| {
        s.spawn(move || {
            while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = wait.recv_timeout(BAR_EVERY) {
                show(bar_ref);
            }
        });
        let result = work();
        drop(done);
        result
    });
    bar.finish_and_clear();
    result
}

/// Writes a whole run's results to `out` and prints its summary on stdout: what `run`
/// does after simulating, and `merge` after putting parts together.
pub fn finish(
    scenario: &Scenario,
    outcome: &Outcome,
    dest: &Destination,
    quiet: bool,
    json: bool,
    table: &TableArgs,
) -> Result<(), CliError> {
    let out = dest.path();
    let dir = write_results(scenario, outcome, dest).map_err(|e| match e {
        backoffsim_report::output::OutputError::Interrupted => CliError::Interrupted(out.display().to_string()),
        e => CliError::Failed(e.to_string()),
    })?;
    if !quiet {
        eprintln!("backoffsim: wrote {}", backoffsim_core::input::escaped(&dir.display().to_string()));
    }

    let mut rows = summary_rows(scenario, outcome);
    rows.retain(|r| table.metrics.keeps(&r.metric));
    if !quiet {
        for note in no_value_notes(scenario, &rows) {
            eprintln!("backoffsim: note: {note}");
        }
    }
    let mut stdout = std::io::stdout().lock();
    if json {
        let files = super::json::manifest_files(&dir)
            .map_err(|e| CliError::Failed(format!("cannot read {}: {e}", dir.join("manifest.json").display())))?;
        let run = super::json::Run {
            scenario: &scenario.name,
            seed: scenario.seed,
            replications: scenario.replications,
            out_dir: out.display().to_string(),
            files,
        };
        return super::json::write(&mut stdout, &scenario.sweep_keys, &rows, run).map_err(CliError::from_stdout);
    }
    let variants: Vec<String> = scenario.variants.iter().map(|v| v.name.clone()).collect();
    super::table::print(&mut stdout, table.layout, &scenario.sweep_keys, &variants, &rows)
        .map_err(CliError::from_stdout)
}

/// The models a scenario's variants run, each once, so that `--metric` is checked
/// against the metrics they write.
pub fn models(scenario: &Scenario) -> Vec<backoffsim_core::worlds::catalogue::ModelId> {
    let mut models: Vec<_> = scenario.variants.iter().flat_map(|v| v.cells.iter().map(|c| c.spec.model())).collect();
    models.sort();
    models.dedup();
    models
}

/// Why each metric without a value has none, one line per metric and reason, naming
/// the variants and sweep points where it has none unless that is everywhere.
fn no_value_notes(scenario: &Scenario, rows: &[summary::SummaryRow]) -> Vec<String> {
    let all = rows.iter().map(|r| (&r.variant, &r.sweep)).collect::<std::collections::BTreeSet<_>>().len();
    let mut by_metric: Vec<(&str, Vec<String>)> = Vec::new();
    for r in rows.iter().filter(|r| r.estimate.is_none()) {
        let place = if r.sweep.is_empty() {
            format!("`{}`", r.variant)
        } else {
            let point: Vec<String> =
                scenario.sweep_keys.iter().zip(&r.sweep).map(|(k, v)| format!("{k} = {v}")).collect();
            format!("`{}` at {}", r.variant, point.join(", "))
        };
        match by_metric.iter_mut().find(|(m, _)| *m == r.metric) {
            Some((_, places)) => places.push(place),
            None => by_metric.push((&r.metric, vec![place])),
        }
    }
    by_metric
        .into_iter()
        .map(|(metric, places)| {
            let why = backoffsim_core::worlds::catalogue::no_value(metric);
            let whereabouts = if places.len() == all { String::new() } else { format!(" in {}", places.join("; ")) };
            format!("`{metric}` has no value{whereabouts}: {why}")
        })
        .collect()
}

/// The threads a run uses: `--threads`, or rayon's default of one per core.
pub fn threads(arg: Option<usize>) -> usize {
    arg.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// The guard's refusal as the command line reports it: at the scenario's `max_events`
/// key when one replication is too large, else as a usage error; exit 2 either way.
pub fn refusal(scenario: &Scenario, r: Refusal) -> CliError {
    match r {
        Refusal::Replication(message) => {
            let mut at = scenario.max_events_at.clone();
            at.message = message;
            CliError::Scenario(ScenarioError::single(at))
        }
        Refusal::Run(message) => CliError::Usage(message),
    }
}

/// Claims `out` for the results before minutes of simulation: refused (exit 2) when it
/// names a file, a link, `.` or a directory holding files backoffsim did not write, or
/// when another backoffsim is writing there.
pub fn claim(out: &Path) -> Result<Destination, CliError> {
    Destination::claim(out, "--out").map_err(|e| CliError::Usage(e.to_string()))
}
