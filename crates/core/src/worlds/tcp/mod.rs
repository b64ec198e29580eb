//! TCP connections over paths, wired into the engine: one world per (variant,
//! replication), every connection with its own path state and random streams.

mod answer;
mod config;
mod estimate;
mod listen;
pub mod metrics;
mod reader;
mod script;
mod world;

pub use config::*;
pub use estimate::traced_clients;
pub use listen::ListenConfig;
pub use reader::{ReceiverConfig, Stall};
pub use world::run_replication;

use crate::engine::run::EngineError;
use crate::engine::time::SimDuration;
use crate::metrics::ReplicationResult;
use crate::model::config_error::ConfigErrors;
use crate::worlds::Estimate;
use crate::worlds::Job;
use crate::worlds::catalogue;
use crate::worlds::{ModelSection, Section, Shared, Use, prefixed};

impl ModelSection for TcpConfig {
    const TAG: catalogue::ModelId = catalogue::ModelId::Tcp;
    type Spec = TcpSpec;
    const ABOUT: &'static str = "connections with RFC 6298 timers";

    fn uses(section: Section) -> Use {
        match section {
            Section::Path => Use::Required(
                "missing required table [path]: a TCP connection's timer depends on the round-trip time, so say \
                 what it is, e.g. `[path]` with `base_rtt = \"100ms\"` (delay, loss, RTT changes and blackouts are \
                 optional)",
            ),
            Section::Server => {
                Use::Refused("[server] belongs to [grpc] scenarios; a TCP receiver has no capacity model")
            }
            Section::Trace => Use::Optional,
        }
    }

    fn check(&self) -> ConfigErrors {
        self.validate()
    }

    fn clients(&self) -> u32 {
        self.clients
    }

    fn resolve(&self, shared: Shared<'_>) -> Result<TcpSpec, ConfigErrors> {
        let rto = self.rto.resolve().map_err(|e| prefixed("tcp.rto", e))?;
        let path = shared.path.cloned().ok_or_else(|| {
            let mut errors = ConfigErrors::new();
            errors.push("", "missing required table [path]");
            errors
        })?;
        Ok(TcpSpec { tcp: self.clone(), rto, path, trace: shared.trace.clone() })
    }

    fn run(spec: &TcpSpec, job: Job<'_>) -> Result<ReplicationResult, EngineError> {
        run_replication(spec, job)
    }

    fn estimate(spec: &TcpSpec, horizon: SimDuration) -> Estimate {
        estimate::estimate(spec, horizon)
    }
}

#[cfg(test)]
mod run_text;
#[cfg(test)]
mod tests;
