//! The look every plot shares, declared once: the figure's width and font, the ink and
//! grid colours, the series palette and the named colours and sizes each kind draws with.

use std::sync::Once;

use plotters::prelude::*;
use plotters::style::{FontStyle, register_font};

/// Figure width in pixels.
pub(crate) const WIDTH: u32 = 1000;

pub(crate) const FONT: &str = "sans-serif";
pub(crate) const INK: RGBColor = RGBColor(33, 33, 33);
pub(crate) const MUTED: RGBColor = RGBColor(100, 100, 100);
pub(crate) const GRID_BOLD: RGBColor = RGBColor(218, 218, 218);
pub(crate) const GRID_LIGHT: RGBColor = RGBColor(240, 240, 240);

/// Grey bands: time a server (or a provider) was down, a path's blackout in the RTO plot.
pub(crate) const DOWN: RGBColor = RGBColor(222, 222, 222);
/// Lilac bands: a path's blackout beside a server's down time, which is grey.
pub(crate) const BLACKOUT: RGBColor = RGBColor(232, 222, 242);
/// An alarm drawn over data: a monitor's alert threshold.
pub(crate) const ALARM: RGBColor = RGBColor(200, 0, 0);

/// The width of a panel's y tick labels, and the height of a shared time axis under the
/// panels with its label.
pub(crate) const Y_LABELS: u32 = 70;
pub(crate) const AXIS: u32 = 24;
/// The room the last of stacked panels takes for the shared x axis.
pub(crate) const BOTTOM_EXTRA: u32 = 22;
/// About the pixels a panel's time axis spans.
pub(crate) const PLOT_WIDTH: u32 = WIDTH - 110;

// The Okabe–Ito colours, distinguishable with the common colour-vision deficiencies.
pub(crate) const BLUE: RGBColor = RGBColor(0, 114, 178);
pub(crate) const VERMILLION: RGBColor = RGBColor(213, 94, 0);
pub(crate) const BLUISH_GREEN: RGBColor = RGBColor(0, 158, 115);
pub(crate) const REDDISH_PURPLE: RGBColor = RGBColor(204, 121, 167);
pub(crate) const ORANGE: RGBColor = RGBColor(230, 159, 0);
pub(crate) const SKY_BLUE: RGBColor = RGBColor(86, 180, 233);
pub(crate) const BLACK: RGBColor = RGBColor(0, 0, 0);

/// Colours for series (variants, sweep lines): Okabe–Ito, then a few more.
pub(crate) const PALETTE: [RGBColor; 10] = [
    BLUE,
    VERMILLION,
    BLUISH_GREEN,
    REDDISH_PURPLE,
    ORANGE,
    SKY_BLUE,
    BLACK,
    RGBColor(140, 86, 75),   // brown
    RGBColor(127, 127, 127), // grey
    RGBColor(188, 189, 34),  // olive
];

pub(crate) fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// Registers DejaVu Sans as plotters' `sans-serif` (regular and bold), once: plotters
/// measures text with it (both backends), and the PNG backend draws with it.
pub(crate) fn fonts() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        for (style, bytes) in [
            (FontStyle::Normal, dejavu::sans::regular()),
            (FontStyle::Bold, dejavu::sans::bold()),
            (FontStyle::Oblique, dejavu::sans::oblique()),
            (FontStyle::Italic, dejavu::sans::oblique()),
        ] {
            if register_font(FONT, style, bytes).is_err() {
                panic!("the DejaVu Sans font shipped in the dejavu crate is not a valid font");
            }
        }
    });
}

/// The RTO plot's marks and sizes.
pub(crate) mod rto {
    use super::*;

    pub(crate) const SAMPLE: RGBColor = RGBColor(150, 150, 150);
    pub(crate) const SRTT: RGBColor = BLUE;
    pub(crate) const RTO: RGBColor = VERMILLION;
    pub(crate) const TIMEOUT: RGBColor = RGBColor(190, 0, 0);
    pub(crate) const RETRANSMIT: RGBColor = RGBColor(120, 60, 170);
    pub(crate) const BLACKOUT: RGBColor = DOWN;
    pub(crate) const CHANGED: RGBColor = RGBColor(228, 244, 232);
    pub(crate) const PATH: RGBColor = RGBColor(0, 140, 90);
    /// Tail loss probes: told apart from retransmissions (purple triangles) by shape, hue
    /// and lightness, and in a row of their own.
    pub(crate) const PROBE: RGBColor = SKY_BLUE;
    /// Timeouts F-RTO undid (rings on the RTO line) and the abort (a vertical line).
    pub(crate) const UNDONE: RGBColor = INK;
    pub(crate) const ABORTED: RGBColor = INK;
    /// Zero-window probes, drawn at the persist timer's interval: a hue no line uses.
    pub(crate) const WINDOW_PROBE: RGBColor = REDDISH_PURPLE;
    /// The span while the receiver's window is zero, a bar in the strip (pale, like a band).
    pub(crate) const ZERO_WINDOW: RGBColor = RGBColor(250, 226, 160);
    pub(crate) const KEEPALIVE: RGBColor = RGBColor(140, 90, 40);
    pub(crate) const SYNACK: RGBColor = BLUISH_GREEN;
    pub(crate) const ICMP: RGBColor = ORANGE;
    /// The kernel's own RTO beside a capture (`ss -ti`): rings in ink over the RTO line,
    /// so that agreement shows as rings sitting on it.
    pub(crate) const KERNEL: RGBColor = INK;

    /// The congestion strip: the window in a hue no other line has (the abort's line is
    /// ink), the threshold dashed in the timeouts' red, fast recovery shaded lilac and
    /// loss recovery a pale red.
    pub(crate) const CWND: RGBColor = BLUISH_GREEN;
    pub(crate) const SSTHRESH: RGBColor = TIMEOUT;
    pub(crate) const RECOVERY: RGBColor = RGBColor(226, 214, 244);
    pub(crate) const LOSS: RGBColor = RGBColor(250, 208, 202);

    pub(crate) const PANEL_HEIGHT: u32 = 250;
    /// Added to the height of a panel with a congestion window for its strip.
    pub(crate) const CWND_STRIP: u32 = 84;
    pub(crate) const BOTTOM_EXTRA: u32 = 20;
    /// The height of the retransmissions strip.
    pub(crate) const STRIP: u32 = 18;
}

/// The attempts plot's bars and sizes.
pub(crate) mod attempts {
    use super::*;

    pub(crate) const ACCEPTED: RGBColor = BLUE;
    pub(crate) const UNANSWERED: RGBColor = RGBColor(120, 120, 120);
    pub(crate) const REFUSED: RGBColor = VERMILLION;
    /// The chart of all attempts and the strip of accepted ones under it.
    pub(crate) const MAIN_HEIGHT: u32 = 190;
    pub(crate) const STRIP_HEIGHT: u32 = 62;
}

/// The load plot's lines and sizes.
pub(crate) mod load {
    use super::*;

    pub(crate) const OFFERED: RGBColor = VERMILLION;
    pub(crate) const GOODPUT: RGBColor = BLUE;
    pub(crate) const CAPACITY: RGBColor = INK;
    pub(crate) const RETRY: RGBColor = RGBColor(136, 34, 85);
    pub(crate) const WASTED: RGBColor = RGBColor(166, 212, 240);
    pub(crate) const QUEUE: RGBColor = SKY_BLUE;
    pub(crate) const BROWNOUT: RGBColor = RGBColor(253, 236, 178);
    pub(crate) const MAIN_HEIGHT: u32 = 200;
    pub(crate) const STRIP_HEIGHT: u32 = 86;
    /// The narrowest bin drawn as a step, in pixels.
    pub(crate) const MIN_STEP_PX: f64 = 4.0;
}

/// The CDF plot's sizes.
pub(crate) mod cdf {
    pub(crate) const PANEL_HEIGHT: u32 = 330;
    pub(crate) const COLUMN_WIDTH: u32 = 440;
}

/// The sweep plot's sizes.
pub(crate) mod sweep {
    use super::*;

    pub(crate) const PANEL_HEIGHT: u32 = 320;
    pub(crate) const FOOTER_HEIGHT: u32 = 28;
    pub(crate) const SINGLE_HEIGHT: u32 = 460;
    /// The legend's swatch of a confidence band.
    pub(crate) const BAND: RGBColor = RGBColor(205, 205, 205);
}

/// The heatmap's sizes.
pub(crate) mod heatmap {
    pub(crate) const ROW_HEIGHT: u32 = 300;
    pub(crate) const SCALE_WIDTH: u32 = 96;
}

/// The delays plot's marks and size.
pub(crate) mod delays {
    use super::*;

    pub(crate) const PANEL_HEIGHT: u32 = 440;
    pub(crate) const RANGE: RGBColor = BLUE;
    pub(crate) const MEDIAN: RGBColor = INK;
    pub(crate) const NOMINAL: RGBColor = BLUISH_GREEN;
    pub(crate) const CAP: RGBColor = VERMILLION;
}
