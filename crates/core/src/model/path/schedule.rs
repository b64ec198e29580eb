//! The timed part of a path: RTT changes and blackouts, resolved to absolute times and
//! looked up by binary search, so a schedule of any length costs O(log n) per packet and
//! nothing per client.

use super::config::PathConfig;
use crate::engine::time::{SimDuration, SimTime};

/// A blackout as a half-open window `[start, end)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub start: SimTime,
    pub end: SimTime,
}

/// RTT changes and blackouts of one path, immutable and shareable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathSchedule {
    base_rtt: SimDuration,
    /// (at, rtt), strictly increasing `at`.
    rtt_changes: Box<[(SimTime, SimDuration)]>,
    /// Non-empty, sorted, disjoint and non-adjacent windows.
    blackouts: Box<[Window]>,
}

impl PathSchedule {
    /// Assumes `config` is validated. Back-to-back blackouts are merged into one window,
    /// so "when does the link come back" has one answer; empty ones are dropped.
    pub fn new(config: &PathConfig) -> PathSchedule {
        let rtt_changes = config.rtt_change.iter().map(|c| (SimTime(c.at.0), c.rtt)).collect();
        let mut blackouts: Vec<Window> = Vec::with_capacity(config.blackout.len());
        for b in &config.blackout {
            let w = Window { start: SimTime(b.at.0), end: SimTime(b.at.0).saturating_add(b.duration) };
            if w.end == w.start {
                continue;
            }
            match blackouts.last_mut() {
                Some(last) if w.start <= last.end => last.end = last.end.max(w.end),
                _ => blackouts.push(w),
            }
        }
        PathSchedule { base_rtt: config.base_rtt, rtt_changes, blackouts: blackouts.into_boxed_slice() }
    }

    /// The base RTT in force at `t`: the last change at or before `t`, else `base_rtt`.
    pub fn base_rtt_at(&self, t: SimTime) -> SimDuration {
        let i = self.rtt_changes.partition_point(|&(at, _)| at <= t);
        if i == 0 { self.base_rtt } else { self.rtt_changes[i - 1].1 }
    }

    /// The blackout window containing `t` or, failing that, the next one after `t`.
    fn window_from(&self, t: SimTime) -> Option<&Window> {
        let i = self.blackouts.partition_point(|w| w.end <= t);
        self.blackouts.get(i)
    }

    /// Whether packets sent at `t` are lost to a blackout.
    pub fn in_blackout(&self, t: SimTime) -> bool {
        self.window_from(t).is_some_and(|w| w.start <= t)
    }

    /// When the link next comes back, seen from `t`: the end of the blackout containing
    /// `t`, else the end of the next blackout, else `None`. For "recovery lag" (link back
    /// → first successful retransmission).
    pub fn blackout_end_after(&self, t: SimTime) -> Option<SimTime> {
        self.window_from(t).map(|w| w.end)
    }

    /// All blackouts as merged windows, in time order.
    pub fn blackouts(&self) -> &[Window] {
        &self.blackouts
    }

    /// All RTT changes as (at, new rtt), in time order; the RTT before the first is
    /// `base_rtt_at(SimTime::ZERO)` unless a change is at 0.
    pub fn rtt_changes(&self) -> &[(SimTime, SimDuration)] {
        &self.rtt_changes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::path::config::{Blackout, RttChange};

    fn s(n: u64) -> SimDuration {
        SimDuration::from_secs(n)
    }

    fn at(secs: u64) -> SimTime {
        SimTime(s(secs).0)
    }

    fn config() -> PathConfig {
        let mut c = PathConfig::new(SimDuration::from_millis(100));
        c.rtt_change = vec![
            RttChange { at: s(20), rtt: SimDuration::from_millis(400) },
            RttChange { at: s(50), rtt: SimDuration::from_millis(50) },
        ];
        c.blackout = vec![
            Blackout { at: s(10), duration: s(5) },
            Blackout { at: s(15), duration: s(5) }, // back to back with the first: merged
            Blackout { at: s(30), duration: SimDuration::ZERO }, // empty: dropped
            Blackout { at: s(40), duration: s(1) },
        ];
        assert!(c.validate().is_empty());
        c
    }

    #[test]
    fn base_rtt_changes_exactly_at_each_change() {
        let sch = PathSchedule::new(&config());
        let ms = SimDuration::from_millis;
        assert_eq!(sch.base_rtt_at(SimTime::ZERO), ms(100));
        assert_eq!(sch.base_rtt_at(SimTime(at(20).0 - 1)), ms(100));
        assert_eq!(sch.base_rtt_at(at(20)), ms(400));
        assert_eq!(sch.base_rtt_at(SimTime(at(50).0 - 1)), ms(400));
        assert_eq!(sch.base_rtt_at(at(50)), ms(50));
        assert_eq!(sch.base_rtt_at(SimTime::MAX), ms(50));
    }

    #[test]
    fn back_to_back_blackouts_merge_and_empty_ones_vanish() {
        let sch = PathSchedule::new(&config());
        assert_eq!(sch.blackouts(), &[Window { start: at(10), end: at(20) }, Window { start: at(40), end: at(41) }]);
        assert!(!sch.in_blackout(at(30)));
    }

    #[test]
    fn blackout_windows_are_half_open() {
        let sch = PathSchedule::new(&config());
        assert!(!sch.in_blackout(SimTime(at(10).0 - 1)));
        assert!(sch.in_blackout(at(10)));
        assert!(sch.in_blackout(at(15)));
        assert!(sch.in_blackout(SimTime(at(20).0 - 1)));
        assert!(!sch.in_blackout(at(20)));
        assert!(sch.in_blackout(at(40)));
        assert!(!sch.in_blackout(at(41)));
    }

    #[test]
    fn blackout_end_after_gives_the_current_or_next_link_return() {
        let sch = PathSchedule::new(&config());
        assert_eq!(sch.blackout_end_after(SimTime::ZERO), Some(at(20)));
        assert_eq!(sch.blackout_end_after(at(12)), Some(at(20)));
        assert_eq!(sch.blackout_end_after(at(20)), Some(at(41)));
        assert_eq!(sch.blackout_end_after(at(41)), None);
    }
}
