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
    let expected: Vec<(u64, i32)> = (0..100).map(|i| (3_000, 1000 + i)).chain((0..100).map(|i| (5_000, i))).collect();
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
    let times =
        [u64::MAX, 0, 1, u64::MAX - 1, 1 << 63, (1 << 63) - 1, 3_600 * 1_000_000_000 * 24 * 365, 2, u64::MAX, 1 << 32];
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
fn check_against_model<E>(ops: &[Op], make: impl Fn(u64) -> E, id: impl Fn(&E) -> u64) -> Result<(), TestCaseError> {
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
