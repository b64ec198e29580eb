//! `[calls]`: clients making logical calls through a retry policy against the one
//! `[server]`, whose restarts and outages make attempts fail.
//!
//! ```toml
//! [calls]
//! clients = 1000
//! start = "10s"              # each client's first call (default 0s)
//! start_spread = "1s"        # first calls uniform over [start, start + spread)
//! interval = "1s"            # optional: a new call every interval (open loop)
//! phase = "steady"           # with interval: "steady" or "together" (see below)
//! calls_per_client = 60      # with interval; default: until the horizon
//! attempt_time = "100ms"     # a successful attempt, request to reply (default 0s)
//! fail_time = "50ms"         # an attempt the down server refuses (default attempt_time)
//! fail_with = "503"          # what a refused attempt fails with (default "refused")
//! timeout = "60s"            # the client's per-attempt timeout (default 60s)
//! idempotency = "idempotent" # or "conditional", "conditional-without-precondition", "never"
//! tiers = [3]                # an application loop of 3 attempts around the policy
//! outage = "2min"            # shorthand: the server is down from `start` for this long
//! pacing = "open"            # with interval: "open", "poisson" or "closed" (see below)
//! keep_backoff = false       # a client keeps one backoff across its calls (closed pacing)
//! permanent_fraction = 0.05  # calls the server answers with a permanent error
//! permanent_with = 400       # … this one (default 400)
//! [calls.policy]
//! preset = "gcs-python"      # any `[retry.policy]` key: a preset and overrides
//! [calls.monitor]
//! bin = "1s"                 # series.csv's bins (default 1s)
//! retry_share_alert = 0.2    # an alert on the retries' share of attempts per bin
//! ```
//!
//! Pacing with `interval`: `open` starts a call every `interval` whether or not the last
//! one has finished (calls overlap while they retry); `poisson` is open with exponential
//! gaps of mean `interval` (many such clients make Poisson arrivals at the server);
//! `closed` starts the next call `interval` after the previous one ended (a polling loop).
//! `phase` with `interval`: `steady` (the default) starts each client at a random point
//! of its cycle, as if it had been calling for ever: its first call comes after the
//! stationary residual of its pacing from `start`, uniform over `[0, interval)` for
//! `open` and `closed`, exponential of mean `interval` for `poisson`. `together` makes
//! every client's first call at `start` (a synchronized fleet: a deploy, a cron tick).
//! A `start_spread` spreads the first calls as written instead.
//! `keep_backoff` needs `closed`: the client's backoff then carries from one call to the
//! next, reset by a success only if the policy has `reset_after_success`.
//!
//! An attempt is one call to the server, asked when the attempt starts:
//!
//! - server up: the call succeeds `attempt_time` later (plus any wait for the server's
//!   capacity and its `handshake_time`, which here is the service time);
//! - server down, `down_behavior = "refuse"`: it fails `fail_time` later with `fail_with`;
//! - server down, `"blackhole"` (or no answer for any other reason): it times out at
//!   `timeout`;
//! - a restart after the server did the work, or a reply later than `timeout`: the
//!   attempt fails (dropped connection, or timeout) **with the work done**, which is a
//!   duplicate side effect if a call that is not idempotent is retried after it.
//!
//! `tiers` nests retries: `tiers = [3]` is an application loop of 3 attempts around the
//! library's policy, retrying at once whatever the library gave up on (`except
//! Exception`); `[2, 3]` puts a loop of 2 around that. Each library call starts a fresh
//! policy state; the client's retry budget (AWS quota, finagle, …) is shared by all its
//! calls and tiers.

use crate::model::config_error::ConfigErrors;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::engine::time::SimDuration;
use crate::model::retry::{Idempotency, Outcome, RetryPolicy, RetryPolicyConfig};
use crate::model::server::{Outage, ServerConfig};

/// Nesting levels `tiers` may have.
pub const MAX_TIERS: usize = 4;
/// The most library calls one logical call may make through its tiers.
pub const MAX_TIER_PRODUCT: u64 = 10_000;

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CallsConfig {
    /// Clients, each with its own random streams and its own retry budget.
    pub clients: u32,
    /// When each client's first call starts.
    #[serde(default)]
    pub start: SimDuration,
    /// First calls are spread uniformly over `[start, start + start_spread)`.
    #[serde(default)]
    pub start_spread: SimDuration,
    /// A new logical call every `interval` after the client's first, whether or not the
    /// earlier ones have finished (an open loop: calls overlap while they retry).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<SimDuration>,
    /// Logical calls per client: 1 without `interval`; with it, until the horizon unless
    /// set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calls_per_client: Option<u32>,
    /// How long a successful attempt takes, request to reply.
    #[serde(default)]
    pub attempt_time: SimDuration,
    /// How long an attempt refused by a down server takes to fail; `attempt_time` if unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fail_time: Option<SimDuration>,
    /// What an attempt refused by a down server fails with.
    #[serde(default)]
    pub fail_with: FailWith,
    /// The client's per-attempt timeout: an attempt without an answer fails then.
    #[serde(default = "default_timeout")]
    pub timeout: SimDuration,
    /// How safe the calls are to repeat.
    #[serde(default)]
    pub idempotency: IdempotencyClass,
    /// Retry loops around the library's policy, outermost first: attempts per loop.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tiers: Vec<u32>,
    /// Shorthand for one `[[server.outage]]` beginning at `start`, handy to sweep.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outage: Option<SimDuration>,
    /// The retry policy: a preset and overrides. Not serialized: the resolved policy
    /// stands beside this config in the manifest.
    #[serde(default, skip_serializing)]
    pub policy: RetryPolicyConfig,
    /// How calls follow each other with `interval`.
    #[serde(default, skip_serializing_if = "is_default")]
    pub pacing: Pacing,
    /// With `interval`: where in its cycle each client starts.
    #[serde(default, skip_serializing_if = "is_default")]
    pub phase: Phase,
    /// The client keeps one backoff across its calls instead of a fresh one per call.
    #[serde(default, skip_serializing_if = "is_default")]
    pub keep_backoff: bool,
    /// Share of logical calls that are bad requests: the server answers every attempt of
    /// such a call with `permanent_with` (at `fail_time`, without using a worker).
    #[serde(default, skip_serializing_if = "is_default", deserialize_with = "crate::model::fraction::deserialize")]
    pub permanent_fraction: f64,
    #[serde(default = "default_permanent", skip_serializing_if = "is_default_permanent")]
    pub permanent_with: FailWith,
    /// What `series.csv` bins and the retry-share alert.
    #[serde(default, skip_serializing_if = "is_default")]
    pub monitor: MonitorConfig,
}

fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

fn default_permanent() -> FailWith {
    FailWith { word: "400".into(), outcome: Outcome::status(400) }
}

fn is_default_permanent(f: &FailWith) -> bool {
    *f == default_permanent()
}

/// `pacing`: how a client's calls follow each other with `interval`.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Pacing {
    /// A call every `interval` from the first, overlapping while they retry.
    #[default]
    Open,
    /// Open, with exponential gaps of mean `interval`.
    Poisson,
    /// The next call `interval` after the previous one ended.
    Closed,
}

/// `phase`: where in its cycle each client that repeats its calls starts.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// At a random point: the first call after the pacing's stationary residual time.
    #[default]
    Steady,
    /// Every client's first call at `start`.
    Together,
}

/// `[calls.monitor]`: the bins of `series.csv` and an alert on the share of attempts
/// that are retries, as a dashboard would compute it per bin.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MonitorConfig {
    #[serde(default = "default_bin")]
    pub bin: SimDuration,
    /// The alert fires at the end of the first bin, after an incident began, whose
    /// retries make at least this share of the attempts.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "crate::model::fraction::option")]
    pub retry_share_alert: Option<f64>,
}

fn default_bin() -> SimDuration {
    SimDuration::from_secs(1)
}

impl Default for MonitorConfig {
    fn default() -> Self {
        MonitorConfig { bin: default_bin(), retry_share_alert: None }
    }
}

/// botocore's and google-cloud-storage's default per-request timeout.
fn default_timeout() -> SimDuration {
    SimDuration::from_secs(60)
}

/// `fail_with`: an outcome word (`refused`, `dropped`, `timeout`, `throttling`) or an
/// HTTP status, as `explain --fail-with` takes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FailWith {
    pub word: String,
    pub outcome: Outcome,
}

impl Default for FailWith {
    fn default() -> Self {
        FailWith { word: "refused".into(), outcome: Outcome::Refused }
    }
}

impl FailWith {
    fn parse(word: &str) -> Result<FailWith, String> {
        let outcome = Outcome::parse(word)?;
        if outcome.is_success() {
            return Err(format!("`{word}` is a success: a down server's answer must be a failure"));
        }
        if let Outcome::Http { status: 100..400, .. } = outcome {
            return Err(format!("`{word}` is not an error: a down server answers with a status from 400 to 599"));
        }
        Ok(FailWith { word: word.trim().to_string(), outcome })
    }
}

impl Serialize for FailWith {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.word)
    }
}

impl<'de> Deserialize<'de> for FailWith {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = FailWith;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an outcome: refused, dropped, timeout, throttling or an HTTP status such as 503")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<FailWith, E> {
                FailWith::parse(v).map_err(E::custom)
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<FailWith, E> {
                FailWith::parse(&v.to_string()).map_err(E::custom)
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<FailWith, E> {
                FailWith::parse(&v.to_string()).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// `idempotency`: the calls' class ([`Idempotency`]).
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum IdempotencyClass {
    /// Safe to repeat (GET, a whole-object PUT).
    #[default]
    Idempotent,
    /// Conditionally idempotent, with its precondition given (GCS `ifGenerationMatch`).
    Conditional,
    /// Conditionally idempotent without the precondition: not safe.
    ConditionalWithoutPrecondition,
    /// Never safe (POST, append).
    Never,
}

impl IdempotencyClass {
    pub fn model(self) -> Idempotency {
        match self {
            IdempotencyClass::Idempotent => Idempotency::Idempotent,
            IdempotencyClass::Conditional => Idempotency::Conditional { precondition: true },
            IdempotencyClass::ConditionalWithoutPrecondition => Idempotency::Conditional { precondition: false },
            IdempotencyClass::Never => Idempotency::Never,
        }
    }
}

impl CallsConfig {
    /// How long a refused attempt takes to fail.
    pub fn fail_time(&self) -> SimDuration {
        self.fail_time.unwrap_or(self.attempt_time)
    }

    /// How far the first calls spread after `start`: `start_spread` as written, else with
    /// a steady phase about one interval (the residual's range, or mean for Poisson).
    pub fn first_calls_spread(&self) -> SimDuration {
        match self.interval {
            Some(i) if self.start_spread == SimDuration::ZERO && self.phase == Phase::Steady => i,
            _ => self.start_spread,
        }
    }

    /// Checks the type system cannot make; keys relative to `[calls]`.
    pub fn validate(&self) -> ConfigErrors {
        let mut errors = ConfigErrors::new();
        let mut err = |k: &str, m: String| errors.push(k.to_string(), m);
        if self.clients == 0 {
            err("clients", "must be at least 1".into());
        }
        match (self.interval, self.calls_per_client) {
            (Some(i), _) if i == SimDuration::ZERO => err("interval", "must be longer than 0s".into()),
            (_, Some(0)) => err("calls_per_client", "must be at least 1".into()),
            (None, Some(n)) if n > 1 => {
                err("calls_per_client", format!("{n} calls need an `interval` between them"));
            }
            _ => {}
        }
        if self.timeout == SimDuration::ZERO {
            err("timeout", "must be longer than 0s".into());
        }
        if self.attempt_time > self.timeout {
            err(
                "attempt_time",
                format!(
                    "{} is longer than the timeout ({}): every attempt would time out",
                    self.attempt_time, self.timeout
                ),
            );
        }
        if let Some(f) = self.fail_time
            && f > self.timeout
        {
            err("fail_time", format!("{f} is longer than the timeout ({}): raise timeout", self.timeout));
        }
        if self.tiers.len() > MAX_TIERS {
            err("tiers", format!("at most {MAX_TIERS} levels (has {})", self.tiers.len()));
        }
        for (i, &t) in self.tiers.iter().enumerate() {
            if t == 0 {
                err(&format!("tiers[{i}]"), "must be at least 1 attempt".into());
            }
        }
        let product: u64 = self.tiers.iter().map(|&t| u64::from(t)).product();
        if product > MAX_TIER_PRODUCT {
            err("tiers", format!("{product} library calls per logical call; at most {MAX_TIER_PRODUCT}"));
        }
        if self.keep_backoff && (self.interval.is_none() || self.pacing != Pacing::Closed) {
            err(
                "keep_backoff",
                "needs calls one after another: set `interval` and `pacing = \"closed\"` (a kept backoff is \
                 one client's state, which overlapping calls would share)"
                    .into(),
            );
        }
        if self.pacing != Pacing::Open && self.interval.is_none() {
            err("pacing", "applies to calls repeated at `interval`: set interval or remove pacing".into());
        }
        if self.phase == Phase::Together {
            if self.interval.is_none() {
                err("phase", "applies to calls repeated at `interval`: set interval or remove phase".into());
            } else if self.start_spread > SimDuration::ZERO {
                err(
                    "phase",
                    format!(
                        "\"together\" starts every client at `start`, but start_spread = {} spreads them: \
                         remove one",
                        self.start_spread
                    ),
                );
            }
        }
        if !(0.0..=1.0).contains(&self.permanent_fraction) {
            err("permanent_fraction", format!("must be a share between 0 and 1, got {}", self.permanent_fraction));
        }
        let permanent = matches!(self.permanent_with.outcome,
            Outcome::Http { status, throttling: false, .. } if (400..500).contains(&status) && status != 408 && status != 429);
        if !permanent {
            err(
                "permanent_with",
                format!(
                    "`{}` is a transient failure; a permanent error is a 4xx such as 400 or 403",
                    self.permanent_with.word
                ),
            );
        }
        if self.monitor.bin == SimDuration::ZERO {
            err("monitor.bin", "must be longer than 0s".into());
        }
        if let Some(a) = self.monitor.retry_share_alert
            && !(a > 0.0 && a <= 1.0)
        {
            err("monitor.retry_share_alert", format!("must be a share above 0 and at most 1, got {a}"));
        }
        if self.outage == Some(SimDuration::ZERO) {
            err("outage", "must be longer than 0s (leave it out for a server that stays up)".into());
        }
        errors
    }

    /// The server with `outage` added, or the errors (keys relative to the scenario)
    /// of mixing it with down times written under `[server]`.
    pub fn server(&self, server: Option<&ServerConfig>) -> Result<ServerConfig, ConfigErrors> {
        let mut s = server.cloned().unwrap_or_default();
        if let Some(duration) = self.outage {
            if !s.outage.is_empty() || !s.restart.is_empty() {
                let mut errors = ConfigErrors::new();
                errors.push(
                    "calls.outage",
                    "is a shorthand for one outage at `start`; with [[server.outage]] or [[server.restart]] \
                     entries, write this one there too",
                );
                return Err(errors);
            }
            s.outage.push(Outage { at: self.start, duration });
        }
        Ok(s)
    }
}

/// `[calls]` resolved: the policy's constants filled in, the server's down times merged.
#[derive(Clone, Debug, Serialize)]
pub struct CallsSpec {
    pub calls: CallsConfig,
    /// The retry policy with the preset's fields and the defaults filled in.
    pub policy: RetryPolicy,
    /// The server, `calls.outage` included.
    pub server: ServerConfig,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct File {
        calls: CallsConfig,
    }

    fn parse(text: &str) -> Result<CallsConfig, String> {
        toml::from_str::<File>(&format!("[calls]\n{text}\n")).map(|f| f.calls).map_err(|e| e.to_string())
    }

    fn keys(c: &CallsConfig) -> Vec<String> {
        c.validate().keys().into_iter().map(str::to_string).collect()
    }

    #[test]
    fn defaults_are_one_call_refused_at_once_with_a_60s_timeout() {
        let c = parse("clients = 3").unwrap();
        assert_eq!(
            (c.start, c.interval, c.attempt_time, c.fail_time()),
            (SimDuration::ZERO, None, SimDuration::ZERO, SimDuration::ZERO)
        );
        assert_eq!(c.timeout, SimDuration::from_secs(60));
        assert_eq!(c.fail_with.outcome, Outcome::Refused);
        assert_eq!(c.idempotency.model(), Idempotency::Idempotent);
        assert!(c.validate().is_empty());
    }

    #[test]
    fn fail_with_takes_words_and_statuses_but_not_a_success() {
        assert_eq!(parse("clients = 1\nfail_with = 503").unwrap().fail_with.outcome, Outcome::status(503));
        assert_eq!(parse("clients = 1\nfail_with = \"throttling\"").unwrap().fail_with.word, "throttling");
        assert!(parse("clients = 1\nfail_with = 200").unwrap_err().contains("is a success"));
        assert!(parse("clients = 1\nfail_with = 100").unwrap_err().contains("from 400 to 599"));
        assert!(parse("clients = 1\nfail_with = 304").unwrap_err().contains("from 400 to 599"));
        assert!(parse("clients = 1\nfail_with = \"teapot\"").unwrap_err().contains("not an outcome"));
        assert!(parse("clients = 1\nidempotency = \"maybe\"").unwrap_err().contains("maybe"));
    }

    #[test]
    fn impossible_combinations_are_named_by_key() {
        let c = parse(
            "clients = 0\ncalls_per_client = 3\ntimeout = \"1s\"\nattempt_time = \"2s\"\nfail_time = \"5s\"\n\
             tiers = [3, 0]\noutage = \"0s\"",
        )
        .unwrap();
        assert_eq!(keys(&c), ["clients", "calls_per_client", "attempt_time", "fail_time", "tiers[1]", "outage"]);
        let deep = parse("clients = 1\ntiers = [100, 100, 2]").unwrap();
        assert_eq!(keys(&deep), ["tiers"]);
    }

    #[test]
    fn phase_is_steady_by_default_together_on_request_and_checked_against_its_neighbours() {
        let c = parse("clients = 1\ninterval = \"2s\"").unwrap();
        assert_eq!(c.phase, Phase::Steady);
        assert_eq!(c.first_calls_spread(), SimDuration::from_secs(2));
        let together = parse("clients = 1\ninterval = \"2s\"\nphase = \"together\"").unwrap();
        assert_eq!((together.phase, together.first_calls_spread()), (Phase::Together, SimDuration::ZERO));
        assert!(together.validate().is_empty());
        // A written spread is the phase: it wins over the steady default.
        let spread = parse("clients = 1\ninterval = \"2s\"\nstart_spread = \"5s\"").unwrap();
        assert_eq!(spread.first_calls_spread(), SimDuration::from_secs(5));
        let both = parse("clients = 1\ninterval = \"2s\"\nstart_spread = \"5s\"\nphase = \"together\"").unwrap();
        assert_eq!(keys(&both), ["phase"]);
        assert_eq!(keys(&parse("clients = 1\nphase = \"together\"").unwrap()), ["phase"]);
        let e = parse("clients = 1\ninterval = \"2s\"\nphase = \"steddy\"").unwrap_err();
        assert!(e.contains("unknown variant `steddy`, expected `steady` or `together`"), "{e}");
    }

    #[test]
    fn the_outage_shorthand_becomes_a_server_outage_at_start_and_does_not_mix() {
        let c = parse("clients = 1\nstart = \"5s\"\noutage = \"2min\"").unwrap();
        let s = c.server(None).unwrap();
        assert_eq!(s.outage, vec![Outage { at: SimDuration::from_secs(5), duration: SimDuration::from_secs(120) }]);
        let written = ServerConfig { outage: s.outage.clone(), ..ServerConfig::default() };
        assert_eq!(c.server(Some(&written)).unwrap_err().keys(), ["calls.outage"]);
    }
}
