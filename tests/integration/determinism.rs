//! The same scenario and seed give byte-identical files, whatever the thread count.

use super::common::{files, run_scenario};

#[test]
fn one_and_four_threads_write_byte_identical_results() {
    // tcp-karn has the most variants and replications, so the jobs really interleave.
    let (_a, one) = run_scenario("tcp-karn", &["--threads", "1"]);
    let (_b, four) = run_scenario("tcp-karn", &["--threads", "4"]);
    let (x, y) = (files(&one), files(&four));
    assert_eq!(
        x.iter().map(|f| &f.0).collect::<Vec<_>>(),
        [
            "manifest.json",
            "replications.csv",
            "report.html",
            "report.md",
            "rto.png",
            "rto.svg",
            "summary.csv",
            "trace.csv"
        ]
    );
    for ((name, a), (_, b)) in x.iter().zip(&y) {
        assert!(a == b, "{name} differs between 1 and 4 threads");
    }
}

#[test]
fn the_same_seed_twice_gives_the_same_bytes_and_another_seed_does_not() {
    let (_a, first) = run_scenario("tcp-karn", &["--threads", "2", "--replications", "2"]);
    let (_b, again) = run_scenario("tcp-karn", &["--threads", "2", "--replications", "2"]);
    let (_c, other) = run_scenario("tcp-karn", &["--threads", "2", "--replications", "2", "--seed", "99"]);
    assert_eq!(files(&first), files(&again));
    let summary = |d: &std::path::Path| std::fs::read(d.join("summary.csv")).unwrap();
    assert_ne!(summary(&first), summary(&other), "a different seed must draw different losses");
}

#[test]
fn grpc_results_are_identical_for_one_and_two_threads() {
    let (_a, one) = run_scenario("grpc-flapping", &["--threads", "1"]);
    let (_b, two) = run_scenario("grpc-flapping", &["--threads", "2"]);
    assert_eq!(files(&one), files(&two));
    let names: Vec<String> = files(&one).into_iter().map(|f| f.0).collect();
    for expected in
        ["attempts.csv", "attempts.png", "cdf.csv", "cdf.svg", "manifest.json", "report.html", "summary.csv"]
    {
        assert!(names.iter().any(|n| n == expected), "{expected} missing from {names:?}");
    }
}

#[test]
fn a_retry_storm_is_identical_for_one_and_three_threads() {
    // Server-side draws (service times) come in event order, client-side ones from each
    // client's own streams: neither depends on which replication a thread runs first.
    let (_a, one) = run_scenario("calls-permanent-errors", &["--threads", "1"]);
    let (_b, three) = run_scenario("calls-permanent-errors", &["--threads", "3"]);
    assert_eq!(files(&one), files(&three));
    let (_c, one) = run_scenario("calls-retry-storm", &["--threads", "1", "--replications", "2"]);
    let (_d, three) = run_scenario("calls-retry-storm", &["--threads", "3", "--replications", "2"]);
    assert_eq!(files(&one), files(&three));
    let names: Vec<String> = files(&one).into_iter().map(|f| f.0).collect();
    for expected in ["series.csv", "load.png", "load.svg"] {
        assert!(names.iter().any(|n| n == expected), "{expected} missing from {names:?}");
    }
}
