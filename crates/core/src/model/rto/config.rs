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
//! | `user_timeout` | - (RFC 6298 sets no time budget) | 0s, off (`TCP_USER_TIMEOUT`) |
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
    /// linux: `TCP_USER_TIMEOUT` (see [`RtoParams::gives_up`]); 0 is off, as in the kernel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_timeout: Option<SimDuration>,
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
    /// linux: `TCP_USER_TIMEOUT`, replacing the time budgets when set. Left out of the
    /// manifest when off, so that runs without it read as before.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_timeout: Option<SimDuration>,
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
        linux_only(errs, "user_timeout", self.user_timeout.is_some());
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
            user_timeout: None,
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
            // icsk_user_timeout == 0 means off.
            user_timeout: self.user_timeout.filter(|t| *t != SimDuration::ZERO),
            _resolved: (),
        };
        // tcp_sock_set_user_timeout takes whole milliseconds, from 0 to INT_MAX.
        if let Some(t) = self.user_timeout
            && (t.as_nanos() % 1_000_000 != 0 || t.as_nanos() / 1_000_000 > i32::MAX as u64)
        {
            errs.push(
                "user_timeout",
                format!("must be a whole number of milliseconds up to {}ms, as TCP_USER_TIMEOUT takes", i32::MAX),
            );
        }
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
mod tests;
