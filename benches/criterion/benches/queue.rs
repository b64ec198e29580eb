//! The hold model (Jones 1986) for the engine's event queue, against a bare
//! `std::collections::BinaryHeap` doing the same work in the same run.
//!
//! One operation = pop the earliest event, push one event at the popped time plus an
//! increment, with the queue at a steady size N; throughput is in such events per
//! second. Two increment distributions:
//! * `exp`: exponential with mean 1 ms, the classic hold-model stress case in which the
//!   whole queue is live;
//! * `mix`: 90 % exponential with mean 1 ms (packet hops, service times) and 10 %
//!   uniform over 1–60 s (retransmission timers and backoff sleeps). Here most pending
//!   events are far-future timers, as in a simulation of many clients sleeping in
//!   backoff while a few have packets in flight.
//!
//! Increments come from a pre-drawn table so that the timed loop measures the queue,
//! not the random number generator, and both queues see exactly the same sequence. The
//! queues are pre-filled in the hold model's steady state, outside the timed loop, and
//! kept across criterion's samples.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::hint::black_box;
use std::time::{Duration, Instant};

use backoffsim::engine::queue::EventQueue;
use backoffsim::engine::time::SimTime;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Events carry a small payload, as the engine's do.
type Payload = [u64; 2];

const MS: u64 = 1_000_000;
const SEC: u64 = 1_000 * MS;
const TABLE: usize = 1 << 16;
const SIZES: [usize; 3] = [1_000, 100_000, 1_000_000];

trait HoldQueue {
    fn push(&mut self, at: u64, payload: Payload);
    fn pop(&mut self) -> (u64, Payload);
}

impl HoldQueue for EventQueue<Payload> {
    #[inline]
    fn push(&mut self, at: u64, payload: Payload) {
        EventQueue::push(self, SimTime(at), payload);
    }
    #[inline]
    fn pop(&mut self) -> (u64, Payload) {
        let (t, p) = EventQueue::pop(self).expect("the hold model never empties the queue");
        (t.0, p)
    }
}

/// What the engine would otherwise use: a min-heap on (time, sequence) carrying the
/// same payload.
struct StdHeap {
    heap: BinaryHeap<HeapEntry>,
    seq: u64,
}

struct HeapEntry {
    time: u64,
    seq: u64,
    payload: Payload,
}

impl PartialEq for HeapEntry {
    fn eq(&self, other: &Self) -> bool {
        (self.time, self.seq) == (other.time, other.seq)
    }
}
impl Eq for HeapEntry {}
impl PartialOrd for HeapEntry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for HeapEntry {
    // Reversed: `BinaryHeap` is a max-heap.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.time, other.seq).cmp(&(self.time, self.seq))
    }
}

impl HoldQueue for StdHeap {
    #[inline]
    fn push(&mut self, at: u64, payload: Payload) {
        self.heap.push(HeapEntry { time: at, seq: self.seq, payload });
        self.seq += 1;
    }
    #[inline]
    fn pop(&mut self) -> (u64, Payload) {
        let e = self.heap.pop().expect("the hold model never empties the queue");
        (e.time, e.payload)
    }
}

fn exp_increments(rng: &mut ChaCha8Rng) -> Vec<u64> {
    (0..TABLE)
        .map(|_| {
            // 1 - u is in (0, 1], so the logarithm is finite.
            let u: f64 = rng.random();
            (-(1.0 - u).ln() * MS as f64) as u64
        })
        .collect()
}

fn mix_increments(rng: &mut ChaCha8Rng) -> Vec<u64> {
    let exp = exp_increments(rng);
    exp.into_iter().map(|e| if rng.random_bool(0.1) { rng.random_range(SEC..60 * SEC) } else { e }).collect()
}

/// Pending times of the hold model's steady state: the residual life of the increment
/// distribution, i.e. an increment picked with probability proportional to its length
/// (a long timer is more likely to be pending), times a uniform fraction. Starting
/// here, instead of from N fresh increments, spares a warm-up of many times N
/// operations before the far-future timers reach their steady share.
fn steady_state(incs: &[u64], n: usize, rng: &mut ChaCha8Rng) -> Vec<u64> {
    let mut cumulative = Vec::with_capacity(incs.len());
    let mut total = 0u64;
    for &d in incs {
        total += d;
        cumulative.push(total);
    }
    (0..n)
        .map(|_| {
            let r = rng.random_range(0..total);
            let j = cumulative.partition_point(|&c| c <= r);
            rng.random_range(0..=incs[j])
        })
        .collect()
}

/// Runs `iters` hold operations; the queue and the table cursor persist across calls.
fn hold<Q: HoldQueue>(q: &mut Q, incs: &[u64], cursor: &mut usize, iters: u64) -> Duration {
    let mask = incs.len() - 1;
    let mut k = *cursor;
    let start = Instant::now();
    for _ in 0..iters {
        let (t, mut p) = q.pop();
        p[1] = p[1].wrapping_add(1);
        q.push(t + incs[k & mask], p);
        k = k.wrapping_add(1);
    }
    let elapsed = start.elapsed();
    *cursor = k;
    elapsed
}

fn bench_hold(c: &mut Criterion) {
    let mut rng = ChaCha8Rng::seed_from_u64(0x5EED);
    let distributions = [("hold_exp1ms", exp_increments(&mut rng)), ("hold_mix", mix_increments(&mut rng))];
    for (name, incs) in &distributions {
        let mut group = c.benchmark_group(*name);
        group.sample_size(10);
        group.throughput(Throughput::Elements(1));
        for n in SIZES {
            let (warm_up, measure) = if n >= 1_000_000 {
                (Duration::from_millis(1_000), Duration::from_secs(3))
            } else {
                (Duration::from_millis(500), Duration::from_secs(2))
            };
            group.warm_up_time(warm_up).measurement_time(measure);
            let initial = steady_state(incs, n, &mut rng);

            let mut q = EventQueue::new();
            for (i, &t) in initial.iter().enumerate() {
                q.push(SimTime(t), [i as u64, 0]);
            }
            let mut cursor = 0;
            group.bench_with_input(BenchmarkId::new("EventQueue", n), &n, |b, _| {
                b.iter_custom(|iters| hold(&mut q, incs, &mut cursor, iters))
            });
            black_box(q.len());
            drop(q);

            let mut h = StdHeap { heap: BinaryHeap::with_capacity(n), seq: 0 };
            for (i, &t) in initial.iter().enumerate() {
                HoldQueue::push(&mut h, t, [i as u64, 0]);
            }
            let mut cursor = 0;
            group.bench_with_input(BenchmarkId::new("BinaryHeap", n), &n, |b, _| {
                b.iter_custom(|iters| hold(&mut h, incs, &mut cursor, iters))
            });
            black_box(h.heap.len());
        }
        group.finish();
    }
}

criterion_group!(benches, bench_hold);
criterion_main!(benches);
