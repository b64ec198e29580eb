//! Optimistic concurrency under contention, sans-IO: the workload of Marc Brooker's
//! "Exponential Backoff And Jitter" (AWS Architecture Blog, 2015).
//!
//! The source is the post's simulator, aws-samples/aws-arch-backoff-simulator,
//! `src/backoff_simulator.py` (line numbers below are that file's at commit 095a076):
//!
//! - One row with a version number on a server that answers at once (`OccServer`, l. 70–92).
//! - A client reads the version (`start`, l. 103–104: read → server; `read`, l. 91–92: the
//!   version → client), sends a write conditioned on it (`read_rsp`, l. 106–107), and the
//!   write succeeds only if the version is still the one it read (`write`, l. 79–88). The
//!   reply returns; on success the client stops (`write_rsp`, l. 113–114: `return None`).
//! - On failure the client's attempt count goes up **before** the backoff is computed, so
//!   the first backoff uses n = 1 (l. 111–112), and the next read reaches the server one
//!   hop delay plus the backoff later (l. 112: `tm + self.net.delay() + backoff`).
//! - Strategies (l. 21–55), base 5 ms and cap 2000 ms (l. 136: `backoff_cls(5, 2000)`):
//!   see [`Strategy`].
//!
//! Nothing here reads a clock or owns a random stream: [`Client`] is told what arrived and
//! answers what to send next, [`Backoff::next_sleep`] takes the client's jitter stream.
//! The hop delay and the event queue belong to the world (`sim::occ`).
//!
//! # Draws
//!
//! `full`, `equal` and `decorrelated` take exactly one uniform r ∈ [0, 1) per backoff
//! (`rand::RngExt::random::<f64>()`, 53 bits), as the original takes one
//! `random.uniform` (Python: `a + (b − a)·random()`, also 53 bits in [0, 1)); `none` and
//! `exponential` take none. Sleeps are computed in f64 nanoseconds and truncated to whole
//! nanoseconds (the original works in float milliseconds).

#[cfg(test)]
mod tests;

use rand::{Rng, RngExt};
use serde::{Deserialize, Serialize};

use crate::engine::time::SimDuration;
use crate::model::jitter;

/// How a client that lost the race waits before reading again. n is the client's failure
/// count, from 1; `expo(n)` = min(cap, base·2ⁿ).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Strategy {
    /// No wait (`NoBackoff`, l. 30–32): 0.
    None,
    /// Capped exponential, no jitter (`ExpoBackoff`, l. 34–36): expo(n).
    Exponential,
    /// "Full jitter" (`ExpoBackoffFullJitter`, l. 43–46): U(0, expo(n)).
    Full,
    /// "Equal jitter" (`ExpoBackoffEqualJitter`, l. 38–41): expo(n)/2 + U(0, expo(n)/2).
    Equal,
    /// "Decorrelated jitter" (`ExpoBackoffDecorr`, l. 48–55): sleep = min(cap, U(base,
    /// 3·sleep)), sleep starting at base, n ignored.
    Decorrelated,
}

impl Strategy {
    pub const ALL: [Strategy; 5] =
        [Strategy::None, Strategy::Exponential, Strategy::Full, Strategy::Equal, Strategy::Decorrelated];

    /// The word a scenario uses for it.
    pub fn word(self) -> &'static str {
        match self {
            Strategy::None => "none",
            Strategy::Exponential => "exponential",
            Strategy::Full => "full",
            Strategy::Equal => "equal",
            Strategy::Decorrelated => "decorrelated",
        }
    }

    /// Does computing a sleep take a uniform draw?
    pub fn draws(self) -> bool {
        matches!(self, Strategy::Full | Strategy::Equal | Strategy::Decorrelated)
    }
}

/// A strategy with its base and cap: every client's backoff (the original gives each
/// client its own object, l. 136, which matters only for `decorrelated`'s `sleep`, kept
/// here in [`Client`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Backoff {
    pub strategy: Strategy,
    pub base: SimDuration,
    pub cap: SimDuration,
}

impl Backoff {
    /// min(cap, base·2ⁿ) (`Backoff.expo`, l. 27–28), exact in integers, saturating.
    pub fn expo(&self, n: u32) -> SimDuration {
        let base = self.base.as_nanos();
        let nominal = match 1u64.checked_shl(n) {
            Some(factor) => base.saturating_mul(factor),
            None if base == 0 => 0,
            None => u64::MAX,
        };
        SimDuration(nominal).min(self.cap)
    }

    /// The sleep after the n-th failure (n ≥ 1); `prev_sleep` is the client's previous sleep
    /// (`base` before the first), which only `decorrelated` reads. One draw from `rng` for
    /// the jittered strategies, none otherwise.
    pub fn next_sleep<R: Rng + ?Sized>(&self, n: u32, prev_sleep: SimDuration, rng: &mut R) -> SimDuration {
        match self.strategy {
            // l. 32: `return 0`.
            Strategy::None => SimDuration::ZERO,
            // l. 36: `return self.expo(n)`.
            Strategy::Exponential => self.expo(n),
            // l. 45–46: `v = self.expo(n); return random.uniform(0, v)`.
            Strategy::Full => jitter::full(self.expo(n), rng.random::<f64>()),
            // l. 40–41: `v = self.expo(n); return v/2 + random.uniform(0, v/2)`.
            Strategy::Equal => jitter::equal(self.expo(n), rng.random::<f64>()),
            // l. 54: `self.sleep = min(self.cap, random.uniform(self.base, self.sleep * 3))`;
            // the range is never empty, as the base is at most the cap.
            Strategy::Decorrelated => jitter::decorrelated(self.base, prev_sleep, rng.random::<f64>()).min(self.cap),
        }
    }
}

/// The row: one version number, on a server that takes no time (`OccServer`, l. 70–92).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Row {
    version: u64,
}

impl Row {
    /// A read: the current version (l. 91–92).
    pub fn read(&self) -> u64 {
        self.version
    }

    /// A write conditioned on the version `read` returned: it succeeds, and bumps the
    /// version, only if no other write has succeeded since that read (l. 83–85).
    pub fn write(&mut self, read_version: u64) -> bool {
        if read_version == self.version {
            self.version += 1;
            true
        } else {
            false
        }
    }
}

/// Where a client is in its loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// A read is on its way to the server, or its reply on its way back (possibly after a
    /// backoff).
    Reading,
    /// A write conditioned on `version` is on its way, or its reply.
    Writing { version: u64 },
    /// The write succeeded: the client has stopped.
    Done,
}

/// One client (`OccClient`, l. 96–114): it updates the row once, then stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Client {
    phase: Phase,
    /// Failed writes so far: the original's `attempt` (l. 100, l. 111).
    failures: u32,
    /// The last sleep, `base` before the first: `decorrelated`'s `self.sleep` (l. 51, l. 54).
    sleep: SimDuration,
}

impl Client {
    /// A client about to send its first read (`start`, l. 103–104); the world sends it one
    /// hop delay after t = 0.
    pub fn new(backoff: &Backoff) -> Client {
        Client { phase: Phase::Reading, failures: 0, sleep: backoff.base }
    }

    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Failed writes so far.
    pub fn failures(&self) -> u32 {
        self.failures
    }

    /// Write calls made so far, the one in flight included.
    pub fn writes(&self) -> u32 {
        match self.phase {
            Phase::Reading => self.failures,
            Phase::Writing { .. } | Phase::Done => self.failures + 1,
        }
    }

    /// The read's reply brought `version`: returns the version the write is conditioned on,
    /// which the world sends to the server one hop later (`read_rsp`, l. 106–107).
    pub fn on_read_reply(&mut self, version: u64) -> u64 {
        debug_assert_eq!(self.phase, Phase::Reading, "a read reply without a read");
        self.phase = Phase::Writing { version };
        version
    }

    /// The write's reply: `None` when it succeeded (the client stops), else the backoff
    /// after which, plus one hop delay, the next read reaches the server (`write_rsp`,
    /// l. 109–114). The failure count goes up first (l. 111), so the first backoff is
    /// computed with n = 1.
    pub fn on_write_reply<R: Rng + ?Sized>(
        &mut self,
        backoff: &Backoff,
        success: bool,
        rng: &mut R,
    ) -> Option<SimDuration> {
        debug_assert!(matches!(self.phase, Phase::Writing { .. }), "a write reply without a write");
        if success {
            self.phase = Phase::Done;
            return None;
        }
        self.failures += 1;
        self.sleep = backoff.next_sleep(self.failures, self.sleep, rng);
        self.phase = Phase::Reading;
        Some(self.sleep)
    }
}
