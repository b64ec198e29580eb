//! How fast the workers work over time: at full speed, except inside a brownout with a
//! `slowdown`, where a worker does its work at `1 / slowdown` of its speed. A slowdown is
//! a property of the window, not of the requests that arrive in it: a request served
//! after the window ends runs at full speed whenever it arrived, and one whose service
//! spans an edge runs at each side's speed. So the work a worker does over `[t0, t1)` is
//! the integral of its speed there, and a request's end is where that integral reaches
//! its work, found window by window.

use crate::engine::time::{SimDuration, SimTime};

use super::Brownout;

/// The speed windows: `[from, to)` in nanoseconds with the time one unit of work takes
/// there, in time order and apart (as the server's brownouts are checked to be).
#[derive(Clone, Debug, Default)]
pub struct Speed {
    slow: Vec<(u64, u64, f64)>,
}

impl Speed {
    /// The brownouts that slow the workers (a slowdown of 1 changes nothing).
    pub fn new(brownouts: &[Brownout]) -> Speed {
        let slow = brownouts
            .iter()
            .filter(|b| b.slowdown != 1.0 && b.duration > SimDuration::ZERO)
            .map(|b| (b.at.as_nanos(), b.end().as_nanos(), b.slowdown))
            .collect();
        Speed { slow }
    }

    /// When a worker that starts `work` (measured at full speed) at `start` is done,
    /// rounded to the nearest nanosecond once, at the end.
    pub fn finish(&self, start: SimTime, work: SimDuration) -> SimTime {
        let mut t = start.as_nanos();
        // Remaining work in nanoseconds at full speed; whole nanoseconds are exact in
        // f64 up to 2^53 (104 days), and each window takes off one exact product.
        let mut left = work.as_nanos() as f64;
        let done_at = |t: u64, elapsed: f64| SimTime(t).saturating_add(SimDuration(elapsed.round() as u64));
        for &(from, to, slowdown) in &self.slow[self.slow.partition_point(|&(_, to, _)| to <= t)..] {
            if t < from {
                let gap = (from - t) as f64;
                if left <= gap {
                    return done_at(t, left);
                }
                left -= gap;
                t = from;
            }
            let span = (to - t) as f64;
            let needs = left * slowdown;
            if needs <= span {
                return done_at(t, needs);
            }
            left -= span / slowdown;
            t = to;
        }
        done_at(t, left)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(secs: f64) -> SimTime {
        SimTime((secs * 1e9).round() as u64)
    }

    fn work(secs: f64) -> SimDuration {
        SimDuration((secs * 1e9).round() as u64)
    }

    /// One brownout from 10 s to 20 s that slows the workers fourfold.
    fn speed() -> Speed {
        Speed::new(&[Brownout {
            at: SimDuration::from_secs(10),
            duration: SimDuration::from_secs(10),
            fail_fraction: 0.0,
            slowdown: 4.0,
        }])
    }

    #[test]
    fn service_is_the_integral_of_the_speed_over_the_brownout_piecewise() {
        // The work done over [t0, t1) is ∫ speed(t) dt with speed 1/slowdown inside the
        // window and 1 outside; the end is where it reaches the request's work.
        let v = speed();
        // Wholly before the window: full speed.
        assert_eq!(v.finish(s(0.0), work(1.0)), s(1.0));
        // Ends exactly at the window's start.
        assert_eq!(v.finish(s(9.0), work(1.0)), s(10.0));
        // Starts before, ends inside: 1 s before, the second second of work takes 4 s.
        assert_eq!(v.finish(s(9.0), work(2.0)), s(14.0));
        // Wholly inside: 1 s of work takes 4 s.
        assert_eq!(v.finish(s(12.0), work(1.0)), s(16.0));
        // Starts inside, ends after: 2 s in the window do 0.5 s of work, the other 0.5 s
        // at full speed.
        assert_eq!(v.finish(s(18.0), work(1.0)), s(20.5));
        // Spans the whole window: 5 s before, 10 s in it do 2.5 s, 2.5 s after.
        assert_eq!(v.finish(s(5.0), work(10.0)), s(22.5));
        // After the window: full speed, however long the request waited for a worker.
        assert_eq!(v.finish(s(20.0), work(1.0)), s(21.0));
        assert_eq!(v.finish(s(950.0), work(10.0)), s(960.0));
    }

    #[test]
    fn several_windows_each_slow_their_own_part_and_no_window_is_full_speed() {
        let b = |at: u64, len: u64, slowdown: f64| Brownout {
            at: SimDuration::from_secs(at),
            duration: SimDuration::from_secs(len),
            fail_fraction: 0.0,
            slowdown,
        };
        let v = Speed::new(&[b(1, 2, 2.0), b(4, 1, 1.0), b(5, 1, 10.0)]);
        // 0–1 s: 1 s of work; 1–3 s at half speed: 1 s; 3–5 s (a slowdown of 1 is full
        // speed): 2 s; 5–6 s at a tenth: 0.1 s; then 0.9 s at full speed.
        assert_eq!(v.finish(s(0.0), work(5.0)), s(6.9));
        assert_eq!(Speed::new(&[]).finish(s(3.0), work(2.0)), s(5.0));
        // Zero work ends where it starts, in a window or not.
        assert_eq!(v.finish(s(1.5), SimDuration::ZERO), s(1.5));
    }
}
