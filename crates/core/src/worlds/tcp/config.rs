//! The `[tcp]` section (connections, what they send, their retransmission timer) and its
//! resolved spec.

use serde::{Deserialize, Serialize};

use crate::engine::time::SimDuration;
use crate::model::config_error::ConfigErrors;
use crate::model::path::PathConfig;
use crate::model::rto::{RtoConfig, RtoParams, RtoProfile};
use crate::model::tcp::delack::DelAckParams;
use crate::model::tcp::{CongestionKind, KeepaliveParams, SenderOptions, TcpReceiver};
use crate::worlds::TraceConfig;

use super::script;
pub use super::script::ScriptedWrite;

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
    /// The receiver's window in segments: never more in flight, whatever the congestion
    /// window allows.
    #[serde(default = "default_window")]
    pub window: u32,
    /// Bytes per segment; sets byte sequence numbers and goodput.
    #[serde(default = "default_segment_size")]
    pub segment_size: u32,
    /// Find losses on ACKs (fast retransmit, RACK, RFC 6675); off: only the RTO repairs.
    #[serde(default = "default_true")]
    pub fast_retransmit: bool,
    /// The receiver delays its ACKs as Linux does (`model::tcp::delack`); absent: off
    /// under both profiles (the kernel traces measured match without it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delayed_ack: Option<bool>,
    /// SACK at both ends (RFC 2018); absent: the profile decides (linux yes, rfc6298 no).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sack: Option<bool>,
    /// With SACK, losses found by RACK (RFC 8985) rather than RFC 6675's DupThresh;
    /// absent: the profile decides (linux yes, rfc6298 no).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rack: Option<bool>,
    /// Congestion control, `cubic` or `reno`; absent: the profile decides (linux cubic,
    /// rfc6298 reno).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub congestion: Option<CongestionName>,
    /// The initial congestion window in segments (RFC 6928).
    #[serde(default = "default_initial_window")]
    pub initial_window: u32,
    /// The window restarts after an idle spell longer than the RTO (RFC 5681 4.1).
    #[serde(default = "default_true")]
    pub slow_start_after_idle: bool,
    pub workload: Workload,
    /// Connections start at a uniform random time in [0, start_spread).
    #[serde(default)]
    pub start_spread: SimDuration,
    /// The retransmission timer: profile and overrides. Not serialized: the resolved
    /// parameters stand beside this config in the manifest.
    #[serde(default, skip_serializing)]
    pub rto: RtoConfig,
    /// Linux's keepalive timer; off unless `[tcp.keepalive]` is present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keepalive: Option<KeepaliveConfig>,
    /// The peer's receive buffer and its application's stalls; without it the receiver
    /// never limits the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receiver: Option<super::reader::ReceiverConfig>,
    /// A passive open: the simulated end listens and the peer connects; off unless
    /// `[tcp.listen]` is present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listen: Option<super::ListenConfig>,
    /// The scripted workload's writes, in time order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub write: Vec<ScriptedWrite>,
}

/// `[tcp.keepalive]`: `SO_KEEPALIVE` on, with `TCP_KEEPIDLE`, `TCP_KEEPINTVL` and
/// `TCP_KEEPCNT`; a missing key keeps its sysctl's default.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct KeepaliveConfig {
    /// Idle time before the first probe (`tcp_keepalive_time`).
    #[serde(default = "default_keepalive_time")]
    pub time: SimDuration,
    /// Time between unanswered probes (`tcp_keepalive_intvl`).
    #[serde(default = "default_keepalive_interval")]
    pub interval: SimDuration,
    /// Unanswered probes before the connection is aborted (`tcp_keepalive_probes`).
    #[serde(default = "default_keepalive_probes")]
    pub probes: u32,
}

impl Default for KeepaliveConfig {
    fn default() -> Self {
        let p = KeepaliveParams::default();
        KeepaliveConfig { time: p.time, interval: p.interval, probes: p.probes }
    }
}

fn default_keepalive_time() -> SimDuration {
    KeepaliveParams::default().time
}
fn default_keepalive_interval() -> SimDuration {
    KeepaliveParams::default().interval
}
fn default_keepalive_probes() -> u32 {
    KeepaliveParams::default().probes
}

/// include/net/tcp.h: `MAX_TCP_KEEPIDLE` and `MAX_TCP_KEEPINTVL` (32767 s), `MAX_TCP_KEEPCNT`
/// (127), the largest values the socket options take.
pub const MAX_KEEPALIVE_SECS: u64 = 32767;
pub const MAX_KEEPALIVE_PROBES: u32 = 127;

impl KeepaliveConfig {
    pub fn params(&self) -> KeepaliveParams {
        KeepaliveParams { time: self.time, interval: self.interval, probes: self.probes }
    }

    /// The ranges `do_tcp_setsockopt` accepts: TCP_KEEPIDLE and TCP_KEEPINTVL are whole
    /// seconds in 1..=32767, TCP_KEEPCNT in 1..=127; anything else is EINVAL.
    pub fn validate(&self) -> ConfigErrors {
        let mut errors = ConfigErrors::new();
        for (key, option, d) in [("time", "TCP_KEEPIDLE", self.time), ("interval", "TCP_KEEPINTVL", self.interval)] {
            let ns = d.as_nanos();
            if ns % crate::engine::time::NANOS_PER_SEC != 0
                || !(1..=MAX_KEEPALIVE_SECS).contains(&(ns / crate::engine::time::NANOS_PER_SEC))
            {
                errors.push(
                    key,
                    format!(
                        "must be a whole number of seconds from 1s to {MAX_KEEPALIVE_SECS}s ({option} takes seconds)"
                    ),
                );
            }
        }
        if !(1..=MAX_KEEPALIVE_PROBES).contains(&self.probes) {
            errors.push("probes", format!("must be from 1 to {MAX_KEEPALIVE_PROBES} (TCP_KEEPCNT)"));
        }
        errors
    }
}

/// What the application sends.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Workload {
    /// A finite bulk transfer: `segments` segments, sent as fast as the window allows.
    Transfer { segments: u64 },
    /// An application writing one segment every `interval` until the horizon.
    Steady { interval: SimDuration },
    /// The writes of `[[tcp.write]]` at their times after the connection starts, then
    /// optionally a close (`script.rs`).
    Script {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        close: Option<SimDuration>,
    },
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
fn default_initial_window() -> u32 {
    crate::model::tcp::cc::INITIAL_WINDOW
}

/// `[tcp] congestion`.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum CongestionName {
    Cubic,
    Reno,
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
        if self.initial_window == 0 {
            errors.push("initial_window", "must be at least 1 segment");
        }
        let linux = self.rto.profile == RtoProfile::Linux;
        if self.rack.unwrap_or(linux) && !self.sack.unwrap_or(linux) {
            let key = if self.rack.is_some() { "rack" } else { "sack" };
            errors.push(key, "RACK needs SACK: set sack = true, or rack = false for NewReno");
        }
        match &self.workload {
            Workload::Transfer { segments: 0 } => {
                errors.push("workload.segments", "must be at least 1");
            }
            Workload::Steady { interval } if *interval == SimDuration::ZERO => {
                errors.push("workload.interval", "must be longer than 0s");
            }
            _ => {}
        }
        errors.extend_under("", script::validate(&self.workload, &self.write));
        if let Some(keepalive) = &self.keepalive {
            errors.extend_under("keepalive", keepalive.validate());
        }
        if let Some(receiver) = &self.receiver {
            errors.extend_under("receiver", receiver.validate());
        }
        if let Some(listen) = &self.listen {
            if !self.handshake {
                errors.push("handshake", "must be true with [tcp.listen]: a passive open is a handshake");
            }
            errors.extend_under("listen", listen.validate());
        }
        errors
    }

    /// The sender's TCP stack: these keys over the profile's defaults.
    pub fn sender_options(&self) -> SenderOptions {
        let base = SenderOptions::for_profile(self.rto.profile, self.handshake, self.window, self.segment_size);
        SenderOptions {
            fast_retransmit: self.fast_retransmit,
            sack: self.sack.unwrap_or(base.sack),
            rack: self.rack.unwrap_or(base.rack),
            congestion: match self.congestion {
                Some(CongestionName::Cubic) => CongestionKind::Cubic,
                Some(CongestionName::Reno) => CongestionKind::Reno,
                None => base.congestion,
            },
            initial_window: self.initial_window,
            slow_start_after_idle: self.slow_start_after_idle,
            ..base
        }
    }

    /// Whether the peer delays its ACKs: the key, else the profile's default.
    pub fn delayed_ack(&self) -> bool {
        self.delayed_ack.unwrap_or(false)
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

impl TcpSpec {
    /// The peer's receiver: its buffer, and its delayed ACKs with `[tcp] delayed_ack`.
    /// With a handshake the peer has one RTT sample, the SYN-ACK's round trip over the
    /// path as it typically is at the start (base RTT plus `extra`, the median extra
    /// delay); its timers tick at the estimator's `hz`, or 1000 Hz under rfc6298.
    pub fn receiver(&self, extra: SimDuration) -> TcpReceiver {
        let buffer = self.tcp.receiver.as_ref().map(|r| r.buffer);
        let receiver = buffer.map_or_else(TcpReceiver::new, TcpReceiver::with_buffer);
        let opts = self.tcp.sender_options();
        // RFC 2018 section 3: four blocks fit in the option space, three beside the
        // timestamp option.
        let receiver = if opts.sack { receiver.with_sack(if self.rto.timestamps { 3 } else { 4 }) } else { receiver };
        if !self.tcp.delayed_ack() {
            return receiver;
        }
        let hz = self.rto.hz.unwrap_or(1000);
        let window = buffer.unwrap_or(u64::MAX);
        let params = if self.tcp.handshake {
            DelAckParams::after_handshake(hz, self.path.base_rtt + extra, window)
        } else {
            DelAckParams::unsampled(hz, window)
        };
        receiver.with_delayed_ack(params)
    }
}
