//! The resource guard: before a run starts, estimate its events and memory from the
//! scenario, and refuse (exit 2, nothing written) a run that would exceed one
//! replication's `max_events`, the run's total event budget, or the machine's available
//! memory, naming what to change. `run --max-events N` raises the total budget and
//! `run --force` skips the guard (the engine's per-replication `max_events` still holds).
//!
//! Each model estimates one replication (`Model::estimate`) from its resolved spec: its
//! events, from rates and the retry policy's limits, and its memory, from the sizes of
//! the state it keeps per entity and per record. The estimates are meant to be honest
//! upper-ish figures: the models' tests hold each between half and three times the events
//! a small run really handles.

use crate::engine::time::SimDuration;
use crate::human;
use crate::model::retry::{BudgetPolicy, RetryPolicy};
use crate::scenario::Scenario;
use crate::sim::{Places, Work};

/// The run's total event budget unless `--max-events` says otherwise. The engine handles
/// about 6 million events a second per thread on a small queue and half that on a large
/// one, so 10¹⁰ events are a quarter to half an hour on two cores: more than anyone runs
/// by accident, less than a night.
pub const DEFAULT_TOTAL_EVENTS: u64 = 10_000_000_000;

/// What a model expects one replication of one cell to cost.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Estimate {
    /// Events the replication handles, about.
    pub events: f64,
    /// Bytes it holds at its peak while it runs.
    pub working: f64,
    /// Bytes of its result kept until every replication is done and written.
    pub kept: f64,
    /// The keys that drive `events`, most to least: what to lower.
    pub knobs: Vec<&'static str>,
}

/// The bytes of `n` values of `T`.
pub fn bytes_of<T>(n: f64) -> f64 {
    n * std::mem::size_of::<T>() as f64
}

/// The bytes of `pending` events of type `E` in the engine's queue: the event with its
/// time and sequence number, twice over for the growth of the queue's vectors.
pub fn queue_bytes<E>(pending: f64) -> f64 {
    pending * (std::mem::size_of::<E>() + 16) as f64 * 2.0
}

/// How many attempts start within `window` of a first one at 0 (that one counted), when
/// the k-th gap between attempts (from 0) is `gap(k)` seconds; at most `limit`. A gap of
/// zero forever means the limit is the only bound.
pub fn attempts_within(window: SimDuration, limit: f64, mut gap: impl FnMut(u32) -> f64) -> f64 {
    let window = window.as_secs_f64();
    let (mut t, mut n) = (0.0, 1.0);
    let mut last = f64::NAN;
    for k in 0..100_000u32 {
        if n >= limit {
            return limit;
        }
        let g = gap(k).max(0.0);
        // A gap that no longer changes (the cap) repeats to the end of the window.
        if g == last && g > 0.0 {
            return (n + ((window - t) / g).floor().max(0.0)).min(limit);
        }
        if g == 0.0 && k > 64 {
            return limit;
        }
        last = g;
        t += g;
        if t > window {
            return n;
        }
        n += 1.0;
    }
    n.min(limit)
}

/// The typical sleeps of a policy before each retry, in seconds: the middle of the
/// jitter's range, which is its mean for every mode but the skewed ones, where it is
/// near enough for counting attempts.
pub struct Sleeps(Vec<f64>);

impl Sleeps {
    /// Retries past the 256th sleep as long as the 256th: every shipped policy is
    /// capped long before.
    const KEPT: u32 = 256;

    pub fn of(policy: &RetryPolicy) -> Sleeps {
        let f = policy.formula();
        let top = 1.0 - f64::EPSILON / 2.0;
        let mut prev = policy.base;
        Sleeps(
            (0..Self::KEPT)
                .map(|k| {
                    let nominal = f.nominal(k, policy.base);
                    let (lo, hi) = (f.sleep(nominal, prev, policy.base, 0.0), f.sleep(nominal, prev, policy.base, top));
                    let mid = SimDuration::from_nanos(lo.as_nanos() / 2 + hi.as_nanos() / 2);
                    prev = mid;
                    mid.as_secs_f64()
                })
                .collect(),
        )
    }

    /// The sleep before retry `k` (from 0).
    pub fn at(&self, k: u32) -> f64 {
        self.0[(k as usize).min(self.0.len() - 1)]
    }
}

/// The attempts one call of `policy` makes at most when every attempt fails after
/// `attempt` seconds and it sleeps `sleeps` between them: its attempt limit, and within
/// its deadline; infinite when neither bounds it.
pub fn call_attempts(policy: &RetryPolicy, attempt: f64, sleeps: &Sleeps) -> f64 {
    let limit = policy.limit.max_attempts().map_or(f64::INFINITY, f64::from);
    match policy.deadline {
        Some(d) => attempts_within(d, limit, |k| attempt + sleeps.at(k)),
        None => limit,
    }
}

/// The attempts per call a policy's retry budget lets `clients` clients keep up while
/// they offer `load` calls a second and every attempt fails after `attempt` seconds: a
/// storm lasts only if this times the load exceeds what the server serves. Infinite
/// without a budget (the policy's own limits then bound a call). Each budget is per
/// client (`crate::model::retry::budget`): AWS's quota only drains when nothing succeeds;
/// gRPC's throttling refills by `token_ratio` per success, at most one per call;
/// finagle's lets `percent_can_retry` of the calls retry, plus its reserve per second;
/// envoy's holds `max_retries` outstanding, each at least one attempt long.
pub fn sustained_attempts(policy: &RetryPolicy, clients: f64, load: f64, attempt: f64) -> f64 {
    let per_second = |retries: f64| if load > 0.0 { retries / load } else { 0.0 };
    1.0 + match policy.budget {
        BudgetPolicy::None => f64::INFINITY,
        BudgetPolicy::AwsQuota { .. } => 0.0,
        BudgetPolicy::GrpcThrottle { token_ratio, .. } => token_ratio,
        BudgetPolicy::Finagle { percent_can_retry, min_retries_per_sec, .. } => {
            percent_can_retry + per_second(clients * f64::from(min_retries_per_sec))
        }
        BudgetPolicy::EnvoyConcurrent { max_retries } => {
            per_second(clients * f64::from(max_retries) / attempt.max(f64::MIN_POSITIVE))
        }
    }
}

/// The length of `[a0, a1] ∩ [b0, b1]`, in seconds (0 when they do not meet).
pub fn overlap(a: (f64, f64), b: (f64, f64)) -> f64 {
    (a.1.min(b.1) - a.0.max(b.0)).max(0.0)
}

/// The whole run as the guard sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct Totals {
    /// The costliest replication: its estimate, and which variant and sweep point it is.
    pub worst: Estimate,
    pub worst_cell: String,
    /// Events over every replication of every cell of every variant (of a shard's slice).
    pub events: f64,
    /// The runs counted: replications × cells × variants, or a shard's share.
    pub runs: u64,
    /// Replications, cells and variants, for naming what drives the total.
    pub replications: u32,
    pub cells: usize,
    pub variants: usize,
    /// Bytes at the peak: `threads` replications running at once (`running`), plus
    /// every result kept until the run is written (`kept`).
    pub running: f64,
    pub kept: f64,
    pub threads: usize,
}

impl Totals {
    /// Bytes at the peak.
    pub fn memory(&self) -> f64 {
        self.running + self.kept
    }
}

/// Estimates the whole of `scenario` run on `threads` threads.
pub fn totals(scenario: &Scenario, threads: usize) -> Totals {
    let work = Work::of(scenario);
    totals_of(scenario, &work, work.all(), threads)
}

/// Estimates the runs at `places` of `work` (a shard's slice, or all of them) on
/// `threads` threads. It works from counts (runs per cell), never from a list of runs:
/// a scenario of billions of replications is refused in a moment, before anything per
/// run exists.
pub fn totals_of(scenario: &Scenario, work: &Work, places: Places, threads: usize) -> Totals {
    let mut events = 0.0;
    let mut kept = 0.0;
    let mut working: f64 = 0.0;
    let mut worst: Option<(Estimate, String)> = None;
    for (v, c, runs) in work.runs_per_cell(places).filter(|&(_, _, runs)| runs > 0) {
        let (variant, cell) = (&scenario.variants[v], &scenario.variants[v].cells[c]);
        let reps = runs as f64;
        let e = cell.spec.estimate(scenario.horizon);
        events += e.events * reps;
        kept += e.kept * reps;
        working = working.max(e.working);
        if worst.as_ref().is_none_or(|(w, _)| e.events > w.events) {
            let mut place = format!("variant `{}`", variant.name);
            if !cell.sweep.is_empty() {
                let point: Vec<String> =
                    scenario.sweep_keys.iter().zip(&cell.sweep).map(|(k, x)| format!("{k} = {x}")).collect();
                place.push_str(&format!(", sweep point {}", point.join(", ")));
            }
            worst = Some((e, place));
        }
    }
    // Up to one replication per thread at once, each taken as large as the largest.
    let runs = places.count();
    let at_once = (threads.max(1) as u64).min(runs) as usize;
    let busy = working * at_once as f64;
    let (worst, worst_cell) = worst.unwrap_or_default();
    Totals {
        worst,
        worst_cell,
        events,
        runs,
        replications: scenario.replications,
        cells: scenario.variants.first().map_or(0, |v| v.cells.len()),
        variants: scenario.variants.len(),
        running: busy,
        kept,
        threads: at_once,
    }
}

/// The limits a run is held to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Events over the whole run (`--max-events`).
    pub total_events: u64,
    /// Bytes the machine can give; `None` when it cannot be known (the check is skipped).
    pub available_memory: Option<u64>,
}

/// Why the guard refuses a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// One replication would exceed the scenario's `max_events`: the message, to be
    /// placed at that key.
    Replication(String),
    /// The whole run would exceed `--max-events`, or the machine's memory.
    Run(String),
}

/// The first rule `totals` breaks, if any.
pub fn check(scenario: &Scenario, totals: &Totals, limits: Limits) -> Result<(), Refusal> {
    let per = totals.worst.events;
    if per.is_infinite() {
        return Err(Refusal::Replication(format!(
            "one replication ({}) would never end before `max_events` = {}: nothing but the event budget bounds \
             its attempts (no delay between them and no limit on their number); give the policy a delay, an \
             attempt limit or a deadline, or lower {}",
            totals.worst_cell,
            scenario.max_events,
            knobs(&totals.worst.knobs),
        )));
    }
    if per > scenario.max_events as f64 {
        return Err(Refusal::Replication(format!(
            "one replication ({}) would handle about {} events, more than `max_events` = {} allows: raise \
             `max_events` to at least {}, or lower {} (or pass `--force` to try: the run still stops at \
             `max_events`)",
            totals.worst_cell,
            count(per),
            scenario.max_events,
            round_up(per),
            knobs(&totals.worst.knobs),
        )));
    }
    if totals.events > limits.total_events as f64 {
        return Err(Refusal::Run(format!(
            "this run would handle about {} events ({} run(s) of up to {} events), more than the budget of {} \
             events for one run; it is driven most by {}. Lower that, or pass `--max-events {}` (or `--force`) \
             to run it anyway",
            count(totals.events),
            totals.runs,
            count(per),
            limits.total_events,
            driver(totals),
            round_up(totals.events),
        )));
    }
    if let Some(available) = limits.available_memory
        && totals.memory() > available as f64
    {
        return Err(Refusal::Run(format!(
            "this run would need about {} of memory ({} replication(s) at once, about {} each, plus {} of \
             results kept), more than the {} available; lower {}, fewer `--threads` or fewer replications, \
             or pass `--force` to run it anyway",
            bytes(totals.memory()),
            totals.threads,
            bytes(totals.running / totals.threads.max(1) as f64),
            bytes(totals.kept),
            bytes(available as f64),
            knobs(&totals.worst.knobs),
        )));
    }
    Ok(())
}

/// What to lower, as a sentence: "`grpc.clients` or `horizon`".
fn knobs(keys: &[&str]) -> String {
    if keys.is_empty() {
        return "`horizon`".into();
    }
    human::or_list(&keys.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>())
}

/// The factor of the total that is largest: replications, the sweep's cells, the
/// variants, or one replication's own size (and then the keys that drive it).
fn driver(t: &Totals) -> String {
    let factors = [
        (f64::from(t.replications), format!("`replications` ({})", t.replications)),
        (t.cells as f64, format!("the sweep's {} cells", t.cells)),
        (t.variants as f64, format!("the {} variants", t.variants)),
    ];
    let (n, name) = factors.iter().max_by(|a, b| a.0.total_cmp(&b.0)).expect("three factors");
    // One replication's size drives it when it alone is most of the budget's order.
    if *n < 10.0 || t.worst.events > t.events / 10.0 {
        format!("one replication's size ({}), that is {}", count(t.worst.events), knobs(&t.worst.knobs))
    } else {
        name.clone()
    }
}

/// "about 1.2 million", or "unboundedly many" when nothing bounds it.
pub fn about(n: f64) -> String {
    if n.is_infinite() { count(n) } else { format!("about {}", count(n)) }
}

/// An event count as a person reads it: `1.2 million`.
pub fn count(n: f64) -> String {
    match n {
        n if n.is_infinite() => "unboundedly many".into(),
        n if n >= 1e9 => format!("{} billion", human::fmt_num(n / 1e9, 3)),
        n if n >= 1e6 => format!("{} million", human::fmt_num(n / 1e6, 3)),
        n => human::fmt_num(n.round(), 3),
    }
}

/// A count rounded up to two significant digits: a round number to write down.
fn round_up(n: f64) -> u64 {
    let n = n.max(1.0);
    let scale = 10f64.powi((n.log10().floor() as i32 - 1).max(0));
    ((n / scale).ceil() * scale) as u64
}

/// Bytes as a person reads them: `1.5 GB`.
pub fn bytes(n: f64) -> String {
    match n {
        n if n >= 1e9 => format!("{} GB", human::fmt_num(n / 1e9, 3)),
        n if n >= 1e6 => format!("{} MB", human::fmt_num(n / 1e6, 3)),
        n if n >= 1e3 => format!("{} kB", human::fmt_num(n / 1e3, 3)),
        n => format!("{} B", human::fmt_num(n, 3)),
    }
}

/// `MemAvailable` of `/proc/meminfo` in bytes, where the system has one. Only the guard
/// reads it, to refuse or not: it never reaches a result file.
pub fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    parse_meminfo(&text)
}

fn parse_meminfo(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let mut parts = line.split_whitespace().skip(1);
    let kb: u64 = parts.next()?.parse().ok()?;
    (parts.next() == Some("kB")).then_some(kb.saturating_mul(1024))
}

#[cfg(test)]
mod tests;
