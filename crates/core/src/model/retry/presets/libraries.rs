//! General-purpose retry loops and libraries: the seed article's loop, tenacity, backoff
//! and backon.

use super::*;

/// `seed-loop`: the seed article's Python loop.
///
/// ```python
/// for attempt in range(5):
///     try:
///         return call()
///     except TransientError:
///         if attempt == 4:
///             raise
///         time.sleep(random.uniform(0, min(30, 1 * 2 ** attempt)))
/// ```
///
/// U(0, min(30 s, 1 s·2ᵏ)); 5 attempts, no sleep after the last failure: at most
/// 1 + 2 + 4 + 8 = 15 s and on average 7.5 s of sleep. Transient errors only; no
/// Retry-After (the loop never reads it).
pub(super) fn seed_loop() -> RetryPolicyConfig {
    RetryPolicyConfig { cap: some("30s"), max_attempts: attempts(5), ..common() }
}

/// `tenacity-random-exp`: tenacity 9.2, `@retry(wait=wait_random_exponential(multiplier=1,
/// max=60), stop=stop_after_delay(120))`.
///
/// - `wait.py` `wait_exponential.__call__`: `exp = exp_base ** (attempt_number - 1)`;
///   `result = multiplier * exp`; `max(max(0, min), min(result, max))`;
///   `wait_random_exponential`: `random.uniform(min, high)` — U(0, min(2ᵏ s, 60 s)).
/// - `stop.py` `stop_after_delay`: `seconds_since_start >= max_delay`, where
///   `seconds_since_start` is `outcome_timestamp - start_time`, read at the end of the
///   failed attempt (attempt time counts). `__init__.py`
///   `_post_retry_check_actions` runs `_run_wait` **before** `_run_stop`, and a sleep is
///   only refused by the next stop check: the sleep that crosses 120 s is taken in full
///   and one more attempt is made (`sleep-then-attempt`). The draw is made even when
///   the stop then fires. `stop_before_delay(120)` (`seconds_since_start +
///   upcoming_sleep >= max_delay`) is `--set deadline_rule=give-up-before-reaching`.
/// - `retry_if_exception_type()` by default: every exception is retried (`any`).
pub(super) fn tenacity_random_exp() -> RetryPolicyConfig {
    RetryPolicyConfig {
        cap: some("60s"),
        deadline: some("120s"),
        deadline_rule: Some(StopRule::SleepThenAttempt),
        retry_on: words(&["any"]),
        ..common()
    }
}

/// `python-backoff`: backoff 2.2, `@on_exception(expo, Exception, max_time=120)`
/// (default `jitter=full_jitter`).
///
/// - `_wait_gen.py` `expo(base=2, factor=1, max_value=None)`: `factor * base ** n`,
///   capped only by `max_value` (none by default, and applied before the jitter);
///   `_jitter.py` `full_jitter(value)`: `random.uniform(0, value)` — U(0, 2ᵏ s),
///   uncapped.
/// - `_sync.py` `retry_exception`: `details["elapsed"]` is measured **before** the
///   target is called; after a failure `max_time_exceeded = elapsed >= max_time`
///   gives up; else `_common.py` `_next_wait` returns `min(seconds, max_time -
///   elapsed)`: the last sleep is truncated to what was left at the attempt's
///   *start*, so the attempt that begins at or after `max_time` is made and fails the
///   call (`truncate` on the `attempt-start` clock). `max_time` has no default in the
///   library; 120 s is the preset's choice, like its neighbours.
/// - (backoff's unreleased master returns `max_time - elapsed` without a draw when the
///   nominal value already exceeds it; 2.2 draws and truncates.)
pub(super) fn python_backoff() -> RetryPolicyConfig {
    RetryPolicyConfig {
        cap: none(),
        deadline: some("120s"),
        deadline_rule: Some(StopRule::Truncate),
        deadline_clock: Some(DeadlineClock::AttemptStart),
        retry_on: words(&["any"]),
        ..common()
    }
}

/// `backon`: backon 1.6, `ExponentialBuilder::default()`.
///
/// `backoff/exponential.rs`: `jitter: false, factor: 2.0, min_delay: 1s, max_delay:
/// Some(60s), max_times: Some(3), total_delay: None` — sleeps 1, 2, 4 s, then `None`:
/// 3 retries, 4 attempts. `next()`: the first delay is `min_delay`; later ones
/// `cur * factor` (f32) while `cur < max_delay`, then clamped to it; `with_jitter()` adds
/// `tmp_cur.mul_f32(rng.f32())` **after** the clamp — U(d, 2d), up to 120 s:
/// `--set jitter=half`. `with_total_delay(T)` stops when `cumulative_delay + tmp_cur >
/// total` (sleeps only, not wall time): `--set deadline=T` (the preset already has
/// `deadline_rule = give-up-before-crossing` and `deadline_clock = sleeps-only`).
/// `Retryable::retry` retries every error by default (`any`).
pub(super) fn backon() -> RetryPolicyConfig {
    RetryPolicyConfig {
        cap: some("60s"),
        jitter: Some(JitterMode::None),
        max_attempts: None,
        max_retries: Some(OptionalCount(Some(3))),
        deadline_rule: Some(StopRule::GiveUpBeforeCrossing),
        deadline_clock: Some(DeadlineClock::SleepsOnly),
        retry_on: words(&["any"]),
        ..common()
    }
}
