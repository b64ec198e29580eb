//! Zero-window probing end to end: a peer whose application stops reading, the sender's
//! persist timer (Linux `tcp_probe_timer`, `tcp_send_probe0`, `tcp_ack_probe`) read off
//! the trace, and the shipped scenario's answers (docs/shipped-scenarios.md).

use super::common::{metric, refused, run_scenario, run_text, summary, trace};

fn times(dir: &std::path::Path, variant: &str, event: &str) -> Vec<f64> {
    trace(dir, variant).iter().filter(|r| r["event"] == event).map(|r| r["time_s"].parse().unwrap()).collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6
}

fn all_close(got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{got:?}");
    assert!(got.iter().zip(want).all(|(g, w)| close(*g, *w)), "{got:?} vs {want:?}");
}

#[test]
fn an_answering_peer_is_probed_with_doubling_waits_from_each_answer_and_never_given_up_on() {
    let (_t, dir) = run_scenario("tcp-zero-window", &[]);
    // The ACK that fills the 64-segment buffer arrives at 5.7 s. RTO = 100 + 200 ms.
    // tcp_check_probe_timer: first probe after tcp_probe0_base = 0.3 s (6.0 s). Each probe
    // is answered 0.1 s later with the window still zero: tcp_ack zeroes icsk_probes_out
    // and tcp_ack_probe re-arms for 0.3 s << icsk_backoff from the answer: 6.1 + 0.6,
    // 6.8 + 1.2, 8.1 + 2.4, 10.6 + 4.8, 15.5 + 9.6, 25.2 + 19.2, 44.5 + 38.4, 83.0 + 76.8,
    // then 159.9 + 120 (TCP_RTO_MAX) and every 120.1 s after.
    all_close(&times(&dir, "peer-answers", "zero_window"), &[5.7]);
    let probes = times(&dir, "peer-answers", "window_probe");
    all_close(&probes[..10], &[6.0, 6.7, 8.0, 10.5, 15.4, 25.1, 44.4, 82.9, 159.8, 279.9]);
    assert!(probes.windows(2).skip(9).all(|w| close(w[1] - w[0], 120.1)), "{probes:?}");
    let s = summary(&dir);
    // RFC 1122 4.2.2.17: open for as long as the peer answers, here the whole hour.
    assert_eq!(metric(&s, "peer-answers", "aborted"), 0.0);
    assert_eq!(metric(&s, "peer-answers", "zero_window_probes"), probes.len() as f64);
    assert!(close(metric(&s, "peer-answers", "zero_window_stall"), 3600.0 - 5.7));
}

#[test]
fn a_vanished_peer_is_given_up_on_after_tcp_retries2_unanswered_probes() {
    let (_t, dir) = run_scenario("tcp-zero-window", &[]);
    // Probes at 6.0, 6.7 and 8.0 s are answered (icsk_backoff 3); the path goes dark at
    // 10 s. From the last answer (8.1 s): 8.1 + 2.4 = 10.5, then waits of 4.8, 9.6, 19.2,
    // 38.4, 76.8 s (probes at 15.3, 24.9, 44.1, 82.5, 159.3) and 120 s (TCP_RTO_MAX):
    // the 15th unanswered probe at 159.3 + 9 × 120 = 1239.3 s; tcp_probe_timer finds
    // icsk_probes_out = 15 = tcp_retries2 at the next expiry, 1359.3 s, and aborts.
    let probes = times(&dir, "peer-vanishes", "window_probe");
    assert_eq!(probes.len(), 3 + 15);
    all_close(&probes[3..9], &[10.5, 15.3, 24.9, 44.1, 82.5, 159.3]);
    assert!(close(probes[17], 1239.3), "{probes:?}");
    all_close(&times(&dir, "peer-vanishes", "aborted"), &[1359.3]);
    let s = summary(&dir);
    assert_eq!(metric(&s, "peer-vanishes", "aborted"), 1.0);
    assert!(close(metric(&s, "peer-vanishes", "time_to_abort"), 1359.3 - 5.7));
}

#[test]
fn a_user_timeout_ends_probing_of_an_answering_peer_30_s_after_the_first_probe() {
    let (_t, dir) = run_scenario("tcp-zero-window", &[]);
    // tcp_probe_timer stamps icsk_probes_tstamp at the first expiry (6.0 s); answers do
    // not reset it; tcp_clamp_probe0_to_user_timeout makes an expiry land on 36.0 s,
    // which aborts.
    all_close(&times(&dir, "user-timeout", "aborted"), &[36.0]);
    let s = summary(&dir);
    assert!(close(metric(&s, "user-timeout", "time_to_abort"), 36.0 - 5.7));
    assert!(close(metric(&s, "user-timeout", "zero_window_stall"), 36.0 - 5.7));
}

const RESUMING: &str = r#"
name = "resuming"
description = "d"
horizon = "2min"
[tcp]
workload = { kind = "transfer", segments = 1000 }
rto.profile = "linux"
receiver = { buffer = 64, stall = [{ at = "5s", duration = "15s" }] }
[path]
base_rtt = "100ms"
[[variant]]
name = "update-arrives"
[[variant]]
name = "update-lost"
path.blackout = [{ at = "19.9s", duration = "2s" }]
"#;

#[test]
fn a_reader_that_resumes_reopens_the_window_by_its_update_or_else_by_the_next_probe() {
    let (_t, dir) = run_text(RESUMING, &[]);
    // Probes at 6.0, 6.7, 8.0, 10.5, 15.4 s, each answered; the next expiry is due at
    // 15.5 + 9.6 = 25.1 s. The application reads again at 20 s: tcp_cleanup_rbuf's window
    // update reaches the sender at 20.05 s, tcp_ack_probe clears the timer, data flows.
    all_close(&times(&dir, "update-arrives", "window_probe"), &[6.0, 6.7, 8.0, 10.5, 15.4]);
    all_close(&times(&dir, "update-arrives", "window_open"), &[20.05]);
    // The update is lost in a blackout (19.9 s to 21.9 s): the probe at 25.1 s finds the
    // window open, its answer at 25.2 s restarts the data.
    all_close(&times(&dir, "update-lost", "window_probe"), &[6.0, 6.7, 8.0, 10.5, 15.4, 25.1]);
    all_close(&times(&dir, "update-lost", "window_open"), &[25.2]);
    let s = summary(&dir);
    for v in ["update-arrives", "update-lost"] {
        assert_eq!(metric(&s, v, "finished"), 1.0, "{v}");
        assert_eq!(metric(&s, v, "aborted"), 0.0, "{v}");
    }
    assert!(close(metric(&s, "update-arrives", "zero_window_stall"), 20.05 - 5.7));
    assert!(close(metric(&s, "update-lost", "zero_window_stall"), 25.2 - 5.7));
}

#[test]
fn without_a_receiver_table_no_zero_window_metric_is_written() {
    let (_t, dir) = run_text(&RESUMING.replace("receiver = ", "# "), &[]);
    let s = summary(&dir);
    assert!(s.iter().all(|(_, m, _)| !m.starts_with("zero_window")), "{s:?}");
}

#[test]
fn stalls_out_of_order_are_refused_naming_the_key() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("s.toml");
    let bad = RESUMING.replace(
        r#"stall = [{ at = "5s", duration = "15s" }]"#,
        r#"stall = [{ at = "5s", duration = "15s" }, { at = "10s" }]"#,
    );
    std::fs::write(&file, bad).unwrap();
    let err = refused(&["check", file.to_str().unwrap()]);
    assert!(err.contains("tcp.receiver.stall[1].at"), "{err}");
    assert!(err.contains("do not overlap"), "{err}");
}
