//! What a dashboard over a `[calls]` server would show, bin by bin (`series.csv`), and
//! the answers read from it: goodput, offered load against capacity, wasted work, when
//! goodput recovered after the incident, and when a retry-share alert fired.
//!
//! The incident is the span from the first of the server's brownouts, outages and
//! restarts to the end of the last; runs without one, or without an open stream of calls
//! (one call per client, or closed pacing, which slows down with the server), have no
//! incident metrics.
//!
//! Recovery: the server has recovered from the first bin after the incident's end from
//! which, in every window of [`WINDOW`] bins up to the last bin that ends a timeout before
//! the horizon, successes are at least [`RECOVERED`] of the calls started in the window,
//! relative to the same ratio before the incident (1 when the incident starts with the
//! run). A run whose last window falls short did not recover within the horizon.

use crate::engine::time::{SimDuration, SimTime};
use crate::metrics::MetricValue;

use super::metrics;
use crate::metrics::series::{CallsColumn, Series};
use crate::model::server::{ServerConfig, ServerSchedule};

// The columns' indices, for the world that fills them.
pub const CALLS: usize = CallsColumn::Calls.index();
pub const ATTEMPTS: usize = CallsColumn::Attempts.index();
pub const RETRIES: usize = CallsColumn::Retries.index();
pub const SUCCEEDED: usize = CallsColumn::Succeeded.index();
pub const FAILED: usize = CallsColumn::Failed.index();
pub const TIMED_OUT: usize = CallsColumn::TimedOut.index();
pub const REJECTED: usize = CallsColumn::Rejected.index();
pub const BUSY: usize = CallsColumn::Busy.index();
pub const WASTED: usize = CallsColumn::Wasted.index();
pub const QUEUE_MAX: usize = CallsColumn::QueueMax.index();
const CAPACITY: usize = CallsColumn::Capacity.index();
const RETRY_SHARE: usize = CallsColumn::RetryShare.index();

/// Bins per recovery window.
pub const WINDOW: usize = 5;
/// The share of the pre-incident success ratio that counts as recovered.
pub const RECOVERED: f64 = 0.9;

/// `[from, to)`: the server's trouble, from the first down time or brownout to the end
/// of the last.
pub fn incident(server: &ServerConfig) -> Option<(SimTime, SimTime)> {
    let schedule = ServerSchedule::new(server);
    let down = schedule.windows().iter().map(|w| (w.start, w.end));
    let brownouts = server.brownout.iter().map(|b| (SimTime(b.at.0), SimTime(b.end().0)));
    brownouts
        .chain(down)
        .fold(None, |acc, (a, b)| Some(acc.map_or((a, b), |(x, y): (SimTime, SimTime)| (x.min(a), y.max(b)))))
}

pub fn new_series(bin: SimDuration, horizon: SimDuration, server: &ServerConfig) -> Series {
    let mut s = Series::new(bin, horizon, CallsColumn::NAMES);
    let n = s.bins();
    let capacity = match (server.concurrency, server.service_time) {
        (Some(c), Some(t)) if t > SimDuration::ZERO => f64::from(c) / t.as_secs_f64(),
        _ => f64::NAN,
    };
    let w = bin.as_nanos() as f64;
    // A slowdown over part of a bin serves that part at its own rate. Each brownout
    // visits only the bins it may overlap (one more each side, which add nothing), in
    // the file's order, so every bin sums the same terms in the same order as a pass
    // over all brownouts would, in time linear in bins plus brownouts.
    let (mut slowed, mut rate) = (vec![0.0; n], vec![0.0; n]);
    for b in &server.brownout {
        let first = ((b.at.0 as f64 / w).floor() as usize).saturating_sub(1);
        let last = ((b.end().0 as f64 / w).ceil() as usize).saturating_add(1).min(n);
        for i in first.min(last)..last {
            let (from, to) = (i as f64 * w, (i + 1) as f64 * w);
            let overlap = (to.min(b.end().0 as f64) - from.max(b.at.0 as f64)).max(0.0) / w;
            slowed[i] += overlap;
            rate[i] += overlap / b.slowdown;
        }
    }
    for i in 0..n {
        s.columns[CAPACITY].1[i] = capacity * (rate[i] + (1.0 - slowed[i]));
    }
    s
}

/// Records the queue length an arrival found.
pub fn queue_seen(s: &mut Series, t: SimTime, len: usize) {
    let i = s.index(t);
    let v = &mut s.columns[QUEUE_MAX].1[i];
    *v = v.max(len as f64);
}

/// Fills the derived column and returns the metrics read from the series.
pub fn finish(
    s: &mut Series,
    server: &ServerConfig,
    first_start: Option<SimTime>,
    horizon: SimDuration,
    timeout: SimDuration,
    alert: Option<f64>,
    steady: bool,
) -> Vec<MetricValue> {
    let n = s.bins();
    s.to_seconds(BUSY);
    s.to_seconds(WASTED);
    for i in 0..n {
        let a = s.columns[ATTEMPTS].1[i];
        s.columns[RETRY_SHARE].1[i] = if a > 0.0 { s.columns[RETRIES].1[i] / a } else { f64::NAN };
    }
    let col = |c: usize| &s.columns[c].1;
    let width = s.width.as_secs_f64();
    let workers = server.concurrency.is_some();
    let mut out = Vec::new();
    let first = first_start.map_or(0, |t| s.index(t));
    let horizon_s = horizon.as_secs_f64();
    let active = (horizon_s - first_start.map_or(0.0, |t| t.as_nanos() as f64 / 1e9)).max(width);
    let total = |c: usize, from: usize| col(c)[from..].iter().sum::<f64>();
    // The last tenth of the horizon: where a run that did not recover still is.
    let tail_from = s.index(SimTime((horizon.as_nanos() as f64 * 0.9) as u64));
    let tail_len = (horizon_s - s.start(tail_from).as_nanos() as f64 / 1e9).max(width);
    out.push(MetricValue::of(&metrics::GOODPUT, total(SUCCEEDED, first) / active));
    out.push(MetricValue::of(&metrics::GOODPUT_END, total(SUCCEEDED, tail_from) / tail_len));
    if workers {
        let capacity = |from: usize| {
            let c: f64 = col(CAPACITY)[from..].iter().sum::<f64>() * width;
            (c > 0.0).then_some(c)
        };
        let load = |from: usize| capacity(from).map(|c| total(ATTEMPTS, from) / c);
        // Work offered over capacity: a ratio that exceeds 1 in overload, not a share.
        out.push(MetricValue::maybe_of(&metrics::OFFERED_LOAD, load(first)));
        out.push(MetricValue::maybe_of(&metrics::OFFERED_LOAD_END, load(tail_from)));
        let busy = total(BUSY, 0);
        out.push(MetricValue::maybe_of(&metrics::WASTED_WORK, (busy > 0.0).then(|| total(WASTED, 0) / busy)));
    }
    let Some((from, to)) = incident(server) else { return out };
    // Recovery needs a steady stream of new calls to measure goodput against.
    if !steady {
        return out;
    }
    let (a, b) = (s.index(from), s.index(to.saturating_add(SimDuration(1))).min(n - 1));
    let started: f64 = col(CALLS)[a..b].iter().sum();
    let per_call = (started > 0.0).then(|| col(ATTEMPTS)[a..b].iter().sum::<f64>() / started);
    out.push(MetricValue::maybe_of(&metrics::INCIDENT_ATTEMPTS_PER_CALL, per_call));
    let recovered = recovery(s, first, from, to, horizon, timeout);
    out.push(MetricValue::of(&metrics::RECOVERED, if recovered.is_some() { 1.0 } else { 0.0 }));
    out.push(MetricValue::maybe_of(&metrics::TIME_TO_RECOVER, recovered.map(|t| t.saturating_since(to).as_secs_f64())));
    if let Some(threshold) = alert {
        let fired = (0..n).find(|&i| s.start(i + 1) > from && s.columns[RETRY_SHARE].1[i] >= threshold);
        let delay = fired.map(|i| (s.start(i + 1).as_nanos() as f64 - from.as_nanos() as f64) / 1e9);
        out.push(MetricValue::maybe_of(&metrics::ALERT_DELAY, delay));
    }
    out
}

/// When goodput recovered after the incident `[from, to)` (see the module doc).
fn recovery(
    s: &Series,
    first: usize,
    from: SimTime,
    to: SimTime,
    horizon: SimDuration,
    timeout: SimDuration,
) -> Option<SimTime> {
    let calls = &s.columns[CALLS].1;
    let ok = &s.columns[SUCCEEDED].1;
    let ratio = |a: usize, b: usize| {
        let c: f64 = calls[a..b].iter().sum();
        (c > 0.0).then(|| ok[a..b].iter().sum::<f64>() / c)
    };
    let before = s.index(from);
    let baseline = if before > first { ratio(first, before).unwrap_or(1.0) } else { 1.0 };
    // Bins [0, last) end a timeout before the horizon: their calls had time to finish.
    let cutoff = SimTime(horizon.as_nanos()).0.saturating_sub(timeout.as_nanos());
    let last = (0..s.bins()).take_while(|&i| s.start(i + 1).0 <= cutoff).count();
    let start = s.index(to).max(first);
    if last < start + WINDOW {
        return None;
    }
    let good = |i: usize| ratio(i, i + WINDOW).is_none_or(|r| r >= RECOVERED * baseline);
    // The earliest bin from which every window is good: scan back from the last window.
    let mut i = last - WINDOW;
    if !good(i) {
        return None;
    }
    while i > start && good(i - 1) {
        i -= 1;
    }
    Some(s.start(i).max(to))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::server::{Brownout, Outage};

    fn secs(n: u64) -> SimDuration {
        SimDuration::from_secs(n)
    }

    fn server(brownout_at: u64) -> ServerConfig {
        ServerConfig {
            concurrency: Some(10),
            service_time: Some(SimDuration::from_millis(100)),
            brownout: vec![Brownout { at: secs(brownout_at), duration: secs(10), fail_fraction: 1.0, slowdown: 2.0 }],
            ..ServerConfig::default()
        }
    }

    /// 100 calls a second for 100 s; successes as `ok(bin)`; 5 % retries before 40 s, 60 % after.
    fn run(ok: impl Fn(usize) -> f64, alert: Option<f64>) -> (Series, Vec<MetricValue>) {
        let cfg = server(30);
        let mut s = new_series(secs(1), secs(100), &cfg);
        for i in 0..100 {
            s.columns[CALLS].1[i] = 100.0;
            s.columns[SUCCEEDED].1[i] = ok(i);
            s.columns[ATTEMPTS].1[i] = 100.0;
            s.columns[RETRIES].1[i] = if i < 40 { 5.0 } else { 60.0 };
        }
        let m = finish(&mut s, &cfg, Some(SimTime::ZERO), secs(100), secs(1), alert, true);
        (s, m)
    }

    fn get(m: &[MetricValue], name: &str) -> Option<f64> {
        m.iter().find(|v| v.name == name).unwrap_or_else(|| panic!("no {name}")).value
    }

    #[test]
    fn a_slowdown_lowers_the_capacity_of_the_bins_it_covers() {
        let s = new_series(secs(1), secs(50), &server(30));
        let cap = s.column("capacity").unwrap();
        // 10 workers at 100 ms: 100/s; half that in the brownout (slowdown 2).
        assert_eq!((cap[29], cap[30], cap[39], cap[40]), (100.0, 50.0, 50.0, 100.0));
    }

    #[test]
    fn each_bins_capacity_is_the_sum_over_every_brownout_to_the_bit() {
        // Brownouts that start and end inside bins, on their edges, and span several,
        // at odd times and slowdowns: the capacity a pass over every brownout gives.
        let ms = SimDuration::from_millis;
        let brownout =
            |at: u64, len: u64, slowdown: f64| Brownout { at: ms(at), duration: ms(len), fail_fraction: 0.0, slowdown };
        let cfg = ServerConfig {
            concurrency: Some(7),
            service_time: Some(ms(30)),
            brownout: vec![
                brownout(0, 333, 1.7),
                brownout(333, 1000, 3.1),
                brownout(2000, 1, 1.0),
                brownout(2999, 2, 9.9),
                brownout(4321, 5555, 2.2),
            ],
            ..ServerConfig::default()
        };
        assert!(cfg.validate().is_empty());
        let bin = ms(700);
        let s = new_series(bin, secs(12), &cfg);
        let w = bin.as_nanos() as f64;
        for (i, got) in s.column("capacity").unwrap().iter().enumerate() {
            let (from, to) = (i as f64 * w, (i + 1) as f64 * w);
            let (mut slowed, mut rate) = (0.0, 0.0);
            for b in &cfg.brownout {
                let overlap = (to.min(b.end().0 as f64) - from.max(b.at.0 as f64)).max(0.0) / w;
                slowed += overlap;
                rate += overlap / b.slowdown;
            }
            let want = f64::from(7u32) / ms(30).as_secs_f64() * (rate + (1.0 - slowed));
            assert_eq!(got.to_bits(), want.to_bits(), "bin {i}: {got} against {want}");
        }
    }

    #[test]
    fn goodput_back_to_the_baseline_after_the_incident_is_a_recovery_at_that_bin() {
        // Collapse from 30 s, back to 95 % of calls from 55 s.
        let (_, m) = run(|i| if (30..55).contains(&i) { 0.0 } else { 95.0 }, None);
        assert_eq!(get(&m, "recovered"), Some(1.0));
        // The incident ends at 40 s; recovered from the 55 s bin: 15 s.
        assert_eq!(get(&m, "time_to_recover"), Some(15.0));
    }

    #[test]
    fn goodput_that_stays_low_to_the_horizon_did_not_recover() {
        let (_, m) = run(|i| if i < 30 { 95.0 } else { 20.0 }, None);
        assert_eq!(get(&m, "recovered"), Some(0.0));
        assert_eq!(get(&m, "time_to_recover"), None);
        assert!((get(&m, "goodput_end").unwrap() - 20.0).abs() < 1e-9);
    }

    #[test]
    fn the_alert_fires_at_the_end_of_the_first_bin_over_the_threshold_after_the_incident_began() {
        // Retries are 5 % until 40 s, 60 % after; the incident began at 30 s.
        let (s, m) = run(|_| 95.0, Some(0.5));
        assert_eq!(s.column("retry_share").unwrap()[39], 0.05);
        assert_eq!(get(&m, "alert_delay"), Some(11.0));
        // A threshold nothing reaches never fires.
        let (_, m) = run(|_| 95.0, Some(0.9));
        assert_eq!(get(&m, "alert_delay"), None);
    }

    #[test]
    fn the_incident_spans_every_brownout_outage_and_restart() {
        let mut cfg = server(30);
        cfg.outage.push(Outage { at: secs(5), duration: secs(2) });
        let ns = |s: u64| SimTime(s * 1_000_000_000);
        assert_eq!(incident(&cfg), Some((ns(5), ns(40))));
        assert_eq!(incident(&ServerConfig::default()), None);
    }
}
