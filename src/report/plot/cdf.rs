//! `cdf`: the distribution of a per-client time (time to reconnect, time to success or
//! give-up), pooled over replications, variants overlaid: one panel per metric. The
//! median and the 99th percentile are marked, since those are what people quote.

use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;
use plotters::style::FontStyle;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{
    Drawn, FONT, Figure, Glyph, INK, MUTED, PlotOptions, WIDTH, axis_range, color, fit, header, mesh, panel_heights,
    spans_decades, stack_heights, stacked_size, tick,
};
use crate::report::ReportError;
use crate::report::data::RunSet;

const PANEL_HEIGHT: u32 = 330;
const BOTTOM_EXTRA: u32 = 0;

pub(crate) struct CdfFigure {
    title: String,
    subtitle: String,
    legend: Vec<(Glyph, String)>,
    panels: Vec<Panel>,
}

struct Panel {
    metric: String,
    /// One line per variant: its colour index and (value, fraction) points.
    lines: Vec<(usize, Vec<(f64, f64)>)>,
    x: (f64, f64),
    log: bool,
}

pub(crate) fn figure(data: &RunSet, opts: &PlotOptions) -> Result<CdfFigure, ReportError> {
    let rows = data.cdf.as_deref().unwrap_or(&[]);
    let mut names: Vec<String> = data.variants.iter().map(|v| v.name.clone()).collect();
    let mut metrics: Vec<String> = Vec::new();
    for r in rows {
        if !names.contains(&r.variant) {
            names.push(r.variant.clone());
        }
        if !metrics.contains(&r.metric) {
            metrics.push(r.metric.clone());
        }
    }
    // Colours follow the variant's place in the run, so they match across plots.
    let names: Vec<(usize, String)> = names
        .into_iter()
        .enumerate()
        .filter(|(_, n)| {
            (opts.variants.is_empty() || opts.variants.contains(n)) && rows.iter().any(|r| &r.variant == n)
        })
        .collect();
    if let Some(m) = &opts.metric {
        if !metrics.contains(m) {
            return Err(ReportError::Missing(format!("cdf.csv has no metric `{m}` (it has: {})", metrics.join(", "))));
        }
        metrics = vec![m.clone()];
    }
    if names.is_empty() {
        return Err(ReportError::Missing(format!("cdf.csv has no rows for variant {}", opts.variants.join(", "))));
    }
    let mut panels = Vec::new();
    for metric in &metrics {
        let mut lines = Vec::new();
        for (ci, name) in &names {
            let mut pts: Vec<(f64, f64)> = rows
                .iter()
                .filter(|r| &r.variant == name && &r.metric == metric)
                .filter(|r| opts.from.is_none_or(|f| r.value >= f))
                .filter(|r| opts.to.is_none_or(|t| r.value <= t))
                .map(|r| (r.value, r.fraction))
                .collect();
            pts.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.total_cmp(&b.0)));
            if !pts.is_empty() {
                lines.push((*ci, pts));
            }
        }
        if lines.is_empty() {
            continue;
        }
        let values = lines.iter().flat_map(|(_, l)| l.iter().map(|p| p.0));
        let (lo, hi) = values.fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(v), b.max(v)));
        let pos_lo =
            lines.iter().flat_map(|(_, l)| l.iter().map(|p| p.0)).filter(|v| *v > 0.0).fold(f64::MAX, f64::min);
        let log = lo >= 0.0 && pos_lo < f64::MAX && spans_decades(pos_lo, hi);
        let x = if log {
            axis_range(pos_lo, hi, true)
        } else {
            let (a, b) = axis_range(lo, hi, false);
            (opts.from.unwrap_or(a), opts.to.unwrap_or(b))
        };
        if log {
            // A zero has no place on a log axis: it sits at the left edge.
            for (_, l) in &mut lines {
                for p in l.iter_mut() {
                    p.0 = p.0.max(x.0);
                }
            }
        }
        panels.push(Panel { metric: metric.clone(), lines, x, log });
    }
    if panels.is_empty() {
        return Err(ReportError::Missing("cdf.csv has no values in the chosen window".into()));
    }
    let count = names.len() as u32;
    let legend = names
        .iter()
        .enumerate()
        .map(|(i, (ci, n))| {
            let width = 2 + (count - 1 - i as u32).min(4) * 2;
            (Glyph::Line(color(*ci), width), n.clone())
        })
        .collect();
    let scenario = data.runs.iter().map(|r| r.scenario.as_str()).collect::<Vec<_>>().join(" vs ");
    Ok(CdfFigure {
        title: "Distribution over clients (CDF), pooled over replications".into(),
        subtitle: format!("{scenario} · read across at 0.5 for the median and 0.99 for the 99th percentile"),
        legend,
        panels,
    })
}

impl Figure for CdfFigure {
    fn size(&self) -> (u32, u32) {
        stacked_size(&self.subtitle, &self.legend, self.panels.len(), PANEL_HEIGHT, BOTTOM_EXTRA)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let body = header(root, &self.title, &self.subtitle, &self.legend)?;
        let heights = panel_heights(self.panels.len(), PANEL_HEIGHT, BOTTOM_EXTRA);
        for (area, p) in stack_heights(&body, &heights).iter().zip(&self.panels) {
            if p.log {
                draw_panel(area, p, (p.x.0..p.x.1).log_scale())?;
            } else {
                draw_panel(area, p, p.x.0..p.x.1)?;
            }
        }
        Ok(())
    }
}

fn draw_panel<DB, X>(area: &DrawingArea<DB, Shift>, p: &Panel, x_spec: X) -> Result<(), String>
where
    DB: DrawingBackend,
    X: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
{
    let caption_style = TextStyle::from((FONT, 15, FontStyle::Bold).into_font()).color(&INK);
    let caption = format!("{}{}", p.metric, if p.log { "  (log scale)" } else { "" });
    let mut chart = ChartBuilder::on(area)
        .margin_left(8)
        .margin_right(24)
        .margin_top(6)
        .caption(fit(&caption, 15, WIDTH - 40), caption_style)
        .x_label_area_size(44)
        .y_label_area_size(70)
        .build_cartesian_2d(x_spec, 0.0..1.02)
        .d()?;
    mesh(&mut chart, &p.metric, "fraction of clients", &|v| super::fmt_secs(*v), &tick)?;
    let (x0, x1) = p.x;
    for q in [0.5, 0.99] {
        chart.draw_series(DashedLineSeries::new([(x0, q), (x1, q)], 4, 4, MUTED.stroke_width(1))).d()?;
        chart
            .draw_series(std::iter::once(Text::new(
                if q == 0.5 { "p50" } else { "p99" },
                (x0, q),
                TextStyle::from((FONT, 12)).color(&MUTED).pos(Pos::new(HPos::Left, VPos::Bottom)),
            )))
            .d()?;
    }
    // Earlier lines are drawn wider, so where curves coincide each still shows as a
    // stripe beside the one drawn over it.
    let n = p.lines.len() as u32;
    for (i, (ci, line)) in p.lines.iter().enumerate() {
        let width = 2 + (n - 1 - i as u32).min(4) * 2;
        chart.draw_series(LineSeries::new(line.iter().copied(), color(*ci).stroke_width(width))).d()?;
    }
    // Where each line crosses the median and the 99th percentile.
    for (ci, line) in &p.lines {
        for q in [0.5, 0.99] {
            if let Some(&(v, _)) = line.iter().find(|pt| pt.1 >= q - 1e-9) {
                chart.draw_series(std::iter::once(Circle::new((v, q), 4, color(*ci).filled()))).d()?;
            }
        }
    }
    Ok(())
}
