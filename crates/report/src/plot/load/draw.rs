//! Drawing the load figure: a panel per variant and cell, its lines and bands, and the
//! strip under it.

use super::*;
use crate::plot::{aligned, captioned, time_axis_room};

impl Figure for LoadFigure {
    fn size(&self) -> (u32, u32) {
        let (w, h) = stacked_size(&self.subtitle, &self.legend, self.panels.len(), MAIN_HEIGHT + AXIS, BOTTOM_EXTRA);
        (w, h + self.panels.iter().filter(|p| p.strip.is_some()).count() as u32 * STRIP_HEIGHT)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let body = header(root, &self.title, &self.subtitle, &self.legend)?;
        let n = self.panels.len();
        let mut heights = panel_heights(n, MAIN_HEIGHT + AXIS, BOTTOM_EXTRA);
        for (h, p) in heights.iter_mut().zip(&self.panels) {
            *h += if p.strip.is_some() { STRIP_HEIGHT } else { 0 };
        }
        for (i, (area, p)) in stack_heights(&body, &heights).iter().zip(&self.panels).enumerate() {
            crate::plot::stop()?;
            let last = i + 1 == n;
            match &p.strip {
                Some(strip) => {
                    let (main, below) = area.split_vertically(MAIN_HEIGHT);
                    self.draw_main(&main, p, None)?;
                    self.draw_strip(&below, p, strip, last)?;
                }
                None => self.draw_main(area, p, Some(last))?,
            }
        }
        Ok(())
    }
}

type Chart<'a, DB> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

impl LoadFigure {
    /// The rates (or the columns); `axis` is `Some(last panel?)` when it carries the time
    /// axis itself (no strip under it).
    fn draw_main<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        p: &Panel,
        axis: Option<bool>,
    ) -> Result<(), String> {
        let top = self.y_max.get(&p.shape).copied().unwrap_or(1.0);
        let mut chart = captioned(area, &p.caption)
            // Room between the main chart's lowest tick label and the strip's highest.
            .margin_bottom(if axis.is_none() { 8 } else { 0 })
            .x_label_area_size(time_axis_room(axis))
            .build_cartesian_2d(self.x.0..self.x.1, 0.0..top)
            .d()?;
        mesh(&mut chart, if axis == Some(true) { "time (s)" } else { "" }, p.shape.y_desc(), &tick, &tick)?;
        shade(&mut chart, p, top, true)?;
        for l in &p.lines {
            for seg in &l.segments {
                let seg = thin_line(seg, self.x.0, self.x.1);
                if l.dashed {
                    chart.draw_series(DashedLineSeries::new(seg, 7, 5, l.color.stroke_width(2))).d()?;
                } else {
                    chart.draw_series(LineSeries::new(seg, l.color.stroke_width(2))).d()?;
                }
            }
        }
        Ok(())
    }

    fn draw_strip<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        p: &Panel,
        strip: &Strip,
        last: bool,
    ) -> Result<(), String> {
        let top = match strip {
            Strip::Shares { .. } => 100.0,
            Strip::Queue(_) => {
                if self.queue_max > 0.0 {
                    self.queue_max * 1.1
                } else {
                    1.0
                }
            }
        };
        let mut chart = aligned(area)
            .margin_top(8)
            .x_label_area_size(time_axis_room(Some(last)))
            .build_cartesian_2d(self.x.0..self.x.1, 0.0..top)
            .d()?;
        let percent = |v: &f64| format!("{} %", tick(v));
        chart
            .configure_mesh()
            .bold_line_style(GRID_BOLD)
            .light_line_style(GRID_LIGHT)
            .max_light_lines(1)
            .axis_style(MUTED)
            .label_style((FONT, 13).into_font().color(&INK))
            .axis_desc_style((FONT, 14).into_font().color(&INK))
            .x_desc(if last { "time (s)" } else { "" })
            .y_desc(match strip {
                Strip::Shares { .. } => "share",
                Strip::Queue(_) => "queued",
            })
            .x_labels(12)
            .y_labels(3)
            .x_label_formatter(&tick)
            .y_label_formatter(match strip {
                Strip::Shares { .. } => &percent,
                Strip::Queue(_) => &tick,
            })
            .draw()
            .d()?;
        shade(&mut chart, p, top, false)?;
        match strip {
            Strip::Shares { retry, wasted, alert } => {
                fill(&mut chart, wasted, WASTED, self.x)?;
                if let Some(a) = *alert {
                    let a = a.min(100.0);
                    chart
                        .draw_series(DashedLineSeries::new([(self.x.0, a), (self.x.1, a)], 6, 4, ALERT.stroke_width(1)))
                        .d()?;
                    // Above the line, at the right, unless the line is at the top.
                    let v = if a > 75.0 { VPos::Top } else { VPos::Bottom };
                    let style = TextStyle::from((FONT, 12)).color(&ALERT).pos(Pos::new(HPos::Right, v));
                    let label = format!("alert at {} % ", fmt_num(a, 3));
                    chart.draw_series(std::iter::once(Text::new(label, (self.x.1, a), style))).d()?;
                }
                for seg in retry {
                    chart
                        .draw_series(LineSeries::new(thin_line(seg, self.x.0, self.x.1), RETRY.stroke_width(2)))
                        .d()?;
                }
            }
            Strip::Queue(bars) => {
                fill(&mut chart, bars, QUEUE, self.x)?;
            }
        }
        Ok(())
    }
}

/// The area under a line of steps, thinned like a line.
fn fill<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    steps: &Steps,
    col: RGBColor,
    x: (f64, f64),
) -> Result<(), String> {
    for seg in steps {
        let (Some(first), Some(last)) = (seg.first(), seg.last()) else { continue };
        let mut outline = vec![(first.0, 0.0)];
        outline.extend(thin_line(seg, x.0, x.1));
        outline.push((last.0, 0.0));
        chart.draw_series(std::iter::once(Polygon::new(outline, col.filled()))).d()?;
    }
    Ok(())
}

/// The incident bands behind a chart; the main chart names each at its top left.
fn shade<DB: DrawingBackend>(chart: &mut Chart<'_, DB>, p: &Panel, top: f64, named: bool) -> Result<(), String> {
    chart.draw_series(p.bands.iter().map(|&(a, b, k)| Rectangle::new([(a, 0.0), (b, top)], k.color().filled()))).d()?;
    if named {
        let style = TextStyle::from((FONT, 12)).color(&MUTED).pos(Pos::new(HPos::Left, VPos::Top));
        for &(a, b, k) in &p.bands {
            let (left, _) = chart.backend_coord(&(a, 0.0));
            let (right, _) = chart.backend_coord(&(b, 0.0));
            if right - left >= crate::plot::text_width(k.name(), 12) as i32 + 6 {
                chart.draw_series(std::iter::once(Text::new(format!(" {}", k.name()), (a, top), style.clone()))).d()?;
            }
        }
    }
    Ok(())
}
