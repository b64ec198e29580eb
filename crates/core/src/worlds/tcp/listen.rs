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

/// What a passive open adds to one connection's events: the peer's SYN and its arrival,
/// the SYN-ACK and its answer, the ACK, and the runs of the request's and the peer's
/// timers (the latter finding the handshake done); in each blackout, the SYN-ACKs the
/// request's timer resends (1 s doubling to the RTO max, `synack_retries` of them) and
/// the SYNs the peer resends (1 s doubling, `peer_syn_retries`), each with its run.
/// Also whether the workload never starts: a blackout from the first round trip that
/// outlasts the request.
pub(super) fn handshake_events(listen: &ListenConfig, spec: &super::TcpSpec) -> (f64, bool) {
    let cap = spec.rto.max_rto.as_secs_f64().max(1e-3);
    let synack = |k: u32| 2f64.powi(k.min(60) as i32).min(cap);
    let peer = |k: u32| 2f64.powi(k.min(60) as i32);
    let lifetime: f64 = (0..=listen.synack_retries).map(synack).sum();
    let mut dark = 0.0;
    let mut never = false;
    for b in &spec.path.blackout {
        dark +=
            2.0 * crate::worlds::estimate::attempts_within(b.duration, f64::from(listen.synack_retries) + 1.0, synack);
        dark +=
            2.0 * crate::worlds::estimate::attempts_within(b.duration, f64::from(listen.peer_syn_retries) + 1.0, peer);
        never |= b.at <= spec.path.base_rtt && (b.at + b.duration).as_secs_f64() > lifetime;
    }
    (8.0 + dark, never)
}
