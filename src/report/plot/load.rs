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
use plotters::style::FontStyle;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{
    Drawn, FONT, Figure, GRID_BOLD, GRID_LIGHT, Glyph, INK, MUTED, PlotOptions, WIDTH, color, fit, fmt_num, fmt_secs,
    header, mesh, omitted_note, panel_heights, series, stack_heights, stacked_size, thin_line, tick,
};
use crate::report::ReportError;
use crate::report::data::{RunSet, SeriesTable};

const OFFERED: RGBColor = RGBColor(213, 94, 0);
const GOODPUT: RGBColor = RGBColor(0, 114, 178);
const CAPACITY: RGBColor = RGBColor(33, 33, 33);
const RETRY: RGBColor = RGBColor(136, 34, 85);
const WASTED: RGBColor = RGBColor(166, 212, 240);
const ALERT: RGBColor = RGBColor(200, 0, 0);
const QUEUE: RGBColor = RGBColor(86, 180, 233);
const DOWN: RGBColor = RGBColor(222, 222, 222);
const BROWNOUT: RGBColor = RGBColor(253, 236, 178);
const BLACKOUT: RGBColor = RGBColor(232, 222, 242);
const MAIN_HEIGHT: u32 = 200;
const STRIP_HEIGHT: u32 = 86;
const AXIS: u32 = 24;
const BOTTOM_EXTRA: u32 = 22;
const Y_LABELS: u32 = 70;
/// Bins a panel draws at most; more are merged (and the subtitle says so).
const MAX_BINS: usize = 450;
/// About the pixels a panel's time axis spans, and the narrowest bin drawn as a step.
const PLOT_WIDTH: u32 = WIDTH - 110;
const MIN_STEP_PX: f64 = 4.0;
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
        if has("attempts") && has("succeeded") {
            Shape::Calls
        } else if has("created") && has("delivered") {
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

/// The mean over replications of every column, per bin, within the figure's window.
struct Binned {
    /// Each bin's span, the last cut at the horizon.
    spans: Vec<(f64, f64)>,
    columns: Vec<String>,
    /// `values[column][bin]`: the mean over the replications that have a value (and over
    /// the merged bins).
    values: Vec<Vec<Option<f64>>>,
    /// Each bin's seconds per bin of the file: its length, or the mean length of the
    /// file's bins merged into it.
    per_bin: Vec<f64>,
    /// How many of the file's bins each bin is (1 unless there were more than
    /// [`MAX_BINS`]).
    merged: usize,
    reps: usize,
    /// The length of the figure's time window.
    window: f64,
}

/// One bin over replications: its start and width, and each column's sum and count of
/// values.
type Sums = (f64, f64, Vec<(f64, u32)>);

impl Binned {
    fn of(table: &SeriesTable, variant: &str, point: &[String], horizon: Option<f64>, window: (f64, f64)) -> Binned {
        let n = table.columns.len();
        let mut bins: BTreeMap<i64, Sums> = BTreeMap::new();
        let mut reps = std::collections::BTreeSet::new();
        for r in table.rows.iter().filter(|r| r.variant == variant && r.point == point) {
            reps.insert(r.replication);
            if r.bin_width <= 0.0 || horizon.is_some_and(|h| h > 0.0 && r.bin_start >= h) {
                continue;
            }
            let key = (r.bin_start / r.bin_width).round() as i64;
            let e = bins.entry(key).or_insert_with(|| (r.bin_start, r.bin_width, vec![(0.0, 0); n]));
            for (acc, v) in e.2.iter_mut().zip(&r.values) {
                if let Some(v) = v {
                    acc.0 += v;
                    acc.1 += 1;
                }
            }
        }
        let mut out = Binned {
            spans: Vec::new(),
            columns: table.columns.clone(),
            values: vec![Vec::new(); n],
            per_bin: Vec::new(),
            merged: 1,
            reps: reps.len(),
            window: window.1 - window.0,
        };
        for (start, width, sums) in bins.into_values() {
            let end = horizon.filter(|h| *h > start).map_or(start + width, |h| (start + width).min(h));
            let mid = (start + end) / 2.0;
            if mid < window.0 || mid > window.1 {
                continue;
            }
            out.spans.push((start, end));
            out.per_bin.push(end - start);
            for (c, (sum, count)) in sums.into_iter().enumerate() {
                out.values[c].push((count > 0).then(|| sum / f64::from(count)));
            }
        }
        out.merge();
        out
    }

    /// Merges runs of bins into one where there are more than [`MAX_BINS`], so a line
    /// keeps a couple of pixels a bin: each value becomes the mean over the merged bins
    /// that have one, which keeps a count's rate (its mean over the bins' mean length) and
    /// a level's average.
    fn merge(&mut self) {
        let k = self.spans.len().div_ceil(MAX_BINS);
        if k <= 1 {
            return;
        }
        self.merged = k;
        let mean = |xs: &mut dyn Iterator<Item = f64>| {
            let (sum, n) = xs.fold((0.0, 0u32), |(s, n), x| (s + x, n + 1));
            (n > 0).then(|| sum / f64::from(n))
        };
        self.per_bin = self.per_bin.chunks(k).map(|c| mean(&mut c.iter().copied()).unwrap_or(0.0)).collect();
        self.spans = self.spans.chunks(k).map(|c| (c[0].0, c[c.len() - 1].1)).collect();
        for col in &mut self.values {
            *col = col.chunks(k).map(|c| mean(&mut c.iter().flatten().copied())).collect();
        }
    }

    fn col(&self, name: &str) -> Option<&[Option<f64>]> {
        self.columns.iter().position(|c| c == name).map(|i| self.values[i].as_slice())
    }

    /// A count per bin as a rate per second.
    fn rate(&self, name: &str) -> Option<Vec<Option<f64>>> {
        let v = self.col(name)?;
        Some(v.iter().zip(&self.per_bin).map(|(v, w)| v.filter(|_| *w > 0.0).map(|v| v / w)).collect())
    }

    /// `num / den` per bin in percent, where `den` is positive: pooled over replications,
    /// as the means share the same divisor.
    fn share(&self, num: &str, den: &str) -> Option<Vec<Option<f64>>> {
        let (n, d) = (self.col(num)?, self.col(den)?);
        Some(
            n.iter()
                .zip(d)
                .map(|(n, d)| Some(n.unwrap_or(0.0) * 100.0 / (*d)?).filter(|_| d.is_some_and(|d| d > 0.0)))
                .collect(),
        )
    }

    /// The line of `values`: a step per bin where bins are wide enough to see them, else
    /// through the bins' middles (steps a pixel or two wide would draw the bin-to-bin
    /// noise as a solid band).
    fn steps(&self, values: &[Option<f64>]) -> Steps {
        let span = self.spans.last().map_or(0.0, |l| l.1) - self.spans.first().map_or(0.0, |f| f.0);
        let wide = span > 0.0 && self.spans.len() as f64 <= f64::from(PLOT_WIDTH) / MIN_STEP_PX * (span / self.window);
        let mut out = Vec::new();
        let mut cur = Vec::new();
        for (&(a, b), v) in self.spans.iter().zip(values) {
            match v {
                Some(v) if wide => cur.extend([(a, *v), (b, *v)]),
                Some(v) => cur.push(((a + b) / 2.0, *v)),
                None if !cur.is_empty() => out.push(std::mem::take(&mut cur)),
                None => {}
            }
        }
        if !cur.is_empty() {
            out.push(cur);
        }
        out
    }

    /// The mean of `values` over the bins in `[from, to)`.
    fn mean(&self, values: &[Option<f64>], from: f64, to: f64) -> Option<f64> {
        let inside: Vec<f64> = self
            .spans
            .iter()
            .zip(values)
            .filter(|((a, b), _)| *a >= from && *b <= to)
            .filter_map(|(_, v)| *v)
            .collect();
        (!inside.is_empty()).then(|| inside.iter().sum::<f64>() / inside.len() as f64)
    }

    /// The largest value and the start of its (first) bin.
    fn peak(&self, values: &[Option<f64>]) -> Option<(f64, f64)> {
        self.spans
            .iter()
            .zip(values)
            .filter_map(|((a, _), v)| v.map(|v| (v, *a)))
            .fold(None, |best, (v, a)| if best.is_none_or(|(b, _)| v > b) { Some((v, a)) } else { best })
    }

    /// The spans a panel's note compares: before the first incident (or the first tenth
    /// of the window without one), and the last tenth of the window.
    fn before_and_end(&self, incident: Option<(f64, &str)>) -> ((f64, f64, String), (f64, f64, String)) {
        let (Some(&(first, _)), Some(&(_, last))) = (self.spans.first(), self.spans.last()) else {
            return ((0.0, 0.0, String::new()), (0.0, 0.0, String::new()));
        };
        let tenth = ((last - first) / 10.0).max(self.spans[0].1 - self.spans[0].0);
        let before = match incident.filter(|(t, _)| *t > self.spans[0].1) {
            Some((t, what)) => (first, t, format!("before {what} at {}", fmt_secs(t))),
            None => (first, first + tenth, format!("over the first {}", fmt_secs(tenth))),
        };
        (before, (last - tenth, last, format!("over the last {}", fmt_secs(tenth))))
    }
}

/// A rate as the report writes it.
fn per_s(v: f64) -> String {
    format!("{}/s", fmt_num(v, 3))
}

pub(crate) fn figure(data: &RunSet, opts: &PlotOptions) -> Result<LoadFigure, ReportError> {
    let tables = data.series.as_deref().unwrap_or(&[]);
    let mut row_variants: Vec<&str> = Vec::new();
    for r in tables.iter().flat_map(|t| &t.rows) {
        if !row_variants.contains(&r.variant.as_str()) {
            row_variants.push(&r.variant);
        }
    }
    let table_of =
        |v: &str, p: &[String]| tables.iter().find(|t| t.rows.iter().any(|r| r.variant == v && r.point == p));
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
        let Some(table) = table_of(&s.variant, &s.point) else { continue };
        let horizon = data.variant(&s.variant).and_then(|v| data.runs.get(v.run)).and_then(|r| r.horizon_s);
        let b = Binned::of(table, &s.variant, &s.point, horizon, (x0, x1));
        reps_seen.insert(b.reps);
        if let Some(&w) = b.per_bin.first() {
            widths.insert((w.to_bits(), b.merged));
        }
        let facts = data.facts(&s.variant, &s.point);
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
        bands.retain(|(a, e, _)| *e > x0 && *a < x1);
        for band in &mut bands {
            band.0 = band.0.max(x0);
            band.1 = band.1.min(x1);
        }
        let shape = Shape::of(&table.columns);
        let (lines, strip, stats, note) = match shape {
            Shape::Calls => calls(&b, &s.label, facts.retry_share_alert, incident),
            Shape::Jobs => jobs(&b, &s.label, incident),
            Shape::Other => other(&b),
        };
        let y_max = lines.iter().flat_map(|l| l.segments.iter().flatten()).map(|p| p.1).fold(0.0, f64::max);
        let desc = data.variant(&s.variant).map(|v| v.description.as_str()).unwrap_or("");
        let head = if stats.is_empty() { s.label.clone() } else { format!("{} ({stats})", s.label) };
        let caption = if desc.is_empty() { head } else { format!("{head}: {desc}") };
        panels.push(Panel { caption, shape, lines, strip, bands, y_max, note });
    }

    let mut y_max: BTreeMap<Shape, f64> = BTreeMap::new();
    let mut queue_max: f64 = 0.0;
    for p in &panels {
        let top = y_max.entry(p.shape).or_insert(0.0);
        *top = top.max(p.y_max);
        if let Some(Strip::Queue(bars)) = &p.strip {
            queue_max = bars.iter().flatten().map(|p| p.1).fold(queue_max, f64::max);
        }
    }
    for top in y_max.values_mut() {
        *top = if *top > 0.0 { *top * 1.08 } else { 1.0 };
    }

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
        let table = chosen
            .iter()
            .find_map(|s| table_of(&s.variant, &s.point).filter(|t| Shape::of(&t.columns) == Shape::Other));
        for (i, c) in table.map(|t| t.columns.as_slice()).unwrap_or(&[]).iter().enumerate().take(p.lines.len()) {
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

    let title = match (shapes.iter().all(|s| *s == Shape::Calls), shapes.iter().all(|s| *s == Shape::Jobs)) {
        (true, _) => "Offered load, goodput and retries over time",
        (_, true) => "Jobs created, delivered and queued over time",
        _ => "Quantities over time",
    };
    let scenario = data.runs.iter().map(|r| r.scenario.as_str()).collect::<Vec<_>>().join(" vs ");
    let reps_text = match reps_seen.len() {
        1 => match reps_seen.iter().next() {
            Some(1) => "one replication".to_string(),
            Some(n) => format!("mean of {n} replications"),
            None => String::new(),
        },
        _ => "mean over each panel's replications".to_string(),
    };
    let mut subtitle = format!("{scenario} · {reps_text}");
    if let [(w, merged)] = widths.iter().copied().collect::<Vec<_>>()[..] {
        let w = f64::from_bits(w);
        subtitle.push_str(&if merged > 1 {
            format!(" · bins of {} averaged over {}", fmt_secs(w), fmt_secs(w * merged as f64))
        } else {
            format!(" · bins of {}", fmt_secs(w))
        });
    }
    if let Some(note) = omitted_note(chosen.len(), total_series, "panels") {
        subtitle.push_str(&format!(" · {note}"));
    }
    Ok(LoadFigure { title: title.into(), subtitle, legend, panels, x: (x0, x1), y_max, queue_max })
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
    let offered = b.rate("attempts").unwrap_or_else(none);
    let goodput = b.rate("succeeded").unwrap_or_else(none);
    let capacity = b.col("capacity").map(<[_]>::to_vec).unwrap_or_else(none);
    let retry = b
        .share("retries", "attempts")
        .or_else(|| b.col("retry_share").map(|v| v.iter().map(|x| x.map(|x| x * 100.0)).collect()))
        .unwrap_or_else(none);
    let wasted = b.share("wasted_s", "busy_s").unwrap_or_else(none);
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
    let created = b.rate("created").unwrap_or_else(none);
    let delivered = b.rate("delivered").unwrap_or_else(none);
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
    fn x_area(axis: Option<bool>) -> u32 {
        match axis {
            None => 0,
            Some(false) => AXIS,
            Some(true) => AXIS + BOTTOM_EXTRA,
        }
    }

    /// The rates (or the columns); `axis` is `Some(last panel?)` when it carries the time
    /// axis itself (no strip under it).
    fn draw_main<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        p: &Panel,
        axis: Option<bool>,
    ) -> Result<(), String> {
        let caption_style = TextStyle::from((FONT, 15, FontStyle::Bold).into_font()).color(&INK);
        let top = self.y_max.get(&p.shape).copied().unwrap_or(1.0);
        let mut chart = ChartBuilder::on(area)
            .margin_left(8)
            .margin_right(24)
            .margin_top(6)
            // Room between the main chart's lowest tick label and the strip's highest.
            .margin_bottom(if axis.is_none() { 8 } else { 0 })
            .caption(fit(&p.caption, 15, WIDTH - 40), caption_style)
            .x_label_area_size(Self::x_area(axis))
            .y_label_area_size(Y_LABELS)
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
        let mut chart = ChartBuilder::on(area)
            .margin_left(8)
            .margin_right(24)
            .margin_top(8)
            .x_label_area_size(Self::x_area(Some(last)))
            .y_label_area_size(Y_LABELS)
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
            if right - left >= super::text_width(k.name(), 12) as i32 + 6 {
                chart.draw_series(std::iter::once(Text::new(format!(" {}", k.name()), (a, top), style.clone()))).d()?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::data::{Brownout, CellFacts, CellInfo, Down, RunInfo, SeriesRow, VariantInfo};

    const CALLS: [&str; 5] = ["attempts", "retries", "succeeded", "capacity", "retry_share"];

    fn variant(name: &str, facts: CellFacts) -> VariantInfo {
        VariantInfo {
            name: name.into(),
            run: 0,
            description: String::new(),
            params: Vec::new(),
            blackouts: Vec::new(),
            base_rtt: None,
            rtt_changes: Vec::new(),
            cells: vec![CellInfo { point: Vec::new(), facts }],
        }
    }

    /// A run of `horizon` seconds whose variants have `rows(variant index)`.
    fn run(
        horizon: f64,
        columns: &[&str],
        variants: Vec<VariantInfo>,
        rows: &dyn Fn(usize) -> Vec<SeriesRow>,
    ) -> RunSet {
        let rows = (0..variants.len()).flat_map(rows).collect();
        RunSet {
            runs: vec![RunInfo {
                label: String::new(),
                dir: "x".into(),
                scenario: "s".into(),
                description: String::new(),
                seed: None,
                replications: None,
                horizon: String::new(),
                horizon_s: Some(horizon),
                version: String::new(),
                scenario_sha256: String::new(),
            }],
            variants,
            series: Some(vec![SeriesTable { columns: columns.iter().map(|c| c.to_string()).collect(), rows }]),
            ..RunSet::default()
        }
    }

    fn row(variant: &str, rep: u32, start: f64, width: f64, values: &[f64]) -> SeriesRow {
        SeriesRow {
            variant: variant.into(),
            point: Vec::new(),
            replication: rep,
            bin_start: start,
            bin_width: width,
            values: values.iter().map(|v| Some(*v).filter(|v| !v.is_nan())).collect(),
        }
    }

    /// 1 s bins over `horizon` seconds: 800 attempts a second until `at`, then 1600 of
    /// which 800 retries, with goodput 0 (or back to 800 when `recovers`).
    fn storm(name: &str, horizon: usize, at: usize, recovers: bool) -> Vec<SeriesRow> {
        (0..=horizon)
            .map(|i| {
                let late = i >= at;
                let (attempts, retries) = if late { (1600.0, 800.0) } else { (800.0, 0.0) };
                let succeeded = if late && !recovers { 0.0 } else { 800.0 };
                row(name, 0, i as f64, 1.0, &[attempts, retries, succeeded, 1000.0, retries / attempts])
            })
            .collect()
    }

    fn svg(data: &RunSet) -> String {
        String::from_utf8(
            crate::report::plot::render(
                crate::report::plot::Kind::Load,
                data,
                &PlotOptions::default(),
                crate::report::plot::Format::Svg,
            )
            .unwrap(),
        )
        .unwrap()
    }

    #[test]
    fn one_panel_per_variant_up_to_eight_and_the_subtitle_says_what_was_left_out() {
        let variants = (0..10).map(|i| variant(&format!("v{i}"), CellFacts::default())).collect();
        let data = run(20.0, &CALLS, variants, &|i| storm(&format!("v{i}"), 20, 10, false));
        let f = figure(&data, &PlotOptions::default()).unwrap();
        assert_eq!(f.panels.len(), MAX_PANELS);
        assert!(f.subtitle.contains("8 of 10 panels shown"), "{}", f.subtitle);
        let one = figure(&data, &PlotOptions { variants: vec!["v3".into()], ..PlotOptions::default() }).unwrap();
        assert_eq!(one.panels.len(), 1);
        assert!(one.panels[0].caption.starts_with("v3"), "{}", one.panels[0].caption);
    }

    #[test]
    fn the_alert_line_is_drawn_only_where_the_variant_sets_a_threshold() {
        let alerting = CellFacts { retry_share_alert: Some(0.2), ..CellFacts::default() };
        let variants = vec![variant("watched", alerting), variant("unwatched", CellFacts::default())];
        let names = ["watched", "unwatched"];
        let data = run(20.0, &CALLS, variants, &|i| storm(names[i], 20, 10, false));
        let f = figure(&data, &PlotOptions::default()).unwrap();
        let alerts: Vec<Option<f64>> = f
            .panels
            .iter()
            .map(|p| match &p.strip {
                Some(Strip::Shares { alert, .. }) => *alert,
                _ => panic!("a calls panel has the shares strip"),
            })
            .collect();
        assert_eq!(alerts, [Some(20.0), None]);
        assert_eq!(svg(&data).matches("alert at 20 %").count(), 1);
        let quiet =
            run(20.0, &CALLS, vec![variant("unwatched", CellFacts::default())], &|_| storm("unwatched", 20, 10, false));
        let drawn = svg(&quiet);
        assert!(!drawn.contains("alert at") && !drawn.contains("retry-share alert"));
    }

    #[test]
    fn counts_become_rates_per_second_and_the_bin_at_the_horizon_is_left_out() {
        // Half-second bins over 2 s: five bins, the fifth holding only the horizon's instant.
        let rows = |_| (0..5).map(|i| row("v", 0, i as f64 * 0.5, 0.5, &[10.0, 0.0, 5.0, 40.0, 0.0])).collect();
        let data = run(2.0, &CALLS, vec![variant("v", CellFacts::default())], &rows);
        let b = Binned::of(&data.series.as_ref().unwrap()[0], "v", &[], Some(2.0), (0.0, 2.0));
        assert_eq!(b.spans.len(), 4);
        assert_eq!(b.rate("attempts").unwrap(), [Some(20.0); 4]);
        // A level (attempts/s the server can serve) is not divided again.
        assert_eq!(b.col("capacity").unwrap(), [Some(40.0); 4]);
    }

    #[test]
    fn more_bins_than_a_panel_can_show_are_merged_keeping_rates_and_levels() {
        // 1000 bins of 100 ms, 3 attempts in each (30/s), capacity 50/s: merged three by three.
        let rows = |_| (0..1000).map(|i| row("v", 0, i as f64 * 0.1, 0.1, &[3.0, 0.0, 3.0, 50.0, 0.0])).collect();
        let data = run(100.0, &CALLS, vec![variant("v", CellFacts::default())], &rows);
        let b = Binned::of(&data.series.as_ref().unwrap()[0], "v", &[], Some(100.0), (0.0, 100.0));
        assert_eq!((b.merged, b.spans.len()), (3, 334));
        assert!(b.rate("attempts").unwrap().iter().all(|r| r.is_some_and(|r| (r - 30.0).abs() < 1e-9)));
        assert!(b.col("capacity").unwrap().iter().all(|c| *c == Some(50.0)));
        assert!((b.spans[1].0 - 0.3).abs() < 1e-9 && (b.spans[1].1 - 0.6).abs() < 1e-9, "{:?}", b.spans[1]);
        let f = figure(&data, &PlotOptions::default()).unwrap();
        assert!(f.subtitle.ends_with("bins of 100 ms averaged over 300 ms"), "{}", f.subtitle);
    }

    #[test]
    fn the_retry_share_is_pooled_over_replications_not_a_mean_of_ratios() {
        // One replication retried its only attempt, the other none of 99: 1 retry in 100.
        let rows = |_| {
            vec![
                row("v", 0, 0.0, 1.0, &[1.0, 1.0, 0.0, 10.0, 1.0]),
                row("v", 1, 0.0, 1.0, &[99.0, 0.0, 99.0, 10.0, 0.0]),
            ]
        };
        let data = run(1.0, &CALLS, vec![variant("v", CellFacts::default())], &rows);
        let b = Binned::of(&data.series.as_ref().unwrap()[0], "v", &[], Some(1.0), (0.0, 1.0));
        assert_eq!(b.reps, 2);
        assert_eq!(b.share("retries", "attempts").unwrap(), [Some(1.0)]);
        // A bin without attempts has no share.
        let empty = |_| vec![row("v", 0, 0.0, 1.0, &[0.0, 0.0, 0.0, 10.0, f64::NAN])];
        let data = run(1.0, &CALLS, vec![variant("v", CellFacts::default())], &empty);
        let b = Binned::of(&data.series.as_ref().unwrap()[0], "v", &[], Some(1.0), (0.0, 1.0));
        assert_eq!(b.share("retries", "attempts").unwrap(), [None]);
        assert_eq!(b.col("retry_share").unwrap(), [None]);
    }

    #[test]
    fn the_report_compares_peak_load_with_capacity_and_goodput_before_the_incident_with_the_end() {
        let down = CellFacts { down: vec![Down { from: 60.0, to: 70.0, restart: true }], ..CellFacts::default() };
        let variants = vec![variant("collapse", down.clone()), variant("recover", down)];
        let data = run(100.0, &CALLS, variants, &|i| storm(["collapse", "recover"][i], 100, 60, i == 1));
        let notes = notes(&data);
        assert_eq!(notes.len(), 2);
        assert_eq!(notes[0].0, "collapse");
        let (collapse, recover) = (&notes[0].1, &notes[1].1);
        assert!(
            collapse.starts_with("Offered load peaks at 1600 attempts/s at 60 s, 1.6× the server's capacity of 1000/s"),
            "{collapse}"
        );
        assert!(
            collapse.contains("goodput is 800/s before the server went down at 60 s and 0/s over the last 10 s"),
            "{collapse}"
        );
        assert!(recover.contains("and 800/s over the last 10 s"), "{recover}");
        assert!(collapse.contains("retries are up to 50 % of attempts"), "{collapse}");
    }

    #[test]
    fn brownouts_and_down_time_are_shaded_and_named_in_the_legend() {
        let facts = CellFacts {
            brownouts: vec![Brownout { from: 5.0, to: 8.0, fail_fraction: Some(0.5), slowdown: None }],
            down: vec![Down { from: 12.0, to: 30.0, restart: false }],
            ..CellFacts::default()
        };
        let data = run(20.0, &CALLS, vec![variant("v", facts)], &|_| storm("v", 20, 10, false));
        let f = figure(&data, &PlotOptions::default()).unwrap();
        // Clipped to the window.
        assert_eq!(f.panels[0].bands, [(5.0, 8.0, BandKind::Brownout), (12.0, 20.0, BandKind::Down)]);
        let legend: Vec<&str> = f.legend.iter().map(|(_, l)| l.as_str()).collect();
        assert!(legend.contains(&"brownout") && legend.contains(&"server down"), "{legend:?}");
        assert!(!legend.contains(&"provider down"));
    }

    #[test]
    fn jobs_columns_draw_created_and_delivered_with_the_queue_depth_in_the_strip() {
        let columns = ["created", "delivered", "dead_lettered", "retried", "queue_depth", "busy_s"];
        let facts = CellFacts { provider_down: vec![(3.0, 6.0)], ..CellFacts::default() };
        let rows = |_| (0..=10).map(|i| row("q", 0, i as f64, 1.0, &[5.0, 4.0, 0.0, 1.0, i as f64, 2.0])).collect();
        let data = run(10.0, &columns, vec![variant("q", facts)], &rows);
        let f = figure(&data, &PlotOptions::default()).unwrap();
        assert_eq!(f.title, "Jobs created, delivered and queued over time");
        assert!(matches!(&f.panels[0].strip, Some(Strip::Queue(q)) if q.iter().flatten().any(|p| p.1 == 9.0)));
        assert_eq!(f.panels[0].bands, [(3.0, 6.0, BandKind::ProviderDown)]);
        let legend: Vec<&str> = f.legend.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(legend, ["created (jobs/s)", "delivered (jobs/s)", "queue depth (strip)", "provider down"]);
        assert!(notes(&data)[0].1.contains("the queue peaks at 9 jobs at 9 s"), "{:?}", notes(&data));
    }

    #[test]
    fn other_columns_get_a_line_each_named_in_the_legend_and_no_strip() {
        let rows = |_| (0..=4).map(|i| row("g", 0, i as f64, 1.0, &[1.0, 2.0, f64::NAN])).collect();
        let data = run(4.0, &["alpha", "beta", "gamma"], vec![variant("g", CellFacts::default())], &rows);
        let f = figure(&data, &PlotOptions::default()).unwrap();
        assert_eq!(f.title, "Quantities over time");
        assert!(f.panels[0].strip.is_none());
        let legend: Vec<&str> = f.legend.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(legend, ["alpha", "beta", "gamma"]);
        // A column without values draws nothing.
        assert!(f.panels[0].lines[2].segments.is_empty());
        assert!(notes(&data).is_empty());
    }
}
