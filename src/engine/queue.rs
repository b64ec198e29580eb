//! The engine's event queue: pending events ordered by simulated time.
//!
//! # Ordering contract
//!
//! * Events are popped in order of `(time, insertion sequence)`: the earliest time
//!   first, and events scheduled for the same time in the order they were pushed
//!   (FIFO). This tie-break is what makes a run a pure function of the scenario and
//!   the seed.
//! * An event pushed for exactly the time of the last popped event is served after
//!   every event already queued for that time, and before any later time.
//! * Time is monotone: pushing an event earlier than the last popped time is a caller
//!   bug. In debug builds `push` panics through a `debug_assert!`. In release builds
//!   the event is treated as if it had been pushed for the last popped time: it is
//!   served after the events already queued for that time and `pop` reports it at that
//!   time, so the times seen by the run loop never go backwards. The queue stays
//!   consistent either way.
//! * [`EventQueue::peek_time`] is the time the next [`EventQueue::pop`] will report.
//!
//! # Structure
//!
//! A radix heap (Ahuja, Mehlhorn, Orlin, Tarjan 1990) with FIFO buckets, which exploits
//! exactly the monotonicity above. `now` is the last popped time; a pending event at
//! time `t` lives in the bucket numbered by the highest bit in which `t` differs from
//! `now`, or in the `current` FIFO when `t == now`. When `current` runs dry, the
//! lowest non-empty bucket is emptied: its smallest time becomes the new `now`, and its
//! events are redistributed into `current` and strictly lower buckets. Each event moves
//! at most 64 times over its life and, in practice, a handful.
//!
//! Why this and not a binary heap or a timing wheel:
//! * Every operation is an append to, or a sequential scan of, one of 65 vectors, so a
//!   queue of millions of events is limited by memory bandwidth, not by the latency of
//!   the random accesses that make `BinaryHeap` slow at that size.
//! * It needs no tuning to the time scale: the buckets cover the whole `u64` nanosecond
//!   range, so nanosecond hops, hour-long timers and huge gaps cost the same, where a
//!   timing wheel has to pick a slot width and an overflow structure.
//! * FIFO among equal times needs no sequence number: events with equal times always
//!   sit in the same bucket, pushes append, and redistribution keeps the order of the
//!   bucket it empties (it only moves into empty buckets, all lower buckets being
//!   empty at that moment).
//! * Each bucket caches its minimum time, so `peek_time` is O(1) on `&self` and a
//!   refill takes one pass over the bucket instead of two.

use std::collections::VecDeque;

use super::time::SimTime;

/// One bucket per bit of a `u64` time.
const BUCKETS: usize = 64;

#[derive(Clone)]
struct Entry<E> {
    time: u64,
    event: E,
}

/// A monotone priority queue of `(SimTime, E)`; see the [module docs](self) for the
/// ordering contract.
#[derive(Clone)]
pub struct EventQueue<E> {
    /// The last popped time: every pending event is at this time or later.
    now: u64,
    /// Events due exactly at `now`, in push order. Their time is `now`, so it is not
    /// stored.
    current: VecDeque<E>,
    /// `buckets[b]` holds the events whose time first differs from `now` at bit `b`,
    /// in push order among equal times.
    buckets: Box<[Vec<Entry<E>>; BUCKETS]>,
    /// `mins[b]` is the smallest time in `buckets[b]`, or `u64::MAX` when it is empty.
    mins: [u64; BUCKETS],
    /// Bit `b` is set iff `buckets[b]` is not empty.
    occupied: u64,
    len: usize,
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        Self::with_capacity(0)
    }

    /// Capacity is only a hint here: pending events are spread over buckets whose
    /// shares depend on how far ahead they are, so no single allocation can be sized
    /// for `n` of them. This reserves room for `n` events due at the current time,
    /// which is the common start of a run (every client scheduled at time zero). The
    /// buckets grow on demand and keep their capacity, so a simulation in a steady
    /// state stops allocating after warm-up.
    pub fn with_capacity(n: usize) -> Self {
        EventQueue {
            now: 0,
            current: VecDeque::with_capacity(n),
            buckets: Box::new(std::array::from_fn(|_| Vec::new())),
            mins: [u64::MAX; BUCKETS],
            occupied: 0,
            len: 0,
        }
    }

    /// Schedules `event` at `at`. `at` earlier than the last popped time is a caller
    /// bug: it panics in debug builds and is served as if at that time in release
    /// builds (see the module docs).
    #[inline]
    pub fn push(&mut self, at: SimTime, event: E) {
        debug_assert!(
            at.0 >= self.now,
            "event pushed at {at}, before the last popped time {}",
            SimTime(self.now)
        );
        self.push_clamped(at.0, event);
    }

    /// The release-build behaviour of `push`, reachable from tests in debug builds.
    #[inline]
    fn push_clamped(&mut self, at: u64, event: E) {
        let time = at.max(self.now);
        let diff = time ^ self.now;
        if diff == 0 {
            self.current.push_back(event);
        } else {
            let b = diff.ilog2() as usize;
            self.buckets[b].push(Entry { time, event });
            self.mins[b] = self.mins[b].min(time);
            self.occupied |= 1 << b;
        }
        self.len += 1;
    }

    /// Removes and returns the earliest event, ties in push order.
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        if self.current.is_empty() {
            if self.occupied == 0 {
                return None;
            }
            self.refill();
        }
        let event = self.current.pop_front()?;
        self.len -= 1;
        Some((SimTime(self.now), event))
    }

    /// The time of the event the next `pop` returns. O(1), and it does not move the
    /// queue's notion of the current time, so pushes that are valid before a peek
    /// stay valid after it.
    #[inline]
    pub fn peek_time(&self) -> Option<SimTime> {
        if !self.current.is_empty() {
            Some(SimTime(self.now))
        } else if self.occupied == 0 {
            None
        } else {
            Some(SimTime(self.mins[self.occupied.trailing_zeros() as usize]))
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Advances `now` to the earliest pending time and moves that time's events into
    /// `current`. Requires `current` empty and some bucket occupied.
    ///
    /// Kept out of line so that the common `pop` (from `current`) stays small enough to
    /// inline into the run loop.
    #[inline(never)]
    fn refill(&mut self) {
        debug_assert!(self.current.is_empty() && self.occupied != 0);
        let i = self.occupied.trailing_zeros() as usize;
        let now = self.mins[i];
        self.now = now;
        // Events in higher buckets keep their bucket: `now` moved only within the bits
        // below `i`, which they do not differ at first.
        self.occupied &= !(1 << i);
        self.mins[i] = u64::MAX;
        let mut emptied = std::mem::take(&mut self.buckets[i]);
        for Entry { time, event } in emptied.drain(..) {
            let diff = time ^ now;
            if diff == 0 {
                self.current.push_back(event);
            } else {
                let b = diff.ilog2() as usize;
                self.buckets[b].push(Entry { time, event });
                self.mins[b] = self.mins[b].min(time);
                self.occupied |= 1 << b;
            }
        }
        // Hand the allocation back so that the bucket does not regrow next time.
        self.buckets[i] = emptied;
    }
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    use proptest::prelude::*;

    use super::*;

    fn drain<E>(q: &mut EventQueue<E>) -> Vec<(u64, E)> {
        let mut out = Vec::new();
        while let Some((t, e)) = q.pop() {
            out.push((t.0, e));
        }
        out
    }

    #[test]
    fn empty_queue() {
        let mut q: EventQueue<u32> = EventQueue::default();
        assert!(q.is_empty());
        assert_eq!(q.len(), 0);
        assert_eq!(q.peek_time(), None);
        assert_eq!(q.pop(), None);
        assert!(q.is_empty());
    }

    #[test]
    fn single_element() {
        for t in [0, 1, 1 << 40, u64::MAX] {
            let mut q = EventQueue::new();
            q.push(SimTime(t), 'x');
            assert_eq!(q.len(), 1);
            assert!(!q.is_empty());
            assert_eq!(q.peek_time(), Some(SimTime(t)));
            assert_eq!(q.pop(), Some((SimTime(t), 'x')));
            assert_eq!(q.pop(), None);
            assert!(q.is_empty());
        }
    }

    #[test]
    fn fifo_among_equal_times() {
        let mut q = EventQueue::new();
        // Interleave two times so that the equal ones are not pushed back to back.
        for i in 0..100 {
            q.push(SimTime(5_000), i);
            q.push(SimTime(3_000), 1000 + i);
        }
        let out = drain(&mut q);
        let expected: Vec<(u64, i32)> = (0..100)
            .map(|i| (3_000, 1000 + i))
            .chain((0..100).map(|i| (5_000, i)))
            .collect();
        assert_eq!(out, expected);
    }

    #[test]
    fn fifo_survives_redistribution() {
        // Equal times pushed while `now` is far away sit in a high bucket and are moved
        // down several times before they are served; the order must survive each move.
        let mut q = EventQueue::new();
        let mut expected = Vec::new();
        for i in 0..50u64 {
            let t = 1_000_000 + (i % 7) * 3;
            q.push(SimTime(t), i);
            expected.push((t, i));
        }
        expected.sort_by_key(|&(t, i)| (t, i));
        assert_eq!(drain(&mut q), expected);
    }

    #[test]
    fn push_at_current_time_goes_after_queued_events_of_that_time() {
        let mut q = EventQueue::new();
        q.push(SimTime(10), "a");
        q.push(SimTime(10), "b");
        q.push(SimTime(20), "later");
        assert_eq!(q.pop(), Some((SimTime(10), "a")));
        q.push(SimTime(10), "c");
        assert_eq!(q.peek_time(), Some(SimTime(10)));
        assert_eq!(q.pop(), Some((SimTime(10), "b")));
        q.push(SimTime(10), "d");
        assert_eq!(drain(&mut q), vec![(10, "c"), (10, "d"), (20, "later")]);
        // Also when the time's events are exhausted: the next one is still at `now`.
        q.push(SimTime(20), "again");
        assert_eq!(q.pop(), Some((SimTime(20), "again")));
    }

    #[test]
    fn huge_time_gaps() {
        let times = [
            u64::MAX,
            0,
            1,
            u64::MAX - 1,
            1 << 63,
            (1 << 63) - 1,
            3_600 * 1_000_000_000 * 24 * 365,
            2,
            u64::MAX,
            1 << 32,
        ];
        let mut q = EventQueue::new();
        for (i, &t) in times.iter().enumerate() {
            q.push(SimTime(t), i);
        }
        let mut expected: Vec<(u64, usize)> =
            times.iter().enumerate().map(|(i, &t)| (t, i)).collect();
        expected.sort();
        let mut got = Vec::new();
        while let Some(next) = q.peek_time() {
            let (t, i) = q.pop().unwrap();
            assert_eq!(t, next);
            got.push((t.0, i));
        }
        assert_eq!(got, expected);
    }

    #[test]
    fn len_tracks_pushes_and_pops() {
        let mut q = EventQueue::with_capacity(8);
        for i in 0..10u64 {
            q.push(SimTime(i * 1_000_003 % 17), i);
            assert_eq!(q.len(), i as usize + 1);
        }
        for left in (0..10).rev() {
            q.pop().unwrap();
            assert_eq!(q.len(), left);
            assert_eq!(q.is_empty(), left == 0);
        }
    }

    #[test]
    fn many_equal_times_then_distinct() {
        let mut q = EventQueue::new();
        for i in 0..10_000u32 {
            q.push(SimTime(1_000_000), i);
        }
        q.push(SimTime(999_999), u32::MAX);
        assert_eq!(q.pop(), Some((SimTime(999_999), u32::MAX)));
        for i in 0..10_000u32 {
            assert_eq!(q.pop(), Some((SimTime(1_000_000), i)));
        }
        assert!(q.is_empty());
    }

    #[test]
    fn past_push_is_served_at_current_time_in_release() {
        let mut q = EventQueue::new();
        q.push(SimTime(100), 1);
        q.push(SimTime(100), 2);
        q.push(SimTime(150), 3);
        assert_eq!(q.pop(), Some((SimTime(100), 1)));
        q.push_clamped(40, 4);
        assert_eq!(q.len(), 3);
        assert_eq!(drain(&mut q), vec![(100, 2), (100, 4), (150, 3)]);
        // And with nothing queued at the current time.
        q.push_clamped(0, 5);
        q.push(SimTime(151), 6);
        assert_eq!(drain(&mut q), vec![(150, 5), (151, 6)]);
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "before the last popped time")]
    fn past_push_fires_debug_assert() {
        let mut q = EventQueue::new();
        q.push(SimTime(100), ());
        q.pop();
        q.push(SimTime(99), ());
    }

    /// The reference model: a binary heap on (time, sequence), clamping like the queue.
    struct Model {
        heap: BinaryHeap<Reverse<(u64, u64)>>,
        seq: u64,
        now: u64,
    }

    impl Model {
        fn push(&mut self, at: u64) -> u64 {
            let id = self.seq;
            self.heap.push(Reverse((at.max(self.now), id)));
            self.seq += 1;
            id
        }
        fn pop(&mut self) -> Option<(u64, u64)> {
            let Reverse((t, id)) = self.heap.pop()?;
            self.now = t;
            Some((t, id))
        }
        fn peek_time(&self) -> Option<u64> {
            self.heap.peek().map(|Reverse((t, _))| *t)
        }
    }

    #[derive(Clone, Debug)]
    enum Op {
        /// Push at the last popped time plus this offset (saturating).
        Push(u64),
        /// Push this far before the last popped time (a caller bug, clamped).
        PushPast(u64),
        Pop,
    }

    fn offset() -> impl Strategy<Value = u64> {
        prop_oneof![
            3 => Just(0u64),
            3 => 0u64..8,
            3 => 0u64..2_000_000,
            1 => 0u64..(1 << 45),
            1 => any::<u64>(),
            1 => Just(u64::MAX),
        ]
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            8 => offset().prop_map(Op::Push),
            1 => (1u64..1_000).prop_map(Op::PushPast),
            7 => Just(Op::Pop),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn matches_reference_model(ops in prop::collection::vec(op(), 0..400)) {
            let mut q = EventQueue::new();
            let mut m = Model { heap: BinaryHeap::new(), seq: 0, now: 0 };
            for op in ops {
                match op {
                    Op::Push(d) => {
                        let at = m.now.saturating_add(d);
                        let id = m.push(at);
                        q.push(SimTime(at), id);
                    }
                    Op::PushPast(d) => {
                        let at = m.now.saturating_sub(d);
                        let id = m.push(at);
                        q.push_clamped(at, id);
                    }
                    Op::Pop => {
                        let expected = m.pop();
                        prop_assert_eq!(q.pop().map(|(t, id)| (t.0, id)), expected);
                    }
                }
                prop_assert_eq!(q.len(), m.heap.len());
                prop_assert_eq!(q.is_empty(), m.heap.is_empty());
                prop_assert_eq!(q.peek_time().map(|t| t.0), m.peek_time());
            }
            while let Some(expected) = m.pop() {
                prop_assert_eq!(q.peek_time().map(|t| t.0), Some(expected.0));
                prop_assert_eq!(q.pop().map(|(t, id)| (t.0, id)), Some(expected));
            }
            prop_assert_eq!(q.pop().map(|(t, id)| (t.0, id)), None);
        }
    }
}
