//! How many write calls the clients of `[occ]` make before the last one succeeds: the
//! count behind the model's event estimate, from the model's own mechanics rather than
//! from fitted curves.
//!
//! The row is a serial resource. A write wins only if no write won since its read
//! reached the server, and a write reaches the server two hops after its read (the
//! reply, then the write). So after a win the next one is the first write whose read
//! came after it: when reads arrive at rate λ, the wins are a renewal process whose gap
//! is the earliest of (read arrival + two hops) over the reads after a win, and the share
//! of reads that win is 1/(λ·gap) ([`Race`]). Under heavy contention the gap is a little
//! under two hops (the fastest of many), and the wins come no faster than that however
//! many clients retry: 10,000 clients with a 10 ms cap spend two minutes winning one by
//! one while each retries every four hops and a sleep.
//!
//! The clients that have not won move together through the schedule of a client that
//! always loses: its k-th read comes four hops and the k-th sleep after the one before
//! ([`sleeps`]). Round k, every pending client reads once; its reads are spread over
//! the spread of the k-th read's time (hops and jitter accumulate, up to a whole cycle,
//! when rounds run into each other); the round's wins are the share of its reads that
//! win at the rate of that spread, and at least one when the round is a burst apart from
//! the next (its first read wins outright). Measured against runs of 1 to 10,000
//! clients, every strategy, bases from 1 to 50 ms, caps from 10 ms to 2 s, and normal,
//! constant, uniform, log-normal and Pareto hops: 0.84 to 1.56 times the real calls.

use std::collections::BTreeMap;

use crate::engine::time::SimDuration;
use crate::model::occ::{Backoff, Strategy};
use crate::model::path::DelayConfig;
use crate::worlds::occ::OccConfig;

/// Write calls of one replication over `horizon`, about.
pub fn calls(cfg: &OccConfig, horizon: SimDuration) -> f64 {
    let hops = Hops::of(&cfg.hop);
    let sleeps = sleeps(&cfg.backoff());
    let mut race = Race::new(&hops);
    let end = horizon.as_secs_f64();
    let mut pending = f64::from(cfg.clients);
    // The first reads reach the server one hop after t = 0, spread as one hop is.
    let (mut t, mut spread) = (hops.mean, hops.var);
    let (mut k, mut calls) = (0usize, 0.0);
    while pending >= 0.5 && t <= end {
        let (sleep, sleep_var) = sleeps[k.min(sleeps.len() - 1)];
        let cycle = 4.0 * hops.mean + sleep;
        // A uniform spread of this variance; reads spread over a whole cycle or more are
        // a steady stream, the rounds running into each other.
        let width = (12.0 * spread).sqrt().min(cycle);
        let burst = width < cycle || cycle == 0.0;
        let wins = if pending <= 1.0 {
            pending
        } else {
            let share = if width > 0.0 { race.share(pending / width) } else { 0.0 };
            let wins = pending * share;
            (if burst { wins.max(1.0) } else { wins }).min(pending)
        };
        let grows = sleep_var + 4.0 * hops.var;
        // Past the sleeps' table the rounds differ only in who is left and, while they
        // are bursts, in their spread: take rounds together while neither changes by
        // more than a few percent.
        let mut rounds = 1.0;
        if k + 1 >= sleeps.len() {
            rounds = 0.02 * pending / wins;
            if burst && grows > 0.0 {
                rounds = rounds.min(0.04 * spread / grows);
            }
            if cycle > 0.0 {
                rounds = rounds.min(((end - t) / cycle).floor() + 1.0);
            }
            rounds = rounds.floor().max(1.0);
        }
        calls += rounds * pending - wins * rounds * (rounds - 1.0) / 2.0;
        pending -= rounds * wins;
        t += rounds * cycle;
        spread += rounds * grows;
        k = k.saturating_add(rounds as usize);
    }
    // A hop whose mean lies past the horizon (a heavy tail) stops the clock above at
    // once, yet every client whose own first hop is shorter reads and writes.
    calls.max(f64::from(cfg.clients) * hops.within(end))
}

/// The hop delay as quantiles, in seconds: enough to know its mean, its spread and how
/// fast the fastest of many two-hop trips is.
struct Hops {
    mean: f64,
    var: f64,
    /// The quantiles.
    one: Vec<f64>,
    /// Every sum of two quantiles, ascending: the delay from a read to its write.
    two: Vec<f64>,
}

impl Hops {
    const QUANTILES: usize = 32;

    fn of(hop: &DelayConfig) -> Hops {
        let m = Self::QUANTILES;
        let q: Vec<f64> = (0..m).map(|i| hop.from_uniform((i as f64 + 0.5) / m as f64).as_secs_f64()).collect();
        let mean = q.iter().sum::<f64>() / m as f64;
        let var = q.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / m as f64;
        let mut two: Vec<f64> = q.iter().flat_map(|a| q.iter().map(move |b| a + b)).collect();
        two.sort_by(f64::total_cmp);
        Hops { mean, var, one: q, two }
    }

    /// The share of hops no longer than `t` seconds.
    fn within(&self, t: f64) -> f64 {
        self.one.iter().filter(|&&x| x <= t).count() as f64 / self.one.len() as f64
    }
}

/// The race for the row: the share of reads that win when reads arrive at a rate, on a
/// grid of rates computed once each.
struct Race<'a> {
    hops: &'a Hops,
    /// ln(share) at the rate 10^(i / STEPS) per second.
    at: BTreeMap<i64, f64>,
}

impl<'a> Race<'a> {
    /// Grid points per decade of the rate: the share is smooth in log–log, and read
    /// between points it is within 1 % for normal, constant and Pareto hops.
    const STEPS: f64 = 4.0;

    fn new(hops: &'a Hops) -> Race<'a> {
        Race { hops, at: BTreeMap::new() }
    }

    /// The share of reads that win when reads arrive at `rate` per second.
    fn share(&mut self, rate: f64) -> f64 {
        if !rate.is_finite() {
            return 0.0;
        }
        if rate <= 0.0 {
            return 1.0;
        }
        let x = rate.log10() * Self::STEPS;
        let (i, f) = (x.floor(), x - x.floor());
        let (lo, hi) = (self.ln_share(i as i64), self.ln_share(i as i64 + 1));
        (lo * (1.0 - f) + hi * f).exp().min(1.0)
    }

    fn ln_share(&mut self, i: i64) -> f64 {
        let hops = self.hops;
        *self.at.entry(i).or_insert_with(|| {
            let rate = 10f64.powf(i as f64 / Self::STEPS);
            (1.0 / (rate * gap(&hops.two, rate))).min(1.0).ln()
        })
    }
}

/// The mean time from a win to the next: the earliest of (arrival + delay) over reads
/// arriving after it at `rate` (Poisson) with a delay drawn from `delays` (ascending,
/// equally likely). P(no write by x) = exp(−rate·∫₀ˣ F(v) dv), and with F a step
/// function the exponent is linear between steps, so each piece integrates exactly.
fn gap(delays: &[f64], rate: f64) -> f64 {
    let n = delays.len() as f64;
    let mut total = delays[0];
    // n·∫₀ˣ F at the start of the piece, summed from non-negative steps: written as
    // below·x − Σd it cancels to noise when the delays are equal, and noise times a
    // large rate is an infinite exponential.
    let (mut area, mut from) = (0.0, 1.0);
    for (i, &d) in delays.iter().enumerate() {
        let below = (i + 1) as f64;
        let to = match delays.get(i + 1) {
            Some(&next) => {
                area += below * (next - d);
                (-rate * area / n).exp()
            }
            None => 0.0,
        };
        total += (from - to) / (rate * below / n);
        if to == 0.0 {
            break;
        }
        from = to;
    }
    total
}

/// Sleeps past the 256th are taken as long as the 256th.
const KEPT: usize = 256;

/// The mean and variance of the sleep after each failure (from the first), in seconds
/// and seconds²; the last entry holds for every later failure.
fn sleeps(backoff: &Backoff) -> Vec<(f64, f64)> {
    // Of the nominal value e: no sleep, e itself, U(0, e), e/2 + U(0, e/2).
    let moments: fn(f64) -> (f64, f64) = match backoff.strategy {
        Strategy::Decorrelated => return decorrelated(backoff.base.as_secs_f64(), backoff.cap.as_secs_f64()),
        Strategy::None => |_| (0.0, 0.0),
        Strategy::Exponential => |e| (e, 0.0),
        Strategy::Full => |e| (e / 2.0, e * e / 12.0),
        Strategy::Equal => |e| (0.75 * e, e * e / 48.0),
    };
    let mut out = Vec::new();
    for n in 1..=KEPT as u32 {
        out.push(moments(backoff.expo(n).as_secs_f64()));
        if backoff.expo(n) == backoff.cap {
            break;
        }
    }
    out
}

/// Decorrelated jitter's sleeps: each is U(base, 3·previous) capped, so the sleeps of
/// one client are a random walk whose mean grows by half each time while most clients'
/// sleeps stay well below it, and at the cap they keep falling back. Following only the
/// mean (the next mean from the last) puts the stationary sleep near the cap and counts
/// a third too few calls; this carries the whole distribution instead, as quantiles: the
/// next sleep's distribution is a mixture of one uniform per quantile, its CDF piecewise
/// linear between their tops.
fn decorrelated(base: f64, cap: f64) -> Vec<(f64, f64)> {
    const ATOMS: usize = 64;
    let share = 1.0 / ATOMS as f64;
    let mut atoms = vec![base; ATOMS];
    let mut out = Vec::new();
    for _ in 0..KEPT {
        let mut tops: Vec<f64> = atoms.iter().map(|&s| (3.0 * s).max(base)).collect();
        tops.sort_by(f64::total_cmp);
        // F(x) = below + slope·(x − base): the atoms whose range ends below x, and the
        // density of those whose range goes on.
        let mut i = tops.iter().take_while(|&&t| t <= base).count();
        let mut below = share * i as f64;
        let mut slope: f64 = tops[i..].iter().map(|&t| share / (t - base)).sum();
        let next: Vec<f64> = (0..ATOMS)
            .map(|j| {
                let q = (j as f64 + 0.5) * share;
                while i < ATOMS && tops[i] < cap && below + slope * (tops[i] - base) < q {
                    below += share;
                    slope -= share / (tops[i] - base);
                    i += 1;
                }
                // At or below the mass at `base`; past the last range, the mass at `cap`.
                let x = if q <= below {
                    base
                } else if slope > 0.0 {
                    base + (q - below) / slope
                } else {
                    cap
                };
                x.clamp(base, cap)
            })
            .collect();
        let mean = next.iter().sum::<f64>() * share;
        let var = next.iter().map(|x| (x - mean).powi(2)).sum::<f64>() * share;
        // Settled (at the cap, or at zero with a zero base): every later sleep is alike.
        let settled = out
            .last()
            .is_some_and(|&(m, v): &(f64, f64)| (m - mean).abs() <= 1e-9 * mean && (v - var).abs() <= 1e-9 * var);
        out.push((mean, var));
        if settled {
            break;
        }
        atoms = next;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: f64) -> SimDuration {
        SimDuration::from_secs_f64(x / 1000.0).unwrap()
    }

    #[test]
    fn with_constant_hops_the_next_win_is_the_next_read_plus_two_hops() {
        // Reads at rate λ after a win: the first comes 1/λ later, its write two hops on.
        let two = Hops::of(&DelayConfig::Constant { value: ms(10.0) }).two;
        // Up to rates where a rounding error in the exponent would overflow it.
        for rate in [1.0, 50.0, 1e4, 1e12, 1e20] {
            let want = 1.0 / rate + 0.020;
            assert!((gap(&two, rate) - want).abs() < 1e-9 * want, "{rate}: {}", gap(&two, rate));
        }
    }

    #[test]
    fn under_heavy_contention_the_fastest_of_many_writes_wins_sooner_than_two_hops() {
        // |N(10 ms, 2 ms)| hops, reads at 200 per ms: 10,000 clients retrying every 50 ms.
        // Runs of that case win once every 13.1 to 13.3 ms (the last of 10,000 at 131–133 s).
        let hops = Hops::of(&DelayConfig::Normal { mean: ms(10.0), sd: ms(2.0) });
        let g = gap(&hops.two, 200_000.0);
        assert!((0.0125..0.0135).contains(&g), "{g}");
        // Few readers: nearly the wait for the next read plus two hops.
        assert!((gap(&hops.two, 1.0) - 1.020).abs() < 1e-3);
        let mut race = Race::new(&hops);
        assert!((race.share(200_000.0) - 1.0 / (200_000.0 * g)).abs() < 0.05 / (200_000.0 * g));
        assert_eq!((race.share(0.0), race.share(f64::INFINITY)), (1.0, 0.0));
    }

    #[test]
    fn decorrelated_sleeps_grow_by_half_at_first_and_settle_well_below_the_cap() {
        let s = decorrelated(0.005, 2.0);
        // U(5 ms, 15 ms), then a mixture with mean (5 + 3·10)/2 = 17.5 ms.
        assert!((s[0].0 - 0.010).abs() < 1e-6 && (s[0].1 - 0.01f64.powi(2) / 12.0).abs() < 1e-7, "{:?}", s[0]);
        assert!((s[1].0 - 0.0175).abs() < 2e-4, "{:?}", s[1]);
        // 2,048 clients' sleeps drawn at random settle near 0.46 of the cap (0.91 s); one
        // mean carried from step to step would settle near 0.79 of it.
        let last = s.last().unwrap().0;
        assert!((0.85..0.97).contains(&last), "{last}");
    }

    #[test]
    fn a_lone_client_makes_one_call_and_a_zero_delay_crowd_wins_one_a_round() {
        let occ = |clients, strategy, hop| OccConfig { clients, strategy, base: ms(5.0), cap: ms(2000.0), hop };
        let normal = DelayConfig::Normal { mean: ms(10.0), sd: ms(2.0) };
        assert_eq!(calls(&occ(1, Strategy::Full, normal.clone()), SimDuration::from_secs(60)), 1.0);
        // Everything at t = 0: each round the first write wins and the rest fail,
        // n + (n − 1) + … + 1 calls.
        let zero = DelayConfig::Constant { value: SimDuration::ZERO };
        assert_eq!(calls(&occ(100, Strategy::None, zero), SimDuration::from_secs(60)), 5050.0);
        // So with equal hops: the reads of a round arrive together and the first write
        // wins (runs of 1,000 clients make 500,500 calls).
        let equal = DelayConfig::Constant { value: ms(10.0) };
        let c = calls(&occ(1000, Strategy::None, equal), SimDuration::from_secs(3600));
        assert!((c / 500_500.0 - 1.0).abs() < 0.01, "{c}");
        // Nothing after the horizon: a horizon before the first read reaches the row.
        assert_eq!(calls(&occ(100, Strategy::Full, normal), ms(5.0)), 0.0);
        // Hops of median 10 ms whose mean is past any horizon: the clients whose first
        // hop is short (more than half) still call.
        let heavy = DelayConfig::LogNormal { median: ms(10.0), sigma: 50.0 };
        let c = calls(&occ(1000, Strategy::Full, heavy), SimDuration::from_secs(3600));
        assert!((500.0..=1000.0).contains(&c), "{c}");
    }
}
