//! `spec`: gRPC's `doc/connection-backoff.md`, "Proposed Backoff Algorithm", as written:
//!
//! ```text
//! ConnectWithBackoff()
//!   current_backoff = INITIAL_BACKOFF
//!   current_deadline = now() + INITIAL_BACKOFF
//!   while (TryConnect(Max(current_deadline, now() + MIN_CONNECT_TIMEOUT))
//!          != SUCCESS)
//!     SleepUntil(current_deadline)
//!     current_backoff = Min(current_backoff * MULTIPLIER, MAX_BACKOFF)
//!     current_deadline = now() + current_backoff +
//!       UniformRandom(-JITTER * current_backoff, JITTER * current_backoff)
//! ```
//!
//! and "Reset Backoff": back to INITIAL_BACKOFF "when the SETTINGS frame is received".
//!
//! The loop's body after `SleepUntil` runs when the next attempt starts, so it lives in
//! `start_attempt`; `on_failure` is the `SleepUntil`. State: `base` = `current_backoff`
//! (ns), `mark` = `current_deadline`, `initial` = the loop has not run since the reset.
//!
//! The document is real-valued. Here `current_backoff` is integer ns, `b·M` rounded to
//! the nearest ns, and the jittered delay `b + U` rounded to the nearest ns.

use rand::Rng;

use super::{AttemptPlan, GrpcBackoff, GrpcBackoffParams, connect_deadline, uniform};
use crate::engine::time::{SimDuration, SimTime};

pub(super) fn reset(b: &mut GrpcBackoff, p: &GrpcBackoffParams) {
    // current_backoff = INITIAL_BACKOFF
    b.base = p.initial_backoff.as_nanos();
    b.initial = true;
}

pub(super) fn start_attempt<R: Rng + ?Sized>(
    b: &mut GrpcBackoff,
    p: &GrpcBackoffParams,
    now: SimTime,
    rng: &mut R,
) -> AttemptPlan {
    let delay = if b.initial {
        // current_deadline = now() + INITIAL_BACKOFF
        b.initial = false;
        b.base
    } else {
        // current_backoff = Min(current_backoff * MULTIPLIER, MAX_BACKOFF)
        let grown = (b.base as f64 * p.multiplier).round() as u64; // saturates
        b.base = grown.min(p.max_backoff.as_nanos());
        // current_deadline = now() + current_backoff +
        //   UniformRandom(-JITTER * current_backoff, JITTER * current_backoff)
        let cur = b.base as f64;
        let u = uniform(rng, -p.jitter * cur, p.jitter * cur);
        (cur + u).round() as u64 // ≥ 0: jitter ≤ 1
    };
    let deadline = now.saturating_add(SimDuration(delay));
    b.mark = deadline.as_nanos();
    // TryConnect(Max(current_deadline, now() + MIN_CONNECT_TIMEOUT))
    AttemptPlan {
        connect_deadline: connect_deadline(p, now, deadline),
        backoff: SimDuration(b.base),
        delay: SimDuration(delay),
    }
}

pub(super) fn on_failure(b: &mut GrpcBackoff, now: SimTime) -> SimTime {
    // SleepUntil(current_deadline): at once if the attempt outlasted it.
    SimTime(b.mark).max(now)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{Fixed, params, secs_f};
    use super::super::{GrpcBackoff, GrpcProfile};
    use crate::engine::time::{SimDuration, SimTime};

    #[test]
    fn spec_first_deadline_is_initial_backoff_unjittered_and_draws_nothing() {
        // current_deadline = now() + INITIAL_BACKOFF (no UniformRandom on the first pass)
        let p = params(GrpcProfile::Spec, &[]);
        let mut b = GrpcBackoff::new(&p);
        let mut rng = Fixed::new(0);
        let t = SimTime(5_000_000_000);
        let plan = b.start_attempt(&p, t, &mut rng);
        assert_eq!(plan.delay, SimDuration::from_secs(1));
        assert_eq!(plan.backoff, SimDuration::from_secs(1));
        assert_eq!(rng.draws, 0);
        // TryConnect(Max(current_deadline, now() + MIN_CONNECT_TIMEOUT)): 20 s wins.
        assert_eq!(plan.connect_deadline, Some(t + SimDuration::from_secs(20)));
        // The next attempt draws once, in start_attempt; on_failure never draws.
        let next = b.on_failure(&p, t, &mut rng);
        assert_eq!(next, t + SimDuration::from_secs(1));
        assert_eq!(rng.draws, 0);
        b.start_attempt(&p, next, &mut rng);
        assert_eq!(rng.draws, 1);
    }

    #[test]
    fn spec_jitter_is_uniform_around_the_backoff_on_the_deadline() {
        // UniformRandom(-JITTER * current_backoff, JITTER * current_backoff): r = 0 gives
        // the low end, r = 1/2 the backoff itself.
        let p = params(GrpcProfile::Spec, &[]);
        for (bits, want) in [(0u64, 1.28), (1 << 63, 1.6)] {
            let mut b = GrpcBackoff::new(&p);
            let mut rng = Fixed::new(bits);
            b.start_attempt(&p, SimTime::ZERO, &mut rng);
            let next = b.on_failure(&p, SimTime::ZERO, &mut rng);
            let plan = b.start_attempt(&p, next, &mut rng);
            assert_eq!(plan.backoff, secs_f(1.6));
            assert_eq!(plan.delay, secs_f(want));
        }
    }

    #[test]
    fn spec_sleep_until_returns_at_once_when_the_attempt_outlasted_the_deadline() {
        // SleepUntil(current_deadline) with now() already past it.
        let p = params(GrpcProfile::Spec, &[]);
        let mut b = GrpcBackoff::new(&p);
        let mut rng = Fixed::new(0);
        b.start_attempt(&p, SimTime::ZERO, &mut rng);
        let late = SimTime(20_000_000_000); // timed out at max(1 s, 20 s)
        assert_eq!(b.on_failure(&p, late, &mut rng), late);
    }

    #[test]
    fn spec_rounds_the_real_valued_backoff_to_the_nearest_ns() {
        // 1.6^10 s = 109.9511627776 s -> 109951162778 ns (grpc-java truncates to ...777).
        let p = params(GrpcProfile::Spec, &[("jitter", "0")]);
        let mut b = GrpcBackoff::new(&p);
        let mut rng = Fixed::new(0);
        let mut now = SimTime::ZERO;
        let mut last = SimDuration::ZERO;
        for _ in 0..11 {
            last = b.start_attempt(&p, now, &mut rng).backoff;
            now = b.on_failure(&p, now, &mut rng);
        }
        assert_eq!(last, SimDuration(109_951_162_778));
    }
}
