//! `sweep`: a metric against the first swept parameter, a line per variant (and per
//! value of a second swept parameter) with its 95 % confidence band, or, when the swept
//! values are categories rather than numbers, a dot per variant with its interval as a
//! whisker: a line between categories would suggest values in between. One panel per
//! headline metric of the model (constant ones left out) unless `--metric` picks one.

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::{CoordTranslate, Shift};
use plotters::prelude::*;
use plotters::style::FontStyle;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{
    Drawn, FONT, Figure, Glyph, INK, PlotOptions, WIDTH, axis_range, color, fit, fmt_num, header, header_height,
    spans_decades, tick,
};
use super::style::sweep::*;
use crate::engine::time::SimDuration;
use crate::metrics::catalogue::{self, Model};
use std::collections::{BTreeMap, BTreeSet};

use crate::report::data::{RunSet, SummaryRow};
use crate::report::{Better, ReportError};

/// The values a swept parameter takes, in plotting order, and where they go on an axis.
#[derive(Clone, Debug)]
/// A metric against the swept parameter, a line per variant with its 95 % CI.
pub struct Sweep;

impl super::Plot for Sweep {
    const NAME: &'static str = "sweep";
    const ABOUT: &'static str = "A metric against the swept parameter, a line per variant with its 95 % CI";
    const PER_CELL: bool = false;
    type Figure = SweepFigure;

    fn missing(data: &RunSet) -> Option<String> {
        data.sweep_keys
            .is_empty()
            .then(|| "no sweep: summary.csv has no sweep-key columns (the scenario has no [sweep])".into())
    }

    fn figure(data: &RunSet, opts: &PlotOptions) -> Result<SweepFigure, ReportError> {
        figure(data, opts)
    }

    fn caption(data: &RunSet) -> Result<(String, String), crate::interrupt::Interrupted> {
        Ok((
            "Metrics against the swept parameter".into(),
        format!(
                        "The model's headline metrics against `{}`, a line per variant{} with its 95 % \
                         confidence band (a dot with a whisker where the values are categories); metrics \
                         that do not vary are left out. `--metric` re-draws any metric.",
                        data.sweep_keys.first().cloned().unwrap_or_default(),
                        data.sweep_keys.get(1).map(|k| format!(" and value of `{k}`")).unwrap_or_default()
                    ),
        ))
    }

    fn redraw(r: &super::Redraw<'_>) -> String {
        format!("backoffsim plot sweep {} --metric {m} -o {m}.png", r.dir, m = r.metric)
    }
}

pub(crate) struct SweepAxis {
    pub key: String,
    pub labels: Vec<String>,
    /// Position of each label: its number (a duration in seconds), or its index when
    /// the values are not numbers.
    pub xs: Vec<f64>,
    pub numeric: bool,
    pub log: bool,
    /// Each label's place in `labels`: rows are placed by lookup, since an axis can have
    /// thousands of values.
    places: BTreeMap<String, usize>,
}

impl SweepAxis {
    /// The distinct values of sweep key `k` in `data`, numbers sorted ascending.
    pub fn of(data: &RunSet, k: usize) -> SweepAxis {
        let mut seen: BTreeSet<&str> = BTreeSet::new();
        let labels: Vec<String> =
            data.summary.iter().map(|r| &r.point[k]).filter(|l| seen.insert(l)).cloned().collect();
        let parsed: Vec<Option<f64>> = labels.iter().map(|l| number(l)).collect();
        let numeric = !labels.is_empty() && parsed.iter().all(Option::is_some);
        if numeric {
            let mut pairs: Vec<(f64, String)> = parsed.into_iter().flatten().zip(labels).collect();
            pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
            let xs: Vec<f64> = pairs.iter().map(|p| p.0).collect();
            let lo = xs.first().copied().unwrap_or(0.0);
            let hi = xs.last().copied().unwrap_or(1.0);
            let labels: Vec<String> = pairs.into_iter().map(|p| p.1).collect();
            SweepAxis {
                key: data.sweep_keys[k].clone(),
                places: places(&labels),
                labels,
                log: spans_decades(lo, hi) && xs.len() > 2,
                xs,
                numeric,
            }
        } else {
            SweepAxis {
                key: data.sweep_keys[k].clone(),
                xs: (0..labels.len()).map(|i| i as f64).collect(),
                places: places(&labels),
                labels,
                numeric,
                log: false,
            }
        }
    }

    /// Where `label` is in [`SweepAxis::labels`].
    pub fn position(&self, label: &str) -> Option<usize> {
        self.places.get(label).copied()
    }

    pub fn x_of(&self, label: &str) -> Option<f64> {
        self.position(label).map(|i| self.xs[i])
    }

    /// The axis range, with room around the first and last value.
    pub fn range(&self) -> (f64, f64) {
        let lo = self.xs.first().copied().unwrap_or(0.0);
        let hi = self.xs.last().copied().unwrap_or(1.0);
        if !self.numeric {
            (-0.5, self.xs.len() as f64 - 0.5)
        } else if self.log {
            (lo / 1.25, hi * 1.25)
        } else {
            let pad = ((hi - lo) * 0.05).max(if hi == lo { 1.0 } else { 0.0 });
            (lo - pad, hi + pad)
        }
    }
}

/// Each label's first place.
fn places(labels: &[String]) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for (i, l) in labels.iter().enumerate() {
        out.entry(l.clone()).or_insert(i);
    }
    out
}

/// A sweep value as a number: plain, or a duration in seconds.
fn number(s: &str) -> Option<f64> {
    let s = s.trim();
    s.parse::<f64>().ok().filter(|v| v.is_finite()).or_else(|| SimDuration::parse(s).ok().map(|d| d.as_secs_f64()))
}

pub(crate) struct SweepFigure {
    title: String,
    subtitle: String,
    legend: Vec<(Glyph, String)>,
    axis: SweepAxis,
    panels: Vec<Panel>,
    cols: usize,
    /// What the default choice of metrics left out and how to get any other.
    footer: String,
}

struct SeriesKey<'a> {
    variant: &'a str,
    second: Option<String>,
    colour: usize,
    /// Even: solid line and dots; odd: dashed line and triangles.
    style: usize,
}

/// x, mean and 95 % CI.
type SweepPoint = (f64, f64, Option<(f64, f64)>);

/// A line's colour index, style and points in x order.
type Series = (usize, usize, Vec<SweepPoint>);

struct Panel {
    caption: String,
    y_desc: String,
    series: Vec<Series>,
    y: (f64, f64),
    log: bool,
}

pub(crate) fn figure(data: &RunSet, opts: &PlotOptions) -> Result<SweepFigure, ReportError> {
    let Selection { metrics, models, footer } = chosen_metrics(data, opts, "sweep")?;
    let axis = SweepAxis::of(data, 0);
    let second = (data.sweep_keys.len() > 1).then(|| SweepAxis::of(data, 1));
    // Keys beyond the second are held at their first value.
    let fixed: Vec<(usize, String)> =
        (2..data.sweep_keys.len()).map(|k| (k, SweepAxis::of(data, k).labels[0].clone())).collect();
    let variants: Vec<&str> = data
        .variant_names()
        .into_iter()
        .filter(|n| opts.variants.is_empty() || opts.variants.iter().any(|v| v == n))
        .collect();
    // Without a second key a line per variant, told apart by colour. With one, the
    // colour tells the second key's value and the line style the variant.
    let mut series_keys: Vec<SeriesKey> = Vec::new();
    for (vi, v) in variants.iter().enumerate() {
        match &second {
            None => series_keys.push(SeriesKey { variant: v, second: None, colour: vi, style: 0 }),
            Some(ax) => {
                for (li, l) in ax.labels.iter().enumerate() {
                    series_keys.push(SeriesKey { variant: v, second: Some(l.clone()), colour: li, style: vi });
                }
            }
        }
    }
    let rows = rows_by(data);
    let mut panels = Vec::new();
    for (metric, unit) in &metrics {
        crate::interrupt::check()?;
        let mut series = Vec::new();
        for key in &series_keys {
            let (variant, second_value) = (&key.variant, &key.second);
            let mut pts: Vec<SweepPoint> = (rows.get(&(*variant, metric.as_str())).into_iter().flatten())
                .filter(|r| second_value.as_ref().is_none_or(|s| &r.point[1] == s))
                .filter(|r| fixed.iter().all(|(k, v)| &r.point[*k] == v))
                .filter_map(|r| Some((axis.x_of(&r.point[0])?, r.mean, r.ci)))
                .collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            if !pts.is_empty() {
                series.push((key.colour, key.style, pts));
            }
        }
        let vals = series.iter().flat_map(|(_, _, p)| {
            p.iter().flat_map(|&(_, m, ci)| [Some(m), ci.map(|c| c.0), ci.map(|c| c.1)].into_iter().flatten())
        });
        let (lo, hi) = vals.fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(v), b.max(v)));
        if lo > hi {
            continue;
        }
        let mean_lo = series.iter().flat_map(|(_, _, p)| p.iter().map(|q| q.1)).fold(f64::MAX, f64::min);
        let log = mean_lo > 0.0 && spans_decades(mean_lo, hi);
        let y = if log {
            axis_range(lo.max(mean_lo / 2.0), hi, true)
        } else {
            let (a, b) = axis_range(lo, hi, false);
            (a.min(lo), b)
        };
        let better = match catalogue::better(metric, &models) {
            Some(Better::Lower) => " · lower is better",
            Some(Better::Higher) => " · higher is better",
            None => "",
        };
        let title = catalogue::title(metric, &models);
        panels.push(Panel {
            caption: format!("{title}{better}{}", if log { " · log scale" } else { "" }),
            // The caption names the metric; the axis says what it is counted in.
            y_desc: match unit.as_str() {
                "" => metric.clone(),
                "s" => "seconds".to_string(),
                u => u.to_string(),
            },
            series,
            y,
            log,
        });
    }
    if panels.is_empty() {
        return Err(ReportError::Missing("summary.csv has no values to plot for the chosen variants".into()));
    }
    let mut legend: Vec<(Glyph, String)> = match &second {
        None => variants.iter().enumerate().map(|(i, v)| (Glyph::Line(color(i), 3), v.to_string())).collect(),
        Some(ax) => {
            let mut l: Vec<(Glyph, String)> = ax
                .labels
                .iter()
                .enumerate()
                .map(|(i, v)| (Glyph::Line(color(i), 3), format!("{}={v}", ax.key)))
                .collect();
            if variants.len() > 1 {
                l.extend(variants.iter().enumerate().map(|(i, v)| {
                    let g = if i % 2 == 0 { Glyph::Line(INK, 2) } else { Glyph::Dashed(INK) };
                    (g, v.to_string())
                }));
            }
            l
        }
    };
    legend.push(if axis.numeric {
        (Glyph::Band(BAND), "95 % confidence interval of the mean".to_string())
    } else {
        (Glyph::Line(super::MUTED, 1), "whisker: 95 % confidence interval of the mean".to_string())
    });
    if !axis.numeric {
        // Categories carry no lines, so the legend shows the markers.
        for (g, _) in legend.iter_mut() {
            if let Glyph::Line(c, 3) = *g {
                *g = Glyph::Dot(c);
            } else if let Glyph::Dashed(c) = *g {
                *g = Glyph::Triangle(c);
            }
        }
    }
    let scenario = data.runs.iter().map(|r| r.scenario.as_str()).collect::<Vec<_>>().join(" vs ");
    let mut subtitle = format!("{scenario} · x: {}", axis.key);
    if let Some(ax) = &second {
        subtitle.push_str(&format!(" · a {} per {}", if axis.numeric { "line" } else { "colour" }, ax.key));
    }
    for (k, v) in &fixed {
        subtitle.push_str(&format!(" · {}={v}", data.sweep_keys[*k]));
    }
    let cols = if panels.len() > 1 { 2 } else { 1 };
    Ok(SweepFigure {
        title: format!(
            "{} against {}",
            if metrics.len() == 1 { catalogue::title(&metrics[0].0, &models) } else { "Metrics".to_string() },
            axis.key
        ),
        subtitle,
        legend,
        axis,
        panels,
        cols,
        footer,
    })
}

/// The summary's rows of each (variant, metric), in the summary's order: a figure of a
/// line per variant looks up each line's rows instead of reading the whole summary.
pub(crate) fn rows_by(data: &RunSet) -> BTreeMap<(&str, &str), Vec<&SummaryRow>> {
    let mut out: BTreeMap<(&str, &str), Vec<&SummaryRow>> = BTreeMap::new();
    for r in &data.summary {
        out.entry((r.variant.as_str(), r.metric.as_str())).or_default().push(r);
    }
    out
}

/// The metrics a sweep or heatmap shows, and what the figure says about the choice.
pub(crate) struct Selection {
    /// `(id, unit)` in summary order.
    pub metrics: Vec<(String, String)>,
    /// The runs' models, for the metrics' titles.
    pub models: Vec<Model>,
    /// A line for under the figure: what the default choice left out; empty when the
    /// user named the metric.
    pub footer: String,
}

/// Where the metrics of a run are listed, when there are too many to show after a typo.
pub(crate) const NOT_IN_RUN: &str =
    "summary.csv has every metric the run wrote, `backoffsim metrics` what each measures";

/// The metrics to show: `--metric` (any metric, even a constant or internal one), or
/// by default the headline metrics of the runs' models that vary across the plot, so
/// the figure answers the model's question instead of listing every counter. Runs whose
/// metrics the catalogue does not know fall back to every varying metric, and a run
/// where nothing varies to every metric with a value: `run` must always get a picture.
pub(crate) fn chosen_metrics(data: &RunSet, opts: &PlotOptions, kind: &str) -> Result<Selection, ReportError> {
    let all = data.metrics();
    let models = crate::report::models(data);
    if let Some(m) = &opts.metric {
        let one = all.iter().find(|(n, _)| n == m).map(|x| vec![x.clone()]).ok_or_else(|| {
            let names = all.iter().map(|(n, _)| n.as_str());
            ReportError::Missing(crate::suggest::unknown("metric", m, names, Some(NOT_IN_RUN)))
        })?;
        return Ok(Selection { metrics: one, models, footer: String::new() });
    }
    let shown = |v: &str| opts.variants.is_empty() || opts.variants.iter().any(|o| o == v);
    // Each metric's finite means over the variants shown, gathered in one pass.
    let mut means: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for r in data.summary.iter().filter(|r| r.mean.is_finite() && shown(&r.variant)) {
        means.entry(&r.metric).or_default().push(r.mean);
    }
    let values = |m: &str| -> &[f64] { means.get(m).map_or(&[], Vec::as_slice) };
    let entry = |m: &str| catalogue::find(m, &models);
    let with_values: Vec<(String, String)> =
        all.iter().filter(|(m, _)| !entry(m).is_some_and(|e| e.internal) && !values(m).is_empty()).cloned().collect();
    let varies = |m: &str| !constant(values(m));
    let headline = |m: &str| entry(m).is_some_and(|e| e.is_headline_for(&models));
    let mut head: Vec<(String, String)> =
        with_values.iter().filter(|(m, _)| headline(m) && varies(m)).cloned().collect();
    // In the catalogue's order, which groups related metrics (the give-up reasons).
    let rank = |m: &str| catalogue::CATALOGUE.iter().position(|e| entry(m).is_some_and(|f| std::ptr::eq(e, f)));
    head.sort_by_key(|(m, _)| rank(m));
    let how = format!("Any metric of summary.csv: backoffsim plot {kind} RUN_DIR --metric ID");
    if !head.is_empty() {
        let flat: Vec<String> = with_values
            .iter()
            .filter(|(m, _)| headline(m) && !varies(m))
            .map(|(m, _)| format!("{} ({})", catalogue::title(m, &models), fmt_num(values(m)[0], 4)))
            .collect();
        let flat = if flat.is_empty() { String::new() } else { format!(" Constant, not drawn: {}.", flat.join(", ")) };
        return Ok(Selection { metrics: head, models, footer: format!("The model's headline metrics.{flat} {how}.") });
    }
    let varying: Vec<(String, String)> = with_values.iter().filter(|(m, _)| varies(m)).cloned().collect();
    let metrics = [varying, with_values, all].into_iter().find(|v| !v.is_empty()).unwrap_or_default();
    Ok(Selection { metrics, models, footer: format!("{how}.") })
}

/// Whether every value is the same (up to rounding): such a metric's panel says nothing.
fn constant(values: &[f64]) -> bool {
    let (lo, hi) = values.iter().fold((f64::MAX, f64::MIN), |(a, b), &v| (a.min(v), b.max(v)));
    hi - lo <= 1e-12 * lo.abs().max(hi.abs())
}


impl SweepFigure {
    fn footer_height(&self) -> u32 {
        if self.footer.is_empty() { 0 } else { FOOTER_HEIGHT }
    }
}

/// `text` cut to `width` pixels of regular type (the footer is not bold).
fn fit_plain(text: &str, size: u32, width: u32) -> String {
    if super::text_width(text, size) <= width {
        return text.to_string();
    }
    let mut chars: Vec<char> = text.chars().collect();
    while !chars.is_empty() && super::text_width(&(chars.iter().collect::<String>() + "…"), size) > width {
        chars.pop();
    }
    chars.into_iter().collect::<String>() + "…"
}

impl Figure for SweepFigure {
    fn size(&self) -> (u32, u32) {
        let rows = super::grid_rows(self.panels.len(), self.cols) as u32;
        let ph = if self.panels.len() == 1 { SINGLE_HEIGHT } else { PANEL_HEIGHT };
        (WIDTH, header_height(WIDTH, &self.subtitle, &self.legend) + rows * ph + 8 + self.footer_height())
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let body = header(root, &self.title, &self.subtitle, &self.legend)?;
        let h = body.dim_in_pixel().1;
        let (body, foot) = body.split_vertically(h - self.footer_height());
        if !self.footer.is_empty() {
            let style = TextStyle::from((FONT, 13)).color(&super::MUTED);
            foot.draw_text(&fit_plain(&self.footer, 13, WIDTH - 28), &style, (14, 7)).d()?;
        }
        let rows = super::grid_rows(self.panels.len(), self.cols);
        let areas = body.split_evenly((rows, self.cols));
        for (area, p) in areas.iter().zip(&self.panels) {
            super::stop()?;
            let (x0, x1) = self.axis.range();
            match (self.axis.log, p.log) {
                (true, true) => draw_panel(area, p, self, (x0..x1).log_scale(), (p.y.0..p.y.1).log_scale())?,
                (true, false) => draw_panel(area, p, self, (x0..x1).log_scale(), p.y.0..p.y.1)?,
                (false, true) => draw_panel(area, p, self, x0..x1, (p.y.0..p.y.1).log_scale())?,
                (false, false) => draw_panel(area, p, self, x0..x1, p.y.0..p.y.1)?,
            }
        }
        Ok(())
    }
}

fn draw_panel<DB, X, Y>(
    area: &DrawingArea<DB, Shift>,
    p: &Panel,
    fig: &SweepFigure,
    x_spec: X,
    y_spec: Y,
) -> Result<(), String>
where
    DB: DrawingBackend,
    X: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y: AsRangedCoord<Value = f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let width = area.dim_in_pixel().0;
    let caption_style = TextStyle::from((FONT, 15, FontStyle::Bold).into_font()).color(&INK);
    let mut chart = ChartBuilder::on(area)
        .margin_left(8)
        .margin_right(20)
        .margin_top(6)
        .caption(fit(&p.caption, 15, width - 30), caption_style)
        .x_label_area_size(44)
        .y_label_area_size(70)
        .build_cartesian_2d(x_spec, y_spec)
        .d()?;
    let axis = &fig.axis;
    // Ticks at the swept values themselves (drawn below), not at round numbers.
    chart
        .configure_mesh()
        .disable_x_mesh()
        .bold_line_style(super::GRID_BOLD)
        .light_line_style(super::GRID_LIGHT)
        .max_light_lines(4)
        .axis_style(super::MUTED)
        .label_style((FONT, 13).into_font().color(&INK))
        .axis_desc_style((FONT, 14).into_font().color(&INK))
        .x_desc(axis.key.as_str())
        .y_desc(p.y_desc.as_str())
        .x_labels(2)
        .x_label_formatter(&|_| String::new())
        .set_tick_mark_size(LabelAreaPosition::Bottom, 0)
        .y_labels(6)
        .y_label_formatter(&tick)
        .draw()
        .d()?;
    let (y0, y1) = p.y;
    for &x in &axis.xs {
        chart.draw_series(LineSeries::new([(x, y0), (x, y1)], super::GRID_BOLD)).d()?;
    }
    let base = area.get_base_pixel();
    let mut right_edge = i32::MIN;
    for (x, label) in axis.xs.iter().zip(&axis.labels) {
        let (px, py) = chart.backend_coord(&(*x, y0));
        let w = super::text_width(label, 13) as i32;
        if px - w / 2 < right_edge + 6 {
            continue; // would overlap the previous label
        }
        right_edge = px + w / 2;
        area.draw(&PathElement::new(vec![(px - base.0, py - base.1), (px - base.0, py - base.1 + 5)], super::MUTED))
            .d()?;
        area.draw_text(
            label,
            &TextStyle::from((FONT, 13)).color(&INK).pos(Pos::new(HPos::Center, VPos::Top)),
            (px - base.0, py - base.1 + 8),
        )
        .d()?;
    }
    if axis.numeric {
        draw_lines(&mut chart, p)?;
    } else {
        draw_dots(&mut chart, p)?;
    }
    Ok(())
}

/// Numeric sweep values: a line per series through its means, over its confidence band.
fn draw_lines<DB, CT>(chart: &mut ChartContext<'_, DB, CT>, p: &Panel) -> Result<(), String>
where
    DB: DrawingBackend,
    CT: CoordTranslate<From = (f64, f64)>,
{
    let (y0, y1) = p.y;
    for (ci, _, pts) in &p.series {
        let col = color(*ci);
        let band: Vec<(f64, f64)> = pts
            .iter()
            .filter_map(|&(x, _, c)| c.map(|c| (x, c.1.min(y1))))
            .chain(pts.iter().rev().filter_map(|&(x, _, c)| c.map(|c| (x, c.0.max(y0)))))
            .collect();
        if band.len() >= 4 {
            chart.draw_series(std::iter::once(Polygon::new(band, col.mix(0.18).filled()))).d()?;
        }
    }
    for (ci, style, pts) in &p.series {
        let col = color(*ci);
        let line = pts.iter().map(|&(x, m, _)| (x, m));
        if style % 2 == 0 {
            chart.draw_series(LineSeries::new(line, col.stroke_width(2))).d()?;
            chart.draw_series(pts.iter().map(|&(x, m, _)| Circle::new((x, m), 3, col.filled()))).d()?;
        } else {
            chart.draw_series(DashedLineSeries::new(line, 7, 4, col.stroke_width(2))).d()?;
            chart.draw_series(pts.iter().map(|&(x, m, _)| TriangleMarker::new((x, m), 5, col.filled()))).d()?;
        }
    }
    Ok(())
}

/// Categorical sweep values: at each category a dot per series, side by side, its
/// confidence interval a whisker; nothing joins the categories.
fn draw_dots<DB, CT>(chart: &mut ChartContext<'_, DB, CT>, p: &Panel) -> Result<(), String>
where
    DB: DrawingBackend,
    CT: CoordTranslate<From = (f64, f64)>,
{
    let (y0, y1) = p.y;
    let n = p.series.len().max(1) as f64;
    let step = (0.7 / n).min(0.16);
    for (i, (ci, style, pts)) in p.series.iter().enumerate() {
        let col = color(*ci);
        let dx = (i as f64 - (n - 1.0) / 2.0) * step;
        for &(x, m, c) in pts {
            let x = x + dx;
            if let Some((lo, hi)) = c {
                let (lo, hi) = (lo.max(y0), hi.min(y1));
                chart.draw_series(LineSeries::new([(x, lo), (x, hi)], col.stroke_width(2))).d()?;
                let cap = step * 0.25;
                for y in [lo, hi] {
                    chart.draw_series(LineSeries::new([(x - cap, y), (x + cap, y)], col.stroke_width(2))).d()?;
                }
            }
            if style % 2 == 0 {
                chart.draw_series(std::iter::once(Circle::new((x, m), 5, col.filled()))).d()?;
            } else {
                chart.draw_series(std::iter::once(TriangleMarker::new((x, m), 6, col.filled()))).d()?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::report::plot::{Format, Kind, render};

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
}
