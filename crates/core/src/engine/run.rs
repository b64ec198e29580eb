//! The run loop: pops events in (time, insertion) order and hands them to a world.
//!
//! Ordering contract: events at equal times are handled in the order they were
//! scheduled (the queue's FIFO tie-break), so a run is a pure function of the world's
//! initial state and its random streams. A run ends normally when the queue is empty
//! or the next event lies beyond the horizon (events exactly at the horizon are still
//! handled). Exceeding the event budget ends it with an error naming the budget and the
//! simulated time reached, never with a hang.

use super::budget::{Budget, RunBudget};
use super::queue::EventQueue;
use super::time::{SimDuration, SimTime};

/// Where scheduled events go; handed to the world on every event.
pub struct Scheduler<E> {
    queue: EventQueue<E>,
    now: SimTime,
    horizon: SimTime,
}

impl<E> Scheduler<E> {
    pub fn new(horizon: SimTime) -> Self {
        Scheduler { queue: EventQueue::new(), now: SimTime::ZERO, horizon }
    }

    pub fn now(&self) -> SimTime {
        self.now
    }

    pub fn horizon(&self) -> SimTime {
        self.horizon
    }

    /// Schedules `event` at `at`; an event beyond the horizon is dropped at once, since
    /// it could never be handled and would only cost memory.
    pub fn at(&mut self, at: SimTime, event: E) {
        debug_assert!(at >= self.now, "event scheduled in the past");
        if at <= self.horizon {
            self.queue.push(at.max(self.now), event);
        }
    }

    pub fn after(&mut self, delay: SimDuration, event: E) {
        let at = self.now.saturating_add(delay);
        self.at(at, event);
    }

    pub fn pending(&self) -> usize {
        self.queue.len()
    }
}

/// A simulated system: it reacts to its own events and schedules more.
pub trait World {
    type Event;
    fn handle(&mut self, event: Self::Event, sched: &mut Scheduler<Self::Event>);
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunStats {
    pub events: u64,
    /// Time of the last event handled.
    pub end: SimTime,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    #[error(
        "the run exceeded its event budget of {limit} events at simulated time {at}: raise `max_events` or shorten `horizon`"
    )]
    EventBudget { limit: u64, at: SimTime },
    #[error("interrupted at simulated time {at}")]
    Interrupted { at: SimTime },
    #[error(
        "the run exceeded its total event budget of {limit} events, over all its replications: raise `--max-events`, \
         or make the run smaller (fewer or smaller replications, sweep cells or variants)"
    )]
    RunBudget { limit: u64 },
}

/// Events between two looks at the budgets, the progress and the stop: about a
/// millisecond of simulation.
pub const CHECK_EVERY: u64 = 1 << 14;

pub fn run<W: World>(
    world: &mut W,
    sched: &mut Scheduler<W::Event>,
    budget: Budget<'_>,
) -> Result<RunStats, EngineError> {
    let over = |run: &RunBudget| EngineError::RunBudget { limit: run.limit() };
    let mut events = 0u64;
    // Events already added to the run's account, and simulated time to the progress.
    let mut accounted = 0u64;
    let mut published = SimTime::ZERO;
    while let Some((at, event)) = sched.queue.pop() {
        if events == budget.replication {
            return Err(EngineError::EventBudget { limit: budget.replication, at });
        }
        if events.is_multiple_of(CHECK_EVERY) {
            if (budget.stop)() {
                return Err(EngineError::Interrupted { at });
            }
            if let Some(run) = budget.run {
                if !run.spend(events - accounted) {
                    return Err(over(run));
                }
                accounted = events;
            }
            if let Some(progress) = budget.progress {
                let reached = at.min(sched.horizon);
                progress.advance(reached.saturating_since(published));
                published = reached;
            }
        }
        events += 1;
        sched.now = at;
        world.handle(event, sched);
    }
    if let Some(run) = budget.run
        && !run.spend(events - accounted)
    {
        return Err(over(run));
    }
    // Over: nothing is left before the horizon, so the replication counts whole.
    if let Some(progress) = budget.progress {
        progress.advance(sched.horizon.saturating_since(published));
    }
    Ok(RunStats { events, end: sched.now })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A world that records what it sees and reschedules itself a fixed number of times.
    struct Echo {
        seen: Vec<(SimTime, u32)>,
        respawn: u32,
    }

    impl World for Echo {
        type Event = u32;
        fn handle(&mut self, event: u32, sched: &mut Scheduler<u32>) {
            self.seen.push((sched.now(), event));
            if self.respawn > 0 {
                self.respawn -= 1;
                sched.after(SimDuration::from_millis(10), event + 100);
            }
        }
    }

    #[test]
    fn a_stop_asked_by_the_caller_ends_the_replication_at_the_next_check() {
        fn always() -> bool {
            true
        }
        let mut w = Echo { seen: vec![], respawn: 5 };
        let mut s = Scheduler::new(SimTime(u64::MAX));
        s.at(SimTime(7), 1);
        let budget = Budget { stop: always, ..Budget::replication(100) };
        assert_eq!(run(&mut w, &mut s, budget).unwrap_err(), EngineError::Interrupted { at: SimTime(7) });
        assert!(w.seen.is_empty(), "an event was handled after the stop");
    }

    #[test]
    fn equal_times_are_handled_in_scheduling_order() {
        let mut w = Echo { seen: vec![], respawn: 0 };
        let mut s = Scheduler::new(SimTime(u64::MAX));
        for e in [3, 1, 2] {
            s.at(SimTime(5), e);
        }
        s.at(SimTime(1), 9);
        run(&mut w, &mut s, Budget::replication(100)).unwrap();
        assert_eq!(w.seen, vec![(SimTime(1), 9), (SimTime(5), 3), (SimTime(5), 1), (SimTime(5), 2)]);
    }

    #[test]
    fn events_beyond_the_horizon_are_never_handled() {
        let mut w = Echo { seen: vec![], respawn: 10 };
        let mut s = Scheduler::new(SimTime(25_000_000));
        s.at(SimTime(0), 0);
        let stats = run(&mut w, &mut s, Budget::replication(100)).unwrap();
        // 0 ms, 10 ms, 20 ms; the event at 30 ms lies beyond the 25 ms horizon.
        assert_eq!(stats.events, 3);
        assert_eq!(stats.end, SimTime(20_000_000));
    }

    #[test]
    fn exceeding_the_event_budget_is_an_error_not_a_hang() {
        let mut w = Echo { seen: vec![], respawn: u32::MAX };
        let mut s = Scheduler::new(SimTime::MAX);
        s.at(SimTime(0), 0);
        let err = run(&mut w, &mut s, Budget::replication(1000)).unwrap_err();
        assert_eq!(err, EngineError::EventBudget { limit: 1000, at: SimTime(10_000_000_000) });
        assert!(err.to_string().contains("max_events"));
    }

    #[test]
    fn replications_sharing_a_run_budget_fail_once_their_sum_exceeds_it() {
        let run_of = |respawn: u32, shared: &RunBudget| {
            let mut w = Echo { seen: vec![], respawn };
            let mut s = Scheduler::new(SimTime::MAX);
            s.at(SimTime(0), 0);
            run(
                &mut w,
                &mut s,
                Budget { replication: u64::MAX, run: Some(shared), progress: None, stop: crate::engine::budget::never },
            )
        };
        // Two replications of 40,000 events each: 80,000 in all.
        let enough = RunBudget::new(80_000);
        assert_eq!(run_of(39_999, &enough).unwrap().events, 40_000);
        assert_eq!(run_of(39_999, &enough).unwrap().events, 40_000);
        assert_eq!(enough.spent(), 80_000, "the account holds exactly what was handled");
        let short = RunBudget::new(79_999);
        assert!(run_of(39_999, &short).is_ok());
        let err = run_of(39_999, &short).unwrap_err();
        assert_eq!(err, EngineError::RunBudget { limit: 79_999 });
        assert!(err.to_string().contains("--max-events"), "{err}");
        // A replication that starts once the run is over budget stops at its first check.
        assert_eq!(run_of(5, &short).unwrap_err(), EngineError::RunBudget { limit: 79_999 });
    }

    #[test]
    fn a_replication_of_exactly_a_multiple_of_the_check_interval_is_accounted_whole() {
        let n = CHECK_EVERY * 2;
        let shared = RunBudget::new(u64::MAX);
        let mut w = Echo { seen: vec![], respawn: n as u32 - 1 };
        let mut s = Scheduler::new(SimTime::MAX);
        s.at(SimTime(0), 0);
        run(
            &mut w,
            &mut s,
            Budget { replication: u64::MAX, run: Some(&shared), progress: None, stop: crate::engine::budget::never },
        )
        .unwrap();
        assert_eq!(shared.spent(), n);
    }

    /// An `Echo` that also notes, at every event, the simulated time the run has
    /// published so far.
    struct Watch<'p> {
        progress: &'p crate::engine::progress::Progress,
        seen: Vec<(SimTime, SimDuration)>,
    }

    impl World for Watch<'_> {
        type Event = u32;
        fn handle(&mut self, event: u32, sched: &mut Scheduler<u32>) {
            self.seen.push((sched.now(), self.progress.reached()));
            sched.after(SimDuration::from_millis(1), event);
        }
    }

    #[test]
    fn a_replication_publishes_the_time_it_reached_while_it_runs_and_its_horizon_when_over() {
        use crate::engine::progress::Progress;
        let horizon = SimTime(50_000_000_000);
        let run_with = |progress: &Progress| {
            let mut w = Watch { progress, seen: vec![] };
            let mut s = Scheduler::new(horizon);
            s.at(SimTime(0), 0);
            let stats = run(
                &mut w,
                &mut s,
                Budget {
                    replication: u64::MAX,
                    run: None,
                    progress: Some(progress),
                    stop: crate::engine::budget::never,
                },
            );
            (stats.unwrap(), w.seen)
        };
        let progress = Progress::new();
        let (stats, seen) = run_with(&progress);
        // Published at every CHECK_EVERY-th event: the event then due, at 1 ms apart.
        let first = seen.iter().find(|(_, reached)| *reached > SimDuration::ZERO).expect("published during the run");
        let check = CHECK_EVERY;
        assert_eq!(first.1, SimDuration::from_millis(check), "{first:?}");
        assert!(first.0 < horizon, "seen before the run ended");
        assert_eq!(progress.reached(), SimDuration(horizon.0), "a finished replication counts whole");
        // Publishing is write-only: the same run without it handles the same events.
        let unwritten = Progress::new();
        let mut w = Watch { progress: &unwritten, seen: vec![] };
        let mut s = Scheduler::new(horizon);
        s.at(SimTime(0), 0);
        let plain = run(&mut w, &mut s, Budget::replication(u64::MAX)).unwrap();
        assert_eq!(w.seen.iter().map(|e| e.0).collect::<Vec<_>>(), seen.iter().map(|e| e.0).collect::<Vec<_>>());
        assert_eq!((plain.events, plain.end), (stats.events, stats.end));
    }
}
