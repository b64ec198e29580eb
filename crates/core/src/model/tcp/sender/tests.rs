use super::*;
use crate::engine::time::SimDuration;
use crate::model::rto::{RtoConfig, RtoProfile};
use crate::model::tcp::drive::{ack, ms, sent};

fn sender(window: u32, segments: u64, config: RtoConfig) -> TcpSender {
    let opts = SenderOptions::for_profile(config.profile, false, window, 1000);
    TcpSender::new(opts, &config.resolve().unwrap(), Supply::Transfer { segments })
}

fn rfc() -> RtoConfig {
    RtoConfig::default()
}

fn samples(out: &[Action]) -> Vec<SimDuration> {
    out.iter()
        .filter_map(|a| match a {
            Action::Observe(Observation { kind: ObservationKind::Sample { rtt }, .. }) => Some(*rtt),
            _ => None,
        })
        .collect()
}

#[test]
fn rfc6298_5_1_timer_starts_with_the_first_data_and_is_not_restarted_by_later_sends() {
    let mut s = sender(4, 4, rfc());
    let mut out = Vec::new();
    s.start(ms(0), &mut out);
    assert_eq!(sent(&out), [(0, false), (1, false), (2, false), (3, false)]);
    // RFC 6298 (2.1): initial RTO 1 s.
    assert_eq!(s.timer(), Some(ms(1000)));
}

#[test]
fn rfc6298_5_2_timer_stops_when_everything_is_acknowledged() {
    let mut s = sender(2, 2, rfc());
    s.start(ms(0), &mut Vec::new());
    ack(&mut s, ms(100), 1, ms(0));
    assert!(s.timer().is_some());
    ack(&mut s, ms(100), 2, ms(0));
    assert_eq!(s.timer(), None);
    assert!(s.is_finished());
}

#[test]
fn rfc6298_5_3_an_ack_of_new_data_restarts_the_timer_with_the_current_rto() {
    let mut s = sender(2, 4, rfc());
    s.start(ms(0), &mut Vec::new());
    ack(&mut s, ms(300), 1, ms(0));
    // Sample 300 ms: SRTT 300, RTTVAR 150, RTO max(1 s, 0.9 s) = 1 s, from 300 ms.
    assert_eq!(s.timer(), Some(ms(1300)));
    // A duplicate ACK acknowledges nothing new and leaves the timer alone.
    ack(&mut s, ms(400), 1, ms(0));
    assert_eq!(s.timer(), Some(ms(1300)));
}

#[test]
fn rfc6298_5_4_to_5_6_expiry_retransmits_the_earliest_doubles_and_restarts() {
    let mut s = sender(3, 3, rfc());
    s.start(ms(0), &mut Vec::new());
    let mut out = Vec::new();
    s.on_timer(ms(1000), &mut out);
    // (5.4) only the earliest unacknowledged segment; (5.5) RTO 2 s; (5.6) restarted.
    assert_eq!(sent(&out), [(0, true)]);
    assert_eq!(s.snapshot().rto, SimDuration::from_secs(2));
    assert_eq!(s.timer(), Some(ms(3000)));
    let mut out = Vec::new();
    s.on_timer(ms(3000), &mut out);
    assert_eq!(s.snapshot().rto, SimDuration::from_secs(4));
    assert_eq!(s.timer(), Some(ms(7000)));
}

#[test]
fn a_stale_timer_call_does_nothing() {
    let mut s = sender(1, 1, rfc());
    s.start(ms(0), &mut Vec::new());
    let mut out = Vec::new();
    s.on_timer(ms(999), &mut out);
    assert!(out.is_empty());
    assert_eq!(s.timer(), Some(ms(1000)));
}

#[test]
fn rfc6298_3_karn_takes_no_sample_from_a_retransmitted_segment_and_the_backoff_sticks() {
    let mut s = sender(1, 3, rfc());
    s.start(ms(0), &mut Vec::new());
    s.on_timer(ms(1000), &mut Vec::new());
    // The ACK of segment 0 arrives: ambiguous, so no sample, and the doubled RTO is
    // kept for the next segment (the smoltcp#1023 bug lost it here).
    let out = ack(&mut s, ms(1040), 1, ms(0));
    assert!(samples(&out).is_empty());
    assert_eq!(s.snapshot().rto, SimDuration::from_secs(2));
    assert_eq!(s.timer(), Some(ms(3040)));
    // Segment 1 was sent fresh at 1040 ms and is timed: its ACK is a valid sample,
    // RFC 6298 (2.2) recomputes, and the backoff collapses.
    let out = ack(&mut s, ms(2080), 2, ms(0));
    assert_eq!(samples(&out), [SimDuration::from_millis(1040)]);
    assert_eq!(s.snapshot().backoffs, 0);
    // SRTT 1.04 s + 4 · 0.52 s = 3.12 s.
    assert_eq!(s.snapshot().rto, SimDuration::from_millis(3120));
}

#[test]
fn rfc7323_timestamps_make_the_ack_of_a_retransmission_a_valid_sample() {
    let config = RtoConfig { timestamps: Some(true), ..RtoConfig::default() };
    let mut s = sender(1, 2, config);
    s.start(ms(0), &mut Vec::new());
    s.on_timer(ms(1000), &mut Vec::new());
    // The ACK echoes the retransmission's TSval (1000 ms): the RTT is 40 ms.
    let out = ack(&mut s, ms(1040), 1, ms(1000));
    assert_eq!(samples(&out), [SimDuration::from_millis(40)]);
}

#[test]
fn without_karn_the_retransmission_is_timed_from_its_latest_copy() {
    let config = RtoConfig { karn: Some(false), nonconformant: Some(true), ..RtoConfig::default() };
    let mut s = sender(1, 2, config);
    s.start(ms(0), &mut Vec::new());
    s.on_timer(ms(1000), &mut Vec::new());
    let out = ack(&mut s, ms(1040), 1, ms(0));
    // The ACK answered the original (sent at 0), but is attributed to the copy: 40 ms.
    assert_eq!(samples(&out), [SimDuration::from_millis(40)]);
}

#[test]
fn linux_samples_every_ack_from_the_oldest_newly_acknowledged_segment() {
    let config = RtoConfig { profile: RtoProfile::Linux, timestamps: Some(false), ..RtoConfig::default() };
    let mut s = sender(4, 4, config);
    s.start(ms(0), &mut Vec::new());
    let out = ack(&mut s, ms(100), 2, ms(0));
    assert_eq!(samples(&out), [SimDuration::from_millis(100)]);
    let out = ack(&mut s, ms(110), 3, ms(0));
    assert_eq!(samples(&out), [SimDuration::from_millis(110)]);
}

#[test]
fn rfc5681_3_2_third_duplicate_ack_retransmits_without_waiting_for_the_timer() {
    let mut s = sender(5, 5, rfc());
    s.start(ms(0), &mut Vec::new());
    ack(&mut s, ms(100), 1, ms(0));
    assert!(sent(&ack(&mut s, ms(101), 1, ms(0))).is_empty());
    assert!(sent(&ack(&mut s, ms(102), 1, ms(0))).is_empty());
    assert_eq!(sent(&ack(&mut s, ms(103), 1, ms(0))), [(1, true)]);
    // No backoff: fast retransmit is not a timeout.
    assert_eq!(s.snapshot().backoffs, 0);
}

#[test]
fn after_a_timeout_the_window_reopens_one_segment_per_ack_going_back_n() {
    let mut s = sender(4, 4, rfc());
    s.start(ms(0), &mut Vec::new());
    s.on_timer(ms(1000), &mut Vec::new());
    // ACK 1 (segment 0's copy arrived): window 2, so segments 1 and 2 are resent.
    assert_eq!(sent(&ack(&mut s, ms(1100), 1, ms(0))), [(1, true), (2, true)]);
}

#[test]
fn handshake_sample_and_rfc6298_5_7_after_a_syn_timeout() {
    let opts = SenderOptions::for_profile(RtoProfile::Rfc6298, true, 1, 1000);
    let params = RtoConfig::default().resolve().unwrap();
    let mut s = TcpSender::new(opts, &params, Supply::Steady);
    let mut out = Vec::new();
    s.start(ms(0), &mut out);
    assert!(matches!(out[0], Action::Transmit(Segment::Syn { retransmit: false, .. })));
    s.on_timer(ms(1000), &mut Vec::new());
    let mut out = Vec::new();
    s.on_segment(ms(1040), Segment::SynAck { tsecr: ms(0) }, &mut out);
    // Karn: the SYN was retransmitted, so the SYN-ACK is not sampled; (5.7): RTO < 3 s
    // after a SYN timeout becomes 3 s when data starts.
    assert!(samples(&out).is_empty());
    assert!(s.is_established());
    assert_eq!(s.snapshot().rto, SimDuration::from_secs(3));
}

#[test]
fn one_write_of_any_size_sends_the_window_at_once_and_keeps_the_rest() {
    // One write() ends in one tcp_push: tcp_write_xmit sends what the window allows and
    // leaves the rest queued. A write of 2^64 - 1 segments costs what a write of 10 does,
    // and two of them saturate instead of wrapping.
    let supply = Supply::Steady;
    let opts = SenderOptions::for_profile(RtoProfile::Rfc6298, false, 10, 1000);
    let mut s = TcpSender::new(opts, &rfc().resolve().unwrap(), supply);
    s.start(ms(0), &mut Vec::new());
    let mut out = Vec::new();
    s.app_write_segments(ms(0), u64::MAX, &mut out);
    assert_eq!(sent(&out), (0..10).map(|seq| (seq, false)).collect::<Vec<_>>());
    let mut out = Vec::new();
    s.app_write_segments(ms(1), u64::MAX, &mut out);
    assert!(sent(&out).is_empty(), "the window is full");
    let out = ack(&mut s, ms(100), 4, ms(0));
    assert_eq!(sent(&out), (10..14).map(|seq| (seq, false)).collect::<Vec<_>>());
}
