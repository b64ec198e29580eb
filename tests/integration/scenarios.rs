//! Each shipped scenario, run through the CLI, gives the answer the user guide states (docs/shipped-scenarios.md).

use super::common::{metric, run_scenario, summary, trace};

/// (time, rto after it) of every timeout of a variant's traced connection.
fn timeouts(dir: &std::path::Path, variant: &str) -> Vec<(f64, f64)> {
    trace(dir, variant)
        .iter()
        .filter(|r| r["event"] == "timeout")
        .map(|r| (r["time_s"].parse().unwrap(), r["rto_s"].parse().unwrap()))
        .collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6
}

#[test]
fn blackout_rfc6298_doubles_from_one_second_and_retransmits_one_second_after_the_link_returns() {
    let (_t, dir) = run_scenario("tcp-blackout", &[]);
    // RFC 6298 (5.5): the last ACK before the blackout (t = 10 s) restarted a 1 s timer;
    // each expiry doubles it: timeouts at 11, 13, 17, 25 and 41 s, RTO 2, 4, 8, 16, 32 s.
    let got = timeouts(&dir, "rfc6298");
    let want = [(11.0, 2.0), (13.0, 4.0), (17.0, 8.0), (25.0, 16.0), (41.0, 32.0)];
    assert_eq!(got.len(), want.len(), "{got:?}");
    for ((t, rto), (wt, wrto)) in got.iter().zip(want) {
        assert!(close(*t, wt) && close(*rto, wrto), "{got:?}");
    }
    let s = summary(&dir);
    // The link returns at 40 s; the timer set at 25 s fires at 41 s.
    assert!(close(metric(&s, "rfc6298", "recovery_lag_blackout1"), 1.0));
    assert!(close(metric(&s, "rfc6298", "max_rto"), 32.0));
    // The collapse: the first fresh sample after the blackout (Karn: not from the
    // retransmitted segment) recomputes RTO from SRTT/RTTVAR, back to the 1 s minimum.
    let rows = trace(&dir, "rfc6298");
    let first = rows.iter().find(|r| r["event"] == "sample" && r["time_s"].parse::<f64>().unwrap() > 41.0).unwrap();
    assert_eq!((first["rto_s"].as_str(), first["backoffs"].as_str()), ("1.000000000", "0"));
}

#[test]
fn blackout_linux_probes_then_backs_off_from_300ms_and_waits_9_seconds_after_the_link_returns() {
    let (_t, dir) = run_scenario("tcp-blackout", &[]);
    // Linux: RTO = SRTT + max(rto_min, rttvar) = 100 + 200 ms. The tail loss probe goes
    // first (10.3 s); while the application keeps writing, every new segment re-arms the
    // probe (tcp_write_xmit -> tcp_schedule_loss_probe), so the RTO, overdue since 10.3 s,
    // fires two jiffies after the second probe timer (tcp_rearm_rto's one jiffy, the
    // wheel's tick), once the window is full: 11.112 s.
    // Then doubling 0.6, 1.2 … 38.4 s.
    let got = timeouts(&dir, "linux");
    let want =
        [(11.112, 0.6), (11.712, 1.2), (12.912, 2.4), (15.312, 4.8), (20.112, 9.6), (29.712, 19.2), (48.912, 38.4)];
    assert_eq!(got.len(), want.len(), "{got:?}");
    for ((t, rto), (wt, wrto)) in got.iter().zip(want) {
        assert!(close(*t, wt) && close(*rto, wrto), "{got:?}");
    }
    let s = summary(&dir);
    assert!(close(metric(&s, "linux", "recovery_lag_blackout1"), 8.912));
    assert_eq!(metric(&s, "linux", "tail_loss_probes"), 1.0);
    // With timestamps the retransmission's own ACK is a valid sample: RTO collapses at once.
    let rows = trace(&dir, "linux");
    let first = rows.iter().find(|r| r["event"] == "sample" && r["time_s"].parse::<f64>().unwrap() > 48.9).unwrap();
    assert_eq!((first["time_s"].as_str(), first["rto_s"].as_str()), ("49.012000000", "0.300000000"));
}

#[test]
fn rtt_step_linux_follows_faster_than_rfc6298_and_neither_times_out() {
    let (_t, dir) = run_scenario("tcp-rtt-step", &[]);
    let s = summary(&dir);
    for v in ["rfc6298", "linux"] {
        assert_eq!(metric(&s, v, "timeouts"), 0.0, "{v}");
        assert_eq!(metric(&s, v, "converged_change1"), 1.0, "{v}");
        assert_eq!(metric(&s, v, "converged_change2"), 1.0, "{v}");
    }
    // One timed segment per RTT and gain 1/8: about 7 s to reach 400 ms within 10 %.
    let rfc_up = metric(&s, "rfc6298", "convergence_time_change1");
    let linux_up = metric(&s, "linux", "convergence_time_change1");
    assert!((6.0..9.0).contains(&rfc_up), "{rfc_up}");
    // Every ACK sampled: the same gain applied ~8 times per RTT.
    assert!((0.5..2.0).contains(&linux_up), "{linux_up}");
    let rfc_down = metric(&s, "rfc6298", "convergence_time_change2");
    let linux_down = metric(&s, "linux", "convergence_time_change2");
    assert!(linux_down < rfc_down, "{linux_down} vs {rfc_down}");
}

#[test]
fn karn_timestamps_track_the_rtt_best_and_karn_or_not_alike() {
    let (_t, dir) = run_scenario("tcp-karn", &[]);
    let s = summary(&dir);
    let err = |v| metric(&s, v, "srtt_abs_error");
    // Timestamps sample every ACK, retransmitted or not: a third of the error of once-per-
    // RTT sampling with or without Karn's rule, which the NewReno sender's repairs leave
    // within each other's noise at this loss rate.
    assert!(err("rfc6298-timestamps") < 0.5 * err("rfc6298-no-karn").min(err("rfc6298-karn")));
    // Timestamps make every ACK a sample: about three times as many.
    assert!(metric(&s, "rfc6298-timestamps", "rtt_samples") > 2.5 * metric(&s, "rfc6298-karn", "rtt_samples"));
    // Linux's tight timer (200 ms variance floor) still probes on top of its RTOs, but
    // every ACK and every duplicate ACK that SACKs a fresh segment is a sample that ends
    // a backoff (tcp_ack_update_rtt), and F-RTO undoes spurious timeouts: it resends
    // less needlessly than RFC 6298 with Karn.
    assert!(metric(&s, "linux", "tail_loss_probes") > 0.0);
    assert!(metric(&s, "linux", "spurious_timeouts_detected") > 0.0);
    let needless = |v| metric(&s, v, "spurious_retransmissions");
    assert!(needless("linux") < needless("rfc6298-karn"), "{} vs {}", needless("linux"), needless("rfc6298-karn"));
}

#[test]
fn rtt_above_initial_rto_times_out_once_and_the_backoff_sticks() {
    let (_t, dir) = run_scenario("tcp-rtt-above-initial-rto", &[]);
    let s = summary(&dir);
    for v in ["rfc6298", "rfc6298-no-handshake", "linux"] {
        // One expiry, then no more: the connection does not spin (libudx#316).
        assert_eq!(metric(&s, v, "timeouts"), 1.0, "{v}");
        // SRTT 1.04 s, RTTVAR 0.52 s after the first clean sample: RTO 3.12 s.
        assert!(close(metric(&s, v, "max_rto"), 3.12), "{v}");
        assert!(close(metric(&s, v, "final_srtt"), 1.04), "{v}");
    }
    // Without a handshake the spurious timeout hits data: everything outstanding is
    // marked lost (RFC 6298 (5.4), RFC 5681 3.1), and without F-RTO or SACK the ten
    // segments are resent as the window reopens, each needlessly.
    assert_eq!(metric(&s, "rfc6298-no-handshake", "spurious_retransmissions"), 10.0);
    // After the timeout the ACK that arrives 40 ms later is ambiguous (Karn): the RTO
    // stays backed off at 2 s until the first clean sample.
    let rows = trace(&dir, "rfc6298-no-handshake");
    let acked = rows.iter().find(|r| r["event"] == "ack").unwrap();
    assert_eq!(
        (acked["time_s"].as_str(), acked["rto_s"].as_str(), acked["backoffs"].as_str()),
        ("1.040000000", "2.000000000", "1")
    );
}

#[test]
fn linux_defaults_probe_delays_the_first_rto_and_retries2_aborts_after_the_model_timeout() {
    let (_t, dir) = run_scenario("tcp-linux-defaults", &[]);
    let s = summary(&dir);
    // 30 s blackout from 10 s. Without TLP the 300 ms RTO fires at 10.3 s and the
    // doubling (0.6 … 38.4 s) puts the first retransmission after 40 s at 48.1 s.
    assert!(close(timeouts(&dir, "linux-no-tlp")[0].0, 10.3));
    assert!(close(metric(&s, "linux-no-tlp", "recovery_lag_blackout1"), 8.1));
    // With TLP the probe goes at 10.3 s and the first RTO waits until 11.112 s: every
    // segment the application writes re-arms the probe until the window is full.
    let rows = trace(&dir, "linux");
    let probe = rows.iter().find(|r| r["event"] == "probe").unwrap();
    assert_eq!(probe["time_s"], "10.300000000");
    assert!(close(timeouts(&dir, "linux")[0].0, 11.112));
    assert!(close(metric(&s, "linux", "recovery_lag_blackout1"), 8.912));
    // RFC 6298's 1 s floor doubles to 16 s before the link returns: it retries at 41 s.
    assert!(close(metric(&s, "rfc6298", "recovery_lag_blackout1"), 1.0));
    for v in ["linux", "linux-no-tlp", "rfc6298"] {
        assert_eq!(metric(&s, v, "aborted"), 0.0, "{v}");
    }

    // The path never returns. tcp_write_timeout: the connection dies at the first expiry
    // at least tcp_model_timeout(15, TCP_RTO_MIN) = 924.6 s after the first retransmission
    // (retrans_stamp), ip-sysctl.rst's "first RTO which exceeds the hypothetical timeout".
    let rows = trace(&dir, "linux-blackhole");
    let at = |e: &str| -> Vec<f64> {
        rows.iter().filter(|r| r["event"] == e).map(|r| r["time_s"].parse().unwrap()).collect()
    };
    let first_retransmission = at("retransmit")[0];
    let last_timeout = *at("timeout").last().unwrap();
    let aborted = at("aborted");
    assert_eq!(aborted.len(), 1);
    assert!(last_timeout - first_retransmission < 924.6 && aborted[0] - first_retransmission >= 924.6);
    assert!(close(aborted[0], 1004.112), "{aborted:?}");
    assert_eq!(metric(&s, "linux-blackhole", "aborted"), 1.0);
    // Counted from segment 100's first transmission at 10 s.
    assert!(close(metric(&s, "linux-blackhole", "time_to_abort"), 994.112));
    // RFC 6298 counts 15 retransmissions: 1+2+4+8+16+32 s, nine at the 60 s cap, and the
    // sixteenth expiry 60 s later gives up: 663 s after the first send.
    assert_eq!(metric(&s, "rfc6298-blackhole", "retransmissions"), 15.0);
    assert!(close(metric(&s, "rfc6298-blackhole", "time_to_abort"), 663.0));
}

#[test]
fn keepalive_notices_a_dead_peer_after_two_hours_by_default_and_half_a_minute_when_aggressive() {
    let (_t, dir) = run_scenario("tcp-keepalive", &[]);
    let s = summary(&dir);
    // tcp_keepalive_timer with the sysctls' defaults: last ACK at 0.2 s, nine unanswered
    // probes from 7200.2 s, 75 s apart, the reset at 0.2 + 7200 + 9 * 75 = 7875.2 s,
    // 7275.2 s after the peer died at 600 s.
    assert_eq!(metric(&s, "linux-defaults", "keepalive_probes"), 9.0);
    assert!(close(metric(&s, "linux-defaults", "keepalive_lag_blackout1"), 7275.2));
    // 60 s / 10 s / 3: nine probes answered 0.1 s later, each restarting the idle time
    // (tcp_ack sets rcv_tstamp), the tenth at 601.1 s lost with the two after it, the
    // reset at 631.1 s.
    assert_eq!(metric(&s, "aggressive", "keepalive_probes"), 12.0);
    assert!(close(metric(&s, "aggressive", "keepalive_lag_blackout1"), 31.1));
    for v in ["linux-defaults", "aggressive"] {
        assert_eq!(metric(&s, v, "keepalive_resets"), 1.0, "{v}");
        assert_eq!(metric(&s, v, "aborted"), 0.0, "{v}");
    }
}

#[test]
fn a_listener_starts_data_at_300ms_or_the_3s_fallback_after_a_lost_syn_ack_and_holds_a_silent_request_63s() {
    let (_t, dir) = run_scenario("tcp-synack", &[]);
    let s = summary(&dir);
    // reqsk_timer_handler resends the SYN-ACK lost at 0.05 s at 1.05 s; the ACK arrives
    // at 1.15 s. With timestamps its TSecr gives a 100 ms sample (tcp_ack_update_rtt):
    // RTO 100 + max(4 * 50, 200) ms. Without, tcp_synack_rtt_meas refuses the resent
    // SYN-ACK and tcp_init_metrics sets TCP_TIMEOUT_FALLBACK.
    for v in ["synack-lost", "synack-lost-no-timestamps"] {
        assert_eq!(metric(&s, v, "synack_retransmissions"), 1.0, "{v}");
        assert!(close(metric(&s, v, "handshake_time"), 1.1), "{v}");
    }
    assert!(close(metric(&s, "synack-lost", "accept_rto"), 0.3));
    assert!(close(metric(&s, "synack-lost-no-timestamps", "accept_rto"), 3.0));
    // The first window, lost to the second blackout, waits for the 1 s loss probe and the
    // 3 s RTO without a sample; a 200 ms probe and a 300 ms RTO with one.
    assert!(
        metric(&s, "synack-lost-no-timestamps", "transfer_time") > 2.0 * metric(&s, "synack-lost", "transfer_time")
    );
    // syn_ack_recalc: expiry at the (retries + 1)-th run of the timer, 1 + 2 + … + 2^retries s
    // after the SYN: 63 s for tcp_synack_retries 5, 7 s for 2.
    assert!(close(metric(&s, "client-silent", "request_held"), 63.0));
    assert_eq!(metric(&s, "client-silent", "synack_retransmissions"), 5.0);
    assert!(close(metric(&s, "client-silent-2-retries", "request_held"), 7.0));
    assert_eq!(metric(&s, "client-silent-2-retries", "synack_retransmissions"), 2.0);
    for v in ["client-silent", "client-silent-2-retries"] {
        assert_eq!(metric(&s, v, "requests_expired"), 1.0, "{v}");
        assert_eq!(metric(&s, v, "finished"), 0.0, "{v}");
    }
}

#[test]
fn user_timeout_30s_aborts_30_seconds_after_the_first_retransmission_not_after_retries2() {
    let (_t, dir) = run_scenario("tcp-user-timeout", &[]);
    let s = summary(&dir);
    // Without it: retries2 = 15, tcp_model_timeout 924.6 s, as in tcp-linux-defaults.
    assert!(close(metric(&s, "default", "time_to_abort"), 994.112));
    // TCP_USER_TIMEOUT = 30 s (retransmits_timed_out with icsk_user_timeout): the first
    // retransmission (retrans_stamp) is at 11.112 s after a probe at 10.3 s; the RTO
    // doubles from 600 ms and the expiry at 29.712 s leaves 19.2 s, which
    // tcp_clamp_rto_to_user_timeout cuts to the 11.4 s left: abort at 41.112 s.
    let expiries: Vec<f64> = timeouts(&dir, "user-timeout-30s").iter().map(|t| t.0).collect();
    let want = [11.112, 11.712, 12.912, 15.312, 20.112, 29.712];
    assert!(expiries.len() == want.len() && expiries.iter().zip(want).all(|(a, b)| close(*a, b)), "{expiries:?}");
    let rows = trace(&dir, "user-timeout-30s");
    let aborted: Vec<&str> = rows.iter().filter(|r| r["event"] == "aborted").map(|r| r["time_s"].as_str()).collect();
    assert_eq!(aborted, ["41.112000000"]);
    assert_eq!(metric(&s, "user-timeout-30s", "aborted"), 1.0);
    // Counted from segment 100's first transmission at 10 s.
    assert!(close(metric(&s, "user-timeout-30s", "time_to_abort"), 31.112));
}

#[test]
fn retry_storm_outlives_its_trigger_without_a_budget_and_ends_with_one() {
    let (_t, dir) = run_scenario("calls-retry-storm", &[]);
    let s = summary(&dir);
    // No budget: nothing succeeds at the end, the server is offered over twice what it
    // can serve, and most of its work is for clients that stopped waiting.
    assert_eq!(metric(&s, "no-budget", "recovered"), 0.0);
    assert_eq!(metric(&s, "no-budget", "goodput_end"), 0.0);
    assert!(metric(&s, "no-budget", "offered_load_end") > 2.0);
    assert!(metric(&s, "no-budget", "wasted_work") > 0.8);
    // Every budget, like no retries at all, recovers within 10 s of the trigger's end
    // and serves the offered 1,000 calls a second.
    for v in ["aws-quota", "grpc-throttle", "finagle-budget", "no-retries"] {
        assert_eq!(metric(&s, v, "recovered"), 1.0, "{v}");
        assert!(metric(&s, v, "time_to_recover") < 10.0, "{v}");
        assert!(metric(&s, v, "goodput_end") > 950.0, "{v}");
    }
    // The slowdown ends with the queue full (2,000) and the workers back at full speed
    // (1,250/s): without retries it falls by 1,250 − 1,000 a second, so in a fluid view
    // (2,000 − 1,250) / 250 = 3 s until a request waits less than the 1 s timeout.
    assert!(metric(&s, "no-retries", "time_to_recover") <= 5.0);
    // The retry-share alert at 10 % fires 2 s into the slowdown.
    assert_eq!(metric(&s, "no-budget", "alert_delay"), 2.0);
}

#[test]
fn layered_retries_multiply_the_load_of_an_outage_by_3_9_and_27() {
    let (_t, dir) = run_scenario("calls-layered", &[]);
    let s = summary(&dir);
    for (v, want) in [("sdk-only", 3.0), ("app-loop", 9.0), ("gateway-and-app", 27.0)] {
        let got = metric(&s, v, "incident_attempts_per_call");
        assert!((got - want).abs() < 0.1, "{v}: {got}");
    }
}

#[test]
fn permanent_errors_retried_like_transient_ones_delay_the_answer_by_minutes() {
    let (_t, dir) = run_scenario("calls-permanent-errors", &[]);
    let s = summary(&dir);
    // tenacity's default retries the 400s until stop_after_delay(120): the answer comes
    // after 2–3 minutes, with about 9 hopeless attempts per bad request.
    assert!(metric(&s, "retry-everything", "time_to_giveup") > 120.0);
    assert!(metric(&s, "retry-everything", "bad_request_retries") > 0.8);
    // Retrying only transient failures answers a bad request in one attempt and loses
    // none of the calls the 503s hit; never retrying loses those.
    assert!(close(metric(&s, "transient-only", "time_to_giveup"), 0.02));
    assert_eq!(metric(&s, "transient-only", "bad_request_retries"), 0.0);
    assert_eq!(metric(&s, "transient-only", "success_rate"), metric(&s, "retry-everything", "success_rate"));
    assert!(metric(&s, "never-retry", "success_rate") < metric(&s, "transient-only", "success_rate") - 0.04);
}

#[test]
fn a_backoff_never_reset_makes_a_5_second_failure_cost_minutes() {
    let (_t, dir) = run_scenario("calls-reset", &[]);
    let s = summary(&dir);
    assert!(metric(&s, "reset", "time_to_success_p99") < 10.0);
    assert!(metric(&s, "never-reset", "time_to_success_p99") > 120.0);
}

#[test]
fn icmp_revert_linux_retransmits_within_300ms_of_the_links_return_when_the_router_answers_and_rfc6298_does_not_care() {
    let (_t, dir) = run_scenario("tcp-icmp-revert", &[]);
    let s = summary(&dir);
    let lags = |variant: &str| [1, 2, 3].map(|k| metric(&s, variant, &format!("recovery_lag_blackout{k}")));
    // Silent outages: as tcp-blackout, the first expiry at 1.112 s into the outage (two jiffies after
    // the loss probe timer: tcp_rearm_rto and the timer wheel), then
    // doubling from 600 ms (tcp_retransmit_timer): for 10 s the expiry at 20.112 s is
    // lucky; for 30 s the next after 69.912... is 78.912 s; for 120 s, 177.312 + 76.8 =
    // 254.112 s.
    let silent = lags("linux-silent");
    for (got, want) in silent.iter().zip([0.112, 8.912, 34.112]) {
        assert!(close(*got, want), "{silent:?}");
    }
    // Answered (RFC 6069 section 4, tcp_ld_RTO_revert): each answer, 100 ms after its
    // retransmission, undoes the doubling, so expiries come every 300 ms from 1.112 s
    // into the outage; the first after the return is 0.112, 0.212 and 0.212 s late.
    let answered = lags("linux-answered");
    for (got, want) in answered.iter().zip([0.112, 0.212, 0.212]) {
        assert!(close(*got, want), "{answered:?}");
    }
    let rows = timeouts(&dir, "linux-answered");
    let third: Vec<f64> = rows.iter().map(|r| r.0).filter(|t| (100.0..=220.5).contains(t)).collect();
    assert_eq!(third.len(), 398, "101.112 to 220.212 s every 300 ms");
    assert!(third.windows(2).all(|w| close(w[1] - w[0], 0.3)), "{third:?}");
    assert!(rows.iter().all(|r| close(r.1, 0.6)), "never backed off beyond one doubling");
    // rfc6298 leaves RFC 6069 out (RFC 1122 4.2.3.9: a soft error): the answers change
    // nothing, RTO doubling from 1 s.
    let rfc = lags("rfc6298-silent");
    assert_eq!(rfc, lags("rfc6298-answered"));
    for (got, want) in rfc.iter().zip([5.0, 1.0, 3.0]) {
        assert!(close(*got, want), "{rfc:?}");
    }
}

#[test]
fn lossy_linux_rarely_times_out_where_rfc6298_newreno_does_and_the_tail_shows_it_most() {
    let (_t, dir) = run_scenario("tcp-lossy-linux", &[]);
    let s = summary(&dir);
    let rto = |v| metric(&s, v, "timeouts");
    // Bulk: RACK finds lost retransmissions and SACK spares needless ones, so Linux's
    // timer almost never fires; RFC 6675 (SACK) halves NewReno's timeouts.
    assert!(rto("bulk-linux") < 0.1, "{}", rto("bulk-linux"));
    assert!(rto("bulk-rfc6298-sack") < 0.6 * rto("bulk-rfc6298-newreno"));
    assert!(
        metric(&s, "bulk-rfc6298-newreno", "spurious_retransmissions")
            > 20.0 * metric(&s, "bulk-linux", "spurious_retransmissions")
    );
    let time = |v| metric(&s, v, "transfer_time");
    assert!(time("bulk-linux") < time("bulk-rfc6298-newreno") && time("bulk-linux") < time("bulk-rfc6298-sack"));
    // Request/response: every response is a tail; the loss probe (RFC 8985 7) repairs
    // what the RFC senders wait a timeout for.
    assert!(metric(&s, "rr-linux", "tail_loss_probes") > 10.0);
    assert!(rto("rr-linux") < 0.1 * rto("rr-rfc6298-newreno"), "{} vs {}", rto("rr-linux"), rto("rr-rfc6298-newreno"));
    assert!(rto("rr-rfc6298-sack") > 5.0 && rto("rr-rfc6298-newreno") > 5.0);
}
