//! Retry budgets and quotas: state that the calls of one client (AWS, finagle), one
//! channel (gRPC) or one cluster (envoy) share, and that can forbid a retry the policy
//! itself would make.
//!
//! A [`RetryBudget`] is made by [`RetryPolicy::new_budget`](super::RetryPolicy::new_budget)
//! and passed to every [`RetryState::on_outcome`](super::RetryState::on_outcome) of the
//! calls that share it. `explain` gives each simulated call a fresh one: what a single
//! call of a fresh client sees. What a population does to a shared budget is the
//! scenarios' business; the rules below are per call and need no population to be right.
//!
//! - `aws-quota` (botocore `retries/quota.py`, `standard.py` `RetryQuotaChecker`): a
//!   bucket of `capacity` (500). A retry needs its cost (2.0: 5, or 10 after a timeout;
//!   2.1: 14, or 5 after a throttling error) or is not made ("retry quota reached"). A
//!   success without retries refunds 1; a success after retries refunds the cost of the
//!   **last** acquisition only (`context['retry_quota_capacity']` is overwritten on
//!   every retry). Refunds never exceed the capacity.
//! - `grpc-throttle` (gRFC A6, grpc-java `RetriableStream.Throttle`): tokens start at
//!   `max_tokens`, kept in thousandths; each retryable failure takes one token, *before*
//!   the attempt limit is checked, and retries are allowed only while tokens >
//!   `max_tokens`/2; each success adds `token_ratio`, up to `max_tokens`.
//! - `envoy-concurrent` (envoy `circuit_breakers.thresholds.max_retries`, default 3):
//!   at most that many retries outstanding per cluster. A retry counts from the decision
//!   until its attempt's outcome is reported. Envoy's optional `retry_budget` (a share
//!   of active requests) needs the count of active requests and is not modelled.
//! - `finagle` (finagle `RetryBudget.apply()`, `RequeueFilter`, `Retries`): a leaky
//!   token bucket; every request deposits 1000, a retry withdraws 1000/percent (5000 at
//!   20 %), on top of a reserve of `min_retries_per_sec`·ttl retries; deposits and
//!   withdrawals expire after `ttl` (here exactly at ttl; finagle's `WindowedAdder`
//!   expires in slices). A request may retry at most ceil(`max_retries_per_request` ·
//!   balance) times, the balance read when it starts (here: when its first attempt
//!   ends, the first moment the model sees the call).
//!
//! The AWS adaptive mode's client-side rate limiter is documented but simplified; see
//! [`AdaptiveLimiter`].

use std::collections::VecDeque;

use serde::Serialize;

use super::GiveUpReason;
use super::outcome::Outcome;
use crate::engine::time::{SimDuration, SimTime};

super::keyword_enum! {
    /// `budget`: which shared budget limits retries.
    BudgetKind {
        None => "none",
        AwsQuota => "aws-quota",
        GrpcThrottle => "grpc-throttle",
        EnvoyConcurrent => "envoy-concurrent",
        Finagle => "finagle",
    }
}

super::keyword_enum! {
    /// `rate_limiter`: a client-side limiter that delays every send.
    RateLimiterKind {
        None => "none",
        AwsAdaptive => "aws-adaptive",
    }
}

/// The resolved budget and its parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum BudgetPolicy {
    None,
    AwsQuota { capacity: u32, retry_cost: u32, throttle_cost: u32, timeout_cost: u32, success_refund: u32 },
    GrpcThrottle { max_tokens: f64, token_ratio: f64 },
    EnvoyConcurrent { max_retries: u32 },
    Finagle { ttl: SimDuration, min_retries_per_sec: u32, percent_can_retry: f64, max_retries_per_request: f64 },
}

impl BudgetPolicy {
    /// The give-up reasons (slugs) this budget can cause.
    pub fn give_ups(&self) -> &'static [&'static str] {
        match self {
            BudgetPolicy::None => &[],
            BudgetPolicy::AwsQuota { .. } => &["quota"],
            BudgetPolicy::GrpcThrottle { .. } => &["throttled"],
            BudgetPolicy::EnvoyConcurrent { .. } => &["budget"],
            BudgetPolicy::Finagle { .. } => &["budget", "request-limit"],
        }
    }

    pub fn kind(&self) -> BudgetKind {
        match self {
            BudgetPolicy::None => BudgetKind::None,
            BudgetPolicy::AwsQuota { .. } => BudgetKind::AwsQuota,
            BudgetPolicy::GrpcThrottle { .. } => BudgetKind::GrpcThrottle,
            BudgetPolicy::EnvoyConcurrent { .. } => BudgetKind::EnvoyConcurrent,
            BudgetPolicy::Finagle { .. } => BudgetKind::Finagle,
        }
    }
}

/// AWS adaptive mode's client-side rate limiter, **simplified**.
///
/// botocore `retries/adaptive.py` (`ClientRateLimiter`), `bucket.py` (`TokenBucket`),
/// `throttling.py` (`CubicCalculator`): once a throttling error is seen, every send
/// first takes a token from a bucket whose fill rate follows a CUBIC curve fed by the
/// measured send rate (0.5 s buckets, smoothing 0.8), β 0.7, with a floor of 0.5
/// tokens/s. What is modelled: the bucket is created with the client (fill rate 1/s,
/// capacity 1, empty); at the first throttle it keeps what it filled up to then and
/// its rate drops to the floor, `min_fill_rate`; from then on each send (a retry here;
/// first attempts through [`RetryBudget::send_at`]) waits until a whole token is there.
/// What is not: the measured-rate and CUBIC terms. For one client sending less than
/// about one request a second — every `explain` call — botocore's rate is at the floor
/// anyway; for busier clients the model is slower to recover than botocore, which
/// raises the rate again after successes.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct AdaptiveLimiter {
    pub min_fill_rate: f64,
}

/// The runtime state of a budget (and rate limiter), shared by the calls that share it.
#[derive(Clone, Debug)]
pub struct RetryBudget {
    quota: Quota,
    limiter: Option<Bucket>,
}

#[derive(Clone, Debug)]
enum Quota {
    None,
    Aws {
        available: u32,
    },
    /// Thousandths of a token, as grpc-java keeps them.
    Grpc {
        tokens: u64,
    },
    Envoy {
        active: u32,
    },
    Finagle {
        events: VecDeque<(SimTime, i64)>,
        sum: i64,
    },
}

#[derive(Clone, Debug)]
struct Bucket {
    enabled: bool,
    rate: f64,
    tokens: f64,
    last: SimTime,
}

const FINAGLE_SCALE: f64 = 1000.0;

impl RetryBudget {
    pub(crate) fn new(policy: &BudgetPolicy, limiter: Option<&AdaptiveLimiter>, now: SimTime) -> Self {
        let quota = match *policy {
            BudgetPolicy::None => Quota::None,
            BudgetPolicy::AwsQuota { capacity, .. } => Quota::Aws { available: capacity },
            BudgetPolicy::GrpcThrottle { max_tokens, .. } => Quota::Grpc { tokens: (max_tokens * 1000.0) as u64 },
            BudgetPolicy::EnvoyConcurrent { .. } => Quota::Envoy { active: 0 },
            BudgetPolicy::Finagle { .. } => Quota::Finagle { events: VecDeque::new(), sum: 0 },
        };
        RetryBudget {
            quota,
            limiter: limiter.map(|_| Bucket {
                enabled: false,
                // TokenBucket(max_rate=1): fill rate 1/s, capacity 1, starts empty.
                rate: 1.0,
                tokens: 0.0,
                last: now,
            }),
        }
    }

    /// AWS quota tokens left, gRPC tokens left, envoy retries outstanding, finagle
    /// balance in retries: for traces and tests.
    pub fn level(&self, policy: &BudgetPolicy) -> f64 {
        match (&self.quota, policy) {
            (Quota::Aws { available }, _) => f64::from(*available),
            (Quota::Grpc { tokens }, _) => *tokens as f64 / 1000.0,
            (Quota::Envoy { active }, _) => f64::from(*active),
            (Quota::Finagle { sum, .. }, BudgetPolicy::Finagle { .. }) => {
                let (reserve, w, _) = finagle_amounts(policy);
                ((reserve + *sum) / w.max(1)) as f64
            }
            _ => 0.0,
        }
    }

    /// A new request starts (finagle deposits and fixes the request's retry cap).
    pub(crate) fn call_started(&mut self, policy: &BudgetPolicy, now: SimTime) -> Option<u32> {
        let BudgetPolicy::Finagle { ttl, max_retries_per_request, .. } = *policy else {
            return None;
        };
        let (reserve, w, deposit) = finagle_amounts(policy);
        let Quota::Finagle { events, sum } = &mut self.quota else {
            return None;
        };
        expire(events, sum, now, ttl);
        // RequeueFilter.apply: retryBudget.deposit(); maxRetries = ceil(maxRetriesPerReq * balance)
        events.push_back((now, deposit));
        *sum += deposit;
        let balance = ((reserve + *sum).max(0) / w.max(1)) as f64;
        Some((max_retries_per_request * balance).ceil() as u32)
    }

    /// A retryable failure: gRPC throttling records it and says whether retries are
    /// still allowed.
    pub(crate) fn failure_recorded(&mut self, policy: &BudgetPolicy) -> bool {
        match (&mut self.quota, policy) {
            (Quota::Grpc { tokens }, BudgetPolicy::GrpcThrottle { max_tokens, .. }) => {
                // Throttle.onQualifiedFailureThenCheckIsAboveThreshold
                *tokens = tokens.saturating_sub(1000);
                let threshold = (max_tokens * 1000.0) as u64 / 2;
                *tokens > threshold
            }
            _ => true,
        }
    }

    /// Takes what one retry costs, or says why it cannot be made.
    pub(crate) fn withdraw(
        &mut self,
        policy: &BudgetPolicy,
        now: SimTime,
        outcome: &Outcome,
    ) -> Result<Option<u32>, GiveUpReason> {
        match (&mut self.quota, *policy) {
            (Quota::Aws { available }, BudgetPolicy::AwsQuota { retry_cost, throttle_cost, timeout_cost, .. }) => {
                // RetryQuotaChecker.acquire_retry_quota
                let cost = if outcome.is_throttling() {
                    throttle_cost
                } else if outcome.is_timeout() {
                    timeout_cost
                } else {
                    retry_cost
                };
                if cost > *available {
                    return Err(GiveUpReason::QuotaEmpty);
                }
                *available -= cost;
                Ok(Some(cost))
            }
            (Quota::Envoy { active }, BudgetPolicy::EnvoyConcurrent { max_retries }) => {
                if *active >= max_retries {
                    return Err(GiveUpReason::BudgetEmpty);
                }
                *active += 1;
                Ok(None)
            }
            (Quota::Finagle { events, sum }, BudgetPolicy::Finagle { ttl, .. }) => {
                let (reserve, w, _) = finagle_amounts(policy);
                expire(events, sum, now, ttl);
                // TokenRetryBudget.tryWithdraw → TokenBucket.tryGet(withdrawalAmount)
                if reserve + *sum < w {
                    return Err(GiveUpReason::BudgetEmpty);
                }
                events.push_back((now, -w));
                *sum -= w;
                Ok(None)
            }
            _ => Ok(None),
        }
    }

    /// The attempt of a retry has ended (envoy: no longer outstanding).
    pub(crate) fn retry_ended(&mut self) {
        if let Quota::Envoy { active } = &mut self.quota {
            *active = active.saturating_sub(1);
        }
    }

    /// A call succeeded; `last_cost` is its last quota acquisition, if it retried.
    pub(crate) fn succeeded(&mut self, policy: &BudgetPolicy, last_cost: Option<u32>) {
        match (&mut self.quota, *policy) {
            (Quota::Aws { available }, BudgetPolicy::AwsQuota { capacity, success_refund, .. }) => {
                // RetryQuotaChecker.release_retry_quota + RetryQuota.release
                let amount = last_cost.unwrap_or(success_refund);
                *available = (*available + amount).min(capacity);
            }
            (Quota::Grpc { tokens }, BudgetPolicy::GrpcThrottle { max_tokens, token_ratio }) => {
                let max = (max_tokens * 1000.0) as u64;
                *tokens = (*tokens + (token_ratio * 1000.0) as u64).min(max);
            }
            _ => {}
        }
    }

    /// A throttling error was seen: the adaptive limiter engages (see [`AdaptiveLimiter`]).
    pub(crate) fn throttled(&mut self, limiter: Option<&AdaptiveLimiter>, now: SimTime) {
        if let (Some(b), Some(l)) = (&mut self.limiter, limiter) {
            b.refill(now);
            b.enabled = true;
            b.rate = l.min_fill_rate;
        }
    }

    /// When a send that wants to go at `earliest` may go: at once unless the adaptive
    /// limiter is engaged and the bucket lacks a whole token. Takes the token.
    pub fn send_at(&mut self, earliest: SimTime) -> SimTime {
        let Some(b) = &mut self.limiter else {
            return earliest;
        };
        if !b.enabled {
            return earliest;
        }
        b.refill(earliest);
        if b.tokens >= 1.0 {
            b.tokens -= 1.0;
            return earliest;
        }
        // TokenBucket._sleep_amount: (amount - current_capacity) / fill_rate
        let wait = SimDuration::from_secs_f64((1.0 - b.tokens) / b.rate).unwrap_or(SimDuration::MAX);
        let at = earliest.saturating_add(wait);
        b.tokens = 0.0;
        b.last = at;
        at
    }
}

impl Bucket {
    fn refill(&mut self, now: SimTime) {
        if now > self.last {
            let dt = (now - self.last).as_secs_f64();
            self.tokens = (self.tokens + dt * self.rate).min(1.0);
            self.last = now;
        }
    }
}

/// finagle's (reserve, withdrawal, deposit) in scaled tokens.
fn finagle_amounts(policy: &BudgetPolicy) -> (i64, i64, i64) {
    let BudgetPolicy::Finagle { ttl, min_retries_per_sec, percent_can_retry, .. } = *policy else {
        return (0, 1, 0);
    };
    // RetryBudget.apply: depositAmount = ScaleFactor (0 if percentCanRetry is 0);
    // withdrawalAmount = ScaleFactor / percentCanRetry (1 if 0);
    // reserve = minRetriesPerSec * ttl.inSeconds * withdrawalAmount.
    let (w, deposit) = if percent_can_retry == 0.0 {
        (1, 0)
    } else {
        ((FINAGLE_SCALE / percent_can_retry) as i64, FINAGLE_SCALE as i64)
    };
    let ttl_secs = (ttl.as_nanos() / 1_000_000_000) as i64;
    (i64::from(min_retries_per_sec) * ttl_secs * w, w, deposit)
}

fn expire(events: &mut VecDeque<(SimTime, i64)>, sum: &mut i64, now: SimTime, ttl: SimDuration) {
    while let Some(&(t, v)) = events.front() {
        if now.saturating_since(t) >= ttl {
            events.pop_front();
            *sum -= v;
        } else {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn aws(retry: u32, throttle: u32, timeout: u32) -> BudgetPolicy {
        BudgetPolicy::AwsQuota {
            capacity: 500,
            retry_cost: retry,
            throttle_cost: throttle,
            timeout_cost: timeout,
            success_refund: 1,
        }
    }

    #[test]
    fn aws_quota_2_0_costs_5_and_10_after_a_timeout() {
        let p = aws(5, 5, 10);
        let mut b = RetryBudget::new(&p, None, SimTime::ZERO);
        let now = SimTime::ZERO;
        assert_eq!(b.withdraw(&p, now, &Outcome::status(503)), Ok(Some(5)));
        assert_eq!(b.withdraw(&p, now, &Outcome::Timeout { applied: false }), Ok(Some(10)));
        assert_eq!(b.level(&p), 485.0);
        // A success after retries refunds the last acquisition only.
        b.succeeded(&p, Some(10));
        assert_eq!(b.level(&p), 495.0);
        b.succeeded(&p, None);
        assert_eq!(b.level(&p), 496.0);
    }

    #[test]
    fn aws_quota_empties_after_35_retries_at_cost_14() {
        // 2.1: 500 / 14 = 35 retries, the 36th finds 10 < 14.
        let p = aws(14, 5, 14);
        let mut b = RetryBudget::new(&p, None, SimTime::ZERO);
        for _ in 0..35 {
            assert!(b.withdraw(&p, SimTime::ZERO, &Outcome::status(500)).is_ok());
        }
        assert_eq!(b.withdraw(&p, SimTime::ZERO, &Outcome::status(500)), Err(GiveUpReason::QuotaEmpty));
        // A throttling retry costs 5 and still fits.
        assert_eq!(b.withdraw(&p, SimTime::ZERO, &Outcome::status(400).throttling()), Ok(Some(5)));
        // Refunds never exceed the capacity.
        for _ in 0..200 {
            b.succeeded(&p, Some(14));
        }
        assert_eq!(b.level(&p), 500.0);
    }

    #[test]
    fn grpc_a6_throttling_allows_retries_while_tokens_exceed_half() {
        let p = BudgetPolicy::GrpcThrottle { max_tokens: 10.0, token_ratio: 0.1 };
        let mut b = RetryBudget::new(&p, None, SimTime::ZERO);
        // 10 → 9, 8, 7, 6: allowed; 5 is not > 5.
        for _ in 0..4 {
            assert!(b.failure_recorded(&p));
        }
        assert!(!b.failure_recorded(&p));
        assert_eq!(b.level(&p), 5.0);
        b.succeeded(&p, None);
        assert_eq!(b.level(&p), 5.1);
    }

    #[test]
    fn envoy_counts_outstanding_retries() {
        let p = BudgetPolicy::EnvoyConcurrent { max_retries: 3 };
        let mut b = RetryBudget::new(&p, None, SimTime::ZERO);
        let o = Outcome::status(503);
        for _ in 0..3 {
            assert_eq!(b.withdraw(&p, SimTime::ZERO, &o), Ok(None));
        }
        assert_eq!(b.withdraw(&p, SimTime::ZERO, &o), Err(GiveUpReason::BudgetEmpty));
        b.retry_ended();
        assert!(b.withdraw(&p, SimTime::ZERO, &o).is_ok());
    }

    #[test]
    fn finagle_default_budget_gives_a_fresh_request_20_requeues() {
        // RetryBudget(): ttl 10 s, 10 retries/s, 20 %: withdrawal 5000, reserve
        // 10·10·5000 = 500000; a request deposits 1000 → balance 100 retries, and
        // RequeueFilter allows ceil(0.2 · 100) = 20 of them.
        let p = BudgetPolicy::Finagle {
            ttl: SimDuration::from_secs(10),
            min_retries_per_sec: 10,
            percent_can_retry: 0.2,
            max_retries_per_request: 0.2,
        };
        let mut b = RetryBudget::new(&p, None, SimTime::ZERO);
        assert_eq!(b.call_started(&p, SimTime::ZERO), Some(20));
        assert_eq!(b.level(&p), 100.0);
        for _ in 0..100 {
            assert!(b.withdraw(&p, SimTime::ZERO, &Outcome::Refused).is_ok());
        }
        // 501000 − 100·5000 = 1000 < 5000.
        assert_eq!(b.withdraw(&p, SimTime::ZERO, &Outcome::Refused), Err(GiveUpReason::BudgetEmpty));
        // Ten seconds later the withdrawals have expired and the reserve is back.
        let later = SimTime(10_000_000_000);
        assert!(b.withdraw(&p, later, &Outcome::Refused).is_ok());
    }

    #[test]
    fn adaptive_bucket_waits_for_whole_tokens_at_the_floor_rate() {
        let l = AdaptiveLimiter { min_fill_rate: 0.5 };
        let p = BudgetPolicy::None;
        let mut b = RetryBudget::new(&p, Some(&l), SimTime::ZERO);
        // Before any throttle nothing waits.
        assert_eq!(b.send_at(SimTime(5)), SimTime(5));
        // Throttled at t = 0.4 s: 0.4 tokens filled at 1/s, then 0.5 tokens/s.
        b.throttled(Some(&l), SimTime(400_000_000));
        // A send wanted at 1.0 s has 0.4 + 0.3 = 0.7 tokens: waits 0.6 s.
        assert_eq!(b.send_at(SimTime(1_000_000_000)), SimTime(1_600_000_000));
        // The next one a whole 2 s later.
        assert_eq!(b.send_at(SimTime(1_600_000_000)), SimTime(3_600_000_000));
    }

    proptest::proptest! {
        /// finagle `RetryBudget` (its scaladoc: "retries ... limited to percentCanRetry of
        /// requests ... plus minRetriesPerSec"): in every window of `ttl` ending at a
        /// granted retry, retries ≤ 20 % of the requests in that window + the reserve
        /// (min_retries_per_sec × ttl), whatever the order of requests and retries.
        #[test]
        fn a_20_percent_budget_never_grants_more_than_20_percent_of_requests_plus_its_reserve(
            ops in proptest::collection::vec((0u64..3_000, proptest::bool::ANY), 1..400),
            min_per_sec in 0u32..3,
        ) {
            let ttl = SimDuration::from_secs(10);
            let p = BudgetPolicy::Finagle {
                ttl,
                min_retries_per_sec: min_per_sec,
                percent_can_retry: 0.2,
                max_retries_per_request: 0.2,
            };
            let mut b = RetryBudget::new(&p, None, SimTime::ZERO);
            let (mut t, mut requests, mut granted) = (0u64, Vec::new(), Vec::new());
            for (gap_ms, is_request) in ops {
                t += gap_ms * 1_000_000;
                let now = SimTime(t);
                if is_request {
                    b.call_started(&p, now);
                    requests.push(t);
                } else if b.withdraw(&p, now, &Outcome::status(503)).is_ok() {
                    granted.push(t);
                }
            }
            let reserve = f64::from(min_per_sec) * 10.0;
            for &end in &granted {
                let live = |v: &Vec<u64>| v.iter().filter(|&&x| x <= end && end - x < ttl.as_nanos()).count() as f64;
                proptest::prop_assert!(
                    live(&granted) <= 0.2 * live(&requests) + reserve + 1e-9,
                    "at {end} ns: {} retries for {} requests", live(&granted), live(&requests)
                );
            }
        }
    }
}
