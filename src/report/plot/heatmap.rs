//! `heatmap`: a metric over two swept parameters, the mean written in each cell. A row
//! of panels per metric (one per variant, sharing the row's colour scale so the
//! variants compare), with the scale beside it.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::FontStyle;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::sweep::{SweepAxis, chosen_metrics};
use super::{Drawn, FONT, Figure, INK, MUTED, PlotOptions, WIDTH, fit, fmt_num, header, header_height};
use crate::report::data::RunSet;
use crate::report::{Better, ReportError, direction};

const ROW_HEIGHT: u32 = 300;
const SCALE_WIDTH: u32 = 96;

pub(crate) struct HeatmapFigure {
    title: String,
    subtitle: String,
    x: SweepAxis,
    y: SweepAxis,
    rows: Vec<Row>,
    cols: usize,
}

/// A cell's x index, y index and mean.
type CellMean = (usize, usize, f64);

struct Row {
    metric: String,
    unit: String,
    better: Option<Better>,
    lo: f64,
    hi: f64,
    /// One panel per variant: its name and the mean of each cell.
    panels: Vec<(String, Vec<CellMean>)>,
}

pub(crate) fn figure(data: &RunSet, opts: &PlotOptions) -> Result<HeatmapFigure, ReportError> {
    let metrics = chosen_metrics(data, opts)?;
    let x = SweepAxis::of(data, 0);
    let y = SweepAxis::of(data, 1);
    let fixed: Vec<(usize, String)> =
        (2..data.sweep_keys.len()).map(|k| (k, SweepAxis::of(data, k).labels[0].clone())).collect();
    let variants: Vec<&str> = data
        .variant_names()
        .into_iter()
        .filter(|n| opts.variants.is_empty() || opts.variants.iter().any(|v| v == n))
        .collect();
    let mut rows = Vec::new();
    for (metric, unit) in &metrics {
        let mut panels = Vec::new();
        for v in &variants {
            let cells: Vec<(usize, usize, f64)> = data
                .summary
                .iter()
                .filter(|r| &r.variant == v && &r.metric == metric)
                .filter(|r| fixed.iter().all(|(k, val)| &r.point[*k] == val))
                .filter_map(|r| {
                    let xi = x.labels.iter().position(|l| *l == r.point[0])?;
                    let yi = y.labels.iter().position(|l| *l == r.point[1])?;
                    Some((xi, yi, r.mean))
                })
                .collect();
            if !cells.is_empty() {
                panels.push((v.to_string(), cells));
            }
        }
        if panels.is_empty() {
            continue;
        }
        let (lo, hi) = panels
            .iter()
            .flat_map(|(_, c)| c.iter().map(|c| c.2))
            .fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(v), b.max(v)));
        rows.push(Row { metric: metric.clone(), unit: unit.clone(), better: direction(metric), lo, hi, panels });
    }
    if rows.is_empty() {
        return Err(ReportError::Missing("summary.csv has no values to plot for the chosen variants".into()));
    }
    let cols = rows.iter().map(|r| r.panels.len()).max().unwrap_or(1);
    let scenario = data.runs.iter().map(|r| r.scenario.as_str()).collect::<Vec<_>>().join(" vs ");
    let mut subtitle = format!("{scenario} · mean over replications in each cell · one colour scale per row");
    for (k, v) in &fixed {
        subtitle.push_str(&format!(" · {}={v}", data.sweep_keys[*k]));
    }
    Ok(HeatmapFigure {
        title: format!(
            "{} over {} and {}",
            if rows.len() == 1 { rows[0].metric.clone() } else { "Metrics".to_string() },
            x.key,
            y.key
        ),
        subtitle,
        x,
        y,
        rows,
        cols,
    })
}

/// Viridis, from dark blue (low) to yellow (high): even steps look even, and it stays
/// readable in grey and with colour-vision deficiencies.
fn viridis(t: f64) -> RGBColor {
    const STOPS: [(u8, u8, u8); 9] = [
        (68, 1, 84),
        (71, 44, 122),
        (59, 81, 139),
        (44, 113, 142),
        (33, 144, 141),
        (39, 173, 129),
        (92, 200, 99),
        (170, 220, 50),
        (253, 231, 37),
    ];
    let t = if t.is_finite() { t.clamp(0.0, 1.0) } else { 0.0 };
    let pos = t * (STOPS.len() - 1) as f64;
    let i = (pos.floor() as usize).min(STOPS.len() - 2);
    let f = pos - i as f64;
    let mix = |a: u8, b: u8| (a as f64 + (b as f64 - a as f64) * f).round() as u8;
    let (a, b) = (STOPS[i], STOPS[i + 1]);
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

impl Figure for HeatmapFigure {
    fn size(&self) -> (u32, u32) {
        (WIDTH, header_height(WIDTH, &self.subtitle, &[]) + ROW_HEIGHT * self.rows.len() as u32 + 8)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let body = header(root, &self.title, &self.subtitle, &[])?;
        let rows = body.split_evenly((self.rows.len(), 1));
        for (area, row) in rows.iter().zip(&self.rows) {
            let (panels, scale) = area.split_horizontally(WIDTH - SCALE_WIDTH);
            let cells = panels.split_evenly((1, self.cols));
            for (cell, (variant, values)) in cells.iter().zip(&row.panels) {
                self.panel(cell, row, variant, values)?;
            }
            colour_scale(&scale, row)?;
        }
        Ok(())
    }
}

impl HeatmapFigure {
    fn panel<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        row: &Row,
        variant: &str,
        values: &[(usize, usize, f64)],
    ) -> Result<(), String> {
        let width = area.dim_in_pixel().0;
        let better = match row.better {
            Some(Better::Lower) => " (lower is better)",
            Some(Better::Higher) => " (higher is better)",
            None => "",
        };
        let caption = format!("{variant}: {}{better}", row.metric);
        let caption_style = TextStyle::from((FONT, 14, FontStyle::Bold).into_font()).color(&INK);
        let (nx, ny) = (self.x.labels.len(), self.y.labels.len());
        let mut chart = ChartBuilder::on(area)
            .margin_left(6)
            .margin_right(10)
            .margin_top(6)
            .caption(fit(&caption, 14, width - 16), caption_style)
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d(-0.5..nx as f64 - 0.5, -0.5..ny as f64 - 0.5)
            .d()?;
        let xl = |v: &f64| category(&self.x.labels, *v);
        let yl = |v: &f64| category(&self.y.labels, *v);
        chart
            .configure_mesh()
            .disable_mesh()
            .axis_style(MUTED)
            .label_style((FONT, 13).into_font().color(&INK))
            .axis_desc_style((FONT, 14).into_font().color(&INK))
            .x_desc(self.x.key.as_str())
            .y_desc(self.y.key.as_str())
            .x_labels(nx * 2 + 1)
            .y_labels(ny * 2 + 1)
            .x_label_formatter(&xl)
            .y_label_formatter(&yl)
            .draw()
            .d()?;
        let span = row.hi - row.lo;
        let norm = |v: f64| if span > 0.0 { (v - row.lo) / span } else { 0.5 };
        chart
            .draw_series(values.iter().map(|&(xi, yi, v)| {
                let (x, y) = (xi as f64, yi as f64);
                Rectangle::new([(x - 0.5, y - 0.5), (x + 0.5, y + 0.5)], viridis(norm(v)).filled())
            }))
            .d()?;
        // The value in each cell, dark on the light end of the scale, white on the dark.
        let cell_w = (width as f64 - 80.0) / nx as f64;
        if cell_w >= 34.0 {
            for &(xi, yi, v) in values {
                let ink = if norm(v) > 0.6 { BLACK } else { WHITE };
                chart
                    .draw_series(std::iter::once(Text::new(
                        fmt_num(v, 3),
                        (xi as f64, yi as f64),
                        TextStyle::from((FONT, 12)).color(&ink).pos(Pos::new(HPos::Center, VPos::Center)),
                    )))
                    .d()?;
            }
        }
        Ok(())
    }
}

fn category(labels: &[String], v: f64) -> String {
    let i = v.round();
    if (v - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < labels.len() {
        labels[i as usize].clone()
    } else {
        String::new()
    }
}

fn colour_scale<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, row: &Row) -> Result<(), String> {
    let (lo, hi) = if row.hi > row.lo { (row.lo, row.hi) } else { (row.lo - 1.0, row.hi + 1.0) };
    let mut chart = ChartBuilder::on(area)
        .margin_top(34)
        .margin_bottom(44)
        .margin_right(4)
        .y_label_area_size(0)
        .right_y_label_area_size(60)
        .build_cartesian_2d(0.0..1.0, lo..hi)
        .d()?;
    chart
        .configure_mesh()
        .disable_mesh()
        .disable_x_axis()
        .axis_style(MUTED)
        .label_style((FONT, 12).into_font().color(&INK))
        .y_labels(5)
        .y_label_formatter(&|v| fmt_num(*v, 3))
        .draw()
        .d()?;
    let steps = 64;
    chart
        .draw_series((0..steps).map(|i| {
            let a = lo + (hi - lo) * i as f64 / steps as f64;
            let b = lo + (hi - lo) * (i + 1) as f64 / steps as f64;
            Rectangle::new([(0.0, a), (1.0, b)], viridis((i as f64 + 0.5) / steps as f64).filled())
        }))
        .d()?;
    let unit = if row.unit.is_empty() { String::new() } else { format!("({})", row.unit) };
    area.draw_text(&unit, &TextStyle::from((FONT, 12)).color(&MUTED), (4, 14)).d()?;
    Ok(())
}
