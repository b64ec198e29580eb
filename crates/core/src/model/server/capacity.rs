//! Accept capacity: a token bucket with a FIFO queue in front of it, kept as two numbers.
//!
//! # The arithmetic
//!
//! This is the GCRA "virtual scheduling" form of a token bucket (ITU-T I.371), with
//! queueing instead of policing. One number, the theoretical arrival time `tat`, holds the
//! whole state: the bucket is full when `tat ≤ now`, and otherwise holds
//! `burst − (tat − now) / interval` tokens. A handshake arriving at `t` gets its token at
//!
//! ```text
//! start = max(t, tat − (burst − 1)·interval)      then   tat = max(tat, t) + interval
//! ```
//!
//! so the first `burst` arrivals of a quiet server start at once, and the rest start one
//! interval apart, in arrival order. The queue is the handshakes whose `start` is still
//! ahead; since those starts are consecutive multiples of the interval ending at
//! `tat − (burst − 1)·interval − interval`, their number at `t` is
//! `ceil(D / interval) − 1` with `D = tat − (burst − 1)·interval − t`, when D > 0.
//!
//! # Units and rounding
//!
//! `accept_rate` is resolved once to `R = round(accept_rate · 10⁶)`, an integer number of
//! handshakes per 10⁶ s (so 1000/s is R = 10⁹, and 1/3 per second becomes 0.333333/s).
//! Internally time is counted in units of 1/R ns (a `u128`): a time of `t` ns is `t·R`
//! units and the token interval is exactly 10¹⁵ units, whatever the rate. Everything
//! is exact integer arithmetic; the only rounding is the last step, a start time in units
//! rounded **up** to the nanosecond (a token is never used before it exists). So the
//! k-th token after the bucket last emptied is available at exactly `ceil(k·10¹⁵ / R)` ns:
//! no drift accumulates, and over any span of time the number of tokens is the rate
//! times the span, to within one. Saturates at `SimTime::MAX`.

use crate::engine::time::{SimDuration, SimTime};

/// Units (of 1/R ns) between two tokens: 10⁶ (R is per 10⁶ s) × 10⁹ (ns per s).
const INTERVAL: u128 = 1_000_000_000_000_000;

/// Why a handshake could not be admitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueFull;

/// A handshake admitted: when it gets its token, and how many handshakes wait for a
/// token right after its arrival, itself included (0 if it started at once).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Admitted {
    pub start: SimTime,
    pub queue_len: u64,
}

/// Token bucket plus bounded FIFO queue; see the module docs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AcceptQueue {
    /// R: handshakes per 10⁶ s, at least 1.
    rate_micro: u128,
    /// (burst − 1)·INTERVAL: how far `tat` may run ahead of now before a handshake waits.
    tolerance: u128,
    /// Handshakes that may wait.
    capacity: u64,
    /// Theoretical arrival time, in units; 0 = full bucket, empty queue.
    tat: u128,
}

impl AcceptQueue {
    /// Assumes a validated rate and burst ≥ 1; out-of-range values are clamped, not a panic.
    pub fn new(accept_rate: f64, burst: u32, accept_queue: u32) -> AcceptQueue {
        // `as` saturates and maps NaN to 0; the clamp keeps the division defined.
        let rate_micro = ((accept_rate * 1e6).round() as u128).clamp(1, 1_000_000_000_000_000);
        AcceptQueue {
            rate_micro,
            tolerance: u128::from(burst.max(1) - 1) * INTERVAL,
            capacity: u64::from(accept_queue),
            tat: 0,
        }
    }

    /// The token interval, rounded to the nearest nanosecond (for display; the
    /// arithmetic uses the exact value).
    pub fn interval(&self) -> SimDuration {
        SimDuration(((INTERVAL + self.rate_micro / 2) / self.rate_micro) as u64)
    }

    /// Empties the queue and fills the bucket (the server went down).
    pub fn reset(&mut self) {
        self.tat = 0;
    }

    fn units(&self, t: SimTime) -> u128 {
        u128::from(t.0) * self.rate_micro
    }

    /// The earliest token a handshake arriving at `t` could get, in units, and how many
    /// handshakes are waiting at `t`.
    fn look(&self, t: SimTime) -> (u128, u64) {
        let now = self.units(t);
        let next = self.tat.saturating_sub(self.tolerance);
        if next <= now {
            return (now, 0);
        }
        let waiting = (next - now).div_ceil(INTERVAL) - 1;
        (next, u64::try_from(waiting).unwrap_or(u64::MAX))
    }

    /// Handshakes waiting for a token at `t` (not counting any arriving at `t` after this).
    pub fn waiting(&self, t: SimTime) -> u64 {
        self.look(t).1
    }

    /// A handshake arrives at `t` (arrivals in non-decreasing `t`): it takes a token at
    /// once, or joins the queue, or finds the queue full and leaves no trace.
    pub fn admit(&mut self, t: SimTime) -> Result<Admitted, QueueFull> {
        let now = self.units(t);
        let (start, waiting) = self.look(t);
        let queue_len = if start > now {
            if waiting >= self.capacity {
                return Err(QueueFull);
            }
            waiting + 1
        } else {
            0
        };
        self.tat = self.tat.max(now) + INTERVAL;
        // Rounded up: a token is never used before it exists.
        let start_ns = start.div_ceil(self.rate_micro);
        Ok(Admitted { start: SimTime(u64::try_from(start_ns).unwrap_or(u64::MAX)), queue_len })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn t(ns: u64) -> SimTime {
        SimTime(ns)
    }

    #[test]
    fn first_burst_starts_at_once_then_one_token_per_interval() {
        let mut q = AcceptQueue::new(1000.0, 10, 1000);
        assert_eq!(q.interval(), SimDuration::from_millis(1));
        for _ in 0..10 {
            assert_eq!(q.admit(t(0)), Ok(Admitted { start: t(0), queue_len: 0 }));
        }
        for k in 1..=50 {
            assert_eq!(q.admit(t(0)), Ok(Admitted { start: t(k * MS), queue_len: k }));
        }
        assert_eq!(q.waiting(t(0)), 50);
        // At 10.5 ms the 10 handshakes due at 1..=10 ms have started.
        assert_eq!(q.waiting(t(10 * MS + MS / 2)), 40);
        // At exactly 11 ms the one due then has its token: it no longer waits.
        assert_eq!(q.waiting(t(11 * MS)), 39);
        assert_eq!(q.waiting(t(50 * MS)), 0);
    }

    #[test]
    fn the_bucket_refills_at_the_rate_up_to_burst() {
        let mut q = AcceptQueue::new(1000.0, 4, 0);
        for _ in 0..4 {
            assert_eq!(q.admit(t(0)).unwrap().start, t(0));
        }
        assert_eq!(q.admit(t(0)), Err(QueueFull)); // no queue: policing
        // 2.5 ms later two tokens are back.
        let later = t(2 * MS + MS / 2);
        assert_eq!(q.admit(later).unwrap().start, later);
        assert_eq!(q.admit(later).unwrap().start, later);
        assert_eq!(q.admit(later), Err(QueueFull));
        // After a long quiet spell the bucket is full again, and no fuller.
        let quiet = t(1000 * MS);
        for _ in 0..4 {
            assert_eq!(q.admit(quiet).unwrap().start, quiet);
        }
        assert_eq!(q.admit(quiet), Err(QueueFull));
    }

    #[test]
    fn a_full_queue_refuses_without_changing_the_state() {
        let mut q = AcceptQueue::new(1000.0, 1, 2);
        q.admit(t(0)).unwrap();
        assert_eq!(q.admit(t(0)).unwrap().start, t(MS));
        assert_eq!(q.admit(t(0)).unwrap().start, t(2 * MS));
        let before = q.clone();
        assert_eq!(q.admit(t(0)), Err(QueueFull));
        assert_eq!(q, before);
        // Once the first queued one has its token, there is room for one more.
        assert_eq!(q.admit(t(MS)).unwrap().start, t(3 * MS));
    }

    #[test]
    fn a_rate_that_is_not_whole_nanoseconds_does_not_drift() {
        // 3/s: tokens at ceil(k · 10⁹ / 3) ns.
        let mut q = AcceptQueue::new(3.0, 1, u32::MAX);
        let starts: Vec<u64> = (0..4).map(|_| q.admit(t(0)).unwrap().start.0).collect();
        assert_eq!(starts, vec![0, 333_333_334, 666_666_667, 1_000_000_000]);
        // After three million more, exactly a million seconds on.
        let mut last = 0;
        for _ in 0..3_000_000 {
            last = q.admit(t(0)).unwrap().start.0;
        }
        assert_eq!(last, 1_000_001 * 1_000_000_000);
    }

    #[test]
    fn reset_empties_the_queue_and_fills_the_bucket() {
        let mut q = AcceptQueue::new(1000.0, 2, 10);
        for _ in 0..6 {
            q.admit(t(0)).unwrap();
        }
        assert_eq!(q.waiting(t(0)), 4);
        q.reset();
        assert_eq!(q.waiting(t(MS)), 0);
        assert_eq!(q.admit(t(MS)).unwrap().start, t(MS));
        assert_eq!(q.admit(t(MS)).unwrap().start, t(MS));
        assert_eq!(q.admit(t(MS)).unwrap().start, t(2 * MS));
    }

    #[test]
    fn extremes_saturate_instead_of_overflowing() {
        let mut slow = AcceptQueue::new(1e-6, u32::MAX, u32::MAX);
        let mut fast = AcceptQueue::new(1e9, 1, u32::MAX);
        let mut nan = AcceptQueue::new(f64::NAN, 0, 0);
        for now in [0, 1, u64::MAX / 2, u64::MAX] {
            for q in [&mut slow, &mut fast, &mut nan] {
                for _ in 0..3 {
                    if let Ok(a) = q.admit(t(now)) {
                        assert!(a.start >= t(now));
                    }
                }
            }
        }
        assert_eq!(fast.interval(), SimDuration(1));
        // One token per 10⁶ s, a long queue: far starts saturate at the end of time.
        let mut q = AcceptQueue::new(1e-6, 1, u32::MAX);
        q.admit(t(u64::MAX - 1)).unwrap();
        assert_eq!(q.admit(t(u64::MAX - 1)).unwrap().start, SimTime::MAX);
    }
}
