use super::*;

#[test]
fn one_odd_sample_does_not_stretch_the_y_axis_but_lines_always_fit() {
    let mut samples: Vec<(f64, f64)> = (0..500).map(|i| (i as f64 * 0.1, 0.1 + (i % 5) as f64 * 0.01)).collect();
    samples.push((10.0, 0.001));
    let p = Panel { samples, rto: vec![(0.0, 1.0), (60.0, 1.0)], ..Panel::default() };
    let (lo, hi) = y_extent(std::slice::from_ref(&p));
    assert_eq!((lo, hi), (0.1, 1.0));
    // A line is drawn in full, however far it goes.
    let p = Panel { rto: vec![(0.0, 0.002), (60.0, 1.0)], ..p };
    assert_eq!(y_extent(std::slice::from_ref(&p)).0, 0.002);
}

fn row(time: f64, event: &str, rto: f64) -> TraceRow {
    TraceRow {
        time,
        client: 0,
        variant: "linux".into(),
        point: Vec::new(),
        replication: 0,
        event: event.into(),
        sample: (event == "sample").then_some(0.1),
        srtt: Some(0.1),
        rto: Some(rto),
    }
}

/// A connection that probes, times out (backing off to 0.6 s), has the timeout
/// undone by F-RTO (back to 0.3 s), probes again and gives up at 3 s.
fn probing_then_aborting() -> Vec<TraceRow> {
    vec![
        row(0.0, "send", 0.3),
        row(0.2, "probe", 0.3),
        row(0.5, "timeout", 0.6),
        row(0.5, "retransmit", 0.6),
        row(0.6, "sample", 0.3),
        row(0.6, "spurious_timeout", 0.3),
        row(1.0, "probe", 0.3),
        row(3.0, "aborted", 0.3),
    ]
}

#[test]
fn probes_undone_timeouts_and_the_abort_are_collected_and_the_rto_line_ends_at_the_abort() {
    let rows = probing_then_aborting();
    let p = panel(&rows.iter().collect::<Vec<_>>(), 0.0, 10.0);
    assert_eq!(p.probes, vec![0.2, 1.0]);
    assert_eq!(p.timeouts, vec![(0.5, 0.3)]);
    assert_eq!(p.retransmits, vec![0.5]);
    // At the RTO in force once undone, where the line is.
    assert_eq!(p.undone, vec![(0.6, 0.3)]);
    assert_eq!(p.aborted, Some(3.0));
    // Like a finished transfer: no RTO, no SRTT after the abort.
    assert_eq!(p.rto.last(), Some(&(3.0, 0.3)));
    assert_eq!(p.srtt.last().and_then(|s| s.last()), Some(&(3.0, 0.1)));
    assert_eq!(counts(&p), "1 timeout, 1 undone, 1 retransmission, 2 probes, aborted at 3 s");

    // A window after the abort: nothing to mark in it, but the caption still says
    // why the panel is empty, and no line runs on past the abort.
    let p = panel(&rows.iter().collect::<Vec<_>>(), 5.0, 10.0);
    assert!(p.probes.is_empty() && p.undone.is_empty() && p.timeouts.is_empty());
    assert_eq!(p.aborted, Some(3.0));
    assert!(p.rto.iter().all(|q| q.0 == 5.0));
    assert_eq!(counts(&p), "0 timeouts, 0 retransmissions, aborted at 3 s");

    // A window that ends before the abort has none.
    let p = panel(&rows.iter().collect::<Vec<_>>(), 0.0, 2.0);
    assert_eq!(p.aborted, None);
    assert_eq!(p.rto.last(), Some(&(2.0, 0.3)));
}

#[test]
fn caption_counts_name_probes_undone_timeouts_and_an_abort_only_when_there_are_any() {
    let p = Panel { timeouts: vec![(1.0, 1.0); 3], retransmits: vec![1.0; 5], ..Panel::default() };
    let plain = counts(&p);
    assert_eq!(plain, "3 timeouts, 5 retransmissions");
    for word in ["undone", "probe", "aborted"] {
        assert!(!plain.contains(word), "{plain}");
    }
    let p = Panel { probes: vec![2.0], undone: vec![(3.0, 0.3); 2], aborted: Some(1004.108), ..p };
    assert_eq!(counts(&p), "3 timeouts, 2 undone, 5 retransmissions, 1 probe, aborted at 1004 s");
}

#[test]
fn the_strip_gets_a_row_for_probes_only_when_some_panel_has_them() {
    assert_eq!(Rug::default().rows(), 0);
    assert_eq!(Rug { retransmits: true, probes: false }.rows(), 1);
    assert_eq!(Rug { retransmits: true, probes: true }.rows(), 2);
}
