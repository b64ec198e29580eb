//! `rto`: a traced connection's RTT samples (points), SRTT and RTO (lines) over time,
//! timer expiries (and timeouts F-RTO undid) marked on the RTO line, retransmissions and
//! tail loss probes along the bottom, an abort as a vertical line, blackouts and changed
//! path RTTs shaded. One panel per variant and sweep cell (or per connection
//! when one is chosen), on shared axes so the panels compare at a glance.
//!
//! The y axis covers the lines and the bulk of the samples (their 1st to 99th
//! percentile): one odd sample must not squash the rest into a corner. Samples beyond it
//! are drawn at its edge as open circles.

use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;
use plotters::style::FontStyle;
use plotters::style::text_anchor;

use super::{
    Drawn, FONT, Figure, Glyph, INK, LOG_Y_LABELS, MUTED, PlotOptions, WIDTH, axis_range, bands, fit, fmt_secs, header,
    log_tick, mesh, mesh_with, panel_heights, series, spans_decades, stack_heights, stacked_size, text_width,
    thin_line, thin_marks, thin_points, tick,
};
use std::collections::{BTreeMap, BTreeSet};

use super::style::Y_LABELS;
use super::style::rto::*;
use crate::report::ReportError;
use crate::report::data::{RunSet, TraceRow};

/// RTT samples, SRTT and RTO over time, with timeouts and retransmissions marked.
pub struct Rto;

impl super::Plot for Rto {
    const NAME: &'static str = "rto";
    const ABOUT: &'static str = "RTT samples, SRTT and RTO over time, with timeouts and retransmissions marked";
    type Figure = RtoFigure;

    fn missing(data: &RunSet) -> Option<String> {
        data.trace.is_empty().then(|| "no RTO trace: trace.csv is missing or has no rows".into())
    }

    fn figure(data: &RunSet, opts: &PlotOptions) -> Result<RtoFigure, ReportError> {
        figure(data, opts)
    }

    fn caption(data: &RunSet) -> Result<(String, String), crate::interrupt::Interrupted> {
        Ok(("RTO trace".into(), caption(data)?))
    }

    fn redraw(r: &super::Redraw<'_>) -> String {
        format!(
            "backoffsim plot rto {} --variant {}{} --from {}s --to {}s -o zoom.svg",
            r.dir, r.variant, r.cell, r.from, r.to
        )
    }
}


/// Most panels one figure shows; more connections are left out and the subtitle says so.
const MAX_PANELS: usize = 12;

pub(crate) struct RtoFigure {
    title: String,
    subtitle: String,
    legend: Vec<(Glyph, String)>,
    panels: Vec<Panel>,
    x: (f64, f64),
    y: (f64, f64),
    log: bool,
    /// The rows of the strip under each panel, top down: whether any panel has
    /// retransmissions, and whether any has tail loss probes.
    rug: Rug,
}

#[derive(Clone, Copy, Default, Debug, PartialEq)]
struct Rug {
    retransmits: bool,
    probes: bool,
}

impl Rug {
    fn rows(self) -> u32 {
        u32::from(self.retransmits) + u32::from(self.probes)
    }
}

#[derive(Default)]
struct Panel {
    caption: String,
    samples: Vec<(f64, f64)>,
    /// Samples beyond the y axis, at its edge.
    clipped: Vec<(f64, f64)>,
    /// SRTT as steps, split where the estimate is cleared.
    srtt: Vec<Vec<(f64, f64)>>,
    rto: Vec<(f64, f64)>,
    /// Where the timer fired, at the RTO it fired with.
    timeouts: Vec<(f64, f64)>,
    retransmits: Vec<f64>,
    /// Tail loss probes sent.
    probes: Vec<f64>,
    /// Where F-RTO found the last timeout spurious and undid it, at the RTO then.
    undone: Vec<(f64, f64)>,
    /// When the connection gave up retransmitting (it may be before the window).
    aborted: Option<f64>,
    /// Blackouts as drawn ([`bands::merged`]), and where a label names one.
    blackouts: Vec<(f64, f64)>,
    blackout_labels: Vec<f64>,
    /// The path's base RTT as steps, and the spans where it differs from the start,
    /// with the RTT there.
    path: Vec<(f64, f64)>,
    changed: Vec<(f64, f64, f64)>,
    /// The changed spans as drawn, and the labels that have room: (start, RTT).
    changed_bands: Vec<(f64, f64)>,
    changed_labels: Vec<(f64, f64)>,
}

/// What names a blackout band, and a changed path RTT band.
const BLACKOUT_LABEL: &str = "blackout";

fn rtt_label(rtt: f64) -> String {
    format!("RTT {}", fmt_secs(rtt))
}

pub(crate) fn figure(data: &RunSet, opts: &PlotOptions) -> Result<RtoFigure, ReportError> {
    // The rows of each (variant, cell), gathered in one pass: a sweep of thousands of
    // cells must not search the whole trace for each.
    let mut row_variants: Vec<&str> = Vec::new();
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    let mut by_series: BTreeMap<(&str, &[String]), Vec<&TraceRow>> = BTreeMap::new();
    for r in &data.trace {
        crate::interrupt::check()?;
        if seen.insert(&r.variant) {
            row_variants.push(&r.variant);
        }
        by_series.entry((r.variant.as_str(), r.point.as_slice())).or_default().push(r);
    }
    let all = series(data, opts, &row_variants, &|v, p| by_series.contains_key(&(v, p)))?;
    if all.is_empty() {
        return Err(ReportError::Missing(format!("trace.csv has no rows for variant {}", opts.variants.join(", "))));
    }

    // (series, replication, client) of each panel.
    let mut chosen: Vec<(&super::Series, u32, u32)> = Vec::new();
    let mut total = 0;
    for s in &all {
        crate::interrupt::check()?;
        let rows = by_series.get(&(s.variant.as_str(), s.point.as_slice())).into_iter().flatten().copied();
        let reps: std::collections::BTreeSet<u32> = rows.clone().map(|r| r.replication).collect();
        let rep = match opts.replication {
            Some(r) if reps.contains(&r) => r,
            Some(r) => {
                return Err(ReportError::Missing(format!(
                    "replication {r} of `{}` is not traced (traced: {})",
                    s.label,
                    list(&reps)
                )));
            }
            None => *reps.iter().next().expect("the series has rows"),
        };
        let clients: std::collections::BTreeSet<u32> =
            rows.filter(|r| r.replication == rep).map(|r| r.client).collect();
        let picked: Vec<u32> = match opts.client {
            Some(c) if clients.contains(&c) => vec![c],
            Some(c) => {
                return Err(ReportError::Missing(format!(
                    "connection {c} of `{}` (replication {rep}) is not traced (traced: {}); \
                     choose traced connections with [trace] clients in the scenario",
                    s.label,
                    list(&clients)
                )));
            }
            None if all.len() == 1 => clients.iter().copied().collect(),
            None => vec![*clients.iter().next().expect("the replication has rows")],
        };
        total += picked.len();
        chosen.extend(picked.into_iter().map(|c| (s, rep, c)));
    }
    chosen.truncate(MAX_PANELS);

    let horizon = data.horizon_s().unwrap_or_else(|| data.trace.iter().map(|r| r.time).fold(0.0, f64::max).max(1.0));
    let x0 = opts.from.unwrap_or(0.0);
    let x1 = opts.to.unwrap_or(horizon.max(x0 + 1e-3));

    let several_clients = chosen.iter().any(|c| c.2 != chosen[0].2);
    let mut panels: Vec<Panel> = chosen
        .iter()
        .map(|(s, rep, client)| {
            crate::interrupt::check()?;
            let name = &s.variant;
            let rows: Vec<&TraceRow> = (by_series.get(&(name.as_str(), s.point.as_slice())).into_iter().flatten())
                .copied()
                .filter(|r| r.replication == *rep && r.client == *client)
                .collect();
            let mut p = panel(&rows, x0, x1);
            let facts = data.facts(name, &s.point);
            p.blackouts = bands::merged(facts.blackouts.iter().copied(), (x0, x1));
            // A band drawn, not each blackout in it, gets a label: blackouts merged into
            // one band would otherwise label it over and over.
            let width = text_width(BLACKOUT_LABEL, 12);
            let labelled = bands::labelled(&p.blackouts, |b| b.0, |_| width, (x0, x1));
            p.blackout_labels = p.blackouts.iter().zip(labelled).filter_map(|(b, l)| l.then_some(b.0)).collect();
            if let Some(base) = facts.base_rtt {
                path_rtt(&mut p, base, &facts.rtt_changes, x0, x1);
            }
            p.changed_labels = bands::labelled(&p.changed, |c| c.0, |c| text_width(&rtt_label(c.2), 12), (x0, x1))
                .into_iter()
                .zip(&p.changed)
                .filter_map(|(l, c)| l.then_some((c.0, c.2)))
                .collect();
            let changed: Vec<(f64, f64)> = p.changed.iter().map(|c| (c.0, c.1)).collect();
            p.changed_bands = bands::merged(changed, (x0, x1));
            let who = if several_clients { format!("{} · connection {client}", s.label) } else { s.label.clone() };
            let desc = data.variant(name).map(|v| v.description.as_str()).unwrap_or("");
            let counts = counts(&p);
            // The counts before the description, which is what gets cut if it is long.
            p.caption = if desc.is_empty() { format!("{who} ({counts})") } else { format!("{who} ({counts}): {desc}") };
            Ok(p)
        })
        .collect::<Result<_, ReportError>>()?;

    let (lo, hi) = y_extent(&panels);
    let log = spans_decades(lo, hi);
    let y = axis_range(lo, hi, log);
    let mut clipped = 0;
    for p in &mut panels {
        let (inside, outside): (Vec<_>, Vec<_>) = p.samples.iter().partition(|s| s.1 >= y.0 && s.1 <= y.1);
        clipped += outside.len();
        p.clipped = outside.into_iter().map(|(t, v)| (t, v.clamp(y.0, y.1))).collect();
        p.samples = thin_points(&inside, (x0, x1), y, log);
        p.rto = thin_line(&p.rto, x0, x1);
        p.path = thin_line(&p.path, x0, x1);
        // Marks by the hundred thousand (a timeout per blackout) cover one another.
        p.timeouts = thin_points(&p.timeouts, (x0, x1), y, log);
        p.undone = thin_points(&p.undone, (x0, x1), y, log);
        p.retransmits = thin_marks(&p.retransmits, x0, x1);
        p.probes = thin_marks(&p.probes, x0, x1);
        for s in &mut p.srtt {
            *s = thin_line(s, x0, x1);
        }
    }

    let any = |f: &dyn Fn(&Panel) -> bool| panels.iter().any(f);
    let mut legend = vec![
        (Glyph::Dot(SAMPLE), "RTT sample".to_string()),
        (Glyph::Line(SRTT, 2), "SRTT".to_string()),
        (Glyph::Line(RTO, 2), "RTO (the timer's value)".to_string()),
    ];
    if any(&|p| !p.clipped.is_empty()) {
        legend.push((Glyph::Ring(SAMPLE), "RTT sample off the scale (drawn at its edge)".into()));
    }
    if any(&|p| !p.timeouts.is_empty()) {
        legend.push((Glyph::Cross(TIMEOUT), "timer expired".into()));
    }
    if any(&|p| !p.undone.is_empty()) {
        legend.push((Glyph::Ring(UNDONE), "timeout undone (F-RTO: spurious)".into()));
    }
    if any(&|p| !p.retransmits.is_empty()) {
        legend.push((Glyph::Triangle(RETRANSMIT), "retransmission".into()));
    }
    if any(&|p| !p.probes.is_empty()) {
        legend.push((Glyph::Dot(PROBE), "tail loss probe".into()));
    }
    if any(&|p| p.aborted.is_some_and(|t| t >= x0 && t <= x1)) {
        legend.push((Glyph::Line(ABORTED, 2), "connection aborted (gave up)".into()));
    }
    if any(&|p| !p.path.is_empty()) {
        legend.push((Glyph::Dashed(PATH), "path base RTT".into()));
    }
    if any(&|p| !p.blackouts.is_empty()) {
        legend.push((Glyph::Band(BLACKOUT), "blackout (all packets lost)".into()));
    }
    if any(&|p| !p.changed.is_empty()) {
        legend.push((Glyph::Band(CHANGED), "path RTT changed".into()));
    }

    let scenario = data.runs.iter().map(|r| r.scenario.as_str()).collect::<Vec<_>>().join(" vs ");
    let mut subtitle = String::new();
    if !scenario.is_empty() {
        subtitle.push_str(&scenario);
        subtitle.push_str(" · ");
    }
    let reps: std::collections::BTreeSet<u32> = chosen.iter().map(|c| c.1).collect();
    let clients: std::collections::BTreeSet<u32> = chosen.iter().map(|c| c.2).collect();
    if clients.len() == 1 {
        subtitle.push_str(&format!("connection {} · ", list(&clients)));
    }
    subtitle.push_str(&format!("replication {}", list(&reps)));
    if log {
        subtitle.push_str(" · log scale: the RTO spans decades");
    }
    if clipped > 0 {
        subtitle.push_str(&format!(" · {} off the scale", plural(clipped, "sample")));
    }
    if total > chosen.len() {
        subtitle
            .push_str(&format!(" · {} of {total} panels shown (others: --client, --cell, --variant)", chosen.len()));
    }
    let rug = Rug { retransmits: any(&|p| !p.retransmits.is_empty()), probes: any(&|p| !p.probes.is_empty()) };
    Ok(RtoFigure {
        title: "Retransmission timer: RTT samples, SRTT and RTO over time".into(),
        subtitle,
        legend,
        panels,
        x: (x0, x1),
        y,
        log,
        rug,
    })
}

/// The y range that shows every line and the bulk of the samples: lines in full, samples
/// from their 1st to their 99th percentile (all of them when there are few).
fn y_extent(panels: &[Panel]) -> (f64, f64) {
    let lines = panels.iter().flat_map(|p| p.srtt.iter().flatten().chain(&p.rto).chain(&p.path).map(|q| q.1));
    let (mut lo, mut hi) = lines.filter(|v| *v > 0.0).fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(v), b.max(v)));
    let mut samples: Vec<f64> =
        panels.iter().flat_map(|p| p.samples.iter().map(|s| s.1)).filter(|v| *v > 0.0).collect();
    samples.sort_by(f64::total_cmp);
    if !samples.is_empty() {
        let n = samples.len();
        let (a, b) = if n < 100 { (0, n - 1) } else { (n / 100, n - 1 - n / 100) };
        lo = lo.min(samples[a]);
        hi = hi.max(samples[b]);
    }
    if lo > hi { (0.1, 1.0) } else { (lo, hi) }
}

/// What a panel's caption counts: timeouts and retransmissions always, undone timeouts,
/// probes and the abort when there are any.
fn counts(p: &Panel) -> String {
    let mut c = vec![plural(p.timeouts.len(), "timeout")];
    if !p.undone.is_empty() {
        c.push(format!("{} undone", p.undone.len()));
    }
    c.push(plural(p.retransmits.len(), "retransmission"));
    if !p.probes.is_empty() {
        c.push(plural(p.probes.len(), "probe"));
    }
    if let Some(t) = p.aborted {
        // In the axis's unit, so it reads off the plot.
        c.push(format!("aborted at {} s", tick(&t)));
    }
    c.join(", ")
}

fn plural(n: usize, what: &str) -> String {
    if n == 1 { format!("1 {what}") } else { format!("{n} {what}s") }
}

fn list(set: &std::collections::BTreeSet<u32>) -> String {
    set.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(", ")
}

/// The series of one connection within `[x0, x1]`.
fn panel(rows: &[&TraceRow], x0: f64, x1: f64) -> Panel {
    let mut p = Panel::default();
    let mut rto: Option<f64> = None;
    let mut srtt: Option<f64> = None;
    let mut seg: Vec<(f64, f64)> = Vec::new();
    let mut finished = None;
    let mut started = false;
    for r in rows {
        let t = r.time;
        if t > x1 {
            break;
        }
        if t < x0 {
            // Before the window: only the state it opens with matters.
            rto = r.rto.or(rto);
            srtt = r.srtt;
            match r.event.as_str() {
                "finished" => finished = Some(t),
                "aborted" => {
                    finished = Some(t);
                    p.aborted = Some(t);
                }
                _ => {}
            }
            continue;
        }
        if !started {
            started = true;
            open(&mut p, &mut seg, rto, srtt, x0);
        }
        match r.event.as_str() {
            "sample" => {
                if let Some(s) = r.sample {
                    p.samples.push((t, s));
                }
            }
            "timeout" => {
                if let Some(before) = rto {
                    p.timeouts.push((t, before));
                }
            }
            "retransmit" => p.retransmits.push(t),
            "probe" => p.probes.push(t),
            "spurious_timeout" => {
                // At the RTO in force once the timeout is undone.
                if let Some(v) = r.rto.or(rto) {
                    p.undone.push((t, v));
                }
            }
            "finished" => finished = Some(t),
            // Like finished: no RTO is in force after it.
            "aborted" => {
                finished = Some(t);
                p.aborted = Some(t);
            }
            _ => {}
        }
        if let Some(new) = r.rto.filter(|new| rto != Some(*new)) {
            if let Some(old) = rto {
                p.rto.push((t, old));
            }
            p.rto.push((t, new));
            rto = Some(new);
        }
        match (srtt, r.srtt) {
            (Some(old), Some(new)) if old != new => {
                seg.push((t, old));
                seg.push((t, new));
            }
            (None, Some(new)) => seg.push((t, new)),
            (Some(old), None) => {
                // The estimate was cleared: end this piece of the line.
                seg.push((t, old));
                p.srtt.push(std::mem::take(&mut seg));
            }
            _ => {}
        }
        srtt = r.srtt;
    }
    if !started {
        open(&mut p, &mut seg, rto, srtt, x0);
    }
    let end = finished.unwrap_or(x1).clamp(x0, x1);
    if let Some(v) = rto {
        p.rto.push((end, v));
    }
    if let Some(v) = srtt {
        seg.push((end, v));
    }
    if !seg.is_empty() {
        p.srtt.push(seg);
    }
    p
}

/// Starts the lines at the window's left edge with the state carried into it.
fn open(p: &mut Panel, seg: &mut Vec<(f64, f64)>, rto: Option<f64>, srtt: Option<f64>, x0: f64) {
    if let Some(v) = rto {
        p.rto.push((x0, v));
    }
    if let Some(v) = srtt {
        seg.push((x0, v));
    }
}

/// The path's base RTT over `[x0, x1]` as steps, and the spans where it is changed.
fn path_rtt(p: &mut Panel, base: f64, changes: &[(f64, f64)], x0: f64, x1: f64) {
    let mut t = x0;
    let mut rtt = base;
    for &(at, new) in changes {
        if at <= x0 {
            rtt = new;
            continue;
        }
        if at >= x1 {
            break;
        }
        p.path.push((t, rtt));
        p.path.push((at, rtt));
        if rtt != base {
            p.changed.push((t, at, rtt));
        }
        t = at;
        rtt = new;
    }
    p.path.push((t, rtt));
    p.path.push((x1, rtt));
    if rtt != base {
        p.changed.push((t, x1, rtt));
    }
}

impl Figure for RtoFigure {
    fn size(&self) -> (u32, u32) {
        stacked_size(&self.subtitle, &self.legend, self.panels.len(), PANEL_HEIGHT, BOTTOM_EXTRA)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let body = header(root, &self.title, &self.subtitle, &self.legend)?;
        let n = self.panels.len();
        let heights = panel_heights(n, PANEL_HEIGHT, BOTTOM_EXTRA);
        for (i, (area, p)) in stack_heights(&body, &heights).iter().zip(&self.panels).enumerate() {
            super::stop()?;
            let last = i + 1 == n;
            let (y0, y1) = self.y;
            if self.log {
                draw_panel(area, p, self, last, (y0..y1).log_scale())?;
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
    // their marks never sit on top of an RTT sample or each other; the strip carries the
    // time axis.
    let axis_h = if last { 44 } else { 24 };
    let rug = fig.rug.rows() > 0;
    let strip_h = if rug { STRIP * fig.rug.rows() + axis_h } else { 0 };
    let (top, strip) = area.split_vertically(area.dim_in_pixel().1 - strip_h);
    let caption_style = TextStyle::from((FONT, 15, FontStyle::Bold).into_font()).color(&INK);
    let mut chart = ChartBuilder::on(&top)
        .margin_left(8)
        .margin_right(24)
        .margin_top(6)
        .caption(fit(&p.caption, 15, WIDTH - 40), caption_style)
        .x_label_area_size(if rug { 0 } else { axis_h })
        .y_label_area_size(Y_LABELS)
        .build_cartesian_2d(x0..x1, y_spec)
        .d()?;
    let x_desc = if last && !rug { "time (s)" } else { "" };
    if fig.log {
        mesh_with(&mut chart, x_desc, "RTT, SRTT, RTO (s)", &tick, &log_tick, LOG_Y_LABELS)?;
    } else {
        mesh(&mut chart, x_desc, "RTT, SRTT, RTO (s)", &tick, &tick)?;
    }
    if rug {
        draw_rug(&strip, p, fig, last, axis_h)?;
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
    chart.draw_series(p.undone.iter().map(|&(x, y)| Circle::new((x, y), 5, UNDONE.stroke_width(2)))).d()?;
    if let Some(t) = p.aborted.filter(|t| *t >= x0 && *t <= x1) {
        chart.draw_series(std::iter::once(PathElement::new(vec![(t, y0), (t, y1)], ABORTED.stroke_width(2)))).d()?;
        // Labelled halfway up (blackout labels take the top, the SRTT often the bottom),
        // on a white ground, after the line where nothing else happens, unless that is
        // off the right edge.
        let mid = if fig.log { (y0 * y1).sqrt() } else { (y0 + y1) / 2.0 };
        let w = text_width("aborted", 12) as i32 + 6;
        let dx = if t < x0 + 0.85 * (x1 - x0) { 4 } else { -4 - w };
        let style = TextStyle::from((FONT, 12, FontStyle::Bold).into_font())
            .color(&ABORTED)
            .pos(text_anchor::Pos::new(text_anchor::HPos::Left, text_anchor::VPos::Center));
        chart
            .draw_series(std::iter::once(
                EmptyElement::at((t, mid))
                    + Rectangle::new([(dx, -9), (dx + w, 9)], WHITE.filled())
                    + Text::new("aborted", (dx + 3, 0), style),
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
    let mut rug = ChartBuilder::on(&strip)
        .margin_left(8)
        .margin_right(24)
        .x_label_area_size(axis_h)
        .y_label_area_size(Y_LABELS)
        .build_cartesian_2d(x0..x1, 0.0..f64::from(fig.rug.rows()))
        .d()?;
    rug.configure_mesh()
        .disable_y_mesh()
        .bold_line_style(super::GRID_BOLD)
        .light_line_style(super::GRID_LIGHT)
        .axis_style(MUTED)
        .y_labels(0)
        .x_labels(12)
        .label_style((FONT, 13).into_font().color(&INK))
        .axis_desc_style((FONT, 14).into_font().color(&INK))
        .x_desc(if last { "time (s)" } else { "" })
        .x_label_formatter(&tick)
        .draw()
        .d()?;
    // The rows any panel needs, top down, each with this panel's marks (triangles or dots).
    let mut rows: Vec<(&str, RGBColor, &[f64], bool)> = Vec::new();
    if fig.rug.retransmits {
        rows.push(("retransmitted", RETRANSMIT, &p.retransmits, true));
    }
    if fig.rug.probes {
        rows.push(("probe (TLP)", PROBE, &p.probes, false));
    }
    for (i, &(name, colour, _, _)) in rows.iter().enumerate() {
        let label = TextStyle::from((FONT, 11))
            .color(&colour)
            .pos(text_anchor::Pos::new(text_anchor::HPos::Right, text_anchor::VPos::Center));
        strip.draw_text(name, &label, (8 + Y_LABELS as i32 - 6, (STRIP * i as u32 + STRIP / 2) as i32)).d()?;
    }
    let top = f64::from(fig.rug.rows());
    for &(a, b) in &p.blackouts {
        rug.draw_series(std::iter::once(Rectangle::new([(a, 0.0), (b, top)], BLACKOUT.filled()))).d()?;
    }
    if let Some(t) = p.aborted.filter(|t| *t >= x0 && *t <= x1) {
        rug.draw_series(std::iter::once(PathElement::new(vec![(t, 0.0), (t, top)], ABORTED.stroke_width(2)))).d()?;
    }
    for (i, &(_, colour, marks, triangles)) in rows.iter().enumerate() {
        // Row i from the top is centred at top - i - 0.5 on the strip's y axis.
        let y = top - i as f64 - 0.5;
        if triangles {
            rug.draw_series(marks.iter().map(|&x| TriangleMarker::new((x, y), 4, colour.filled()))).d()?;
        } else {
            rug.draw_series(marks.iter().map(|&x| Circle::new((x, y), 4, colour.filled()))).d()?;
        }
    }
    Ok(())
}

/// What the RTO plot shows, naming only the marks that appear in it.
fn caption(data: &RunSet) -> Result<String, crate::interrupt::Interrupted> {
    let mut s = String::from(if data.sweep_keys.is_empty() {
        "One traced connection per variant, on shared axes. Grey dots are RTT samples, the \
         blue line is SRTT and the orange line the RTO (the timer's value)"
    } else {
        "One traced connection per variant and sweep cell, on shared axes. Grey dots are RTT \
         samples, the blue line is SRTT and the orange line the RTO (the timer's value)"
    });
    // The kinds of event in the trace, in one pass over its (maybe millions of) rows.
    let mut events: BTreeSet<&str> = BTreeSet::new();
    for r in &data.trace {
        crate::interrupt::check()?;
        events.insert(&r.event);
    }
    let has = |e: &str| events.contains(e);
    if has("timeout") {
        s.push_str("; a red × marks a timer expiry, at the RTO it fired with");
    }
    if has("spurious_timeout") {
        s.push_str(
            "; a black ring on the RTO line marks where F-RTO found the last timeout spurious \
             and undid it",
        );
    }
    match (has("retransmit"), has("probe")) {
        (true, false) => s.push_str("; purple triangles in the strip under each panel mark retransmissions"),
        (false, true) => s.push_str("; sky-blue dots in the strip under each panel mark tail loss probes"),
        (true, true) => s.push_str(
            "; in the strip under each panel, purple triangles mark retransmissions and sky-blue \
             dots (a row of their own) tail loss probes",
        ),
        (false, false) => {}
    }
    if has("aborted") {
        s.push_str(
            "; a black vertical line marks where the connection gave up retransmitting \
             (aborted), after which nothing happens on it",
        );
    }
    s.push('.');
    if data.variants.iter().any(|v| !v.blackouts.is_empty()) {
        s.push_str(" Grey bands are blackouts.");
    }
    if data.variants.iter().any(|v| !v.rtt_changes.is_empty()) {
        s.push_str(
            " Green bands mark where the path's RTT differs from its base (the dashed green \
             line is the path's RTT).",
        );
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_odd_sample_does_not_stretch_the_y_axis_but_lines_always_fit() {
        let mut samples: Vec<(f64, f64)> = (0..500).map(|i| (i as f64 * 0.1, 0.1 + (i % 5) as f64 * 0.01)).collect();
        samples.push((10.0, 0.001));
        let p = Panel { samples, rto: vec![(0.0, 1.0), (60.0, 1.0)], ..Panel::default() };
        let (lo, hi) = y_extent(std::slice::from_ref(&p));
        assert_eq!((lo, hi), (0.1, 1.0));
        // A line is drawn in full, however far it goes.
        let p = Panel { rto: vec![(0.0, 0.002), (60.0, 1.0)], ..p };
        assert_eq!(y_extent(std::slice::from_ref(&p)).0, 0.002);
    }

    fn row(time: f64, event: &str, rto: f64) -> TraceRow {
        TraceRow {
            time,
            client: 0,
            variant: "linux".into(),
            point: Vec::new(),
            replication: 0,
            event: event.into(),
            sample: (event == "sample").then_some(0.1),
            srtt: Some(0.1),
            rto: Some(rto),
        }
    }

    /// A connection that probes, times out (backing off to 0.6 s), has the timeout
    /// undone by F-RTO (back to 0.3 s), probes again and gives up at 3 s.
    fn probing_then_aborting() -> Vec<TraceRow> {
        vec![
            row(0.0, "send", 0.3),
            row(0.2, "probe", 0.3),
            row(0.5, "timeout", 0.6),
            row(0.5, "retransmit", 0.6),
            row(0.6, "sample", 0.3),
            row(0.6, "spurious_timeout", 0.3),
            row(1.0, "probe", 0.3),
            row(3.0, "aborted", 0.3),
        ]
    }

    #[test]
    fn probes_undone_timeouts_and_the_abort_are_collected_and_the_rto_line_ends_at_the_abort() {
        let rows = probing_then_aborting();
        let p = panel(&rows.iter().collect::<Vec<_>>(), 0.0, 10.0);
        assert_eq!(p.probes, vec![0.2, 1.0]);
        assert_eq!(p.timeouts, vec![(0.5, 0.3)]);
        assert_eq!(p.retransmits, vec![0.5]);
        // At the RTO in force once undone, where the line is.
        assert_eq!(p.undone, vec![(0.6, 0.3)]);
        assert_eq!(p.aborted, Some(3.0));
        // Like a finished transfer: no RTO, no SRTT after the abort.
        assert_eq!(p.rto.last(), Some(&(3.0, 0.3)));
        assert_eq!(p.srtt.last().and_then(|s| s.last()), Some(&(3.0, 0.1)));
        assert_eq!(counts(&p), "1 timeout, 1 undone, 1 retransmission, 2 probes, aborted at 3 s");

        // A window after the abort: nothing to mark in it, but the caption still says
        // why the panel is empty, and no line runs on past the abort.
        let p = panel(&rows.iter().collect::<Vec<_>>(), 5.0, 10.0);
        assert!(p.probes.is_empty() && p.undone.is_empty() && p.timeouts.is_empty());
        assert_eq!(p.aborted, Some(3.0));
        assert!(p.rto.iter().all(|q| q.0 == 5.0));
        assert_eq!(counts(&p), "0 timeouts, 0 retransmissions, aborted at 3 s");

        // A window that ends before the abort has none.
        let p = panel(&rows.iter().collect::<Vec<_>>(), 0.0, 2.0);
        assert_eq!(p.aborted, None);
        assert_eq!(p.rto.last(), Some(&(2.0, 0.3)));
    }

    #[test]
    fn caption_counts_name_probes_undone_timeouts_and_an_abort_only_when_there_are_any() {
        let p = Panel { timeouts: vec![(1.0, 1.0); 3], retransmits: vec![1.0; 5], ..Panel::default() };
        let plain = counts(&p);
        assert_eq!(plain, "3 timeouts, 5 retransmissions");
        for word in ["undone", "probe", "aborted"] {
            assert!(!plain.contains(word), "{plain}");
        }
        let p = Panel { probes: vec![2.0], undone: vec![(3.0, 0.3); 2], aborted: Some(1004.108), ..p };
        assert_eq!(counts(&p), "3 timeouts, 2 undone, 5 retransmissions, 1 probe, aborted at 1004 s");
    }

    #[test]
    fn the_strip_gets_a_row_for_probes_only_when_some_panel_has_them() {
        assert_eq!(Rug::default().rows(), 0);
        assert_eq!(Rug { retransmits: true, probes: false }.rows(), 1);
        assert_eq!(Rug { retransmits: true, probes: true }.rows(), 2);
    }
}
