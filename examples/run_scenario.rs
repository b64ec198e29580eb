//! Runs a scenario from code, without the command line and without writing files, and
//! prints one metric per variant: the seed article's retry loop against a 10 s outage,
//! with and without jitter, from a scenario written inline.
//!
//! `cargo run --release --example run_scenario [FILE.toml]` runs a scenario file instead
//! (e.g. `scenarios/tcp-blackout.toml`) and prints every metric.

use backoffsim::engine::progress::Progress;
use backoffsim::output::summary_rows;
use backoffsim::run::{RunOptions, run_scenario};
use backoffsim::scenario::{Scenario, load_file, load_str};

const INLINE: &str = r#"
name = "seed-loop-jitter"
description = "The seed loop against a 10 s outage: does full jitter cost time?"
seed = 1
replications = 3
horizon = "2min"

[calls]
clients = 1000
attempt_time = "100ms"
fail_time = "50ms"
fail_with = "503"
outage = "10s"

[calls.policy]
preset = "seed-loop"

[[variant]]
name = "full-jitter"

[[variant]]
name = "no-jitter"
[variant.calls.policy]
jitter = "none"
"#;

fn main() {
    let file = std::env::args().nth(1);
    let scenario = match &file {
        Some(path) => load_file(path.as_ref()),
        None => load_str("inline.toml", INLINE),
    };
    let scenario = scenario.unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2);
    });
    let only = if file.is_some() { None } else { Some(["success_rate", "time_to_success"].as_slice()) };
    match report(&scenario, only) {
        Ok(lines) => lines.iter().for_each(|l| println!("{l}")),
        Err(e) => {
            eprintln!("run_scenario: {e}");
            std::process::exit(1);
        }
    }
}

/// Runs `scenario` and returns a line per (variant, metric), for the metrics in `only`
/// (all without it).
fn report(scenario: &Scenario, only: Option<&[&str]>) -> Result<Vec<String>, String> {
    // Threads do not change the results: 0 lets rayon use every core.
    let outcome = run_scenario(scenario, RunOptions { threads: 0, max_events: None }, &Progress::new())
        .map_err(|e| e.to_string())?;
    let mut lines = vec![format!(
        "{}: {} variants × {} replications",
        scenario.name,
        scenario.variants.len(),
        scenario.replications
    )];
    for row in summary_rows(scenario, &outcome) {
        if only.is_none_or(|m| m.contains(&row.metric.as_str())) {
            // A metric no replication had a value for is listed without one.
            let Some(e) = row.estimate else {
                lines.push(format!("{:<12} {:<26} {:>10} {}", row.variant, row.metric, "—", row.unit));
                continue;
            };
            let ci = e.ci95.map(|(lo, hi)| format!(" (95% CI {lo:.4}–{hi:.4})")).unwrap_or_default();
            lines.push(format!("{:<12} {:<26} {:>10.4} {}{ci}", row.variant, row.metric, e.mean, row.unit));
        }
    }
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_inline_scenario_runs_and_jitter_changes_the_success_rate() {
        let scenario = load_str("inline.toml", INLINE).unwrap();
        let lines = report(&scenario, Some(&["success_rate"])).unwrap();
        let rate = |variant: &str| -> f64 {
            let line = lines.iter().find(|l| l.starts_with(variant)).unwrap();
            line.split_whitespace().nth(2).unwrap().parse().unwrap()
        };
        // Without jitter every call's 1 + 2 + 4 + 8 s of sleep outlasts the outage.
        assert_eq!(rate("no-jitter"), 1.0, "{lines:?}");
        assert!(rate("full-jitter") < 0.5, "{lines:?}");
    }

    #[test]
    fn a_shipped_scenario_file_runs_too() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/tcp-blackout.toml");
        let lines = report(&load_file(&path).unwrap(), Some(&["timeouts"])).unwrap();
        assert_eq!(lines.len(), 1 + 2, "{lines:?}");
    }
}
