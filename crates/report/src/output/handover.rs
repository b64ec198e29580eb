//! The run hands its results to the plots and the report in memory, in the shape
//! `report::data` reads from a finished run's files, so nothing the run just wrote is
//! parsed again.
//!
//! `plot` and `compare` still read the files, and a re-drawn plot must be the same bytes
//! as the run's own, so every number handed over is the one a reader parses from the
//! CSV: the shortest round-trip form (`{}`) of a mean, interval or quantile parses back
//! to the same `f64`, so those go over as they are; a time the CSV prints as exact
//! nanoseconds becomes [`seconds`], which rounds like the parser does; a quantile's
//! fraction, which the CSV rounds to two decimals, goes over as the parsed text; a
//! series value (printed `{}`) goes over as it is, and NaN, an empty cell, as `None`.

use super::summary::{Group, SummaryRow};
use super::tables;
use crate::data::{
    self, AttemptRow, CdfRow, ReplicationRow, RunInfo, RunSet, SeriesRow, SeriesTable, TraceRow, VariantInfo,
};
use crate::table::number;
use backoffsim_core::metrics::trace::secs;
use backoffsim_core::run::interrupt::Interrupted;

/// Which of the optional tables the run wrote: a table the run did not write is absent
/// from the data too, as it is for a reader of the files.
pub struct Written {
    pub attempts: bool,
    pub cdf: bool,
}

/// The run as the report reads it. `run` and `variants` are what [`data::of_manifest`]
/// reads from the manifest the run writes; `rows` are the rows of `summary.csv`.
pub fn run_set(
    run: RunInfo,
    variants: Vec<VariantInfo>,
    sweep_keys: &[String],
    groups: &[Group<'_>],
    rows: &[SummaryRow],
    written: Written,
) -> Result<RunSet, Interrupted> {
    let all = each(rows.iter(), |r| data::SummaryRow {
        variant: r.variant.clone(),
        point: r.sweep.clone(),
        metric: r.metric.clone(),
        unit: r.unit.clone(),
        n: r.estimate.map_or(0, |e| e.n as u64),
        mean: r.estimate.map_or(f64::NAN, |e| e.mean),
        sd: r.estimate.and_then(|e| e.sd),
        ci: r.estimate.and_then(|e| e.ci95),
    })?;
    let trace = each(tables::traced(groups), |(g, r, row)| TraceRow {
        time: seconds(row.time.as_nanos()),
        client: row.client,
        variant: g.variant.to_string(),
        point: g.sweep.to_vec(),
        replication: r as u32,
        event: row.event.to_string(),
        sample: row.sample.map(|d| seconds(d.as_nanos())),
        srtt: row.srtt.map(|d| seconds(d.as_nanos())),
        rto: Some(seconds(row.rto.as_nanos())),
        cwnd: row.cwnd,
        ssthresh: row.ssthresh,
        ca_state: row.ca_state.map(str::to_string),
    })?;
    let attempts = if written.attempts {
        let bins = tables::bins(groups)?;
        Some(each(bins.into_iter(), |b| AttemptRow {
            variant: b.group.variant.to_string(),
            point: b.group.sweep.to_vec(),
            replication: b.replication as u32,
            bin_start: seconds(b.start),
            bin_width: seconds(b.width),
            attempts: f64::from(b.attempts),
            refused: f64::from(b.refused),
        })?)
    } else {
        None
    };
    let cdf = if written.cdf {
        let quantiles = tables::quantiles(groups)?;
        Some(each(quantiles.into_iter(), |q| CdfRow {
            variant: q.group.variant.to_string(),
            point: q.group.sweep.to_vec(),
            metric: q.metric.to_string(),
            // The text is a number `{:.2}` printed; the fallback is never taken.
            fraction: number(&q.fraction).unwrap_or(f64::NAN),
            value: q.value,
        })?)
    } else {
        None
    };
    let replications = each(tables::measured(groups), |(g, r, m)| ReplicationRow {
        variant: g.variant.to_string(),
        point: g.sweep.to_vec(),
        replication: r as u32,
        metric: m.name.clone(),
        // Printed `{}` (shortest round trip), parsed back to the same f64.
        value: m.value,
    })?;
    Ok(RunSet {
        replications,
        trace,
        attempts,
        cdf,
        series: series(groups)?,
        ..RunSet::of_summary(run, variants, sweep_keys.to_vec(), all)
    })
}

/// `f` of every item of `rows`, each after a look at the interrupt flag: the handover
/// copies every row of the run's tables, which can be millions.
fn each<T, U>(rows: impl Iterator<Item = T>, mut f: impl FnMut(T) -> U) -> Result<Vec<U>, Interrupted> {
    let mut out = Vec::with_capacity(rows.size_hint().0);
    for row in rows {
        backoffsim_core::run::interrupt::check()?;
        out.push(f(row));
    }
    Ok(out)
}

/// What a reader gets from `series.csv`, which the run writes when any replication has a
/// series: the rows in the file's order (group, replication, bin).
fn series(groups: &[Group<'_>]) -> Result<Option<Vec<SeriesTable>>, Interrupted> {
    let Some(first) = groups.iter().flat_map(|g| g.reps.iter()).find_map(|r| r.series.as_ref()) else {
        return Ok(None);
    };
    let columns = first.columns.iter().map(|(n, _)| n.to_string()).collect();
    let mut rows = Vec::new();
    for g in groups {
        for (r, rep) in g.reps.iter().enumerate() {
            backoffsim_core::run::interrupt::check()?;
            let Some(s) = &rep.series else { continue };
            let width = s.width.as_nanos();
            rows.extend((0..s.bins()).map(|i| SeriesRow {
                variant: g.variant.to_string(),
                point: g.sweep.to_vec(),
                replication: r as u32,
                bin_start: seconds(i as u64 * width),
                bin_width: seconds(width),
                values: s.columns.iter().map(|(_, v)| Some(v[i]).filter(|x| !x.is_nan())).collect(),
            }));
        }
    }
    Ok(Some(vec![SeriesTable { columns, rows }]))
}

/// `ns` nanoseconds in seconds, the same `f64` a reader parses from the CSV's exact
/// `secs(ns)`: below 2^53 both `ns` and 1e9 are exact doubles, so the division rounds
/// the exact quotient once, to nearest, as parsing the exact decimal does. Beyond (104
/// days of simulated time) it goes through the text.
pub fn seconds(ns: u64) -> f64 {
    if ns < 1 << 53 { ns as f64 / 1e9 } else { number(&secs(ns)).unwrap_or(ns as f64 / 1e9) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::{Format, Kind, PlotOptions, render};
    use backoffsim_core::engine::time::SimDuration;
    use backoffsim_core::metrics::series::Series;
    use backoffsim_core::metrics::{MetricValue, ReplicationResult};

    /// A replication whose series has values a CSV could round badly: thirds, sums that
    /// are not what they look like, NaN, a bin width of a third of a second.
    fn rep(k: f64) -> ReplicationResult {
        let width = SimDuration::from_nanos(333_333_333);
        let mut s =
            Series::new(width, SimDuration::from_secs(2), &["attempts", "succeeded", "capacity", "retry_share"]);
        for i in 0..s.bins() {
            let x = i as f64 + k;
            s.columns[0].1[i] = x / 3.0 + 0.1 + 0.2;
            s.columns[1].1[i] = x * 1e-7;
            s.columns[2].1[i] = if i % 2 == 0 { f64::NAN } else { 1e21 / x };
            s.columns[3].1[i] = if i == 0 { f64::NAN } else { 1.0 / x };
        }
        ReplicationResult {
            metrics: vec![MetricValue::new("m", "s", k)],
            series: Some(s),
            ..ReplicationResult::default()
        }
    }

    #[test]
    fn series_handed_over_equal_what_a_reader_parses_and_draw_the_same_load_plot() {
        let keys = vec!["calls.outage".to_string()];
        let (a, b) = ([rep(0.0), rep(1.0)], [rep(2.0)]);
        let (p1, p2) = (vec!["30s".to_string()], vec!["2min".to_string()]);
        let groups = [Group { variant: "base", sweep: &p1, reps: &a }, Group { variant: "base", sweep: &p2, reps: &b }];
        let rows = super::super::summary::summarize(&groups);
        let manifest = serde_json::json!({
            "scenario": "round-trip", "horizon": "2s", "sweep_keys": keys,
            "variants": [{"name": "base", "parameters": {"model": "calls",
                "server": {"brownout": [{"at": "1s", "duration": "500ms"}]}}}]
        });
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        std::fs::write(dir.join("manifest.json"), manifest.to_string()).unwrap();
        // The swept durations get columns in seconds, which the reader must not take for keys.
        let columns = super::super::columns::SweepColumns::of(&keys, groups.iter().map(|g| g.sweep));
        assert_eq!(columns.header(), ["calls.outage", "calls.outage_s"]);
        std::fs::write(dir.join("summary.csv"), super::super::summary::write_csv(&columns, &rows).unwrap()).unwrap();
        std::fs::write(dir.join("series.csv"), tables::series(&columns, &groups).unwrap()).unwrap();

        let (run, variants) = data::of_manifest(&manifest, dir, String::new());
        let handed = run_set(run, variants, &keys, &groups, &rows, Written { attempts: false, cdf: false }).unwrap();
        let read = RunSet::load(dir).unwrap();
        assert_eq!(read.sweep_keys, keys);
        let series = handed.series.as_ref().unwrap();
        assert_eq!(series[0].rows.len(), 3 * 7, "three replications of seven bins");
        assert!(series[0].rows.iter().any(|r| r.values[2].is_none()), "NaN goes over as an empty cell");
        assert_eq!(handed.series, read.series);
        for format in [Format::Png, Format::Svg] {
            let own = render(Kind::Load, &handed, &PlotOptions::default(), format).unwrap();
            assert!(own == render(Kind::Load, &read, &PlotOptions::default(), format).unwrap(), "{format:?}");
        }
    }

    #[test]
    fn a_run_without_series_hands_over_none() {
        let (a, p) = ([ReplicationResult::default()], Vec::new());
        let groups = [Group { variant: "v", sweep: &p, reps: &a }];
        let set = run_set(RunInfo::default(), Vec::new(), &[], &groups, &[], Written { attempts: false, cdf: false })
            .unwrap();
        assert!(set.series.is_none());
    }

    #[test]
    fn seconds_equal_what_a_reader_parses_from_the_csv() {
        // A deterministic spread over every magnitude, and the edges of the fast path.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut values = vec![0, 1, 999_999_999, 1_000_000_000, (1 << 53) - 1, 1 << 53, (1 << 53) + 1, u64::MAX];
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            values.push(x >> (x % 64));
        }
        for ns in values {
            assert_eq!(seconds(ns).to_bits(), number(&secs(ns)).unwrap().to_bits(), "{ns} ns");
        }
    }
}
