use super::{Reno, RenoFlavour};
use crate::engine::time::{SimDuration, SimTime};
use crate::model::tcp::cc::{Ack, Congestion, CwndUse, INFINITE_SSTHRESH, Timeout};

fn ack(reno: &mut Reno, acked: u32) {
    reno.on_ack(&Ack { now: SimTime::ZERO, acked, rtt: None, usage: CwndUse::LIMITED, round: None });
}

fn in_avoidance(flavour: RenoFlavour, cwnd: u32) -> Reno {
    let mut r = Reno::new(flavour);
    r.window.cwnd = cwnd;
    r.window.ssthresh = cwnd;
    r
}

/// RFC 6928 (2) and Linux `TCP_INIT_CWND`: 10 segments; RFC 5681 3.1: no ssthresh yet
/// (Linux `TCP_INFINITE_SSTHRESH`).
#[test]
fn rfc6928_initial_window_is_ten_segments() {
    let r = Reno::new(RenoFlavour::Linux);
    assert_eq!((r.cwnd(), r.ssthresh()), (10, INFINITE_SSTHRESH));
}

/// RFC 5681 3.1 (2) / `tcp_slow_start`: one segment per segment acked, so ten ACKs of one
/// segment take cwnd from 10 to 20 (doubling per RTT).
#[test]
fn rfc5681_3_1_slow_start_doubles_per_window() {
    for flavour in [RenoFlavour::Linux, RenoFlavour::Rfc5681] {
        let mut r = Reno::new(flavour);
        for _ in 0..10 {
            ack(&mut r, 1);
        }
        assert_eq!(r.cwnd(), 20, "{flavour:?}");
    }
}

/// A stretch ACK of 3 segments: `tcp_slow_start` adds all 3 (10 → 13); RFC 5681 (2)
/// `cwnd += min(N, SMSS)` adds one (10 → 11).
#[test]
fn rfc5681_3_1_stretch_ack_counts_one_segment_linux_counts_all() {
    let mut linux = Reno::new(RenoFlavour::Linux);
    ack(&mut linux, 3);
    assert_eq!(linux.cwnd(), 13);
    let mut rfc = Reno::new(RenoFlavour::Rfc5681);
    ack(&mut rfc, 3);
    assert_eq!(rfc.cwnd(), 11);
}

/// `tcp_slow_start` stops at ssthresh and hands the rest to `tcp_cong_avoid_ai`:
/// cwnd 10, ssthresh 12, an ACK of 4 → cwnd 12 with 2 credits; ten more single ACKs make
/// 12 credits = one window → cwnd 13, credits 0.
#[test]
fn tcp_slow_start_leftover_goes_to_congestion_avoidance() {
    let mut r = Reno::new(RenoFlavour::Linux);
    r.window.ssthresh = 12;
    ack(&mut r, 4);
    assert_eq!((r.cwnd(), r.window.cwnd_cnt), (12, 2));
    for _ in 0..9 {
        ack(&mut r, 1);
    }
    assert_eq!((r.cwnd(), r.window.cwnd_cnt), (12, 11));
    ack(&mut r, 1);
    assert_eq!((r.cwnd(), r.window.cwnd_cnt), (13, 0));
}

/// RFC 5681 3.1 (3) with byte counting / `tcp_reno_cong_avoid` → `tcp_cong_avoid_ai(cwnd)`:
/// +1 segment per cwnd segments acked. From 20: 19 ACKs leave 20, the 20th makes 21; 21
/// more make 22.
#[test]
fn rfc5681_3_1_congestion_avoidance_adds_one_segment_per_window() {
    let mut r = in_avoidance(RenoFlavour::Linux, 20);
    for _ in 0..19 {
        ack(&mut r, 1);
    }
    assert_eq!(r.cwnd(), 20);
    ack(&mut r, 1);
    assert_eq!(r.cwnd(), 21);
    for _ in 0..21 {
        ack(&mut r, 1);
    }
    assert_eq!(r.cwnd(), 22);
}

/// `tcp_cong_avoid_ai`: a stretch ACK of 45 at cwnd 20 is 2 windows and 5 credits →
/// cwnd 22, credits 5.
#[test]
fn tcp_cong_avoid_ai_carries_credits_across_windows() {
    let mut r = in_avoidance(RenoFlavour::Linux, 20);
    ack(&mut r, 45);
    assert_eq!((r.cwnd(), r.window.cwnd_cnt), (22, 5));
}

/// Fast recovery entry: `tcp_reno_ssthresh` = max(cwnd >> 1, 2) (cwnd 20 → 10); RFC 5681
/// (4) = max(FlightSize/2, 2) (flight 16 → 8); both leave cwnd = ssthresh when recovery
/// ends (RFC 5681 3.2 step 6, `tcp_end_cwnd_reduction`). cwnd 3 → max(1, 2) = 2.
#[test]
fn rfc5681_3_2_and_tcp_reno_ssthresh_halve_on_loss() {
    let mut linux = in_avoidance(RenoFlavour::Linux, 20);
    linux.on_loss(SimTime::ZERO, 16);
    assert_eq!((linux.cwnd(), linux.ssthresh()), (10, 10));
    let mut rfc = in_avoidance(RenoFlavour::Rfc5681, 20);
    rfc.on_loss(SimTime::ZERO, 16);
    assert_eq!((rfc.cwnd(), rfc.ssthresh()), (8, 8));
    let mut small = in_avoidance(RenoFlavour::Linux, 3);
    small.on_loss(SimTime::ZERO, 3);
    assert_eq!(small.ssthresh(), 2);
}

/// `tcp_enter_loss`: ssthresh = max(cwnd/2, 2) = 15 from cwnd 30, cwnd = in_flight + 1 = 1;
/// a second timeout in the same episode keeps ssthresh (RFC 5681 (4) note, Linux's
/// `icsk_retransmits` test). RFC 5681: cwnd = LW = 1 whatever is in flight, ssthresh from
/// FlightSize 24 → 12.
#[test]
fn tcp_enter_loss_and_rfc5681_loss_window() {
    let timeout = Timeout { now: SimTime::ZERO, flight_size: 24, in_flight: 0, new_episode: true };
    let mut linux = in_avoidance(RenoFlavour::Linux, 30);
    linux.on_rto(&timeout);
    assert_eq!((linux.cwnd(), linux.ssthresh()), (1, 15));
    linux.on_rto(&Timeout { new_episode: false, flight_size: 24, ..timeout });
    assert_eq!((linux.cwnd(), linux.ssthresh()), (1, 15));
    // Whatever `tcp_packets_in_flight` still counts once segments are marked lost adds to
    // it: 3 → cwnd 4.
    let mut partial = in_avoidance(RenoFlavour::Linux, 30);
    partial.on_rto(&Timeout { in_flight: 3, ..timeout });
    assert_eq!(partial.cwnd(), 4);
    let mut rfc = in_avoidance(RenoFlavour::Rfc5681, 30);
    rfc.on_rto(&Timeout { in_flight: 3, ..timeout });
    assert_eq!((rfc.cwnd(), rfc.ssthresh()), (1, 12));
}

/// `tcp_is_cwnd_limited`: not limited by the window → no growth in avoidance; in slow start
/// growth only while cwnd < 2·max_packets_out (10 < 2·6 grows, 10 < 2·5 does not).
#[test]
fn tcp_is_cwnd_limited_holds_an_application_limited_window() {
    let app = |max| CwndUse { is_cwnd_limited: false, max_packets_out: max };
    let mut r = in_avoidance(RenoFlavour::Linux, 20);
    r.on_ack(&Ack { now: SimTime::ZERO, acked: 40, rtt: None, usage: app(20), round: None });
    assert_eq!(r.cwnd(), 20);
    let mut ss = Reno::new(RenoFlavour::Linux);
    ss.on_ack(&Ack { now: SimTime::ZERO, acked: 1, rtt: None, usage: app(5), round: None });
    assert_eq!(ss.cwnd(), 10);
    ss.on_ack(&Ack { now: SimTime::ZERO, acked: 1, rtt: None, usage: app(6), round: None });
    assert_eq!(ss.cwnd(), 11);
}

/// `tcp_cwnd_restart` with cwnd 40, ssthresh 20, RTO 200 ms: ssthresh = max(20, 40/2 +
/// 40/4) = 30; the restart window is min(10, 40) = 10; idle 300 ms: 300−200 = 100 > 0
/// halves once (20), 100−200 < 0 stops; idle 1 s: 800, 600 halve twice (10), then cwnd is
/// at the restart window; idle 150 ms is within the RTO: nothing changes.
#[test]
fn tcp_cwnd_restart_halves_per_rto_idle() {
    let run = |idle_ms| {
        let mut r = in_avoidance(RenoFlavour::Linux, 40);
        r.window.ssthresh = 20;
        r.on_send_after_idle(SimTime::ZERO, SimDuration::from_millis(idle_ms), SimDuration::from_millis(200));
        (r.cwnd(), r.ssthresh())
    };
    assert_eq!(run(300), (20, 30));
    assert_eq!(run(1000), (10, 30));
    assert_eq!(run(150), (40, 20));
}

/// RFC 5681 4.1: after an idle spell longer than the RTO, cwnd = RW = min(IW, cwnd):
/// 40 → 10, and 6 stays 6.
#[test]
fn rfc5681_4_1_restart_window() {
    for (cwnd, want) in [(40, 10), (6, 6)] {
        let mut r = in_avoidance(RenoFlavour::Rfc5681, cwnd);
        r.on_send_after_idle(SimTime::ZERO, SimDuration::from_millis(300), SimDuration::from_millis(200));
        assert_eq!(r.cwnd(), want);
    }
}
