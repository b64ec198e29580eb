//! The `[tcp]` section (connections, what they send, their retransmission timer) and its
//! resolved spec.

use serde::{Deserialize, Serialize};

use crate::engine::time::SimDuration;
use crate::model::config_error::ConfigErrors;
use crate::model::path::PathConfig;
use crate::model::rto::{RtoConfig, RtoParams};
use crate::model::tcp::SenderOptions;
use crate::worlds::TraceConfig;

/// `[tcp]`: the connections and what they send.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TcpConfig {
    /// Independent connections, each over its own draw of the path.
    #[serde(default = "default_clients")]
    pub clients: u32,
    /// Open each connection with a three-way handshake (SYN, SYN-ACK) first.
    #[serde(default = "default_true")]
    pub handshake: bool,
    /// Segments in flight at most.
    #[serde(default = "default_window")]
    pub window: u32,
    /// Bytes per segment; sets byte sequence numbers and goodput.
    #[serde(default = "default_segment_size")]
    pub segment_size: u32,
    /// Retransmit on the third duplicate ACK (RFC 5681 3.2).
    #[serde(default = "default_true")]
    pub fast_retransmit: bool,
    pub workload: Workload,
    /// Connections start at a uniform random time in [0, start_spread).
    #[serde(default)]
    pub start_spread: SimDuration,
    /// The retransmission timer: profile and overrides. Not serialized: the resolved
    /// parameters stand beside this config in the manifest.
    #[serde(default, skip_serializing)]
    pub rto: RtoConfig,
}

/// What the application sends.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Workload {
    /// A finite bulk transfer: `segments` segments, sent as fast as the window allows.
    Transfer { segments: u64 },
    /// An application writing one segment every `interval` until the horizon.
    Steady { interval: SimDuration },
}

fn default_clients() -> u32 {
    1
}
fn default_true() -> bool {
    true
}
fn default_window() -> u32 {
    10
}
fn default_segment_size() -> u32 {
    1460
}

impl TcpConfig {
    /// Checks the type system cannot make; keys relative to `[tcp]`.
    pub fn validate(&self) -> ConfigErrors {
        let mut errors = ConfigErrors::new();
        if self.clients == 0 {
            errors.push("clients", "must be at least 1");
        }
        if self.window == 0 {
            errors.push("window", "must be at least 1 segment");
        }
        if self.segment_size == 0 {
            errors.push("segment_size", "must be at least 1 byte");
        }
        match self.workload {
            Workload::Transfer { segments: 0 } => {
                errors.push("workload.segments", "must be at least 1");
            }
            Workload::Steady { interval } if interval == SimDuration::ZERO => {
                errors.push("workload.interval", "must be longer than 0s");
            }
            _ => {}
        }
        errors
    }

    pub fn sender_options(&self) -> SenderOptions {
        SenderOptions {
            handshake: self.handshake,
            window: self.window,
            segment_size: self.segment_size,
            fast_retransmit: self.fast_retransmit,
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct TcpSpec {
    pub tcp: TcpConfig,
    /// The estimator's constants with the profile's defaults filled in.
    pub rto: RtoParams,
    pub path: PathConfig,
    pub trace: TraceConfig,
}
