//! The keys of a shared budget and of the client-side rate limiter: each budget kind
//! (and the limiter) has its own config with its own defaults, checks and build, and a
//! parameter of a kind not in force is refused by its key.

use super::{SimDuration, only, switches};
use crate::model::config_error::ConfigErrors;
use crate::model::retry::budget::{AdaptiveLimiter, BudgetKind, BudgetPolicy, RateLimiterKind};

/// `budget = "aws-quota"`: botocore's `RetryQuotaChecker` (`retries/quota.py`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AwsQuotaConfig {
    pub capacity: Option<u32>,
    pub retry_cost: Option<u32>,
    pub throttle_cost: Option<u32>,
    pub timeout_cost: Option<u32>,
    pub success_refund: Option<u32>,
}

impl AwsQuotaConfig {
    fn keys_set(&self) -> Vec<&'static str> {
        keys_set(&[
            ("quota_capacity", self.capacity.is_some()),
            ("quota_retry_cost", self.retry_cost.is_some()),
            ("quota_throttle_cost", self.throttle_cost.is_some()),
            ("quota_timeout_cost", self.timeout_cost.is_some()),
            ("quota_success_refund", self.success_refund.is_some()),
        ])
    }

    /// botocore 2.0's constants by default: 500 per client, a retry 5, after a timeout 10.
    fn build(&self, errs: &mut ConfigErrors) -> BudgetPolicy {
        let capacity = self.capacity.unwrap_or(500);
        if capacity == 0 {
            errs.push("quota_capacity", "must be at least 1");
        }
        BudgetPolicy::AwsQuota {
            capacity,
            retry_cost: self.retry_cost.unwrap_or(5),
            throttle_cost: self.throttle_cost.unwrap_or(5),
            timeout_cost: self.timeout_cost.unwrap_or(10),
            success_refund: self.success_refund.unwrap_or(1),
        }
    }
}

/// `budget = "grpc-throttle"`: gRFC A6 retry throttling.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GrpcThrottleConfig {
    pub max_tokens: Option<f64>,
    pub token_ratio: Option<f64>,
}

impl GrpcThrottleConfig {
    fn keys_set(&self) -> Vec<&'static str> {
        keys_set(&[
            ("throttle_max_tokens", self.max_tokens.is_some()),
            ("throttle_token_ratio", self.token_ratio.is_some()),
        ])
    }

    fn build(&self, errs: &mut ConfigErrors) -> BudgetPolicy {
        let max_tokens = self.max_tokens.unwrap_or(10.0);
        let token_ratio = self.token_ratio.unwrap_or(0.1);
        // gRFC A6: maxTokens in (0, 1000], tokenRatio > 0 (three decimals kept).
        if !(max_tokens > 0.0 && max_tokens <= 1000.0) {
            errs.push("throttle_max_tokens", format!("must be greater than 0 and at most 1000 (is {max_tokens})"));
        }
        if token_ratio < 0.001 {
            errs.push("throttle_token_ratio", format!("must be at least 0.001 (is {token_ratio})"));
        }
        BudgetPolicy::GrpcThrottle { max_tokens, token_ratio }
    }
}

/// `budget = "envoy-concurrent"`: envoy's `circuit_breakers.thresholds.max_retries`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EnvoyConcurrentConfig {
    pub max_retries: Option<u32>,
}

impl EnvoyConcurrentConfig {
    fn keys_set(&self) -> Vec<&'static str> {
        keys_set(&[("max_concurrent_retries", self.max_retries.is_some())])
    }

    /// Envoy's default threshold is 3.
    fn build(&self) -> BudgetPolicy {
        BudgetPolicy::EnvoyConcurrent { max_retries: self.max_retries.unwrap_or(3) }
    }
}

/// `budget = "finagle"`: finagle's `RetryBudget.apply()`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FinagleConfig {
    pub ttl: Option<SimDuration>,
    pub min_retries_per_sec: Option<u32>,
    pub percent_can_retry: Option<f64>,
    pub max_retries_per_request: Option<f64>,
}

impl FinagleConfig {
    fn keys_set(&self) -> Vec<&'static str> {
        keys_set(&[
            ("budget_ttl", self.ttl.is_some()),
            ("budget_min_retries_per_sec", self.min_retries_per_sec.is_some()),
            ("budget_percent_can_retry", self.percent_can_retry.is_some()),
            ("budget_max_retries_per_request", self.max_retries_per_request.is_some()),
        ])
    }

    fn build(&self, errs: &mut ConfigErrors) -> BudgetPolicy {
        let secs = SimDuration::from_secs;
        let ttl = self.ttl.unwrap_or(secs(10));
        let percent = self.percent_can_retry.unwrap_or(0.2);
        let per_request = self.max_retries_per_request.unwrap_or(0.2);
        // RetryBudget.apply's requirements.
        if !(secs(1)..=secs(60)).contains(&ttl) {
            errs.push("budget_ttl", format!("must be from 1s to 1min (is {ttl})"));
        }
        if !(0.0..=1000.0).contains(&percent) {
            errs.push("budget_percent_can_retry", format!("must be from 0 to 1000 (is {percent})"));
        }
        if per_request < 0.0 {
            errs.push("budget_max_retries_per_request", "must not be negative");
        }
        BudgetPolicy::Finagle {
            ttl,
            min_retries_per_sec: self.min_retries_per_sec.unwrap_or(10),
            percent_can_retry: percent,
            max_retries_per_request: per_request,
        }
    }
}

/// `budget` and every kind's parameters as written.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BudgetConfig {
    pub kind: Option<BudgetKind>,
    pub aws_quota: AwsQuotaConfig,
    pub grpc_throttle: GrpcThrottleConfig,
    pub envoy_concurrent: EnvoyConcurrentConfig,
    pub finagle: FinagleConfig,
}

impl BudgetConfig {
    /// This laid over `base`; naming another kind drops `base`'s parameters of its own.
    pub fn over(&self, mut base: BudgetConfig) -> BudgetConfig {
        if switches(&self.kind, &base.kind) {
            base = BudgetConfig { kind: base.kind, ..BudgetConfig::default() };
        }
        lay!(self, base; kind);
        lay!(self.aws_quota, base.aws_quota; capacity, retry_cost, throttle_cost, timeout_cost, success_refund);
        lay!(self.grpc_throttle, base.grpc_throttle; max_tokens, token_ratio);
        lay!(self.envoy_concurrent, base.envoy_concurrent; max_retries);
        lay!(self.finagle, base.finagle; ttl, min_retries_per_sec, percent_can_retry, max_retries_per_request);
        base
    }

    /// The kind in force (none by default) built by its own config; a parameter of
    /// another kind is an error.
    pub fn build(&self, errs: &mut ConfigErrors) -> BudgetPolicy {
        let kind = self.kind.unwrap_or(BudgetKind::None);
        for (of, keys) in [
            (BudgetKind::AwsQuota, self.aws_quota.keys_set()),
            (BudgetKind::GrpcThrottle, self.grpc_throttle.keys_set()),
            (BudgetKind::EnvoyConcurrent, self.envoy_concurrent.keys_set()),
            (BudgetKind::Finagle, self.finagle.keys_set()),
        ] {
            for key in keys {
                only(errs, key, of != kind, &format!("budget = \"{of}\""));
            }
        }
        match kind {
            BudgetKind::None => BudgetPolicy::None,
            BudgetKind::AwsQuota => self.aws_quota.build(errs),
            BudgetKind::GrpcThrottle => self.grpc_throttle.build(errs),
            BudgetKind::EnvoyConcurrent => self.envoy_concurrent.build(),
            BudgetKind::Finagle => self.finagle.build(errs),
        }
    }
}

/// `rate_limiter` and the AWS adaptive limiter's parameter as written.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RateLimiterConfig {
    pub kind: Option<RateLimiterKind>,
    /// aws-adaptive: botocore's `_MIN_RATE`, tokens/s.
    pub min_fill_rate: Option<f64>,
}

impl RateLimiterConfig {
    /// This laid over `base`; naming another limiter drops `base`'s parameter.
    pub fn over(&self, mut base: RateLimiterConfig) -> RateLimiterConfig {
        if switches(&self.kind, &base.kind) {
            base.min_fill_rate = None;
        }
        lay!(self, base; kind, min_fill_rate);
        base
    }

    pub fn build(&self, errs: &mut ConfigErrors) -> Option<AdaptiveLimiter> {
        let kind = self.kind.unwrap_or(RateLimiterKind::None);
        only(
            errs,
            "adaptive_min_fill_rate",
            self.min_fill_rate.is_some() && kind != RateLimiterKind::AwsAdaptive,
            "rate_limiter = \"aws-adaptive\"",
        );
        match kind {
            RateLimiterKind::None => None,
            RateLimiterKind::AwsAdaptive => {
                let min_fill_rate = self.min_fill_rate.unwrap_or(0.5);
                if min_fill_rate <= 0.0 {
                    errs.push("adaptive_min_fill_rate", "must be greater than 0");
                }
                Some(AdaptiveLimiter { min_fill_rate })
            }
        }
    }
}

/// The keys of `pairs` that are set, in order.
fn keys_set(pairs: &[(&'static str, bool)]) -> Vec<&'static str> {
    pairs.iter().filter(|(_, set)| *set).map(|(key, _)| *key).collect()
}
