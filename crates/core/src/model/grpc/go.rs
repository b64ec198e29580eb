//! `grpc-go`: grpc/grpc-go.
//!
//! - `internal/backoff/backoff.go`, `Exponential.Backoff(retries int) time.Duration`:
//!   ```text
//!   if retries == 0 { return bc.Config.BaseDelay }
//!   backoff, max := float64(bc.Config.BaseDelay), float64(bc.Config.MaxDelay)
//!   for backoff < max && retries > 0 { backoff *= bc.Config.Multiplier; retries-- }
//!   if backoff > max { backoff = max }
//!   backoff *= 1 + bc.Config.Jitter*(rand.Float64()*2-1)
//!   if backoff < 0 { return 0 }
//!   return time.Duration(backoff)
//!   ```
//!   with `backoff/backoff.go` `DefaultConfig` (1 s, 1.6, 0.2, 120 s).
//! - `clientconn.go`, `addrConn.resetTransportAndUnlock`: `backoffFor :=
//!   ac.dopts.bs.Backoff(ac.backoffIdx)` **before** dialing; `dialDuration =
//!   max(minConnectTimeout, backoffFor)`; `connectDeadline := time.Now().Add(dialDuration)`;
//!   on failure `timer := time.NewTimer(backoffFor)` (counted from the end of the failed
//!   attempt) and `ac.backoffIdx++` when it fires; on success `ac.backoffIdx = 0`.
//!
//! State: `failures` = `backoffIdx`; `mark` = `backoffFor` (ns); `base` = the bits of the
//! `f64` `min(BaseDelay·M^idx, MaxDelay)` that `Backoff(idx)` computes before jitter. It is
//! kept running instead of recomputed: `c(idx+1) = min(c(idx)·M, max)` is the same float as
//! the loop (while `c < max` the loop's next multiply is `c·M`; once it reached `max`, the
//! capped value stays `max` because M ≥ 1), and it costs one multiply per failure instead
//! of `idx`.

use rand::Rng;

use super::{AttemptPlan, GrpcBackoff, GrpcBackoffParams, connect_deadline, unit};
use crate::engine::time::{SimDuration, SimTime};

/// `time.Duration(backoff)`: Go's float-to-int conversion truncates toward zero. The
/// values here are finite and below one day (config), so no overflow.
pub(super) fn as_duration(ns: f64) -> u64 {
    ns as u64
}

pub(super) fn reset(b: &mut GrpcBackoff, p: &GrpcBackoffParams) {
    // resetTransportAndUnlock, success: ac.backoffIdx = 0 (the caller zeroes `failures`).
    // backoff := float64(bc.Config.BaseDelay)
    b.base = (p.initial_backoff.as_nanos() as f64).to_bits();
    b.mark = 0;
}

pub(super) fn start_attempt<R: Rng + ?Sized>(
    b: &mut GrpcBackoff,
    p: &GrpcBackoffParams,
    now: SimTime,
    rng: &mut R,
) -> AttemptPlan {
    // backoffFor := ac.dopts.bs.Backoff(ac.backoffIdx)
    let backoff_for = backoff(b, p, rng);
    b.mark = backoff_for;
    // dialDuration := minConnectTimeout
    // if dialDuration < backoffFor { dialDuration = backoffFor }
    // connectDeadline := time.Now().Add(dialDuration)
    AttemptPlan {
        connect_deadline: connect_deadline(p, now, now.saturating_add(SimDuration(backoff_for))),
        backoff: SimDuration(as_duration(f64::from_bits(b.base))),
        delay: SimDuration(backoff_for),
    }
}

/// `Exponential.Backoff(ac.backoffIdx)`, in ns. One draw unless `backoffIdx` is 0.
fn backoff<R: Rng + ?Sized>(b: &GrpcBackoff, p: &GrpcBackoffParams, rng: &mut R) -> u64 {
    // if retries == 0 { return bc.Config.BaseDelay }
    if b.failures == 0 {
        return p.initial_backoff.as_nanos();
    }
    // the loop and `if backoff > max { backoff = max }`: kept running in `base`
    let capped = f64::from_bits(b.base);
    // backoff *= 1 + bc.Config.Jitter*(rand.Float64()*2-1)
    let jittered = capped * (1.0 + p.jitter * (unit(rng) * 2.0 - 1.0));
    // if backoff < 0 { return 0 }
    if jittered < 0.0 {
        return 0;
    }
    // return time.Duration(backoff)
    as_duration(jittered)
}

pub(super) fn on_failure(b: &mut GrpcBackoff, p: &GrpcBackoffParams, now: SimTime) -> SimTime {
    // for backoff < max && retries > 0 { backoff *= bc.Config.Multiplier; retries-- }
    // if backoff > max { backoff = max }   — one more step, for backoffIdx + 1
    let max = p.max_backoff.as_nanos() as f64;
    let capped = f64::from_bits(b.base);
    b.base = if capped < max { (capped * p.multiplier).min(max) } else { max }.to_bits();
    // timer := time.NewTimer(backoffFor); on <-timer.C: ac.backoffIdx++ (the caller counts)
    now.saturating_add(SimDuration(b.mark))
}

#[cfg(test)]
mod tests {
    use super::super::tests::{EXACT_BASES_NS, Fixed, params, run_failing, secs_f};
    use super::super::{GrpcBackoff, GrpcProfile};
    use crate::engine::time::{SimDuration, SimTime};

    #[test]
    fn grpc_go_first_delay_is_exactly_base_delay_unjittered_without_a_draw() {
        // Backoff(0): if retries == 0 { return bc.Config.BaseDelay }
        let p = params(GrpcProfile::GrpcGo, &[]);
        let mut b = GrpcBackoff::new(&p);
        let mut rng = Fixed::new(0);
        let plan = b.start_attempt(&p, SimTime::ZERO, &mut rng);
        assert_eq!(plan.delay, SimDuration::from_secs(1));
        assert_eq!(rng.draws, 0);
        // The second attempt (backoffIdx 1) draws once, at its start.
        let next = b.on_failure(&p, SimTime::ZERO, &mut rng);
        assert_eq!(rng.draws, 0);
        let plan = b.start_attempt(&p, next, &mut rng);
        assert_eq!(rng.draws, 1);
        assert_eq!(plan.backoff, secs_f(1.6));
        assert_eq!(plan.delay, secs_f(1.28)); // r = 0: 1.6 s · (1 - 0.2)
    }

    #[test]
    fn grpc_go_delay_counts_from_the_end_of_the_failed_attempt() {
        // resetTransportAndUnlock: tryAllAddrs fails, then time.NewTimer(backoffFor).
        let p = params(GrpcProfile::GrpcGo, &[]);
        let mut b = GrpcBackoff::new(&p);
        let mut rng = Fixed::new(0);
        b.start_attempt(&p, SimTime::ZERO, &mut rng);
        // The attempt ran 5 s (refused late): the full 1 s follows it.
        let failed = SimTime(5_000_000_000);
        assert_eq!(b.on_failure(&p, failed, &mut rng), SimTime(6_000_000_000));
    }

    #[test]
    fn grpc_go_connect_deadline_is_max_of_min_connect_timeout_and_this_backoff() {
        // dialDuration := max(minConnectTimeout, backoffFor), backoffFor being the jittered
        // delay drawn for this attempt.
        let p = params(GrpcProfile::GrpcGo, &[("min_connect_timeout", "2s")]);
        let mut b = GrpcBackoff::new(&p);
        let mut rng = Fixed::new(u64::MAX); // r -> 1: factor just under 1.2
        let mut now = SimTime::ZERO;
        for k in 0..4 {
            let plan = b.start_attempt(&p, now, &mut rng);
            let dial = plan.connect_deadline.unwrap() - now;
            assert_eq!(dial, plan.delay.max(SimDuration::from_secs(2)), "attempt {k}");
            now = b.on_failure(&p, now, &mut rng);
        }
        // Later the jittered delay (here 6.5536 s · ~1.2) exceeds the 2 s minimum and wins.
        let plan = b.start_attempt(&p, now, &mut rng);
        assert!(plan.delay > SimDuration::from_secs(2));
        assert_eq!(plan.connect_deadline, Some(now + plan.delay));
    }

    #[test]
    fn grpc_go_float_formula_repeats_the_multiply_and_truncates_once() {
        // Base delays in float64 ns: 1, 1.6, 2.56, 4.096, 6.5536 s — no ms truncation
        // (grpc-core has 6553 ms) — and 1.6^10 s = 109.9511627776 s truncated to
        // 109951162777 ns, then the 120 s cap.
        let p = params(GrpcProfile::GrpcGo, &[]);
        let plans = run_failing(&p, 12, &mut Fixed::new(1 << 63)); // factor exactly 1
        let got: Vec<u64> = plans.iter().map(|pl| pl.delay.as_nanos()).collect();
        assert_eq!(got, [&EXACT_BASES_NS[..], &[109_951_162_777, 120_000_000_000]].concat());
        // M = 1.7: the loop's 1e9·1.7·1.7 is 2890000000.0000005; a pow-based formula
        // (1e9·1.7²) would give 2889999999.9999995 -> 2889999999 ns.
        let p = params(GrpcProfile::GrpcGo, &[("multiplier", "1.7")]);
        let plans = run_failing(&p, 3, &mut Fixed::new(1 << 63));
        assert_eq!(plans[2].backoff, SimDuration(2_890_000_000));
        assert_eq!(plans[2].delay, SimDuration(2_890_000_000));
    }

    #[test]
    fn grpc_go_jitter_factor_is_one_plus_j_times_two_r_minus_one() {
        // backoff *= 1 + Jitter*(rand.Float64()*2-1), then time.Duration truncates.
        let p = params(GrpcProfile::GrpcGo, &[("jitter", "0.5")]);
        for (bits, want) in [(0u64, 800_000_000u64), (1 << 62, 1_200_000_000)] {
            let plans = run_failing(&p, 2, &mut Fixed::new(bits));
            // r = 0: 1.6 s · 0.5; r = 1/4: 1.6 s · 0.75
            assert_eq!(plans[1].delay, SimDuration(want), "bits {bits:#x}");
        }
    }
}
