//! Driving a sender by hand in tests: building one, feeding it ACKs, writes and timer
//! expiries, and reading what it did.

use super::segment::{Sack, Segment};
use super::sender::{Action, Observation, ObservationKind, SenderOptions, Supply, TcpSender};
use crate::engine::time::{SimDuration, SimTime};
use crate::model::rto::{RtoConfig, RtoProfile};

pub(super) fn ms(v: u64) -> SimTime {
    SimTime(v * 1_000_000)
}

pub(super) fn dur_ms(v: u64) -> SimDuration {
    SimDuration::from_millis(v)
}

/// A sender of `profile` with `sets` applied to its timer, 1000-byte segments and fast
/// retransmit on.
pub(super) fn new_sender(
    handshake: bool,
    profile: RtoProfile,
    sets: &[(&str, &str)],
    window: u32,
    supply: Supply,
) -> TcpSender {
    let opts = SenderOptions::for_profile(profile, handshake, window, 1000);
    TcpSender::new(opts, &RtoConfig::with_pairs(profile, sets).resolve().unwrap(), supply)
}

/// As [`new_sender`], established from the start (no handshake).
pub(super) fn sender(profile: RtoProfile, sets: &[(&str, &str)], window: u32, supply: Supply) -> TcpSender {
    new_sender(false, profile, sets, window, supply)
}

pub(super) fn on(s: &mut TcpSender, at: SimTime, seg: Segment) -> Vec<Action> {
    let mut out = Vec::new();
    s.on_segment(at, seg, &mut out);
    out
}

/// A cumulative ACK with an open window and no SACK.
pub(super) fn ack(s: &mut TcpSender, at: SimTime, ack: u64, tsecr: SimTime) -> Vec<Action> {
    on(s, at, Segment::Ack { ack, tsecr, window: u64::MAX, sack: Sack::NONE })
}

pub(super) fn write(s: &mut TcpSender, at: SimTime) -> Vec<Action> {
    let mut out = Vec::new();
    s.app_write(at, &mut out);
    out
}

/// Runs the timer that is armed, at its time.
pub(super) fn fire(s: &mut TcpSender) -> (SimTime, Vec<Action>) {
    let at = s.timer().expect("a timer is running");
    let mut out = Vec::new();
    s.on_timer(at, &mut out);
    (at, out)
}

pub(super) fn kinds(out: &[Action]) -> Vec<ObservationKind> {
    out.iter()
        .filter_map(|a| match a {
            Action::Observe(Observation { kind, .. }) => Some(*kind),
            Action::Transmit(_) => None,
        })
        .collect()
}

/// The data segments sent, as (seq, retransmit).
pub(super) fn sent(out: &[Action]) -> Vec<(u64, bool)> {
    out.iter()
        .filter_map(|a| match a {
            Action::Transmit(Segment::Data { seq, retransmit, .. }) => Some((*seq, *retransmit)),
            _ => None,
        })
        .collect()
}
