//! The per-observation tables of a run, tidy: one observation a row, every table led by
//! `variant` and the sweep columns so that pandas or R can join them with `summary.csv`.

use super::OutputError;
use super::columns::SweepColumns;
use super::summary::{Group, num};
use backoffsim_core::metrics::trace::{TraceRow, opt_secs, secs};
use backoffsim_core::metrics::{MetricValue, QUANTILE_STEP};
use backoffsim_core::run::interrupt::Interrupted;

/// Renders one table of a run from its groups of replications.
pub type Writer = fn(&SweepColumns, &[Group<'_>]) -> Result<Vec<u8>, OutputError>;

/// A CSV table whose rows all start with `variant, <sweep columns…>` (see
/// [`SweepColumns`]). It looks at the
/// interrupt flag before every row: a table of millions of rows stops at once.
struct Table<'c> {
    w: csv::Writer<Vec<u8>>,
    columns: &'c SweepColumns,
    /// The last row's cell and its sweep values: rows come group by group, so a cell's
    /// durations are turned into seconds once, not once per row.
    cell: Option<(Vec<String>, Vec<String>)>,
}

impl<'c> Table<'c> {
    fn new(columns: &'c SweepColumns, lead: &[&str], rest: &[&str]) -> Result<Self, OutputError> {
        let mut w = csv::Writer::from_writer(Vec::new());
        let mut header: Vec<String> = lead.iter().map(|s| s.to_string()).collect();
        header.push("variant".into());
        header.extend(columns.header());
        header.extend(rest.iter().map(|s| s.to_string()));
        w.write_record(&header)?;
        Ok(Table { w, columns, cell: None })
    }

    fn row(
        &mut self,
        g: &Group<'_>,
        lead: &[String],
        rest: impl IntoIterator<Item = String>,
    ) -> Result<(), OutputError> {
        backoffsim_core::run::interrupt::check()?;
        let mut record: Vec<String> = lead.to_vec();
        record.push(g.variant.to_string());
        match &self.cell {
            Some((cell, values)) if cell.as_slice() == g.sweep => record.extend(values.iter().cloned()),
            _ => {
                let values = self.columns.values(g.sweep);
                record.extend(values.iter().cloned());
                self.cell = Some((g.sweep.to_vec(), values));
            }
        }
        record.extend(rest);
        Ok(self.w.write_record(&record)?)
    }

    fn finish(self) -> Result<Vec<u8>, OutputError> {
        self.w.into_inner().map_err(|e| OutputError::Csv(e.into_error().into()))
    }
}

/// Every traced row in the order `trace.csv` lists them: by group, replication, time.
pub fn traced<'g, 'a>(groups: &'g [Group<'a>]) -> impl Iterator<Item = (&'g Group<'a>, usize, &'a TraceRow)> + 'g {
    groups
        .iter()
        .flat_map(|g| g.reps.iter().enumerate().flat_map(move |(r, rep)| rep.trace.iter().map(move |row| (g, r, row))))
}

/// Every metric of every replication in the order `replications.csv` lists them: by
/// group, replication, then the order the replication reports its metrics.
pub fn measured<'g, 'a>(groups: &'g [Group<'a>]) -> impl Iterator<Item = (&'g Group<'a>, usize, &'a MetricValue)> + 'g {
    groups
        .iter()
        .flat_map(|g| g.reps.iter().enumerate().flat_map(move |(r, rep)| rep.metrics.iter().map(move |m| (g, r, m))))
}

/// `replications.csv`: `variant, <sweep columns…>, replication, metric, unit, value`, the
/// values `summary.csv` is computed from, so that a user (or a merge of shards) has them
/// and the variants can be paired replication by replication. A metric without a value
/// in a replication (a convergence that never happened) has an empty `value`.
pub fn replications(columns: &SweepColumns, groups: &[Group<'_>]) -> Result<Vec<u8>, OutputError> {
    let mut t = Table::new(columns, &[], &["replication", "metric", "unit", "value"])?;
    for (g, r, m) in measured(groups) {
        t.row(g, &[], [r.to_string(), m.name.clone(), m.unit.to_string(), num(m.value)])?;
    }
    t.finish()
}

/// `trace.csv`: `time_s, client, variant, <sweep columns…>, replication, event, segment,
/// sample_s, srtt_s, rttvar_s, rto_s, backoffs, cwnd, ssthresh, ca_state`. The congestion
/// columns come last so that a reader of the older columns finds them where it did.
pub fn trace(columns: &SweepColumns, groups: &[Group<'_>]) -> Result<Vec<u8>, OutputError> {
    let rest = [
        "replication",
        "event",
        "segment",
        "sample_s",
        "srtt_s",
        "rttvar_s",
        "rto_s",
        "backoffs",
        "cwnd",
        "ssthresh",
        "ca_state",
    ];
    let mut t = Table::new(columns, &["time_s", "client"], &rest)?;
    for (g, r, row) in traced(groups) {
        let lead = [secs(row.time.as_nanos()), row.client.to_string()];
        t.row(
            g,
            &lead,
            [
                r.to_string(),
                row.event.to_string(),
                row.segment.map(|s| s.to_string()).unwrap_or_default(),
                opt_secs(row.sample),
                opt_secs(row.srtt),
                opt_secs(row.rttvar),
                secs(row.rto.as_nanos()),
                row.backoffs.to_string(),
                row.cwnd.map(|w| w.to_string()).unwrap_or_default(),
                row.ssthresh.map(|w| w.to_string()).unwrap_or_default(),
                row.ca_state.unwrap_or_default().to_string(),
            ],
        )?;
    }
    t.finish()
}

/// One row of `attempts.csv`: a time bin of one replication.
pub struct Bin<'g, 'a> {
    pub group: &'g Group<'a>,
    pub replication: usize,
    /// The bin's start and width, in nanoseconds.
    pub start: u64,
    pub width: u64,
    pub attempts: u32,
    pub refused: u32,
}

/// The bins `attempts.csv` lists, in its order: from 0 to the last bin in which any
/// replication of the group saw an attempt.
pub fn bins<'g, 'a>(groups: &'g [Group<'a>]) -> Result<Vec<Bin<'g, 'a>>, Interrupted> {
    let mut out = Vec::new();
    for g in groups {
        backoffsim_core::run::interrupt::check()?;
        let last =
            g.reps.iter().filter_map(|r| r.bins.as_ref().and_then(|b| b.attempts.iter().rposition(|&c| c > 0))).max();
        let Some(last) = last else { continue };
        for (r, rep) in g.reps.iter().enumerate() {
            let Some(bins) = &rep.bins else { continue };
            let width = bins.width.as_nanos();
            for i in 0..=last.min(bins.attempts.len() - 1) {
                out.push(Bin {
                    group: g,
                    replication: r,
                    start: i as u64 * width,
                    width,
                    attempts: bins.attempts[i],
                    refused: bins.refused[i],
                });
            }
        }
    }
    Ok(out)
}

/// `attempts.csv`: `variant, <sweep columns…>, replication, bin_start_s, bin_width_s,
/// attempts, refused` — connection attempts reaching the server per time bin, from 0 to
/// the last bin of the group that saw an attempt.
pub fn attempts(columns: &SweepColumns, groups: &[Group<'_>]) -> Result<Vec<u8>, OutputError> {
    let rest = ["replication", "bin_start_s", "bin_width_s", "attempts", "refused"];
    let mut t = Table::new(columns, &[], &rest)?;
    for b in bins(groups)? {
        t.row(
            b.group,
            &[],
            [b.replication.to_string(), secs(b.start), secs(b.width), b.attempts.to_string(), b.refused.to_string()],
        )?;
    }
    t.finish()
}

/// `series.csv`: `variant, <sweep columns…>, replication, bin_start_s, bin_width_s,
/// <the model's columns…>` — quantities per time bin from 0 to the horizon (see
/// [`backoffsim_core::metrics::series`]); an undefined value is an empty cell.
pub fn series(columns: &SweepColumns, groups: &[Group<'_>]) -> Result<Vec<u8>, OutputError> {
    let names: Vec<&str> = groups
        .iter()
        .flat_map(|g| g.reps.iter())
        .find_map(|r| r.series.as_ref())
        .map(|s| s.columns.iter().map(|(n, _)| *n).collect())
        .unwrap_or_default();
    let mut rest = vec!["replication", "bin_start_s", "bin_width_s"];
    rest.extend(&names);
    let mut t = Table::new(columns, &[], &rest)?;
    for g in groups {
        for (r, rep) in g.reps.iter().enumerate() {
            let Some(s) = &rep.series else { continue };
            debug_assert!(s.columns.iter().map(|(n, _)| *n).eq(names.iter().copied()), "one model, one set of columns");
            let width = s.width.as_nanos();
            for i in 0..s.bins() {
                let mut row = vec![r.to_string(), secs(i as u64 * width), secs(width)];
                row.extend(
                    s.columns.iter().map(|(_, v)| if v[i].is_nan() { String::new() } else { format!("{}", v[i]) }),
                );
                t.row(g, &[], row)?;
            }
        }
    }
    t.finish()
}

/// One row of `cdf.csv`: a quantile of one per-client distribution of a group.
pub struct Quantile<'g, 'a> {
    pub group: &'g Group<'a>,
    pub metric: &'a str,
    /// The fraction as the CSV prints it (`0.07`).
    pub fraction: String,
    /// The mean over replications of each replication's quantile.
    pub value: f64,
}

/// The quantiles `cdf.csv` lists, in its order; a series stops at the highest fraction
/// every replication reached.
pub fn quantiles<'g, 'a>(groups: &'g [Group<'a>]) -> Result<Vec<Quantile<'g, 'a>>, Interrupted> {
    let mut out = Vec::new();
    for g in groups {
        backoffsim_core::run::interrupt::check()?;
        let mut names: Vec<&'a str> = Vec::new();
        for rep in g.reps {
            for (name, _) in &rep.quantiles {
                if !names.contains(&name.as_str()) {
                    names.push(name);
                }
            }
        }
        for name in names {
            let series: Vec<&Vec<f64>> =
                g.reps.iter().filter_map(|r| r.quantiles.iter().find(|(n, _)| n == name).map(|(_, q)| q)).collect();
            let points = series.iter().map(|q| q.len()).min().unwrap_or(0);
            for i in 0..points {
                let mean = series.iter().map(|q| q[i]).sum::<f64>() / series.len() as f64;
                let fraction = i as f64 * QUANTILE_STEP;
                out.push(Quantile { group: g, metric: name, fraction: format!("{fraction:.2}"), value: mean });
            }
        }
    }
    Ok(out)
}

/// `cdf.csv`: `variant, <sweep columns…>, metric, fraction, value_s` — per-client
/// distributions as quantiles, each the mean over replications of that replication's
/// quantile (quantile averaging keeps every replication's weight equal).
pub fn cdf(columns: &SweepColumns, groups: &[Group<'_>]) -> Result<Vec<u8>, OutputError> {
    let mut t = Table::new(columns, &[], &["metric", "fraction", "value_s"])?;
    for q in quantiles(groups)? {
        t.row(q.group, &[], [q.metric.to_string(), q.fraction, num(Some(q.value))])?;
    }
    t.finish()
}

/// `connections.csv`: `variant, <sweep columns…>, replication, client, attempt, start_s,
/// end_s, outcome, backoff_s, delay_s, deadline_s` — one row per connection attempt of a
/// recorded client.
pub fn connections(columns: &SweepColumns, groups: &[Group<'_>]) -> Result<Vec<u8>, OutputError> {
    let rest =
        ["replication", "client", "attempt", "start_s", "end_s", "outcome", "backoff_s", "delay_s", "deadline_s"];
    let mut t = Table::new(columns, &[], &rest)?;
    for g in groups {
        for (r, rep) in g.reps.iter().enumerate() {
            let mut rows = rep.connections.clone();
            rows.sort_by_key(|c| (c.client, c.start));
            for c in rows {
                t.row(
                    g,
                    &[],
                    [
                        r.to_string(),
                        c.client.to_string(),
                        c.attempt.to_string(),
                        secs(c.start.as_nanos()),
                        secs(c.end.as_nanos()),
                        c.outcome.to_string(),
                        secs(c.backoff.as_nanos()),
                        secs(c.delay.as_nanos()),
                        c.deadline.map(|d| secs(d.as_nanos())).unwrap_or_default(),
                    ],
                )?;
            }
        }
    }
    t.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use backoffsim_core::metrics::ReplicationResult;

    #[test]
    fn every_replications_every_metric_is_a_row_and_a_missing_value_is_empty() {
        let rep = |x: f64, y: Option<f64>| ReplicationResult {
            metrics: vec![MetricValue::new("x", "s", x), MetricValue::maybe("y", "count", y)],
            ..Default::default()
        };
        let reps = [rep(1.5, Some(2.0)), rep(3.0, None)];
        let sweep = ["10".to_string()];
        let cols = SweepColumns::of(&["tcp.window".into()], [sweep.as_slice()]);
        let csv = replications(&cols, &[Group { variant: "a", sweep: &sweep, reps: &reps }]).unwrap();
        assert_eq!(
            String::from_utf8(csv).unwrap(),
            "variant,tcp.window,replication,metric,unit,value\n\
             a,10,0,x,s,1.5\na,10,0,y,count,2\na,10,1,x,s,3\na,10,1,y,count,\n"
        );
    }

    #[test]
    fn every_row_carries_a_swept_duration_in_seconds_beside_its_label() {
        let reps = [ReplicationResult { metrics: vec![MetricValue::new("x", "s", 1.0)], ..Default::default() }];
        let (early, late) = (["10s".to_string()], ["2min".to_string()]);
        let groups =
            [Group { variant: "a", sweep: &early, reps: &reps }, Group { variant: "a", sweep: &late, reps: &reps }];
        let cols = SweepColumns::of(&["server.restart_at".into()], groups.iter().map(|g| g.sweep));
        let csv = String::from_utf8(replications(&cols, &groups).unwrap()).unwrap();
        assert_eq!(
            csv,
            "variant,server.restart_at,server.restart_at_s,replication,metric,unit,value\n\
             a,10s,10,0,x,s,1\na,2min,120,0,x,s,1\n"
        );
    }
}
