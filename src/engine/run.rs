//! The run loop: pops events in (time, insertion) order and hands them to a world.
//!
//! Ordering contract: events at equal times are handled in the order they were
//! scheduled (the queue's FIFO tie-break), so a run is a pure function of the world's
//! initial state and its random streams. A run ends normally when the queue is empty
//! or the next event lies beyond the horizon (events exactly at the horizon are still
//! handled). Exceeding the event budget ends it with an error naming the budget and the
//! simulated time reached, never with a hang.

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
}

pub fn run<W: World>(world: &mut W, sched: &mut Scheduler<W::Event>, max_events: u64) -> Result<RunStats, EngineError> {
    let mut events = 0u64;
    while let Some((at, event)) = sched.queue.pop() {
        if events == max_events {
            return Err(EngineError::EventBudget { limit: max_events, at });
        }
        if events.is_multiple_of(crate::interrupt::CHECK_EVERY) && crate::interrupt::requested() {
            return Err(EngineError::Interrupted { at });
        }
        events += 1;
        sched.now = at;
        world.handle(event, sched);
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
    fn equal_times_are_handled_in_scheduling_order() {
        let mut w = Echo { seen: vec![], respawn: 0 };
        let mut s = Scheduler::new(SimTime(u64::MAX));
        for e in [3, 1, 2] {
            s.at(SimTime(5), e);
        }
        s.at(SimTime(1), 9);
        run(&mut w, &mut s, 100).unwrap();
        assert_eq!(w.seen, vec![(SimTime(1), 9), (SimTime(5), 3), (SimTime(5), 1), (SimTime(5), 2)]);
    }

    #[test]
    fn events_beyond_the_horizon_are_never_handled() {
        let mut w = Echo { seen: vec![], respawn: 10 };
        let mut s = Scheduler::new(SimTime(25_000_000));
        s.at(SimTime(0), 0);
        let stats = run(&mut w, &mut s, 100).unwrap();
        // 0 ms, 10 ms, 20 ms; the event at 30 ms lies beyond the 25 ms horizon.
        assert_eq!(stats.events, 3);
        assert_eq!(stats.end, SimTime(20_000_000));
    }

    #[test]
    fn exceeding_the_event_budget_is_an_error_not_a_hang() {
        let mut w = Echo { seen: vec![], respawn: u32::MAX };
        let mut s = Scheduler::new(SimTime::MAX);
        s.at(SimTime(0), 0);
        let err = run(&mut w, &mut s, 1000).unwrap_err();
        assert_eq!(err, EngineError::EventBudget { limit: 1000, at: SimTime(10_000_000_000) });
        assert!(err.to_string().contains("max_events"));
    }
}
