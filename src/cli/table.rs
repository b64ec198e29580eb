//! The summary table `run` and `merge` print: its layout and the metrics it shows. The
//! files a run writes always hold every metric; these only shape what the terminal shows.

use std::io::Write;

use clap::{Args, ValueEnum};

use super::CliError;
use backoffsim_core::worlds::catalogue::{CATALOGUE, ModelId};
use backoffsim_report::output::summary::SummaryRow;
use backoffsim_report::output::terminal::{LongRow, Value, Wide, long};

/// How the summary table is laid out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Layout {
    /// A row per variant, sweep cell and metric: as wide for 2 variants as for 2,000, and
    /// one line per value for grep.
    #[default]
    Long,
    /// A row per metric (and sweep cell), a column per variant: variants side by side.
    Wide,
}

#[derive(Debug, Args, Clone, Default)]
pub struct TableArgs {
    /// The summary table's layout: `long`, a row per variant, sweep cell and metric;
    /// `wide`, a row per metric and sweep cell with a column per variant.
    #[arg(long, value_enum, default_value_t = Layout::Long, conflicts_with = "json")]
    pub layout: Layout,
    #[command(flatten)]
    pub metrics: MetricArgs,
}

#[derive(Debug, Args, Clone, Default)]
pub struct MetricArgs {
    /// Only this metric in the printed table (repeat for several); `backoffsim metrics`
    /// lists them. An id ending in K (`recovery_lag_blackoutK`) stands for its whole
    /// numbered family. The files keep every metric.
    #[arg(long = "metric", value_name = "ID")]
    pub ids: Vec<String>,
}

/// A numbered family's id as `backoffsim metrics` shows it: `{k}` reads `K`.
fn shown(id: &str) -> String {
    id.replace("{k}", "K")
}

impl MetricArgs {
    /// Refuses (exit 2) an id no metric of `models` has, before anything runs, with the
    /// nearest id when it looks like a typo and every id there is.
    pub fn check(&self, models: &[ModelId]) -> Result<(), CliError> {
        let known: Vec<String> = CATALOGUE
            .iter()
            .filter(|e| models.is_empty() || e.models.iter().any(|m| models.contains(m)))
            .map(|e| shown(e.id))
            .collect();
        for id in &self.ids {
            if known.iter().any(|k| member(id, k) || k == id) {
                continue;
            }
            let names: Vec<&str> = models.iter().map(|m| m.name()).collect();
            let hint = backoffsim_core::suggest::nearest(id, known.iter().map(String::as_str))
                .map(|n| format!("; did you mean `{n}`?"))
                .unwrap_or_else(|| ".".to_string());
            return Err(CliError::Usage(format!(
                "--metric `{id}`: no {} metric has this id{hint} The metrics are: {}",
                names.join(" or "),
                known.join(", ")
            )));
        }
        Ok(())
    }

    /// Whether the table shows `metric`: every metric without `--metric`.
    pub fn keeps(&self, metric: &str) -> bool {
        self.ids.is_empty() || self.ids.iter().any(|id| id == metric || member(metric, id))
    }
}

/// Whether `metric` belongs to the family `family` (`recovery_lag_blackoutK`).
fn member(metric: &str, family: &str) -> bool {
    family
        .strip_suffix('K')
        .and_then(|prefix| metric.strip_prefix(prefix))
        .is_some_and(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()))
}

/// Prints the summary `rows` (already narrowed to the `--metric`s) in `layout`.
pub fn print(
    w: &mut impl Write,
    layout: Layout,
    sweep_keys: &[String],
    variants: &[String],
    rows: &[SummaryRow],
) -> std::io::Result<()> {
    let value = |r: &SummaryRow| r.estimate.map(|e| Value { mean: e.mean, ci95: e.ci95 });
    let kept = rows.iter();
    match layout {
        Layout::Long => {
            let rows: Vec<LongRow<'_>> = kept
                .map(|r| LongRow {
                    variant: &r.variant,
                    point: &r.sweep,
                    metric: &r.metric,
                    unit: &r.unit,
                    value: value(r),
                })
                .collect();
            long(w, sweep_keys, &rows)
        }
        Layout::Wide => Wide::of(
            sweep_keys,
            variants,
            kept.map(|r| (r.variant.as_str(), r.sweep.as_slice(), r.metric.as_str(), r.unit.as_str(), value(r))),
        )
        .write(w),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(ids: &[&str]) -> MetricArgs {
        MetricArgs { ids: ids.iter().map(|s| s.to_string()).collect() }
    }

    #[test]
    fn a_family_id_ending_in_k_keeps_every_member_and_nothing_else() {
        let f = ids(&["recovery_lag_blackoutK", "timeouts"]);
        assert!(f.keeps("recovery_lag_blackout1") && f.keeps("recovery_lag_blackout12") && f.keeps("timeouts"));
        assert!(!f.keeps("recovery_lag_blackout") && !f.keeps("retransmissions"));
        assert!(ids(&[]).keeps("anything"));
    }

    #[test]
    fn an_unknown_id_is_refused_with_the_nearest_and_every_id_of_the_model() {
        assert!(ids(&["timeouts", "recovery_lag_blackout2", "recovery_lag_blackoutK"]).check(&[ModelId::Tcp]).is_ok());
        let e = ids(&["timeuots"]).check(&[ModelId::Tcp]).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        let e = e.to_string();
        assert!(e.starts_with("--metric `timeuots`: no tcp metric has this id; did you mean `timeouts`?"), "{e}");
        assert!(e.contains("The metrics are: ") && e.contains("retransmissions"), "{e}");
        // Another model's metric is not one of this run's.
        let e = ids(&["peak_attempt_rate"]).check(&[ModelId::Tcp]).unwrap_err().to_string();
        assert!(!e.contains("peak_attempt_rate,"), "{e}");
    }
}
