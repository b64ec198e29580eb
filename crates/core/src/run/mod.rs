//! Runs a scenario: every (variant, replication) is an independent world, run in
//! parallel with rayon and collected in index order, so the results do not depend on
//! the thread count or on which job finished first. Around it: the resource guard that
//! refuses a run too large before it starts (`guard`), shards that split a run over
//! machines (`shard`), the stop a Ctrl-C asks for (`interrupt`), and the destination
//! that makes a run's files appear whole or not at all (`destination`).

pub mod destination;
pub mod guard;
pub mod interrupt;
pub mod shard;

use rayon::prelude::*;

use crate::engine::budget::{Budget, RunBudget};
use crate::engine::progress::Progress;
use crate::engine::rng::Seeds;
use crate::engine::run::EngineError;
use crate::metrics::ReplicationResult;
use crate::scenario::Scenario;
use crate::worlds::Job;

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SimError {
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error("variant `{variant}`, replication {replication}: {source}")]
    In {
        variant: String,
        replication: u32,
        #[source]
        source: Box<SimError>,
    },
    #[error("cannot start {threads} worker threads: {why}")]
    Threads { threads: usize, why: String },
    #[error("cannot hold the results of {runs} runs in this machine's memory: run fewer replications or shard the run")]
    TooMany { runs: u64 },
}

/// What a whole scenario produced: `results[v][c][r]` for variant `v`, sweep cell `c`,
/// replication `r`.
#[derive(Debug)]
pub struct Outcome {
    pub results: Vec<Vec<Vec<ReplicationResult>>>,
}

/// Options of one run that are not part of the scenario.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunOptions {
    /// Worker threads; 0 lets rayon choose (one per core).
    pub threads: usize,
    /// Events the whole run may handle over all its replications (`run --max-events`);
    /// `None` holds each replication to the scenario's `max_events` alone.
    pub max_events: Option<u64>,
}

/// One independent run of a scenario: variant `v`, sweep cell `c`, replication `r`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WorkItem {
    pub variant: usize,
    pub cell: usize,
    pub replication: u32,
}

/// Every run of a scenario in output order (by variant, then sweep cell, then
/// replication), computed from its place rather than listed: a scenario of 4 billion
/// replications has a work list that fits in a few words, so the guard can look at it
/// and refuse it before anything per run exists. Shards take places from it and a merge
/// puts results back by their place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Work {
    /// The global index of each variant's first cell, and the number of cells at the end.
    starts: Vec<u64>,
    replications: u32,
}

/// Places `first`, `first + step`, `first + 2·step`, … below `end` of a work list: the
/// whole list (0, 1) or a shard's slice (K, N).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Places {
    pub first: u64,
    pub step: u64,
    pub end: u64,
}

impl Work {
    pub fn of(scenario: &Scenario) -> Work {
        let mut starts = Vec::with_capacity(scenario.variants.len() + 1);
        let mut cells = 0u64;
        for v in &scenario.variants {
            starts.push(cells);
            cells += v.cells.len() as u64;
        }
        starts.push(cells);
        Work { starts, replications: scenario.replications }
    }

    /// Runs in all.
    pub fn len(&self) -> u64 {
        self.starts.last().copied().unwrap_or(0).saturating_mul(u64::from(self.replications))
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every place.
    pub fn all(&self) -> Places {
        Places { first: 0, step: 1, end: self.len() }
    }

    /// The item at `place` (below `len()`).
    pub fn item(&self, place: u64) -> WorkItem {
        let r = u64::from(self.replications);
        let cell = place / r;
        let variant = self.starts.partition_point(|&s| s <= cell) - 1;
        WorkItem { variant, cell: (cell - self.starts[variant]) as usize, replication: (place % r) as u32 }
    }

    /// How many of `places` fall on each (variant, cell), in output order: the runs the
    /// guard counts, without listing them.
    pub fn runs_per_cell(&self, places: Places) -> impl Iterator<Item = (usize, usize, u64)> + '_ {
        let r = u64::from(self.replications);
        self.starts.windows(2).enumerate().flat_map(move |(v, w)| {
            (w[0]..w[1]).map(move |g| (v, (g - w[0]) as usize, places.count_in(g * r, (g + 1) * r)))
        })
    }
}

impl Places {
    /// How many places there are.
    pub fn count(self) -> u64 {
        self.count_in(0, self.end)
    }

    /// The `j`-th place (below `count()`).
    pub fn nth(self, j: u64) -> u64 {
        self.first + j * self.step
    }

    /// How many places lie in `[lo, hi)`.
    pub fn count_in(self, lo: u64, hi: u64) -> u64 {
        // Places below x: those of first, first + step, … that are < min(x, end).
        let below = |x: u64| {
            let x = x.min(self.end);
            if x > self.first { (x - self.first - 1) / self.step + 1 } else { 0 }
        };
        below(hi) - below(lo.min(hi))
    }
}

/// Runs every replication of every cell of every variant, saying how far it has got in
/// `progress`.
pub fn run_scenario(scenario: &Scenario, opts: RunOptions, progress: &Progress) -> Result<Outcome, SimError> {
    let work = Work::of(scenario);
    let results = run_places(scenario, &work, work.all(), opts, progress)?;
    Ok(assemble(scenario, results))
}

/// Runs the items at `places` of `work` in parallel and returns their results in place
/// order. A run's result depends on its item alone, never on which others run beside it:
/// every (variant, cell) uses the same seed per replication (common random numbers
/// across variants and sweep points alike), so a shard computes exactly what the whole
/// run would.
pub fn run_places(
    scenario: &Scenario,
    work: &Work,
    places: Places,
    opts: RunOptions,
    progress: &Progress,
) -> Result<Vec<ReplicationResult>, SimError> {
    let n = usize::try_from(places.count()).map_err(|_| SimError::TooMany { runs: places.count() })?;
    let mut done: Vec<Result<ReplicationResult, SimError>> = Vec::new();
    done.try_reserve_exact(n).map_err(|_| SimError::TooMany { runs: places.count() })?;
    let seeds = Seeds::new(scenario.seed);
    let run_budget = opts.max_events.map(RunBudget::new);
    let budget = Budget {
        replication: scenario.max_events,
        run: run_budget.as_ref(),
        progress: Some(progress),
        stop: crate::run::interrupt::requested,
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.threads)
        .build()
        .map_err(|e| SimError::Threads { threads: opts.threads, why: e.to_string() })?;
    pool.install(|| {
        (0..n)
            .into_par_iter()
            .map(|j| {
                let item = work.item(places.nth(j as u64));
                let variant = &scenario.variants[item.variant];
                let r = item.replication;
                let job = Job { seeds, replication: r, horizon: scenario.horizon, budget };
                // An interrupted run starts nothing more.
                let result = if crate::run::interrupt::requested() {
                    Err(EngineError::Interrupted { at: crate::engine::time::SimTime::ZERO })
                } else {
                    variant.cells[item.cell].spec.run(job)
                };
                progress.finish();
                result.map_err(|e| SimError::In {
                    variant: variant.name.clone(),
                    replication: r,
                    source: Box::new(SimError::Engine(e)),
                })
            })
            .collect_into_vec(&mut done)
    });
    // The run's budget, when it ran out, is the failure: which replications noticed it
    // first depends on the threads. Otherwise the first failure in work order,
    // whichever thread met it first.
    if let Some(run) = run_budget.as_ref().filter(|b| b.exceeded()) {
        return Err(SimError::Engine(EngineError::RunBudget { limit: run.limit() }));
    }
    done.into_iter().collect()
}

/// The outcome of a whole run from the results of every place of `Work::of(scenario)`,
/// in that order.
pub fn assemble(scenario: &Scenario, results: Vec<ReplicationResult>) -> Outcome {
    let mut outcome: Vec<Vec<Vec<ReplicationResult>>> =
        scenario.variants.iter().map(|v| v.cells.iter().map(|_| Vec::new()).collect()).collect();
    let work = Work::of(scenario);
    for (place, result) in results.into_iter().enumerate() {
        let item = work.item(place as u64);
        outcome[item.variant][item.cell].push(result);
    }
    Outcome { results: outcome }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A work list of variants with `cells` cells each and `replications` replications.
    fn work(cells: &[u64], replications: u32) -> Work {
        let mut starts = vec![0];
        for c in cells {
            starts.push(starts.last().unwrap() + c);
        }
        Work { starts, replications }
    }

    #[test]
    fn places_map_to_items_by_variant_then_cell_then_replication() {
        let w = work(&[2, 1], 3);
        assert_eq!(w.len(), 9);
        let items: Vec<(usize, usize, u32)> =
            (0..w.len()).map(|p| w.item(p)).map(|i| (i.variant, i.cell, i.replication)).collect();
        assert_eq!(
            items,
            [(0, 0, 0), (0, 0, 1), (0, 0, 2), (0, 1, 0), (0, 1, 1), (0, 1, 2), (1, 0, 0), (1, 0, 1), (1, 0, 2)]
        );
    }

    #[test]
    fn runs_per_cell_counts_a_slice_without_listing_it() {
        let w = work(&[3, 2], 7);
        for (first, step) in [(0, 1), (0, 3), (2, 3), (4, 5), (34, 35), (40, 41)] {
            let places = Places { first, step, end: w.len() };
            let listed: Vec<u64> = (first..w.len()).step_by(step as usize).collect();
            assert_eq!(places.count(), listed.len() as u64);
            for (v, c, n) in w.runs_per_cell(places) {
                let here = listed.iter().filter(|&&p| w.item(p).variant == v && w.item(p).cell == c).count();
                assert_eq!(n, here as u64, "({first}, {step}) at variant {v} cell {c}");
            }
            for (j, p) in listed.iter().enumerate() {
                assert_eq!(places.nth(j as u64), *p);
            }
        }
    }

    #[test]
    fn four_billion_replications_are_a_work_list_of_a_few_words() {
        let w = work(&[10_000, 10_000], u32::MAX);
        assert_eq!(w.len(), 20_000 * u64::from(u32::MAX));
        let last = w.item(w.len() - 1);
        assert_eq!((last.variant, last.cell, last.replication), (1, 9_999, u32::MAX - 1));
        let total: u64 = w.runs_per_cell(w.all()).map(|(_, _, n)| n).sum();
        assert_eq!(total, w.len());
    }
}
