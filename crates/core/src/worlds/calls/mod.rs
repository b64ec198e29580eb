//! Clients making calls through a retry policy against one shared server: what a
//! library's defaults do during an outage, wired into the engine.
//!
//! A logical call (the application's) runs through its `tiers` of retry loops and the
//! library's [`RetryState`]; every attempt is one call to the server (`answer`: its down
//! times, brownouts and workers), asked when the attempt starts, whose answer fixes when
//! and how the attempt ends. Two events per attempt: its start and its end; a give-up
//! that waits (`sleep-then-stop`) adds one. `monitor` keeps the per-bin series and reads
//! goodput, load, wasted work, recovery and the retry-share alert from it.
//!
//! Random numbers: client `c` draws its backoff jitter from the counter stream
//! (seed, replication, `c`, [`Purpose::Jitter`]) in the order its calls need them, and
//! its start offset, then its bad-request draws and Poisson gaps, from (…, `c`,
//! [`Purpose::Workload`]); the server draws brownout failures and service times from
//! (…, 0, [`Purpose::Server`]) in arrival order. A client's draws do not depend
//! on the other clients; variants see the same streams (common random numbers).
//!
//! Metrics (per replication; fractions are of the logical calls started by the horizon):
//!
//! | metric | meaning |
//! |---|---|
//! | `calls` | logical calls started |
//! | `success_rate` | fraction that succeeded |
//! | `gave_up_<reason>` | fraction that failed, by the innermost policy's last reason (only the reasons the policy can give) |
//! | `unfinished` | fraction still running at the horizon |
//! | `attempts_per_call` | server calls per library call: the attempts the library counts |
//! | `library_calls_per_call` | with `tiers`: library calls per logical call |
//! | `server_calls_per_call` | server calls per logical call: the amplification |
//! | `retry_share` | retries (every server call but a logical call's first) as a share of server calls |
//! | `duplicates` | for calls that are not safe to repeat: duplicate side effects per logical call |
//! | `time_to_success` | mean time from the call's start to its success, over successes |
//! | `time_to_giveup` | mean time from the call's start to its final give-up, over failures |
//! | `total_sleep`, `total_sleep_max` | mean and largest time a finished call spent sleeping (every tier's sleeps, and a wait before giving up) |
//! | `time_to_success_p99`, `time_to_success_max` | the tail of the time to success |
//! | `time_to_answer` | mean time to success or final failure, over calls that ended |
//! | `bad_request_retries` | with `permanent_fraction`: attempts of bad requests after their first, per logical call |
//! | goodput, load, wasted work, recovery, alert | see [`monitor`] |
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
use crate::metrics::catalogue;
use crate::model::config_error::ConfigErrors;
use crate::worlds::Estimate;
use crate::worlds::Job;
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
