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

/// Runs every replication of every cell of every variant. `progress` is called once per
/// finished job, from any thread.
pub fn run_scenario(scenario: &Scenario, opts: RunOptions, progress: &(dyn Fn() + Sync)) -> Result<Outcome, SimError> {
    let seeds = Seeds::new(scenario.seed);
    // Every (variant, cell) uses the same seed per replication: common random numbers
    // across variants and sweep points alike.
    let jobs: Vec<(usize, usize, u32)> = scenario
        .variants
        .iter()
        .enumerate()
        .flat_map(|(v, variant)| (0..variant.cells.len()).map(move |c| (v, c)))
        .flat_map(|(v, c)| (0..scenario.replications).map(move |r| (v, c, r)))
        .collect();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.threads)
        .build()
        .map_err(|e| SimError::Threads { threads: opts.threads, why: e.to_string() })?;
    let done: Vec<Result<ReplicationResult, SimError>> = pool.install(|| {
        jobs.par_iter()
            .map(|&(v, c, r)| {
                let variant = &scenario.variants[v];
                let job = Job { seeds, replication: r, horizon: scenario.horizon, max_events: scenario.max_events };
                // An interrupted run starts nothing more.
                let result = if crate::interrupt::requested() {
                    Err(EngineError::Interrupted { at: crate::engine::time::SimTime::ZERO })
                } else {
                    variant.cells[c].spec.run(job)
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
    let mut results: Vec<Vec<Vec<ReplicationResult>>> =
        scenario.variants.iter().map(|v| v.cells.iter().map(|_| Vec::new()).collect()).collect();
    for (&(v, c, _), result) in jobs.iter().zip(done) {
        results[v][c].push(result?);
    }
    Ok(Outcome { results })
}
