//! What an attempt ended with, which outcomes a policy retries, and how safe a call is
//! to repeat.
//!
//! Transient failures are timeouts, dropped and refused connections, 408, 429 and 5xx;
//! anything a policy does not list in `retry_on` is permanent for it and fails the call
//! at once, reported with the outcome (so a 400, 401 or 403 gives up immediately under
//! every preset but the "retry everything" ones, tenacity, python-backoff and backon).

use std::fmt;

use serde::{Serialize, Serializer};

use super::retry_after::RetryAfter;

/// How one attempt ended. `Copy` and small: the engine hands one to
/// [`RetryState::on_outcome`](super::RetryState::on_outcome) per attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The call succeeded (any 2xx is a success too).
    Success,
    /// The client's per-attempt timeout fired. `applied`: the server had already done
    /// the request's work (only the answer was lost).
    Timeout { applied: bool },
    /// The connection broke after the request was written (reset, server restart).
    Dropped { applied: bool },
    /// The connection could not be made: the request was never written, so it was
    /// certainly not applied (finagle's "requeueable" failures).
    Refused,
    /// An HTTP answer (gRPC statuses map onto these: UNAVAILABLE ≈ 503).
    Http {
        status: u16,
        /// `Retry-After` / `x-amz-retry-after` / `grpc-retry-pushback-ms`, if sent.
        retry_after: Option<RetryAfter>,
        /// The error names a throttling code (AWS `Throttling`, `SlowDown`,
        /// `TooManyRequestsException`, …), whatever the status. AWS counts these
        /// differently (retry quota cost, backoff base, adaptive rate limiter).
        throttling: bool,
    },
}

impl Outcome {
    /// An HTTP answer without Retry-After or throttling code.
    pub const fn status(status: u16) -> Outcome {
        Outcome::Http { status, retry_after: None, throttling: false }
    }

    /// The same HTTP answer carrying a server hint; other outcomes are unchanged.
    pub fn with_retry_after(self, hint: RetryAfter) -> Outcome {
        match self {
            Outcome::Http { status, throttling, .. } => Outcome::Http { status, retry_after: Some(hint), throttling },
            other => other,
        }
    }

    /// The same HTTP answer marked as a throttling error.
    pub fn throttling(self) -> Outcome {
        match self {
            Outcome::Http { status, retry_after, .. } => Outcome::Http { status, retry_after, throttling: true },
            other => other,
        }
    }

    pub fn is_success(&self) -> bool {
        match self {
            Outcome::Success => true,
            Outcome::Http { status, .. } => (200..300).contains(status),
            _ => false,
        }
    }

    /// The server did the work although the attempt failed.
    pub fn applied(&self) -> bool {
        matches!(self, Outcome::Timeout { applied: true } | Outcome::Dropped { applied: true })
    }

    pub fn is_throttling(&self) -> bool {
        matches!(self, Outcome::Http { throttling: true, .. })
    }

    pub fn is_timeout(&self) -> bool {
        matches!(self, Outcome::Timeout { .. })
    }

    pub fn retry_after(&self) -> Option<RetryAfter> {
        match self {
            Outcome::Http { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// Parses the command line's words: `timeout`, `dropped`, `refused`, a status such
    /// as `503`, or `throttling` (a 429 carrying a throttling code).
    pub fn parse(word: &str) -> Result<Outcome, String> {
        match word.trim() {
            "timeout" => Ok(Outcome::Timeout { applied: false }),
            "dropped" => Ok(Outcome::Dropped { applied: false }),
            "refused" => Ok(Outcome::Refused),
            "throttling" => Ok(Outcome::status(429).throttling()),
            w => match w.parse::<u16>() {
                Ok(code) if (100..600).contains(&code) => Ok(Outcome::status(code)),
                _ => Err(format!(
                    "`{w}` is not an outcome: expected timeout, dropped, refused, throttling or an HTTP status from 100 to 599"
                )),
            },
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Success => f.write_str("success"),
            Outcome::Timeout { .. } => f.write_str("timeout"),
            Outcome::Dropped { .. } => f.write_str("dropped connection"),
            Outcome::Refused => f.write_str("refused connection"),
            Outcome::Http { status, throttling, .. } => {
                write!(f, "HTTP {status}")?;
                if *throttling {
                    f.write_str(" (throttling)")?;
                }
                Ok(())
            }
        }
    }
}

/// One entry of `retry_on`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Condition {
    /// Every failure (tenacity, python-backoff and backon retry any exception).
    Any,
    Timeout,
    Dropped,
    Refused,
    /// One HTTP status.
    Status(u16),
    /// A whole class: `4` for 4xx, `5` for 5xx.
    Class(u8),
    /// An outcome marked as a throttling error, whatever its status.
    Throttling,
}

impl Condition {
    pub fn parse(word: &str) -> Result<Condition, String> {
        let w = word.trim();
        Ok(match w {
            "any" => Condition::Any,
            "timeout" => Condition::Timeout,
            "dropped" => Condition::Dropped,
            "refused" => Condition::Refused,
            "throttling" => Condition::Throttling,
            "4xx" => Condition::Class(4),
            "5xx" => Condition::Class(5),
            _ => match w.parse::<u16>() {
                Ok(code) if (300..600).contains(&code) => Condition::Status(code),
                _ => {
                    return Err(format!(
                        "`{w}` is not a retry condition: expected any, timeout, dropped, refused, throttling, 4xx, 5xx or an HTTP status from 300 to 599"
                    ));
                }
            },
        })
    }

    fn matches(&self, o: &Outcome) -> bool {
        if o.is_success() {
            return false;
        }
        match (self, o) {
            (Condition::Any, _) => true,
            (Condition::Timeout, Outcome::Timeout { .. }) => true,
            (Condition::Dropped, Outcome::Dropped { .. }) => true,
            (Condition::Refused, Outcome::Refused) => true,
            (Condition::Status(c), Outcome::Http { status, .. }) => c == status,
            (Condition::Class(k), Outcome::Http { status, .. }) => status / 100 == u16::from(*k),
            (Condition::Throttling, Outcome::Http { throttling: true, .. }) => true,
            _ => false,
        }
    }
}

impl fmt::Display for Condition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Condition::Any => f.write_str("any"),
            Condition::Timeout => f.write_str("timeout"),
            Condition::Dropped => f.write_str("dropped"),
            Condition::Refused => f.write_str("refused"),
            Condition::Status(c) => write!(f, "{c}"),
            Condition::Class(k) => write!(f, "{k}xx"),
            Condition::Throttling => f.write_str("throttling"),
        }
    }
}

/// Which failures a policy retries. Everything else is permanent for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetryOn(pub Vec<Condition>);

impl RetryOn {
    /// The usual transient set: timeouts, dropped and refused connections, 408,
    /// 429 and 5xx.
    pub fn transient() -> RetryOn {
        RetryOn(vec![
            Condition::Timeout,
            Condition::Dropped,
            Condition::Refused,
            Condition::Status(408),
            Condition::Status(429),
            Condition::Class(5),
        ])
    }

    pub fn parse(words: &[String]) -> Result<RetryOn, String> {
        words.iter().map(|w| Condition::parse(w)).collect::<Result<Vec<_>, _>>().map(RetryOn)
    }

    /// Is this (failed) outcome retryable under the policy?
    pub fn matches(&self, o: &Outcome) -> bool {
        self.0.iter().any(|c| c.matches(o))
    }

    /// The outcome `explain` fails its calls with: a 503 when the policy retries it,
    /// otherwise the first condition's own outcome.
    pub fn typical_failure(&self) -> Outcome {
        let o503 = Outcome::status(503);
        if self.matches(&o503) {
            return o503;
        }
        match self.0.first() {
            Some(Condition::Timeout) => Outcome::Timeout { applied: false },
            Some(Condition::Dropped) => Outcome::Dropped { applied: false },
            Some(Condition::Refused) => Outcome::Refused,
            Some(Condition::Status(c)) => Outcome::status(*c),
            Some(Condition::Class(k)) => Outcome::status(u16::from(*k) * 100),
            Some(Condition::Throttling) => Outcome::status(429).throttling(),
            Some(Condition::Any) | None => o503,
        }
    }
}

impl fmt::Display for RetryOn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("nothing");
        }
        let words: Vec<String> = self.0.iter().map(|c| c.to_string()).collect();
        f.write_str(&words.join(", "))
    }
}

impl Serialize for RetryOn {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(|c| c.to_string()))
    }
}

/// How safe a logical call is to repeat. A property of the call, not of the policy.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Idempotency {
    /// Repeating it has the same effect as doing it once (GET, PUT of a whole object).
    #[default]
    Idempotent,
    /// Safe only with a precondition (GCS `ifGenerationMatch`, an etag): retried only
    /// when `precondition` is true; without one it counts as [`Idempotency::Never`].
    Conditional { precondition: bool },
    /// Not safe (POST, append, a payment): retried only if the policy's
    /// `retry_non_idempotent` says so, and a retry after the server already did the work
    /// is a duplicate side effect.
    Never,
}

impl Idempotency {
    pub fn safe_to_retry(self) -> bool {
        matches!(self, Idempotency::Idempotent | Idempotency::Conditional { precondition: true })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn on(words: &[&str]) -> RetryOn {
        RetryOn::parse(&words.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn transient_set_is_timeouts_connections_408_429_and_5xx() {
        let t = RetryOn::transient();
        for o in [
            Outcome::Timeout { applied: false },
            Outcome::Dropped { applied: true },
            Outcome::Refused,
            Outcome::status(408),
            Outcome::status(429),
            Outcome::status(500),
            Outcome::status(503),
            Outcome::status(599),
        ] {
            assert!(t.matches(&o), "{o}");
        }
        for code in [400, 401, 403, 404, 409, 412] {
            assert!(!t.matches(&Outcome::status(code)), "{code}");
        }
        assert!(!t.matches(&Outcome::Success));
        assert_eq!(t.to_string(), "timeout, dropped, refused, 408, 429, 5xx".to_string());
    }

    #[test]
    fn throttling_matches_any_status_with_the_code() {
        let r = on(&["throttling"]);
        assert!(r.matches(&Outcome::status(400).throttling()));
        assert!(!r.matches(&Outcome::status(400)));
        assert!(on(&["any"]).matches(&Outcome::status(403)));
        assert!(!on(&["any"]).matches(&Outcome::status(204)));
    }

    #[test]
    fn conditions_and_outcomes_parse_and_refuse_nonsense() {
        assert_eq!(Condition::parse("5xx"), Ok(Condition::Class(5)));
        assert!(Condition::parse("200").is_err());
        assert!(Condition::parse("teapot").unwrap_err().contains("not a retry condition"));
        assert_eq!(Outcome::parse("refused"), Ok(Outcome::Refused));
        assert_eq!(Outcome::parse("throttling"), Ok(Outcome::status(429).throttling()));
        assert!(Outcome::parse("700").is_err());
    }

    #[test]
    fn typical_failure_prefers_503() {
        assert_eq!(RetryOn::transient().typical_failure(), Outcome::status(503));
        assert_eq!(on(&["refused"]).typical_failure(), Outcome::Refused);
        assert_eq!(on(&["any"]).typical_failure(), Outcome::status(503));
    }

    #[test]
    fn idempotency_classes() {
        assert!(Idempotency::Idempotent.safe_to_retry());
        assert!(Idempotency::Conditional { precondition: true }.safe_to_retry());
        assert!(!Idempotency::Conditional { precondition: false }.safe_to_retry());
        assert!(!Idempotency::Never.safe_to_retry());
    }
}
