//! `[retry.policy]` as a scenario writes it ([`RetryPolicyConfig`]) and as the state
//! machine uses it ([`RetryPolicy`]: every constant concrete, dumped in manifests).
//!
//! The keys are read flat, as the file format has them, into [`RetryPolicyConfig`]: serde's
//! `flatten` would lose `deny_unknown_fields` and the spans that place an error at its key.
//! `parts.rs` then splits them, in one place, into typed groups of keys that only make
//! sense together, each with its own defaults, checks and build: the delay curve and the
//! jitter (`backoff.rs`), the attempt limit and the deadline (`limits.rs`), Retry-After
//! (`retry_after.rs`), and each budget kind and the rate limiter (`budget.rs`).
//!
//! A config names a `preset` (see [`super::presets`]; `resolve.rs` lays the config over it)
//! and overrides any of its fields by the same names; without a preset the defaults
//! below apply. Changing a mode drops the preset's parameters of the old mode (setting
//! `jitter` drops `jitter_fraction` and `jitter_max`, `budget` drops the budget's
//! numbers, `retry_after` drops `retry_after_max_extra`, `rate_limiter` drops
//! `adaptive_min_fill_rate`, and either of `max_attempts` / `max_retries` replaces the
//! preset's limit whichever it used); a parameter that does not apply to the mode in
//! force is an error.
//!
//! | key | meaning | default (no preset) |
//! |---|---|---|
//! | `preset` | a preset's name | none |
//! | `base` | nominal delay of the first retry | 1s |
//! | `multiplier` | growth per retry, ≥ 1 | 2 |
//! | `cap` | a duration or `"none"` | 1min |
//! | `cap_applies` | `before-jitter`, `after-jitter` | before-jitter |
//! | `jitter` | `none`, `full`, `equal`, `decorrelated`, `proportional`, `additive`, `half`, `span` | full |
//! | `jitter_fraction` | proportional: ±f, in (0, 1] | 0.2 |
//! | `jitter_max` | additive: the U(0, x) added | 1s |
//! | `max_attempts` | attempts in all, or `"none"` | 5 |
//! | `max_retries` | retries after the first attempt (instead of `max_attempts`) | — |
//! | `deadline` | a duration or `"none"` | none |
//! | `deadline_rule` | see [`super::limits`] | give-up-before-crossing |
//! | `deadline_clock` | `wall`, `attempt-start`, `sleeps-only` | wall |
//! | `truncate_to` | sleeps truncated to a multiple of this (`"1ms"`), or `"none"` | none |
//! | `throttle_base` | base for throttling errors (AWS 2.1), or `"none"` | none |
//! | `reset_after_success` | a success resets a kept backoff | true |
//! | `retry_on` | conditions: `any`, `timeout`, `dropped`, `refused`, `throttling`, `4xx`, `5xx`, a status | timeout, dropped, refused, 408, 429, 5xx |
//! | `retry_non_idempotent` | retry calls that are not safe to repeat | false |
//! | `retry_after` | `ignore`, `replace`, `max` | replace |
//! | `retry_after_max_extra` | max: hint counts up to computed + this, or `"none"` | none |
//! | `retry_after_resets_backoff` | a used hint resets the backoff | false |
//! | `budget` | `none`, `aws-quota`, `grpc-throttle`, `envoy-concurrent`, `finagle` | none |
//! | `quota_capacity`, `quota_retry_cost`, `quota_throttle_cost`, `quota_timeout_cost`, `quota_success_refund` | aws-quota | 500, 5, 5, 10, 1 |
//! | `throttle_max_tokens`, `throttle_token_ratio` | grpc-throttle | 10, 0.1 |
//! | `max_concurrent_retries` | envoy-concurrent | 3 |
//! | `budget_ttl`, `budget_min_retries_per_sec`, `budget_percent_can_retry`, `budget_max_retries_per_request` | finagle | 10s, 10, 0.2, 0.2 |
//! | `rate_limiter` | `none`, `aws-adaptive` | none |
//! | `adaptive_min_fill_rate` | aws-adaptive: tokens/s floor | 0.5 |

use serde::{Deserialize, Serialize};

use super::budget::{AdaptiveLimiter, BudgetKind, BudgetPolicy, RateLimiterKind, RetryBudget};
use super::jitter::{CapApplies, Formula, Jitter, JitterMode};
use super::limits::{AttemptLimit, DeadlineClock, StopRule};
use super::outcome::{Outcome, RetryOn};
use super::retry_after::{RetryAfterMode, RetryAfterPolicy};
use crate::engine::time::{SimDuration, SimTime};
use crate::model::config_error::ConfigErrors;
use crate::model::fraction;

/// Lays the fields of `$top` that are set over those of `$base`.
macro_rules! lay {
    ($top:expr, $base:expr; $($f:ident),+ $(,)?) => { $( if $top.$f.is_some() { $base.$f = $top.$f.clone(); } )+ };
}

mod backoff;
mod budget;
mod limits;
mod parts;
mod retry_after;
mod values;

pub use backoff::{BackoffConfig, JitterConfig};
pub use budget::{
    AwsQuotaConfig, BudgetConfig, EnvoyConcurrentConfig, FinagleConfig, GrpcThrottleConfig, RateLimiterConfig,
};
pub use limits::{DeadlineConfig, LimitConfig};
pub use parts::PolicyParts;
pub use retry_after::RetryAfterConfig;
pub use values::{OptionalCount, OptionalDuration};

/// `[retry.policy]` as written: every field optional, overriding the preset's (module
/// docs for the keys and defaults).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RetryPolicyConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<SimDuration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multiplier: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cap: Option<OptionalDuration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cap_applies: Option<CapApplies>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jitter: Option<JitterMode>,
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "fraction::option")]
    pub jitter_fraction: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jitter_max: Option<SimDuration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_attempts: Option<OptionalCount>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_retries: Option<OptionalCount>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<OptionalDuration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_rule: Option<StopRule>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_clock: Option<DeadlineClock>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncate_to: Option<OptionalDuration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throttle_base: Option<OptionalDuration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reset_after_success: Option<bool>,
    /// A list of words, or one string of them separated by commas (`"timeout, 5xx"`).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "values::words")]
    pub retry_on: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_non_idempotent: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after: Option<RetryAfterMode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_max_extra: Option<OptionalDuration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_resets_backoff: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<BudgetKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quota_capacity: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quota_retry_cost: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quota_throttle_cost: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quota_timeout_cost: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quota_success_refund: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throttle_max_tokens: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throttle_token_ratio: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_concurrent_retries: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_ttl: Option<SimDuration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_min_retries_per_sec: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "fraction::option")]
    pub budget_percent_can_retry: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_max_retries_per_request: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_limiter: Option<RateLimiterKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adaptive_min_fill_rate: Option<f64>,
}

/// The resolved policy: every constant concrete. Only [`RetryPolicyConfig::resolve`]
/// makes one, so the state machine never sees an unchecked set.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[expect(
    clippy::manual_non_exhaustive,
    reason = "the private field keeps construction inside this module; #[non_exhaustive] would allow it crate-wide"
)]
pub struct RetryPolicy {
    /// The preset it started from, if any.
    pub preset: Option<String>,
    pub base: SimDuration,
    pub multiplier: f64,
    pub cap: Option<SimDuration>,
    pub cap_applies: CapApplies,
    pub jitter: Jitter,
    pub limit: AttemptLimit,
    pub deadline: Option<SimDuration>,
    pub deadline_rule: StopRule,
    pub deadline_clock: DeadlineClock,
    pub truncate_to: Option<SimDuration>,
    pub throttle_base: Option<SimDuration>,
    pub reset_after_success: bool,
    pub retry_on: RetryOn,
    pub retry_non_idempotent: bool,
    pub retry_after: RetryAfterPolicy,
    pub budget: BudgetPolicy,
    pub rate_limiter: Option<AdaptiveLimiter>,
    #[serde(skip)]
    _resolved: (),
}

impl RetryPolicy {
    /// The give-up reasons (slugs) this policy can give for calls that may fail with
    /// `failures`, in a fixed order: its limits, errors it does not retry, then what its
    /// budget can refuse. A model's metric list must be the same in every replication,
    /// so it lists the reasons the policy can give, not the ones a run happened to see.
    pub fn possible_give_ups(&self, failures: &[Outcome], not_idempotent: bool) -> Vec<&'static str> {
        let mut out = Vec::new();
        if self.limit != AttemptLimit::Unlimited {
            out.push("attempts");
        }
        if self.deadline.is_some() {
            out.push("deadline");
        }
        if failures.iter().any(|o| !self.retry_on.matches(o)) {
            out.push("permanent");
        }
        if not_idempotent && !self.retry_non_idempotent {
            out.push("not-idempotent");
        }
        out.extend(self.budget.give_ups());
        out
    }

    /// The delay formula's constants.
    pub fn formula(&self) -> Formula {
        Formula {
            base: self.base,
            multiplier: self.multiplier,
            cap: self.cap,
            cap_applies: self.cap_applies,
            jitter: self.jitter,
        }
    }

    /// A budget (and rate limiter) for one client, channel or cluster created at `now`.
    pub fn new_budget(&self, now: SimTime) -> RetryBudget {
        RetryBudget::new(&self.budget, self.rate_limiter.as_ref(), now)
    }

    /// An upper bound on any backoff sleep (a server's Retry-After aside), or `None`.
    pub fn sleep_bound(&self) -> Option<SimDuration> {
        self.formula().sleep_bound()
    }
}

/// True when `top` names a mode other than `base`'s: `base`'s parameters of its mode
/// then no longer apply.
fn switches<T: PartialEq>(top: &Option<T>, base: &Option<T>) -> bool {
    top.is_some() && top != base
}

/// A parameter set for a mode not in force.
fn only(errs: &mut ConfigErrors, key: &str, set: bool, applies: &str) {
    if set {
        errs.push(key, format!("applies to {applies} only"));
    }
}

impl RetryPolicyConfig {
    /// A config that is just a preset.
    pub fn preset(name: &str) -> Self {
        RetryPolicyConfig { preset: Some(name.to_string()), ..RetryPolicyConfig::default() }
    }

    /// The keys as written, split into their typed groups.
    pub fn parts(&self) -> PolicyParts {
        PolicyParts::from(self)
    }
}

#[cfg(test)]
impl RetryPolicyConfig {
    /// A preset (or none) with overrides by key; panics on a bad key, as tests want.
    pub(crate) fn with_pairs(preset: Option<&str>, sets: &[(&str, &str)]) -> RetryPolicyConfig {
        let base = preset.map_or(String::new(), |p| format!("preset = \"{p}\""));
        crate::model::overrides::from_pairs(&base, sets)
    }
}

#[cfg(test)]
mod tests;
