//! One downstream provider (an email service, a payment API) as a job's worker sees it:
//! how long a call takes and whether it fails, as a pure function of when the call
//! starts, whether the job is poison, and one uniform draw.
//!
//! Outside its down windows a provider answers every good job with success after
//! `call_time`. Inside a window a share `fail_fraction` of calls fail: `refuse` fails
//! after `fail_time` (a 503, a closed port), `hang` never answers and the worker gives up
//! at `timeout`. A poison job is refused after `fail_time` by every provider, every time:
//! the worker cannot tell it from a transient failure, so only the retry limit ends it.

use serde::{Deserialize, Serialize};

use crate::engine::time::{SimDuration, SimTime};
use crate::model::config_error::ConfigErrors;
use crate::model::fraction;

/// `[[jobs.provider]]`, in failover order.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    pub name: String,
    /// A successful call, request to reply.
    #[serde(default)]
    pub call_time: SimDuration,
    /// A refused call; `call_time` if unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fail_time: Option<SimDuration>,
    /// The worker's per-call timeout: a call without an answer fails then.
    #[serde(default = "default_timeout")]
    pub timeout: SimDuration,
    /// Down windows, in time order, not overlapping.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub down: Vec<DownWindow>,
}

/// `[[jobs.provider.down]]`: from `at` for `duration`, a share of calls fail.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DownWindow {
    pub at: SimDuration,
    pub duration: SimDuration,
    /// Share of the calls started in the window that fail.
    #[serde(default = "one", deserialize_with = "fraction::deserialize")]
    pub fail_fraction: f64,
    #[serde(default)]
    pub behavior: Behavior,
}

/// How a failing call fails.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Behavior {
    /// An explicit error after `fail_time`.
    #[default]
    Refuse,
    /// No answer: the worker's timeout ends the call.
    Hang,
}

/// The per-call timeout of most email and HTTP clients' examples.
fn default_timeout() -> SimDuration {
    SimDuration::from_secs(30)
}

fn one() -> f64 {
    1.0
}

/// How one call ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Answer {
    pub ok: bool,
    /// Whether the worker gave up waiting (a hang) rather than being told.
    pub timed_out: bool,
    pub took: SimDuration,
}

impl ProviderConfig {
    pub fn fail_time(&self) -> SimDuration {
        self.fail_time.unwrap_or(self.call_time)
    }

    /// The window holding `t` (windows are half open, `[at, at + duration)`).
    pub fn window_at(&self, t: SimTime) -> Option<&DownWindow> {
        let begun = self.down.partition_point(|w| w.at.as_nanos() <= t.as_nanos());
        let w = self.down[..begun].last()?;
        (t.as_nanos() < w.at.as_nanos().saturating_add(w.duration.as_nanos())).then_some(w)
    }

    /// The call started at `now`. `r` is a uniform draw in [0, 1): the call fails in a
    /// window when `r < fail_fraction`.
    pub fn answer(&self, now: SimTime, poison: bool, r: f64) -> Answer {
        let refused = Answer { ok: false, timed_out: false, took: self.fail_time() };
        if poison {
            return refused;
        }
        match self.window_at(now) {
            Some(w) if r < w.fail_fraction => match w.behavior {
                Behavior::Refuse => refused,
                Behavior::Hang => Answer { ok: false, timed_out: true, took: self.timeout },
            },
            _ => Answer { ok: true, timed_out: false, took: self.call_time },
        }
    }

    /// Checks the type system cannot make; keys relative to this provider.
    pub fn validate(&self) -> ConfigErrors {
        let mut errors = ConfigErrors::new();
        if self.name.trim().is_empty() {
            errors.push("name", "must not be empty: reports name the provider by it");
        }
        if self.timeout == SimDuration::ZERO {
            errors.push("timeout", "must be longer than 0s");
        }
        if self.call_time > self.timeout {
            errors.push(
                "call_time",
                format!("{} is longer than the timeout ({}): every call would time out", self.call_time, self.timeout),
            );
        }
        if let Some(f) = self.fail_time
            && f > self.timeout
        {
            errors.push("fail_time", format!("{f} is longer than the timeout ({}): raise timeout", self.timeout));
        }
        for (i, w) in self.down.iter().enumerate() {
            if w.duration == SimDuration::ZERO {
                errors.push(format!("down[{i}].duration"), "must be longer than 0s");
            }
            if !(0.0..=1.0).contains(&w.fail_fraction) {
                errors.push(
                    format!("down[{i}].fail_fraction"),
                    format!("must be between 0 and 1, got {}", w.fail_fraction),
                );
            }
            if i > 0 {
                let prev = &self.down[i - 1];
                let prev_end = SimDuration(prev.at.0.saturating_add(prev.duration.0));
                if w.at < prev_end {
                    errors.push(
                        format!("down[{i}].at"),
                        format!(
                            "{} is before the end of down[{}] ({}): list the windows in time order, not overlapping",
                            w.at,
                            i - 1,
                            prev_end
                        ),
                    );
                }
            }
        }
        errors
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn provider(text: &str) -> ProviderConfig {
        let text = if text.contains("name =") { text.to_string() } else { format!("name = \"p\"\n{text}") };
        toml::from_str(&text).unwrap_or_else(|e| panic!("{e}"))
    }

    fn at(s: u64) -> SimTime {
        SimTime(s * 1_000_000_000)
    }

    const WINDOWS: &str = "call_time = \"200ms\"\nfail_time = \"50ms\"\n\
        [[down]]\nat = \"10s\"\nduration = \"5s\"\n\
        [[down]]\nat = \"20s\"\nduration = \"5s\"\nfail_fraction = 0.5\nbehavior = \"hang\"\n";

    #[test]
    fn outside_its_windows_a_provider_answers_after_call_time() {
        let p = provider(WINDOWS);
        for t in [0, 9, 15, 19, 25, 1000] {
            let a = p.answer(at(t), false, 0.0);
            assert_eq!((a.ok, a.took), (true, SimDuration::from_millis(200)), "{t}");
        }
    }

    #[test]
    fn a_refusing_window_fails_fast_and_a_hanging_one_at_the_timeout_for_its_share() {
        let p = provider(WINDOWS);
        let refused = p.answer(at(10), false, 0.99);
        assert_eq!((refused.ok, refused.timed_out, refused.took), (false, false, SimDuration::from_millis(50)));
        // Half the calls in the second window: r < 0.5 hangs until the 30 s default timeout.
        let hung = p.answer(at(24), false, 0.49);
        assert_eq!((hung.ok, hung.timed_out, hung.took), (false, true, SimDuration::from_secs(30)));
        assert!(p.answer(at(24), false, 0.5).ok);
    }

    #[test]
    fn a_poison_job_is_refused_always_even_by_a_healthy_provider() {
        let p = provider(WINDOWS);
        for t in [0, 12, 22] {
            assert_eq!(p.answer(at(t), true, 0.9), Answer { ok: false, timed_out: false, took: p.fail_time() });
        }
    }

    #[test]
    fn windows_are_half_open() {
        let p = provider(WINDOWS);
        assert!(p.window_at(at(10)).is_some());
        assert!(p.window_at(at(15)).is_none());
        assert!(p.window_at(SimTime(at(15).0 - 1)).is_some());
    }

    #[test]
    fn bad_providers_are_named_by_key() {
        let p = provider(
            "name = \"\"\ntimeout = \"1s\"\ncall_time = \"2s\"\nfail_time = \"3s\"\n\
             [[down]]\nat = \"10s\"\nduration = \"0s\"\nfail_fraction = 1.5\n\
             [[down]]\nat = \"5s\"\nduration = \"1s\"\n",
        )
        .validate();
        assert_eq!(
            p.keys(),
            ["name", "call_time", "fail_time", "down[0].duration", "down[0].fail_fraction", "down[1].at"]
        );
    }
}
