//! The server's workers for `[calls]`: `concurrency` workers serve requests in arrival
//! order from one FIFO queue (at most `queue` waiting). Sans-IO and without events: in
//! FIFO order a request's start is fixed when it arrives (the earliest time a worker is
//! free, or now), so the world learns its whole fate at once. The server works on a
//! request whether or not its client still waits: a client that times out leaves the
//! work to be done, which is the wasted work that keeps a retry storm going.
//!
//! Starts are non-decreasing in arrival order (each request takes the earliest free
//! worker, and that time only grows), so the requests still waiting are a suffix of the
//! admitted ones and the queue is a deque of their start times.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use crate::engine::time::{SimDuration, SimTime};

use super::Speed;

#[derive(Clone, Debug)]
pub struct Workers {
    /// When each worker is next free.
    free: BinaryHeap<Reverse<SimTime>>,
    /// Start times of admitted requests, oldest first; those after `now` are waiting.
    waiting: VecDeque<SimTime>,
    limit: Option<u32>,
    /// How fast the workers work over time (brownouts slow them).
    speed: Speed,
}

/// What the workers do with one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admit {
    /// A worker serves it over `[start, end)`.
    Served { start: SimTime, end: SimTime },
    /// The queue is full: refused at once.
    Full,
}

impl Workers {
    pub fn new(concurrency: u32, limit: Option<u32>) -> Workers {
        Workers {
            free: (0..concurrency).map(|_| Reverse(SimTime::ZERO)).collect(),
            waiting: VecDeque::new(),
            limit,
            speed: Speed::default(),
        }
    }

    /// The same workers, slowed as `speed` says while they work.
    pub fn with_speed(self, speed: Speed) -> Workers {
        Workers { speed, ..self }
    }

    /// Requests waiting for a worker at `now` (not yet started).
    pub fn queued(&mut self, now: SimTime) -> usize {
        while self.waiting.front().is_some_and(|&s| s <= now) {
            self.waiting.pop_front();
        }
        self.waiting.len()
    }

    /// A request arrives at `now` (non-decreasing across calls) needing `work`: one
    /// worker's time at full speed, longer where the worker is slowed.
    pub fn on_request(&mut self, now: SimTime, work: SimDuration) -> Admit {
        let start = self.free.peek().map_or(now, |&Reverse(t)| t.max(now));
        if start > now && self.limit.is_some_and(|l| self.queued(now) >= l as usize) {
            return Admit::Full;
        }
        let end = self.speed.finish(start, work);
        self.free.pop();
        self.free.push(Reverse(end));
        if start > now {
            self.waiting.push_back(start);
        }
        Admit::Served { start, end }
    }

    /// The server restarted at `at`: the work in progress and the queue are gone, every
    /// worker is free from `back` (when it is up again).
    pub fn restart(&mut self, back: SimTime) {
        let n = self.free.len();
        self.free = (0..n).map(|_| Reverse(back)).collect();
        self.waiting.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> SimTime {
        SimTime(n * 1_000_000)
    }

    fn d(n: u64) -> SimDuration {
        SimDuration::from_millis(n)
    }

    #[test]
    fn two_workers_serve_in_arrival_order_and_the_third_request_waits() {
        // M/D/2 by hand: requests at 0, 0, 0, 5 ms of 10 ms each.
        let mut w = Workers::new(2, None);
        assert_eq!(w.on_request(ms(0), d(10)), Admit::Served { start: ms(0), end: ms(10) });
        assert_eq!(w.on_request(ms(0), d(10)), Admit::Served { start: ms(0), end: ms(10) });
        assert_eq!(w.on_request(ms(0), d(10)), Admit::Served { start: ms(10), end: ms(20) });
        assert_eq!(w.queued(ms(0)), 1);
        assert_eq!(w.on_request(ms(5), d(10)), Admit::Served { start: ms(10), end: ms(20) });
        assert_eq!(w.queued(ms(9)), 2);
        assert_eq!(w.queued(ms(10)), 0);
        // Latency grows with the queue: the fifth starts when the first two of the second
        // round end.
        assert_eq!(w.on_request(ms(10), d(10)), Admit::Served { start: ms(20), end: ms(30) });
    }

    #[test]
    fn a_full_queue_refuses_and_a_free_worker_never_counts_as_queueing() {
        let mut w = Workers::new(1, Some(1));
        assert!(matches!(w.on_request(ms(0), d(10)), Admit::Served { .. }));
        assert_eq!(w.on_request(ms(1), d(10)), Admit::Served { start: ms(10), end: ms(20) });
        assert_eq!(w.on_request(ms(2), d(10)), Admit::Full);
        // Once the waiting one has started the queue has room again.
        assert_eq!(w.on_request(ms(10), d(10)), Admit::Served { start: ms(20), end: ms(30) });
        // A limit of 0 still serves whoever finds a worker free.
        let mut none = Workers::new(1, Some(0));
        assert!(matches!(none.on_request(ms(0), d(10)), Admit::Served { .. }));
        assert_eq!(none.on_request(ms(5), d(10)), Admit::Full);
    }

    #[test]
    fn a_restart_drops_the_backlog_and_frees_every_worker_when_the_server_is_back() {
        let mut w = Workers::new(1, None);
        for _ in 0..5 {
            w.on_request(ms(0), d(100));
        }
        w.restart(ms(50));
        assert_eq!(w.queued(ms(50)), 0);
        assert_eq!(w.on_request(ms(60), d(10)), Admit::Served { start: ms(60), end: ms(70) });
    }

    #[test]
    fn a_backlog_left_by_a_brownout_drains_in_the_mm1_busy_period_n_over_mu_minus_lambda() {
        // Kleinrock, Queueing Systems Vol. 1 (1975), §5.8: an M/M/1 busy period started
        // by n customers lasts n/(μ − λ) on average. Poisson arrivals at λ = 0.5/s,
        // exponential work at μ = 1/s, one worker slowed a hundredfold for the first 20 s
        // so a backlog builds. After the window the worker is an M/M/1 server again: the
        // request in service has an exponential rest of its work (memoryless), so the n
        // requests present at 20 s take n/(μ − λ) on average to clear, new arrivals
        // included. Checked over 4,000 runs: the mean of (drain − n/(μ − λ)) is 0 within
        // 3 standard errors (99.7 %); the drain itself averages about 20 s.
        use crate::engine::rng::{CounterRng, Purpose, Seeds};
        use crate::model::server::{Brownout, Speed};
        use rand::RngExt;
        let (lambda, mu, end) = (0.5, 1.0, 20.0);
        let exp = |rng: &mut CounterRng, rate: f64| -libm::log(1.0 - rng.random::<f64>()) / rate;
        let ns = |s: f64| (s * 1e9).round() as u64;
        let brownout = Brownout {
            at: SimDuration::ZERO,
            duration: SimDuration::from_secs(20),
            fail_fraction: 0.0,
            slowdown: 100.0,
        };
        let runs: u32 = 4_000;
        let (mut sum, mut sum_sq, mut drains, mut backlog) = (0.0, 0.0, 0.0, 0.0);
        for run in 0..runs {
            let mut rng = CounterRng::at(Seeds::new(11).counter_key(u64::from(run), 0, Purpose::Server), 0);
            let mut w = Workers::new(1, None).with_speed(Speed::new(&[brownout]));
            let (mut t, mut last_end, mut n) = (0.0, SimTime::ZERO, 0u32);
            let drained = loop {
                t += exp(&mut rng, lambda);
                let at = SimTime(ns(t));
                // The worker went idle before this arrival, after the window: drained.
                if t > end && last_end < at {
                    break last_end.max(SimTime(ns(end)));
                }
                let work = SimDuration(ns(exp(&mut rng, mu)));
                let Admit::Served { end: e, .. } = w.on_request(at, work) else { unreachable!("no queue limit") };
                if t <= end && e > SimTime(ns(end)) {
                    n += 1;
                }
                last_end = e;
            };
            let drain = (drained.as_nanos() as f64 / 1e9) - end;
            let d = drain - f64::from(n) / (mu - lambda);
            sum += d;
            sum_sq += d * d;
            drains += drain;
            backlog += f64::from(n);
        }
        let r = f64::from(runs);
        let mean = sum / r;
        let se = ((sum_sq / r - mean * mean) / (r - 1.0)).sqrt();
        assert!(mean.abs() < 3.0 * se, "drain − n/(μ − λ) averages {mean} s, standard error {se}");
        // A backlog really built and drained: about λ·20 = 10 requests, about 20 s.
        assert!(backlog / r > 8.0 && drains / r > 15.0, "backlog {} drain {}", backlog / r, drains / r);
    }
}
