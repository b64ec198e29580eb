//! `cdf`: the distribution of a per-client time (time to reconnect, time to success or
//! give-up) as quantiles averaged over replications, a line per variant and sweep cell.
//! One panel per metric; with several variants and several cells, a column per cell
//! (lines per variant), so no line ever mixes cells. The median and the 99th percentile
//! are marked, since those are what people quote, and where the x axis is time since
//! the drop (or the call's start) the time the server was still down is shaded.

use std::collections::BTreeSet;

use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;
use plotters::style::FontStyle;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{
    Drawn, FONT, Figure, Glyph, INK, MUTED, PlotOptions, Series, WIDTH, axis_range, color, fit, header, header_height,
    mesh, omitted_note, series, spans_decades, tick,
};
use super::style::DOWN;
use super::style::cdf::*;
use backoffsim_core::worlds::catalogue;
use crate::ReportError;
use crate::data::{CellFacts, RunSet};
use backoffsim_core::metrics::quantile::Distribution;

/// The distribution of reconnect times (or times to success), a line per variant and sweep cell.
pub struct Cdf;

impl super::Plot for Cdf {
    const NAME: &'static str = "cdf";
    const ABOUT: &'static str = "The distribution of reconnect times (or times to success), a line per variant and sweep cell";
    type Figure = CdfFigure;

    fn missing(data: &RunSet) -> Option<String> {
        data.cdf.as_ref().is_none_or(|c| c.is_empty()).then(|| {
            "no distributions: cdf.csv is missing or has no rows (only models with reconnecting \
             clients write it)"
                .into()
        })
    }

    fn figure(data: &RunSet, opts: &PlotOptions) -> Result<CdfFigure, ReportError> {
        figure(data, opts)
    }

    fn caption(data: &RunSet) -> Result<(String, String), backoffsim_core::run::interrupt::Interrupted> {
        let population = crate::population(&crate::models(data));
        let title = match population {
            "jobs" => "Distribution over jobs",
            "calls" => "Distribution over calls",
            _ => "Distribution over clients",
        };
        let caption = format!(
            "The share of {population} (y) done by each time (x), each quantile the mean over \
             replications of that replication's quantile: the further left and the steeper, the \
             better. {}Dots mark the median (0.5) and the 99th percentile (0.99){}",
            if data.sweep_keys.is_empty() {
                ""
            } else {
                "A line per variant and sweep cell (a column per cell when both vary). "
            },
            // Only a server with down time can have been still down.
            if data.variants.iter().flat_map(|v| &v.cells).any(|c| !c.facts.down.is_empty()) {
                "; grey shows where the server was still down."
            } else {
                "."
            }
        );
        Ok((title.into(), caption))
    }

    fn redraw(r: &super::Redraw<'_>) -> String {
        format!("backoffsim plot cdf {} --variant {}{} -o cdf.svg", r.dir, r.variant, r.cell)
    }
}

/// Lines one panel shows, and cells (columns) one figure shows, at most.
const MAX_LINES: usize = 8;
const MAX_COLUMNS: usize = 4;

/// The title of a per-client metric `cdf.csv` holds, in lower case for an axis, and the
/// moment it is measured from. `reconnect_time` is a distribution only (its summary
/// metrics are the `reconnect_p*` quantiles), so the catalogue does not list it.
fn metric_title(metric: &str) -> (String, Since) {
    let distribution = Distribution::from_name(metric);
    let since = match distribution {
        Some(Distribution::ReconnectTime) => Since::Drop,
        Some(Distribution::TimeToSuccess | Distribution::TimeToGiveup) => Since::CallStart,
        _ => Since::Nothing,
    };
    let title = match (distribution, metric) {
        (Some(Distribution::ReconnectTime), _) => "time to reconnect".to_string(),
        (_, other) => {
            let t = catalogue::title(other, &[catalogue::ModelId::Grpc, catalogue::ModelId::Calls, catalogue::ModelId::Jobs]);
            let mut c = t.chars();
            c.next().map(|f| f.to_lowercase().chain(c).collect()).unwrap_or_default()
        }
    };
    (title, since)
}

/// What a metric's clock starts at, which says whether "the server was still down" has
/// a place on its x axis.
#[derive(Clone, Copy, PartialEq)]
enum Since {
    /// The connection's drop: a restart drops every connection as it goes down.
    Drop,
    /// The call's start, when every call starts at the same moment.
    CallStart,
    Nothing,
}

/// A line: its colour index, stroke width and (value, fraction) points in the axis's unit.
type Line = (usize, u32, Vec<(f64, f64)>);

pub(crate) struct CdfFigure {
    title: String,
    subtitle: String,
    legend: Vec<(Glyph, String)>,
    /// Rows of panels (one row per metric), each with one place per column (cell), empty
    /// where that cell has no values of the metric.
    rows: Vec<Vec<Option<Panel>>>,
    columns: usize,
}

struct Panel {
    caption: String,
    x_desc: String,
    lines: Vec<Line>,
    /// Where the server was still down, in the axis's unit.
    down: Vec<(f64, f64)>,
    x: (f64, f64),
    log: bool,
    /// "fraction of clients" (or of jobs).
    y_desc: String,
}

/// An axis unit: its name and seconds per unit.
fn unit_for(lo: f64, hi: f64, log: bool) -> (&'static str, f64) {
    if hi < 1.0 {
        ("ms", 1e-3)
    } else if log {
        // Decades read as round numbers in one unit: 0.1, 1, 10, 100, 1000 s.
        ("s", 1.0)
    } else if hi - lo.min(0.0) > 300.0 {
        ("min", 60.0)
    } else {
        ("s", 1.0)
    }
}

pub(crate) fn figure(data: &RunSet, opts: &PlotOptions) -> Result<CdfFigure, ReportError> {
    let rows = data.cdf.as_deref().unwrap_or(&[]);
    let mut row_variants: Vec<&str> = Vec::new();
    let mut metrics: Vec<String> = Vec::new();
    let mut seen: (BTreeSet<&str>, BTreeSet<&str>) = (BTreeSet::new(), BTreeSet::new());
    let mut has: BTreeSet<(&str, &[String])> = BTreeSet::new();
    for r in rows {
        backoffsim_core::run::interrupt::check()?;
        if seen.0.insert(&r.variant) {
            row_variants.push(&r.variant);
        }
        if seen.1.insert(&r.metric) {
            metrics.push(r.metric.clone());
        }
        has.insert((r.variant.as_str(), r.point.as_slice()));
    }
    if let Some(m) = &opts.metric {
        if !metrics.contains(m) {
            let names = metrics.iter().map(String::as_str);
            return Err(ReportError::Missing(format!(
                "cdf.csv: {}",
                backoffsim_core::suggest::unknown("metric", m, names, None)
            )));
        }
        metrics = vec![m.clone()];
    }
    let all = series(data, opts, &row_variants, &|v, p| has.contains(&(v, p)))?;
    if all.is_empty() {
        return Err(ReportError::Missing(format!("cdf.csv has no rows for variant {}", opts.variants.join(", "))));
    }
    let mut seen: (BTreeSet<&str>, BTreeSet<&[String]>) = (BTreeSet::new(), BTreeSet::new());
    let variants: Vec<&str> = all.iter().map(|s| s.variant.as_str()).filter(|v| seen.0.insert(v)).collect();
    let cells: Vec<&[String]> = all.iter().map(|s| s.point.as_slice()).filter(|p| seen.1.insert(p)).collect();
    // One panel per metric when lines are told apart by one thing (the variant or the
    // cell); a column per cell when both vary, so each line is one variant in one cell.
    let grid = variants.len() > 1 && cells.len() > 1;
    let (columns, omitted): (Vec<Vec<&Series>>, Option<String>) = if grid {
        let shown = &cells[..cells.len().min(MAX_COLUMNS)];
        let cols = shown.iter().map(|c| all.iter().filter(|s| s.point == *c).take(MAX_LINES).collect()).collect();
        (cols, omitted_note(shown.len(), cells.len(), "sweep cells (one column each)"))
    } else {
        let lines: Vec<&Series> = all.iter().take(MAX_LINES).collect();
        (vec![lines], omitted_note(all.len().min(MAX_LINES), all.len(), "lines"))
    };
    let one_variant = variants.len() == 1;
    let who = crate::population(&crate::models(data));
    let mut panel_rows = Vec::new();
    for metric in &metrics {
        let mut row = Vec::new();
        for col in &columns {
            row.push(panel(data, metric, col, opts, grid, one_variant)?);
        }
        if row.iter().any(Option::is_some) {
            panel_rows.push(row);
        }
    }
    if panel_rows.is_empty() {
        return Err(ReportError::Missing("cdf.csv has no values in the chosen window".into()));
    }
    let legend = legend(&columns, &panel_rows, grid, one_variant);
    let reps: BTreeSet<u64> = data.runs.iter().filter_map(|r| r.replications).collect();
    let averaged = match reps.iter().next() {
        Some(1) if reps.len() == 1 => "one replication".to_string(),
        _ => "quantiles averaged over replications".to_string(),
    };
    let scenario = super::scenarios(data);
    let mut subtitle = format!("{scenario} · {averaged} · dots: median, 99th percentile");
    if let Some(note) = omitted {
        subtitle.push_str(&format!(" · {note}"));
    }
    Ok(CdfFigure {
        title: format!("Distribution over {who} (CDF)"),
        subtitle,
        legend,
        columns: panel_rows.iter().map(Vec::len).max().unwrap_or(1),
        rows: panel_rows,
    })
}

/// Colours follow the variant's place in the run, so they match across plots; with one
/// variant, the cell's place among those shown.
fn colour(s: &Series, i: usize, one_variant: bool) -> usize {
    if one_variant { i } else { s.variant_index }
}

/// The panel of `metric` with a line per series of `col`, or `None` when none has
/// values in the window.
fn panel(
    data: &RunSet,
    metric: &str,
    col: &[&Series],
    opts: &PlotOptions,
    grid: bool,
    one_variant: bool,
) -> Result<Option<Panel>, ReportError> {
    let rows = data.cdf.as_deref().unwrap_or(&[]);
    let who = crate::population(&crate::models(data));
    let (title, since) = metric_title(metric);
    let n = col.len() as u32;
    let mut lines = Vec::new();
    // Where the server was still down, each span once: a hundred thousand restarts
    // of one length are one span.
    let mut down: Vec<(f64, f64)> = Vec::new();
    let mut spans_seen: BTreeSet<(u64, u64)> = BTreeSet::new();
    for (i, s) in col.iter().enumerate() {
        backoffsim_core::run::interrupt::check()?;
        let mut pts: Vec<(f64, f64)> = rows
            .iter()
            .filter(|r| r.variant == s.variant && r.point == s.point && r.metric == metric)
            .map(|r| (r.value, r.fraction))
            .collect();
        pts.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.total_cmp(&b.0)));
        let pts = window(&pts, opts.from, opts.to);
        if pts.is_empty() {
            continue;
        }
        // Earlier lines are drawn wider, so where curves coincide each still shows
        // as a stripe beside the one drawn over it.
        let width = 2 + (n - 1 - i as u32).min(3);
        lines.push((colour(s, i, one_variant), width, pts));
        for span in still_down(since, &data.facts(&s.variant, &s.point)) {
            if spans_seen.insert((span.0.to_bits(), span.1.to_bits())) {
                down.push(span);
            }
        }
    }
    if lines.is_empty() {
        return Ok(None);
    }
    let values = || lines.iter().flat_map(|(_, _, l)| l.iter().map(|p| p.0));
    let (lo, hi) = values().fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(v), b.max(v)));
    let pos_lo = values().filter(|v| *v > 0.0).fold(f64::MAX, f64::min);
    let log = lo >= 0.0 && pos_lo < f64::MAX && spans_decades(pos_lo, hi);
    let (unit, per) = unit_for(lo, hi, log);
    let x = if log {
        let (a, b) = axis_range(pos_lo / per, hi / per, true);
        (opts.from.map_or(a, |f| (f / per).max(a)), opts.to.map_or(b, |t| t / per))
    } else {
        let (a, b) = axis_range(lo / per, hi / per, false);
        (opts.from.map_or(a, |f| f / per), opts.to.map_or(b, |t| t / per))
    };
    for (_, _, l) in &mut lines {
        for p in l.iter_mut() {
            // A zero has no place on a log axis: it sits at the left edge.
            p.0 = (p.0 / per).clamp(x.0, x.1);
        }
    }
    let down = super::bands::merged(down.iter().map(|&(a, b)| (a / per, b / per)), x);
    let cell = if grid { super::cell_label(&data.sweep_keys, &col[0].point) } else { String::new() };
    let caption = if cell.is_empty() { title.to_string() } else { format!("{title} · {cell}") };
    let since_text = match since {
        Since::Drop => " since the drop",
        Since::CallStart => " since the call's start",
        Since::Nothing => "",
    };
    let x_desc = format!("{title}{since_text} ({unit}{})", if log { ", log scale" } else { "" });
    Ok(Some(Panel { caption, x_desc, lines, down, x, log, y_desc: format!("fraction of {who}") }))
}

/// The legend: a line per variant in a grid of cells, else per line drawn; and the
/// still-down band where a panel has it.
fn legend(columns: &[Vec<&Series>], panel_rows: &[Vec<Option<Panel>>], grid: bool, one_variant: bool) -> Vec<(Glyph, String)> {
    let mut legend: Vec<(Glyph, String)> = Vec::new();
    let legend_series: Vec<&Series> = if grid {
        let mut seen: Vec<&Series> = Vec::new();
        for s in columns.iter().flatten() {
            if !seen.iter().any(|o| o.variant == s.variant) {
                seen.push(s);
            }
        }
        seen
    } else {
        columns[0].clone()
    };
    let count = legend_series.len() as u32;
    for (i, s) in legend_series.iter().enumerate() {
        let width = 2 + (count - 1 - i as u32).min(3);
        let label = if grid { s.variant.clone() } else { s.label.clone() };
        legend.push((Glyph::Line(color(colour(s, i, one_variant)), width), label));
    }
    if panel_rows.iter().flatten().flatten().any(|p| !p.down.is_empty()) {
        legend.push((Glyph::Band(DOWN), "the server was still down".into()));
    }
    legend
}

/// The points of a line inside `[from, to]`, cut where the line crosses an edge, so
/// nothing is drawn outside the axes.
fn window(pts: &[(f64, f64)], from: Option<f64>, to: Option<f64>) -> Vec<(f64, f64)> {
    let (lo, hi) = (from.unwrap_or(f64::NEG_INFINITY), to.unwrap_or(f64::INFINITY));
    let mut out: Vec<(f64, f64)> = Vec::new();
    for w in pts.windows(2) {
        let ((xa, ya), (xb, yb)) = (w[0], w[1]);
        let at = |x: f64| if xb == xa { (x, yb) } else { (x, ya + (yb - ya) * (x - xa) / (xb - xa)) };
        let (a, b) = (xa.min(xb), xa.max(xb));
        if b < lo || a > hi {
            continue;
        }
        let start = if xa < lo {
            at(lo)
        } else if xa > hi {
            at(hi)
        } else {
            (xa, ya)
        };
        let end = if xb < lo {
            at(lo)
        } else if xb > hi {
            at(hi)
        } else {
            (xb, yb)
        };
        if out.last() != Some(&start) {
            out.push(start);
        }
        out.push(end);
    }
    if pts.len() == 1 && pts[0].0 >= lo && pts[0].0 <= hi {
        out.push(pts[0]);
    }
    out
}

/// Where, on a metric's clock (seconds), the server was still down in a cell.
fn still_down(since: Since, facts: &CellFacts) -> Vec<(f64, f64)> {
    match since {
        // Every restart drops its connections as it goes down: nobody can be back
        // before it is up again.
        Since::Drop => facts.down.iter().filter(|d| d.restart).map(|d| (0.0, d.to - d.from)).collect(),
        Since::CallStart => match facts.calls_start {
            Some(c) if c.spread == 0.0 && !c.repeats => {
                facts.down.iter().filter(|d| d.to > c.at).map(|d| ((d.from - c.at).max(0.0), d.to - c.at)).collect()
            }
            _ => Vec::new(),
        },
        Since::Nothing => Vec::new(),
    }
}

impl Figure for CdfFigure {
    fn size(&self) -> (u32, u32) {
        let width = self.width();
        (width, header_height(width, &self.subtitle, &self.legend) + self.rows.len() as u32 * PANEL_HEIGHT + 8)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let body = header(root, &self.title, &self.subtitle, &self.legend)?;
        let areas = body.split_evenly((self.rows.len(), self.columns));
        for (r, row) in self.rows.iter().enumerate() {
            for (c, p) in row.iter().enumerate() {
                super::stop()?;
                let Some(p) = p else { continue };
                let area = &areas[r * self.columns + c];
                let w = area.dim_in_pixel().0;
                if p.log {
                    draw_panel(area, p, w, crate::plot::log_axis(p.x.0, p.x.1))?;
                } else {
                    draw_panel(area, p, w, p.x.0..p.x.1)?;
                }
            }
        }
        Ok(())
    }
}

impl CdfFigure {
    fn width(&self) -> u32 {
        if self.columns > 1 { (self.columns as u32 * COLUMN_WIDTH).max(WIDTH) } else { WIDTH }
    }
}

fn draw_panel<DB, X>(area: &DrawingArea<DB, Shift>, p: &Panel, width: u32, x_spec: X) -> Result<(), String>
where
    DB: DrawingBackend,
    X: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
{
    let caption_style = TextStyle::from((FONT, 15, FontStyle::Bold).into_font()).color(&INK);
    let mut chart = ChartBuilder::on(area)
        .margin_left(8)
        .margin_right(34)
        .margin_top(6)
        .caption(fit(&p.caption, 15, width.saturating_sub(40)), caption_style)
        .x_label_area_size(44)
        .y_label_area_size(60)
        .build_cartesian_2d(x_spec, 0.0..1.02)
        .d()?;
    mesh(&mut chart, &fit_plain(&p.x_desc, width.saturating_sub(90)), &p.y_desc, &tick, &tick)?;
    let (x0, x1) = p.x;
    chart.draw_series(p.down.iter().map(|&(a, b)| Rectangle::new([(a, 0.0), (b, 1.02)], DOWN.filled()))).d()?;
    let base = area.get_base_pixel();
    for q in [0.5, 0.99] {
        chart.draw_series(DashedLineSeries::new([(x0, q), (x1, q)], 4, 4, MUTED.stroke_width(1))).d()?;
        // The label sits in the margin right of the axes, where no line can cover it.
        let (px, py) = chart.backend_coord(&(x1, q));
        area.draw_text(
            if q == 0.5 { "p50" } else { "p99" },
            &TextStyle::from((FONT, 12)).color(&MUTED).pos(Pos::new(HPos::Left, VPos::Center)),
            (px - base.0 + 4, py - base.1),
        )
        .d()?;
    }
    for (ci, width, line) in &p.lines {
        chart.draw_series(LineSeries::new(line.iter().copied(), color(*ci).stroke_width(*width))).d()?;
    }
    // Where each line crosses the median and the 99th percentile.
    for (ci, _, line) in &p.lines {
        for q in [0.5, 0.99] {
            if let Some(&(v, _)) = line.iter().find(|pt| pt.1 >= q - 1e-9) {
                chart.draw_series(std::iter::once(Circle::new((v, q), 4, color(*ci).filled()))).d()?;
            }
        }
    }
    Ok(())
}

/// Cuts an axis description to `width` pixels.
fn fit_plain(text: &str, width: u32) -> String {
    if super::text_width(text, 14) <= width { text.to_string() } else { fit(text, 13, width) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{CallsStart, Down};

    #[test]
    fn a_window_cuts_lines_at_its_edges_instead_of_dropping_points() {
        let line = [(0.0, 0.0), (10.0, 0.5), (20.0, 1.0)];
        assert_eq!(window(&line, Some(5.0), Some(15.0)), vec![(5.0, 0.25), (10.0, 0.5), (15.0, 0.75)]);
        assert_eq!(window(&line, None, None), line.to_vec());
        assert!(window(&line, Some(30.0), None).is_empty());
    }

    #[test]
    fn axes_use_one_unit_chosen_by_their_span() {
        assert_eq!(unit_for(0.0, 0.5, false).0, "ms");
        assert_eq!(unit_for(30.0, 125.0, false).0, "s");
        assert_eq!(unit_for(0.0, 1000.0, false).0, "min");
        assert_eq!(unit_for(0.01, 1000.0, true).0, "s");
    }

    #[test]
    fn the_server_is_still_down_from_the_drop_until_the_restart_ends() {
        let facts = CellFacts {
            down: vec![Down { from: 10.0, to: 40.0, restart: true }, Down { from: 100.0, to: 120.0, restart: false }],
            ..CellFacts::default()
        };
        assert_eq!(still_down(Since::Drop, &facts), vec![(0.0, 30.0)]);
        assert_eq!(still_down(Since::Nothing, &facts), vec![]);
        // Calls that all start at 5 s meet the first restart 5 s in; spread calls get nothing.
        let calls = |spread| CellFacts {
            calls_start: Some(CallsStart { at: 5.0, spread, repeats: false }),
            down: vec![Down { from: 5.0, to: 35.0, restart: false }],
            ..CellFacts::default()
        };
        assert_eq!(still_down(Since::CallStart, &calls(0.0)), vec![(0.0, 30.0)]);
        assert_eq!(still_down(Since::CallStart, &calls(1.0)), vec![]);
    }
}
