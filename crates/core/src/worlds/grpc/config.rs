//! `[grpc]`: a population of gRPC channels that connect to one server and reconnect with
//! the connection-backoff protocol.

use crate::model::config_error::ConfigErrors;
use serde::{Deserialize, Serialize};

use crate::engine::time::SimDuration;
use crate::model::grpc::GrpcBackoffConfig;
use crate::model::path::PathConfig;

use crate::model::grpc::GrpcBackoffParams;
use crate::model::server::ServerConfig;
use crate::worlds::TraceConfig;
#[derive(Clone, Debug, Serialize)]
pub struct GrpcSpec {
    pub grpc: GrpcConfig,
    /// The connection backoff with the profile's defaults filled in.
    pub backoff: GrpcBackoffParams,
    pub server: ServerConfig,
    pub path: PathConfig,
    pub trace: TraceConfig,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GrpcConfig {
    /// Channels, each its own process with its own backoff (no shared subchannel).
    pub clients: u32,
    /// How the run starts: every channel connected (a later restart drops them), or every
    /// channel making its first connection attempt.
    #[serde(default)]
    pub start: Start,
    /// With `start = "connecting"`, first attempts are spread uniformly over this span.
    #[serde(default)]
    pub start_spread: SimDuration,
    /// Reset the backoff when SETTINGS arrive, as the protocol says. `false` models a
    /// client that never resets: its backoff keeps growing across connections, and a
    /// dropped connection counts as one more failure.
    #[serde(default = "yes")]
    pub reset_on_settings: bool,
    /// Width of the bins of attempts seen by the server (`attempts.csv`).
    #[serde(default = "default_bin")]
    pub bin: SimDuration,
    /// Attempts after a disconnect whose spread across clients is reported
    /// (`spread_attempt1` …).
    #[serde(default = "default_spread_attempts")]
    pub spread_attempts: u32,
    /// Extra outputs: `"connections"` writes one row per connection attempt of the
    /// traced clients (`[trace]`) to `connections.csv`.
    #[serde(default)]
    pub record: Vec<Record>,
    /// The connection backoff: profile and overrides. Not serialized: the resolved
    /// parameters stand beside this config in the manifest.
    #[serde(default, skip_serializing)]
    pub backoff: GrpcBackoffConfig,
}

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Start {
    #[default]
    Connected,
    Connecting,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Record {
    Connections,
}

fn yes() -> bool {
    true
}
fn default_bin() -> SimDuration {
    SimDuration::from_millis(100)
}
fn default_spread_attempts() -> u32 {
    5
}

/// The path of a `[grpc]` scenario without a `[path]` table: no delay, no loss.
///
/// A gRPC channel's path only delays its handshakes and the news of a dropped
/// connection; the questions these scenarios answer (how a herd reconnects, how backoff
/// and jitter spread it) are about the backoff schedule and the server's capacity, in
/// seconds. A zero RTT keeps every reconnect time exactly what the backoff profile and
/// the server make it, where any other default would be a network nobody described.
/// Write a `[path]` to add one; the manifest shows the path a run used either way.
pub fn default_path() -> PathConfig {
    PathConfig::new(SimDuration::ZERO)
}

impl GrpcConfig {
    /// Checks the type system cannot make; keys relative to `[grpc]`.
    pub fn validate(&self) -> ConfigErrors {
        let mut errors = ConfigErrors::new();
        if self.clients == 0 {
            errors.push("clients", "must be at least 1");
        }
        if self.bin == SimDuration::ZERO {
            errors.push("bin", "must be longer than 0s");
        }
        if self.spread_attempts > 64 {
            errors.push("spread_attempts", "at most 64 attempts can be followed");
        }
        errors
    }

    pub fn records(&self, r: Record) -> bool {
        self.record.contains(&r)
    }
}
