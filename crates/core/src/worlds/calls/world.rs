//! The simulation: clients, calls and attempts, and what a replication reports.

use super::answer::CallServer;
use super::monitor::{ATTEMPTS, BUSY, CALLS, FAILED, REJECTED, RETRIES, SUCCEEDED, TIMED_OUT, WASTED};
use super::*;
use crate::engine::rng::{CounterRng, Purpose};
use crate::engine::run::{EngineError, Scheduler, World, run};
use crate::engine::time::{SimDuration, SimTime};
use crate::metrics::bursts::FirstBurst;
use crate::metrics::quantile::{Distribution, cdf_secs, quantile};
use crate::metrics::series::Series;
use crate::metrics::{MetricValue, ReplicationResult};
use crate::model::retry::{Decision, GiveUpReason, Outcome, RetryBudget, RetryPolicy, RetryState, StopRule};
use crate::worlds::{Job, start};
use rand::RngExt;

#[derive(Clone, Copy, Debug)]
pub(super) enum Ev {
    /// Client `c` starts its next logical call.
    Start(u32),
    /// Call slot `i` starts its next attempt.
    Attempt(u32),
    /// The attempt in flight of call slot `i` ends.
    Ended(u32),
    /// Call slot `i`'s library call gives up now (after a wait).
    GaveUp(u32, GiveUpReason),
}

/// One logical call in flight.
#[derive(Clone, Debug)]
pub(super) struct Call {
    client: u32,
    start: SimTime,
    /// The library call under way.
    state: RetryState,
    /// Attempts made at each tier, outermost first (only `tiers.len()` are used).
    tier: [u32; MAX_TIERS],
    /// The attempt in flight: how it will end, and whether a `cut` deadline ends it.
    pending: Outcome,
    cut: bool,
    /// When the last failed attempt ended, and whether the server had done its work.
    failed_at: SimTime,
    applied: bool,
    /// Sleeps of the library calls before this one (and their waits before giving up).
    slept: SimDuration,
    /// A bad request: the server fails every attempt with `permanent_with`.
    bad: bool,
}

pub(super) struct Client {
    budget: RetryBudget,
    rng: CounterRng,
    /// Start offset, then bad-request draws and Poisson gaps, in the order of its calls.
    workload: CounterRng,
    /// Logical calls started so far.
    calls: u32,
    /// With `keep_backoff`: the backoff its last call left.
    kept: Option<RetryState>,
}

/// What the calls' reasons can be under this policy, in a fixed order: the metric list
/// must be the same in every replication.
pub(super) fn possible_reasons(spec: &CallsSpec) -> Vec<&'static str> {
    let p = &spec.policy;
    let c = &spec.calls;
    let mut failures =
        vec![c.fail_with.outcome, Outcome::Timeout { applied: false }, Outcome::Dropped { applied: false }];
    if c.permanent_fraction > 0.0 {
        failures.push(c.permanent_with.outcome);
    }
    p.possible_give_ups(&failures, !c.idempotency.model().safe_to_retry())
}

pub(super) struct CallsWorld<'a> {
    spec: &'a CallsSpec,
    policy: &'a RetryPolicy,
    server: CallServer,
    clients: Vec<Client>,
    /// Call slots, reused through `free`.
    slots: Vec<Option<Call>>,
    free: Vec<u32>,
    /// The first call's time of each client, for the calls that follow at `interval`.
    first: Vec<SimTime>,
    started: u64,
    succeeded: u64,
    reasons: Vec<(&'static str, u64)>,
    library_calls: u64,
    server_calls: u64,
    first_attempts: u64,
    duplicates: u64,
    success_ns: Vec<u64>,
    giveup_ns: Vec<u64>,
    sleep_ns: Vec<u64>,
    /// Attempts of bad requests after their first: calls that could never succeed.
    bad_retries: u64,
    series: Series,
    horizon: SimTime,
    first_burst: Option<FirstBurst>,
}

impl CallsWorld<'_> {
    fn call(&mut self, i: u32) -> &mut Call {
        self.slots[i as usize].as_mut().expect("a live call slot")
    }

    fn start_call(&mut self, c: u32, sched: &mut Scheduler<Ev>) {
        let now = sched.now();
        let cfg = &self.spec.calls;
        let client = &mut self.clients[c as usize];
        client.calls += 1;
        if let Some(interval) = cfg.interval
            && cfg.calls_per_client.is_none_or(|n| client.calls < n)
        {
            match cfg.pacing {
                Pacing::Open => {
                    let next = self.first[c as usize].saturating_add(interval.saturating_mul(u64::from(client.calls)));
                    sched.at(next, Ev::Start(c));
                }
                Pacing::Poisson => {
                    sched.at(now.saturating_add(start::exponential(interval, &mut client.workload)), Ev::Start(c));
                }
                Pacing::Closed => {}
            }
        }
        let bad = cfg.permanent_fraction > 0.0 && client.workload.random::<f64>() < cfg.permanent_fraction;
        let state = match client.kept.take() {
            Some(mut kept) => {
                kept.next_call(self.policy, now);
                kept
            }
            None => RetryState::new(self.policy, now).with_idempotency(cfg.idempotency.model()),
        };
        self.started += 1;
        self.series.add(CALLS, now, 1.0);
        let call = Call {
            client: c,
            start: now,
            state,
            tier: [1; MAX_TIERS],
            pending: Outcome::Success,
            cut: false,
            failed_at: now,
            applied: false,
            slept: SimDuration::ZERO,
            bad,
        };
        let i = match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = Some(call);
                i
            }
            None => {
                self.slots.push(Some(call));
                (self.slots.len() - 1) as u32
            }
        };
        self.library_call(i, sched);
    }

    /// A library call begins: its first attempt goes when the client's rate limiter (AWS
    /// adaptive) lets it, at once otherwise.
    fn library_call(&mut self, i: u32, sched: &mut Scheduler<Ev>) {
        self.library_calls += 1;
        let now = sched.now();
        let c = self.call(i).client;
        let at = self.clients[c as usize].budget.send_at(now);
        if at > now {
            sched.at(at, Ev::Attempt(i));
        } else {
            self.attempt(i, sched);
        }
    }

    /// An attempt starts now: ask the server, and schedule the attempt's end.
    fn attempt(&mut self, i: u32, sched: &mut Scheduler<Ev>) {
        let now = sched.now();
        let cfg = &self.spec.calls;
        let bad = self.call(i).bad;
        if self.server.has_workers() {
            let queued = self.server.queued(now);
            monitor::queue_seen(&mut self.series, now, queued);
        }
        let answer = self.server.answer(now, cfg, bad);
        let (mut end, mut outcome) = (answer.end, answer.outcome);
        let policy = self.policy;
        let call = self.call(i);
        let first = call.state.attempts() == 0 && call.tier.iter().all(|&t| t == 1);
        // gRPC, envoy: the call's deadline cancels the attempt in flight.
        let mut cut = false;
        if policy.deadline_rule == StopRule::Cut
            && let Some(deadline) = call.state.deadline_at(policy)
            && end > deadline
        {
            let applied = answer.done_at.is_some_and(|d| d <= deadline);
            (end, outcome, cut) = (deadline.max(now), Outcome::Timeout { applied }, true);
        }
        call.pending = outcome;
        call.cut = cut;
        self.server_calls += 1;
        if first {
            self.first_attempts += 1;
        } else {
            self.series.add(RETRIES, now, 1.0);
            self.bad_retries += u64::from(bad);
        }
        self.series.add(ATTEMPTS, now, 1.0);
        if let Some(b) = &mut self.first_burst {
            b.add(now);
        }
        if answer.rejected {
            self.series.add(REJECTED, now, 1.0);
        }
        if outcome.is_timeout() {
            self.series.add(TIMED_OUT, end, 1.0);
        }
        if let Some((from, to)) = answer.work {
            // Work past the horizon is outside the run: the last bin holds only its share.
            let to = to.min(self.horizon);
            self.series.add_span(BUSY, from, to);
            // The client stopped waiting before the reply: the server works for nobody.
            if !outcome.is_success() {
                self.series.add_span(WASTED, from, to);
            }
        }
        sched.at(end, Ev::Ended(i));
    }

    fn ended(&mut self, i: u32, sched: &mut Scheduler<Ev>) {
        let now = sched.now();
        let policy = self.policy;
        let slot = self.slots[i as usize].as_mut().expect("a live call slot");
        let client = &mut self.clients[slot.client as usize];
        let outcome = slot.pending;
        let mut decision = slot.state.on_outcome(policy, &mut client.budget, now, &outcome, &mut client.rng);
        if slot.cut {
            // The deadline ended the call mid-attempt, whatever the outcome's own verdict.
            debug_assert!(matches!(decision, Decision::GiveUp { .. }), "{decision:?}");
            decision = Decision::GiveUp { at: now, reason: GiveUpReason::Deadline };
        }
        match decision {
            Decision::Done => {
                let total = slot.slept + slot.state.slept();
                let elapsed = now.saturating_since(slot.start);
                self.succeeded += 1;
                self.success_ns.push(elapsed.as_nanos());
                self.sleep_ns.push(total.as_nanos());
                self.series.add(SUCCEEDED, now, 1.0);
                self.finish(i, sched);
            }
            Decision::RetryAt { at, duplicate, .. } => {
                self.duplicates += u64::from(duplicate);
                sched.at(at, Ev::Attempt(i));
            }
            Decision::GiveUp { at, reason } => {
                slot.failed_at = now;
                slot.applied = outcome.applied();
                if at > now {
                    sched.at(at, Ev::GaveUp(i, reason));
                } else {
                    self.gave_up(i, reason, sched);
                }
            }
        }
    }

    /// The library call gave up now: an outer tier tries again at once if it has
    /// attempts left, otherwise the logical call has failed.
    fn gave_up(&mut self, i: u32, reason: GiveUpReason, sched: &mut Scheduler<Ev>) {
        let now = sched.now();
        let tiers = &self.spec.calls.tiers;
        let policy = self.policy;
        let idempotency = self.spec.calls.idempotency.model();
        let call = self.slots[i as usize].as_mut().expect("a live call slot");
        call.slept += call.state.slept() + now.saturating_since(call.failed_at);
        if let Some(level) = (0..tiers.len()).rev().find(|&l| call.tier[l] < tiers[l]) {
            call.tier[level] += 1;
            for t in &mut call.tier[level + 1..] {
                *t = 1;
            }
            // The application does not know whether the server did the work.
            if call.applied && !idempotency.safe_to_retry() {
                self.duplicates += 1;
            }
            call.state = RetryState::new(policy, now).with_idempotency(idempotency);
            self.library_call(i, sched);
            return;
        }
        let elapsed = now.saturating_since(call.start);
        let slept = call.slept;
        self.giveup_ns.push(elapsed.as_nanos());
        self.sleep_ns.push(slept.as_nanos());
        if let Some(r) = self.reasons.iter_mut().find(|(slug, _)| *slug == reason.slug()) {
            r.1 += 1;
        } else {
            debug_assert!(false, "reason {reason:?} not foreseen by possible_reasons");
        }
        self.series.add(FAILED, now, 1.0);
        self.finish(i, sched);
    }

    /// The logical call in slot `i` has ended now: a closed-loop client starts its next
    /// one `interval` later, and a client that keeps its backoff keeps this call's.
    fn finish(&mut self, i: u32, sched: &mut Scheduler<Ev>) {
        let call = self.slots[i as usize].take().expect("a live call slot");
        self.free.push(i);
        let cfg = &self.spec.calls;
        let client = &mut self.clients[call.client as usize];
        if cfg.keep_backoff {
            client.kept = Some(call.state);
        }
        if cfg.pacing == Pacing::Closed
            && let Some(interval) = cfg.interval
            && cfg.calls_per_client.is_none_or(|n| client.calls < n)
        {
            sched.at(sched.now().saturating_add(interval), Ev::Start(call.client));
        }
    }
}

impl World for CallsWorld<'_> {
    type Event = Ev;

    fn handle(&mut self, event: Ev, sched: &mut Scheduler<Ev>) {
        match event {
            Ev::Start(c) => self.start_call(c, sched),
            Ev::Attempt(i) => self.attempt(i, sched),
            Ev::Ended(i) => self.ended(i, sched),
            Ev::GaveUp(i, reason) => self.gave_up(i, reason, sched),
        }
    }
}

/// A client's first call after `start`: spread as `start_spread` says, or with a steady
/// phase and no spread written, the stationary residual of its pacing (the client has
/// been calling for ever), so that the run does not open with every client's call at
/// once.
pub(super) fn first_offset(cfg: &CallsConfig, workload: &mut CounterRng) -> SimDuration {
    match cfg.interval {
        Some(interval) if cfg.start_spread == SimDuration::ZERO && cfg.phase == Phase::Steady => {
            start::residual(interval, cfg.pacing == Pacing::Poisson, workload)
        }
        _ => start::offset(cfg.start_spread, workload),
    }
}

/// Runs one replication of one `[calls]` variant.
pub fn run_replication(spec: &CallsSpec, job: Job<'_>) -> Result<ReplicationResult, EngineError> {
    let Job { seeds, replication, horizon, budget } = job;
    let rep = u64::from(replication);
    let cfg = &spec.calls;
    let n = cfg.clients;
    let mut sched = Scheduler::new(SimTime::ZERO + horizon);
    let mut first = Vec::with_capacity(n as usize);
    let clients = (0..n)
        .map(|c| {
            let mut workload = CounterRng::at(seeds.counter_key(rep, u64::from(c), Purpose::Workload), 0);
            let offset = first_offset(cfg, &mut workload);
            let at = (SimTime::ZERO + cfg.start).saturating_add(offset);
            first.push(at);
            sched.at(at, Ev::Start(c));
            Client {
                budget: spec.policy.new_budget(SimTime::ZERO),
                rng: CounterRng::at(seeds.counter_key(rep, u64::from(c), Purpose::Jitter), 0),
                workload,
                calls: 0,
                kept: None,
            }
        })
        .collect();
    let server = CallServer::new(&spec.server, CounterRng::at(seeds.counter_key(rep, 0, Purpose::Server), 0));
    let mut world = CallsWorld {
        spec,
        policy: &spec.policy,
        first_burst: FirstBurst::after(server.first_up(), horizon),
        server,
        clients,
        slots: Vec::new(),
        free: Vec::new(),
        first,
        started: 0,
        succeeded: 0,
        reasons: possible_reasons(spec).into_iter().map(|r| (r, 0)).collect(),
        library_calls: 0,
        server_calls: 0,
        first_attempts: 0,
        duplicates: 0,
        success_ns: Vec::new(),
        giveup_ns: Vec::new(),
        sleep_ns: Vec::new(),
        bad_retries: 0,
        series: monitor::new_series(cfg.monitor.bin, horizon, &spec.server),
        horizon: SimTime::ZERO + horizon,
    };
    let stats = run(&mut world, &mut sched, budget)?;
    Ok(finish(world, stats.events, horizon))
}

pub(super) fn mean_secs(ns: &[u64]) -> Option<f64> {
    (!ns.is_empty()).then(|| ns.iter().map(|&v| v as f64).sum::<f64>() / ns.len() as f64 / 1e9)
}

pub(super) fn finish(mut w: CallsWorld<'_>, events: u64, horizon: SimDuration) -> ReplicationResult {
    let calls = w.started as f64;
    let per_call = |x: u64| if w.started == 0 { None } else { Some(x as f64 / calls) };
    let failed: u64 = w.giveup_ns.len() as u64;
    let unfinished = w.started - w.succeeded - failed;
    let mut metrics = vec![
        MetricValue::of(&metrics::CALLS, calls),
        MetricValue::maybe_of(&metrics::SUCCESS_RATE, per_call(w.succeeded)),
    ];
    for (slug, count) in &w.reasons {
        metrics.push(MetricValue::maybe_of(metrics::gave_up(slug), per_call(*count)));
    }
    metrics.push(MetricValue::maybe_of(&metrics::UNFINISHED, per_call(unfinished)));
    let attempts = (w.library_calls > 0).then(|| w.server_calls as f64 / w.library_calls as f64);
    metrics.push(MetricValue::maybe_of(&metrics::ATTEMPTS_PER_CALL, attempts));
    if !w.spec.calls.tiers.is_empty() {
        metrics.push(MetricValue::maybe_of(&metrics::LIBRARY_CALLS_PER_CALL, per_call(w.library_calls)));
    }
    metrics.push(MetricValue::maybe_of(&metrics::SERVER_CALLS_PER_CALL, per_call(w.server_calls)));
    let retries = w.server_calls - w.first_attempts;
    let share = (w.server_calls > 0).then(|| retries as f64 / w.server_calls as f64);
    metrics.push(MetricValue::maybe_of(&metrics::RETRY_SHARE, share));
    if !w.spec.calls.idempotency.model().safe_to_retry() {
        metrics.push(MetricValue::maybe_of(&metrics::DUPLICATES, per_call(w.duplicates)));
    }
    metrics.push(MetricValue::maybe_of(&metrics::TIME_TO_SUCCESS, mean_secs(&w.success_ns)));
    metrics.push(MetricValue::maybe_of(&metrics::TIME_TO_GIVEUP, mean_secs(&w.giveup_ns)));
    metrics.push(MetricValue::maybe_of(&metrics::TOTAL_SLEEP, mean_secs(&w.sleep_ns)));
    let max_sleep = w.sleep_ns.iter().max().map(|&v| v as f64 / 1e9);
    metrics.push(MetricValue::maybe_of(&metrics::TOTAL_SLEEP_MAX, max_sleep));
    let answered = w.success_ns.len() + w.giveup_ns.len();
    let answer_ns: f64 = w.success_ns.iter().chain(&w.giveup_ns).map(|&v| v as f64).sum();
    metrics.push(MetricValue::maybe_of(
        &metrics::TIME_TO_ANSWER,
        (answered > 0).then(|| answer_ns / answered as f64 / 1e9),
    ));
    if w.spec.calls.permanent_fraction > 0.0 {
        metrics.push(MetricValue::maybe_of(&metrics::BAD_REQUEST_RETRIES, per_call(w.bad_retries)));
    }
    let cfg = &w.spec.calls;
    let first_start = w.first.iter().min().copied();
    let alert = cfg.monitor.retry_share_alert;
    // Closed loops slow down with the server: only an open stream of calls has a goodput
    // to recover to.
    let steady = cfg.interval.is_some() && cfg.pacing != Pacing::Closed;
    metrics.extend(monitor::finish(&mut w.series, &w.spec.server, first_start, horizon, cfg.timeout, alert, steady));
    // Fixed by the server's schedule, so every replication of a cell lists it or none does.
    if let Some(b) = &w.first_burst {
        metrics.push(MetricValue::of(&crate::worlds::grpc::metrics::FIRST_BURST_PEAK, b.peak()));
    }

    let started = w.started as usize;
    w.success_ns.sort_unstable();
    let secs = |ns: Option<u64>| ns.map(|v| v as f64 / 1e9);
    metrics.push(MetricValue::maybe_of(&metrics::TIME_TO_SUCCESS_P99, secs(quantile(&w.success_ns, 0.99))));
    metrics.push(MetricValue::maybe_of(&metrics::TIME_TO_SUCCESS_MAX, secs(w.success_ns.last().copied())));
    let mut quantiles = Vec::new();
    for (name, ns, population) in [
        (Distribution::TimeToSuccess, &mut w.success_ns, started),
        (Distribution::TimeToGiveup, &mut w.giveup_ns, started),
        (Distribution::TotalSleep, &mut w.sleep_ns, 0),
    ] {
        ns.sort_unstable();
        let q = cdf_secs(ns, population);
        if !q.is_empty() {
            quantiles.push((name.name().to_string(), q));
        }
    }
    ReplicationResult { metrics, events, quantiles, series: Some(w.series), ..Default::default() }
}
