//! `backoffsim presets` and `backoffsim explain`, end to end.

use std::io::{BufRead, BufReader};
use std::process::Stdio;

use super::common::{bin, ok, refused, run, text};

/// Each preset's name and the earlier name it still answers to.
const PRESETS: &[(&str, &str)] = &[
    ("seed-loop", ""),
    ("gcs-python-api-core-2.11+", "gcs-python"),
    ("gcs-python-api-core-pre-2.11", "gcs-python-legacy"),
    ("gcs-cpp-limited-time", "gcs-cpp"),
    ("gcloud-storage-528", "gcloud"),
    ("botocore-standard-1.44+", "aws-standard"),
    ("botocore-standard-pre-1.44", "aws-standard-2025"),
    ("botocore-legacy", "aws-legacy"),
    ("botocore-adaptive-1.44+", "aws-adaptive"),
    ("tenacity-random-exp-9.2", "tenacity-random-exp"),
    ("backoff-expo-2.2", "python-backoff"),
    ("backon-exponential-1.6", "backon"),
    ("grpc-java-retry-a6", "grpc-retry"),
    ("envoy-router-5xx", "envoy"),
    ("finagle-requeue-budget", "finagle-budget"),
];

const CONNECTION_PROFILES: &[&str] =
    &["grpc-connection-spec", "grpc-connection-core", "grpc-connection-go", "grpc-connection-java"];

/// The number after `word ` in `line`, e.g. `mean 7.499 s` → 7.499.
/// The duration after `word` (`max 14.6 s`, `case 2.02 min`), in seconds.
fn secs_after(line: &str, word: &str) -> f64 {
    let rest =
        &line[line.find(&format!("{word} ")).unwrap_or_else(|| panic!("no `{word}` in {line}")) + word.len() + 1..];
    let mut words = rest.split_whitespace();
    let n: f64 = words.next().unwrap().parse().unwrap();
    let scale = match words.next().unwrap().trim_end_matches([',', ';']) {
        "µs" => 1e-6,
        "ms" => 1e-3,
        "s" => 1.0,
        "min" => 60.0,
        "h" => 3600.0,
        "d" => 86_400.0,
        other => panic!("`{other}` is not a unit in {line}"),
    };
    n * scale
}

fn report_line<'a>(report: &'a str, label: &str) -> &'a str {
    report
        .lines()
        .find(|l| l.trim_start().starts_with(label))
        .unwrap_or_else(|| panic!("no `{label}` line in\n{report}"))
}

#[test]
fn presets_lists_every_name_with_its_numbers_and_source() {
    let out = ok(&["presets"]);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("NAME") && lines[0].contains("KEY NUMBERS") && lines[0].contains("SOURCE"));
    assert_eq!(lines.len(), 1 + PRESETS.len() + CONNECTION_PROFILES.len());
    let alias_col = lines[0].find("ALIAS").unwrap();
    for (line, (name, alias)) in lines[1..].iter().zip(PRESETS) {
        assert!(line.starts_with(&format!("{name} ")), "{line}");
        assert!(line[alias_col..].starts_with(&format!("{alias} ")), "{line}");
    }
    for (line, name) in lines[1 + PRESETS.len()..].iter().zip(CONNECTION_PROFILES) {
        assert!(line.starts_with(&format!("{name} ")), "{line}");
    }
    // Aligned: the second column starts at the same place on every line.
    let col = lines[0].find("WHAT").unwrap();
    assert!(lines.iter().all(|l| l.chars().nth(col - 1) == Some(' ')));
    assert!(out.contains("23 retries") && out.contains("botocore/retries/standard.py"));
}

#[test]
fn an_old_preset_name_still_explains_the_same_policy_and_a_near_miss_is_pointed_to() {
    for (name, alias) in PRESETS.iter().filter(|(_, a)| !a.is_empty()).take(3) {
        let args = |p| ["explain", p, "--runs", "50", "--csv", "runs"];
        assert_eq!(ok(&args(name)), ok(&args(alias)), "{name} and {alias}");
    }
    let o = run(&["explain", "grpc-go"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("unknown preset `grpc-go`; did you mean `grpc-connection-go`?"),
        "{}",
        text(&o.stderr)
    );
    let o = run(&["explain", "aws-standrd"]);
    assert!(text(&o.stderr).contains("did you mean `botocore-standard-1.44+`?"), "{}", text(&o.stderr));
}

#[test]
fn explain_seed_loop_100000_runs_mean_7_5_max_below_15() {
    let out = ok(&["explain", "seed-loop", "--runs", "100000"]);
    let line = report_line(&out, "total sleep");
    let mean = secs_after(line, "mean");
    let max = secs_after(line, "max");
    assert!((mean - 7.5).abs() < 0.05, "{line}");
    assert!(max < 15.0, "{line}");
    assert!(report_line(&out, "attempts").contains("5 in every call"));
    assert!(report_line(&out, "cap").contains("a hard cap"));
    assert!(out.contains("100000 always-failing calls"));
}

#[test]
fn explain_gcs_python_gives_up_by_the_deadline() {
    let out = ok(&["explain", "gcs-python", "--runs", "2000", "--attempt-time", "1s"]);
    let line = report_line(&out, "until give-up");
    assert!(secs_after(line, "max") <= 121.0, "{line}");
    // 121 s to three significant digits, as `2.02 min`.
    assert!((secs_after(line, "case") - 121.0).abs() < 0.5, "{line}");
    assert!(report_line(&out, "gave up").contains("deadline 100.0%"));
    assert!(report_line(&out, "limit").contains("elapsed + sleep > deadline"));
}

#[test]
fn csv_attempts_and_runs_have_their_headers_and_row_counts() {
    let out = ok(&["explain", "seed-loop", "--runs", "100", "--csv", "attempts"]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "run,attempt,sleep_s,elapsed_s");
    assert_eq!(lines.len(), 1 + 100 * 5);
    assert_eq!(lines[1], "0,1,0.000000000,0.000000000");
    // elapsed = the previous elapsed + the sleep, with instant attempts.
    let cols: Vec<Vec<f64>> = lines[1..6].iter().map(|l| l.split(',').map(|c| c.parse().unwrap()).collect()).collect();
    for w in cols.windows(2) {
        assert!((w[1][3] - (w[0][3] + w[1][2])).abs() < 1e-9);
    }

    let out = ok(&["explain", "seed-loop", "--runs", "100", "--csv", "runs", "--attempt-time", "1s"]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "run,attempts,total_sleep_s,giveup_s,reason");
    assert_eq!(lines.len(), 101);
    for l in &lines[1..] {
        let c: Vec<&str> = l.split(',').collect();
        assert_eq!((c[1], c[4]), ("5", "attempts"), "{l}");
        let (sleep, giveup): (f64, f64) = (c[2].parse().unwrap(), c[3].parse().unwrap());
        assert!((giveup - sleep - 5.0).abs() < 1e-9, "{l}");
    }
}

#[test]
fn set_overrides_a_presets_fields_by_their_scenario_names() {
    let out = ok(&[
        "explain",
        "seed-loop",
        "--runs",
        "50",
        "--csv",
        "runs",
        "--set",
        "max_attempts=3",
        "--set",
        "jitter=none",
    ]);
    // No jitter: 1 + 2 s of sleep, three attempts, every run the same.
    for l in out.lines().skip(1) {
        assert!(l.ends_with(",3,3.000000000,3.000000000,attempts"), "{l}");
    }
    let out = ok(&["explain", "backon", "--set", "deadline=2s", "--runs", "10"]);
    assert!(report_line(&out, "attempts").contains("2 in every call"), "{out}");
}

#[test]
fn results_are_the_same_on_one_thread_and_on_four() {
    let args = ["explain", "gcs-cpp", "--runs", "300", "--csv", "attempts", "--attempt-time", "2s"];
    let one = bin().args(args).env("RAYON_NUM_THREADS", "1").output().unwrap();
    let four = bin().args(args).env("RAYON_NUM_THREADS", "4").output().unwrap();
    assert!(one.status.success());
    assert_eq!(one.stdout, four.stdout);
    let other_seed =
        ok(&["explain", "gcs-cpp", "--runs", "300", "--csv", "attempts", "--attempt-time", "2s", "--seed", "2"]);
    assert_ne!(text(&one.stdout), other_seed);
}

#[test]
fn explain_reads_a_retry_policy_table_from_a_file() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("policy.toml");
    std::fs::write(&file, "[retry.policy]\npreset = \"backon\"\njitter = \"half\"\n").unwrap();
    let out = ok(&["explain", "--file", file.to_str().unwrap(), "--runs", "20"]);
    assert!(report_line(&out, "sleep").contains("U(d, 2d)"), "{out}");
    assert!(report_line(&out, "cap").contains("not a hard cap"), "{out}");
    // Top-level keys work too.
    std::fs::write(&file, "base = \"100ms\"\nmax_attempts = 2\n").unwrap();
    let out = ok(&["explain", "--file", file.to_str().unwrap(), "--runs", "5"]);
    assert!(out.starts_with("custom retry policy"), "{out}");
}

#[test]
fn bad_policy_files_are_located_like_scenario_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("policy.toml");
    let path = file.to_str().unwrap();
    std::fs::write(&file, "[retry.policy]\npreset = \"gcs-python\"\njiter = \"full\"\n").unwrap();
    let err = refused(&["explain", "--file", path]);
    assert!(err.contains("policy.toml:3:1: key `retry.policy.jiter`: unknown key `jiter`"), "{err}");
    // A value that only resolve() can judge is located too.
    std::fs::write(&file, "[retry.policy]\npreset = \"gcs-python\"\nmultiplier = 0.5\n").unwrap();
    let err = refused(&["explain", "--file", path]);
    assert!(err.contains("policy.toml:3:14: key `retry.policy.multiplier`: must be at least 1"), "{err}");
    std::fs::write(&file, "[retry.policy]\npreset = \"gcs-pyhton\"\n").unwrap();
    let err = refused(&["explain", "--file", path]);
    assert!(err.contains(":2:10: key `retry.policy.preset`: unknown preset `gcs-pyhton`"), "{err}");
    std::fs::write(&file, "").unwrap();
    assert!(refused(&["explain", "--file", path]).contains("the file is empty"));
    let err = refused(&["explain", "--file", tmp.path().join("missing.toml").to_str().unwrap()]);
    assert!(err.contains("cannot read the policy file"), "{err}");
}

#[test]
fn usage_errors_exit_2_with_a_clear_message() {
    assert!(
        refused(&["explain", "no-such-preset"])
            .contains("unknown preset `no-such-preset` (known: seed-loop, gcs-python")
    );
    assert!(refused(&["explain", "seed-loop", "--set", "bsae=1s"]).contains("--set bsae=1s: bsae: unknown key `bsae`"));
    // A TOML value keeps its type, so a quoted duration is read as a scenario reads it.
    assert!(refused(&["explain", "seed-loop", "--set", "reset_after_success=\"no\""]).contains("wrong type"));
    assert!(
        refused(&["explain", "seed-loop", "--set", "base=1"])
            .contains("--set base=1: base: a bare number (1) is not a duration")
    );
    assert!(refused(&["explain", "seed-loop", "--set", "base"]).contains("expected KEY=VALUE"));
    assert!(
        refused(&["explain", "seed-loop", "--set", "jitter_fraction=0.1"])
            .contains("--set jitter_fraction: applies to jitter = \"proportional\" only")
    );
    assert!(refused(&["explain", "seed-loop", "--runs", "0"]).contains("--runs"));
    assert!(refused(&["explain", "seed-loop", "--fail-with", "teapot"]).contains("--fail-with"));
    assert!(
        refused(&["explain", "seed-loop", "--fail-with", "timeout", "--retry-after", "5s"])
            .contains("needs an HTTP failure")
    );
    assert!(refused(&["explain"]).contains("name a preset or give --file"));
    assert!(
        refused(&["explain", "grpc-connection-core", "--fail-with", "503"])
            .contains("a refused connection is its only failure")
    );
}

#[test]
fn permanent_failures_and_retry_after_show_in_the_report() {
    let out = ok(&["explain", "gcs-python", "--fail-with", "403", "--runs", "10"]);
    assert!(report_line(&out, "gave up").contains("permanent 100.0%"), "{out}");
    assert!(report_line(&out, "attempts").contains("1 in every call"));
    // A 10 s Retry-After under a policy that replaces the backoff with it.
    let out = ok(&["explain", "seed-loop", "--set", "retry_after=replace", "--retry-after", "10s", "--runs", "10"]);
    assert!(report_line(&out, "total sleep").contains("mean 40.000 s"), "{out}");
}

#[test]
fn a_closed_pipe_is_not_an_error() {
    let mut child = bin()
        .args(["explain", "seed-loop", "--runs", "200000", "--csv", "attempts"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
    assert_eq!(first, "run,attempt,sleep_s,elapsed_s\n");
    // The reader is dropped here: the rest of the output meets a closed pipe.
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
}

#[test]
fn explain_takes_the_grpc_connection_profiles_with_their_own_keys() {
    let o = run(&[
        "explain",
        "grpc-connection-core",
        "--set",
        "initial_backoff=200ms",
        "--set",
        "max_backoff=2s",
        "--runs",
        "2000",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    // grpc-core: 200 ms × 1.6 per failure, truncated to ms: 200, 320, 512, 819, 1310, then the 2 s cap.
    for nominal in ["200 ms", "320 ms", "512 ms", "819 ms", "1.31 s"] {
        assert!(out.contains(nominal), "{nominal} missing:\n{out}");
    }
    assert!(out.contains("never gives up"), "{out}");
    // ±20 % jitter on the capped 2 s base: no delay above 2.4 s.
    let o = run(&["explain", "grpc-connection-go", "--csv", "attempts", "--runs", "100"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let sleeps: Vec<f64> =
        text(&o.stdout).lines().skip(1).map(|l| l.split(',').nth(2).unwrap().parse().unwrap()).collect();
    // grpc-go: the first delay is exactly 1 s, unjittered.
    assert!(
        text(&o.stdout)
            .lines()
            .skip(1)
            .filter(|l| l.split(',').nth(1) == Some("2"))
            .all(|l| l.split(',').nth(2) == Some("1.000000000") || l.split(',').nth(2) == Some("1")),
        "{}",
        text(&o.stdout)
    );
    assert!(sleeps.iter().all(|&s| s <= 120.0 * 1.2 + 1e-9));
    let o = run(&["explain", "grpc-connection-java", "--set", "min_connect_timeout=5s"]);
    assert_eq!(o.status.code(), Some(2), "grpc-java has no connect timeout to set");
}

#[test]
fn plot_draws_the_delays_per_attempt_and_refuses_other_extensions() {
    let tmp = tempfile::tempdir().unwrap();
    let svg = tmp.path().join("d.svg");
    let out = ok(&["explain", "seed-loop", "--runs", "2000", "--plot", svg.to_str().unwrap()]);
    assert!(out.contains("always-failing calls"), "the report still prints: {out}");
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg"), "{}", &text[..text.len().min(200)]);
    assert!(text.contains("seed-loop: the seed article"), "title missing");
    assert!(text.contains("attempt number"), "x label missing");
    assert!(text.contains("sleep before the attempt (seconds)"), "y label missing");
    assert!(!tmp.path().join("d.svg.tmp").exists());
    let bad = tmp.path().join("x.txt");
    assert!(refused(&["explain", "seed-loop", "--plot", bad.to_str().unwrap()]).contains(".svg or .png"));
    assert!(!bad.exists());
}

/// Durations in `explain`'s report read as a person says them, never as the raw
/// `3276800us` or `13421772800ns` of the scenario syntax.
#[test]
fn explain_reports_durations_for_people_and_csv_keeps_plain_seconds() {
    let raw_unit = |out: &str| {
        out.split(|c: char| !c.is_ascii_alphanumeric() && c != '.')
            .find(|w| {
                let unit = w.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
                unit.len() < w.len() && ["ns", "us", "ms", "s", "min"].contains(&unit)
            })
            .map(str::to_string)
    };
    for args in [
        &["explain", "grpc-connection-core", "--runs", "200"][..],
        &["explain", "grpc-connection-spec", "--runs", "200", "--set", "initial_backoff=2.048s"],
        &["explain", "gcs-cpp", "--runs", "200"],
        &["explain", "gcloud", "--runs", "200"],
        &["explain", "seed-loop", "--set", "base=100ms", "--runs", "200"],
        &["explain", "aws-standard", "--set", "base=3.2768s", "--runs", "200", "--attempt-time", "250ms"],
    ] {
        let out = ok(args);
        assert_eq!(raw_unit(&out), None, "{args:?} prints a raw duration:\n{out}");
    }
    let out = ok(&["explain", "grpc-connection-core", "--runs", "200"]);
    assert!(report_line(&out, "sleep").contains("base 1 s ×1.6 per failure up to 2 min, jitter ±20 %"), "{out}");
    // 1 s·1.6^2 = 2.56 s and 1 s·1.6^4 = 6.5536 s in the nominal column.
    assert!(out.contains(" 2.56 s ") && out.contains(" 6.55 s "), "{out}");
    let out = ok(&["explain", "aws-standard", "--set", "base=3.2768s", "--runs", "200"]);
    assert!(report_line(&out, "sleep").contains("U(0, min(3.28 s × 2^k, 20 s))"), "{out}");
    assert!(report_line(&out, "total sleep").contains("; worst case 9.830 s"), "{out}");
    let out = ok(&["explain", "gcs-cpp", "--runs", "200"]);
    assert!(report_line(&out, "until give-up").ends_with("; worst case 1200.000 s (20 min)"), "{out}");
    // Machine output keeps seconds as plain numbers.
    let out = ok(&["explain", "grpc-connection-core", "--runs", "2", "--csv", "attempts"]);
    assert!(out.lines().nth(3).unwrap().starts_with("0,3,1."), "{out}");
}

#[test]
fn set_takes_bare_words_toml_values_and_comma_lists_as_a_scenario_file_would() {
    let bare = ok(&["explain", "seed-loop", "--set", "base=2s", "--set", "retry_on=timeout,5xx", "--runs", "10"]);
    let quoted = ok(&[
        "explain",
        "seed-loop",
        "--set",
        "base=\"2s\"",
        "--set",
        "retry_on=[\"timeout\", \"5xx\"]",
        "--runs",
        "10",
    ]);
    assert_eq!(bare, quoted);
}
