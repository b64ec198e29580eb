//! Google Cloud clients: Cloud Storage through python-api-core and google-cloud-cpp, and the
//! gcloud CLI's transfers.

use super::*;

/// `gcs-python`: google-cloud-storage 3.x on google-api-core ≥ 2.11.
///
/// - `retry_base.py` `exponential_sleep_generator(initial, maximum, multiplier)`:
///   `delay = min(initial, maximum)`; `yield random.uniform(0.0, delay)`;
///   `delay = min(delay * multiplier, maximum)` — U(0, min(1 s·2ᵏ, 60 s)).
///   `_DEFAULT_INITIAL_DELAY = 1.0`, `_DEFAULT_MAXIMUM_DELAY = 60.0`,
///   `_DEFAULT_DELAY_MULTIPLIER = 2.0`, `_DEFAULT_DEADLINE = 60.0 * 2.0`.
/// - `retry_unary.py` `retry_target` / `retry_base.py` `_retry_error_helper`: the
///   deadline is `time.monotonic() + timeout` taken when the call starts (attempt time
///   counts); after a retryable failure the next sleep is drawn, and
///   `if deadline is not None and time.monotonic() + next_sleep > deadline` the call
///   gives up with RetryError **without sleeping**.
/// - google-cloud-storage `retry.py` `_should_retry`: 408, 429, 500, 502, 503, 504,
///   connection errors and timeouts. Conditionally idempotent mutations
///   (generation/metageneration/etag) are retried only when the precondition is given:
///   [`Idempotency::Conditional`](crate::model::retry::Idempotency::Conditional). Retry-After is not read.
pub(super) fn gcs_python() -> RetryPolicyConfig {
    RetryPolicyConfig {
        cap: some("60s"),
        deadline: some("120s"),
        deadline_rule: Some(StopRule::GiveUpBeforeCrossing),
        retry_on: words(&["timeout", "dropped", "refused", "408", "429", "500", "502", "503", "504"]),
        ..common()
    }
}

/// `gcs-python-legacy`: google-api-core ≤ 2.10 (`google/api_core/retry.py`).
///
/// - `exponential_sleep_generator`: `delay = initial`; `yield min(random.uniform(0.0,
///   delay * 2.0), maximum)`; `delay = delay * multiplier` — min(U(0, 2·1 s·2ᵏ), 60 s),
///   the nominal delay growing without a cap and the cap applied after the draw (so
///   draws pile up at 60 s). Modelled as full jitter on a base of **2 s** (the same
///   single draw: U(0, 2·delay) with delay = 1 s·2ᵏ), cap after jitter.
/// - `retry_target`: `deadline_datetime = utcnow() + deadline` at the call's start;
///   after a failure `if deadline_datetime <= now: raise RetryError`, else
///   `sleep = min(time_to_deadline, sleep)`: the last sleep is truncated to the
///   deadline and one more attempt is made at it.
pub(super) fn gcs_python_legacy() -> RetryPolicyConfig {
    RetryPolicyConfig {
        base: Some(d("2s")),
        cap: some("60s"),
        cap_applies: Some(CapApplies::AfterJitter),
        deadline: some("120s"),
        deadline_rule: Some(StopRule::Truncate),
        ..gcs_python()
    }
}

/// `gcs-cpp`: google-cloud-cpp's storage client.
///
/// - `storage/client_options.cc`: `LimitedTimeRetryPolicy(STORAGE_CLIENT_DEFAULT_MAXIMUM_RETRY_PERIOD
///   = minutes(15))`, `ExponentialBackoffPolicy(STORAGE_CLIENT_DEFAULT_INITIAL_BACKOFF_DELAY
///   = seconds(1), ..._MAXIMUM_BACKOFF_DELAY = minutes(5), ..._BACKOFF_SCALING = 2.0)`,
///   `AlwaysRetryIdempotencyPolicy`.
/// - `internal/backoff_policy.{h,cc}`: the range starts at [initial, scaling·initial)
///   = [1 s, 2 s); each `OnCompletion` draws `uniform_real_distribution(start, end)` in
///   double microseconds, then `start = end; end *= scaling`; once `end >= maximum` the
///   range is pinned to [max(maximum/scaling, initial), maximum] = [150 s, 300 s]. The
///   result is `duration_cast<milliseconds>`: truncated to whole ms. Jitter `span`,
///   `truncate_to = 1ms`.
/// - `internal/retry_policy.h`: `IsExhausted()` is `now >= deadline`, the deadline fixed
///   when the policy is cloned for the call. The loop (`storage/internal/retry_client.cc`
///   `MakeCall`): attempt; on failure give up if non-idempotent, if permanent, or if
///   `OnFailure` finds the policy exhausted; otherwise `sleep_for(delay)` in full and go
///   round `while (!retry_policy.IsExhausted())` — a sleep that crosses 15 min is taken
///   in full (up to 300 s over) and no attempt follows: `sleep-then-stop`.
/// - `StatusTraits::IsPermanentFailure`: retryable are kDeadlineExceeded, kInternal,
///   kResourceExhausted, kUnavailable; `rest_internal::MapHttpCodeToStatus` maps 408,
///   429, 500, 502, 503 to kUnavailable and every other 5xx to kInternal, so: timeouts,
///   connection errors, 408, 429, 5xx.
/// - Every operation is retried, non-idempotent ones included
///   (`AlwaysRetryIdempotencyPolicy`); `--set retry_non_idempotent=false` is the
///   strict policy.
pub(super) fn gcs_cpp() -> RetryPolicyConfig {
    RetryPolicyConfig {
        cap: some("5min"),
        jitter: Some(JitterMode::Span),
        truncate_to: some("1ms"),
        deadline: some("15min"),
        deadline_rule: Some(StopRule::SleepThenStop),
        retry_non_idempotent: Some(true),
        ..common()
    }
}

/// `gcloud`: `gcloud storage` transfers, google-cloud-cli 528.
///
/// - `command_lib/storage/retry_util.py` `retryer`: `retry.Retryer(max_retrials=
///   storage/max_retries, wait_ceiling_ms=storage/max_retry_delay·1000,
///   exponential_sleep_multiplier=storage/exponential_sleep_multiplier)
///   .RetryOnException(..., sleep_ms=storage/base_retry_delay·1000)`; the properties'
///   defaults are 23 retries, 32 s ceiling, multiplier 2, base 1 s (the docs' "32
///   retries" is the 32 s ceiling).
/// - `core/util/retry.py` `Retryer._GetTimeToWait(last_retrial, sleep_ms)`:
///   `wait_time_ms *= multiplier ** last_retrial`; `wait_time_ms += random.random() *
///   jitter_ms` (`_DEFAULT_JITTER_MS = 1000`); `wait_time_ms = min(wait_time_ms,
///   wait_ceiling_ms)` — min(1000·2ᵏ + U(0, 1000), 32000) ms: additive jitter, cap after
///   it (so from k = 5 on every sleep is exactly 32 s).
/// - `RetryOnResult`: `_RaiseIfStop` raises once `max_retrials <= state.retrial`:
///   23 retries, 24 attempts. No deadline (`max_wait_ms` unset).
pub(super) fn gcloud() -> RetryPolicyConfig {
    RetryPolicyConfig {
        cap: some("32s"),
        cap_applies: Some(CapApplies::AfterJitter),
        jitter: Some(JitterMode::Additive),
        jitter_max: Some(d("1s")),
        max_attempts: None,
        max_retries: Some(OptionalCount(Some(23))),
        ..common()
    }
}
