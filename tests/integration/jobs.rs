//! A job queue with asynchronous retry, through the CLI: conservation of jobs, the
//! series the load plot reads, bad provider tables, and the two shipped scenarios'
//! answers.

use super::common::{metric, run, run_scenario, run_text, summary, text};

fn within(x: f64, lo: f64, hi: f64) -> bool {
    (lo..=hi).contains(&x)
}

/// Poison jobs, a hanging primary, a refusing fallback and a horizon in the middle of
/// the retries: jobs end in all three ways.
const MIXED: &str = r#"
name = "mixed"
description = "conservation"
replications = 2
horizon = "30min"

[jobs]
rate = 4
workers = 6
poison_fraction = "5%"
bin = "1min"
[jobs.retry]
base = "2s"
max_attempts = 8

[[jobs.provider]]
name = "primary"
call_time = "200ms"
fail_time = "50ms"
timeout = "10s"
[[jobs.provider.down]]
at = "5min"
duration = "1h"
fail_fraction = 0.6
behavior = "hang"

[[jobs.provider]]
name = "fallback"
call_time = "400ms"
[[jobs.provider.down]]
at = "15min"
duration = "1h"
"#;

#[test]
fn every_message_sent_is_delivered_dead_lettered_or_in_flight_at_the_horizon() {
    let (_t, dir) = run_text(MIXED, &[]);
    let s = summary(&dir);
    let (delivered, dead, in_flight) =
        (metric(&s, "base", "delivered"), metric(&s, "base", "dead_lettered"), metric(&s, "base", "in_flight"));
    assert!(delivered > 0.0 && dead > 0.0 && in_flight > 0.0, "{delivered} {dead} {in_flight}");
    assert!((delivered + dead + in_flight - 1.0).abs() < 1e-12, "{delivered} + {dead} + {in_flight}");
    // Both providers delivered some; their shares are of the delivered jobs.
    let (p1, p2) = (metric(&s, "base", "delivered_by_provider1"), metric(&s, "base", "delivered_by_provider2"));
    assert!(p1 > 0.0 && p2 > 0.0 && (p1 + p2 - 1.0).abs() < 1e-12, "{p1} {p2}");
}

#[test]
fn series_csv_has_the_queues_columns_per_bin_and_replication() {
    let (_t, dir) = run_text(MIXED, &[]);
    let mut r = csv::Reader::from_path(dir.join("series.csv")).unwrap();
    let header: Vec<String> = r.headers().unwrap().iter().map(str::to_string).collect();
    assert_eq!(
        header,
        [
            "variant",
            "replication",
            "bin_start_s",
            "bin_width_s",
            "created",
            "delivered",
            "dead_lettered",
            "retried",
            "queue_depth",
            "busy_s"
        ]
    );
    // 30 one-minute bins and the one holding the horizon, for each replication.
    assert_eq!(r.records().count(), 2 * 31);
}

#[test]
fn the_same_scenario_on_one_and_two_threads_writes_the_same_bytes() {
    let (_a, one) = run_text(MIXED, &["--threads", "1"]);
    let (_b, two) = run_text(MIXED, &["--threads", "2"]);
    for f in ["summary.csv", "series.csv", "cdf.csv", "manifest.json"] {
        assert!(std::fs::read(one.join(f)).unwrap() == std::fs::read(two.join(f)).unwrap(), "{f} differs");
    }
}

fn check_err(source: &str) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("bad.toml");
    std::fs::write(&file, source).unwrap();
    let o = run(&["check", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stdout));
    text(&o.stderr)
}

#[test]
fn a_bad_provider_table_is_named_by_its_place_and_key() {
    let bad = MIXED.replace("at = \"15min\"", "at = \"15min\"\nfail_fraction = 1.5");
    let err = check_err(&bad);
    assert!(
        err.contains("bad.toml:32:17: key `jobs.provider[1].down[0].fail_fraction`: must be between 0 and 1"),
        "{err}"
    );
    let overlapping =
        MIXED.replace("fail_fraction = 0.6", "[[jobs.provider.down]]\nat = \"10min\"\nduration = \"1min\"");
    let err = check_err(&overlapping);
    assert!(err.contains("key `jobs.provider[0].down[1].at`: 10min is before the end of down[0]"), "{err}");
    let err = check_err(&format!("{MIXED}\n[server]\n"));
    assert!(err.contains("[server] does not apply to [jobs]"), "{err}");
    let err = check_err(&MIXED.replace("max_attempts = 8", "preset = \"nope\""));
    assert!(err.contains("key `jobs.retry.preset`: unknown preset `nope`"), "{err}");
}

#[test]
fn email_failover_loses_no_message_and_answers_shares_and_the_bad_afternoons_latency() {
    let (_t, dir) = run_scenario("email-failover", &[]);
    let s = summary(&dir);
    for v in ["failover", "primary-only", "failover-5s-timeout"] {
        // About 172,800 messages in the day; every one delivered by midnight.
        assert!(within(metric(&s, v, "jobs"), 171_000.0, 174_500.0), "{v}");
        assert_eq!(metric(&s, v, "delivered"), 1.0, "{v}");
        assert_eq!((metric(&s, v, "dead_lettered"), metric(&s, v, "in_flight")), (0.0, 0.0), "{v}");
    }
    // A third of the primary's calls hang for 4 of 24 hours: about 5 % go to a fallback.
    assert!(within(metric(&s, "failover", "delivered_by_provider1"), 0.945, 0.95));
    assert!(within(metric(&s, "failover", "delivered_by_provider2"), 0.048, 0.052));
    assert!(within(metric(&s, "failover", "delivered_by_provider3"), 0.002, 0.003));
    // The afternoon adds a third of the 30 s timeout with failover; the primary alone
    // adds the timeout and a backoff for each hung try; a 5 s timeout a third of 5 s.
    assert!(within(metric(&s, "failover", "added_latency"), 9.5, 11.0));
    assert!(within(metric(&s, "primary-only", "added_latency"), 16.0, 19.0));
    assert!(within(metric(&s, "failover-5s-timeout", "added_latency"), 1.7, 2.1));
    assert_eq!(metric(&s, "failover", "completion_time_normal"), 0.3);
    // The CDF of completion times is drawn over the jobs, not "clients".
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(report.contains("### Distribution over jobs") && report.contains("The share of jobs (y)"), "{report}");
    assert!(std::fs::read_to_string(dir.join("cdf.csv")).unwrap().contains(",completion_time,"));
}

#[test]
fn jobs_backoff_a_fixed_5s_retry_dead_letters_good_jobs_and_backoff_with_a_2h_deadline_none() {
    let (_t, dir) = run_scenario("jobs-backoff", &[]);
    let s = summary(&dir);
    // 5 attempts 5 s apart give up within half a minute: every job an outage meets is lost,
    // about 10 % of all (the 30 min outage alone is 8 % of the 6 hours).
    assert!(within(metric(&s, "fixed-5s", "dead_lettered_good"), 0.095, 0.105));
    assert!(within(metric(&s, "queue-default", "dead_lettered_good"), 0.07, 0.08));
    assert_eq!(metric(&s, "exp-jitter-2h", "dead_lettered_good"), 0.0);
    // Only the poison jobs (1 %) reach the dead-letter queue.
    assert!(within(metric(&s, "exp-jitter-2h", "dead_lettered"), 0.006, 0.011));
    // During the 30 min outage (2:00 to 2:30) retrying every second pins all 8 workers
    // to a dead downstream; the backoff's jobs retry about every 150 s each, which
    // still keeps 85 % of them busy once 9,000 jobs are waiting.
    let busy = |v: &str| outage_busy(&dir, v);
    assert!(busy("fixed-1s-x100") > 0.99, "{}", busy("fixed-1s-x100"));
    assert!(within(busy("exp-jitter-2h"), 0.8, 0.9), "{}", busy("exp-jitter-2h"));
    assert!(busy("fixed-5s") < 0.35, "{}", busy("fixed-5s"));
    assert!(metric(&s, "fixed-1s-x100", "provider_calls_per_job") > 3.0);
}

/// The share of worker time busy during jobs-backoff's long outage, in replication 0.
fn outage_busy(dir: &std::path::Path, variant: &str) -> f64 {
    let mut r = csv::Reader::from_path(dir.join("series.csv")).unwrap();
    let h = r.headers().unwrap().clone();
    let col = |n: &str| h.iter().position(|c| c == n).unwrap();
    let (v, rep, start, busy) = (col("variant"), col("replication"), col("bin_start_s"), col("busy_s"));
    let busy_s: f64 = r
        .records()
        .map(Result::unwrap)
        .filter(|row| &row[v] == variant && &row[rep] == "0")
        .filter(|row| within(row[start].parse().unwrap(), 7200.0, 8999.0))
        .map(|row| row[busy].parse::<f64>().unwrap())
        .sum();
    busy_s / (8.0 * 1800.0)
}
