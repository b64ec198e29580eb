//! Runs a scenario: every (variant, replication) is an independent world, run in
//! parallel with rayon and collected in index order, so the results do not depend on
//! the thread count or on which job finished first.

pub mod calls;
pub mod grpc;
pub mod jobs;
pub mod occ;
pub mod start;
pub mod tcp;

use rayon::prelude::*;

use crate::engine::rng::Seeds;
use crate::engine::run::EngineError;
use crate::metrics::ReplicationResult;
pub use crate::scenario::Job;
use crate::scenario::Scenario;

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
}

/// One independent run of a scenario: variant `v`, sweep cell `c`, replication `r`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WorkItem {
    pub variant: usize,
    pub cell: usize,
    pub replication: u32,
}

/// Every run of `scenario` in output order: by variant, then sweep cell, then
/// replication. Shards slice this list and a merge puts results back by their place in it.
pub fn work(scenario: &Scenario) -> Vec<WorkItem> {
    scenario
        .variants
        .iter()
        .enumerate()
        .flat_map(|(v, variant)| (0..variant.cells.len()).map(move |c| (v, c)))
        .flat_map(|(v, c)| (0..scenario.replications).map(move |r| WorkItem { variant: v, cell: c, replication: r }))
        .collect()
}

/// Runs every replication of every cell of every variant. `progress` is called once per
/// finished job, from any thread.
pub fn run_scenario(scenario: &Scenario, opts: RunOptions, progress: &(dyn Fn() + Sync)) -> Result<Outcome, SimError> {
    let results = run_items(scenario, &work(scenario), opts, progress)?;
    Ok(assemble(scenario, results))
}

/// Runs `items` in parallel and returns their results in the order of `items`. A run's
/// result depends on its item alone, never on which others run beside it: every (variant,
/// cell) uses the same seed per replication (common random numbers across variants and
/// sweep points alike), so a shard computes exactly what the whole run would.
pub fn run_items(
    scenario: &Scenario,
    items: &[WorkItem],
    opts: RunOptions,
    progress: &(dyn Fn() + Sync),
) -> Result<Vec<ReplicationResult>, SimError> {
    let seeds = Seeds::new(scenario.seed);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.threads)
        .build()
        .map_err(|e| SimError::Threads { threads: opts.threads, why: e.to_string() })?;
    let done: Vec<Result<ReplicationResult, SimError>> = pool.install(|| {
        items
            .par_iter()
            .map(|item| {
                let variant = &scenario.variants[item.variant];
                let r = item.replication;
                let job = Job { seeds, replication: r, horizon: scenario.horizon, max_events: scenario.max_events };
                // An interrupted run starts nothing more.
                let result = if crate::interrupt::requested() {
                    Err(EngineError::Interrupted { at: crate::engine::time::SimTime::ZERO })
                } else {
                    variant.cells[item.cell].spec.run(job)
                };
                progress();
                result.map_err(|e| SimError::In {
                    variant: variant.name.clone(),
                    replication: r,
                    source: Box::new(SimError::Engine(e)),
                })
            })
            .collect()
    });
    // The first failure in work order, whichever thread met it first.
    done.into_iter().collect()
}

/// The outcome of a whole run from the results of every item of `work(scenario)`, in
/// that order.
pub fn assemble(scenario: &Scenario, results: Vec<ReplicationResult>) -> Outcome {
    let mut outcome: Vec<Vec<Vec<ReplicationResult>>> =
        scenario.variants.iter().map(|v| v.cells.iter().map(|_| Vec::new()).collect()).collect();
    for (item, result) in work(scenario).into_iter().zip(results) {
        outcome[item.variant][item.cell].push(result);
    }
    Outcome { results: outcome }
}
