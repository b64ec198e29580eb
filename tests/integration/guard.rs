//! The resource guard: `run` refuses, before writing anything, a scenario estimated over
//! one replication's `max_events` or the run's total event budget, with exit 2 and a
//! message naming the estimate, the limit and what to change; `--max-events` and
//! `--force` let it go ahead. `check` prints the estimate and says when `run` would refuse.

use super::common::{run, text};

const TINY: &str = r#"name = "tiny"
description = "one steady connection for ten seconds"
horizon = "10s"
replications = 3
max_events = 10000

[tcp]
workload = { kind = "steady", interval = "100ms" }

[path]
base_rtt = "100ms"
"#;

/// Writes `source` and runs `run` on it with `extra`, into `out` inside a fresh
/// directory; returns the directory, the output and whether `out` exists.
fn try_run(source: &str, extra: &[&str]) -> (tempfile::TempDir, std::process::Output, bool) {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("tiny.toml");
    std::fs::write(&file, source).unwrap();
    let out = tmp.path().join("out");
    let mut args = vec!["run", file.to_str().unwrap(), "--quiet", "--out", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    let o = run(&args);
    let exists = out.exists();
    (tmp, o, exists)
}

/// Asserts a refusal: exit 2, and nothing but the scenario file in its directory.
fn refused(tmp: &tempfile::TempDir, o: &std::process::Output, exists: bool) -> String {
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(!exists, "a refused run must not create its results directory");
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1, "nothing staged or written");
    err
}

#[test]
fn a_run_over_the_total_event_budget_is_refused_naming_the_estimate_the_budget_and_max_events() {
    let (tmp, o, exists) = try_run(TINY, &["--max-events", "1000"]);
    let err = refused(&tmp, &o, exists);
    assert!(err.contains("this run would handle about ") && err.contains(" events ("), "{err}");
    assert!(err.contains("the budget of 1000 events"), "{err}");
    assert!(err.contains("`--max-events ") && err.contains("`--force`"), "{err}");
}

#[test]
fn a_large_enough_max_events_lets_the_same_run_go_ahead() {
    let (_tmp, o, exists) = try_run(TINY, &["--max-events", "1000000"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(exists);
}

#[test]
fn force_runs_what_the_guard_would_refuse() {
    let (_tmp, o, exists) = try_run(TINY, &["--max-events", "1000", "--force"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(exists);
}

#[test]
fn one_replication_over_its_max_events_is_refused_at_the_key_with_line_and_column() {
    let source = TINY.replace("max_events = 10000", "max_events = 100");
    let (tmp, o, exists) = try_run(&source, &[]);
    let err = refused(&tmp, &o, exists);
    assert!(err.contains("tiny.toml:5:14: key `max_events`: one replication"), "{err}");
    assert!(err.contains("more than `max_events` = 100 allows: raise `max_events` to at least "), "{err}");
    assert!(err.contains("`tcp.clients` or `horizon`"), "{err}");
}

#[test]
fn a_zero_max_events_is_a_usage_error() {
    let (tmp, o, exists) = try_run(TINY, &["--max-events", "0"]);
    let err = refused(&tmp, &o, exists);
    assert!(err.contains("--max-events must be at least 1"), "{err}");
}

#[test]
fn check_prints_the_estimate_and_says_when_run_would_refuse_yet_exits_0() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("tiny.toml");
    std::fs::write(&file, TINY).unwrap();
    let o = run(&["check", file.to_str().unwrap()]);
    assert!(o.status.success());
    let out = text(&o.stdout);
    assert!(out.contains("estimate: about ") && out.contains(" events per replication at most, "), "{out}");
    assert!(out.contains("peak memory about "), "{out}");
    assert!(!out.contains("run would refuse"), "{out}");

    std::fs::write(&file, TINY.replace("max_events = 10000", "max_events = 100")).unwrap();
    let o = run(&["check", file.to_str().unwrap()]);
    assert!(o.status.success(), "a valid scenario checks even when run would refuse it");
    let out = text(&o.stdout);
    assert!(out.contains("run would refuse this without --force: "), "{out}");
    assert!(out.contains("tiny.toml:5:14: key `max_events`"), "{out}");
}

#[test]
fn every_shipped_scenario_passes_the_guard() {
    let mut files: Vec<_> = ["scenarios", "benches/scenarios"]
        .iter()
        .flat_map(|d| std::fs::read_dir(super::common::root().join(d)).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    assert!(files.len() >= 20, "{files:?}");
    for f in files {
        let o = run(&["check", f.to_str().unwrap()]);
        let out = text(&o.stdout);
        assert!(o.status.success(), "{}: {}", f.display(), text(&o.stderr));
        assert!(out.contains("estimate: about "), "{out}");
        assert!(!out.contains("run would refuse"), "{}: {out}", f.display());
    }
}
