use super::*;
use crate::engine::rng::Seeds;
use crate::scenario::load_str;
use crate::worlds::Job;

#[test]
fn meminfo_gives_mem_available_in_bytes_and_nothing_when_it_is_missing() {
    let text = "MemTotal:       16000000 kB\nMemFree:         1000 kB\nMemAvailable:    8000000 kB\n";
    assert_eq!(parse_meminfo(text), Some(8_000_000 * 1024));
    assert_eq!(parse_meminfo("MemTotal: 1 kB\n"), None);
    assert_eq!(parse_meminfo("MemAvailable: lots\n"), None);
}

const SMALL: &str = r#"
name = "small"
description = "d"
horizon = "10s"
replications = 3
max_events = 5000

[tcp]
clients = 2
workload = { kind = "steady", interval = "100ms" }

[path]
base_rtt = "100ms"
"#;

fn limits(total: u64, memory: Option<u64>) -> Limits {
    Limits { total_events: total, available_memory: memory }
}

#[test]
fn a_scenario_within_every_limit_passes() {
    let s = load_str("s.toml", SMALL).unwrap();
    let t = totals(&s, 2);
    assert!(t.worst.events > 0.0 && t.events == 3.0 * t.worst.events, "{t:?}");
    assert_eq!(check(&s, &t, limits(DEFAULT_TOTAL_EVENTS, Some(1 << 40))), Ok(()));
}

#[test]
fn one_replication_over_max_events_is_refused_naming_the_estimate_and_the_keys_to_change() {
    let s = load_str("s.toml", &SMALL.replace("max_events = 5000", "max_events = 100")).unwrap();
    let t = totals(&s, 1);
    let Err(Refusal::Replication(m)) = check(&s, &t, limits(DEFAULT_TOTAL_EVENTS, None)) else {
        panic!("not refused");
    };
    assert!(m.contains(&format!("about {} events", count(t.worst.events))), "{m}");
    assert!(m.contains("`max_events` = 100") && m.contains("`tcp.clients` or `horizon`"), "{m}");
    // The key's place, for the message: line 6, at the value.
    assert_eq!((s.max_events_at.line, s.max_events_at.column, s.max_events_at.key.as_str()), (6, 14, "max_events"));
}

#[test]
fn a_busy_loop_is_refused_as_never_ending_rather_than_with_a_number() {
    let busy = "name = \"b\"\ndescription = \"d\"\nhorizon = \"1min\"\n[calls]\nclients = 10\noutage = \"30s\"\n\
                [calls.policy]\nbase = \"0s\"\nmax_attempts = \"none\"\njitter = \"none\"\n";
    let s = load_str("s.toml", busy).unwrap();
    let t = totals(&s, 1);
    assert!(t.worst.events.is_infinite(), "{t:?}");
    let Err(Refusal::Replication(m)) = check(&s, &t, limits(DEFAULT_TOTAL_EVENTS, None)) else { panic!("not refused") };
    assert!(m.contains("would never end before `max_events` = 100000000") && m.contains("a delay"), "{m}");
    assert_eq!(count(f64::INFINITY), "unboundedly many");
}

#[test]
fn max_events_left_at_its_default_is_placed_in_the_file_alone() {
    let s = load_str("s.toml", &SMALL.replace("max_events = 5000\n", "")).unwrap();
    assert_eq!((s.max_events_at.file.as_str(), s.max_events_at.line), ("s.toml", 0));
}

#[test]
fn a_run_over_the_total_budget_is_refused_naming_the_budget_the_driver_and_max_events() {
    let s = load_str("s.toml", &SMALL.replace("replications = 3", "replications = 100")).unwrap();
    let t = totals(&s, 2);
    let Err(Refusal::Run(m)) = check(&s, &t, limits(1000, None)) else { panic!("not refused") };
    assert!(m.contains(&format!("about {} events", count(t.events))), "{m}");
    assert!(m.contains("budget of 1000 events") && m.contains("`--max-events ") && m.contains("`--force`"), "{m}");
    assert!(m.contains("`replications` (100)"), "{m}");
    assert_eq!(check(&s, &t, limits(t.events as u64 + 1, None)), Ok(()));
}

#[test]
fn memory_beyond_what_is_available_is_refused_and_unknown_memory_is_not_checked() {
    let s = load_str("s.toml", SMALL).unwrap();
    let t = totals(&s, 2);
    let need = t.memory() as u64;
    assert!(need > 0);
    let Err(Refusal::Run(m)) = check(&s, &t, limits(DEFAULT_TOTAL_EVENTS, Some(need / 2))) else {
        panic!("not refused")
    };
    assert!(m.contains("of memory") && m.contains(&bytes((need / 2) as f64)) && m.contains("--force"), "{m}");
    assert_eq!(check(&s, &t, limits(DEFAULT_TOTAL_EVENTS, Some(need + 1))), Ok(()));
    assert_eq!(check(&s, &t, limits(DEFAULT_TOTAL_EVENTS, None)), Ok(()));
}

#[test]
fn a_server_of_billions_of_workers_and_a_window_filled_with_billions_of_segments_count_as_memory_and_are_named() {
    // Both are allocated up front, one slot each: before the guard knew, a server of
    // 4294967295 workers was a failed 34 GB allocation, not an error.
    let workers = "name = \"w\"\ndescription = \"d\"\nhorizon = \"1min\"\n[calls]\nclients = 20\ninterval = \"1s\"\n\
                   [server]\nconcurrency = 4294967295\nservice_time = \"10ms\"\n";
    let s = load_str("s.toml", workers).unwrap();
    let t = totals(&s, 1);
    assert!(t.memory() > 4294967295.0 * 8.0, "{t:?}");
    let Err(Refusal::Run(m)) = check(&s, &t, limits(DEFAULT_TOTAL_EVENTS, Some(1 << 34))) else {
        panic!("not refused")
    };
    assert!(m.contains("lower `server.concurrency`"), "{m}");
    // A transfer of ten billion segments fills it (and is allowed its events here).
    let huge = SMALL.replace("clients = 2", "clients = 2\nwindow = 4294967295");
    let filled = huge
        .replace(r#"{ kind = "steady", interval = "100ms" }"#, r#"{ kind = "transfer", segments = 10000000000 }"#)
        .replace("max_events = 5000", "max_events = 1000000000000");
    let s = load_str("s.toml", &filled).unwrap();
    let t = totals(&s, 1);
    let Err(Refusal::Run(m)) = check(&s, &t, limits(u64::MAX, Some(1 << 34))) else { panic!("not refused") };
    assert!(m.contains("lower `tcp.window`"), "{m}");
}

#[test]
fn a_window_of_billions_that_the_workload_never_fills_is_not_counted_as_memory() {
    // A steady write every 100 ms for 10 s: 101 segments at most, whatever the window.
    // Before, this was estimated at hundreds of GB and refused, and `--force` then ran
    // it in a few MB.
    let s = load_str("s.toml", &SMALL.replace("clients = 2", "clients = 2\nwindow = 4294967295")).unwrap();
    let t = totals(&s, 1);
    assert!(t.memory() < 1e6, "{t:?}");
    assert_eq!(check(&s, &t, limits(DEFAULT_TOTAL_EVENTS, Some(1 << 30))), Ok(()));
    assert_eq!(t.worst.knobs, ["tcp.clients", "horizon"]);
}

#[test]
fn more_threads_hold_more_replications_in_memory_at_once() {
    let s = load_str("s.toml", SMALL).unwrap();
    let (one, two) = (totals(&s, 1), totals(&s, 2));
    assert_eq!(two.running, 2.0 * one.running);
    // Never more at once than there are replications.
    assert_eq!(totals(&s, 64).threads, 3);
}

#[test]
fn counts_and_bytes_read_as_people_say_them() {
    assert_eq!(count(1_234_567.0), "1.23 million");
    assert_eq!(count(12_000_000_000.0), "12 billion");
    assert_eq!(count(950.4), "950");
    assert_eq!(bytes(2_500_000_000.0), "2.5 GB");
    assert_eq!(round_up(1_234_567.0), 1_300_000);
}

/// Runs replication 0 of every cell of `source` and asserts the estimate lies between
/// half and three times the events it really handled.
fn honest(source: &str) {
    let s = load_str("h.toml", source).unwrap_or_else(|e| panic!("{e}"));
    for v in &s.variants {
        for cell in &v.cells {
            let job = Job {
                seeds: Seeds::new(s.seed),
                replication: 0,
                horizon: s.horizon,
                budget: crate::engine::budget::Budget::replication(s.max_events),
            };
            let actual = cell.spec.run(job).unwrap().events as f64;
            let estimate = cell.spec.estimate(s.horizon).events;
            let ratio = estimate / actual;
            assert!((0.5..=3.0).contains(&ratio), "{} {:?}: estimate {estimate}, actual {actual}", v.name, cell.sweep);
        }
    }
}

/// Keepalive's probes when the path stays up (answered once per idle time), when a
/// blackout outlasts the probes (the connection ends), and when one is shorter; and a
/// transfer over before the blackout, which leaves the retransmission timer nothing to do.
#[test]
fn the_tcp_estimate_is_honest_for_keepalive_with_a_live_a_dead_and_a_returning_peer() {
    honest(
        r#"
name = "t"
description = "d"
horizon = "1h"
[tcp]
clients = 10
workload = { kind = "transfer", segments = 10 }
rto.profile = "linux"
keepalive = { time = "60s", interval = "10s", probes = 3 }
[path]
base_rtt = "100ms"
[[variant]]
name = "live"
[[variant]]
name = "dead"
path.blackout = [{ at = "10min", duration = "1h" }]
[[variant]]
name = "returning"
path.blackout = [{ at = "10min", duration = "25s" }]
[[variant]]
name = "defaults"
tcp.keepalive = { time = "7200s", interval = "75s", probes = 9 }
path.blackout = [{ at = "10min", duration = "1h" }]
"#,
    );
}

#[test]
fn the_tcp_estimate_is_honest_for_zero_window_stalls_answered_unanswered_and_ended() {
    honest(
        r#"
name = "t"
description = "d"
horizon = "1h"
[tcp]
clients = 10
workload = { kind = "transfer", segments = 2000 }
rto.profile = "linux"
receiver = { buffer = 64, stall = [{ at = "5s" }] }
[path]
base_rtt = "100ms"
[[variant]]
name = "answered"
[[variant]]
name = "vanished"
path.blackout = [{ at = "10s", duration = "2h" }]
[[variant]]
name = "user-timeout"
tcp.rto.user_timeout = "30s"
[[variant]]
name = "resumed"
tcp.receiver = { buffer = 64, stall = [{ at = "5s", duration = "60s" }, { at = "100s", duration = "1s" }] }
"#,
    );
}

#[test]
fn the_tcp_estimate_is_honest_for_steady_lossy_blacked_out_and_bulk_connections() {
    honest(
        r#"
name = "t"
description = "d"
horizon = "60s"
[tcp]
clients = 20
workload = { kind = "steady", interval = "50ms" }
[path]
base_rtt = "100ms"
loss = { model = "bernoulli", p = 0.05 }
[[variant]]
name = "lossy"
[[variant]]
name = "blackout"
path.loss = { model = "none" }
path.blackout = [{ at = "10s", duration = "40s" }]
"#,
    );
    honest(
        r#"
name = "t"
description = "d"
horizon = "60s"
[tcp]
clients = 20
workload = { kind = "transfer", segments = 2000 }
[path]
base_rtt = "100ms"
loss = { model = "bernoulli", p = 0.02 }
[[variant]]
name = "short"
[[variant]]
name = "longer-than-the-horizon"
tcp.workload.segments = 100000
"#,
    );
}

#[test]
fn the_grpc_estimate_is_honest_for_a_reconnect_herd_a_blackhole_and_a_flapping_server() {
    honest(
        r#"
name = "g"
description = "d"
horizon = "3min"
[grpc]
clients = 2000
[server]
accept_rate = 200.0
burst = 20
[[server.restart]]
at = "10s"
down = "30s"
[[variant]]
name = "herd"
[[variant]]
name = "herd-no-jitter"
grpc.backoff.jitter = 0.0
[[variant]]
name = "blackhole"
server.down_behavior = "blackhole"
server.accept_rate = 1e9
[[variant]]
name = "flapping-never-reset"
server.drop_after = "2s"
server.restart = []
grpc.start = "connecting"
grpc.reset_on_settings = false
"#,
    );
}

#[test]
fn the_calls_estimate_is_honest_for_a_retry_storm_an_outage_through_tiers_and_bad_requests() {
    honest(
        r#"
name = "c"
description = "d"
horizon = "2min"
[calls]
clients = 50
interval = "100ms"
pacing = "poisson"
start_spread = "100ms"
attempt_time = "5ms"
fail_time = "5ms"
fail_with = "503"
timeout = "1s"
[calls.policy]
preset = "aws-standard"
budget = "none"
[server]
concurrency = 12
service_time = "20ms"
[[server.brownout]]
at = "30s"
duration = "10s"
fail_fraction = 0
slowdown = 5
[[variant]]
name = "storm"
[[variant]]
name = "outage-tiers"
calls.interval = "2s"
calls.tiers = [3]
server.brownout = []
server.outage = [{ at = "20s", duration = "40s" }]
[[variant]]
name = "bad-requests"
calls.interval = "1s"
calls.permanent_fraction = 0.2
server.brownout = []
"#,
    );
}

#[test]
fn the_occ_estimate_is_honest_for_every_strategy() {
    honest(
        r#"
name = "o"
description = "d"
horizon = "1h"
[occ]
clients = 60
strategy = "none"
base = "5ms"
cap = "2s"
[sweep]
"occ.strategy" = ["none", "exponential", "full", "equal", "decorrelated"]
"#,
    );
}

#[test]
fn the_jobs_estimate_is_honest_for_outages_with_fixed_and_exponential_retry_and_poison() {
    honest(
        r#"
name = "j"
description = "d"
horizon = "1h"
[jobs]
rate = 5
workers = 8
poison_fraction = "2%"
[[jobs.provider]]
name = "p"
call_time = "200ms"
fail_time = "100ms"
[[jobs.provider.down]]
at = "10min"
duration = "15min"
[[variant]]
name = "fixed-1s"
jobs.retry = { base = "1s", multiplier = 1.0, jitter = "none", max_attempts = 100 }
[[variant]]
name = "queue-default"
[[variant]]
name = "deadline"
jobs.retry = { max_attempts = "none", deadline = "30min" }
"#,
    );
}

/// A passive open answered at once, after a lost SYN-ACK, and never (the peer dark after
/// its SYN: the request expires and no data flows), with default and two SYN-ACK retries.
#[test]
fn the_tcp_estimate_is_honest_for_a_passive_open_answered_late_and_never() {
    honest(
        r#"
name = "t"
description = "d"
horizon = "5min"
[tcp]
clients = 10
workload = { kind = "transfer", segments = 20 }
rto.profile = "linux"
listen = {}
[path]
base_rtt = "100ms"
[[variant]]
name = "clean"
[[variant]]
name = "synack-lost"
path.blackout = [{ at = "10ms", duration = "1030ms" }]
[[variant]]
name = "peer-dark"
path.blackout = [{ at = "10ms", duration = "1h" }]
[[variant]]
name = "peer-dark-two-retries"
tcp.listen.synack_retries = 2
path.blackout = [{ at = "10ms", duration = "1h" }]
"#,
    );
}
