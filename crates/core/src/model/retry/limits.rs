//! When a policy stops: an attempt limit that says whether it counts attempts or
//! retries, and a deadline with an explicit rule for the sleep that would cross it.
//!
//! The deadline is measured on one of three clocks (`deadline_clock`):
//!
//! - `wall`: time since the call started, read when the failed attempt ends, so attempt
//!   time counts (api-core's `time.monotonic()`, tenacity's `seconds_since_start`,
//!   google-cloud-cpp's `system_clock`).
//! - `attempt-start`: time since the call started, read when the failed attempt
//!   *began* (python-backoff 2.2 sets `elapsed` before calling the target).
//! - `sleeps-only`: the sum of the sleeps so far; attempt time does not count (backon's
//!   `with_total_delay`).
//!
//! and stops by one of these rules (`deadline_rule`), E being the clock's reading, s the
//! planned sleep and D the deadline:
//!
//! | rule | gives up | otherwise | library |
//! |---|---|---|---|
//! | `give-up-before-crossing` | if E + s > D, without sleeping | sleeps s | api-core ≥ 2.11, backon |
//! | `give-up-before-reaching` | if E + s ≥ D, without sleeping | sleeps s | tenacity `stop_before_delay` |
//! | `truncate` | if E ≥ D | sleeps min(s, D − E), then attempts | api-core ≤ 2.10, python-backoff |
//! | `sleep-then-attempt` | if E ≥ D | sleeps s in full, attempts | tenacity `stop_after_delay` |
//! | `sleep-then-stop` | if E ≥ D; or after sleeping s if that reaches D, with no attempt | sleeps s | google-cloud-cpp |
//! | `cut` | if E ≥ D; or at D itself if the sleep would cross it | sleeps s | gRPC, envoy: the call's deadline cancels what is pending |
//!
//! `cut` needs the wall clock. Under `cut` the engine must also cancel an attempt still
//! in flight at the deadline ([`super::RetryState::deadline_at`] says when).

use serde::{Serialize, Serializer};

use crate::engine::time::{SimDuration, SimTime};

/// The attempt limit, as the library counts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttemptLimit {
    /// At most this many attempts in all, the first included (`max_attempts`).
    Attempts(u32),
    /// At most this many retries after the first attempt (`max_retries`).
    Retries(u32),
    /// No attempt limit: a deadline, a budget or nothing stops the call.
    Unlimited,
}

impl AttemptLimit {
    /// The limit in attempts, the first included.
    pub fn max_attempts(self) -> Option<u32> {
        match self {
            AttemptLimit::Attempts(n) => Some(n),
            AttemptLimit::Retries(n) => Some(n.saturating_add(1)),
            AttemptLimit::Unlimited => None,
        }
    }
}

impl std::fmt::Display for AttemptLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AttemptLimit::Attempts(1) => f.write_str("1 attempt (no retry)"),
            AttemptLimit::Attempts(2) => f.write_str("2 attempts (1 retry)"),
            AttemptLimit::Attempts(n) => write!(f, "{n} attempts ({} retries)", n - 1),
            AttemptLimit::Retries(1) => f.write_str("1 retry (2 attempts)"),
            AttemptLimit::Retries(n) => write!(f, "{n} retries ({} attempts)", n.saturating_add(1)),
            AttemptLimit::Unlimited => f.write_str("no attempt limit"),
        }
    }
}

impl Serialize for AttemptLimit {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(1))?;
        match self {
            AttemptLimit::Attempts(n) => m.serialize_entry("max_attempts", n)?,
            AttemptLimit::Retries(n) => m.serialize_entry("max_retries", n)?,
            AttemptLimit::Unlimited => m.serialize_entry("max_attempts", "none")?,
        }
        m.end()
    }
}

super::keyword_enum! {
    /// `deadline_rule`: what happens to the sleep that would cross the deadline.
    StopRule {
        GiveUpBeforeCrossing => "give-up-before-crossing",
        GiveUpBeforeReaching => "give-up-before-reaching",
        Truncate => "truncate",
        SleepThenAttempt => "sleep-then-attempt",
        SleepThenStop => "sleep-then-stop",
        Cut => "cut",
    }
}

super::keyword_enum! {
    /// `deadline_clock`: what counts toward the deadline.
    DeadlineClock {
        Wall => "wall",
        AttemptStart => "attempt-start",
        SleepsOnly => "sleeps-only",
    }
}

impl StopRule {
    /// One line for `explain` and `presets`.
    pub fn describe(self) -> &'static str {
        match self {
            StopRule::GiveUpBeforeCrossing => "gives up without sleeping when elapsed + sleep > deadline",
            StopRule::GiveUpBeforeReaching => "gives up without sleeping when elapsed + sleep ≥ deadline",
            StopRule::Truncate => "truncates the last sleep to the deadline and attempts once more at it",
            StopRule::SleepThenAttempt => "takes the sleep that crosses the deadline in full and attempts once more",
            StopRule::SleepThenStop => {
                "takes the sleep that crosses the deadline in full, then stops without attempting"
            }
            StopRule::Cut => "the deadline ends the call wherever it is, mid-sleep or mid-attempt",
        }
    }
}

impl DeadlineClock {
    pub fn describe(self) -> &'static str {
        match self {
            DeadlineClock::Wall => "from the call's start, attempt time included",
            DeadlineClock::AttemptStart => "from the call's start, read when the failed attempt began",
            DeadlineClock::SleepsOnly => "counting sleeps only, not attempt time",
        }
    }
}

/// What the stop rule makes of one planned sleep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// Sleep this long (the plan, or the plan truncated at the deadline) and attempt.
    Sleep { sleep: SimDuration, truncated: bool },
    /// Give up after waiting this long (zero: at once; `sleep-then-stop`: the full sleep;
    /// `cut`: until the deadline).
    GiveUp { after: SimDuration },
}

/// Applies `rule` to a planned `sleep`. `elapsed` is the clock's reading now; once the
/// sleep is over the clock is taken to read `elapsed + sleep`.
pub fn apply(rule: StopRule, deadline: SimDuration, elapsed: SimDuration, sleep: SimDuration) -> Stop {
    let after = SimDuration(elapsed.0.saturating_add(sleep.0));
    let at_once = Stop::GiveUp { after: SimDuration::ZERO };
    let full = Stop::Sleep { sleep, truncated: false };
    match rule {
        // api-core retry_unary.py / retry_base.py: `if deadline is not None and
        // time.monotonic() + next_sleep > deadline: raise RetryError`.
        StopRule::GiveUpBeforeCrossing => {
            if after > deadline {
                at_once
            } else {
                full
            }
        }
        // tenacity stop_before_delay: seconds_since_start + upcoming_sleep >= max_delay.
        StopRule::GiveUpBeforeReaching => {
            if after >= deadline {
                at_once
            } else {
                full
            }
        }
        // api-core retry.py (≤ 2.10): `if deadline_datetime <= now: raise` else
        // `sleep = min(time_to_deadline, sleep)`; python-backoff `_next_wait`:
        // `min(seconds, max_time - elapsed)` after `elapsed >= max_time` gave up.
        StopRule::Truncate => {
            if elapsed >= deadline {
                at_once
            } else if after > deadline {
                Stop::Sleep { sleep: deadline - elapsed, truncated: true }
            } else {
                full
            }
        }
        // tenacity stop_after_delay: stop when seconds_since_start >= max_delay at the end
        // of an attempt; the wait was already drawn and is slept in full otherwise.
        StopRule::SleepThenAttempt => {
            if elapsed >= deadline {
                at_once
            } else {
                full
            }
        }
        // google-cloud-cpp: OnFailure returns false once IsExhausted (now >= deadline);
        // otherwise sleep_for(delay), and `while (!retry_policy.IsExhausted())` ends the
        // loop without another attempt if the sleep reached the deadline.
        StopRule::SleepThenStop => {
            if elapsed >= deadline {
                at_once
            } else if after >= deadline {
                Stop::GiveUp { after: sleep }
            } else {
                full
            }
        }
        // gRPC (A6: "the call deadline spans all attempts"), envoy's route timeout.
        StopRule::Cut => {
            if elapsed >= deadline {
                at_once
            } else if after >= deadline {
                Stop::GiveUp { after: deadline - elapsed }
            } else {
                full
            }
        }
    }
}

/// The clock's reading, given the call's start, the failed attempt's start, now and
/// the sleeps so far.
pub fn elapsed(
    clock: DeadlineClock,
    call_start: SimTime,
    attempt_start: SimTime,
    now: SimTime,
    slept: SimDuration,
) -> SimDuration {
    match clock {
        DeadlineClock::Wall => now.saturating_since(call_start),
        DeadlineClock::AttemptStart => attempt_start.saturating_since(call_start),
        DeadlineClock::SleepsOnly => slept,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: u64) -> SimDuration {
        SimDuration::from_secs(x)
    }

    #[test]
    fn limits_count_what_they_say() {
        assert_eq!(AttemptLimit::Attempts(5).max_attempts(), Some(5));
        assert_eq!(AttemptLimit::Retries(23).max_attempts(), Some(24));
        assert_eq!(AttemptLimit::Unlimited.max_attempts(), None);
        assert_eq!(AttemptLimit::Retries(3).to_string(), "3 retries (4 attempts)");
    }

    #[test]
    fn each_rule_at_its_edge() {
        let d = s(120);
        // 110 s elapsed, a 20 s sleep crosses 120 s.
        let (e, sl) = (s(110), s(20));
        assert_eq!(apply(StopRule::GiveUpBeforeCrossing, d, e, sl), Stop::GiveUp { after: s(0) });
        assert_eq!(apply(StopRule::GiveUpBeforeReaching, d, e, sl), Stop::GiveUp { after: s(0) });
        assert_eq!(apply(StopRule::Truncate, d, e, sl), Stop::Sleep { sleep: s(10), truncated: true });
        assert_eq!(apply(StopRule::SleepThenAttempt, d, e, sl), Stop::Sleep { sleep: s(20), truncated: false });
        assert_eq!(apply(StopRule::SleepThenStop, d, e, sl), Stop::GiveUp { after: s(20) });
        assert_eq!(apply(StopRule::Cut, d, e, sl), Stop::GiveUp { after: s(10) });
        // Landing exactly on the deadline: only "crossing" allows it.
        let sl = s(10);
        assert_eq!(apply(StopRule::GiveUpBeforeCrossing, d, e, sl), Stop::Sleep { sleep: s(10), truncated: false });
        assert_eq!(apply(StopRule::GiveUpBeforeReaching, d, e, sl), Stop::GiveUp { after: s(0) });
        assert_eq!(apply(StopRule::SleepThenStop, d, e, sl), Stop::GiveUp { after: s(10) });
        // At or past the deadline every rule gives up at once.
        for rule in StopRule::ALL {
            assert_eq!(apply(*rule, d, s(120), s(1)), Stop::GiveUp { after: s(0) }, "{rule}");
        }
    }

    #[test]
    fn clocks_read_what_they_count() {
        let call = SimTime(1_000_000_000);
        let started = SimTime(5_000_000_000);
        let now = SimTime(7_000_000_000);
        assert_eq!(elapsed(DeadlineClock::Wall, call, started, now, s(1)), s(6));
        assert_eq!(elapsed(DeadlineClock::AttemptStart, call, started, now, s(1)), s(4));
        assert_eq!(elapsed(DeadlineClock::SleepsOnly, call, started, now, s(1)), s(1));
    }
}
