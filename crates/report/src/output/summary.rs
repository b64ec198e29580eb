//! `summary.csv`: one row per (variant, metric), tidy, with mean and 95 % CI over
//! replications.

use std::collections::BTreeMap;

use super::columns::SweepColumns;
use backoffsim_core::metrics::ReplicationResult;
use backoffsim_core::metrics::stats::Estimate;
use backoffsim_core::run::interrupt::Interrupted;

/// One summary row.
#[derive(Clone, Debug, PartialEq)]
pub struct SummaryRow {
    pub variant: String,
    /// The sweep cell's values, in the order of the scenario's sweep keys.
    pub sweep: Vec<String>,
    pub metric: String,
    pub unit: String,
    /// `None` when no replication had a value (no client reconnected before the
    /// horizon): the row is kept, empty, so that the metric does not silently vanish.
    pub estimate: Option<Estimate>,
}

/// The replications of one (variant, sweep cell).
pub struct Group<'a> {
    pub variant: &'a str,
    pub sweep: &'a [String],
    pub reps: &'a [ReplicationResult],
}

/// Summarizes each group's replications. Metrics appear in the order the model
/// reports them; a replication without a value for a metric (e.g. a convergence time
/// that never happened) is left out of that metric, and `replications` says how many
/// contributed. A metric no replication has a value for is listed without an estimate.
pub fn summarize(groups: &[Group<'_>]) -> Vec<SummaryRow> {
    match summarize_until(groups, &|| false) {
        Ok(rows) => rows,
        Err(Interrupted) => unreachable!("nothing stops it"),
    }
}

/// [`summarize`], giving up at a requested interrupt: it looks at the flag once per
/// replication of every group.
pub fn summarize_or_stop(groups: &[Group<'_>]) -> Result<Vec<SummaryRow>, Interrupted> {
    summarize_until(groups, &backoffsim_core::run::interrupt::requested)
}

/// One pass over every metric of every replication, each metric found by name in an
/// index of the group's metrics: a replication with 100,000 numbered metrics (one per
/// blackout) costs 100,000 lookups, not 100,000 scans of the ones before.
fn summarize_until(groups: &[Group<'_>], stop: &dyn Fn() -> bool) -> Result<Vec<SummaryRow>, Interrupted> {
    let mut rows = Vec::new();
    for g in groups {
        // (name, unit) in order of first appearance, its values, and the last replication
        // that gave one: only a replication's first value of a name counts.
        let mut order: Vec<(&str, &str)> = Vec::new();
        let mut values: Vec<Vec<f64>> = Vec::new();
        let mut seen_in: Vec<usize> = Vec::new();
        let mut index: BTreeMap<&str, usize> = BTreeMap::new();
        for (r, rep) in g.reps.iter().enumerate() {
            if stop() {
                return Err(Interrupted);
            }
            for m in &rep.metrics {
                let i = *index.entry(&m.name).or_insert_with(|| {
                    order.push((&m.name, m.unit));
                    values.push(Vec::new());
                    seen_in.push(usize::MAX);
                    order.len() - 1
                });
                if seen_in[i] == r {
                    continue;
                }
                seen_in[i] = r;
                values[i].extend(m.value);
            }
        }
        for ((metric, unit), values) in order.into_iter().zip(values) {
            rows.push(SummaryRow {
                variant: g.variant.to_string(),
                sweep: g.sweep.to_vec(),
                metric: metric.to_string(),
                unit: unit.to_string(),
                estimate: Estimate::of(&values),
            });
        }
    }
    Ok(rows)
}

/// A number as the CSV shows it: Rust's shortest round-trip form, which is the same on
/// every platform; empty when absent.
pub fn num(v: Option<f64>) -> String {
    match v {
        Some(v) if v.is_finite() => format!("{v}"),
        Some(v) => format!("{v}").to_lowercase(),
        None => String::new(),
    }
}

/// `summary.csv`: `variant, <sweep columns…>, metric, unit, replications, mean, sd,
/// ci95_low, ci95_high`.
pub fn write_csv(columns: &SweepColumns, rows: &[SummaryRow]) -> Result<Vec<u8>, super::OutputError> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header = vec!["variant".to_string()];
    header.extend(columns.header());
    header.extend(["metric", "unit", "replications", "mean", "sd", "ci95_low", "ci95_high"].map(String::from));
    w.write_record(&header)?;
    // Rows come cell by cell: a cell's sweep values are worked out once.
    let mut cell: Option<(&[String], Vec<String>)> = None;
    for r in rows {
        backoffsim_core::run::interrupt::check()?;
        let e = r.estimate.as_ref();
        let mut record = vec![r.variant.clone()];
        match &cell {
            Some((c, values)) if *c == r.sweep.as_slice() => record.extend(values.iter().cloned()),
            _ => {
                let values = columns.values(&r.sweep);
                record.extend(values.iter().cloned());
                cell = Some((&r.sweep, values));
            }
        }
        record.extend([
            r.metric.clone(),
            r.unit.clone(),
            e.map_or(0, |e| e.n).to_string(),
            num(e.map(|e| e.mean)),
            num(e.and_then(|e| e.sd)),
            num(e.and_then(|e| e.ci95).map(|c| c.0)),
            num(e.and_then(|e| e.ci95).map(|c| c.1)),
        ]);
        w.write_record(&record)?;
    }
    w.into_inner().map_err(|e| super::OutputError::Csv(e.into_error().into()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use backoffsim_core::metrics::MetricValue;

    fn rep(values: &[(&str, Option<f64>)]) -> ReplicationResult {
        ReplicationResult {
            metrics: values.iter().map(|(n, v)| MetricValue::maybe(n, "s", *v)).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn a_metric_missing_in_some_replications_counts_only_those_that_have_it() {
        let reps = [rep(&[("x", Some(1.0)), ("y", Some(5.0))]), rep(&[("x", Some(3.0)), ("y", None)])];
        let sweep = ["7".to_string()];
        let rows = summarize(&[Group { variant: "a", sweep: &sweep, reps: &reps }]);
        assert_eq!(rows.len(), 2);
        let (x, y) = (rows[0].estimate.unwrap(), rows[1].estimate.unwrap());
        assert_eq!((rows[0].metric.as_str(), x.n, x.mean), ("x", 2, 2.0));
        assert_eq!((rows[1].metric.as_str(), y.n), ("y", 1));
        let cols = SweepColumns::of(&["k".into()], [sweep.as_slice()]);
        let csv = String::from_utf8(write_csv(&cols, &rows).unwrap()).unwrap();
        assert_eq!(csv.lines().next().unwrap(), "variant,k,metric,unit,replications,mean,sd,ci95_low,ci95_high");
        assert!(csv.contains("\na,7,y,s,1,5,,,\n"), "{csv}");
    }

    #[test]
    fn a_metric_no_replication_has_a_value_for_keeps_its_row_with_empty_values() {
        let reps =
            [rep(&[("x", Some(1.0)), ("reconnect_p50", None)]), rep(&[("x", Some(3.0)), ("reconnect_p50", None)])];
        let rows = summarize(&[Group { variant: "a", sweep: &[], reps: &reps }]);
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[1].metric.as_str(), rows[1].estimate), ("reconnect_p50", None));
        let csv = String::from_utf8(write_csv(&SweepColumns::of(&[], [&[][..]]), &rows).unwrap()).unwrap();
        assert!(csv.ends_with("\na,reconnect_p50,s,0,,,,\n"), "{csv}");
    }
}
