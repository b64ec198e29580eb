//! Friction in writing scenarios: standard input, percentages, the default path of gRPC
//! scenarios, and every error of a file reported at once.

use std::io::Write;
use std::process::Stdio;

use super::common::{bin, limit_memory, run, text};

/// Runs the binary with `args`, `input` on standard input.
fn with_stdin(args: &[&str], input: &str) -> std::process::Output {
    let mut child =
        bin().args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

fn check_text(source: &str) -> std::process::Output {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("s.toml");
    std::fs::write(&file, source).unwrap();
    run(&["check", file.to_str().unwrap()])
}

const GRPC: &str = r#"
name = "stdin-herd"
description = "a small herd"
horizon = "20s"
[grpc]
clients = 10
[[server.restart]]
at = "5s"
down = "2s"
"#;

#[test]
fn check_dash_reads_the_scenario_from_stdin() {
    let o = with_stdin(&["check", "-"], GRPC);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).starts_with("<stdin>: ok — scenario `stdin-herd`"), "{}", text(&o.stdout));
}

#[test]
fn run_dash_runs_the_scenario_from_stdin_into_its_results_directory() {
    let tmp = tempfile::tempdir().unwrap();
    // Without --out results go to results/<name>/ below the working directory.
    let mut cmd = bin();
    cmd.current_dir(tmp.path());
    let mut child = cmd
        .args(["run", "-", "--quiet"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(GRPC.as_bytes()).unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("reconnect_p50"), "{}", text(&o.stdout));
    assert!(tmp.path().join("results/stdin-herd/summary.csv").exists());
}

#[test]
fn errors_in_a_scenario_from_stdin_are_placed_in_stdin() {
    let o = with_stdin(&["run", "-", "--quiet"], &GRPC.replace("clients = 10", "clients = \"ten\""));
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(err.contains("<stdin>:6:11: key `grpc.clients`"), "{err}");
}

#[test]
fn a_grpc_scenario_without_a_path_runs_on_a_zero_delay_path_shown_in_the_manifest() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let o = with_stdin(&["run", "-", "--quiet", "--out", out.to_str().unwrap()], GRPC);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let manifest = std::fs::read_to_string(out.join("manifest.json")).unwrap();
    assert!(manifest.contains("\"base_rtt\": \"0s\""), "{manifest}");
}

#[test]
fn a_tcp_scenario_without_a_path_is_told_what_to_write_once_for_all_cells() {
    let o = check_text(
        "name = \"t\"\ndescription = \"d\"\nhorizon = \"10s\"\n[tcp]\nworkload = { kind = \"steady\", interval = \"1s\" }\n\
         [sweep]\n\"tcp.window\" = [1, 2, 4]\n",
    );
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert_eq!(err.matches("missing required table [path]").count(), 1, "{err}");
    assert!(err.contains("base_rtt = \"100ms\""), "{err}");
    assert!(!err.contains("sweep point"), "the error applies to every cell:\n{err}");
}

#[test]
fn percentages_are_accepted_for_fractions_and_still_range_checked() {
    let good = format!(
        "{GRPC}[grpc.backoff]\njitter = \"20%\"\n[path]\nbase_rtt = \"10ms\"\nloss = {{ model = \"bernoulli\", p = \"5%\" }}\n"
    );
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let o = with_stdin(&["run", "-", "--quiet", "--out", out.to_str().unwrap()], &good);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let manifest = std::fs::read_to_string(out.join("manifest.json")).unwrap();
    assert!(manifest.contains("\"jitter\": 0.2"), "{manifest}");
    assert!(manifest.contains("\"p\": 0.05"), "{manifest}");

    let o = check_text(&good.replace("\"5%\"", "\"150%\""));
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("must be a probability in [0, 1], got 1.5"), "{}", text(&o.stderr));
    let o = check_text(&good.replace("\"20%\"", "\"lots\""));
    assert!(text(&o.stderr).contains("a number between 0 and 1, e.g. 0.2"), "{}", text(&o.stderr));
}

#[test]
fn type_errors_of_different_keys_are_all_reported_at_once() {
    let o = check_text(
        r#"name = "multi"
description = "four type errors"
horizon = 60
[tcp]
windw = 3
workload = { kind = "steady", interval = "100ms" }
[tcp.rto]
max_rto = 60
[path]
base_rtt = 100
"#,
    );
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    for place in ["s.toml:3:11: key `horizon`", "s.toml:5:1: key `tcp.windw`", "s.toml:8:11: key `tcp.rto.max_rto`"] {
        assert!(err.contains(place), "{place} missing:\n{err}");
    }
    assert!(err.contains("s.toml:10:12: key `path.base_rtt`"), "{err}");
    // A required key whose bad value was set aside is not also reported missing.
    assert!(!err.contains("missing required key"), "{err}");
}

#[test]
fn an_error_in_some_sweep_cells_is_shown_once_naming_them() {
    let o = check_text(
        r#"name = "cells"
description = "d"
horizon = "10s"
[tcp]
workload = { kind = "steady", interval = "100ms" }
[path]
base_rtt = "100ms"
loss = { model = "bernoulli", p = 0.1 }
[sweep]
"path.loss.p" = [0.1, 2, 3]
"tcp.window" = [1, 2]
[[variant]]
name = "a"
[[variant]]
name = "b"
"#,
    );
    let err = text(&o.stderr);
    // Two variants × six cells, yet each bad value once.
    assert_eq!(err.matches("got 2 ").count(), 1, "{err}");
    assert_eq!(err.matches("got 3 ").count(), 1, "{err}");
    // Every window fails with p = 2: the window is not worth naming.
    assert!(err.contains("got 2 (sweep point path.loss.p = 2)\n"), "{err}");
}

#[test]
fn a_scenario_larger_than_16_mib_is_refused_in_bounded_memory_from_a_file_or_stdin() {
    // /dev/zero never ends: a reader without a bound grew to 22 GB in a minute.
    let zero = || std::fs::File::open("/dev/zero").unwrap();
    let memory = 200 << 20;
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("keep.txt"), "earlier").unwrap();
    let outputs = [
        limit_memory(&mut bin(), memory).args(["check", "-"]).stdin(zero()).output().unwrap(),
        limit_memory(&mut bin(), memory)
            .args(["run", "-", "--quiet", "--out"])
            .arg(&out)
            .stdin(zero())
            .output()
            .unwrap(),
        limit_memory(&mut bin(), memory).args(["check", "/dev/zero"]).output().unwrap(),
        limit_memory(&mut bin(), memory).args(["explain", "--file", "/dev/zero"]).output().unwrap(),
    ];
    for (o, label) in outputs.iter().zip(["<stdin>", "<stdin>", "/dev/zero", "/dev/zero"]) {
        assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
        let err = text(&o.stderr);
        assert!(
            err.contains(&format!("{label}: larger than 16 MiB (16,777,216 bytes), the most a scenario may be")),
            "{err}"
        );
    }
    assert_eq!(std::fs::read_to_string(out.join("keep.txt")).unwrap(), "earlier");
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 1, "nothing written");
}

#[test]
fn a_scenario_after_a_byte_order_mark_checks_and_its_columns_are_an_editors() {
    let o = with_stdin(&["check", "-"], &format!("\u{feff}{GRPC}"));
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = check_text(&format!("\u{feff}name = 5\n{}", GRPC.replace("name = \"stdin-herd\"\n", "")));
    assert_eq!(o.status.code(), Some(2));
    // The mark is no character of the line: `5` is at column 8.
    assert!(text(&o.stderr).contains("s.toml:1:8: key `name`"), "{}", text(&o.stderr));

    // A policy file for `explain` is read the same way.
    let tmp = tempfile::tempdir().unwrap();
    let policy = tmp.path().join("policy.toml");
    std::fs::write(&policy, "\u{feff}preset = 5\n").unwrap();
    let o = run(&["explain", "--file", policy.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("policy.toml:1:10: key `preset`"), "{}", text(&o.stderr));
    std::fs::write(&policy, "\u{feff}preset = \"gcs-python\"\n").unwrap();
    let o = run(&["explain", "--file", policy.to_str().unwrap(), "--runs", "10"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
}
