//! `load`: what a server or a queue went through over time, from `series.csv`, one panel
//! per variant and sweep cell on a shared time axis, each bin the mean over
//! replications. What a panel shows follows the columns the model wrote:
//!
//! - the calls model's: offered load (attempts/s) against goodput (succeeded/s) and the
//!   server's capacity, and in a strip under it the retries' share of attempts with the
//!   share of busy worker time wasted, so a retry storm reads as offered load climbing
//!   past capacity while goodput falls and the strip fills with retries;
//! - the jobs model's: jobs created and delivered per second, the queue's depth in the
//!   strip;
//! - any other columns: a line each, as the file holds them.
//!
//! Counts become rates per second of the bin (the last bin is cut at the horizon, and a
//! bin that starts at the horizon, which only holds what happened exactly then, is left
//! out); shares are pooled over replications (retries over attempts, not a mean of
//! ratios), so a replication with one attempt in a bin does not weigh as much as one with
//! a thousand. The server's down time, brownouts and the provider's down time are shaded
//! from the variant's (or the cell's) parameters.

use std::collections::BTreeMap;

use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{
    Drawn, FONT, Figure, GRID_BOLD, GRID_LIGHT, Glyph, INK, MUTED, PlotOptions, color, fmt_num, fmt_secs,
    header, mesh, omitted_note, panel_heights, series, stack_heights, stacked_size, thin_line, tick,
};
use super::style::load::*;
use super::style::{ALARM as ALERT, AXIS, BLACKOUT, BOTTOM_EXTRA, DOWN, PLOT_WIDTH};
use crate::ReportError;
use crate::data::RunSet;

mod binned;
mod caption;
mod draw;

use binned::Binned;
use backoffsim_core::metrics::series::{CallsColumn, JobsColumn};

/// Offered load, goodput and the retries' share per time bin (or jobs created, delivered and queued), one panel per variant and sweep cell.
pub struct Load;

impl super::Plot for Load {
    const NAME: &'static str = "load";
    const ABOUT: &'static str = "Offered load, goodput and the retries' share per time bin (or jobs created, delivered and queued), one panel per variant and sweep cell";
    type Figure = LoadFigure;

    fn missing(data: &RunSet) -> Option<String> {
        data.series.as_ref().is_none_or(|t| t.iter().all(|t| t.rows.is_empty())).then(|| {
            "no quantities over time: series.csv is missing or has no rows (only models that \
             track load over time write it)"
                .into()
        })
    }

    fn figure(data: &RunSet, opts: &PlotOptions) -> Result<LoadFigure, ReportError> {
        figure(data, opts)
    }

    fn caption(data: &RunSet) -> Result<(String, String), backoffsim_core::run::interrupt::Interrupted> {
        Ok(("Load over time".into(), caption::caption(data)))
    }

    fn panels(data: &RunSet) -> Vec<(String, String)> {
        notes(data)
    }

    fn redraw(r: &super::Redraw<'_>) -> String {
        format!("backoffsim plot load {} --variant {}{} -o load.png", r.dir, r.variant, r.cell)
    }
}

/// Bins a panel draws at most; more are merged (and the subtitle says so).
const MAX_BINS: usize = 450;
/// Panels one figure shows; past that it says what it left out.
pub(crate) const MAX_PANELS: usize = 8;

/// Which model's columns a panel has.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Shape {
    Calls,
    Jobs,
    Other,
}

impl Shape {
    fn of(columns: &[String]) -> Shape {
        let has = |c: &str| columns.iter().any(|x| x == c);
        if has(CallsColumn::Attempts.name()) && has(CallsColumn::Succeeded.name()) {
            Shape::Calls
        } else if has(JobsColumn::Created.name()) && has(JobsColumn::Delivered.name()) {
            Shape::Jobs
        } else {
            Shape::Other
        }
    }

    fn y_desc(self) -> &'static str {
        match self {
            Shape::Calls => "attempts/s",
            Shape::Jobs => "jobs/s",
            Shape::Other => "value per bin",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum BandKind {
    Blackout,
    Brownout,
    Down,
    ProviderDown,
}

impl BandKind {
    fn color(self) -> RGBColor {
        match self {
            BandKind::Blackout => BLACKOUT,
            BandKind::Brownout => BROWNOUT,
            BandKind::Down | BandKind::ProviderDown => DOWN,
        }
    }

    /// What began at the band's start, for "before …".
    fn since(self) -> &'static str {
        match self {
            BandKind::Blackout => "the path's blackout",
            BandKind::Brownout => "the brownout",
            BandKind::Down => "the server went down",
            BandKind::ProviderDown => "the provider went down",
        }
    }

    fn name(self) -> &'static str {
        match self {
            BandKind::Blackout => "path blackout",
            BandKind::Brownout => "brownout",
            BandKind::Down => "server down",
            BandKind::ProviderDown => "provider down",
        }
    }
}

/// A line of steps, one flat run per bin, broken where a bin has no value.
type Steps = Vec<Vec<(f64, f64)>>;

struct Line {
    color: RGBColor,
    dashed: bool,
    segments: Steps,
}

enum Strip {
    /// Percentages: the retries' share of attempts as a line, the wasted share of busy
    /// time as a filled area, and the alert threshold.
    Shares { retry: Steps, wasted: Steps, alert: Option<f64> },
    /// The queue's depth as a filled area.
    Queue(Steps),
}

struct Panel {
    caption: String,
    shape: Shape,
    lines: Vec<Line>,
    strip: Option<Strip>,
    bands: Vec<(f64, f64, BandKind)>,
    /// The panel's largest value, for the shared scale.
    y_max: f64,
    /// What the report says the reader should see in this panel: (label, sentence).
    note: Option<(String, String)>,
}

pub(crate) struct LoadFigure {
    title: String,
    subtitle: String,
    legend: Vec<(Glyph, String)>,
    panels: Vec<Panel>,
    x: (f64, f64),
    /// The main charts' top, by shape: panels of one shape share a scale.
    y_max: BTreeMap<Shape, f64>,
    queue_max: f64,
}

/// A rate as the report writes it.
fn per_s(v: f64) -> String {
    format!("{}/s", fmt_num(v, 3))
}

pub(crate) fn figure(data: &RunSet, opts: &PlotOptions) -> Result<LoadFigure, ReportError> {
    let tables = data.series.as_deref().unwrap_or(&[]);
    // Which table holds each (variant, cell), the first that has a row of it, found in
    // one pass over the rows rather than a search of them all per cell.
    let mut row_variants: Vec<&str> = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    let mut holder: BTreeMap<(&str, &[String]), usize> = BTreeMap::new();
    for (i, t) in tables.iter().enumerate() {
        for r in &t.rows {
            backoffsim_core::run::interrupt::check()?;
            if seen.insert(r.variant.as_str()) {
                row_variants.push(&r.variant);
            }
            holder.entry((r.variant.as_str(), r.point.as_slice())).or_insert(i);
        }
    }
    let table_of = |v: &str, p: &[String]| holder.get(&(v, p)).map(|&i| &tables[i]);
    let mut chosen = series(data, opts, &row_variants, &|v, p| table_of(v, p).is_some())?;
    if chosen.is_empty() {
        return Err(ReportError::Missing(format!("series.csv has no rows for variant {}", opts.variants.join(", "))));
    }
    let total_series = chosen.len();
    chosen.truncate(MAX_PANELS);
    let last = tables.iter().flat_map(|t| &t.rows).map(|r| r.bin_start + r.bin_width).fold(0.0, f64::max);
    let x0 = opts.from.unwrap_or(0.0);
    let x1 = opts.to.unwrap_or(data.horizon_s().filter(|h| *h > 0.0).unwrap_or(last));
    if x1 <= x0 {
        return Err(ReportError::Missing(format!("series.csv has no bins after {} s", fmt_num(x0, 4))));
    }

    let mut panels = Vec::new();
    let mut reps_seen = std::collections::BTreeSet::new();
    let mut widths = std::collections::BTreeSet::new();
    for s in &chosen {
        backoffsim_core::run::interrupt::check()?;
        let Some(table) = table_of(&s.variant, &s.point) else { continue };
        let horizon = data.variant(&s.variant).and_then(|v| data.runs.get(v.run)).and_then(|r| r.horizon_s);
        let b = Binned::of(table, &s.variant, &s.point, horizon, (x0, x1));
        reps_seen.insert(b.reps);
        if let Some(&w) = b.per_bin.first() {
            widths.insert((w.to_bits(), b.merged));
        }
        panels.push(panel(data, s, &b, Shape::of(&table.columns), (x0, x1)));
    }
    let (y_max, queue_max) = scales(&panels);
    // The columns of the first table of other columns name its lines.
    let other_columns = chosen
        .iter()
        .find_map(|s| table_of(&s.variant, &s.point).filter(|t| Shape::of(&t.columns) == Shape::Other))
        .map(|t| t.columns.as_slice())
        .unwrap_or(&[]);
    let legend = legend(&panels, other_columns);
    let shapes: Vec<Shape> = panels.iter().map(|p| p.shape).collect();
    let title = match (shapes.iter().all(|s| *s == Shape::Calls), shapes.iter().all(|s| *s == Shape::Jobs)) {
        (true, _) => "Offered load, goodput and retries over time",
        (_, true) => "Jobs created, delivered and queued over time",
        _ => "Quantities over time",
    };
    let subtitle = subtitle(data, &reps_seen, &widths, (chosen.len(), total_series));
    Ok(LoadFigure { title: title.into(), subtitle, legend, panels, x: (x0, x1), y_max, queue_max })
}

/// The panel of series `s` from its bins `b`, with its bands and caption.
fn panel(data: &RunSet, s: &super::Series, b: &Binned, shape: Shape, (x0, x1): (f64, f64)) -> Panel {
    let facts = data.facts(&s.variant, &s.point);
    let (bands, incident) = bands_of(&facts, (x0, x1));
    let (lines, strip, stats, note) = match shape {
        Shape::Calls => calls(b, &s.label, facts.retry_share_alert, incident),
        Shape::Jobs => jobs(b, &s.label, incident),
        Shape::Other => other(b),
    };
    let y_max = lines.iter().flat_map(|l| l.segments.iter().flatten()).map(|p| p.1).fold(0.0, f64::max);
    let desc = data.variant(&s.variant).map(|v| v.description.as_str()).unwrap_or("");
    let head = if stats.is_empty() { s.label.clone() } else { format!("{} ({stats})", s.label) };
    let caption = if desc.is_empty() { head } else { format!("{head}: {desc}") };
    Panel { caption, shape, lines, strip, bands, y_max, note }
}

/// The shaded spans of a cell, each kind's merged as drawn, and the first incident (not
/// a blackout) with what its time is called.
type Bands = (Vec<(f64, f64, BandKind)>, Option<(f64, &'static str)>);

fn bands_of(facts: &crate::data::CellFacts, (x0, x1): (f64, f64)) -> Bands {
    let mut bands: Vec<(f64, f64, BandKind)> =
        facts.blackouts.iter().map(|&(a, e)| (a, e, BandKind::Blackout)).collect();
    bands.extend(facts.brownouts.iter().map(|b| (b.from, b.to, BandKind::Brownout)));
    bands.extend(facts.down.iter().map(|d| (d.from, d.to, BandKind::Down)));
    bands.extend(facts.provider_down.iter().map(|&(a, e)| (a, e, BandKind::ProviderDown)));
    let incident = bands
        .iter()
        .filter(|b| b.2 != BandKind::Blackout)
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .map(|b| (b.0, b.2.since()));
    // Each kind's spans merged as drawn, the kinds in the order above.
    let bands: Vec<(f64, f64, BandKind)> =
        [BandKind::Blackout, BandKind::Brownout, BandKind::Down, BandKind::ProviderDown]
            .into_iter()
            .flat_map(|k| {
                let spans = bands.iter().filter(|b| b.2 == k).map(|b| (b.0, b.1));
                super::bands::merged(spans, (x0, x1)).into_iter().map(move |(a, e)| (a, e, k))
            })
            .collect();
    (bands, incident)
}

/// The top of each shape's y axis, shared by its panels, and of the queue strips.
fn scales(panels: &[Panel]) -> (BTreeMap<Shape, f64>, f64) {
    let mut y_max: BTreeMap<Shape, f64> = BTreeMap::new();
    let mut queue_max: f64 = 0.0;
    for p in panels {
        let top = y_max.entry(p.shape).or_insert(0.0);
        *top = top.max(p.y_max);
        if let Some(Strip::Queue(bars)) = &p.strip {
            queue_max = bars.iter().flatten().map(|p| p.1).fold(queue_max, f64::max);
        }
    }
    for top in y_max.values_mut() {
        *top = if *top > 0.0 { *top * 1.08 } else { 1.0 };
    }

    (y_max, queue_max)
}

/// The legend: what the panels' shapes draw, the lines of other columns named by
/// `other_columns`, and each kind of band shown.
fn legend(panels: &[Panel], other_columns: &[String]) -> Vec<(Glyph, String)> {
    let shapes: Vec<Shape> = panels.iter().map(|p| p.shape).collect();
    let any = |f: &dyn Fn(&Panel) -> bool| panels.iter().any(f);
    let mut legend = Vec::new();
    if shapes.contains(&Shape::Calls) {
        legend.push((Glyph::Line(OFFERED, 2), "offered load (attempts/s)".to_string()));
        legend.push((Glyph::Line(GOODPUT, 2), "goodput (succeeded/s)".to_string()));
        if any(&|p| p.shape == Shape::Calls && p.lines.iter().any(|l| l.dashed && !l.segments.is_empty())) {
            legend.push((Glyph::Dashed(CAPACITY), "server capacity (attempts/s)".to_string()));
        }
        legend.push((Glyph::Line(RETRY, 2), "retries' share of attempts (strip)".to_string()));
        if any(
            &|p| matches!(&p.strip, Some(Strip::Shares { wasted, .. }) if wasted.iter().flatten().any(|p| p.1 > 0.0)),
        ) {
            legend.push((Glyph::Band(WASTED), "share of busy time wasted (strip)".to_string()));
        }
        if any(&|p| matches!(&p.strip, Some(Strip::Shares { alert: Some(_), .. }))) {
            legend.push((Glyph::Dashed(ALERT), "retry-share alert".to_string()));
        }
    }
    if shapes.contains(&Shape::Jobs) {
        legend.push((Glyph::Line(OFFERED, 2), "created (jobs/s)".to_string()));
        legend.push((Glyph::Line(GOODPUT, 2), "delivered (jobs/s)".to_string()));
        legend.push((Glyph::Band(QUEUE), "queue depth (strip)".to_string()));
    }
    if let Some(p) = panels.iter().find(|p| p.shape == Shape::Other) {
        for (i, c) in other_columns.iter().enumerate().take(p.lines.len()) {
            legend.push((Glyph::Line(color(i), 2), c.clone()));
        }
    }
    let mut kinds: Vec<BandKind> = panels.iter().flat_map(|p| p.bands.iter().map(|b| b.2)).collect();
    kinds.sort();
    kinds.dedup();
    // One grey band may stand for both the server's and the provider's down time.
    for k in kinds.iter().filter(|k| **k != BandKind::ProviderDown || !kinds.contains(&BandKind::Down)) {
        legend.push((Glyph::Band(k.color()), k.name().to_string()));
    }

    legend
}

/// The scenario, how bins average replications and merge, and the panels left out.
fn subtitle(
    data: &RunSet,
    reps_seen: &std::collections::BTreeSet<usize>,
    widths: &std::collections::BTreeSet<(u64, usize)>,
    (shown, total_series): (usize, usize),
) -> String {
    let mut subtitle = format!("{} · {}", super::scenarios(data), super::replications_text(reps_seen));
    if let [(w, merged)] = widths.iter().copied().collect::<Vec<_>>()[..] {
        let w = f64::from_bits(w);
        subtitle.push_str(&if merged > 1 {
            format!(" · bins of {} averaged over {}", fmt_secs(w), fmt_secs(w * merged as f64))
        } else {
            format!(" · bins of {}", fmt_secs(w))
        });
    }
    if let Some(note) = omitted_note(shown, total_series, "panels") {
        subtitle.push_str(&format!(" · {note}"));
    }
    subtitle
}

/// A panel's lines, strip, numbers for its caption, and the report's sentence about it.
type Drawn4 = (Vec<Line>, Option<Strip>, String, Option<(String, String)>);

/// The report's sentence from its clauses, with the panel's label.
fn sentence(label: &str, clauses: Vec<String>) -> Option<(String, String)> {
    let mut text = clauses.join("; ");
    let first = text.chars().next()?;
    text.replace_range(..first.len_utf8(), &first.to_uppercase().to_string());
    Some((label.to_string(), text + "."))
}

fn calls(b: &Binned, label: &str, alert: Option<f64>, incident: Option<(f64, &str)>) -> Drawn4 {
    let none = || vec![None; b.spans.len()];
    let offered = b.rate(CallsColumn::Attempts.name()).unwrap_or_else(none);
    let goodput = b.rate(CallsColumn::Succeeded.name()).unwrap_or_else(none);
    let capacity = b.col(CallsColumn::Capacity.name()).map(<[_]>::to_vec).unwrap_or_else(none);
    let retry = b
        .share(CallsColumn::Retries.name(), CallsColumn::Attempts.name())
        .or_else(|| b.col("retry_share").map(|v| v.iter().map(|x| x.map(|x| x * 100.0)).collect()))
        .unwrap_or_else(none);
    let wasted = b.share(CallsColumn::Wasted.name(), CallsColumn::Busy.name()).unwrap_or_else(none);
    let alert_pct = alert.map(|a| a * 100.0);
    let lines = vec![
        Line { color: CAPACITY, dashed: true, segments: b.steps(&capacity) },
        Line { color: OFFERED, dashed: false, segments: b.steps(&offered) },
        Line { color: GOODPUT, dashed: false, segments: b.steps(&goodput) },
    ];
    let strip = Strip::Shares { retry: b.steps(&retry), wasted: b.steps(&wasted), alert: alert_pct };

    let peak = b.peak(&offered);
    let cap = capacity.iter().flatten().copied().fold(None, |m: Option<f64>, c| Some(m.map_or(c, |m| m.max(c))));
    let ((b0, b1, before_text), (e0, e1, end_text)) = b.before_and_end(incident);
    let (good_before, good_end) = (b.mean(&goodput, b0, b1), b.mean(&goodput, e0, e1));
    let mut stats = Vec::new();
    let mut note = Vec::new();
    if let Some((p, at)) = peak {
        match cap.filter(|c| *c > 0.0) {
            Some(c) => {
                stats.push(format!("peak offered {}, {}× capacity", per_s(p), fmt_num(p / c, 2)));
                note.push(format!(
                    "offered load peaks at {} attempts/s at {}, {}× the server's capacity of {}",
                    fmt_num(p, 3),
                    fmt_secs(at),
                    fmt_num(p / c, 2),
                    per_s(c)
                ));
            }
            None => {
                stats.push(format!("peak offered {}", per_s(p)));
                note.push(format!("offered load peaks at {} attempts/s at {}", fmt_num(p, 3), fmt_secs(at)));
            }
        }
    }
    if let (Some(gb), Some(ge)) = (good_before, good_end) {
        stats.push(format!("goodput {} → {}", per_s(gb), per_s(ge)));
        note.push(format!("goodput is {} {before_text} and {} {end_text}", per_s(gb), per_s(ge)));
    }
    if let Some((r, at)) = b.peak(&retry) {
        let mut s = format!("retries are up to {} % of attempts (at {})", fmt_num(r, 2), fmt_secs(at));
        if let Some(a) = alert_pct {
            match b.spans.iter().zip(&retry).find(|(_, v)| v.is_some_and(|v| v > a)) {
                Some(((t, _), _)) => {
                    s.push_str(&format!(", above the {} % alert from {}", fmt_num(a, 3), fmt_secs(*t)))
                }
                None => s.push_str(&format!(", never above the {} % alert", fmt_num(a, 3))),
            }
        }
        note.push(s);
    }
    let note = sentence(label, note);
    (lines, Some(strip), stats.join("; "), note)
}

fn jobs(b: &Binned, label: &str, incident: Option<(f64, &str)>) -> Drawn4 {
    let none = || vec![None; b.spans.len()];
    let created = b.rate(JobsColumn::Created.name()).unwrap_or_else(none);
    let delivered = b.rate(JobsColumn::Delivered.name()).unwrap_or_else(none);
    let depth = b.col("queue_depth").map(<[_]>::to_vec).unwrap_or_else(none);
    let lines = vec![
        Line { color: OFFERED, dashed: false, segments: b.steps(&created) },
        Line { color: GOODPUT, dashed: false, segments: b.steps(&delivered) },
    ];
    let ((b0, b1, before_text), (e0, e1, end_text)) = b.before_and_end(incident);
    let mut stats = Vec::new();
    let mut note = Vec::new();
    if let (Some(db), Some(de)) = (b.mean(&delivered, b0, b1), b.mean(&delivered, e0, e1)) {
        stats.push(format!("delivered {} → {}", per_s(db), per_s(de)));
        note.push(format!("delivered jobs are {} {before_text} and {} {end_text}", per_s(db), per_s(de)));
    }
    if let Some((q, at)) = b.peak(&depth) {
        let end = depth.iter().rev().flatten().next().copied().unwrap_or(0.0);
        stats.push(format!("queue peaks at {}", fmt_num(q, 3)));
        note.push(format!(
            "the queue peaks at {} jobs at {} and ends at {}",
            fmt_num(q, 3),
            fmt_secs(at),
            fmt_num(end, 3)
        ));
    }
    let note = sentence(label, note);
    (lines, Some(Strip::Queue(b.steps(&depth))), stats.join("; "), note)
}

fn other(b: &Binned) -> Drawn4 {
    let lines = b
        .values
        .iter()
        .enumerate()
        .map(|(i, v)| Line { color: color(i), dashed: false, segments: b.steps(v) })
        .collect();
    (lines, None, String::new(), None)
}

/// What the report says each panel of the default figure shows: (panel label, sentence).
pub(crate) fn notes(data: &RunSet) -> Vec<(String, String)> {
    figure(data, &PlotOptions::default())
        .map(|f| f.panels.into_iter().filter_map(|p| p.note).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests;
