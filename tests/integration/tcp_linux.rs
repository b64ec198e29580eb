//! The tcp world against Linux's ACK and timer rules end to end: scenarios whose traces
//! show where the kernel's timing is decided (`net/ipv4/tcp_input.c`, `tcp_output.c`).

use crate::common::{metric, run_text, summary, trace};

fn secs(row: &std::collections::BTreeMap<String, String>, col: &str) -> f64 {
    row[col].parse().unwrap()
}

#[test]
fn after_a_blackout_without_timestamps_the_backoff_clears_one_rtt_after_the_first_new_ack() {
    // tcp_ack_update_rtt: the retransmission's ACK gives no sample (Karn), but the
    // duplicate ACK that SACKs F-RTO's new data one round trip later does (sack_rtt_us),
    // and "only reset backoff on valid RTT measurement".
    let (_tmp, dir) = run_text(
        r#"name = "blackout-no-ts"
seed = 1
replications = 1
horizon = "20s"

[tcp]
clients = 1
window = 10
workload = { kind = "steady", interval = "100ms" }
rto = { profile = "linux", timestamps = false }

[path]
base_rtt = "100ms"

[[path.blackout]]
at = "5s"
duration = "3s"
"#,
        &[],
    );
    let rows = trace(&dir, "base");
    let after: Vec<_> = rows.iter().filter(|r| secs(r, "time_s") > 8.0).collect();
    let backoffs = |r: &&std::collections::BTreeMap<String, String>| r["backoffs"].parse::<u32>().unwrap();
    let first_ack = after.iter().find(|r| r["event"] == "ack").expect("an ACK after the blackout");
    assert!(backoffs(first_ack) > 0, "{first_ack:?}");
    let cleared = after.iter().find(|r| backoffs(r) == 0).expect("the backoff clears");
    assert_eq!(cleared["event"], "sample");
    assert_eq!(cleared["sample_s"], "0.100000000");
    let lag = secs(cleared, "time_s") - secs(first_ack, "time_s");
    assert!((lag - 0.1).abs() < 1e-9, "cleared {lag} s after the first new ACK");
}

#[test]
fn a_retransmitted_syn_is_timed_on_the_1ms_timestamp_clock() {
    // The first SYN is lost; the second, at 1 s, is answered 100.7 ms later.
    // tcp_rtt_tsopt_us: 1100 − 1000 ticks = 100 ms, RTO 300 ms (100.7 ms would be 304).
    let (_tmp, dir) = run_text(
        r#"name = "syn-ts"
seed = 1
replications = 1
horizon = "3s"

[tcp]
clients = 1
window = 10
workload = { kind = "transfer", segments = 5 }
rto = { profile = "linux" }

[path]
base_rtt = "100700us"

[[path.blackout]]
at = "0s"
duration = "500ms"
"#,
        &[],
    );
    let rows = trace(&dir, "base");
    let sample = rows.iter().find(|r| r["event"] == "sample").expect("a handshake sample");
    assert_eq!(secs(sample, "time_s"), 1.1007);
    assert_eq!((sample["sample_s"].as_str(), sample["rto_s"].as_str()), ("0.100000000", "0.300000000"));
}

#[test]
fn an_rtt_step_from_50_to_600ms_under_20ms_writes_takes_one_spurious_timeout() {
    // The RTO deadline runs from the head's send time while probes are rescheduled by
    // each write (tcp_rto_delta_us), so it expires once before the first 600 ms ACK;
    // F-RTO then finds a never-retransmitted segment ACKed (tcp_process_loss step 3b).
    let (_tmp, dir) = run_text(
        r#"name = "rtt-step-writes"
seed = 1
replications = 1
horizon = "14s"

[tcp]
clients = 1
workload = { kind = "steady", interval = "20ms" }
rto = { profile = "linux" }

[path]
base_rtt = "50ms"

[[path.rtt_change]]
at = "10s"
rtt = "600ms"
"#,
        &[],
    );
    let rows = summary(&dir);
    assert_eq!(metric(&rows, "base", "timeouts"), 1.0);
    assert_eq!(metric(&rows, "base", "spurious_timeouts_detected"), 1.0);
    let events: Vec<_> = trace(&dir, "base").into_iter().filter(|r| r["event"] == "spurious_timeout").collect();
    assert_eq!(events.len(), 1);
}
