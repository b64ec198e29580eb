//! `grpc-core`: grpc/grpc's C core (under C++, Python, Ruby, PHP, Objective-C, C#/Core).
//!
//! - `src/core/util/backoff.cc`, `BackOff::NextAttemptDelay` and `BackOff::Reset`:
//!   ```text
//!   if (initial_) { initial_ = false; }
//!   else { current_backoff_ = std::min(current_backoff_ * multiplier, max_backoff); }
//!   const double jitter = absl::Uniform(rand_gen_, 1 - jitter, 1 + jitter);
//!   return current_backoff_ * jitter;
//!   ```
//! - `src/core/util/time.h`: `Duration` is an `int64_t` of ms, and `Duration * double` is
//!   `Duration::FromSecondsAsDouble(lhs.millis() * rhs / 1000.0)`, which truncates
//!   `seconds * 1000.0` to an integer. Both the multiply and the jitter go through it.
//! - `src/core/client_channel/subchannel.cc`: `Subchannel::StartConnectingLocked` draws the
//!   delay and sets the connect deadline, `OnConnectingFinishedLocked` arms the retry
//!   timer for what is left of it, `ParseArgsForBackoffValues` clamps the args (done in
//!   [`super::config`]), `ConnectedSubchannelStateWatcher` resets.
//!
//! State: `base` = `current_backoff_` in ms, `initial` = `initial_`, `mark` =
//! `next_attempt_time_` (ns since start).

use rand::Rng;

use super::{AttemptPlan, GrpcBackoff, GrpcBackoffParams, connect_deadline, uniform};
use crate::engine::time::{NANOS_PER_MILLI, SimDuration, SimTime};

/// `Duration operator*(Duration lhs, double rhs)` in `time.h`, for a finite, non-negative
/// duration (ms) and factor: `FromSecondsAsDouble(lhs.millis() * rhs / 1000.0)`.
pub(super) fn duration_times(millis: u64, rhs: f64) -> u64 {
    let seconds = millis as f64 * rhs / 1000.0;
    // FromSecondsAsDouble: double millis = seconds * 1000.0;
    let millis = seconds * 1000.0;
    // if (millis >= static_cast<double>(std::numeric_limits<int64_t>::max())) return Infinity();
    if millis >= i64::MAX as f64 {
        return i64::MAX as u64;
    }
    // return Milliseconds(static_cast<int64_t>(millis)); — truncation toward zero
    millis as i64 as u64
}

/// `absl::Uniform(rand_gen_, lo, hi)` for doubles: `uniform_real_distribution`, closed-open,
/// which returns `a + sample * (b - a)` and draws again if that rounds onto `b`.
fn absl_uniform<R: Rng + ?Sized>(rng: &mut R, a: f64, b: f64) -> f64 {
    let range = b - a;
    loop {
        let res = uniform(rng, a, b);
        // if (res < p.b() || p.range_ <= 0 || !std::isfinite(p.range_)) return res;
        if res < b || range <= 0.0 || !range.is_finite() {
            return res;
        }
    }
}

pub(super) fn reset(b: &mut GrpcBackoff, p: &GrpcBackoffParams) {
    // BackOff::Reset: current_backoff_ = options_.initial_backoff(); initial_ = true;
    b.base = p.initial_backoff.as_nanos() / NANOS_PER_MILLI; // whole ms (config checks)
    b.initial = true;
}

pub(super) fn start_attempt<R: Rng + ?Sized>(
    b: &mut GrpcBackoff,
    p: &GrpcBackoffParams,
    now: SimTime,
    rng: &mut R,
) -> AttemptPlan {
    // Subchannel::StartConnectingLocked:
    //   next_attempt_time_ = now + backoff_.NextAttemptDelay();
    let delay_ms = next_attempt_delay(b, p, rng);
    let next_attempt = now.saturating_add(SimDuration(delay_ms * NANOS_PER_MILLI));
    b.mark = next_attempt.as_nanos();
    //   const Timestamp min_deadline = now + min_connect_timeout_;
    //   args.deadline = std::max(next_attempt_time_, min_deadline);
    AttemptPlan {
        connect_deadline: connect_deadline(p, now, next_attempt),
        backoff: SimDuration(b.base * NANOS_PER_MILLI),
        delay: SimDuration(delay_ms * NANOS_PER_MILLI),
    }
}

/// `BackOff::NextAttemptDelay`, in ms.
fn next_attempt_delay<R: Rng + ?Sized>(b: &mut GrpcBackoff, p: &GrpcBackoffParams, rng: &mut R) -> u64 {
    if b.initial {
        // if (initial_) { initial_ = false; }
        b.initial = false;
    } else {
        // current_backoff_ = std::min(current_backoff_ * options_.multiplier(),
        //                             options_.max_backoff());
        let max_ms = p.max_backoff.as_nanos() / NANOS_PER_MILLI;
        b.base = duration_times(b.base, p.multiplier).min(max_ms);
    }
    // const double jitter = absl::Uniform(rand_gen_, 1 - options_.jitter(), 1 + options_.jitter());
    let jitter = absl_uniform(rng, 1.0 - p.jitter, 1.0 + p.jitter);
    // return current_backoff_ * jitter;
    duration_times(b.base, jitter)
}

pub(super) fn on_failure(b: &mut GrpcBackoff, now: SimTime) -> SimTime {
    // Subchannel::OnConnectingFinishedLocked:
    //   const Duration time_until_next_attempt = next_attempt_time_ - Timestamp::Now();
    //   retry_timer_handle_ = event_engine_->RunAfter(time_until_next_attempt, …);
    // "if the connection attempt took longer than the backoff time, then the timer will
    // fire immediately"; OnRetryTimer reports IDLE and the LB policy reconnects.
    SimTime(b.mark).max(now)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{Fixed, params, run_failing};
    use super::super::{GrpcBackoff, GrpcProfile};
    use super::duration_times;
    use crate::engine::rng::{Purpose, Seeds};
    use crate::engine::time::{SimDuration, SimTime};

    fn ms(n: u64) -> SimDuration {
        SimDuration::from_millis(n)
    }

    #[test]
    fn grpc_core_base_is_integer_ms_truncated_at_each_multiply() {
        // backoff.cc NextAttemptDelay + time.h Duration*double: 1600*1.6 = 2560,
        // 4096*1.6 = 6553.6 -> 6553, 6553*1.6 = 10484.8 -> 10484, … (values from the same
        // IEEE arithmetic done by hand in Python).
        let p = params(GrpcProfile::GrpcCore, &[]);
        let plans = run_failing(&p, 14, &mut Fixed::new(1 << 63));
        let got: Vec<u64> = plans.iter().map(|pl| pl.backoff.as_nanos() / 1_000_000).collect();
        assert_eq!(
            got,
            [1000, 1600, 2560, 4096, 6553, 10484, 16774, 26838, 42940, 68704, 109926, 120000, 120000, 120000]
        );
    }

    #[test]
    fn grpc_core_duration_times_double_truncates_through_seconds() {
        // FromSecondsAsDouble(millis * rhs / 1000.0): the detour through seconds loses the
        // last ms of odd values at rhs = 1.0 (1001 / 1000 * 1000 = 1000.9999999999999).
        assert_eq!(duration_times(1001, 1.0), 1000);
        assert_eq!(duration_times(1000, 1.0), 1000);
        assert_eq!(duration_times(4096, 1.6), 6553);
        assert_eq!(duration_times(1000, 0.8), 800);
    }

    #[test]
    fn grpc_core_fixed_reconnect_backoff_shape_loses_a_ms_once() {
        // multiplier 1 (as grpc.testing.fixed_reconnect_backoff_ms sets it) with an odd
        // initial: the base drops 1001 -> 1000 ms at the first multiply, then holds.
        let p = params(
            GrpcProfile::GrpcCore,
            &[("initial_backoff", "1001ms"), ("max_backoff", "1001ms"), ("multiplier", "1"), ("jitter", "0")],
        );
        let plans = run_failing(&p, 4, &mut Fixed::new(0));
        let got: Vec<_> = plans.iter().map(|pl| pl.backoff).collect();
        assert_eq!(got, [ms(1001), ms(1000), ms(1000), ms(1000)]);
    }

    #[test]
    fn grpc_core_first_delay_is_jittered_and_drawn_at_attempt_start() {
        // NextAttemptDelay draws on every call, the first included.
        let p = params(GrpcProfile::GrpcCore, &[]);
        let mut b = GrpcBackoff::new(&p);
        let mut rng = Fixed::new(0); // r = 0: factor 1 - 0.2
        let plan = b.start_attempt(&p, SimTime::ZERO, &mut rng);
        assert_eq!(rng.draws, 1);
        assert_eq!(plan.backoff, ms(1000));
        assert_eq!(plan.delay, ms(800));
        b.on_failure(&p, SimTime::ZERO, &mut rng);
        assert_eq!(rng.draws, 1, "on_failure never draws");
        // And a real stream spreads first delays over [800, 1200) ms, whole ms.
        let mut rng = Seeds::new(7).stream(0, 0, Purpose::Jitter);
        let firsts: Vec<SimDuration> =
            (0..200).map(|_| GrpcBackoff::new(&p).start_attempt(&p, SimTime::ZERO, &mut rng).delay).collect();
        assert!(firsts.iter().all(|d| (ms(800)..ms(1200)).contains(d)));
        assert!(firsts.iter().all(|d| d.as_nanos() % 1_000_000 == 0));
        assert!(firsts.iter().any(|d| *d != firsts[0]));
    }

    #[test]
    fn grpc_core_delay_is_backoff_times_jitter_truncated_to_ms() {
        // current_backoff_ * jitter, jitter = absl::Uniform(1 - J, 1 + J): r = 1/2 gives
        // exactly the backoff; r = 1 - 2^-52 gives just under 1.2·b, truncated.
        let p = params(GrpcProfile::GrpcCore, &[]);
        let mut b = GrpcBackoff::new(&p);
        let plan = b.start_attempt(&p, SimTime::ZERO, &mut Fixed::new(1 << 63));
        assert_eq!(plan.delay, ms(1000));
        let mut b = GrpcBackoff::new(&p);
        let plan = b.start_attempt(&p, SimTime::ZERO, &mut Fixed::new(0xffff_ffff_ffff_f000));
        assert_eq!(plan.delay, ms(1199));
    }

    #[test]
    fn grpc_core_absl_uniform_redraws_a_sample_that_lands_on_one_plus_jitter() {
        // uniform_real_distribution: res = a + sample * (b - a); if it is not < b, "sample
        // rejected, try again". Our top uniform (1 - 2^-53) gives 0.8 + 0.3999999999999999
        // = 1.2 exactly: the one value of 2^53 that costs a second draw.
        struct Script(Vec<u64>, usize);
        impl rand::TryRng for Script {
            type Error = std::convert::Infallible;
            fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
                unreachable!()
            }
            fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
                self.1 += 1;
                Ok(self.0[self.1 - 1])
            }
            fn try_fill_bytes(&mut self, _: &mut [u8]) -> Result<(), Self::Error> {
                unreachable!()
            }
        }
        let p = params(GrpcProfile::GrpcCore, &[]);
        let mut rng = Script(vec![u64::MAX, 1 << 63], 0);
        let plan = GrpcBackoff::new(&p).start_attempt(&p, SimTime::ZERO, &mut rng);
        assert_eq!(rng.1, 2);
        assert_eq!(plan.delay, ms(1000));
    }

    #[test]
    fn grpc_core_connect_deadline_is_max_of_next_attempt_and_min_connect_timeout() {
        // args.deadline = std::max(next_attempt_time_, now + min_connect_timeout_)
        let p = params(GrpcProfile::GrpcCore, &[]);
        let mut b = GrpcBackoff::new(&p);
        let t = SimTime(3_000_000_000);
        let plan = b.start_attempt(&p, t, &mut Fixed::new(1 << 63));
        assert_eq!(plan.connect_deadline, Some(t + SimDuration::from_secs(20)));
        // With a large backoff the next attempt time is later than 20 s and wins.
        let p = params(GrpcProfile::GrpcCore, &[("initial_backoff", "30s"), ("jitter", "0")]);
        let mut b = GrpcBackoff::new(&p);
        let plan = b.start_attempt(&p, t, &mut Fixed::new(0));
        assert_eq!(plan.connect_deadline, Some(t + SimDuration::from_secs(30)));
    }

    #[test]
    fn grpc_core_attempt_that_outlasted_its_delay_retries_at_once() {
        // OnConnectingFinishedLocked: "if the connection attempt took longer than the
        // backoff time, then the timer will fire immediately".
        let p = params(GrpcProfile::GrpcCore, &[]);
        let mut b = GrpcBackoff::new(&p);
        let mut rng = Fixed::new(1 << 63);
        let plan = b.start_attempt(&p, SimTime::ZERO, &mut rng); // next attempt at 1 s
        assert_eq!(plan.delay, ms(1000));
        // Refused quickly: wait for the rest of the delay, counted from attempt start.
        let mut early = b;
        assert_eq!(early.on_failure(&p, SimTime(300_000_000), &mut rng), SimTime(1_000_000_000));
        // Timed out at the 20 s deadline: retry at once.
        let t = SimTime(20_000_000_000);
        assert_eq!(b.on_failure(&p, t, &mut rng), t);
    }
}
