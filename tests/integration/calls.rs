//! Clients calling through retry policies against a server with outages, through the
//! CLI: the seed article's loop, five libraries' defaults against four outages, and the
//! amplification of nested retry loops.

use std::collections::BTreeMap;
use std::path::Path;

use super::common::{run, run_scenario, run_text, text};

/// `summary.csv` (with or without one swept key, which may have its seconds column beside
/// it) as (variant, cell label, metric) → mean.
fn summary(dir: &Path) -> BTreeMap<(String, String, String), f64> {
    let mut r = csv::Reader::from_path(dir.join("summary.csv")).unwrap();
    let h = r.headers().unwrap().clone();
    let col = |name: &str| h.iter().position(|c| c == name).unwrap();
    let (metric, mean) = (col("metric"), col("mean"));
    let cell = (metric >= 2).then_some(1);
    // A metric without a value (`replications` 0) has no mean to look up.
    r.records()
        .map(|rec| rec.unwrap())
        .filter(|rec| !rec[mean].is_empty())
        .map(|rec| {
            let c = cell.map(|i| rec[i].to_string()).unwrap_or_default();
            ((rec[0].to_string(), c, rec[metric].to_string()), rec[mean].parse().unwrap())
        })
        .collect()
}

/// `cdf.csv`'s value at `fraction` of one series.
fn cdf_at(dir: &Path, variant: &str, cell: &str, series: &str, fraction: &str) -> f64 {
    let mut r = csv::Reader::from_path(dir.join("cdf.csv")).unwrap();
    let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
    let n = rows[0].len();
    let row = rows
        .iter()
        .find(|row| {
            &row[0] == variant && (n == 4 || &row[1] == cell) && &row[n - 3] == series && &row[n - 2] == fraction
        })
        .unwrap_or_else(|| panic!("no {series} at {fraction} for {variant} {cell}"));
    row[n - 1].parse().unwrap()
}

fn get(s: &BTreeMap<(String, String, String), f64>, variant: &str, cell: &str, metric: &str) -> f64 {
    *s.get(&(variant.into(), cell.into(), metric.into()))
        .unwrap_or_else(|| panic!("no {metric} for {variant} at {cell:?}"))
}

#[test]
fn seed_loop_sleeps_7_5_seconds_on_average_and_never_15_over_its_four_waits() {
    let (_t, dir) = run_scenario("seed-loop", &[]);
    let s = summary(&dir);
    // 50,000 always-failing calls: the mean of U(0,1) + U(0,2) + U(0,4) + U(0,8) is
    // 7.5 s, its standard deviation √(85/12) ≈ 2.66 s, so the sample mean is within
    // 0.012 s of 7.5 s one time in three and within 0.1 s all but never.
    let mean = get(&s, "base", "", "total_sleep");
    assert!((mean - 7.5).abs() < 0.1, "mean total sleep {mean}");
    let max = cdf_at(&dir, "base", "", "total_sleep", "1.00");
    assert!(max < 15.0 && max > 13.0, "largest total sleep {max}");
    assert_eq!(get(&s, "base", "", "success_rate"), 0.0);
    assert_eq!(get(&s, "base", "", "gave_up_attempts"), 1.0);
    assert_eq!(get(&s, "base", "", "server_calls_per_call"), 5.0);
    // 4 of every 5 calls the server sees are retries.
    assert!((get(&s, "base", "", "retry_share") - 0.8).abs() < 1e-12);
    // Reported after the sleeps plus five 50 ms failures.
    assert!((get(&s, "base", "", "time_to_giveup") - (mean + 0.25)).abs() < 1e-9);
}

#[test]
fn library_defaults_a_30s_outage_is_survived_by_all_but_aws_standard_which_gives_up_in_3_attempts() {
    let (_t, dir) = run_scenario("library-defaults", &[]);
    let s = summary(&dir);
    for v in ["gcs-python", "gcs-cpp", "gcloud", "tenacity"] {
        assert_eq!(get(&s, v, "30s", "success_rate"), 1.0, "{v}");
        let t = get(&s, v, "30s", "time_to_success");
        assert!((30.0..60.0).contains(&t), "{v} succeeds after {t} s");
    }
    // botocore standard mode: 3 attempts and 50 ms·2^k of full jitter: done in 0.3 s,
    // against 30 s as against 20 min.
    for cell in ["30s", "2min", "10min", "20min"] {
        assert_eq!(get(&s, "aws-standard", cell, "success_rate"), 0.0);
        assert_eq!(get(&s, "aws-standard", cell, "gave_up_attempts"), 1.0);
        assert_eq!(get(&s, "aws-standard", cell, "server_calls_per_call"), 3.0);
        assert!(get(&s, "aws-standard", cell, "time_to_giveup") < 0.3);
    }
}

#[test]
fn library_defaults_a_20min_outage_is_reported_after_2min_10min_or_a_quarter_hour_by_language() {
    let (_t, dir) = run_scenario("library-defaults", &[]);
    let s = summary(&dir);
    for v in ["gcs-python", "gcs-cpp", "gcloud", "aws-standard", "tenacity"] {
        assert_eq!(get(&s, v, "20min", "success_rate"), 0.0, "{v}");
        assert_eq!(get(&s, v, "20min", "unfinished"), 0.0, "{v}");
    }
    // api-core: gives up without sleeping when the next sleep would cross 120 s; the
    // last attempt may end up to fail_time (50 ms) after it.
    let py = get(&s, "gcs-python", "20min", "time_to_giveup");
    assert!((90.0..120.0).contains(&py), "gcs-python gives up after {py} s");
    assert!(cdf_at(&dir, "gcs-python", "20min", "time_to_giveup", "1.00") <= 120.05);
    assert_eq!(get(&s, "gcs-python", "20min", "gave_up_deadline"), 1.0);
    // google-cloud-cpp: 15 min, and the sleep that crosses it (up to 300 s) is taken.
    let cpp = get(&s, "gcs-cpp", "20min", "time_to_giveup");
    assert!((900.0..1200.0).contains(&cpp), "gcs-cpp gives up after {cpp} s");
    assert!(cdf_at(&dir, "gcs-cpp", "20min", "time_to_giveup", "1.00") <= 900.0 + 300.0);
    assert_eq!(get(&s, "gcs-cpp", "20min", "gave_up_deadline"), 1.0);
    // gcloud: 23 retries, 24 attempts, about 610 s of sleep.
    assert_eq!(get(&s, "gcloud", "20min", "server_calls_per_call"), 24.0);
    assert_eq!(get(&s, "gcloud", "20min", "gave_up_attempts"), 1.0);
    let gcloud = get(&s, "gcloud", "20min", "time_to_giveup");
    assert!((607.0..613.0).contains(&gcloud), "gcloud gives up after {gcloud} s");
    // tenacity: the sleep that crosses 120 s is taken in full, then one more attempt.
    let ten = get(&s, "tenacity", "20min", "time_to_giveup");
    assert!((120.0..180.0).contains(&ten), "tenacity gives up after {ten} s");
}

#[test]
fn library_defaults_gcloud_survives_10min_only_on_its_24th_and_last_attempt() {
    let (_t, dir) = run_scenario("library-defaults", &[]);
    let s = summary(&dir);
    assert_eq!(get(&s, "gcloud", "10min", "success_rate"), 1.0);
    assert_eq!(get(&s, "gcloud", "10min", "server_calls_per_call"), 24.0);
    // 15 min of deadline carry gcs-cpp through, 2 min do not carry the Python ones.
    assert_eq!(get(&s, "gcs-cpp", "10min", "success_rate"), 1.0);
    assert_eq!(get(&s, "gcs-python", "10min", "success_rate"), 0.0);
    assert_eq!(get(&s, "tenacity", "10min", "success_rate"), 0.0);
    // Against exactly 2 min, tenacity's last sleep crosses the deadline into the
    // server's return; api-core's refuses to.
    assert!(get(&s, "tenacity", "2min", "success_rate") > 0.99);
    assert_eq!(get(&s, "gcs-python", "2min", "success_rate"), 0.0);
}

const TIERED: &str = r#"
name = "tiered"
description = "an application loop of 3 around a 3-attempt library, against a permanent outage"
horizon = "10min"
replications = 2

[calls]
clients = 100
attempt_time = "100ms"
fail_time = "20ms"
outage = "1h"
tiers = [3]

[calls.policy]
preset = "aws-standard"
"#;

#[test]
fn three_app_attempts_around_three_library_attempts_are_nine_server_calls_per_failure() {
    let (_t, dir) = run_text(TIERED, &[]);
    let s = summary(&dir);
    assert_eq!(get(&s, "base", "", "attempts_per_call"), 3.0);
    assert_eq!(get(&s, "base", "", "library_calls_per_call"), 3.0);
    assert_eq!(get(&s, "base", "", "server_calls_per_call"), 9.0);
    assert!((get(&s, "base", "", "retry_share") - 8.0 / 9.0).abs() < 1e-12);
    assert_eq!(get(&s, "base", "", "gave_up_attempts"), 1.0);
}

#[test]
fn calls_results_are_identical_for_one_and_two_threads() {
    let (_a, one) = run_text(TIERED, &["--threads", "1"]);
    let (_b, two) = run_text(TIERED, &["--threads", "2"]);
    for f in ["summary.csv", "cdf.csv", "manifest.json"] {
        assert_eq!(std::fs::read(one.join(f)).unwrap(), std::fs::read(two.join(f)).unwrap(), "{f}");
    }
}

#[test]
fn a_calls_scenario_with_a_path_or_a_second_model_is_refused_with_the_key() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("bad.toml");
    std::fs::write(&file, format!("{TIERED}\n[path]\nbase_rtt = \"10ms\"\n[grpc]\nclients = 1\n")).unwrap();
    let o = run(&["check", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(err.contains("key `grpc`: a scenario runs one model"), "{err}");
    assert!(err.contains("key `path`: [path] does not apply to [calls]"), "{err}");
}

#[test]
fn the_terminal_table_shows_the_swept_value_of_each_row() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("swept.toml");
    std::fs::write(&file, format!("{TIERED}\n[sweep]\n\"calls.outage\" = [\"100ms\", \"1h\"]\n")).unwrap();
    let out = tmp.path().join("out");
    let o = run(&["run", file.to_str().unwrap(), "--quiet", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let table = text(&o.stdout);
    let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(header[..3], ["variant", "calls.outage", "metric"], "{table}");
    let row = |outage: &str| {
        table.lines().find(|l| l.split_whitespace().take(3).eq(["base", outage, "success_rate"])).unwrap().to_string()
    };
    // A 100 ms outage is outlived by the retries (all nine are spent within 0.4 s), a 1 h
    // one is not.
    assert!(row("100ms").contains("1.000"), "{table}");
    assert!(row("1h").split_whitespace().nth(3) == Some("0"), "{table}");
}

const PHASE: &str = r#"
name = "t"
description = "200 clients calling once a second"
horizon = "5s"
replications = 1

[calls]
clients = 200
interval = "1s"
pacing = "poisson"
"#;

/// The calls started in the first second of replication 0, from series.csv.
fn first_second_calls(dir: &Path) -> f64 {
    let mut rows = csv::Reader::from_path(dir.join("series.csv")).unwrap();
    let headers = rows.headers().unwrap().clone();
    let col = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let (start, calls) = (col("bin_start_s"), col("calls"));
    let row = rows.records().map(Result::unwrap).find(|r| r[start].parse::<f64>().unwrap() == 0.0).unwrap();
    row[calls].parse().unwrap()
}

#[test]
fn calls_start_in_steady_state_unless_phase_says_together_and_a_bad_phase_is_refused() {
    // Stationary Poisson arrivals of rate 200/s: the first second's count is Poisson(200),
    // within 4 standard deviations (√200 ≈ 14) of 200; together adds the 200 calls at 0.
    let (_a, steady) = run_text(PHASE, &[]);
    let n = first_second_calls(&steady);
    assert!((143.0..=257.0).contains(&n), "{n}");
    let (_b, together) = run_text(&format!("{PHASE}phase = \"together\"\n"), &[]);
    assert!(first_second_calls(&together) > 300.0, "{}", first_second_calls(&together));
    let err = super::bad_input::refuse(&format!("{PHASE}phase = \"steddy\"\n"));
    assert!(err.contains("key `calls.phase`") && err.contains("expected `steady` or `together`"), "{err}");
    let err = super::bad_input::refuse(&format!("{PHASE}phase = \"together\"\nstart_spread = \"1s\"\n"));
    assert!(err.contains("key `calls.phase`") && err.contains("remove one"), "{err}");
    let err = super::bad_input::refuse(&format!("{PHASE}phse = \"together\"\n"));
    assert!(err.contains("did you mean `phase`?"), "{err}");
}
