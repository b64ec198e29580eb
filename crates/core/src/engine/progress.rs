//! How far a run has got, for a progress display: the simulated time its replications
//! have reached, summed. The engine adds to it where it already looks at the interrupt
//! flag (every [`CHECK_EVERY`](super::run::CHECK_EVERY) events) and once when a replication
//! ends, so a replication of a million channels moves the display while it runs rather
//! than only when it is done. It also counts the replications that are over.
//!
//! Nothing in a run reads it back: it is written, never consulted, so results cannot
//! depend on it or on when a display looks at it.

use std::sync::atomic::{AtomicU64, Ordering};

use super::time::SimDuration;

/// Simulated time reached, summed over every replication of a run.
#[derive(Debug, Default)]
pub struct Progress {
    reached: AtomicU64,
    finished: AtomicU64,
}

impl Progress {
    pub fn new() -> Progress {
        Progress::default()
    }

    /// Records that one replication advanced by `by` more simulated time.
    pub fn advance(&self, by: SimDuration) {
        if by.as_nanos() > 0 {
            let add = |t: u64| Some(t.saturating_add(by.as_nanos()));
            let _ = self.reached.fetch_update(Ordering::Relaxed, Ordering::Relaxed, add);
        }
    }

    /// Records that one more replication is over, whether it succeeded or not.
    pub fn finish(&self) {
        self.finished.fetch_add(1, Ordering::Relaxed);
    }

    /// Replications over so far.
    pub fn finished(&self) -> u64 {
        self.finished.load(Ordering::Relaxed)
    }

    /// Simulated time reached so far, over every replication; a finished replication
    /// counts its whole horizon.
    pub fn reached(&self) -> SimDuration {
        SimDuration(self.reached.load(Ordering::Relaxed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advances_add_up_and_saturate_rather_than_wrap() {
        let p = Progress::new();
        p.advance(SimDuration::from_millis(3));
        p.advance(SimDuration::from_millis(4));
        assert_eq!(p.reached(), SimDuration::from_millis(7));
        p.advance(SimDuration(u64::MAX));
        assert_eq!(p.reached(), SimDuration(u64::MAX));
    }
}
