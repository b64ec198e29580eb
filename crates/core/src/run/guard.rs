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

use crate::human;
use crate::run::{Places, Work};
use crate::scenario::Scenario;
use crate::worlds::Estimate;

/// The run's total event budget unless `--max-events` says otherwise. The engine handles
/// about 6 million events a second per thread on a small queue and half that on a large
/// one, so 10¹⁰ events are a quarter to half an hour on two cores: more than anyone runs
/// by accident, less than a night.
pub const DEFAULT_TOTAL_EVENTS: u64 = 10_000_000_000;

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
