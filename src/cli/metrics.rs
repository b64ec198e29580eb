//! `backoffsim metrics [--model M] [--markdown]`: the metric catalogue as an aligned
//! table, so what a metric id in `summary.csv` means is one command away and cannot drift
//! from what the plots and reports use; with `--markdown`, the user guide's metric
//! reference (docs/metrics.md), which a test holds to this output.

use std::io::Write;

use clap::Args;

use super::CliError;
use backoffsim_core::worlds::catalogue::{CATALOGUE, ModelId};
use backoffsim_report::contents::better_text;

#[derive(Debug, Args)]
pub struct MetricsArgs {
    /// Only the metrics of this model: tcp, grpc, occ, calls or jobs [default: every model's].
    #[arg(long, value_name = "M", value_parser = model)]
    pub model: Option<ModelId>,
    /// Markdown tables, one per model, instead of the aligned table.
    #[arg(long)]
    pub markdown: bool,
}

fn model(s: &str) -> Result<ModelId, String> {
    ModelId::from_name(s).ok_or_else(|| {
        let names: Vec<&str> = ModelId::ALL.iter().map(|m| m.name()).collect();
        backoffsim_core::suggest::unknown("model", s, names, None)
    })
}

/// The table's rows, header first: model (without `--model`), id, title, unit, which way
/// is better and the doc. A numbered family's `{k}` reads `K` (`recovery_lag_blackoutK`
/// stands for `recovery_lag_blackout1`, `…2`, …).
pub fn rows(only: Option<ModelId>) -> Vec<Vec<String>> {
    let mut header = vec!["ID", "TITLE", "UNIT", "BETTER", "WHAT IT MEASURES"];
    if only.is_none() {
        header.insert(0, "MODEL");
    }
    let mut rows = vec![header.into_iter().map(String::from).collect::<Vec<_>>()];
    for m in only.map_or(ModelId::ALL.to_vec(), |m| vec![m]) {
        for e in CATALOGUE.iter().filter(|e| e.models.contains(&m)) {
            let mut row = vec![
                e.id.replace("{k}", "K"),
                e.title.replace("{k}", "K"),
                e.unit.to_string(),
                better_text(e.better).to_string(),
                e.doc.to_string(),
            ];
            if only.is_none() {
                row.insert(0, m.name().to_string());
            }
            rows.push(row);
        }
    }
    rows
}

/// One section per model: a heading and a table of its metrics, ids in backticks.
pub fn markdown(only: Option<ModelId>) -> String {
    let cell = |s: &str| s.replace('|', "\\|");
    let mut out = String::new();
    for m in only.map_or(ModelId::ALL.to_vec(), |m| vec![m]) {
        let mut rows = rows(Some(m)).into_iter();
        let header = rows.next().unwrap_or_default();
        out.push_str(&format!("## {}\n\n| {} |\n|{}\n", m.name(), header.join(" | "), "---|".repeat(header.len())));
        for r in rows {
            let rest: Vec<String> = r[1..].iter().map(|c| cell(c)).collect();
            out.push_str(&format!("| `{}` | {} |\n", r[0], rest.join(" | ")));
        }
        out.push('\n');
    }
    out.pop();
    out
}

pub fn metrics(args: MetricsArgs) -> Result<(), CliError> {
    if args.markdown {
        let mut out = std::io::stdout().lock();
        return out
            .write_all(markdown(args.model).as_bytes())
            .and_then(|()| out.flush())
            .map_err(CliError::from_stdout);
    }
    let rows = rows(args.model);
    super::aligned::print(&rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_models_table_lists_its_metrics_once_and_no_others() {
        let grpc = rows(Some(ModelId::Grpc));
        assert_eq!(grpc[0], ["ID", "TITLE", "UNIT", "BETTER", "WHAT IT MEASURES"]);
        let ids: Vec<&str> = grpc[1..].iter().map(|r| r[0].as_str()).collect();
        assert!(ids.contains(&"peak_attempt_rate") && ids.contains(&"spread_attemptK"), "{ids:?}");
        assert!(!ids.contains(&"retransmissions"), "{ids:?}");
        let timeouts = grpc.iter().find(|r| r[0] == "timeouts").unwrap();
        assert_eq!(timeouts[1..4], ["Connect timeouts", "count", "lower"]);
    }

    #[test]
    fn the_markdown_has_a_table_per_model_with_pipes_escaped() {
        let md = markdown(Some(ModelId::Tcp));
        assert!(md.starts_with("## tcp\n\n| ID | TITLE | UNIT | BETTER | WHAT IT MEASURES |\n|---|---|---|---|---|\n"));
        assert!(md.contains("| `recovery_lag_blackoutK` | Recovery lag after blackout K | s | lower |"), "{md}");
        assert!(md.contains("Mean \\|SRTT − the path's median RTT\\| at each sample."), "{md}");
        assert_eq!(markdown(None).matches("\n## ").count(), ModelId::ALL.len() - 1);
    }

    #[test]
    fn the_whole_table_names_each_rows_model_so_a_shared_id_reads_twice() {
        let all = rows(None);
        assert_eq!(all[0][0], "MODEL");
        let calls: Vec<(&str, &str)> =
            all.iter().filter(|r| r[1] == "calls").map(|r| (r[0].as_str(), r[4].as_str())).collect();
        assert_eq!(calls, [("occ", "lower"), ("calls", "—")]);
        assert_eq!(all.len() - 1, CATALOGUE.iter().map(|e| e.models.len()).sum::<usize>());
    }
}
