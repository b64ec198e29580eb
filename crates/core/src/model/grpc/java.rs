//! `grpc-java`: grpc/grpc-java.
//!
//! - `core/src/main/java/io/grpc/internal/ExponentialBackoffPolicy.java`:
//!   ```text
//!   public long nextBackoffNanos() {
//!     long currentBackoffNanos = nextBackoffNanos;
//!     nextBackoffNanos = Math.min((long) (currentBackoffNanos * multiplier), maxBackoffNanos);
//!     return currentBackoffNanos
//!         + uniformRandom(-jitter * currentBackoffNanos, jitter * currentBackoffNanos);
//!   }
//!   private long uniformRandom(double low, double high) {
//!     double mag = high - low;
//!     return (long) (random.nextDouble() * mag + low);
//!   }
//!   ```
//! - `core/src/main/java/io/grpc/internal/InternalSubchannel.java`: `startNewTransport`
//!   restarts `connectingTimer` at the start of a pass over the addresses;
//!   `scheduleBackoff` (after the whole pass failed) gets a policy if `reconnectPolicy ==
//!   null`, and schedules the reconnect after `nextBackoffNanos() -
//!   connectingTimer.elapsed(NANOSECONDS)`; `TransportListener.transportReady` (the first
//!   SETTINGS, `NettyClientHandler` `onSettingsRead`) sets `reconnectPolicy = null`. No
//!   deadline is set on an attempt.
//!
//! State: `base` = `nextBackoffNanos`; `initial` = `reconnectPolicy == null`; `mark` = when
//! `connectingTimer` was last restarted. Java's `(long)` casts truncate toward zero and
//! saturate, exactly as Rust's `as i64`.

use rand::Rng;

use super::{AttemptPlan, GrpcBackoff, GrpcBackoffParams, uniform};
use crate::engine::time::{SimDuration, SimTime};

pub(super) fn reset(b: &mut GrpcBackoff, p: &GrpcBackoffParams) {
    // transportReady: reconnectPolicy = null; the next failure gets a fresh policy whose
    // nextBackoffNanos = initialBackoffNanos (kept here so current_backoff can show it).
    b.initial = true;
    b.base = p.initial_backoff.as_nanos();
}

pub(super) fn start_attempt(b: &mut GrpcBackoff, _p: &GrpcBackoffParams, now: SimTime) -> AttemptPlan {
    // startNewTransport: if (addressIndex.isAtBeginning()) connectingTimer.reset().start();
    b.mark = now.as_nanos();
    // No deadline: the transport is started and left to succeed or fail. The delay is
    // drawn in scheduleBackoff, after the failure; until then it is the base.
    AttemptPlan { connect_deadline: None, backoff: SimDuration(b.base), delay: SimDuration(b.base) }
}

pub(super) fn on_failure<R: Rng + ?Sized>(
    b: &mut GrpcBackoff,
    p: &GrpcBackoffParams,
    now: SimTime,
    rng: &mut R,
) -> SimTime {
    // scheduleBackoff:
    //   if (reconnectPolicy == null) { reconnectPolicy = backoffPolicyProvider.get(); }
    if b.initial {
        b.initial = false;
        b.base = p.initial_backoff.as_nanos(); // nextBackoffNanos = initialBackoffNanos
    }
    //   long delayNanos = reconnectPolicy.nextBackoffNanos()
    //       - connectingTimer.elapsed(TimeUnit.NANOSECONDS);
    let backoff = next_backoff_nanos(b, p, rng);
    let pass_start = SimTime(b.mark);
    //   reconnectTask = syncContext.schedule(new EndOfCurrentBackoff(), delayNanos, …):
    //   a delay at or below zero runs at once.
    pass_start.saturating_add(SimDuration(backoff)).max(now)
}

/// `ExponentialBackoffPolicy.nextBackoffNanos`. One draw.
fn next_backoff_nanos<R: Rng + ?Sized>(b: &mut GrpcBackoff, p: &GrpcBackoffParams, rng: &mut R) -> u64 {
    // Values are below one day (config): i64 arithmetic cannot overflow.
    // long currentBackoffNanos = nextBackoffNanos;
    let current = b.base as i64;
    // nextBackoffNanos = Math.min((long) (currentBackoffNanos * multiplier), maxBackoffNanos);
    let max = p.max_backoff.as_nanos() as i64;
    b.base = ((current as f64 * p.multiplier) as i64).min(max) as u64;
    // return currentBackoffNanos
    //     + uniformRandom(-jitter * currentBackoffNanos, jitter * currentBackoffNanos);
    let jitter = uniform_random(rng, -p.jitter * current as f64, p.jitter * current as f64);
    (current + jitter).max(0) as u64 // ≥ 0 anyway: jitter ≤ 1
}

/// `ExponentialBackoffPolicy.uniformRandom`: `(long) (random.nextDouble() * mag + low)`.
fn uniform_random<R: Rng + ?Sized>(rng: &mut R, low: f64, high: f64) -> i64 {
    // checkArgument(high >= low);
    debug_assert!(high >= low);
    // double mag = high - low; random.nextDouble() * mag + low
    uniform(rng, low, high) as i64
}

#[cfg(test)]
mod tests {
    use super::super::tests::{EXACT_BASES_NS, Fixed, gaps, params, secs_f};
    use super::super::{GrpcBackoff, GrpcProfile};
    use crate::engine::time::{SimDuration, SimTime};

    #[test]
    fn grpc_java_nanosecond_sequence_truncates_each_multiply() {
        // nextBackoffNanos = Math.min((long) (currentBackoffNanos * multiplier), max):
        // 1.6^10 s = 109951162777.6 ns -> 109951162777 (spec rounds to ...778).
        let p = params(GrpcProfile::GrpcJava, &[]);
        // r = 1/2: uniformRandom(-x, x) = 0 exactly
        let delays: Vec<u64> = gaps(&p, 12, &mut Fixed::new(1 << 63)).iter().map(|d| d.as_nanos()).collect();
        assert_eq!(delays, [&EXACT_BASES_NS[..], &[109_951_162_777, 120_000_000_000]].concat());
    }

    #[test]
    fn grpc_java_first_delay_is_jittered_and_drawn_on_failure() {
        // scheduleBackoff -> nextBackoffNanos() on the very first failure too.
        let p = params(GrpcProfile::GrpcJava, &[]);
        let mut b = GrpcBackoff::new(&p);
        let mut rng = Fixed::new(0); // r = 0: currentBackoff + (long)(-0.2 · currentBackoff)
        let plan = b.start_attempt(&p, SimTime::ZERO, &mut rng);
        assert_eq!(rng.draws, 0, "start_attempt never draws");
        assert_eq!(plan.backoff, SimDuration::from_secs(1));
        let next = b.on_failure(&p, SimTime::ZERO, &mut rng);
        assert_eq!(rng.draws, 1);
        assert_eq!(next, SimTime(800_000_000));
        assert_eq!(b.current_backoff(), secs_f(1.6), "the next base");
    }

    #[test]
    fn grpc_java_has_no_connect_deadline() {
        let p = params(GrpcProfile::GrpcJava, &[]);
        let mut b = GrpcBackoff::new(&p);
        let mut rng = Fixed::new(0);
        for _ in 0..20 {
            let plan = b.start_attempt(&p, SimTime::ZERO, &mut rng);
            assert_eq!(plan.connect_deadline, None);
            b.on_failure(&p, SimTime::ZERO, &mut rng);
        }
    }

    #[test]
    fn grpc_java_delay_counts_from_the_start_of_the_pass() {
        // delayNanos = nextBackoffNanos() - connectingTimer.elapsed(): the time the attempt
        // took is subtracted, and a negative remainder reconnects at once.
        let p = params(GrpcProfile::GrpcJava, &[]);
        let mut b = GrpcBackoff::new(&p);
        let mut rng = Fixed::new(1 << 63); // delay exactly 1 s
        let start = SimTime(10_000_000_000);
        b.start_attempt(&p, start, &mut rng);
        let failed = start + SimDuration::from_millis(300);
        assert_eq!(b.on_failure(&p, failed, &mut rng), start + SimDuration::from_secs(1));
        // The next attempt hangs 30 s before failing: retry at once.
        let start = start + SimDuration::from_secs(1);
        b.start_attempt(&p, start, &mut rng);
        let failed = start + SimDuration::from_secs(30);
        assert_eq!(b.on_failure(&p, failed, &mut rng), failed);
    }

    #[test]
    fn grpc_java_uniform_random_truncates_the_jitter_toward_zero() {
        // (long) (random.nextDouble() * mag + low) with low = -0.2 s: r = 0 gives exactly
        // -200000000; r = 1 - 2^-53 gives just under +0.2 s, truncated to 199999999 ns.
        let p = params(GrpcProfile::GrpcJava, &[]);
        let mut b = GrpcBackoff::new(&p);
        b.start_attempt(&p, SimTime::ZERO, &mut Fixed::new(u64::MAX));
        let next = b.on_failure(&p, SimTime::ZERO, &mut Fixed::new(u64::MAX));
        assert_eq!(next, SimTime(1_199_999_999));
    }
}
