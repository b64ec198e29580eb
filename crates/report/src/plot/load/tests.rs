//! The load figure on synthetic series: what it draws and what the report says.
use super::*;
use crate::data::{Brownout, CellFacts, CellInfo, Down, RunInfo, SeriesRow, SeriesTable, VariantInfo};

const CALLS: [&str; 5] = ["attempts", "retries", "succeeded", "capacity", "retry_share"];

fn variant(name: &str, facts: CellFacts) -> VariantInfo {
    VariantInfo {
        name: name.into(),
        run: 0,
        description: String::new(),
        params: Vec::new(),
        blackouts: Vec::new(),
        base_rtt: None,
        rtt_changes: Vec::new(),
        cells: vec![CellInfo { point: Vec::new(), facts }],
    }
}

/// A run of `horizon` seconds whose variants have `rows(variant index)`.
fn run(horizon: f64, columns: &[&str], variants: Vec<VariantInfo>, rows: &dyn Fn(usize) -> Vec<SeriesRow>) -> RunSet {
    let rows = (0..variants.len()).flat_map(rows).collect();
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
        variants,
        series: Some(vec![SeriesTable { columns: columns.iter().map(|c| c.to_string()).collect(), rows }]),
        ..RunSet::default()
    }
}

fn row(variant: &str, rep: u32, start: f64, width: f64, values: &[f64]) -> SeriesRow {
    SeriesRow {
        variant: variant.into(),
        point: Vec::new(),
        replication: rep,
        bin_start: start,
        bin_width: width,
        values: values.iter().map(|v| Some(*v).filter(|v| !v.is_nan())).collect(),
    }
}

/// 1 s bins over `horizon` seconds: 800 attempts a second until `at`, then 1600 of
/// which 800 retries, with goodput 0 (or back to 800 when `recovers`).
fn storm(name: &str, horizon: usize, at: usize, recovers: bool) -> Vec<SeriesRow> {
    (0..=horizon)
        .map(|i| {
            let late = i >= at;
            let (attempts, retries) = if late { (1600.0, 800.0) } else { (800.0, 0.0) };
            let succeeded = if late && !recovers { 0.0 } else { 800.0 };
            row(name, 0, i as f64, 1.0, &[attempts, retries, succeeded, 1000.0, retries / attempts])
        })
        .collect()
}

fn svg(data: &RunSet) -> String {
    String::from_utf8(
        crate::plot::render(
            crate::plot::Kind::Load,
            data,
            &PlotOptions::default(),
            crate::plot::Format::Svg,
        )
        .unwrap(),
    )
    .unwrap()
}

#[test]
fn one_panel_per_variant_up_to_eight_and_the_subtitle_says_what_was_left_out() {
    let variants = (0..10).map(|i| variant(&format!("v{i}"), CellFacts::default())).collect();
    let data = run(20.0, &CALLS, variants, &|i| storm(&format!("v{i}"), 20, 10, false));
    let f = figure(&data, &PlotOptions::default()).unwrap();
    assert_eq!(f.panels.len(), MAX_PANELS);
    assert!(f.subtitle.contains("8 of 10 panels shown"), "{}", f.subtitle);
    let one = figure(&data, &PlotOptions { variants: vec!["v3".into()], ..PlotOptions::default() }).unwrap();
    assert_eq!(one.panels.len(), 1);
    assert!(one.panels[0].caption.starts_with("v3"), "{}", one.panels[0].caption);
}

#[test]
fn the_alert_line_is_drawn_only_where_the_variant_sets_a_threshold() {
    let alerting = CellFacts { retry_share_alert: Some(0.2), ..CellFacts::default() };
    let variants = vec![variant("watched", alerting), variant("unwatched", CellFacts::default())];
    let names = ["watched", "unwatched"];
    let data = run(20.0, &CALLS, variants, &|i| storm(names[i], 20, 10, false));
    let f = figure(&data, &PlotOptions::default()).unwrap();
    let alerts: Vec<Option<f64>> = f
        .panels
        .iter()
        .map(|p| match &p.strip {
            Some(Strip::Shares { alert, .. }) => *alert,
            _ => panic!("a calls panel has the shares strip"),
        })
        .collect();
    assert_eq!(alerts, [Some(20.0), None]);
    assert_eq!(svg(&data).matches("alert at 20 %").count(), 1);
    let quiet =
        run(20.0, &CALLS, vec![variant("unwatched", CellFacts::default())], &|_| storm("unwatched", 20, 10, false));
    let drawn = svg(&quiet);
    assert!(!drawn.contains("alert at") && !drawn.contains("retry-share alert"));
}

#[test]
fn counts_become_rates_per_second_and_the_bin_at_the_horizon_is_left_out() {
    // Half-second bins over 2 s: five bins, the fifth holding only the horizon's instant.
    let rows = |_| (0..5).map(|i| row("v", 0, i as f64 * 0.5, 0.5, &[10.0, 0.0, 5.0, 40.0, 0.0])).collect();
    let data = run(2.0, &CALLS, vec![variant("v", CellFacts::default())], &rows);
    let b = Binned::of(&data.series.as_ref().unwrap()[0], "v", &[], Some(2.0), (0.0, 2.0));
    assert_eq!(b.spans.len(), 4);
    assert_eq!(b.rate("attempts").unwrap(), [Some(20.0); 4]);
    // A level (attempts/s the server can serve) is not divided again.
    assert_eq!(b.col("capacity").unwrap(), [Some(40.0); 4]);
}

#[test]
fn more_bins_than_a_panel_can_show_are_merged_keeping_rates_and_levels() {
    // 1000 bins of 100 ms, 3 attempts in each (30/s), capacity 50/s: merged three by three.
    let rows = |_| (0..1000).map(|i| row("v", 0, i as f64 * 0.1, 0.1, &[3.0, 0.0, 3.0, 50.0, 0.0])).collect();
    let data = run(100.0, &CALLS, vec![variant("v", CellFacts::default())], &rows);
    let b = Binned::of(&data.series.as_ref().unwrap()[0], "v", &[], Some(100.0), (0.0, 100.0));
    assert_eq!((b.merged, b.spans.len()), (3, 334));
    assert!(b.rate("attempts").unwrap().iter().all(|r| r.is_some_and(|r| (r - 30.0).abs() < 1e-9)));
    assert!(b.col("capacity").unwrap().iter().all(|c| *c == Some(50.0)));
    assert!((b.spans[1].0 - 0.3).abs() < 1e-9 && (b.spans[1].1 - 0.6).abs() < 1e-9, "{:?}", b.spans[1]);
    let f = figure(&data, &PlotOptions::default()).unwrap();
    assert!(f.subtitle.ends_with("bins of 100 ms averaged over 300 ms"), "{}", f.subtitle);
}

#[test]
fn the_retry_share_is_pooled_over_replications_not_a_mean_of_ratios() {
    // One replication retried its only attempt, the other none of 99: 1 retry in 100.
    let rows = |_| {
        vec![row("v", 0, 0.0, 1.0, &[1.0, 1.0, 0.0, 10.0, 1.0]), row("v", 1, 0.0, 1.0, &[99.0, 0.0, 99.0, 10.0, 0.0])]
    };
    let data = run(1.0, &CALLS, vec![variant("v", CellFacts::default())], &rows);
    let b = Binned::of(&data.series.as_ref().unwrap()[0], "v", &[], Some(1.0), (0.0, 1.0));
    assert_eq!(b.reps, 2);
    assert_eq!(b.share("retries", "attempts").unwrap(), [Some(1.0)]);
    // A bin without attempts has no share.
    let empty = |_| vec![row("v", 0, 0.0, 1.0, &[0.0, 0.0, 0.0, 10.0, f64::NAN])];
    let data = run(1.0, &CALLS, vec![variant("v", CellFacts::default())], &empty);
    let b = Binned::of(&data.series.as_ref().unwrap()[0], "v", &[], Some(1.0), (0.0, 1.0));
    assert_eq!(b.share("retries", "attempts").unwrap(), [None]);
    assert_eq!(b.col("retry_share").unwrap(), [None]);
}

#[test]
fn the_report_compares_peak_load_with_capacity_and_goodput_before_the_incident_with_the_end() {
    let down = CellFacts { down: vec![Down { from: 60.0, to: 70.0, restart: true }], ..CellFacts::default() };
    let variants = vec![variant("collapse", down.clone()), variant("recover", down)];
    let data = run(100.0, &CALLS, variants, &|i| storm(["collapse", "recover"][i], 100, 60, i == 1));
    let notes = notes(&data);
    assert_eq!(notes.len(), 2);
    assert_eq!(notes[0].0, "collapse");
    let (collapse, recover) = (&notes[0].1, &notes[1].1);
    assert!(
        collapse.starts_with("Offered load peaks at 1600 attempts/s at 60 s, 1.6× the server's capacity of 1000/s"),
        "{collapse}"
    );
    assert!(
        collapse.contains("goodput is 800/s before the server went down at 60 s and 0/s over the last 10 s"),
        "{collapse}"
    );
    assert!(recover.contains("and 800/s over the last 10 s"), "{recover}");
    assert!(collapse.contains("retries are up to 50 % of attempts"), "{collapse}");
}

#[test]
fn brownouts_and_down_time_are_shaded_and_named_in_the_legend() {
    let facts = CellFacts {
        brownouts: vec![Brownout { from: 5.0, to: 8.0, fail_fraction: Some(0.5), slowdown: None }],
        down: vec![Down { from: 12.0, to: 30.0, restart: false }],
        ..CellFacts::default()
    };
    let data = run(20.0, &CALLS, vec![variant("v", facts)], &|_| storm("v", 20, 10, false));
    let f = figure(&data, &PlotOptions::default()).unwrap();
    // Clipped to the window.
    assert_eq!(f.panels[0].bands, [(5.0, 8.0, BandKind::Brownout), (12.0, 20.0, BandKind::Down)]);
    let legend: Vec<&str> = f.legend.iter().map(|(_, l)| l.as_str()).collect();
    assert!(legend.contains(&"brownout") && legend.contains(&"server down"), "{legend:?}");
    assert!(!legend.contains(&"provider down"));
}

#[test]
fn jobs_columns_draw_created_and_delivered_with_the_queue_depth_in_the_strip() {
    let columns = ["created", "delivered", "dead_lettered", "retried", "queue_depth", "busy_s"];
    let facts = CellFacts { provider_down: vec![(3.0, 6.0)], ..CellFacts::default() };
    let rows = |_| (0..=10).map(|i| row("q", 0, i as f64, 1.0, &[5.0, 4.0, 0.0, 1.0, i as f64, 2.0])).collect();
    let data = run(10.0, &columns, vec![variant("q", facts)], &rows);
    let f = figure(&data, &PlotOptions::default()).unwrap();
    assert_eq!(f.title, "Jobs created, delivered and queued over time");
    assert!(matches!(&f.panels[0].strip, Some(Strip::Queue(q)) if q.iter().flatten().any(|p| p.1 == 9.0)));
    assert_eq!(f.panels[0].bands, [(3.0, 6.0, BandKind::ProviderDown)]);
    let legend: Vec<&str> = f.legend.iter().map(|(_, l)| l.as_str()).collect();
    assert_eq!(legend, ["created (jobs/s)", "delivered (jobs/s)", "queue depth (strip)", "provider down"]);
    assert!(notes(&data)[0].1.contains("the queue peaks at 9 jobs at 9 s"), "{:?}", notes(&data));
}

#[test]
fn other_columns_get_a_line_each_named_in_the_legend_and_no_strip() {
    let rows = |_| (0..=4).map(|i| row("g", 0, i as f64, 1.0, &[1.0, 2.0, f64::NAN])).collect();
    let data = run(4.0, &["alpha", "beta", "gamma"], vec![variant("g", CellFacts::default())], &rows);
    let f = figure(&data, &PlotOptions::default()).unwrap();
    assert_eq!(f.title, "Quantities over time");
    assert!(f.panels[0].strip.is_none());
    let legend: Vec<&str> = f.legend.iter().map(|(_, l)| l.as_str()).collect();
    assert_eq!(legend, ["alpha", "beta", "gamma"]);
    // A column without values draws nothing.
    assert!(f.panels[0].lines[2].segments.is_empty());
    assert!(notes(&data).is_empty());
}
