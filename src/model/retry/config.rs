//! `[retry.policy]` as a scenario writes it ([`RetryPolicyConfig`]) and as the state
//! machine uses it ([`RetryPolicy`]: every constant concrete, dumped in manifests).
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

use crate::model::config_error::ConfigErrors;
use crate::model::fraction;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::budget::{AdaptiveLimiter, BudgetKind, BudgetPolicy, RateLimiterKind, RetryBudget};
use super::jitter::{CapApplies, Formula, Jitter, JitterMode};
use super::limits::{AttemptLimit, DeadlineClock, StopRule};
use super::outcome::{Outcome, RetryOn};
use super::retry_after::{RetryAfterMode, RetryAfterPolicy};
use crate::engine::time::{SimDuration, SimTime};

/// A duration, or `"none"` for no such limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OptionalDuration(pub Option<SimDuration>);

/// A whole number, or `"none"` for no limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OptionalCount(pub Option<u32>);

impl OptionalDuration {
    pub fn parse(v: &str) -> Result<Self, String> {
        match v.trim() {
            "none" => Ok(OptionalDuration(None)),
            d => SimDuration::parse(d).map(|d| OptionalDuration(Some(d))),
        }
    }
}

impl OptionalCount {
    pub fn parse(v: &str) -> Result<Self, String> {
        match v.trim() {
            "none" => Ok(OptionalCount(None)),
            n => n
                .parse::<u32>()
                .map(|n| OptionalCount(Some(n)))
                .map_err(|_| format!("`{n}` is not a whole number or \"none\"")),
        }
    }
}

impl fmt::Display for OptionalDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(d) => write!(f, "{d}"),
            None => f.write_str("none"),
        }
    }
}

impl Serialize for OptionalDuration {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for OptionalDuration {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = OptionalDuration;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a duration with a unit, e.g. \"60s\", or \"none\"")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<OptionalDuration, E> {
                OptionalDuration::parse(v).map_err(E::custom)
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<OptionalDuration, E> {
                Err(E::custom(format!(
                    "a bare number ({v}) is not a duration: write it with a unit, e.g. \"{v}s\", or \"none\""
                )))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<OptionalDuration, E> {
                self.visit_i64(v as i64)
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<OptionalDuration, E> {
                Err(E::custom(format!(
                    "a bare number ({v}) is not a duration: write it with a unit, e.g. \"{v}s\", or \"none\""
                )))
            }
        }
        d.deserialize_any(V)
    }
}

impl Serialize for OptionalCount {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Some(n) => s.serialize_u32(n),
            None => s.serialize_str("none"),
        }
    }
}

impl<'de> Deserialize<'de> for OptionalCount {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = OptionalCount;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a whole number, or \"none\"")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<OptionalCount, E> {
                match v {
                    "none" => Ok(OptionalCount(None)),
                    _ => Err(E::custom(format!("`{v}` is not a count: write a whole number (e.g. 5) or \"none\""))),
                }
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<OptionalCount, E> {
                u32::try_from(v)
                    .map(|n| OptionalCount(Some(n)))
                    .map_err(|_| E::custom(format!("{v} is not a whole number from 0 to {}", u32::MAX)))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<OptionalCount, E> {
                u32::try_from(v)
                    .map(|n| OptionalCount(Some(n)))
                    .map_err(|_| E::custom(format!("{v} is not a whole number from 0 to {}", u32::MAX)))
            }
        }
        d.deserialize_any(V)
    }
}

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
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "words")]
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

fn only(errs: &mut ConfigErrors, key: &str, set: bool, applies: &str) {
    if set {
        errs.push(key, format!("applies to {applies} only"));
    }
}

/// `retry_on` as a list of words or one comma-separated string of them, so that
/// `--set retry_on=timeout,5xx` needs no TOML array.
fn words<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<String>>, D::Error> {
    struct Words;
    impl<'de> serde::de::Visitor<'de> for Words {
        type Value = Vec<String>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a list of conditions such as [\"timeout\", \"5xx\"], or one string \"timeout, 5xx\"")
        }
        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Vec<String>, E> {
            Ok(v.split(',').map(|w| w.trim().to_string()).filter(|w| !w.is_empty()).collect())
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<String>, A::Error> {
            let mut words = Vec::new();
            while let Some(w) = seq.next_element::<String>()? {
                words.push(w);
            }
            Ok(words)
        }
    }
    d.deserialize_any(Words).map(Some)
}

impl RetryPolicyConfig {
    /// A config that is just a preset.
    pub fn preset(name: &str) -> Self {
        RetryPolicyConfig { preset: Some(name.to_string()), ..RetryPolicyConfig::default() }
    }

    /// This config laid over `base` (a preset's): every field set here wins, and a mode
    /// set here drops `base`'s parameters of its old mode.
    pub(super) fn over(&self, mut base: RetryPolicyConfig) -> RetryPolicyConfig {
        let top = self;
        if top.max_attempts.is_some() || top.max_retries.is_some() {
            base.max_attempts = None;
            base.max_retries = None;
        }
        if top.jitter.is_some() && top.jitter != base.jitter {
            base.jitter_fraction = None;
            base.jitter_max = None;
        }
        if top.budget.is_some() && top.budget != base.budget {
            base.quota_capacity = None;
            base.quota_retry_cost = None;
            base.quota_throttle_cost = None;
            base.quota_timeout_cost = None;
            base.quota_success_refund = None;
            base.throttle_max_tokens = None;
            base.throttle_token_ratio = None;
            base.max_concurrent_retries = None;
            base.budget_ttl = None;
            base.budget_min_retries_per_sec = None;
            base.budget_percent_can_retry = None;
            base.budget_max_retries_per_request = None;
        }
        if top.rate_limiter.is_some() && top.rate_limiter != base.rate_limiter {
            base.adaptive_min_fill_rate = None;
        }
        if top.retry_after.is_some() && top.retry_after != base.retry_after {
            base.retry_after_max_extra = None;
        }
        macro_rules! lay {
            ($($f:ident),+ $(,)?) => { $( if top.$f.is_some() { base.$f = top.$f.clone(); } )+ };
        }
        lay!(
            preset,
            base,
            multiplier,
            cap,
            cap_applies,
            jitter,
            jitter_fraction,
            jitter_max,
            max_attempts,
            max_retries,
            deadline,
            deadline_rule,
            deadline_clock,
            truncate_to,
            throttle_base,
            reset_after_success,
            retry_on,
            retry_non_idempotent,
            retry_after,
            retry_after_max_extra,
            retry_after_resets_backoff,
            budget,
            quota_capacity,
            quota_retry_cost,
            quota_throttle_cost,
            quota_timeout_cost,
            quota_success_refund,
            throttle_max_tokens,
            throttle_token_ratio,
            max_concurrent_retries,
            budget_ttl,
            budget_min_retries_per_sec,
            budget_percent_can_retry,
            budget_max_retries_per_request,
            rate_limiter,
            adaptive_min_fill_rate,
        );
        base
    }

    /// Fills defaults (the table in the module docs) into a config already laid over its
    /// preset, and checks the combination.
    pub(super) fn build(&self, errs: &mut ConfigErrors) -> RetryPolicy {
        let c = self;
        let secs = SimDuration::from_secs;

        let multiplier = c.multiplier.unwrap_or(2.0);
        if !(multiplier.is_finite() && multiplier >= 1.0) {
            errs.push(
                "multiplier",
                format!("must be at least 1 (is {multiplier}): a delay that shrinks is not a backoff"),
            );
        }
        let base = c.base.unwrap_or(secs(1));
        let cap = c.cap.map_or(Some(secs(60)), |o| o.0);
        match cap {
            Some(SimDuration::ZERO) => errs.push("cap", "must be greater than 0 (write \"none\" for no cap)"),
            Some(cap) if cap < base && c.cap.is_some() => errs.push(
                "cap",
                format!("must be at least base ({base}), is {cap}: below the base every delay would be the cap"),
            ),
            Some(cap) if cap < base => errs.push(
                "base",
                format!(
                    "must be at most the cap ({cap} by default), is {base}: raise `cap` too, or write cap = \"none\""
                ),
            ),
            _ => {}
        }

        let mode = c.jitter.unwrap_or(JitterMode::Full);
        only(
            errs,
            "jitter_fraction",
            c.jitter_fraction.is_some() && mode != JitterMode::Proportional,
            "jitter = \"proportional\"",
        );
        only(errs, "jitter_max", c.jitter_max.is_some() && mode != JitterMode::Additive, "jitter = \"additive\"");
        let jitter = match mode {
            JitterMode::None => Jitter::None,
            JitterMode::Full => Jitter::Full,
            JitterMode::Equal => Jitter::Equal,
            JitterMode::Decorrelated => Jitter::Decorrelated,
            JitterMode::Half => Jitter::Half,
            JitterMode::Span => Jitter::Span,
            JitterMode::Proportional => {
                let fraction = c.jitter_fraction.unwrap_or(0.2);
                if !(fraction > 0.0 && fraction <= 1.0) {
                    errs.push("jitter_fraction", format!("must be greater than 0 and at most 1 (is {fraction})"));
                }
                Jitter::Proportional { fraction }
            }
            JitterMode::Additive => Jitter::Additive { max: c.jitter_max.unwrap_or(secs(1)) },
        };
        if mode == JitterMode::Span && multiplier <= 1.0 {
            errs.push("multiplier", "must be greater than 1 with jitter = \"span\", whose range is [d, multiplier·d)");
        }

        let limit = match (c.max_attempts, c.max_retries) {
            (Some(OptionalCount(Some(n))), _) => AttemptLimit::Attempts(n),
            (_, Some(OptionalCount(Some(n)))) => AttemptLimit::Retries(n),
            (Some(OptionalCount(None)), _) | (_, Some(OptionalCount(None))) => AttemptLimit::Unlimited,
            (None, None) => AttemptLimit::Attempts(5),
        };
        if limit == AttemptLimit::Attempts(0) {
            errs.push("max_attempts", "must be at least 1: the first attempt is an attempt");
        }

        let deadline = c.deadline.and_then(|o| o.0);
        if deadline == Some(SimDuration::ZERO) {
            errs.push("deadline", "must be greater than 0 (write \"none\" for no deadline)");
        }
        let deadline_rule = c.deadline_rule.unwrap_or(StopRule::GiveUpBeforeCrossing);
        let deadline_clock = c.deadline_clock.unwrap_or(DeadlineClock::Wall);
        if deadline_rule == StopRule::Cut && deadline_clock != DeadlineClock::Wall {
            errs.push(
                "deadline_clock",
                "must be \"wall\" with deadline_rule = \"cut\": the deadline cuts what is in flight",
            );
        }
        let truncate_to = c.truncate_to.and_then(|o| o.0);
        if truncate_to == Some(SimDuration::ZERO) {
            errs.push("truncate_to", "must be greater than 0 (write \"none\" for no truncation)");
        }
        let throttle_base = c.throttle_base.and_then(|o| o.0);

        let retry_on = match &c.retry_on {
            Some(words) => RetryOn::parse(words).unwrap_or_else(|e| {
                errs.push("retry_on", e);
                RetryOn::transient()
            }),
            None => RetryOn::transient(),
        };

        let ra_mode = c.retry_after.unwrap_or(RetryAfterMode::Replace);
        let max_extra = c.retry_after_max_extra.and_then(|o| o.0);
        only(
            errs,
            "retry_after_max_extra",
            max_extra.is_some() && ra_mode != RetryAfterMode::Max,
            "retry_after = \"max\"",
        );

        let kind = c.budget.unwrap_or(BudgetKind::None);
        let aws = kind == BudgetKind::AwsQuota;
        let grpc = kind == BudgetKind::GrpcThrottle;
        let envoy = kind == BudgetKind::EnvoyConcurrent;
        let finagle = kind == BudgetKind::Finagle;
        for (key, set) in [
            ("quota_capacity", c.quota_capacity.is_some()),
            ("quota_retry_cost", c.quota_retry_cost.is_some()),
            ("quota_throttle_cost", c.quota_throttle_cost.is_some()),
            ("quota_timeout_cost", c.quota_timeout_cost.is_some()),
            ("quota_success_refund", c.quota_success_refund.is_some()),
        ] {
            only(errs, key, set && !aws, "budget = \"aws-quota\"");
        }
        for (key, set) in [
            ("throttle_max_tokens", c.throttle_max_tokens.is_some()),
            ("throttle_token_ratio", c.throttle_token_ratio.is_some()),
        ] {
            only(errs, key, set && !grpc, "budget = \"grpc-throttle\"");
        }
        only(
            errs,
            "max_concurrent_retries",
            c.max_concurrent_retries.is_some() && !envoy,
            "budget = \"envoy-concurrent\"",
        );
        for (key, set) in [
            ("budget_ttl", c.budget_ttl.is_some()),
            ("budget_min_retries_per_sec", c.budget_min_retries_per_sec.is_some()),
            ("budget_percent_can_retry", c.budget_percent_can_retry.is_some()),
            ("budget_max_retries_per_request", c.budget_max_retries_per_request.is_some()),
        ] {
            only(errs, key, set && !finagle, "budget = \"finagle\"");
        }
        let budget = match kind {
            BudgetKind::None => BudgetPolicy::None,
            BudgetKind::AwsQuota => {
                let capacity = c.quota_capacity.unwrap_or(500);
                if capacity == 0 {
                    errs.push("quota_capacity", "must be at least 1");
                }
                BudgetPolicy::AwsQuota {
                    capacity,
                    retry_cost: c.quota_retry_cost.unwrap_or(5),
                    throttle_cost: c.quota_throttle_cost.unwrap_or(5),
                    timeout_cost: c.quota_timeout_cost.unwrap_or(10),
                    success_refund: c.quota_success_refund.unwrap_or(1),
                }
            }
            BudgetKind::GrpcThrottle => {
                let max_tokens = c.throttle_max_tokens.unwrap_or(10.0);
                let token_ratio = c.throttle_token_ratio.unwrap_or(0.1);
                // gRFC A6: maxTokens in (0, 1000], tokenRatio > 0 (three decimals kept).
                if !(max_tokens > 0.0 && max_tokens <= 1000.0) {
                    errs.push(
                        "throttle_max_tokens",
                        format!("must be greater than 0 and at most 1000 (is {max_tokens})"),
                    );
                }
                if token_ratio < 0.001 {
                    errs.push("throttle_token_ratio", format!("must be at least 0.001 (is {token_ratio})"));
                }
                BudgetPolicy::GrpcThrottle { max_tokens, token_ratio }
            }
            BudgetKind::EnvoyConcurrent => {
                BudgetPolicy::EnvoyConcurrent { max_retries: c.max_concurrent_retries.unwrap_or(3) }
            }
            BudgetKind::Finagle => {
                let ttl = c.budget_ttl.unwrap_or(secs(10));
                let percent = c.budget_percent_can_retry.unwrap_or(0.2);
                let per_request = c.budget_max_retries_per_request.unwrap_or(0.2);
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
                    min_retries_per_sec: c.budget_min_retries_per_sec.unwrap_or(10),
                    percent_can_retry: percent,
                    max_retries_per_request: per_request,
                }
            }
        };
        let limiter_kind = c.rate_limiter.unwrap_or(RateLimiterKind::None);
        only(
            errs,
            "adaptive_min_fill_rate",
            c.adaptive_min_fill_rate.is_some() && limiter_kind != RateLimiterKind::AwsAdaptive,
            "rate_limiter = \"aws-adaptive\"",
        );
        let rate_limiter = match limiter_kind {
            RateLimiterKind::None => None,
            RateLimiterKind::AwsAdaptive => {
                let min_fill_rate = c.adaptive_min_fill_rate.unwrap_or(0.5);
                if min_fill_rate <= 0.0 {
                    errs.push("adaptive_min_fill_rate", "must be greater than 0");
                }
                Some(AdaptiveLimiter { min_fill_rate })
            }
        };

        RetryPolicy {
            preset: c.preset.clone(),
            base,
            multiplier,
            cap,
            cap_applies: c.cap_applies.unwrap_or(CapApplies::BeforeJitter),
            jitter,
            limit,
            deadline,
            deadline_rule,
            deadline_clock,
            truncate_to,
            throttle_base,
            reset_after_success: c.reset_after_success.unwrap_or(true),
            retry_on,
            retry_non_idempotent: c.retry_non_idempotent.unwrap_or(false),
            retry_after: RetryAfterPolicy {
                mode: ra_mode,
                max_extra,
                resets_backoff: c.retry_after_resets_backoff.unwrap_or(false),
            },
            budget,
            rate_limiter,
            _resolved: (),
        }
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
mod tests {
    use super::*;

    fn keys(errs: &ConfigErrors) -> Vec<&str> {
        errs.keys()
    }

    fn s(x: u64) -> SimDuration {
        SimDuration::from_secs(x)
    }

    #[test]
    fn defaults_without_a_preset_are_the_documented_ones() {
        let p = RetryPolicyConfig::default().resolve().unwrap();
        assert_eq!((p.base, p.multiplier, p.cap), (s(1), 2.0, Some(s(60))));
        assert_eq!(p.cap_applies, CapApplies::BeforeJitter);
        assert_eq!(p.jitter, Jitter::Full);
        assert_eq!(p.limit, AttemptLimit::Attempts(5));
        assert_eq!(p.deadline, None);
        assert_eq!(p.deadline_rule, StopRule::GiveUpBeforeCrossing);
        assert_eq!(p.retry_on, RetryOn::transient());
        assert!(p.reset_after_success && !p.retry_non_idempotent);
        assert_eq!(p.retry_after.mode, RetryAfterMode::Replace);
        assert_eq!(p.budget, BudgetPolicy::None);
        assert_eq!(p.rate_limiter, None);
    }

    #[test]
    fn overrides_replace_the_presets_fields_and_limit() {
        // gcs-python has no attempt limit; max_retries replaces that.
        let p = RetryPolicyConfig::with_pairs(Some("gcs-python"), &[("max_retries", "2"), ("deadline", "30s")])
            .resolve()
            .unwrap();
        assert_eq!(p.limit, AttemptLimit::Retries(2));
        assert_eq!(p.deadline, Some(s(30)));
        assert_eq!(p.cap, Some(s(60)));
        // seed-loop limits attempts; max_retries replaces it, not both.
        let p = RetryPolicyConfig::with_pairs(Some("seed-loop"), &[("max_retries", "9")]).resolve().unwrap();
        assert_eq!(p.limit.max_attempts(), Some(10));
    }

    #[test]
    fn changing_a_mode_drops_the_presets_parameters_of_the_old_one() {
        // aws-standard has a quota and retry_after = max with a 5 s extra.
        let p = RetryPolicyConfig::with_pairs(Some("aws-standard"), &[("budget", "none"), ("retry_after", "replace")])
            .resolve()
            .unwrap();
        assert_eq!(p.budget, BudgetPolicy::None);
        assert_eq!(p.retry_after.max_extra, None);
        // But a parameter the user sets for a mode not in force is an error.
        let errs =
            RetryPolicyConfig::with_pairs(Some("seed-loop"), &[("jitter_fraction", "0.1"), ("quota_retry_cost", "3")])
                .resolve()
                .unwrap_err();
        assert_eq!(keys(&errs), ["jitter_fraction", "quota_retry_cost"]);
        assert!(errs.pairs()[0].1.contains("proportional"), "{errs:?}");
    }

    #[test]
    fn every_problem_is_reported_with_its_key() {
        let c = RetryPolicyConfig {
            multiplier: Some(0.5),
            max_attempts: Some(OptionalCount(Some(0))),
            deadline: Some(OptionalDuration(Some(SimDuration::ZERO))),
            deadline_rule: Some(StopRule::Cut),
            deadline_clock: Some(DeadlineClock::SleepsOnly),
            retry_on: Some(vec!["teapot".into()]),
            ..RetryPolicyConfig::default()
        };
        let errs = c.resolve().unwrap_err();
        assert_eq!(keys(&errs), ["multiplier", "max_attempts", "deadline", "deadline_clock", "retry_on"]);
        let both = RetryPolicyConfig {
            max_attempts: Some(OptionalCount(Some(3))),
            max_retries: Some(OptionalCount(Some(3))),
            ..RetryPolicyConfig::default()
        };
        assert_eq!(keys(&both.resolve().unwrap_err()), ["max_retries"]);
    }

    #[test]
    fn unknown_preset_lists_the_known_ones() {
        let errs = RetryPolicyConfig::preset("gcs-pyhton").resolve().unwrap_err();
        assert_eq!(keys(&errs), ["preset"]);
        let message = &errs.pairs()[0].1;
        assert!(
            message.starts_with("unknown preset `gcs-pyhton`; did you mean `gcs-python-api-core-2.11+`?"),
            "{errs:?}"
        );
        assert!(message.contains("gcs-python-api-core-2.11+, gcs-python-api-core-pre-2.11"), "{errs:?}");
    }

    #[test]
    fn every_key_reads_from_its_text() {
        let c = RetryPolicyConfig::with_pairs(
            None,
            &[
                ("base", "50ms"),
                ("multiplier", "1.5"),
                ("cap", "none"),
                ("cap_applies", "after-jitter"),
                ("jitter", "additive"),
                ("jitter_max", "1s"),
                ("max_attempts", "none"),
                ("deadline", "2min"),
                ("deadline_rule", "truncate"),
                ("deadline_clock", "attempt-start"),
                ("truncate_to", "1ms"),
                ("throttle_base", "1s"),
                ("reset_after_success", "false"),
                ("retry_on", "timeout, 503,5xx"),
                ("retry_non_idempotent", "true"),
                ("retry_after", "max"),
                ("retry_after_max_extra", "5s"),
                ("retry_after_resets_backoff", "true"),
                ("budget", "aws-quota"),
                ("quota_retry_cost", "14"),
                ("rate_limiter", "aws-adaptive"),
                ("adaptive_min_fill_rate", "0.25"),
            ],
        );
        let p = c.resolve().unwrap();
        assert_eq!(p.cap, None);
        assert_eq!(p.limit, AttemptLimit::Unlimited);
        assert_eq!(p.retry_on.to_string(), "timeout, 503, 5xx");
        assert_eq!(p.jitter, Jitter::Additive { max: s(1) });

        let teapot = RetryPolicyConfig::with_pairs(None, &[("retry_on", "5xx,teapot")]).resolve().unwrap_err();
        assert!(teapot.message("retry_on").unwrap().starts_with("`teapot`"), "{teapot}");
    }

    #[test]
    fn toml_reads_human_values_and_rejects_unknown_keys() {
        let c: RetryPolicyConfig = toml::from_str(
            "preset = \"gcs-python\"\ncap = \"none\"\nmax_attempts = 7\nretry_on = [\"timeout\", \"503\"]\n",
        )
        .unwrap();
        assert_eq!(c.cap, Some(OptionalDuration(None)));
        assert_eq!(c.max_attempts, Some(OptionalCount(Some(7))));
        let p = c.resolve().unwrap();
        assert_eq!(p.limit, AttemptLimit::Attempts(7));
        let err = toml::from_str::<RetryPolicyConfig>("bsae = \"1s\"").unwrap_err().to_string();
        assert!(err.contains("unknown field `bsae`"), "{err}");
        let err = toml::from_str::<RetryPolicyConfig>("cap = 60").unwrap_err().to_string();
        assert!(err.contains("bare number"), "{err}");
        let err = toml::from_str::<RetryPolicyConfig>("jitter = \"fuzzy\"").unwrap_err().to_string();
        assert!(err.contains("not one of"), "{err}");
    }

    #[test]
    fn policy_serializes_every_constant() {
        let p = RetryPolicyConfig::preset("seed-loop").resolve().unwrap();
        let json = serde_json::to_string(&p).unwrap();
        assert_eq!(
            json,
            "{\"preset\":\"seed-loop\",\"base\":\"1s\",\"multiplier\":2.0,\"cap\":\"30s\",\
             \"cap_applies\":\"before-jitter\",\"jitter\":{\"mode\":\"full\"},\"limit\":{\"max_attempts\":5},\
             \"deadline\":null,\"deadline_rule\":\"give-up-before-crossing\",\"deadline_clock\":\"wall\",\
             \"truncate_to\":null,\"throttle_base\":null,\"reset_after_success\":true,\
             \"retry_on\":[\"timeout\",\"dropped\",\"refused\",\"408\",\"429\",\"5xx\"],\
             \"retry_non_idempotent\":false,\"retry_after\":{\"mode\":\"ignore\",\"max_extra\":null,\
             \"resets_backoff\":false},\"budget\":{\"kind\":\"none\"},\"rate_limiter\":null}"
        );
    }
}
