//! `sweep`: a metric against the first swept parameter, a line per variant (and per
//! value of a second swept parameter) with its 95 % confidence band, or, when the swept
//! values are categories rather than numbers, a dot per variant with its interval as a
//! whisker: a line between categories would suggest values in between. One panel per
//! headline metric of the model (constant ones left out) unless `--metric` picks one.

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::{CoordTranslate, Shift};
use plotters::prelude::*;
use plotters::style::FontStyle;
use plotters::style::text_anchor::{HPos, Pos, VPos};

mod draw;

use super::{
    Drawn, FONT, Figure, Glyph, INK, PlotOptions, WIDTH, axis_range, color, fit, fmt_num, header, header_height,
    spans_decades, tick,
};
use super::style::sweep::*;
use backoffsim_core::engine::time::SimDuration;
use backoffsim_core::worlds::catalogue::{self, ModelId};
use std::collections::{BTreeMap, BTreeSet};

use crate::data::{RunSet, SummaryRow};
use crate::{Better, ReportError};

/// The values a swept parameter takes, in plotting order, and where they go on an axis.
#[derive(Clone, Debug)]
/// A metric against the swept parameter, a line per variant with its 95 % CI.
pub struct Sweep;

impl super::Plot for Sweep {
    const NAME: &'static str = "sweep";
    const ABOUT: &'static str = "A metric against the swept parameter, a line per variant with its 95 % CI";
    const PER_CELL: bool = false;
    type Figure = SweepFigure;

    fn missing(data: &RunSet) -> Option<String> {
        data.sweep_keys
            .is_empty()
            .then(|| "no sweep: summary.csv has no sweep-key columns (the scenario has no [sweep])".into())
    }

    fn figure(data: &RunSet, opts: &PlotOptions) -> Result<SweepFigure, ReportError> {
        figure(data, opts)
    }

    fn caption(data: &RunSet) -> Result<(String, String), backoffsim_core::run::interrupt::Interrupted> {
        Ok((
            "Metrics against the swept parameter".into(),
        format!(
                        "The model's headline metrics against `{}`, a line per variant{} with its 95 % \
                         confidence band (a dot with a whisker where the values are categories); metrics \
                         that do not vary are left out. `--metric` re-draws any metric.",
                        data.sweep_keys.first().cloned().unwrap_or_default(),
                        data.sweep_keys.get(1).map(|k| format!(" and value of `{k}`")).unwrap_or_default()
                    ),
        ))
    }

    fn redraw(r: &super::Redraw<'_>) -> String {
        format!("backoffsim plot sweep {} --metric {m} -o {m}.png", r.dir, m = r.metric)
    }
}

pub(crate) struct SweepAxis {
    pub key: String,
    pub labels: Vec<String>,
    /// Position of each label: its number (a duration in seconds), or its index when
    /// the values are not numbers.
    pub xs: Vec<f64>,
    pub numeric: bool,
    pub log: bool,
    /// Each label's place in `labels`: rows are placed by lookup, since an axis can have
    /// thousands of values.
    places: BTreeMap<String, usize>,
}

impl SweepAxis {
    /// The distinct values of sweep key `k` in `data`, numbers sorted ascending.
    pub fn of(data: &RunSet, k: usize) -> SweepAxis {
        let mut seen: BTreeSet<&str> = BTreeSet::new();
        let labels: Vec<String> =
            data.summary.iter().map(|r| &r.point[k]).filter(|l| seen.insert(l)).cloned().collect();
        let parsed: Vec<Option<f64>> = labels.iter().map(|l| number(l)).collect();
        let numeric = !labels.is_empty() && parsed.iter().all(Option::is_some);
        if numeric {
            let mut pairs: Vec<(f64, String)> = parsed.into_iter().flatten().zip(labels).collect();
            pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
            let xs: Vec<f64> = pairs.iter().map(|p| p.0).collect();
            let lo = xs.first().copied().unwrap_or(0.0);
            let hi = xs.last().copied().unwrap_or(1.0);
            let labels: Vec<String> = pairs.into_iter().map(|p| p.1).collect();
            SweepAxis {
                key: data.sweep_keys[k].clone(),
                places: places(&labels),
                labels,
                log: spans_decades(lo, hi) && xs.len() > 2,
                xs,
                numeric,
            }
        } else {
            SweepAxis {
                key: data.sweep_keys[k].clone(),
                xs: (0..labels.len()).map(|i| i as f64).collect(),
                places: places(&labels),
                labels,
                numeric,
                log: false,
            }
        }
    }

    /// Where `label` is in [`SweepAxis::labels`].
    pub fn position(&self, label: &str) -> Option<usize> {
        self.places.get(label).copied()
    }

    pub fn x_of(&self, label: &str) -> Option<f64> {
        self.position(label).map(|i| self.xs[i])
    }

    /// The axis range, with room around the first and last value.
    pub fn range(&self) -> (f64, f64) {
        let lo = self.xs.first().copied().unwrap_or(0.0);
        let hi = self.xs.last().copied().unwrap_or(1.0);
        if !self.numeric {
            (-0.5, self.xs.len() as f64 - 0.5)
        } else if self.log {
            (lo / 1.25, hi * 1.25)
        } else {
            let pad = ((hi - lo) * 0.05).max(if hi == lo { 1.0 } else { 0.0 });
            (lo - pad, hi + pad)
        }
    }
}

/// Each label's first place.
fn places(labels: &[String]) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for (i, l) in labels.iter().enumerate() {
        out.entry(l.clone()).or_insert(i);
    }
    out
}

/// A sweep value as a number: plain, or a duration in seconds.
fn number(s: &str) -> Option<f64> {
    let s = s.trim();
    s.parse::<f64>().ok().filter(|v| v.is_finite()).or_else(|| SimDuration::parse(s).ok().map(|d| d.as_secs_f64()))
}

pub(crate) struct SweepFigure {
    title: String,
    subtitle: String,
    legend: Vec<(Glyph, String)>,
    axis: SweepAxis,
    panels: Vec<Panel>,
    cols: usize,
    /// What the default choice of metrics left out and how to get any other.
    footer: String,
}

struct SeriesKey<'a> {
    variant: &'a str,
    second: Option<String>,
    colour: usize,
    /// Even: solid line and dots; odd: dashed line and triangles.
    style: usize,
}

/// x, mean and 95 % CI.
type SweepPoint = (f64, f64, Option<(f64, f64)>);

/// A line's colour index, style and points in x order.
type Series = (usize, usize, Vec<SweepPoint>);

struct Panel {
    caption: String,
    y_desc: String,
    series: Vec<Series>,
    y: (f64, f64),
    log: bool,
}

pub(crate) fn figure(data: &RunSet, opts: &PlotOptions) -> Result<SweepFigure, ReportError> {
    let Selection { metrics, models, footer } = chosen_metrics(data, opts, "sweep")?;
    let axis = SweepAxis::of(data, 0);
    let second = (data.sweep_keys.len() > 1).then(|| SweepAxis::of(data, 1));
    // Keys beyond the second are held at their first value.
    let fixed: Vec<(usize, String)> =
        (2..data.sweep_keys.len()).map(|k| (k, SweepAxis::of(data, k).labels[0].clone())).collect();
    let variants: Vec<&str> = data
        .variant_names()
        .into_iter()
        .filter(|n| opts.variants.is_empty() || opts.variants.iter().any(|v| v == n))
        .collect();
    let series_keys = series_keys(&variants, second.as_ref());
    let rows = rows_by(data);
    let mut panels = Vec::new();
    for (metric, unit) in &metrics {
        backoffsim_core::run::interrupt::check()?;
        let at = Placed { axis: &axis, fixed: &fixed };
        panels.extend(panel(&rows, &series_keys, at, (metric, unit), &models));
    }
    if panels.is_empty() {
        return Err(ReportError::Missing("summary.csv has no values to plot for the chosen variants".into()));
    }
    let legend = legend(&variants, &axis, second.as_ref());
    let scenario = super::scenarios(data);
    let mut subtitle = format!("{scenario} · x: {}", axis.key);
    if let Some(ax) = &second {
        subtitle.push_str(&format!(" · a {} per {}", if axis.numeric { "line" } else { "colour" }, ax.key));
    }
    for (k, v) in &fixed {
        subtitle.push_str(&format!(" · {}={v}", data.sweep_keys[*k]));
    }
    let cols = if panels.len() > 1 { 2 } else { 1 };
    Ok(SweepFigure {
        title: format!(
            "{} against {}",
            if metrics.len() == 1 { catalogue::title(&metrics[0].0, &models) } else { "Metrics".to_string() },
            axis.key
        ),
        subtitle,
        legend,
        axis,
        panels,
        cols,
        footer,
    })
}

/// The lines of a panel. Without a second key a line per variant, told apart by colour.
/// With one, the colour tells the second key's value and the line style the variant.
fn series_keys<'a>(variants: &[&'a str], second: Option<&SweepAxis>) -> Vec<SeriesKey<'a>> {
    let mut series_keys: Vec<SeriesKey> = Vec::new();
    for (vi, v) in variants.iter().enumerate() {
        match second {
            None => series_keys.push(SeriesKey { variant: v, second: None, colour: vi, style: 0 }),
            Some(ax) => {
                for (li, l) in ax.labels.iter().enumerate() {
                    series_keys.push(SeriesKey { variant: v, second: Some(l.clone()), colour: li, style: vi });
                }
            }
        }
    }
    series_keys
}

/// Where a summary row sits: its place on the x axis, and the keys beyond the second,
/// held at their first value.
#[derive(Clone, Copy)]
struct Placed<'a> {
    axis: &'a SweepAxis,
    fixed: &'a [(usize, String)],
}

/// The panel of `metric`: a line per series key with its interval, or `None` when no
/// series has a value.
fn panel(
    rows: &BTreeMap<(&str, &str), Vec<&SummaryRow>>,
    series_keys: &[SeriesKey<'_>],
    Placed { axis, fixed }: Placed<'_>,
    (metric, unit): (&String, &String),
    models: &[ModelId],
) -> Option<Panel> {
    let mut series = Vec::new();
    for key in series_keys {
        let (variant, second_value) = (&key.variant, &key.second);
        let mut pts: Vec<SweepPoint> = (rows.get(&(*variant, metric.as_str())).into_iter().flatten())
            .filter(|r| second_value.as_ref().is_none_or(|s| &r.point[1] == s))
            .filter(|r| fixed.iter().all(|(k, v)| &r.point[*k] == v))
            .filter_map(|r| Some((axis.x_of(&r.point[0])?, r.mean, r.ci)))
            .collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        if !pts.is_empty() {
            series.push((key.colour, key.style, pts));
        }
    }
    let vals = series.iter().flat_map(|(_, _, p)| {
        p.iter().flat_map(|&(_, m, ci)| [Some(m), ci.map(|c| c.0), ci.map(|c| c.1)].into_iter().flatten())
    });
    let (lo, hi) = vals.fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(v), b.max(v)));
    if lo > hi {
        return None;
    }
    let mean_lo = series.iter().flat_map(|(_, _, p)| p.iter().map(|q| q.1)).fold(f64::MAX, f64::min);
    let log = mean_lo > 0.0 && spans_decades(mean_lo, hi);
    let y = if log {
        axis_range(lo.max(mean_lo / 2.0), hi, true)
    } else {
        let (a, b) = axis_range(lo, hi, false);
        (a.min(lo), b)
    };
    let better = match catalogue::better(metric, models) {
        Some(Better::Lower) => " · lower is better",
        Some(Better::Higher) => " · higher is better",
        None => "",
    };
    let title = catalogue::title(metric, models);
    Some(Panel {
        caption: format!("{title}{better}{}", if log { " · log scale" } else { "" }),
        // The caption names the metric; the axis says what it is counted in.
        y_desc: match unit.as_str() {
            "" => metric.clone(),
            "s" => "seconds".to_string(),
            u => u.to_string(),
        },
        series,
        y,
        log,
    })
}

/// The legend: the colours (variants, or the second key's values) and line styles, the
/// interval's mark, and markers instead of lines where the values are categories.
fn legend(variants: &[&str], axis: &SweepAxis, second: Option<&SweepAxis>) -> Vec<(Glyph, String)> {
    let mut legend: Vec<(Glyph, String)> = match second {
        None => variants.iter().enumerate().map(|(i, v)| (Glyph::Line(color(i), 3), v.to_string())).collect(),
        Some(ax) => {
            let mut l: Vec<(Glyph, String)> = ax
                .labels
                .iter()
                .enumerate()
                .map(|(i, v)| (Glyph::Line(color(i), 3), format!("{}={v}", ax.key)))
                .collect();
            if variants.len() > 1 {
                l.extend(variants.iter().enumerate().map(|(i, v)| {
                    let g = if i % 2 == 0 { Glyph::Line(INK, 2) } else { Glyph::Dashed(INK) };
                    (g, v.to_string())
                }));
            }
            l
        }
    };
    legend.push(if axis.numeric {
        (Glyph::Band(BAND), "95 % confidence interval of the mean".to_string())
    } else {
        (Glyph::Line(super::MUTED, 1), "whisker: 95 % confidence interval of the mean".to_string())
    });
    if !axis.numeric {
        // Categories carry no lines, so the legend shows the markers.
        for (g, _) in legend.iter_mut() {
            if let Glyph::Line(c, 3) = *g {
                *g = Glyph::Dot(c);
            } else if let Glyph::Dashed(c) = *g {
                *g = Glyph::Triangle(c);
            }
        }
    }
    legend
}

/// The summary's rows of each (variant, metric), in the summary's order: a figure of a
/// line per variant looks up each line's rows instead of reading the whole summary.
pub(crate) fn rows_by(data: &RunSet) -> BTreeMap<(&str, &str), Vec<&SummaryRow>> {
    let mut out: BTreeMap<(&str, &str), Vec<&SummaryRow>> = BTreeMap::new();
    for r in &data.summary {
        out.entry((r.variant.as_str(), r.metric.as_str())).or_default().push(r);
    }
    out
}

/// The metrics a sweep or heatmap shows, and what the figure says about the choice.
pub(crate) struct Selection {
    /// `(id, unit)` in summary order.
    pub metrics: Vec<(String, String)>,
    /// The runs' models, for the metrics' titles.
    pub models: Vec<ModelId>,
    /// A line for under the figure: what the default choice left out; empty when the
    /// user named the metric.
    pub footer: String,
}

/// Where the metrics of a run are listed, when there are too many to show after a typo.
pub(crate) const NOT_IN_RUN: &str =
    "summary.csv has every metric the run wrote, `backoffsim metrics` what each measures";

/// The metrics to show: `--metric` (any metric, even a constant or internal one), or
/// by default the headline metrics of the runs' models that vary across the plot, so
/// the figure answers the model's question instead of listing every counter. Runs whose
/// metrics the catalogue does not know fall back to every varying metric, and a run
/// where nothing varies to every metric with a value: `run` must always get a picture.
pub(crate) fn chosen_metrics(data: &RunSet, opts: &PlotOptions, kind: &str) -> Result<Selection, ReportError> {
    let all = data.metrics();
    let models = crate::models(data);
    if let Some(m) = &opts.metric {
        let one = all.iter().find(|(n, _)| n == m).map(|x| vec![x.clone()]).ok_or_else(|| {
            let names = all.iter().map(|(n, _)| n.as_str());
            ReportError::Missing(backoffsim_core::suggest::unknown("metric", m, names, Some(NOT_IN_RUN)))
        })?;
        return Ok(Selection { metrics: one, models, footer: String::new() });
    }
    let shown = |v: &str| opts.variants.is_empty() || opts.variants.iter().any(|o| o == v);
    // Each metric's finite means over the variants shown, gathered in one pass.
    let mut means: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for r in data.summary.iter().filter(|r| r.mean.is_finite() && shown(&r.variant)) {
        means.entry(&r.metric).or_default().push(r.mean);
    }
    let values = |m: &str| -> &[f64] { means.get(m).map_or(&[], Vec::as_slice) };
    let entry = |m: &str| catalogue::find(m, &models);
    let with_values: Vec<(String, String)> =
        all.iter().filter(|(m, _)| !entry(m).is_some_and(|e| e.internal) && !values(m).is_empty()).cloned().collect();
    let varies = |m: &str| !constant(values(m));
    let headline = |m: &str| entry(m).is_some_and(|e| e.is_headline_for(&models));
    let mut head: Vec<(String, String)> =
        with_values.iter().filter(|(m, _)| headline(m) && varies(m)).cloned().collect();
    // In the catalogue's order, which groups related metrics (the give-up reasons).
    let rank = |m: &str| catalogue::CATALOGUE.iter().position(|e| entry(m).is_some_and(|f| std::ptr::eq(e, f)));
    head.sort_by_key(|(m, _)| rank(m));
    let how = format!("Any metric of summary.csv: backoffsim plot {kind} RUN_DIR --metric ID");
    if !head.is_empty() {
        let flat: Vec<String> = with_values
            .iter()
            .filter(|(m, _)| headline(m) && !varies(m))
            .map(|(m, _)| format!("{} ({})", catalogue::title(m, &models), fmt_num(values(m)[0], 4)))
            .collect();
        let flat = if flat.is_empty() { String::new() } else { format!(" Constant, not drawn: {}.", flat.join(", ")) };
        return Ok(Selection { metrics: head, models, footer: format!("The model's headline metrics.{flat} {how}.") });
    }
    let varying: Vec<(String, String)> = with_values.iter().filter(|(m, _)| varies(m)).cloned().collect();
    let metrics = [varying, with_values, all].into_iter().find(|v| !v.is_empty()).unwrap_or_default();
    Ok(Selection { metrics, models, footer: format!("{how}.") })
}

/// Whether every value is the same (up to rounding): such a metric's panel says nothing.
fn constant(values: &[f64]) -> bool {
    let (lo, hi) = values.iter().fold((f64::MAX, f64::MIN), |(a, b), &v| (a.min(v), b.max(v)));
    hi - lo <= 1e-12 * lo.abs().max(hi.abs())
}

#[cfg(test)]
pub(crate) mod tests;
