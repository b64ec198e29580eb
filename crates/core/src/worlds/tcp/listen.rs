//! `[tcp.listen]`: a passive open, the simulated end listening and the peer connecting.

use serde::{Deserialize, Serialize};

use crate::model::config_error::ConfigErrors;
use crate::model::tcp::synack::DEFAULT_SYNACK_RETRIES;

/// `[tcp.listen]`: the listener's SYN-ACK retries and the connecting peer's SYN retries.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ListenConfig {
    /// SYN-ACKs sent again before a request expires (`tcp_synack_retries`, or
    /// `TCP_SYNCNT` on the listening socket).
    #[serde(default = "default_synack_retries")]
    pub synack_retries: u32,
    /// SYNs the peer sends again before it gives up (its `tcp_syn_retries`).
    #[serde(default = "default_peer_syn_retries")]
    pub peer_syn_retries: u32,
}

fn default_synack_retries() -> u32 {
    DEFAULT_SYNACK_RETRIES
}
fn default_peer_syn_retries() -> u32 {
    6
}

/// `tcp_synack_retries` is a u8 sysctl; `MAX_TCP_SYNCNT` (127) bounds `TCP_SYNCNT` and
/// `tcp_syn_retries`.
const MAX_SYNACK_RETRIES: u32 = 255;
const MAX_SYNCNT: u32 = 127;

impl ListenConfig {
    /// Keys relative to `[tcp.listen]`.
    pub fn validate(&self) -> ConfigErrors {
        let mut errors = ConfigErrors::new();
        if self.synack_retries > MAX_SYNACK_RETRIES {
            errors.push("synack_retries", format!("must be from 0 to {MAX_SYNACK_RETRIES} (tcp_synack_retries)"));
        }
        if !(1..=MAX_SYNCNT).contains(&self.peer_syn_retries) {
            errors.push("peer_syn_retries", format!("must be from 1 to {MAX_SYNCNT} (tcp_syn_retries)"));
        }
        errors
    }
}
