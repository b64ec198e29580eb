//! A retry policy as a source of delays for `backoffsim explain`: calls that always fail
//! with one outcome, and the facts of the policy (its formula, its worst cases) worked
//! out from its constants.

use crate::engine::rng::SimRng;
use crate::engine::time::{SimDuration, SimTime};
use crate::human::duration as human;
use crate::model::retry::budget::{BudgetPolicy, RetryBudget};
use crate::model::retry::config::RetryPolicy;
use crate::model::retry::jitter::{CapApplies, Jitter};
use crate::model::retry::limits::{AttemptLimit, DeadlineClock, StopRule};
use crate::model::retry::outcome::Outcome;
use crate::model::retry::presets;
use crate::model::retry::retry_after::RetryAfterMode;
use crate::model::retry::{Decision, GiveUpReason, RetryState};

use super::{DelaySource, Facts, Next};

/// A retry policy's calls that always fail with `outcome`.
#[derive(Clone, Debug)]
pub struct FailingCalls<'a> {
    pub policy: &'a RetryPolicy,
    pub outcome: Outcome,
}

impl DelaySource for FailingCalls<'_> {
    type Caller = (RetryState, RetryBudget);

    fn start(&self, start: SimTime) -> Self::Caller {
        (RetryState::new(self.policy, start), self.policy.new_budget(start))
    }

    fn after_failure(
        &self,
        (state, budget): &mut Self::Caller,
        _attempt_start: SimTime,
        now: SimTime,
        rng: &mut SimRng,
    ) -> Next {
        // Under `cut` the engine cancels an attempt still running at the deadline.
        if self.policy.deadline_rule == StopRule::Cut
            && let Some(dl) = state.deadline_at(self.policy)
            && now > dl
        {
            return Next::GiveUp { at: dl, reason: GiveUpReason::Deadline.slug() };
        }
        match state.on_outcome(self.policy, budget, now, &self.outcome, rng) {
            Decision::RetryAt { at, .. } => Next::Attempt { at },
            Decision::GiveUp { at, reason } => Next::GiveUp { at, reason: reason.slug() },
            Decision::Done => Next::GiveUp { at: now, reason: "success" },
        }
    }

    fn nominal(&self, k: u32) -> Option<SimDuration> {
        let fm = self.policy.formula();
        let base = match (self.outcome.is_throttling(), self.policy.throttle_base) {
            (true, Some(b)) => b,
            _ => self.policy.base,
        };
        let nominal = fm.nominal(k, base);
        match fm.jitter {
            Jitter::Decorrelated => None,
            // The range's lower end, pinned once the upper one reaches the cap.
            Jitter::Span => Some(fm.span_range(nominal, base).0),
            _ => Some(fm.jitter_input(nominal)),
        }
    }

    fn facts(&self, attempt_time: SimDuration) -> Facts {
        policy_facts(self.policy, &self.outcome, attempt_time)
    }
}

/// An RNG whose every draw is the largest `random::<f64>()` can return.
struct MaxRng;

impl rand::TryRng for MaxRng {
    type Error = std::convert::Infallible;
    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        Ok(u32::MAX)
    }
    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        Ok(u64::MAX)
    }
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
        dst.fill(0xFF);
        Ok(())
    }
}

/// The call with every draw at its maximum and no deadline: its total sleep and time
/// until it gives up, or `None` if it does not give up within 10 000 attempts.
fn max_path(policy: &RetryPolicy, outcome: &Outcome, a: SimDuration) -> Option<(SimDuration, SimDuration)> {
    let mut p = policy.clone();
    p.deadline = None;
    let mut state = RetryState::new(&p, SimTime::ZERO);
    let mut budget = p.new_budget(SimTime::ZERO);
    let mut now = SimTime::ZERO.saturating_add(a);
    let mut slept = SimDuration::ZERO;
    for _ in 0..10_000 {
        match state.on_outcome(&p, &mut budget, now, outcome, &mut MaxRng) {
            Decision::RetryAt { at, sleep, .. } => {
                slept += sleep;
                now = at.saturating_add(a);
            }
            Decision::GiveUp { at, .. } => {
                let wait = at.saturating_since(now);
                return Some((slept + wait, at - SimTime::ZERO));
            }
            Decision::Done => return Some((slept, now - SimTime::ZERO)),
        }
    }
    None
}

fn add(a: SimDuration, b: SimDuration) -> SimDuration {
    SimDuration::from_nanos(a.as_nanos().saturating_add(b.as_nanos()))
}

fn min_opt(a: Option<SimDuration>, b: Option<SimDuration>) -> Option<SimDuration> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

/// The stop rule's bounds on (total sleep, time until give-up).
fn deadline_bounds(p: &RetryPolicy, a: SimDuration) -> (Option<SimDuration>, Option<SimDuration>) {
    let Some(d) = p.deadline else {
        return (None, None);
    };
    let s = p.sleep_bound();
    let (sleep, time) = match p.deadline_rule {
        StopRule::GiveUpBeforeCrossing | StopRule::GiveUpBeforeReaching | StopRule::Truncate => {
            (Some(d), Some(add(d, a)))
        }
        StopRule::SleepThenAttempt => (s.map(|s| add(d, s)), s.map(|s| add(add(d, s), a))),
        StopRule::SleepThenStop => (s.map(|s| add(d, s)), s.map(|s| add(d, s))),
        StopRule::Cut => (Some(d), Some(d)),
    };
    match p.deadline_clock {
        DeadlineClock::Wall => (sleep, time),
        // The clock reads the failed attempt's start: one attempt time later.
        DeadlineClock::AttemptStart => (sleep.map(|x| add(x, a)), time.map(|x| add(x, a))),
        // Attempt time does not count: only the sleeps are bounded.
        DeadlineClock::SleepsOnly => (sleep, None),
    }
}

fn growth(base: SimDuration, m: f64) -> String {
    if m == 1.0 { human(base) } else { format!("{} × {m}^k", human(base)) }
}

/// The sleep formula in words.
pub fn formula_text(p: &RetryPolicy) -> String {
    let g = growth(p.base, p.multiplier);
    let after = p.cap_applies == CapApplies::AfterJitter;
    let cap = p.cap.map(human);
    let base = human(p.base);
    let d = match (&cap, after) {
        (Some(c), false) => format!("min({g}, {c})"),
        _ => g.clone(),
    };
    let clamp = |x: String| match (&cap, after) {
        (Some(c), true) => format!("min({x}, {c})"),
        _ => x,
    };
    let mut text = match p.jitter {
        Jitter::None => match &cap {
            Some(c) => format!("min({g}, {c})"),
            None => g.clone(),
        },
        Jitter::Full => clamp(format!("U(0, {d})")),
        Jitter::Equal => clamp("d/2 + U(0, d/2)".to_string()) + &format!(", d = {d}"),
        Jitter::Proportional { fraction } => clamp(format!("{d}·U({}, {})", 1.0 - fraction, 1.0 + fraction)),
        Jitter::Additive { max } => clamp(format!("{d} + U(0, {})", human(max))),
        Jitter::Half => clamp("U(d, 2d)".to_string()) + &format!(", d = {d}"),
        Jitter::Decorrelated => match &cap {
            Some(c) => format!("min({c}, U({base}, 3 × previous sleep)), previous from {base}"),
            None => format!("U({base}, 3 × previous sleep), previous from {base}"),
        },
        Jitter::Span => {
            let m = p.multiplier;
            match &cap {
                Some(c) => {
                    let (lo, hi) = p.formula().span_range(SimDuration::MAX, p.base);
                    format!("U(d, {m}·d), d = {g}; once {m}·d ≥ {c}: U({}, {})", human(lo), human(hi))
                }
                None => format!("U(d, {m}·d), d = {g}"),
            }
        }
    };
    if let Some(t) = p.truncate_to {
        text += &format!(", truncated to a multiple of {}", human(t));
    }
    if let Some(tb) = p.throttle_base {
        text += &format!("; from {} after a throttling error", growth(tb, p.multiplier));
    }
    text
}

fn policy_facts(p: &RetryPolicy, outcome: &Outcome, a: SimDuration) -> Facts {
    let preset = p.preset.as_deref().and_then(presets::find);
    let title = match (&p.preset, preset) {
        (Some(name), Some(pr)) => format!("{name}: {}", pr.what),
        _ => "custom retry policy".to_string(),
    };
    let mut lines: Vec<(&'static str, String)> = Vec::new();
    lines.push(("source", preset.map_or("(no preset)".to_string(), |pr| pr.source.to_string())));
    let cap_where = match (p.cap, p.jitter, p.cap_applies) {
        (None, _, _) => "no cap",
        (_, Jitter::Decorrelated | Jitter::Span, _) => "the cap is part of the formula",
        (_, Jitter::None, _) => "capped",
        (_, _, CapApplies::BeforeJitter) => "cap before jitter",
        (_, _, CapApplies::AfterJitter) => "cap after jitter",
    };
    let jitter = match p.jitter {
        Jitter::None => "no jitter".to_string(),
        j => format!("{} jitter", j.mode()),
    };
    lines.push(("sleep", format!("before retry k+1 (k from 0): {} — {jitter}, {cap_where}", formula_text(p))));
    lines.push((
        "draws",
        if p.jitter.draws() {
            "one uniform draw per backoff sleep".to_string()
        } else {
            "none: no jitter, every caller sleeps the same".to_string()
        },
    ));
    let mut limit = p.limit.to_string();
    match p.deadline {
        Some(d) => {
            limit +=
                &format!("; deadline {} ({}); {}", human(d), p.deadline_clock.describe(), p.deadline_rule.describe());
        }
        None => limit += "; no deadline",
    }
    if p.limit == AttemptLimit::Unlimited && p.deadline.is_none() {
        limit += " (only a budget, if any, stops it)";
    }
    lines.push(("limit", limit));
    let fm = p.formula();
    let cap_text = match (p.cap, fm.sleep_bound()) {
        (None, _) if p.multiplier == 1.0 && p.jitter.mode() != crate::model::retry::JitterMode::Decorrelated => {
            "none (the delay does not grow)".to_string()
        }
        (None, _) => "none: the delay grows without bound".to_string(),
        (Some(c), bound) => {
            let c = human(c);
            let hard = if fm.hard_cap() {
                format!("{c}, a hard cap: no backoff sleep exceeds it")
            } else {
                format!(
                    "{c}, not a hard cap: the jitter goes on top, so sleeps reach {}",
                    bound.map_or("any length".to_string(), human)
                )
            };
            let piles = if !fm.piles_at_cap() {
                "draws do not pile up at it".to_string()
            } else {
                match p.jitter {
                    Jitter::None => "every sleep that reaches it is exactly the cap (no jitter: callers stay in step)".to_string(),
                    Jitter::Decorrelated => "draws pile up at it: min(cap, draw) puts every draw above it on the cap".to_string(),
                    _ => "draws pile up at it: the cap is applied after the jitter, so every draw above it becomes the cap".to_string(),
                }
            };
            format!("{hard}; {piles}")
        }
    };
    lines.push(("cap", cap_text));
    let mut retried = if p.retry_on.0.contains(&crate::model::retry::Condition::Any) {
        "every failure".to_string()
    } else {
        format!("{}; anything else fails at once", p.retry_on)
    };
    retried += if p.retry_non_idempotent {
        "; calls that are not idempotent are retried too (duplicates possible)"
    } else {
        "; calls that are not idempotent are not retried"
    };
    lines.push(("retried", retried));
    lines.push((
        "Retry-After",
        match p.retry_after.mode {
            RetryAfterMode::Ignore => "ignored".to_string(),
            RetryAfterMode::Replace => format!(
                "replaces the backoff{} (not capped)",
                if p.retry_after.resets_backoff { " and resets it" } else { "" }
            ),
            RetryAfterMode::Max => match p.retry_after.max_extra {
                Some(x) => format!("max(backoff, min(hint, backoff + {}))", human(x)),
                None => "max(backoff, hint) (not capped)".to_string(),
            },
        },
    ));
    if p.budget.kind() != crate::model::retry::BudgetKind::None {
        lines.push(("budget", describe_budget(&p.budget)));
    }
    if let Some(l) = &p.rate_limiter {
        lines.push((
            "rate limiter",
            format!(
                "AWS adaptive (simplified): after a throttling error every send waits for a token at {} tokens/s",
                l.min_fill_rate
            ),
        ));
    }
    let path = max_path(p, outcome, a);
    let (dl_sleep, dl_time) = deadline_bounds(p, a);
    Facts {
        title,
        lines,
        cap: p.cap,
        worst_sleep: min_opt(path.map(|x| x.0), dl_sleep),
        worst_give_up: min_opt(path.map(|x| x.1), dl_time),
    }
}

/// One line on the budget, its durations in the units a person would say.
fn describe_budget(budget: &BudgetPolicy) -> String {
    match *budget {
        BudgetPolicy::None => "none".into(),
        BudgetPolicy::AwsQuota { capacity, retry_cost, throttle_cost, timeout_cost, success_refund } => format!(
            "AWS retry quota {capacity} per client: a retry costs {retry_cost} ({throttle_cost} after throttling, {timeout_cost} after a timeout); a first-try success refunds {success_refund}, a success after retries the last cost"
        ),
        BudgetPolicy::GrpcThrottle { max_tokens, token_ratio } => format!(
            "gRPC retry throttling per channel: {max_tokens} tokens, −1 per retryable failure, +{token_ratio} per success, retries only while tokens > {}",
            max_tokens / 2.0
        ),
        BudgetPolicy::EnvoyConcurrent { max_retries } => {
            format!("at most {max_retries} retries outstanding per cluster")
        }
        BudgetPolicy::Finagle { ttl, min_retries_per_sec, percent_can_retry, max_retries_per_request } => format!(
            "finagle RetryBudget: {}% of requests plus {min_retries_per_sec} retries/s, over {}; one request may use {}% of the balance",
            percent_can_retry * 100.0,
            human(ttl),
            max_retries_per_request * 100.0
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::retry::RetryPolicyConfig;

    #[test]
    fn the_budget_line_reads_finagles_defaults_in_human_units() {
        // finagle RetryBudget.apply() defaults: ttl 10 s, minRetriesPerSec 10, percentCanRetry 0.2.
        let p = RetryPolicyConfig::preset("finagle-budget").resolve().unwrap();
        assert_eq!(
            describe_budget(&p.budget),
            "finagle RetryBudget: 20% of requests plus 10 retries/s, over 10 s; one request may use 20% of the balance"
        );
        assert_eq!(describe_budget(&BudgetPolicy::None), "none");
    }
}
