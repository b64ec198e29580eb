//! The RTO trace: one row per thing that happened to a traced connection, with the
//! estimator's state right after it.

use crate::engine::time::{SimDuration, SimTime};

names! {
    /// What happened to a traced connection: a [`TraceRow`]'s `event`.
    TraceEvent {
        Send = "send",
        Retransmit = "retransmit",
        Ack = "ack",
        Sample = "sample",
        Timeout = "timeout",
        /// A tail loss probe (RFC 8985).
        Probe = "probe",
        /// A timeout F-RTO (RFC 5682) found spurious.
        SpuriousTimeout = "spurious_timeout",
        Aborted = "aborted",
        Established = "established",
        Finished = "finished",
        /// A keepalive probe (Linux `tcp_keepalive_timer`).
        Keepalive = "keepalive",
        /// The receiver's window closed with data waiting: the probe timer starts.
        ZeroWindow = "zero_window",
        /// A zero-window probe (Linux `tcp_send_probe0`).
        WindowProbe = "window_probe",
        /// The window reopened after a zero-window stall.
        WindowOpen = "window_open",
        /// A peer's SYN reaches a listener (passive open).
        Syn = "syn",
        /// A listener's SYN-ACK, first or (`synack_retransmit`) sent again.
        SynAck = "synack",
        SynAckRetransmit = "synack_retransmit",
        /// A listener dropped a request whose SYN-ACKs went unanswered.
        RequestExpired = "request_expired",
        /// An ICMP unreachable reached the sender (RFC 6069 revert on linux).
        IcmpUnreachable = "icmp_unreachable",
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TraceRow {
    #[serde(with = "crate::metrics::wire::nanos")]
    pub time: SimTime,
    pub client: u32,
    /// A [`TraceEvent`]'s name (the wire and `trace.csv` keep the string).
    #[serde(deserialize_with = "crate::metrics::wire::name")]
    pub event: crate::metrics::wire::Name,
    /// The segment sent or the cumulative ACK, where the event has one.
    pub segment: Option<u64>,
    /// The RTT measurement, on `sample` rows.
    #[serde(with = "crate::metrics::wire::nanos")]
    pub sample: Option<SimDuration>,
    #[serde(with = "crate::metrics::wire::nanos")]
    pub srtt: Option<SimDuration>,
    #[serde(with = "crate::metrics::wire::nanos")]
    pub rttvar: Option<SimDuration>,
    #[serde(with = "crate::metrics::wire::nanos")]
    pub rto: SimDuration,
    pub backoffs: u32,
    /// The congestion window in segments, on rows of a connection with a sender (a
    /// listener's request has none).
    pub cwnd: Option<u32>,
    /// The slow-start threshold in segments, once a loss has set one.
    pub ssthresh: Option<u32>,
    /// The loss-recovery state's name (`open`, `disorder`, `recovery`, `loss`), where
    /// there is a congestion window.
    #[serde(deserialize_with = "crate::metrics::wire::opt_name")]
    pub ca_state: Option<crate::metrics::wire::Name>,
}

impl TraceRow {
    /// The event, `None` for a name no world writes (a file from another version).
    pub fn kind(&self) -> Option<TraceEvent> {
        TraceEvent::from_name(self.event)
    }
}

/// Seconds with nine decimals: exact for integer nanoseconds, so the CSV is the same on
/// every machine and loses nothing.
pub fn secs(ns: u64) -> String {
    format!("{}.{:09}", ns / 1_000_000_000, ns % 1_000_000_000)
}

pub fn opt_secs(d: Option<SimDuration>) -> String {
    d.map(|d| secs(d.as_nanos())).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_trace_event_reads_back_from_its_name() {
        assert_eq!(TraceEvent::ALL.len(), TraceEvent::NAMES.len());
        for (i, &e) in TraceEvent::ALL.iter().enumerate() {
            assert_eq!((TraceEvent::from_name(e.name()), e.index()), (Some(e), i));
        }
        assert_eq!(TraceEvent::SpuriousTimeout.name(), "spurious_timeout");
        assert_eq!(TraceEvent::from_name("Timeout"), None);
    }

    #[test]
    fn seconds_are_exact_to_the_nanosecond() {
        assert_eq!(secs(0), "0.000000000");
        assert_eq!(secs(1_040_000_000), "1.040000000");
        assert_eq!(secs(123_456_789_012), "123.456789012");
        assert_eq!(opt_secs(None), "");
    }
}
