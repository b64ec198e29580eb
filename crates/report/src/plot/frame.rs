//! The frame of a figure: the header (title, subtitle, legend) above the panels, and the
//! panels' sizes and placement.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::FontStyle;

use super::Drawn;
use super::style::{AXIS, BOTTOM_EXTRA, FONT, INK, MUTED, WIDTH, Y_LABELS, fonts};

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

/// The rows of a grid of `n` panels in `cols` columns.
pub(crate) fn grid_rows(n: usize, cols: usize) -> usize {
    n.div_ceil(cols.max(1)).max(1)
}

/// The scenarios a figure draws from, for its subtitle: `a vs b` across runs.
pub(crate) fn scenarios(data: &crate::data::RunSet) -> String {
    data.runs.iter().map(|r| r.scenario.as_str()).collect::<Vec<_>>().join(" vs ")
}

/// How panels average their replications, given the counts of replications they have.
pub(crate) fn replications_text(reps_seen: &std::collections::BTreeSet<usize>) -> String {
    match reps_seen.len() {
        1 => match reps_seen.iter().next() {
            Some(1) => "one replication".to_string(),
            Some(n) => format!("mean of {n} replications"),
            None => String::new(),
        },
        _ => "mean over each panel's replications".to_string(),
    }
}

/// A chart builder as the time figures' panels and strips (and the delays figure) start
/// it: 8 px left, 24 right so the last x label is not cut, and the y labels' room, so that
/// their plot areas line up. The x axis's room, the top margin and the coordinates are the
/// caller's.
pub(crate) fn aligned<'a, 'b, DB: DrawingBackend>(area: &'a DrawingArea<DB, Shift>) -> ChartBuilder<'a, 'b, DB> {
    let mut chart = ChartBuilder::on(area);
    chart.margin_left(8).margin_right(24).y_label_area_size(Y_LABELS);
    chart
}

/// [`aligned`] with the panel's bold caption above, 6 px from the top, cut to the
/// figure's width.
pub(crate) fn captioned<'a, 'b, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    caption: &str,
) -> ChartBuilder<'a, 'b, DB> {
    let mut chart = aligned(area);
    chart
        .margin_top(6)
        .caption(fit(caption, 15, WIDTH - 40), TextStyle::from((FONT, 15, FontStyle::Bold).into_font()).color(&INK));
    chart
}

/// The room under a panel of stacked panels for the time axis: none when a strip under it
/// carries the axis (`None`), the labels' height, and more under the last panel
/// (`Some(true)`) for the axis's title.
pub(crate) fn time_axis_room(axis: Option<bool>) -> u32 {
    match axis {
        None => 0,
        Some(false) => AXIS,
        Some(true) => AXIS + BOTTOM_EXTRA,
    }
}
