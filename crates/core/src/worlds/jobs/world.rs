//! The simulation: jobs, workers and providers, and what a replication reports.

use super::*;
use crate::engine::rng::{CounterRng, Purpose, Seeds};
use crate::engine::run::{EngineError, Scheduler, World, run};
use crate::engine::time::{SimDuration, SimTime};
use crate::metrics::quantile::{Distribution, cdf_secs, quantile};
use crate::metrics::series::{JobsColumn, Series};
use crate::metrics::{MetricValue, ReplicationResult};
use crate::model::jobs::queue::DueQueue;
use crate::model::retry::{Decision, Outcome, RetryBudget, RetryPolicy, RetryState};
use crate::worlds::Job;
use rand::RngExt;

// The columns' indices, for the world that fills them.
const CREATED: usize = JobsColumn::Created.index();
const DELIVERED: usize = JobsColumn::Delivered.index();
const DEAD: usize = JobsColumn::DeadLettered.index();
const RETRIED: usize = JobsColumn::Retried.index();
const DEPTH: usize = JobsColumn::QueueDepth.index();
const BUSY: usize = JobsColumn::Busy.index();

#[derive(Clone, Copy, Debug)]
pub(super) enum Ev {
    /// The next job is created.
    Arrive,
    /// A retry falls due: an idle worker may take it.
    Wake,
    /// The run of the job in slot `i` ends.
    Done(u32),
}

/// How a run ended.
#[derive(Clone, Copy, Debug)]
pub(super) enum RunEnd {
    Delivered { provider: usize },
    Failed(Outcome),
}

/// One job not yet delivered or dead-lettered.
#[derive(Clone, Debug)]
pub(super) struct JobState {
    number: u64,
    created: SimTime,
    poison: bool,
    /// Created while the first provider was in a down window.
    incident: bool,
    state: RetryState,
    runs: u32,
    /// Jitter draws taken from the job's stream.
    drawn: u64,
    end: RunEnd,
}

pub(super) struct JobsWorld<'a> {
    cfg: &'a JobsConfig,
    policy: &'a RetryPolicy,
    /// Shared by the whole queue: one client's quota, budget or rate limiter.
    budget: RetryBudget,
    seeds: Seeds,
    rep: u64,
    horizon: SimTime,
    workload: u64,
    provider_keys: Vec<u64>,
    queue: DueQueue<u32>,
    slots: Vec<Option<JobState>>,
    free: Vec<u32>,
    idle: u32,
    created: u64,
    delivered: u64,
    by_provider: Vec<u64>,
    dead: u64,
    dead_good: u64,
    reasons: Vec<(&'static str, u64)>,
    runs: u64,
    calls: u64,
    busy_ns: u64,
    completion_ns: Vec<u64>,
    incident: (u64, u64),
    normal: (u64, u64),
    depth_max: usize,
    series: Series,
    /// Bins whose end-of-bin queue depth is recorded.
    depth_bins: usize,
    /// Every run, for tests that pin when runs happen.
    log: Option<Vec<RunRecord>>,
}

/// One run of a job: which job, when it started, which provider delivered it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunRecord {
    pub job: u64,
    pub start: SimTime,
    pub delivered_by: Option<usize>,
}

/// The reasons this policy can give for dead-lettering a job, in a fixed order: the
/// metric list must be the same in every replication.
pub(super) fn possible_reasons(policy: &RetryPolicy) -> Vec<&'static str> {
    policy.possible_give_ups(&[Outcome::Refused, Outcome::Timeout { applied: false }], false)
}

/// Whether the first provider has down windows: then the incident metrics are written.
pub(super) fn has_incident(cfg: &JobsConfig) -> bool {
    cfg.provider.first().is_some_and(|p| !p.down.is_empty())
}

/// Draw `index` of the counter stream `key`, uniform in [0, 1).
pub(super) fn draw(key: u64, index: u64) -> f64 {
    CounterRng::at(key, index).random::<f64>()
}

impl JobsWorld<'_> {
    /// The gap before job `n`: 1/rate rounded to the nanosecond, or an exponential draw.
    fn gap(&self, n: u64) -> SimDuration {
        match self.cfg.arrivals {
            Arrivals::Uniform => SimDuration::from_secs_f64(1.0 / self.cfg.rate).unwrap_or(SimDuration::MAX),
            Arrivals::Poisson => {
                let u = draw(self.workload, 2 * n);
                SimDuration::from_secs_f64(-(1.0 - u).ln() / self.cfg.rate).unwrap_or(SimDuration::MAX)
            }
        }
    }

    /// Records the queue depth at the end of every bin that ended by `now`: the depth
    /// has not changed since the last event.
    fn sample_depth(&mut self, now: SimTime) {
        let w = self.series.width.as_nanos();
        let depth = self.queue.len() as f64;
        while self.depth_bins < self.series.bins() && (self.depth_bins as u64 + 1).saturating_mul(w) <= now.as_nanos() {
            self.series.columns[DEPTH].1[self.depth_bins] = depth;
            self.depth_bins += 1;
        }
    }

    fn enqueue(&mut self, due: SimTime, slot: u32) {
        let number = self.slots[slot as usize].as_ref().expect("a live job").number;
        self.queue.push(due, number, slot);
        self.depth_max = self.depth_max.max(self.queue.len());
    }

    fn arrive(&mut self, sched: &mut Scheduler<Ev>) {
        let now = sched.now();
        let n = self.created;
        self.created += 1;
        self.series.add(CREATED, now, 1.0);
        let poison = draw(self.workload, 2 * n + 1) < self.cfg.poison_fraction;
        let incident = self.cfg.provider.first().is_some_and(|p| p.window_at(now).is_some());
        let job = JobState {
            number: n,
            created: now,
            poison,
            incident,
            state: RetryState::new(self.policy, now),
            runs: 0,
            drawn: 0,
            end: RunEnd::Failed(Outcome::Refused),
        };
        let slot = match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = Some(job);
                i
            }
            None => {
                self.slots.push(Some(job));
                (self.slots.len() - 1) as u32
            }
        };
        self.enqueue(now, slot);
        if self.cfg.count.is_none_or(|c| self.created < c) {
            let next = match self.cfg.arrivals {
                // Exact multiples of the period: no rounding error piles up.
                Arrivals::Uniform => {
                    (SimTime::ZERO + self.cfg.start).saturating_add(self.gap(0).saturating_mul(self.created))
                }
                Arrivals::Poisson => now.saturating_add(self.gap(self.created)),
            };
            sched.at(next, Ev::Arrive);
        }
        self.dispatch(sched);
    }

    /// Idle workers take the jobs that are due.
    fn dispatch(&mut self, sched: &mut Scheduler<Ev>) {
        let now = sched.now();
        while self.idle > 0 {
            let Some(slot) = self.queue.pop_due(now) else { break };
            self.idle -= 1;
            self.start_run(slot, sched);
        }
    }

    /// A worker runs the job now: the providers in order until one delivers it.
    fn start_run(&mut self, slot: u32, sched: &mut Scheduler<Ev>) {
        let now = sched.now();
        let job = self.slots[slot as usize].as_mut().expect("a live job");
        job.runs += 1;
        self.runs += 1;
        let index = (job.number << 20).wrapping_add(u64::from(job.runs));
        let mut t = now;
        let mut end = RunEnd::Failed(Outcome::Refused);
        for (k, p) in self.cfg.provider.iter().enumerate() {
            let r = draw(self.provider_keys[k], index);
            let answer = p.answer(t, job.poison, r);
            self.calls += 1;
            t = t.saturating_add(answer.took);
            if answer.ok {
                end = RunEnd::Delivered { provider: k };
                break;
            }
            end = RunEnd::Failed(if answer.timed_out { Outcome::Timeout { applied: false } } else { Outcome::Refused });
        }
        job.end = end;
        if let Some(log) = &mut self.log {
            let delivered_by = match end {
                RunEnd::Delivered { provider } => Some(provider),
                RunEnd::Failed(_) => None,
            };
            log.push(RunRecord { job: job.number, start: now, delivered_by });
        }
        let busy_to = t.min(self.horizon);
        self.series.add_span(BUSY, now, busy_to);
        self.busy_ns += busy_to.saturating_since(now).as_nanos();
        sched.at(t, Ev::Done(slot));
    }

    fn done(&mut self, slot: u32, sched: &mut Scheduler<Ev>) {
        let now = sched.now();
        self.idle += 1;
        let job = self.slots[slot as usize].as_mut().expect("a live job");
        match job.end {
            RunEnd::Delivered { provider } => {
                self.delivered += 1;
                self.by_provider[provider] += 1;
                let took = now.saturating_since(job.created).as_nanos();
                self.completion_ns.push(took);
                let sum = if job.incident { &mut self.incident } else { &mut self.normal };
                *sum = (sum.0 + 1, sum.1 + took);
                self.series.add(DELIVERED, now, 1.0);
                self.release(slot);
            }
            RunEnd::Failed(outcome) => {
                let key = self.seeds.counter_key(self.rep, job.number, Purpose::Jitter);
                let mut rng = CounterRng::at(key, job.drawn);
                let decision = job.state.on_outcome(self.policy, &mut self.budget, now, &outcome, &mut rng);
                job.drawn = rng.index();
                match decision {
                    Decision::RetryAt { at, .. } => {
                        self.series.add(RETRIED, now, 1.0);
                        self.enqueue(at, slot);
                        sched.at(at, Ev::Wake);
                    }
                    Decision::GiveUp { reason, .. } => {
                        self.dead += 1;
                        self.dead_good += u64::from(!job.poison);
                        match self.reasons.iter_mut().find(|(slug, _)| *slug == reason.slug()) {
                            Some(r) => r.1 += 1,
                            None => debug_assert!(false, "reason {reason:?} not foreseen by possible_reasons"),
                        }
                        self.series.add(DEAD, now, 1.0);
                        self.release(slot);
                    }
                    Decision::Done => unreachable!("a failed run is never a success"),
                }
            }
        }
        self.dispatch(sched);
    }

    fn release(&mut self, slot: u32) {
        self.slots[slot as usize] = None;
        self.free.push(slot);
    }
}

impl World for JobsWorld<'_> {
    type Event = Ev;

    fn handle(&mut self, event: Ev, sched: &mut Scheduler<Ev>) {
        self.sample_depth(sched.now());
        match event {
            Ev::Arrive => self.arrive(sched),
            Ev::Wake => self.dispatch(sched),
            Ev::Done(slot) => self.done(slot, sched),
        }
    }
}

/// Runs one replication of one `[jobs]` variant.
pub fn run_replication(spec: &JobsSpec, job: Job<'_>) -> Result<ReplicationResult, EngineError> {
    simulate(spec, job, false).map(|(r, _)| r)
}

/// One replication, and every run when `log` is set.
pub fn simulate(spec: &JobsSpec, job: Job<'_>, log: bool) -> Result<(ReplicationResult, Vec<RunRecord>), EngineError> {
    let Job { seeds, replication, horizon, budget } = job;
    let rep = u64::from(replication);
    let cfg = &spec.jobs;
    let end = SimTime::ZERO + horizon;
    let mut sched = Scheduler::new(end);
    let mut world = JobsWorld {
        cfg,
        policy: &spec.policy,
        budget: spec.policy.new_budget(SimTime::ZERO),
        seeds,
        rep,
        horizon: end,
        workload: seeds.counter_key(rep, 0, Purpose::Workload),
        provider_keys: (0..cfg.provider.len() as u64).map(|k| seeds.counter_key(rep, k, Purpose::Server)).collect(),
        queue: DueQueue::new(),
        slots: Vec::new(),
        free: Vec::new(),
        idle: cfg.workers,
        created: 0,
        delivered: 0,
        by_provider: vec![0; cfg.provider.len()],
        dead: 0,
        dead_good: 0,
        reasons: possible_reasons(&spec.policy).into_iter().map(|r| (r, 0)).collect(),
        runs: 0,
        calls: 0,
        busy_ns: 0,
        completion_ns: Vec::new(),
        incident: (0, 0),
        normal: (0, 0),
        depth_max: 0,
        series: Series::new(cfg.bin, horizon, JobsColumn::NAMES),
        depth_bins: 0,
        log: log.then(Vec::new),
    };
    let first = SimTime::ZERO + cfg.start;
    let first = match cfg.arrivals {
        Arrivals::Uniform => first,
        Arrivals::Poisson => first.saturating_add(world.gap(0)),
    };
    sched.at(first, Ev::Arrive);
    let stats = run(&mut world, &mut sched, budget)?;
    let log = world.log.take().unwrap_or_default();
    Ok((finish(world, stats.events, horizon), log))
}

pub(super) fn mean_secs(n: u64, sum_ns: u64) -> Option<f64> {
    (n > 0).then(|| sum_ns as f64 / n as f64 / 1e9)
}

pub(super) fn finish(mut w: JobsWorld<'_>, events: u64, horizon: SimDuration) -> ReplicationResult {
    // Every bin not yet ended by an event holds the depth left at the horizon.
    w.sample_depth(SimTime::MAX);
    let created = w.created;
    let of_created = |x: u64| (created > 0).then(|| x as f64 / created as f64);
    // Counted from the jobs still held, not by subtraction, so that conservation
    // (created = delivered + dead-lettered + in flight) is a check, not an identity.
    let in_flight = w.slots.iter().filter(|s| s.is_some()).count() as u64;
    debug_assert_eq!(created, w.delivered + w.dead + in_flight, "a job was lost or counted twice");
    let mut metrics = vec![
        MetricValue::of(&metrics::JOBS, created as f64),
        MetricValue::maybe_of(&metrics::DELIVERED, of_created(w.delivered)),
        MetricValue::maybe_of(&metrics::DEAD_LETTERED, of_created(w.dead)),
        MetricValue::maybe_of(&metrics::IN_FLIGHT, of_created(in_flight)),
        MetricValue::maybe_of(&metrics::DEAD_LETTERED_GOOD, of_created(w.dead_good)),
    ];
    for (slug, count) in &w.reasons {
        metrics.push(MetricValue::maybe_of(metrics::dead_lettered(slug), of_created(*count)));
    }
    for (k, &n) in w.by_provider.iter().enumerate() {
        let share = (w.delivered > 0).then(|| n as f64 / w.delivered as f64);
        metrics.push(MetricValue::numbered(&metrics::DELIVERED_BY_PROVIDER, k + 1, share));
    }
    w.completion_ns.sort_unstable();
    let sum: u64 = w.completion_ns.iter().sum();
    metrics.push(MetricValue::maybe_of(&metrics::COMPLETION_TIME, mean_secs(w.delivered, sum)));
    let p99 = quantile(&w.completion_ns, 0.99).map(|ns| ns as f64 / 1e9);
    metrics.push(MetricValue::maybe_of(&metrics::COMPLETION_TIME_P99, p99));
    if has_incident(w.cfg) {
        let incident = mean_secs(w.incident.0, w.incident.1);
        let normal = mean_secs(w.normal.0, w.normal.1);
        metrics.push(MetricValue::maybe_of(&metrics::COMPLETION_TIME_INCIDENT, incident));
        metrics.push(MetricValue::maybe_of(&metrics::COMPLETION_TIME_NORMAL, normal));
        metrics.push(MetricValue::maybe_of(&metrics::ADDED_LATENCY, incident.zip(normal).map(|(i, n)| i - n)));
    }
    metrics.push(MetricValue::maybe_of(&metrics::RUNS_PER_JOB, of_created(w.runs)));
    metrics.push(MetricValue::maybe_of(&metrics::PROVIDER_CALLS_PER_JOB, of_created(w.calls)));
    let capacity = f64::from(w.cfg.workers) * horizon.as_nanos() as f64;
    let utilization = (capacity > 0.0).then(|| w.busy_ns as f64 / capacity);
    metrics.push(MetricValue::maybe_of(&metrics::WORKER_UTILIZATION, utilization));
    metrics.push(MetricValue::of(&metrics::QUEUE_DEPTH_MAX, w.depth_max as f64));

    let cdf = cdf_secs(&w.completion_ns, created as usize);
    let quantiles =
        if cdf.is_empty() { Vec::new() } else { vec![(Distribution::CompletionTime.name().to_string(), cdf)] };
    let mut series = w.series;
    series.to_seconds(BUSY);
    ReplicationResult { metrics, events, series: Some(series), quantiles, ..Default::default() }
}
