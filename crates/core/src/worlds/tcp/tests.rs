use super::world::*;
use crate::engine::time::SimTime;

/// The blackout a segment's recovery counts for, by the definition: the one it is
/// sent after the end of and before the next begins, looked at one by one.
fn by_scan(blackouts: &[(SimTime, SimTime)], sent: SimTime) -> Option<usize> {
    (0..blackouts.len()).find(|&k| {
        let next_start = blackouts.get(k + 1).map_or(SimTime::MAX, |b| b.0);
        sent >= blackouts[k].1 && sent < next_start
    })
}

#[test]
fn the_recovering_blackout_found_by_search_is_the_one_a_scan_finds() {
    let t = |ms: u64| SimTime(ms * 1_000_000);
    // Apart, back to back, empty, and empty at the start of the next.
    let blackouts = [(t(10), t(20)), (t(20), t(30)), (t(40), t(40)), (t(40), t(45)), (t(50), t(60))];
    for ms in 0..70 {
        for sent in [t(ms), SimTime(t(ms).0 + 1)] {
            assert_eq!(recovering(&blackouts, sent), by_scan(&blackouts, sent), "sent at {sent:?}");
        }
    }
    assert_eq!(recovering(&blackouts, t(25)), None, "inside the second blackout");
    assert_eq!(recovering(&blackouts, t(47)), Some(3));
    assert_eq!(recovering(&[], t(5)), None);
}

mod keepalive {
    use crate::metrics::ReplicationResult;
    use crate::metrics::trace::TraceEvent;
    use crate::worlds::tcp::run_text::{ms, run_text, times, value};

    /// Replication 0 of a `[tcp]` scenario of `horizon` whose tables are `body`, over a
    /// constant 100 ms path.
    fn run_for(horizon: &str, body: &str) -> ReplicationResult {
        run_text(&format!("name = \"t\"\nhorizon = \"{horizon}\"\n[path]\nbase_rtt = \"100ms\"\n{body}"))
    }

    /// One segment after a handshake over 100 ms: established at 0.1 s (SYN-ACK), the ACK
    /// of the data, the last packet heard, at 0.2 s.
    const ONE_SEGMENT: &str = "[tcp]\nworkload = { kind = \"transfer\", segments = 1 }\n";

    #[test]
    fn a_dead_peer_is_reset_one_interval_after_the_last_of_its_probes() {
        // tcp_keepalive_timer with time 60, intvl 10, probes 3: the timer armed at
        // establishment (tcp_finish_connect, 0.1 + 60 s) finds 59.9 s idle and sleeps to
        // rcv_tstamp + 60 = 60.2 s; the peer went dark at 30 s, so probes at 60.2, 70.2,
        // 80.2 s go unanswered and the run at 90.2 s resets (probes_out >= 3).
        let body = format!(
            "{ONE_SEGMENT}[tcp.keepalive]\ntime = \"60s\"\ninterval = \"10s\"\nprobes = 3\n\
             [[path.blackout]]\nat = \"30s\"\nduration = \"1h\"\n"
        );
        let r = run_for("10min", &body);
        assert_eq!(times(&r, TraceEvent::Keepalive), vec![ms(60_200), ms(70_200), ms(80_200)]);
        assert_eq!(times(&r, TraceEvent::Aborted), vec![ms(90_200)]);
        assert_eq!(value(&r, "keepalive_probes"), Some(3.0));
        assert_eq!(value(&r, "keepalive_resets"), Some(1.0));
        assert_eq!(value(&r, "keepalive_lag_blackout1"), Some(60.2));
        // Keepalive's reset is not the retransmission timer giving up.
        assert_eq!(value(&r, "aborted"), Some(0.0));
    }

    #[test]
    fn a_user_timeout_resets_a_dead_peer_on_its_silence_rather_than_the_probe_count() {
        // tcp_keepalive_timer with icsk_user_timeout = 75 s: as above the peer was last
        // heard at 0.2 s and probes go out at 60.2 and 70.2 s; the run at 80.2 s finds 80 s
        // of silence >= 75 s with probes out and resets, one probe before the count would.
        let body = format!(
            "{ONE_SEGMENT}[tcp.rto]\nprofile = \"linux\"\nuser_timeout = \"75s\"\n\
             [tcp.keepalive]\ntime = \"60s\"\ninterval = \"10s\"\nprobes = 3\n\
             [[path.blackout]]\nat = \"30s\"\nduration = \"1h\"\n"
        );
        let r = run_for("10min", &body);
        assert_eq!(times(&r, TraceEvent::Keepalive), vec![ms(60_200), ms(70_200)]);
        assert_eq!(times(&r, TraceEvent::Aborted), vec![ms(80_200)]);
        assert_eq!(value(&r, "keepalive_resets"), Some(1.0));
    }

    #[test]
    fn with_linux_defaults_a_dead_peer_is_reset_7875_s_after_it_was_last_heard() {
        // tcp(7) defaults: 7200 s idle, 9 probes 75 s apart: 0.2 + 7200 + 9 · 75 s.
        let body = format!("{ONE_SEGMENT}[tcp.keepalive]\n[[path.blackout]]\nat = \"10min\"\nduration = \"10h\"\n");
        let r = run_for("3h", &body);
        let probes = times(&r, TraceEvent::Keepalive);
        assert_eq!(probes.len(), 9);
        assert_eq!((probes[0], probes[8]), (ms(7_200_200), ms(7_800_200)));
        assert_eq!(times(&r, TraceEvent::Aborted), vec![ms(7_875_200)]);
        assert_eq!(value(&r, "keepalive_lag_blackout1"), Some(7_275.2));
    }

    #[test]
    fn an_answered_probe_restarts_the_idle_time_from_its_answer() {
        // tcp_ack on the probe's answer (a duplicate ACK, 100 ms later): probes_out = 0 and
        // rcv_tstamp = now; the run an interval after the probe sleeps to rcv_tstamp + time.
        let body = format!("{ONE_SEGMENT}[tcp.keepalive]\ntime = \"60s\"\ninterval = \"10s\"\nprobes = 3\n");
        let r = run_for("200s", &body);
        assert_eq!(times(&r, TraceEvent::Keepalive), vec![ms(60_200), ms(120_300), ms(180_400)]);
        assert!(times(&r, TraceEvent::Aborted).is_empty());
        assert_eq!(value(&r, "keepalive_resets"), Some(0.0));
    }

    #[test]
    fn no_probe_goes_out_while_data_is_unacknowledged() {
        // tcp_keepalive_timer: `if (tp->packets_out || ...) goto resched` for a whole
        // keepalive_time. No handshake: established and sending at 0, dark until 100 s.
        // RFC 6298 timeouts at 1, 3, 7, 15, 31, 63 s, then 60 s (the cap) later, 123 s:
        // that copy is ACKed at 123.1 s. The runs at 60 and 120 s find data in flight
        // (next run 180 s), the one at 180 s finds 56.9 s idle and sleeps to 183.1 s.
        let body = "[tcp]\nhandshake = false\nworkload = { kind = \"transfer\", segments = 1 }\n\
                    [tcp.keepalive]\ntime = \"60s\"\ninterval = \"10s\"\nprobes = 3\n\
                    [[path.blackout]]\nat = \"0s\"\nduration = \"100s\"\n";
        let r = run_for("190s", body);
        assert_eq!(times(&r, TraceEvent::Timeout).last(), Some(&ms(123_000)));
        assert_eq!(times(&r, TraceEvent::Keepalive), vec![ms(183_100)]);
    }

    #[test]
    fn without_the_table_keepalive_is_off_and_writes_no_metric() {
        let r = run_for("3h", ONE_SEGMENT);
        assert!(times(&r, TraceEvent::Keepalive).is_empty());
        assert!(r.metrics.iter().all(|m| !m.name.starts_with("keepalive")));
    }
}

#[test]
fn keepalive_values_the_socket_options_refuse_are_refused_with_their_keys() {
    // do_tcp_setsockopt: TCP_KEEPIDLE and TCP_KEEPINTVL take whole seconds in
    // 1..=MAX_TCP_KEEPIDLE/MAX_TCP_KEEPINTVL (32767), TCP_KEEPCNT 1..=MAX_TCP_KEEPCNT (127).
    let text = "name = \"t\"\nhorizon = \"1s\"\n[path]\nbase_rtt = \"100ms\"\n\
                [tcp]\nworkload = { kind = \"transfer\", segments = 1 }\n\
                [tcp.keepalive]\ntime = \"1500ms\"\ninterval = \"32768s\"\nprobes = 0\n";
    let Err(err) = crate::scenario::load_str("t.toml", text) else { panic!("accepted") };
    let err = err.to_string();
    for want in ["tcp.keepalive.time", "tcp.keepalive.interval", "tcp.keepalive.probes", "TCP_KEEPCNT"] {
        assert!(err.contains(want), "{want} missing from: {err}");
    }
    let fine = text.replace("1500ms", "1s").replace("32768s", "32767s").replace("probes = 0", "probes = 127");
    assert!(crate::scenario::load_str("t.toml", &fine).is_ok());
}

mod delayed_ack {
    use crate::engine::time::SimDuration;
    use crate::metrics::ReplicationResult;
    use crate::metrics::trace::TraceEvent;
    use crate::worlds::tcp::run_text::{ms, run_text, times, value};

    /// One segment at a time (window 1) over a constant 100 ms path, `segments` of them.
    fn one_per_rtt(segments: u64, tables: &str) -> ReplicationResult {
        run_text(&format!(
            "name = \"t\"\nhorizon = \"60s\"\n[path]\nbase_rtt = \"100ms\"\n\
             [tcp]\nwindow = 1\nworkload = {{ kind = \"transfer\", segments = {segments} }}\n{tables}"
        ))
    }

    fn samples(r: &ReplicationResult) -> Vec<SimDuration> {
        r.trace.iter().filter_map(|row| row.sample).collect()
    }

    #[test]
    fn acks_wait_for_the_timer_once_quick_ack_mode_is_spent_and_ato_doubles_each_time() {
        // No handshake: the peer has no SRTT and icsk_rto = TCP_TIMEOUT_INIT (1 s). A
        // 4-segment buffer gives tcp_incr_quickack 4 / 2 = 2 quick ACKs. Arrivals 50 ms
        // after each send, ACKs 50 ms after they leave:
        //   seg 0 at 50: quick ACK, at the sender at 100.   seg 1 at 150: quick, 200.
        //   seg 2 at 250: ato 40 (TCP_ATO_MIN) -> timer 290, ACK 340; timer doubles ato to 80.
        //   seg 3 at 390: gap 140 >= ato, delay 80 -> 470, ACK 520; ato 160.
        //   seg 4 at 570: gap 180 >= ato, delay 160 -> 730, ACK 780; ato 320.
        //   seg 5 at 830: gap 260 < 320: ato = 160 + 260 = 420, delay min(420, HZ/2,
        //   TCP_DELACK_MAX 200) = 200 -> 1030, ACK 1080.
        let r = one_per_rtt(6, "handshake = false\ndelayed_ack = true\n[tcp.receiver]\nbuffer = 4\n");
        let acks = times(&r, TraceEvent::Ack);
        assert_eq!(acks, vec![ms(100), ms(200), ms(340), ms(520), ms(780), ms(1080)]);
        assert_eq!(times(&r, TraceEvent::Finished), vec![ms(1080)]);
        let ms_ = SimDuration::from_millis;
        assert_eq!(samples(&r), vec![ms_(100), ms_(100), ms_(140), ms_(180), ms_(260), ms_(300)]);
        // Off, the same transfer is ACKed one RTT after each send.
        let r = one_per_rtt(6, "handshake = false\n[tcp.receiver]\nbuffer = 4\n");
        assert_eq!(times(&r, TraceEvent::Ack), (1..=6).map(|k| ms(100 * k)).collect::<Vec<_>>());
    }

    #[test]
    fn srtt_grows_by_the_delay_when_one_segment_is_sent_per_rtt() {
        // With the handshake the peer's SRTT is the SYN-ACK's 100 ms, icsk_rto 100 +
        // max(200, 200) = 300 ms. After 16 quick ACKs the delays run 40, 80 (ato doubled),
        // then min(ato, SRTT) = 100 ms from then on (tcp_send_delayed_ack bounds ato by the
        // measured RTT): the sender's samples settle at 100 + 100 = 200 ms.
        let on = one_per_rtt(40, "delayed_ack = true\n");
        let s = samples(&on);
        let ms_ = SimDuration::from_millis;
        // The handshake's sample, then 16 quick-ACKed segments at 100 ms.
        assert!(s[..17].iter().all(|&x| x == ms_(100)), "{s:?}");
        assert_eq!(s[17..20], [ms_(140), ms_(180), ms_(200)]);
        assert!(s[20..].iter().all(|&x| x == ms_(200)), "{s:?}");
        let off = one_per_rtt(40, "");
        assert_eq!(value(&off, "final_srtt"), Some(0.1));
        // 20 samples of 200 ms after SRTT ~ 0.1: 200 - 100 · 0.875^20 - ... ≈ 0.19 s.
        let srtt = value(&on, "final_srtt").unwrap();
        assert!((0.18..0.2).contains(&srtt), "{srtt}");
    }

    #[test]
    fn out_of_order_data_is_acked_at_once_and_the_filled_hole_too() {
        // No handshake (peer RTO 1 s). 16 segments written at 0 arrive at 50 ms and use up
        // the 16 quick ACKs (ACKs at 100). Six more written at 900 ms, the second (segment
        // 17, forward packet 18) dropped: segment 16 arrives at 950, alone, and arms the
        // timer (ato 40 -> 990); 18 arrives out of order and is ACKed at once (RFC 5681
        // 4.2), the ACK for 17 taking 16 with it, and 19-21 give three duplicates: fast
        // retransmit at 1000. The retransmission fills the hole at 1050 and is ACKed at
        // once: 1100. Without delayed ACKs segment 16 has an ACK of its own at 1000.
        let text = |extra: &str| {
            format!(
                "name = \"t\"\nhorizon = \"10s\"\n[path]\nbase_rtt = \"100ms\"\n\
                 [[path.event]]\nkind = \"drop\"\ndirection = \"forward\"\nnth = 18\n\
                 [tcp]\nhandshake = false\nwindow = 20\ninitial_window = 20\n{extra}workload = {{ kind = \"script\" }}\n\
                 [[tcp.write]]\nat = \"0s\"\nsegments = 16\n\
                 [[tcp.write]]\nat = \"900ms\"\nsegments = 6\n"
            )
        };
        let first = vec![ms(100); 16];
        let on = run_text(&text("delayed_ack = true\n"));
        assert_eq!(times(&on, TraceEvent::Ack), [first.clone(), vec![ms(1000); 4], vec![ms(1100)]].concat());
        assert_eq!(times(&on, TraceEvent::Retransmit), vec![ms(1000)]);
        let off = run_text(&text(""));
        assert_eq!(times(&off, TraceEvent::Ack), [first, vec![ms(1000); 5], vec![ms(1100)]].concat());
        assert_eq!(times(&off, TraceEvent::Retransmit), vec![ms(1000)]);
    }
}
