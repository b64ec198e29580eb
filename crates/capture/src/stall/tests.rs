use backoffsim_core::model::rto::{RtoConfig, RtoParams, RtoProfile};

use super::*;

fn ms(v: u64) -> SimTime {
    SimTime(v * 1_000_000)
}

fn rfc6298(max_rto: Option<u64>) -> RtoParams {
    let cfg = RtoConfig {
        profile: RtoProfile::Rfc6298,
        max_rto: max_rto.map(SimDuration::from_millis),
        // RFC 6298 (2.5) puts the ceiling at 60 s or more; these ask for less.
        nonconformant: max_rto.map(|_| true),
        ..RtoConfig::default()
    };
    cfg.resolve().unwrap()
}

/// A data stall armed at 0 whose retransmissions were sent at `sent` (ms), recovered by
/// an ACK at `ack` (ms), judged by a fresh estimator of `params`.
fn stall(params: &RtoParams, sent: &[u64], ack: Option<u64>, end: u64) -> Stall {
    let mut open = Open::new(Phase::Established, ms(0), RtoEstimator::new(params));
    for &t in sent {
        open.retransmitted(ms(t));
    }
    open.close(ack.map(ms), ms(end))
}

/// RFC 6298 §2.1 (RTO = 1 s before a sample) and §5.5 (double on each expiry): the
/// profile that ran the stall reproduces it, expiry for expiry and to the recovery.
#[test]
fn the_profile_that_ran_a_stall_recovers_when_it_did() {
    let s = stall(&rfc6298(None), &[1000, 3000, 7000], Some(7050), 7050);
    assert_eq!(s.what_if.expiries, [ms(1000), ms(3000), ms(7000)]);
    assert_eq!(s.what_if.count, 3);
    assert_eq!(s.what_if.recovered, Some((ms(7050), ms(7050))));
    assert_eq!(s.stalled(), Some(SimDuration::from_millis(7050)));
    assert_eq!(s.retransmissions, 3);
}

/// RFC 6298 §5.5's "a maximum value MAY be placed on RTO": capped at 2 s the timer
/// fires at 1, 3, 5, 7 s. The path was back after the lost send at 3 s and by 7 s, so it
/// recovers between its expiry at 5 s and the one at 7 s, plus the 50 ms the ACK took.
#[test]
fn a_lower_ceiling_recovers_within_the_span_the_capture_allows() {
    let s = stall(&rfc6298(Some(2000)), &[1000, 3000, 7000], Some(7050), 7050);
    assert_eq!(s.what_if.expiries, [ms(1000), ms(3000), ms(5000), ms(7000)]);
    assert_eq!(s.what_if.recovered, Some((ms(5050), ms(7050))));
    assert_eq!(s.stalled_what_if(), Some((SimDuration::from_millis(5050), SimDuration::from_millis(7050))));
}

/// A sender on a 200 ms timer (Linux's `TCP_RTO_MIN`) seen through RFC 6298's 1 s
/// initial RTO: it would have waited 1 s, then 2 s, and recovered only at 3 s.
#[test]
fn a_longer_timer_fires_later_and_recovers_later() {
    let s = stall(&rfc6298(None), &[200, 600, 1400, 3000], Some(3050), 3050);
    assert_eq!(s.what_if.expiries, [ms(1000), ms(3000)]);
    assert_eq!(s.what_if.recovered, Some((ms(3050), ms(3050))));
}

/// When the first retransmission got through, only the original send was lost: the
/// path may have come back right after it, so the first expiry is the earliest recovery.
#[test]
fn a_stall_ended_by_its_first_retransmission_counts_from_the_original_send() {
    let s = stall(&rfc6298(Some(2000)), &[3000], Some(3100), 3100);
    assert_eq!(s.what_if.expiries, [ms(1000), ms(3000)]);
    assert_eq!(s.what_if.recovered, Some((ms(1100), ms(3100))));
}

/// An expiry within [`SLACK`] before the retransmission that got through is that
/// retransmission: a kernel fires its timer up to a tick late.
#[test]
fn an_expiry_a_tick_early_is_the_same_moment() {
    let s = stall(&rfc6298(None), &[1004, 3008], Some(3060), 3060);
    assert_eq!(s.what_if.recovered, Some((ms(3052), ms(3052))));
}

/// Without recovery the expiries run to the capture's end; at the ceiling they are
/// counted, not stepped through, and the first [`MARKS_MAX`] are kept.
#[test]
fn an_unrecovered_stall_counts_expiries_to_the_end_of_the_capture() {
    let s = stall(&rfc6298(Some(1000)), &[1000, 2000], None, 3_600_000);
    assert_eq!(s.what_if.count, 3600);
    assert_eq!(s.what_if.expiries.len(), MARKS_MAX);
    assert_eq!(s.what_if.expiries[63], ms(64_000));
    assert_eq!(s.what_if.recovered, None);
    assert_eq!(s.stalled(), None);
}

/// The same arithmetic when the stall recovers after many expiries at the ceiling.
#[test]
fn a_long_stall_at_the_ceiling_recovers_at_the_right_expiry() {
    let sent: Vec<u64> = (1..=100).map(|s| s * 1000).collect();
    let s = stall(&rfc6298(Some(1000)), &sent, Some(100_050), 100_050);
    assert_eq!(s.what_if.count, 100);
    assert_eq!(s.retransmissions, 100);
    assert_eq!(s.sent.len(), MARKS_MAX);
    assert_eq!(s.what_if.recovered, Some((ms(100_050), ms(100_050))));
}

/// RFC 8985 §7.3 and Linux `tcp_send_loss_probe`: a probe at the PTO, then the RTO re-armed
/// from the probe, whole (not backed off), then doubling (`tcp_retransmit_timer`).
#[test]
fn a_probing_timer_expires_at_the_pto_then_a_full_rto_after_it_then_doubles() {
    let p = RtoConfig { profile: RtoProfile::Linux, ..RtoConfig::default() }.resolve().unwrap();
    let est = RtoEstimator::new(&p);
    let rto = est.rto().as_nanos() / 1_000_000;
    let mut open = Open::new(Phase::Established, ms(0), est).probing(SimDuration::from_millis(250));
    for t in [250, 250 + rto, 250 + 3 * rto] {
        open.retransmitted(ms(t));
    }
    let s = open.close(Some(ms(250 + 3 * rto + 10)), ms(250 + 3 * rto + 10));
    assert_eq!(s.what_if.expiries, [ms(250), ms(250 + rto), ms(250 + 3 * rto)]);
    assert_eq!(s.what_if.recovered, Some((ms(250 + 3 * rto + 10), ms(250 + 3 * rto + 10))));
}
