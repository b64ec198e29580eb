//! The state machine against each preset's source, hand-computed; then the behaviours
//! every policy shares, and the proptest invariants.
//!
//! Draws are scripted: [`Draws`] hands out chosen r ∈ [0, 1) (dyadic values, so that
//! `random::<f64>()` returns them exactly), and counts how many were taken.

use proptest::prelude::*;

use super::*;

use crate::engine::rng::scripted::Draws;

fn policy(preset: &str, sets: &[(&str, &str)]) -> RetryPolicy {
    RetryPolicyConfig::with_pairs(Some(preset), sets).resolve().unwrap()
}

fn s(x: f64) -> SimDuration {
    SimDuration::from_secs_f64(x).unwrap()
}

fn t(x: f64) -> SimTime {
    SimTime::ZERO + s(x)
}

/// What happened to one call whose every attempt takes `a` and fails with `o`.
#[derive(Debug)]
struct Call {
    sleeps: Vec<SimDuration>,
    starts: Vec<SimTime>,
    end: Decision,
}

fn call_with(p: &RetryPolicy, budget: &mut RetryBudget, o: Outcome, a: f64, rng: &mut Draws) -> Call {
    let mut state = RetryState::new(p, SimTime::ZERO);
    let mut start = SimTime::ZERO;
    let mut sleeps = Vec::new();
    let mut starts = vec![start];
    for _ in 0..1000 {
        let now = start + s(a);
        match state.on_outcome(p, budget, now, &o, rng) {
            Decision::RetryAt { at, sleep, .. } => {
                sleeps.push(sleep);
                starts.push(at);
                start = at;
            }
            end => {
                return Call { sleeps, starts, end };
            }
        }
    }
    panic!("no end after 1000 attempts");
}

fn call(p: &RetryPolicy, o: Outcome, a: f64, rng: &mut Draws) -> Call {
    let mut budget = p.new_budget(SimTime::ZERO);
    call_with(p, &mut budget, o, a, rng)
}

fn secs_of(v: &[SimDuration]) -> Vec<f64> {
    v.iter().map(|d| d.as_secs_f64()).collect()
}

fn give_up(at: f64, reason: GiveUpReason) -> Decision {
    Decision::GiveUp { at: t(at), reason }
}

const HALF: f64 = 0.5;

// ---- seed-loop ----------------------------------------------------------------------

#[test]
fn seed_loop_5_attempts_4_sleeps_under_15s() {
    let p = policy("seed-loop", &[]);
    // U(0, min(30, 2^k)) at r = 1/2: 0.5, 1, 2, 4; the fifth failure raises.
    let c = call(&p, Outcome::status(503), 0.0, &mut Draws::always(HALF));
    assert_eq!(secs_of(&c.sleeps), [0.5, 1.0, 2.0, 4.0]);
    assert_eq!(c.end, give_up(7.5, GiveUpReason::AttemptsExhausted { attempts: 5 }));
    // The largest draws stay below 1 + 2 + 4 + 8 = 15 s.
    let c = call(&p, Outcome::status(503), 0.0, &mut Draws::always(1.0 - 1.0 / 1024.0));
    let total: f64 = secs_of(&c.sleeps).iter().sum();
    assert!(total < 15.0 && total > 14.98, "{total}");
}

// ---- gcs-python -----------------------------------------------------------------------

#[test]
fn gcs_python_gives_up_without_sleeping_when_now_plus_sleep_passes_120s() {
    let p = policy("gcs-python", &[]);
    // retry_base.py: U(0, min(2^k, 60)) at r = 1/2: .5 1 2 4 8 16 30 30 → 91.5 s; the
    // next draw (30 s) would end at 121.5 s > 120 s: RetryError at 91.5 s, no sleep.
    let c = call(&p, Outcome::status(503), 0.0, &mut Draws::always(HALF));
    assert_eq!(secs_of(&c.sleeps), [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0]);
    assert_eq!(c.end, give_up(91.5, GiveUpReason::Deadline));
    // `>`: a sleep that lands exactly on the deadline is taken.
    let p = policy("gcs-python", &[("deadline", "121.5s")]);
    let c = call(&p, Outcome::status(503), 0.0, &mut Draws::always(HALF));
    assert_eq!(c.starts[9], t(121.5));
}

#[test]
fn gcs_python_attempt_time_counts_toward_the_deadline() {
    let p = policy("gcs-python", &[]);
    // Each attempt takes 10 s: failures at 10, 20.5, 31.5, 43.5, 57.5, 75.5, 101.5 s;
    // the 30 s drawn at 101.5 s would pass 120 s.
    let c = call(&p, Outcome::status(503), 10.0, &mut Draws::always(HALF));
    assert_eq!(secs_of(&c.sleeps), [0.5, 1.0, 2.0, 4.0, 8.0, 16.0]);
    assert_eq!(c.end, give_up(101.5, GiveUpReason::Deadline));
}

#[test]
fn gcs_python_permanent_errors_fail_at_once_with_the_reason() {
    let p = policy("gcs-python", &[]);
    for code in [400, 401, 403, 404, 501] {
        let c = call(&p, Outcome::status(code), 0.0, &mut Draws::always(HALF));
        assert_eq!(c.end, give_up(0.0, GiveUpReason::Permanent(Outcome::status(code))), "{code}");
    }
    let reason = GiveUpReason::Permanent(Outcome::status(403));
    assert_eq!(reason.to_string(), "permanent error: HTTP 403 is not retried");
}

#[test]
fn gcs_python_conditional_mutations_retry_only_with_their_precondition() {
    let p = policy("gcs-python", &[]);
    let mut b = p.new_budget(SimTime::ZERO);
    let o = Outcome::status(503);
    let mut with = RetryState::new(&p, SimTime::ZERO).with_idempotency(Idempotency::Conditional { precondition: true });
    assert!(matches!(
        with.on_outcome(&p, &mut b, SimTime::ZERO, &o, &mut Draws::always(HALF)),
        Decision::RetryAt { .. }
    ));
    let mut without =
        RetryState::new(&p, SimTime::ZERO).with_idempotency(Idempotency::Conditional { precondition: false });
    assert_eq!(
        without.on_outcome(&p, &mut b, SimTime::ZERO, &o, &mut Draws::always(HALF)),
        give_up(0.0, GiveUpReason::NotIdempotent(o))
    );
}

// ---- gcs-python-legacy ----------------------------------------------------------------

#[test]
fn gcs_python_legacy_truncates_the_last_sleep_and_attempts_at_the_deadline() {
    let p = policy("gcs-python-legacy", &[]);
    // retry.py: min(U(0, 2·2^k), 60) at r = 1/2: 1 2 4 8 16 32 → 63 s; then 64 → 60 s
    // would end at 123 s: truncated to the 57 s left, attempt at 120 s, which fails and
    // `deadline_datetime <= now` raises.
    let mut rng = Draws::always(HALF);
    let c = call(&p, Outcome::status(503), 0.0, &mut rng);
    assert_eq!(secs_of(&c.sleeps), [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 57.0]);
    assert_eq!(*c.starts.last().unwrap(), t(120.0));
    assert_eq!(c.end, give_up(120.0, GiveUpReason::Deadline));
}

#[test]
fn gcs_python_legacy_caps_after_the_draw() {
    let p = policy("gcs-python-legacy", &[("deadline", "none"), ("max_attempts", "9")]);
    // k = 6: U(0, 128) at r = 3/4 = 96 → 60; k = 7: U(0, 256) at 1/8 = 32.
    let c = call(&p, Outcome::status(503), 0.0, &mut Draws::new(&[0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.75, 0.125]));
    assert_eq!(secs_of(&c.sleeps)[6..], [60.0, 32.0]);
}

// ---- gcs-cpp --------------------------------------------------------------------------

#[test]
fn gcs_cpp_draws_u_2k_2k1_then_u_150_300_and_overruns_15min_by_at_most_300s() {
    let p = policy("gcs-cpp", &[]);
    // backoff_policy.cc at r = 1/2: 1.5 3 6 12 24 48 96 192, then the range is pinned
    // to [150, 300]: 225 225 → 832.5 s; the next 225 s sleep is taken in full
    // (IsExhausted only after it) and ends the call at 1057.5 s with no attempt.
    let c = call(&p, Outcome::status(503), 0.0, &mut Draws::always(HALF));
    assert_eq!(secs_of(&c.sleeps), [1.5, 3.0, 6.0, 12.0, 24.0, 48.0, 96.0, 192.0, 225.0, 225.0]);
    // 157.5 s past 15 min, within the 300 s a pinned range allows.
    assert_eq!(c.end, give_up(1057.5, GiveUpReason::Deadline));
}

#[test]
fn gcs_cpp_truncates_sleeps_to_whole_milliseconds() {
    let p = policy("gcs-cpp", &[]);
    // U(1 s, 2 s) at r = 2^-13 is 1.000122 s: duration_cast<milliseconds> → 1.000 s.
    let c = call(&p, Outcome::status(503), 0.0, &mut Draws::new(&[1.0 / 8192.0, 0.0]));
    assert_eq!(c.sleeps[0], s(1.0));
}

#[test]
fn gcs_cpp_retries_non_idempotent_calls_and_counts_duplicates() {
    let p = policy("gcs-cpp", &[]);
    let mut b = p.new_budget(SimTime::ZERO);
    let mut st = RetryState::new(&p, SimTime::ZERO).with_idempotency(Idempotency::Never);
    let o = Outcome::Timeout { applied: true };
    match st.on_outcome(&p, &mut b, t(1.0), &o, &mut Draws::always(HALF)) {
        Decision::RetryAt { duplicate, .. } => assert!(duplicate),
        other => panic!("{other:?}"),
    }
    assert_eq!(st.duplicates(), 1);
    // The strict idempotency policy refuses instead.
    let strict = policy("gcs-cpp", &[("retry_non_idempotent", "false")]);
    let mut st = RetryState::new(&strict, SimTime::ZERO).with_idempotency(Idempotency::Never);
    assert_eq!(
        st.on_outcome(&strict, &mut b, t(1.0), &o, &mut Draws::always(HALF)),
        give_up(1.0, GiveUpReason::NotIdempotent(o))
    );
}

// ---- gcloud ---------------------------------------------------------------------------

#[test]
fn gcloud_makes_24_attempts_with_additive_jitter_capped_at_32s() {
    let p = policy("gcloud", &[]);
    // retry.py: min(1000·2^k + random()·1000, 32000) ms; 23 retries.
    let c = call(&p, Outcome::status(503), 0.0, &mut Draws::always(HALF));
    assert_eq!(c.sleeps.len(), 23);
    assert_eq!(secs_of(&c.sleeps)[..6], [1.5, 2.5, 4.5, 8.5, 16.5, 32.0]);
    assert!(c.sleeps[5..].iter().all(|&x| x == s(32.0)));
    assert_eq!(c.end, give_up(609.5, GiveUpReason::AttemptsExhausted { attempts: 24 }));
}

// ---- aws ------------------------------------------------------------------------------

#[test]
fn aws_standard_2_1_uses_50ms_base_1s_for_throttling_and_costs_14() {
    let p = policy("aws-standard", &[]);
    let mut b = p.new_budget(SimTime::ZERO);
    let c = call_with(&p, &mut b, Outcome::status(503), 0.0, &mut Draws::always(HALF));
    assert_eq!(secs_of(&c.sleeps), [0.025, 0.05]);
    assert_eq!(c.end, give_up(0.075, GiveUpReason::AttemptsExhausted { attempts: 3 }));
    assert_eq!(b.level(&p.budget), 500.0 - 28.0);
    let thr = Outcome::status(400).throttling();
    let c = call_with(&p, &mut b, thr, 0.0, &mut Draws::always(HALF));
    assert_eq!(secs_of(&c.sleeps), [0.5, 1.0]);
    assert_eq!(b.level(&p.budget), 472.0 - 10.0);
}

#[test]
fn aws_standard_2_1_clamps_x_amz_retry_after_to_t_plus_5s() {
    let p = policy("aws-standard", &[]);
    let o = Outcome::status(503).with_retry_after(RetryAfter::Millis(10_000));
    let c = call(&p, o, 0.0, &mut Draws::always(HALF));
    // max(0.025, min(10, 0.025 + 5)) = 5.025 s.
    assert_eq!(c.sleeps[0], s(5.025));
}

#[test]
fn aws_success_after_retries_refunds_the_last_cost_only() {
    let p = policy("aws-standard-2025", &[]);
    let mut b = p.new_budget(SimTime::ZERO);
    let mut st = RetryState::new(&p, SimTime::ZERO);
    let mut rng = Draws::always(HALF);
    st.on_outcome(&p, &mut b, t(0.0), &Outcome::Timeout { applied: false }, &mut rng);
    st.on_outcome(&p, &mut b, t(1.0), &Outcome::status(500), &mut rng);
    assert_eq!(b.level(&p.budget), 485.0);
    assert_eq!(st.on_outcome(&p, &mut b, t(3.0), &Outcome::Success, &mut rng), Decision::Done);
    assert_eq!(b.level(&p.budget), 490.0);
}

#[test]
fn aws_standard_2025_draws_u_0_1_times_2k_for_every_error() {
    let p = policy("aws-standard-2025", &[]);
    let c = call(&p, Outcome::status(400).throttling(), 0.0, &mut Draws::always(HALF));
    assert_eq!(secs_of(&c.sleeps), [0.5, 1.0]);
    // No bare 429 in 2.0.
    let c = call(&p, Outcome::status(429), 0.0, &mut Draws::always(HALF));
    assert_eq!(c.end, give_up(0.0, GiveUpReason::Permanent(Outcome::status(429))));
}

#[test]
fn aws_legacy_is_uncapped_with_5_attempts() {
    let p = policy("aws-legacy", &[]);
    let c = call(&p, Outcome::status(509), 0.0, &mut Draws::always(0.75));
    assert_eq!(secs_of(&c.sleeps), [0.75, 1.5, 3.0, 6.0]);
    assert_eq!(p.sleep_bound(), None);
    assert_eq!(c.end, give_up(11.25, GiveUpReason::AttemptsExhausted { attempts: 5 }));
}

#[test]
fn aws_adaptive_waits_for_tokens_after_a_throttle() {
    let p = policy("aws-adaptive", &[]);
    let thr = Outcome::status(400).throttling();
    // Throttled at 0 s (the bucket has filled nothing yet): backoff 0.5 s, then the
    // token at 0.5 tokens/s: 0.25 there, 1.5 s more → 2 s. Then backoff 1 s → 3 s with
    // 0.5 tokens: 1 s more → 4 s.
    let c = call(&p, thr, 0.0, &mut Draws::always(HALF));
    assert_eq!(c.starts, [t(0.0), t(2.0), t(4.0)]);
    // Without throttling errors it is aws-standard.
    let c = call(&p, Outcome::status(503), 0.0, &mut Draws::always(HALF));
    assert_eq!(secs_of(&c.sleeps), [0.025, 0.05]);
}

// ---- tenacity -------------------------------------------------------------------------

#[test]
fn tenacity_takes_the_sleep_crossing_120s_in_full_and_attempts_once_more() {
    let p = policy("tenacity-random-exp", &[]);
    // U(0, min(2^k, 60)) at r = 1/2; at 91.5 s (< 120) the 30 s sleep is taken in full,
    // the attempt at 121.5 s fails, and seconds_since_start >= 120 stops.
    let c = call(&p, Outcome::status(503), 0.0, &mut Draws::always(HALF));
    assert_eq!(*c.starts.last().unwrap(), t(121.5));
    assert_eq!(c.end, give_up(121.5, GiveUpReason::Deadline));
    assert_eq!(c.starts.len(), 10);
    // stop_before_delay gives up at 91.5 s instead.
    let p = policy("tenacity-random-exp", &[("deadline_rule", "give-up-before-reaching")]);
    let c = call(&p, Outcome::status(503), 0.0, &mut Draws::always(HALF));
    assert_eq!(c.end, give_up(91.5, GiveUpReason::Deadline));
    // Any exception is retried, a 403 included.
    let c = call(&policy("tenacity-random-exp", &[]), Outcome::status(403), 0.0, &mut Draws::always(HALF));
    assert_eq!(c.end, give_up(121.5, GiveUpReason::Deadline));
}

// ---- python-backoff -------------------------------------------------------------------

#[test]
fn python_backoff_truncates_to_the_time_left_at_the_attempts_start() {
    let p = policy("python-backoff", &[]);
    // expo + full_jitter, uncapped, r = 1/2: .5 1 2 4 8 16 32 → 63.5 s; the next 64 s
    // is cut to 120 − 63.5 = 56.5 s; the attempt at 120 s fails with elapsed >= 120.
    let c = call(&p, Outcome::status(503), 0.0, &mut Draws::always(HALF));
    assert_eq!(secs_of(&c.sleeps).last(), Some(&56.5));
    assert_eq!(c.end, give_up(120.0, GiveUpReason::Deadline));
    // With 10 s attempts, elapsed is read before each one: the truncated sleep makes
    // the last attempt start at 120 + 10 s and the call end at 140 s.
    let c = call(&p, Outcome::status(503), 10.0, &mut Draws::always(HALF));
    assert_eq!(*c.starts.last().unwrap(), t(130.0));
    assert_eq!(c.end, give_up(140.0, GiveUpReason::Deadline));
}

// ---- backon ---------------------------------------------------------------------------

#[test]
fn backon_default_sleeps_1_2_4s_then_stops() {
    let p = policy("backon", &[]);
    let mut rng = Draws::always(HALF);
    let c = call(&p, Outcome::status(500), 0.0, &mut rng);
    assert_eq!(secs_of(&c.sleeps), [1.0, 2.0, 4.0]);
    assert_eq!(c.end, give_up(7.0, GiveUpReason::AttemptsExhausted { attempts: 4 }));
    assert_eq!(rng.taken, 0, "no jitter, no draw");
    // with_jitter: U(d, 2d) after the clamp.
    let c = call(&policy("backon", &[("jitter", "half")]), Outcome::status(500), 0.0, &mut Draws::always(HALF));
    assert_eq!(secs_of(&c.sleeps), [1.5, 3.0, 6.0]);
}

#[test]
fn backon_total_delay_counts_sleeps_not_attempts() {
    // with_total_delay(6 s): 1 + 2 = 3, then 3 + 4 > 6 → None, whatever the attempts took.
    let p = policy("backon", &[("deadline", "6s")]);
    let c = call(&p, Outcome::status(500), 10.0, &mut Draws::always(HALF));
    assert_eq!(secs_of(&c.sleeps), [1.0, 2.0]);
    assert_eq!(c.end, give_up(33.0, GiveUpReason::Deadline));
}

// ---- grpc -----------------------------------------------------------------------------

#[test]
fn grpc_retry_a6_full_jitter_4_attempts_and_pushback_resets_the_backoff() {
    let p = policy("grpc-retry", &[]);
    let c = call(&p, Outcome::status(503), 0.0, &mut Draws::always(HALF));
    assert_eq!(secs_of(&c.sleeps), [0.05, 0.1, 0.2]);
    assert_eq!(c.end, give_up(0.35, GiveUpReason::AttemptsExhausted { attempts: 4 }));
    // Pushback replaces the delay (no draw) and the next backoff starts from 100 ms.
    let mut b = p.new_budget(SimTime::ZERO);
    let mut st = RetryState::new(&p, SimTime::ZERO);
    let mut rng = Draws::always(HALF);
    st.on_outcome(&p, &mut b, t(0.0), &Outcome::status(503), &mut rng);
    st.on_outcome(&p, &mut b, t(1.0), &Outcome::status(503), &mut rng);
    let push = Outcome::status(503).with_retry_after(RetryAfter::Millis(2000));
    match st.on_outcome(&p, &mut b, t(2.0), &push, &mut rng) {
        Decision::RetryAt { sleep, source, .. } => {
            assert_eq!((sleep, source), (s(2.0), SleepSource::RetryAfter));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(rng.taken, 2);
    assert_eq!(st.backoff_index(), 0);
}

#[test]
fn grpc_throttling_stops_retries_once_tokens_fall_to_half() {
    let p = policy("grpc-retry", &[("max_attempts", "20")]);
    let mut b = p.new_budget(SimTime::ZERO);
    // 10 tokens: failures take them to 9, 8, 7, 6 (retry), 5 (not > 5: throttled).
    let c = call_with(&p, &mut b, Outcome::status(503), 0.0, &mut Draws::always(HALF));
    assert_eq!(c.starts.len(), 5);
    assert!(matches!(c.end, Decision::GiveUp { reason: GiveUpReason::Throttled, .. }));
}

#[test]
fn grpc_deadline_cuts_a_sleep_that_crosses_it() {
    let p = policy("grpc-retry", &[("deadline", "120ms")]);
    // 50 ms, then 100 ms would end at 150 ms: the call ends at the deadline.
    let c = call(&p, Outcome::status(503), 0.0, &mut Draws::always(HALF));
    assert_eq!(c.end, give_up(0.12, GiveUpReason::Deadline));
}

// ---- envoy, finagle -------------------------------------------------------------------

#[test]
fn envoy_one_retry_in_whole_milliseconds() {
    let p = policy("envoy", &[]);
    // random() % 25 ms: 12.5 → 12 ms.
    let c = call(&p, Outcome::status(503), 0.0, &mut Draws::always(HALF));
    assert_eq!(secs_of(&c.sleeps), [0.012]);
    assert_eq!(c.end, give_up(0.012, GiveUpReason::AttemptsExhausted { attempts: 2 }));
    // 429 is not in 5xx.
    let c = call(&p, Outcome::status(429), 0.0, &mut Draws::always(HALF));
    assert!(matches!(c.end, Decision::GiveUp { reason: GiveUpReason::Permanent(_), .. }));
    // Nominal 25, 50, 100, 200, 250 ms at r → 1.
    let p = policy("envoy", &[("max_retries", "6")]);
    let c = call(&p, Outcome::status(503), 0.0, &mut Draws::always(1.0 - 1.0 / 65536.0));
    assert_eq!(secs_of(&c.sleeps), [0.024, 0.049, 0.099, 0.199, 0.249, 0.249]);
}

#[test]
fn envoy_circuit_breaker_allows_3_outstanding_retries() {
    let p = policy("envoy", &[]);
    let mut b = p.new_budget(SimTime::ZERO);
    let o = Outcome::status(503);
    let mut calls: Vec<RetryState> = (0..4).map(|_| RetryState::new(&p, SimTime::ZERO)).collect();
    let mut rng = Draws::always(HALF);
    let decisions: Vec<Decision> = calls.iter_mut().map(|c| c.on_outcome(&p, &mut b, t(0.0), &o, &mut rng)).collect();
    assert!(decisions[..3].iter().all(|d| matches!(d, Decision::RetryAt { .. })));
    assert_eq!(decisions[3], give_up(0.0, GiveUpReason::BudgetEmpty));
}

#[test]
fn finagle_requeues_never_written_requests_20_times_without_sleeping() {
    let p = policy("finagle-budget", &[]);
    let c = call(&p, Outcome::Refused, 0.0, &mut Draws::always(HALF));
    assert_eq!(c.starts.len(), 21);
    assert!(c.sleeps.iter().all(|&x| x == SimDuration::ZERO));
    assert_eq!(c.end, give_up(0.0, GiveUpReason::RequestLimit { retries: 20 }));
    // A request that was written is not requeued.
    let c = call(&p, Outcome::status(503), 0.0, &mut Draws::always(HALF));
    assert!(matches!(c.end, Decision::GiveUp { reason: GiveUpReason::Permanent(_), .. }));
}

// ---- shared behaviour -----------------------------------------------------------------

#[test]
fn a_call_state_is_small() {
    assert!(std::mem::size_of::<RetryState>() <= 96, "{}", std::mem::size_of::<RetryState>());
}

#[test]
fn every_preset_resolves_and_is_documented() {
    for pr in presets::PRESETS {
        let p = RetryPolicyConfig::preset(pr.name).resolve().unwrap_or_else(|e| panic!("{}: {e:?}", pr.name));
        assert_eq!(p.preset.as_deref(), Some(pr.name));
        assert!(!pr.what.is_empty() && !pr.source.is_empty());
    }
    assert_eq!(presets::PRESETS.len(), 15);
}

#[test]
fn retry_after_seconds_dates_and_past_dates() {
    let p = policy("seed-loop", &[("retry_after", "replace")]);
    let mut rng = Draws::always(HALF);
    let o = Outcome::status(429).with_retry_after(RetryAfter::Seconds(10));
    let c = call(&p, o, 0.0, &mut rng);
    assert!(c.sleeps.iter().all(|&x| x == s(10.0)));
    assert_eq!(rng.taken, 0, "a hint that replaces the backoff takes no draw");
    // An HTTP date 3 s ahead of the failure.
    let mut b = p.new_budget(SimTime::ZERO);
    let mut st = RetryState::new(&p, SimTime::ZERO);
    let o = Outcome::status(503).with_retry_after(RetryAfter::Date(t(4.0)));
    assert!(matches!(
        st.on_outcome(&p, &mut b, t(1.0), &o, &mut rng),
        Decision::RetryAt { sleep, source: SleepSource::RetryAfter, .. } if sleep == s(3.0)
    ));
    // A date already past falls back to the backoff (k = 1: U(0, 2) at 1/2).
    let o = Outcome::status(503).with_retry_after(RetryAfter::Date(t(2.0)));
    assert!(matches!(
        st.on_outcome(&p, &mut b, t(5.0), &o, &mut rng),
        Decision::RetryAt { sleep, source: SleepSource::Backoff, .. } if sleep == s(1.0)
    ));
}

#[test]
fn one_draw_per_backoff_sleep_even_when_the_deadline_refuses_it() {
    let p = policy("gcs-python", &[]);
    let mut rng = Draws::always(HALF);
    let c = call(&p, Outcome::status(503), 0.0, &mut rng);
    assert_eq!(rng.taken as usize, c.sleeps.len() + 1);
}

#[test]
fn a_success_resets_a_kept_backoff_unless_the_policy_never_resets() {
    for (reset, expect) in [("true", 0.5), ("false", 4.0)] {
        let p = policy("seed-loop", &[("reset_after_success", reset), ("max_attempts", "none")]);
        let mut b = p.new_budget(SimTime::ZERO);
        let mut rng = Draws::always(HALF);
        let mut st = RetryState::new(&p, SimTime::ZERO);
        let o = Outcome::status(503);
        for i in 0..3 {
            st.on_outcome(&p, &mut b, t(f64::from(i)), &o, &mut rng);
        }
        assert_eq!(st.on_outcome(&p, &mut b, t(9.0), &Outcome::Success, &mut rng), Decision::Done);
        st.next_call(&p, t(10.0));
        match st.on_outcome(&p, &mut b, t(10.0), &o, &mut rng) {
            Decision::RetryAt { sleep, .. } => assert_eq!(sleep, s(expect), "reset = {reset}"),
            other => panic!("{other:?}"),
        }
    }
    // A give-up never resets.
    let p = policy("seed-loop", &[("max_attempts", "2")]);
    let mut b = p.new_budget(SimTime::ZERO);
    let mut rng = Draws::always(HALF);
    let mut st = RetryState::new(&p, SimTime::ZERO);
    let o = Outcome::status(503);
    st.on_outcome(&p, &mut b, t(0.0), &o, &mut rng);
    assert!(matches!(st.on_outcome(&p, &mut b, t(1.0), &o, &mut rng), Decision::GiveUp { .. }));
    st.next_call(&p, t(2.0));
    assert_eq!(st.backoff_index(), 1);
}

// ---- proptest invariants --------------------------------------------------------------

fn jitter_mode() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["none", "full", "equal", "decorrelated", "proportional", "additive", "half", "span"])
}

prop_compose! {
    /// A random policy: base 1 ms..10 s, multiplier 1..3, a cap no lower than the base,
    /// any jitter mode and either cap placement.
    fn any_policy()(
        base_ms in 1u64..10_000,
        mult in 1.0f64..3.0,
        cap_above_base_ms in 0u64..200_000,
        jitter in jitter_mode(),
        after in any::<bool>(),
        truncate in any::<bool>(),
    ) -> Vec<(String, String)> {
        let mut sets = vec![
            ("base".to_string(), format!("{base_ms}ms")),
            ("multiplier".to_string(), format!("{}", if jitter == "span" { mult.max(1.01) } else { mult })),
            ("cap".to_string(), format!("{}ms", base_ms + cap_above_base_ms)),
            ("jitter".to_string(), jitter.to_string()),
            ("cap_applies".to_string(), if after { "after-jitter" } else { "before-jitter" }.to_string()),
            ("max_attempts".to_string(), "none".to_string()),
        ];
        if truncate {
            sets.push(("truncate_to".to_string(), "1ms".to_string()));
        }
        sets
    }
}

fn resolve(sets: &[(String, String)], more: &[(&str, &str)]) -> RetryPolicy {
    // Either limit in `more` replaces the limit in `sets`; one file cannot hold both.
    let limit = |k: &str| k == "max_attempts" || k == "max_retries";
    let replaced = more.iter().any(|(k, _)| limit(k));
    let kept = sets.iter().filter(|(k, _)| !(replaced && limit(k))).map(|(k, v)| (k.as_str(), v.as_str()));
    let all: Vec<(&str, &str)> = kept.chain(more.iter().copied()).collect();
    RetryPolicyConfig::with_pairs(None, &all).resolve().unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// A cap that is promised is never exceeded: every sleep stays within the formula's
    /// bound, and within the cap itself whenever the policy calls it a hard cap.
    #[test]
    fn a_promised_cap_is_never_exceeded(sets in any_policy(), seed in any::<u64>()) {
        let p = resolve(&sets, &[("max_attempts", "40")]);
        let bound = p.sleep_bound().unwrap();
        let mut rng = crate::engine::rng::Seeds::new(seed).stream(0, 0, crate::engine::rng::Purpose::Jitter);
        let mut b = p.new_budget(SimTime::ZERO);
        let mut st = RetryState::new(&p, SimTime::ZERO);
        let mut now = SimTime::ZERO;
        while let Decision::RetryAt { at, sleep, .. } = st.on_outcome(&p, &mut b, now, &Outcome::status(503), &mut rng) {
            prop_assert!(sleep <= bound, "{sleep} > {bound}");
            if p.formula().hard_cap() {
                prop_assert!(sleep <= p.cap.unwrap());
            }
            now = at;
        }
    }

    /// The nominal delay never shrinks before a reset: without jitter the sleeps of a
    /// call, and of the next call after a give-up, never decrease.
    #[test]
    fn the_nominal_delay_never_shrinks_before_a_reset(sets in any_policy(), calls in 1usize..4) {
        let p = resolve(&sets, &[("jitter", "none"), ("max_attempts", "12")]);
        let mut rng = Draws::always(HALF);
        let mut b = p.new_budget(SimTime::ZERO);
        let mut st = RetryState::new(&p, SimTime::ZERO);
        let mut now = SimTime::ZERO;
        let mut last = SimDuration::ZERO;
        for _ in 0..calls {
            while let Decision::RetryAt { at, sleep, .. } =
                st.on_outcome(&p, &mut b, now, &Outcome::status(503), &mut rng)
            {
                prop_assert!(sleep >= last, "{sleep} < {last}");
                last = sleep;
                now = at;
            }
            st.next_call(&p, now);
        }
        prop_assert_eq!(rng.taken, 0);
    }

    /// A deadline is never overrun by more than the stop rule allows (wall clock):
    /// attempts start by the deadline (crossing, reaching, truncate, cut), or by the
    /// deadline plus one sleep (sleep-then-attempt); give-ups come by the deadline plus
    /// one attempt, plus one sleep where the rule takes it in full.
    #[test]
    fn a_deadline_is_overrun_only_as_the_rule_allows(
        sets in any_policy(),
        rule in prop::sample::select(StopRule::WORDS.to_vec()),
        deadline_ms in 1u64..600_000,
        attempt_ms in 0u64..5_000,
        seed in any::<u64>(),
    ) {
        let dl = format!("{deadline_ms}ms");
        let p = resolve(&sets, &[("deadline", &dl), ("deadline_rule", rule), ("max_attempts", "none")]);
        let d = SimDuration::from_millis(deadline_ms);
        let a = SimDuration::from_millis(attempt_ms);
        let sb = p.sleep_bound().unwrap();
        let mut rng = crate::engine::rng::Seeds::new(seed).stream(0, 1, crate::engine::rng::Purpose::Jitter);
        let mut b = p.new_budget(SimTime::ZERO);
        let mut st = RetryState::new(&p, SimTime::ZERO);
        let mut start = SimTime::ZERO;
        let rule = p.deadline_rule;
        for _ in 0..100_000 {
            let now = start + a;
            match st.on_outcome(&p, &mut b, now, &Outcome::status(503), &mut rng) {
                Decision::RetryAt { at, .. } => {
                    let e = at - SimTime::ZERO;
                    match rule {
                        // Decided before the deadline, then one sleep in full.
                        StopRule::SleepThenAttempt => prop_assert!(e < d + sb, "{rule}: attempt at {e}"),
                        StopRule::GiveUpBeforeCrossing | StopRule::Truncate => {
                            prop_assert!(e <= d, "{rule}: attempt at {e} after {d}")
                        }
                        _ => prop_assert!(e < d, "{rule}: attempt at {e} at or after {d}"),
                    }
                    start = at;
                }
                Decision::GiveUp { at, reason } => {
                    prop_assert_eq!(reason, GiveUpReason::Deadline);
                    let e = at - SimTime::ZERO;
                    let limit = match rule {
                        StopRule::SleepThenAttempt => d + sb + a,
                        StopRule::SleepThenStop => d + sb.max(a),
                        StopRule::Cut => d.max(now - SimTime::ZERO),
                        _ => d + a,
                    };
                    prop_assert!(e <= limit, "{rule}: gave up at {e}, limit {limit}");
                    return Ok(());
                }
                Decision::Done => unreachable!(),
            }
        }
        prop_assert!(false, "never gave up");
    }

    /// The attempt limit is respected exactly: an always-failing call makes exactly
    /// max_attempts attempts, or max_retries + 1.
    #[test]
    fn the_attempt_limit_is_respected_exactly(sets in any_policy(), n in 1u32..30, retries in any::<bool>()) {
        let (key, expect) = if retries { ("max_retries", n + 1) } else { ("max_attempts", n) };
        let v = n.to_string();
        let p = resolve(&sets, &[(key, &v)]);
        let c = call(&p, Outcome::Timeout { applied: false }, 0.001, &mut Draws::always(0.25));
        prop_assert_eq!(c.starts.len() as u32, expect);
        prop_assert_eq!(c.end, Decision::GiveUp { at: *c.starts.last().unwrap() + s(0.001), reason: GiveUpReason::AttemptsExhausted { attempts: expect } });
    }
}

// ---- numeric safety -----------------------------------------------------------------

/// A multiplier of 1e300 overflows f64 after two retries and any duration after one: the
/// sleeps saturate instead of wrapping, so the call's time runs to the end of simulated
/// time and stays there (never back to zero), the sleeps grow until then, and the call
/// still ends at its attempt limit. Every mode is tried, since each draws differently.
#[test]
fn a_huge_multiplier_without_a_cap_saturates_and_never_wraps() {
    for jitter in ["none", "full", "equal", "decorrelated", "proportional", "additive", "half"] {
        let sets = [("multiplier", "1e300"), ("cap", "none"), ("jitter", jitter), ("max_attempts", "400")];
        let p = RetryPolicyConfig::with_pairs(None, &sets).resolve().unwrap();
        let c = call(&p, Outcome::status(503), 0.0, &mut Draws::always(HALF));
        assert!(matches!(c.end, Decision::GiveUp { .. }), "{jitter}: {:?}", c.end);
        assert_eq!(c.starts.len(), 400, "{jitter}");
        assert!(c.starts.windows(2).all(|w| w[1] >= w[0]), "{jitter}: time went backwards");
        assert_eq!(*c.starts.last().unwrap(), SimTime::MAX, "{jitter}: saturated at the end of time");
        let before_end = c.starts.iter().take_while(|&&t| t < SimTime::MAX).count();
        let growing = &c.sleeps[..before_end];
        if jitter == "none" {
            assert!(growing.windows(2).all(|w| w[1] >= w[0]), "{jitter}: a sleep shrank: {growing:?}");
        }
    }
}
