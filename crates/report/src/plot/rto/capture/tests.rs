use super::*;

/// A minute of a 100 ms path sampled a thousand times a second (60,000 rows), with one
/// stall: the timer armed at 30 s, the sender waiting 1.1 s where the profile says 0.3 s.
fn busy() -> CaptureTrace {
    let mut c = CaptureTrace::new(60.0);
    for i in 0..60_000u32 {
        let t = f64::from(i) * 1e-3;
        if i == 31_100 {
            c.row(31.1, TraceEvent::Timeout, None, Some(0.1), 0.6);
            c.waited(31.1, 1.1);
            c.expiry(30.3, 0.3);
        }
        let rtt = 0.1 + f64::from(i % 17) * 1e-4;
        c.row(t, TraceEvent::Sample, Some(rtt), Some(0.1), 0.3);
    }
    c
}

#[test]
fn a_busy_capture_keeps_few_rows_and_the_lines_extremes() {
    let c = busy();
    let rows = c.rows();
    assert!(rows.len() < 60_000 / 4, "{} rows kept", rows.len());
    assert_eq!(rows.first().unwrap().time, 0.0);
    assert_eq!(rows.last().unwrap().time, 59.999);
    assert!(rows.windows(2).all(|w| w[0].time <= w[1].time));
    // The timeout's doubled RTO is the highest of its slice: kept.
    assert!(rows.iter().any(|r| r.event == "timeout" && r.rto == Some(0.6)));
    let samples = rows.iter().filter(|r| r.sample.is_some()).count();
    assert!(samples >= LINE_BUCKETS, "one sample per slice at least: {samples}");
}

#[test]
fn the_y_axis_takes_the_samples_percentiles_and_every_mark() {
    let c = busy();
    let (lo, hi) = c.sample_extent().unwrap();
    assert!(lo <= 0.1 && lo > 0.09, "{lo}");
    assert!((0.1016..0.11).contains(&hi), "{hi}");
    let fig = c.figure("test", "captured connection");
    assert!(fig.y.1 >= 1.1, "the 1.1 s wait is on the axis: {:?}", fig.y);
    assert_eq!(fig.panels[0].waited, [(31.1, 1.1)]);
    assert_eq!(fig.panels[0].timeouts, [(30.3, 0.3)]);
    assert!(fig.panels[0].retransmits.contains(&31.1), "a timeout row is a retransmission in the strip");
    let labels: Vec<&str> = fig.legend.iter().map(|l| l.1.as_str()).collect();
    assert!(labels.contains(&"the profile's timer would expire (at its interval)"), "{labels:?}");
    assert!(labels.contains(&"a stall's retransmission (at the time the sender waited)"), "{labels:?}");
    assert_eq!(labels.iter().filter(|l| l.contains("retransmission")).count(), 1, "one triangle, one entry: {labels:?}");
}

#[test]
fn memory_is_bounded_by_the_grid_not_the_rows() {
    let mut c = CaptureTrace::new(1.0);
    // A million samples spread over every level: the grid keeps at most one per cell.
    for i in 0..1_000_000u32 {
        let t = f64::from(i) * 1e-6;
        let v = FLOOR_S * 10f64.powf(f64::from(i % 400) / PER_DECADE);
        c.row(t, TraceEvent::Sample, Some(v), Some(0.1), 0.3);
    }
    assert!(c.sample_rows.len() <= LINE_BUCKETS * LEVELS);
    assert!(c.sample_rows.len() < 1_000_000);
    assert_eq!(c.histogram.iter().sum::<u64>(), 1_000_000);
}

#[test]
fn the_figure_draws_as_png_and_svg() {
    let c = busy();
    let png = c.render("a capture", "captured connection", Format::Png).unwrap();
    assert_eq!(&png[1..4], b"PNG");
    let svg = String::from_utf8(c.render("a capture", "captured connection", Format::Svg).unwrap()).unwrap();
    assert!(svg.contains("captured connection") && svg.contains("a capture"));
}
