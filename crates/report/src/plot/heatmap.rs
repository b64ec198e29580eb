//! `heatmap`: a metric over two swept parameters, the mean written in each cell. A row
//! of panels per metric (one per variant, sharing the row's colour scale so the
//! variants compare), with the scale beside it. Where a row's values span decades the
//! scale is logarithmic: on a linear one every cell but the largest would look alike.
//! The metrics are those `sweep` shows: the model's headline metrics that vary.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::FontStyle;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::sweep::{Selection, SweepAxis, chosen_metrics, rows_by};
use super::{
    Drawn, FONT, Figure, INK, MUTED, PlotOptions, WIDTH, fit, fmt_num, header, header_height, spans_decades, text_width,
};
use super::style::heatmap::*;
use backoffsim_core::worlds::catalogue;
use crate::data::RunSet;
use crate::{Better, ReportError};

/// A metric over two swept parameters.
pub struct Heatmap;

impl super::Plot for Heatmap {
    const NAME: &'static str = "heatmap";
    const ABOUT: &'static str = "A metric over two swept parameters";
    const PER_CELL: bool = false;
    type Figure = HeatmapFigure;

    fn missing(data: &RunSet) -> Option<String> {
        (data.sweep_keys.len() < 2).then(|| {
            format!(
                "a heatmap needs two swept parameters; summary.csv has {}",
                if data.sweep_keys.is_empty() { "none".to_string() } else { format!("only `{}`", data.sweep_keys[0]) }
            )
        })
    }

    fn figure(data: &RunSet, opts: &PlotOptions) -> Result<HeatmapFigure, ReportError> {
        figure(data, opts)
    }

    fn caption(data: &RunSet) -> Result<(String, String), backoffsim_core::run::interrupt::Interrupted> {
        Ok((
            "Metrics over two swept parameters".into(),
        format!(
                        "The mean of each headline metric over `{}` and `{}`, a panel per variant; each \
                         row of panels shares one colour scale, logarithmic where the values span \
                         decades.",
                        data.sweep_keys.first().cloned().unwrap_or_default(),
                        data.sweep_keys.get(1).cloned().unwrap_or_default()
                    ),
        ))
    }

    fn redraw(r: &super::Redraw<'_>) -> String {
        format!("backoffsim plot heatmap {} --metric {m} -o {m}.png", r.dir, m = r.metric)
    }
}

/// Most variants a row of panels shows; the subtitle names how many more there are.
const MAX_PANELS: usize = 8;

pub(crate) struct HeatmapFigure {
    title: String,
    subtitle: String,
    x: SweepAxis,
    y: SweepAxis,
    rows: Vec<Row>,
    cols: usize,
    /// Whether panel captions name their variant (more than one is shown).
    named: bool,
    /// Room for the y axis's category labels and its description.
    y_label_width: u32,
}

/// A cell's x index, y index and mean.
type CellMean = (usize, usize, f64);

struct Row {
    title: String,
    unit: String,
    better: Option<Better>,
    lo: f64,
    hi: f64,
    log: bool,
    /// One panel per variant: its name and the mean of each cell.
    panels: Vec<(String, Vec<CellMean>)>,
}

pub(crate) fn figure(data: &RunSet, opts: &PlotOptions) -> Result<HeatmapFigure, ReportError> {
    let Selection { metrics, models, .. } = chosen_metrics(data, opts, "heatmap")?;
    let x = SweepAxis::of(data, 0);
    let y = SweepAxis::of(data, 1);
    let fixed: Vec<(usize, String)> =
        (2..data.sweep_keys.len()).map(|k| (k, SweepAxis::of(data, k).labels[0].clone())).collect();
    let mut variants: Vec<&str> = data
        .variant_names()
        .into_iter()
        .filter(|n| opts.variants.is_empty() || opts.variants.iter().any(|v| v == n))
        .collect();
    // A panel per variant in a row of the figure's width: a hundred would be a pixel or
    // two each.
    let omitted = (variants.len() > MAX_PANELS)
        .then(|| format!("{MAX_PANELS} of {} variants shown (others: --variant)", variants.len()));
    variants.truncate(MAX_PANELS);
    let by = rows_by(data);
    let mut rows = Vec::new();
    for (metric, unit) in &metrics {
        let mut panels = Vec::new();
        for v in &variants {
            backoffsim_core::run::interrupt::check()?;
            let cells: Vec<(usize, usize, f64)> = (by.get(&(*v, metric.as_str())).into_iter().flatten())
                .filter(|r| fixed.iter().all(|(k, val)| &r.point[*k] == val))
                .filter_map(|r| Some((x.position(&r.point[0])?, y.position(&r.point[1])?, r.mean)))
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
        rows.push(Row {
            title: catalogue::title(metric, &models),
            unit: unit.clone(),
            better: catalogue::better(metric, &models),
            lo,
            hi,
            log: spans_decades(lo, hi),
            panels,
        });
    }
    if rows.is_empty() {
        return Err(ReportError::Missing("summary.csv has no values to plot for the chosen variants".into()));
    }
    let cols = rows.iter().map(|r| r.panels.len()).max().unwrap_or(1);
    let scenario = super::scenarios(data);
    let mut subtitle = format!("{scenario} · mean over replications in each cell · one colour scale per row");
    if rows.iter().any(|r| r.log) {
        subtitle.push_str(" · log colour scales where values span decades");
    }
    for (k, v) in &fixed {
        subtitle.push_str(&format!(" · {}={v}", data.sweep_keys[*k]));
    }
    if let Some(note) = omitted {
        subtitle.push_str(&format!(" · {note}"));
    }
    Ok(HeatmapFigure {
        title: format!(
            "{} over {} and {}",
            if rows.len() == 1 { rows[0].title.clone() } else { "Metrics".to_string() },
            x.key,
            y.key
        ),
        subtitle,
        named: variants.len() > 1,
        y_label_width: y.labels.iter().map(|l| text_width(l, 13)).max().unwrap_or(0) + 40,
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
                super::stop()?;
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
        let caption =
            if self.named { format!("{variant} · {}{better}", row.title) } else { format!("{}{better}", row.title) };
        let caption_style = TextStyle::from((FONT, 14, FontStyle::Bold).into_font()).color(&INK);
        let (nx, ny) = (self.x.labels.len(), self.y.labels.len());
        let mut chart = ChartBuilder::on(area)
            .margin_left(6)
            .margin_right(10)
            .margin_top(6)
            .caption(fit(&caption, 14, width - 16), caption_style)
            .x_label_area_size(44)
            .y_label_area_size(self.y_label_width)
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
        let norm = |v: f64| row.norm(v);
        chart
            .draw_series(values.iter().map(|&(xi, yi, v)| {
                let (x, y) = (xi as f64, yi as f64);
                Rectangle::new([(x - 0.5, y - 0.5), (x + 0.5, y + 0.5)], viridis(norm(v)).filled())
            }))
            .d()?;
        // The value in each cell, dark on the light end of the scale, white on the dark.
        let cell_w = (width as f64 - self.y_label_width as f64 - 16.0) / nx as f64;
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

impl Row {
    /// Where `v` sits on the row's colour scale, from 0 (lowest) to 1 (highest).
    fn norm(&self, v: f64) -> f64 {
        if self.hi <= self.lo {
            0.5
        } else if self.log {
            (v / self.lo).ln() / (self.hi / self.lo).ln()
        } else {
            (v - self.lo) / (self.hi - self.lo)
        }
    }

    /// Round values for the scale's labels, within the row's range.
    fn ticks(&self) -> Vec<f64> {
        if self.hi <= self.lo {
            return vec![self.lo];
        }
        if self.log {
            let decades = (self.hi / self.lo).log10();
            let mults: &[f64] = if decades > 3.0 {
                &[1.0]
            } else if decades > 1.5 {
                &[1.0, 3.0]
            } else {
                &[1.0, 2.0, 5.0]
            };
            let mut out = Vec::new();
            for e in self.lo.log10().floor() as i32..=self.hi.log10().ceil() as i32 {
                for m in mults {
                    let t = m * 10f64.powi(e);
                    if t >= self.lo * (1.0 - 1e-9) && t <= self.hi * (1.0 + 1e-9) {
                        out.push(t);
                    }
                }
            }
            return out;
        }
        let raw = (self.hi - self.lo) / 4.0;
        let mag = 10f64.powf(raw.log10().floor());
        let step = [1.0, 2.0, 2.5, 5.0, 10.0].into_iter().map(|m| m * mag).find(|s| *s >= raw).unwrap_or(10.0 * mag);
        let first = (self.lo / step).ceil() as i64;
        let last = (self.hi / step).floor() as i64;
        (first..=last).map(|k| k as f64 * step).collect()
    }
}

/// The row's colour bar with its labels, drawn by hand: plotters' tick marks beside
/// the labels read as minus signs, so the marks go inside the bar and the labels stand
/// apart from it.
fn colour_scale<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, row: &Row) -> Result<(), String> {
    let h = area.dim_in_pixel().1 as i32;
    // Level with the panels' plot areas: below their captions, above their x labels.
    let (top, bottom) = (27, h - 42);
    let (left, right) = (8, 26);
    let steps = 96;
    for i in 0..steps {
        let y_hi = bottom - (bottom - top) * (i + 1) / steps;
        let y_lo = bottom - (bottom - top) * i / steps;
        let colour = viridis((f64::from(i) + 0.5) / f64::from(steps));
        area.draw(&Rectangle::new([(left, y_hi), (right, y_lo)], colour.filled())).d()?;
    }
    area.draw(&Rectangle::new([(left, top), (right, bottom)], MUTED.stroke_width(1))).d()?;
    let label = TextStyle::from((FONT, 12)).color(&INK).pos(Pos::new(HPos::Left, VPos::Center));
    for t in row.ticks() {
        let y = bottom - (row.norm(t).clamp(0.0, 1.0) * f64::from(bottom - top)).round() as i32;
        area.draw(&PathElement::new(vec![(right - 5, y), (right, y)], INK.stroke_width(1))).d()?;
        area.draw_text(&fmt_num(t, 3), &label, (right + 6, y)).d()?;
    }
    let unit = if row.unit.is_empty() { String::new() } else { format!("({})", row.unit) };
    area.draw_text(&unit, &TextStyle::from((FONT, 12)).color(&MUTED), (4, 8)).d()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::sweep::tests::run_set;
    use crate::plot::{Format, Kind, render};

    fn row(lo: f64, hi: f64) -> Row {
        Row {
            title: String::new(),
            unit: String::new(),
            better: None,
            lo,
            hi,
            log: spans_decades(lo, hi),
            panels: Vec::new(),
        }
    }

    #[test]
    fn a_row_spanning_decades_gets_a_log_colour_scale_with_round_ticks() {
        let r = row(1.0, 10_000.0);
        assert!(r.log);
        assert!((r.norm(100.0) - 0.5).abs() < 1e-12, "{}", r.norm(100.0));
        assert_eq!(r.ticks(), [1.0, 10.0, 100.0, 1000.0, 10_000.0]);
        let lin = row(0.0, 1.0);
        assert!(!lin.log);
        assert_eq!(lin.norm(0.25), 0.25);
        assert_eq!(lin.ticks(), [0.0, 0.25, 0.5, 0.75, 1.0]);
        // Ticks never leave the range, so none reads as a value below the lowest cell.
        let odd = row(0.0399, 196.0);
        assert!(odd.ticks().iter().all(|t| (0.0399..=196.0).contains(t)), "{:?}", odd.ticks());
    }

    fn occ_grid() -> RunSet {
        let mut rows: Vec<(&str, &[&str], &str, &str, f64)> = Vec::new();
        let points: [(&[&str], f64); 4] = [
            (&["1", "none"], 1.0),
            (&["1", "decorrelated"], 1.0),
            (&["500", "none"], 49984.0),
            (&["500", "decorrelated"], 9026.0),
        ];
        for (p, calls) in points {
            rows.push(("base", p, "calls", "count", calls));
            rows.push(("base", p, "completion_time", "s", calls / 1000.0 + 0.04));
            rows.push(("base", p, "succeeded", "fraction", 1.0));
            rows.push(("base", p, "events", "count", calls * 4.0));
        }
        run_set("occ", &["base"], &["occ.clients", "occ.strategy"], &rows)
    }

    #[test]
    fn rows_are_the_headline_metrics_titled_without_the_lone_variants_name() {
        let fig = figure(&occ_grid(), &PlotOptions::default()).unwrap();
        let titles: Vec<&str> = fig.rows.iter().map(|r| r.title.as_str()).collect();
        assert_eq!(titles, ["Calls to the store", "Time until all succeeded"]);
        assert!(fig.rows[0].log, "calls span four decades");
        let svg = String::from_utf8(render(Kind::Heatmap, &occ_grid(), &PlotOptions::default(), Format::Svg).unwrap())
            .unwrap();
        assert!(svg.contains("Calls to the store (lower is better)"), "caption");
        assert!(!svg.contains("base:") && !svg.contains("base ·"), "the only variant's name");
        assert!(!svg.contains("Simulation events") && !svg.contains("Clients succeeded"), "internal or constant rows");
    }

    #[test]
    fn the_row_labels_get_room_for_the_longest_category() {
        let fig = figure(&occ_grid(), &PlotOptions::default()).unwrap();
        assert!(fig.y_label_width >= text_width("decorrelated", 13) + 30, "{}", fig.y_label_width);
    }
}
