//! `attempts`: connection attempts the server saw per time bin, accepted and refused
//! stacked, one panel per variant and sweep cell on a shared time axis and a shared
//! scale, so a herd and how jitter spreads it show at a glance. Bins are averaged over
//! replications; the server's down time and the path's blackouts are shaded.
//!
//! Under each panel a strip shows the accepted attempts alone, on a scale of their own:
//! next to a herd of 10,000 refused attempts the few hundred the server takes per bin
//! would be a line one pixel high. The strip keeps both scales linear, so a bar's area
//! stays the attempts it stands for (a log axis would shrink the herd to look like the
//! hump after it, and stacked bars on a log axis misstate the upper part).

use std::collections::{BTreeMap, BTreeSet};

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{
    Drawn, FONT, Figure, Glyph, MUTED, PlotOptions, bands, fmt_num, fmt_secs,
    header, mesh, omitted_note, panel_heights, series, stack_heights, stacked_size, tick,
};
use super::style::attempts::*;
use super::{aligned, captioned, mesh_with, time_axis_room};
use super::style::{AXIS, BLACKOUT, BOTTOM_EXTRA, DOWN};
use crate::ReportError;
use crate::data::{AttemptRow, Down, RunSet};

/// Connection attempts the server saw per time bin, one panel per variant and sweep cell.
pub struct Attempts;

impl super::Plot for Attempts {
    const NAME: &'static str = "attempts";
    const ABOUT: &'static str = "Connection attempts the server saw per time bin, one panel per variant and sweep cell";
    type Figure = AttemptsFigure;

    fn missing(data: &RunSet) -> Option<String> {
        data.attempts.as_ref().is_none_or(|a| a.is_empty()).then(|| {
            "no attempts per time bin: attempts.csv is missing or has no rows (only models with a \
             server write it)"
                .into()
        })
    }

    fn figure(data: &RunSet, opts: &PlotOptions) -> Result<AttemptsFigure, ReportError> {
        figure(data, opts)
    }

    fn caption(data: &RunSet) -> Result<(String, String), backoffsim_core::run::interrupt::Interrupted> {
        Ok((
            "Connection attempts at the server".into(),
        format!(
                        "Attempts per time bin at the server, mean over replications, accepted (blue) and \
                         refused (orange) stacked; one panel per variant{} on the same scales, with the \
                         accepted attempts alone in a strip under each panel. Grey bands are the server's \
                         down time. A tall narrow spike is a synchronized herd; jitter turns it into a \
                         lower, wider hump. When the end of the run is empty, the time axis stops a \
                         little after the last attempt or down time, and the plot's subtitle says where.",
                        if data.sweep_keys.is_empty() { "" } else { " and sweep cell" }
                    ),
        ))
    }

    fn redraw(r: &super::Redraw<'_>) -> String {
        format!("backoffsim plot attempts {}{} --from 5s --to 30s -o herd.png", r.dir, r.cell)
    }
}

/// Bars a panel draws at most; finer bins are merged (and the axis says so).
const MAX_BARS: usize = 500;
/// Panels one figure shows; past that it says what it left out.
const MAX_PANELS: usize = 8;

pub(crate) struct AttemptsFigure {
    title: String,
    subtitle: String,
    legend: Vec<(Glyph, String)>,
    panels: Vec<Panel>,
    x: (f64, f64),
    y_max: f64,
    accepted_max: f64,
    /// Whether each panel has the strip of accepted attempts under it.
    strip: bool,
    y_desc: String,
    /// What the strip's scale counts, written in it: its axis has no room for the words.
    strip_note: String,
}

struct Panel {
    caption: String,
    /// (start, end, attempts, refused), means over replications.
    bars: Vec<(f64, f64, f64, f64)>,
    /// (start, end, attempts) where the server was down and silent: nothing accepted or
    /// refused, every attempt left to time out.
    silent: Vec<(f64, f64, f64)>,
    /// Down time and blackouts as drawn ([`bands::merged`]), and where a label names
    /// the server down.
    down: Vec<(f64, f64)>,
    down_labels: Vec<f64>,
    blackouts: Vec<(f64, f64)>,
}

/// What names the server's down time at the top of a panel.
const DOWN_LABEL: &str = " server down";

/// Whether the server is down at a time, from its down windows in order of their start
/// (as [`crate::data::CellFacts`] holds them; they may overlap): a binary search for the windows begun by then, and the latest
/// end among them, so each of hundreds of bars asks in logarithmic time.
fn down_lookup(down: &[Down]) -> impl Fn(f64) -> bool + '_ {
    let mut latest = f64::NEG_INFINITY;
    let ends: Vec<f64> = down
        .iter()
        .map(|d| {
            latest = latest.max(d.to);
            latest
        })
        .collect();
    move |t| {
        let begun = down.partition_point(|d| d.from <= t);
        begun > 0 && t < ends[begun - 1]
    }
}

pub(crate) fn figure(data: &RunSet, opts: &PlotOptions) -> Result<AttemptsFigure, ReportError> {
    let rows = data.attempts.as_deref().unwrap_or(&[]);
    let mut row_variants: Vec<&str> = Vec::new();
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    let mut has: BTreeSet<(&str, &[String])> = BTreeSet::new();
    for r in rows {
        backoffsim_core::run::interrupt::check()?;
        if seen.insert(&r.variant) {
            row_variants.push(&r.variant);
        }
        has.insert((r.variant.as_str(), r.point.as_slice()));
    }
    let mut chosen = series(data, opts, &row_variants, &|v, p| has.contains(&(v, p)))?;
    if chosen.is_empty() {
        return Err(ReportError::Missing(format!("attempts.csv has no rows for variant {}", opts.variants.join(", "))));
    }
    let total_series = chosen.len();
    chosen.truncate(MAX_PANELS);
    let width = rows.iter().map(|r| r.bin_width).filter(|w| *w > 0.0).fold(f64::MAX, f64::min);
    if width == f64::MAX {
        return Err(ReportError::Missing("attempts.csv has no bin with a positive width".into()));
    }
    let first = rows.iter().map(|r| r.bin_start).fold(f64::MAX, f64::min);
    let last = rows.iter().map(|r| r.bin_start + r.bin_width).fold(f64::MIN, f64::max);
    let x0 = opts.from.unwrap_or(first.min(0.0));
    let end = opts.to.unwrap_or(data.horizon_s().unwrap_or(last).max(last));
    let active = active_until(data, rows, &chosen)?;
    let trimmed = if opts.to.is_some() { None } else { trim(x0, end, active.min(end), width) };
    let x1 = trimmed.map_or(end, |t| t.axis_end);
    let bins_in_window = ((x1 - x0) / width).ceil().max(1.0) as usize;
    let merge = bins_in_window.div_ceil(MAX_BARS).max(1);
    let bar = width * merge as f64;

    let mut panels = Vec::new();
    let (mut y_max, mut accepted_max): (f64, f64) = (0.0, 0.0);
    let mut reps_seen = BTreeSet::new();
    let mut drops = false;
    for s in &chosen {
        backoffsim_core::run::interrupt::check()?;
        let (panel, peak, reps, drop) = panel(data, rows, s, (x0, x1), bar);
        reps_seen.insert(reps);
        y_max = y_max.max(peak);
        accepted_max = panel.bars.iter().map(|b| b.2 - b.3).fold(accepted_max, f64::max);
        drops |= drop;
        panels.push(panel);
    }
    // The strip of accepted attempts earns its place only where they would hardly show
    // in the main chart.
    let strip = accepted_max > 0.0 && accepted_max < 0.25 * y_max;
    let legend = legend(&panels, drops, strip);
    let shown = (chosen.len(), total_series);
    let subtitle = subtitle(data, &reps_seen, (merge, width, bar), trimmed.as_ref().map(|t| (t, end)), shown);
    Ok(AttemptsFigure {
        title: format!("Connection attempts at the server per {}", fmt_secs(bar)),
        subtitle,
        legend,
        panels,
        x: (x0, x1),
        y_max: if y_max > 0.0 { y_max * 1.08 } else { 1.0 },
        accepted_max: if accepted_max > 0.0 { accepted_max * 1.1 } else { 1.0 },
        strip,
        y_desc: format!("attempts per {}", fmt_secs(bar)),
        strip_note: format!("accepted per {}, on this strip's own scale", fmt_secs(bar)),
    })
}

/// The last attempt, down time or blackout of the panels drawn: a time axis given with
/// --to is the user's; otherwise one whose last stretch is empty is trimmed.
fn active_until(data: &RunSet, rows: &[AttemptRow], chosen: &[super::Series]) -> Result<f64, ReportError> {
    let mut active = f64::MIN;
    for s in chosen {
        backoffsim_core::run::interrupt::check()?;
        let facts = data.facts(&s.variant, &s.point);
        let bands = facts.down.iter().map(|d| d.to).chain(facts.blackouts.iter().map(|b| b.1));
        active = bands.fold(active, f64::max);
    }
    for r in rows.iter().filter(|r| r.attempts > 0.0) {
        if chosen.iter().any(|s| s.variant == r.variant && s.point == r.point) {
            active = active.max(r.bin_start + r.bin_width);
        }
    }
    Ok(active)
}

/// The panel of series `s`: its bars of `bar` seconds between `x0` and `x1`, averaged
/// over replications, and its bands; with its tallest bar, its count of replications
/// and whether its server drops attempts when the queue is full.
fn panel(data: &RunSet, rows: &[AttemptRow], s: &super::Series, (x0, x1): (f64, f64), bar: f64) -> (Panel, f64, usize, bool) {
    let mine: Vec<_> = rows.iter().filter(|r| r.variant == s.variant && r.point == s.point).collect();
    let reps: BTreeSet<u32> = mine.iter().map(|r| r.replication).collect();
    let n = reps.len() as f64;
    // Sum each merged bar over bins and replications, then divide by replications.
    let mut sums: BTreeMap<i64, (f64, f64)> = BTreeMap::new();
    for r in &mine {
        let mid = r.bin_start + r.bin_width / 2.0;
        if mid < x0 || mid > x1 {
            continue;
        }
        let k = ((r.bin_start - x0) / bar + 1e-9).floor() as i64;
        let e = sums.entry(k).or_default();
        e.0 += r.attempts;
        e.1 += r.refused;
    }
    let all_bars: Vec<(f64, f64, f64, f64)> = sums
        .iter()
        .filter(|(_, (a, _))| *a > 0.0)
        .map(|(&k, &(a, f))| {
            let s = x0 + k as f64 * bar;
            (s, s + bar, a / n, f / n)
        })
        .collect();
    let peak = all_bars.iter().map(|b| b.2).fold(0.0, f64::max);
    let total: f64 = all_bars.iter().map(|b| b.2).sum();
    let refused: f64 = all_bars.iter().map(|b| b.3).sum();
    let facts = data.facts(&s.variant, &s.point);
    let down_at = down_lookup(&facts.down);
    let silent_at = |b: &(f64, f64, f64, f64)| facts.down_silent && down_at((b.0 + b.1) / 2.0);
    let (silent, bars): (Vec<_>, Vec<_>) = all_bars.into_iter().partition(silent_at);
    let silent = silent.into_iter().map(|(a, b, att, _)| (a, b, att)).collect();
    let desc = data.variant(&s.variant).map(|v| v.description.as_str()).unwrap_or("");
    let stats = format!(
        "peak {} per {}, {} in all, {} refused",
        fmt_num(peak, 3),
        fmt_secs(bar),
        fmt_num(total, 4),
        fmt_num(refused, 4)
    );
    let caption =
        if desc.is_empty() { format!("{} ({stats})", s.label) } else { format!("{} ({stats}): {desc}", s.label) };
    let down = bands::merged(facts.down.iter().map(|d| (d.from, d.to)), (x0, x1));
    let width = super::text_width(DOWN_LABEL, 12);
    let labels = bands::labelled(&down, |d| d.0, |_| width, (x0, x1));
    let down_labels = down.iter().zip(labels).filter_map(|(d, l)| l.then_some(d.0)).collect();
    let blackouts = bands::merged(facts.blackouts.iter().copied(), (x0, x1));
    let panel = Panel { caption, bars, silent, down, down_labels, blackouts };
    (panel, peak, reps.len(), facts.overload_drops)
}

/// The legend: the accepted bars always (saying where the strip shows them alone), each
/// other mark only where some panel has it.
fn legend(panels: &[Panel], drops: bool, strip: bool) -> Vec<(Glyph, String)> {
    let accepted = match (drops, strip) {
        (false, false) => "accepted",
        (false, true) => "accepted (also alone, on its own scale, under each panel)",
        (true, false) => "accepted, or dropped by the full queue",
        (true, true) => "accepted, or dropped by the full queue (also alone, on its own scale, under each panel)",
    };
    let mut legend = vec![(Glyph::Band(ACCEPTED), accepted.to_string())];
    if panels.iter().any(|p| p.bars.iter().any(|b| b.3 > 0.0)) {
        legend.push((Glyph::Band(REFUSED), "refused".to_string()));
    }
    if panels.iter().any(|p| !p.silent.is_empty()) {
        legend.push((Glyph::Band(UNANSWERED), "unanswered (the server is down and silent)".into()));
    }
    if panels.iter().any(|p| !p.down.is_empty()) {
        legend.push((Glyph::Band(DOWN), "server down".into()));
    }
    if panels.iter().any(|p| !p.blackouts.is_empty()) {
        legend.push((Glyph::Band(BLACKOUT), "path blackout".into()));
    }
    legend
}

/// The scenario, how the bars average replications and merge bins, and where the axis
/// was trimmed and panels left out.
fn subtitle(
    data: &RunSet,
    reps_seen: &BTreeSet<usize>,
    (merge, width, bar): (usize, f64, f64),
    trimmed: Option<(&Trimmed, f64)>,
    (shown, total_series): (usize, usize),
) -> String {
    let mut subtitle = format!("{} · {}", super::scenarios(data), super::replications_text(reps_seen));
    if merge > 1 {
        subtitle.push_str(&format!(" · {} bins of {} merged into bars of {}", merge, fmt_secs(width), fmt_secs(bar)));
    }
    if let Some((t, end)) = trimmed {
        // In seconds, as the time axis counts.
        let s = |x: f64| format!("{} s", fmt_num(x, 4));
        subtitle.push_str(&format!(
            " · time axis trimmed at {} of {}: nothing after {}",
            s(t.axis_end),
            s(end),
            s(t.active_until)
        ));
    }
    if let Some(note) = omitted_note(shown, total_series, "panels") {
        subtitle.push_str(&format!(" · {note}"));
    }
    subtitle
}

/// Where a time axis was cut short of the end.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Trimmed {
    /// The time of the last attempt, down time or blackout.
    active_until: f64,
    /// Where the axis ends: a little after that, on a bin's edge.
    axis_end: f64,
}

/// The axis `[x0, x1)` trimmed to a tenth past the last activity, when that cuts at
/// least a fifth of it: a 10-minute run whose herd is over at 140 s would otherwise
/// draw it in the first quarter of the width and leave the rest blank.
fn trim(x0: f64, x1: f64, active_until: f64, bin: f64) -> Option<Trimmed> {
    if active_until.is_nan() || active_until <= x0 {
        return None;
    }
    let after = active_until + 0.1 * (active_until - x0);
    let axis_end = x0 + ((after - x0) / bin).ceil() * bin;
    (axis_end <= x0 + 0.8 * (x1 - x0)).then_some(Trimmed { active_until, axis_end })
}

impl Figure for AttemptsFigure {
    fn size(&self) -> (u32, u32) {
        stacked_size(&self.subtitle, &self.legend, self.panels.len(), self.panel_height(), BOTTOM_EXTRA)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let body = header(root, &self.title, &self.subtitle, &self.legend)?;
        let n = self.panels.len();
        let heights = panel_heights(n, self.panel_height(), BOTTOM_EXTRA);
        for (i, (area, p)) in stack_heights(&body, &heights).iter().zip(&self.panels).enumerate() {
            super::stop()?;
            let last = i + 1 == n;
            if self.strip {
                let (main, strip) = area.split_vertically(MAIN_HEIGHT);
                self.draw_main(&main, p, None)?;
                self.draw_strip(&strip, p, last)?;
            } else {
                self.draw_main(area, p, Some(last))?;
            }
        }
        Ok(())
    }
}

impl AttemptsFigure {
    fn panel_height(&self) -> u32 {
        MAIN_HEIGHT + AXIS + if self.strip { STRIP_HEIGHT } else { 0 }
    }

    /// The chart of all attempts; `axis` is `Some(last panel?)` when it carries the time
    /// axis itself (no strip under it).
    fn draw_main<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        p: &Panel,
        axis: Option<bool>,
    ) -> Result<(), String> {
        let mut chart = captioned(area, &p.caption)
            .x_label_area_size(time_axis_room(axis))
            .build_cartesian_2d(self.x.0..self.x.1, 0.0..self.y_max)
            .d()?;
        mesh(&mut chart, if axis == Some(true) { "time (s)" } else { "" }, &self.y_desc, &tick, &tick)?;
        self.shade(&mut chart, p, self.y_max)?;
        if axis.is_some() {
            let label = TextStyle::from((FONT, 12)).color(&MUTED).pos(Pos::new(HPos::Left, VPos::Top));
            chart
                .draw_series(p.down_labels.iter().map(|&a| Text::new(DOWN_LABEL, (a, self.y_max), label.clone())))
                .d()?;
        }
        chart
            .draw_series(p.silent.iter().map(|&(a, b, att)| Rectangle::new([(a, 0.0), (b, att)], UNANSWERED.filled())))
            .d()?;
        chart
            .draw_series(p.bars.iter().map(|&(a, b, att, _)| Rectangle::new([(a, 0.0), (b, att)], REFUSED.filled())))
            .d()?;
        chart
            .draw_series(p.bars.iter().map(|&(a, b, att, refused)| {
                Rectangle::new([(a, 0.0), (b, (att - refused).max(0.0))], ACCEPTED.filled())
            }))
            .d()?;
        Ok(())
    }

    /// The accepted attempts alone, on a scale of their own, carrying the time axis.
    fn draw_strip<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        p: &Panel,
        last: bool,
    ) -> Result<(), String> {
        let mut chart = aligned(area)
            .margin_top(4)
            .x_label_area_size(time_axis_room(Some(last)))
            .build_cartesian_2d(self.x.0..self.x.1, 0.0..self.accepted_max)
            .d()?;
        mesh_with(&mut chart, if last { "time (s)" } else { "" }, "accepted", &tick, &tick, 2)?;
        self.shade(&mut chart, p, self.accepted_max)?;
        // Nothing is accepted while the server is down, so the strip has room for the word.
        let label = TextStyle::from((FONT, 12)).color(&MUTED).pos(Pos::new(HPos::Center, VPos::Center));
        let width = super::text_width("server down", 12) as i32 + 4;
        for &(a, b) in &p.down {
            let (left, _) = chart.backend_coord(&(a, 0.0));
            let (right, _) = chart.backend_coord(&(b, 0.0));
            if right - left >= width {
                let mid = ((a + b) / 2.0, self.accepted_max / 2.0);
                chart.draw_series(std::iter::once(Text::new("server down", mid, label.clone()))).d()?;
            }
        }
        chart
            .draw_series(p.bars.iter().map(|&(a, b, att, refused)| {
                Rectangle::new([(a, 0.0), (b, (att - refused).max(0.0))], ACCEPTED.filled())
            }))
            .d()?;
        let note = TextStyle::from((FONT, 12)).color(&MUTED).pos(Pos::new(HPos::Right, VPos::Top));
        let at = (self.x.1 - 0.005 * (self.x.1 - self.x.0), self.accepted_max);
        chart.draw_series(std::iter::once(Text::new(self.strip_note.clone(), at, note))).d()?;
        Ok(())
    }

    fn shade<DB: DrawingBackend>(
        &self,
        chart: &mut ChartContext<
            '_,
            DB,
            Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
        >,
        p: &Panel,
        top: f64,
    ) -> Result<(), String> {
        chart
            .draw_series(p.blackouts.iter().map(|&(a, b)| Rectangle::new([(a, 0.0), (b, top)], BLACKOUT.filled())))
            .d()?;
        chart.draw_series(p.down.iter().map(|&(a, b)| Rectangle::new([(a, 0.0), (b, top)], DOWN.filled()))).d()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{AttemptRow, RunInfo, VariantInfo};

    #[test]
    fn an_axis_whose_end_is_empty_is_trimmed_a_tenth_past_the_last_activity() {
        // A 10-minute horizon whose activity ends at 140 s: the axis ends at 154 s.
        assert_eq!(trim(0.0, 600.0, 140.0, 1.0), Some(Trimmed { active_until: 140.0, axis_end: 154.0 }));
        // On a bin's edge: 154 s rounds up to the 5 s bins' 155 s.
        assert_eq!(trim(0.0, 600.0, 140.0, 5.0).map(|t| t.axis_end), Some(155.0));
        // Activity up to near the end, or none at all: the whole axis.
        assert_eq!(trim(0.0, 600.0, 500.0, 1.0), None);
        assert_eq!(trim(0.0, 600.0, f64::MIN, 1.0), None);
    }

    fn run_set(bins: &[(f64, f64)]) -> RunSet {
        let attempts = bins
            .iter()
            .map(|&(start, n)| AttemptRow {
                variant: "v".into(),
                point: Vec::new(),
                replication: 0,
                bin_start: start,
                bin_width: 0.125,
                attempts: n,
                refused: 0.0,
            })
            .collect();
        RunSet {
            runs: vec![RunInfo {
                scenario: "s".into(),
                horizon: "10min".into(),
                horizon_s: Some(600.0),
                ..Default::default()
            }],
            variants: vec![VariantInfo { name: "v".into(), ..Default::default() }],
            attempts: Some(attempts),
            ..Default::default()
        }
    }

    #[test]
    fn the_title_states_the_bar_width_drawn_and_the_subtitle_where_the_axis_was_trimmed() {
        let data = run_set(&[(0.0, 5.0), (139.875, 2.0)]);
        let f = figure(&data, &PlotOptions::default()).unwrap();
        // 125 ms bins up to 154 s are 1232 bins: merged by 3 into 375 ms bars (at most 500).
        assert_eq!(f.title, "Connection attempts at the server per 375 ms");
        assert_eq!(f.y_desc, "attempts per 375 ms");
        assert!(f.strip_note.starts_with("accepted per 375 ms"), "{}", f.strip_note);
        assert!(f.subtitle.contains("3 bins of 125 ms merged into bars of 375 ms"), "{}", f.subtitle);
        assert_eq!(f.x.1, 154.0);
        assert!(f.subtitle.contains("time axis trimmed at 154 s of 600 s: nothing after 140 s"), "{}", f.subtitle);
        // An axis the user bounded is kept.
        let opts = PlotOptions { to: Some(600.0), ..PlotOptions::default() };
        let f = figure(&data, &opts).unwrap();
        assert_eq!(f.x.1, 600.0);
        assert!(!f.subtitle.contains("trimmed"), "{}", f.subtitle);
    }
}
