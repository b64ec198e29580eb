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

mod caption;
mod capture;
mod cwnd;
mod draw;
mod timers;

pub use capture::CaptureTrace;
use timers::{Ending, Row};

use super::{
    Drawn, FONT, Figure, Glyph, INK, LOG_Y_LABELS, MUTED, PlotOptions, axis_range, bands, fmt_secs, header,
    log_tick, mesh, mesh_with, panel_heights, series, spans_decades, stack_heights, stacked_size, text_width,
    thin_line, thin_marks, thin_points, tick,
};
use std::collections::{BTreeMap, BTreeSet};

use super::style::Y_LABELS;
use super::style::rto::*;
use crate::ReportError;
use crate::data::{RunSet, TraceRow};
use backoffsim_core::metrics::trace::TraceEvent;

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

    fn caption(data: &RunSet) -> Result<(String, String), backoffsim_core::run::interrupt::Interrupted> {
        Ok(("RTO trace".into(), caption::caption(data)?))
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
    /// The rows of the strip under each panel, top down: those some panel has marks in.
    rug: Vec<Row>,
    /// The top of the congestion strips' axis, `None` when no panel has a window (a
    /// trace written before the trace carried one).
    cwnd: Option<f64>,
}

impl RtoFigure {
    /// Each panel's height: a congestion strip is added under a panel with a window (not
    /// a listener's request, nor a trace from before the columns), not carved out of it.
    fn heights(&self) -> Vec<u32> {
        let n = self.panels.len();
        let base = panel_heights(n, PANEL_HEIGHT, BOTTOM_EXTRA);
        base.into_iter().zip(&self.panels).map(|(h, p)| h + if p.cwnd.is_empty() { 0 } else { CWND_STRIP }).collect()
    }
}

/// The strip rows the panels need, in their fixed order.
fn rug_rows(panels: &[Panel]) -> Vec<Row> {
    Row::ALL.into_iter().filter(|r| panels.iter().any(|p| r.in_panel(p))).collect()
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
    /// A captured connection's timer-driven retransmissions, at the time the sender
    /// waited before each.
    waited: Vec<(f64, f64)>,
    /// The kernel's own RTO at each poll beside a capture (`ss -ti`).
    kernel: Vec<(f64, f64)>,
    /// Where F-RTO found the last timeout spurious and undid it, at the RTO then.
    undone: Vec<(f64, f64)>,
    /// When the connection was aborted (it may be before the window), and why.
    aborted: Option<f64>,
    ending: Ending,
    /// Zero-window probes, at the time since the previous probe (or since the window
    /// closed): the persist timer's backed-off interval.
    window_probes: Vec<(f64, f64)>,
    /// The spans while the receiver's window is zero, within the window shown.
    zero_windows: Vec<(f64, f64)>,
    keepalives: Vec<f64>,
    /// A listener's first SYN-ACK, and the ones its timer sent again.
    synacks: Vec<f64>,
    synack_resends: Vec<f64>,
    icmp: Vec<f64>,
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
    cwnd: cwnd::Cwnd,
}

/// What names a blackout band, and a changed path RTT band.
const BLACKOUT_LABEL: &str = "blackout";

fn rtt_label(rtt: f64) -> String {
    format!("RTT {}", fmt_secs(rtt))
}

pub(crate) fn figure(data: &RunSet, opts: &PlotOptions) -> Result<RtoFigure, ReportError> {
    let (row_variants, by_series) = rows_by_series(data)?;
    let all = series(data, opts, &row_variants, &|v, p| by_series.contains_key(&(v, p)))?;
    if all.is_empty() {
        return Err(ReportError::Missing(format!("trace.csv has no rows for variant {}", opts.variants.join(", "))));
    }
    let (mut chosen, total) = choose(&all, &by_series, opts)?;
    chosen.truncate(MAX_PANELS);

    let horizon = data.horizon_s().unwrap_or_else(|| data.trace.iter().map(|r| r.time).fold(0.0, f64::max).max(1.0));
    let x0 = opts.from.unwrap_or(0.0);
    let x1 = opts.to.unwrap_or(horizon.max(x0 + 1e-3));

    let several_clients = chosen.iter().any(|c| c.2 != chosen[0].2);
    let mut panels: Vec<Panel> = chosen
        .iter()
        .map(|&(s, rep, client)| {
            backoffsim_core::run::interrupt::check()?;
            let rows: Vec<&TraceRow> = (by_series.get(&(s.variant.as_str(), s.point.as_slice())).into_iter().flatten())
                .copied()
                .filter(|r| r.replication == rep && r.client == client)
                .collect();
            let who = if several_clients { format!("{} · connection {client}", s.label) } else { s.label.clone() };
            Ok(framed_panel(data, s, &rows, &who, (x0, x1)))
        })
        .collect::<Result<_, ReportError>>()?;

    let (lo, hi) = y_extent(&panels);
    let log = spans_decades(lo, hi);
    let y = axis_range(lo, hi, log);
    let clipped = fit_to_axes(&mut panels, (x0, x1), y, log);
    let legend = legend(&panels, (x0, x1));
    let subtitle = subtitle(data, &chosen, total, log, clipped);
    let rug = rug_rows(&panels);
    let cwnd = cwnd::axis(&panels);
    Ok(RtoFigure {
        title: "Retransmission timer: RTT samples, SRTT and RTO over time".into(),
        subtitle,
        legend,
        panels,
        x: (x0, x1),
        y,
        log,
        rug,
        cwnd,
    })
}

/// The trace rows of each (variant, cell), and the variants in the order the rows name
/// them.
type BySeries<'a> = BTreeMap<(&'a str, &'a [String]), Vec<&'a TraceRow>>;

/// The rows of each (variant, cell), gathered in one pass: a sweep of thousands of cells
/// must not search the whole trace for each.
fn rows_by_series(data: &RunSet) -> Result<(Vec<&str>, BySeries<'_>), ReportError> {
    let mut row_variants: Vec<&str> = Vec::new();
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    let mut by_series: BySeries<'_> = BTreeMap::new();
    for r in &data.trace {
        backoffsim_core::run::interrupt::check()?;
        if seen.insert(&r.variant) {
            row_variants.push(&r.variant);
        }
        by_series.entry((r.variant.as_str(), r.point.as_slice())).or_default().push(r);
    }
    Ok((row_variants, by_series))
}

/// A panel's (series, replication, client).
type Chosen<'s> = (&'s super::Series, u32, u32);

/// The (series, replication, client) of each panel `opts` asks for, and how many there
/// are before the figure leaves some out.
fn choose<'s>(
    all: &'s [super::Series],
    by_series: &BySeries<'_>,
    opts: &PlotOptions,
) -> Result<(Vec<Chosen<'s>>, usize), ReportError> {
    let mut chosen: Vec<Chosen<'_>> = Vec::new();
    let mut total = 0;
    for s in all {
        backoffsim_core::run::interrupt::check()?;
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
    Ok((chosen, total))
}

/// The panel of one connection's `rows` between `x0` and `x1`, with the bands of its
/// variant's path and a caption naming it `who`.
fn framed_panel(data: &RunSet, s: &super::Series, rows: &[&TraceRow], who: &str, (x0, x1): (f64, f64)) -> Panel {
    let name = &s.variant;
    let mut p = panel(rows, x0, x1);
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
    let desc = data.variant(name).map(|v| v.description.as_str()).unwrap_or("");
    let counts = counts(&p);
    // The counts before the description, which is what gets cut if it is long.
    p.caption = if desc.is_empty() { format!("{who} ({counts})") } else { format!("{who} ({counts}): {desc}") };
    p
}

/// Clips the samples off the y axis to its edge and thins what would overdraw; returns
/// how many samples were off the scale.
fn fit_to_axes(panels: &mut [Panel], (x0, x1): (f64, f64), y: (f64, f64), log: bool) -> usize {
    let mut clipped = 0;
    for p in panels {
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
        p.window_probes = thin_points(&p.window_probes, (x0, x1), y, log);
        p.keepalives = thin_marks(&p.keepalives, x0, x1);
        p.synack_resends = thin_marks(&p.synack_resends, x0, x1);
        p.icmp = thin_marks(&p.icmp, x0, x1);
        for s in &mut p.srtt {
            *s = thin_line(s, x0, x1);
        }
        p.cwnd.steps = thin_line(&p.cwnd.steps, x0, x1);
        for s in &mut p.cwnd.ssthresh {
            *s = thin_line(s, x0, x1);
        }
    }
    clipped
}

/// The legend: the lines always, each mark only where some panel has it.
fn legend(panels: &[Panel], (x0, x1): (f64, f64)) -> Vec<(Glyph, String)> {
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
    timers::legend(panels, &mut legend);
    legend.extend(timers::abort_legend(panels, (x0, x1)));
    if any(&|p| !p.path.is_empty()) {
        legend.push((Glyph::Dashed(PATH), "path base RTT".into()));
    }
    if any(&|p| !p.blackouts.is_empty()) {
        legend.push((Glyph::Band(BLACKOUT), "blackout (all packets lost)".into()));
    }
    if any(&|p| !p.changed.is_empty()) {
        legend.push((Glyph::Band(CHANGED), "path RTT changed".into()));
    }
    cwnd::legend(panels, &mut legend);
    legend
}

/// The scenario, the connection and replication shown, and what the figure scaled or
/// left out.
fn subtitle(data: &RunSet, chosen: &[Chosen<'_>], total: usize, log: bool, clipped: usize) -> String {
    let scenario = super::scenarios(data);
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
    subtitle
}

/// The y range that shows every line and the bulk of the samples: lines in full, samples
/// from their 1st to their 99th percentile (all of them when there are few).
fn y_extent(panels: &[Panel]) -> (f64, f64) {
    // The zero-window probes' intervals too: their doubling is what the panel shows.
    let lines = panels
        .iter()
        .flat_map(|p| p.srtt.iter().flatten().chain(&p.rto).chain(&p.path).chain(&p.window_probes).map(|q| q.1));
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
/// probes, the other timers' marks and the abort when there are any.
fn counts(p: &Panel) -> String {
    let mut c = vec![plural(p.timeouts.len(), "timeout")];
    if !p.undone.is_empty() {
        c.push(format!("{} undone", p.undone.len()));
    }
    c.push(plural(p.retransmits.len(), "retransmission"));
    if !p.probes.is_empty() {
        c.push(plural(p.probes.len(), "probe"));
    }
    timers::counts(p, &mut c);
    c.extend(timers::abort_count(p));
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
    // Carried across the window's left edge: whether the window is zero (since when),
    // the last zero-window probe (or the closing), and the event before this one.
    let mut zero_since: Option<f64> = None;
    let mut last_probe: Option<f64> = None;
    let mut last: Option<TraceEvent> = None;
    for r in rows {
        let t = r.time;
        if t > x1 {
            break;
        }
        let event = TraceEvent::from_name(&r.event);
        match event {
            Some(TraceEvent::ZeroWindow) => {
                zero_since = zero_since.or(Some(t));
                last_probe = Some(t);
            }
            Some(TraceEvent::WindowProbe) => {
                // Linux `tcp_probe_timer` re-arms the persist timer backed off
                // (`tcp_send_probe0`): the gap since the last probe is its interval.
                if let Some(before) = last_probe.filter(|_| t >= x0) {
                    p.window_probes.push((t, t - before));
                }
                last_probe = Some(t);
            }
            Some(TraceEvent::WindowOpen) => {
                p.zero_windows.extend(zero_since.take().map(|a| (a, t)));
                last_probe = None;
            }
            Some(TraceEvent::Aborted | TraceEvent::RequestExpired) => {
                p.ending = if event == Some(TraceEvent::RequestExpired) {
                    Ending::RequestExpired
                } else {
                    Ending::of(last, zero_since.is_some())
                };
                p.zero_windows.extend(zero_since.take().map(|a| (a, t)));
                // Like finished: no RTO is in force after it.
                finished = Some(t);
                p.aborted = Some(t);
            }
            Some(TraceEvent::Finished) => finished = Some(t),
            _ => {}
        }
        last = event;
        if t < x0 {
            // Before the window: only the state it opens with matters.
            rto = r.rto.or(rto);
            srtt = r.srtt;
            continue;
        }
        if !started {
            started = true;
            open(&mut p, &mut seg, rto, srtt, x0);
        }
        match event {
            Some(TraceEvent::Sample) => {
                if let Some(s) = r.sample {
                    p.samples.push((t, s));
                }
            }
            Some(TraceEvent::Timeout) => {
                if let Some(before) = rto {
                    p.timeouts.push((t, before));
                }
            }
            Some(TraceEvent::Retransmit) => p.retransmits.push(t),
            Some(TraceEvent::Probe) => p.probes.push(t),
            Some(TraceEvent::Keepalive) => p.keepalives.push(t),
            Some(TraceEvent::SynAck) => p.synacks.push(t),
            Some(TraceEvent::SynAckRetransmit) => p.synack_resends.push(t),
            Some(TraceEvent::IcmpUnreachable) => p.icmp.push(t),
            Some(TraceEvent::SpuriousTimeout) => {
                // At the RTO in force once the timeout is undone.
                if let Some(v) = r.rto.or(rto) {
                    p.undone.push((t, v));
                }
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
    // Still zero at the window's right edge (or the trace's end).
    p.zero_windows.extend(zero_since.map(|a| (a, x1)));
    p.zero_windows = bands::merged(std::mem::take(&mut p.zero_windows), (x0, x1));
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
    p.cwnd = cwnd::congestion(rows, x0, end);
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

#[cfg(test)]
mod tests;
