//! The RTO figure of one connection read from a packet capture: the estimator's lines
//! and samples as for a simulated connection, and over them what the capture measured
//! against what the profile's timer would have done. Each retransmission the sender's
//! timer drove is drawn at the time it waited (since the timer was armed, or since the
//! retransmission before); each expiry of the profile's timer in the same silence at its
//! own interval. A sender that waited 1.1 s where the profile's timer said 0.3 s shows as
//! a triangle high above a cross.
//!
//! A capture can hold millions of ACKs, so the figure is gathered as the capture is
//! read, in memory that does not grow with it: the time axis (known before the second
//! pass from the first) is cut into [`LINE_BUCKETS`] slices; a slice keeps the rows where
//! SRTT and RTO are first, lowest, highest and last in it (what [`thin_line`] keeps), and
//! points are kept one per cell of a grid of the slices by [`LEVELS`] levels of a log
//! scale: first in each cell, at its true value. What a 1000-pixel figure shows is the
//! same; the memory is at most a few cells per slice and level.

use super::*;
use crate::plot::{Format, LINE_BUCKETS, encode};

/// Levels per decade of the points' grid, and the decades it spans (1 µs to 10⁴ s).
const PER_DECADE: f64 = 40.0;
const LEVELS: usize = 400;
const FLOOR_S: f64 = 1e-6;

/// Columns of the kernel's polls across the time axis.
const KERNEL_COLUMNS: usize = 100;

/// A point's level on the grid's log scale.
fn level(v: f64) -> usize {
    let l = ((v.max(FLOOR_S) / FLOOR_S).log10() * PER_DECADE).floor();
    (l.max(0.0) as usize).min(LEVELS - 1)
}

/// One kept row: its place in the capture's order (to sort and to drop repeats), the
/// event and the estimator's state after it.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Kept {
    seq: u64,
    time: f64,
    event: TraceEvent,
    sample: Option<f64>,
    srtt: Option<f64>,
    rto: f64,
}

/// The rows a slice keeps for the lines.
#[derive(Clone, Copy, Debug, Default)]
struct Slice {
    first: Option<Kept>,
    last: Option<Kept>,
    srtt_lo: Option<Kept>,
    srtt_hi: Option<Kept>,
    rto_lo: Option<Kept>,
    rto_hi: Option<Kept>,
    /// The first timeout and the first retransmission in it: marks closer together than
    /// a slice cover one another.
    timeout: Option<Kept>,
    retransmit: Option<Kept>,
}

/// Points on the grid of slices by levels, first in each cell.
#[derive(Clone, Debug)]
struct Grid {
    taken: Vec<u64>,
    points: Vec<(f64, f64)>,
}

impl Grid {
    fn new() -> Grid {
        Grid { taken: vec![0; (LINE_BUCKETS * LEVELS).div_ceil(64)], points: Vec::new() }
    }

    /// Keeps the point if its cell is free; says whether it did.
    fn add(&mut self, slice: usize, t: f64, v: f64) -> bool {
        let cell = slice * LEVELS + level(v);
        let (word, bit) = (cell / 64, 1u64 << (cell % 64));
        if self.taken[word] & bit != 0 {
            return false;
        }
        self.taken[word] |= bit;
        self.points.push((t, v));
        true
    }
}

/// One captured connection's figure, gathered row by row.
#[derive(Clone, Debug)]
pub struct CaptureTrace {
    span: f64,
    seq: u64,
    slices: Vec<Slice>,
    samples: Grid,
    /// Sample rows kept by `samples`, with the state they carry.
    sample_rows: Vec<Kept>,
    /// Every sample's level, for the y axis's percentiles.
    histogram: Vec<u64>,
    waited: Grid,
    expiries: Grid,
    kernel: Grid,
}

impl CaptureTrace {
    /// A figure of a connection that lasts `span_s` seconds from its first packet.
    pub fn new(span_s: f64) -> CaptureTrace {
        CaptureTrace {
            span: span_s.max(1e-3),
            seq: 0,
            slices: vec![Slice::default(); LINE_BUCKETS],
            samples: Grid::new(),
            sample_rows: Vec::new(),
            histogram: vec![0; LEVELS],
            waited: Grid::new(),
            expiries: Grid::new(),
            kernel: Grid::new(),
        }
    }

    fn slice(&self, t: f64) -> usize {
        ((t / self.span * LINE_BUCKETS as f64).floor().max(0.0) as usize).min(LINE_BUCKETS - 1)
    }

    /// A row of the replay: `event` at `t` seconds, with the RTT it sampled and the
    /// estimator's SRTT and RTO after it.
    pub fn row(&mut self, t: f64, event: TraceEvent, sample: Option<f64>, srtt: Option<f64>, rto: f64) {
        let k = Kept { seq: self.seq, time: t, event, sample, srtt, rto };
        self.seq += 1;
        let i = self.slice(t);
        if let Some(v) = sample {
            self.histogram[level(v)] += 1;
            if self.samples.add(i, t, v) {
                self.sample_rows.push(k);
            }
        }
        let s = &mut self.slices[i];
        s.first.get_or_insert(k);
        s.last = Some(k);
        let lower = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) => a < b,
            (None, Some(_)) => true,
            _ => false,
        };
        if s.srtt_lo.is_none_or(|o| lower(k.srtt, o.srtt)) {
            s.srtt_lo = Some(k);
        }
        if s.srtt_hi.is_none_or(|o| lower(o.srtt, k.srtt)) {
            s.srtt_hi = Some(k);
        }
        if s.rto_lo.is_none_or(|o| k.rto < o.rto) {
            s.rto_lo = Some(k);
        }
        if s.rto_hi.is_none_or(|o| k.rto > o.rto) {
            s.rto_hi = Some(k);
        }
        match event {
            TraceEvent::Timeout => _ = s.timeout.get_or_insert(k),
            TraceEvent::Retransmit => _ = s.retransmit.get_or_insert(k),
            _ => {}
        }
    }

    /// A retransmission the sender's timer drove, at `t`, after waiting `waited` seconds.
    pub fn waited(&mut self, t: f64, waited: f64) {
        let i = self.slice(t);
        self.waited.add(i, t, waited);
    }

    /// An expiry of the profile's timer at `t`, `interval` seconds after it was armed.
    pub fn expiry(&mut self, t: f64, interval: f64) {
        let i = self.slice(t);
        self.expiries.add(i, t, interval);
    }

    /// The kernel's own RTO at `t`, from a poll of `ss -ti` beside the capture.
    pub fn kernel(&mut self, t: f64, rto: f64) {
        // Polls come every few tens of milliseconds: rings that close would hide the RTO
        // line they are to be compared with, so one per hundredth of the axis.
        let i = self.slice(t) / (LINE_BUCKETS / KERNEL_COLUMNS);
        self.kernel.add(i, t, rto);
    }

    /// The rows kept, in the capture's order, as trace rows of one connection.
    fn rows(&self) -> Vec<TraceRow> {
        let mut kept: Vec<Kept> = self
            .slices
            .iter()
            .flat_map(|s| [s.first, s.srtt_lo, s.srtt_hi, s.rto_lo, s.rto_hi, s.timeout, s.retransmit, s.last])
            .flatten()
            .chain(self.sample_rows.iter().copied())
            .collect();
        kept.sort_by_key(|k| k.seq);
        kept.dedup_by_key(|k| k.seq);
        kept.into_iter()
            .map(|k| TraceRow {
                time: k.time,
                client: 0,
                variant: String::new(),
                point: Vec::new(),
                replication: 0,
                event: k.event.name().to_string(),
                // Kept by the slices for the lines only: the samples are `sample_rows`.
                sample: k.sample.filter(|_| self.sample_rows.binary_search_by_key(&k.seq, |r| r.seq).is_ok()),
                srtt: k.srtt,
                rto: Some(k.rto),
                cwnd: None,
                ssthresh: None,
                ca_state: None,
            })
            .collect()
    }

    /// The samples' 1st and 99th percentiles, as the edges of their levels (all of them
    /// when there are few).
    fn sample_extent(&self) -> Option<(f64, f64)> {
        let n: u64 = self.histogram.iter().sum();
        if n == 0 {
            return None;
        }
        let (a, b) = if n < 100 { (0, n - 1) } else { (n / 100, n - 1 - n / 100) };
        let at = |rank: u64| {
            let mut seen = 0;
            self.histogram.iter().position(|&c| {
                seen += c;
                seen > rank
            })
        };
        let edge = |l: usize| FLOOR_S * 10f64.powf(l as f64 / PER_DECADE);
        Some((edge(at(a)?), edge(at(b)? + 1)))
    }

    /// Draws the figure: `subtitle` names the capture, the connection and the profile,
    /// `caption` heads the panel (what it counts).
    pub fn render(&self, subtitle: &str, caption: &str, format: Format) -> Result<Vec<u8>, ReportError> {
        encode(&self.figure(subtitle, caption), format)
    }

    fn figure(&self, subtitle: &str, caption: &str) -> RtoFigure {
        let (x0, x1) = (0.0, self.span);
        let rows = self.rows();
        let refs: Vec<&TraceRow> = rows.iter().collect();
        let mut p = panel(&refs, x0, x1);
        // The strip shows every retransmission; the crosses are the profile's expiries,
        // not the rows the replay called timeouts.
        p.retransmits.extend(p.timeouts.iter().map(|t| t.0));
        p.retransmits.sort_by(f64::total_cmp);
        p.timeouts = self.expiries.points.clone();
        p.waited = self.waited.points.clone();
        p.kernel = self.kernel.points.clone();
        p.caption = caption.to_string();

        let lines =
            p.srtt.iter().flatten().chain(&p.rto).chain(&p.waited).chain(&p.timeouts).chain(&p.kernel).map(|q| q.1);
        let (mut lo, mut hi) =
            lines.filter(|v| *v > 0.0).fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(v), b.max(v)));
        if let Some((a, b)) = self.sample_extent() {
            lo = lo.min(a);
            hi = hi.max(b);
        }
        if lo > hi {
            (lo, hi) = (0.1, 1.0);
        }
        let log = spans_decades(lo, hi);
        let y = axis_range(lo, hi, log);
        let mut panels = vec![p];
        let clipped = fit_to_axes(&mut panels, (x0, x1), y, log);
        let mut legend = legend(&panels, (x0, x1));
        // The strip's row is labelled: its triangle needs no entry beside the stalls' own.
        legend.retain(|(glyph, _)| !matches!(glyph, Glyph::Triangle(_)));
        for (glyph, label) in &mut legend {
            if matches!(glyph, Glyph::Cross(_)) {
                *label = "the profile's timer would expire (at its interval)".into();
            }
        }
        if !panels[0].kernel.is_empty() {
            legend.push((Glyph::Ring(KERNEL), "the kernel's RTO (ss -ti)".into()));
        }
        if !panels[0].waited.is_empty() {
            legend.push((Glyph::Triangle(RETRANSMIT), "a stall's retransmission (at the time the sender waited)".into()));
        }
        let mut subtitle = subtitle.to_string();
        if log {
            subtitle.push_str(" · log scale: the RTO spans decades");
        }
        if clipped > 0 {
            subtitle.push_str(&format!(" · {} off the scale", plural(clipped, "sample")));
        }
        let rug = rug_rows(&panels);
        RtoFigure {
            title: "Retransmission timer of a captured connection: RTT samples, SRTT and RTO".into(),
            subtitle,
            legend,
            panels,
            x: (x0, x1),
            y,
            log,
            rug,
            cwnd: None,
        }
    }
}

#[cfg(test)]
mod tests;
