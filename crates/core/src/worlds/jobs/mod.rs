//! A job queue with asynchronous retry, wired into the engine: a producer, a pool of
//! workers, providers in failover order, and a dead-letter queue (see
//! [`crate::scenario::jobs`] for the semantics and the file format).
//!
//! Events: a job's creation, the end of each run (the run's provider calls are answered
//! when it starts: a provider's state is a pure function of time), and a wake-up at each
//! retry's due time so that an idle worker picks the job up. An idle worker takes the
//! job due earliest, ties in creation order ([`DueQueue`]); it is free again as soon as
//! its run ends, whatever the outcome.
//!
//! Random numbers, all from counter streams of (seed, replication, entity, purpose):
//! job n's arrival gap and poison draw are draws 2n and 2n+1 of (…, 0,
//! [`Purpose::Workload`]); provider k's answer to run r of job n is a draw of (…, k,
//! [`Purpose::Server`]) at an index made of (n, r); job n's backoff jitter comes from
//! (…, n, [`Purpose::Jitter`]) in the order its retries need it. So a variant that
//! changes the policy or the workers sees the same jobs, the same poison and the same
//! provider fates (common random numbers).
//!
//! Metrics (per replication; fractions are of the jobs created by the horizon, so
//! `delivered + dead_lettered + in_flight = 1`):
//!
//! | metric | meaning |
//! |---|---|
//! | `jobs` | jobs created |
//! | `delivered`, `dead_lettered`, `in_flight` | how they ended, or not yet (waiting, scheduled for later, or in a worker at the horizon) |
//! | `dead_lettered_good` | jobs that were not poison but dead-lettered: the ones a better policy would have saved |
//! | `dead_lettered_<reason>` | by the policy's reason, for the reasons it can give |
//! | `delivered_by_provider{k}` | share of the delivered jobs the k-th provider delivered |
//! | `completion_time`, `completion_time_p99` | creation to delivery, over delivered jobs: mean and 99th percentile |
//! | `completion_time_incident`, `completion_time_normal`, `added_latency` | when the first provider has down windows: the mean over jobs created inside one, over the others, and their difference |
//! | `runs_per_job`, `provider_calls_per_job` | runs and provider calls per created job |
//! | `worker_utilization` | busy worker-time / (workers × horizon) |
//! | `queue_depth_max` | the most jobs waiting or scheduled at once |
//!
//! `series.csv` gets, per bin: `created`, `delivered`, `dead_lettered`, `retried`
//! (re-enqueues), `queue_depth` (jobs waiting or scheduled, not in a worker, at the
//! bin's end) and `busy_s` (worker-seconds busy). `cdf.csv` gets `completion_time` as a
//! fraction of the jobs created (a curve stops at the share delivered).

mod config;
pub use config::*;

use rand::RngExt;

use crate::engine::rng::{CounterRng, Purpose, Seeds};
use crate::engine::run::{EngineError, Scheduler, World, run};
use crate::engine::time::{SimDuration, SimTime};
use crate::metrics::catalogue;
use crate::metrics::quantile::{cdf_secs, quantile};
use crate::metrics::series::Series;
use crate::metrics::{MetricValue, ReplicationResult};
use crate::model::config_error::ConfigErrors;
use crate::model::jobs::provider::Behavior;
use crate::model::jobs::queue::DueQueue;
use crate::model::retry::{Decision, Outcome, RetryBudget, RetryPolicy, RetryState};
use crate::worlds::estimate::{self, Estimate};
use crate::worlds::{ModelSection, Section, Shared, Use, prefixed};

use super::Job;

/// `series.csv`'s columns, in order.
pub const SERIES: [&str; 6] = ["created", "delivered", "dead_lettered", "retried", "queue_depth", "busy_s"];
const CREATED: usize = 0;
const DELIVERED: usize = 1;
const DEAD: usize = 2;
const RETRIED: usize = 3;
const DEPTH: usize = 4;
const BUSY: usize = 5;

#[derive(Clone, Copy, Debug)]
enum Ev {
    /// The next job is created.
    Arrive,
    /// A retry falls due: an idle worker may take it.
    Wake,
    /// The run of the job in slot `i` ends.
    Done(u32),
}

/// How a run ended.
#[derive(Clone, Copy, Debug)]
enum RunEnd {
    Delivered { provider: usize },
    Failed(Outcome),
}

/// One job not yet delivered or dead-lettered.
#[derive(Clone, Debug)]
struct JobState {
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

struct JobsWorld<'a> {
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
fn possible_reasons(policy: &RetryPolicy) -> Vec<&'static str> {
    policy.possible_give_ups(&[Outcome::Refused, Outcome::Timeout { applied: false }], false)
}

/// Whether the first provider has down windows: then the incident metrics are written.
fn has_incident(cfg: &JobsConfig) -> bool {
    cfg.provider.first().is_some_and(|p| !p.down.is_empty())
}

/// Draw `index` of the counter stream `key`, uniform in [0, 1).
fn draw(key: u64, index: u64) -> f64 {
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

impl ModelSection for JobsConfig {
    const TAG: catalogue::ModelId = catalogue::ModelId::Jobs;
    type Spec = JobsSpec;
    const ABOUT: &'static str = "a job queue with asynchronous retry";

    fn uses(section: Section) -> Use {
        match section {
            Section::Path => {
                Use::Refused("[path] does not apply to [jobs]: each provider's call_time, fail_time and timeout do")
            }
            Section::Server => Use::Refused(
                "[server] does not apply to [jobs]: each [[jobs.provider]] has its own [[jobs.provider.down]] windows",
            ),
            Section::Trace => Use::Refused("[trace] does not apply to [jobs]: it has no per-client trace"),
        }
    }

    fn check(&self) -> ConfigErrors {
        self.validate()
    }

    fn clients(&self) -> u32 {
        self.workers
    }

    fn series_bin(&self) -> Option<(&'static str, SimDuration)> {
        Some(("bin", self.bin))
    }

    fn resolve(&self, _shared: Shared<'_>) -> Result<JobsSpec, ConfigErrors> {
        let policy = self.policy().map_err(|e| prefixed("jobs.retry", e))?;
        Ok(JobsSpec { jobs: self.clone(), policy })
    }

    fn run(spec: &JobsSpec, job: Job<'_>) -> Result<ReplicationResult, EngineError> {
        run_replication(spec, job)
    }

    fn estimate(spec: &JobsSpec, horizon: SimDuration) -> Estimate {
        estimate(spec, horizon)
    }
}

/// Per job: its creation, and for each run its end, and for each retry the wake-up at
/// its due time: two events a run. A job runs once unless every provider fails it: in a
/// down window of the first provider (as far as the others are down with it), a job
/// created there retries until the window ends or its
/// policy stops it; poison retries until its policy stops it. The workers bound the
/// retries of a window: no more runs than they can make while it lasts.
fn estimate(spec: &JobsSpec, horizon: SimDuration) -> Estimate {
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
    let kept = estimate::bytes_of::<f64>(bins * SERIES.len() as f64 + 101.0);
    let waiting = troubled.max(workers) + jobs * cfg.poison_fraction;
    let working = waiting * (std::mem::size_of::<JobState>() + 32) as f64 + estimate::bytes_of::<u64>(jobs) + kept;
    Estimate { events, working, kept, knobs: vec!["jobs.rate", "horizon"] }
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
        series: Series::new(cfg.bin, horizon, &SERIES),
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

fn mean_secs(n: u64, sum_ns: u64) -> Option<f64> {
    (n > 0).then(|| sum_ns as f64 / n as f64 / 1e9)
}

fn finish(mut w: JobsWorld<'_>, events: u64, horizon: SimDuration) -> ReplicationResult {
    // Every bin not yet ended by an event holds the depth left at the horizon.
    w.sample_depth(SimTime::MAX);
    let created = w.created;
    let of_created = |x: u64| (created > 0).then(|| x as f64 / created as f64);
    // Counted from the jobs still held, not by subtraction, so that conservation
    // (created = delivered + dead-lettered + in flight) is a check, not an identity.
    let in_flight = w.slots.iter().filter(|s| s.is_some()).count() as u64;
    debug_assert_eq!(created, w.delivered + w.dead + in_flight, "a job was lost or counted twice");
    let mut metrics = vec![
        MetricValue::new("jobs", "count", created as f64),
        MetricValue::maybe("delivered", "fraction", of_created(w.delivered)),
        MetricValue::maybe("dead_lettered", "fraction", of_created(w.dead)),
        MetricValue::maybe("in_flight", "fraction", of_created(in_flight)),
        MetricValue::maybe("dead_lettered_good", "fraction", of_created(w.dead_good)),
    ];
    for (slug, count) in &w.reasons {
        let name = format!("dead_lettered_{}", slug.replace('-', "_"));
        metrics.push(MetricValue::maybe(&name, "fraction", of_created(*count)));
    }
    for (k, &n) in w.by_provider.iter().enumerate() {
        let share = (w.delivered > 0).then(|| n as f64 / w.delivered as f64);
        metrics.push(MetricValue::maybe(&format!("delivered_by_provider{}", k + 1), "fraction", share));
    }
    w.completion_ns.sort_unstable();
    let sum: u64 = w.completion_ns.iter().sum();
    metrics.push(MetricValue::maybe("completion_time", "s", mean_secs(w.delivered, sum)));
    let p99 = quantile(&w.completion_ns, 0.99).map(|ns| ns as f64 / 1e9);
    metrics.push(MetricValue::maybe("completion_time_p99", "s", p99));
    if has_incident(w.cfg) {
        let incident = mean_secs(w.incident.0, w.incident.1);
        let normal = mean_secs(w.normal.0, w.normal.1);
        metrics.push(MetricValue::maybe("completion_time_incident", "s", incident));
        metrics.push(MetricValue::maybe("completion_time_normal", "s", normal));
        metrics.push(MetricValue::maybe("added_latency", "s", incident.zip(normal).map(|(i, n)| i - n)));
    }
    metrics.push(MetricValue::maybe("runs_per_job", "count", of_created(w.runs)));
    metrics.push(MetricValue::maybe("provider_calls_per_job", "count", of_created(w.calls)));
    let capacity = f64::from(w.cfg.workers) * horizon.as_nanos() as f64;
    let utilization = (capacity > 0.0).then(|| w.busy_ns as f64 / capacity);
    metrics.push(MetricValue::maybe("worker_utilization", "fraction", utilization));
    metrics.push(MetricValue::new("queue_depth_max", "count", w.depth_max as f64));

    let cdf = cdf_secs(&w.completion_ns, created as usize);
    let quantiles = if cdf.is_empty() { Vec::new() } else { vec![("completion_time".to_string(), cdf)] };
    let mut series = w.series;
    series.to_seconds(BUSY);
    ReplicationResult { metrics, events, series: Some(series), quantiles, ..Default::default() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{ModelSpec, load_str};

    struct Ran {
        metrics: Vec<(String, Option<f64>)>,
        log: Vec<RunRecord>,
        result: ReplicationResult,
    }

    impl Ran {
        fn get(&self, name: &str) -> f64 {
            let m = self.metrics.iter().find(|(n, _)| n == name);
            m.unwrap_or_else(|| panic!("no {name} in {:?}", self.metrics)).1.unwrap()
        }

        fn starts(&self, job: u64) -> Vec<f64> {
            self.log.iter().filter(|r| r.job == job).map(|r| r.start.as_secs_f64()).collect()
        }

        fn column(&self, name: &str) -> Vec<f64> {
            self.result.series.as_ref().unwrap().column(name).unwrap().to_vec()
        }
    }

    /// Replication 0 of a scenario whose `[jobs]` tables are `body`.
    fn sim(horizon: &str, body: &str) -> Ran {
        let text = format!("name = \"t\"\ndescription = \"t\"\nhorizon = \"{horizon}\"\n[jobs]\n{body}");
        let scenario = load_str("t.toml", &text).unwrap_or_else(|e| panic!("{e}"));
        let ModelSpec::Jobs(spec) = &scenario.variants[0].cells[0].spec else { panic!("not a jobs scenario") };
        let job = Job {
            seeds: Seeds::new(1),
            replication: 0,
            horizon: scenario.horizon,
            budget: crate::engine::budget::Budget::replication(1_000_000),
        };
        let (result, log) = simulate(spec, job, true).unwrap();
        Ran { metrics: result.metrics.iter().map(|m| (m.name.clone(), m.value)).collect(), log, result }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    /// One job, one worker, a provider that refuses everything after 1 s.
    const ONE_JOB_ALWAYS_DOWN: &str = "rate = 1\narrivals = \"uniform\"\ncount = 1\nworkers = 1\n\
        [[jobs.provider]]\nname = \"p\"\ncall_time = \"1s\"\n\
        [[jobs.provider.down]]\nat = \"0s\"\nduration = \"1h\"\n";

    #[test]
    fn a_job_reenqueued_n_times_runs_at_exactly_the_scheduled_times() {
        // Each run fails 1 s after it starts; the retry is due a fixed 5 s later.
        let fixed = "[jobs.retry]\nbase = \"5s\"\nmultiplier = 1.0\njitter = \"none\"\nmax_attempts = 4\n";
        let r = sim("5min", &format!("{ONE_JOB_ALWAYS_DOWN}{fixed}"));
        assert_eq!(r.starts(0), [0.0, 6.0, 12.0, 18.0]);
        assert_eq!((r.get("dead_lettered"), r.get("dead_lettered_attempts"), r.get("runs_per_job")), (1.0, 1.0, 4.0));
        // Doubling from 2 s: sleeps 2, 4, 8 after runs ending at 1, 4, 9.
        let doubling = "[jobs.retry]\nbase = \"2s\"\njitter = \"none\"\nmax_attempts = 4\n";
        assert_eq!(sim("5min", &format!("{ONE_JOB_ALWAYS_DOWN}{doubling}")).starts(0), [0.0, 3.0, 8.0, 17.0]);
    }

    #[test]
    fn failover_delivers_by_the_second_provider_after_the_primarys_fail_time_or_timeout() {
        let body = |behavior: &str| {
            format!(
                "rate = 1\narrivals = \"uniform\"\ncount = 3\nworkers = 3\n\
                 [[jobs.provider]]\nname = \"primary\"\ncall_time = \"100ms\"\nfail_time = \"50ms\"\ntimeout = \"10s\"\n\
                 [[jobs.provider.down]]\nat = \"0s\"\nduration = \"1h\"\nbehavior = \"{behavior}\"\n\
                 [[jobs.provider]]\nname = \"second\"\ncall_time = \"200ms\"\n\
                 [[jobs.provider]]\nname = \"third\"\ncall_time = \"300ms\"\n"
            )
        };
        let refused = sim("1min", &body("refuse"));
        assert!(close(refused.get("completion_time"), 0.25));
        assert_eq!((refused.get("delivered_by_provider1"), refused.get("delivered_by_provider2")), (0.0, 1.0));
        assert_eq!((refused.get("provider_calls_per_job"), refused.get("runs_per_job")), (2.0, 1.0));
        assert!(refused.log.iter().all(|r| r.delivered_by == Some(1)));
        // A hanging primary costs the worker's whole timeout before the failover.
        let hung = sim("1min", &body("hang"));
        assert!(close(hung.get("completion_time"), 10.2));
        assert_eq!(hung.get("delivered_by_provider3"), 0.0);
    }

    #[test]
    fn a_poison_job_is_dead_lettered_after_exactly_max_attempts_runs() {
        let r = sim(
            "10min",
            "rate = 1\narrivals = \"uniform\"\ncount = 5\nworkers = 2\npoison_fraction = 1\n\
             [jobs.retry]\nbase = \"1s\"\nmax_attempts = 3\n\
             [[jobs.provider]]\nname = \"a\"\ncall_time = \"100ms\"\nfail_time = \"10ms\"\n\
             [[jobs.provider]]\nname = \"b\"\ncall_time = \"100ms\"\n",
        );
        assert_eq!((r.get("dead_lettered"), r.get("dead_lettered_good")), (1.0, 0.0));
        assert_eq!((r.get("runs_per_job"), r.get("provider_calls_per_job")), (3.0, 6.0));
        for job in 0..5 {
            assert_eq!(r.starts(job).len(), 3, "job {job}");
        }
    }

    #[test]
    fn with_one_worker_a_job_due_while_it_is_busy_waits_for_it() {
        // Job 1 is due 1 ms after job 0, whose run takes the worker for 1 s.
        let r = sim(
            "10s",
            "rate = 1000\narrivals = \"uniform\"\ncount = 2\nworkers = 1\nbin = \"1s\"\n\
             [[jobs.provider]]\nname = \"p\"\ncall_time = \"1s\"\n",
        );
        assert_eq!((r.starts(0), r.starts(1)), (vec![0.0], vec![1.0]));
        assert!(close(r.get("completion_time"), (1.0 + 1.999) / 2.0));
        assert!(close(r.get("worker_utilization"), 2.0 / 10.0));
        assert_eq!(r.get("queue_depth_max"), 1.0);
        // Job 1 waited through the first bin; the worker was busy in the first two.
        assert_eq!(r.column("queue_depth")[..3], [1.0, 0.0, 0.0]);
        assert_eq!(r.column("busy_s")[..3], [1.0, 1.0, 0.0]);
        assert_eq!(r.column("delivered")[..3], [0.0, 1.0, 1.0]);
    }

    #[test]
    fn every_job_created_is_delivered_dead_lettered_or_in_flight_at_the_horizon() {
        // Poison jobs, a long outage and a horizon in the middle of retries: all three
        // outcomes occur. In flight is counted from the jobs held, not by subtraction.
        let r = sim(
            "20min",
            "rate = 5\nworkers = 3\npoison_fraction = \"10%\"\nbin = \"1min\"\n\
             [jobs.retry]\nbase = \"1s\"\nmax_attempts = 6\n\
             [[jobs.provider]]\nname = \"a\"\ncall_time = \"300ms\"\nfail_time = \"100ms\"\n\
             [[jobs.provider.down]]\nat = \"5min\"\nduration = \"20min\"\nfail_fraction = 0.7\nbehavior = \"hang\"\n\
             [[jobs.provider]]\nname = \"b\"\ncall_time = \"300ms\"\n\
             [[jobs.provider.down]]\nat = \"10min\"\nduration = \"20min\"\n",
        );
        let (delivered, dead, in_flight) = (r.get("delivered"), r.get("dead_lettered"), r.get("in_flight"));
        assert!(delivered > 0.0 && dead > 0.0 && in_flight > 0.0, "{delivered} {dead} {in_flight}");
        assert!(close(delivered + dead + in_flight, 1.0));
        // The series agrees with the totals.
        let jobs = r.get("jobs");
        let sum = |c: &str| r.column(c).iter().sum::<f64>();
        assert_eq!(sum("created"), jobs);
        assert!(close(sum("delivered"), delivered * jobs) && close(sum("dead_lettered"), dead * jobs));
        assert!(close(sum("busy_s"), r.get("worker_utilization") * 3.0 * 1200.0));
        let depth = r.column("queue_depth");
        assert!(depth.iter().all(|&d| d <= r.get("queue_depth_max")));
    }

    #[test]
    fn jobs_created_in_the_primarys_down_window_pay_its_timeout_as_added_latency() {
        // Jobs at 0, 1, … 29 s; those created at 10 … 19 s meet a hanging primary (5 s
        // timeout) and are delivered by the fallback 200 ms later.
        let r = sim(
            "1min",
            "rate = 1\narrivals = \"uniform\"\ncount = 30\nworkers = 10\n\
             [[jobs.provider]]\nname = \"primary\"\ncall_time = \"100ms\"\ntimeout = \"5s\"\n\
             [[jobs.provider.down]]\nat = \"10s\"\nduration = \"10s\"\nbehavior = \"hang\"\n\
             [[jobs.provider]]\nname = \"fallback\"\ncall_time = \"200ms\"\n",
        );
        assert!(close(r.get("completion_time_incident"), 5.2));
        assert!(close(r.get("completion_time_normal"), 0.1));
        assert!(close(r.get("added_latency"), 5.1));
        assert!(close(r.get("delivered_by_provider2"), 10.0 / 30.0));
    }

    #[test]
    fn without_down_windows_on_the_primary_no_incident_metrics_are_written() {
        let r = sim("1min", "rate = 1\nworkers = 1\n[[jobs.provider]]\nname = \"p\"\n");
        assert!(!r.metrics.iter().any(|(n, _)| n.contains("incident") || n == "added_latency"));
    }

    #[test]
    fn poisson_arrivals_average_the_rate_and_uniform_ones_keep_it_exactly_from_start() {
        let body = |arrivals: &str| {
            format!(
                "rate = 10\narrivals = \"{arrivals}\"\nstart = \"100s\"\nworkers = 4\n[[jobs.provider]]\nname = \"p\"\n"
            )
        };
        // 900 s at 10/s: 9,000 jobs, a Poisson count's standard deviation is about 95.
        let poisson = sim("1000s", &body("poisson")).get("jobs");
        assert!((poisson - 9000.0).abs() < 300.0, "{poisson}");
        // 100 s, 100.1 s, … 1000 s: the job at the horizon itself is made.
        let uniform = sim("1000s", &body("uniform"));
        assert_eq!(uniform.get("jobs"), 9001.0);
        assert_eq!(uniform.starts(0), [100.0]);
        assert_eq!(uniform.column("created")[..3], [0.0, 200.0, 600.0]);
    }

    #[test]
    fn variants_with_other_policies_and_pools_see_the_same_jobs_and_poison() {
        let body = |workers: u32, attempts: u32| {
            format!(
                "rate = 20\nworkers = {workers}\npoison_fraction = \"5%\"\n[jobs.retry]\nmax_attempts = {attempts}\n\
                 [[jobs.provider]]\nname = \"p\"\ncall_time = \"100ms\"\nfail_time = \"10ms\"\n"
            )
        };
        let (a, b) = (sim("10min", &body(4, 2)), sim("10min", &body(16, 3)));
        assert_eq!(a.get("jobs"), b.get("jobs"));
        // Only poison jobs fail here: the same jobs in both (common random numbers).
        let poison = |r: &Ran| {
            let mut jobs: Vec<u64> = r.log.iter().filter(|x| x.delivered_by.is_none()).map(|x| x.job).collect();
            jobs.sort_unstable();
            jobs.dedup();
            jobs
        };
        assert!(poison(&a).len() > 10);
        assert_eq!(poison(&a), poison(&b));
    }
}
