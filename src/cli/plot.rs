//! `backoffsim plot KIND RUN_DIR -o FILE`: re-draw one plot from a finished run.

use std::path::PathBuf;

use clap::Args;

use super::CliError;
use backoffsim_core::engine::time::SimDuration;
use backoffsim_report::ReportError;
use backoffsim_report::data::RunSet;
use backoffsim_report::plot::{Format, Kind, PlotOptions, render};

#[derive(Debug, Args)]
pub struct PlotArgs {
    /// What to draw.
    #[arg(value_parser = KindParser)]
    pub kind: Kind,
    /// A run directory (what `backoffsim run` wrote, e.g. results/tcp-blackout).
    pub run_dir: PathBuf,
    /// The picture to write; `.svg` or `.png`.
    #[arg(long, short)]
    pub out: PathBuf,
    /// Only these variants (repeat for several) [default: all].
    #[arg(long = "variant", value_name = "V")]
    pub variants: Vec<String>,
    /// rto: the traced connection [default: the first; with one --variant, all traced].
    #[arg(long, value_name = "N")]
    pub client: Option<u32>,
    /// rto: the traced replication [default: the first traced].
    #[arg(long, value_name = "N")]
    pub replication: Option<u32>,
    /// Start of the time window, e.g. `15s` (a bare number is seconds).
    #[arg(long, value_name = "T", value_parser = seconds)]
    pub from: Option<f64>,
    /// End of the time window, e.g. `30s` (a bare number is seconds).
    #[arg(long, value_name = "T", value_parser = seconds)]
    pub to: Option<f64>,
    /// sweep, heatmap, cdf: the one metric to show, any the run wrote [default: sweep and
    /// heatmap the model's headline metrics that vary, cdf every metric, one panel each].
    #[arg(long, value_name = "M")]
    pub metric: Option<String>,
    /// rto, attempts, load, cdf: only the sweep cells where KEY (the dotted sweep key or its
    /// last segment) is VALUE; repeat for several values or keys [default: all cells].
    #[arg(long = "cell", value_name = "KEY=VALUE", value_parser = cell)]
    pub cells: Vec<(String, String)>,
}

/// A plot kind by name; a typo is told the nearest kind, as a scenario key is. Clap's
/// own message for a value enum reads differently from every other unknown name, and the
/// kinds are the report's, which knows nothing of the command line.
#[derive(Clone)]
struct KindParser;

impl clap::builder::TypedValueParser for KindParser {
    type Value = Kind;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        _arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Kind, clap::Error> {
        let s = value.to_string_lossy();
        Kind::ALL.into_iter().find(|k| k.name() == s).ok_or_else(|| {
            let m = backoffsim_core::suggest::unknown("plot kind", &s, Kind::ALL.map(Kind::name), None);
            clap::Error::raw(clap::error::ErrorKind::InvalidValue, format!("{m}\n")).with_cmd(cmd)
        })
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(Kind::ALL.into_iter().map(|k| clap::builder::PossibleValue::new(k.name()).help(k.about()))))
    }
}

/// `--cell key=value`.
fn cell(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() && !v.trim().is_empty() => {
            Ok((k.trim().to_string(), v.trim().to_string()))
        }
        _ => Err(format!("`{s}` is not KEY=VALUE (e.g. --cell max_backoff=30s)")),
    }
}

/// A time on the command line: a duration with a unit, or a bare number of seconds.
fn seconds(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        Ok(_) => Err(format!("`{s}` is not a time: it must be zero or more")),
        Err(_) => SimDuration::parse(s).map(|d| d.as_secs_f64()),
    }
}

pub fn plot(args: PlotArgs) -> Result<(), CliError> {
    let format = Format::from_path(&args.out).ok_or_else(|| {
        CliError::Usage(format!("cannot tell the format of {}: name it .svg or .png", args.out.display()))
    })?;
    let data = RunSet::load(&args.run_dir).map_err(usage)?;
    let opts = PlotOptions {
        variants: args.variants,
        client: args.client,
        replication: args.replication,
        from: args.from,
        to: args.to,
        metric: args.metric,
        cells: args.cells,
    };
    let bytes = render(args.kind, &data, &opts, format).map_err(|e| match e {
        ReportError::Missing(why) => {
            CliError::Usage(format!("cannot draw `{}` from {}: {why}", args.kind.name(), args.run_dir.display()))
        }
        other => usage(other),
    })?;
    write_whole(&args.out, &bytes).map_err(|e| CliError::Failed(format!("cannot write {}: {e}", args.out.display())))
}

/// Writes `bytes` to a hidden sibling and renames it over `path`, so that a plot is
/// there whole or not at all, and a failed write leaves an earlier one as it was.
fn write_whole(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let partial = path.with_file_name(format!(".{name}.partial.{}", std::process::id()));
    std::fs::write(&partial, bytes).and_then(|()| std::fs::rename(&partial, path)).inspect_err(|_| {
        let _ = std::fs::remove_file(&partial);
    })
}

/// Errors about the input (not a run, unreadable files) are the user's to fix: exit 2.
pub(crate) fn usage(e: ReportError) -> CliError {
    match e {
        ReportError::Draw(_) => CliError::Failed(e.to_string()),
        other => CliError::Usage(other.to_string()),
    }
}
