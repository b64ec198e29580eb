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

#[derive(Clone, Debug)]
pub struct Workers {
    /// When each worker is next free.
    free: BinaryHeap<Reverse<SimTime>>,
    /// Start times of admitted requests, oldest first; those after `now` are waiting.
    waiting: VecDeque<SimTime>,
    limit: Option<u32>,
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
        Workers { free: (0..concurrency).map(|_| Reverse(SimTime::ZERO)).collect(), waiting: VecDeque::new(), limit }
    }

    /// Requests waiting for a worker at `now` (not yet started).
    pub fn queued(&mut self, now: SimTime) -> usize {
        while self.waiting.front().is_some_and(|&s| s <= now) {
            self.waiting.pop_front();
        }
        self.waiting.len()
    }

    /// A request arrives at `now` (non-decreasing across calls) needing `service` of one
    /// worker's time.
    pub fn on_request(&mut self, now: SimTime, service: SimDuration) -> Admit {
        let start = self.free.peek().map_or(now, |&Reverse(t)| t.max(now));
        if start > now && self.limit.is_some_and(|l| self.queued(now) >= l as usize) {
            return Admit::Full;
        }
        let end = start.saturating_add(service);
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
}
