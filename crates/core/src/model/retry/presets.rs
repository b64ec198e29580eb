//! Presets: the retry behaviour of real client libraries, read from their sources at the
//! version named (`docs/retry-policies.md` has the summary table; where the source read
//! here disagrees with a library's documentation or a summary of it, the source wins and
//! the preset's doc says so).
//!
//! A preset is a complete [`RetryPolicyConfig`]: every field is set, so changing a
//! default elsewhere never changes a preset. A scenario or `--set` overrides any field
//! by its name (`preset = "gcs-python"` then `deadline = "30s"`).
//!
//! k is the retry index from 0 (the first sleep is k = 0); U(a, b) a uniform draw.

use super::budget::{BudgetKind, RateLimiterKind};
use super::config::{OptionalCount, OptionalDuration, RetryPolicyConfig};
use super::jitter::{CapApplies, JitterMode};
use super::limits::{DeadlineClock, StopRule};
use super::retry_after::RetryAfterMode;
use crate::engine::time::SimDuration;

/// A named library behaviour.
#[derive(Clone, Copy, Debug)]
pub struct Preset {
    /// The library, its mode and the versions whose behaviour it reproduces.
    pub name: &'static str,
    /// Earlier names, still accepted wherever a preset is named, so that existing
    /// scenarios keep working (and keep their results: the name is kept as written).
    pub aliases: &'static [&'static str],
    /// One line: what it is.
    pub what: &'static str,
    /// Where the facts were read: repository, file, version.
    pub source: &'static str,
    build: fn() -> RetryPolicyConfig,
}

impl Preset {
    /// The preset's complete config (`preset` itself left unset).
    pub fn config(&self) -> RetryPolicyConfig {
        (self.build)()
    }
}

/// Every preset, in the order `backoffsim presets` lists them.
pub const PRESETS: &[Preset] = &[
    Preset {
        name: "seed-loop",
        aliases: &[],
        what: "the seed article's Python loop",
        source: "the article's loop: 5 tries, sleep uniform(0, min(30, 1 * 2**attempt))",
        build: seed_loop,
    },
    Preset {
        name: "gcs-python-api-core-2.11+",
        aliases: &["gcs-python"],
        what: "Cloud Storage Python (api-core >= 2.11)",
        source: "googleapis/python-api-core google/api_core/retry/retry_base.py, retry_unary.py",
        build: gcs_python,
    },
    Preset {
        name: "gcs-python-api-core-pre-2.11",
        aliases: &["gcs-python-legacy"],
        what: "Cloud Storage Python (api-core <= 2.10)",
        source: "googleapis/python-api-core google/api_core/retry.py (<= 2.10)",
        build: gcs_python_legacy,
    },
    Preset {
        name: "gcs-cpp-limited-time",
        aliases: &["gcs-cpp"],
        what: "Cloud Storage C++ (google-cloud-cpp)",
        source: "googleapis/google-cloud-cpp google/cloud/internal/backoff_policy.cc, retry_policy.h, storage/client_options.cc",
        build: gcs_cpp,
    },
    Preset {
        name: "gcloud-storage-528",
        aliases: &["gcloud"],
        what: "gcloud storage transfers (cli 528)",
        source: "google-cloud-cli googlecloudsdk/core/util/retry.py, command_lib/storage/retry_util.py",
        build: gcloud,
    },
    Preset {
        name: "botocore-standard-1.44+",
        aliases: &["aws-standard"],
        what: "AWS standard mode 2.1 (botocore >= 1.44)",
        source: "boto/botocore botocore/retries/standard.py (STANDARD_RETRY_MODE_VERSION 2.1), quota.py",
        build: aws_standard,
    },
    Preset {
        name: "botocore-standard-pre-1.44",
        aliases: &["aws-standard-2025"],
        what: "AWS standard mode 2.0 (botocore <= 1.43)",
        source: "boto/botocore botocore/retries/standard.py (STANDARD_RETRY_MODE_VERSION 2.0), quota.py",
        build: aws_standard_2025,
    },
    Preset {
        name: "botocore-legacy",
        aliases: &["aws-legacy"],
        what: "AWS legacy mode (botocore _retry.json)",
        source: "boto/botocore botocore/data/_retry.json, botocore/retryhandler.py",
        build: aws_legacy,
    },
    Preset {
        name: "botocore-adaptive-1.44+",
        aliases: &["aws-adaptive"],
        what: "AWS adaptive mode (rate limiter simplified)",
        source: "boto/botocore botocore/retries/adaptive.py, bucket.py, throttling.py",
        build: aws_adaptive,
    },
    Preset {
        name: "tenacity-random-exp-9.2",
        aliases: &["tenacity-random-exp"],
        what: "tenacity 9.2 random exponential, 120 s",
        source: "jd/tenacity tenacity/wait.py, stop.py, __init__.py",
        build: tenacity_random_exp,
    },
    Preset {
        name: "backoff-expo-2.2",
        aliases: &["python-backoff"],
        what: "backoff 2.2 expo + full jitter, 120 s",
        source: "litl/backoff backoff/_wait_gen.py, _jitter.py, _sync.py, _common.py (2.2)",
        build: python_backoff,
    },
    Preset {
        name: "backon-exponential-1.6",
        aliases: &["backon"],
        what: "backon 1.6 ExponentialBuilder::default()",
        source: "Xuanwo/backon backon/src/backoff/exponential.rs",
        build: backon,
    },
    Preset {
        name: "grpc-java-retry-a6",
        aliases: &["grpc-retry"],
        what: "gRPC retries, gRFC A6 example (grpc-java)",
        source: "grpc/proposal A6-client-retries.md; grpc/grpc-java core/src/main/java/io/grpc/internal/RetriableStream.java",
        build: grpc_retry,
    },
    Preset {
        name: "envoy-router-5xx",
        aliases: &["envoy"],
        what: "envoy router, retry_on 5xx, defaults",
        source: "envoyproxy/envoy source/common/common/backoff_strategy.cc, source/common/router/retry_state_impl.cc",
        build: envoy,
    },
    Preset {
        name: "finagle-requeue-budget",
        aliases: &["finagle-budget"],
        what: "finagle requeues, default RetryBudget",
        source: "twitter/finagle finagle-core/.../service/RetryBudget.scala, RequeueFilter.scala, Retries.scala",
        build: finagle_budget,
    },
];

/// The preset `name` names, by its name or an alias.
pub fn find(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name == name || p.aliases.contains(&name))
}

pub fn names() -> Vec<&'static str> {
    PRESETS.iter().map(|p| p.name).collect()
}

/// Every name a preset answers to, aliases included: what a typo is matched against.
pub fn all_names() -> Vec<&'static str> {
    PRESETS.iter().flat_map(|p| std::iter::once(p.name).chain(p.aliases.iter().copied())).collect()
}

/// What is said of a name no preset answers to: the nearest name or alias (as the
/// preset's name), then the names.
pub fn unknown(name: &str) -> String {
    let mut m = format!("unknown preset `{name}`");
    if let Some(near) = crate::suggest::nearest(name, all_names()).and_then(find) {
        m += &format!("; did you mean `{}`?", near.name);
    }
    m + &format!(" (known: {}); `backoffsim presets` describes them", names().join(", "))
}

fn d(text: &str) -> SimDuration {
    SimDuration::parse(text).expect("a literal duration")
}

fn some(text: &str) -> Option<OptionalDuration> {
    Some(OptionalDuration(Some(d(text))))
}

fn none() -> Option<OptionalDuration> {
    Some(OptionalDuration(None))
}

fn attempts(n: u32) -> Option<OptionalCount> {
    Some(OptionalCount(Some(n)))
}

fn unlimited() -> Option<OptionalCount> {
    Some(OptionalCount(None))
}

fn words(list: &[&str]) -> Option<Vec<String>> {
    Some(list.iter().map(|w| w.to_string()).collect())
}

const TRANSIENT: &[&str] = &["timeout", "dropped", "refused", "408", "429", "5xx"];

/// Every field explicit, so that a preset never inherits a default by accident.
fn common() -> RetryPolicyConfig {
    RetryPolicyConfig {
        preset: None,
        base: Some(d("1s")),
        multiplier: Some(2.0),
        cap: none(),
        cap_applies: Some(CapApplies::BeforeJitter),
        jitter: Some(JitterMode::Full),
        jitter_fraction: None,
        jitter_max: None,
        max_attempts: unlimited(),
        max_retries: None,
        deadline: none(),
        deadline_rule: Some(StopRule::GiveUpBeforeCrossing),
        deadline_clock: Some(DeadlineClock::Wall),
        truncate_to: none(),
        throttle_base: none(),
        reset_after_success: Some(true),
        retry_on: words(TRANSIENT),
        retry_non_idempotent: Some(false),
        retry_after: Some(RetryAfterMode::Ignore),
        retry_after_max_extra: None,
        retry_after_resets_backoff: Some(false),
        budget: Some(BudgetKind::None),
        quota_capacity: None,
        quota_retry_cost: None,
        quota_throttle_cost: None,
        quota_timeout_cost: None,
        quota_success_refund: None,
        throttle_max_tokens: None,
        throttle_token_ratio: None,
        max_concurrent_retries: None,
        budget_ttl: None,
        budget_min_retries_per_sec: None,
        budget_percent_can_retry: None,
        budget_max_retries_per_request: None,
        rate_limiter: Some(RateLimiterKind::None),
        adaptive_min_fill_rate: None,
    }
}

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
fn seed_loop() -> RetryPolicyConfig {
    RetryPolicyConfig { cap: some("30s"), max_attempts: attempts(5), ..common() }
}

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
///   [`Idempotency::Conditional`](super::Idempotency::Conditional). Retry-After is not read.
fn gcs_python() -> RetryPolicyConfig {
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
fn gcs_python_legacy() -> RetryPolicyConfig {
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
fn gcs_cpp() -> RetryPolicyConfig {
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
fn gcloud() -> RetryPolicyConfig {
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
fn aws_standard() -> RetryPolicyConfig {
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
fn aws_standard_2025() -> RetryPolicyConfig {
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
fn aws_legacy() -> RetryPolicyConfig {
    RetryPolicyConfig {
        cap: none(),
        max_attempts: attempts(5),
        retry_on: words(&["timeout", "dropped", "refused", "500", "502", "503", "504", "509", "429", "throttling"]),
        ..common()
    }
}

/// `aws-adaptive`: `aws-standard` plus the adaptive mode's client-side rate limiter,
/// **simplified** — see [`AdaptiveLimiter`](super::AdaptiveLimiter) for exactly what is
/// and is not modelled (`retries/adaptive.py` `ClientRateLimiter`, `bucket.py`
/// `TokenBucket` with `_MIN_RATE = 0.5`, `throttling.py` `CubicCalculator`).
fn aws_adaptive() -> RetryPolicyConfig {
    RetryPolicyConfig {
        rate_limiter: Some(RateLimiterKind::AwsAdaptive),
        adaptive_min_fill_rate: Some(0.5),
        ..aws_standard()
    }
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
fn tenacity_random_exp() -> RetryPolicyConfig {
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
fn python_backoff() -> RetryPolicyConfig {
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
fn backon() -> RetryPolicyConfig {
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
///   `retry_after_resets_backoff = true`; send it as [`RetryAfter::Millis`](super::RetryAfter::Millis)).
/// - Throttling: `isThrottled = !throttle.onQualifiedFailureThenCheckIsAboveThreshold()`
///   for every retryable failure, before `maxAttempts > previousAttempts + 1` is checked.
/// - `maxAttempts` is the total, clamped to 5 by gRPC; the preset refuses nothing, so
///   stay at or below 5 to be faithful. The call deadline spans all attempts
///   (`deadline_rule = cut`; there is no default deadline). UNAVAILABLE is modelled as
///   503 and as dropped or refused connections.
/// - grpc core differs: `cur·U(0.8, 1.2)` with `cur = min(cur·mult, max)` in integer
///   ms: `--set jitter=proportional --set jitter_fraction=0.2 --set truncate_to=1ms`.
fn grpc_retry() -> RetryPolicyConfig {
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
fn envoy() -> RetryPolicyConfig {
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
fn finagle_budget() -> RetryPolicyConfig {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_earlier_name_is_an_alias_of_the_same_behaviour() {
        for (old, new) in [
            ("gcs-python", "gcs-python-api-core-2.11+"),
            ("gcs-python-legacy", "gcs-python-api-core-pre-2.11"),
            ("aws-standard", "botocore-standard-1.44+"),
            ("aws-standard-2025", "botocore-standard-pre-1.44"),
            ("aws-adaptive", "botocore-adaptive-1.44+"),
        ] {
            assert_eq!(find(old).map(|p| p.name), Some(new), "{old}");
        }
        for p in PRESETS {
            for a in p.aliases {
                assert_eq!(find(a).map(|q| q.config()), Some(p.config()), "{a}");
            }
        }
    }

    #[test]
    fn names_and_aliases_are_unique_and_say_the_library_first() {
        let all = all_names();
        let mut sorted = all.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), all.len(), "{all:?}");
        // The botocore presets name the STANDARD_RETRY_MODE_VERSION's botocore range
        // (2.1 from 1.44, 2.0 before), read in botocore/retries/standard.py.
        assert!(find("botocore-standard-1.44+").unwrap().what.contains("botocore >= 1.44"));
        assert!(find("botocore-standard-pre-1.44").unwrap().what.contains("botocore <= 1.43"));
    }

    #[test]
    fn an_unknown_name_points_to_the_preset_a_near_alias_names() {
        let m = unknown("aws-standrd");
        assert!(m.starts_with("unknown preset `aws-standrd`; did you mean `botocore-standard-1.44+`?"), "{m}");
        assert!(m.ends_with("`backoffsim presets` describes them"), "{m}");
        assert!(!unknown("banana").contains("did you mean"));
    }
}
