//! Behaviour of a whole server: down times, capacity, SETTINGS, flapping, and property
//! tests over arbitrary valid configs and arrival sequences.

use super::*;
use proptest::prelude::*;

const MS: u64 = 1_000_000;
const SECOND: u64 = 1_000_000_000;

fn ms(n: u64) -> SimTime {
    SimTime(n * MS)
}

fn secs(n: u64) -> SimTime {
    SimTime(n * SECOND)
}

fn d_ms(n: u64) -> SimDuration {
    SimDuration::from_millis(n)
}

fn d_secs(n: u64) -> SimDuration {
    SimDuration::from_secs(n)
}

fn restart(at: u64, down: u64) -> Restart {
    Restart { at: d_secs(at), down: d_secs(down) }
}

fn outage(at: u64, duration: u64) -> Outage {
    Outage { at: d_secs(at), duration: d_secs(duration) }
}

fn server(config: ServerConfig) -> Server {
    assert!(config.validate().is_empty(), "{}", config.validate());
    Server::new(&config)
}

fn limited(rate: f64, burst: u32, queue: u32) -> ServerConfig {
    ServerConfig { accept_rate: Some(rate), burst, accept_queue: queue, ..ServerConfig::default() }
}

fn accepted(settings_at: SimTime) -> ConnectAnswer {
    ConnectAnswer::Accepted { settings_at, dropped_at: None }
}

// ---- down times -------------------------------------------------------------------

#[test]
fn a_plain_server_accepts_everything_at_once() {
    let mut s = server(ServerConfig::default());
    for t in [SimTime::ZERO, secs(1), secs(1), SimTime::MAX] {
        assert_eq!(s.on_connect(t), accepted(t));
    }
    assert!(s.drop_all_times().is_empty());
}

#[test]
fn down_with_refuse_answers_rst_and_with_blackhole_nothing() {
    for (behavior, expected) in [
        (DownBehavior::Refuse, ConnectAnswer::Refused { reason: RefuseReason::Down }),
        (DownBehavior::Blackhole, ConnectAnswer::Silent { reason: SilentReason::Down }),
    ] {
        for (restarts, outages) in [(vec![restart(10, 30)], vec![]), (vec![], vec![outage(10, 30)])] {
            let mut s = server(ServerConfig {
                restart: restarts,
                outage: outages,
                down_behavior: behavior,
                ..ServerConfig::default()
            });
            assert_eq!(s.on_connect(secs(5)), accepted(secs(5)));
            assert_eq!(s.on_connect(secs(10)), expected);
            assert_eq!(s.on_connect(secs(25)), expected);
            assert!(!expected.syn_acked());
        }
    }
}

#[test]
fn a_restart_is_down_from_at_until_at_plus_down() {
    let mut s = server(ServerConfig { restart: vec![restart(10, 30)], ..ServerConfig::default() });
    let (start, end) = (secs(10), secs(40));
    assert!(s.is_up(SimTime(start.0 - 1)));
    assert!(!s.is_up(start));
    assert!(!s.is_up(SimTime(end.0 - 1)));
    assert!(s.is_up(end));
    assert_eq!(s.on_connect(SimTime(end.0 - 1)), ConnectAnswer::Refused { reason: RefuseReason::Down });
    assert_eq!(s.on_connect(end), accepted(end));
}

#[test]
fn drop_all_times_lists_the_restarts_in_order_and_not_the_outages() {
    let s = server(ServerConfig {
        restart: vec![restart(10, 30), restart(100, 0), restart(200, 5)],
        outage: vec![outage(50, 10)],
        ..ServerConfig::default()
    });
    assert_eq!(s.drop_all_times(), vec![secs(10), secs(100), secs(200)]);
}

#[test]
fn a_zero_length_restart_is_never_down_but_still_empties_the_queue() {
    let mut s = server(ServerConfig { restart: vec![restart(1, 0)], ..limited(1000.0, 1, 100) });
    let before = SimTime(secs(1).0 - 5 * MS);
    s.on_connect(before);
    assert_eq!(s.on_connect(before), accepted(before + d_ms(1)));
    assert_eq!(s.queue_len(before), 1);
    assert!(s.is_up(secs(1)));
    assert_eq!(s.on_connect(secs(1)), accepted(secs(1)));
    assert_eq!(s.queue_len(secs(1)), 0);
    assert_eq!(s.drop_all_times(), vec![secs(1)]);
}

// ---- token bucket -----------------------------------------------------------------

#[test]
fn ten_simultaneous_arrivals_start_at_once_and_the_kth_queued_one_k_ms_later() {
    let mut s = server(limited(1000.0, 10, 128));
    let t = secs(3);
    for _ in 0..10 {
        assert_eq!(s.on_connect(t), accepted(t));
    }
    for k in 1..=128 {
        assert_eq!(s.on_connect(t), accepted(t + d_ms(k)), "queued #{k}");
    }
    let stats = s.stats();
    assert_eq!((stats.queued, stats.max_queue_len), (128, 128));
    assert_eq!(stats.max_queue_wait, d_ms(128));
    assert_eq!(s.queue_len(t), 128);
}

#[test]
fn a_full_queue_refuses_or_drops_as_configured() {
    for (overload, expected) in [
        (Overload::Refuse, ConnectAnswer::Refused { reason: RefuseReason::Overload }),
        (Overload::Drop, ConnectAnswer::Silent { reason: SilentReason::Overload }),
    ] {
        let mut s = server(ServerConfig { overload, ..limited(1000.0, 2, 3) });
        let answers: Vec<_> = (0..7).map(|_| s.on_connect(SimTime::ZERO)).collect();
        assert_eq!(answers[..5].iter().filter(|a| a.syn_acked()).count(), 5);
        assert_eq!(answers[4], accepted(ms(3)));
        assert_eq!(answers[5..], [expected, expected]);
        // One token later, one place is free again.
        assert_eq!(s.on_connect(ms(1)), accepted(ms(4)));
        assert_eq!(s.on_connect(ms(1)), expected);
    }
}

#[test]
fn a_zero_queue_is_a_pure_rate_limiter() {
    let mut s = server(limited(1000.0, 1, 0));
    assert_eq!(s.on_connect(ms(0)), accepted(ms(0)));
    assert_eq!(s.on_connect(SimTime(MS - 1)), ConnectAnswer::Refused { reason: RefuseReason::Overload });
    assert_eq!(s.on_connect(ms(1)), accepted(ms(1)));
}

/// A flood of 10 SYNs per ms for 10 s at a server of 1000/s, burst 10: handshakes start
/// at exactly one per ms once the burst is spent, so exactly `burst + rate · T` have
/// started by T (integer arithmetic: 1000/s is a token every 10⁶ ns, no rounding at all).
#[test]
fn the_long_run_accept_rate_over_a_10s_flood_equals_the_rate_exactly() {
    let mut s = server(limited(1000.0, 10, 128));
    let mut starts = Vec::new();
    for i in 0..100_000 {
        if let Some(at) = s.on_connect(SimTime(i * 100_000)).settings_at() {
            starts.push(at);
        }
    }
    let started_by = |t: SimTime| starts.iter().filter(|&&s| s <= t).count();
    assert_eq!(started_by(secs(10)), 10 + 10_000);
    assert_eq!(started_by(secs(10)) - started_by(secs(1)), 9_000);
    // Backlogged from 2 ms on: one start per ms, on the ms.
    let backlogged: Vec<_> = starts.iter().filter(|&&t| t >= ms(2)).collect();
    for (k, &&t) in backlogged.iter().enumerate() {
        assert_eq!(t, ms(2 + k as u64));
    }
    let stats = s.stats();
    assert_eq!(stats.max_queue_len, 128);
    assert_eq!(stats.accepted as usize, starts.len());
    assert_eq!(stats.refused_overload, 100_000 - stats.accepted);
}

#[test]
fn after_a_quiet_spell_the_burst_is_available_again() {
    let mut s = server(limited(100.0, 5, 10));
    for _ in 0..15 {
        s.on_connect(SimTime::ZERO);
    }
    // The queue drains by 100 ms; 50 ms later the bucket is full (5 tokens × 10 ms).
    let later = ms(150);
    for _ in 0..5 {
        assert_eq!(s.on_connect(later), accepted(later));
    }
    assert_eq!(s.on_connect(later), accepted(later + d_ms(10)));
}

// ---- SETTINGS, flapping, never-SETTINGS -------------------------------------------

#[test]
fn handshake_time_delays_settings_after_the_token() {
    let mut s = server(ServerConfig { handshake_time: d_ms(2), ..limited(1000.0, 1, 10) });
    assert_eq!(s.on_connect(secs(1)), accepted(secs(1) + d_ms(2)));
    assert_eq!(s.on_connect(secs(1)), accepted(secs(1) + d_ms(3)));
    let mut unlimited = server(ServerConfig { handshake_time: d_ms(2), ..ServerConfig::default() });
    assert_eq!(unlimited.on_connect(secs(1)), accepted(secs(1) + d_ms(2)));
}

#[test]
fn drop_after_gives_dropped_at_that_long_after_settings() {
    let mut s =
        server(ServerConfig { handshake_time: d_ms(5), drop_after: Some(d_secs(2)), ..ServerConfig::default() });
    assert_eq!(
        s.on_connect(secs(1)),
        ConnectAnswer::Accepted { settings_at: secs(1) + d_ms(5), dropped_at: Some(secs(3) + d_ms(5)) }
    );
    assert_eq!(s.stats().flap_drops, 1);
}

#[test]
fn a_restart_before_the_flap_drop_takes_its_place() {
    let mut s =
        server(ServerConfig { restart: vec![restart(10, 1)], drop_after: Some(d_secs(2)), ..ServerConfig::default() });
    let dropped = |a: ConnectAnswer| match a {
        ConnectAnswer::Accepted { dropped_at, .. } => dropped_at,
        other => panic!("{other:?}"),
    };
    assert_eq!(dropped(s.on_connect(SimTime(secs(8).0 - 1))), Some(SimTime(secs(10).0 - 1)));
    assert_eq!(dropped(s.on_connect(secs(8))), None); // due at 10 s: the restart does it
    assert_eq!(dropped(s.on_connect(secs(9))), None);
    assert_eq!(dropped(s.on_connect(secs(11))), Some(secs(13)));
}

#[test]
fn outages_leave_the_flap_drop_alone() {
    let mut s =
        server(ServerConfig { outage: vec![outage(2, 5)], drop_after: Some(d_secs(3)), ..ServerConfig::default() });
    assert_eq!(s.on_connect(secs(1)), ConnectAnswer::Accepted { settings_at: secs(1), dropped_at: Some(secs(4)) });
}

#[test]
fn send_settings_false_is_silent_no_settings_after_a_syn_ack() {
    let mut s = server(ServerConfig { send_settings: false, ..ServerConfig::default() });
    let answer = s.on_connect(secs(1));
    assert_eq!(answer, ConnectAnswer::Silent { reason: SilentReason::NoSettings });
    assert!(answer.syn_acked());
    assert_eq!(answer.settings_at(), None);
    assert_eq!(s.stats().silent_no_settings, 1);
}

#[test]
fn a_hung_connection_without_settings_is_reset_by_the_next_restart() {
    let mut s = server(ServerConfig {
        send_settings: false,
        restart: vec![restart(100, 10)],
        outage: vec![outage(20, 10)],
        ..ServerConfig::default()
    });
    // The outage in between does not touch an accepted connection; the restart does.
    assert_eq!(s.on_connect(secs(1)), ConnectAnswer::Reset { at: secs(100), reason: ResetReason::Restart });
    assert_eq!(s.on_connect(secs(110)), ConnectAnswer::Silent { reason: SilentReason::NoSettings });
}

#[test]
fn never_settings_handshakes_still_use_capacity() {
    let mut s = server(ServerConfig { send_settings: false, ..limited(1000.0, 1, 1) });
    let quiet = ConnectAnswer::Silent { reason: SilentReason::NoSettings };
    assert_eq!(s.on_connect(SimTime::ZERO), quiet);
    assert_eq!(s.on_connect(SimTime::ZERO), quiet);
    assert_eq!(s.on_connect(SimTime::ZERO), ConnectAnswer::Refused { reason: RefuseReason::Overload });
}

// ---- down times meet the backlog --------------------------------------------------

#[test]
fn a_restart_mid_backlog_promises_nothing_past_the_restart() {
    let mut s = server(ServerConfig { restart: vec![restart(10, 30)], ..limited(1000.0, 1, 1000) });
    let t = SimTime(secs(10).0 - 100 * MS); // 100 ms before the restart
    let answers: Vec<_> = (0..300).map(|_| s.on_connect(t)).collect();
    for (k, a) in answers.iter().enumerate() {
        let due = t + d_ms(k as u64);
        if due < secs(10) {
            assert_eq!(*a, accepted(due), "#{k}");
        } else {
            // Due at or after the restart: reset by it, never promised SETTINGS.
            assert_eq!(*a, ConnectAnswer::Reset { at: secs(10), reason: ResetReason::Restart }, "#{k}");
        }
    }
    assert_eq!(s.stats().accepted, 100);
    assert_eq!(s.stats().reset_restart, 200);
    // Back up: the queue was emptied and the bucket is full.
    assert_eq!(s.queue_len(secs(40)), 0);
    assert_eq!(s.on_connect(secs(40)), accepted(secs(40)));
    assert_eq!(s.on_connect(secs(40)), accepted(secs(40) + d_ms(1)));
}

#[test]
fn handshake_time_that_spans_a_restart_is_cut_by_it() {
    let mut s =
        server(ServerConfig { restart: vec![restart(10, 1)], handshake_time: d_ms(10), ..ServerConfig::default() });
    let just_in_time = SimTime(secs(10).0 - 10 * MS - 1);
    assert_eq!(s.on_connect(just_in_time), accepted(SimTime(secs(10).0 - 1)));
    // SETTINGS due exactly at the restart are not sent.
    assert_eq!(
        s.on_connect(SimTime(secs(10).0 - 10 * MS)),
        ConnectAnswer::Reset { at: secs(10), reason: ResetReason::Restart }
    );
}

#[test]
fn an_outage_mid_backlog_resets_with_refuse_and_loses_with_blackhole() {
    for (behavior, cut) in [
        (DownBehavior::Refuse, ConnectAnswer::Reset { at: secs(10), reason: ResetReason::Outage }),
        (DownBehavior::Blackhole, ConnectAnswer::Silent { reason: SilentReason::Lost }),
    ] {
        let mut s =
            server(ServerConfig { outage: vec![outage(10, 5)], down_behavior: behavior, ..limited(1000.0, 1, 10) });
        let t = SimTime(secs(10).0 - 2 * MS);
        assert_eq!(s.on_connect(t), accepted(t));
        assert_eq!(s.on_connect(t), accepted(t + d_ms(1)));
        assert_eq!(s.on_connect(t), cut);
        assert!(cut.syn_acked());
        assert_eq!(s.drop_all_times(), vec![]);
        assert_eq!(s.on_connect(secs(15)), accepted(secs(15)));
    }
}

#[test]
fn stats_count_every_answer_once() {
    let mut s = server(ServerConfig {
        restart: vec![restart(10, 5)],
        handshake_time: d_ms(1),
        drop_after: Some(d_secs(1)),
        ..limited(1000.0, 1, 1)
    });
    s.on_connect(secs(1)); // accepted, flap
    s.on_connect(secs(1)); // queued, accepted, flap
    s.on_connect(secs(1)); // refused: overload
    s.on_connect(SimTime(secs(10).0 - MS)); // SETTINGS due at 10 s: reset
    s.on_connect(secs(12)); // refused: down
    let st = s.stats();
    assert_eq!(
        st,
        ServerStats {
            connects: 5,
            accepted: 2,
            refused_down: 1,
            refused_overload: 1,
            reset_restart: 1,
            handshakes: 3,
            queued: 1,
            max_queue_len: 1,
            max_queue_wait: d_ms(1),
            flap_drops: 2,
            ..ServerStats::default()
        }
    );
    assert_eq!(st.answers(), st.connects);
}

// ---- size and speed -----------------------------------------------------------------

#[test]
fn a_million_calls_leave_size_and_heap_unchanged() {
    let mut s = server(ServerConfig {
        restart: vec![restart(10, 5), restart(30, 1)],
        outage: vec![outage(20, 2)],
        drop_after: Some(d_secs(1)),
        ..limited(10_000.0, 100, 128)
    });
    let heap = s.heap_bytes();
    for i in 0..1_000_000u64 {
        s.on_connect(SimTime(i * 50_000)); // 20 000 SYNs a second for 50 s
    }
    // `Server` holds boxed slices fixed at construction, scalars and counters: the only
    // heap is the schedule's, and it did not move.
    assert_eq!(s.heap_bytes(), heap);
    assert!(std::mem::size_of::<Server>() <= 512, "{}", std::mem::size_of::<Server>());
    let st = s.stats();
    assert_eq!(st.connects, 1_000_000);
    assert_eq!(st.answers(), st.connects);
    assert!(st.max_queue_len <= 128);
}

// ---- properties ---------------------------------------------------------------------

fn duration(max: u64) -> impl Strategy<Value = SimDuration> {
    (0..=max).prop_map(SimDuration)
}

/// Valid configs: down times laid out one after another with gaps (back to back
/// allowed), each a restart or an outage.
fn server_config() -> impl Strategy<Value = ServerConfig> {
    let windows = proptest::collection::vec((duration(5 * SECOND), duration(3 * SECOND), any::<bool>()), 0..6);
    let capacity = proptest::option::of((
        prop_oneof![1e-6..1e-3, 0.5f64..20.0, 1.0f64..1e5, 1e8..=1e9],
        1u32..20,
        0u32..30,
        any::<bool>(),
    ));
    (
        windows,
        any::<bool>(),
        capacity,
        prop_oneof![Just(SimDuration::ZERO), duration(50 * MS)],
        proptest::option::of((1..=3 * SECOND).prop_map(SimDuration)),
        any::<bool>(),
    )
        .prop_map(|(windows, blackhole, capacity, handshake_time, drop_after, send_settings)| {
            let mut c = ServerConfig {
                down_behavior: if blackhole { DownBehavior::Blackhole } else { DownBehavior::Refuse },
                handshake_time,
                drop_after: drop_after.filter(|_| send_settings),
                send_settings,
                ..ServerConfig::default()
            };
            if let Some((rate, burst, queue, drop)) = capacity {
                c.accept_rate = Some(rate);
                c.burst = burst;
                c.accept_queue = queue;
                c.overload = if drop { Overload::Drop } else { Overload::Refuse };
            }
            let mut end = SimDuration::ZERO;
            for (gap, len, is_restart) in windows {
                let at = end + gap;
                if is_restart {
                    c.restart.push(Restart { at, down: len });
                } else {
                    c.outage.push(Outage { at, duration: len });
                }
                end = at + len;
            }
            c
        })
}

/// Arrival times: gaps of 0 (simultaneous floods), sub-millisecond, or up to a second.
fn arrivals() -> impl Strategy<Value = Vec<SimTime>> {
    proptest::collection::vec(prop_oneof![Just(0u64), 0..MS, 0..SECOND], 1..400).prop_map(|gaps| {
        let mut t = 0;
        gaps.into_iter()
            .map(|g| {
                t += g;
                SimTime(t)
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn generated_configs_are_valid_and_round_trip_through_toml(c in server_config()) {
        prop_assert!(c.validate().is_empty(), "{}", c.validate());
        #[derive(serde::Serialize, serde::Deserialize)]
        struct File { server: ServerConfig }
        let text = toml::to_string(&File { server: c.clone() }).unwrap();
        let back: File = toml::from_str(&text).unwrap();
        prop_assert_eq!(back.server, c);
    }

    #[test]
    fn answers_keep_their_promises(c in server_config(), times in arrivals()) {
        let mut s = Server::new(&c);
        let windows = s.schedule().windows().to_vec();
        let restarts = s.drop_all_times();
        // A window begins in (a, b].
        let begins_in = |a: SimTime, b: SimTime| windows.iter().any(|w| a < w.start && w.start <= b);
        let restart_in = |a: SimTime, b: SimTime| restarts.iter().any(|&r| a < r && r <= b);
        let mut last_settings = SimTime::ZERO;
        for &now in &times {
            let answer = s.on_connect(now);
            let down = !s.is_up(now);
            match answer {
                ConnectAnswer::Refused { reason: RefuseReason::Down }
                | ConnectAnswer::Silent { reason: SilentReason::Down } => prop_assert!(down),
                _ => prop_assert!(!down, "{:?} at {} while down", answer, now),
            }
            match answer {
                ConnectAnswer::Accepted { settings_at, dropped_at } => {
                    prop_assert!(c.send_settings);
                    prop_assert!(settings_at >= now.saturating_add(c.handshake_time));
                    // Nothing promised past the next down time.
                    prop_assert!(s.is_up(settings_at));
                    prop_assert!(!begins_in(now, settings_at));
                    // FIFO: completions in arrival order.
                    prop_assert!(settings_at >= last_settings);
                    last_settings = settings_at;
                    match (c.drop_after, dropped_at) {
                        (None, None) => {}
                        (Some(d), Some(drop)) => {
                            prop_assert_eq!(drop, settings_at.saturating_add(d));
                            prop_assert!(!restart_in(settings_at, drop));
                        }
                        (Some(d), None) => {
                            prop_assert!(restart_in(settings_at, settings_at.saturating_add(d)));
                        }
                        (None, Some(_)) => prop_assert!(false, "dropped_at without drop_after"),
                    }
                }
                ConnectAnswer::Reset { at, reason } => {
                    prop_assert!(at > now);
                    let w = windows.iter().find(|w| w.start == at);
                    prop_assert!(w.is_some(), "reset at {} is no down time", at);
                    match reason {
                        ResetReason::Restart => prop_assert!(restarts.contains(&at)),
                        ResetReason::Outage => {
                            prop_assert_eq!(c.down_behavior, DownBehavior::Refuse);
                            prop_assert_eq!(w.unwrap().kind, DownKind::Outage);
                        }
                    }
                }
                ConnectAnswer::Silent { reason: SilentReason::NoSettings } => {
                    prop_assert!(!c.send_settings);
                    prop_assert!(!restart_in(now, SimTime::MAX));
                }
                ConnectAnswer::Silent { reason: SilentReason::Lost } => {
                    prop_assert_eq!(c.down_behavior, DownBehavior::Blackhole);
                }
                ConnectAnswer::Refused { reason: RefuseReason::Overload }
                | ConnectAnswer::Silent { reason: SilentReason::Overload } => {
                    prop_assert!(c.accept_rate.is_some());
                }
                _ => {}
            }
        }
        let st = s.stats();
        prop_assert_eq!(st.connects, times.len() as u64);
        prop_assert_eq!(st.answers(), st.connects);
        prop_assert!(st.queued <= st.handshakes);
        prop_assert!(st.max_queue_len <= u64::from(c.accept_queue));
        prop_assert_eq!(
            st.handshakes,
            st.connects - st.refused_down - st.refused_overload - st.silent_down - st.silent_overload
        );
    }
}
