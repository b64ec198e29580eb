//! The one place where `[retry.policy]` as written (flat, as the file format has it) is
//! split into its typed groups, laid over a preset group by group, and built into a
//! [`RetryPolicy`].

use super::backoff::{BackoffConfig, JitterConfig};
use super::budget::{
    AwsQuotaConfig, BudgetConfig, EnvoyConcurrentConfig, FinagleConfig, GrpcThrottleConfig, RateLimiterConfig,
};
use super::limits::{DeadlineConfig, LimitConfig};
use super::retry_after::RetryAfterConfig;
use super::{OptionalDuration, RetryPolicy, RetryPolicyConfig, SimDuration};
use crate::model::config_error::ConfigErrors;
use crate::model::retry::outcome::RetryOn;

/// `[retry.policy]` in its groups of keys that only make sense together; the keys that
/// stand alone stay as written.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PolicyParts {
    pub preset: Option<String>,
    pub backoff: BackoffConfig,
    pub jitter: JitterConfig,
    pub limit: LimitConfig,
    pub deadline: DeadlineConfig,
    pub truncate_to: Option<OptionalDuration>,
    pub throttle_base: Option<OptionalDuration>,
    pub reset_after_success: Option<bool>,
    pub retry_on: Option<Vec<String>>,
    pub retry_non_idempotent: Option<bool>,
    pub retry_after: RetryAfterConfig,
    pub budget: BudgetConfig,
    pub rate_limiter: RateLimiterConfig,
}

impl From<&RetryPolicyConfig> for PolicyParts {
    fn from(c: &RetryPolicyConfig) -> Self {
        PolicyParts {
            preset: c.preset.clone(),
            backoff: BackoffConfig { base: c.base, multiplier: c.multiplier, cap: c.cap, cap_applies: c.cap_applies },
            jitter: JitterConfig { mode: c.jitter, fraction: c.jitter_fraction, max: c.jitter_max },
            limit: LimitConfig { max_attempts: c.max_attempts, max_retries: c.max_retries },
            deadline: DeadlineConfig { deadline: c.deadline, rule: c.deadline_rule, clock: c.deadline_clock },
            truncate_to: c.truncate_to,
            throttle_base: c.throttle_base,
            reset_after_success: c.reset_after_success,
            retry_on: c.retry_on.clone(),
            retry_non_idempotent: c.retry_non_idempotent,
            retry_after: RetryAfterConfig {
                mode: c.retry_after,
                max_extra: c.retry_after_max_extra,
                resets_backoff: c.retry_after_resets_backoff,
            },
            budget: BudgetConfig {
                kind: c.budget,
                aws_quota: AwsQuotaConfig {
                    capacity: c.quota_capacity,
                    retry_cost: c.quota_retry_cost,
                    throttle_cost: c.quota_throttle_cost,
                    timeout_cost: c.quota_timeout_cost,
                    success_refund: c.quota_success_refund,
                },
                grpc_throttle: GrpcThrottleConfig {
                    max_tokens: c.throttle_max_tokens,
                    token_ratio: c.throttle_token_ratio,
                },
                envoy_concurrent: EnvoyConcurrentConfig { max_retries: c.max_concurrent_retries },
                finagle: FinagleConfig {
                    ttl: c.budget_ttl,
                    min_retries_per_sec: c.budget_min_retries_per_sec,
                    percent_can_retry: c.budget_percent_can_retry,
                    max_retries_per_request: c.budget_max_retries_per_request,
                },
            },
            rate_limiter: RateLimiterConfig { kind: c.rate_limiter, min_fill_rate: c.adaptive_min_fill_rate },
        }
    }
}

impl PolicyParts {
    /// These parts laid over `base` (a preset's): every key written here wins, and a mode
    /// named here drops `base`'s parameters of its old mode.
    pub fn over(&self, base: PolicyParts) -> PolicyParts {
        let mut out = PolicyParts {
            preset: base.preset,
            backoff: self.backoff.over(base.backoff),
            jitter: self.jitter.over(base.jitter),
            limit: self.limit.over(base.limit),
            deadline: self.deadline.over(base.deadline),
            truncate_to: base.truncate_to,
            throttle_base: base.throttle_base,
            reset_after_success: base.reset_after_success,
            retry_on: base.retry_on,
            retry_non_idempotent: base.retry_non_idempotent,
            retry_after: self.retry_after.over(base.retry_after),
            budget: self.budget.over(base.budget),
            rate_limiter: self.rate_limiter.over(base.rate_limiter),
        };
        lay!(self, out; preset, truncate_to, throttle_base, reset_after_success, retry_on, retry_non_idempotent);
        out
    }

    /// Fills the defaults (the table in the module docs) and checks every group, in the
    /// order of the key reference, so that problems are listed as the keys are.
    pub fn build(&self, errs: &mut ConfigErrors) -> RetryPolicy {
        let curve = self.backoff.build(errs);
        let jitter = self.jitter.build(curve.multiplier, errs);
        let limit = self.limit.build(errs);
        let deadline = self.deadline.build(errs);
        let truncate_to = self.truncate_to.and_then(|o| o.0);
        if truncate_to == Some(SimDuration::ZERO) {
            errs.push("truncate_to", "must be greater than 0 (write \"none\" for no truncation)");
        }
        let retry_on = match &self.retry_on {
            Some(words) => RetryOn::parse(words).unwrap_or_else(|e| {
                errs.push("retry_on", e);
                RetryOn::transient()
            }),
            None => RetryOn::transient(),
        };
        let retry_after = self.retry_after.build(errs);
        let budget = self.budget.build(errs);
        let rate_limiter = self.rate_limiter.build(errs);
        RetryPolicy {
            preset: self.preset.clone(),
            base: curve.base,
            multiplier: curve.multiplier,
            cap: curve.cap,
            cap_applies: curve.cap_applies,
            jitter,
            limit,
            deadline: deadline.deadline,
            deadline_rule: deadline.rule,
            deadline_clock: deadline.clock,
            truncate_to,
            throttle_base: self.throttle_base.and_then(|o| o.0),
            reset_after_success: self.reset_after_success.unwrap_or(true),
            retry_on,
            retry_non_idempotent: self.retry_non_idempotent.unwrap_or(false),
            retry_after,
            budget,
            rate_limiter,
            _resolved: (),
        }
    }
}
