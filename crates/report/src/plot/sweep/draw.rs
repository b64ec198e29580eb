//! Drawing the sweep figure: a panel per metric, lines with confidence bands where the
//! swept values are numbers and dots with whiskers where they are categories.

use super::*;

impl SweepFigure {
    fn footer_height(&self) -> u32 {
        if self.footer.is_empty() { 0 } else { FOOTER_HEIGHT }
    }
}

/// `text` cut to `width` pixels of regular type (the footer is not bold).
fn fit_plain(text: &str, size: u32, width: u32) -> String {
    if crate::plot::text_width(text, size) <= width {
        return text.to_string();
    }
    let mut chars: Vec<char> = text.chars().collect();
    while !chars.is_empty() && crate::plot::text_width(&(chars.iter().collect::<String>() + "…"), size) > width {
        chars.pop();
    }
    chars.into_iter().collect::<String>() + "…"
}

impl Figure for SweepFigure {
    fn size(&self) -> (u32, u32) {
        let rows = crate::plot::grid_rows(self.panels.len(), self.cols) as u32;
        let ph = if self.panels.len() == 1 { SINGLE_HEIGHT } else { PANEL_HEIGHT };
        (WIDTH, header_height(WIDTH, &self.subtitle, &self.legend) + rows * ph + 8 + self.footer_height())
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let body = header(root, &self.title, &self.subtitle, &self.legend)?;
        let h = body.dim_in_pixel().1;
        let (body, foot) = body.split_vertically(h - self.footer_height());
        if !self.footer.is_empty() {
            let style = TextStyle::from((FONT, 13)).color(&crate::plot::MUTED);
            foot.draw_text(&fit_plain(&self.footer, 13, WIDTH - 28), &style, (14, 7)).d()?;
        }
        let rows = crate::plot::grid_rows(self.panels.len(), self.cols);
        let areas = body.split_evenly((rows, self.cols));
        for (area, p) in areas.iter().zip(&self.panels) {
            crate::plot::stop()?;
            let (x0, x1) = self.axis.range();
            match (self.axis.log, p.log) {
                (true, true) => draw_panel(area, p, self, crate::plot::log_axis(x0, x1), crate::plot::log_axis(p.y.0, p.y.1))?,
                (true, false) => draw_panel(area, p, self, crate::plot::log_axis(x0, x1), p.y.0..p.y.1)?,
                (false, true) => draw_panel(area, p, self, x0..x1, crate::plot::log_axis(p.y.0, p.y.1))?,
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
        .bold_line_style(crate::plot::GRID_BOLD)
        .light_line_style(crate::plot::GRID_LIGHT)
        .max_light_lines(4)
        .axis_style(crate::plot::MUTED)
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
        chart.draw_series(LineSeries::new([(x, y0), (x, y1)], crate::plot::GRID_BOLD)).d()?;
    }
    let base = area.get_base_pixel();
    let mut right_edge = i32::MIN;
    for (x, label) in axis.xs.iter().zip(&axis.labels) {
        let (px, py) = chart.backend_coord(&(*x, y0));
        let w = crate::plot::text_width(label, 13) as i32;
        if px - w / 2 < right_edge + 6 {
            continue; // would overlap the previous label
        }
        right_edge = px + w / 2;
        area.draw(&PathElement::new(vec![(px - base.0, py - base.1), (px - base.0, py - base.1 + 5)], crate::plot::MUTED))
            .d()?;
        area.draw_text(
            label,
            &TextStyle::from((FONT, 13)).color(&INK).pos(Pos::new(HPos::Center, VPos::Top)),
            (px - base.0, py - base.1 + 8),
        )
        .d()?;
    }
    if axis.numeric {
        draw_lines(&mut chart, p)?;
    } else {
        draw_dots(&mut chart, p)?;
    }
    Ok(())
}

/// Numeric sweep values: a line per series through its means, over its confidence band.
fn draw_lines<DB, CT>(chart: &mut ChartContext<'_, DB, CT>, p: &Panel) -> Result<(), String>
where
    DB: DrawingBackend,
    CT: CoordTranslate<From = (f64, f64)>,
{
    let (y0, y1) = p.y;
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

/// Categorical sweep values: at each category a dot per series, side by side, its
/// confidence interval a whisker; nothing joins the categories.
fn draw_dots<DB, CT>(chart: &mut ChartContext<'_, DB, CT>, p: &Panel) -> Result<(), String>
where
    DB: DrawingBackend,
    CT: CoordTranslate<From = (f64, f64)>,
{
    let (y0, y1) = p.y;
    let n = p.series.len().max(1) as f64;
    let step = (0.7 / n).min(0.16);
    for (i, (ci, style, pts)) in p.series.iter().enumerate() {
        let col = color(*ci);
        let dx = (i as f64 - (n - 1.0) / 2.0) * step;
        for &(x, m, c) in pts {
            let x = x + dx;
            if let Some((lo, hi)) = c {
                let (lo, hi) = (lo.max(y0), hi.min(y1));
                chart.draw_series(LineSeries::new([(x, lo), (x, hi)], col.stroke_width(2))).d()?;
                let cap = step * 0.25;
                for y in [lo, hi] {
                    chart.draw_series(LineSeries::new([(x - cap, y), (x + cap, y)], col.stroke_width(2))).d()?;
                }
            }
            if style % 2 == 0 {
                chart.draw_series(std::iter::once(Circle::new((x, m), 5, col.filled()))).d()?;
            } else {
                chart.draw_series(std::iter::once(TriangleMarker::new((x, m), 6, col.filled()))).d()?;
            }
        }
    }
    Ok(())
}
