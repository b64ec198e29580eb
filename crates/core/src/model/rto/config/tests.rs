use super::*;

fn cfg(profile: RtoProfile, sets: &[(&str, &str)]) -> RtoConfig {
    RtoConfig::with_pairs(profile, sets)
}

fn keys(errs: &ConfigErrors) -> Vec<&str> {
    errs.keys()
}

#[test]
fn rfc6298_defaults_are_the_rfc_constants() {
    let p = RtoConfig::default().resolve().unwrap();
    assert_eq!(p.profile, RtoProfile::Rfc6298);
    assert_eq!(p.initial_rto, secs(1)); // (2.1)
    assert_eq!(p.min_rto, secs(1)); // (2.4)
    assert_eq!(p.max_rto, secs(60)); // (2.5)
    assert_eq!(p.fallback_rto, secs(3)); // (5.7)
    assert_eq!((p.alpha, p.beta, p.k), (0.125, 0.25, 4)); // (2.2), (2.3)
    assert_eq!(p.granularity, SimDuration::from_millis(1));
    assert_eq!(p.hz, None);
    assert_eq!(p.clear_after_backoffs, None);
    assert!(p.karn && !p.timestamps && !p.sample_every_ack && !p.nonconformant);
    assert_eq!((p.syn_linear_timeouts, p.syn_retries, p.retries2), (0, 6, 15));
    // RFC 6298 has neither; RFC 8985 and RFC 5682 are opt-in.
    assert!(!p.tlp && !p.frto);
}

#[test]
fn linux_defaults_are_the_kernel_constants() {
    let p = cfg(RtoProfile::Linux, &[]).resolve().unwrap();
    assert_eq!(p.initial_rto, secs(1)); // TCP_TIMEOUT_INIT
    assert_eq!(p.min_rto, SimDuration::from_millis(200)); // TCP_RTO_MIN
    assert_eq!(p.max_rto, secs(120)); // TCP_RTO_MAX
    assert_eq!(p.fallback_rto, secs(3)); // TCP_TIMEOUT_FALLBACK
    assert_eq!(p.hz, Some(250));
    assert_eq!(p.granularity, SimDuration::from_millis(4)); // one jiffy at HZ 250
    assert!(p.karn && p.timestamps && p.sample_every_ack);
    assert_eq!((p.syn_linear_timeouts, p.syn_retries, p.retries2), (4, 6, 15));
    // sysctl_tcp_early_retrans = 3 (TLP on), sysctl_tcp_frto = 2 (F-RTO on).
    assert!(p.tlp && p.frto);
}

#[test]
fn linux_durations_round_up_to_whole_jiffies() {
    // 201 ms at HZ 250 is 50.25 jiffies -> 51 jiffies = 204 ms (usecs_to_jiffies rounds up).
    let p = cfg(RtoProfile::Linux, &[("min_rto", "201ms")]).resolve().unwrap();
    assert_eq!(p.min_rto, SimDuration::from_millis(204));
    // HZ 300: one jiffy is 3333333.3 ns, shown rounded up to 3333334 ns.
    let p = cfg(RtoProfile::Linux, &[("hz", "300")]).resolve().unwrap();
    assert_eq!(p.granularity, SimDuration::from_nanos(3_333_334));
    assert_eq!(p.min_rto, SimDuration::from_millis(200)); // 60 jiffies exactly
}

#[test]
fn linux_timers_are_whole_jiffies_of_at_least_one_and_rfc_timers_at_least_a_nanosecond() {
    let p = cfg(RtoProfile::Linux, &[]).resolve().unwrap();
    assert_eq!(p.timer_ticks(SimDuration::ZERO), SimDuration::from_millis(4));
    assert_eq!(p.timer_ticks(SimDuration::from_millis(201)), SimDuration::from_millis(204));
    let r = RtoConfig::default().resolve().unwrap();
    assert_eq!(r.timer_ticks(SimDuration::from_millis(201)), SimDuration::from_millis(201));
    assert_eq!(r.timer_ticks(SimDuration::ZERO), SimDuration::from_nanos(1));
}

#[test]
fn max_below_min_names_max_rto() {
    let errs = cfg(RtoProfile::Rfc6298, &[("max_rto", "500ms"), ("nonconformant", "true")]).resolve().unwrap_err();
    assert!(errs.pairs().contains(&("max_rto".into(), "must be at least min_rto (1s)".into())), "{errs:?}");
}

#[test]
fn rfc6298_2_5_max_below_60s_needs_nonconformant() {
    let errs = cfg(RtoProfile::Rfc6298, &[("max_rto", "30s")]).resolve().unwrap_err();
    assert_eq!(keys(&errs), ["max_rto"]);
    assert!(errs.pairs()[0].1.contains("nonconformant = true"));
    let p = cfg(RtoProfile::Rfc6298, &[("max_rto", "30s"), ("nonconformant", "true")]);
    assert_eq!(p.resolve().unwrap().max_rto, secs(30));
}

#[test]
fn rfc6298_2_4_min_below_1s_needs_nonconformant() {
    let errs = cfg(RtoProfile::Rfc6298, &[("min_rto", "200ms"), ("initial_rto", "200ms")]).resolve().unwrap_err();
    assert_eq!(keys(&errs), ["min_rto"]);
    let ok = cfg(RtoProfile::Rfc6298, &[("min_rto", "0s"), ("nonconformant", "true")]);
    assert_eq!(ok.resolve().unwrap().min_rto, SimDuration::ZERO);
}

#[test]
fn rfc6298_musts_need_nonconformant() {
    let errs =
        cfg(RtoProfile::Rfc6298, &[("k", "2"), ("karn", "false"), ("fallback_rto", "1s")]).resolve().unwrap_err();
    assert_eq!(keys(&errs), ["k", "karn", "fallback_rto"]);
    // SHOULDs are free: alpha, beta, initial.
    let p = cfg(RtoProfile::Rfc6298, &[("alpha", "0.1"), ("beta", "0.5"), ("initial_rto", "3s")]);
    assert!(p.resolve().is_ok());
}

#[test]
fn every_problem_is_reported_at_once() {
    let errs =
        cfg(RtoProfile::Rfc6298, &[("alpha", "0"), ("beta", "1.5"), ("hz", "100"), ("clear_after_backoffs", "0")])
            .resolve()
            .unwrap_err();
    assert_eq!(keys(&errs), ["hz", "alpha", "beta", "clear_after_backoffs"]);
}

#[test]
fn zero_floor_and_zero_granularity_is_refused() {
    let errs = cfg(RtoProfile::Rfc6298, &[("min_rto", "0s"), ("granularity", "0s"), ("nonconformant", "true")])
        .resolve()
        .unwrap_err();
    assert_eq!(keys(&errs), ["min_rto"]);
}

#[test]
fn initial_rto_must_fit_between_min_and_max() {
    let errs = cfg(RtoProfile::Rfc6298, &[("initial_rto", "90s")]).resolve().unwrap_err();
    assert_eq!(errs.pairs(), [("initial_rto".into(), "must be at most max_rto (1min)".into())]);
    let errs = cfg(RtoProfile::Rfc6298, &[("initial_rto", "0s")]).resolve().unwrap_err();
    assert_eq!(keys(&errs), ["initial_rto"]);
}

#[test]
fn linux_refuses_rfc_only_keys_and_checks_its_own() {
    let errs = cfg(RtoProfile::Linux, &[("alpha", "0.2"), ("k", "3"), ("granularity", "1ms"), ("hz", "0")])
        .resolve()
        .unwrap_err();
    assert_eq!(keys(&errs), ["alpha", "k", "granularity", "hz"]);
    let errs = cfg(RtoProfile::Linux, &[("syn_linear_timeouts", "200")]).resolve().unwrap_err();
    assert_eq!(keys(&errs), ["syn_linear_timeouts"]);
    // linux's 200 ms floor is not an RFC violation to flag: it is the profile.
    assert!(cfg(RtoProfile::Linux, &[("min_rto", "5ms")]).resolve().is_ok());
}

#[test]
fn linux_max_rto_takes_the_range_of_sysctl_tcp_rto_max_ms_without_nonconformant() {
    // net.ipv4.tcp_rto_max_ms accepts 1000..=120000 (Documentation/networking/ip-sysctl.rst):
    // a host with tcp_rto_max_ms = 5000 is an ordinary Linux host, not an RFC violation.
    for ok in ["1s", "5s", "59s", "120s"] {
        let p = cfg(RtoProfile::Linux, &[("max_rto", ok)]).resolve().unwrap();
        assert_eq!(p.max_rto, SimDuration::parse(ok).unwrap(), "{ok}");
    }
    for bad in ["999ms", "121s", "10min"] {
        let errs = cfg(RtoProfile::Linux, &[("max_rto", bad)]).resolve().unwrap_err();
        assert_eq!(keys(&errs)[0], "max_rto", "{bad}");
        assert!(errs.message("max_rto").unwrap().contains("net.ipv4.tcp_rto_max_ms"), "{errs}");
    }
    // nonconformant does not widen the kernel's range.
    let errs = cfg(RtoProfile::Linux, &[("max_rto", "500ms"), ("nonconformant", "true")]).resolve().unwrap_err();
    assert_eq!(keys(&errs)[0], "max_rto");
    // tcp_rto_min_us is at least 1 µs.
    let errs = cfg(RtoProfile::Linux, &[("min_rto", "0s")]).resolve().unwrap_err();
    assert_eq!(keys(&errs), ["min_rto"]);
    assert!(cfg(RtoProfile::Linux, &[("min_rto", "1us")]).resolve().is_ok());
    // rfc6298 keeps its MUST: 5 s is below (2.5)'s 60 s.
    let errs = cfg(RtoProfile::Rfc6298, &[("max_rto", "5s")]).resolve().unwrap_err();
    assert!(errs.message("max_rto").unwrap().contains("RFC 6298 (2.5)"), "{errs}");
}

#[test]
fn every_key_reads_from_its_text() {
    let c = cfg(
        RtoProfile::Rfc6298,
        &[
            ("profile", "linux"),
            ("initial_rto", "2s"),
            ("min_rto", "100ms"),
            ("max_rto", "2min"),
            ("fallback_rto", "3s"),
            ("hz", "1000"),
            ("karn", "true"),
            ("timestamps", "false"),
            ("sample_every_ack", "false"),
            ("nonconformant", "false"),
            ("syn_linear_timeouts", "0"),
            ("syn_retries", "6"),
            ("retries2", "15"),
            ("tlp", "false"),
            ("frto", "false"),
        ],
    );
    assert_eq!(c.profile, RtoProfile::Linux);
    assert_eq!(c.max_rto, Some(secs(120)));
    assert_eq!(c.hz, Some(1000));
    assert_eq!(c.retries2, Some(15));
    assert_eq!((c.tlp, c.frto), (Some(false), Some(false)));
    assert!(c.resolve().is_ok());
}

#[test]
fn give_up_budgets_tlp_and_frto_take_any_value_under_both_profiles() {
    for profile in [RtoProfile::Rfc6298, RtoProfile::Linux] {
        let p = cfg(profile, &[("syn_retries", "3"), ("retries2", "1"), ("tlp", "true"), ("frto", "false")])
            .resolve()
            .unwrap();
        assert_eq!((p.syn_retries, p.retries2, p.tlp, p.frto), (3, 1, true, false));
        let errs = cfg(profile, &[("syn_retries", "0")]).resolve().unwrap_err();
        assert_eq!(keys(&errs), ["syn_retries"]);
    }
}

#[test]
fn may_sample_is_karn_with_the_timestamps_exception() {
    let rfc = RtoConfig::default().resolve().unwrap();
    assert!(rfc.may_sample(false));
    assert!(!rfc.may_sample(true)); // RFC 6298 (3): never from a retransmitted segment
    let ts = cfg(RtoProfile::Rfc6298, &[("timestamps", "true")]).resolve().unwrap();
    assert!(ts.may_sample(true)); // ... unless timestamps remove the ambiguity
    let linux = cfg(RtoProfile::Linux, &[]).resolve().unwrap();
    assert!(linux.may_sample(true)); // timestamps on by default
}

#[test]
fn toml_deserializes_with_human_durations_and_rejects_unknown_keys() {
    let c: RtoConfig = toml::from_str("profile = \"linux\"\nmin_rto = \"250ms\"\nhz = 1000\nkarn = true\n").unwrap();
    assert_eq!(c.profile, RtoProfile::Linux);
    assert_eq!(c.min_rto, Some(SimDuration::from_millis(250)));
    assert_eq!(c.hz, Some(1000));
    let c: RtoConfig = toml::from_str("").unwrap();
    assert_eq!(c, RtoConfig::default());
    let err = toml::from_str::<RtoConfig>("rto_min = \"1s\"").unwrap_err().to_string();
    assert!(err.contains("unknown field `rto_min`"), "{err}");
    let err = toml::from_str::<RtoConfig>("max_rto = 60").unwrap_err().to_string();
    assert!(err.contains("not a duration"), "{err}");
}

#[test]
fn params_serialize_every_constant() {
    let p = RtoConfig::default().resolve().unwrap();
    let json = serde_json::to_string(&p).unwrap();
    assert_eq!(
        json,
        "{\"profile\":\"rfc6298\",\"initial_rto\":\"1s\",\"min_rto\":\"1s\",\"max_rto\":\"1min\",\
         \"fallback_rto\":\"3s\",\"alpha\":0.125,\"beta\":0.25,\"k\":4,\"granularity\":\"1ms\",\
         \"hz\":null,\"clear_after_backoffs\":null,\"karn\":true,\"timestamps\":false,\
         \"sample_every_ack\":false,\"nonconformant\":false,\"syn_linear_timeouts\":0,\
         \"syn_retries\":6,\"retries2\":15,\"tlp\":false,\"frto\":false}"
    );
}

#[test]
fn user_timeout_is_linux_only_whole_milliseconds_and_zero_is_off() {
    // setsockopt(TCP_USER_TIMEOUT) takes an int of milliseconds; 0 disables it.
    let p = cfg(RtoProfile::Linux, &[("user_timeout", "30s")]).resolve().unwrap();
    assert_eq!(p.user_timeout, Some(secs(30)));
    let json = serde_json::to_string(&p).unwrap();
    assert!(json.ends_with("\"frto\":true,\"user_timeout\":\"30s\"}"), "{json}");
    assert_eq!(cfg(RtoProfile::Linux, &[("user_timeout", "0s")]).resolve().unwrap().user_timeout, None);
    for bad in ["1500us", "25d"] {
        let errs = cfg(RtoProfile::Linux, &[("user_timeout", bad)]).resolve().unwrap_err();
        assert_eq!(keys(&errs), ["user_timeout"], "{bad}");
        assert!(errs.message("user_timeout").unwrap().contains("milliseconds"), "{errs}");
    }
    let errs = cfg(RtoProfile::Rfc6298, &[("user_timeout", "30s")]).resolve().unwrap_err();
    assert_eq!(errs.message("user_timeout"), Some("applies to profile linux only"));
}
