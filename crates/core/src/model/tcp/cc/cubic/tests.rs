use super::{Cubic, CubicParams, Round};
use crate::engine::time::{SimDuration, SimTime};
use crate::model::tcp::cc::{Ack, Congestion, CwndUse, INFINITE_SSTHRESH, Timeout};

/// HZ = 1000 so that a jiffy is a millisecond and times read directly.
fn params() -> CubicParams {
    CubicParams { hz: 1000, ..CubicParams::default() }
}

fn at_ms(ms: u64) -> SimTime {
    SimTime(ms * 1_000_000)
}

/// A CUBIC sender that had `cwnd` segments in congestion avoidance, then lost one at t = 0.
fn after_loss(p: CubicParams, cwnd: u32) -> Cubic {
    let mut c = Cubic::new(p);
    c.window.cwnd = cwnd;
    c.window.ssthresh = cwnd;
    c.on_loss(SimTime::ZERO, cwnd);
    c
}

fn ack(c: &mut Cubic, now: SimTime, rtt: Option<SimDuration>) {
    c.on_ack(&Ack { now, acked: 1, rtt, usage: CwndUse::LIMITED, round: None });
}

/// RFC 9438 (1) W_cubic(t) = C·(t − K)³ + W_max, (2) K = cbrt(W_max·(1 − β)/C).
fn w_cubic(w_max: f64, cwnd_epoch: f64, t: f64) -> f64 {
    let k = ((w_max - cwnd_epoch) / 0.4).cbrt();
    0.4 * (t - k).powi(3) + w_max
}

/// `cubictcp_recalc_ssthresh` (RFC 9438 4.6): ssthresh = cwnd·717/1024 = 100·717/1024 =
/// 70.02 → 70, W_max = 100, and cwnd leaves recovery at ssthresh.
#[test]
fn cubictcp_recalc_ssthresh_multiplies_by_beta() {
    let c = after_loss(params(), 100);
    assert_eq!((c.cwnd(), c.ssthresh(), c.w_max()), (70, 70, 100));
}

/// `bictcp_update`'s K for W_max = 100, cwnd = 70, by hand through `cubic_root`:
/// cube_factor = 2^40/410 = 2681735677; a = 30·that = 80452070310; fls64 = 37,
/// b = (37·84 >> 8) − 1 = 11, shift = a >> 33 = 9, x = ((129+10) << 11) >> 6 = 4448,
/// x = 2·4448 + a/(4448·4447) = 8896 + 4067 = 12963, K = 12963·341 >> 10 = 4316
/// (1/1024 s: 4.215 s; RFC 9438 (2): cbrt(30/0.4) = 4.217 s).
#[test]
fn bictcp_update_k_by_hand() {
    let mut c = after_loss(params(), 100);
    ack(&mut c, at_ms(10), None);
    assert_eq!(c.ca.bic_k, 4316);
    assert_eq!(c.ca.bic_origin_point, 100);
    assert_eq!(c.ca.epoch_start, Some(10));
}

/// RFC 9438 4.2: the window target after a loss at W_max = 100 (cwnd 70) against
/// W_cubic(t) = 0.4·(t − 4.217)³ + 100 at t = 0, 1, 2, 3, K, 5, 6, 8 s: 70.0, 86.7, 95.6,
/// 99.3, 100, 100.2, 102.3, 121.7; `bictcp_update` truncates C·(t−K)³ and counts t in
/// 1/1024 s, so each target is within one segment, at HZ 1000 and at the default HZ 250
/// (4 ms jiffies).
#[test]
fn rfc9438_w_cubic_after_a_loss_matches_bictcp_update() {
    for hz in [1000, 250] {
        let mut c = after_loss(CubicParams { hz, ..params() }, 100);
        let epoch = 1_000;
        for t_ms in [0u64, 1_000, 2_000, 3_000, 4_217, 5_000, 6_000, 8_000] {
            ack(&mut c, at_ms(epoch + t_ms), None);
            let want = w_cubic(100.0, 70.0, t_ms as f64 / 1000.0);
            let got = f64::from(c.last_target);
            assert!((got - want).abs() <= 1.0, "HZ {hz}, t={t_ms} ms: bictcp_update {got}, RFC 9438 {want:.2}");
        }
    }
}

/// RFC 9438 4.2 sets the target to W_cubic(t + RTT); Linux adds `delay_min` to t. With
/// an RTT sample of 100 ms taken 1.5 s into the epoch (one at 0.5 s is discarded: "Discard
/// delay samples right after fast recovery", `cubictcp_acked`), the target is
/// W_cubic(1.6 s) = 0.4·(1.6 − 4.217)³ + 100 = 92.83, above W_cubic(1.5 s) = 92.46.
#[test]
fn rfc9438_4_2_target_is_one_min_rtt_ahead() {
    let rtt = Some(SimDuration::from_millis(100));
    let mut c = after_loss(params(), 100);
    ack(&mut c, at_ms(0), None);
    ack(&mut c, at_ms(500), rtt);
    assert_eq!(c.ca.delay_min, 0, "sample in the epoch's first second is discarded");
    ack(&mut c, at_ms(1_500), rtt);
    assert_eq!(c.ca.delay_min, 100_000);
    let want = w_cubic(100.0, 70.0, 1.6);
    assert!((f64::from(c.last_target) - want).abs() <= 1.0, "{} vs {want:.2}", c.last_target);
    assert!(f64::from(c.last_target) > w_cubic(100.0, 70.0, 1.5));
}

/// RFC 9438 4.7 fast convergence (`fast_convergence` = 1): a loss at cwnd 80 below the
/// last W_max of 100 sets W_max = 80·(1024 + 717)/2048 = 68.007 → 68 (RFC: 80·(1+β)/2 =
/// 68); ssthresh = 80·717/1024 = 56. Without it W_max = 80. A loss above W_max (120 > 100)
/// keeps 120 either way.
#[test]
fn rfc9438_4_7_fast_convergence_lowers_w_max() {
    for (fast, want) in [(true, 68), (false, 80)] {
        let mut c = after_loss(CubicParams { fast_convergence: fast, ..params() }, 100);
        c.window.cwnd = 80;
        c.on_loss(at_ms(5_000), 80);
        assert_eq!((c.w_max(), c.ssthresh()), (want, 56), "fast_convergence {fast}");
        c.window.cwnd = 120;
        c.on_loss(at_ms(9_000), 120);
        assert_eq!(c.w_max(), 120);
    }
}

/// Runs an ACK clock for `rounds` RTTs of 100 ms from `start`: each round, one ACK per
/// segment of the window at the round's start, spread evenly over the RTT.
fn ack_clock(c: &mut Cubic, start: u64, rounds: u64) {
    for r in 0..rounds {
        let w = u64::from(c.cwnd());
        for i in 0..w {
            ack(c, at_ms(start + r * 100 + i * 100 / w), None);
        }
    }
}

/// RFC 9438 4.3 (Reno-friendly region) / `tcp_friendliness`: after a loss at W_max = 20
/// (cwnd 14, K = cbrt(6/0.4) = 2.47 s) the cubic curve only reaches W_cubic(2 s) = 19.96,
/// while the Reno estimate grows by α = 3(1 − β)/(1 + β) = 0.53 segments per RTT (the
/// kernel: +1 per cwnd·15/8 acked): after 20 RTTs W_est = 14 + 20·0.53 = 24.6. CUBIC
/// with friendliness follows W_est (within 2); without it, stays at or under the curve.
#[test]
fn rfc9438_4_3_reno_friendly_region_follows_w_est() {
    let mut friendly = after_loss(params(), 20);
    let mut pure = after_loss(CubicParams { tcp_friendliness: false, ..params() }, 20);
    assert_eq!(friendly.cwnd(), 14);
    ack_clock(&mut friendly, 0, 20);
    ack_clock(&mut pure, 0, 20);
    let w_est = 14.0 + 20.0 * 3.0 * (1.0 - 0.7) / (1.0 + 0.7);
    assert!((f64::from(friendly.cwnd()) - w_est).abs() <= 2.0, "{} vs W_est {w_est:.1}", friendly.cwnd());
    assert!(pure.cwnd() <= 20, "pure cubic {}", pure.cwnd());
    assert!(friendly.cwnd() > pure.cwnd() + 2);
}

/// `bictcp_update` before any loss (W_max 0): the curve is flat at cwnd (K = 0, origin 40,
/// target 40 for the first 100 ms: 410·102³ >> 40 = 0), so cnt would be 100·40, but "the
/// initial growth ... may be too conservative": cnt = 20, +5 % per RTT. One window of 40
/// ACKs adds 40/20 = 2 → 42.
#[test]
fn bictcp_update_grows_five_percent_per_rtt_before_the_first_loss() {
    let mut c = Cubic::new(params());
    c.window.cwnd = 40;
    c.window.ssthresh = 40;
    ack_clock(&mut c, 0, 1);
    assert_eq!(c.ca.cnt, 20);
    assert_eq!(c.cwnd(), 42);
}

/// `bictcp_update`'s floor cnt ≥ 2 ("1.5x per RTT" at most): 10 s after an epoch began at
/// cwnd 14 (W_max 20) the target is 20 + 0.4·(10 − 2.47)³ ≈ 190, so cwnd/(target − cwnd)
/// = 0, raised to 2. The first ACK left 1 credit; 14 more ACKs make 15 credits at 2 per
/// segment → +7 → 21.
#[test]
fn bictcp_update_never_grows_faster_than_one_per_two_acked() {
    let mut c = after_loss(params(), 20);
    ack(&mut c, at_ms(0), None);
    assert_eq!((c.cwnd(), c.window.cwnd_cnt), (14, 1));
    for _ in 0..14 {
        ack(&mut c, at_ms(10_000), None);
    }
    assert_eq!(c.ca.cnt, 2);
    assert_eq!(c.cwnd(), 21);
}

/// `tcp_enter_loss` then `cubictcp_state(TCP_CA_Loss)` → `bictcp_reset`: ssthresh from
/// `cubictcp_recalc_ssthresh` (70·717/1024 = 49.01 → 49), cwnd = in flight + 1 = 1, and
/// W_max forgotten (0), so the next epoch starts from cwnd with K = 0.
#[test]
fn tcp_enter_loss_resets_cubic_state() {
    let mut c = after_loss(params(), 100);
    c.on_rto(&Timeout { now: at_ms(500), flight_size: 70, in_flight: 0, new_episode: true });
    assert_eq!((c.cwnd(), c.ssthresh(), c.w_max()), (1, 49, 0));
    assert_eq!(c.ca.epoch_start, None);
    c.on_rto(&Timeout { now: at_ms(1_500), flight_size: 1, in_flight: 0, new_episode: false });
    assert_eq!((c.cwnd(), c.ssthresh()), (1, 49));
}

/// Linux commit 30927520dbae ("tcp_cubic: better follow cubic curve after idle period"),
/// RFC 9438 5.8: `cubictcp_cwnd_event(CA_EVENT_TX_START)` moves the epoch later by the
/// idle time (300 jiffies at HZ 1000), so the target 1 s after the pause equals the one
/// 1 s into the epoch without it. Idle 300 ms is under the RTO (1 s): no restart.
#[test]
fn cubictcp_cwnd_event_shifts_the_epoch_over_idle() {
    let mut c = after_loss(params(), 100);
    ack(&mut c, at_ms(1_000), None);
    assert_eq!(c.ca.epoch_start, Some(1_000));
    c.on_send_after_idle(at_ms(1_500), SimDuration::from_millis(300), SimDuration::from_secs(1));
    assert_eq!(c.ca.epoch_start, Some(1_300));
    assert_eq!(c.cwnd(), 70);
    ack(&mut c, at_ms(2_300), None);
    let shifted = c.last_target;
    let mut straight = after_loss(params(), 100);
    ack(&mut straight, at_ms(1_000), None);
    ack(&mut straight, at_ms(2_000), None);
    assert_eq!(shifted, straight.last_target);
}

/// `tcp_cwnd_restart` under CUBIC (`tcp_slow_start_after_idle` = 1): cwnd 40, ssthresh 20,
/// RTO 200 ms, idle 1 s → ssthresh max(20, 20 + 10) = 30, cwnd halves 40 → 20 → 10 =
/// min(IW, cwnd). With the sysctl off the window is kept.
#[test]
fn tcp_cwnd_restart_after_idle_under_cubic() {
    for (on, want) in [(true, (10, 30)), (false, (40, 20))] {
        let mut c = Cubic::new(CubicParams { slow_start_after_idle: on, ..params() });
        c.window.cwnd = 40;
        c.window.ssthresh = 20;
        c.on_send_after_idle(at_ms(5_000), SimDuration::from_secs(1), SimDuration::from_millis(200));
        assert_eq!((c.cwnd(), c.ssthresh()), want, "slow_start_after_idle {on}");
    }
}

/// `cubictcp_cong_avoid` → `tcp_slow_start`: from IW 10, one ACK per segment doubles the
/// window per RTT (10 → 20), as Reno; `tcp_is_cwnd_limited` holds it when the sender
/// had only 4 segments out (10 ≥ 2·4).
#[test]
fn cubictcp_cong_avoid_slow_start_and_application_limited() {
    let mut c = Cubic::new(params());
    for i in 0..10 {
        ack(&mut c, at_ms(i), None);
    }
    assert_eq!(c.cwnd(), 20);
    let mut idle = Cubic::new(params());
    let usage = CwndUse { is_cwnd_limited: false, max_packets_out: 4 };
    idle.on_ack(&Ack { now: at_ms(1), acked: 1, rtt: None, usage, round: None });
    assert_eq!(idle.cwnd(), 10);
}

/// google/packetdrill `gtests/net/tcp/cubic/cubic-rto-ss-ca-cwnd-bump.pkt` (commit
/// 8d63bbc7d627), times in ms from the SYN, one ACK per segment, RTT 100 ms:
/// - 200: the first data ACK; one segment out of a window of 10 is not cwnd-limited
///   (10 ≥ 2·1): cwnd stays 10.
/// - 800: the RTO (`tcp_enter_loss`): ssthresh = 10·717/1024 = 7, cwnd = 0 + 1, and
///   `bictcp_reset` forgets W_max. 900: the retransmission's ACK (no RTT sample, Karn):
///   slow start 1 → 2. The script asserts cwnd 2, ssthresh 7.
/// - 1000…1104: five ACKs of slow start, 3, 4, 5, 6, 7 (= ssthresh).
/// - From 1106 congestion avoidance with W_max 0: cnt = 20. Credits reach 9 by the ACK at
///   1314: cwnd 7 (asserted). At 1424 the 16th ACK of the epoch passes the Reno estimate's
///   7·15 >> 3 = 13 acked: tcp_cwnd = 8 > 7, so cnt = 7/1 = 7, and the 15 credits already
///   held bump cwnd to 8 (asserted) — the "cwnd bump" of the script's name.
#[test]
fn packetdrill_cubic_rto_ss_ca_cwnd_bump() {
    let rtt = Some(SimDuration::from_millis(100));
    let mut c = Cubic::new(params());
    let app = CwndUse { is_cwnd_limited: false, max_packets_out: 1 };
    c.on_ack(&Ack { now: at_ms(200), acked: 1, rtt, usage: app, round: None });
    assert_eq!(c.cwnd(), 10);
    c.on_rto(&Timeout { now: at_ms(800), flight_size: 1, in_flight: 0, new_episode: true });
    c.on_ack(&Ack { now: at_ms(900), acked: 1, rtt: None, usage: CwndUse::LIMITED, round: None });
    assert_eq!((c.cwnd(), c.ssthresh()), (2, 7));
    let ss = [1000, 1002, 1100, 1102, 1104];
    for (i, t) in ss.into_iter().enumerate() {
        ack(&mut c, at_ms(t), rtt);
        assert_eq!(c.cwnd(), 3 + i as u32, "slow start at {t} ms");
    }
    let ca_to_16001 = [1106, 1204, 1206, 1208, 1210, 1212, 1214, 1216, 1314];
    for t in ca_to_16001 {
        ack(&mut c, at_ms(t), rtt);
    }
    assert_eq!(c.cwnd(), 7);
    let to_23001 = [1316, 1318, 1320, 1322, 1324, 1326, 1424];
    for t in to_23001 {
        ack(&mut c, at_ms(t), rtt);
    }
    assert_eq!(c.cwnd(), 8);
}

/// google/packetdrill `gtests/net/tcp/slow_start/slow-start-after-idle.pkt` (commit
/// 8229c94928ac): the ACK of the initial 10 segments takes cwnd to 20; then 16 segments
/// go out (not the whole window, but 20 < 2·16 keeps slow start growing,
/// `tcp_is_cwnd_limited`) and their ACK makes 36. After 2 s idle with an RTO of 300 ms
/// (200 ms minimum + SRTT 100 ms), `tcp_cwnd_restart`: restart window min(10, 36) = 10;
/// 2000−300 > 0 → 18, 1400 > 0 → 9, then 9 < 10 stops; cwnd = max(9, 10) = 10 (asserted).
#[test]
fn packetdrill_slow_start_after_idle() {
    let rtt = Some(SimDuration::from_millis(100));
    let mut c = Cubic::new(params());
    c.on_ack(&Ack { now: at_ms(200), acked: 10, rtt, usage: CwndUse::LIMITED, round: None });
    assert_eq!(c.cwnd(), 20);
    let partial = CwndUse { is_cwnd_limited: false, max_packets_out: 16 };
    c.on_ack(&Ack { now: at_ms(300), acked: 16, rtt, usage: partial, round: None });
    assert_eq!(c.cwnd(), 36);
    c.on_send_after_idle(at_ms(2_300), SimDuration::from_millis(2_000), SimDuration::from_millis(300));
    assert_eq!(c.cwnd(), 10);
}

/// google/packetdrill `gtests/net/tcp/slow_start/slow-start-app-limited.pkt` (commit
/// 5018df2a9f44): exactly 10 segments written with IW 10, ACKed two at a time: cwnd
/// 12, 14, 16, 18, 20 (each below 2·10 = 20 before the ACK, so slow start goes on).
#[test]
fn packetdrill_slow_start_app_limited() {
    let mut c = Cubic::new(params());
    let usage = CwndUse { is_cwnd_limited: false, max_packets_out: 10 };
    for (i, t) in [305u64, 310, 315, 320, 325].into_iter().enumerate() {
        c.on_ack(&Ack { now: at_ms(t), acked: 2, rtt: Some(SimDuration::from_millis(105)), usage, round: None });
        assert_eq!(c.cwnd(), 12 + 2 * i as u32);
    }
}

/// Feeds one slow-start round of HyStart: ACK i acknowledges segment `first + i`
/// (numbered from 0) at `start_ms + i·gap_ms` with an RTT sample `rtt_ms`. As in Linux,
/// `snd_una` is then the first unacknowledged segment, and `snd_nxt` (read before this
/// ACK's sends) is a full window past the segment acked.
fn hystart_round(c: &mut Cubic, first: u64, count: u64, start_ms: u64, gap_ms: u64, rtt_ms: u64) {
    for i in 0..count {
        let acked_seg = first + i;
        let round = Some(Round { snd_una: acked_seg + 1, snd_nxt: acked_seg + u64::from(c.cwnd()) });
        let rtt = Some(SimDuration::from_millis(rtt_ms));
        c.on_ack(&Ack { now: at_ms(start_ms + i * gap_ms), acked: 1, rtt, usage: CwndUse::LIMITED, round });
    }
}

/// `hystart_update`, HYSTART_DELAY: a first round at cwnd 16 with RTT 100 ms sets
/// delay_min = 100 ms and grows cwnd to 32; its end_seq is the snd_nxt of its first ACK,
/// 16. In the next round the RTT is 120 ms: the ACK of segment 16 (snd_una 17 > 16)
/// starts the round (`bictcp_hystart_reset`), eight samples are
/// taken (`HYSTART_MIN_SAMPLES`), and on the ninth, 120 > 100 + clamp(100/8, 4, 16) =
/// 112.5 ms: ssthresh = cwnd = 32 + 8 = 40, and slow start is over. Without HyStart the
/// round's 16 ACKs take cwnd on to 48.
#[test]
fn hystart_delay_increase_ends_slow_start() {
    let mut c = Cubic::new(params());
    c.window.cwnd = 16;
    hystart_round(&mut c, 0, 16, 100, 1, 100);
    assert_eq!((c.cwnd(), c.ssthresh()), (32, INFINITE_SSTHRESH));
    hystart_round(&mut c, 16, 16, 220, 1, 120);
    assert_eq!((c.cwnd(), c.ssthresh()), (40, 40));

    let mut off = Cubic::new(CubicParams { hystart: false, ..params() });
    off.window.cwnd = 16;
    hystart_round(&mut off, 0, 16, 100, 1, 100);
    hystart_round(&mut off, 16, 16, 220, 1, 120);
    assert_eq!((off.cwnd(), off.ssthresh()), (48, INFINITE_SSTHRESH));
}

/// `hystart_update`, HYSTART_ACK_TRAIN: RTT stays 100 ms but the second round's ACKs
/// come 2 ms apart (within `hystart_ack_delta_us`), so the train lasts: threshold =
/// (delay_min + 1 ms cushion) / 2 = 50.5 ms; ACK i arrives 2i ms after the round began,
/// first past 50.5 at i = 26: ssthresh = cwnd = 32 + 26 = 58.
#[test]
fn hystart_ack_train_ends_slow_start() {
    let mut c = Cubic::new(params());
    c.window.cwnd = 16;
    hystart_round(&mut c, 0, 16, 100, 1, 100);
    hystart_round(&mut c, 16, 32, 200, 2, 100);
    assert_eq!(c.ssthresh(), 58);
    assert_eq!(c.cwnd(), 58);
}

/// `hystart_low_window`: below 16 segments HyStart does not look. With an RTT of 10 ms
/// the ACK-train threshold is (10 + 1)/2 = 5.5 ms; a second round at cwnd 8 with ACKs
/// 2 ms apart passes it at the fourth ACK (6 ms, cwnd 11) but cwnd < 16, so slow start
/// goes on to 16.
#[test]
fn hystart_waits_for_sixteen_segments() {
    let mut c = Cubic::new(params());
    c.window.cwnd = 4;
    hystart_round(&mut c, 0, 4, 100, 1, 10);
    hystart_round(&mut c, 4, 8, 120, 2, 10);
    assert_eq!((c.cwnd(), c.ssthresh()), (16, INFINITE_SSTHRESH));
}
