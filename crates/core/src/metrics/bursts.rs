//! What a server sees of a herd: attempts per time bin, how peaked they are, how fast
//! jitter spreads the clients apart, and how long until they are all back.

use std::collections::VecDeque;

use crate::engine::time::{SimDuration, SimTime};

/// Attempts per time bin, from time 0 to the horizon.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Bins {
    #[serde(with = "crate::metrics::wire::nanos")]
    pub width: SimDuration,
    pub attempts: Vec<u32>,
    pub refused: Vec<u32>,
}

impl Bins {
    pub fn new(width: SimDuration, horizon: SimDuration) -> Self {
        let n = (horizon.as_nanos() / width.as_nanos().max(1)) as usize + 1;
        Bins { width, attempts: vec![0; n], refused: vec![0; n] }
    }

    fn index(&self, t: SimTime) -> usize {
        ((t.as_nanos() / self.width.as_nanos().max(1)) as usize).min(self.attempts.len() - 1)
    }

    pub fn add(&mut self, t: SimTime, refused: bool) {
        let i = self.index(t);
        self.attempts[i] += 1;
        if refused {
            self.refused[i] += 1;
        }
    }

    /// Peak rate (attempts/s), peak-to-mean ratio and coefficient of variation of the
    /// bins between the first and the last with an attempt: the active period, so that
    /// quiet time before a restart or after everyone is back does not dilute the mean.
    pub fn burst_stats(&self) -> Option<BurstStats> {
        self.burst_stats_where(|_, _| true)
    }

    /// As `burst_stats`, over the active bins `[start, end)` that `include` accepts: e.g.
    /// only while the server is up, where the load it must absorb is.
    pub fn burst_stats_where(&self, include: impl Fn(SimTime, SimTime) -> bool) -> Option<BurstStats> {
        let w = self.width.as_nanos();
        let kept: Vec<u32> = (0..self.attempts.len())
            .filter(|&i| include(SimTime(i as u64 * w), SimTime((i as u64 + 1) * w)))
            .map(|i| self.attempts[i])
            .collect();
        let first = kept.iter().position(|&c| c > 0)?;
        let last = kept.iter().rposition(|&c| c > 0)?;
        let active = &kept[first..=last];
        let n = active.len() as f64;
        let mean = active.iter().map(|&c| f64::from(c)).sum::<f64>() / n;
        let peak = f64::from(*active.iter().max()?);
        let var = active.iter().map(|&c| (f64::from(c) - mean).powi(2)).sum::<f64>() / n;
        Some(BurstStats {
            peak_rate: peak / self.width.as_secs_f64(),
            peak_to_mean: peak / mean,
            cv: var.sqrt() / mean,
        })
    }
}

/// The first burst after the server is back (`first_burst_peak`): the most attempts
/// reaching the server within any one second of its first up period, from its first
/// return from being down until it next goes down (or the horizon). A count in a 1 s
/// window, so a rate in attempts/s. Counted from the attempt times, not from the bins:
/// a sliding window finds the herd wherever it lands, where bins may cut it in two, and
/// the herd need not land in the first second (clients whose timers are in step come
/// back together when the next one fires, seconds later).
#[derive(Clone, Debug, PartialEq)]
pub struct FirstBurst {
    /// The up period `[from, until)`.
    from: SimTime,
    until: SimTime,
    /// The attempts of the last second, in time order.
    recent: VecDeque<SimTime>,
    peak: usize,
}

impl FirstBurst {
    pub const WINDOW: SimDuration = SimDuration::from_secs(1);

    /// The burst of the up period `[back, until)` after the server's first return (see
    /// `ServerSchedule::first_up`); `None` without a return, or when the return is less
    /// than a second before the horizon, where no whole second of it is seen.
    pub fn after(up: Option<(SimTime, SimTime)>, horizon: SimDuration) -> Option<FirstBurst> {
        let (from, until) = up?;
        let seen = from.saturating_add(Self::WINDOW).as_nanos() <= horizon.as_nanos();
        seen.then(|| FirstBurst { from, until, recent: VecDeque::new(), peak: 0 })
    }

    /// An attempt reaching the server at `t`; attempts come in time order.
    pub fn add(&mut self, t: SimTime) {
        if t < self.from || t >= self.until {
            return;
        }
        while self.recent.front().is_some_and(|&s| t.saturating_since(s) >= Self::WINDOW) {
            self.recent.pop_front();
        }
        self.recent.push_back(t);
        self.peak = self.peak.max(self.recent.len());
    }

    /// The most attempts in one second, as attempts/s.
    pub fn peak(&self) -> f64 {
        self.peak as f64 / Self::WINDOW.as_secs_f64()
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BurstStats {
    pub peak_rate: f64,
    pub peak_to_mean: f64,
    pub cv: f64,
}

/// Running mean and variance (Welford), exact enough for a million observations and
/// independent of how many there will be.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Running {
    n: u64,
    mean: f64,
    m2: f64,
}

impl Running {
    pub fn add(&mut self, x: f64) {
        self.n += 1;
        let d = x - self.mean;
        self.mean += d / self.n as f64;
        self.m2 += d * (x - self.mean);
    }

    pub fn count(&self) -> u64 {
        self.n
    }

    /// Population standard deviation; `None` without observations.
    pub fn sd(&self) -> Option<f64> {
        (self.n > 0).then(|| (self.m2 / self.n as f64).sqrt())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_single_spike_has_a_high_peak_to_mean_and_a_flat_rate_has_one() {
        let mut spike = Bins::new(SimDuration::from_secs(1), SimDuration::from_secs(10));
        for _ in 0..100 {
            spike.add(SimTime(2_000_000_000), false);
        }
        spike.add(SimTime(5_500_000_000), true);
        // Active bins 2..=5: counts 100, 0, 0, 1 → mean 25.25, peak 100.
        let s = spike.burst_stats().unwrap();
        assert!((s.peak_to_mean - 100.0 / 25.25).abs() < 1e-12);
        assert_eq!(s.peak_rate, 100.0);
        assert_eq!(spike.refused[5], 1);
        let mut flat = Bins::new(SimDuration::from_secs(1), SimDuration::from_secs(10));
        for t in 0..10 {
            flat.add(SimTime(t * 1_000_000_000), false);
        }
        let f = flat.burst_stats().unwrap();
        assert_eq!((f.peak_to_mean, f.cv), (1.0, 0.0));
        assert!(Bins::new(SimDuration::from_secs(1), SimDuration::from_secs(1)).burst_stats().is_none());
    }

    #[test]
    fn the_first_burst_is_the_busiest_second_of_the_first_up_period() {
        let ms = |m: u64| SimTime(m * 1_000_000);
        let horizon = SimDuration::from_secs(60);
        // Up again at 20 s, down again at 40 s.
        let mut b = FirstBurst::after(Some((ms(20_000), ms(40_000))), horizon).unwrap();
        let attempts = [
            19_000, 19_100, 19_200, 19_300, 19_400, // while down: not counted
            20_000, 20_500, // two in the first second
            25_000, 25_300, 25_999, 26_000, // 25.000–25.999: three; 26.000 is a second after 25.000
            26_100, // 25.300, 25.999, 26.000, 26.100: four within one second
            39_999, 40_000, 40_000, 40_000, 40_000, 40_000, // down again from 40 s: not counted
        ];
        for t in attempts {
            b.add(ms(t));
        }
        assert_eq!(b.peak(), 4.0);
        // No return, or one less than a second before the horizon: no value.
        assert_eq!(FirstBurst::after(None, horizon), None);
        assert!(FirstBurst::after(Some((ms(59_000), SimTime::MAX)), horizon).is_some());
        assert_eq!(FirstBurst::after(Some((ms(59_001), SimTime::MAX)), horizon), None);
    }

    #[test]
    fn running_sd_matches_the_two_pass_formula() {
        let xs = [1.0, 2.0, 4.0, 8.0];
        let mut r = Running::default();
        xs.iter().for_each(|&x| r.add(x));
        let mean = xs.iter().sum::<f64>() / 4.0;
        let sd = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 4.0).sqrt();
        assert!((r.sd().unwrap() - sd).abs() < 1e-12);
        assert_eq!(Running::default().sd(), None);
    }
}
