//! Plots of a swept run keep sweep cells apart: checked from the files a run writes,
//! as a user would read them (panel titles, legend labels, drawn lines), and `plot
//! --cell` picks cells or names the ones there are.

use std::path::{Path, PathBuf};

use super::common::{run, run_text, text};

const SWEPT: &str = r#"
name = "cells"
description = "Does a lower max_backoff bring the fleet back sooner?"
seed = 1
replications = 2
horizon = "2min"

[grpc]
clients = 2000
bin = "1s"

[server]
accept_rate = 200.0
burst = 20
accept_queue = 20

[[server.restart]]
at = "5s"
down = "10s"

[path]
base_rtt = "50ms"

[sweep]
"grpc.backoff.max_backoff" = ["5s", "20s", "60s"]
"#;

const CELLS: [&str; 3] = ["5s", "20s", "60s"];

fn run_swept(scenario: &str) -> (tempfile::TempDir, PathBuf) {
    run_text(scenario, &[])
}

/// The text of every `<text>` element of an SVG, unescaped.
fn svg_texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let body = &t[t.find('>')? + 1..];
            let raw = body[..body.find("</text>")?].trim();
            Some(raw.replace("&lt;", "<").replace("&gt;", ">").replace("&apos;", "'").replace("&amp;", "&"))
        })
        .collect()
}

/// Every `<polyline>` of an SVG as (stroke colour, points).
fn svg_polylines(svg: &str) -> Vec<(String, Vec<(f64, f64)>)> {
    let attr = |el: &str, name: &str| -> Option<String> {
        let start = el.find(&format!(" {name}=\""))? + name.len() + 3;
        Some(el[start..start + el[start..].find('"')?].to_string())
    };
    svg.split("<polyline")
        .skip(1)
        .filter_map(|el| {
            let el = &el[..el.find("/>")?];
            let points = attr(el, "points")?
                .split_whitespace()
                .filter_map(|p| {
                    let (x, y) = p.split_once(',')?;
                    Some((x.parse().ok()?, y.parse().ok()?))
                })
                .collect();
            Some((attr(el, "stroke")?, points))
        })
        .collect()
}

/// `summary.csv`'s mean of `metric` in each cell of the one sweep key.
fn cell_means(dir: &Path, metric: &str) -> Vec<(String, f64)> {
    let mut r = csv::Reader::from_path(dir.join("summary.csv")).unwrap();
    let h = r.headers().unwrap().clone();
    let col = |name: &str| h.iter().position(|c| c == name).unwrap();
    let (m, mean) = (col("metric"), col("mean"));
    r.records()
        .map(Result::unwrap)
        .filter(|rec| &rec[m] == metric)
        .map(|rec| (rec[1].to_string(), rec[mean].parse().unwrap()))
        .collect()
}

/// The attempts panels' titles as (label, attempts "in all").
fn attempts_panels(svg: &str) -> Vec<(String, f64)> {
    svg_texts(svg)
        .into_iter()
        .filter_map(|t| {
            let (label, stats) = t.split_once(" (peak ")?;
            let total = stats.split(", ").nth(1)?.strip_suffix(" in all")?;
            Some((label.to_string(), total.parse().ok()?))
        })
        .collect()
}

#[test]
fn each_attempts_panel_is_one_cell_and_totals_that_cells_attempts() {
    let (_tmp, out) = run_swept(SWEPT);
    let svg = std::fs::read_to_string(out.join("attempts.svg")).unwrap();
    let panels = attempts_panels(&svg);
    let labels: Vec<&str> = panels.iter().map(|p| p.0.as_str()).collect();
    // One variant: the panels are named by the swept value alone, without `base ·`.
    assert_eq!(labels, ["max_backoff = 5s", "max_backoff = 20s", "max_backoff = 60s"], "{panels:?}");
    let means = cell_means(&out, "attempts");
    assert_eq!(means.len(), 3);
    // A panel that summed the cells would say about three times as much.
    for ((cell, mean), (_, total)) in means.iter().zip(&panels) {
        assert!((total - mean).abs() <= 1.0, "{cell}: the panel says {total}, summary.csv {mean}");
    }
}

#[test]
fn the_cdf_has_one_monotone_line_per_cell_labelled_by_its_value() {
    let (_tmp, out) = run_swept(SWEPT);
    let svg = std::fs::read_to_string(out.join("cdf.svg")).unwrap();
    let texts = svg_texts(&svg);
    for cell in CELLS {
        assert!(texts.contains(&format!("max_backoff = {cell}")), "no legend entry for {cell}: {texts:?}");
    }
    assert!(!texts.iter().any(|t| t == "base"), "{texts:?}");
    // A curve is a polyline of many points; the legend's and the grid's have two.
    let curves: Vec<(String, Vec<(f64, f64)>)> = svg_polylines(&svg).into_iter().filter(|(_, p)| p.len() > 4).collect();
    let colours: std::collections::BTreeSet<&str> = curves.iter().map(|(c, _)| c.as_str()).collect();
    assert_eq!((curves.len(), colours.len()), (3, 3), "{:?}", curves.iter().map(|c| &c.0).collect::<Vec<_>>());
    // A line through several cells zig-zags; one cell's CDF only goes right and up.
    for (colour, points) in &curves {
        assert!(points.windows(2).all(|w| w[1].0 >= w[0].0 && w[1].1 <= w[0].1), "{colour} zig-zags: {points:?}");
    }
}

#[test]
fn a_swept_restart_shades_each_cells_own_down_time() {
    let scenario = SWEPT.replace(
        "\"grpc.backoff.max_backoff\" = [\"5s\", \"20s\", \"60s\"]",
        "\"server.restart\" = [[{ at = \"5s\", down = \"10s\" }], [{ at = \"5s\", down = \"30s\" }]]",
    );
    let (_tmp, out) = run_swept(&scenario);
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    let downs: Vec<&str> = manifest["variants"][0]["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["parameters"]["server"]["restart"][0]["down"].as_str().unwrap())
        .collect();
    assert_eq!(downs, ["10s", "30s"]);
    // The grey bands of the two panels: the second three times as wide as the first.
    let svg = std::fs::read_to_string(out.join("attempts.svg")).unwrap();
    let widths: Vec<f64> = svg
        .split("<rect")
        .filter(|r| r.contains("fill=\"#DEDEDE\"") && !r.contains("width=\"22\""))
        .filter_map(|r| r.split("width=\"").nth(1)?.split('"').next()?.parse().ok())
        .collect();
    let (first, last) = (widths[0], widths[widths.len() - 1]);
    assert!((last / first - 3.0).abs() < 0.1, "down bands {widths:?}");
}

#[test]
fn plot_cell_selects_cells_by_full_or_short_key() {
    let (tmp, out) = run_swept(SWEPT);
    let png = tmp.path().join("one.svg");
    let plot = |extra: &[&str]| {
        let mut args = vec!["plot", "attempts", out.to_str().unwrap(), "-o", png.to_str().unwrap()];
        args.extend_from_slice(extra);
        run(&args)
    };
    // The report offers a redraw of one cell.
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    let redraw = format!("backoffsim plot attempts {} --cell max_backoff=60s", out.display());
    assert!(report.contains(&redraw), "{report}");
    let o = plot(&["--cell", "max_backoff=20s"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let labels = |p: &Path| attempts_panels(&std::fs::read_to_string(p).unwrap());
    assert_eq!(labels(&png).iter().map(|p| p.0.as_str()).collect::<Vec<_>>(), ["max_backoff = 20s"]);
    // Values of one key are alternatives, and the full dotted key works too.
    let o = plot(&["--cell", "grpc.backoff.max_backoff=5s", "--cell", "max_backoff=60s"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(
        labels(&png).iter().map(|p| p.0.as_str()).collect::<Vec<_>>(),
        ["max_backoff = 5s", "max_backoff = 60s"]
    );
}

#[test]
fn plot_cell_that_matches_nothing_names_the_keys_and_values_there_are() {
    let (tmp, out) = run_swept(SWEPT);
    let png = tmp.path().join("x.png");
    let plot = |cell: &str| run(&["plot", "cdf", out.to_str().unwrap(), "-o", png.to_str().unwrap(), "--cell", cell]);
    let o = plot("window=8");
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("unknown sweep key `window` (keys: `grpc.backoff.max_backoff`)"),
        "{}",
        text(&o.stderr)
    );
    let o = plot("max_backoff=7s");
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("(its values: 5s, 20s, 60s)"), "{}", text(&o.stderr));
    let o = plot("max_backoff");
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("is not KEY=VALUE"), "{}", text(&o.stderr));
    assert!(!png.exists());
}
