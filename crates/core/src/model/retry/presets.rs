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

mod aws;
mod google;
mod libraries;
mod rpc;

use aws::{aws_adaptive, aws_legacy, aws_standard, aws_standard_2025};
use google::{gcloud, gcs_cpp, gcs_python, gcs_python_legacy};
use libraries::{backon, python_backoff, seed_loop, tenacity_random_exp};
use rpc::{envoy, finagle_budget, grpc_retry};

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
