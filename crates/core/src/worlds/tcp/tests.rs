use super::world::*;
use crate::engine::time::SimTime;

/// The blackout a segment's recovery counts for, by the definition: the one it is
/// sent after the end of and before the next begins, looked at one by one.
fn by_scan(blackouts: &[(SimTime, SimTime)], sent: SimTime) -> Option<usize> {
    (0..blackouts.len()).find(|&k| {
        let next_start = blackouts.get(k + 1).map_or(SimTime::MAX, |b| b.0);
        sent >= blackouts[k].1 && sent < next_start
    })
}

#[test]
fn the_recovering_blackout_found_by_search_is_the_one_a_scan_finds() {
    let t = |ms: u64| SimTime(ms * 1_000_000);
    // Apart, back to back, empty, and empty at the start of the next.
    let blackouts = [(t(10), t(20)), (t(20), t(30)), (t(40), t(40)), (t(40), t(45)), (t(50), t(60))];
    for ms in 0..70 {
        for sent in [t(ms), SimTime(t(ms).0 + 1)] {
            assert_eq!(recovering(&blackouts, sent), by_scan(&blackouts, sent), "sent at {sent:?}");
        }
    }
    assert_eq!(recovering(&blackouts, t(25)), None, "inside the second blackout");
    assert_eq!(recovering(&blackouts, t(47)), Some(3));
    assert_eq!(recovering(&[], t(5)), None);
}
