//! Generic retry policies, sans-IO: how a client that failed decides when, and whether,
//! to try again.
//!
//! Shaped like quinn's strategies: `[retry.policy]` as written ([`RetryPolicyConfig`],
//! every field optional, most often just `preset = "gcs-python"` and an override or
//! two) resolves once into a checked [`RetryPolicy`] (every constant concrete, dumped
//! into manifests). Like quinn's per-controller configs, each group of keys that only
//! makes sense together (each budget kind, the rate limiter, the jitter, the deadline, …)
//! has its own typed config that checks and builds its part ([`config::PolicyParts`]).
//! Each logical call keeps a small [`RetryState`] that the engine
//! drives with the outcome of every attempt:
//!
//! ```
//! use backoffsim_core::engine::time::{SimDuration, SimTime};
//! use backoffsim_core::engine::rng::{Purpose, Seeds};
//! use backoffsim_core::model::retry::{Decision, Outcome, RetryPolicyConfig, RetryState};
//!
//! let policy = RetryPolicyConfig::preset("gcs-python").resolve().unwrap();
//! let mut budget = policy.new_budget(SimTime::ZERO);
//! let mut rng = Seeds::new(1).stream(0, 0, Purpose::Jitter);
//! let mut call = RetryState::new(&policy, SimTime::ZERO);
//! let ended = SimTime::ZERO + SimDuration::from_millis(30);
//! match call.on_outcome(&policy, &mut budget, ended, &Outcome::status(503), &mut rng) {
//!     Decision::RetryAt { at, .. } => assert!(at >= ended),
//!     other => panic!("{other:?}"),
//! }
//! ```
//!
//! The state never reads a clock and never draws from anything but the RNG it is handed
//! (one uniform draw per backoff sleep under every jitter mode but `none`; none when a
//! server's Retry-After replaces the backoff). Time is integer nanoseconds; where a
//! library computes in float or truncates to milliseconds, the policy does the same
//! (`truncate_to`, the f32 arithmetic of `half` jitter) and the preset says so.
//!
//! # One call, step by step
//!
//! When an attempt ends, [`RetryState::on_outcome`]:
//!
//! 1. a success (or any 2xx) ends the call: [`Decision::Done`]; the budget refunds
//!    what it must;
//! 2. a failure the policy does not retry (`retry_on`) gives up at once with
//!    [`GiveUpReason::Permanent`], naming the outcome;
//! 3. a call that is not safe to repeat ([`Idempotency::Never`], or conditional
//!    without its precondition) gives up with [`GiveUpReason::NotIdempotent`] unless
//!    the policy has `retry_non_idempotent`;
//! 4. gRPC throttling records the failure and may forbid retries
//!    ([`GiveUpReason::Throttled`]);
//! 5. the attempt limit: after `max_attempts` attempts (or `max_retries` retries)
//!    [`GiveUpReason::AttemptsExhausted`];
//! 6. the sleep: the backoff formula ([`jitter`]), truncated to `truncate_to`, combined
//!    with a server's Retry-After ([`retry_after`]);
//! 7. the deadline's stop rule ([`limits`]) may give up, truncate the sleep, or let it
//!    be taken in full ([`GiveUpReason::Deadline`]);
//! 8. a budget or quota may refuse the retry ([`budget`]);
//! 9. AWS adaptive mode's rate limiter may delay the send;
//!
//! and returns [`Decision::RetryAt`] with the time the next attempt starts.
//!
//! # Resets
//!
//! Every library modelled here builds a fresh backoff per logical call (api-core's
//! generator, tenacity's `RetryCallState`, botocore's per-request context, google-cloud-cpp's
//! `clone()`d policies): use [`RetryState::new`] per call. A client that keeps one
//! backoff across calls (a polling loop, a reconnecting worker) calls
//! [`RetryState::next_call`] instead: a success resets the backoff when the policy has
//! `reset_after_success` (the default), and deliberately never otherwise; a give-up
//! never resets it.
//!
//! # Shared budgets
//!
//! Quotas and budgets that several calls share live in a [`RetryBudget`], made by
//! [`RetryPolicy::new_budget`] once per client (AWS, finagle), channel (gRPC) or
//! cluster (envoy), and passed to every `on_outcome` of the calls that share it.

/// An enum of keywords as a scenario writes them: `Display`, `FromStr` (with an error
/// that lists the choices), serde as a string, and `ALL`.
macro_rules! keyword_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident => $word:literal,)+ }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vmeta])* $variant,)+
        }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            pub const WORDS: &'static [&'static str] = &[$($word),+];

            pub fn word(self) -> &'static str {
                match self {
                    $($name::$variant => $word,)+
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.word())
            }
        }

        impl std::str::FromStr for $name {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                match s.trim() {
                    $($word => Ok($name::$variant),)+
                    other => Err(format!(
                        "`{other}` is not one of: {}",
                        Self::WORDS.join(", ")
                    )),
                }
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.word())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                s.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}
pub(crate) use keyword_enum;

pub mod budget;
pub mod config;
pub mod jitter;
pub mod limits;
pub mod outcome;
pub mod presets;
mod resolve;
pub mod retry_after;

#[cfg(test)]
mod tests;

use std::fmt;

use rand::RngExt;

use crate::engine::time::{SimDuration, SimTime};

pub use budget::{AdaptiveLimiter, BudgetKind, BudgetPolicy, RateLimiterKind, RetryBudget};
pub use config::{RetryPolicy, RetryPolicyConfig};
pub use jitter::{CapApplies, Jitter, JitterMode};
pub use limits::{AttemptLimit, DeadlineClock, StopRule};
pub use outcome::{Condition, Idempotency, Outcome, RetryOn};
pub use retry_after::{RetryAfter, RetryAfterMode, RetryAfterPolicy};

/// Why a call gave up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GiveUpReason {
    /// The attempt limit was reached (this many attempts were made).
    AttemptsExhausted { attempts: u32 },
    /// The deadline's stop rule ended the call.
    Deadline,
    /// The policy does not retry this outcome.
    Permanent(Outcome),
    /// The call is not safe to repeat and the policy does not retry such calls.
    NotIdempotent(Outcome),
    /// AWS: the client's retry quota cannot pay for the retry.
    QuotaEmpty,
    /// gRPC: retry throttling forbids retries on this channel.
    Throttled,
    /// finagle's retry budget or envoy's concurrent-retry limit is used up.
    BudgetEmpty,
    /// finagle: this request used its share of the budget (`max_retries_per_request`).
    RequestLimit { retries: u32 },
}

impl GiveUpReason {
    /// A stable one-word name, for CSV.
    pub fn slug(&self) -> &'static str {
        match self {
            GiveUpReason::AttemptsExhausted { .. } => "attempts",
            GiveUpReason::Deadline => "deadline",
            GiveUpReason::Permanent(_) => "permanent",
            GiveUpReason::NotIdempotent(_) => "not-idempotent",
            GiveUpReason::QuotaEmpty => "quota",
            GiveUpReason::Throttled => "throttled",
            GiveUpReason::BudgetEmpty => "budget",
            GiveUpReason::RequestLimit { .. } => "request-limit",
        }
    }
}

impl fmt::Display for GiveUpReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GiveUpReason::AttemptsExhausted { attempts } => {
                write!(f, "attempts exhausted after {attempts}")
            }
            GiveUpReason::Deadline => f.write_str("deadline"),
            GiveUpReason::Permanent(o) => write!(f, "permanent error: {o} is not retried"),
            GiveUpReason::NotIdempotent(o) => {
                write!(f, "not idempotent: {o} on a call that is not safe to repeat")
            }
            GiveUpReason::QuotaEmpty => f.write_str("retry quota empty"),
            GiveUpReason::Throttled => f.write_str("retries throttled"),
            GiveUpReason::BudgetEmpty => f.write_str("retry budget empty"),
            GiveUpReason::RequestLimit { retries } => {
                write!(f, "request's share of the budget used ({retries} retries)")
            }
        }
    }
}

/// Where a retry's wait came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SleepSource {
    /// The backoff formula.
    Backoff,
    /// The server's Retry-After decided it.
    RetryAfter,
    /// The stop rule truncated it at the deadline.
    Truncated,
}

/// What to do after an attempt.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Decision {
    /// Start the next attempt at `at`, `sleep` after the failed one ended (the backoff,
    /// plus any wait for the adaptive rate limiter's token).
    RetryAt {
        at: SimTime,
        sleep: SimDuration,
        /// The failure being retried.
        retrying: Outcome,
        source: SleepSource,
        /// The server already did the work of a call that is not idempotent: this
        /// retry is a duplicate side effect.
        duplicate: bool,
    },
    /// The call has failed for good at `at` (later than the failure only under
    /// `sleep-then-stop` and `cut`, which wait before giving up).
    GiveUp { at: SimTime, reason: GiveUpReason },
    /// The call succeeded.
    Done,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Running,
    Succeeded,
    GaveUp,
}

/// One logical call's retry state: small (under 100 bytes), one per call in flight.
#[derive(Clone, Debug)]
pub struct RetryState {
    call_start: SimTime,
    /// When the attempt whose outcome comes next began.
    attempt_start: SimTime,
    /// Attempts whose outcome was reported, in this call.
    attempts: u32,
    /// Backoff index k: sleeps computed since the last reset (kept across calls by
    /// `next_call` unless a success resets it).
    k: u32,
    /// The previous backoff sleep (decorrelated jitter; `base` after a reset).
    prev: SimDuration,
    /// Sum of this call's sleeps.
    slept: SimDuration,
    idempotency: Idempotency,
    /// finagle: this request's retry allowance.
    retry_cap: Option<u32>,
    /// AWS: the last quota acquisition of this call.
    last_cost: Option<u32>,
    duplicates: u32,
    phase: Phase,
}

impl RetryState {
    /// A new logical call whose first attempt starts at `call_start`. Idempotent unless
    /// [`RetryState::with_idempotency`] says otherwise.
    pub fn new(policy: &RetryPolicy, call_start: SimTime) -> Self {
        RetryState {
            call_start,
            attempt_start: call_start,
            attempts: 0,
            k: 0,
            prev: policy.base,
            slept: SimDuration::ZERO,
            idempotency: Idempotency::Idempotent,
            retry_cap: None,
            last_cost: None,
            duplicates: 0,
            phase: Phase::Running,
        }
    }

    pub fn with_idempotency(mut self, idempotency: Idempotency) -> Self {
        self.idempotency = idempotency;
        self
    }

    /// Starts another logical call on the same state (a client that keeps its backoff
    /// across calls). The attempt count, the sleeps and the deadline start afresh; the
    /// backoff resets only if the last call succeeded and the policy has
    /// `reset_after_success`.
    pub fn next_call(&mut self, policy: &RetryPolicy, call_start: SimTime) {
        if self.phase == Phase::Succeeded && policy.reset_after_success {
            self.k = 0;
            self.prev = policy.base;
        }
        self.call_start = call_start;
        self.attempt_start = call_start;
        self.attempts = 0;
        self.slept = SimDuration::ZERO;
        self.retry_cap = None;
        self.last_cost = None;
        self.phase = Phase::Running;
    }

    /// Attempts whose outcome has been reported in this call.
    pub fn attempts(&self) -> u32 {
        self.attempts
    }

    /// Duplicate side effects caused by this state's retries (all calls).
    pub fn duplicates(&self) -> u32 {
        self.duplicates
    }

    /// Total sleep of this call so far.
    pub fn slept(&self) -> SimDuration {
        self.slept
    }

    pub fn call_start(&self) -> SimTime {
        self.call_start
    }

    /// The backoff index k of the next sleep.
    pub fn backoff_index(&self) -> u32 {
        self.k
    }

    /// When the call's deadline falls, on the wall clock: under `cut` the engine
    /// cancels an attempt still in flight then. `None` without a deadline or when the
    /// deadline counts sleeps only.
    pub fn deadline_at(&self, policy: &RetryPolicy) -> Option<SimTime> {
        match (policy.deadline, policy.deadline_clock) {
            (Some(d), DeadlineClock::Wall | DeadlineClock::AttemptStart) => Some(self.call_start.saturating_add(d)),
            _ => None,
        }
    }

    /// An attempt ended at `now` with `outcome`. Returns what to do next; see the
    /// module docs for the order of the checks. `budget` is the [`RetryBudget`] this
    /// call shares with others (a fresh one per call if nothing is shared).
    ///
    /// Draws: one `random::<f64>()` from `rng` when a backoff sleep is computed with a
    /// jitter mode other than `none` — also for a sleep the deadline then refuses —
    /// and none otherwise.
    pub fn on_outcome<R: rand::Rng + ?Sized>(
        &mut self,
        policy: &RetryPolicy,
        budget: &mut RetryBudget,
        now: SimTime,
        outcome: &Outcome,
        rng: &mut R,
    ) -> Decision {
        debug_assert_eq!(self.phase, Phase::Running, "on_outcome after the call ended; use next_call");
        self.attempts += 1;
        if self.attempts == 1 {
            self.retry_cap = budget.call_started(&policy.budget, now);
        } else {
            budget.retry_ended();
        }
        if outcome.is_throttling() {
            budget.throttled(policy.rate_limiter.as_ref(), now);
        }

        // 1. Success ends the call.
        if outcome.is_success() {
            budget.succeeded(&policy.budget, self.last_cost);
            self.phase = Phase::Succeeded;
            return Decision::Done;
        }
        // 2. Retryable at all?
        if !policy.retry_on.matches(outcome) {
            return self.give_up(now, GiveUpReason::Permanent(*outcome));
        }
        // 3. Safe to repeat?
        let unsafe_call = !self.idempotency.safe_to_retry();
        if unsafe_call && !policy.retry_non_idempotent {
            return self.give_up(now, GiveUpReason::NotIdempotent(*outcome));
        }
        // 4. gRPC A6: every retryable failure is recorded before the attempt limit.
        if !budget.failure_recorded(&policy.budget) {
            return self.give_up(now, GiveUpReason::Throttled);
        }
        // 5. The attempt limit.
        if let Some(max) = policy.limit.max_attempts()
            && self.attempts >= max
        {
            let attempts = self.attempts;
            return self.give_up(now, GiveUpReason::AttemptsExhausted { attempts });
        }
        // 6. The sleep.
        let (mut sleep, mut source) = self.next_sleep(policy, now, outcome, rng);
        // 7. The deadline.
        if let Some(deadline) = policy.deadline {
            let e = limits::elapsed(policy.deadline_clock, self.call_start, self.attempt_start, now, self.slept);
            match limits::apply(policy.deadline_rule, deadline, e, sleep) {
                limits::Stop::GiveUp { after } => {
                    return self.give_up(now.saturating_add(after), GiveUpReason::Deadline);
                }
                limits::Stop::Sleep { sleep: s, truncated } => {
                    sleep = s;
                    if truncated {
                        source = SleepSource::Truncated;
                    }
                }
            }
        }
        // 8. Budgets and quotas.
        if let Some(cap) = self.retry_cap {
            let retries = self.attempts - 1;
            if retries >= cap {
                return self.give_up(now, GiveUpReason::RequestLimit { retries });
            }
        }
        match budget.withdraw(&policy.budget, now, outcome) {
            Ok(cost) => {
                if cost.is_some() {
                    self.last_cost = cost;
                }
            }
            Err(reason) => return self.give_up(now, reason),
        }
        // 9. The adaptive rate limiter's token.
        let at = budget.send_at(now.saturating_add(sleep));
        let sleep = at - now;

        let duplicate = unsafe_call && outcome.applied();
        if duplicate {
            self.duplicates += 1;
        }
        self.slept += sleep;
        self.attempt_start = at;
        Decision::RetryAt { at, sleep, retrying: *outcome, source, duplicate }
    }

    /// Step 6: the backoff formula, truncation and Retry-After. Advances the backoff.
    fn next_sleep<R: rand::Rng + ?Sized>(
        &mut self,
        policy: &RetryPolicy,
        now: SimTime,
        outcome: &Outcome,
        rng: &mut R,
    ) -> (SimDuration, SleepSource) {
        let hint = outcome.retry_after().and_then(|h| h.delay(now));
        let (sleep, from_hint) = if policy.retry_after.replaces(hint) {
            // No backoff is drawn when the server's hint replaces it.
            (hint.unwrap_or_default(), true)
        } else {
            let base = match (outcome.is_throttling(), policy.throttle_base) {
                (true, Some(b)) => b,
                _ => policy.base,
            };
            let fm = policy.formula();
            let nominal = fm.nominal(self.k, base);
            let r = if fm.jitter.draws() { rng.random::<f64>() } else { 0.0 };
            let mut s = fm.sleep(nominal, self.prev, base, r);
            if let Some(g) = policy.truncate_to {
                s = SimDuration::from_nanos(s.as_nanos() / g.as_nanos() * g.as_nanos());
            }
            self.prev = s;
            policy.retry_after.combine(s, hint)
        };
        self.k = self.k.saturating_add(1);
        if from_hint && policy.retry_after.resets_backoff {
            // grpc-java RetriableStream: pushback → nextBackoffIntervalNanos = initialBackoffNanos.
            self.k = 0;
            self.prev = policy.base;
        }
        let source = if from_hint { SleepSource::RetryAfter } else { SleepSource::Backoff };
        (sleep, source)
    }

    fn give_up(&mut self, at: SimTime, reason: GiveUpReason) -> Decision {
        self.phase = Phase::GaveUp;
        Decision::GiveUp { at, reason }
    }
}
