//! The readers of the run's CSV files, each into the rows the report uses, refusing a
//! row no run writes with its file, line and column.

use super::*;

/// The metrics of `rows` with their units, in order of first appearance.
pub fn metric_order(rows: &[SummaryRow]) -> Vec<(String, String)> {
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    rows.iter().filter(|r| seen.insert(&r.metric)).map(|r| (r.metric.clone(), r.unit.clone())).collect()
}

/// A file's variant names as the report shows them (`run1:linux` in a comparison), made
/// once per run of equal names: a file lists each variant's rows together, and a trace
/// has millions of them.
struct Names<'a> {
    prefix: &'a dyn Fn(&str) -> String,
    last: Option<(String, String)>,
}

impl<'a> Names<'a> {
    fn new(prefix: &'a dyn Fn(&str) -> String) -> Self {
        Names { prefix, last: None }
    }

    fn of(&mut self, name: &str) -> String {
        match &self.last {
            Some((last, shown)) if last == name => shown.clone(),
            _ => {
                let shown = (self.prefix)(name);
                self.last = Some((name.to_string(), shown.clone()));
                shown
            }
        }
    }
}

pub(super) fn read_summary(
    path: &Path,
    bounds: &Bounds,
    prefix: &dyn Fn(&str) -> String,
) -> Result<(Vec<String>, Vec<SummaryRow>), ReportError> {
    let t = Table::read(path)?;
    let variant = t.col("variant")?;
    let metric = t.col("metric")?;
    if metric <= variant {
        return Err(ReportError::Bad { file: t.file.clone(), why: "`variant` must come before `metric`".into() });
    }
    // A swept duration's column in seconds sits beside its label: the label is the key.
    let columns = &t.headers[variant + 1..metric];
    let keys = crate::output::columns::keys_of(columns);
    let at: Vec<usize> =
        keys.iter().filter_map(|k| columns.iter().position(|c| c == k)).map(|c| variant + 1 + c).collect();
    let (unit, n, mean, sd, lo, hi) =
        (t.col("unit")?, t.col("replications")?, t.col("mean")?, t.col("sd")?, t.col("ci95_low")?, t.col("ci95_high")?);
    let most = bounds.replications.unwrap_or(u64::MAX);
    let mut names = Names::new(prefix);
    let mut rows = Vec::with_capacity(t.row_count());
    for i in 0..t.row_count() {
        let count = t.whole(i, n, most)?;
        let (mean_value, sd_value, ci) = if count == 0 {
            // A metric no replication has a value for is listed with nothing else.
            for c in [mean, sd, lo, hi] {
                if t.num(i, c)?.is_some() {
                    return Err(t.bad(i, c, "has a value while `replications` is 0: no replication gave one"));
                }
            }
            (f64::NAN, None, None)
        } else {
            let mean_value = t.req(i, mean)?;
            let ci = match (t.num(i, lo)?, t.num(i, hi)?) {
                (Some(l), Some(h)) if l > h => {
                    return Err(t.bad(
                        i,
                        lo,
                        &format!("{l} is above ci95_high {h}: an interval's low end is its lower"),
                    ));
                }
                (Some(l), Some(h)) if !(l..=h).contains(&mean_value) => {
                    return Err(t.bad(i, mean, &format!("{mean_value} is outside its interval [{l}, {h}]")));
                }
                (Some(l), Some(h)) => Some((l, h)),
                (None, None) => None,
                (Some(_), None) => {
                    return Err(t.bad(i, hi, "is empty while ci95_low is not: an interval has both ends"));
                }
                (None, Some(_)) => {
                    return Err(t.bad(i, lo, "is empty while ci95_high is not: an interval has both ends"));
                }
            };
            (mean_value, t.within(i, sd, f64::MAX, "")?, ci)
        };
        rows.push(SummaryRow {
            variant: names.of(t.str(i, variant)),
            point: at.iter().map(|&c| t.str(i, c).to_string()).collect(),
            metric: t.str(i, metric).to_string(),
            unit: t.str(i, unit).to_string(),
            n: count,
            mean: mean_value,
            sd: sd_value,
            ci,
        });
    }
    Ok((keys, rows))
}

pub(super) fn read_replications(
    path: &Path,
    keys: &[String],
    bounds: &Bounds,
    prefix: &dyn Fn(&str) -> String,
) -> Result<Vec<ReplicationRow>, ReportError> {
    let t = Table::read(path)?;
    let cells = t.cols(keys);
    let (variant, rep, metric, value) = (t.col("variant")?, t.col("replication")?, t.col("metric")?, t.col("value")?);
    let mut names = Names::new(prefix);
    let mut rows = Vec::with_capacity(t.row_count());
    for i in 0..t.row_count() {
        rows.push(ReplicationRow {
            variant: names.of(t.str(i, variant)),
            point: t.point(i, &cells),
            replication: replication(&t, i, rep, bounds)?,
            metric: t.str(i, metric).to_string(),
            value: t.num(i, value)?,
        });
    }
    Ok(rows)
}

/// A replication's index, below the run's replications.
fn replication(t: &Table, row: usize, col: usize, bounds: &Bounds) -> Result<u32, ReportError> {
    // A run counts replications in u32: a manifest claiming more does not widen that.
    Ok(t.whole(row, col, bounds.last_replication().min(u64::from(u32::MAX)))? as u32)
}

pub(super) fn read_trace(
    path: &Path,
    keys: &[String],
    bounds: &Bounds,
    prefix: &dyn Fn(&str) -> String,
) -> Result<Vec<TraceRow>, ReportError> {
    let t = Table::read(path)?;
    let cells = t.cols(keys);
    let (time, client, variant, rep, event) =
        (t.col("time_s")?, t.col("client")?, t.col("variant")?, t.col("replication")?, t.col("event")?);
    let (sample, srtt, rto) = (t.col("sample_s")?, t.col("srtt_s")?, t.col("rto_s")?);
    // A trace written before the congestion columns lacks them: its rows have none.
    let [cwnd, ssthresh, ca_state] = ["cwnd", "ssthresh", "ca_state"].map(|c| t.headers.iter().position(|h| h == c));
    let window = |i, col: Option<usize>| -> Result<Option<u32>, ReportError> {
        match col {
            Some(c) if !t.str(i, c).trim().is_empty() => Ok(Some(t.whole(i, c, u64::from(u32::MAX))? as u32)),
            _ => Ok(None),
        }
    };
    let horizon = bounds.horizon_words();
    let mut names = Names::new(prefix);
    let mut rows = Vec::with_capacity(t.row_count());
    for i in 0..t.row_count() {
        rows.push(TraceRow {
            time: t.req_within(i, time, bounds.horizon_s, &horizon)?,
            client: t.whole(i, client, u64::from(u32::MAX))? as u32,
            variant: names.of(t.str(i, variant)),
            point: t.point(i, &cells),
            replication: replication(&t, i, rep, bounds)?,
            event: t.str(i, event).to_string(),
            sample: t.within(i, sample, f64::MAX, "")?,
            srtt: t.within(i, srtt, f64::MAX, "")?,
            rto: t.within(i, rto, f64::MAX, "")?,
            cwnd: window(i, cwnd)?,
            ssthresh: window(i, ssthresh)?,
            ca_state: ca_state.map(|c| t.str(i, c).trim()).filter(|s| !s.is_empty()).map(str::to_string),
        });
    }
    Ok(rows)
}

/// A time bin's width: more than zero.
fn bin_width(t: &Table, row: usize, col: usize) -> Result<f64, ReportError> {
    match t.req(row, col)? {
        w if w > 0.0 => Ok(w),
        _ => Err(t.bad(row, col, &format!("`{}` is not a bin width: a bin is wider than 0", t.str(row, col).trim()))),
    }
}

pub(super) fn read_attempts(
    path: &Path,
    keys: &[String],
    bounds: &Bounds,
    prefix: &dyn Fn(&str) -> String,
) -> Result<Vec<AttemptRow>, ReportError> {
    let t = Table::read(path)?;
    let cells = t.cols(keys);
    let (variant, rep, start, width, attempts, refused) = (
        t.col("variant")?,
        t.col("replication")?,
        t.col("bin_start_s")?,
        t.col("bin_width_s")?,
        t.col("attempts")?,
        t.col("refused")?,
    );
    let horizon = bounds.horizon_words();
    let most = u64::from(u32::MAX);
    let mut names = Names::new(prefix);
    (0..t.row_count())
        .map(|i| {
            let count = t.whole(i, attempts, most)?;
            let refusals = if t.str(i, refused).trim().is_empty() { 0 } else { t.whole(i, refused, most)? };
            if refusals > count {
                return Err(t.bad(i, refused, &format!("{refusals} is more than the bin's {count} attempts")));
            }
            Ok(AttemptRow {
                variant: names.of(t.str(i, variant)),
                point: t.point(i, &cells),
                replication: replication(&t, i, rep, bounds)?,
                bin_start: t.req_within(i, start, bounds.horizon_s, &horizon)?,
                bin_width: bin_width(&t, i, width)?,
                attempts: count as f64,
                refused: refusals as f64,
            })
        })
        .collect()
}

pub(super) fn read_cdf(
    path: &Path,
    keys: &[String],
    prefix: &dyn Fn(&str) -> String,
) -> Result<Vec<CdfRow>, ReportError> {
    let t = Table::read(path)?;
    let cells = t.cols(keys);
    let (variant, metric, fraction, value) =
        (t.col("variant")?, t.col("metric")?, t.col("fraction")?, t.col("value_s")?);
    let mut names = Names::new(prefix);
    let mut rows = Vec::with_capacity(t.row_count());
    for i in 0..t.row_count() {
        let share = t.req_within(i, fraction, 1.0, "1: a fraction is from 0 to 1")?;
        // A quantile that does not exist (nobody reconnected) is left empty: skip it.
        if let Some(v) = t.within(i, value, f64::MAX, "")? {
            rows.push(CdfRow {
                variant: names.of(t.str(i, variant)),
                point: t.point(i, &cells),
                metric: t.str(i, metric).to_string(),
                fraction: share,
                value: v,
            });
        }
    }
    Ok(rows)
}

pub(super) fn read_series(
    path: &Path,
    keys: &[String],
    bounds: &Bounds,
    prefix: &dyn Fn(&str) -> String,
) -> Result<SeriesTable, ReportError> {
    let t = Table::read(path)?;
    let cells = t.cols(keys);
    let (variant, rep, start, width) =
        (t.col("variant")?, t.col("replication")?, t.col("bin_start_s")?, t.col("bin_width_s")?);
    // The model's columns are everything after the bin's width.
    let first = width + 1;
    let columns = t.headers[first..].to_vec();
    let horizon = bounds.horizon_words();
    let mut names = Names::new(prefix);
    let mut rows = Vec::with_capacity(t.row_count());
    for i in 0..t.row_count() {
        rows.push(SeriesRow {
            variant: names.of(t.str(i, variant)),
            point: t.point(i, &cells),
            replication: replication(&t, i, rep, bounds)?,
            bin_start: t.req_within(i, start, bounds.horizon_s, &horizon)?,
            bin_width: bin_width(&t, i, width)?,
            values: (first..t.headers.len()).map(|c| t.num(i, c)).collect::<Result<_, _>>()?,
        });
    }
    Ok(SeriesTable { columns, rows })
}

#[cfg(test)]
mod tests {
    use super::Names;

    #[test]
    fn names_label_every_row_even_when_a_variant_comes_back_or_is_empty() {
        let prefix = |n: &str| format!("run1:{n}");
        let mut names = Names::new(&prefix);
        let got: Vec<String> = ["a", "a", "b", "a", ""].iter().map(|n| names.of(n)).collect();
        assert_eq!(got, ["run1:a", "run1:a", "run1:b", "run1:a", "run1:"]);
    }
}
