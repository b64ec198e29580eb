//! Scripted path events (`[[path.event]]`): deterministic drops, delays and duplicates of
//! chosen packets, and signals to the sender (an ICMP unreachable), so that a timeline
//! written for packetdrill can be replayed as a scenario.
//!
//! Packets are counted per connection and per direction, from 1, in the order they are
//! sent (a burst sent at one instant is counted in send order), whatever happens to them
//! afterwards: a packet lost to random loss or a blackout still takes its number. So
//! every client of a scenario meets the same script.
//!
//! The script takes no random draws: a path with events draws exactly what the same path
//! without them draws (the draw contract in the module above).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::Direction;
use super::schedule::Window;
use crate::engine::time::{SimDuration, SimTime};
use crate::model::config_error::ConfigErrors;

/// One `[[path.event]]` as written.
///
/// ```toml
/// [[path.event]]
/// kind = "drop"
/// direction = "forward"
/// nth = 3
/// ```
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum PathEvent {
    /// Drops packets `nth` to `nth + count - 1` of a direction, or every packet sent in
    /// `[at, at + duration)` in that direction (a one-way blackout).
    Drop {
        #[serde(default = "forward")]
        direction: Direction,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        nth: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        count: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        at: Option<SimDuration>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        duration: Option<SimDuration>,
    },
    /// Packet `nth` of a direction arrives `by` later than it would have; the way to
    /// reorder it behind the packets sent after it.
    Delay {
        #[serde(default = "forward")]
        direction: Direction,
        nth: u64,
        by: SimDuration,
    },
    /// Packet `nth` of a direction arrives twice, the copy right behind the original.
    Duplicate {
        #[serde(default = "forward")]
        direction: Direction,
        nth: u64,
    },
    /// Without `duration`: a router answers the connection's oldest outstanding segment
    /// with an ICMP destination unreachable (net or host), delivered to the sender at `at`.
    /// With `duration`: a router that cannot forward answers every forward packet sent in
    /// `[at, at + duration)`, dropping it and quoting it in an unreachable that reaches
    /// the sender one base RTT after the send (RFC 6069 section 4's outage).
    IcmpUnreachable {
        at: SimDuration,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        duration: Option<SimDuration>,
    },
    /// The sender's own queue refuses what it transmits in `[at, at + duration)`: the
    /// packets never reach the path (local congestion, `tcp_retransmit_skb` > 0).
    LocalDrop { at: SimDuration, duration: SimDuration },
}

fn forward() -> Direction {
    Direction::Forward
}

impl PathEvent {
    /// Whether the event counts packets, which makes the count client state.
    fn counts(&self) -> bool {
        matches!(self, PathEvent::Drop { nth: Some(_), .. } | PathEvent::Delay { .. } | PathEvent::Duplicate { .. })
    }

    /// The kinds only a world with a TCP sender can act on.
    pub fn needs_tcp(&self) -> bool {
        matches!(self, PathEvent::Duplicate { .. } | PathEvent::IcmpUnreachable { .. } | PathEvent::LocalDrop { .. })
    }

    pub fn kind(&self) -> &'static str {
        match self {
            PathEvent::Drop { .. } => "drop",
            PathEvent::Delay { .. } => "delay",
            PathEvent::Duplicate { .. } => "duplicate",
            PathEvent::IcmpUnreachable { .. } => "icmp-unreachable",
            PathEvent::LocalDrop { .. } => "local-drop",
        }
    }

    /// Checks the type system cannot make; keys relative to this event.
    pub fn validate(&self) -> ConfigErrors {
        let mut errors = ConfigErrors::new();
        let nth_at_least_one = |errors: &mut ConfigErrors, nth: u64| {
            if nth == 0 {
                errors.push("nth", "must be at least 1: packets are counted from 1 in send order");
            }
        };
        match *self {
            PathEvent::Drop { nth, count, at, duration, .. } => match (nth, at) {
                (Some(_), Some(_)) => errors.push(
                    "at",
                    "a drop names packets either by number (`nth`, `count`) or by send time (`at`, `duration`), \
                     not both",
                ),
                (None, None) => errors.push(
                    "",
                    "a drop needs `nth` (the packet's number in its direction, from 1) or `at` and `duration` \
                     (a window of send times)",
                ),
                (Some(nth), None) => {
                    nth_at_least_one(&mut errors, nth);
                    if count == Some(0) {
                        errors.push("count", "must be at least 1 (it defaults to 1)");
                    }
                    if duration.is_some() {
                        errors.push("duration", "goes with `at`; with `nth` say how many packets with `count`");
                    }
                }
                (None, Some(_)) => {
                    if count.is_some() {
                        errors.push("count", "goes with `nth`; with `at` say how long with `duration`");
                    }
                    match duration {
                        None => errors.push("duration", "missing: a drop at a time needs how long it lasts"),
                        Some(d) if d == SimDuration::ZERO => {
                            errors.push("duration", "must be longer than 0s: the window is [at, at + duration)")
                        }
                        Some(_) => {}
                    }
                }
            },
            PathEvent::Delay { nth, by, .. } => {
                nth_at_least_one(&mut errors, nth);
                if by == SimDuration::ZERO {
                    errors.push("by", "must be longer than 0s");
                }
            }
            PathEvent::Duplicate { nth, .. } => nth_at_least_one(&mut errors, nth),
            PathEvent::IcmpUnreachable { duration, .. } => {
                if duration == Some(SimDuration::ZERO) {
                    errors.push(
                        "duration",
                        "must be longer than 0s: the router answers packets sent in [at, at + duration); \
                         leave it out for one message at `at`",
                    );
                }
            }
            PathEvent::LocalDrop { duration, .. } => {
                if duration == SimDuration::ZERO {
                    errors.push("duration", "must be longer than 0s: the window is [at, at + duration)");
                }
            }
        }
        errors
    }
}

/// What the script does to one packet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fate {
    pub drop: bool,
    pub delay: SimDuration,
    pub duplicate: bool,
}

/// Intervals sorted and merged where they overlap or touch, so that whether one holds a
/// point is a binary search however many a scenario writes. `inclusive` says whether an
/// interval holds its end (packet numbers) or not (half-open time windows).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Spans<T> {
    spans: Vec<(T, T)>,
    inclusive: bool,
}

impl<T: Copy + Ord> Spans<T> {
    fn new(mut spans: Vec<(T, T)>, inclusive: bool, touches: impl Fn(T, T) -> bool) -> Self {
        spans.sort_unstable();
        let mut merged: Vec<(T, T)> = Vec::with_capacity(spans.len());
        for (start, end) in spans {
            match merged.last_mut() {
                Some(last) if touches(last.1, start) => last.1 = last.1.max(end),
                _ => merged.push((start, end)),
            }
        }
        Spans { spans: merged, inclusive }
    }

    fn contains(&self, x: T) -> bool {
        let k = self.spans.partition_point(|&(start, _)| start <= x);
        k > 0 && {
            let end = self.spans[k - 1].1;
            x < end || (self.inclusive && x == end)
        }
    }

    fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }
}

/// Half-open windows of time, `[start, end)`.
fn windows(w: Vec<Window>) -> Spans<SimTime> {
    Spans::new(w.into_iter().map(|w| (w.start, w.end)).collect(), false, |end, start| start <= end)
}

/// Inclusive ranges of packet numbers, `[first, last]`.
fn numbers(r: Vec<(u64, u64)>) -> Spans<u64> {
    Spans::new(r, true, |last, first| first <= last.saturating_add(1))
}

/// The events of one direction, resolved and indexed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct DirectionScript {
    drops: Spans<u64>,
    windows: Spans<SimTime>,
    /// Packet number → the delays scripted for it, added up.
    delays: BTreeMap<u64, SimDuration>,
    /// Sorted packet numbers.
    duplicates: Vec<u64>,
}

impl DirectionScript {
    fn is_empty(&self) -> bool {
        self.drops.is_empty() && self.windows.is_empty() && self.delays.is_empty() && self.duplicates.is_empty()
    }
}

/// A direction's events as written, before they are indexed.
#[derive(Default)]
struct Written {
    drops: Vec<(u64, u64)>,
    windows: Vec<Window>,
    delays: Vec<(u64, SimDuration)>,
    duplicates: Vec<u64>,
}

impl Written {
    fn index(self) -> DirectionScript {
        let mut delays = BTreeMap::new();
        for (nth, by) in self.delays {
            *delays.entry(nth).or_insert(SimDuration::ZERO) += by;
        }
        let mut duplicates = self.duplicates;
        duplicates.sort_unstable();
        duplicates.dedup();
        DirectionScript { drops: numbers(self.drops), windows: windows(self.windows), delays, duplicates }
    }
}

/// A path's events, resolved, indexed and shareable: a packet's fate costs a few binary
/// searches however many events the scenario writes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Script {
    directions: [DirectionScript; 2],
    /// When an ICMP unreachable reaches the sender, in time order.
    icmp: Vec<SimTime>,
    /// When the sender's own queue refuses what it sends.
    local: Spans<SimTime>,
    /// When a router drops every forward packet and answers it with an unreachable.
    answered: Spans<SimTime>,
    counts: bool,
}

impl Script {
    /// Assumes every event is validated.
    pub fn new(events: &[PathEvent]) -> Script {
        let mut written: [Written; 2] = Default::default();
        let (mut icmp, mut local, mut answered) = (Vec::new(), Vec::new(), Vec::new());
        for e in events {
            match *e {
                PathEvent::Drop { direction, nth: Some(nth), count, .. } => {
                    let last = nth.saturating_add(count.unwrap_or(1).max(1) - 1);
                    written[direction.index()].drops.push((nth, last));
                }
                PathEvent::Drop { direction, nth: None, at, duration, .. } => {
                    let start = SimTime::ZERO + at.unwrap_or_default();
                    let end = start.saturating_add(duration.unwrap_or_default());
                    written[direction.index()].windows.push(Window { start, end });
                }
                PathEvent::Delay { direction, nth, by } => written[direction.index()].delays.push((nth, by)),
                PathEvent::Duplicate { direction, nth } => written[direction.index()].duplicates.push(nth),
                PathEvent::IcmpUnreachable { at, duration: None } => icmp.push(SimTime::ZERO + at),
                PathEvent::IcmpUnreachable { at, duration: Some(duration) } => {
                    let start = SimTime::ZERO + at;
                    let window = Window { start, end: start.saturating_add(duration) };
                    // The router drops what it answers: the forward direction loses it.
                    written[Direction::Forward.index()].windows.push(window);
                    answered.push(window);
                }
                PathEvent::LocalDrop { at, duration } => {
                    let start = SimTime::ZERO + at;
                    local.push(Window { start, end: start.saturating_add(duration) });
                }
            }
        }
        icmp.sort();
        let [forward, reverse] = written;
        Script {
            directions: [forward.index(), reverse.index()],
            icmp,
            local: windows(local),
            answered: windows(answered),
            counts: events.iter().any(PathEvent::counts),
        }
    }

    /// Whether the script numbers packets (so each client needs its own count).
    pub fn counts_packets(&self) -> bool {
        self.counts
    }

    /// Whether nothing is scripted on the path itself (ICMP and local drops aside).
    pub fn is_quiet(&self) -> bool {
        self.directions.iter().all(DirectionScript::is_empty)
    }

    /// The fate of packet number `nth` (from 1) of `dir`, sent at `sent`. Drops win over
    /// everything; delays of the same packet add up.
    pub fn fate(&self, dir: Direction, nth: u64, sent: SimTime) -> Fate {
        let d = &self.directions[dir.index()];
        let drop = d.drops.contains(nth) || d.windows.contains(sent);
        let delay = d.delays.get(&nth).copied().unwrap_or_default();
        let duplicate = d.duplicates.binary_search(&nth).is_ok();
        Fate { drop, delay, duplicate }
    }

    /// When ICMP unreachables reach each connection's sender, in time order.
    pub fn icmp_unreachable(&self) -> &[SimTime] {
        &self.icmp
    }

    /// Whether a router answers a forward packet sent at `t` with an ICMP unreachable
    /// quoting it (the packet itself is lost: `fate` drops it).
    pub fn answers(&self, t: SimTime) -> bool {
        self.answered.contains(t)
    }

    /// Whether the sender's own queue refuses what it sends at `t`.
    pub fn local_drop(&self, t: SimTime) -> bool {
        self.local.contains(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_and_touching_spans_merge_and_a_lookup_is_exact_at_the_edges() {
        // Half-open windows [1, 3) [2, 5) [5, 6) [8, 9): one span [1, 6) and [8, 9).
        let w = |a: u64, b: u64| Window { start: SimTime(a), end: SimTime(b) };
        let t = windows(vec![w(8, 9), w(2, 5), w(1, 3), w(5, 6)]);
        assert_eq!(t.spans, [(SimTime(1), SimTime(6)), (SimTime(8), SimTime(9))]);
        assert_eq!(
            [0, 1, 5, 6, 7, 8, 9].map(|x| t.contains(SimTime(x))),
            [false, true, true, false, false, true, false]
        );
        // Inclusive packet numbers [3, 4] [5, 5] [9, u64::MAX]: [3, 5] and [9, MAX].
        let n = numbers(vec![(9, u64::MAX), (5, 5), (3, 4)]);
        assert_eq!(n.spans, [(3, 5), (9, u64::MAX)]);
        assert_eq!([2, 3, 5, 6, 9, u64::MAX].map(|x| n.contains(x)), [false, true, true, false, true, true]);
    }

    #[test]
    fn a_script_of_many_events_gives_each_packet_the_fate_a_scan_would() {
        // 8,000 events of every kind, looked up against the definition: a drop if any
        // range or window holds the packet, the delays of its number added up, a
        // duplicate if any event names it.
        let mut text = String::new();
        for k in 0..2000u64 {
            text += &format!("[[event]]\nkind = \"drop\"\nnth = {}\ncount = {}\n", 7 * k + 1, k % 4 + 1);
            text += &format!("[[event]]\nkind = \"drop\"\nat = \"{}ms\"\nduration = \"{}ms\"\n", 13 * k, k % 9 + 1);
            text += &format!("[[event]]\nkind = \"delay\"\nnth = {}\nby = \"{}ms\"\n", k % 997 + 1, k % 5 + 1);
            text += &format!("[[event]]\nkind = \"duplicate\"\nnth = {}\n", 3 * k + 2);
        }
        let s = Script::new(&parse(&text));
        for nth in 1..15_000u64 {
            let sent = SimTime(nth * 1_700_000);
            let k_drop = (0..2000u64).any(|k| (7 * k + 1..=7 * k + k % 4 + 1).contains(&nth))
                || (0..2000u64).any(|k| {
                    let start = 13 * k * 1_000_000;
                    (start..start + (k % 9 + 1) * 1_000_000).contains(&sent.0)
                });
            let delay: u64 = (0..2000u64).filter(|k| k % 997 + 1 == nth).map(|k| k % 5 + 1).sum();
            let duplicate = (0..2000u64).any(|k| 3 * k + 2 == nth);
            let want = Fate { drop: k_drop, delay: SimDuration::from_millis(delay), duplicate };
            assert_eq!(s.fate(Direction::Forward, nth, sent), want, "packet {nth}");
        }
    }

    fn ms(n: u64) -> SimDuration {
        SimDuration::from_millis(n)
    }

    fn parse(text: &str) -> Vec<PathEvent> {
        #[derive(Deserialize)]
        struct File {
            event: Vec<PathEvent>,
        }
        toml::from_str::<File>(text).unwrap_or_else(|e| panic!("{e}")).event
    }

    #[test]
    fn counted_drops_cover_nth_to_nth_plus_count_minus_one_in_their_direction_only() {
        let s = Script::new(&parse(
            "[[event]]\nkind = \"drop\"\nnth = 3\ncount = 2\n[[event]]\nkind = \"drop\"\ndirection = \"reverse\"\nnth = 1\n",
        ));
        let t = SimTime::ZERO;
        let dropped = |dir, n| s.fate(dir, n, t).drop;
        assert_eq!(
            (1..=6).map(|n| dropped(Direction::Forward, n)).collect::<Vec<_>>(),
            [false, false, true, true, false, false]
        );
        assert!(dropped(Direction::Reverse, 1));
        assert!(!dropped(Direction::Reverse, 3));
        assert!(s.counts_packets());
    }

    #[test]
    fn a_timed_drop_is_a_half_open_window_of_send_times() {
        let s = Script::new(&parse("[[event]]\nkind = \"drop\"\nat = \"1s\"\nduration = \"200ms\"\n"));
        let at = |n: u64| SimTime::ZERO + ms(n);
        assert!(!s.fate(Direction::Forward, 1, at(999)).drop);
        assert!(s.fate(Direction::Forward, 1, at(1000)).drop);
        assert!(s.fate(Direction::Forward, 1, SimTime(at(1200).0 - 1)).drop);
        assert!(!s.fate(Direction::Forward, 1, at(1200)).drop);
        assert!(!s.fate(Direction::Reverse, 1, at(1100)).drop, "the other direction is untouched");
        assert!(!s.counts_packets(), "a window needs no packet count");
    }

    #[test]
    fn delays_add_up_and_duplicates_mark_their_packet() {
        let s = Script::new(&parse(
            "[[event]]\nkind = \"delay\"\nnth = 2\nby = \"200ms\"\n[[event]]\nkind = \"delay\"\nnth = 2\nby = \"50ms\"\n\
             [[event]]\nkind = \"duplicate\"\ndirection = \"reverse\"\nnth = 4\n",
        ));
        assert_eq!(s.fate(Direction::Forward, 2, SimTime::ZERO).delay, ms(250));
        assert_eq!(s.fate(Direction::Forward, 3, SimTime::ZERO), Fate::default());
        assert!(s.fate(Direction::Reverse, 4, SimTime::ZERO).duplicate);
        assert!(!s.fate(Direction::Forward, 4, SimTime::ZERO).duplicate);
    }

    #[test]
    fn icmp_times_are_sorted_and_leave_the_path_quiet() {
        let s = Script::new(&parse(
            "[[event]]\nkind = \"icmp-unreachable\"\nat = \"3s\"\n[[event]]\nkind = \"icmp-unreachable\"\nat = \"1s\"\n",
        ));
        assert_eq!(s.icmp_unreachable(), &[SimTime::ZERO + ms(1000), SimTime::ZERO + ms(3000)]);
        assert!(s.is_quiet());
        assert!(!s.counts_packets());
    }

    #[test]
    fn rfc6069_section_4_an_answering_router_drops_and_answers_every_forward_packet_in_its_window() {
        // RFC 6069 section 4: during a connectivity disruption a router answers each
        // packet it cannot forward with an ICMP destination unreachable. The window is
        // half-open, covers the forward direction only, and is not a timed message.
        let s = Script::new(&parse("[[event]]\nkind = \"icmp-unreachable\"\nat = \"2s\"\nduration = \"10s\"\n"));
        let at = |n: u64| SimTime::ZERO + ms(n);
        assert_eq!([1999, 2000, 11_999, 12_000].map(|t| s.answers(at(t))), [false, true, true, false]);
        assert_eq!(
            [1999, 2000, 11_999, 12_000].map(|t| s.fate(Direction::Forward, 1, at(t)).drop),
            [false, true, true, false]
        );
        assert!(!s.fate(Direction::Reverse, 1, at(5000)).drop, "the peer's packets are not the router's to answer");
        assert!(s.icmp_unreachable().is_empty(), "no message at a fixed time");
        assert!(!s.is_quiet() && !s.counts_packets());
    }

    #[test]
    fn a_local_drop_is_a_half_open_window_on_the_sender_only() {
        let s = Script::new(&parse("[[event]]\nkind = \"local-drop\"\nat = \"2s\"\nduration = \"1s\"\n"));
        let at = |n: u64| SimTime::ZERO + ms(n);
        assert_eq!([1999, 2000, 2999, 3000].map(|t| s.local_drop(at(t))), [false, true, true, false]);
        assert!(s.is_quiet() && !s.counts_packets(), "the path itself carries on");
    }

    #[test]
    fn bad_events_name_the_key_and_what_was_expected() {
        let keys = |text: &str| -> Vec<String> {
            parse(text)
                .iter()
                .flat_map(|e| e.validate().keys().into_iter().map(String::from).collect::<Vec<_>>())
                .collect()
        };
        assert_eq!(keys("[[event]]\nkind = \"drop\"\n"), [""]);
        assert_eq!(keys("[[event]]\nkind = \"drop\"\nnth = 0\ncount = 0\n"), ["nth", "count"]);
        assert_eq!(keys("[[event]]\nkind = \"drop\"\nnth = 1\nat = \"1s\"\n"), ["at"]);
        assert_eq!(keys("[[event]]\nkind = \"drop\"\nnth = 1\nduration = \"1s\"\n"), ["duration"]);
        assert_eq!(keys("[[event]]\nkind = \"drop\"\nat = \"1s\"\n"), ["duration"]);
        assert_eq!(
            keys("[[event]]\nkind = \"drop\"\nat = \"1s\"\nduration = \"0s\"\ncount = 2\n"),
            ["count", "duration"]
        );
        assert_eq!(keys("[[event]]\nkind = \"delay\"\nnth = 0\nby = \"0s\"\n"), ["nth", "by"]);
        assert_eq!(keys("[[event]]\nkind = \"duplicate\"\nnth = 0\n"), ["nth"]);
        assert_eq!(keys("[[event]]\nkind = \"local-drop\"\nat = \"1s\"\nduration = \"0s\"\n"), ["duration"]);
        assert_eq!(keys("[[event]]\nkind = \"icmp-unreachable\"\nat = \"1s\"\nduration = \"0s\"\n"), ["duration"]);
        assert!(keys("[[event]]\nkind = \"icmp-unreachable\"\nat = \"1s\"\n").is_empty());
        for (text, needle) in [
            ("[[event]]\nkind = \"drop\"\ndirection = \"up\"\nnth = 1\n", "up"),
            ("[[event]]\nkind = \"teleport\"\n", "teleport"),
            ("[[event]]\nkind = \"delay\"\nnth = 1\n", "by"),
            ("[[event]]\nkind = \"icmp-unreachable\"\nat = \"1s\"\nnth = 2\n", "nth"),
        ] {
            #[derive(Debug, Deserialize)]
            #[allow(dead_code)]
            struct File {
                event: Vec<PathEvent>,
            }
            let err = toml::from_str::<File>(text).unwrap_err().to_string();
            assert!(err.contains(needle), "{text:?}: {err}");
        }
    }
}
