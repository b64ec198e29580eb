//! gRPC channels reconnecting to one shared server: the herd, wired into the engine.
//!
//! Built for a million channels in one process. A channel is a few dozen bytes: its
//! backoff state, its path state and three draw counters. Its random numbers come from
//! counter-based streams (`CounterRng`) rebuilt on demand from (seed, replication,
//! channel, purpose) and the count of draws taken, rather than from a ChaCha state of
//! its own, which would cost more memory than everything else together. Nothing is kept
//! per event: the server answers analytically, and metrics are running sums, a histogram
//! over time, and one reconnect time per reconnection.
//!
//! An attempt: the SYN crosses the path; the server answers it (RST, silence, or
//! SYN-ACK and SETTINGS at a time it computes); the answer crosses back. The attempt
//! succeeds when SETTINGS arrive before its connect deadline, and fails on an RST, a
//! reset or the deadline. One SYN per attempt: a SYN lost on the path is not retransmitted
//! within the attempt (the connect deadline ends it). A channel learns that its
//! connection was dropped one base one-way delay after the drop, without loss.

mod config;
mod estimate;
pub mod metrics;
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

impl ModelSection for GrpcConfig {
    const TAG: catalogue::ModelId = catalogue::ModelId::Grpc;
    type Spec = GrpcSpec;
    const ABOUT: &'static str = "channels reconnecting to one server";

    /// Every shared section is optional: the path defaults to `scenario::grpc::default_path`
    /// and the server to one that is always up.
    fn uses(_: Section) -> Use {
        Use::Optional
    }

    fn check(&self) -> ConfigErrors {
        self.validate()
    }

    fn clients(&self) -> u32 {
        self.clients
    }

    fn series_bin(&self) -> Option<(&'static str, SimDuration)> {
        Some(("bin", self.bin))
    }

    fn resolve(&self, shared: Shared<'_>) -> Result<GrpcSpec, ConfigErrors> {
        let backoff = self.backoff.resolve().map_err(|e| prefixed("grpc.backoff", e))?;
        if let Some(server) = shared.server
            && server.has_workers_or_brownouts()
        {
            let mut errors = ConfigErrors::new();
            let key = if server.concurrency.is_some() { "server.concurrency" } else { "server.brownout" };
            errors.push(
                key,
                "applies to [calls] (requests served by workers); a [grpc] server's capacity is accept_rate \
                 and its trouble restarts and outages",
            );
            return Err(errors);
        }
        if let Some(path) = shared.path {
            let refused = path.tcp_only_events();
            if !refused.is_empty() {
                return Err(prefixed("path", refused));
            }
        }
        Ok(GrpcSpec {
            grpc: self.clone(),
            backoff,
            server: shared.server.cloned().unwrap_or_default(),
            path: shared.path.cloned().unwrap_or_else(crate::worlds::grpc::default_path),
            trace: shared.trace.clone(),
        })
    }

    fn run(spec: &GrpcSpec, job: Job<'_>) -> Result<ReplicationResult, EngineError> {
        run_replication(spec, job)
    }

    fn estimate(spec: &GrpcSpec, horizon: SimDuration) -> Estimate {
        estimate::estimate(spec, horizon)
    }
}
