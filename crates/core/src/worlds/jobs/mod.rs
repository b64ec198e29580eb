//! A job queue with asynchronous retry, wired into the engine: a producer, a pool of
//! workers, providers in failover order, and a dead-letter queue (see
//! [`JobsConfig`] for the semantics and the file format).
//!
//! Events: a job's creation, the end of each run (the run's provider calls are answered
//! when it starts: a provider's state is a pure function of time), and a wake-up at each
//! retry's due time so that an idle worker picks the job up. An idle worker takes the
//! job due earliest, ties in creation order ([`DueQueue`](crate::model::jobs::queue::DueQueue)); it is free again as soon as
//! its run ends, whatever the outcome.
//!
//! Random numbers, all from counter streams of (seed, replication, entity, purpose):
//! job n's arrival gap and poison draw are draws 2n and 2n+1 of (…, 0,
//! [`Purpose::Workload`](crate::engine::rng::Purpose::Workload)); provider k's answer to run r of job n is a draw of (…, k,
//! [`Purpose::Server`](crate::engine::rng::Purpose::Server)) at an index made of (n, r); job n's backoff jitter comes from
//! (…, n, [`Purpose::Jitter`](crate::engine::rng::Purpose::Jitter)) in the order its retries need it. So a variant that
//! changes the policy or the workers sees the same jobs, the same poison and the same
//! provider fates (common random numbers).
//!
//! The metrics it writes, with what each means, are its entries in [`metrics`]; a
//! fraction is of the jobs created by the horizon, so `delivered + dead_lettered +
//! in_flight = 1`.
//!
//! `series.csv` gets, per bin: `created`, `delivered`, `dead_lettered`, `retried`
//! (re-enqueues), `queue_depth` (jobs waiting or scheduled, not in a worker, at the
//! bin's end) and `busy_s` (worker-seconds busy). `cdf.csv` gets `completion_time` as a
//! fraction of the jobs created (a curve stops at the share delivered).

mod config;
mod estimate;
pub mod metrics;
mod world;

pub use config::*;
pub use world::{RunRecord, run_replication, simulate};

use crate::engine::run::EngineError;
use crate::engine::time::SimDuration;
use crate::metrics::ReplicationResult;
use crate::model::config_error::ConfigErrors;
use crate::worlds::Estimate;
use crate::worlds::Job;
use crate::worlds::catalogue;
use crate::worlds::{ModelSection, Section, Shared, Use, prefixed};

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
        estimate::estimate(spec, horizon)
    }
}

#[cfg(test)]
mod tests;
