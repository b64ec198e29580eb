//! The timers besides the retransmission timer's: keepalive and zero-window probes, a
//! listener's SYN-ACKs, ICMP unreachables, and what ended a connection that was aborted.

use super::*;

/// What ended an aborted connection, as far as the trace tells: the event just before
/// the abort, or the zero window it happened in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Ending {
    /// The retransmission timer gave up (or nothing in the trace says otherwise).
    #[default]
    GaveUp,
    /// The last keepalive probe went unanswered (Linux `tcp_keepalive_timer` resets).
    Keepalive,
    /// Aborted while the window was zero: the persist timer's probes went unanswered, or
    /// a user timeout ran out during the stall.
    ZeroWindow,
    /// A listener dropped the request whose SYN-ACKs went unanswered.
    RequestExpired,
}

impl Ending {
    /// The label beside the abort's line.
    pub(super) fn label(self) -> &'static str {
        match self {
            Ending::GaveUp => "gave up",
            Ending::Keepalive => "keepalive reset",
            Ending::ZeroWindow => "zero-window abort",
            Ending::RequestExpired => "request expired",
        }
    }

    /// Why the connection ended, from the event before the abort (`last`) and whether the
    /// window was zero then.
    pub(super) fn of(last: Option<TraceEvent>, window_zero: bool) -> Ending {
        if last == Some(TraceEvent::Keepalive) {
            Ending::Keepalive
        } else if window_zero {
            Ending::ZeroWindow
        } else {
            Ending::GaveUp
        }
    }
}

/// A row of the strip under each panel; the strip has the rows some panel needs, in
/// this order, top down.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Row {
    Retransmits,
    Probes,
    ZeroWindow,
    Keepalives,
    SynAcks,
    Icmp,
}

impl Row {
    pub(super) const ALL: [Row; 6] =
        [Row::Retransmits, Row::Probes, Row::ZeroWindow, Row::Keepalives, Row::SynAcks, Row::Icmp];

    /// The row's name, left of the strip.
    pub(super) fn name(self) -> &'static str {
        match self {
            Row::Retransmits => "retransmitted",
            Row::Probes => "probe (TLP)",
            Row::ZeroWindow => "window zero",
            Row::Keepalives => "keepalive",
            Row::SynAcks => "SYN-ACK",
            Row::Icmp => "ICMP unreach.",
        }
    }

    pub(super) fn colour(self) -> RGBColor {
        match self {
            Row::Retransmits => RETRANSMIT,
            Row::Probes => PROBE,
            Row::ZeroWindow => WINDOW_PROBE,
            Row::Keepalives => KEEPALIVE,
            Row::SynAcks => SYNACK,
            Row::Icmp => ICMP,
        }
    }

    /// Whether `p` has something to draw in this row.
    pub(super) fn in_panel(self, p: &Panel) -> bool {
        match self {
            Row::Retransmits => !p.retransmits.is_empty(),
            Row::Probes => !p.probes.is_empty(),
            Row::ZeroWindow => !p.zero_windows.is_empty(),
            Row::Keepalives => !p.keepalives.is_empty(),
            Row::SynAcks => !p.synacks.is_empty() || !p.synack_resends.is_empty(),
            Row::Icmp => !p.icmp.is_empty(),
        }
    }
}

/// The radius of a row's marks: 4 pixels, or 2 where two of them would touch (keepalive
/// probes 75 s apart across a three-hour axis are 6 pixels apart), so that each stays
/// one mark rather than a bar of beads. Nothing is thinned unless there are thousands.
pub(super) fn mark_radius(xs: &[f64], (x0, x1): (f64, f64)) -> u32 {
    let px = f64::from(crate::plot::bands::PLOT_WIDTH) / (x1 - x0).max(f64::MIN_POSITIVE);
    let closest = xs.windows(2).map(|w| (w[1] - w[0]) * px).fold(f64::INFINITY, f64::min);
    if closest < 9.0 { 2 } else { 4 }
}

/// The legend entries of the other timers' marks, each only where some panel has it.
pub(super) fn legend(panels: &[Panel], legend: &mut Vec<(Glyph, String)>) {
    let any = |f: &dyn Fn(&Panel) -> bool| panels.iter().any(f);
    if any(&|p| !p.window_probes.is_empty()) {
        legend.push((Glyph::Dot(WINDOW_PROBE), "zero-window probe, at the wait since the last".into()));
    }
    if any(&|p| !p.zero_windows.is_empty()) {
        legend.push((Glyph::Band(ZERO_WINDOW), "receiver's window zero".into()));
    }
    if any(&|p| !p.keepalives.is_empty()) {
        legend.push((Glyph::Dot(KEEPALIVE), "keepalive probe".into()));
    }
    if any(&|p| !p.synacks.is_empty()) {
        legend.push((Glyph::Dot(SYNACK), "SYN-ACK sent".into()));
    }
    if any(&|p| !p.synack_resends.is_empty()) {
        legend.push((Glyph::Triangle(SYNACK), "SYN-ACK sent again".into()));
    }
    if any(&|p| !p.icmp.is_empty()) {
        legend.push((Glyph::Cross(ICMP), "ICMP unreachable".into()));
    }
}

/// The legend entry of the abort's line, naming each way a shown panel ended.
pub(super) fn abort_legend(panels: &[Panel], (x0, x1): (f64, f64)) -> Option<(Glyph, String)> {
    let endings: BTreeSet<Ending> =
        panels.iter().filter(|p| p.aborted.is_some_and(|t| t >= x0 && t <= x1)).map(|p| p.ending).collect();
    if endings.is_empty() {
        return None;
    }
    let why: Vec<&str> = endings.iter().map(|e| e.label()).collect();
    Some((Glyph::Line(ABORTED, 2), format!("connection aborted ({})", why.join("; "))))
}

/// The panel caption's counts of the other timers' marks, where there are any.
pub(super) fn counts(p: &Panel, c: &mut Vec<String>) {
    if !p.window_probes.is_empty() {
        c.push(plural(p.window_probes.len(), "zero-window probe"));
    }
    if !p.keepalives.is_empty() {
        c.push(plural(p.keepalives.len(), "keepalive probe"));
    }
    if !p.synacks.is_empty() || !p.synack_resends.is_empty() {
        let sent = p.synacks.len() + p.synack_resends.len();
        c.push(format!("{} ({} resent)", plural(sent, "SYN-ACK"), p.synack_resends.len()));
    }
    if !p.icmp.is_empty() {
        c.push(plural(p.icmp.len(), "ICMP unreachable"));
    }
}

/// The abort's count: when, and why where the trace tells.
pub(super) fn abort_count(p: &Panel) -> Option<String> {
    // In the axis's unit, so it reads off the plot.
    p.aborted.map(|t| match p.ending {
        Ending::GaveUp => format!("aborted at {} s", tick(&t)),
        e => format!("{} at {} s", e.label(), tick(&t)),
    })
}
