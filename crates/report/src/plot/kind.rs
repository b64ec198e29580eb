//! What a plot kind is: its name, what it draws, when it cannot be drawn, its figure, and
//! what the report says about it.

use super::{Figure, PlotOptions};
use crate::ReportError;
use crate::data::RunSet;
use backoffsim_core::run::interrupt::Interrupted;

/// A kind of plot. Each kind is a type in its own module, listed once in `kinds!`.
pub(crate) trait Plot {
    /// The name `backoffsim plot NAME` takes, and the stem of the run's plot files.
    const NAME: &'static str;
    /// What it draws, in a line, for `backoffsim plot --help`.
    const ABOUT: &'static str;
    /// Whether it draws each sweep cell apart, so `--cell` can pick cells; a kind that
    /// draws across cells refuses `--cell`.
    const PER_CELL: bool = true;

    type Figure: Figure;

    /// Why this kind cannot be drawn from `data`, or `None` if it can.
    fn missing(data: &RunSet) -> Option<String>;

    /// The picture of `data` that `opts` asks for.
    fn figure(data: &RunSet, opts: &PlotOptions) -> Result<Self::Figure, ReportError>;

    /// The report's title and caption of the plot, naming only marks that appear in it.
    fn caption(data: &RunSet) -> Result<(String, String), Interrupted>;

    /// What each panel shows, `(panel, sentence)`, for plots whose numbers differ per panel.
    fn panels(_data: &RunSet) -> Vec<(String, String)> {
        Vec::new()
    }

    /// An example command that re-draws this kind from the run, shown in the report.
    fn redraw(r: &Redraw<'_>) -> String;
}

/// What a report's example commands refer to: the run and a variant, cell, window and
/// metric worth a closer look.
pub(crate) struct Redraw<'a> {
    /// The run directory as one shell word.
    pub dir: &'a str,
    pub variant: &'a str,
    /// ` --cell key=value`, or empty without a sweep.
    pub cell: &'a str,
    /// The window's ends in seconds.
    pub from: &'a str,
    pub to: &'a str,
    pub metric: &'a str,
}
