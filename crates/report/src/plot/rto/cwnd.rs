//! The congestion strip under a panel: the congestion window as steps, the slow-start
//! threshold dashed where a loss has set one, and the spans in fast recovery or in loss
//! recovery (after a timeout) shaded, on a segment axis from 0 shared by every panel.

use super::*;

/// One connection's congestion window over the window shown.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Cwnd {
    /// The window as steps: each value held until the next.
    pub(super) steps: Vec<(f64, f64)>,
    /// The threshold as steps, split where it is unset.
    pub(super) ssthresh: Vec<Vec<(f64, f64)>>,
    /// The spans in `recovery` (RFC 6675 / RFC 6582 fast recovery) and in `loss` (after
    /// an RTO, RFC 5681 section 3.1), as drawn ([`bands::merged`]).
    pub(super) recovery: Vec<(f64, f64)>,
    pub(super) loss: Vec<(f64, f64)>,
}

impl Cwnd {
    pub(super) fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// The largest value the strip's axis must reach.
    pub(super) fn top(&self) -> f64 {
        self.steps.iter().chain(self.ssthresh.iter().flatten()).map(|p| p.1).fold(0.0, f64::max)
    }
}

/// What the trace says of the window at a row: (cwnd, ssthresh, state).
type State<'a> = (u32, Option<u32>, Option<&'a str>);

/// The congestion window of `rows` (one connection, in time order) over `[x0, end]`,
/// `end` being where the connection's lines stop (its finish, its abort, or the window's
/// right edge). Rows without a window (a listener's request) are passed over; a trace
/// without any gives an empty strip.
pub(super) fn congestion(rows: &[&TraceRow], x0: f64, end: f64) -> Cwnd {
    let mut c = Cwnd::default();
    let mut held: Option<(f64, State<'_>)> = None;
    let mut threshold: Vec<(f64, f64)> = Vec::new();
    let (mut recovery, mut loss) = (Vec::new(), Vec::new());
    let mut close = |from: f64, to: f64, (w, ss, state): State<'_>, c: &mut Cwnd| {
        step(&mut c.steps, from, to, w);
        match ss {
            Some(s) => step(&mut threshold, from, to, s),
            None if !threshold.is_empty() => c.ssthresh.push(std::mem::take(&mut threshold)),
            None => {}
        }
        match state {
            Some("recovery") => recovery.push((from, to)),
            Some("loss") => loss.push((from, to)),
            _ => {}
        }
    };
    for r in rows {
        if r.time > end {
            break;
        }
        let Some(w) = r.cwnd else { continue };
        let now: State<'_> = (w, r.ssthresh, r.ca_state.as_deref());
        // Before the window only the state it opens with matters.
        let t = r.time.max(x0);
        match held {
            Some((_, was)) if was == now => {}
            Some((since, was)) => {
                if t > since {
                    close(since, t, was, &mut c);
                }
                held = Some((t, now));
            }
            None => held = Some((t, now)),
        }
    }
    if let Some((since, was)) = held.filter(|h| h.0 < end) {
        close(since, end, was, &mut c);
    }
    if !threshold.is_empty() {
        c.ssthresh.push(threshold);
    }
    c.recovery = bands::merged(recovery, (x0, end));
    c.loss = bands::merged(loss, (x0, end));
    c
}

/// Holds `v` from `from` to `to` on a step line: the last step is stretched where it
/// already holds `v` (a change of state alone moves no line).
fn step(line: &mut Vec<(f64, f64)>, from: f64, to: f64, v: u32) {
    let v = f64::from(v);
    match line.last_mut() {
        Some(last) if *last == (from, v) => last.0 = to,
        _ => line.extend([(from, v), (to, v)]),
    }
}

/// The legend entries of the strip, each only where some panel has it.
pub(super) fn legend(panels: &[Panel], legend: &mut Vec<(Glyph, String)>) {
    let any = |f: &dyn Fn(&Cwnd) -> bool| panels.iter().any(|p| f(&p.cwnd));
    if any(&|c| !c.is_empty()) {
        legend.push((Glyph::Line(CWND, 2), "cwnd (segments)".into()));
    }
    if any(&|c| !c.ssthresh.is_empty()) {
        legend.push((Glyph::Dashed(SSTHRESH), "ssthresh".into()));
    }
    if any(&|c| !c.recovery.is_empty()) {
        legend.push((Glyph::Band(RECOVERY), "fast recovery".into()));
    }
    if any(&|c| !c.loss.is_empty()) {
        legend.push((Glyph::Band(LOSS), "loss recovery (after a timeout)".into()));
    }
}

/// The strip's axis: from 0 to the largest window or threshold of any panel.
pub(super) fn axis(panels: &[Panel]) -> Option<f64> {
    let top = panels.iter().filter(|p| !p.cwnd.is_empty()).map(|p| p.cwnd.top()).reduce(f64::max)?;
    // A little headroom so a flat window is not drawn on the frame.
    Some((top * 1.15).max(2.0))
}

/// Draws the strip of `p` in `area`, carrying the time axis (`axis_h` high) when `axis`.
pub(super) fn draw<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    p: &Panel,
    fig: &RtoFigure,
    last: bool,
    axis_h: u32,
) -> Result<(), String> {
    let (x0, x1) = fig.x;
    let top = fig.cwnd.unwrap_or(2.0);
    let mut chart = crate::plot::aligned(area).x_label_area_size(axis_h).build_cartesian_2d(x0..x1, 0.0..top).d()?;
    chart
        .configure_mesh()
        .bold_line_style(crate::plot::GRID_BOLD)
        .light_line_style(crate::plot::GRID_LIGHT)
        .axis_style(MUTED)
        .y_labels(3)
        .x_labels(12)
        .label_style((FONT, 13).into_font().color(&INK))
        .axis_desc_style((FONT, 14).into_font().color(&INK))
        .x_desc(if last { "time (s)" } else { "" })
        .y_desc("cwnd")
        .x_label_formatter(&tick)
        .y_label_formatter(&|v| format!("{v:.0}"))
        .draw()
        .d()?;
    let c = &p.cwnd;
    for (spans, colour) in [(&c.recovery, RECOVERY), (&c.loss, LOSS)] {
        chart.draw_series(spans.iter().map(|&(a, b)| Rectangle::new([(a, 0.0), (b, top)], colour.filled()))).d()?;
    }
    if let Some(t) = p.aborted.filter(|t| *t >= x0 && *t <= x1) {
        chart.draw_series(std::iter::once(PathElement::new(vec![(t, 0.0), (t, top)], ABORTED.stroke_width(2)))).d()?;
    }
    for s in &c.ssthresh {
        chart.draw_series(DashedLineSeries::new(s.iter().copied(), 6, 4, SSTHRESH.stroke_width(2))).d()?;
    }
    chart.draw_series(LineSeries::new(c.steps.iter().copied(), CWND.stroke_width(2))).d()?;
    Ok(())
}
