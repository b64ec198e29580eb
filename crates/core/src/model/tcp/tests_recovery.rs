//! Loss recovery by hand: RACK's reordering window and timer, NewReno's partial ACKs
//! and an undo by DSACK, each time and window computed on paper from the source named.

use super::drive::{fire, ms, new_sender, on, sent as data};
use super::segment::{Sack, Segment};
use super::sender::{CaState, Supply, TcpSender};
use crate::engine::time::SimTime;
use crate::model::rto::RtoProfile;

fn sack_ack(s: &mut TcpSender, at: u64, ack: u64, blocks: &[(u64, u64)]) -> Vec<(u64, bool)> {
    let seg = Segment::Ack { ack, tsecr: SimTime::ZERO, window: u64::MAX, sack: Sack::from_blocks(blocks) };
    data(&on(s, ms(at), seg))
}

/// A linux sender (SACK, RACK, CUBIC, HZ 250, no timestamps) with ten segments out at 0
/// and segment 0's ACK at 100 ms: SRTT and min_rtt 100 ms, RACK.rtt 100 ms.
fn linux_after_first_ack(segments: u64) -> (TcpSender, Vec<(u64, bool)>) {
    let mut s = new_sender(false, RtoProfile::Linux, &[("timestamps", "false")], 100, Supply::Transfer { segments });
    s.start(ms(0), &mut Vec::new());
    let sent = sack_ack(&mut s, 100, 1, &[]);
    (s, sent)
}

#[test]
fn rack_waits_a_quarter_of_min_rtt_for_a_reordered_segment_and_then_retransmits_it() {
    // RFC 8985 6.2 step 4 / tcp_rack_reo_wnd: with fewer than DupThresh segments SACKed
    // and no recovery, reo_wnd = min_rtt / 4 = 25 ms. Segment 2 is SACKed at 100 ms;
    // segment 1, sent at 0 just before it, is not late until RACK.rtt + reo_wnd = 125 ms
    // after its send: the reordering timer, usecs_to_jiffies(25000 + 2000) = 6.75 -> 7
    // jiffies = 28 ms, at 128 ms (tcp_rack_mark_lost).
    let (mut s, _) = linux_after_first_ack(20);
    assert!(sack_ack(&mut s, 100, 1, &[(2, 3)]).iter().all(|&(_, r)| !r));
    assert_eq!(s.timer(), Some(ms(128)));
    // Tolerated: segment 1 arrives 10 ms late, its ACK covers 1 and 2; nothing resent.
    let mut late = s.clone();
    assert!(sack_ack(&mut late, 110, 3, &[]).iter().all(|&(_, r)| !r));
    assert_ne!(late.timer(), Some(ms(128)));
    // Not tolerated: nothing by 128 ms; tcp_rack_reo_timeout marks it lost, starts a
    // recovery and retransmits it.
    let (at, out) = fire(&mut s);
    assert_eq!(at, ms(128));
    assert_eq!(data(&out), [(1, true)]);
    assert_eq!(s.cc_view().state, CaState::Recovery);
}

#[test]
fn rfc6582_a_partial_ack_resends_the_next_hole_at_once_and_restarts_the_timer_only_the_first_time() {
    // RFC 6298 profile without SACK: NewReno. Ten segments at 0 (IW 10, RFC 6928);
    // segments 0, 3 and 6 lost. No sample yet: RTO 1 s.
    let mut s = new_sender(false, RtoProfile::Rfc6298, &[], 100, Supply::Transfer { segments: 10 });
    s.start(ms(0), &mut Vec::new());
    // 100 ms: seven duplicate ACKs (segments 1, 2, 4, 5, 7, 8, 9); the third is RFC 6582
    // step 2's fast retransmit of segment 0.
    let mut resent = Vec::new();
    for _ in 0..7 {
        resent.extend(sack_ack(&mut s, 100, 0, &[]));
    }
    assert_eq!(resent, [(0, true)]);
    assert_eq!(s.cc_view().state, CaState::Recovery);
    // RFC 5681 (4): ssthresh = max(FlightSize / 2, 2) = 5, cwnd = ssthresh.
    assert_eq!((s.cc_view().cwnd, s.cc_view().ssthresh), (5, Some(5)));
    // 200 ms: the first partial ACK (segments 0-2): step 3, segment 3 at once, and the
    // timer restarts from now (5.3), 200 + 1000 ms.
    assert_eq!(sack_ack(&mut s, 200, 3, &[]), [(3, true)]);
    assert_eq!(s.timer(), Some(ms(1200)));
    // 300 ms: the second partial ACK (segments 3-5): segment 6 at once, and the impatient
    // variant (RFC 6582 section 4.1) leaves the timer where the first one put it.
    assert_eq!(sack_ack(&mut s, 300, 6, &[]), [(6, true)]);
    assert_eq!(s.timer(), Some(ms(1200)));
    // 400 ms: the full ACK ends the recovery.
    sack_ack(&mut s, 400, 10, &[]);
    assert!(s.is_finished());
}

#[test]
fn a_dsack_of_the_only_retransmission_undoes_the_reduction_after_the_recovery() {
    // Linux: segments 2, 3 and 4 SACKed at 100 ms while 1 (sent before them) is only
    // delayed: DupThresh SACKed and no reordering seen, so reo_wnd = 0 (tcp_rack_reo_wnd)
    // and RACK marks segment 1 lost; recovery, CUBIC's ssthresh, and segment 1 resent.
    let (mut s, _) = linux_after_first_ack(40);
    let before = s.cc_view();
    sack_ack(&mut s, 100, 1, &[(2, 3)]);
    sack_ack(&mut s, 100, 1, &[(2, 4)]);
    let out = sack_ack(&mut s, 100, 1, &[(2, 5)]);
    assert!(out.contains(&(1, true)), "{out:?}");
    let reduced = s.cc_view();
    assert_eq!(reduced.state, CaState::Recovery);
    assert!(reduced.ssthresh.is_some());
    // 110 ms: the original arrives and everything sent is ACKed; the ACK passes high_seq
    // and the recovery ends with cwnd = ssthresh (tcp_end_cwnd_reduction): nothing
    // showed it needless yet.
    sack_ack(&mut s, 110, u64::MAX, &[]);
    assert_eq!(s.cc_view().state, CaState::Open);
    assert!(s.cc_view().cwnd < before.cwnd, "{:?} vs {before:?}", s.cc_view());
    // 200 ms: the copy arrives too, and the receiver names it in a DSACK below the
    // cumulative ACK (RFC 2883 4.1.1): undo_retrans 1 -> 0, and tcp_try_undo_dsack,
    // which runs in Open after the recovery as well, restores ssthresh (unset before)
    // and cwnd to at least what it was before.
    let una = s.acked();
    sack_ack(&mut s, 200, una, &[(1, 2)]);
    let undone = s.cc_view();
    assert_eq!(undone.ssthresh, None, "{undone:?}");
    assert!(undone.cwnd >= reduced.cwnd.max(before.cwnd), "{undone:?} vs {before:?}");
}
