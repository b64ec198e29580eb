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
    assert!(message.starts_with("unknown preset `gcs-pyhton`; did you mean `gcs-python-api-core-2.11+`?"), "{errs:?}");
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

fn budget(kind: BudgetKind) -> BudgetConfig {
    BudgetConfig { kind: Some(kind), ..BudgetConfig::default() }
}

fn built(c: &BudgetConfig) -> (BudgetPolicy, Vec<(String, String)>) {
    let mut errs = ConfigErrors::new();
    let b = c.build(&mut errs);
    (b, errs.pairs())
}

#[test]
fn each_budget_kind_builds_its_sources_defaults() {
    // botocore retries/quota.py INITIAL_CAPACITY = 500; standard.py 2.0 _RETRY_COST = 5,
    // _TIMEOUT_RETRY_REQUEST = 10, _NO_RETRY_INCREMENT = 1.
    let aws =
        BudgetPolicy::AwsQuota { capacity: 500, retry_cost: 5, throttle_cost: 5, timeout_cost: 10, success_refund: 1 };
    assert_eq!(built(&budget(BudgetKind::AwsQuota)), (aws, vec![]));
    // envoy circuit_breakers.thresholds.max_retries defaults to 3.
    let envoy = BudgetPolicy::EnvoyConcurrent { max_retries: 3 };
    assert_eq!(built(&budget(BudgetKind::EnvoyConcurrent)), (envoy, vec![]));
    // finagle RetryBudget.apply(): ttl 10 s, minRetriesPerSec 10, percentCanRetry 0.2.
    let finagle = BudgetPolicy::Finagle {
        ttl: s(10),
        min_retries_per_sec: 10,
        percent_can_retry: 0.2,
        max_retries_per_request: 0.2,
    };
    assert_eq!(built(&budget(BudgetKind::Finagle)), (finagle, vec![]));
    let grpc = BudgetPolicy::GrpcThrottle { max_tokens: 10.0, token_ratio: 0.1 };
    assert_eq!(built(&budget(BudgetKind::GrpcThrottle)), (grpc, vec![]));
    assert_eq!(built(&BudgetConfig::default()), (BudgetPolicy::None, vec![]));
}

#[test]
fn each_budget_kind_checks_its_own_parameters() {
    // gRFC A6: maxTokens in (0, 1000], tokenRatio kept to three decimals.
    let mut grpc = budget(BudgetKind::GrpcThrottle);
    grpc.grpc_throttle = GrpcThrottleConfig { max_tokens: Some(1001.0), token_ratio: Some(0.0001) };
    let keys: Vec<String> = built(&grpc).1.into_iter().map(|(k, _)| k).collect();
    assert_eq!(keys, ["throttle_max_tokens", "throttle_token_ratio"]);
    // finagle RetryBudget.apply(): ttl from 1 s to 60 s, percentCanRetry from 0 to 1000.
    let mut finagle = budget(BudgetKind::Finagle);
    finagle.finagle = FinagleConfig {
        ttl: Some(s(61)),
        min_retries_per_sec: None,
        percent_can_retry: Some(1001.0),
        max_retries_per_request: Some(-0.1),
    };
    let (_, errs) = built(&finagle);
    assert_eq!(errs[0], ("budget_ttl".to_string(), "must be from 1s to 1min (is 61s)".to_string()));
    assert_eq!(errs[1].0, "budget_percent_can_retry");
    assert_eq!(errs[2].0, "budget_max_retries_per_request");
    let mut aws = budget(BudgetKind::AwsQuota);
    aws.aws_quota.capacity = Some(0);
    assert_eq!(built(&aws).1, [("quota_capacity".to_string(), "must be at least 1".to_string())]);
    // A parameter of a kind not in force names the kind it belongs to.
    let mut envoy = budget(BudgetKind::EnvoyConcurrent);
    envoy.finagle.ttl = Some(s(5));
    let message = "applies to budget = \"finagle\" only".to_string();
    assert_eq!(built(&envoy).1, [("budget_ttl".to_string(), message)]);
}

#[test]
fn naming_another_kind_drops_only_the_old_kinds_parameters() {
    let preset = RetryPolicyConfig::preset("aws-standard").merged().unwrap();
    let top = RetryPolicyConfig::with_pairs(None, &[("budget", "envoy-concurrent"), ("max_concurrent_retries", "7")]);
    let laid = top.parts().over(preset.clone());
    assert_eq!(laid.budget.aws_quota, AwsQuotaConfig::default());
    assert_eq!(laid.budget.envoy_concurrent.max_retries, Some(7));
    // The other groups keep the preset's keys.
    assert_eq!(laid.retry_after, preset.retry_after);
    assert_eq!(laid.limit, preset.limit);
    // The same kind named again keeps the preset's parameters under the new ones.
    let same = RetryPolicyConfig::with_pairs(None, &[("budget", "aws-quota"), ("quota_retry_cost", "3")]);
    let laid = same.parts().over(preset);
    assert_eq!(laid.budget.aws_quota.retry_cost, Some(3));
    assert_eq!(laid.budget.aws_quota.capacity, Some(500));
}

#[test]
fn every_key_as_written_lands_in_its_group() {
    // botocore-standard-1.44+ sets the quota, Retry-After in max mode and the throttle base.
    let parts = RetryPolicyConfig::preset("aws-standard").merged().unwrap();
    assert_eq!(parts.preset.as_deref(), Some("aws-standard"));
    assert_eq!(parts.backoff.base, Some(SimDuration::from_millis(50)));
    assert_eq!(parts.limit.max_attempts, Some(OptionalCount(Some(3))));
    assert_eq!(parts.retry_after.mode, Some(RetryAfterMode::Max));
    assert_eq!(parts.retry_after.max_extra, Some(OptionalDuration(Some(s(5)))));
    assert_eq!(parts.budget.kind, Some(BudgetKind::AwsQuota));
    assert_eq!(parts.budget.aws_quota.retry_cost, Some(14));
    assert_eq!(parts.throttle_base, Some(OptionalDuration(Some(s(1)))));
    assert_eq!(parts.rate_limiter.kind, Some(RateLimiterKind::None));
    let c = RetryPolicyConfig::with_pairs(
        None,
        &[("jitter", "additive"), ("jitter_max", "2s"), ("deadline_clock", "sleeps-only")],
    );
    let parts = c.parts();
    assert_eq!(parts.jitter, JitterConfig { mode: Some(JitterMode::Additive), fraction: None, max: Some(s(2)) });
    assert_eq!(parts.deadline.clock, Some(DeadlineClock::SleepsOnly));
}
