//! `explain --plot`: the sleep before each attempt of an always-failing call, one
//! column per attempt: the min–max range as a thin bar, the p1–p99 range as a thick
//! one, the median as a point, the policy's nominal delay as a dashed line and its
//! cap, if any, as another.

use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::style::delays::*;
use super::{Drawn, FONT, captioned};
use super::{
    Figure, Format, Glyph, INK, MUTED, WIDTH, axis_range, encode, fmt_secs, header, header_height, spans_decades,
};
use crate::ReportError;

/// The distribution of the sleep before one attempt, in seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AttemptStats {
    /// The attempt the sleep comes before (2 for the first retry).
    pub attempt: u32,
    /// The fraction of calls that reached this attempt.
    pub reached: f64,
    pub min: f64,
    pub p1: f64,
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
    /// The policy's nominal delay before this attempt, if it has one.
    pub nominal: Option<f64>,
}

pub(crate) struct DelaysFigure {
    title: String,
    subtitle: String,
    legend: Vec<(Glyph, String)>,
    stats: Vec<AttemptStats>,
    cap: Option<f64>,
    y: (f64, f64),
    log: bool,
}

/// Draws the per-attempt delay distribution; `cap` in seconds.
pub fn render(
    title: &str,
    subtitle: &str,
    per_attempt: &[AttemptStats],
    cap: Option<f64>,
    format: Format,
) -> Result<Vec<u8>, ReportError> {
    encode(&figure(title, subtitle, per_attempt, cap)?, format)
}

pub(crate) fn figure(
    title: &str,
    subtitle: &str,
    per_attempt: &[AttemptStats],
    cap: Option<f64>,
) -> Result<DelaysFigure, ReportError> {
    if per_attempt.is_empty() {
        return Err(ReportError::Missing("no call made a second attempt: there are no delays to plot".into()));
    }
    let values = || {
        per_attempt
            .iter()
            .flat_map(|s| [s.min, s.p1, s.p50, s.p99, s.max].into_iter().chain(s.nominal))
            .chain(cap)
            .filter(|v| v.is_finite())
    };
    let hi = values().fold(0.0_f64, f64::max);
    // The log axis starts at the lowest p1, median or nominal: a min drawn a thousand
    // times closer to zero than any of them (full jitter) runs off the bottom instead of
    // squeezing the rest into the top of the plot.
    let typical_lo = per_attempt
        .iter()
        .flat_map(|s| [s.p1, s.p50].into_iter().chain(s.nominal))
        .filter(|v| *v > 0.0)
        .fold(f64::MAX, f64::min);
    let pos_lo = values().filter(|v| *v > 0.0).fold(f64::MAX, f64::min);
    let log = typical_lo < f64::MAX && spans_decades(typical_lo, hi);
    let y = if log {
        let lo = pos_lo.max(typical_lo / 10.0);
        // Room above the top for the row of "reached" shares.
        (lo / 1.5, hi * 3.0)
    } else {
        let (lo, top) = axis_range(0.0, hi.max(f64::MIN_POSITIVE), false);
        (lo, top + (top - lo) * 0.06)
    };
    let mut legend = vec![
        (Glyph::Line(RANGE, 2), "min–max (a min below the axis is written at its foot)".to_string()),
        (Glyph::Band(RANGE.mix(0.45).to_rgba_rgb()), "p1–p99".to_string()),
        (Glyph::Dot(MEDIAN), "median".to_string()),
    ];
    if per_attempt.iter().any(|s| s.nominal.is_some()) {
        legend.push((Glyph::Dashed(NOMINAL), "nominal delay".to_string()));
    }
    if let Some(c) = cap {
        legend.push((Glyph::Dashed(CAP), format!("cap {}", fmt_secs(c))));
    }
    Ok(DelaysFigure {
        title: title.to_string(),
        subtitle: subtitle.to_string(),
        legend,
        stats: per_attempt.to_vec(),
        cap,
        y,
        log,
    })
}

/// Seconds in two significant digits, for the narrow columns.
fn short_secs(v: f64) -> String {
    let (x, unit) = if v == 0.0 {
        return "0".into();
    } else if v < 1e-3 {
        (v * 1e6, "µs")
    } else if v < 1.0 {
        (v * 1e3, "ms")
    } else {
        (v, "s")
    };
    format!("{}{unit}", super::fmt_num(x, 2))
}

/// The share of calls that reached an attempt, e.g. `62%`, `0.3%`, `0.01%`.
fn reached(share: f64) -> String {
    let pct = share * 100.0;
    if pct >= 10.0 {
        format!("{pct:.0}%")
    } else if pct >= 1.0 {
        format!("{pct:.1}%")
    } else {
        format!("{}%", super::fmt_num(pct, 1))
    }
}

trait ToRgb {
    fn to_rgba_rgb(&self) -> RGBColor;
}

impl ToRgb for RGBAColor {
    /// The colour laid over white, so the legend's swatch matches the drawn band.
    fn to_rgba_rgb(&self) -> RGBColor {
        let (r, g, b) = self.rgb();
        let a = self.alpha();
        let over = |c: u8| (f64::from(c) * a + 255.0 * (1.0 - a)).round() as u8;
        RGBColor(over(r), over(g), over(b))
    }
}

impl Figure for DelaysFigure {
    fn size(&self) -> (u32, u32) {
        (WIDTH, header_height(WIDTH, &self.subtitle, &self.legend) + PANEL_HEIGHT + 8)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let body = header(root, &self.title, &self.subtitle, &self.legend)?;
        if self.log {
            draw_panel(&body, self, crate::plot::log_axis(self.y.0, self.y.1))
        } else {
            draw_panel(&body, self, self.y.0..self.y.1)
        }
    }
}

fn draw_panel<DB, Y>(area: &DrawingArea<DB, Shift>, f: &DelaysFigure, y_spec: Y) -> Result<(), String>
where
    DB: DrawingBackend,
    Y: AsRangedCoord<Value = f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let first = f.stats.first().map_or(2, |s| s.attempt);
    let last = f.stats.last().map_or(2, |s| s.attempt);
    let (x0, x1) = (f64::from(first) - 0.6, f64::from(last) + 0.6);
    let caption = format!("Sleep before each attempt{}", if f.log { "  (log scale)" } else { "" });
    // At most one tick per attempt; only whole attempts are labelled.
    let n = (last - first + 1) as usize;
    let mut chart = captioned(area, &caption).x_label_area_size(44).build_cartesian_2d(x0..x1, y_spec).d()?;
    chart
        .configure_mesh()
        .bold_line_style(super::GRID_BOLD)
        .light_line_style(super::GRID_LIGHT)
        .max_light_lines(4)
        .axis_style(MUTED)
        .label_style((FONT, 13).into_font().color(&INK))
        .axis_desc_style((FONT, 14).into_font().color(&INK))
        .x_desc("attempt number (the sleep comes just before it)")
        .y_desc("sleep before the attempt (seconds)")
        .x_labels(n.min(20) + 1)
        .y_labels(8)
        .x_label_formatter(&|v| if v.fract() == 0.0 { format!("{v}") } else { String::new() })
        .y_label_formatter(&|v| fmt_secs(*v))
        .draw()
        .d()?;
    let (ylo, yhi) = f.y;
    let clamp = |v: f64| v.clamp(ylo, yhi);
    let band = RANGE.mix(0.45);
    for s in &f.stats {
        let x = f64::from(s.attempt);
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(x, clamp(s.min)), (x, clamp(s.max))],
                RANGE.stroke_width(2),
            )))
            .d()?;
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(x - 0.18, clamp(s.p1)), (x + 0.18, clamp(s.p99))],
                band.filled(),
            )))
            .d()?;
    }
    if let Some(c) = f.cap {
        chart.draw_series(DashedLineSeries::new([(x0, c), (x1, c)], 6, 4, CAP.stroke_width(2))).d()?;
        chart
            .draw_series(std::iter::once(Text::new(
                format!("cap {}", fmt_secs(c)),
                (x0, c),
                TextStyle::from((FONT, 12)).color(&CAP).pos(Pos::new(HPos::Left, VPos::Bottom)),
            )))
            .d()?;
    }
    // The nominal delay, a dashed line through each attempt's value, broken where the
    // source has none.
    let mut run: Vec<(f64, f64)> = Vec::new();
    let mut runs = Vec::new();
    for s in &f.stats {
        match s.nominal {
            Some(v) => run.push((f64::from(s.attempt), clamp(v))),
            None => runs.push(std::mem::take(&mut run)),
        }
    }
    runs.push(run);
    for r in runs.into_iter().filter(|r| !r.is_empty()) {
        if r.len() == 1 {
            let (x, v) = r[0];
            chart
                .draw_series(DashedLineSeries::new([(x - 0.3, v), (x + 0.3, v)], 6, 4, NOMINAL.stroke_width(2)))
                .d()?;
        } else {
            chart.draw_series(DashedLineSeries::new(r, 6, 4, NOMINAL.stroke_width(2))).d()?;
        }
    }
    chart
        .draw_series(f.stats.iter().map(|s| Circle::new((f64::from(s.attempt), clamp(s.p50)), 4, MEDIAN.filled())))
        .d()?;
    let small = TextStyle::from((FONT, 11)).color(&MUTED);
    for s in &f.stats {
        let x = f64::from(s.attempt);
        // A min below the axis (full jitter draws near zero) is written at the bottom
        // edge, so the bar running off the plot is not taken for the minimum.
        if s.min < ylo {
            chart
                .draw_series(std::iter::once(Text::new(
                    short_secs(s.min),
                    (x + 0.06, ylo),
                    small.pos(Pos::new(HPos::Left, VPos::Bottom)),
                )))
                .d()?;
        }
        // How many calls got this far: the late columns may rest on a handful.
        if s.reached < 0.9995 {
            chart
                .draw_series(std::iter::once(Text::new(
                    reached(s.reached),
                    (x, yhi),
                    small.pos(Pos::new(HPos::Center, VPos::Top)),
                )))
                .d()?;
        }
    }
    Ok(())
}
