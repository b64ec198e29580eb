//! botocore's retry modes: standard (2.1 and 2.0), legacy and adaptive.

use super::*;

/// `aws-standard`: botocore's standard retry mode 2.1, the mode summaries of botocore
/// ≥ 1.44 describe.
///
/// `retries/standard.py` with `STANDARD_RETRY_MODE_VERSION == "2.1"`:
/// - `ExponentialBackoff.delay_amount`: `t_i = random() * min(base_scale *
///   2 ** (attempt_number - 1), 20)` with `_NON_THROTTLING_BASE_SCALE = 0.05` (50 ms),
///   `_THROTTLING_BASE_SCALE = 1` for throttling errors (`throttle_base = 1s`),
///   `_DYNAMODB_BASE_SCALE = 0.025`; `x-amz-retry-after` (ms) gives
///   `max(t_i, min(retry_after, t_i + 5))`: `retry_after = "max"`,
///   `retry_after_max_extra = "5s"`.
/// - `DEFAULT_MAX_ATTEMPTS = 3` (DynamoDB 4: `--set max_attempts=4 --set base=25ms`).
/// - `RetryQuotaChecker`: `_RETRY_COST_V2 = 14`, `_THROTTLING_RETRY_COST = 5` (a
///   timeout costs 14 like any other error in 2.1), `_NO_RETRY_INCREMENT = 1`; quota
///   `INITIAL_CAPACITY = 500` (`quota.py`); a success after retries refunds the last
///   acquisition only.
/// - Retryable (`TransientRetryableChecker`, `ThrottledRetryableChecker`): 500, 502,
///   503, 504, `RequestTimeout`, connection errors and timeouts, the throttling codes.
///   **Disagreement**: the newest source read here (2.1 still an internal opt-in) has
///   no bare 429 in `_TRANSIENT_STATUS_CODES`, while summaries of ≥ 1.44 say it retries
///   one. That version's source could not be read here, so its 429 is kept
///   (unverified); a 429 carrying a throttling code is retried in every version.
pub(super) fn aws_standard() -> RetryPolicyConfig {
    RetryPolicyConfig {
        base: Some(d("50ms")),
        throttle_base: some("1s"),
        cap: some("20s"),
        max_attempts: attempts(3),
        retry_on: words(&["timeout", "dropped", "refused", "500", "502", "503", "504", "429", "throttling"]),
        retry_after: Some(RetryAfterMode::Max),
        retry_after_max_extra: some("5s"),
        budget: Some(BudgetKind::AwsQuota),
        quota_capacity: Some(500),
        quota_retry_cost: Some(14),
        quota_throttle_cost: Some(5),
        quota_timeout_cost: Some(14),
        quota_success_refund: Some(1),
        ..common()
    }
}

/// `aws-standard-2025`: botocore's standard retry mode 2.0 (botocore ≤ 1.43, the
/// default through 2025).
///
/// `retries/standard.py`, version "2.0": `random() * min(2 ** (attempt_number - 1),
/// 20)` — U(0, 1)·min(2ᵏ s, 20 s) for every error; `RetryQuotaChecker`:
/// `_RETRY_COST = 5`, `_TIMEOUT_RETRY_REQUEST = 10` for `ConnectTimeoutError` /
/// `ReadTimeoutError`, 500 per client; 3 attempts; no Retry-After; 500, 502, 503, 504,
/// connection errors, timeouts and the throttling codes (no bare 429). (The first
/// standard mode, botocore 1.15, clamped after the draw: `min(random() * 2 ** attempt,
/// 20)`; not modelled.)
pub(super) fn aws_standard_2025() -> RetryPolicyConfig {
    RetryPolicyConfig {
        cap: some("20s"),
        max_attempts: attempts(3),
        retry_on: words(&["timeout", "dropped", "refused", "500", "502", "503", "504", "throttling"]),
        budget: Some(BudgetKind::AwsQuota),
        quota_capacity: Some(500),
        quota_retry_cost: Some(5),
        quota_throttle_cost: Some(5),
        quota_timeout_cost: Some(10),
        quota_success_refund: Some(1),
        ..common()
    }
}

/// `aws-legacy`: botocore's legacy mode (`data/_retry.json`, `retryhandler.py`).
///
/// `"__default__": {"max_attempts": 5, "delay": {"type": "exponential", "base": "rand",
/// "growth_factor": 2}}`; `delay_exponential`: `base = random.random()`;
/// `base * growth_factor ** (attempts - 1)` — U(0, 1)·2ᵏ s with **no cap**. Retried:
/// `general_socket_errors` (connection errors, timeouts), 500, 502, 503, 504, 509, 429
/// and the throttling codes. DynamoDB (10 attempts, `0.05·2ᵏ` without jitter):
/// `--set max_attempts=10 --set base=50ms --set jitter=none`.
pub(super) fn aws_legacy() -> RetryPolicyConfig {
    RetryPolicyConfig {
        cap: none(),
        max_attempts: attempts(5),
        retry_on: words(&["timeout", "dropped", "refused", "500", "502", "503", "504", "509", "429", "throttling"]),
        ..common()
    }
}

/// `aws-adaptive`: `aws-standard` plus the adaptive mode's client-side rate limiter,
/// **simplified** — see [`AdaptiveLimiter`](crate::model::retry::AdaptiveLimiter) for exactly what is
/// and is not modelled (`retries/adaptive.py` `ClientRateLimiter`, `bucket.py`
/// `TokenBucket` with `_MIN_RATE = 0.5`, `throttling.py` `CubicCalculator`).
pub(super) fn aws_adaptive() -> RetryPolicyConfig {
    RetryPolicyConfig {
        rate_limiter: Some(RateLimiterKind::AwsAdaptive),
        adaptive_min_fill_rate: Some(0.5),
        ..aws_standard()
    }
}
