//! `[jobs]`: asynchronous retry. A producer enqueues jobs, a pool of workers runs the
//! due ones against a chain of providers in failover order, and a job that fails on
//! every provider goes back into the queue with a later due time (its backoff is a
//! property of the job, not a sleeping thread) until its retry policy dead-letters it.
//!
//! ```toml
//! [jobs]
//! rate = 10                  # jobs per second
//! arrivals = "poisson"       # exponential gaps (default), or "uniform": exactly 1/rate apart
//! start = "0s"               # the first job (uniform) or the process's start (poisson)
//! count = 1000               # optional: stop after this many jobs (default: until the horizon)
//! workers = 8                # the pool
//! poison_fraction = "1%"     # jobs every provider rejects, every time
//! bin = "1min"               # series.csv's bins (at least 1s)
//! [jobs.retry]               # a retry policy, as [calls.policy]: a preset and overrides
//! base = "1s"
//! [[jobs.provider]]          # failover order: the first is the primary
//! name = "primary"
//! call_time = "300ms"        # a successful call
//! fail_time = "50ms"         # an explicit failure (default call_time)
//! timeout = "30s"            # the worker's per-call timeout (default 30s)
//! [[jobs.provider.down]]     # from `at` for `duration`, a share of calls fail
//! at = "13h"
//! duration = "4h"
//! fail_fraction = 0.5        # default 1
//! behavior = "hang"          # or "refuse" (default): fails after fail_time
//! ```
//!
//! One run of a job tries the providers in order, each call starting when the previous
//! one failed; the first success delivers the job. When all fail, the job's own
//! [`RetryState`](crate::model::retry::RetryState) (one per job, started at its
//! creation, so a `deadline` is the job's age) decides: retry at a later due time, or
//! dead-letter. The failure it sees is the last provider's: `refused` or `timeout`. A
//! policy's wait before giving up (`sleep-then-stop`) does not apply: a worker moves
//! the job to the dead-letter queue at once.
//!
//! Without a `preset`, what `[jobs.retry]` leaves unset is the queue's default: base
//! 1 s, ×2, cap 5 min, full jitter, 10 attempts (a message worth delivering is worth
//! about 20 minutes of tries); with a preset, the preset's values as everywhere else.

use serde::{Deserialize, Serialize};

use crate::engine::time::SimDuration;
use crate::model::config_error::ConfigErrors;
use crate::model::fraction;
use crate::model::jobs::provider::ProviderConfig;
use crate::model::retry::config::{OptionalCount, OptionalDuration};
use crate::model::retry::{JitterMode, RetryPolicy, RetryPolicyConfig};

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct JobsConfig {
    /// Jobs created per second.
    pub rate: f64,
    #[serde(default)]
    pub arrivals: Arrivals,
    #[serde(default)]
    pub start: SimDuration,
    /// Jobs in all; until the horizon when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
    pub workers: u32,
    /// Share of jobs that can never succeed.
    #[serde(default, deserialize_with = "fraction::deserialize")]
    pub poison_fraction: f64,
    /// Width of `series.csv`'s bins.
    #[serde(default = "default_bin")]
    pub bin: SimDuration,
    /// The retry policy. Not serialized: the resolved policy stands beside this config
    /// in the manifest.
    #[serde(default, skip_serializing)]
    pub retry: Option<RetryPolicyConfig>,
    /// The providers, in failover order.
    #[serde(default)]
    pub provider: Vec<ProviderConfig>,
}

/// How jobs arrive.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Arrivals {
    /// A Poisson process: independent exponential gaps of mean 1/rate.
    #[default]
    Poisson,
    /// Exactly 1/rate apart, the first at `start`.
    Uniform,
}

fn default_bin() -> SimDuration {
    SimDuration::from_secs(60)
}

/// The smallest `bin`: a day in 1 s bins is 86 400 rows per replication already.
pub const MIN_BIN: SimDuration = SimDuration::from_secs(1);
/// The most jobs per second: a gap must stay well above a nanosecond.
pub const MAX_RATE: f64 = 1e6;

impl JobsConfig {
    /// Checks the type system cannot make; keys relative to `[jobs]`.
    pub fn validate(&self) -> ConfigErrors {
        let mut errors = ConfigErrors::new();
        if !(self.rate > 0.0 && self.rate <= MAX_RATE) {
            errors.push("rate", format!("must be a number of jobs per second above 0 and at most {MAX_RATE}"));
        }
        if self.count == Some(0) {
            errors.push("count", "must be at least 1 (leave it out to create jobs until the horizon)");
        }
        if self.workers == 0 {
            errors.push("workers", "must be at least 1");
        }
        if !(0.0..=1.0).contains(&self.poison_fraction) {
            errors.push("poison_fraction", format!("must be between 0 and 1, got {}", self.poison_fraction));
        }
        if self.bin < MIN_BIN {
            errors.push("bin", format!("must be at least {MIN_BIN}"));
        }
        if self.provider.is_empty() {
            errors.push("provider", "add at least one [[jobs.provider]]: the service a job calls");
        }
        for (i, p) in self.provider.iter().enumerate() {
            errors.extend_under(&format!("provider[{i}]"), p.validate());
            if self.provider[..i].iter().any(|q| q.name == p.name) {
                errors.push(format!("provider[{i}].name"), format!("`{}` names an earlier provider too", p.name));
            }
        }
        errors
    }

    /// The retry policy with the queue's defaults under what the table sets (module
    /// docs); errors keyed relative to `[jobs.retry]`.
    pub fn policy(&self) -> Result<RetryPolicy, ConfigErrors> {
        let mut c = self.retry.clone().unwrap_or_default();
        if c.preset.is_none() {
            c.base.get_or_insert(SimDuration::from_secs(1));
            c.multiplier.get_or_insert(2.0);
            c.cap.get_or_insert(OptionalDuration(Some(SimDuration::from_secs(300))));
            c.jitter.get_or_insert(JitterMode::Full);
            if c.max_retries.is_none() {
                c.max_attempts.get_or_insert(OptionalCount(Some(10)));
            }
        }
        c.resolve()
    }
}

/// `[jobs]` resolved: the policy's constants filled in.
#[derive(Clone, Debug, Serialize)]
pub struct JobsSpec {
    pub jobs: JobsConfig,
    pub policy: RetryPolicy,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct File {
        jobs: JobsConfig,
    }

    const PROVIDER: &str = "[[jobs.provider]]\nname = \"p\"\n";

    fn parse(text: &str) -> JobsConfig {
        toml::from_str::<File>(&format!("[jobs]\n{text}\n")).map(|f| f.jobs).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn without_a_retry_table_a_job_backs_off_from_1s_doubling_to_5min_for_10_attempts() {
        let p = parse(&format!("rate = 1\nworkers = 1\n{PROVIDER}")).policy().unwrap();
        assert_eq!((p.base, p.multiplier, p.cap), (SimDuration::from_secs(1), 2.0, Some(SimDuration::from_secs(300))));
        assert_eq!(p.limit.max_attempts(), Some(10));
        assert_eq!(p.jitter.mode(), JitterMode::Full);
    }

    #[test]
    fn a_retry_table_overrides_the_queue_defaults_and_a_preset_replaces_them() {
        let c = parse(&format!("rate = 1\nworkers = 1\n[jobs.retry]\nmax_retries = 2\njitter = \"none\"\n{PROVIDER}"));
        let p = c.policy().unwrap();
        assert_eq!((p.limit.max_attempts(), p.cap), (Some(3), Some(SimDuration::from_secs(300))));
        let c = parse(&format!("rate = 1\nworkers = 1\n[jobs.retry]\npreset = \"aws-standard\"\n{PROVIDER}"));
        assert_eq!(c.policy().unwrap().limit.max_attempts(), Some(3));
    }

    #[test]
    fn impossible_settings_are_named_by_key() {
        let c = parse(
            "rate = 0\ncount = 0\nworkers = 0\npoison_fraction = 2\nbin = \"10ms\"\n\
             [[jobs.provider]]\nname = \"a\"\n[[jobs.provider]]\nname = \"a\"\ntimeout = \"0s\"\n",
        );
        assert_eq!(
            c.validate().keys(),
            ["rate", "count", "workers", "poison_fraction", "bin", "provider[1].timeout", "provider[1].name"]
        );
        let none = parse("rate = 1\nworkers = 1");
        assert_eq!(none.validate().keys(), ["provider"]);
    }
}
