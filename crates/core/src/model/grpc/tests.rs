//! Behaviour across profiles: the spec's sequence, jitter bounds and means, connect
//! deadlines, the SETTINGS reset, common random numbers, proptest invariants and the size.

use std::convert::Infallible;

use proptest::prelude::*;

use super::*;
use crate::engine::rng::{Purpose, Seeds};

// ----- helpers shared with the profile modules' tests -----

pub(crate) fn secs_f(x: f64) -> SimDuration {
    SimDuration::from_secs_f64(x).unwrap()
}

pub(crate) fn params(profile: GrpcProfile, sets: &[(&str, &str)]) -> GrpcBackoffParams {
    GrpcBackoffConfig::with_pairs(profile, sets).resolve().unwrap()
}

/// 1 s·1.6^k in ns for k = 0 to 9, the bases of the document's defaults (INITIAL_BACKOFF
/// 1 s, MULTIPLIER 1.6): exact in every profile. The next, 1.6^10 s = 109.9511627776 s, is
/// where each profile rounds its own way.
pub(crate) const EXACT_BASES_NS: [u64; 10] = [
    1_000_000_000,
    1_600_000_000,
    2_560_000_000,
    4_096_000_000,
    6_553_600_000,
    10_485_760_000,
    16_777_216_000,
    26_843_545_600,
    42_949_672_960,
    68_719_476_736,
];

/// An RNG that returns the same `u64` on every call and counts the calls, so a test can
/// pick the uniform exactly (`unit` = value >> 11 · 2⁻⁵³: 0 -> 0, 1 << 63 -> 1/2,
/// u64::MAX -> 1 − 2⁻⁵³) and check how many draws a call made.
pub(crate) struct Fixed {
    value: u64,
    pub(crate) draws: u32,
}

impl Fixed {
    pub(crate) fn new(value: u64) -> Fixed {
        Fixed { value, draws: 0 }
    }
}

impl rand::TryRng for Fixed {
    type Error = Infallible;
    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        self.draws += 1;
        Ok((self.value >> 32) as u32)
    }
    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        self.draws += 1;
        Ok(self.value)
    }
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        self.draws += 1;
        dst.fill(self.value as u8);
        Ok(())
    }
}

/// `n` attempts from a fresh backoff, each refused the moment it starts; the next one
/// starts when `on_failure` says. Returns each attempt's plan.
pub(crate) fn run_failing<R: rand::Rng + ?Sized>(p: &GrpcBackoffParams, n: usize, rng: &mut R) -> Vec<AttemptPlan> {
    let mut b = GrpcBackoff::new(p);
    let mut now = SimTime::ZERO;
    (0..n)
        .map(|_| {
            let plan = b.start_attempt(p, now, rng);
            now = b.on_failure(p, now, rng);
            plan
        })
        .collect()
}

/// The gaps between attempt starts of a backoff whose attempts are refused at once:
/// the delays as each profile schedules them (grpc-java's drawn delays included).
pub(crate) fn gaps<R: rand::Rng + ?Sized>(p: &GrpcBackoffParams, n: usize, rng: &mut R) -> Vec<SimDuration> {
    let mut b = GrpcBackoff::new(p);
    let mut now = SimTime::ZERO;
    (0..n)
        .map(|_| {
            b.start_attempt(p, now, rng);
            let next = b.on_failure(p, now, rng);
            let gap = next - now;
            now = next;
            gap
        })
        .collect()
}

/// How far a profile's rounding may put a delay outside [b(1−J), b(1+J)]: grpc-core
/// truncates to whole ms (and its float detour through seconds can lose one more); the
/// others round or truncate to ns, and grpc-go jitters the untruncated float base.
fn slack(profile: GrpcProfile) -> f64 {
    match profile {
        GrpcProfile::GrpcCore => 1e6 + 1.0,
        _ => 2.0,
    }
}

// ----- the document's sequence -----

#[test]
fn spec_without_jitter_deadlines_follow_1_1_6_2_56_up_to_120s_and_stay() {
    // doc/connection-backoff.md: current_backoff = Min(current_backoff * 1.6, 120 s), the
    // deadline at now() + current_backoff when JITTER = 0.
    let p = params(GrpcProfile::Spec, &[("jitter", "0")]);
    let mut rng = Seeds::new(1).stream(0, 0, Purpose::Jitter);
    let plans = run_failing(&p, 16, &mut rng);
    let got: Vec<u64> = plans.iter().map(|pl| pl.delay.as_nanos()).collect();
    let want: Vec<u64> = EXACT_BASES_NS
        .into_iter()
        .chain([109_951_162_778]) // 109.9511627776 s, rounded to the nearest ns
        .chain([120_000_000_000; 5])
        .collect();
    assert_eq!(got, want);
    // Each deadline is counted from its attempt's start: attempt k starts at the sum of
    // the delays before it.
    let mut b = GrpcBackoff::new(&p);
    let mut now = SimTime::ZERO;
    for d in &want[..6] {
        let plan = b.start_attempt(&p, now, &mut rng);
        assert_eq!(plan.delay.as_nanos(), *d);
        let next = b.on_failure(&p, now, &mut rng);
        assert_eq!(next, now + plan.delay);
        now = next;
    }
}

// ----- jitter: bounds and mean -----

#[test]
fn jitter_0_2_keeps_every_delay_within_20_percent_and_the_mean_on_the_backoff() {
    // All four sources draw one uniform per delay, symmetric about the base: spec
    // UniformRandom(-J·b, J·b); grpc-core b·absl::Uniform(1-J, 1+J); grpc-go
    // b·(1 + J·(2r-1)); grpc-java b + uniformRandom(-J·b, J·b). So the mean delay is the
    // base, less the rounding (grpc-core truncates to ms: up to 1 ms low).
    //
    // Test: N = 20000 independent backoffs from one seeded stream; look at the 4th delay
    // (base 4.096 s; grpc-core 4096 ms) and the 16th (capped at 120 s). The sample mean of
    // a uniform on b·[0.8, 1.2] has standard error σ/√N with σ = 0.2·b/√3; the tolerance
    // is 5 standard errors plus the profile's rounding (`slack`).
    const N: usize = 20_000;
    for profile in GrpcProfile::ALL {
        let p = params(profile, &[]);
        let mut rng = Seeds::new(2024).stream(0, profile as u64, Purpose::Jitter);
        let (mut sum4, mut sum16) = (0.0, 0.0);
        for _ in 0..N {
            let g = gaps(&p, 16, &mut rng);
            for (k, base) in [(3, 4.096e9), (15, 120e9)] {
                let d = g[k].as_nanos() as f64;
                let lo = base * 0.8 - slack(profile);
                let hi = base * 1.2 + slack(profile);
                assert!((lo..=hi).contains(&d), "{profile}: delay {} = {d} ns outside ±20 % of {base}", k + 1);
            }
            sum4 += g[3].as_nanos() as f64;
            sum16 += g[15].as_nanos() as f64;
        }
        for (sum, base) in [(sum4, 4.096e9), (sum16, 120e9)] {
            let mean = sum / N as f64;
            let se = 0.2 * base / 3f64.sqrt() / (N as f64).sqrt();
            let tol = 5.0 * se + slack(profile);
            assert!((mean - base).abs() <= tol, "{profile}: mean {mean} vs base {base} (tolerance {tol})");
        }
    }
}

#[test]
fn spec_and_grpc_go_draw_at_the_same_points_so_their_delays_coincide() {
    // Common random numbers: both draw one uniform at the start of every attempt but the
    // first after a reset and use it as b·(1 + J·(2r − 1)); with the defaults their bases
    // agree (no ms truncation), so on one stream their delays agree to rounding (spec
    // rounds to the nearest ns, go truncates).
    let spec = params(GrpcProfile::Spec, &[]);
    let go = params(GrpcProfile::GrpcGo, &[]);
    let s = run_failing(&spec, 20, &mut Seeds::new(9).stream(0, 3, Purpose::Jitter));
    let g = run_failing(&go, 20, &mut Seeds::new(9).stream(0, 3, Purpose::Jitter));
    for (k, (a, b)) in s.iter().zip(&g).enumerate() {
        let diff = a.delay.as_nanos().abs_diff(b.delay.as_nanos());
        assert!(diff <= 1, "attempt {k}: spec {:?} go {:?}", a.delay, b.delay);
    }
}

// ----- connect deadlines -----

#[test]
fn connect_deadline_is_at_least_min_connect_timeout_after_the_attempt_starts() {
    // spec: Max(current_deadline, now() + MIN_CONNECT_TIMEOUT); grpc-core:
    // std::max(next_attempt_time_, now + min_connect_timeout_); grpc-go: now +
    // max(minConnectTimeout, backoffFor); grpc-java: none (InternalSubchannel sets none).
    for profile in GrpcProfile::ALL {
        let p = params(profile, &[]);
        let mut b = GrpcBackoff::new(&p);
        let mut rng = Seeds::new(5).stream(0, 0, Purpose::Jitter);
        let mut now = SimTime(123_456_789);
        for k in 0..40 {
            let plan = b.start_attempt(&p, now, &mut rng);
            match plan.connect_deadline {
                None => assert_eq!(profile, GrpcProfile::GrpcJava),
                Some(deadline) => {
                    let given = deadline - now;
                    assert!(given >= SimDuration::from_secs(20), "{profile} attempt {k}");
                    // …and the deadline is never before the next attempt is due.
                    assert_eq!(given, plan.delay.max(SimDuration::from_secs(20)));
                }
            }
            // Alternate: refused at once, then timed out at the deadline (or 20 s).
            let fail = if k % 2 == 0 { now } else { plan.connect_deadline.unwrap_or(now + SimDuration::from_secs(20)) };
            now = b.on_failure(&p, fail, &mut rng);
        }
    }
}

// ----- the reset -----

#[test]
fn settings_resets_the_next_delay_to_initial_backoff() {
    // "We choose to reset the Backoff when the SETTINGS frame is received."
    // spec and grpc-go then wait exactly INITIAL_BACKOFF; grpc-core and grpc-java jitter
    // it (NextAttemptDelay after Reset; a fresh ExponentialBackoffPolicy).
    for profile in GrpcProfile::ALL {
        let p = params(profile, &[]);
        let mut b = GrpcBackoff::new(&p);
        let mut rng = Seeds::new(11).stream(0, 0, Purpose::Jitter);
        let mut now = SimTime::ZERO;
        for _ in 0..7 {
            b.start_attempt(&p, now, &mut rng);
            now = b.on_failure(&p, now, &mut rng);
        }
        assert!(b.current_backoff() > SimDuration::from_secs(10), "{profile}");
        assert_eq!(b.failures(), 7);
        // The 8th attempt connects: SETTINGS arrives.
        b.start_attempt(&p, now, &mut rng);
        b.on_connected(&p);
        assert_eq!(b.current_backoff(), SimDuration::from_secs(1), "{profile}");
        assert_eq!(b.failures(), 0);
        // The connection drops 60 s later; the next attempt is refused at once.
        now += SimDuration::from_secs(60);
        let plan = b.start_attempt(&p, now, &mut rng);
        assert_eq!(plan.backoff, SimDuration::from_secs(1), "{profile}");
        let delay = b.on_failure(&p, now, &mut rng) - now;
        match profile {
            GrpcProfile::Spec | GrpcProfile::GrpcGo => {
                assert_eq!(delay, SimDuration::from_secs(1), "{profile}")
            }
            GrpcProfile::GrpcCore | GrpcProfile::GrpcJava => {
                assert!((secs_f(0.8)..secs_f(1.2)).contains(&delay), "{profile}: {delay:?}")
            }
        }
        // …and it grows again from there.
        let plan = b.start_attempt(&p, now + delay, &mut rng);
        assert_eq!(plan.backoff, secs_f(1.6), "{profile}");
    }
}

// ----- size -----

#[test]
fn backoff_state_fits_in_24_bytes() {
    // A simulation holds one per channel, a million of them.
    assert!(std::mem::size_of::<GrpcBackoff>() <= 24);
    assert!(std::mem::size_of::<AttemptPlan>() <= 32);
}

// ----- proptest invariants -----

fn any_params() -> impl Strategy<Value = GrpcBackoffParams> {
    (
        prop::sample::select(GrpcProfile::ALL.to_vec()),
        1u64..5_000,
        0u64..300_000,
        1.0f64..3.0,
        prop_oneof![Just(0.0), Just(1.0), 0.0f64..=1.0],
        0u64..60_000,
    )
        .prop_map(|(profile, initial_ms, extra_ms, multiplier, jitter, mct_ms)| {
            let c = GrpcBackoffConfig {
                profile,
                initial_backoff: Some(SimDuration::from_millis(initial_ms)),
                multiplier: Some(multiplier),
                jitter: Some(jitter),
                max_backoff: Some(SimDuration::from_millis(initial_ms.max(100) + extra_ms)),
                min_connect_timeout: (profile != GrpcProfile::GrpcJava).then_some(SimDuration::from_millis(mct_ms)),
            };
            c.resolve().unwrap()
        })
}

/// One attempt: how long it runs (µs) and whether SETTINGS arrives at its end.
fn attempts() -> impl Strategy<Value = Vec<(u64, bool)>> {
    prop::collection::vec((prop_oneof![Just(0u64), 0u64..200_000_000], prop::bool::weighted(0.1)), 1..60)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn backoff_grows_within_max_jitter_stays_in_band_and_time_never_runs_back(
        p in any_params(),
        ops in attempts(),
        seed in any::<u64>(),
    ) {
        let mut rng = Seeds::new(seed).stream(0, 0, Purpose::Jitter);
        let mut b = GrpcBackoff::new(&p);
        let mut now = SimTime(1_000_000_000);
        let mut prev_base: Option<SimDuration> = None;
        let max = p.max_backoff;
        let j = p.jitter;
        for (run_us, connects) in ops {
            let plan = b.start_attempt(&p, now, &mut rng);
            let base = plan.backoff;
            // The base never exceeds the cap and never shrinks before a reset (grpc-core:
            // its float detour may lose 1 ms when b·M < b + 1 ms; see core.rs).
            prop_assert!(base <= max, "{base:?} > {max:?}");
            prop_assert_eq!(base, b.current_backoff());
            if let Some(prev) = prev_base {
                let floor = match p.profile {
                    GrpcProfile::GrpcCore => prev.saturating_sub(SimDuration::from_millis(1)),
                    _ => prev,
                };
                prop_assert!(base >= floor, "{:?} shrank {prev:?} -> {base:?}", p.profile);
            }
            prev_base = Some(base);
            // The drawn delay lies within [b(1−J), b(1+J)], up to the profile's rounding.
            let lo = base.as_nanos() as f64 * (1.0 - j) - slack(p.profile);
            let hi = base.as_nanos() as f64 * (1.0 + j) + slack(p.profile);
            if p.profile != GrpcProfile::GrpcJava {
                let d = plan.delay.as_nanos() as f64;
                prop_assert!(lo <= d && d <= hi, "{:?}: {d} not in [{lo}, {hi}]", p.profile);
            }
            // A connect deadline, where there is one, gives at least MCT and the delay.
            if let Some(deadline) = plan.connect_deadline {
                let mct = p.min_connect_timeout.unwrap();
                prop_assert!(deadline >= now + mct);
                prop_assert!(deadline >= now + plan.delay);
            }
            let end = now + SimDuration::from_micros(run_us);
            if connects {
                b.on_connected(&p);
                prop_assert_eq!(b.current_backoff(), p.initial_backoff);
                prev_base = None;
                now = end + SimDuration::from_secs(1);
            } else {
                let java_base = b.current_backoff();
                let next = b.on_failure(&p, end, &mut rng);
                prop_assert!(next >= end, "next attempt {next:?} before now {end:?}");
                if p.profile == GrpcProfile::GrpcJava && next > end {
                    // grpc-java's delay, drawn now, counted from the attempt's start.
                    let d = (next - now).as_nanos() as f64;
                    let lo = java_base.as_nanos() as f64 * (1.0 - j) - 2.0;
                    let hi = java_base.as_nanos() as f64 * (1.0 + j) + 2.0;
                    prop_assert!(lo <= d && d <= hi, "java: {d} not in [{lo}, {hi}]");
                }
                now = next;
            }
        }
    }
}

#[test]
fn connect_deadline_is_the_start_plus_the_larger_of_backoff_and_min_connect_timeout_even_near_the_end_of_time() {
    // grpc-go clientconn.go: connectDeadline = now + max(minConnectTimeout, backoffFor);
    // the spec and grpc-core take the later of the two instants. Saturation keeps them equal.
    let p = params(GrpcProfile::GrpcGo, &[("min_connect_timeout", "2s")]);
    for now in [SimTime::ZERO, SimTime(u64::MAX - 1_000_000_000)] {
        for b in [SimDuration::from_secs(1), SimDuration::from_secs(3)] {
            let want = now.saturating_add(b.max(SimDuration::from_secs(2)));
            assert_eq!(connect_deadline(&p, now, now.saturating_add(b)), Some(want), "{now:?} {b:?}");
        }
    }
}
