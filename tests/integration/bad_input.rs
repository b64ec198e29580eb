//! Bad scenario files and bad arguments: exit code 2, a one-screen error naming the
//! place, no panic, and no result written.

use super::common::{run, text};

const GOOD: &str = r#"
name = "t"
description = "a small valid scenario"
horizon = "10s"

[tcp]
workload = { kind = "steady", interval = "100ms" }

[path]
base_rtt = "100ms"
"#;

/// Writes `source` to a file, runs `check` and `run` on it, and returns check's stderr
/// after asserting both refused it with exit 2 and that `run` wrote nothing.
pub(super) fn refuse(source: &str) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("bad.toml");
    std::fs::write(&file, source).unwrap();
    let out = tmp.path().join("out");
    let checked = run(&["check", file.to_str().unwrap()]);
    let ran = run(&["run", file.to_str().unwrap(), "--quiet", "--out", out.to_str().unwrap()]);
    for o in [&checked, &ran] {
        assert_eq!(o.status.code(), Some(2), "stderr: {}", text(&o.stderr));
        let err = text(&o.stderr);
        assert!(!err.contains("panicked"), "{err}");
        assert!(err.lines().count() <= 25, "more than one screen:\n{err}");
    }
    assert!(!out.exists(), "a refused scenario must not write results");
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1, "nothing but the scenario file");
    text(&checked.stderr)
}

#[test]
fn the_good_base_file_checks() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("good.toml");
    std::fs::write(&file, GOOD).unwrap();
    let o = run(&["check", file.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("ok"));
}

#[test]
fn unknown_key_is_named_with_line_and_column() {
    let err = refuse(&GOOD.replace("[tcp]\n", "[tcp]\nwindw = 4\n"));
    assert!(err.contains("bad.toml:7:1"), "{err}");
    assert!(err.contains("key `tcp.windw`"), "{err}");
    assert!(err.contains("unknown key `windw`"), "{err}");
    assert!(err.contains("tcp"), "{err}");
    // A near miss is named: one letter short of `window`.
    assert!(err.contains("did you mean `window`?"), "{err}");
    let far = refuse(&GOOD.replace("[tcp]\n", "[tcp]\nbanana = 4\n"));
    assert!(far.contains("unknown key `banana`") && !far.contains("did you mean"), "{far}");
}

#[test]
fn wrong_type_names_the_key_and_what_was_expected() {
    let err = refuse(&GOOD.replace("base_rtt = \"100ms\"", "base_rtt = true"));
    assert!(err.contains("key `path.base_rtt`"), "{err}");
    assert!(err.contains("bad.toml:10:12"), "{err}");
    assert!(err.contains("duration"), "{err}");
}

#[test]
fn negative_duration_is_refused() {
    let err = refuse(&GOOD.replace("horizon = \"10s\"", "horizon = \"-5s\""));
    assert!(err.contains("key `horizon`"), "{err}");
    assert!(err.contains("negative"), "{err}");
}

#[test]
fn min_rto_above_max_rto_is_refused() {
    let err = refuse(&format!("{GOOD}\n[tcp.rto]\nmin_rto = \"90s\"\nmax_rto = \"60s\"\n"));
    assert!(err.contains("bad.toml:14:11: key `tcp.rto.max_rto`"), "{err}");
    assert!(err.contains("must be at least min_rto (90s)"), "{err}");
}

#[test]
fn loss_probability_above_one_is_refused() {
    let err = refuse(&format!("{GOOD}loss = {{ model = \"bernoulli\", p = 1.5 }}\n"));
    assert!(err.contains("key `path.loss.p`"), "{err}");
    assert!(err.contains("1.5"), "{err}");
}

#[test]
fn empty_file_is_refused() {
    let err = refuse("");
    assert!(err.contains("empty"), "{err}");
    let err = refuse("# only a comment\n\n");
    assert!(err.contains("empty"), "{err}");
}

#[test]
fn text_that_is_not_toml_is_refused_with_its_place() {
    let err = refuse("name = \"t\"\nthis is not toml\n");
    assert!(err.contains("bad.toml:2:"), "{err}");
    assert!(err.contains("not valid TOML"), "{err}");
}

#[test]
fn a_bad_value_in_a_variant_points_at_the_variant() {
    let err = refuse(&format!(
        "{GOOD}\n[[variant]]\nname = \"a\"\n\n[[variant]]\nname = \"b\"\npath.loss = {{ model = \"bernoulli\", p = 2.0 }}\n"
    ));
    assert!(err.contains("key `variant[1].path.loss.p`"), "{err}");
    assert!(err.contains("bad.toml:17:40"), "{err}");
}

#[test]
fn a_variant_may_not_change_the_shared_seed() {
    let err = refuse(&format!("{GOOD}\n[[variant]]\nname = \"a\"\nseed = 3\n"));
    assert!(err.contains("key `variant[0].seed`"), "{err}");
    assert!(err.contains("common random numbers"), "{err}");
}

#[test]
fn a_missing_file_is_a_usage_error() {
    let o = run(&["check", "no/such/file.toml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("cannot read"), "{}", text(&o.stderr));
}

#[test]
fn unknown_flags_and_subcommands_exit_2() {
    assert_eq!(run(&["frobnicate"]).status.code(), Some(2));
    assert_eq!(run(&["run", "scenarios/tcp-blackout.toml", "--bogus"]).status.code(), Some(2));
    assert_eq!(run(&["run", "scenarios/tcp-blackout.toml", "--threads", "0"]).status.code(), Some(2));
}

#[test]
fn a_forced_run_over_its_event_budget_fails_with_exit_1_and_keeps_earlier_results() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("budget.toml");
    std::fs::write(&file, GOOD.replace("horizon = \"10s\"", "horizon = \"10s\"\nmax_events = 50")).unwrap();
    let out = tmp.path().join("out");
    let good = tmp.path().join("good.toml");
    std::fs::write(&good, GOOD).unwrap();
    let o = run(&["run", good.to_str().unwrap(), "--quiet", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let earlier = super::common::files(&out);
    // Forced past the guard, which would refuse it before it starts (tests/integration/guard.rs).
    let o = run(&["run", file.to_str().unwrap(), "--quiet", "--force", "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(err.contains("event budget of 50 events") && err.contains("max_events"), "{err}");
    assert!(super::common::files(&out) == earlier, "the earlier results changed");
    let names: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names.len(), 3, "no staging directory left behind: {names:?}");
}

#[test]
fn tcp_give_up_budgets_and_linux_limits_are_checked_with_their_place() {
    let err = refuse(&GOOD.replace("[path]\n", "[tcp.rto]\nsyn_retries = 0\n\n[path]\n"));
    assert!(err.contains("bad.toml:10:15: key `tcp.rto.syn_retries`: must be from 1 to 127"), "{err}");
    // Linux's own range for max_rto: net.ipv4.tcp_rto_max_ms accepts 1000 to 120000.
    let err = refuse(&GOOD.replace("[path]\n", "[tcp.rto]\nprofile = \"linux\"\nmax_rto = \"10min\"\n\n[path]\n"));
    assert!(err.contains("bad.toml:11:11: key `tcp.rto.max_rto`"), "{err}");
    assert!(err.contains("net.ipv4.tcp_rto_max_ms"), "{err}");
}

#[test]
fn out_at_a_file_or_below_one_is_refused_before_running_and_the_file_is_untouched() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("notes.txt");
    std::fs::write(&file, "mine").unwrap();
    let scenario = super::common::root().join("scenarios/calls-reset.toml");
    for out in [file.clone(), file.join("results")] {
        let o = run(&["run", scenario.to_str().unwrap(), "--quiet", "--out", out.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
        let err = text(&o.stderr);
        assert!(err.contains("notes.txt") && err.contains("is a file, not a directory"), "{err}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine");
        assert_eq!(super::common::names_in(tmp.path()), ["notes.txt"], "nothing else may be written");
    }
}

#[test]
fn durations_with_exponents_or_beyond_100_years_are_refused_at_their_key() {
    let err = refuse(&GOOD.replace("horizon = \"10s\"", "horizon = \"1e30s\""));
    assert!(err.contains("bad.toml:4:11") && err.contains("key `horizon`"), "{err}");
    assert!(err.contains("uses an exponent"), "{err}");
    let err = refuse(&GOOD.replace("horizon = \"10s\"", "horizon = \"18446744073s\""));
    assert!(err.contains("key `horizon`") && err.contains("at most 876600 h"), "{err}");
}
