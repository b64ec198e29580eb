//! The delay formula: nominal delay, cap and jitter.
//!
//! The nominal delay before retry k+1 (k counted from 0, the first sleep is k = 0) is
//! `base · multiplierᵏ`, computed in f64 from integer nanoseconds and truncated to a
//! whole nanosecond (grpc-java truncates its long nanoseconds the same way; for a
//! multiplier of 2 the value is exact). With the cap *before* jitter the formula works
//! on d = min(cap, nominal) and the jitter may or may not exceed the cap depending on
//! the mode; with the cap *after* jitter the draw is made on the uncapped nominal and
//! clamped, so every draw above the cap lands exactly on it.
//!
//! Every mode but `none` uses exactly one uniform draw r ∈ [0, 1) per sleep
//! (`rand::RngExt::random::<f64>()`, 53 bits), as every library modelled here does:
//!
//! | mode | sleep | library |
//! |---|---|---|
//! | `none` | d | backon default, envoy-less loops |
//! | `full` | d·r = U(0, d) | api-core, tenacity, botocore, grpc-java, envoy |
//! | `equal` | d/2 + (d/2)·r | Brooker 2015 |
//! | `decorrelated` | min(cap, base + (3·prev − base)·r), prev from base | Brooker 2015 |
//! | `proportional` ±f | d·(1 − f + 2f·r) | grpc core (f = 0.2) |
//! | `additive` x | d + x·r | gcloud (x = 1 s) |
//! | `half` | d + d·r = U(d, 2d), in f32 | backon `with_jitter` |
//! | `span` | U(d, m·d); once m·d ≥ cap, U(max(cap/m, base), cap) | google-cloud-cpp |
//!
//! `half` computes the jitter as backon does, `d.mul_f32(rng.f32())` — std's
//! `Duration::mul_f32`, single precision — so its last few nanoseconds are backon's.
//! `decorrelated` and `span` bound their draw by the cap themselves; `cap_applies` does
//! not change them.

use serde::Serialize;

use crate::engine::time::SimDuration;
use crate::model::jitter::{self as formulas, f, ns};

super::keyword_enum! {
    /// `jitter`: the mode, without its parameter.
    JitterMode {
        None => "none",
        Full => "full",
        Equal => "equal",
        Decorrelated => "decorrelated",
        Proportional => "proportional",
        Additive => "additive",
        Half => "half",
        Span => "span",
    }
}

super::keyword_enum! {
    /// `cap_applies`: whether the cap bounds the nominal delay before the jitter is
    /// drawn, or the jittered sleep after it.
    CapApplies {
        BeforeJitter => "before-jitter",
        AfterJitter => "after-jitter",
    }
}

/// The resolved jitter mode with its parameter.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "mode", rename_all = "kebab-case")]
pub enum Jitter {
    None,
    Full,
    Equal,
    Decorrelated,
    /// d·U(1 − fraction, 1 + fraction).
    Proportional {
        fraction: f64,
    },
    /// d + U(0, max).
    Additive {
        max: SimDuration,
    },
    Half,
    Span,
}

impl Jitter {
    pub fn mode(&self) -> JitterMode {
        match self {
            Jitter::None => JitterMode::None,
            Jitter::Full => JitterMode::Full,
            Jitter::Equal => JitterMode::Equal,
            Jitter::Decorrelated => JitterMode::Decorrelated,
            Jitter::Proportional { .. } => JitterMode::Proportional,
            Jitter::Additive { .. } => JitterMode::Additive,
            Jitter::Half => JitterMode::Half,
            Jitter::Span => JitterMode::Span,
        }
    }

    /// Does a sleep under this mode take a uniform draw?
    pub fn draws(&self) -> bool {
        !matches!(self, Jitter::None)
    }
}

/// Everything the formula needs, borrowed from the policy.
#[derive(Clone, Copy, Debug)]
pub struct Formula {
    pub base: SimDuration,
    pub multiplier: f64,
    pub cap: Option<SimDuration>,
    pub cap_applies: CapApplies,
    pub jitter: Jitter,
}

impl Formula {
    /// base·multiplierᵏ, uncapped, truncated to whole nanoseconds, saturating.
    pub fn nominal(&self, k: u32, base: SimDuration) -> SimDuration {
        let k = i32::try_from(k).unwrap_or(i32::MAX);
        ns(f(base) * self.multiplier.powi(k))
    }

    /// The delay the jitter works on: the nominal, capped first if the cap applies
    /// before jitter (or the mode has no cap of its own).
    pub fn jitter_input(&self, nominal: SimDuration) -> SimDuration {
        match (self.cap, self.cap_applies, self.jitter) {
            (_, _, Jitter::Span | Jitter::Decorrelated) => nominal,
            (Some(cap), CapApplies::BeforeJitter, _) => nominal.min(cap),
            _ => nominal,
        }
    }

    /// The sleep for one draw `r` ∈ [0, 1). `nominal` is base·mᵏ (uncapped); `prev` is
    /// the previous sleep (decorrelated only; `base` before the first); `base` is the
    /// base this sleep grows from (AWS uses another one for throttling errors).
    pub fn sleep(&self, nominal: SimDuration, prev: SimDuration, base: SimDuration, r: f64) -> SimDuration {
        let d = self.jitter_input(nominal);
        let drawn = match self.jitter {
            Jitter::None => d,
            Jitter::Full => formulas::full(d, r),
            Jitter::Equal => formulas::equal(d, r),
            Jitter::Decorrelated => {
                // Brooker 2015: sleep = min(cap, random_between(base, sleep * 3)).
                let x = formulas::decorrelated(base, prev, r);
                return match self.cap {
                    Some(cap) => x.min(cap),
                    None => x,
                };
            }
            Jitter::Proportional { fraction } => ns(f(d) * (1.0 - fraction + 2.0 * fraction * r)),
            Jitter::Additive { max } => ns(f(d) + f(max) * r),
            Jitter::Half => {
                // backon ExponentialBackoff::next: tmp_cur.saturating_add(tmp_cur.mul_f32(rng.f32())).
                let dd = std::time::Duration::from_nanos(d.as_nanos());
                let extra = dd.mul_f32(r as f32);
                let extra = u64::try_from(extra.as_nanos()).unwrap_or(u64::MAX);
                SimDuration::from_nanos(d.as_nanos().saturating_add(extra))
            }
            Jitter::Span => {
                // google-cloud-cpp ExponentialBackoffPolicy::OnCompletion: the range
                // [start, end) with end = m·start; once end ≥ maximum it is pinned to
                // [max(maximum / m, initial), maximum].
                let (lo, hi) = self.span_range(nominal, base);
                return ns(f(lo) + (f(hi) - f(lo)) * r);
            }
        };
        match (self.cap, self.cap_applies) {
            (Some(cap), CapApplies::AfterJitter) => drawn.min(cap),
            _ => drawn,
        }
    }

    /// `span`'s range for a nominal start d: [d, m·d), pinned once m·d reaches the cap.
    pub fn span_range(&self, nominal: SimDuration, base: SimDuration) -> (SimDuration, SimDuration) {
        let hi = ns(f(nominal) * self.multiplier);
        match self.cap {
            Some(cap) if hi >= cap => {
                let lo = ns(f(cap) / self.multiplier).max(base).min(cap);
                (lo, cap)
            }
            _ => (nominal, hi),
        }
    }

    /// The largest sleep the formula can give for this nominal (r → 1), or the cap's
    /// bound: what "worst case" means in `explain`.
    pub fn max_sleep(&self, nominal: SimDuration, prev: SimDuration, base: SimDuration) -> SimDuration {
        // r = 1 - 2^-53 is the largest draw; the formulas are monotone in r.
        let r = 1.0 - f64::EPSILON / 2.0;
        self.sleep(nominal, prev, base, r).max(self.sleep(nominal, prev, base, 0.0))
    }

    /// An upper bound on any backoff sleep, whatever k: `None` when there is none (no
    /// cap, or a jitter above an uncapped nominal).
    pub fn sleep_bound(&self) -> Option<SimDuration> {
        let cap = self.cap?;
        let scale = |x: f64| ns(f(cap) * x);
        Some(match (self.jitter, self.cap_applies) {
            (Jitter::Decorrelated | Jitter::Span, _) => cap,
            (_, CapApplies::AfterJitter) => cap,
            (Jitter::None | Jitter::Full | Jitter::Equal, _) => cap,
            (Jitter::Proportional { fraction }, _) => scale(1.0 + fraction),
            (Jitter::Additive { max }, _) => SimDuration::from_nanos(cap.as_nanos().saturating_add(max.as_nanos())),
            (Jitter::Half, _) => scale(2.0),
        })
    }

    /// Is the cap a hard cap: no backoff sleep ever exceeds it?
    pub fn hard_cap(&self) -> bool {
        matches!((self.cap, self.sleep_bound()), (Some(c), Some(b)) if b <= c)
    }

    /// Do sleeps pile up exactly at the cap (a positive share of draws equal to it)?
    /// Without jitter every capped sleep is the cap; with the cap after the jitter
    /// every draw above it becomes the cap; decorrelated clamps its draw the same way.
    pub fn piles_at_cap(&self) -> bool {
        self.cap.is_some()
            && match self.jitter {
                Jitter::None | Jitter::Decorrelated => true,
                Jitter::Span => false,
                _ => self.cap_applies == CapApplies::AfterJitter,
            }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(x: f64) -> SimDuration {
        SimDuration::from_secs_f64(x).unwrap()
    }

    fn formula(jitter: Jitter, cap: Option<f64>, applies: CapApplies) -> Formula {
        Formula { base: secs(1.0), multiplier: 2.0, cap: cap.map(secs), cap_applies: applies, jitter }
    }

    #[test]
    fn nominal_is_base_times_multiplier_to_the_k_and_saturates() {
        let fm = formula(Jitter::None, None, CapApplies::BeforeJitter);
        let b = fm.base;
        assert_eq!(fm.nominal(0, b), secs(1.0));
        assert_eq!(fm.nominal(5, b), secs(32.0));
        assert_eq!(fm.nominal(200, b), SimDuration::MAX);
        let g = Formula { multiplier: 1.6, ..fm };
        assert_eq!(g.nominal(2, b), SimDuration::from_nanos(2_560_000_000));
    }

    #[test]
    fn full_jitter_cap_before_never_exceeds_the_cap() {
        let fm = formula(Jitter::Full, Some(30.0), CapApplies::BeforeJitter);
        let b = fm.base;
        assert_eq!(fm.sleep(fm.nominal(3, b), b, b, 0.5), secs(4.0));
        assert_eq!(fm.sleep(fm.nominal(10, b), b, b, 0.5), secs(15.0));
        assert!(fm.hard_cap() && !fm.piles_at_cap());
    }

    #[test]
    fn cap_after_jitter_piles_draws_on_the_cap() {
        // api-core <= 2.10: min(U(0, 2·delay), maximum).
        let fm = formula(Jitter::Full, Some(60.0), CapApplies::AfterJitter);
        let b = fm.base;
        assert_eq!(fm.sleep(fm.nominal(7, b), b, b, 0.75), secs(60.0)); // 96 s → 60 s
        assert_eq!(fm.sleep(fm.nominal(7, b), b, b, 0.25), secs(32.0));
        assert!(fm.hard_cap() && fm.piles_at_cap());
    }

    #[test]
    fn every_mode_at_r_half() {
        let b = secs(1.0);
        let d = secs(8.0);
        let at = |j| formula(j, None, CapApplies::BeforeJitter).sleep(d, secs(2.0), b, 0.5);
        assert_eq!(at(Jitter::None), secs(8.0));
        assert_eq!(at(Jitter::Full), secs(4.0));
        assert_eq!(at(Jitter::Equal), secs(6.0));
        assert_eq!(at(Jitter::Decorrelated), secs(3.5)); // 1 + (6 − 1)/2
        assert_eq!(at(Jitter::Proportional { fraction: 0.2 }), secs(8.0));
        assert_eq!(at(Jitter::Additive { max: secs(1.0) }), secs(8.5));
        assert_eq!(at(Jitter::Half), secs(12.0));
        assert_eq!(at(Jitter::Span), secs(12.0)); // U(8, 16) without a cap
    }

    #[test]
    fn bounds_say_when_jitter_exceeds_a_cap_applied_before_it() {
        let cap = Some(60.0);
        let half = formula(Jitter::Half, cap, CapApplies::BeforeJitter);
        assert_eq!(half.sleep_bound(), Some(secs(120.0)));
        assert!(!half.hard_cap());
        let prop = formula(Jitter::Proportional { fraction: 0.2 }, cap, CapApplies::BeforeJitter);
        assert_eq!(prop.sleep_bound(), Some(secs(72.0)));
        let none = formula(Jitter::None, cap, CapApplies::BeforeJitter);
        assert!(none.hard_cap() && none.piles_at_cap());
        assert_eq!(formula(Jitter::Full, None, CapApplies::BeforeJitter).sleep_bound(), None);
    }

    #[test]
    fn span_is_google_cloud_cpp_range() {
        // backoff_policy.cc with (1 s, 5 min, 2.0): U(1, 2), U(2, 4), …, U(128, 256),
        // then end 512 ≥ 300 pins the range to [max(300/2, 1), 300] = U(150, 300).
        let fm = formula(Jitter::Span, Some(300.0), CapApplies::BeforeJitter);
        let b = fm.base;
        assert_eq!(fm.span_range(fm.nominal(0, b), b), (secs(1.0), secs(2.0)));
        assert_eq!(fm.span_range(fm.nominal(7, b), b), (secs(128.0), secs(256.0)));
        assert_eq!(fm.span_range(fm.nominal(8, b), b), (secs(150.0), secs(300.0)));
        assert_eq!(fm.span_range(fm.nominal(30, b), b), (secs(150.0), secs(300.0)));
        assert_eq!(fm.sleep(fm.nominal(9, b), b, b, 0.5), secs(225.0));
        assert!(fm.hard_cap() && !fm.piles_at_cap());
    }

    #[test]
    fn half_jitter_uses_single_precision_like_backon() {
        let fm = formula(Jitter::Half, Some(60.0), CapApplies::BeforeJitter);
        let d = secs(1.0);
        // 0.1 is not exact in f32: 1 s · 0.1f32 = 100000001.49 ns → std rounds to ns.
        let expect = std::time::Duration::from_secs(1).mul_f32(0.1_f32);
        assert_eq!(fm.sleep(d, d, d, 0.1), SimDuration::from_nanos(1_000_000_000 + expect.as_nanos() as u64));
    }
}
