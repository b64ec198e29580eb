//! The sender's tail loss probes, F-RTO and give-up budgets, driven by hand-made ACK
//! sequences so that every time can be checked on paper.

use super::drive::{ack, dur_ms, fire, kinds, ms, new_sender, sender, sent as data, write};
use super::sender::{ObservationKind, SenderOptions, Supply, TcpSender};
use crate::engine::time::{SimDuration, SimTime};
use crate::model::rto::{RtoConfig, RtoProfile};

// ---- Tail loss probes -----------------------------------------------------------------

#[test]
fn rfc8985_7_2_pto_is_2_srtt_at_rtt_100ms_with_a_full_window() {
    // RFC 6298 timer with TLP (which needs SACK, RFC 8985 section 7): ten segments out,
    // the first ACK at 100 ms (timestamps give a 100 ms sample): SRTT 100 ms, RTO 1 s;
    // PTO = 2·SRTT = 200 ms < RTO, from the ACK.
    let opts = SenderOptions { sack: true, ..SenderOptions::for_profile(RtoProfile::Rfc6298, false, 10, 1000) };
    let params =
        RtoConfig::with_pairs(RtoProfile::Rfc6298, &[("tlp", "true"), ("timestamps", "true")]).resolve().unwrap();
    let mut s = TcpSender::new(opts, &params, Supply::Transfer { segments: 10 });
    s.start(ms(0), &mut Vec::new());
    ack(&mut s, ms(100), 1, ms(0));
    assert_eq!(s.snapshot().srtt, Some(dur_ms(100)));
    assert_eq!(s.timer(), Some(ms(300)));
    // Linux: srtt_us >> 2 + TCP_TIMEOUT_MIN_US = 202 ms, 50.5 jiffies rounded up to 51:
    // 204 ms, under the 300 ms RTO (tcp_schedule_loss_probe).
    let mut s = sender(RtoProfile::Linux, &[], 10, Supply::Transfer { segments: 10 });
    s.start(ms(0), &mut Vec::new());
    ack(&mut s, ms(100), 1, ms(0));
    assert_eq!(s.snapshot().rto, dur_ms(300));
    assert_eq!(s.timer(), Some(ms(304)));
}

#[test]
fn rfc8985_7_3_the_probe_resends_the_last_segment_and_the_rto_is_rearmed_in_full() {
    let mut s = sender(RtoProfile::Linux, &[], 10, Supply::Transfer { segments: 10 });
    s.start(ms(0), &mut Vec::new());
    ack(&mut s, ms(100), 1, ms(0));
    // The tail (segments 1..9) is lost. At 304 ms the probe fires: no new data to send,
    // so the highest segment goes again (tcp_send_loss_probe), and the RTO restarts from
    // now with its full 300 ms (icsk_pending = 0; tcp_rearm_rto).
    let (at, out) = fire(&mut s);
    assert_eq!(at, ms(304));
    assert_eq!(data(&out), [(9, true)]);
    assert_eq!(kinds(&out), [ObservationKind::Probe { seq: 9, retransmit: true }]);
    assert_eq!(s.snapshot().backoffs, 0);
    assert_eq!(s.timer(), Some(ms(604)));
    // The first RTO after the stall fires at 604 ms, not at the bare RTO's 400 ms.
    let (at, out) = fire(&mut s);
    assert_eq!(at, ms(604));
    assert_eq!(kinds(&out)[0], ObservationKind::Timeout);
    assert_eq!(data(&out), [(1, true)]);
    assert_eq!(s.snapshot().rto, dur_ms(600));
}

#[test]
fn without_tlp_the_rto_fires_at_the_bare_rto() {
    let mut s = sender(RtoProfile::Linux, &[("tlp", "false")], 10, Supply::Transfer { segments: 10 });
    s.start(ms(0), &mut Vec::new());
    ack(&mut s, ms(100), 1, ms(0));
    let (at, out) = fire(&mut s);
    assert_eq!((at, kinds(&out)[0]), (ms(400), ObservationKind::Timeout));
}

#[test]
fn rfc8985_at_most_one_probe_per_tail_and_none_during_loss_recovery() {
    let mut s = sender(RtoProfile::Linux, &[], 10, Supply::Transfer { segments: 10 });
    s.start(ms(0), &mut Vec::new());
    ack(&mut s, ms(100), 1, ms(0));
    fire(&mut s); // the probe at 304 ms
    fire(&mut s); // the RTO at 604 ms: loss recovery, everything outstanding lost
    // The retransmission's ACK: in TCP_CA_Loss no probe is scheduled, the RTO runs.
    ack(&mut s, ms(704), 2, ms(604));
    let (_, out) = fire(&mut s);
    assert!(!kinds(&out).iter().any(|k| matches!(k, ObservationKind::Probe { .. })), "{out:?}");
}

#[test]
fn an_ack_of_new_data_rearms_the_probe_from_the_ack() {
    let mut s = sender(RtoProfile::Linux, &[], 10, Supply::Transfer { segments: 10 });
    s.start(ms(0), &mut Vec::new());
    ack(&mut s, ms(100), 1, ms(0));
    ack(&mut s, ms(150), 2, ms(50));
    // Segment 1 left at 0: tcp_ack_update_rtt takes its 150 ms send-time sample over the
    // echo. srtt_us = 800000 + 150000 − 100000 = 850000; PTO = 850000 >> 2 + 2000 µs =
    // 214500 µs, 53.6 jiffies rounded up to 54 = 216 ms, from the ACK at 150 ms.
    assert_eq!(s.snapshot().srtt, Some(SimDuration::from_micros(106_250)));
    assert_eq!(s.timer(), Some(ms(366)));
}

// ---- F-RTO ------------------------------------------------------------------------------

/// A linux sender without timestamps (so only Karn-clean ACKs give samples) and without
/// TLP, whose timeout at 500 ms is spurious: segment 1's ACK was only delayed.
fn spurious_timeout(frto: bool) -> TcpSender {
    let frto = if frto { "true" } else { "false" };
    let mut s =
        sender(RtoProfile::Linux, &[("timestamps", "false"), ("tlp", "false"), ("frto", frto)], 10, Supply::Steady);
    s.start(ms(0), &mut Vec::new());
    write(&mut s, ms(0));
    ack(&mut s, ms(100), 1, ms(0)); // sample 100 ms: SRTT 100, RTO 300 ms
    assert_eq!(s.snapshot().rto, dur_ms(300));
    write(&mut s, ms(200)); // segment 1, timer at 500 ms
    write(&mut s, ms(420)); // segment 2
    let (at, out) = fire(&mut s);
    assert_eq!((at, data(&out)), (ms(500), vec![(1, true)]));
    assert_eq!(s.snapshot().rto, dur_ms(600));
    write(&mut s, ms(505)); // segment 3 waits: the window is one segment after a timeout
    s
}

#[test]
fn rfc5682_an_frto_undo_after_a_spurious_timeout_restores_the_previous_rto() {
    let mut s = spurious_timeout(true);
    // 510 ms: segment 1's delayed ACK. It was retransmitted, so Karn allows no sample and
    // the backoff stays; F-RTO step 2b sends new data (segment 3) instead of segment 2.
    let out = ack(&mut s, ms(510), 2, ms(0));
    assert_eq!(data(&out), [(3, false)]);
    assert_eq!(s.snapshot().rto, dur_ms(600));
    // 520 ms: ACK of segment 2, never retransmitted: the timeout was spurious (step 3b).
    // Its clean 100 ms sample ends the backoff (tcp_ack_update_rtt): RTO 300 ms again.
    let out = ack(&mut s, ms(520), 3, ms(0));
    assert!(kinds(&out).contains(&ObservationKind::SpuriousTimeout), "{out:?}");
    assert!(kinds(&out).contains(&ObservationKind::Sample { rtt: dur_ms(100) }));
    assert_eq!((s.snapshot().rto, s.snapshot().backoffs), (dur_ms(300), 0));
    // Nothing was retransmitted besides the timeout's own segment.
    assert!(data(&out).iter().all(|(_, r)| !r), "{out:?}");
}

#[test]
fn without_frto_the_timeout_leaves_a_segment_sent_within_rack_rtt_unmarked() {
    // tcp_timeout_mark_lost: "Don't mark recently sent ones lost yet": segment 2 left at
    // 420 ms, 80 ms before the timeout, under RACK.rtt (100 ms, segment 0's round trip),
    // so only the head is lost. Segment 1's delayed ACK at 510 ms lets new data out
    // (segment 3) and nothing is resent needlessly.
    let mut s = spurious_timeout(false);
    let out = ack(&mut s, ms(510), 2, ms(0));
    assert_eq!(data(&out), [(3, false)]);
    assert!(!kinds(&out).iter().any(|k| matches!(k, ObservationKind::Sample { .. })));
    assert_eq!((s.snapshot().rto, s.snapshot().backoffs), (dur_ms(600), 1));
    // Segment 2, never retransmitted, gives a clean sample that ends the backoff
    // (tcp_ack_update_rtt zeroes icsk_backoff); without F-RTO nothing calls the timeout
    // spurious.
    let out = ack(&mut s, ms(520), 3, ms(0));
    assert!(!kinds(&out).contains(&ObservationKind::SpuriousTimeout));
    assert!(kinds(&out).contains(&ObservationKind::Sample { rtt: dur_ms(100) }));
    assert_eq!(s.snapshot().backoffs, 0);
}

#[test]
fn rfc5682_step_3a_a_duplicate_ack_after_the_new_data_keeps_the_recovery() {
    let mut s = spurious_timeout(true);
    ack(&mut s, ms(510), 2, ms(0)); // step 2b: segment 3 sent
    // Segment 2 really was lost: segment 3 arrives above the hole, a duplicate ACK.
    let out = ack(&mut s, ms(520), 2, ms(0));
    assert!(!kinds(&out).contains(&ObservationKind::SpuriousTimeout));
    // F-RTO is over; the timer (600 ms from 510 ms) fires and resends segment 2.
    let (_, out) = fire(&mut s);
    assert_eq!(data(&out), [(2, true)]);
}

// ---- Giving up ----------------------------------------------------------------------------

/// A linux connection whose RTO is exactly TCP_RTO_MIN (a 0 s sample: srtt 0, rttvar
/// 200 ms), then one segment at 1 s that is never acknowledged. Returns the abort time,
/// how long it waited and how many retransmissions it made.
fn abort_with(retries2: &str) -> (SimTime, SimDuration, u32) {
    let sets = [("tlp", "false"), ("retries2", retries2)];
    let mut s = sender(RtoProfile::Linux, &sets, 10, Supply::Steady);
    s.start(ms(0), &mut Vec::new());
    write(&mut s, ms(0));
    ack(&mut s, ms(0), 1, ms(0));
    assert_eq!(s.snapshot().rto, dur_ms(200));
    write(&mut s, ms(1000));
    let mut retransmissions = 0;
    loop {
        let (at, out) = fire(&mut s);
        retransmissions += data(&out).len() as u32;
        if let Some(ObservationKind::Aborted { waited }) = kinds(&out).last() {
            assert!(s.is_aborted() && s.timer().is_none());
            return (at, *waited, retransmissions);
        }
    }
}

/// The first expiry at which `retransmits_timed_out` holds: the time since the first
/// retransmission (retrans_stamp) reaches `tcp_model_timeout(sk, retries2, TCP_RTO_MIN)`,
/// for an RTO of 200 ms doubling to the 120 s `tcp_rto_max`.
fn kernel_abort(retries2: u32) -> (f64, u32) {
    let model = if retries2 <= 9 {
        f64::from((2u32 << retries2) - 1) * 0.2
    } else {
        1023.0 * 0.2 + f64::from(retries2 - 9) * 120.0
    };
    let (mut t, mut rto, mut sent) = (0.2, 0.2_f64, 0);
    let stamp = t;
    loop {
        if sent > 0 && t - stamp >= model - 1e-9 {
            return (t, sent);
        }
        sent += 1;
        rto = (rto * 2.0).min(120.0);
        t += rto;
    }
}

#[test]
fn linux_retries2_aborts_at_the_first_expiry_past_tcp_model_timeout() {
    // retries2 = 3: tcp_model_timeout = (2^4 − 1)·200 ms = 3 s. Expiries 0.2, 0.6, 1.4,
    // 3.0 s after the send (2.8 s after the first retransmission: not yet), 6.2 s: abort.
    let (at, waited, n) = abort_with("3");
    assert_eq!((at, waited, n), (ms(7200), dur_ms(6200), 4));
    assert_eq!(kernel_abort(3), (6.2, 4));
    // retries2 = 15: 924.6 s; the expiry at 924.6 s is 924.4 s after the first
    // retransmission, so the connection retransmits once more and dies at 1044.6 s.
    let (at, waited, n) = abort_with("15");
    let (t, sent) = kernel_abort(15);
    assert_eq!((waited, n), (dur_ms(1_044_600), sent));
    assert!((t - 1044.6).abs() < 1e-6 && at == ms(1_045_600));
}

#[test]
fn linux_syn_gives_up_at_131_seconds_with_the_defaults() {
    // ip-sysctl.rst tcp_syn_retries: "the final timeout for an active TCP connection
    // attempt will happen after 131seconds" (6 retries + 4 linear timeouts).
    let mut s = new_sender(true, RtoProfile::Linux, &[], 10, Supply::Steady);
    s.start(ms(0), &mut Vec::new());
    let mut syns = 1;
    loop {
        let (at, out) = fire(&mut s);
        if let Some(ObservationKind::Aborted { waited }) = kinds(&out).last() {
            assert_eq!((at, *waited, syns), (ms(131_000), dur_ms(131_000), 11));
            return;
        }
        syns += 1;
    }
}

/// A linux SYN-SENT connection that never hears back: when each SYN left and when it
/// aborted.
fn syn_blackhole(sets: &[(&str, &str)]) -> (Vec<f64>, SimTime) {
    let mut s = new_sender(true, RtoProfile::Linux, sets, 10, Supply::Steady);
    s.start(ms(0), &mut Vec::new());
    let mut syns = vec![0.0];
    loop {
        let (at, out) = fire(&mut s);
        if matches!(kinds(&out).last(), Some(ObservationKind::Aborted { .. })) {
            return (syns, at);
        }
        syns.push(at.as_secs_f64());
    }
}

#[test]
fn linux_tcp_write_timeout_syn_sent_aborts_on_the_count_or_the_time_budget() {
    // tcp_write_timeout in SYN-SENT: icsk_retransmits >= syn_retries + syn_linear_timeouts,
    // else retransmits_timed_out(sk, syn_retries, 0) with
    // tcp_model_timeout(syn_retries, TCP_TIMEOUT_INIT) = 3, 7 and 127 s for 1, 2 and 6.
    let cases: [(&str, &str, &[f64], u64); 8] = [
        // 1 linear SYN RTO of 1 s, 1 s: the 3 s budget ends it before the count of 5.
        ("1", "4", &[0.0, 1.0, 2.0], 3000),
        ("1", "0", &[0.0, 1.0], 3000),
        // The case: count 6 would abort at 11 s; the 7 s budget aborts at 7 s.
        ("2", "4", &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0], 7000),
        ("2", "0", &[0.0, 1.0, 3.0], 7000),
        // From 3 on the count and the budget (15 s, 63 s) end it at the same expiry.
        ("3", "4", &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 7.0, 11.0], 19_000),
        ("5", "4", &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 7.0, 11.0, 19.0, 35.0], 67_000),
        // Defaults: the count (10) ends it at 131 s, ip-sysctl.rst's figure; 127 s without.
        ("6", "4", &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 7.0, 11.0, 19.0, 35.0, 67.0], 131_000),
        ("6", "0", &[0.0, 1.0, 3.0, 7.0, 15.0, 31.0, 63.0], 127_000),
    ];
    for (syn_retries, linear, syns, abort) in cases {
        let got = syn_blackhole(&[("syn_retries", syn_retries), ("syn_linear_timeouts", linear)]);
        assert_eq!(got, (syns.to_vec(), ms(abort)), "syn_retries {syn_retries}, linear {linear}");
    }
}

#[test]
fn linux_user_timeout_in_syn_sent_as_the_packetdrill_script_of_a41e8a88b06e() {
    // Commit a41e8a88b06e ("tcp: better handle TCP_USER_TIMEOUT in SYN_SENT state"),
    // its packetdrill script (before linear SYN timeouts): TCP_USER_TIMEOUT 8000, SYNs at
    // 0, +1, +2, +4 and the connection dead (ETIMEDOUT) by the next write. The 7 s SYN's
    // 8 s RTO is clamped by tcp_clamp_rto_to_user_timeout to the 1 s left: abort at 8 s.
    let got = syn_blackhole(&[("user_timeout", "8s"), ("syn_linear_timeouts", "0")]);
    assert_eq!(got, (vec![0.0, 1.0, 3.0, 7.0], ms(8000)));
    // With the linear timeouts the 5 s SYN's 2 s RTO fits (7 s < 8 s); the 7 s one's 4 s
    // is clamped to 1 s.
    let got = syn_blackhole(&[("user_timeout", "8s")]);
    assert_eq!(got, (vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 7.0], ms(8000)));
    // The selftest posted with it (tcp_user_timeout_syn_sent.c): user timeouts of 200,
    // 1500 and 3500 ms let 2, 2 and 3 SYNs out. At 200 ms the first expiry (1 s) cannot
    // abort (no retransmission yet), so the timer after it is clamped to one jiffy.
    for (timeout, syns, abort) in [("200ms", 2, 1004), ("1500ms", 2, 1500), ("3500ms", 3, 3500)] {
        let (got, at) = syn_blackhole(&[("user_timeout", timeout), ("syn_linear_timeouts", "0")]);
        assert_eq!((got.len(), at), (syns, ms(abort)), "user_timeout {timeout}");
    }
}

/// Like `abort_with`, with extra keys: the expiry times, then the abort and its wait.
fn blackhole_expiries(sets: &[(&str, &str)]) -> (Vec<SimTime>, SimTime, SimDuration) {
    let mut all = vec![("tlp", "false")];
    all.extend_from_slice(sets);
    let mut s = sender(RtoProfile::Linux, &all, 10, Supply::Steady);
    s.start(ms(0), &mut Vec::new());
    write(&mut s, ms(0));
    ack(&mut s, ms(0), 1, ms(0));
    assert_eq!(s.snapshot().rto, dur_ms(200));
    write(&mut s, ms(1000));
    let mut expiries = vec![];
    loop {
        let (at, out) = fire(&mut s);
        if let Some(ObservationKind::Aborted { waited }) = kinds(&out).last() {
            return (expiries, at, *waited);
        }
        expiries.push(at);
    }
}

#[test]
fn linux_user_timeout_30s_aborts_an_established_connection_with_the_last_rto_clamped() {
    // RTO 200 ms, a segment at 1 s into a blackhole. Expiries (retransmissions) at 1.2 s
    // (retrans_stamp), 1.6, 2.4, 4.0, 7.2, 13.6, 26.4 s. The RTO after 26.4 s would be
    // 25.6 s; tcp_clamp_rto_to_user_timeout makes it min(25.6, 30 − 25.2) = 4.8 s, and at
    // 31.2 s retransmits_timed_out(.., icsk_user_timeout) sees 30 s ≥ 30 s: ETIMEDOUT.
    let (expiries, at, waited) = blackhole_expiries(&[("user_timeout", "30s")]);
    assert_eq!(expiries, [1200, 1600, 2400, 4000, 7200, 13_600, 26_400].map(ms));
    assert_eq!((at, waited), (ms(31_200), dur_ms(30_200)));
}

#[test]
fn linux_user_timeout_longer_than_the_retries2_budget_keeps_the_connection_longer() {
    // retries2 = 3 alone aborts at 7.2 s (tcp_model_timeout 3 s); a user timeout replaces
    // it: 10 s from the 1.2 s stamp. After the 7.2 s expiry the 6.4 s RTO is clamped to
    // the 4 s left, so the abort is at 11.2 s.
    let (expiries, at, _) = blackhole_expiries(&[("retries2", "3")]);
    assert_eq!((expiries.len(), at), (4, ms(7200)));
    let (expiries, at, waited) = blackhole_expiries(&[("retries2", "3"), ("user_timeout", "10s")]);
    assert_eq!(expiries, [1200, 1600, 2400, 4000, 7200].map(ms));
    assert_eq!((at, waited), (ms(11_200), dur_ms(10_200)));
}

#[test]
fn rfc6298_profile_counts_retries2_retransmissions() {
    let mut s = sender(RtoProfile::Rfc6298, &[("retries2", "2")], 10, Supply::Transfer { segments: 1 });
    s.start(ms(0), &mut Vec::new());
    // Expiries at 1, 3 (retransmissions 1 and 2), then 7 s: the budget is spent.
    let times: Vec<SimTime> = (0..3).map(|_| fire(&mut s).0).collect();
    assert_eq!(times, [ms(1000), ms(3000), ms(7000)]);
    assert!(s.is_aborted());
}

#[test]
fn forward_progress_resets_the_give_up_count() {
    let mut s = sender(RtoProfile::Rfc6298, &[("retries2", "1")], 10, Supply::Transfer { segments: 2 });
    s.start(ms(0), &mut Vec::new());
    fire(&mut s); // 1 s: retransmission 1 of segment 0
    ack(&mut s, ms(1100), 1, ms(0)); // segment 0 arrives: icsk_retransmits = 0
    fire(&mut s); // segment 1's timer: a first retransmission again, not an abort
    assert!(!s.is_aborted());
    fire(&mut s);
    assert!(s.is_aborted());
}

// ---- Invariants under any ACK pattern ----------------------------------------------------

mod invariants {
    use super::*;
    use proptest::prelude::*;

    #[derive(Clone, Debug)]
    enum Op {
        Write,
        /// Acknowledge up to `k` more segments (0: a duplicate ACK), echoing `echo` ms ago.
        Ack {
            k: u64,
            echo: u64,
        },
        Fire,
        Wait(u64),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            Just(Op::Write),
            (0..4u64, 0..400u64).prop_map(|(k, echo)| Op::Ack { k, echo }),
            Just(Op::Fire),
            (1..500u64).prop_map(Op::Wait),
        ]
    }

    fn profile() -> impl Strategy<Value = (RtoProfile, bool, bool, bool)> {
        (prop_oneof![Just(RtoProfile::Linux), Just(RtoProfile::Rfc6298)], any::<bool>(), any::<bool>(), any::<bool>())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// With probes, F-RTO and a small give-up budget: the timer is always in the
        /// future, the backoff shrinks only on a valid sample, nothing is sent beyond the
        /// window, and an aborted connection stays silent.
        #[test]
        fn the_sender_keeps_its_timer_rules_under_any_ack_pattern(
            (profile, tlp, frto, ts) in profile(),
            ops in proptest::collection::vec(op(), 1..200),
        ) {
            let b = |x: bool| if x { "true" } else { "false" };
            let sets = [("tlp", b(tlp)), ("frto", b(frto)), ("timestamps", b(ts)), ("retries2", "3")];
            let window = 4;
            let mut s = sender(profile, &sets, window, Supply::Steady);
            let mut now = ms(0);
            let mut sent_max = 0u64;
            s.start(now, &mut Vec::new());
            for op in ops {
                let before = s.snapshot().backoffs;
                let was_aborted = s.is_aborted();
                let out = match op {
                    Op::Write => write(&mut s, now),
                    Op::Ack { k, echo } => {
                        let a = (s.acked() + k).min(sent_max);
                        let tsecr = SimTime(now.0.saturating_sub(echo * 1_000_000));
                        ack(&mut s, now, a, tsecr)
                    }
                    Op::Fire => match s.timer() {
                        Some(at) => {
                            now = at;
                            let mut out = Vec::new();
                            s.on_timer(at, &mut out);
                            out
                        }
                        None => Vec::new(),
                    },
                    Op::Wait(d) => {
                        // Never jump past a pending timer: fire it on the way.
                        let target = now + dur_ms(d);
                        match s.timer() {
                            Some(at) if at <= target => {
                                now = at;
                                let mut out = Vec::new();
                                s.on_timer(at, &mut out);
                                out
                            }
                            _ => {
                                now = target;
                                Vec::new()
                            }
                        }
                    }
                };
                if was_aborted {
                    prop_assert!(out.is_empty(), "{out:?}");
                }
                if let Some(at) = s.timer() {
                    prop_assert!(at > now, "timer {at:?} not after {now:?}");
                }
                let sampled = kinds(&out).iter().any(|k| matches!(k, ObservationKind::Sample { .. }));
                prop_assert!(s.snapshot().backoffs >= before || sampled, "{out:?}");
                for (seq, _) in data(&out) {
                    prop_assert!(seq < s.acked().max(1) + u64::from(window) + 1, "seq {seq}");
                    sent_max = sent_max.max(seq + 1);
                }
            }
        }
    }
}
