//! `attempts`: connection attempts the server saw per time bin, accepted and refused
//! stacked, one panel per variant on a shared time axis and a shared scale, so a herd
//! and how jitter spreads it show at a glance. Bins are averaged over replications.

use std::collections::BTreeMap;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::FontStyle;

use super::{
    Drawn, FONT, Figure, Glyph, INK, PlotOptions, WIDTH, fit, fmt_num, fmt_secs, header, mesh, panel_heights,
    stack_heights, stacked_size, tick,
};
use crate::report::ReportError;
use crate::report::data::RunSet;

const ACCEPTED: RGBColor = RGBColor(0, 114, 178);
const REFUSED: RGBColor = RGBColor(213, 94, 0);
const BLACKOUT: RGBColor = RGBColor(222, 222, 222);
const PANEL_HEIGHT: u32 = 200;
const BOTTOM_EXTRA: u32 = 22;
/// Bars a panel draws at most; finer bins are merged (and the axis says so).
const MAX_BARS: usize = 500;

pub(crate) struct AttemptsFigure {
    title: String,
    subtitle: String,
    legend: Vec<(Glyph, String)>,
    panels: Vec<Panel>,
    x: (f64, f64),
    y_max: f64,
    y_desc: String,
}

struct Panel {
    caption: String,
    /// (start, end, attempts, refused), means over replications.
    bars: Vec<(f64, f64, f64, f64)>,
    blackouts: Vec<(f64, f64)>,
}

pub(crate) fn figure(data: &RunSet, opts: &PlotOptions) -> Result<AttemptsFigure, ReportError> {
    let rows = data.attempts.as_deref().unwrap_or(&[]);
    let mut names: Vec<String> = data.variants.iter().map(|v| v.name.clone()).collect();
    for r in rows {
        if !names.contains(&r.variant) {
            names.push(r.variant.clone());
        }
    }
    names.retain(|n| (opts.variants.is_empty() || opts.variants.contains(n)) && rows.iter().any(|r| &r.variant == n));
    if names.is_empty() {
        return Err(ReportError::Missing(format!("attempts.csv has no rows for variant {}", opts.variants.join(", "))));
    }
    let width = rows.iter().map(|r| r.bin_width).filter(|w| *w > 0.0).fold(f64::MAX, f64::min);
    if width == f64::MAX {
        return Err(ReportError::Missing("attempts.csv has no bin with a positive width".into()));
    }
    let first = rows.iter().map(|r| r.bin_start).fold(f64::MAX, f64::min);
    let last = rows.iter().map(|r| r.bin_start + r.bin_width).fold(f64::MIN, f64::max);
    let x0 = opts.from.unwrap_or(first.min(0.0));
    let x1 = opts.to.unwrap_or(data.horizon_s().unwrap_or(last).max(last));
    let bins_in_window = ((x1 - x0) / width).ceil().max(1.0) as usize;
    let merge = bins_in_window.div_ceil(MAX_BARS).max(1);
    let bar = width * merge as f64;

    let mut panels = Vec::new();
    let mut y_max: f64 = 0.0;
    let mut reps_seen = std::collections::BTreeSet::new();
    for name in &names {
        let mine: Vec<_> = rows.iter().filter(|r| &r.variant == name).collect();
        let reps: std::collections::BTreeSet<u32> = mine.iter().map(|r| r.replication).collect();
        reps_seen.insert(reps.len());
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
        let bars: Vec<(f64, f64, f64, f64)> = sums
            .iter()
            .filter(|(_, (a, _))| *a > 0.0)
            .map(|(&k, &(a, f))| {
                let s = x0 + k as f64 * bar;
                (s, s + bar, a / n, f / n)
            })
            .collect();
        let peak = bars.iter().map(|b| b.2).fold(0.0, f64::max);
        let total: f64 = bars.iter().map(|b| b.2).sum();
        let refused: f64 = bars.iter().map(|b| b.3).sum();
        y_max = y_max.max(peak);
        let desc = data.variant(name).map(|v| v.description.as_str()).unwrap_or("");
        let stats = format!(
            "peak {} per {}, {} in all, {} refused",
            fmt_num(peak, 3),
            fmt_secs(bar),
            fmt_num(total, 4),
            fmt_num(refused, 4)
        );
        let caption = if desc.is_empty() { format!("{name} ({stats})") } else { format!("{name} ({stats}): {desc}") };
        let blackouts = data
            .variant(name)
            .map(|v| {
                v.blackouts.iter().filter(|(a, b)| *b > x0 && *a < x1).map(|(a, b)| (a.max(x0), b.min(x1))).collect()
            })
            .unwrap_or_default();
        panels.push(Panel { caption, bars, blackouts });
    }
    let reps_text = match reps_seen.len() {
        1 => match reps_seen.iter().next() {
            Some(1) => "one replication".to_string(),
            Some(n) => format!("mean of {n} replications"),
            None => String::new(),
        },
        _ => "mean over each variant's replications".to_string(),
    };
    let mut legend =
        vec![(Glyph::Band(ACCEPTED), "accepted".to_string()), (Glyph::Band(REFUSED), "refused".to_string())];
    if panels.iter().any(|p| !p.blackouts.is_empty()) {
        legend.push((Glyph::Band(BLACKOUT), "blackout".into()));
    }
    let scenario = data.runs.iter().map(|r| r.scenario.as_str()).collect::<Vec<_>>().join(" vs ");
    let merged = if merge > 1 {
        format!(" · {} bins of {} merged into bars of {}", merge, fmt_secs(width), fmt_secs(bar))
    } else {
        String::new()
    };
    Ok(AttemptsFigure {
        title: "Connection attempts at the server per time bin".into(),
        subtitle: format!("{scenario} · {reps_text}{merged}"),
        legend,
        panels,
        x: (x0, x1),
        y_max: if y_max > 0.0 { y_max * 1.08 } else { 1.0 },
        y_desc: format!("attempts per {}", fmt_secs(bar)),
    })
}

impl Figure for AttemptsFigure {
    fn size(&self) -> (u32, u32) {
        stacked_size(&self.subtitle, &self.legend, self.panels.len(), PANEL_HEIGHT, BOTTOM_EXTRA)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let body = header(root, &self.title, &self.subtitle, &self.legend)?;
        let n = self.panels.len();
        let heights = panel_heights(n, PANEL_HEIGHT, BOTTOM_EXTRA);
        let caption_style = TextStyle::from((FONT, 15, FontStyle::Bold).into_font()).color(&INK);
        for (i, (area, p)) in stack_heights(&body, &heights).iter().zip(&self.panels).enumerate() {
            let last = i + 1 == n;
            let mut chart = ChartBuilder::on(area)
                .margin_left(8)
                .margin_right(24)
                .margin_top(6)
                .caption(fit(&p.caption, 15, WIDTH - 40), caption_style.clone())
                .x_label_area_size(if last { 44 } else { 24 })
                .y_label_area_size(70)
                .build_cartesian_2d(self.x.0..self.x.1, 0.0..self.y_max)
                .d()?;
            mesh(&mut chart, if last { "time (s)" } else { "" }, &self.y_desc, &tick, &tick)?;
            chart
                .draw_series(
                    p.blackouts.iter().map(|&(a, b)| Rectangle::new([(a, 0.0), (b, self.y_max)], BLACKOUT.filled())),
                )
                .d()?;
            chart
                .draw_series(
                    p.bars.iter().map(|&(a, b, att, _)| Rectangle::new([(a, 0.0), (b, att)], REFUSED.filled())),
                )
                .d()?;
            chart
                .draw_series(p.bars.iter().map(|&(a, b, att, refused)| {
                    Rectangle::new([(a, 0.0), (b, (att - refused).max(0.0))], ACCEPTED.filled())
                }))
                .d()?;
        }
        Ok(())
    }
}
