//! `[grpc.backoff]` as a scenario writes it ([`GrpcBackoffConfig`]) and as the backoff
//! uses it ([`GrpcBackoffParams`]: every constant concrete, dumped into the run's manifest).
//!
//! Defaults by profile, and where each library takes the value from (a `-` means the key
//! is refused under that profile, with a message that says why):
//!
//! | key | spec | grpc-core | grpc-go | grpc-java |
//! |---|---|---|---|---|
//! | `initial_backoff` | 1s | 1s, channel arg `GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS` | 1s, `backoff.Config.BaseDelay` | 1s, `initialBackoffNanos` |
//! | `multiplier` | 1.6 | 1.6, `GRPC_SUBCHANNEL_RECONNECT_BACKOFF_MULTIPLIER` | 1.6, `Config.Multiplier` | 1.6, `multiplier` |
//! | `jitter` | 0.2 | 0.2, `GRPC_SUBCHANNEL_RECONNECT_JITTER` | 0.2, `Config.Jitter` | 0.2, `jitter` |
//! | `max_backoff` | 120s | 120s, channel arg `GRPC_ARG_MAX_RECONNECT_BACKOFF_MS` | 120s, `Config.MaxDelay` | 120s, `maxBackoffNanos` |
//! | `min_connect_timeout` | 20s | 20s, channel arg `GRPC_ARG_MIN_RECONNECT_BACKOFF_MS` | 20s, `minConnectTimeout` (`ConnectParams.MinConnectTimeout`) | - |
//!
//! Which of these a user of the real library can change: grpc-go, all five
//! (`grpc.WithConnectParams`); grpc-core, the three channel args (multiplier and jitter
//! are `#define`s in `src/core/client_channel/subchannel.cc`); grpc-java, none
//! (`ExponentialBackoffPolicy`'s setters are `@VisibleForTesting`). The simulator lets every
//! value be overridden under every profile, so that a what-if on any of the five constants
//! can be asked of any implementation: the profile then fixes the *arithmetic* (units, rounding, where the
//! delay is counted from), not the constants. The one refusal is `min_connect_timeout`
//! under grpc-java, which has no such thing (`InternalSubchannel` gives a connection
//! attempt no deadline): a value there would be silently ignored.
//!
//! grpc-core quirks kept on purpose (`ParseArgsForBackoffValues` in `subchannel.cc`): the
//! three channel args are whole milliseconds (a value with a fraction of a millisecond is
//! refused: it cannot be written as the int channel arg) and each is raised to at least
//! 100 ms (`std::max(Duration::Milliseconds(100), …)`), silently, as the library does; the
//! resolved parameters show the raised value.
//!
//! Checks for every profile: `0 ≤ jitter ≤ 1`, `multiplier ≥ 1` (both finite),
//! `initial_backoff > 0`, `initial_backoff ≤ max_backoff`, every duration at most one day
//! (which keeps all arithmetic exact: below 2^53 ns, no overflow).

use crate::model::config_error::ConfigErrors;
use crate::model::fraction;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::engine::time::{NANOS_PER_MILLI, SimDuration};

/// Which implementation's arithmetic a backoff follows. See the module docs of
/// [`crate::model::grpc`] for what each one models.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum GrpcProfile {
    /// gRPC's `doc/connection-backoff.md`, as written.
    #[default]
    Spec,
    /// grpc/grpc (C core, and the wrapped languages: C++, Python, Ruby, PHP, …).
    GrpcCore,
    /// grpc/grpc-go.
    GrpcGo,
    /// grpc/grpc-java.
    GrpcJava,
}

impl GrpcProfile {
    pub const ALL: [GrpcProfile; 4] =
        [GrpcProfile::Spec, GrpcProfile::GrpcCore, GrpcProfile::GrpcGo, GrpcProfile::GrpcJava];

    pub fn name(self) -> &'static str {
        match self {
            GrpcProfile::Spec => "spec",
            GrpcProfile::GrpcCore => "grpc-core",
            GrpcProfile::GrpcGo => "grpc-go",
            GrpcProfile::GrpcJava => "grpc-java",
        }
    }
}

impl fmt::Display for GrpcProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for GrpcProfile {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        GrpcProfile::ALL.into_iter().find(|p| p.name() == s).ok_or_else(|| {
            format!("`{s}` is not a gRPC backoff profile: expected spec, grpc-core, grpc-go or grpc-java")
        })
    }
}

/// `[grpc.backoff]` as written. Every field but `profile` is optional; `resolve` fills the
/// defaults (table in the module docs) and checks the combination.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GrpcBackoffConfig {
    #[serde(default)]
    pub profile: GrpcProfile,
    /// INITIAL_BACKOFF: the first delay (and the base after a reset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_backoff: Option<SimDuration>,
    /// MULTIPLIER: the factor applied to the base after each failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multiplier: Option<f64>,
    /// JITTER: delays are drawn uniformly within ±jitter of the base (0.2 or "20%").
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "fraction::option")]
    pub jitter: Option<f64>,
    /// MAX_BACKOFF: the cap on the base.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_backoff: Option<SimDuration>,
    /// MIN_CONNECT_TIMEOUT: the least time an attempt is given. Refused under grpc-java.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_connect_timeout: Option<SimDuration>,
}

/// The longest duration any key may take. One day keeps every value below 2^53 ns, so the
/// libraries' float arithmetic on it is exact where theirs is, and nothing overflows.
pub const MAX_DURATION: SimDuration = SimDuration::from_secs(86_400);

/// grpc-core's floor on its three channel args (`ParseArgsForBackoffValues`).
pub const GRPC_CORE_MIN_ARG: SimDuration = SimDuration::from_millis(100);

/// The resolved parameters: every constant concrete, defaults included. Only
/// [`GrpcBackoffConfig::resolve`] makes these, so a backoff never sees an unchecked set.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[expect(
    clippy::manual_non_exhaustive,
    reason = "the private field keeps construction inside this module; #[non_exhaustive] would allow it crate-wide"
)]
pub struct GrpcBackoffParams {
    pub profile: GrpcProfile,
    /// grpc-core: whole ms, at least 100 ms.
    pub initial_backoff: SimDuration,
    pub multiplier: f64,
    pub jitter: f64,
    /// grpc-core: whole ms, at least 100 ms.
    pub max_backoff: SimDuration,
    /// `None` under grpc-java, which gives an attempt no deadline. grpc-core: whole ms, at
    /// least 100 ms.
    pub min_connect_timeout: Option<SimDuration>,
    /// Private so that only `resolve` builds a `GrpcBackoffParams`.
    #[serde(skip)]
    _resolved: (),
}

impl GrpcBackoffConfig {
    /// Checks the combination and fills defaults. Every problem is reported, each naming
    /// its key, e.g. `jitter`: "must be from 0 to 1 (is 1.5)".
    pub fn resolve(&self) -> Result<GrpcBackoffParams, ConfigErrors> {
        let mut errs = ConfigErrors::new();
        let profile = self.profile;
        let core = profile == GrpcProfile::GrpcCore;
        // (key, value as written or default)
        let mut initial = self.initial_backoff.unwrap_or(SimDuration::from_secs(1));
        let mut max = self.max_backoff.unwrap_or(SimDuration::from_secs(120));
        let mut mct = self.min_connect_timeout.unwrap_or(SimDuration::from_secs(20));
        let multiplier = self.multiplier.unwrap_or(1.6);
        let jitter = self.jitter.unwrap_or(0.2);

        for (key, d) in [("initial_backoff", initial), ("max_backoff", max), ("min_connect_timeout", mct)] {
            if d > MAX_DURATION {
                errs.push(key, format!("must be at most {MAX_DURATION} (is {d})"));
            } else if core && !d.as_nanos().is_multiple_of(NANOS_PER_MILLI) {
                errs.push(
                    key,
                    format!("must be whole milliseconds under grpc-core, whose channel args are integer ms (is {d})"),
                );
            }
        }
        if core {
            // subchannel.cc ParseArgsForBackoffValues: std::max(Duration::Milliseconds(100), arg)
            initial = initial.max(GRPC_CORE_MIN_ARG);
            max = max.max(GRPC_CORE_MIN_ARG);
            mct = mct.max(GRPC_CORE_MIN_ARG);
        }
        if initial == SimDuration::ZERO {
            errs.push("initial_backoff", "must be greater than 0");
        } else if initial > max {
            errs.push("initial_backoff", format!("must be at most max_backoff ({max})"));
        }
        if !(multiplier.is_finite() && multiplier >= 1.0) {
            errs.push("multiplier", format!("must be at least 1 (is {multiplier}): a backoff must not shrink"));
        }
        if !(jitter.is_finite() && (0.0..=1.0).contains(&jitter)) {
            errs.push("jitter", format!("must be from 0 to 1 (is {jitter})"));
        }
        let min_connect_timeout = if profile == GrpcProfile::GrpcJava {
            if self.min_connect_timeout.is_some() {
                errs.push(
                    "min_connect_timeout",
                    "does not apply to profile grpc-java: InternalSubchannel gives a connection \
                     attempt no deadline (use grpc-go or grpc-core for one)",
                );
            }
            None
        } else {
            Some(mct)
        };
        let params = GrpcBackoffParams {
            profile,
            initial_backoff: initial,
            multiplier,
            jitter,
            max_backoff: max,
            min_connect_timeout,
            _resolved: (),
        };
        errs.into_result(params)
    }
}

#[cfg(test)]
impl GrpcBackoffConfig {
    /// A profile with overrides by key; panics on a bad key, as tests want.
    pub(crate) fn with_pairs(profile: GrpcProfile, sets: &[(&str, &str)]) -> GrpcBackoffConfig {
        crate::model::overrides::from_pairs(&format!("profile = \"{profile}\""), sets)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(profile: GrpcProfile, sets: &[(&str, &str)]) -> GrpcBackoffConfig {
        GrpcBackoffConfig::with_pairs(profile, sets)
    }

    fn keys(errs: &[(String, String)]) -> Vec<&str> {
        errs.iter().map(|(k, _)| k.as_str()).collect()
    }

    fn ms(n: u64) -> SimDuration {
        SimDuration::from_millis(n)
    }

    #[test]
    fn defaults_are_the_connection_backoff_doc_constants() {
        // doc/connection-backoff.md: MIN_CONNECT_TIMEOUT 20 s, INITIAL_BACKOFF 1 s,
        // MULTIPLIER 1.6, MAX_BACKOFF 120 s, JITTER 0.2.
        for profile in GrpcProfile::ALL {
            let p = cfg(profile, &[]).resolve().unwrap();
            assert_eq!(p.profile, profile);
            assert_eq!(p.initial_backoff, SimDuration::from_secs(1));
            assert_eq!((p.multiplier, p.jitter), (1.6, 0.2));
            assert_eq!(p.max_backoff, SimDuration::from_secs(120));
            let mct = (profile != GrpcProfile::GrpcJava).then_some(SimDuration::from_secs(20));
            assert_eq!(p.min_connect_timeout, mct, "{profile}");
        }
    }

    #[test]
    fn grpc_core_raises_its_channel_args_to_100ms() {
        // subchannel.cc ParseArgsForBackoffValues: std::max(Duration::Milliseconds(100), …)
        let p = cfg(
            GrpcProfile::GrpcCore,
            &[("initial_backoff", "0s"), ("max_backoff", "50ms"), ("min_connect_timeout", "1ms")],
        )
        .resolve()
        .unwrap();
        assert_eq!(p.initial_backoff, ms(100));
        assert_eq!(p.max_backoff, ms(100));
        assert_eq!(p.min_connect_timeout, Some(ms(100)));
        // The other profiles take the values as written (and refuse a zero initial).
        let p =
            cfg(GrpcProfile::GrpcGo, &[("initial_backoff", "10ms"), ("min_connect_timeout", "1ms")]).resolve().unwrap();
        assert_eq!(p.initial_backoff, ms(10));
        assert_eq!(p.min_connect_timeout, Some(ms(1)));
        let errs = cfg(GrpcProfile::Spec, &[("initial_backoff", "0s")]).resolve().unwrap_err().pairs();
        assert_eq!(keys(&errs), ["initial_backoff"]);
    }

    #[test]
    fn grpc_core_refuses_fractions_of_a_millisecond() {
        let errs = cfg(GrpcProfile::GrpcCore, &[("initial_backoff", "1500us")]).resolve().unwrap_err().pairs();
        assert_eq!(keys(&errs), ["initial_backoff"]);
        assert!(errs[0].1.contains("whole milliseconds"), "{errs:?}");
        assert!(cfg(GrpcProfile::Spec, &[("initial_backoff", "1500us")]).resolve().is_ok());
    }

    #[test]
    fn grpc_java_refuses_min_connect_timeout() {
        let errs = cfg(GrpcProfile::GrpcJava, &[("min_connect_timeout", "20s")]).resolve().unwrap_err().pairs();
        assert_eq!(keys(&errs), ["min_connect_timeout"]);
        assert!(errs[0].1.contains("no deadline"), "{errs:?}");
    }

    #[test]
    fn every_problem_is_reported_at_once_naming_its_key() {
        let errs = cfg(
            GrpcProfile::Spec,
            &[
                ("initial_backoff", "3min"),
                ("multiplier", "0.5"),
                ("jitter", "1.5"),
                ("min_connect_timeout", "48h"),
                ("max_backoff", "25h"),
            ],
        )
        .resolve()
        .unwrap_err();
        assert_eq!(keys(&errs.pairs()), ["max_backoff", "min_connect_timeout", "multiplier", "jitter"], "{errs:?}");
        let errs = cfg(GrpcProfile::GrpcGo, &[("initial_backoff", "3min")]).resolve().unwrap_err();
        assert_eq!(errs.pairs(), [("initial_backoff".into(), "must be at most max_backoff (2min)".into())]);
        let errs = cfg(GrpcProfile::GrpcGo, &[("jitter", "-0.1")]).resolve().unwrap_err();
        assert_eq!(errs.pairs(), [("jitter".into(), "must be from 0 to 1 (is -0.1)".into())]);
    }

    #[test]
    fn edge_values_are_accepted() {
        let p = cfg(
            GrpcProfile::GrpcJava,
            &[("multiplier", "1"), ("jitter", "1"), ("initial_backoff", "24h"), ("max_backoff", "24h")],
        )
        .resolve()
        .unwrap();
        assert_eq!((p.multiplier, p.jitter), (1.0, 1.0));
        assert!(cfg(GrpcProfile::Spec, &[("jitter", "0")]).resolve().is_ok());
    }

    #[test]
    fn every_key_reads_from_its_text() {
        let c = cfg(
            GrpcProfile::Spec,
            &[
                ("profile", "grpc-go"),
                ("initial_backoff", "200ms"),
                ("multiplier", "2"),
                ("jitter", "0.1"),
                ("max_backoff", "30s"),
                ("min_connect_timeout", "5s"),
            ],
        );
        assert_eq!(c.profile, GrpcProfile::GrpcGo);
        assert_eq!(c.initial_backoff, Some(ms(200)));
        assert_eq!((c.multiplier, c.jitter), (Some(2.0), Some(0.1)));
        assert_eq!(c.max_backoff, Some(SimDuration::from_secs(30)));
        assert_eq!(c.min_connect_timeout, Some(SimDuration::from_secs(5)));
        assert!(c.resolve().is_ok());

        assert_eq!(cfg(GrpcProfile::Spec, &[("jitter", "15%")]).jitter, Some(0.15));
    }

    #[test]
    fn toml_deserializes_kebab_profiles_and_rejects_unknown_keys() {
        let c: GrpcBackoffConfig =
            toml::from_str("profile = \"grpc-core\"\ninitial_backoff = \"250ms\"\njitter = 0\n").unwrap();
        assert_eq!(c.profile, GrpcProfile::GrpcCore);
        assert_eq!(c.initial_backoff, Some(ms(250)));
        assert_eq!(c.jitter, Some(0.0));
        let c: GrpcBackoffConfig = toml::from_str("").unwrap();
        assert_eq!(c, GrpcBackoffConfig::default());
        let err = toml::from_str::<GrpcBackoffConfig>("base_delay = \"1s\"").unwrap_err().to_string();
        assert!(err.contains("unknown field `base_delay`"), "{err}");
        let err = toml::from_str::<GrpcBackoffConfig>("profile = \"grpc_go\"").unwrap_err().to_string();
        assert!(err.contains("grpc-go"), "{err}");
    }

    #[test]
    fn params_serialize_every_constant() {
        let p = cfg(GrpcProfile::GrpcJava, &[]).resolve().unwrap();
        assert_eq!(
            serde_json::to_string(&p).unwrap(),
            "{\"profile\":\"grpc-java\",\"initial_backoff\":\"1s\",\"multiplier\":1.6,\
             \"jitter\":0.2,\"max_backoff\":\"2min\",\"min_connect_timeout\":null}"
        );
        let p = cfg(GrpcProfile::Spec, &[]).resolve().unwrap();
        assert!(serde_json::to_string(&p).unwrap().contains("\"min_connect_timeout\":\"20s\""));
    }
}
