//! Clients making calls through a retry policy against one shared server: what a
//! library's defaults do during an outage, wired into the engine.
//!
//! A logical call (the application's) runs through its `tiers` of retry loops and the
//! library's [`RetryState`](crate::model::retry::RetryState); every attempt is one call to the server (`answer`: its down
//! times, brownouts and workers), asked when the attempt starts, whose answer fixes when
//! and how the attempt ends. Two events per attempt: its start and its end; a give-up
//! that waits (`sleep-then-stop`) adds one. `monitor` keeps the per-bin series and reads
//! goodput, load, wasted work, recovery and the retry-share alert from it.
//!
//! Random numbers: client `c` draws its backoff jitter from the counter stream
//! (seed, replication, `c`, [`Purpose::Jitter`](crate::engine::rng::Purpose::Jitter)) in the order its calls need them, and
//! its start offset, then its bad-request draws and Poisson gaps, from (…, `c`,
//! [`Purpose::Workload`](crate::engine::rng::Purpose::Workload)); the server draws brownout failures and service times from
//! (…, 0, [`Purpose::Server`](crate::engine::rng::Purpose::Server)) in arrival order. A client's draws do not depend
//! on the other clients; variants see the same streams (common random numbers).
//!
//! The metrics it writes, with what each means, are its entries in [`metrics`]; a
//! fraction is of the logical calls started by the horizon.
//!
//! `cdf.csv` gets `time_to_success` and `time_to_giveup` as fractions of all calls
//! started (a curve stops at the share of calls that got there) and `total_sleep` over
//! the finished calls.

mod answer;
mod config;
mod estimate;
pub mod metrics;
pub mod monitor;
mod world;

pub use config::*;
pub use world::run_replication;

use crate::engine::run::EngineError;
use crate::engine::time::SimDuration;
use crate::metrics::ReplicationResult;
use crate::model::config_error::ConfigErrors;
use crate::worlds::Estimate;
use crate::worlds::Job;
use crate::worlds::catalogue;
use crate::worlds::{ModelSection, Section, Shared, Use, prefixed};

impl ModelSection for CallsConfig {
    const TAG: catalogue::ModelId = catalogue::ModelId::Calls;
    type Spec = CallsSpec;
    const ABOUT: &'static str = "calls retried by a policy";

    fn uses(section: Section) -> Use {
        match section {
            Section::Path => Use::Refused(
                "[path] does not apply to [calls]: attempt_time, fail_time and timeout give each attempt's duration",
            ),
            Section::Server => Use::Optional,
            Section::Trace => Use::Refused("[trace] does not apply to [calls]: it has no per-client trace"),
        }
    }

    fn check(&self) -> ConfigErrors {
        self.validate()
    }

    fn clients(&self) -> u32 {
        self.clients
    }

    fn series_bin(&self) -> Option<(&'static str, SimDuration)> {
        Some(("monitor.bin", self.monitor.bin))
    }

    /// The policy resolved, the server's down times merged with `outage`.
    fn resolve(&self, shared: Shared<'_>) -> Result<CallsSpec, ConfigErrors> {
        let policy = self.policy.resolve().map_err(|e| prefixed("calls.policy", e))?;
        let server = self.server(shared.server)?;
        Ok(CallsSpec { calls: self.clone(), policy, server })
    }

    fn run(spec: &CallsSpec, job: Job<'_>) -> Result<ReplicationResult, EngineError> {
        run_replication(spec, job)
    }

    fn estimate(spec: &CallsSpec, horizon: SimDuration) -> Estimate {
        estimate::estimate(spec, horizon)
    }
}

#[cfg(test)]
mod tests;
