//! What one replication costs.

use super::world::*;
use super::*;
use crate::engine::time::SimDuration;
use crate::model::jobs::provider::Behavior;
use crate::worlds::estimate::{self, Estimate};

/// Per job: its creation, and for each run its end, and for each retry the wake-up at
/// its due time: two events a run. A job runs once unless every provider fails it: in a
/// down window of the first provider (as far as the others are down with it), a job
/// created there retries until the window ends or its
/// policy stops it; poison retries until its policy stops it. The workers bound the
/// retries of a window: no more runs than they can make while it lasts.
pub(super) fn estimate(spec: &JobsSpec, horizon: SimDuration) -> Estimate {
    let (cfg, p) = (&spec.jobs, &spec.policy);
    let h = horizon.as_secs_f64();
    let secs = |d: SimDuration| d.as_secs_f64();
    let t0 = secs(cfg.start).min(h);
    let mut jobs = cfg.rate * (h - t0) + 1.0;
    if let Some(count) = cfg.count {
        jobs = jobs.min(count as f64);
    }
    let t1 = if cfg.rate > 0.0 { (t0 + jobs / cfg.rate).min(h) } else { t0 };
    let sleeps = estimate::Sleeps::of(p);
    let sleep = |k: u32| sleeps.at(k);
    let fail_run: f64 = cfg.provider.iter().map(|q| secs(q.fail_time.unwrap_or(q.call_time))).sum();
    let policy_runs = |run: f64| {
        let n = estimate::call_attempts(p, run, &sleeps);
        if n.is_finite() { n } else { estimate::attempts_within(horizon, n, |k| run + sleep(k)) }
    };
    let workers = f64::from(cfg.workers);
    let mut runs = jobs;
    let mut troubled = 0.0;
    let (first, others) = cfg.provider.split_first().expect("a checked [jobs] has a provider");
    for w in &first.down {
        let (w0, w1) = (secs(w.at), secs(w.at) + secs(w.duration));
        // The share of runs that fail: every provider must fail them.
        let mut share = w.fail_fraction;
        for q in others {
            let covered: f64 = q
                .down
                .iter()
                .map(|v| v.fail_fraction * estimate::overlap((w0, w1), (secs(v.at), secs(v.at) + secs(v.duration))))
                .sum();
            share *= (covered / (w1 - w0).max(1e-9)).min(1.0);
        }
        let run = match w.behavior {
            Behavior::Refuse => fail_run,
            Behavior::Hang => secs(first.timeout),
        };
        let limit = policy_runs(run);
        // A job created before the window has been delivered before it begins.
        let met = if t1 > t0 { estimate::overlap((w0 - run, w1), (t0, t1)) / (t1 - t0) } else { 0.0 };
        let each = if share >= 1.0 {
            let window = SimDuration::from_secs_f64(w1 - w0).unwrap_or(horizon);
            (estimate::attempts_within(window, limit, |k| run + sleep(k)) + 1.0).min(limit)
        } else {
            (1.0 / (1.0 - share)).min(limit)
        };
        let most = workers * (w1 - w0) / run.max(1e-6);
        runs += (jobs * met * share.min(1.0) * (each - 1.0)).min(most);
        troubled += jobs * met * share;
    }
    runs += jobs * cfg.poison_fraction * (policy_runs(fail_run) - 1.0);
    let events = 2.0 * runs;
    // Working: the jobs waiting at once (a window's arrivals at most), a
    // completion time per job, the series; the series and the CDF are kept.
    let bins = h / secs(cfg.bin) + 1.0;
    let kept = estimate::bytes_of::<f64>(bins * crate::metrics::series::JobsColumn::NAMES.len() as f64 + 101.0);
    let waiting = troubled.max(workers) + jobs * cfg.poison_fraction;
    let working = waiting * (std::mem::size_of::<JobState>() + 32) as f64 + estimate::bytes_of::<u64>(jobs) + kept;
    Estimate { events, working, kept, knobs: vec!["jobs.rate", "horizon"] }
}
