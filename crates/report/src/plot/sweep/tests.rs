use super::*;
use crate::plot::{Format, Kind, render};

/// A run of `model` with one variant per name in `variants`, its sweep `keys`, and
/// `rows` of (variant, point, metric, unit, mean), loaded as `plot` loads a run.
pub(crate) fn run_set(
    model: &str,
    variants: &[&str],
    keys: &[&str],
    rows: &[(&str, &[&str], &str, &str, f64)],
) -> RunSet {
    let dir = tempfile::tempdir().unwrap();
    let vs: Vec<serde_json::Value> = variants
        .iter()
        .map(|v| serde_json::json!({"name": v, "description": "", "parameters": {"model": model}}))
        .collect();
    let manifest = serde_json::json!({"scenario": "t", "horizon": "1min", "sweep_keys": keys, "variants": vs});
    std::fs::write(dir.path().join("manifest.json"), manifest.to_string()).unwrap();
    let mut csv = format!("variant,{},metric,unit,replications,mean,sd,ci95_low,ci95_high\n", keys.join(","));
    for (v, point, metric, unit, mean) in rows {
        let ci = (mean * 0.95, mean * 1.05);
        csv.push_str(&format!("{v},{},{metric},{unit},4,{mean},0.1,{},{}\n", point.join(","), ci.0, ci.1));
    }
    std::fs::write(dir.path().join("summary.csv"), csv).unwrap();
    RunSet::load(dir.path()).unwrap()
}

fn ids(s: &Selection) -> Vec<&str> {
    s.metrics.iter().map(|m| m.0.as_str()).collect()
}

fn grpc_sweep() -> RunSet {
    let mut rows: Vec<(&str, &[&str], &str, &str, f64)> = Vec::new();
    for (x, k) in [("10s", 1.0), ("30s", 2.0), ("120s", 3.0)] {
        let p: &[&str] = match x {
            "10s" => &["10s"],
            "30s" => &["30s"],
            _ => &["120s"],
        };
        rows.push(("base", p, "attempts_per_client", "count", 8.0 + k));
        rows.push(("base", p, "timeouts", "count", 0.0));
        rows.push(("base", p, "peak_attempt_rate", "attempts/s", 9000.0 / k));
        rows.push(("base", p, "cv", "ratio", k));
        rows.push(("base", p, "connected_time", "fraction", 0.8));
        rows.push(("base", p, "spread_attempt1", "s", k));
    }
    run_set("grpc", &["base"], &["grpc.backoff.max_backoff"], &rows)
}

#[test]
fn default_panels_are_the_models_headline_metrics_that_vary() {
    let s = chosen_metrics(&grpc_sweep(), &PlotOptions::default(), "sweep").unwrap();
    // `cv` and `spread_attempt1` vary but are not headline; `connected_time` is but
    // does not vary, and the footer says so.
    assert_eq!(ids(&s), ["attempts_per_client", "peak_attempt_rate"]);
    assert!(s.footer.contains("Constant, not drawn: Time connected (0.8)"), "{}", s.footer);
    let fig = figure(&grpc_sweep(), &PlotOptions::default()).unwrap();
    let captions: Vec<&str> = fig.panels.iter().map(|p| p.caption.as_str()).collect();
    assert_eq!(captions, ["Attempts per channel · lower is better", "Peak attempt rate · lower is better"]);
}

#[test]
fn headline_panels_follow_the_catalogue_so_the_give_up_reasons_stand_together() {
    let mut rows: Vec<(&str, &[&str], &str, &str, f64)> = Vec::new();
    for (p, k) in [(&["30s"][..], 0.0), (&["2min"][..], 1.0)] {
        rows.push(("a", p, "success_rate", "fraction", 1.0 - k));
        rows.push(("a", p, "gave_up_deadline", "fraction", k));
        rows.push(("a", p, "attempts_per_call", "count", 5.0 + k));
        rows.push(("a", p, "gave_up_attempts", "fraction", 0.5 * k));
    }
    let data = run_set("calls", &["a"], &["calls.outage"], &rows);
    let s = chosen_metrics(&data, &PlotOptions::default(), "sweep").unwrap();
    assert_eq!(ids(&s), ["success_rate", "gave_up_attempts", "gave_up_deadline", "attempts_per_call"]);
}

#[test]
fn a_named_metric_is_drawn_even_when_constant_or_internal() {
    let rows: Vec<(&str, &[&str], &str, &str, f64)> = vec![
        ("base", &["1"], "calls", "count", 1.0),
        ("base", &["5"], "calls", "count", 14.0),
        ("base", &["1"], "succeeded", "fraction", 1.0),
        ("base", &["5"], "succeeded", "fraction", 1.0),
        ("base", &["1"], "events", "count", 4.0),
        ("base", &["5"], "events", "count", 55.0),
    ];
    let data = run_set("occ", &["base"], &["occ.clients"], &rows);
    assert_eq!(ids(&chosen_metrics(&data, &PlotOptions::default(), "sweep").unwrap()), ["calls"]);
    for m in ["events", "succeeded"] {
        let opts = PlotOptions { metric: Some(m.into()), ..PlotOptions::default() };
        let s = chosen_metrics(&data, &opts, "sweep").unwrap();
        assert_eq!(ids(&s), [m]);
        assert!(s.footer.is_empty());
    }
}

#[test]
fn metrics_the_catalogue_does_not_know_fall_back_to_every_varying_one() {
    let rows: Vec<(&str, &[&str], &str, &str, f64)> = vec![
        ("a", &["1"], "mystery", "s", 1.0),
        ("a", &["2"], "mystery", "s", 2.0),
        ("a", &["1"], "flat", "s", 3.0),
        ("a", &["2"], "flat", "s", 3.0),
    ];
    let data = run_set("elsewhere", &["a"], &["k"], &rows);
    assert_eq!(ids(&chosen_metrics(&data, &PlotOptions::default(), "sweep").unwrap()), ["mystery"]);
    // Nothing varies: still a picture, of everything.
    let flat = run_set("elsewhere", &["a"], &["k"], &rows[2..]);
    assert_eq!(ids(&chosen_metrics(&flat, &PlotOptions::default(), "sweep").unwrap()), ["flat"]);
}

/// The `points` of every `<polyline>` in an SVG, counted.
fn polyline_lengths(svg: &str) -> Vec<usize> {
    svg.split("<polyline")
        .skip(1)
        .map(|p| p.split("points=\"").nth(1).unwrap().split('"').next().unwrap())
        .map(|pts| pts.split_whitespace().count())
        .collect()
}

#[test]
fn categories_are_dots_with_whiskers_and_numbers_are_lines() {
    let mut rows: Vec<(&str, &[&str], &str, &str, f64)> = Vec::new();
    for (p, v) in [(&["none"][..], 600.0), (&["full"][..], 300.0), (&["equal"][..], 350.0)] {
        rows.push(("base", p, "calls", "count", v));
    }
    let cats = run_set("occ", &["base"], &["occ.strategy"], &rows);
    let svg = String::from_utf8(render(Kind::Sweep, &cats, &PlotOptions::default(), Format::Svg).unwrap()).unwrap();
    let lens = polyline_lengths(&svg);
    assert!(!lens.is_empty() && lens.iter().all(|&n| n <= 2), "a line joins categories: {lens:?}");
    let svg = String::from_utf8(render(Kind::Sweep, &grpc_sweep(), &PlotOptions::default(), Format::Svg).unwrap())
        .unwrap();
    assert!(polyline_lengths(&svg).iter().any(|&n| n >= 3), "numbers are joined by a line");
}

#[test]
fn a_sweep_of_every_grpc_metric_stays_a_few_panels_tall() {
    let fig = figure(&grpc_sweep(), &PlotOptions::default()).unwrap();
    assert!(fig.size().1 < 1300, "{:?}", fig.size());
}
