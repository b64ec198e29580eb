//! A server's hint about when to come back, and how a policy combines it with the delay
//! it computed itself.
//!
//! RFC 9110 §10.2.3: `Retry-After` is either a number of seconds or an HTTP date; a
//! server sends it with 503 (and 429, RFC 6585 §4). AWS sends `x-amz-retry-after` in
//! milliseconds and botocore's standard mode 2.1 clamps it to [t, t + 5 s] around its
//! own delay t; gRPC's `grpc-retry-pushback-ms` replaces the backoff and (grpc-java
//! `RetriableStream`) resets the next backoff to the initial one. A date that is already
//! past gives no hint, and the computed backoff is used.
//!
//! Header names are not modelled: a policy either reads the server's hint
//! (`retry_after` = `replace` or `max`) or does not (`ignore`). botocore reads only
//! `x-amz-retry-after` and gRPC only its pushback trailer, so a scenario whose server
//! sends a plain `Retry-After` to those clients should set `retry_after = "ignore"` for
//! them. The hint is honoured on whatever retryable failure carries it; servers send it
//! with 503 and 429. It is not capped by the policy's cap.

use serde::Serialize;

use crate::engine::time::{SimDuration, SimTime};

/// A hint as the server sent it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetryAfter {
    /// `Retry-After: 120` — whole seconds.
    Seconds(u64),
    /// `Retry-After: Fri, 31 Dec 1999 23:59:59 GMT`, already converted to simulated time
    /// (the server model does that; an HTTP date has one-second resolution).
    Date(SimTime),
    /// Milliseconds: AWS `x-amz-retry-after`, gRPC `grpc-retry-pushback-ms`.
    Millis(u64),
}

impl RetryAfter {
    /// The wait this hint asks for, counted from `now`; `None` for a date that is not in
    /// the future (it falls back to the computed backoff).
    pub fn delay(self, now: SimTime) -> Option<SimDuration> {
        match self {
            RetryAfter::Seconds(s) => Some(SimDuration::from_secs(s)),
            RetryAfter::Millis(ms) => Some(SimDuration::from_millis(ms)),
            RetryAfter::Date(at) if at > now => Some(at - now),
            RetryAfter::Date(_) => None,
        }
    }
}

super::keyword_enum! {
    /// `retry_after`: what a server's hint does to the computed delay.
    RetryAfterMode {
        /// The hint is not read (most client libraries: api-core, tenacity, gcloud).
        Ignore => "ignore",
        /// The hint is the delay (gRPC pushback; HTTP clients that honour Retry-After).
        Replace => "replace",
        /// The larger of the two; with `retry_after_max_extra` the hint is first
        /// clamped to computed + extra (botocore 2.1: max(t, min(hint, t + 5 s))).
        Max => "max",
    }
}

/// The resolved Retry-After handling.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct RetryAfterPolicy {
    pub mode: RetryAfterMode,
    /// `max` only: the hint counts up to computed + this.
    pub max_extra: Option<SimDuration>,
    /// A hint that was used resets the next backoff to `base` (grpc-java).
    pub resets_backoff: bool,
}

impl RetryAfterPolicy {
    /// Will the hint replace the backoff outright, so that no backoff is drawn?
    pub fn replaces(&self, hint: Option<SimDuration>) -> bool {
        self.mode == RetryAfterMode::Replace && hint.is_some()
    }

    /// Combines the computed delay with the hint's delay (if the hint is usable).
    /// Returns the delay and whether the hint decided it.
    pub fn combine(&self, computed: SimDuration, hint: Option<SimDuration>) -> (SimDuration, bool) {
        let Some(hint) = hint else {
            return (computed, false);
        };
        match self.mode {
            RetryAfterMode::Ignore => (computed, false),
            RetryAfterMode::Replace => (hint, true),
            RetryAfterMode::Max => {
                // botocore standard.py (2.1): max(t_i, min(retry_after, t_i + 5)).
                let hint = match self.max_extra {
                    Some(extra) => hint.min(computed.saturating_add(extra)),
                    None => hint,
                };
                if hint > computed { (hint, true) } else { (computed, false) }
            }
        }
    }
}

trait SaturatingAdd {
    fn saturating_add(self, other: SimDuration) -> SimDuration;
}

impl SaturatingAdd for SimDuration {
    fn saturating_add(self, other: SimDuration) -> SimDuration {
        SimDuration(self.0.saturating_add(other.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: u64) -> SimDuration {
        SimDuration::from_secs(x)
    }

    fn policy(mode: RetryAfterMode, max_extra: Option<SimDuration>) -> RetryAfterPolicy {
        RetryAfterPolicy { mode, max_extra, resets_backoff: false }
    }

    #[test]
    fn rfc9110_seconds_and_dates_and_a_past_date_falls_back() {
        let now = SimTime(10_000_000_000);
        assert_eq!(RetryAfter::Seconds(120).delay(now), Some(s(120)));
        assert_eq!(RetryAfter::Millis(1500).delay(now), Some(SimDuration::from_millis(1500)));
        assert_eq!(RetryAfter::Date(SimTime(13_000_000_000)).delay(now), Some(s(3)));
        assert_eq!(RetryAfter::Date(SimTime(9_000_000_000)).delay(now), None);
        assert_eq!(RetryAfter::Date(now).delay(now), None);
    }

    #[test]
    fn replace_max_and_ignore() {
        let t = s(2);
        assert_eq!(policy(RetryAfterMode::Ignore, None).combine(t, Some(s(9))), (t, false));
        assert_eq!(policy(RetryAfterMode::Replace, None).combine(t, Some(s(1))), (s(1), true));
        assert_eq!(policy(RetryAfterMode::Max, None).combine(t, Some(s(9))), (s(9), true));
        assert_eq!(policy(RetryAfterMode::Max, None).combine(t, Some(s(1))), (t, false));
        // No usable hint: the backoff.
        assert_eq!(policy(RetryAfterMode::Replace, None).combine(t, None), (t, false));
    }

    #[test]
    fn botocore_2_1_clamps_the_hint_to_t_plus_5s() {
        // standard.py ExponentialBackoff.delay_amount: max(t_i, min(retry_after, 5 + t_i)).
        let p = policy(RetryAfterMode::Max, Some(s(5)));
        assert_eq!(p.combine(s(2), Some(s(60))), (s(7), true));
        assert_eq!(p.combine(s(2), Some(s(4))), (s(4), true));
        assert_eq!(p.combine(s(2), Some(s(1))), (s(2), false));
    }
}
