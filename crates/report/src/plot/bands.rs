//! Shaded spans of time behind a panel (blackouts, the server's down time, brownouts,
//! a changed path RTT) as they are drawn: spans closer together than half a pixel are
//! one band, which looks the same, and a band is labelled only where its label does not
//! run into the one before. A path with 100,000 blackouts then draws a few thousand
//! bands and a readable row of labels, not 100,000 of each.

use super::LINE_BUCKETS;

/// The width of a panel's plotting area in pixels: the figure less the y labels and
/// margins every panel has.
pub(crate) use super::style::PLOT_WIDTH;

/// `spans` within `[x0, x1]`, clipped to it, in order of their start, with spans that
/// overlap, touch or lie less than one of [`LINE_BUCKETS`] slices of the window apart
/// merged into one. A span that lies outside the window is left out.
pub(crate) fn merged(spans: impl IntoIterator<Item = (f64, f64)>, (x0, x1): (f64, f64)) -> Vec<(f64, f64)> {
    let mut inside: Vec<(f64, f64)> =
        spans.into_iter().filter(|(a, b)| *b > x0 && *a < x1).map(|(a, b)| (a.max(x0), b.min(x1))).collect();
    // Stable, and a no-op on the time-ordered schedules a run writes.
    inside.sort_by(|p, q| p.0.total_cmp(&q.0));
    let close = (x1 - x0) / LINE_BUCKETS as f64;
    let mut out: Vec<(f64, f64)> = Vec::with_capacity(inside.len().min(LINE_BUCKETS));
    for (a, b) in inside {
        match out.last_mut() {
            Some(last) if a - last.1 < close => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

/// Pixels kept clear after a label, so that two labels never read as one word.
const LABEL_GAP: u32 = 6;

/// Which of `bands` (in order of their start) get a label at their left edge: the
/// first, then each that starts clear of the last label drawn, `width` giving a
/// band's label width in pixels (asked only of the bands that could get one). `x` is
/// the window the panel's `PLOT_WIDTH` pixels show.
pub(crate) fn labelled<T>(
    bands: &[T],
    start: impl Fn(&T) -> f64,
    width: impl Fn(&T) -> u32,
    (x0, x1): (f64, f64),
) -> Vec<bool> {
    let per_pixel = (x1 - x0) / f64::from(PLOT_WIDTH);
    let mut free_from = f64::NEG_INFINITY;
    bands
        .iter()
        .map(|b| {
            let at = start(b);
            if at < free_from {
                return false;
            }
            free_from = at + f64::from(width(b) + LABEL_GAP) * per_pixel;
            true
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_apart_are_kept_and_spans_within_half_a_pixel_merge() {
        let window = (0.0, 100.0);
        // A slice of the window is 0.05: 0.04 apart merges, 0.06 apart does not.
        let spans = [(10.0, 20.0), (20.04, 30.0), (30.06, 31.0), (50.0, 60.0), (55.0, 58.0)];
        assert_eq!(merged(spans, window), [(10.0, 30.0), (30.06, 31.0), (50.0, 60.0)]);
        // Clipped to the window; outside it, left out.
        assert_eq!(merged([(-5.0, 5.0), (99.0, 120.0), (150.0, 160.0)], window), [(0.0, 5.0), (99.0, 100.0)]);
        // Out of order, as a hand-edited manifest may have them.
        assert_eq!(merged([(50.0, 60.0), (10.0, 20.0)], window), [(10.0, 20.0), (50.0, 60.0)]);
    }

    #[test]
    fn a_hundred_thousand_spans_draw_as_at_most_a_band_per_slice() {
        // A blackout of 0.1 s every second for 100,000 s: a slice is 50 s wide.
        let spans = (0..100_000).map(|i| (f64::from(i), f64::from(i) + 0.1));
        let bands = merged(spans, (0.0, 100_000.0));
        assert_eq!(bands, [(0.0, 99_999.1)]);
        // Every 100 s over the same window: each one apart, none merged.
        let spans = (0..1000).map(|i| (f64::from(i) * 100.0, f64::from(i) * 100.0 + 0.1));
        assert_eq!(merged(spans, (0.0, 100_000.0)).len(), 1000);
    }

    #[test]
    fn labels_are_drawn_only_clear_of_the_last_one() {
        // 890 pixels over 89 s: a pixel is 0.1 s, a 30-pixel label 3 s.
        let window = (0.0, f64::from(PLOT_WIDTH) / 10.0);
        // A label and its gap are 36 pixels, 3.6 s.
        let starts = [1.0, 2.0, 4.5, 4.7, 8.5, 50.0];
        let asked = std::cell::Cell::new(0);
        let width = |_: &f64| {
            asked.set(asked.get() + 1);
            30
        };
        assert_eq!(labelled(&starts, |s| *s, width, window), [true, false, false, true, true, true]);
        assert_eq!(asked.get(), 4, "widths are asked of the labelled bands only");
    }
}
