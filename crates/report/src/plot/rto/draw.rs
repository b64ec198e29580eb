//! Drawing the RTO figure: a panel per connection, its lines, marks and the strip of
//! retransmissions and probes under it.

use super::*;
use crate::plot::{aligned, captioned};

impl Figure for RtoFigure {
    fn size(&self) -> (u32, u32) {
        // No panels: the header and the margin, to which the panels' own heights add.
        let (width, header) = stacked_size(&self.subtitle, &self.legend, 0, 0, 0);
        (width, header + self.heights().iter().sum::<u32>())
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let body = header(root, &self.title, &self.subtitle, &self.legend)?;
        let n = self.panels.len();
        let heights = self.heights();
        for (i, (area, p)) in stack_heights(&body, &heights).iter().zip(&self.panels).enumerate() {
            crate::plot::stop()?;
            let last = i + 1 == n;
            let (y0, y1) = self.y;
            if self.log {
                draw_panel(area, p, self, last, crate::plot::log_axis(y0, y1))?;
            } else {
                draw_panel(area, p, self, last, y0..y1)?;
            }
        }
        Ok(())
    }
}

fn draw_panel<DB, Y>(
    area: &DrawingArea<DB, Shift>,
    p: &Panel,
    fig: &RtoFigure,
    last: bool,
    y_spec: Y,
) -> Result<(), String>
where
    DB: DrawingBackend,
    Y: AsRangedCoord<Value = f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let (x0, x1) = fig.x;
    let (y0, y1) = fig.y;
    // Retransmissions and probes get a strip of their own under the plot, a row each, so
    // their marks never sit on top of an RTT sample or each other; the congestion window
    // a strip under that. The lowest carries the time axis.
    let axis_h = if last { 44 } else { 24 };
    let rug = !fig.rug.is_empty();
    let congestion = !p.cwnd.is_empty();
    let cwnd_h = if congestion { CWND_STRIP + axis_h } else { 0 };
    let rug_h = if rug { STRIP * fig.rug.len() as u32 + if congestion { 0 } else { axis_h } } else { 0 };
    let (top, below) = area.split_vertically(area.dim_in_pixel().1 - rug_h - cwnd_h);
    let (strip, cwnd_strip) = below.split_vertically(rug_h);
    let mut chart = captioned(&top, &p.caption)
        .x_label_area_size(if rug || congestion { 0 } else { axis_h })
        .build_cartesian_2d(x0..x1, y_spec)
        .d()?;
    let x_desc = if last && !rug && !congestion { "time (s)" } else { "" };
    // Zero-window probes share the axis at their interval: the name must cover them.
    // So must it when a captured sender's waits are drawn.
    let y_desc = if fig.panels.iter().any(|p| !p.window_probes.is_empty() || !p.waited.is_empty()) {
        "seconds"
    } else {
        "RTT, SRTT, RTO (s)"
    };
    if fig.log {
        mesh_with(&mut chart, x_desc, y_desc, &tick, &log_tick, LOG_Y_LABELS)?;
    } else {
        mesh(&mut chart, x_desc, y_desc, &tick, &tick)?;
    }
    if rug {
        draw_rug(&strip, p, fig, last && !congestion, if congestion { 0 } else { axis_h })?;
    }
    if congestion {
        cwnd::draw(&cwnd_strip, p, fig, last, axis_h)?;
    }
    let label = TextStyle::from((FONT, 12))
        .color(&MUTED)
        .pos(text_anchor::Pos::new(text_anchor::HPos::Left, text_anchor::VPos::Top));
    chart.draw_series(p.blackouts.iter().map(|&(a, b)| Rectangle::new([(a, y0), (b, y1)], BLACKOUT.filled()))).d()?;
    chart.draw_series(p.blackout_labels.iter().map(|&a| Text::new(BLACKOUT_LABEL, (a, y1), label.clone()))).d()?;
    chart
        .draw_series(p.changed_bands.iter().map(|&(a, b)| Rectangle::new([(a, y0), (b, y1)], CHANGED.filled())))
        .d()?;
    chart
        .draw_series(p.changed_labels.iter().map(|&(a, rtt)| Text::new(rtt_label(rtt), (a, y1), label.clone())))
        .d()?;
    chart.draw_series(p.samples.iter().map(|&(x, y)| Circle::new((x, y), 2, SAMPLE.filled()))).d()?;
    chart.draw_series(p.clipped.iter().map(|&(x, y)| Circle::new((x, y), 3, SAMPLE.stroke_width(1)))).d()?;
    for s in &p.srtt {
        chart.draw_series(LineSeries::new(s.iter().copied(), SRTT.stroke_width(2))).d()?;
    }
    if !p.path.is_empty() {
        chart.draw_series(DashedLineSeries::new(p.path.iter().copied(), 6, 4, PATH.stroke_width(1))).d()?;
    }
    chart.draw_series(LineSeries::new(p.rto.iter().copied(), RTO.stroke_width(2))).d()?;
    chart.draw_series(p.timeouts.iter().map(|&(x, y)| Cross::new((x, y), 5, TIMEOUT.stroke_width(2)))).d()?;
    chart.draw_series(p.kernel.iter().map(|&(x, y)| Circle::new((x, y), 3, KERNEL.stroke_width(1)))).d()?;
    chart.draw_series(p.waited.iter().map(|&(x, y)| TriangleMarker::new((x, y), 5, RETRANSMIT.filled()))).d()?;
    chart.draw_series(p.undone.iter().map(|&(x, y)| Circle::new((x, y), 5, UNDONE.stroke_width(2)))).d()?;
    chart.draw_series(p.window_probes.iter().map(|&(x, y)| Circle::new((x, y), 4, WINDOW_PROBE.filled()))).d()?;
    if let Some(t) = p.aborted.filter(|t| *t >= x0 && *t <= x1) {
        chart.draw_series(std::iter::once(PathElement::new(vec![(t, y0), (t, y1)], ABORTED.stroke_width(2)))).d()?;
        // Labelled halfway up (blackout labels take the top, the SRTT often the bottom),
        // on a white ground, after the line where nothing else happens, unless that is
        // off the right edge.
        let mid = if fig.log { (y0 * y1).sqrt() } else { (y0 + y1) / 2.0 };
        let text = p.ending.label();
        let w = text_width(text, 12) as i32 + 6;
        let dx = if t < x0 + 0.85 * (x1 - x0) { 4 } else { -4 - w };
        let style = TextStyle::from((FONT, 12, FontStyle::Bold).into_font())
            .color(&ABORTED)
            .pos(text_anchor::Pos::new(text_anchor::HPos::Left, text_anchor::VPos::Center));
        chart
            .draw_series(std::iter::once(
                EmptyElement::at((t, mid))
                    + Rectangle::new([(dx, -9), (dx + w, 9)], WHITE.filled())
                    + Text::new(text, (dx + 3, 0), style),
            ))
            .d()?;
    }
    Ok(())
}

/// The strip of retransmission and probe marks under a panel, a row each (the rows any
/// panel needs), carrying the time axis.
fn draw_rug<DB: DrawingBackend>(
    strip: &DrawingArea<DB, Shift>,
    p: &Panel,
    fig: &RtoFigure,
    last: bool,
    axis_h: u32,
) -> Result<(), String> {
    let (x0, x1) = fig.x;
    let strip = strip.clone();
    let mut rug = aligned(&strip)
        .x_label_area_size(axis_h)
        .build_cartesian_2d(x0..x1, 0.0..fig.rug.len() as f64)
        .d()?;
    rug.configure_mesh()
        .disable_y_mesh()
        .bold_line_style(crate::plot::GRID_BOLD)
        .light_line_style(crate::plot::GRID_LIGHT)
        .axis_style(MUTED)
        .y_labels(0)
        .x_labels(12)
        .label_style((FONT, 13).into_font().color(&INK))
        .axis_desc_style((FONT, 14).into_font().color(&INK))
        .x_desc(if last { "time (s)" } else { "" })
        .x_label_formatter(&tick)
        .draw()
        .d()?;
    for (i, row) in fig.rug.iter().enumerate() {
        let colour = row.colour();
        let label = TextStyle::from((FONT, 11))
            .color(&colour)
            .pos(text_anchor::Pos::new(text_anchor::HPos::Right, text_anchor::VPos::Center));
        strip.draw_text(row.name(), &label, (8 + Y_LABELS as i32 - 6, (STRIP * i as u32 + STRIP / 2) as i32)).d()?;
    }
    let top = fig.rug.len() as f64;
    for &(a, b) in &p.blackouts {
        rug.draw_series(std::iter::once(Rectangle::new([(a, 0.0), (b, top)], BLACKOUT.filled()))).d()?;
    }
    if let Some(t) = p.aborted.filter(|t| *t >= x0 && *t <= x1) {
        rug.draw_series(std::iter::once(PathElement::new(vec![(t, 0.0), (t, top)], ABORTED.stroke_width(2)))).d()?;
    }
    for (i, row) in fig.rug.iter().enumerate() {
        // Row i from the top is centred at top - i - 0.5 on the strip's y axis.
        let y = top - i as f64 - 0.5;
        let c = row.colour();
        let dots = |xs: &[f64], r| xs.iter().map(move |&x| Circle::new((x, y), r, c.filled())).collect::<Vec<_>>();
        let triangles =
            |xs: &[f64], r| xs.iter().map(move |&x| TriangleMarker::new((x, y), r, c.filled())).collect::<Vec<_>>();
        let r = |xs: &[f64]| timers::mark_radius(xs, (x0, x1));
        match row {
            Row::Retransmits => rug.draw_series(triangles(&p.retransmits, 4)).d()?,
            Row::Probes => rug.draw_series(dots(&p.probes, 4)).d()?,
            Row::Keepalives => rug.draw_series(dots(&p.keepalives, r(&p.keepalives))).d()?,
            Row::SynAcks => {
                let mut all = [p.synacks.as_slice(), p.synack_resends.as_slice()].concat();
                all.sort_by(f64::total_cmp);
                rug.draw_series(dots(&p.synacks, r(&all))).d()?;
                rug.draw_series(triangles(&p.synack_resends, r(&all))).d()?
            }
            Row::Icmp => {
                let size = r(&p.icmp) as i32;
                rug.draw_series(p.icmp.iter().map(|&x| Cross::new((x, y), size, c.stroke_width(2)))).d()?
            }
            // The stall as a bar, the probes sent in it as ticks on it.
            Row::ZeroWindow => {
                let bar = |&(a, b): &(f64, f64)| Rectangle::new([(a, y - 0.3), (b, y + 0.3)], ZERO_WINDOW.filled());
                rug.draw_series(p.zero_windows.iter().map(bar)).d()?;
                rug.draw_series(
                    p.window_probes
                        .iter()
                        .map(|&(x, _)| PathElement::new(vec![(x, y - 0.3), (x, y + 0.3)], c.stroke_width(1))),
                )
                .d()?
            }
        };
    }
    Ok(())
}
