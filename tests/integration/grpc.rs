//! gRPC channels against a shared server, through the CLI: the restart storm's answer,
//! and how fast jitter desynchronizes a herd under each profile.

use std::collections::BTreeMap;

use super::common::{metric, run_scenario, run_text, summary};

/// Start times (s) of each channel's attempts, by attempt number, from `connections.csv`.
fn starts(dir: &std::path::Path) -> BTreeMap<u32, Vec<f64>> {
    let mut by_attempt: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
    let mut r = csv::Reader::from_path(dir.join("connections.csv")).unwrap();
    let h = r.headers().unwrap().clone();
    let col = |name: &str| h.iter().position(|c| c == name).unwrap();
    let (attempt, start) = (col("attempt"), col("start_s"));
    for rec in r.records() {
        let rec = rec.unwrap();
        by_attempt.entry(rec[attempt].parse().unwrap()).or_default().push(rec[start].parse().unwrap());
    }
    by_attempt
}

/// The most starts that fall in any window of `width` seconds.
fn densest(times: &[f64], width: f64) -> usize {
    let mut t = times.to_vec();
    t.sort_by(f64::total_cmp);
    (0..t.len()).map(|i| t[i..].iter().take_while(|&&x| x < t[i] + width - 1e-12).count()).max().unwrap_or(0)
}

fn spread(times: &[f64]) -> f64 {
    let lo = times.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = times.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    hi - lo
}

/// 50 channels connected over a constant 20 ms path until a restart at 1 s; the server
/// then stays down, refusing: every attempt fails one RTT after it starts.
fn failing_fast(profile: &str) -> String {
    format!(
        r#"
name = "herd"
description = "50 channels failing fast"
horizon = "30s"
[grpc]
clients = 50
record = ["connections"]
backoff = {{ profile = "{profile}" }}
[server]
down_behavior = "refuse"
[[server.restart]]
at = "1s"
down = "1h"
[path]
base_rtt = "20ms"
[trace]
first_clients = 50
"#
    )
}

#[test]
fn grpc_core_jitters_the_first_delay_so_attempt_2_is_already_spread() {
    let (_t, dir) = run_text(&failing_fast("grpc-core"), &[]);
    let s = starts(&dir);
    // Attempt 1: everyone learns of the drop one one-way delay after the restart.
    assert_eq!(s[&1].len(), 50);
    assert_eq!(spread(&s[&1]), 0.0, "{:?}", s[&1]);
    // grpc-core backoff.cc: the first delay is 1 s × U(0.8, 1.2) too, truncated to ms, so
    // 50 starts fall over 400 ms: about 1.25 per 10 ms window on average.
    let dense = densest(&s[&2], 0.010);
    assert!(dense <= 5, "{dense} attempt-2 starts share a 10 ms window: {:?}", s[&2]);
    assert!(spread(&s[&2]) > 0.2);
}

#[test]
fn grpc_go_keeps_attempts_1_and_2_together_because_its_first_delay_is_unjittered() {
    let (_t, dir) = run_text(&failing_fast("grpc-go"), &[]);
    let s = starts(&dir);
    assert_eq!(spread(&s[&1]), 0.0);
    // grpc-go backoff.go: retries == 0 returns BaseDelay exactly, counted from the end
    // of the failed attempt, which is the same for everyone here.
    assert_eq!(spread(&s[&2]), 0.0, "{:?}", s[&2]);
    assert!(spread(&s[&3]) > 0.1, "{:?}", s[&3]);
}

#[test]
fn a_server_that_never_sends_settings_keeps_the_herd_together_until_the_backoff_outgrows_20s() {
    let (_t, dir) = run_text(
        r#"
name = "never-settings"
description = "TCP accepted, SETTINGS never sent"
horizon = "5min"
[grpc]
clients = 50
start = "connecting"
record = ["connections"]
[server]
send_settings = false
[path]
base_rtt = "20ms"
[trace]
first_clients = 50
"#,
        &[],
    );
    let s = starts(&dir);
    // spec: the attempt lasts max(deadline, now + 20 s); while the jittered backoff stays
    // below 20 s (1, 1.6, … 10.5 s, ×1.2 at most), every attempt ends at +20 s for all,
    // and the next starts at once: the herd moves in lockstep.
    for k in 1..=7 {
        assert_eq!(spread(&s[&k]), 0.0, "attempt {k}: {:?}", s[&k]);
        assert!((s[&k][0] - 20.0 * (k - 1) as f64).abs() < 1e-9, "attempt {k} at {}", s[&k][0]);
    }
    // Backoff 26.8 s × U(0.8, 1.2) > 20 s: from here the deadlines, and so the starts, spread.
    assert!(spread(&s[&9]) > 1.0, "{:?}", s[&9]);
}

#[test]
fn the_first_burst_is_the_busiest_second_after_the_return_and_absent_without_one() {
    // grpc-go (backoff.go): attempt 1 at the restart (1 s), attempt 2 one unjittered
    // second later, still refused; attempt 3 after 1.6 s ± 20 %, from 3.3 s to 3.95 s:
    // all 50 channels within one second of the server's return at 3 s.
    let back = failing_fast("grpc-go").replace("down = \"1h\"", "down = \"2s\"");
    let (_t, dir) = run_text(&back, &[]);
    assert_eq!(metric(&summary(&dir), "base", "first_burst_peak"), 50.0);
    // Down for longer than the run: it never comes back, and the metric is not written.
    let (_t, dir) = run_text(&failing_fast("grpc-go"), &[]);
    assert!(summary(&dir).iter().all(|(_, m, _)| m != "first_burst_peak"));
    let replications = std::fs::read_to_string(dir.join("replications.csv")).unwrap();
    assert!(!replications.contains("first_burst_peak"));
}

#[test]
fn restart_storm_without_jitter_stays_a_herd_and_jitter_spreads_it() {
    let (_t, dir) = run_scenario("grpc-restart-storm", &[]);
    let s = summary(&dir);
    let ratio = |v| metric(&s, v, "peak_to_mean");
    assert!(ratio("no-jitter") > 20.0 * ratio("jitter-0.2"), "{} vs {}", ratio("no-jitter"), ratio("jitter-0.2"));
    // Without jitter every wave of 10,000 meets 1,000 handshakes/s and a queue of 128:
    // a few hundred get in per wave, and the waves are up to 120 s apart.
    assert!(metric(&s, "no-jitter", "connected_at_end") < 0.2);
    assert_eq!(metric(&s, "jitter-0.2", "connected_at_end"), 1.0);
    assert!(metric(&s, "jitter-0.2", "reconnect_all") < 100.0);
    // The server is down until 40 s: nobody is back in less than 30 s.
    assert!(metric(&s, "jitter-0.2", "reconnect_p50") > 30.0);
    // Without jitter the 10,000 channels' timers fire together: the first burst after
    // the return is all of them in one instant; jitter spreads it over seconds.
    assert_eq!(metric(&s, "no-jitter", "first_burst_peak"), 10_000.0);
    assert!(metric(&s, "jitter-0.2", "first_burst_peak") < 0.2 * 10_000.0);
}

#[test]
fn flapping_server_a_client_that_resets_on_settings_reconnects_every_time() {
    let (_t, dir) = run_scenario("grpc-flapping", &[]);
    let s = summary(&dir);
    assert!(metric(&s, "reset-on-settings", "connected_time") > 0.9);
    assert!(metric(&s, "never-reset", "connected_time") < 0.3);
    assert!(
        metric(&s, "reset-on-settings", "attempts_per_client") > 5.0 * metric(&s, "never-reset", "attempts_per_client")
    );
}

#[test]
fn a_connect_timeout_shorter_than_the_path_times_out_every_attempt_at_its_own_deadline() {
    // A 1 ms minimum connect timeout over a 100 ms path, with the first backoff of 1 µs:
    // the channel gives up before its SYN even reaches the server. Each attempt must end
    // at its deadline, never before its start, and the server still counts the SYNs.
    let (_tmp, dir) = run_text(
        r#"
name = "short-deadline"
description = "connect deadlines shorter than the round trip"
horizon = "2s"
[grpc]
clients = 3
start = "connecting"
record = ["connections"]
backoff = { profile = "spec", initial_backoff = "1us", max_backoff = "1us", jitter = 0.0, min_connect_timeout = "1ms" }
[path]
base_rtt = "100ms"
[trace]
first_clients = 3
"#,
        &[],
    );
    let mut r = csv::Reader::from_path(dir.join("connections.csv")).unwrap();
    let h = r.headers().unwrap().clone();
    let col = |name: &str| h.iter().position(|c| c == name).unwrap();
    let (start, end, outcome) = (col("start_s"), col("end_s"), col("outcome"));
    let mut rows = 0;
    for rec in r.records() {
        let rec = rec.unwrap();
        let (s, e): (f64, f64) = (rec[start].parse().unwrap(), rec[end].parse().unwrap());
        assert_eq!(&rec[outcome], "timeout", "{rec:?}");
        assert!((e - s - 0.001).abs() < 1e-9, "ends at its 1 ms deadline: {rec:?}");
        rows += 1;
    }
    assert!(rows > 3 * 1000, "about one attempt per millisecond per channel, got {rows}");
    let rows = summary(&dir);
    assert!(metric(&rows, "base", "attempts") > 3.0 * 1000.0, "the server saw the SYNs: {rows:?}");
}
