//! `sweep`: a metric against the first swept parameter, a line per variant (and per
//! value of a second swept parameter) with its 95 % confidence band; one panel per
//! metric unless `--metric` picks one.

use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;
use plotters::style::FontStyle;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{
    Drawn, FONT, Figure, Glyph, INK, PlotOptions, WIDTH, axis_range, color, fit, header, header_height, spans_decades,
    tick,
};
use crate::engine::time::SimDuration;
use crate::report::data::RunSet;
use crate::report::{Better, ReportError, direction};

/// The values a swept parameter takes, in plotting order, and where they go on an axis.
#[derive(Clone, Debug)]
pub(crate) struct SweepAxis {
    pub key: String,
    pub labels: Vec<String>,
    /// Position of each label: its number (a duration in seconds), or its index when
    /// the values are not numbers.
    pub xs: Vec<f64>,
    pub numeric: bool,
    pub log: bool,
}

impl SweepAxis {
    /// The distinct values of sweep key `k` in `data`, numbers sorted ascending.
    pub fn of(data: &RunSet, k: usize) -> SweepAxis {
        let mut labels: Vec<String> = Vec::new();
        for r in &data.summary {
            if !labels.contains(&r.point[k]) {
                labels.push(r.point[k].clone());
            }
        }
        let parsed: Vec<Option<f64>> = labels.iter().map(|l| number(l)).collect();
        let numeric = !labels.is_empty() && parsed.iter().all(Option::is_some);
        if numeric {
            let mut pairs: Vec<(f64, String)> = parsed.into_iter().flatten().zip(labels).collect();
            pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
            let xs: Vec<f64> = pairs.iter().map(|p| p.0).collect();
            let lo = xs.first().copied().unwrap_or(0.0);
            let hi = xs.last().copied().unwrap_or(1.0);
            SweepAxis {
                key: data.sweep_keys[k].clone(),
                labels: pairs.into_iter().map(|p| p.1).collect(),
                log: spans_decades(lo, hi) && xs.len() > 2,
                xs,
                numeric,
            }
        } else {
            SweepAxis {
                key: data.sweep_keys[k].clone(),
                xs: (0..labels.len()).map(|i| i as f64).collect(),
                labels,
                numeric,
                log: false,
            }
        }
    }

    pub fn x_of(&self, label: &str) -> Option<f64> {
        self.labels.iter().position(|l| l == label).map(|i| self.xs[i])
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
    let metrics = chosen_metrics(data, opts)?;
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
    let mut panels = Vec::new();
    for (metric, unit) in &metrics {
        let mut series = Vec::new();
        for key in &series_keys {
            let (variant, second_value) = (&key.variant, &key.second);
            let mut pts: Vec<SweepPoint> = data
                .summary
                .iter()
                .filter(|r| &r.variant == variant && &r.metric == metric)
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
        let better = match direction(metric) {
            Some(Better::Lower) => " · lower is better",
            Some(Better::Higher) => " · higher is better",
            None => "",
        };
        panels.push(Panel {
            caption: format!("{metric}{better}{}", if log { " · log scale" } else { "" }),
            y_desc: if unit.is_empty() { metric.clone() } else { format!("{metric} ({unit})") },
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
    legend.extend(std::iter::once((
        Glyph::Band(RGBColor(205, 205, 205)),
        "95 % confidence interval of the mean".to_string(),
    )));
    let scenario = data.runs.iter().map(|r| r.scenario.as_str()).collect::<Vec<_>>().join(" vs ");
    let mut subtitle = format!("{scenario} · x: {}", axis.key);
    if let Some(ax) = &second {
        subtitle.push_str(&format!(" · a line per {}", ax.key));
    }
    for (k, v) in &fixed {
        subtitle.push_str(&format!(" · {}={v}", data.sweep_keys[*k]));
    }
    let cols = if panels.len() > 1 { 2 } else { 1 };
    Ok(SweepFigure {
        title: format!(
            "{} against {}",
            if metrics.len() == 1 { metrics[0].0.clone() } else { "Metrics".to_string() },
            axis.key
        ),
        subtitle,
        legend,
        axis,
        panels,
        cols,
    })
}

/// The metrics to show: `--metric`, or all of them.
pub(crate) fn chosen_metrics(data: &RunSet, opts: &PlotOptions) -> Result<Vec<(String, String)>, ReportError> {
    let all = data.metrics();
    match &opts.metric {
        None => Ok(all),
        Some(m) => all.iter().find(|(n, _)| n == m).map(|x| vec![x.clone()]).ok_or_else(|| {
            ReportError::Missing(format!(
                "summary.csv has no metric `{m}` (it has: {})",
                all.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(", ")
            ))
        }),
    }
}

const PANEL_HEIGHT: u32 = 320;
const SINGLE_HEIGHT: u32 = 460;

impl Figure for SweepFigure {
    fn size(&self) -> (u32, u32) {
        let rows = super::grid_rows(self.panels.len(), self.cols) as u32;
        let ph = if self.panels.len() == 1 { SINGLE_HEIGHT } else { PANEL_HEIGHT };
        (WIDTH, header_height(WIDTH, &self.subtitle, &self.legend) + rows * ph + 8)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let body = header(root, &self.title, &self.subtitle, &self.legend)?;
        let rows = super::grid_rows(self.panels.len(), self.cols);
        let areas = body.split_evenly((rows, self.cols));
        for (area, p) in areas.iter().zip(&self.panels) {
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
