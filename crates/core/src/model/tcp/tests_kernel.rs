//! The sender against Linux's ACK and timer code where the two used to differ, each
//! time computed by hand from the kernel function named in the test (Linux 6.x,
//! `net/ipv4/tcp_input.c`, `tcp_output.c`, `tcp_timer.c`, `include/net/tcp.h`).

use super::drive::{ack, dur_ms, fire, kinds, ms, new_sender, on, sender, sent as data, write};
use super::segment::{Sack, Segment};
use super::sender::{ObservationKind, Supply, TcpSender};
use crate::engine::time::{SimDuration, SimTime};
use crate::model::rto::RtoProfile;

fn linux(sets: &[(&str, &str)], handshake: bool) -> TcpSender {
    new_sender(handshake, RtoProfile::Linux, sets, 10, Supply::Steady)
}

// ---- An RTT step under an application that keeps writing ------------------------------

#[test]
fn rtt_step_50_to_600ms_with_writes_every_20ms_takes_one_timeout_that_frto_undoes() {
    // tcp_write_xmit sends new data only: an application write in TCP_CA_Loss retransmits
    // nothing (retransmissions go out from tcp_xmit_recovery on ACKs and from
    // tcp_retransmit_timer). tcp_process_loss then sees segment 2's original ACKed:
    // FLAG_ORIG_SACK_ACKED, tcp_try_undo_loss(sk, true), LINUX_MIB_TCPSPURIOUSRTOS.
    let mut s = linux(&[("timestamps", "false"), ("tlp", "false")], false);
    s.start(ms(0), &mut Vec::new());
    write(&mut s, ms(0));
    // A 50 ms sample (tcp_rtt_estimator, first measure): srtt_us = 400000, mdev_us =
    // 100000, rttvar_us = max(mdev_us, tcp_rto_min_us) = 200000; RTO = 50000 + 200000 µs
    // = 62.5 jiffies at HZ 250, 63 jiffies = 252 ms.
    ack(&mut s, ms(50), 1, ms(0));
    assert_eq!(s.snapshot().rto, dur_ms(252));
    // The RTT is now 600 ms. Writes every 20 ms from 60 ms: segment k leaves at 40 + 20k
    // ms until the window (10) is full at segment 10 (240 ms). The timer starts with
    // segment 1: 60 + 252 = 312 ms.
    for t in (60..=300).step_by(20) {
        write(&mut s, ms(t));
    }
    let (at, out) = fire(&mut s);
    assert_eq!((at, data(&out)), (ms(312), vec![(1, true)]));
    assert_eq!(s.snapshot().rto, dur_ms(504)); // icsk_rto << 1
    for t in (320..=640).step_by(20) {
        assert!(data(&write(&mut s, ms(t))).is_empty());
    }
    // 660 ms: segment 1's original is ACKed. It was retransmitted: no sample (Karn,
    // FLAG_RETRANS_DATA_ACKED). F-RTO step 2b: new data, segment 11.
    let out = ack(&mut s, ms(660), 2, SimTime::ZERO);
    assert_eq!(data(&out), [(11, false)]);
    // The write due at 660 ms finds the window full: nothing, in particular no
    // retransmission of segment 2 that would spoil the undo below.
    assert!(data(&write(&mut s, ms(660))).is_empty());
    // 680 ms: segment 2 (sent at 80 ms, never retransmitted) is ACKed: the timeout was
    // spurious. Its 600 ms sample: m = 600000 − 50000 = 550000, srtt_us = 950000;
    // mdev_us = 100000 + 550000 − 25000 = 625000 = mdev_max = rttvar_us. RTO = 118750 +
    // 625000 = 743750 µs = 185.9 jiffies -> 186 = 744 ms, backoff cleared, re-armed from
    // 680 ms; segment 12 fits the window again.
    let out = ack(&mut s, ms(680), 3, SimTime::ZERO);
    let k = kinds(&out);
    assert!(k.contains(&ObservationKind::Sample { rtt: dur_ms(600) }), "{k:?}");
    assert!(k.contains(&ObservationKind::SpuriousTimeout), "{k:?}");
    assert_eq!(data(&out), [(12, false)]);
    assert_eq!((s.snapshot().rto, s.snapshot().backoffs), (dur_ms(744), 0));
    // tcp_undo_cwnd_reduction sets rack.advanced, and tcp_identify_packet_loss runs RACK
    // again: RACK.xmit_ts is segment 1's retransmission (312 ms, delivered at 660 with
    // a 348 ms round trip above min_rtt, so tcp_rack_advance took it) and RACK.rtt the
    // last delivery's, 600 ms. Segments 3-10 (100-240 ms) were sent before it and are
    // not yet late: reo_wnd = min_rtt / 4 = 12.5 ms (state Open, nothing SACKed), the
    // latest, segment 10, has 600 + 12.5 − 440 = 172.5 ms left. The reordering timer
    // takes the RTO's place (FLAG_SET_XMIT_TIMER cleared): usecs_to_jiffies(172500 +
    // 2000) = 43.6 -> 44 jiffies = 176 ms, at 856 ms.
    assert_eq!(s.timer(), Some(ms(856)));
}

// ---- RTT samples from the timestamp echo --------------------------------------------------

fn us(v: u64) -> SimTime {
    SimTime(v * 1_000)
}

#[test]
fn a_retransmitted_syn_is_timed_from_tsecr_on_the_1ms_timestamp_clock() {
    // tcp_clean_rtx_queue finds the SYN retransmitted (FLAG_RETRANS_DATA_ACKED: no
    // seq_rtt_us), so tcp_ack_update_rtt falls back to tcp_rtt_tsopt_us: TSval 1000 ms
    // echoed, the ACK at 1100.7 ms reads 1100 on the ms clock, delta 100 ms. RTO =
    // 100000 + 200000 µs = 75 jiffies = 300 ms (from the exact 100.7 ms it would be
    // 302100 µs, 76 jiffies, 304 ms).
    let mut s = linux(&[], true);
    s.start(ms(0), &mut Vec::new());
    let (at, _) = fire(&mut s);
    assert_eq!(at, ms(1000)); // TCP_TIMEOUT_INIT; a linear SYN timeout
    let out = on(&mut s, us(1_100_700), Segment::SynAck { tsecr: ms(1000) });
    assert!(kinds(&out).contains(&ObservationKind::Sample { rtt: dur_ms(100) }), "{out:?}");
    assert_eq!(s.snapshot().rto, dur_ms(300));
}

#[test]
fn a_syn_sent_once_is_timed_from_its_send_time_in_microseconds() {
    // tcp_ack_update_rtt: "Prefer RTT measured from ACK's timing to TS-ECR": the SYN was
    // not retransmitted, so seq_rtt_us = tcp_stamp_us_delta(now, its send time) =
    // 100700 µs. RTO = 100700 + 201400 = 302100 µs = 75.5 jiffies -> 76 = 304 ms.
    let mut s = linux(&[], true);
    s.start(ms(0), &mut Vec::new());
    let out = on(&mut s, us(100_700), Segment::SynAck { tsecr: ms(0) });
    assert!(kinds(&out).contains(&ObservationKind::Sample { rtt: SimDuration::from_micros(100_700) }), "{out:?}");
    assert_eq!(s.snapshot().rto, dur_ms(304));
}

#[test]
fn an_ack_of_retransmitted_data_is_timed_from_tsecr_in_whole_milliseconds() {
    // Segment 0 sent at 0, ACKed at 100 ms: RTO 300 ms. Segment 1 at 200 ms times out
    // at 500 ms (RTO 600 ms) and is retransmitted; the retransmission's ACK at 600.5 ms
    // echoes TSval 500. FLAG_RETRANS_DATA_ACKED rules out the send-time sample;
    // tcp_rtt_tsopt_us gives 600 − 500 = 100 ms (not 100.5). tcp_rtt_estimator: m = 0,
    // srtt_us stays 800000, mdev_us = 200000 − 50000 = 150000, rttvar_us 200000: RTO =
    // 300000 µs = 300 ms, backoff cleared (100.5 ms would give 300062 µs, 304 ms).
    let mut s = linux(&[("tlp", "false")], false);
    s.start(ms(0), &mut Vec::new());
    write(&mut s, ms(0));
    ack(&mut s, ms(100), 1, ms(0));
    write(&mut s, ms(200));
    let (at, out) = fire(&mut s);
    assert_eq!((at, data(&out)), (ms(500), vec![(1, true)]));
    let out = ack(&mut s, us(600_500), 2, ms(500));
    assert!(kinds(&out).contains(&ObservationKind::Sample { rtt: dur_ms(100) }), "{out:?}");
    assert_eq!((s.snapshot().rto, s.snapshot().backoffs), (dur_ms(300), 0));
}

// ---- After a blackout, without timestamps ---------------------------------------------------

#[test]
fn after_a_blackout_the_sack_of_frto_new_data_clears_the_backoff_one_rtt_after_the_first_new_ack() {
    // Linux without timestamps. Segment 0 is ACKed at 100 ms (RTO 300 ms); segments 1..3,
    // written at 200, 300 and 400 ms, are lost in a blackout, and so are the timeout
    // retransmissions at 500 and 1100 ms. The third, at 2300 ms, gets through.
    let mut s = linux(&[("timestamps", "false"), ("tlp", "false")], false);
    s.start(ms(0), &mut Vec::new());
    write(&mut s, ms(0));
    ack(&mut s, ms(100), 1, SimTime::ZERO);
    for t in [200, 300, 400] {
        write(&mut s, ms(t));
    }
    for (due, rto) in [(500, 600), (1100, 1200), (2300, 2400)] {
        let (at, out) = fire(&mut s);
        assert_eq!((at, data(&out), s.snapshot().rto), (ms(due), vec![(1, true)], dur_ms(rto)));
        if due == 500 {
            // Segment 4, written at 1000 ms, waits: cwnd is 1 in loss recovery.
            assert!(data(&write(&mut s, ms(1000))).is_empty());
        }
    }
    // 2400 ms: the retransmission's ACK. Karn: no sample (FLAG_RETRANS_DATA_ACKED), the
    // backoff (3) stays; tcp_rearm_rto from now: 2400 + 2400 ms. F-RTO step 2b sends
    // segment 4.
    let out = ack(&mut s, ms(2400), 2, SimTime::ZERO);
    assert_eq!(data(&out), [(4, false)], "{out:?}");
    assert_eq!((s.snapshot().backoffs, s.timer()), (3, Some(ms(4800))));
    // 2500 ms: segment 4 arrives above the hole; the duplicate ACK SACKs it. It was never
    // retransmitted: tcp_sacktag_one keeps its send time (first_sackt), and with no
    // seq_rtt_us tcp_ack_update_rtt takes sack_rtt_us = 100 ms: icsk_backoff = 0 and
    // tcp_set_rto gives 100000 + 200000 µs = 300 ms (m = 0: srtt stays, rttvar_us stays
    // 200000). F-RTO step 3a: the loss was real; segment 2 is retransmitted, and being
    // the head, tcp_xmit_retransmit_queue re-arms the RTO from now: 2500 + 300 ms.
    let out = on(&mut s, ms(2500), Segment::Ack { ack: 2, tsecr: SimTime::ZERO, window: u64::MAX, sack: Sack::one(4) });
    assert!(kinds(&out).contains(&ObservationKind::Sample { rtt: dur_ms(100) }), "{out:?}");
    assert_eq!((s.snapshot().rto, s.snapshot().backoffs), (dur_ms(300), 0));
    assert_eq!(data(&out), [(2, true), (3, true)]);
    assert_eq!(s.timer(), Some(ms(2800)));
}

#[test]
fn a_sack_of_a_retransmitted_segment_gives_no_sample() {
    // tcp_sacktag_one records first_sackt only for a segment without TCPCB_RETRANS.
    // Segment 0 ACKed at 100 ms (SRTT 100 ms, RTO 300 ms); segments 1 and 2 leave at 200
    // and 210 ms. tcp_schedule_loss_probe: 2·SRTT + 2 ms = 51 jiffies = 204 ms, under
    // the RTO's 290 ms left (counted from segment 1): the probe resends segment 2 at
    // 414 ms.
    let mut s = linux(&[("timestamps", "false")], false);
    s.start(ms(0), &mut Vec::new());
    write(&mut s, ms(0));
    ack(&mut s, ms(100), 1, SimTime::ZERO);
    write(&mut s, ms(200));
    write(&mut s, ms(210));
    let (at, out) = fire(&mut s);
    assert_eq!((at, data(&out)), (ms(414), vec![(2, true)]));
    write(&mut s, ms(420)); // segment 3, never retransmitted
    // Segment 1 was lost: segment 2 arrives above the hole and is SACKed. It was
    // retransmitted, so no sample.
    let out = on(&mut s, ms(500), Segment::Ack { ack: 1, tsecr: SimTime::ZERO, window: u64::MAX, sack: Sack::one(2) });
    assert!(!kinds(&out).iter().any(|k| matches!(k, ObservationKind::Sample { .. })), "{out:?}");
    // Segment 3's SACK: 520 − 420 = 100 ms from its send time.
    let out = on(&mut s, ms(520), Segment::Ack { ack: 1, tsecr: SimTime::ZERO, window: u64::MAX, sack: Sack::one(3) });
    assert!(kinds(&out).contains(&ObservationKind::Sample { rtt: dur_ms(100) }), "{out:?}");
}

#[test]
fn go_back_n_skips_a_sacked_segment_and_does_not_count_it_in_flight() {
    // Without F-RTO. Segments 1..4 leave at 200..230 ms; the timeout at 500 ms resends
    // segment 1 and marks 2..4 lost (tcp_enter_loss), cwnd 1. A duplicate ACK at 510 ms
    // SACKs segment 3. The retransmission's ACK at 600 ms: cwnd 2, and
    // tcp_packets_in_flight = packets_out 3 − (sacked_out 1 + lost_out 2) = 0, so
    // tcp_xmit_retransmit_queue resends 2, skips 3 (TCPCB_SACKED_ACKED) and resends 4.
    let mut s = linux(&[("timestamps", "false"), ("tlp", "false"), ("frto", "false")], false);
    s.start(ms(0), &mut Vec::new());
    write(&mut s, ms(0));
    ack(&mut s, ms(100), 1, SimTime::ZERO);
    for t in [200, 210, 220, 230] {
        write(&mut s, ms(t));
    }
    let (at, out) = fire(&mut s);
    assert_eq!((at, data(&out)), (ms(500), vec![(1, true)]));
    let out = on(&mut s, ms(510), Segment::Ack { ack: 1, tsecr: SimTime::ZERO, window: u64::MAX, sack: Sack::one(3) });
    assert!(data(&out).is_empty(), "{out:?}");
    let out = ack(&mut s, ms(600), 2, SimTime::ZERO);
    assert_eq!(data(&out), [(2, true), (4, true)]);
}

#[test]
fn frto_reads_a_sack_of_an_original_segment_below_high_seq_as_a_spurious_timeout() {
    // tcp_sacktag_one: a never-retransmitted segment newly SACKed at or below high_seq
    // sets FLAG_ORIG_SACK_ACKED; tcp_process_loss step 3b undoes the timeout at once.
    let mut s = linux(&[("timestamps", "false"), ("tlp", "false")], false);
    s.start(ms(0), &mut Vec::new());
    write(&mut s, ms(0));
    ack(&mut s, ms(100), 1, SimTime::ZERO);
    for t in [200, 210, 220, 230] {
        write(&mut s, ms(t));
    }
    fire(&mut s); // 500 ms: segment 1 resent, high_seq = 5
    let out = on(&mut s, ms(510), Segment::Ack { ack: 1, tsecr: SimTime::ZERO, window: u64::MAX, sack: Sack::one(3) });
    assert!(kinds(&out).contains(&ObservationKind::SpuriousTimeout), "{out:?}");
}

// ---- New data the sender's own queue refuses --------------------------------------------

/// A linux sender with `TCP_USER_TIMEOUT` 3 s whose first 24 bytes are written at 0.1 s
/// and acknowledged at 0.2 s (one 100 ms sample: RTO 100 + 200 ms = 300 ms), after which
/// the qdisc refuses everything: packetdrill's
/// `tools/testing/selftests/net/packetdrill/tcp_user_timeout_user-timeout-probe.pkt`
/// (torvalds/linux 0b119045b79a672bc6d8f18641c60fc8ce1b4585), up to its `pfifo limit 0`.
fn refused_after_first_ack(profile: RtoProfile) -> TcpSender {
    let linux = profile == RtoProfile::Linux;
    let sets: &[(&str, &str)] = if linux { &[("user_timeout", "3s")] } else { &[] };
    let mut s = sender(profile, sets, 10, Supply::Steady);
    s.start(ms(100), &mut Vec::new());
    assert_eq!(data(&write(&mut s, ms(100))), [(0, false)]);
    ack(&mut s, ms(200), 1, ms(100));
    assert_eq!(s.timer(), None);
    if linux {
        assert_eq!(s.snapshot().rto, dur_ms(300));
    }
    s.set_local_congestion(true);
    s
}

#[test]
fn refused_new_data_is_retried_every_500ms_and_user_timeout_kills_it_tcp_send_probe0() {
    // The write at 0.2 s: tcp_write_xmit fails, nothing is in flight, so
    // tcp_check_probe_timer arms PROBE0 for tcp_probe0_base = max(300 ms, TCP_RTO_MIN).
    let mut s = refused_after_first_ack(RtoProfile::Linux);
    let out = write(&mut s, ms(200));
    assert_eq!((data(&out).len(), s.timer()), (0, Some(ms(500))));
    // tcp_probe_timer stamps icsk_probes_tstamp at 0.5 s; each tcp_send_probe0 finds
    // tcp_write_wakeup refused (err > 0): icsk_probes_out++, no backoff, re-arm at
    // TCP_RESOURCE_PROBE_INTERVAL. The expiry at 3.5 s is 3 s past the stamp: abort.
    let mut expiries = vec![];
    let mut probes = 0;
    let mut aborted = None;
    while !s.is_aborted() {
        let (at, out) = fire(&mut s);
        assert_eq!(data(&out).len(), 0, "the queue refuses everything");
        expiries.push(at.as_nanos() / 1_000_000);
        probes += kinds(&out).iter().filter(|k| **k == ObservationKind::WindowProbe).count();
        if let Some(ObservationKind::Aborted { waited }) = kinds(&out).last().copied() {
            aborted = Some((at, waited));
        }
        assert_eq!(s.snapshot().backoffs, 0); // tcpi_backoff == 0
    }
    assert_eq!(expiries, [500, 1000, 1500, 2000, 2500, 3000, 3500]);
    assert_eq!(probes, 6); // tcpi_probes == 6
    // Alive at 0.2 + 3.25 s, dead (ETIMEDOUT) by 0.2 + 3.35 s.
    let (at, waited) = aborted.unwrap();
    assert!(ms(3450) < at && at <= ms(3550));
    assert_eq!(waited, dur_ms(3300)); // from the write the queue refused
}

#[test]
fn once_the_queue_takes_data_the_probe_timer_sends_one_segment_and_the_rto_takes_over() {
    // tcp_send_probe0 -> tcp_write_wakeup succeeds: one segment, packets_out set, probe
    // state cleared; tcp_event_new_data_sent arms the RTO (300 ms, no backoff).
    let mut s = refused_after_first_ack(RtoProfile::Linux);
    write(&mut s, ms(200));
    write(&mut s, ms(300));
    fire(&mut s); // 0.5 s, refused
    s.set_local_congestion(false);
    let (at, out) = fire(&mut s);
    assert_eq!((at, data(&out)), (ms(1000), vec![(1, false)]));
    assert_eq!((s.timer(), s.snapshot().backoffs), (Some(ms(1300)), 0));
    // The second segment follows on the ACK, as tcp_write_xmit sends it.
    let out = ack(&mut s, ms(1100), 2, ms(1000));
    assert_eq!(data(&out).len(), 1);
}

#[test]
fn rfc6298_sends_refused_new_data_and_loses_it() {
    // No such rule outside Linux: the segment is sent (the world drops it) and the RTO runs.
    let mut s = refused_after_first_ack(RtoProfile::Rfc6298);
    let out = write(&mut s, ms(200));
    assert_eq!(data(&out).len(), 1);
    assert!(s.timer().is_some());
}
