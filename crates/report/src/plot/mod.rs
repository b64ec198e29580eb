//! Plots of a finished run, as SVG or PNG.
//!
//! Every kind builds a `Figure` from a [`RunSet`] and draws it on either backend, so
//! the SVG and the PNG of a plot are the same picture. The font is DejaVu Sans from the
//! `dejavu` crate, registered with plotters once: no system font is read, and the same
//! input files give byte-identical output.
//!
//! Large traces are thinned before drawing without changing the picture: lines keep the
//! first, lowest, highest and last point of each of `LINE_BUCKETS` time slices, and
//! scattered points keep one point per cell of a fine grid (see `thin_line` and
//! `thin_points`), so a run with millions of trace rows still plots in milliseconds.

pub mod attempts;
mod bands;
pub mod cdf;
pub mod delays;
pub mod heatmap;
pub mod load;
mod raster;
pub mod rto;
pub mod sweep;

use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::{FontStyle, register_font};

use super::ReportError;
use super::data::RunSet;

/// The plot kinds, as `backoffsim plot KIND` names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Kind {
    /// RTT samples, SRTT and RTO over time, with timeouts and retransmissions marked.
    Rto,
    /// Connection attempts the server saw per time bin, one panel per variant and sweep cell.
    Attempts,
    /// Offered load, goodput and the retries' share per time bin (or jobs created,
    /// delivered and queued), one panel per variant and sweep cell.
    Load,
    /// The distribution of reconnect times (or times to success), a line per variant and
    /// sweep cell.
    Cdf,
    /// A metric against the swept parameter, a line per variant with its 95 % CI.
    Sweep,
    /// A metric over two swept parameters.
    Heatmap,
}

impl Kind {
    pub const ALL: [Kind; 6] = [Kind::Rto, Kind::Attempts, Kind::Load, Kind::Cdf, Kind::Sweep, Kind::Heatmap];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Rto => "rto",
            Kind::Attempts => "attempts",
            Kind::Load => "load",
            Kind::Cdf => "cdf",
            Kind::Sweep => "sweep",
            Kind::Heatmap => "heatmap",
        }
    }

    /// Why this kind cannot be drawn from `data`, or `None` if it can.
    pub fn missing(self, data: &RunSet) -> Option<String> {
        match self {
            Kind::Rto if data.trace.is_empty() => Some("no RTO trace: trace.csv is missing or has no rows".into()),
            Kind::Attempts if data.attempts.as_ref().is_none_or(|a| a.is_empty()) => Some(
                "no attempts per time bin: attempts.csv is missing or has no rows (only \
                 models with a server write it)"
                    .into(),
            ),
            Kind::Load if data.series.as_ref().is_none_or(|t| t.iter().all(|t| t.rows.is_empty())) => Some(
                "no quantities over time: series.csv is missing or has no rows (only models that \
                 track load over time write it)"
                    .into(),
            ),
            Kind::Cdf if data.cdf.as_ref().is_none_or(|c| c.is_empty()) => Some(
                "no distributions: cdf.csv is missing or has no rows (only models with \
                 reconnecting clients write it)"
                    .into(),
            ),
            Kind::Sweep if data.sweep_keys.is_empty() => {
                Some("no sweep: summary.csv has no sweep-key columns (the scenario has no [sweep])".into())
            }
            Kind::Heatmap if data.sweep_keys.len() < 2 => Some(format!(
                "a heatmap needs two swept parameters; summary.csv has {}",
                if data.sweep_keys.is_empty() { "none".to_string() } else { format!("only `{}`", data.sweep_keys[0]) }
            )),
            _ => None,
        }
    }
}

/// The image format, from the output file's extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Svg,
    Png,
}

impl Format {
    pub fn from_path(path: &std::path::Path) -> Option<Format> {
        match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
            "svg" => Some(Format::Svg),
            "png" => Some(Format::Png),
            _ => None,
        }
    }
}

/// What to show; every field narrows the default picture.
#[derive(Clone, Debug, Default)]
pub struct PlotOptions {
    /// Variants to show (all when empty).
    pub variants: Vec<String>,
    /// RTO plot: the connection to show (the first traced one by default; all traced
    /// connections of the variant when a single variant is chosen).
    pub client: Option<u32>,
    /// RTO plot: the replication to show (the first traced one by default).
    pub replication: Option<u32>,
    /// Time window in seconds.
    pub from: Option<f64>,
    pub to: Option<f64>,
    /// Sweep, heatmap and CDF plots: the one metric to show, any the run wrote (by default
    /// the sweep and heatmap show the model's headline metrics that vary, the CDF all).
    pub metric: Option<String>,
    /// RTO, attempts, load and CDF plots: the sweep cells to show, as `(key, value)` pairs; a
    /// key is the full dotted sweep key or its last segment. Values of one key are
    /// alternatives, different keys must all match (all cells when empty).
    pub cells: Vec<(String, String)>,
}

/// Draws a plot of `kind` from `data`.
pub fn render(kind: Kind, data: &RunSet, opts: &PlotOptions, format: Format) -> Result<Vec<u8>, ReportError> {
    if let Some(why) = kind.missing(data) {
        return Err(ReportError::Missing(why));
    }
    for v in &opts.variants {
        if data.variant(v).is_none() {
            let names = data.variant_names();
            return Err(ReportError::Missing(backoffsim_core::suggest::unknown("variant", v, names, None)));
        }
    }
    if let (Some(a), Some(b)) = (opts.from, opts.to)
        && b <= a
    {
        return Err(ReportError::Missing(format!(
            "the time window is empty: --to ({b} s) must be after --from ({a} s)"
        )));
    }
    if !opts.cells.is_empty() {
        if matches!(kind, Kind::Sweep | Kind::Heatmap) {
            return Err(ReportError::Missing(format!(
                "--cell picks sweep cells for rto, attempts, load and cdf; `{}` draws across cells",
                kind.name()
            )));
        }
        select_cells(data, &opts.cells)?;
    }
    match kind {
        Kind::Rto => encode(&rto::figure(data, opts)?, format),
        Kind::Attempts => encode(&attempts::figure(data, opts)?, format),
        Kind::Load => encode(&load::figure(data, opts)?, format),
        Kind::Cdf => encode(&cdf::figure(data, opts)?, format),
        Kind::Sweep => encode(&sweep::figure(data, opts)?, format),
        Kind::Heatmap => encode(&heatmap::figure(data, opts)?, format),
    }
}

/// A picture that can be drawn on any backend.
pub(crate) trait Figure {
    fn size(&self) -> (u32, u32);
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String>;
}

/// Plotters' errors as text.
pub(crate) trait Drawn<T> {
    fn d(self) -> Result<T, String>;
}

impl<T, E: std::fmt::Display> Drawn<T> for Result<T, E> {
    fn d(self) -> Result<T, String> {
        self.map_err(|e| e.to_string())
    }
}

/// Registers DejaVu Sans as plotters' `sans-serif` (regular and bold), once: plotters
/// measures text with it (both backends), and the PNG backend draws with it.
pub(crate) fn fonts() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        for (style, bytes) in [
            (FontStyle::Normal, dejavu::sans::regular()),
            (FontStyle::Bold, dejavu::sans::bold()),
            (FontStyle::Oblique, dejavu::sans::oblique()),
            (FontStyle::Italic, dejavu::sans::oblique()),
        ] {
            if register_font("sans-serif", style, bytes).is_err() {
                panic!("the DejaVu Sans font shipped in the dejavu crate is not a valid font");
            }
        }
    });
}

/// What a figure's drawing returns when it stopped at a requested interrupt.
const STOPPED: &str = "interrupted";

/// A figure's look at the interrupt flag, once per panel it draws.
pub(crate) fn stop() -> Result<(), String> {
    backoffsim_core::run::interrupt::check().map_err(|_| STOPPED.to_string())
}

pub(crate) fn encode(fig: &impl Figure, format: Format) -> Result<Vec<u8>, ReportError> {
    fonts();
    let (w, h) = fig.size();
    let draw_err = |e: String| if e == STOPPED { ReportError::Interrupted } else { ReportError::Draw(e) };
    match format {
        Format::Svg => {
            let mut s = String::new();
            {
                let root = SVGBackend::with_string(&mut s, (w, h)).into_drawing_area();
                root.fill(&WHITE).d().map_err(draw_err)?;
                fig.draw(&root).map_err(draw_err)?;
                root.present().d().map_err(draw_err)?;
            }
            if !s.ends_with('\n') {
                s.push('\n');
            }
            Ok(s.into_bytes())
        }
        Format::Png => {
            let mut buf = vec![255u8; w as usize * h as usize * 3];
            {
                let root = raster::Raster(BitMapBackend::with_buffer(&mut buf, (w, h))).into_drawing_area();
                root.fill(&WHITE).d().map_err(draw_err)?;
                fig.draw(&root).map_err(draw_err)?;
                root.present().d().map_err(draw_err)?;
            }
            backoffsim_core::run::interrupt::check()?;
            let mut out = Vec::new();
            {
                let mut enc = png::Encoder::new(&mut out, w, h);
                enc.set_color(png::ColorType::Rgb);
                enc.set_depth(png::BitDepth::Eight);
                enc.set_compression(png::Compression::Balanced);
                let mut writer = enc.write_header().map_err(|e| ReportError::Draw(e.to_string()))?;
                writer.write_image_data(&buf).map_err(|e| ReportError::Draw(e.to_string()))?;
            }
            Ok(out)
        }
    }
}

// ---- look -------------------------------------------------------------------------

/// Figure width in pixels.
pub(crate) const WIDTH: u32 = 1000;

pub(crate) const FONT: &str = "sans-serif";
pub(crate) const INK: RGBColor = RGBColor(33, 33, 33);
pub(crate) const MUTED: RGBColor = RGBColor(100, 100, 100);
pub(crate) const GRID_BOLD: RGBColor = RGBColor(218, 218, 218);
pub(crate) const GRID_LIGHT: RGBColor = RGBColor(240, 240, 240);

/// Colours for series (variants, sweep lines): Okabe–Ito, distinguishable with the
/// common colour-vision deficiencies, then a few more.
pub(crate) const PALETTE: [RGBColor; 10] = [
    RGBColor(0, 114, 178),   // blue
    RGBColor(213, 94, 0),    // vermillion
    RGBColor(0, 158, 115),   // bluish green
    RGBColor(204, 121, 167), // reddish purple
    RGBColor(230, 159, 0),   // orange
    RGBColor(86, 180, 233),  // sky blue
    RGBColor(0, 0, 0),       // black
    RGBColor(140, 86, 75),   // brown
    RGBColor(127, 127, 127), // grey
    RGBColor(188, 189, 34),  // olive
];

pub(crate) fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// A legend entry's symbol.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Glyph {
    Line(RGBColor, u32),
    Dashed(RGBColor),
    Dot(RGBColor),
    /// An open circle.
    Ring(RGBColor),
    Cross(RGBColor),
    Triangle(RGBColor),
    Band(RGBColor),
}

/// Draws the title, a subtitle and a legend (wrapped to the width) at the top of `root`
/// and returns the area below. The legend stands apart from every panel, so it never
/// hides data.
pub(crate) fn header<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    subtitle: &str,
    legend: &[(Glyph, String)],
) -> Result<DrawingArea<DB, Shift>, String> {
    let width = root.dim_in_pixel().0;
    let (top, rest) = root.split_vertically(header_height(width, subtitle, legend));
    let title_style = TextStyle::from((FONT, 20, FontStyle::Bold).into_font()).color(&INK);
    top.draw_text(title, &title_style, (14, 10)).d()?;
    let mut y = 38;
    if !subtitle.is_empty() {
        top.draw_text(subtitle, &TextStyle::from((FONT, 14)).color(&MUTED), (14, y)).d()?;
        y += 22;
    }
    for row in legend_rows(width, legend) {
        let mut x = 16;
        for (glyph, label, w) in row {
            // The middle of the label's capitals: plotters puts the baseline at half the
            // font size below the top.
            draw_glyph(&top, glyph, x, y + 3)?;
            top.draw_text(&label, &TextStyle::from((FONT, 14)).color(&INK), (x + 28, y)).d()?;
            x += w;
        }
        y += 22;
    }
    Ok(rest)
}

/// The height [`header`] takes in a figure `width` pixels wide.
/// Heights of `n` stacked panels; the last one gets `bottom_extra` for the shared x axis.
pub(crate) fn panel_heights(n: usize, panel_height: u32, bottom_extra: u32) -> Vec<u32> {
    (0..n).map(|i| panel_height + if i + 1 == n { bottom_extra } else { 0 }).collect()
}

/// The size of a figure of `n` stacked panels under the header.
pub(crate) fn stacked_size(
    subtitle: &str,
    legend: &[(Glyph, String)],
    n: usize,
    panel_height: u32,
    bottom_extra: u32,
) -> (u32, u32) {
    (
        WIDTH,
        header_height(WIDTH, subtitle, legend) + panel_heights(n, panel_height, bottom_extra).iter().sum::<u32>() + 8,
    )
}

pub(crate) fn header_height(width: u32, subtitle: &str, legend: &[(Glyph, String)]) -> u32 {
    let rows = legend_rows(width, legend).len() as u32;
    40 + if subtitle.is_empty() { 0 } else { 22 } + rows * 22 + 6
}

/// The width of `text` at `size` pixels in the registered font.
pub(crate) fn text_width(text: &str, size: u32) -> u32 {
    styled_width(text, size, FontStyle::Normal)
}

fn styled_width(text: &str, size: u32, style: FontStyle) -> u32 {
    fonts();
    (FONT, size, style).into_font().box_size(text).map(|(w, _)| w).unwrap_or(text.chars().count() as u32 * size / 2)
}

type LegendRow = Vec<(Glyph, String, i32)>;

fn legend_rows(width: u32, legend: &[(Glyph, String)]) -> Vec<LegendRow> {
    let width = width as i32 - 32;
    let mut rows: Vec<LegendRow> = Vec::new();
    let mut used = 0;
    for (glyph, label) in legend {
        let w = 28 + text_width(label, 14) as i32 + 26;
        if rows.is_empty() || used + w > width {
            rows.push(Vec::new());
            used = 0;
        }
        rows.last_mut().expect("a row was just pushed").push((*glyph, label.clone(), w));
        used += w;
    }
    rows
}

/// Cuts bold `text` (a caption) to what fits in `width` pixels at `size`, with an
/// ellipsis.
pub(crate) fn fit(text: &str, size: u32, width: u32) -> String {
    let text_width = |t: &str, s| styled_width(t, s, FontStyle::Bold);
    if text_width(text, size) <= width {
        return text.to_string();
    }
    let chars: Vec<char> = text.chars().collect();
    let (mut lo, mut hi) = (0, chars.len());
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        let s: String = chars[..mid].iter().collect::<String>() + "…";
        if text_width(&s, size) <= width {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    chars[..lo].iter().collect::<String>().trim_end().to_string() + "…"
}

/// Splits `area` into panels stacked vertically with the given heights.
pub(crate) fn stack_heights<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    heights: &[u32],
) -> Vec<DrawingArea<DB, Shift>> {
    let mut out = Vec::new();
    let mut rest = area.clone();
    for (i, h) in heights.iter().enumerate() {
        if i + 1 == heights.len() {
            out.push(rest.clone());
        } else {
            let (a, b) = rest.split_vertically(*h);
            out.push(a);
            rest = b;
        }
    }
    out
}

fn draw_glyph<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, glyph: Glyph, x: i32, y: i32) -> Result<(), String> {
    let c = x + 11;
    match glyph {
        Glyph::Line(col, w) => area.draw(&PathElement::new(vec![(x, y), (x + 22, y)], col.stroke_width(w))).d(),
        Glyph::Dashed(col) => {
            for i in 0..3 {
                area.draw(&PathElement::new(vec![(x + i * 8, y), (x + i * 8 + 5, y)], col.stroke_width(2))).d()?;
            }
            Ok(())
        }
        Glyph::Dot(col) => area.draw(&Circle::new((c, y), 3, col.filled())).d(),
        Glyph::Ring(col) => area.draw(&Circle::new((c, y), 3, col.stroke_width(1))).d(),
        Glyph::Cross(col) => area.draw(&Cross::new((c, y), 5, col.stroke_width(2))).d(),
        Glyph::Triangle(col) => area.draw(&TriangleMarker::new((c, y), 5, col.filled())).d(),
        Glyph::Band(col) => area.draw(&Rectangle::new([(x, y - 7), (x + 22, y + 7)], col.filled())).d(),
    }
}

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

/// Time slices a line keeps its extremes in when it is thinned.
pub(crate) const LINE_BUCKETS: usize = 2000;
/// Lines with fewer points than this are drawn as they are.
pub(crate) const THIN_ABOVE: usize = 4000;

/// Thins a line ordered by x to at most four points per slice of `[x0, x1]`: the first,
/// the lowest, the highest and the last, in x order. At [`LINE_BUCKETS`] slices across a
/// 1000-pixel plot the drawn line looks the same.
pub(crate) fn thin_line(points: &[(f64, f64)], x0: f64, x1: f64) -> Vec<(f64, f64)> {
    if points.len() <= THIN_ABOVE || x1 <= x0 {
        return points.to_vec();
    }
    let slice = |x: f64| (((x - x0) / (x1 - x0)) * LINE_BUCKETS as f64).floor() as i64;
    let mut out = Vec::new();
    let mut i = 0;
    while i < points.len() {
        let b = slice(points[i].0);
        let mut j = i;
        let (mut lo, mut hi) = (i, i);
        while j < points.len() && slice(points[j].0) == b {
            if points[j].1 < points[lo].1 {
                lo = j;
            }
            if points[j].1 > points[hi].1 {
                hi = j;
            }
            j += 1;
        }
        let mut keep = vec![i, lo, hi, j - 1];
        keep.sort_unstable();
        keep.dedup();
        out.extend(keep.into_iter().map(|k| points[k]));
        i = j;
    }
    out
}

/// Thins scattered points to one per cell of a grid finer than the pixels (2000 columns,
/// 1000 rows of the plotted range; `ylog` for a log axis), keeping the first in each.
pub(crate) fn thin_points(
    points: &[(f64, f64)],
    (x0, x1): (f64, f64),
    (y0, y1): (f64, f64),
    ylog: bool,
) -> Vec<(f64, f64)> {
    if points.len() <= THIN_ABOVE || x1 <= x0 || y1 <= y0 {
        return points.to_vec();
    }
    let fy = |y: f64| {
        if ylog { y.max(f64::MIN_POSITIVE).ln() } else { y }
    };
    let (fy0, fy1) = (fy(y0), fy(y1));
    let mut seen = std::collections::BTreeSet::new();
    points
        .iter()
        .copied()
        .filter(|&(x, y)| {
            let cx = ((x - x0) / (x1 - x0) * 2000.0).floor() as i64;
            let cy = ((fy(y) - fy0) / (fy1 - fy0) * 1000.0).floor() as i64;
            seen.insert((cx, cy))
        })
        .collect()
}

/// Thins marks along a time axis (retransmissions under a panel) to the first in each of
/// [`LINE_BUCKETS`] slices of `[x0, x1]`: 100,000 marks a few pixels wide would cover one
/// another anyway.
pub(crate) fn thin_marks(xs: &[f64], x0: f64, x1: f64) -> Vec<f64> {
    if xs.len() <= THIN_ABOVE || x1 <= x0 {
        return xs.to_vec();
    }
    let mut seen = std::collections::BTreeSet::new();
    xs.iter().copied().filter(|x| seen.insert(((x - x0) / (x1 - x0) * LINE_BUCKETS as f64).floor() as i64)).collect()
}

/// The rows of a grid of `n` panels in `cols` columns.
pub(crate) fn grid_rows(n: usize, cols: usize) -> usize {
    n.div_ceil(cols.max(1)).max(1)
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
    fn thinning_a_line_keeps_its_extremes_in_order() {
        let pts: Vec<(f64, f64)> = (0..100_000).map(|i| (i as f64 / 1000.0, ((i * 7919) % 1000) as f64)).collect();
        let thin = thin_line(&pts, 0.0, 100.0);
        assert!(thin.len() <= 4 * LINE_BUCKETS, "{}", thin.len());
        assert!(thin.windows(2).all(|w| w[0].0 <= w[1].0));
        let max = |p: &[(f64, f64)]| p.iter().map(|p| p.1).fold(f64::MIN, f64::max);
        let min = |p: &[(f64, f64)]| p.iter().map(|p| p.1).fold(f64::MAX, f64::min);
        assert_eq!((max(&thin), min(&thin)), (max(&pts), min(&pts)));
        assert_eq!(thin.first(), pts.first());
        assert_eq!(thin.last(), pts.last());
    }

    #[test]
    fn thinning_marks_keeps_the_first_in_each_slice_and_leaves_few_alone() {
        let few: Vec<f64> = (0..THIN_ABOVE).map(|i| i as f64 * 1e-3).collect();
        assert_eq!(thin_marks(&few, 0.0, 100.0), few);
        // 100,000 retransmissions, one a second, on a 100,000 s axis: one per 50 s slice.
        let many: Vec<f64> = (0..100_000).map(f64::from).collect();
        let thin = thin_marks(&many, 0.0, 100_000.0);
        assert_eq!(thin.len(), LINE_BUCKETS);
        assert_eq!((thin[0], thin[1]), (0.0, 50.0));
    }

    #[test]
    fn thinning_points_keeps_one_per_grid_cell_and_leaves_small_sets_alone() {
        let few: Vec<(f64, f64)> = (0..100).map(|i| (i as f64, 1.0)).collect();
        assert_eq!(thin_points(&few, (0.0, 100.0), (0.5, 2.0), true), few);
        // 200 000 samples of a 100 ms RTT over 60 s collapse to one row of cells.
        let many: Vec<(f64, f64)> = (0..200_000).map(|i| (i as f64 * 0.0003, 0.1 + (i % 7) as f64 * 1e-7)).collect();
        let thin = thin_points(&many, (0.0, 60.0), (0.01, 10.0), true);
        assert!(thin.len() <= 2001, "{}", thin.len());
        assert_eq!(thin[0], many[0]);
    }
}

// ---- sweep cells ------------------------------------------------------------------

/// The names plots give the sweep keys: the last dotted segment (`max_backoff`) where no
/// other key ends the same way, else the whole key.
pub(crate) fn short_keys(keys: &[String]) -> Vec<String> {
    let last = |k: &str| k.rsplit('.').next().unwrap_or(k).to_string();
    keys.iter()
        .map(|k| {
            let l = last(k);
            if keys.iter().filter(|o| last(o) == l).count() == 1 { l } else { k.clone() }
        })
        .collect()
}

/// A sweep cell as people read it: `max_backoff = 30s, window = 8`; empty without a
/// sweep.
pub(crate) fn cell_label(keys: &[String], point: &[String]) -> String {
    short_keys(keys)
        .iter()
        .zip(point)
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| format!("{k} = {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What a panel or a line is called: the variant and the cell, `jitter-0.2 · max_backoff
/// = 30s`; the cell alone when the figure shows one variant, the variant alone without a
/// sweep.
pub(crate) fn series_label(variant: &str, cell: &str, one_variant: bool) -> String {
    match (cell.is_empty(), one_variant) {
        (true, _) => variant.to_string(),
        (false, true) => cell.to_string(),
        (false, false) => format!("{variant} · {cell}"),
    }
}

/// Whether two swept values are the same: the same text, or the same duration or number
/// written differently (`30s` and `30 s`, `0.5` and `0.50`).
fn same_value(a: &str, b: &str) -> bool {
    let (a, b) = (a.trim(), b.trim());
    if a == b {
        return true;
    }
    let dur = |s: &str| backoffsim_core::engine::time::SimDuration::parse(s).ok();
    if let (Some(x), Some(y)) = (dur(a), dur(b)) {
        return x == y;
    }
    matches!((a.parse::<f64>(), b.parse::<f64>()), (Ok(x), Ok(y)) if x == y)
}

/// The sweep cells of `data` that `wanted` selects (every cell when it is empty), in the
/// run's order; an error names the keys and values there are when a key or a value
/// matches nothing.
pub fn select_cells(data: &RunSet, wanted: &[(String, String)]) -> Result<Vec<Vec<String>>, ReportError> {
    let points = data.points();
    if wanted.is_empty() {
        return Ok(points);
    }
    let keys = &data.sweep_keys;
    if keys.is_empty() {
        return Err(ReportError::Missing("--cell picks sweep cells, and this run has no [sweep]".into()));
    }
    let values = |i: usize| {
        let mut out: Vec<&str> = Vec::new();
        for p in &points {
            if !out.contains(&p[i].as_str()) {
                out.push(&p[i]);
            }
        }
        out.join(", ")
    };
    let mut by_key: Vec<(usize, Vec<&str>)> = Vec::new();
    for (k, v) in wanted {
        let hits: Vec<usize> = (0..keys.len())
            .filter(|&i| keys[i] == *k || (!k.contains('.') && keys[i].rsplit('.').next() == Some(k.as_str())))
            .collect();
        let i = match hits.as_slice() {
            [i] => *i,
            [] => {
                // A near miss of the whole key or of its last segment.
                let mut names: Vec<&str> = keys.iter().map(String::as_str).collect();
                names.extend(keys.iter().filter_map(|k| k.rsplit_once('.').map(|(_, last)| last)));
                let known = backoffsim_core::suggest::unknown("sweep key", k, names, None);
                let known = known.split(" (known: ").next().unwrap_or_default();
                return Err(ReportError::Missing(format!(
                    "--cell {k}={v}: {known} (keys: {})",
                    keys.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
                )));
            }
            several => {
                return Err(ReportError::Missing(format!(
                    "--cell {k}={v}: `{k}` could be any of {}; write the whole key",
                    several.iter().map(|&i| format!("`{}`", keys[i])).collect::<Vec<_>>().join(", ")
                )));
            }
        };
        if !points.iter().any(|p| same_value(&p[i], v)) {
            return Err(ReportError::Missing(format!(
                "--cell {k}={v}: `{}` is never `{v}` (its values: {})",
                keys[i],
                values(i)
            )));
        }
        match by_key.iter_mut().find(|(j, _)| *j == i) {
            Some((_, vs)) => vs.push(v),
            None => by_key.push((i, vec![v])),
        }
    }
    let chosen: Vec<Vec<String>> =
        points.into_iter().filter(|p| by_key.iter().all(|(i, vs)| vs.iter().any(|v| same_value(&p[*i], v)))).collect();
    if chosen.is_empty() {
        return Err(ReportError::Missing(format!(
            "no sweep cell has {}",
            wanted.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" and ")
        )));
    }
    Ok(chosen)
}

/// One (variant, cell) a plot draws: a panel or a line.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Series {
    pub variant: String,
    /// The variant's place in the run, which picks its colour in every plot.
    pub variant_index: usize,
    pub point: Vec<String>,
    /// The cell's place among the run's cells.
    pub cell_index: usize,
    /// `variant · key = value`, or the shorter form [`series_label`] gives.
    pub label: String,
}

/// The (variant, cell) pairs of `data` that `opts` selects and `has` finds data for,
/// variant by variant, cells in the run's order. Variants the rows name but the manifest
/// lacks come last.
pub(crate) fn series(
    data: &RunSet,
    opts: &PlotOptions,
    row_variants: &[&str],
    has: &dyn Fn(&str, &[String]) -> bool,
) -> Result<Vec<Series>, ReportError> {
    let mut names: Vec<String> = data.variants.iter().map(|v| v.name.clone()).collect();
    let mut known: std::collections::BTreeSet<String> = names.iter().cloned().collect();
    for v in row_variants {
        if known.insert(v.to_string()) {
            names.push(v.to_string());
        }
    }
    // Each cell's place among the run's, looked up once per series: a sweep has up to
    // 10,000 cells.
    let mut cell_at: std::collections::BTreeMap<Vec<String>, usize> = std::collections::BTreeMap::new();
    for (i, p) in data.points().into_iter().enumerate() {
        cell_at.entry(p).or_insert(i);
    }
    let points = select_cells(data, &opts.cells)?;
    let chosen: Vec<(usize, &String)> =
        names.iter().enumerate().filter(|(_, n)| opts.variants.is_empty() || opts.variants.contains(n)).collect();
    let mut out = Vec::new();
    for (vi, name) in &chosen {
        backoffsim_core::run::interrupt::check()?;
        for p in &points {
            if has(name, p) {
                let cell_index = cell_at.get(p).copied().unwrap_or(0);
                out.push(Series {
                    variant: (*name).clone(),
                    variant_index: *vi,
                    point: p.clone(),
                    cell_index,
                    label: String::new(),
                });
            }
        }
    }
    let one_variant = out.iter().all(|s| out.first().is_some_and(|f| f.variant == s.variant));
    for s in &mut out {
        s.label = series_label(&s.variant, &cell_label(&data.sweep_keys, &s.point), one_variant);
    }
    Ok(out)
}

/// What a figure that shows `shown` of `total` (variant, cell) pairs says about the rest.
pub(crate) fn omitted_note(shown: usize, total: usize, what: &str) -> Option<String> {
    (shown < total).then(|| format!("{shown} of {total} {what} shown (others: --cell, --variant)"))
}

#[cfg(test)]
mod cell_tests {
    use super::*;

    #[test]
    fn short_keys_drop_the_dotted_prefix_only_where_the_last_segment_is_unique() {
        let keys = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(short_keys(&keys(&["grpc.backoff.max_backoff", "tcp.window"])), ["max_backoff", "window"]);
        assert_eq!(
            short_keys(&keys(&["path.forward.loss", "path.reverse.loss"])),
            keys(&["path.forward.loss", "path.reverse.loss"])
        );
        assert_eq!(cell_label(&keys(&["grpc.backoff.max_backoff"]), &keys(&["30s"])), "max_backoff = 30s");
        assert_eq!(cell_label(&[], &[]), "");
    }

    #[test]
    fn series_labels_name_the_variant_only_when_there_are_several() {
        assert_eq!(series_label("base", "max_backoff = 30s", true), "max_backoff = 30s");
        assert_eq!(series_label("jitter", "max_backoff = 30s", false), "jitter · max_backoff = 30s");
        assert_eq!(series_label("linux", "", false), "linux");
    }

    #[test]
    fn swept_values_match_when_written_differently() {
        assert!(same_value("30s", "30 s"));
        assert!(same_value("0.5min", "30s"));
        assert!(same_value("0.50", "0.5"));
        assert!(!same_value("10s", "100s"));
    }
}
