//! What one replication of a world costs, about: its events, from rates and the retry
//! policy's limits, and its memory, from the sizes of the state it keeps per entity and
//! per record. Each world estimates itself (`ModelSection::estimate`) with these helpers; the
//! resource guard (`crate::run::guard`) adds the estimates up and refuses a run too large
//! before it starts. The estimates are meant to be honest upper-ish figures: the guard's
//! tests hold each between half and three times the events a small run really handles.

use crate::engine::time::SimDuration;
use crate::model::retry::{BudgetPolicy, RetryPolicy};

/// What a model expects one replication of one cell to cost.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Estimate {
    /// Events the replication handles, about.
    pub events: f64,
    /// Bytes it holds at its peak while it runs.
    pub working: f64,
    /// Bytes of its result kept until every replication is done and written.
    pub kept: f64,
    /// The keys that drive `events`, most to least: what to lower.
    pub knobs: Vec<&'static str>,
}

/// The bytes of `n` values of `T`.
pub fn bytes_of<T>(n: f64) -> f64 {
    n * std::mem::size_of::<T>() as f64
}

/// The bytes of `pending` events of type `E` in the engine's queue: the event with its
/// time and sequence number, twice over for the growth of the queue's vectors.
pub fn queue_bytes<E>(pending: f64) -> f64 {
    pending * (std::mem::size_of::<E>() + 16) as f64 * 2.0
}

/// How many attempts start within `window` of a first one at 0 (that one counted), when
/// the k-th gap between attempts (from 0) is `gap(k)` seconds; at most `limit`. A gap of
/// zero forever means the limit is the only bound.
pub fn attempts_within(window: SimDuration, limit: f64, mut gap: impl FnMut(u32) -> f64) -> f64 {
    let window = window.as_secs_f64();
    let (mut t, mut n) = (0.0, 1.0);
    let mut last = f64::NAN;
    for k in 0..100_000u32 {
        if n >= limit {
            return limit;
        }
        let g = gap(k).max(0.0);
        // A gap that no longer changes (the cap) repeats to the end of the window.
        if g == last && g > 0.0 {
            return (n + ((window - t) / g).floor().max(0.0)).min(limit);
        }
        if g == 0.0 && k > 64 {
            return limit;
        }
        last = g;
        t += g;
        if t > window {
            return n;
        }
        n += 1.0;
    }
    n.min(limit)
}

/// The typical sleeps of a policy before each retry, in seconds: the middle of the
/// jitter's range, which is its mean for every mode but the skewed ones, where it is
/// near enough for counting attempts.
pub struct Sleeps(Vec<f64>);

impl Sleeps {
    /// Retries past the 256th sleep as long as the 256th: every shipped policy is
    /// capped long before.
    const KEPT: u32 = 256;

    pub fn of(policy: &RetryPolicy) -> Sleeps {
        let f = policy.formula();
        let top = 1.0 - f64::EPSILON / 2.0;
        let mut prev = policy.base;
        Sleeps(
            (0..Self::KEPT)
                .map(|k| {
                    let nominal = f.nominal(k, policy.base);
                    let (lo, hi) = (f.sleep(nominal, prev, policy.base, 0.0), f.sleep(nominal, prev, policy.base, top));
                    let mid = SimDuration::from_nanos(lo.as_nanos() / 2 + hi.as_nanos() / 2);
                    prev = mid;
                    mid.as_secs_f64()
                })
                .collect(),
        )
    }

    /// The sleep before retry `k` (from 0).
    pub fn at(&self, k: u32) -> f64 {
        self.0[(k as usize).min(self.0.len() - 1)]
    }
}

/// The attempts one call of `policy` makes at most when every attempt fails after
/// `attempt` seconds and it sleeps `sleeps` between them: its attempt limit, and within
/// its deadline; infinite when neither bounds it.
pub fn call_attempts(policy: &RetryPolicy, attempt: f64, sleeps: &Sleeps) -> f64 {
    let limit = policy.limit.max_attempts().map_or(f64::INFINITY, f64::from);
    match policy.deadline {
        Some(d) => attempts_within(d, limit, |k| attempt + sleeps.at(k)),
        None => limit,
    }
}

/// The attempts per call a policy's retry budget lets `clients` clients keep up while
/// they offer `load` calls a second and every attempt fails after `attempt` seconds: a
/// storm lasts only if this times the load exceeds what the server serves. Infinite
/// without a budget (the policy's own limits then bound a call). Each budget is per
/// client (`crate::model::retry::budget`): AWS's quota only drains when nothing succeeds;
/// gRPC's throttling refills by `token_ratio` per success, at most one per call;
/// finagle's lets `percent_can_retry` of the calls retry, plus its reserve per second;
/// envoy's holds `max_retries` outstanding, each at least one attempt long.
pub fn sustained_attempts(policy: &RetryPolicy, clients: f64, load: f64, attempt: f64) -> f64 {
    let per_second = |retries: f64| if load > 0.0 { retries / load } else { 0.0 };
    1.0 + match policy.budget {
        BudgetPolicy::None => f64::INFINITY,
        BudgetPolicy::AwsQuota { .. } => 0.0,
        BudgetPolicy::GrpcThrottle { token_ratio, .. } => token_ratio,
        BudgetPolicy::Finagle { percent_can_retry, min_retries_per_sec, .. } => {
            percent_can_retry + per_second(clients * f64::from(min_retries_per_sec))
        }
        BudgetPolicy::EnvoyConcurrent { max_retries } => {
            per_second(clients * f64::from(max_retries) / attempt.max(f64::MIN_POSITIVE))
        }
    }
}

/// The length of `[a0, a1] ∩ [b0, b1]`, in seconds (0 when they do not meet).
pub fn overlap(a: (f64, f64), b: (f64, f64)) -> f64 {
    (a.1.min(b.1) - a.0.max(b.0)).max(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attempts_within_counts_the_first_and_every_start_inside_the_window() {
        // Gaps 1, 2, 4, 8 s: attempts at 0, 1, 3, 7 s fall within 10 s; the next (15 s) does not.
        let doubling = |k: u32| 2f64.powi(k as i32);
        assert_eq!(attempts_within(SimDuration::from_secs(10), f64::INFINITY, doubling), 4.0);
        assert_eq!(attempts_within(SimDuration::from_secs(10), 3.0, doubling), 3.0);
        // A capped gap repeats to the end of the window: 0, 1, then every 2 s from 3 s to 99 s.
        let capped = |k: u32| doubling(k).min(2.0);
        assert_eq!(attempts_within(SimDuration::from_secs(100), f64::INFINITY, capped), 51.0);
        // No gap at all: only the limit bounds it.
        assert_eq!(attempts_within(SimDuration::from_secs(1), 7.0, |_| 0.0), 7.0);
    }
}
