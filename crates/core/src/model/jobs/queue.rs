//! The job queue: jobs waiting to run, each with the time it is due. A new job is due
//! at once; a failed job comes back due at its next retry time. An idle worker takes
//! the job due earliest, ties in creation order (FIFO among equals), and only a job
//! already due: one scheduled for later sits in the queue without holding a worker.
//!
//! A binary heap keyed by (due, creation number): O(log n) per push and pop, no scan.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::engine::time::SimTime;

/// Jobs keyed by (due time, creation number), carrying a payload (where the job lives).
#[derive(Clone, Debug)]
pub struct DueQueue<T: Ord> {
    heap: BinaryHeap<Reverse<(SimTime, u64, T)>>,
}

impl<T: Ord> Default for DueQueue<T> {
    fn default() -> Self {
        DueQueue { heap: BinaryHeap::new() }
    }
}

impl<T: Ord> DueQueue<T> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Enqueues the job created `number`-th, due at `due`.
    pub fn push(&mut self, due: SimTime, number: u64, job: T) {
        self.heap.push(Reverse((due, number, job)));
    }

    /// The earliest-due job if it is due by `now`.
    pub fn pop_due(&mut self, now: SimTime) -> Option<T> {
        if self.heap.peek().is_some_and(|Reverse((due, _, _))| *due <= now) {
            self.heap.pop().map(|Reverse((_, _, job))| job)
        } else {
            None
        }
    }

    /// When the earliest job is due.
    pub fn next_due(&self) -> Option<SimTime> {
        self.heap.peek().map(|Reverse((due, _, _))| *due)
    }

    /// Jobs waiting or scheduled for later.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: u64) -> SimTime {
        SimTime(s * 1_000_000_000)
    }

    #[test]
    fn the_earliest_due_job_comes_first_and_equal_times_go_in_creation_order() {
        let mut q = DueQueue::new();
        q.push(at(5), 3, 'c');
        q.push(at(5), 1, 'a');
        q.push(at(2), 7, 'x');
        q.push(at(5), 2, 'b');
        let order: Vec<char> = std::iter::from_fn(|| q.pop_due(at(10))).collect();
        assert_eq!(order, ['x', 'a', 'b', 'c']);
    }

    #[test]
    fn a_job_scheduled_for_later_is_not_handed_out_before_its_time() {
        let mut q = DueQueue::new();
        q.push(at(30), 0, 0u32);
        assert_eq!(q.pop_due(at(29)), None);
        assert_eq!((q.len(), q.next_due()), (1, Some(at(30))));
        assert_eq!(q.pop_due(at(30)), Some(0));
        assert!(q.is_empty());
    }
}
