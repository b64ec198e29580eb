//! Quantities over time: named columns of per-bin values from time 0 to the horizon,
//! what `series.csv` holds and the load plots draw (offered load and goodput, the share
//! of attempts that are retries, a queue's depth).
//!
//! A column holds a sum per bin (events counted where they happen, busy time split over
//! the bins it spans) or a level sampled at each bin's end; its name says which. A bin
//! with no defined value (a share of zero attempts) holds NaN, written as an empty cell.

use crate::engine::time::{SimDuration, SimTime};

names! {
    /// The columns of `series.csv` for `[calls]`, in order: per bin, calls started,
    /// attempts at the server, those that were retries, their ends by outcome, busy and
    /// wasted worker-seconds, the longest queue, the workers' capacity in attempts, and
    /// retries over attempts.
    CallsColumn {
        Calls = "calls",
        Attempts = "attempts",
        Retries = "retries",
        Succeeded = "succeeded",
        Failed = "failed",
        TimedOut = "timed_out",
        Rejected = "rejected",
        Busy = "busy_s",
        Wasted = "wasted_s",
        QueueMax = "queue_max",
        Capacity = "capacity",
        RetryShare = "retry_share",
    }
}

names! {
    /// The columns of `series.csv` for `[jobs]`, in order: per bin, jobs created,
    /// delivered, dead-lettered and re-enqueued, the jobs waiting or scheduled at the
    /// bin's end, and busy worker-seconds.
    JobsColumn {
        Created = "created",
        Delivered = "delivered",
        DeadLettered = "dead_lettered",
        Retried = "retried",
        QueueDepth = "queue_depth",
        Busy = "busy_s",
    }
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Series {
    #[serde(with = "crate::metrics::wire::nanos")]
    pub width: SimDuration,
    /// (name, one value per bin), every column as long as the others.
    #[serde(deserialize_with = "crate::metrics::wire::columns")]
    pub columns: Vec<(crate::metrics::wire::Name, Vec<f64>)>,
}

impl Series {
    /// Zeroed columns `names` over `[0, horizon]` in bins of `width` (> 0); the last bin
    /// holds the horizon itself.
    pub fn new(width: SimDuration, horizon: SimDuration, names: &[&'static str]) -> Self {
        debug_assert!(width > SimDuration::ZERO);
        let n = (horizon.as_nanos() / width.as_nanos().max(1)) as usize + 1;
        Series { width, columns: names.iter().map(|&name| (name, vec![0.0; n])).collect() }
    }

    pub fn bins(&self) -> usize {
        self.columns.first().map_or(0, |(_, v)| v.len())
    }

    /// The bin holding `t`; times past the horizon fall in the last bin.
    pub fn index(&self, t: SimTime) -> usize {
        ((t.as_nanos() / self.width.as_nanos().max(1)) as usize).min(self.bins().saturating_sub(1))
    }

    /// Adds `value` to column `col` in the bin holding `t`.
    pub fn add(&mut self, col: usize, t: SimTime, value: f64) {
        let i = self.index(t);
        self.columns[col].1[i] += value;
    }

    /// Adds the nanoseconds of `[from, to)` that fall in each bin to column `col`: busy
    /// time spread over the bins it spans, so a column's sum is the interval's length.
    /// No bin gets more than its width: the part past the last bin's end is outside the
    /// series and dropped (a caller whose horizon ends inside the last bin clips there).
    /// Whole nanoseconds add exactly (below 2^53, 104 days); [`Series::to_seconds`] then
    /// converts the column once.
    pub fn add_span(&mut self, col: usize, from: SimTime, to: SimTime) {
        let w = self.width.as_nanos().max(1);
        let end = to.as_nanos().min((self.bins() as u64).saturating_mul(w));
        let mut t = from.as_nanos();
        while t < end {
            let i = (t / w) as usize;
            let upto = ((t / w) + 1).saturating_mul(w).min(end);
            self.columns[col].1[i] += (upto - t) as f64;
            t = upto;
        }
    }

    /// Column `col`, filled by [`Series::add_span`] in nanoseconds, in seconds.
    pub fn to_seconds(&mut self, col: usize) {
        self.columns[col].1.iter_mut().for_each(|v| *v /= 1e9);
    }

    pub fn column(&self, name: &str) -> Option<&[f64]> {
        self.columns.iter().find(|(n, _)| *n == name).map(|(_, v)| v.as_slice())
    }

    /// Bin `i`'s start.
    pub fn start(&self, i: usize) -> SimTime {
        SimTime(i as u64 * self.width.as_nanos())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ms: u64) -> SimTime {
        SimTime(ms * 1_000_000)
    }

    #[test]
    fn a_span_is_split_over_the_bins_it_covers_and_sums_to_its_length() {
        let mut s = Series::new(SimDuration::from_secs(1), SimDuration::from_secs(5), &["busy"]);
        s.add_span(0, t(500), t(3_250));
        s.add_span(0, SimTime(3_250_000_000), SimTime(3_250_000_001));
        s.to_seconds(0);
        assert_eq!(s.column("busy").unwrap(), [0.5, 1.0, 1.0, 0.250000001, 0.0, 0.0]);
        // Past the last bin's end nothing lands: the last bin holds at most its width.
        let mut s = Series::new(SimDuration::from_secs(1), SimDuration::from_secs(5), &["busy"]);
        s.add_span(0, t(4_500), t(7_000));
        s.add_span(0, t(6_500), t(9_000));
        s.to_seconds(0);
        assert_eq!(s.column("busy").unwrap()[4..], [0.5, 1.0]);
    }

    /// A world fills a column by its variant's index and a reader finds it by name: the
    /// two agree for every column of both worlds.
    #[test]
    fn a_column_is_at_its_variants_index_under_its_name() {
        let width = SimDuration::from_secs(1);
        let mut s = Series::new(width, width, CallsColumn::NAMES);
        for &c in CallsColumn::ALL {
            s.add(c.index(), SimTime::ZERO, c.index() as f64 + 1.0);
        }
        for &c in CallsColumn::ALL {
            assert_eq!(s.column(c.name()).unwrap()[0], c.index() as f64 + 1.0, "{}", c.name());
            assert_eq!(CallsColumn::from_name(c.name()), Some(c));
        }
        let mut s = Series::new(width, width, JobsColumn::NAMES);
        s.add(JobsColumn::QueueDepth.index(), SimTime::ZERO, 7.0);
        assert_eq!(s.column("queue_depth").unwrap()[0], 7.0);
        assert_eq!(JobsColumn::ALL.len(), s.columns.len());
        assert_eq!(JobsColumn::from_name("busy_s"), Some(JobsColumn::Busy));
    }

    #[test]
    fn counts_land_in_the_bin_holding_their_time() {
        let mut s = Series::new(SimDuration::from_secs(2), SimDuration::from_secs(4), &["a", "b"]);
        s.add(1, t(1_999), 1.0);
        s.add(1, t(2_000), 1.0);
        s.add(0, t(60_000), 3.0);
        assert_eq!(s.column("b").unwrap(), [1.0, 1.0, 0.0]);
        assert_eq!(s.column("a").unwrap(), [0.0, 0.0, 3.0]);
        assert_eq!(s.start(2), t(4_000));
    }
}
