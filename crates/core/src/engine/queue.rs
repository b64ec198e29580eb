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
//! events are redistributed into `current` and strictly lower buckets. An event moves
//! at most 64 times over its life; in the benchmark's hold model, about 2 to 10 times.
//!
//! Why this and not a binary heap or a timing wheel:
//! * Every operation is an append to, or a sequential read of, one of 65 sequences, so
//!   a queue of millions of events is limited by memory bandwidth, not by the latency
//!   of the random accesses that make `BinaryHeap` slow at that size.
//! * It needs no tuning to the time scale: the buckets cover the whole `u64` nanosecond
//!   range, so nanosecond hops, hour-long timers and huge gaps are all handled without
//!   a slot width to choose or an overflow structure to fall back on.
//! * FIFO among equal times needs no sequence number: events with equal times always
//!   sit in the same bucket, pushes append, and redistribution keeps the order of the
//!   bucket it empties (it only appends to buckets that were empty: every bucket below
//!   the lowest non-empty one is).
//! * Each bucket caches its minimum time, so `peek_time` is O(1) on `&self` and a
//!   refill takes one pass over the bucket instead of two.
//! * A hierarchical timing wheel with 64 slots a level (the same idea with 6-bit
//!   digits, so events move at most 11 times) was measured against this design with
//!   one vector per bucket, in the hold model of `benches/queue.rs`: 40–70 % faster
//!   with 100 K–1 M pending and purely exponential increments, but no faster with 1 K
//!   pending and 10–30 % slower with the realistic mix of near events and far timers,
//!   using 1.5–2.7 times the memory. The mix is what this simulator runs.
//!
//! Buckets are chains of fixed-size chunks drawn from a shared pool rather than one
//! growable vector each. With one vector per bucket, every bucket keeps the capacity of
//! its own peak, and the sum of those peaks was five to seven times the live events at
//! 1 M pending (a 190 MB process for 24 MB of events, against 35 MB with chunks).
//! Chunks freed by a refill are reused at once by the buckets it fills, so memory stays
//! close to the live events, at a cost of 10–25 % in throughput.

use std::collections::VecDeque;
use std::mem;

use super::time::SimTime;

/// One bucket per bit of a `u64` time.
const BUCKETS: usize = 64;

/// Size of a bucket chunk: big enough that redistribution streams through memory,
/// small enough that a queue with few events does not hold much.
const CHUNK_BYTES: usize = 16 * 1024;

/// Spare chunks kept in the pool beyond what the pending events need, so that a refill
/// that frees chunks and a refill that needs them do not allocate in turn.
const SPARE_CHUNKS: usize = 16;

struct Entry<E> {
    time: u64,
    event: E,
}

/// The events of one bucket, oldest first: the sealed chunks (each exactly
/// `CHUNK` entries), then the tail being appended to.
struct Bucket<E> {
    sealed: Vec<Vec<Entry<E>>>,
    tail: Vec<Entry<E>>,
}

/// A monotone priority queue of `(SimTime, E)`; see the [module docs](self) for the
/// ordering contract.
pub struct EventQueue<E> {
    /// The last popped time: every pending event is at this time or later.
    now: u64,
    /// Events due exactly at `now`, in push order. Their time is `now`, so it is not
    /// stored.
    current: VecDeque<E>,
    /// `buckets[b]` holds the events whose time first differs from `now` at bit `b`.
    buckets: Box<[Bucket<E>; BUCKETS]>,
    /// `mins[b]` is the smallest time in `buckets[b]`, or `u64::MAX` when it is empty.
    /// Kept apart from the buckets so that `peek_time` touches one cache line.
    mins: [u64; BUCKETS],
    /// Bit `b` is set iff `buckets[b]` is not empty.
    occupied: u64,
    /// Empty chunks, each with capacity `CHUNK`.
    pool: Vec<Vec<Entry<E>>>,
    /// Chunks the caller asked for through `with_capacity`, kept even while unused.
    reserved_chunks: usize,
    len: usize,
}

impl<E> EventQueue<E> {
    /// Entries per chunk: a power of two, so that a tail growing by doubling reaches it
    /// exactly and a sealed chunk wastes no capacity.
    const CHUNK: usize = {
        let n = CHUNK_BYTES / mem::size_of::<Entry<E>>();
        if n < 16 { 16 } else { 1 << (usize::BITS - 1 - n.leading_zeros()) }
    };

    pub fn new() -> Self {
        Self::with_capacity(0)
    }

    /// Pre-allocates chunks for `n` pending events, kept for the queue's life, so that
    /// filling it up to about `n` allocates only the small per-bucket tails.
    pub fn with_capacity(n: usize) -> Self {
        let reserved_chunks = n.div_ceil(Self::CHUNK);
        EventQueue {
            now: 0,
            current: VecDeque::new(),
            buckets: Box::new(std::array::from_fn(|_| Bucket { sealed: Vec::new(), tail: Vec::new() })),
            mins: [u64::MAX; BUCKETS],
            occupied: 0,
            pool: (0..reserved_chunks).map(|_| Vec::with_capacity(Self::CHUNK)).collect(),
            reserved_chunks,
            len: 0,
        }
    }

    /// Schedules `event` at `at`. `at` earlier than the last popped time is a caller
    /// bug: it panics in debug builds and is served as if at that time in release
    /// builds (see the module docs).
    #[inline]
    pub fn push(&mut self, at: SimTime, event: E) {
        debug_assert!(at.0 >= self.now, "event pushed at {at}, before the last popped time {}", SimTime(self.now));
        self.push_clamped(at.0, event);
    }

    /// The release-build behaviour of `push`, reachable from tests in debug builds.
    #[inline]
    fn push_clamped(&mut self, at: u64, event: E) {
        let now = self.now;
        self.place(now, at.max(now), event);
        self.len += 1;
    }

    /// Puts an event at `time >= now` where it belongs. `now` is passed in (it equals
    /// `self.now`) so that the redistribution loop keeps it in a register instead of
    /// reloading it after every store.
    #[inline(always)]
    fn place(&mut self, now: u64, time: u64, event: E) {
        let diff = time ^ now;
        if diff == 0 {
            self.current.push_back(event);
            return;
        }
        let b = diff.ilog2() as usize;
        self.mins[b] = self.mins[b].min(time);
        self.occupied |= 1 << b;
        if self.buckets[b].tail.len() == Self::CHUNK {
            self.seal(b);
        }
        self.buckets[b].tail.push(Entry { time, event });
    }

    /// Moves a full tail to the sealed chunks and starts a new one.
    #[cold]
    #[inline(never)]
    fn seal(&mut self, b: usize) {
        let fresh = self.pool.pop().unwrap_or_else(|| Vec::with_capacity(Self::CHUNK));
        let full = mem::replace(&mut self.buckets[b].tail, fresh);
        self.buckets[b].sealed.push(full);
    }

    /// Removes and returns the earliest event, ties in push order.
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        if self.current.is_empty() {
            if self.occupied == 0 {
                return None;
            }
            // A lone event in the lowest bucket is the next one: take it without the
            // round trip through `current`. With few pending events this is most pops.
            let i = self.occupied.trailing_zeros() as usize;
            let bucket = &mut self.buckets[i];
            if bucket.tail.len() == 1 && bucket.sealed.is_empty() {
                let Entry { time, event } = bucket.tail.pop()?;
                self.occupied &= !(1 << i);
                self.mins[i] = u64::MAX;
                self.now = time;
                self.len -= 1;
                return Some((SimTime(time), event));
            }
            self.refill(i);
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

    /// Empties bucket `i`, the lowest non-empty one while `current` is empty: advances
    /// `now` to its minimum and redistributes its events below it.
    ///
    /// Kept out of line so that the common `pop` stays small enough to inline into the
    /// run loop.
    #[inline(never)]
    fn refill(&mut self, i: usize) {
        debug_assert!(self.current.is_empty() && i == self.occupied.trailing_zeros() as usize);
        // After a burst, do not keep a `current` sized for it; a batch at one time is
        // never larger than `len`, so a steady simulation never gets here.
        if self.current.capacity() > 2 * self.len.max(Self::CHUNK) {
            self.current.shrink_to(self.len);
        }
        let keep = self.pool_limit();
        if self.pool.len() > keep {
            self.pool.truncate(keep);
        }
        let now = self.mins[i];
        self.now = now;
        // Events in higher buckets keep their bucket: `now` moved only within the bits
        // below `i`, where they do not differ from it first.
        self.occupied &= !(1 << i);
        self.mins[i] = u64::MAX;
        if !self.buckets[i].sealed.is_empty() {
            let mut sealed = mem::take(&mut self.buckets[i].sealed);
            for mut chunk in sealed.drain(..) {
                self.redistribute(now, &mut chunk);
                self.recycle(chunk);
            }
            // Hand the (empty) list back to keep its allocation.
            self.buckets[i].sealed = sealed;
        }
        let mut tail = mem::take(&mut self.buckets[i].tail);
        self.redistribute(now, &mut tail);
        self.buckets[i].tail = tail;
    }

    #[inline(always)]
    fn redistribute(&mut self, now: u64, chunk: &mut Vec<Entry<E>>) {
        for Entry { time, event } in chunk.drain(..) {
            self.place(now, time, event);
        }
    }

    /// Returns an emptied chunk to the pool, or frees it once the pool holds more than
    /// the pending events could need, so a queue that shrinks gives its memory back.
    fn recycle(&mut self, chunk: Vec<Entry<E>>) {
        if self.pool.len() < self.pool_limit() {
            self.pool.push(chunk);
        }
    }

    /// How many empty chunks are worth keeping: enough to hold every pending event
    /// again (or what `with_capacity` asked for), plus a few spare.
    fn pool_limit(&self) -> usize {
        (self.len / Self::CHUNK).max(self.reserved_chunks) + SPARE_CHUNKS
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
        let expected: Vec<(u64, i32)> =
            (0..100).map(|i| (3_000, 1000 + i)).chain((0..100).map(|i| (5_000, i))).collect();
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
        let mut expected: Vec<(u64, usize)> = times.iter().enumerate().map(|(i, &t)| (t, i)).collect();
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
        /// Push this many events at the last popped time plus the offset.
        Burst(usize, u64),
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
            1 => (1usize..40, prop_oneof![Just(0u64), 0u64..100, 0u64..1_000_000])
                .prop_map(|(n, d)| Op::Burst(n, d)),
            7 => Just(Op::Pop),
        ]
    }

    /// Runs `ops` against the queue and the model, checking every observable after
    /// every operation. `make` builds a payload carrying the model's id.
    fn check_against_model<E>(
        ops: &[Op],
        make: impl Fn(u64) -> E,
        id: impl Fn(&E) -> u64,
    ) -> Result<(), TestCaseError> {
        let mut q = EventQueue::new();
        let mut m = Model { heap: BinaryHeap::new(), seq: 0, now: 0 };
        let popped = |p: Option<(SimTime, E)>| p.map(|(t, e)| (t.0, id(&e)));
        for op in ops {
            match *op {
                Op::Push(d) => {
                    let at = m.now.saturating_add(d);
                    let n = m.push(at);
                    q.push(SimTime(at), make(n));
                }
                Op::PushPast(d) => {
                    let at = m.now.saturating_sub(d);
                    let n = m.push(at);
                    q.push_clamped(at, make(n));
                }
                Op::Burst(count, d) => {
                    let at = m.now.saturating_add(d);
                    for _ in 0..count {
                        let n = m.push(at);
                        q.push(SimTime(at), make(n));
                    }
                }
                Op::Pop => {
                    let expected = m.pop();
                    prop_assert_eq!(popped(q.pop()), expected);
                }
            }
            prop_assert_eq!(q.len(), m.heap.len());
            prop_assert_eq!(q.is_empty(), m.heap.is_empty());
            prop_assert_eq!(q.peek_time().map(|t| t.0), m.peek_time());
        }
        while let Some(expected) = m.pop() {
            prop_assert_eq!(q.peek_time().map(|t| t.0), Some(expected.0));
            prop_assert_eq!(popped(q.pop()), Some(expected));
        }
        prop_assert_eq!(popped(q.pop()), None);
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn matches_reference_model(ops in prop::collection::vec(op(), 0..400)) {
            check_against_model(&ops, |n| n, |&n| n)?;
        }

        /// A 1 KiB payload makes chunks 16 entries long, so these cases seal, drain and
        /// recycle chunks all the time.
        #[test]
        fn matches_reference_model_with_short_chunks(
            ops in prop::collection::vec(op(), 0..300)
        ) {
            assert_eq!(EventQueue::<[u64; 128]>::CHUNK, 16);
            check_against_model(&ops, |n| [n; 128], |e| e[0])?;
        }
    }

    #[test]
    fn many_pending_events_against_the_model() {
        // Long enough to fill many chunks per bucket with the default chunk size, with
        // a deterministic pseudo-random mix of near events, far timers and ties.
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut ops = Vec::new();
        for _ in 0..20_000 {
            ops.push(Op::Push(next() % 4_000_000));
        }
        for k in 0..100_000 {
            let r = next();
            ops.push(match r % 16 {
                _ if k % 5_000 == 0 => Op::Burst(2_000, (r >> 8) % 1_000),
                0..=7 => Op::Pop,
                8..=13 => Op::Push(r % 2_000_000),
                14 => Op::Push((r >> 8) % (60 << 30)),
                _ => Op::Push(0),
            });
        }
        check_against_model(&ops, |n| n, |&n| n).unwrap();
    }

    #[test]
    fn gives_memory_back_after_a_burst() {
        let mut q = EventQueue::new();
        for i in 0..200_000u64 {
            q.push(SimTime(1 + i * 7_919 % 1_000_003), i);
        }
        for i in 0..100_000u64 {
            q.push(SimTime(5_000_000), i);
        }
        while q.pop().is_some() {}
        // Memory is given back on the next refill, i.e. as the simulation moves on.
        q.push(SimTime(6_000_000), 0);
        q.push(SimTime(6_000_000), 1);
        assert_eq!(drain(&mut q), vec![(6_000_000, 0), (6_000_000, 1)]);
        let chunk = EventQueue::<u64>::CHUNK;
        assert!(q.pool.len() <= SPARE_CHUNKS, "pool kept {} chunks", q.pool.len());
        let retained: usize =
            q.buckets.iter().map(|b| b.tail.capacity() + b.sealed.iter().map(Vec::capacity).sum::<usize>()).sum();
        assert!(retained <= BUCKETS * chunk, "buckets kept {retained} entries");
        assert!(q.current.capacity() <= 2 * chunk, "current kept {}", q.current.capacity());
    }

    #[test]
    fn with_capacity_reserves_chunks_that_stay() {
        let chunk = EventQueue::<u64>::CHUNK;
        let mut q = EventQueue::with_capacity(10 * chunk);
        assert_eq!(q.pool.len(), 10);
        for i in 0..3 * chunk as u64 {
            q.push(SimTime(1 << 20 | i), i);
        }
        while q.pop().is_some() {}
        assert!(q.pool.len() >= 10);
    }
}
