//! When retrying stops: the attempt limit (`max_attempts` or `max_retries`, never both)
//! and the deadline with the rule and clock that apply it.

use super::{OptionalCount, OptionalDuration, SimDuration};
use crate::model::config_error::ConfigErrors;
use crate::model::retry::limits::{AttemptLimit, DeadlineClock, StopRule};

/// `max_attempts` or `max_retries` as written.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LimitConfig {
    pub max_attempts: Option<OptionalCount>,
    pub max_retries: Option<OptionalCount>,
}

impl LimitConfig {
    /// Either key written here replaces `base`'s limit, whichever key that used.
    pub fn over(&self, mut base: LimitConfig) -> LimitConfig {
        if self.max_attempts.is_some() || self.max_retries.is_some() {
            base = LimitConfig::default();
        }
        lay!(self, base; max_attempts, max_retries);
        base
    }

    /// Refuses both keys at once, as written (before a preset's limit is replaced).
    pub fn check_one_key(&self, errs: &mut ConfigErrors) {
        if self.max_attempts.is_some() && self.max_retries.is_some() {
            errs.push(
                "max_retries",
                "set max_attempts or max_retries, not both (max_retries = n means max_attempts = n + 1)",
            );
        }
    }

    /// 5 attempts by default.
    pub fn build(&self, errs: &mut ConfigErrors) -> AttemptLimit {
        let limit = match (self.max_attempts, self.max_retries) {
            (Some(OptionalCount(Some(n))), _) => AttemptLimit::Attempts(n),
            (_, Some(OptionalCount(Some(n)))) => AttemptLimit::Retries(n),
            (Some(OptionalCount(None)), _) | (_, Some(OptionalCount(None))) => AttemptLimit::Unlimited,
            (None, None) => AttemptLimit::Attempts(5),
        };
        if limit == AttemptLimit::Attempts(0) {
            errs.push("max_attempts", "must be at least 1: the first attempt is an attempt");
        }
        limit
    }
}

/// `deadline`, `deadline_rule`, `deadline_clock` as written.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DeadlineConfig {
    pub deadline: Option<OptionalDuration>,
    pub rule: Option<StopRule>,
    pub clock: Option<DeadlineClock>,
}

/// The deadline once checked.
pub struct Deadline {
    pub deadline: Option<SimDuration>,
    pub rule: StopRule,
    pub clock: DeadlineClock,
}

impl DeadlineConfig {
    pub fn over(&self, mut base: DeadlineConfig) -> DeadlineConfig {
        lay!(self, base; deadline, rule, clock);
        base
    }

    /// No deadline by default; one that cuts what is in flight runs on the wall clock.
    pub fn build(&self, errs: &mut ConfigErrors) -> Deadline {
        let deadline = self.deadline.and_then(|o| o.0);
        if deadline == Some(SimDuration::ZERO) {
            errs.push("deadline", "must be greater than 0 (write \"none\" for no deadline)");
        }
        let rule = self.rule.unwrap_or(StopRule::GiveUpBeforeCrossing);
        let clock = self.clock.unwrap_or(DeadlineClock::Wall);
        if rule == StopRule::Cut && clock != DeadlineClock::Wall {
            errs.push(
                "deadline_clock",
                "must be \"wall\" with deadline_rule = \"cut\": the deadline cuts what is in flight",
            );
        }
        Deadline { deadline, rule, clock }
    }
}
