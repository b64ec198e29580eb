//! Axes: the grid, ticks and labels every panel shares, and the ranges they span.

use plotters::coord::combinators::LogCoord;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::prelude::*;

use super::Drawn;
use super::style::{FONT, GRID_BOLD, GRID_LIGHT, INK, MUTED};

/// The grid, tick labels and axis descriptions every panel shares, with six y labels.
pub(crate) fn mesh<DB, X, Y>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<X, Y>>,
    x_desc: &str,
    y_desc: &str,
    x_fmt: &dyn Fn(&f64) -> String,
    y_fmt: &dyn Fn(&f64) -> String,
) -> Result<(), String>
where
    DB: DrawingBackend,
    X: Ranged<ValueType = f64> + plotters::coord::ranged1d::ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + plotters::coord::ranged1d::ValueFormatter<f64>,
{
    mesh_with(chart, x_desc, y_desc, x_fmt, y_fmt, 6)
}

/// Y labels to ask a log axis for: enough that plotters adds the points between the
/// powers of ten (1, 2, 3 … 9 × 10ᵏ) on an axis of one or two decades, which
/// [`log_tick`] then thins to 1, 2 and 5.
pub(crate) const LOG_Y_LABELS: usize = 30;

/// A log axis's tick label: only 1, 2 and 5 times a power of ten are written, so an
/// axis of one or two decades reads 0.1, 0.2, 0.5, 1, 2, 5 instead of two lone labels.
pub(crate) fn log_tick(v: &f64) -> String {
    let mantissa = *v / 10f64.powf(v.abs().log10().floor());
    if [1.0, 2.0, 5.0].iter().any(|m| (mantissa - m).abs() < 1e-6) { tick(v) } else { String::new() }
}

/// A log axis whose key points come once each: plotters' own gives a decade's bound
/// twice (1.0 closes 0.1–1 and opens 1–10), which draws its label twice, one over the
/// other, in a bolder smudge.
pub(crate) struct LogAxis(LogCoord<f64>);

pub(crate) fn log_axis(lo: f64, hi: f64) -> LogAxis {
    LogAxis((lo..hi).log_scale().into())
}

impl Ranged for LogAxis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.0.map(value, limit)
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        let mut keys = self.0.key_points(hint);
        keys.dedup();
        keys
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.0.range()
    }

    fn axis_pixel_range(&self, limit: (i32, i32)) -> std::ops::Range<i32> {
        self.0.axis_pixel_range(limit)
    }
}

/// [`mesh`] with `y_labels` y labels asked for.
pub(crate) fn mesh_with<DB, X, Y>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<X, Y>>,
    x_desc: &str,
    y_desc: &str,
    x_fmt: &dyn Fn(&f64) -> String,
    y_fmt: &dyn Fn(&f64) -> String,
    y_labels: usize,
) -> Result<(), String>
where
    DB: DrawingBackend,
    X: Ranged<ValueType = f64> + plotters::coord::ranged1d::ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + plotters::coord::ranged1d::ValueFormatter<f64>,
{
    chart
        .configure_mesh()
        .bold_line_style(GRID_BOLD)
        .light_line_style(GRID_LIGHT)
        // A log axis asked for many labels has a grid line at each of them already.
        .max_light_lines(if y_labels >= LOG_Y_LABELS { 0 } else { 4 })
        .axis_style(MUTED)
        .label_style((FONT, 13).into_font().color(&INK))
        .axis_desc_style((FONT, 14).into_font().color(&INK))
        .x_desc(x_desc)
        .y_desc(y_desc)
        .x_labels(12)
        .y_labels(y_labels)
        .x_label_formatter(x_fmt)
        .y_label_formatter(y_fmt)
        .draw()
        .d()
}

pub use backoffsim_core::human::{fmt_num, fmt_secs};

/// Tick labels: ticks are round numbers, so four significant digits show them exactly.
pub(crate) fn tick(v: &f64) -> String {
    fmt_num(*v, 4)
}

/// Whether positive data from `lo` to `hi` spans enough of a range (a factor of 20 or
/// more) that a log axis shows it better.
pub(crate) fn spans_decades(lo: f64, hi: f64) -> bool {
    lo > 0.0 && hi / lo >= 20.0
}

/// The padded axis range of data from `lo` to `hi`.
pub(crate) fn axis_range(lo: f64, hi: f64, log: bool) -> (f64, f64) {
    if log {
        (lo / 1.5, hi * 1.5)
    } else {
        let lo = lo.min(0.0);
        let span = (hi - lo).max(f64::MIN_POSITIVE);
        let hi = if hi <= lo { lo + 1.0 } else { hi + span * 0.06 };
        (lo, hi)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_axes_label_one_two_and_five_times_each_power_of_ten() {
        let labels: Vec<String> = [0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 2.0, 4.0, 5.0, 20.0].iter().map(log_tick).collect();
        assert_eq!(labels, ["0.1", "0.2", "", "0.5", "", "1", "2", "", "5", "20"]);
    }

    #[test]
    fn a_log_axis_has_each_decade_bound_once() {
        let keys = log_axis(0.07, 70.0).key_points(30usize);
        assert_eq!(keys.iter().filter(|k| **k == 1.0).count(), 1, "{keys:?}");
        assert_eq!(keys.iter().filter(|k| **k == 10.0).count(), 1, "{keys:?}");
        assert!(keys.contains(&0.1) && keys.contains(&70.0));
    }
}
