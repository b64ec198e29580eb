//! Plots of a finished run, as SVG or PNG.
//!
//! Every kind builds a `Figure` from a [`RunSet`] and draws it on either backend, so
//! the SVG and the PNG of a plot are the same picture. The font is DejaVu Sans from the
//! `dejavu` crate, registered with plotters once: no system font is read, and the same
//! input files give byte-identical output.
//!
//! Large traces are thinned before drawing without changing the picture: lines keep the
//! first, lowest, highest and last point of each of `LINE_BUCKETS` time slices, and
//! scattered points keep one point per cell of a fine grid (see `thin_line` and
//! `thin_points`), so a run with millions of trace rows still plots in milliseconds.
//!
//! A kind is a module with a type that implements `Plot` and one line in the list
//! below; the list gives [`Kind`], its names and the dispatch.

mod axes;
mod bands;
mod cells;
pub mod delays;
mod frame;
mod kind;
mod raster;
pub(crate) mod style;
mod thin;

use plotters::coord::Shift;
use plotters::prelude::*;

use super::ReportError;
use super::data::RunSet;

pub(crate) use axes::*;
pub use cells::select_cells;
pub(crate) use cells::{Series, cell_label, omitted_note, series, short_keys};
pub(crate) use frame::*;
pub(crate) use kind::{Plot, Redraw};
pub(crate) use style::*;
pub(crate) use thin::*;

/// Declares the plot kinds, each `module: Type` where `module::Type` implements
/// `Plot`, and derives from that one list the [`Kind`] enum, [`Kind::ALL`] and the
/// dispatch from a kind to its type.
macro_rules! kinds {
    ($($module:ident: $plot:ident,)*) => {
        $(pub mod $module;)*

        /// The plot kinds, as `backoffsim plot KIND` names them.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Kind {
            $($plot,)*
        }

        impl Kind {
            pub const ALL: [Kind; [$(stringify!($plot)),*].len()] = [$(Kind::$plot),*];

            pub fn name(self) -> &'static str {
                match self {
                    $(Kind::$plot => <$module::$plot as Plot>::NAME,)*
                }
            }

            /// What the kind draws, in a line.
            pub fn about(self) -> &'static str {
                match self {
                    $(Kind::$plot => <$module::$plot as Plot>::ABOUT,)*
                }
            }

            /// Whether the kind draws each sweep cell apart, so `--cell` can pick cells.
            pub fn per_cell(self) -> bool {
                match self {
                    $(Kind::$plot => <$module::$plot as Plot>::PER_CELL,)*
                }
            }

            /// Why this kind cannot be drawn from `data`, or `None` if it can.
            pub fn missing(self, data: &RunSet) -> Option<String> {
                match self {
                    $(Kind::$plot => <$module::$plot as Plot>::missing(data),)*
                }
            }

            /// The report's title and caption of the plot drawn from `data`.
            pub(crate) fn caption(self, data: &RunSet) -> Result<(String, String), backoffsim_core::run::interrupt::Interrupted> {
                match self {
                    $(Kind::$plot => <$module::$plot as Plot>::caption(data),)*
                }
            }

            /// What each panel shows, `(panel, sentence)`, where the numbers differ per panel.
            pub(crate) fn panels(self, data: &RunSet) -> Vec<(String, String)> {
                match self {
                    $(Kind::$plot => <$module::$plot as Plot>::panels(data),)*
                }
            }

            /// A command that re-draws this kind from the run the report describes.
            pub(crate) fn redraw(self, r: &Redraw<'_>) -> String {
                match self {
                    $(Kind::$plot => <$module::$plot as Plot>::redraw(r),)*
                }
            }

            fn draw(self, data: &RunSet, opts: &PlotOptions, format: Format) -> Result<Vec<u8>, ReportError> {
                match self {
                    $(Kind::$plot => encode(&<$module::$plot as Plot>::figure(data, opts)?, format),)*
                }
            }
        }
    };
}

kinds! {
    rto: Rto,
    attempts: Attempts,
    load: Load,
    cdf: Cdf,
    sweep: Sweep,
    heatmap: Heatmap,
}

/// The image format, from the output file's extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Svg,
    Png,
}

impl Format {
    pub fn from_path(path: &std::path::Path) -> Option<Format> {
        match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
            "svg" => Some(Format::Svg),
            "png" => Some(Format::Png),
            _ => None,
        }
    }
}

/// What to show; every field narrows the default picture.
#[derive(Clone, Debug, Default)]
pub struct PlotOptions {
    /// Variants to show (all when empty).
    pub variants: Vec<String>,
    /// RTO plot: the connection to show (the first traced one by default; all traced
    /// connections of the variant when a single variant is chosen).
    pub client: Option<u32>,
    /// RTO plot: the replication to show (the first traced one by default).
    pub replication: Option<u32>,
    /// Time window in seconds.
    pub from: Option<f64>,
    pub to: Option<f64>,
    /// Sweep, heatmap and CDF plots: the one metric to show, any the run wrote (by default
    /// the sweep and heatmap show the model's headline metrics that vary, the CDF all).
    pub metric: Option<String>,
    /// RTO, attempts, load and CDF plots: the sweep cells to show, as `(key, value)` pairs; a
    /// key is the full dotted sweep key or its last segment. Values of one key are
    /// alternatives, different keys must all match (all cells when empty).
    pub cells: Vec<(String, String)>,
}

/// Draws a plot of `kind` from `data`.
pub fn render(kind: Kind, data: &RunSet, opts: &PlotOptions, format: Format) -> Result<Vec<u8>, ReportError> {
    if let Some(why) = kind.missing(data) {
        return Err(ReportError::Missing(why));
    }
    for v in &opts.variants {
        if data.variant(v).is_none() {
            let names = data.variant_names();
            return Err(ReportError::Missing(backoffsim_core::suggest::unknown("variant", v, names, None)));
        }
    }
    if let (Some(a), Some(b)) = (opts.from, opts.to)
        && b <= a
    {
        return Err(ReportError::Missing(format!(
            "the time window is empty: --to ({b} s) must be after --from ({a} s)"
        )));
    }
    if !opts.cells.is_empty() {
        if !kind.per_cell() {
            return Err(ReportError::Missing(format!(
                "--cell picks sweep cells for rto, attempts, load and cdf; `{}` draws across cells",
                kind.name()
            )));
        }
        select_cells(data, &opts.cells)?;
    }
    kind.draw(data, opts, format)
}

/// A picture that can be drawn on any backend.
pub(crate) trait Figure {
    fn size(&self) -> (u32, u32);
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String>;
}

/// Plotters' errors as text.
pub(crate) trait Drawn<T> {
    fn d(self) -> Result<T, String>;
}

impl<T, E: std::fmt::Display> Drawn<T> for Result<T, E> {
    fn d(self) -> Result<T, String> {
        self.map_err(|e| e.to_string())
    }
}

/// What a figure's drawing returns when it stopped at a requested interrupt.
const STOPPED: &str = "interrupted";

/// A figure's look at the interrupt flag, once per panel it draws.
pub(crate) fn stop() -> Result<(), String> {
    backoffsim_core::run::interrupt::check().map_err(|_| STOPPED.to_string())
}

pub(crate) fn encode(fig: &impl Figure, format: Format) -> Result<Vec<u8>, ReportError> {
    fonts();
    let (w, h) = fig.size();
    let draw_err = |e: String| if e == STOPPED { ReportError::Interrupted } else { ReportError::Draw(e) };
    match format {
        Format::Svg => {
            let mut s = String::new();
            {
                let root = SVGBackend::with_string(&mut s, (w, h)).into_drawing_area();
                root.fill(&WHITE).d().map_err(draw_err)?;
                fig.draw(&root).map_err(draw_err)?;
                root.present().d().map_err(draw_err)?;
            }
            if !s.ends_with('\n') {
                s.push('\n');
            }
            Ok(s.into_bytes())
        }
        Format::Png => {
            let mut buf = vec![255u8; w as usize * h as usize * 3];
            {
                let root = raster::Raster(BitMapBackend::with_buffer(&mut buf, (w, h))).into_drawing_area();
                root.fill(&WHITE).d().map_err(draw_err)?;
                fig.draw(&root).map_err(draw_err)?;
                root.present().d().map_err(draw_err)?;
            }
            backoffsim_core::run::interrupt::check()?;
            let mut out = Vec::new();
            {
                let mut enc = png::Encoder::new(&mut out, w, h);
                enc.set_color(png::ColorType::Rgb);
                enc.set_depth(png::BitDepth::Eight);
                enc.set_compression(png::Compression::Balanced);
                let mut writer = enc.write_header().map_err(|e| ReportError::Draw(e.to_string()))?;
                writer.write_image_data(&buf).map_err(|e| ReportError::Draw(e.to_string()))?;
            }
            Ok(out)
        }
    }
}
