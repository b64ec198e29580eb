//! RPC stacks and proxies: gRPC's retry policy, envoy's router and finagle's requeues.

use super::*;

/// `grpc-retry`: gRFC A6 as written, which grpc-java implements, with A6's example
/// `retryPolicy` (`maxAttempts: 4, initialBackoff: 0.1s, maxBackoff: 1s,
/// backoffMultiplier: 2, retryableStatusCodes: [UNAVAILABLE]`) and `retryThrottling`
/// (`maxTokens: 10, tokenRatio: 0.1`); gRPC has no default policy and no retries
/// unless configured.
///
/// - A6: "the n-th attempt will occur at random(0, min(initialBackoff *
///   backoffMultiplier**(n-1), maxBackoff))". grpc-java `RetriableStream`:
///   `backoffNanos = (long) (nextBackoffIntervalNanos * random.nextDouble())`;
///   `nextBackoffIntervalNanos = Math.min((long) (nextBackoffIntervalNanos *
///   backoffMultiplier), maxBackoffNanos)`.
/// - Pushback `grpc-retry-pushback-ms` replaces the delay and resets
///   `nextBackoffIntervalNanos = initialBackoffNanos` (`retry_after = replace`,
///   `retry_after_resets_backoff = true`; send it as [`RetryAfter::Millis`](crate::model::retry::RetryAfter::Millis)).
/// - Throttling: `isThrottled = !throttle.onQualifiedFailureThenCheckIsAboveThreshold()`
///   for every retryable failure, before `maxAttempts > previousAttempts + 1` is checked.
/// - `maxAttempts` is the total, clamped to 5 by gRPC; the preset refuses nothing, so
///   stay at or below 5 to be faithful. The call deadline spans all attempts
///   (`deadline_rule = cut`; there is no default deadline). UNAVAILABLE is modelled as
///   503 and as dropped or refused connections.
/// - grpc core differs: `cur·U(0.8, 1.2)` with `cur = min(cur·mult, max)` in integer
///   ms: `--set jitter=proportional --set jitter_fraction=0.2 --set truncate_to=1ms`.
pub(super) fn grpc_retry() -> RetryPolicyConfig {
    RetryPolicyConfig {
        base: Some(d("100ms")),
        cap: some("1s"),
        max_attempts: attempts(4),
        deadline_rule: Some(StopRule::Cut),
        retry_on: words(&["503", "dropped", "refused"]),
        retry_after: Some(RetryAfterMode::Replace),
        retry_after_resets_backoff: Some(true),
        budget: Some(BudgetKind::GrpcThrottle),
        throttle_max_tokens: Some(10.0),
        throttle_token_ratio: Some(0.1),
        ..common()
    }
}

/// `envoy`: the router filter with `retry_on: 5xx`, default `retry_back_off` and
/// circuit breakers.
///
/// - `common/backoff_strategy.cc` `JitteredExponentialBackOffStrategy::nextBackOffMs`:
///   `backoff = next_interval_`; `next_interval_ = next_interval_ < doubling_limit_ ?
///   next_interval_ * 2 : max_interval_`; `return random_.random() % backoff` — an
///   integer number of ms in [0, 25·2ᵏ), the interval capped at `max_interval` (default
///   10 × base = 250 ms): full jitter, `truncate_to = 1ms` (the same distribution as the
///   modulo of a 64-bit draw, up to its negligible bias). (Older envoy documented
///   [0, (2ᴺ − 1)·25) ms; not modelled.)
/// - `num_retries` defaults to 1 (2 attempts). The route timeout (default 15 s) spans
///   the request and its retries: `deadline = 15s`, `cut`.
/// - `5xx`: any 5xx, resets and connect failures (not 408 or 429).
/// - Circuit breaker `max_retries` = 3 outstanding retries per cluster
///   (`envoy-concurrent`); the optional `retry_budget` (20 % of active requests, at
///   least 3) needs the active-request count and is not modelled.
pub(super) fn envoy() -> RetryPolicyConfig {
    RetryPolicyConfig {
        base: Some(d("25ms")),
        cap: some("250ms"),
        truncate_to: some("1ms"),
        max_attempts: None,
        max_retries: Some(OptionalCount(Some(1))),
        deadline: some("15s"),
        deadline_rule: Some(StopRule::Cut),
        retry_on: words(&["5xx", "dropped", "refused"]),
        budget: Some(BudgetKind::EnvoyConcurrent),
        max_concurrent_retries: Some(3),
        ..common()
    }
}

/// `finagle-budget`: finagle's automatic requeues under the default `RetryBudget()`.
///
/// - `Retries.scala`: `Budget.default = Budget(RetryBudget(), emptyBackoffSchedule)`
///   with `emptyBackoffSchedule = Backoff.constant(Duration.Zero)`: no sleep between
///   requeues; `MaxRequeuesPerReq = 0.2`.
/// - `RetryBudget.scala` `apply()`: `apply(10.seconds, 10, 0.2)`; deposit 1000,
///   withdrawal 1000/0.2 = 5000, reserve `minRetriesPerSec · ttl · withdrawal`.
/// - `RequeueFilter.scala`: `retryBudget.deposit()`;
///   `maxRetries = ceil(maxRetriesPerReq * retryBudget.balance)`; a failure is requeued
///   only if it is `Requeueable` (`RetryableWriteException`: never written — `refused`
///   here) and `retriesRemaining > 0 && retryBudget.tryWithdraw()`. A fresh client's
///   request may be requeued 20 times (balance 100).
pub(super) fn finagle_budget() -> RetryPolicyConfig {
    RetryPolicyConfig {
        base: Some(SimDuration::ZERO),
        multiplier: Some(1.0),
        cap: none(),
        jitter: Some(JitterMode::None),
        retry_on: words(&["refused"]),
        budget: Some(BudgetKind::Finagle),
        budget_ttl: Some(d("10s")),
        budget_min_retries_per_sec: Some(10),
        budget_percent_can_retry: Some(0.2),
        budget_max_retries_per_request: Some(0.2),
        ..common()
    }
}
