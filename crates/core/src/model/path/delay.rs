//! Extra one-way delay, sampled by inversion: every packet turns exactly one uniform
//! number into a delay. One draw per packet keeps the delay stream aligned packet by
//! packet across variants, and inversion couples variants monotonically: with the same
//! uniform, a larger `high`, `median` or `scale` never gives a packet a shorter delay.

use super::config::DelayConfig;
use crate::engine::time::SimDuration;

/// Maps 64 random bits to the open interval (0, 1), symmetric about 1/2, so that the
/// inverse CDFs below never see 0 or 1 (where they are infinite). 52 bits, not 53:
/// (k + 1/2)·2⁻⁵² is exact for every k, while with 53 bits the top value rounds to 1.
pub(crate) fn open_unit(bits: u64) -> f64 {
    const SCALE: f64 = 1.0 / (1u64 << 52) as f64;
    ((bits >> 12) as f64 + 0.5) * SCALE
}

/// Nanoseconds from a float: negative and NaN give 0, values past `u64::MAX` saturate
/// (which is what `as` does; spelled out because heavy-tailed draws do reach it).
fn nanos(x: f64) -> SimDuration {
    SimDuration(x.round() as u64)
}

impl DelayConfig {
    /// The delay for the uniform number `u` in (0, 1). For every family but the folded
    /// normal this is the quantile function; the folded normal is |mean + sd·Φ⁻¹(u)|.
    pub fn from_uniform(&self, u: f64) -> SimDuration {
        match *self {
            DelayConfig::Constant { value } => value,
            DelayConfig::Uniform { low, high } => {
                let span = high.0.saturating_sub(low.0) as f64;
                SimDuration(low.0.saturating_add(nanos(u * span).0))
            }
            DelayConfig::Normal { mean, sd } => nanos((mean.0 as f64 + sd.0 as f64 * probit(u)).abs()),
            DelayConfig::LogNormal { median, sigma } => nanos(median.0 as f64 * (sigma * probit(u)).exp()),
            DelayConfig::Pareto { scale, shape } => {
                // Inverse of F(x) = 1 − (scale/x)^shape. 1 − u keeps the tail on the upper
                // end, so a larger u is a longer delay as in the other families.
                nanos(scale.0 as f64 * (1.0 - u).powf(-1.0 / shape))
            }
        }
    }
}

/// Φ⁻¹, the standard normal quantile: M. J. Wichura, "Algorithm AS 241: The Percentage
/// Points of the Normal Distribution", Applied Statistics 37(3), 1988, pp. 477–484
/// (PPND16, relative accuracy about 1e-16). The coefficients were checked against the
/// paper's hash sums (sums of mantissas): 55.8831928806149014439 (a, b),
/// 49.33206503301610289036 (c, d), 47.52583317549289671629 (e, f).
/// Hand-rolled because rand_distr samples by rejection (a variable number of draws per
/// value) and offers no quantile function.
// The coefficients keep the paper's digits so that they can be checked against it; the
// compiler rounds them to the nearest f64 either way.
#[allow(clippy::excessive_precision)]
pub(crate) fn probit(p: f64) -> f64 {
    const A: [f64; 8] = [
        3.387_132_872_796_366_608,
        1.331_416_678_917_843_774_5e2,
        1.971_590_950_306_551_442_7e3,
        1.373_169_376_550_946_112_5e4,
        4.592_195_393_154_987_145_7e4,
        6.726_577_092_700_870_085_3e4,
        3.343_057_558_358_812_810_5e4,
        2.509_080_928_730_122_672_7e3,
    ];
    const B: [f64; 8] = [
        1.0,
        4.231_333_070_160_091_125_2e1,
        6.871_870_074_920_579_083e2,
        5.394_196_021_424_751_107_7e3,
        2.121_379_430_158_659_586_7e4,
        3.930_789_580_009_271_061e4,
        2.872_908_573_572_194_267_4e4,
        5.226_495_278_852_854_561e3,
    ];
    const C: [f64; 8] = [
        1.423_437_110_749_683_577_34,
        4.630_337_846_156_545_295_9,
        5.769_497_221_460_691_405_5,
        3.647_848_324_763_204_605_04,
        1.270_458_252_452_368_382_58,
        2.417_807_251_774_506_117_7e-1,
        2.272_384_498_926_918_458_33e-2,
        7.745_450_142_783_414_076_4e-4,
    ];
    const D: [f64; 8] = [
        1.0,
        2.053_191_626_637_758_821_87,
        1.676_384_830_183_803_849_4,
        6.897_673_349_851_000_045_5e-1,
        1.481_039_764_274_800_745_9e-1,
        1.519_866_656_361_645_719_66e-2,
        5.475_938_084_995_344_946e-4,
        1.050_750_071_644_416_843_24e-9,
    ];
    const E: [f64; 8] = [
        6.657_904_643_501_103_777_2,
        5.463_784_911_164_114_369_9,
        1.784_826_539_917_291_335_8,
        2.965_605_718_285_048_912_3e-1,
        2.653_218_952_657_612_309_3e-2,
        1.242_660_947_388_078_438_6e-3,
        2.711_555_568_743_487_578_15e-5,
        2.010_334_399_292_288_132_65e-7,
    ];
    const F: [f64; 8] = [
        1.0,
        5.998_322_065_558_879_376_9e-1,
        1.369_298_809_227_358_053_1e-1,
        1.487_536_129_085_061_485_25e-2,
        7.868_691_311_456_132_591e-4,
        1.846_318_317_510_054_681_8e-5,
        1.421_511_758_316_445_888_7e-7,
        2.044_263_103_389_939_785_64e-15,
    ];
    fn ratio(num: &[f64; 8], den: &[f64; 8], r: f64) -> f64 {
        let horner = |c: &[f64; 8]| c.iter().rev().fold(0.0, |acc, &k| acc * r + k);
        horner(num) / horner(den)
    }

    let q = p - 0.5;
    if q.abs() <= 0.425 {
        return q * ratio(&A, &B, 0.180_625 - q * q);
    }
    let tail = if q < 0.0 { p } else { 1.0 - p };
    if tail <= 0.0 {
        return if q < 0.0 { f64::NEG_INFINITY } else { f64::INFINITY };
    }
    let r = (-tail.ln()).sqrt();
    let z = if r <= 5.0 { ratio(&C, &D, r - 1.6) } else { ratio(&E, &F, r - 5.0) };
    if q < 0.0 { -z } else { z }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::{Purpose, Seeds, SimRng};
    use rand::Rng;

    /// Samples per statistical test. With fixed seeds every test is deterministic; each
    /// tolerance is stated next to the standard error it allows for.
    const N: usize = 200_000;

    fn rng(seed: u64) -> SimRng {
        Seeds::new(seed).stream(0, 0, Purpose::DelayForward)
    }

    fn samples(d: &DelayConfig, seed: u64) -> Vec<f64> {
        let mut r = rng(seed);
        (0..N).map(|_| d.from_uniform(open_unit(r.next_u64())).as_secs_f64() * 1e3).collect()
    }

    fn mean(xs: &[f64]) -> f64 {
        xs.iter().sum::<f64>() / xs.len() as f64
    }

    fn sd(xs: &[f64]) -> f64 {
        let m = mean(xs);
        (xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (xs.len() - 1) as f64).sqrt()
    }

    fn median(xs: &[f64]) -> f64 {
        let mut v = xs.to_vec();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    }

    fn ms(n: u64) -> SimDuration {
        SimDuration::from_millis(n)
    }

    fn close(got: f64, want: f64, tol: f64, what: &str) {
        assert!((got - want).abs() <= tol, "{what}: got {got}, want {want} ± {tol}");
    }

    #[test]
    fn open_unit_never_reaches_zero_or_one() {
        assert!(open_unit(0) > 0.0);
        assert!(open_unit(u64::MAX) < 1.0);
        assert_eq!(open_unit(u64::MAX), 1.0 - 0.5 / (1u64 << 52) as f64);
        assert_eq!(open_unit(0), 0.5 / (1u64 << 52) as f64);
    }

    #[test]
    fn probit_matches_high_precision_quantiles_in_every_branch() {
        // Reference values: root of Φ(x) = p with mpmath at 60 digits.
        for (p, z) in [
            (0.5, 0.0),
            (0.3, -0.524_400_512_708_040_8),   // central branch
            (0.975, 1.959_963_984_540_054_2),  // central branch, upper half
            (0.001, -3.090_232_306_167_813_5), // r ≤ 5 branch
            (1e-10, -6.361_340_902_404_056),   // r > 5 branch
            (1e-12, -7.034_483_825_301_132),   // r > 5 branch
            (1e-20, -9.262_340_089_798_408),   // deep tail
        ] {
            let got = probit(p);
            assert!((got - z).abs() <= 1e-15 * z.abs().max(1.0), "Φ⁻¹({p}) = {got}, want {z}");
            if p >= 1e-3 {
                assert!((probit(1.0 - p) + got).abs() <= 1e-14, "symmetry at {p}");
            }
        }
    }

    #[test]
    fn constant_gives_its_value_for_every_draw() {
        let d = DelayConfig::Constant { value: ms(7) };
        for u in [1e-12, 0.5, 1.0 - 1e-12] {
            assert_eq!(d.from_uniform(u), ms(7));
        }
    }

    #[test]
    fn uniform_stays_in_bounds_with_the_right_mean_and_sd() {
        let xs = samples(&DelayConfig::Uniform { low: ms(5), high: ms(25) }, 1);
        assert!(xs.iter().all(|&x| (5.0..=25.0).contains(&x)));
        // SE of the mean = 20/√12/√N ≈ 0.013 ms: tolerance ≈ 8 SE.
        close(mean(&xs), 15.0, 0.1, "mean");
        close(sd(&xs), 20.0 / 12f64.sqrt(), 0.05, "sd");
        // Both ends are reached, not only approached.
        let (lo, hi) = xs.iter().fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
        close(lo, 5.0, 0.01, "min");
        close(hi, 25.0, 0.01, "max");
    }

    #[test]
    fn normal_has_the_right_mean_and_sd_when_folding_is_negligible() {
        // N(10 ms, 2 ms) folds with probability Φ(−5) ≈ 3e-7: the hop delay of the
        // optimistic-concurrency workload.
        let xs = samples(&DelayConfig::Normal { mean: ms(10), sd: ms(2) }, 2);
        assert!(xs.iter().all(|&x| x >= 0.0));
        // SE of the mean = 2/√N ≈ 0.0045 ms: tolerance ≈ 7 SE.
        close(mean(&xs), 10.0, 0.03, "mean");
        close(sd(&xs), 2.0, 0.02, "sd");
    }

    #[test]
    fn normal_is_folded_not_truncated() {
        // |N(0, σ)| has mean σ·√(2/π); truncation at 0 would put half the mass at 0.
        let xs = samples(&DelayConfig::Normal { mean: ms(0), sd: ms(2) }, 3);
        assert!(xs.iter().all(|&x| x >= 0.0));
        // SE ≈ 2·√(1 − 2/π)/√N ≈ 0.0027 ms: tolerance ≈ 7 SE.
        close(mean(&xs), 2.0 * (2.0 / std::f64::consts::PI).sqrt(), 0.02, "mean");
        let zeros = xs.iter().filter(|&&x| x == 0.0).count();
        assert!(zeros < 10, "{zeros} exact zeros: looks truncated");
    }

    #[test]
    fn normal_with_zero_sd_is_exactly_the_mean() {
        let d = DelayConfig::Normal { mean: ms(10), sd: SimDuration::ZERO };
        assert!(samples(&d, 4).iter().all(|&x| x == 10.0));
    }

    #[test]
    fn lognormal_has_the_right_median_and_mean() {
        let xs = samples(&DelayConfig::LogNormal { median: ms(10), sigma: 0.5 }, 5);
        assert!(xs.iter().all(|&x| x > 0.0));
        // Sample median SE ≈ 1.2533·σ·m/√N ≈ 0.014 ms: tolerance ≈ 7 SE.
        close(median(&xs), 10.0, 0.1, "median");
        // Mean = m·e^{σ²/2}; sd = mean·√(e^{σ²} − 1) ≈ 6.0 ms, SE ≈ 0.013 ms.
        close(mean(&xs), 10.0 * (0.125f64).exp(), 0.1, "mean");
    }

    #[test]
    fn pareto_has_the_right_minimum_mean_and_tail() {
        let xs = samples(&DelayConfig::Pareto { scale: ms(1), shape: 3.0 }, 6);
        assert!(xs.iter().all(|&x| x >= 1.0));
        // Mean = scale·k/(k−1) = 1.5 ms; sd = √(k/((k−1)²(k−2))) ≈ 0.87 ms, SE ≈ 0.002 ms.
        close(mean(&xs), 1.5, 0.02, "mean");
        // P(X > 2·scale) = 2^−k = 0.125; SE = √(p(1−p)/N) ≈ 0.0007.
        let tail = xs.iter().filter(|&&x| x > 2.0).count() as f64 / N as f64;
        close(tail, 0.125, 0.005, "P(X > 2·scale)");
    }

    #[test]
    fn heavy_tails_saturate_instead_of_overflowing() {
        let d = DelayConfig::Pareto { scale: ms(1), shape: 0.01 };
        assert_eq!(d.from_uniform(open_unit(u64::MAX)), SimDuration::MAX);
        let d = DelayConfig::LogNormal { median: ms(1), sigma: 1e6 };
        assert_eq!(d.from_uniform(open_unit(u64::MAX)), SimDuration::MAX);
        assert_eq!(d.from_uniform(open_unit(0)), SimDuration::ZERO);
    }

    #[test]
    fn larger_parameters_never_shorten_a_given_draw() {
        // The common-random-numbers coupling that inversion buys.
        let mut r = rng(7);
        for _ in 0..10_000 {
            let u = open_unit(r.next_u64());
            let pairs = [
                (DelayConfig::Uniform { low: ms(0), high: ms(10) }, DelayConfig::Uniform { low: ms(0), high: ms(20) }),
                (
                    DelayConfig::LogNormal { median: ms(5), sigma: 0.5 },
                    DelayConfig::LogNormal { median: ms(8), sigma: 0.5 },
                ),
                (DelayConfig::Pareto { scale: ms(1), shape: 2.0 }, DelayConfig::Pareto { scale: ms(3), shape: 2.0 }),
            ];
            for (small, large) in pairs {
                assert!(small.from_uniform(u) <= large.from_uniform(u), "{small:?} vs {large:?} at {u}");
            }
        }
    }
}
