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
        cwnd: None,
        ssthresh: None,
        ca_state: None,
    }
}

/// A row with the sender's congestion window.
fn cc(time: f64, event: &str, cwnd: u32, ssthresh: Option<u32>, state: &str) -> TraceRow {
    TraceRow { cwnd: Some(cwnd), ssthresh, ca_state: Some(state.into()), ..row(time, event, 0.3) }
}

/// Ten segments in flight; three duplicate ACKs at 1 s (disorder), fast recovery from
/// 1.1 s with the window halved to 5 (RFC 5681 section 3.2: ssthresh = FlightSize / 2),
/// recovered at 1.5 s; a timeout at 4 s (RFC 5681 section 3.1: cwnd 1, ssthresh 2),
/// slow start to 4 and finished at 6 s.
fn recovering() -> Vec<TraceRow> {
    vec![
        cc(0.0, "send", 10, None, "open"),
        cc(1.0, "ack", 10, None, "disorder"),
        cc(1.1, "retransmit", 5, Some(5), "recovery"),
        cc(1.3, "ack", 5, Some(5), "recovery"),
        cc(1.5, "ack", 5, Some(5), "open"),
        cc(4.0, "timeout", 1, Some(2), "loss"),
        cc(4.0, "retransmit", 1, Some(2), "loss"),
        cc(4.2, "ack", 2, Some(2), "loss"),
        cc(4.4, "ack", 4, Some(2), "open"),
        cc(6.0, "finished", 4, Some(2), "open"),
        // A keepalive beside the sender after the transfer: past the lines' end.
        cc(7.0, "keepalive", 4, Some(2), "open"),
    ]
}

#[test]
fn the_window_is_steps_the_threshold_drawn_where_set_and_recovery_spans_shaded() {
    let rows = recovering();
    let p = panel(&rows.iter().collect::<Vec<_>>(), 0.0, 10.0);
    let c = &p.cwnd;
    // Each value held until the next; unchanged rows add nothing; the line ends with
    // the transfer, as the RTO's does.
    assert_eq!(
        c.steps,
        vec![(0.0, 10.0), (1.1, 10.0), (1.1, 5.0), (4.0, 5.0), (4.0, 1.0), (4.2, 1.0), (4.2, 2.0), (4.4, 2.0), (4.4, 4.0), (6.0, 4.0)]
    );
    assert_eq!(c.ssthresh, vec![vec![(1.1, 5.0), (4.0, 5.0), (4.0, 2.0), (6.0, 2.0)]]);
    // Disorder (1 s to 1.1 s) is not shaded: nothing is marked lost yet.
    assert_eq!((c.recovery.as_slice(), c.loss.as_slice()), ([(1.1, 1.5)].as_slice(), [(4.0, 4.4)].as_slice()));
    assert_eq!(c.top(), 10.0);

    // A window opening in the recovery carries the state into it.
    let p = panel(&rows.iter().collect::<Vec<_>>(), 1.2, 3.0);
    assert_eq!(p.cwnd.steps, vec![(1.2, 5.0), (3.0, 5.0)]);
    assert_eq!(p.cwnd.recovery, vec![(1.2, 1.5)]);
    assert_eq!(p.cwnd.ssthresh, vec![vec![(1.2, 5.0), (3.0, 5.0)]]);

    // A trace without the columns (an older file, or a listener's request) has no strip.
    let p = panel(&probing_then_aborting().iter().collect::<Vec<_>>(), 0.0, 10.0);
    assert!(p.cwnd.is_empty() && cwnd::axis(std::slice::from_ref(&p)).is_none());
}

#[test]
fn the_congestion_strip_and_its_legend_appear_only_for_a_trace_with_a_window() {
    let height = |svg: &str| -> u32 {
        let at = svg.find("height=\"").expect("an svg height") + 8;
        svg[at..].split('"').next().unwrap().parse().unwrap()
    };
    let with = svg(&traced(recovering(), 10.0));
    for entry in ["cwnd (segments)", "ssthresh", "fast recovery", "loss recovery (after a timeout)"] {
        assert!(has_text(&with, entry), "legend entry {entry}");
    }
    assert!(has_text(&with, "cwnd"), "the strip's axis");
    let fill = |c: RGBColor| format!("fill=\"#{:02X}{:02X}{:02X}\"", c.0, c.1, c.2);
    assert_eq!(with.matches(&fill(RECOVERY)).count(), 2, "one span, and its legend swatch");
    assert_eq!(with.matches(&fill(LOSS)).count(), 2, "one span, and its legend swatch");

    let without = svg(&traced(probing_then_aborting(), 10.0));
    assert!(!without.contains("cwnd") && !without.contains("ssthresh") && !without.contains("recovery"));
    // The strip adds its own height to each panel rather than squeezing the plot above.
    let open = svg(&traced(open_only_rows(), 10.0));
    assert_eq!(height(&open), height(&without) + CWND_STRIP);
    assert!(has_text(&open, "cwnd (segments)") && !has_text(&open, "ssthresh") && !open.contains("fast recovery"));

    // The report's caption names the strip's parts that are there.
    let said = |rows| caption::caption(&traced(rows, 10.0)).unwrap();
    let all = said(recovering());
    assert!(all.contains("congestion window") && all.contains("slow-start threshold") && all.contains("lilac"), "{all}");
    let open = said(open_only_rows());
    assert!(open.contains("congestion window") && !open.contains("threshold") && !open.contains("lilac"), "{open}");
    assert!(!said(probing_then_aborting()).contains("congestion"));
    let mut timeout_only = open_only_rows();
    timeout_only[2].ca_state = Some("loss".into());
    let loss = said(timeout_only);
    assert!(loss.contains("pale red in loss recovery") && !loss.contains("lilac"), "{loss}");
}

/// [`probing_then_aborting`] with a window of 10 that never leaves `open`.
fn open_only_rows() -> Vec<TraceRow> {
    let mut rows = probing_then_aborting();
    for r in &mut rows {
        (r.cwnd, r.ca_state) = (Some(10), Some("open".into()));
    }
    rows
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
fn the_strip_gets_a_row_only_for_the_marks_some_panel_has_in_a_fixed_order() {
    assert!(rug_rows(&[Panel::default()]).is_empty());
    let retransmits = Panel { retransmits: vec![1.0], ..Panel::default() };
    assert_eq!(rug_rows(std::slice::from_ref(&retransmits)), vec![Row::Retransmits]);
    let others = Panel {
        probes: vec![1.0],
        keepalives: vec![2.0],
        zero_windows: vec![(1.0, 2.0)],
        synack_resends: vec![3.0],
        icmp: vec![4.0],
        ..Panel::default()
    };
    assert_eq!(
        rug_rows(&[others, retransmits]),
        vec![Row::Retransmits, Row::Probes, Row::ZeroWindow, Row::Keepalives, Row::SynAcks, Row::Icmp]
    );
}

fn close(a: &[(f64, f64)], b: &[(f64, f64)]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(p, q)| (p.0 - q.0).abs() < 1e-9 && (p.1 - q.1).abs() < 1e-9)
}

/// The window closes at 5.7 s and four probes follow, each after twice the last wait
/// (give or take the RTT), as Linux's `tcp_probe_timer` re-arms the persist timer.
fn stalled(end: Option<(f64, &str)>) -> Vec<TraceRow> {
    let mut rows = vec![row(0.0, "send", 0.3), row(5.7, "zero_window", 0.3)];
    rows.extend([6.0, 6.7, 8.0, 10.5].map(|t| row(t, "window_probe", 0.3)));
    rows.extend(end.map(|(t, e)| row(t, e, 0.3)));
    rows
}

#[test]
fn zero_window_probes_sit_at_the_wait_before_them_and_the_stall_is_a_span() {
    let rows = stalled(Some((12.0, "window_open")));
    let p = panel(&rows.iter().collect::<Vec<_>>(), 0.0, 20.0);
    assert!(close(&p.window_probes, &[(6.0, 0.3), (6.7, 0.7), (8.0, 1.3), (10.5, 2.5)]), "{:?}", p.window_probes);
    assert_eq!(p.zero_windows, vec![(5.7, 12.0)]);
    assert_eq!(counts(&p), "0 timeouts, 0 retransmissions, 4 zero-window probes");
    // The y axis reaches the longest wait, so every probe is on the scale.
    assert!((y_extent(std::slice::from_ref(&p)).1 - 2.5).abs() < 1e-9);

    // A window that opens in the stall: the span starts at its edge, and the first probe
    // in it still sits at the wait since the probe before the edge.
    let p = panel(&rows.iter().collect::<Vec<_>>(), 7.0, 20.0);
    assert_eq!(p.zero_windows, vec![(7.0, 12.0)]);
    assert!(close(&p.window_probes, &[(8.0, 1.3), (10.5, 2.5)]), "{:?}", p.window_probes);

    // Never reopened: the span runs to the window's right edge.
    let rows = stalled(None);
    let p = panel(&rows.iter().collect::<Vec<_>>(), 0.0, 20.0);
    assert_eq!(p.zero_windows, vec![(5.7, 20.0)]);
}

#[test]
fn the_abort_is_named_by_the_event_before_it_or_the_zero_window_it_ends() {
    let ending = |rows: Vec<TraceRow>| {
        let p = panel(&rows.iter().collect::<Vec<_>>(), 0.0, 8000.0);
        (p.ending, counts(&p))
    };
    // Linux `tcp_keepalive_timer`: the unanswered probe, then the reset.
    let keepalive = vec![row(0.2, "finished", 0.3), row(7800.2, "keepalive", 0.3), row(7875.2, "aborted", 0.3)];
    assert_eq!(
        ending(keepalive),
        (Ending::Keepalive, "0 timeouts, 0 retransmissions, 1 keepalive probe, keepalive reset at 7875 s".into())
    );
    let (e, c) = ending(stalled(Some((36.0, "aborted"))));
    assert_eq!(e, Ending::ZeroWindow);
    assert!(c.ends_with("4 zero-window probes, zero-window abort at 36 s"), "{c}");
    // After the window reopened, an abort is the retransmission timer's again.
    let mut reopened = stalled(Some((12.0, "window_open")));
    reopened.push(row(40.0, "aborted", 0.3));
    assert_eq!(ending(reopened).0, Ending::GaveUp);
    let listener = vec![
        row(0.05, "syn", 1.0),
        row(0.05, "synack", 1.0),
        row(1.05, "synack_retransmit", 2.0),
        row(3.05, "synack_retransmit", 4.0),
        row(7.05, "request_expired", 4.0),
    ];
    assert_eq!(
        ending(listener),
        (Ending::RequestExpired, "0 timeouts, 0 retransmissions, 3 SYN-ACKs (2 resent), request expired at 7.05 s".into())
    );
    assert_eq!(ending(probing_then_aborting()).0, Ending::GaveUp);
}

fn traced(rows: Vec<TraceRow>, horizon: f64) -> RunSet {
    use crate::data::{CellFacts, CellInfo, RunInfo, VariantInfo};
    RunSet {
        runs: vec![RunInfo {
            label: String::new(),
            dir: "x".into(),
            scenario: "s".into(),
            description: String::new(),
            seed: None,
            replications: None,
            horizon: String::new(),
            horizon_s: Some(horizon),
            version: String::new(),
            scenario_sha256: String::new(),
        }],
        variants: vec![VariantInfo {
            name: "linux".into(),
            run: 0,
            description: String::new(),
            params: Vec::new(),
            blackouts: Vec::new(),
            base_rtt: None,
            rtt_changes: Vec::new(),
            cells: vec![CellInfo { point: Vec::new(), facts: CellFacts::default() }],
        }],
        trace: rows,
        ..RunSet::default()
    }
}

fn svg(data: &RunSet) -> String {
    let bytes = crate::plot::render(crate::plot::Kind::Rto, data, &PlotOptions::default(), crate::plot::Format::Svg);
    String::from_utf8(bytes.unwrap()).unwrap()
}

/// Whether the SVG has a text element reading exactly `t` (plotters writes each on a
/// line of its own).
fn has_text(svg: &str, t: &str) -> bool {
    let escaped = t.replace('\'', "&apos;");
    svg.lines().any(|l| l.trim() == t || l.trim() == escaped)
}

/// Circles of radius `r` filled with `colour` in an SVG.
fn circles(svg: &str, r: u32, colour: RGBColor) -> usize {
    let fill = format!("fill=\"#{:02X}{:02X}{:02X}\"", colour.0, colour.1, colour.2);
    svg.lines().filter(|l| l.contains("<circle") && l.contains(&format!("r=\"{r}\"")) && l.contains(&fill)).count()
}

#[test]
fn an_hour_of_zero_window_probes_draws_each_one_with_its_legend_strip_row_and_count() {
    // Probes from 6 s on, the wait doubling from 0.3 s to the 120 s cap
    // (`TCP_RTO_MAX`), then every 120 s for the rest of the hour.
    let mut rows = vec![row(0.0, "send", 0.3), row(5.7, "zero_window", 0.3)];
    let (mut t, mut wait) = (5.7, 0.3);
    while t + wait < 3600.0 {
        t += wait;
        rows.push(row(t, "window_probe", 0.3));
        wait = (wait * 2.0).min(120.0);
    }
    let n = rows.len() - 2;
    assert_eq!(n, 37);
    let s = svg(&traced(rows, 3600.0));
    assert!(s.contains("zero-window probe, at the wait since the last"), "no legend entry");
    assert!(has_text(&s, "receiver's window zero"), "no span legend");
    assert!(has_text(&s, "window zero"), "no strip row");
    assert!(s.contains("37 zero-window probes"), "no count in the panel title");
    // Each probe is a mark: none thinned away, their heights keep the early ones apart.
    assert_eq!(circles(&s, 4, WINDOW_PROBE), n);
    // Nothing aborted, so no abort's line or label.
    assert!(!s.contains("aborted") && !s.contains("gave up"));
}

#[test]
fn a_keepalive_reset_is_labelled_as_one_and_its_probes_marked_in_the_strip() {
    let mut rows = vec![row(0.0, "send", 0.3), row(0.2, "finished", 0.3)];
    rows.extend((0..9).map(|i| row(7200.2 + 75.0 * f64::from(i), "keepalive", 0.3)));
    rows.push(row(7875.2, "aborted", 0.3));
    let s = svg(&traced(rows, 8000.0));
    assert!(s.contains("connection aborted (keepalive reset)"), "legend");
    assert!(has_text(&s, "keepalive reset"), "the line's label");
    assert!(!s.contains("gave up"));
    assert!(has_text(&s, "keepalive"), "strip row");
    assert!(s.contains("9 keepalive probes"));
    // Nine in the strip, 75 s apart on a 8000 s axis (8 pixels): small enough not to touch.
    assert_eq!(circles(&s, 2, KEEPALIVE), 9);
    assert_eq!(circles(&s, 3, KEEPALIVE), 1);
}

#[test]
fn synack_resends_and_icmp_unreachables_get_marks_and_legend_entries_only_when_present() {
    let rows = vec![
        row(0.05, "syn", 1.0),
        row(0.05, "synack", 1.0),
        row(1.05, "synack_retransmit", 2.0),
        row(3.05, "synack_retransmit", 4.0),
        row(7.05, "request_expired", 4.0),
    ];
    let s = svg(&traced(rows, 10.0));
    assert!(s.contains("SYN-ACK sent again") && has_text(&s, "SYN-ACK sent"));
    assert!(s.contains("connection aborted (request expired)") && has_text(&s, "request expired"));
    assert!(!s.contains("ICMP") && !s.contains("keepalive") && !s.contains("zero-window"));
    let mut rows = probing_then_aborting();
    rows.insert(3, row(0.4, "icmp_unreachable", 0.3));
    let s = svg(&traced(rows, 10.0));
    assert!(has_text(&s, "ICMP unreachable") && s.contains("1 ICMP unreachable"));
    assert!(s.contains("connection aborted (gave up)") && !s.contains("SYN-ACK"));
}

#[test]
fn strip_marks_shrink_only_where_they_would_touch() {
    // 1000 s across the plot's 890 pixels: 10 s apart is 8.9 pixels.
    assert_eq!(timers::mark_radius(&[0.0, 10.0], (0.0, 1000.0)), 2);
    assert_eq!(timers::mark_radius(&[0.0, 11.0, 30.0], (0.0, 1000.0)), 4);
    assert_eq!(timers::mark_radius(&[5.0], (0.0, 1000.0)), 4);
}
