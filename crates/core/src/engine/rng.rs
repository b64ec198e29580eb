//! Random streams. Every draw comes from a ChaCha8 stream keyed by
//! (master seed, replication, entity, purpose), so what one client draws never depends
//! on how many other clients exist, on which thread ran it, or on what another purpose
//! (loss, delay, jitter) consumed. That independence is what makes common random
//! numbers across variants work: variant A and variant B of a comparison see the same
//! losses and the same path delays for the same (replication, client).

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

pub use rand_chacha::ChaCha8Rng as SimRng;

/// What a stream is used for. Adding a purpose never shifts the draws of another.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u64)]
pub enum Purpose {
    /// Per-packet path delay, forward direction.
    DelayForward = 1,
    /// Per-packet path delay, reverse direction.
    DelayReverse = 2,
    /// Loss decisions, forward direction.
    LossForward = 3,
    /// Loss decisions, reverse direction.
    LossReverse = 4,
    /// Backoff jitter of a retry policy or connection backoff.
    Jitter = 5,
    /// Server-side decisions (service times, error draws).
    Server = 6,
    /// Workload decisions (start times, request sizes).
    Workload = 7,
}

/// The root of all randomness in one run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seeds {
    master: u64,
}

/// SplitMix64's finalizer: a bijective mixer with good avalanche, used to spread
/// small structured inputs (0, 1, 2 …) over the whole key space.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Seeds {
    pub fn new(master: u64) -> Self {
        Seeds { master }
    }

    pub fn master(&self) -> u64 {
        self.master
    }

    /// The 256-bit ChaCha key for one (replication, entity): four mixed words. The purpose
    /// selects ChaCha's 64-bit stream, so the purposes of one entity are independent
    /// streams under one key.
    pub fn stream(&self, replication: u64, entity: u64, purpose: Purpose) -> SimRng {
        let a = mix(self.master ^ mix(replication.wrapping_add(0x5EED)));
        let b = mix(a ^ mix(entity.wrapping_add(0xC11E)));
        let mut key = [0u8; 32];
        for (i, w) in [a, b, mix(b ^ 1), mix(b ^ 2)].into_iter().enumerate() {
            key[i * 8..i * 8 + 8].copy_from_slice(&w.to_le_bytes());
        }
        let mut rng = ChaCha8Rng::from_seed(key);
        rng.set_stream(purpose as u64);
        rng
    }
}

impl Seeds {
    /// The key of a counter-based stream (see `CounterRng`) for one (replication, entity,
    /// purpose). Derived from the same inputs as `stream`, so the same seed keeps both
    /// kinds of stream reproducible.
    pub fn counter_key(&self, replication: u64, entity: u64, purpose: Purpose) -> u64 {
        let a = mix(self.master ^ mix(replication.wrapping_add(0x5EED)));
        let b = mix(a ^ mix(entity.wrapping_add(0xC11E)));
        mix(b ^ mix((purpose as u64).wrapping_add(0x9E57)))
    }
}

/// A counter-based random stream: draw `i` of the stream keyed `key` is a pure function
/// of `(key, i)` (SplitMix64 started at `key`). It exists for worlds with a million
/// entities, where a ChaCha state per entity (over 300 bytes) would break the memory
/// budget: an entity keeps only its draw count, and rebuilds the stream on demand with
/// `CounterRng::at(key, count)`. The same independence holds as for `Seeds::stream`:
/// an entity's draws depend only on the seed, its replication, its id and the purpose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CounterRng {
    key: u64,
    index: u64,
}

const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

impl CounterRng {
    pub fn at(key: u64, index: u64) -> Self {
        CounterRng { key, index }
    }

    /// How many draws have been taken: store it, and resume with `at(key, index)`.
    pub fn index(&self) -> u64 {
        self.index
    }
}

impl rand::TryRng for CounterRng {
    type Error = core::convert::Infallible;

    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        self.try_next_u64().map(|v| (v >> 32) as u32)
    }

    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        self.index += 1;
        // SplitMix64: the state after `index` steps is key + index·γ, then the finalizer.
        Ok(mix(self.key.wrapping_add(self.index.wrapping_mul(GAMMA)).wrapping_sub(GAMMA)))
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
        for chunk in dst.chunks_mut(8) {
            let v = self.try_next_u64()?.to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
        Ok(())
    }
}

/// Test support: an RNG that hands out scripted uniform draws r ∈ [0, 1) (the last one
/// repeats) and counts how many were taken. Dyadic values come back exactly from
/// `random::<f64>()`, so tests can pin a formula on hand-computed numbers.
#[cfg(test)]
pub(crate) mod scripted {
    use std::collections::VecDeque;

    pub(crate) struct Draws {
        queue: VecDeque<f64>,
        last: f64,
        pub(crate) taken: u32,
    }

    impl Draws {
        pub(crate) fn new(rs: &[f64]) -> Self {
            Draws { queue: rs.iter().copied().collect(), last: *rs.last().unwrap_or(&0.5), taken: 0 }
        }

        pub(crate) fn always(r: f64) -> Self {
            Draws::new(&[r])
        }
    }

    impl rand::TryRng for Draws {
        type Error = std::convert::Infallible;
        fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
            Ok((self.try_next_u64()? >> 32) as u32)
        }
        fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
            let r = self.queue.pop_front().unwrap_or(self.last);
            self.taken += 1;
            // StandardUniform for f64: (u64 >> 11) · 2^-53.
            Ok(((r * (1u64 << 53) as f64) as u64) << 11)
        }
        fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
            dst.fill(0);
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    #[test]
    fn same_key_gives_same_draws() {
        let s = Seeds::new(42);
        let mut a = s.stream(3, 7, Purpose::Jitter);
        let mut b = s.stream(3, 7, Purpose::Jitter);
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
    }

    #[test]
    fn streams_differ_by_replication_entity_and_purpose() {
        let s = Seeds::new(42);
        let first = |r, e, p| s.stream(r, e, p).next_u64();
        let base = first(0, 0, Purpose::Jitter);
        assert_ne!(base, first(1, 0, Purpose::Jitter));
        assert_ne!(base, first(0, 1, Purpose::Jitter));
        assert_ne!(base, first(0, 0, Purpose::LossForward));
        assert_ne!(base, Seeds::new(43).stream(0, 0, Purpose::Jitter).next_u64());
    }

    #[test]
    fn a_counter_stream_resumes_exactly_where_it_stopped() {
        let key = Seeds::new(9).counter_key(1, 5, Purpose::Jitter);
        let mut whole = CounterRng::at(key, 0);
        let all: Vec<u64> = (0..10).map(|_| whole.next_u64()).collect();
        let mut first = CounterRng::at(key, 0);
        let head: Vec<u64> = (0..4).map(|_| first.next_u64()).collect();
        let mut rest = CounterRng::at(key, first.index());
        let tail: Vec<u64> = (0..6).map(|_| rest.next_u64()).collect();
        assert_eq!([head, tail].concat(), all);
    }

    #[test]
    fn counter_streams_are_uniform_and_differ_by_entity() {
        let seeds = Seeds::new(3);
        let a = CounterRng::at(seeds.counter_key(0, 0, Purpose::Jitter), 0).next_u64();
        let b = CounterRng::at(seeds.counter_key(0, 1, Purpose::Jitter), 0).next_u64();
        let c = CounterRng::at(seeds.counter_key(0, 0, Purpose::Server), 0).next_u64();
        assert!(a != b && a != c && b != c);
        // 100 000 draws in 10 bins: each bin within 5 standard deviations of 10 000
        // (sd = √(n·p·(1−p)) ≈ 94.9).
        let mut rng = CounterRng::at(seeds.counter_key(0, 7, Purpose::Jitter), 0);
        let mut bins = [0u32; 10];
        for _ in 0..100_000 {
            bins[(rng.next_u64() % 10) as usize] += 1;
        }
        assert!(bins.iter().all(|&b| (f64::from(b) - 10_000.0).abs() < 5.0 * 94.9), "{bins:?}");
    }

    /// Pins the derivation: if this changes, every committed result changes with it.
    #[test]
    fn derivation_is_pinned() {
        const PINNED: u64 = 11_912_840_576_788_034_862;
        let v = Seeds::new(1).stream(0, 0, Purpose::DelayForward).next_u64();
        assert_eq!(v, PINNED);
    }
}
