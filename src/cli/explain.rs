//! `backoffsim explain POLICY | --file F [--set key=value]… [--runs N] [--seed S]
//! [--attempt-time D] [--fail-with OUTCOME] [--retry-after D] [--csv attempts|runs]
//! [--plot FILE.svg|FILE.png]`: a policy's delays, limits and worst cases without a
//! scenario. `--plot` also draws the sleep before each attempt (min–max, p1–p99,
//! median, nominal delay and cap); the report still prints unless `--csv` is given.
//!
//! POLICY is a preset name (`backoffsim presets`); `--file` reads a `[retry.policy]`
//! table (or the policy's keys at the top level), with errors located like a
//! scenario's. The gRPC connection-backoff profiles (`grpc-connection-spec`, `-core`,
//! `-go`, `-java`) are explained through `model::grpc::explain`, as a channel whose every
//! attempt is refused at once; `--set` takes their keys (`initial_backoff`, …).

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use serde_spanned::Spanned;
use toml::de::{DeTable, DeValue};

use super::CliError;
use backoffsim_core::engine::time::SimDuration;
use backoffsim_core::explain::grpc::ConnectionSource;
use backoffsim_core::explain::retry::FailingCalls;
use backoffsim_core::explain::{self, DelaySource, Options, Run};
use backoffsim_core::metrics::quantile::quantile;
use backoffsim_core::model::grpc::GrpcBackoffConfig;
use backoffsim_core::model::retry::{Outcome, RetryAfter, RetryPolicy, RetryPolicyConfig, presets};
use backoffsim_core::scenario::load::{Document, join, locate};
use backoffsim_core::scenario::sets::{self, Set};
use backoffsim_core::scenario::{Diagnostic, ScenarioError};
use backoffsim_report::plot::Format;
use backoffsim_report::plot::delays::{self, AttemptStats};

/// What `--csv` prints instead of the report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CsvKind {
    /// One row per attempt: run,attempt,sleep_s,elapsed_s.
    Attempts,
    /// One row per call: run,attempts,total_sleep_s,giveup_s,reason.
    Runs,
}

#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// A preset name, e.g. gcs-python (`backoffsim presets` lists them).
    pub policy: Option<String>,
    /// A TOML file with a [retry.policy] table, or the policy's keys at the top level.
    #[arg(long)]
    pub file: Option<PathBuf>,
    /// Override a field by its scenario name, e.g. `--set deadline=30s --set jitter=none`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// Always-failing calls to simulate.
    #[arg(long, default_value_t = 10_000)]
    pub runs: u32,
    /// Seed of the jitter draws (run i draws from its own stream).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// How long each attempt takes before it fails, e.g. 200ms.
    #[arg(long, default_value = "0s", value_name = "DURATION")]
    pub attempt_time: String,
    /// The failure: timeout, dropped, refused, throttling or an HTTP status
    /// [default: 503 if the policy retries it, else its first retry condition].
    #[arg(long, value_name = "OUTCOME")]
    pub fail_with: Option<String>,
    /// The server's Retry-After on every failure (whole milliseconds), e.g. 10s.
    #[arg(long, value_name = "DURATION")]
    pub retry_after: Option<String>,
    /// Print CSV instead of the report.
    #[arg(long, value_enum)]
    pub csv: Option<CsvKind>,
    /// Also draw the delay before each attempt to FILE (.svg or .png).
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
}

const GRPC_CONNECTION: &[&str] =
    &["grpc-connection-spec", "grpc-connection-core", "grpc-connection-go", "grpc-connection-java"];

pub fn explain(args: ExplainArgs) -> Result<(), CliError> {
    if let Some(name) = args.policy.as_deref().filter(|n| GRPC_CONNECTION.contains(n)) {
        return explain_connection(&args, name);
    }
    let args = &args;
    let policy = resolve_policy(args)?;
    if !(1..=10_000_000).contains(&args.runs) {
        return Err(CliError::Usage("--runs must be from 1 to 10000000".into()));
    }
    let attempt_time =
        SimDuration::parse(&args.attempt_time).map_err(|e| CliError::Usage(format!("--attempt-time: {e}")))?;
    let mut outcome = match &args.fail_with {
        Some(w) => Outcome::parse(w).map_err(|e| CliError::Usage(format!("--fail-with: {e}")))?,
        None => policy.retry_on.typical_failure(),
    };
    if outcome.is_success() {
        return Err(CliError::Usage("--fail-with: a 2xx is a success; explain looks at calls that always fail".into()));
    }
    let format = plot_format(args)?;
    let mut failing_with = outcome.to_string();
    if let Some(ra) = &args.retry_after {
        let d = SimDuration::parse(ra).map_err(|e| CliError::Usage(format!("--retry-after: {e}")))?;
        if !matches!(outcome, Outcome::Http { .. }) {
            return Err(CliError::Usage(format!(
                "--retry-after needs an HTTP failure (e.g. --fail-with 503 or 429), not {outcome}"
            )));
        }
        outcome = outcome.with_retry_after(RetryAfter::Millis(d.as_nanos() / 1_000_000));
        failing_with += &format!(" with Retry-After {}", backoffsim_core::human::duration(d));
    }
    let opts = Options { runs: args.runs, seed: args.seed, attempt_time, ..Options::default() };
    let source = FailingCalls { policy: &policy, outcome };
    let runs = explain::simulate(&source, &opts);
    if let Some(format) = format {
        write_plot(args, format, &source, &failing_with, &runs, &opts)?;
    }
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    match args.csv {
        None => explain::write_report(&mut out, &source, &failing_with, &runs, &opts),
        Some(CsvKind::Attempts) => explain::write_attempts_csv(&mut out, &runs),
        Some(CsvKind::Runs) => explain::write_runs_csv(&mut out, &runs, attempt_time),
    }
    .map_err(CliError::from_stdout)?;
    out.flush().map_err(CliError::from_stdout)
}

/// What is said of a name that is neither a preset nor a connection profile.
fn unknown_policy(name: &str) -> String {
    if presets::find(name).is_none()
        && backoffsim_core::suggest::nearest(name, presets::all_names()).is_none()
        && let Some(profile) = backoffsim_core::suggest::nearest(name, GRPC_CONNECTION.iter().copied())
    {
        return format!(
            "unknown preset `{name}`; did you mean `{profile}`? (gRPC connection profiles: {}); \
             `backoffsim presets` describes them",
            GRPC_CONNECTION.join(", ")
        );
    }
    presets::unknown(name)
}

/// A gRPC connection-backoff profile: a channel whose every attempt is refused at once.
fn explain_connection(args: &ExplainArgs, name: &str) -> Result<(), CliError> {
    if args.file.is_some() || args.fail_with.is_some() || args.retry_after.is_some() {
        return Err(CliError::Usage(format!(
            "`{name}` takes --set, --runs, --seed, --attempt-time, --csv and --plot; a refused connection is its only failure"
        )));
    }
    let profile = name.trim_start_matches("grpc-connection-");
    let profile = if profile == "spec" { "spec".to_string() } else { format!("grpc-{profile}") };
    let base = format!("profile = {}", toml::Value::String(profile));
    let sets = Set::parse_all(&args.sets).map_err(CliError::Usage)?;
    let config: GrpcBackoffConfig = sets::apply(sets::base(&base), &sets).map_err(|e| CliError::Usage(e.join("\n")))?;
    let format = plot_format(args)?;
    let params = config.resolve().map_err(|errors| {
        CliError::Usage(
            errors.into_iter().map(|e| format!("--set {}: {}", e.key, e.message)).collect::<Vec<_>>().join("\n"),
        )
    })?;
    if !(1..=10_000_000).contains(&args.runs) {
        return Err(CliError::Usage("--runs must be from 1 to 10000000".into()));
    }
    let attempt_time =
        SimDuration::parse(&args.attempt_time).map_err(|e| CliError::Usage(format!("--attempt-time: {e}")))?;
    // Channels never give up: follow each for 20 attempts.
    let opts = Options { runs: args.runs, seed: args.seed, attempt_time, horizon: 20 };
    let source = ConnectionSource { params };
    let runs = explain::simulate(&source, &opts);
    if let Some(format) = format {
        write_plot(args, format, &source, "connection refused", &runs, &opts)?;
    }
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    match args.csv {
        None => explain::write_report(&mut out, &source, "connection refused", &runs, &opts),
        Some(CsvKind::Attempts) => explain::write_attempts_csv(&mut out, &runs),
        Some(CsvKind::Runs) => explain::write_runs_csv(&mut out, &runs, attempt_time),
    }
    .map_err(CliError::from_stdout)?;
    out.flush().map_err(CliError::from_stdout)
}

/// The format `--plot`'s extension names, if it is given.
fn plot_format(args: &ExplainArgs) -> Result<Option<Format>, CliError> {
    let Some(path) = &args.plot else {
        return Ok(None);
    };
    Format::from_path(path)
        .map(Some)
        .ok_or_else(|| CliError::Usage(format!("--plot {}: name the file .svg or .png", path.display())))
}

/// The distribution of the sleep before each attempt after the first, over the runs
/// that reached it.
pub fn attempt_stats<S: DelaySource>(source: &S, runs: &[Run]) -> Vec<AttemptStats> {
    let max_attempts = runs.iter().map(Run::attempts).max().unwrap_or(0);
    let n = runs.len().max(1) as f64;
    let secs = |ns: u64| ns as f64 / 1e9;
    (1..max_attempts)
        .map(|j| {
            let mut sleeps: Vec<u64> =
                runs.iter().filter(|r| r.attempts() > j).map(|r| r.sleeps[j].as_nanos()).collect();
            sleeps.sort_unstable();
            AttemptStats {
                attempt: j as u32 + 1,
                reached: sleeps.len() as f64 / n,
                min: secs(sleeps[0]),
                p1: secs(quantile(&sleeps, 0.01).unwrap_or(0)),
                p50: secs(quantile(&sleeps, 0.5).unwrap_or(0)),
                p99: secs(quantile(&sleeps, 0.99).unwrap_or(0)),
                max: secs(sleeps[sleeps.len() - 1]),
                nominal: source.nominal(j as u32 - 1).map(|d| d.as_secs_f64()),
            }
        })
        .collect()
}

/// Draws `--plot`, writing FILE.tmp and renaming it over FILE.
fn write_plot<S: DelaySource>(
    args: &ExplainArgs,
    format: Format,
    source: &S,
    failing_with: &str,
    runs: &[Run],
    opts: &Options,
) -> Result<(), CliError> {
    let Some(path) = &args.plot else {
        return Ok(());
    };
    let facts = source.facts(opts.attempt_time);
    let subtitle = format!(
        "{} always-failing calls, each attempt failing with {failing_with} after {}; seed {}; % = calls that reached the attempt",
        runs.len(),
        backoffsim_core::human::duration(opts.attempt_time),
        opts.seed
    );
    let stats = attempt_stats(source, runs);
    let bytes = delays::render(&facts.title, &subtitle, &stats, facts.cap.map(|c| c.as_secs_f64()), format).map_err(
        |e| match e {
            backoffsim_report::ReportError::Missing(why) => CliError::Usage(format!("--plot: {why}")),
            other => CliError::Failed(other.to_string()),
        },
    )?;
    let mut tmp = path.clone().into_os_string();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, path)).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        CliError::Failed(format!("cannot write {}: {e}", path.display()))
    })
}

/// The policy from the preset name or the file, with the `--set`s laid over it.
fn resolve_policy(args: &ExplainArgs) -> Result<RetryPolicy, CliError> {
    let mut file: Option<(String, String, String)> = None;
    let preset = match (&args.policy, &args.file) {
        (Some(_), Some(_)) => {
            return Err(CliError::Usage(
                "give a preset name or --file, not both (the file may name its preset)".into(),
            ));
        }
        (None, None) => {
            return Err(CliError::Usage(format!(
                "name a preset or give --file (presets: {})",
                presets::names().join(", ")
            )));
        }
        (Some(name), None) => {
            if presets::find(name).is_none() {
                return Err(CliError::Usage(unknown_policy(name)));
            }
            format!("preset = {}", toml::Value::String(name.clone()))
        }
        (None, Some(path)) => {
            let (label, source) = read(path)?;
            let (_, prefix) = parse_file(&label, &source)?;
            file = Some((label, source, prefix));
            String::new()
        }
    };
    let sets = Set::parse_all(&args.sets).map_err(CliError::Usage)?;
    let set_keys: Vec<String> = sets.iter().map(|s| s.key.clone()).collect();
    let config: RetryPolicyConfig = match &file {
        None => sets::apply(sets::base(&preset), &sets),
        Some((label, source, prefix)) => {
            let doc = Document::parse(label, source).expect("parsed once already");
            sets::apply(policy_table(&doc, prefix), &sets)
        }
    }
    .map_err(|e| CliError::Usage(e.join("\n")))?;
    config.resolve().map_err(|errors| match &file {
        None => CliError::Usage(
            errors.into_iter().map(|e| format!("--set {}: {}", e.key, e.message)).collect::<Vec<_>>().join("\n"),
        ),
        Some((label, source, prefix)) => {
            let doc = Document::parse(label, source).expect("parsed once already");
            let diagnostics = errors
                .into_iter()
                .map(|e| {
                    let (k, m) = (e.key, e.message);
                    if set_keys.contains(&k) {
                        Diagnostic::at("--set", "", None, &k, &m)
                    } else {
                        let path = join(prefix, &k);
                        doc.diag(Some(locate(&doc.root, &path)), &path, &m)
                    }
                })
                .collect();
            CliError::Scenario(ScenarioError { diagnostics })
        }
    })
}

/// The `[retry.policy]` table of a file `parse_file` accepted (`prefix` names it), or
/// the whole file.
fn policy_table<'a>(doc: &Document<'a>, prefix: &str) -> Spanned<DeTable<'a>> {
    if prefix.is_empty() {
        return doc.root.clone();
    }
    let policy = doc.root.get_ref().get("retry").and_then(|r| match r.get_ref() {
        DeValue::Table(t) => t.get("policy"),
        _ => None,
    });
    match policy.map(|p| (p.span(), p.get_ref())) {
        Some((span, DeValue::Table(t))) => Spanned::new(span, t.clone()),
        _ => unreachable!("parse_file found the [retry.policy] table"),
    }
}

fn read(path: &Path) -> Result<(String, String), CliError> {
    let label = path.display().to_string();
    let fail = |m: String| CliError::Scenario(ScenarioError::single(Diagnostic::at(&label, "", None, "", &m)));
    let cannot = "cannot read the policy file";
    let file = std::fs::File::open(path).map_err(|e| fail(format!("{cannot}: {e}")))?;
    let bytes = backoffsim_core::scenario::read_scenario(&label, file, cannot)?;
    let source =
        String::from_utf8(bytes).map_err(|_| fail("the file is not UTF-8 text: is it a TOML policy?".into()))?;
    // Without a byte-order mark, as a scenario is read: columns are those an editor shows.
    let source = backoffsim_core::input::strip_bom(&source).to_string();
    Ok((label, source))
}

/// Deserializes the `[retry.policy]` table, or the whole file if it has no `retry`.
fn parse_file(label: &str, source: &str) -> Result<(RetryPolicyConfig, String), CliError> {
    let single = |d: Diagnostic| CliError::Scenario(ScenarioError::single(d));
    if source.trim().is_empty() {
        return Err(single(Diagnostic::at(
            label,
            source,
            None,
            "",
            "the file is empty: write the policy's keys, e.g. preset = \"gcs-python\", at the top level or under [retry.policy]",
        )));
    }
    let doc = Document::parse(label, source).map_err(CliError::Scenario)?;
    let root = doc.root.get_ref();
    let (table, prefix) = match root.get("retry") {
        None => (doc.root.clone(), String::new()),
        Some(retry) => {
            let policy = match retry.get_ref() {
                DeValue::Table(t) => t.get("policy"),
                _ => None,
            };
            match policy.map(|p| (p.span(), p.get_ref())) {
                Some((span, DeValue::Table(t))) => (Spanned::new(span, t.clone()), "retry.policy".to_string()),
                _ => {
                    return Err(single(doc.diag(
                        Some(retry.span()),
                        "retry",
                        "expected a [retry.policy] table with the policy's keys",
                    )));
                }
            }
        }
    };
    let config: RetryPolicyConfig = doc.deserialize(table, &prefix).map_err(single)?;
    Ok((config, prefix))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profile_name_without_connection_points_to_its_connection_profile() {
        let m = unknown_policy("grpc-go");
        assert!(m.starts_with("unknown preset `grpc-go`; did you mean `grpc-connection-go`?"), "{m}");
        let m = unknown_policy("gcs-pyton");
        assert!(m.starts_with("unknown preset `gcs-pyton`; did you mean `gcs-python-api-core-2.11+`?"), "{m}");
        let listed: Vec<&str> = super::super::presets::CONNECTION_PROFILES.iter().map(|p| p.0).collect();
        assert_eq!(listed, GRPC_CONNECTION, "`presets` lists what `explain` takes");
    }
}
