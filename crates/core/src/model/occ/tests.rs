//! Each strategy's formula on hand-computed values, the version check, and a client's
//! loop. Draws are scripted: [`Draws`] hands out chosen r ∈ [0, 1) (dyadic, so that
//! `random::<f64>()` returns them exactly) and counts how many were taken.

use proptest::{prop_assert, prop_assert_eq, proptest};

use super::*;

use crate::engine::rng::scripted::Draws;

fn ms(x: f64) -> SimDuration {
    SimDuration::from_secs_f64(x / 1000.0).unwrap()
}

/// The original's parameters (l. 136): base 5 ms, cap 2000 ms.
fn brooker(strategy: Strategy) -> Backoff {
    Backoff { strategy, base: ms(5.0), cap: ms(2000.0) }
}

/// `next_sleep(n, prev)` with one scripted draw `r`: the sleep and the draws taken.
fn sleep(strategy: Strategy, n: u32, prev: f64, r: f64) -> (SimDuration, u32) {
    let mut rng = Draws::new(&[r]);
    let s = brooker(strategy).next_sleep(n, ms(prev), &mut rng);
    (s, rng.taken)
}

#[test]
fn none_never_waits_and_never_draws() {
    for n in [1, 2, 10, 1000] {
        assert_eq!(sleep(Strategy::None, n, 5.0, 0.5), (SimDuration::ZERO, 0));
    }
}

#[test]
fn exponential_is_base_times_two_to_the_n_capped_without_a_draw() {
    // 5·2¹ = 10, 5·2² = 20, 5·2⁸ = 1280, 5·2⁹ = 2560 → cap 2000 ms.
    for (n, want) in [(1, 10.0), (2, 20.0), (3, 40.0), (8, 1280.0), (9, 2000.0), (40, 2000.0)] {
        assert_eq!(sleep(Strategy::Exponential, n, 5.0, 0.5), (ms(want), 0), "n = {n}");
    }
    // base·2ⁿ overflows u64 nanoseconds from n = 42 (5e6·2⁴² ≈ 2.2e19 > 1.8e19), and 2ⁿ
    // itself from n = 64: saturated, then capped, never wrapped.
    for n in [41, 42, 63, 64, 65, u32::MAX] {
        assert_eq!(brooker(Strategy::Exponential).expo(n), ms(2000.0), "n = {n}");
    }
    let zero = Backoff { strategy: Strategy::Exponential, base: SimDuration::ZERO, cap: ms(2000.0) };
    assert_eq!(zero.expo(100), SimDuration::ZERO);
}

#[test]
fn full_jitter_is_uniform_on_zero_to_the_exponential_value() {
    // U(0, v) = v·r: n = 1, v = 10 ms, r = ½ → 5 ms; n = 3, v = 40 ms, r = ¼ → 10 ms;
    // n = 10, v = min(2000, 5120) = 2000 ms, r = ¾ → 1500 ms; r = 0 → 0.
    assert_eq!(sleep(Strategy::Full, 1, 5.0, 0.5), (ms(5.0), 1));
    assert_eq!(sleep(Strategy::Full, 3, 5.0, 0.25), (ms(10.0), 1));
    assert_eq!(sleep(Strategy::Full, 10, 5.0, 0.75), (ms(1500.0), 1));
    assert_eq!(sleep(Strategy::Full, 2, 5.0, 0.0), (SimDuration::ZERO, 1));
}

#[test]
fn equal_jitter_is_half_the_exponential_value_plus_a_uniform_half() {
    // v/2 + U(0, v/2): n = 1, v = 10 ms, r = ½ → 5 + 2.5 = 7.5 ms; n = 2, v = 20 ms,
    // r = 0 → 10 ms; n = 3, v = 40 ms, r = ¾ → 20 + 15 = 35 ms; n = 12, v = 2000 ms,
    // r = ½ → 1000 + 500 = 1500 ms.
    assert_eq!(sleep(Strategy::Equal, 1, 5.0, 0.5), (ms(7.5), 1));
    assert_eq!(sleep(Strategy::Equal, 2, 5.0, 0.0), (ms(10.0), 1));
    assert_eq!(sleep(Strategy::Equal, 3, 5.0, 0.75), (ms(35.0), 1));
    assert_eq!(sleep(Strategy::Equal, 12, 5.0, 0.5), (ms(1500.0), 1));
}

#[test]
fn decorrelated_jitter_grows_from_the_previous_sleep_ignores_n_and_is_capped() {
    // min(cap, U(base, 3·prev)) = min(cap, base + (3·prev − base)·r):
    // prev = base = 5 ms, r = ½: 5 + (15 − 5)·½ = 10 ms;
    // prev = 10 ms, r = ¼: 5 + (30 − 5)·¼ = 11.25 ms;
    // prev = 1000 ms, r = ¾: 5 + (3000 − 5)·¾ = 2251.25 → cap 2000 ms.
    for n in [1, 7, 500] {
        assert_eq!(sleep(Strategy::Decorrelated, n, 5.0, 0.5), (ms(10.0), 1), "n = {n}");
    }
    assert_eq!(sleep(Strategy::Decorrelated, 2, 10.0, 0.25), (ms(11.25), 1));
    assert_eq!(sleep(Strategy::Decorrelated, 3, 1000.0, 0.75), (ms(2000.0), 1));
    // r = 0 gives the base, never less.
    assert_eq!(sleep(Strategy::Decorrelated, 3, 700.0, 0.0), (ms(5.0), 1));
}

#[test]
fn a_write_succeeds_only_if_no_other_write_succeeded_since_its_read() {
    let mut row = Row::default();
    // Two clients read version 0.
    let (a, b) = (row.read(), row.read());
    assert_eq!((a, b), (0, 0));
    // The first write wins and bumps the version; the second, conditioned on the same
    // read, loses and leaves the row alone.
    assert!(row.write(a));
    assert_eq!(row.read(), 1);
    assert!(!row.write(b));
    assert_eq!(row.read(), 1);
    // A failed write does not count as a success in between: a read of 1 still wins.
    let c = row.read();
    assert!(!row.write(0));
    assert!(row.write(c));
    assert_eq!(row.read(), 2);
}

#[test]
fn the_first_backoff_uses_n_equal_1_because_the_count_goes_up_first() {
    let b = brooker(Strategy::Exponential);
    let mut c = Client::new(&b);
    let mut rng = Draws::new(&[0.5]);
    assert_eq!((c.phase(), c.failures(), c.writes()), (Phase::Reading, 0, 0));
    assert_eq!(c.on_read_reply(0), 0);
    assert_eq!((c.phase(), c.writes()), (Phase::Writing { version: 0 }, 1));
    // l. 111–112: attempt += 1, then backoff(attempt): 5·2¹ = 10 ms, not 5·2⁰.
    assert_eq!(c.on_write_reply(&b, false, &mut rng), Some(ms(10.0)));
    assert_eq!((c.phase(), c.failures(), c.writes()), (Phase::Reading, 1, 1));
    c.on_read_reply(3);
    assert_eq!(c.on_write_reply(&b, false, &mut rng), Some(ms(20.0)));
    c.on_read_reply(4);
    assert_eq!(c.on_write_reply(&b, true, &mut rng), None);
    assert_eq!((c.phase(), c.failures(), c.writes()), (Phase::Done, 2, 3));
    assert_eq!(rng.taken, 0, "exponential draws nothing");
}

#[test]
fn a_decorrelated_client_keeps_its_own_sleep_starting_at_base() {
    let b = brooker(Strategy::Decorrelated);
    let mut c = Client::new(&b);
    // sleep: 5 → 5 + (15 − 5)·½ = 10 ms → 5 + (30 − 5)·¼ = 11.25 ms
    // → 5 + (33.75 − 5)·½ = 19.375 ms.
    let mut rng = Draws::new(&[0.5, 0.25, 0.5]);
    let mut sleeps = Vec::new();
    for v in 0..3 {
        c.on_read_reply(v);
        sleeps.push(c.on_write_reply(&b, false, &mut rng).unwrap());
    }
    assert_eq!(sleeps, [ms(10.0), ms(11.25), ms(19.375)]);
    assert_eq!(rng.taken, 3);
    // Another client starts again from base: the sleep is per client (l. 136).
    let mut other = Client::new(&b);
    other.on_read_reply(0);
    assert_eq!(other.on_write_reply(&b, false, &mut Draws::new(&[0.5])), Some(ms(10.0)));
}

#[test]
fn a_success_ends_the_client_without_a_draw() {
    for s in Strategy::ALL {
        let b = brooker(s);
        let mut c = Client::new(&b);
        let mut rng = Draws::new(&[0.5]);
        c.on_read_reply(0);
        assert_eq!(c.on_write_reply(&b, true, &mut rng), None);
        assert_eq!((c.phase(), rng.taken), (Phase::Done, 0), "{s:?}");
    }
}

#[test]
fn strategy_words_are_the_scenario_keywords() {
    #[derive(serde::Deserialize)]
    struct W {
        s: Strategy,
    }
    for s in Strategy::ALL {
        let parsed: W = toml::from_str(&format!("s = \"{}\"", s.word())).unwrap();
        assert_eq!(parsed.s, s);
    }
    assert!(toml::from_str::<W>("s = \"jitter\"").is_err());
}

proptest! {
    /// Every sleep stays within [lower bound, cap]: exponential and full below expo(n),
    /// equal at least half of it, decorrelated at least base; one draw exactly when jittered.
    #[test]
    fn sleeps_stay_within_their_bounds(n in 1u32..80, prev_ms in 5.0f64..2000.0, r in 0.0f64..1.0, k in 0usize..5) {
        let s = Strategy::ALL[k];
        let b = brooker(s);
        let mut rng = Draws::new(&[r]);
        let x = b.next_sleep(n, ms(prev_ms), &mut rng);
        prop_assert!(x <= b.cap);
        prop_assert_eq!(rng.taken, u32::from(s.draws()));
        let v = b.expo(n);
        match s {
            Strategy::None => prop_assert_eq!(x, SimDuration::ZERO),
            Strategy::Exponential => prop_assert_eq!(x, v),
            Strategy::Full => prop_assert!(x <= v),
            Strategy::Equal => prop_assert!(x.as_nanos() >= v.as_nanos() / 2 && x <= v),
            Strategy::Decorrelated => prop_assert!(x >= b.base),
        }
    }
}
