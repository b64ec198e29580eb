//! The server's down times, resolved to absolute half-open windows. Lookups by time are
//! binary searches; the server's own walk through them (arrivals come in time order) is a
//! cursor, O(1) amortized per call.

use super::config::ServerConfig;
use crate::engine::time::{SimDuration, SimTime};

/// Why the server is down.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DownKind {
    /// Every open connection is dropped at `start`.
    Restart,
    /// Open connections survive; handshakes in progress are lost.
    Outage,
}

/// The server is down in `[start, end)`. A restart with `down = "0s"` is an empty window:
/// it drops connections and empties the queue, but no SYN ever finds the server down.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DownWindow {
    pub start: SimTime,
    pub end: SimTime,
    pub kind: DownKind,
}

/// Restarts and outages of one server, immutable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerSchedule {
    /// Sorted by start; disjoint (back to back allowed); empty outages removed.
    windows: Box<[DownWindow]>,
    /// Restart times, increasing.
    restarts: Box<[SimTime]>,
    /// For each i in 0..=windows.len(): the first restart among windows[i..], so the
    /// server's cursor finds the next restart in O(1).
    next_restart: Box<[Option<SimTime>]>,
}

impl ServerSchedule {
    /// Assumes `config` is validated. On an invalid one (overlaps) it does not panic, but
    /// which window a time belongs to is not specified.
    pub fn new(config: &ServerConfig) -> ServerSchedule {
        let window = |at: SimDuration, len: SimDuration, kind| DownWindow {
            start: SimTime(at.0),
            end: SimTime(at.0).saturating_add(len),
            kind,
        };
        let mut windows: Vec<DownWindow> = (config.restart.iter())
            .map(|r| window(r.at, r.down, DownKind::Restart))
            .chain(
                (config.outage.iter())
                    .filter(|o| o.duration > SimDuration::ZERO)
                    .map(|o| window(o.at, o.duration, DownKind::Outage)),
            )
            .collect();
        windows.sort_by_key(|w| w.start); // stable: the config's order breaks ties
        let mut restarts: Vec<SimTime> = config.restart.iter().map(|r| SimTime(r.at.0)).collect();
        restarts.sort();
        let mut next_restart = vec![None; windows.len() + 1];
        for (i, w) in windows.iter().enumerate().rev() {
            next_restart[i] = match w.kind {
                DownKind::Restart => Some(w.start),
                DownKind::Outage => next_restart[i + 1],
            };
        }
        ServerSchedule {
            windows: windows.into_boxed_slice(),
            restarts: restarts.into_boxed_slice(),
            next_restart: next_restart.into_boxed_slice(),
        }
    }

    pub fn windows(&self) -> &[DownWindow] {
        &self.windows
    }

    pub fn restarts(&self) -> &[SimTime] {
        &self.restarts
    }

    /// The number of windows that have begun at `t` (start ≤ t).
    pub(super) fn begun_at(&self, t: SimTime) -> usize {
        self.windows.partition_point(|w| w.start <= t)
    }

    /// The window containing `t`, if the server is down at `t`.
    pub fn down_at(&self, t: SimTime) -> Option<&DownWindow> {
        self.window_containing(self.begun_at(t), t)
    }

    /// With `begun` windows begun at `t`, the one containing `t`: only the last begun
    /// window can, since they are disjoint and sorted.
    pub(super) fn window_containing(&self, begun: usize, t: SimTime) -> Option<&DownWindow> {
        let last = self.windows.get(begun.checked_sub(1)?)?;
        (t < last.end).then_some(last)
    }

    pub(super) fn window(&self, i: usize) -> Option<&DownWindow> {
        self.windows.get(i)
    }

    /// With `begun` windows begun at some time t, the first restart after t.
    pub(super) fn restart_from(&self, begun: usize) -> Option<SimTime> {
        self.next_restart.get(begun).copied().flatten()
    }

    /// The first restart strictly after `t`.
    pub fn restart_after(&self, t: SimTime) -> Option<SimTime> {
        let i = self.restarts.partition_point(|&r| r <= t);
        self.restarts.get(i).copied()
    }

    /// The server's first up period after being down: from the end of the first window
    /// with any length (or of the windows back to back with it: an outage right after a
    /// restart keeps the server down) to the start of the next window with any length,
    /// or `SimTime::MAX`. `None` when it is never down.
    pub fn first_up(&self) -> Option<(SimTime, SimTime)> {
        let first = self.windows.iter().position(|w| w.end > w.start)?;
        let mut back = self.windows[first].end;
        let mut until = SimTime::MAX;
        for w in &self.windows[first + 1..] {
            if w.start <= back {
                back = back.max(w.end);
            } else if w.end > w.start {
                until = w.start;
                break;
            }
        }
        Some((back, until))
    }

    /// Bytes on the heap: fixed at construction, whatever the number of calls.
    pub fn heap_bytes(&self) -> usize {
        std::mem::size_of_val(&*self.windows)
            + std::mem::size_of_val(&*self.restarts)
            + std::mem::size_of_val(&*self.next_restart)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::server::config::{Outage, Restart};

    fn at(secs: u64) -> SimTime {
        SimTime(SimDuration::from_secs(secs).0)
    }

    fn schedule() -> ServerSchedule {
        let s = SimDuration::from_secs;
        let c = ServerConfig {
            restart: vec![Restart { at: s(10), down: s(30) }, Restart { at: s(50), down: s(0) }],
            outage: vec![Outage { at: s(40), duration: s(5) }, Outage { at: s(60), duration: s(0) }],
            ..ServerConfig::default()
        };
        assert!(c.validate().is_empty());
        ServerSchedule::new(&c)
    }

    #[test]
    fn windows_are_sorted_across_kinds_and_empty_outages_vanish() {
        let sch = schedule();
        let w = |a, b, kind| DownWindow { start: at(a), end: at(b), kind };
        assert_eq!(
            sch.windows(),
            &[w(10, 40, DownKind::Restart), w(40, 45, DownKind::Outage), w(50, 50, DownKind::Restart)]
        );
        assert_eq!(sch.restarts(), &[at(10), at(50)]);
    }

    #[test]
    fn down_windows_are_half_open_and_empty_ones_never_down() {
        let sch = schedule();
        let down = |t: SimTime| sch.down_at(t).map(|w| w.kind);
        assert_eq!(down(SimTime(at(10).0 - 1)), None);
        assert_eq!(down(at(10)), Some(DownKind::Restart));
        assert_eq!(down(SimTime(at(40).0 - 1)), Some(DownKind::Restart));
        assert_eq!(down(at(40)), Some(DownKind::Outage)); // back to back
        assert_eq!(down(at(45)), None);
        assert_eq!(down(at(50)), None);
        assert_eq!(down(at(60)), None);
    }

    #[test]
    fn the_first_up_period_runs_from_the_end_of_back_to_back_windows_to_the_next() {
        // Restart at 10 s down 30 s, then an outage from 40 s to 45 s: up from 45 s; the
        // restart at 50 s has no down time, so the server stays up.
        assert_eq!(schedule().first_up(), Some((at(45), SimTime::MAX)));
        let s = SimDuration::from_secs;
        let c = ServerConfig {
            restart: vec![Restart { at: s(5), down: s(0) }, Restart { at: s(10), down: s(2) }],
            outage: vec![Outage { at: s(30), duration: s(5) }],
            ..ServerConfig::default()
        };
        assert_eq!(ServerSchedule::new(&c).first_up(), Some((at(12), at(30))));
        let c = ServerConfig { restart: vec![Restart { at: s(5), down: s(0) }], ..ServerConfig::default() };
        assert_eq!(ServerSchedule::new(&c).first_up(), None);
        assert_eq!(ServerSchedule::new(&ServerConfig::default()).first_up(), None);
    }

    #[test]
    fn restart_after_is_strictly_after() {
        let sch = schedule();
        assert_eq!(sch.restart_after(SimTime::ZERO), Some(at(10)));
        assert_eq!(sch.restart_after(at(10)), Some(at(50)));
        assert_eq!(sch.restart_after(at(50)), None);
        for t in [0, 9, 10, 11, 40, 45, 49, 50, 51] {
            let t = at(t);
            assert_eq!(sch.restart_from(sch.begun_at(t)), sch.restart_after(t), "{t}");
        }
    }
}
