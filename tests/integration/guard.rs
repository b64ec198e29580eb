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

/// The events `TINY`'s run really handles, from its manifest.
fn tiny_events() -> u64 {
    let (tmp, o, _) = try_run(TINY, &[]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(tmp.path().join("out/manifest.json")).unwrap()).unwrap();
    manifest["variants"][0]["cells"][0]["events"].as_array().unwrap().iter().map(|e| e.as_u64().unwrap()).sum()
}

#[test]
fn force_runs_what_the_guard_would_refuse_when_the_budget_holds_it() {
    // The estimate errs high: a budget of exactly the real events is refused before the
    // run, and with --force the run fits it.
    let real = tiny_events().to_string();
    let (tmp, o, exists) = try_run(TINY, &["--max-events", &real]);
    refused(&tmp, &o, exists);
    let (_tmp, o, exists) = try_run(TINY, &["--max-events", &real, "--force"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(exists);
}

#[test]
fn the_runs_total_budget_is_enforced_while_running_even_with_force() {
    let below = (tiny_events() - 1).to_string();
    let (tmp, o, exists) = try_run(TINY, &["--max-events", &below, "--force"]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains(&format!("exceeded its total event budget of {below} events")), "{err}");
    assert!(err.contains("`--max-events`") && err.contains("nothing was written"), "{err}");
    assert!(!exists);
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1, "nothing staged or written");
}

#[test]
fn one_replications_max_events_is_enforced_while_running_even_with_force() {
    let source = TINY.replace("max_events = 10000", "max_events = 100");
    let (tmp, o, exists) = try_run(&source, &["--force"]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("exceeded its event budget of 100 events") && err.contains("`max_events`"), "{err}");
    assert!(!exists);
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1);
}

#[test]
fn billions_of_replications_are_refused_at_once_in_little_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("tiny.toml");
    std::fs::write(&file, TINY).unwrap();
    let file = file.to_str().unwrap();
    let out = tmp.path().join("out");
    let limited = |args: &[&str]| {
        let mut cmd = super::common::bin();
        cmd.args(args);
        super::common::limit_memory(&mut cmd, 100 << 20).output().unwrap()
    };
    let o = limited(&["check", file, "--replications", "4294967295"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let said = text(&o.stdout);
    assert!(said.contains("4294967295 replication(s)") && said.contains("run would refuse this"), "{said}");
    let o = limited(&["run", file, "--quiet", "--replications", "4294967295", "--out", out.to_str().unwrap()]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("`replications` (4294967295)"), "{err}");
    // Forced, it cannot hold the results and says so rather than abort.
    let o =
        limited(&["run", file, "--quiet", "--replications", "4294967295", "--force", "--out", out.to_str().unwrap()]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("cannot hold the results of 4294967295 runs"), "{err}");
    assert!(!out.exists());
}

#[test]
fn threads_beyond_four_per_core_are_refused() {
    for n in ["100000", "4294967296", "0"] {
        let (tmp, o, exists) = try_run(TINY, &["--threads", n]);
        let err = refused(&tmp, &o, exists);
        assert!(err.contains("--threads"), "{err}");
    }
    let (tmp, o, exists) = try_run(TINY, &["--threads", "100000"]);
    let err = refused(&tmp, &o, exists);
    assert!(err.contains("at most ") && err.contains("four per core"), "{err}");
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
