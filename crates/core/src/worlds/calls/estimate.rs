//! What one replication costs.

use super::world::*;
use super::*;
use crate::engine::time::{SimDuration, SimTime};
use crate::model::server::DownBehavior;
use crate::worlds::estimate::{self, Estimate};

/// Two events per attempt (its start and its end; a call's first start is its own) and
/// one per give-up. A call makes one attempt unless trouble meets it: a down window
/// (restart or outage), a brownout (failing a share of attempts, or slowing the workers
/// below the offered load), or a permanent error. A call that starts in a window retries
/// until the window ends or its limits stop it (through every tier); a bad request until
/// its limits stop it. A window that overloads a server with workers becomes a retry
/// storm that outlives it when the offered load times the attempts a failing call makes
/// exceeds its capacity: then it lasts to the horizon, as a metastable failure does. A
/// retry budget stops it when the retries it allows with every attempt failing leave the
/// load within capacity (`estimate::sustained_attempts`); inside a window the estimate is
/// what the policy allows.
pub(super) fn estimate(spec: &CallsSpec, horizon: SimDuration) -> Estimate {
    let (cfg, p, server) = (&spec.calls, &spec.policy, &spec.server);
    let h = horizon.as_secs_f64();
    let n = f64::from(cfg.clients);
    let secs = |d: SimDuration| d.as_secs_f64();
    let t0 = secs(cfg.start).min(h);
    let (per_client, t1) = match cfg.interval {
        None => (1.0, t0 + secs(cfg.first_calls_spread())),
        Some(i) => {
            let until = ((h - t0) / secs(i)).floor() + 1.0;
            let k = cfg.calls_per_client.map_or(until, |c| f64::from(c).min(until)).max(1.0);
            (k, (t0 + secs(cfg.first_calls_spread()) + (k - 1.0) * secs(i)).min(h))
        }
    };
    let calls = n * per_client;
    let tiers: f64 = cfg.tiers.iter().map(|&t| f64::from(t)).product();
    let sleeps = estimate::Sleeps::of(p);
    let sleep = |k: u32| sleeps.at(k);
    let refused = secs(cfg.fail_time.unwrap_or(cfg.attempt_time));
    let timeout = secs(cfg.timeout);
    let lib = |attempt: f64| estimate::call_attempts(p, attempt, &sleeps);
    // Every tier's library calls, each starting its backoff afresh.
    let attempts_in = |window: f64, attempt: f64| {
        let per = lib(attempt);
        let d = SimDuration::from_secs_f64(window.min(h)).unwrap_or(horizon);
        let k = |k: u32| if per.is_finite() { sleep(k % per as u32) } else { sleep(k) };
        (estimate::attempts_within(d, tiers * per, |i| attempt + k(i)) + 1.0).min(tiers * per)
    };
    // The load offered, and what the workers can serve.
    let load = if t1 > t0 { calls / (t1 - t0) } else { f64::INFINITY };
    let capacity = match (server.concurrency, server.service_time) {
        (Some(c), Some(t)) if t > SimDuration::ZERO => Some(f64::from(c) / secs(t)),
        _ => server.accept_rate,
    };
    let sustained = estimate::sustained_attempts(p, n, load, timeout).min(tiers * lib(timeout));
    let storm = capacity.is_some_and(|c| load * sustained.min(1e9) > c);
    let down_attempt = if server.down_behavior == DownBehavior::Blackhole { timeout } else { refused };
    // (start, end, share of attempts failed, how long a failed attempt takes)
    let mut windows: Vec<(f64, f64, f64, f64)> = Vec::new();
    for r in &server.restart {
        windows.push((secs(r.at), secs(r.at) + secs(r.down), 1.0, down_attempt));
    }
    for o in &server.outage {
        windows.push((secs(o.at), secs(o.at) + secs(o.duration), 1.0, down_attempt));
    }
    for b in &server.brownout {
        let overloaded = capacity.is_some_and(|c| load > c / b.slowdown);
        let share = if overloaded { 1.0 } else { b.fail_fraction };
        let end = if overloaded && storm { h } else { secs(b.end()) };
        windows.push((secs(b.at), end, share, if overloaded { timeout } else { refused }));
    }
    if capacity.is_some_and(|c| load > c) {
        windows.push((t0, h, 1.0, timeout));
    }
    // A call that starts before a window has succeeded before it begins: only the calls
    // started in it (or within an attempt before it) meet it. A closed loop has one call
    // of each client in a window, however long, since the next waits for it.
    let mut extra = 0.0;
    let mut met_calls = 0.0;
    for &(w0, w1, share, attempt) in &windows {
        let mut met = if t1 > t0 {
            calls * estimate::overlap((w0 - attempt, w1), (t0, t1)) / (t1 - t0)
        } else {
            calls * f64::from(u8::from((w0 - attempt..=w1).contains(&t0)))
        };
        if cfg.pacing == Pacing::Closed && share >= 1.0 {
            met = met.min(n);
        }
        let attempts =
            if share >= 1.0 { attempts_in(w1 - w0, attempt) } else { (1.0 / (1.0 - share)).min(tiers * lib(attempt)) };
        extra += met * (attempts - 1.0);
        met_calls += met;
    }
    let mut per_call = 1.0 + extra / calls.max(1.0);
    let mut troubled = (met_calls / calls.max(1.0)).min(1.0);
    if cfg.permanent_fraction > 0.0 {
        let retried = p.retry_on.matches(&cfg.permanent_with.outcome);
        let attempts = if retried { attempts_in(h, refused) } else { tiers };
        per_call += cfg.permanent_fraction * (attempts - 1.0);
        troubled += cfg.permanent_fraction;
    }
    let events = calls * (2.0 * per_call + troubled.min(1.0));
    // Working: each client, its calls in flight (more while they retry) with their
    // queued events, and three times per call (success or give-up, and sleep); the
    // series' bins and the CDFs are kept.
    let bins = h / secs(cfg.monitor.bin) + 1.0;
    let kept = estimate::bytes_of::<f64>(bins * crate::metrics::series::CallsColumn::NAMES.len() as f64 + 3.0 * 101.0);
    let in_flight = n * per_call.min(per_client);
    // The server's workers are made up front, one slot each, however many are busy.
    let workers = f64::from(server.concurrency.unwrap_or(0));
    let working = estimate::bytes_of::<Client>(n)
        + estimate::bytes_of::<SimTime>(workers)
        + in_flight * (std::mem::size_of::<Call>() as f64 + estimate::queue_bytes::<Ev>(1.0))
        + estimate::bytes_of::<u64>(2.0 * calls)
        + kept;
    let knobs = if workers > n {
        vec!["server.concurrency", "calls.clients", "horizon"]
    } else {
        vec!["calls.clients", "horizon"]
    };
    Estimate { events, working, kept, knobs }
}
