//! Event budgets, enforced while the events are handled rather than estimated before:
//! one replication's (the scenario's `max_events`) and the whole run's (`run
//! --max-events`), which every replication running at once draws on.
//!
//! A replication adds what it handled to the run's account every
//! [`CHECK_EVERY`](super::run::CHECK_EVERY) events and when it ends, so the account never holds
//! more than was really handled, and holds exactly the run's total once every
//! replication is done. The run therefore fails exactly when its true total exceeds the
//! budget, whatever the thread count or the order replications finish in; only how soon
//! it notices depends on them.

use std::sync::atomic::{AtomicU64, Ordering};

use super::progress::Progress;

/// The whole run's budget, shared by its replications.
#[derive(Debug)]
pub struct RunBudget {
    limit: u64,
    spent: AtomicU64,
}

impl RunBudget {
    pub fn new(limit: u64) -> RunBudget {
        RunBudget { limit, spent: AtomicU64::new(0) }
    }

    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Records `events` more; `false` once the run has handled more than its limit.
    pub fn spend(&self, events: u64) -> bool {
        let add = |spent: u64| Some(spent.saturating_add(events));
        let before = self.spent.fetch_update(Ordering::Relaxed, Ordering::Relaxed, add).unwrap_or(u64::MAX);
        before.saturating_add(events) <= self.limit
    }

    /// Whether the run has already handled more than its limit.
    pub fn exceeded(&self) -> bool {
        self.spent.load(Ordering::Relaxed) > self.limit
    }

    /// Events handled so far, over every replication.
    pub fn spent(&self) -> u64 {
        self.spent.load(Ordering::Relaxed)
    }
}

/// What one replication may handle.
#[derive(Clone, Copy, Debug)]
pub struct Budget<'a> {
    /// Events of this replication (the scenario's `max_events`).
    pub replication: u64,
    /// The run it belongs to, if the run has a budget of its own.
    pub run: Option<&'a RunBudget>,
    /// Where the replication says how far it has got, for a display; it never reads it.
    pub progress: Option<&'a Progress>,
    /// Whether whoever runs the replication wants it to stop (a Ctrl-C), asked every
    /// [`CHECK_EVERY`](super::run::CHECK_EVERY) events. The engine owns no signal
    /// handling: the caller decides what a stop is.
    pub stop: fn() -> bool,
}

/// A stop that is never asked for.
pub fn never() -> bool {
    false
}

impl Budget<'static> {
    /// A replication on its own, held to `max_events` alone.
    pub fn replication(max_events: u64) -> Budget<'static> {
        Budget { replication: max_events, run: None, progress: None, stop: never }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_exceeds_its_budget_only_past_the_limit() {
        let b = RunBudget::new(10);
        assert!(b.spend(4));
        assert!(b.spend(6), "exactly the limit is within it");
        assert!(!b.exceeded());
        assert!(!b.spend(1));
        assert!(b.exceeded());
        assert_eq!(b.spent(), 11);
    }

    #[test]
    fn spending_never_wraps() {
        let b = RunBudget::new(u64::MAX - 1);
        assert!(b.spend(u64::MAX - 2));
        assert!(!b.spend(5), "a sum beyond u64 is beyond every limit below it");
        assert!(b.exceeded(), "and stays so: the account saturates rather than wraps");
        assert_eq!(b.spent(), u64::MAX);
    }
}
