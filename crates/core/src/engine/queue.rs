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
mod tests;
