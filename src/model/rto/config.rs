//! `[tcp.rto]` as a scenario writes it ([`RtoConfig`]) and as the estimator uses it
//! ([`RtoParams`]: every constant concrete, dumped into the run's manifest).
//!
//! Defaults by profile (a `-` means the key is refused under that profile, with a message
//! that says why):
//!
//! | key | rfc6298 | linux |
//! |---|---|---|
//! | `initial_rto` | 1s (2.1) | 1s (`TCP_TIMEOUT_INIT`) |
//! | `min_rto` | 1s (2.4) | 200ms (`TCP_RTO_MIN`, a floor on the variance term) |
//! | `max_rto` | 60s (2.5) | 120s (`TCP_RTO_MAX`) |
//! | `fallback_rto` | 3s (5.7) | 3s (`TCP_TIMEOUT_FALLBACK`) |
//! | `alpha`, `beta` | 1/8, 1/4 (2.3) | - (fixed shifts in `tcp_rtt_estimator`) |
//! | `k` | 4 (2.2) | - (implicit: rttvar is kept ×4) |
//! | `granularity` | 1ms | - (one jiffy; set `hz`) |
//! | `hz` | - | 250 |
//! | `clear_after_backoffs` | never | - (the kernel never clears) |
//! | `karn` | true (3) | true |
//! | `timestamps` | false | true (`sysctl_tcp_timestamps`) |
//! | `sample_every_ack` | false (one timed segment per RTT) | true |
//! | `nonconformant` | false | false |
//! | `syn_linear_timeouts` | - (5.5 doubles every time) | 4 |
//! | `syn_retries` | 6 | 6 (`sysctl_tcp_syn_retries`) |
//! | `retries2` | 15 | 15 (`sysctl_tcp_retries2`) |
//! | `tlp` | false (RFC 8985 section 7 when on) | true (`sysctl_tcp_early_retrans` = 3) |
//! | `frto` | false (RFC 5682 when on) | true (`sysctl_tcp_frto` = 2) |
//!
//! Under rfc6298, `nonconformant = true` is required for anything RFC 6298 forbids or
//! fixes with a MUST: `max_rto` below 60 s (2.5), `min_rto` below 1 s (2.4), `k` other
//! than 4 (2.2), `karn = false` (3) and `fallback_rto` below 3 s (5.7). α, β and the
//! initial RTO are SHOULDs and may be changed freely.
//!
//! Under linux the limits are the kernel's, as a host's sysctls allow them, not RFC
//! 6298's: `max_rto` from 1 s to 120 s (`net.ipv4.tcp_rto_max_ms`, 1000–120000) and
//! `min_rto` from 1 µs (`net.ipv4.tcp_rto_min_us` ≥ 1, or a route's `rto_min`) up to
//! `max_rto`. Only `karn = false` still needs `nonconformant = true`: no kernel setting
//! turns Karn's rule off.
//!
//! `k` is an integer: every implementation uses K = 4, an integer K keeps RTO exact in
//! nanoseconds, and K = 0 (RTO = SRTT + G) is still expressible for ablations.
//!
//! Under linux the durations are rounded up to whole jiffies, as the kernel stores them
//! (`usecs_to_jiffies` rounds up); [`RtoParams`] holds the rounded values.

use crate::model::config_error::ConfigErrors;
use crate::model::fraction;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::linux::{jiffies_to_ns, ns_to_jiffies, usecs_to_jiffies};
use crate::engine::time::SimDuration;

/// Which estimator a connection runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RtoProfile {
    /// RFC 6298 as written.
    #[default]
    Rfc6298,
    /// Linux 6.x `tcp_rtt_estimator` / `tcp_set_rto` / `tcp_retransmit_timer`.
    Linux,
}

impl fmt::Display for RtoProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RtoProfile::Rfc6298 => "rfc6298",
            RtoProfile::Linux => "linux",
        })
    }
}

impl FromStr for RtoProfile {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "rfc6298" => Ok(RtoProfile::Rfc6298),
            "linux" => Ok(RtoProfile::Linux),
            other => Err(format!("`{other}` is not an RTO profile: expected rfc6298 or linux")),
        }
    }
}

/// `[tcp.rto]` as written. Every field but `profile` is optional; `resolve` fills the
/// profile's defaults (table in the module docs) and checks the combination.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RtoConfig {
    #[serde(default)]
    pub profile: RtoProfile,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_rto: Option<SimDuration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_rto: Option<SimDuration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rto: Option<SimDuration>,
    /// RFC 6298 (5.7) / `TCP_TIMEOUT_FALLBACK`: the RTO when data starts after a SYN
    /// timeout (rfc6298) or after a handshake without an RTT sample (linux).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback_rto: Option<SimDuration>,
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "fraction::option")]
    pub alpha: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "fraction::option")]
    pub beta: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub k: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub granularity: Option<SimDuration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hz: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clear_after_backoffs: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub karn: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamps: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_every_ack: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nonconformant: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub syn_linear_timeouts: Option<u32>,
    /// SYN retransmissions before connect fails (see [`RtoParams::gives_up`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub syn_retries: Option<u32>,
    /// Data retransmission budget (see [`RtoParams::gives_up`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retries2: Option<u32>,
    /// Tail loss probes (RFC 8985 section 7; see `model::tcp::tlp`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tlp: Option<bool>,
    /// Spurious-timeout detection (RFC 5682; see `model::tcp::frto`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frto: Option<bool>,
}

/// `sysctl_tcp_syn_retries` and `sysctl_tcp_retries2`, also used under rfc6298.
const DEFAULT_SYN_RETRIES: u32 = 6;
const DEFAULT_RETRIES2: u32 = 15;

/// `MAX_TCP_SYNCNT`: the kernel's limit for tcp_syn_retries and tcp_syn_linear_timeouts.
const MAX_TCP_SYNCNT: u32 = 127;

/// `net.ipv4.tcp_rto_max_ms` accepts 1000 to `TCP_RTO_MAX_SEC` · 1000 (sysctl_net_ipv4.c).
const LINUX_MAX_RTO_RANGE: (u64, u64) = (1, 120);

/// The resolved parameters: every constant concrete, defaults included. Only
/// [`RtoConfig::resolve`] makes these, so an estimator never sees an unchecked set.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[expect(
    clippy::manual_non_exhaustive,
    reason = "the private field keeps construction inside this module; #[non_exhaustive] would allow it crate-wide"
)]
pub struct RtoParams {
    pub profile: RtoProfile,
    pub initial_rto: SimDuration,
    /// rfc6298: the RTO floor (2.4). linux: `rto_min`, the floor on the variance term.
    pub min_rto: SimDuration,
    pub max_rto: SimDuration,
    pub fallback_rto: SimDuration,
    /// linux: the gains its shifts implement (1/8, 1/4), shown for the record.
    pub alpha: f64,
    pub beta: f64,
    /// linux: 4, implicit in rttvar being kept ×4.
    pub k: u32,
    /// rfc6298: G. linux: one jiffy, the unit the RTO is rounded up to.
    pub granularity: SimDuration,
    /// linux: jiffies per second. `None` under rfc6298 (timers are exact).
    pub hz: Option<u32>,
    /// rfc6298: clear SRTT/RTTVAR after this many backoffs; `None` = never.
    pub clear_after_backoffs: Option<u32>,
    pub karn: bool,
    pub timestamps: bool,
    pub sample_every_ack: bool,
    pub nonconformant: bool,
    /// linux: SYN-SENT expiries that keep the RTO linear. rfc6298: 0.
    pub syn_linear_timeouts: u32,
    pub syn_retries: u32,
    pub retries2: u32,
    /// Send tail loss probes before the RTO fires.
    pub tlp: bool,
    /// Detect spurious timeouts with F-RTO and undo them.
    pub frto: bool,
    /// Private so that only `resolve` builds a `RtoParams`.
    #[serde(skip)]
    _resolved: (),
}

impl RtoParams {
    /// RFC 6298 (3): may the ACK of a segment be used as an RTT sample? Karn's algorithm
    /// forbids samples from retransmitted segments, "the only case" being the timestamp
    /// option, which removes the ambiguity about which transmission was acknowledged.
    pub fn may_sample(&self, retransmitted: bool) -> bool {
        !retransmitted || !self.karn || self.timestamps
    }

    /// A timer duration as the profile can hold it: Linux arms timers in whole jiffies,
    /// rounding up (`usecs_to_jiffies(max(delta_us, 1))` in `tcp_rearm_rto`); RFC timers
    /// are exact but never shorter than a nanosecond, so a timer is always in the future.
    pub fn timer_ticks(&self, d: SimDuration) -> SimDuration {
        match self.hz {
            None => d.max(SimDuration::from_nanos(1)),
            Some(hz) => jiffies_to_ns(usecs_to_jiffies(d.as_micros().max(1), hz), hz),
        }
    }
}

fn secs(s: u64) -> SimDuration {
    SimDuration::from_secs(s)
}

fn fixed_by_linux(errs: &mut ConfigErrors, key: &str, set: bool, why: &str) {
    if set {
        errs.push(key, format!("does not apply to profile linux: {why}"));
    }
}

fn linux_only(errs: &mut ConfigErrors, key: &str, set: bool) {
    if set {
        errs.push(key, "applies to profile linux only");
    }
}

impl RtoConfig {
    /// Checks the combination and fills defaults from the profile. Every problem is
    /// reported, each naming its key, e.g. `max_rto`: "must be at least min_rto (1s)".
    pub fn resolve(&self) -> Result<RtoParams, ConfigErrors> {
        let mut errs = ConfigErrors::new();
        let params = self.resolve_params(&mut errs);
        errs.into_result(params)
    }

    fn resolve_params(&self, errs: &mut ConfigErrors) -> RtoParams {
        match self.profile {
            RtoProfile::Rfc6298 => self.resolve_rfc6298(errs),
            RtoProfile::Linux => self.resolve_linux(errs),
        }
    }

    fn resolve_rfc6298(&self, errs: &mut ConfigErrors) -> RtoParams {
        linux_only(errs, "hz", self.hz.is_some());
        linux_only(errs, "syn_linear_timeouts", self.syn_linear_timeouts.is_some());
        let nonconformant = self.nonconformant.unwrap_or(false);
        let p = RtoParams {
            profile: RtoProfile::Rfc6298,
            initial_rto: self.initial_rto.unwrap_or(secs(1)),
            min_rto: self.min_rto.unwrap_or(secs(1)),
            max_rto: self.max_rto.unwrap_or(secs(60)),
            fallback_rto: self.fallback_rto.unwrap_or(secs(3)),
            alpha: self.alpha.unwrap_or(0.125),
            beta: self.beta.unwrap_or(0.25),
            k: self.k.unwrap_or(4),
            granularity: self.granularity.unwrap_or(SimDuration::from_millis(1)),
            hz: None,
            clear_after_backoffs: self.clear_after_backoffs,
            karn: self.karn.unwrap_or(true),
            timestamps: self.timestamps.unwrap_or(false),
            sample_every_ack: self.sample_every_ack.unwrap_or(false),
            nonconformant,
            syn_linear_timeouts: 0,
            syn_retries: self.syn_retries.unwrap_or(DEFAULT_SYN_RETRIES),
            retries2: self.retries2.unwrap_or(DEFAULT_RETRIES2),
            tlp: self.tlp.unwrap_or(false),
            frto: self.frto.unwrap_or(false),
            _resolved: (),
        };
        for (key, gain) in [("alpha", p.alpha), ("beta", p.beta)] {
            if !(gain > 0.0 && gain <= 1.0) {
                errs.push(key, format!("must be greater than 0 and at most 1 (is {gain})"));
            }
        }
        let allow = "; set nonconformant = true to allow it";
        if !nonconformant {
            if p.k != 4 {
                errs.push("k", format!("RFC 6298 (2.2) fixes K = 4{allow}"));
            }
            if p.max_rto < secs(60) {
                errs.push("max_rto", format!("is below 60s, which RFC 6298 (2.5) forbids{allow}"));
            }
            if p.min_rto < secs(1) {
                errs.push("min_rto", format!("is below 1s, the floor of RFC 6298 (2.4){allow}"));
            }
            if !p.karn {
                errs.push("karn", format!("RFC 6298 (3) requires Karn's algorithm{allow}"));
            }
            if p.fallback_rto < secs(3) {
                errs.push("fallback_rto", format!("is below the 3s of RFC 6298 (5.7){allow}"));
            }
        }
        if p.min_rto == SimDuration::ZERO && p.granularity == SimDuration::ZERO {
            errs.push(
                "min_rto",
                "must be greater than 0 when granularity is 0: a zero RTT would give an RTO of 0, which doubling never raises",
            );
        }
        if p.clear_after_backoffs == Some(0) {
            errs.push("clear_after_backoffs", "must be at least 1 (leave it out to never clear)");
        }
        self.check_common(&p, errs);
        p
    }

    fn resolve_linux(&self, errs: &mut ConfigErrors) -> RtoParams {
        let shift = "tcp_rtt_estimator fixes it with shifts (use profile rfc6298 to vary it)";
        fixed_by_linux(errs, "alpha", self.alpha.is_some(), shift);
        fixed_by_linux(errs, "beta", self.beta.is_some(), shift);
        fixed_by_linux(errs, "k", self.k.is_some(), shift);
        fixed_by_linux(errs, "granularity", self.granularity.is_some(), "it is one jiffy; set hz");
        fixed_by_linux(
            errs,
            "clear_after_backoffs",
            self.clear_after_backoffs.is_some(),
            "the kernel never clears srtt/rttvar on backoff",
        );
        let hz = self.hz.unwrap_or(250);
        if !(1..=1_000_000).contains(&hz) {
            errs.push("hz", format!("must be from 1 to 1000000 (is {hz})"));
        }
        let hz = hz.clamp(1, 1_000_000);
        // The kernel keeps these in jiffies; show the values it would actually use.
        let round = |d: SimDuration| jiffies_to_ns(ns_to_jiffies(d, hz), hz);
        let nonconformant = self.nonconformant.unwrap_or(false);
        let p = RtoParams {
            profile: RtoProfile::Linux,
            initial_rto: round(self.initial_rto.unwrap_or(secs(1))),
            min_rto: round(self.min_rto.unwrap_or(SimDuration::from_millis(200))),
            max_rto: round(self.max_rto.unwrap_or(secs(120))),
            fallback_rto: round(self.fallback_rto.unwrap_or(secs(3))),
            alpha: 0.125,
            beta: 0.25,
            k: 4,
            granularity: jiffies_to_ns(1, hz),
            hz: Some(hz),
            clear_after_backoffs: None,
            karn: self.karn.unwrap_or(true),
            timestamps: self.timestamps.unwrap_or(true),
            sample_every_ack: self.sample_every_ack.unwrap_or(true),
            nonconformant,
            syn_linear_timeouts: self.syn_linear_timeouts.unwrap_or(4),
            syn_retries: self.syn_retries.unwrap_or(DEFAULT_SYN_RETRIES),
            retries2: self.retries2.unwrap_or(DEFAULT_RETRIES2),
            tlp: self.tlp.unwrap_or(true),
            frto: self.frto.unwrap_or(true),
            _resolved: (),
        };
        if p.syn_linear_timeouts > MAX_TCP_SYNCNT {
            errs.push("syn_linear_timeouts", format!("must be at most {MAX_TCP_SYNCNT} (MAX_TCP_SYNCNT)"));
        }
        // The kernel's own ranges: what a host's sysctls and route options accept.
        let (lo, hi) = LINUX_MAX_RTO_RANGE;
        if self.max_rto.is_some_and(|m| m < secs(lo) || m > secs(hi)) {
            errs.push(
                "max_rto",
                format!(
                    "must be from {lo}s to {hi}s under linux, as net.ipv4.tcp_rto_max_ms allows \
                     (1000 to 120000); use profile rfc6298 with nonconformant = true for other values"
                ),
            );
        }
        if self.min_rto == Some(SimDuration::ZERO) {
            errs.push("min_rto", "must be at least 1µs under linux, as net.ipv4.tcp_rto_min_us allows");
        }
        if !nonconformant && !p.karn {
            errs.push("karn", "RFC 6298 (3) requires Karn's algorithm; set nonconformant = true to allow it");
        }
        self.check_common(&p, errs);
        p
    }

    /// Rules both profiles share.
    fn check_common(&self, p: &RtoParams, errs: &mut ConfigErrors) {
        if p.max_rto < p.min_rto {
            errs.push("max_rto", format!("must be at least min_rto ({})", p.min_rto));
        }
        if p.initial_rto == SimDuration::ZERO {
            errs.push("initial_rto", "must be greater than 0");
        } else if p.initial_rto > p.max_rto {
            errs.push("initial_rto", format!("must be at most max_rto ({})", p.max_rto));
        } else if p.profile == RtoProfile::Rfc6298 && p.initial_rto < p.min_rto {
            errs.push("initial_rto", format!("must be at least min_rto ({})", p.min_rto));
        }
        if p.fallback_rto == SimDuration::ZERO {
            errs.push("fallback_rto", "must be greater than 0");
        }
        if p.syn_retries == 0 || p.syn_retries > MAX_TCP_SYNCNT {
            errs.push("syn_retries", format!("must be from 1 to {MAX_TCP_SYNCNT} (MAX_TCP_SYNCNT)"));
        }
    }
}

#[cfg(test)]
impl RtoConfig {
    /// A profile with overrides by key; panics on a bad key, as tests want.
    pub(crate) fn with_pairs(profile: RtoProfile, sets: &[(&str, &str)]) -> RtoConfig {
        crate::model::overrides::from_pairs(&format!("profile = \"{profile}\""), sets)
    }
}

#[cfg(test)]
mod tests {
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
        let c: RtoConfig =
            toml::from_str("profile = \"linux\"\nmin_rto = \"250ms\"\nhz = 1000\nkarn = true\n").unwrap();
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
}
