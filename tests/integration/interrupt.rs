//! Ctrl-C and SIGTERM during a run: exit 130, a message that nothing was written, the
//! earlier results byte for byte as they were, and no staging directory left behind.

use std::process::Stdio;
use std::time::Duration;

use super::common::{bin, files, names_in, root, stop_with, text};

/// Interrupts a long run of a sweep (a shard's run too, with `extra`) with `signal`.
fn interrupt_a_sweep_with(signal: &str, extra: &[&str]) {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("results");
    let scenario = root().join("scenarios/library-defaults.toml");
    let scenario = scenario.to_str().unwrap();
    // Earlier results in the directory the interrupted run writes to.
    let first = bin()
        .args(["run", scenario, "--quiet", "--replications", "2", "--out"])
        .arg(&out)
        .args(extra)
        .output()
        .unwrap();
    assert!(first.status.success(), "{}", text(&first.stderr));
    let before = files(&out);
    // The same sweep with 400 replications runs for a minute: interrupt it early.
    let child = bin()
        .args(["run", scenario, "--quiet", "--replications", "400", "--out"])
        .arg(&out)
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(800));
    let o = stop_with(signal, child);
    assert_eq!(o.status.code(), Some(130), "SIG{signal}: {}", text(&o.stderr));
    let stderr = text(&o.stderr);
    assert!(stderr.contains("interrupted: nothing was written"), "{stderr}");
    assert_eq!(files(&out), before, "SIG{signal} changed the earlier results");
    assert_eq!(names_in(tmp.path()), ["results"], "SIG{signal} left a staging directory behind");
}

#[test]
fn ctrl_c_stops_a_running_sweep_and_leaves_the_earlier_results_as_they_were() {
    interrupt_a_sweep_with("INT", &[]);
}

#[test]
fn sigterm_stops_a_running_sweep_and_leaves_the_earlier_results_as_they_were() {
    interrupt_a_sweep_with("TERM", &[]);
}

#[test]
fn ctrl_c_stops_a_shard_and_leaves_its_earlier_part_as_it_was() {
    interrupt_a_sweep_with("INT", &["--shard", "1/2"]);
}

#[test]
fn a_staging_directory_left_by_a_killed_run_is_removed_by_the_next_run() {
    // SIGKILL cannot be handled: the run leaves `.results.partial` beside its target.
    let tmp = tempfile::tempdir().unwrap();
    let stale = tmp.path().join(".results.partial");
    std::fs::create_dir(&stale).unwrap();
    std::fs::write(stale.join("summary.csv"), "half a file").unwrap();
    let scenario = root().join("scenarios/calls-reset.toml");
    let o = bin()
        .args(["run", scenario.to_str().unwrap(), "--quiet", "--replications", "1", "--out"])
        .arg(tmp.path().join("results"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(!stale.exists(), "the stale staging directory is still there");
    assert!(tmp.path().join("results/summary.csv").is_file());
}
