//! `backoffsim presets`: the retry presets as an aligned table — name, what it is, the
//! key numbers (from the resolved policy, so they cannot drift from the model) and
//! where the facts were read.

use super::CliError;
use backoffsim_core::model::grpc::{GrpcBackoffConfig, GrpcBackoffParams, GrpcProfile};
use backoffsim_core::model::retry::presets::PRESETS;
use backoffsim_core::model::retry::{AttemptLimit, BudgetPolicy, CapApplies, Jitter, RetryPolicy, RetryPolicyConfig};

/// The numbers that matter, in one short line.
pub fn key_numbers(p: &RetryPolicy) -> String {
    let mut s =
        if p.multiplier == 1.0 { format!("{} fixed", p.base) } else { format!("{} ×{}", p.base, p.multiplier) };
    if let Some(c) = p.cap {
        s += &format!(", cap {c}");
        if p.cap_applies == CapApplies::AfterJitter && !matches!(p.jitter, Jitter::Decorrelated | Jitter::Span) {
            s += " after jitter";
        }
    }
    s += &match p.jitter {
        Jitter::None => ", no jitter".to_string(),
        Jitter::Proportional { fraction } => format!(", ±{}%", fraction * 100.0),
        Jitter::Additive { max } => format!(", +U(0, {max})"),
        j => format!(", {} jitter", j.mode()),
    };
    match p.limit {
        AttemptLimit::Attempts(n) => s += &format!("; {n} attempts"),
        AttemptLimit::Retries(1) => s += "; 1 retry",
        AttemptLimit::Retries(n) => s += &format!("; {n} retries"),
        AttemptLimit::Unlimited => {}
    }
    if let Some(d) = p.deadline {
        s += &format!("; {d} deadline ({})", p.deadline_rule);
    }
    match p.budget {
        BudgetPolicy::None => {}
        BudgetPolicy::AwsQuota { capacity, retry_cost, .. } => s += &format!("; quota {capacity}/{retry_cost}"),
        BudgetPolicy::GrpcThrottle { max_tokens, .. } => s += &format!("; throttling {max_tokens} tokens"),
        BudgetPolicy::EnvoyConcurrent { max_retries } => s += &format!("; ≤ {max_retries} retries in flight"),
        BudgetPolicy::Finagle { percent_can_retry, .. } => s += &format!("; budget {}%", percent_can_retry * 100.0),
    }
    if p.rate_limiter.is_some() {
        s += "; rate limiter";
    }
    s
}

/// The gRPC connection-backoff profiles `explain` takes besides the retry presets:
/// name, what, scenario profile and where the arithmetic was read.
pub const CONNECTION_PROFILES: &[(&str, &str, GrpcProfile, &str)] = &[
    (
        "grpc-connection-spec",
        "gRPC connection backoff as specified",
        GrpcProfile::Spec,
        "grpc/grpc doc/connection-backoff.md",
    ),
    (
        "grpc-connection-core",
        "gRPC C core subchannel reconnects (C++, Python, Ruby, …)",
        GrpcProfile::GrpcCore,
        "grpc/grpc src/core/client_channel/subchannel.cc, src/core/util/backoff.cc",
    ),
    ("grpc-connection-go", "grpc-go reconnects", GrpcProfile::GrpcGo, "grpc/grpc-go internal/backoff/backoff.go"),
    (
        "grpc-connection-java",
        "grpc-java reconnects",
        GrpcProfile::GrpcJava,
        "grpc/grpc-java core/src/main/java/io/grpc/internal/ExponentialBackoffPolicy.java",
    ),
];

/// A connection profile's numbers, in the words `key_numbers` uses for a retry policy.
pub fn connection_numbers(p: &GrpcBackoffParams) -> String {
    let mut s = format!("{} ×{}, cap {}, ±{}%", p.initial_backoff, p.multiplier, p.max_backoff, p.jitter * 100.0);
    match p.min_connect_timeout {
        Some(t) => s += &format!("; attempts get ≥ {t}"),
        None => s += "; no attempt deadline",
    }
    s + "; never gives up"
}

/// The table's rows, header first: the retry presets, then the connection profiles.
pub fn rows() -> Result<Vec<[String; 5]>, CliError> {
    let mut rows: Vec<[String; 5]> =
        vec![["NAME".into(), "ALIAS".into(), "WHAT".into(), "KEY NUMBERS".into(), "SOURCE".into()]];
    for pr in PRESETS {
        let policy = RetryPolicyConfig::preset(pr.name)
            .resolve()
            .map_err(|e| CliError::Failed(format!("preset {} does not resolve: {e:?}", pr.name)))?;
        let aliases = pr.aliases.join(", ");
        rows.push([pr.name.into(), aliases, pr.what.into(), key_numbers(&policy), pr.source.into()]);
    }
    for &(name, what, profile, source) in CONNECTION_PROFILES {
        let params = GrpcBackoffConfig { profile, ..GrpcBackoffConfig::default() }
            .resolve()
            .map_err(|e| CliError::Failed(format!("profile {name} does not resolve: {e:?}")))?;
        rows.push([name.into(), String::new(), what.into(), connection_numbers(&params), source.into()]);
    }
    Ok(rows)
}

pub fn presets() -> Result<(), CliError> {
    let rows = rows()?;
    super::aligned::print(&rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbers(name: &str) -> String {
        key_numbers(&RetryPolicyConfig::preset(name).resolve().unwrap())
    }

    #[test]
    fn key_numbers_say_what_matters() {
        assert_eq!(numbers("seed-loop"), "1s ×2, cap 30s, full jitter; 5 attempts");
        assert_eq!(numbers("gcs-python"), "1s ×2, cap 1min, full jitter; 2min deadline (give-up-before-crossing)");
        assert_eq!(numbers("gcloud"), "1s ×2, cap 32s after jitter, +U(0, 1s); 23 retries");
        assert_eq!(numbers("aws-standard"), "50ms ×2, cap 20s, full jitter; 3 attempts; quota 500/14");
        assert_eq!(numbers("finagle-budget"), "0s fixed, no jitter; budget 20%");
    }

    #[test]
    fn the_list_holds_every_preset_with_its_aliases_and_every_connection_profile() {
        let rows = rows().unwrap();
        assert_eq!(rows.len(), 1 + PRESETS.len() + CONNECTION_PROFILES.len());
        let aws = rows.iter().find(|r| r[0] == "botocore-standard-1.44+").unwrap();
        assert_eq!(aws[1], "aws-standard");
        // gRPC doc/connection-backoff.md: INITIAL_BACKOFF 1 s, MULTIPLIER 1.6, MAX_BACKOFF
        // 120 s, JITTER 0.2, MIN_CONNECT_TIMEOUT 20 s.
        let spec = rows.iter().find(|r| r[0] == "grpc-connection-spec").unwrap();
        assert_eq!(spec[3], "1s ×1.6, cap 2min, ±20%; attempts get ≥ 20s; never gives up");
        // grpc-java's InternalSubchannel gives a connection attempt no deadline.
        let java = rows.iter().find(|r| r[0] == "grpc-connection-java").unwrap();
        assert!(java[3].contains("no attempt deadline"), "{java:?}");
    }
}
