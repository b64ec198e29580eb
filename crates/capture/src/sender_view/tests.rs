use std::net::{IpAddr, Ipv4Addr};

use backoffsim_core::model::rto::RtoConfig;

use crate::stall::Stall;

use super::*;

const C: (IpAddr, u16) = (IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)), 40000);
const S: (IpAddr, u16) = (IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)), 443);

fn params(profile: RtoProfile) -> RtoParams {
    RtoConfig { profile, ..RtoConfig::default() }.resolve().unwrap()
}

/// A segment at `ms` milliseconds.
fn seg(ms: u64, from_client: bool, seq: u32, ack: u32, len: u32) -> Segment {
    let (src, dst) = if from_client { (C, S) } else { (S, C) };
    Segment {
        time_ns: ms * 1_000_000,
        number: 0,
        src,
        dst,
        seq,
        ack,
        syn: false,
        ack_flag: true,
        fin: false,
        rst: false,
        len,
        timestamps: None,
        sack: Default::default(),
    }
}

/// The client's SYN has no ACK flag; the server's SYN-ACK has.
fn syn(mut s: Segment) -> Segment {
    s.syn = true;
    s.ack_flag = s.src == S;
    s
}

fn ts(mut s: Segment, val: u32, ecr: u32) -> Segment {
    s.timestamps = Some((val, ecr));
    s
}

fn run(profile: RtoProfile, segs: &[Segment]) -> (String, Summary) {
    let ep = |(addr, port): (IpAddr, u16)| Endpoint { addr, port };
    let mut view = SenderView::new(ep(C), ep(S), segs[0].time_ns, &params(profile), Vec::new()).unwrap();
    for s in segs {
        view.add(s).unwrap();
    }
    let (out, (), summary) = view.finish().unwrap();
    (String::from_utf8(out).unwrap(), summary)
}

/// The handshake, two segments timed one at a time (RFC 6298 §3), an expiry after a full
/// RTO of silence (§5.4–5.6: backoff), then a retransmission 100 ms after an ACK: not
/// the timer's doing.
fn exchange(isn: u32, peer: u32) -> Vec<Segment> {
    let i = |d: u32| isn.wrapping_add(d);
    vec![
        syn(seg(1000, true, isn, 0, 0)),
        syn(seg(1100, false, peer, i(1), 0)),
        seg(1100, true, i(1), peer + 1, 0),
        seg(1200, true, i(1), peer + 1, 1000),
        seg(1200, true, i(1001), peer + 1, 1000),
        seg(1300, false, peer + 1, i(1001), 0),
        seg(2300, true, i(1001), peer + 1, 1000), // 1 s after the ACK: the RTO
        seg(2400, false, peer + 1, i(2001), 0),   // acks a retransmitted segment: no sample
        seg(2500, true, i(2001), peer + 1, 1000),
        seg(2500, true, i(3001), peer + 1, 1000),
        seg(2600, false, peer + 1, i(3001), 0), // times the segment sent at 2.5 s
        seg(2700, true, i(3001), peer + 1, 1000), // 100 ms after an ACK
    ]
}

const EXCHANGE_RFC6298: &str = "\
time_s,event,rtt_s,srtt_s,rttvar_s,rto_s,backoffs
0.100000,sample,0.100000,0.100000,0.050000,1.000000,0
0.100000,established,,0.100000,0.050000,1.000000,0
0.300000,sample,0.100000,0.100000,0.037500,1.000000,0
1.300000,timeout,,0.100000,0.037500,2.000000,1
1.600000,sample,0.100000,0.100000,0.028125,1.000000,0
1.700000,retransmit,,0.100000,0.028125,1.000000,0
";

#[test]
fn rfc6298_karn_samples_a_timeout_and_a_retransmit_from_a_hand_written_exchange() {
    let (csv, summary) = run(RtoProfile::Rfc6298, &exchange(1000, 5000));
    assert_eq!(csv, EXCHANGE_RFC6298);
    assert_eq!(
        summary,
        Summary { samples: 3, timeouts: 1, retransmits: 1, probes: 0, new_data_probes: 0, syn_timeouts: 0, stalls: 2 }
    );
}

/// Hears the stalls.
#[derive(Default)]
struct Stalls(Vec<Stall>);

impl Observer for Stalls {
    fn stall(&mut self, stall: &Stall) {
        self.0.push(stall.clone());
    }
}

fn stalls(profile: RtoProfile, segs: &[Segment]) -> Vec<Stall> {
    let ep = |(addr, port): (IpAddr, u16)| Endpoint { addr, port };
    let mut view =
        SenderView::observed(ep(C), ep(S), segs[0].time_ns, &params(profile), io::sink(), Stalls::default()).unwrap();
    for s in segs {
        view.add(s).unwrap();
    }
    view.finish().unwrap().1.0
}

fn at_ms(ms: u64) -> SimTime {
    SimTime(ms * 1_000_000)
}

/// The exchange's two silences: the RTO at 1.3 s, armed by the ACK at 0.3 s and ended by
/// the ACK at 1.4 s, which the profile's own timer (RFC 6298 §5.4: armed for 1 s) repeats;
/// and the head sent again 100 ms after the last ACK with nothing heard since (a timer's
/// doing, if not this profile's), still open when the capture ends.
#[test]
fn the_exchange_stalls_twice_and_the_profile_repeats_the_first() {
    let s = stalls(RtoProfile::Rfc6298, &exchange(1000, 5000));
    assert_eq!(s.len(), 2);
    assert_eq!((s[0].phase, s[0].armed, s[0].sent.as_slice()), (Phase::Established, at_ms(300), &[at_ms(1300)][..]));
    assert_eq!(s[0].recovered, Some(at_ms(1400)));
    assert_eq!(s[0].what_if.expiries, [at_ms(1300)]);
    assert_eq!(s[0].what_if.recovered, Some((at_ms(1400), at_ms(1400))));
    assert_eq!((s[1].armed, s[1].recovered), (at_ms(1600), None));
    assert_eq!(s[1].what_if.expiries, [], "its first expiry, at 2.6 s, is past the capture's end at 1.7 s");
}

/// A SYN sent again is a stall in SYN-SENT, ended by the SYN-ACK; a retransmission
/// after a duplicate ACK arrived is a fast retransmit, not a stall.
#[test]
fn a_syn_sent_again_stalls_and_a_fast_retransmit_does_not() {
    let segs = vec![
        syn(seg(0, true, 100, 0, 0)),
        syn(seg(1000, true, 100, 0, 0)),
        syn(seg(1050, false, 900, 101, 0)),
        seg(1050, true, 101, 901, 0),
        seg(1100, true, 101, 901, 1000),
        seg(1100, true, 1101, 901, 1000),
        seg(1150, false, 901, 101, 0), // a duplicate ACK: the first segment was lost
        seg(1151, true, 101, 901, 1000),
        seg(1200, false, 901, 2101, 0),
    ];
    let s = stalls(RtoProfile::Linux, &segs);
    assert_eq!(s.len(), 1, "{s:?}");
    assert_eq!((s[0].phase, s[0].armed, s[0].recovered), (Phase::SynSent, at_ms(0), Some(at_ms(1050))));
    // Linux `TCP_TIMEOUT_INIT`: the SYN's timer is 1 s.
    assert_eq!(s[0].what_if.expiries, [at_ms(1000)]);
}

/// RFC 9293 §3.4: the same exchange with the sequence numbers wrapping mid-way.
#[test]
fn the_same_exchange_across_the_sequence_wrap_gives_the_same_rows() {
    assert_eq!(run(RtoProfile::Rfc6298, &exchange(u32::MAX - 1500, 5000)).0, EXCHANGE_RFC6298);
    assert_eq!(run(RtoProfile::Rfc6298, &exchange(u32::MAX, 5000)).0, EXCHANGE_RFC6298);
}

/// RFC 6298 §3 (Karn) and §5.7: a SYN sent again leaves no sample, and the RTO is 3 s
/// once data starts.
#[test]
fn a_syn_sent_again_is_a_syn_timeout_and_its_syn_ack_no_sample() {
    let segs = [syn(seg(0, true, 7, 0, 0)), syn(seg(1000, true, 7, 0, 0)), syn(seg(1150, false, 90, 8, 0))];
    let (csv, summary) = run(RtoProfile::Rfc6298, &segs);
    assert_eq!(
        csv,
        "time_s,event,rtt_s,srtt_s,rttvar_s,rto_s,backoffs\n\
         1.000000,syn_timeout,,,,2.000000,1\n\
         1.150000,established,,,,3.000000,1\n"
    );
    assert_eq!(summary.syn_timeouts, 1);
}

/// RFC 7323 §4.1: with timestamps the echo names the copy, so a SYN sent twice still
/// gives a sample, from the send whose TSval came back.
#[test]
fn with_timestamps_the_echo_times_a_syn_sent_twice() {
    let segs = [
        ts(syn(seg(0, true, 7, 0, 0)), 100, 0),
        ts(syn(seg(1000, true, 7, 0, 0)), 1100, 0),
        ts(syn(seg(1040, false, 90, 8, 0)), 555, 1100),
    ];
    let (csv, _) = run(RtoProfile::Rfc6298, &segs);
    assert!(csv.contains("\n1.040000,sample,0.040000,"), "{csv}");
}

/// Linux tcp_ack_update_rtt: an ACK covering a retransmitted segment is timed by its
/// TSecr on the 1 ms clock (whole ticks, at least one); otherwise by the oldest newly
/// acknowledged segment's send time, on every ACK.
#[test]
fn linux_samples_every_ack_and_falls_back_to_the_echo_in_whole_milliseconds() {
    let segs = [
        ts(syn(seg(0, true, 0, 0, 0)), 1, 0),
        ts(syn(seg(20, false, 50, 1, 0)), 9, 1),
        ts(seg(20, true, 1, 51, 0), 21, 9),
        ts(seg(30, true, 1, 51, 100), 31, 9),
        ts(seg(31, true, 101, 51, 100), 32, 9),
        ts(seg(50, false, 51, 101, 0), 10, 31),
        ts(seg(52, false, 51, 201, 0), 11, 32),
        ts(seg(300, true, 201, 51, 100), 300, 11),
        ts(seg(600, true, 201, 51, 100), 600, 11),
        ts(seg(620, false, 51, 301, 0), 12, 600),
    ];
    let segs: Vec<Segment> = segs
        .into_iter()
        .map(|mut s| {
            // Sub-millisecond send times, so ticks and nanoseconds differ.
            s.time_ns += 400_000;
            s
        })
        .collect();
    let (csv, summary) = run(RtoProfile::Linux, &segs);
    let rows: Vec<&str> = csv.lines().collect();
    // Handshake 20 ms; then 20 ms and 21 ms (every ACK, from its oldest segment).
    assert!(rows[1].starts_with("0.020000,sample,0.020000,"), "{csv}");
    assert!(rows[3].starts_with("0.050000,sample,0.020000,"), "{csv}");
    assert!(rows[4].starts_with("0.052000,sample,0.021000,"), "{csv}");
    // The segment sent at 0.3 s and again at 0.6 s: whichever the timer drove, its ACK
    // is timed from the echoed 0.6 s send in whole milliseconds.
    assert!(rows[5].starts_with("0.600000,timeout,"), "{csv}");
    assert!(rows[6].starts_with("0.620000,sample,0.020000,"), "{csv}");
    assert_eq!(rows.len(), 7, "{csv}");
    assert_eq!(summary.samples, 4);
}

/// A partial ACK in recovery (RFC 6582 §3.2 step 5: retransmit the first unacknowledged
/// segment) acknowledges new data, so it arms the timer, and the retransmission that
/// answers it follows within microseconds: not a stall. The same head sent again after a
/// second of silence is one.
#[test]
fn a_retransmission_answering_a_partial_ack_is_no_stall() {
    let mut segs = vec![
        syn(seg(0, true, 100, 0, 0)),
        syn(seg(100, false, 900, 101, 0)),
        seg(100, true, 101, 901, 0),
        seg(110, true, 101, 901, 1000),
        seg(110, true, 1101, 901, 1000),
        seg(110, true, 2101, 901, 1000),
    ];
    // The partial ACK at 310 ms, the head sent again 9 µs after it.
    segs.push(seg(310, false, 901, 1101, 0));
    let mut answer = seg(310, true, 1101, 901, 1000);
    answer.time_ns += 9_000;
    segs.push(answer);
    segs.push(seg(520, false, 901, 3101, 0));
    assert_eq!(stalls(RtoProfile::Linux, &segs), [], "the partial ACK's answer");
    // Nothing comes back, and the head goes again a second later: the timer's doing.
    segs.truncate(segs.len() - 1);
    segs.push(seg(1320, true, 1101, 901, 1000));
    segs.push(seg(1520, false, 901, 3101, 0));
    let s = stalls(RtoProfile::Linux, &segs);
    assert_eq!(s.len(), 1, "{s:?}");
    // Armed by the partial ACK; the answer to it is not one of the stall's.
    assert_eq!((s[0].armed, s[0].sent.as_slice(), s[0].recovered), (at_ms(310), &[at_ms(1320)][..], Some(at_ms(1520))));
}

/// RACK (RFC 8985 §6.2): after an ACK that moves the window, the reordering timer sends
/// the head again a fraction of the RTT later (here 6 ms, as a Linux capture on a 200 ms
/// path shows) with nothing heard: loss recovery, sooner than an SRTT, not a stall.
#[test]
fn a_head_sent_again_sooner_than_an_srtt_after_an_ack_is_not_a_stall() {
    let segs = vec![
        syn(seg(0, true, 100, 0, 0)),
        syn(seg(200, false, 900, 101, 0)),
        seg(200, true, 101, 901, 0),
        seg(210, true, 101, 901, 1000),
        seg(210, true, 1101, 901, 1000),
        seg(210, true, 2101, 901, 1000),
        seg(410, false, 901, 1101, 0),
        seg(416, true, 1101, 901, 1000),
        seg(616, false, 901, 3101, 0),
    ];
    assert_eq!(stalls(RtoProfile::Linux, &segs), []);
}

/// The rows with the server as the data sender (a download, read from its side).
fn run_server(profile: RtoProfile, segs: &[Segment]) -> (String, Summary) {
    let ep = |(addr, port): (IpAddr, u16)| Endpoint { addr, port };
    let mut view = SenderView::new(ep(S), ep(C), segs[0].time_ns, &params(profile), Vec::new()).unwrap();
    for s in segs {
        view.add(s).unwrap();
    }
    let (out, (), summary) = view.finish().unwrap();
    (String::from_utf8(out).unwrap(), summary)
}

fn stalls_server(profile: RtoProfile, segs: &[Segment]) -> Vec<Stall> {
    let ep = |(addr, port): (IpAddr, u16)| Endpoint { addr, port };
    let mut view =
        SenderView::observed(ep(S), ep(C), segs[0].time_ns, &params(profile), io::sink(), Stalls::default()).unwrap();
    for s in segs {
        view.add(s).unwrap();
    }
    view.finish().unwrap().1.0
}

fn us(mut s: Segment, extra_us: u64) -> Segment {
    s.time_ns += extra_us * 1000;
    s
}

/// Linux `tcp_synack_rtt_meas` (called from `tcp_check_req` on the third ACK): a SYN-ACK
/// sent once is timed from its send to that ACK in microseconds, and the RTO set from it
/// before any data, as the active side's SYN is. Then the head sent again after the RTO
/// of silence is the timer's.
#[test]
fn linux_tcp_synack_rtt_meas_times_a_synack_sent_once_in_microseconds() {
    let segs = [
        syn(seg(0, true, 100, 0, 0)),
        us(syn(seg(0, false, 900, 101, 0)), 300),
        us(seg(50, true, 101, 901, 0), 700),
        seg(60, false, 901, 101, 1000),
        seg(400, false, 901, 101, 1000),
        seg(450, true, 101, 1901, 0),
    ];
    let (csv, summary) = run_server(RtoProfile::Linux, &segs);
    let rows: Vec<&str> = csv.lines().collect();
    assert!(rows[1].starts_with("0.050700,sample,0.050400,0.050400,"), "{csv}");
    assert!(rows[2].starts_with("0.050700,established,"), "{csv}");
    // RTO = 50.4 ms + max(2 · 50.4, 200) ms, in 4 ms jiffies: 0.252 s < 0.34 s of silence.
    assert!(rows[3].starts_with("0.400000,timeout,,0.050400,0.050000,0.504000,1,"), "{csv}");
    assert_eq!(
        summary,
        Summary { samples: 1, timeouts: 1, retransmits: 0, probes: 0, new_data_probes: 0, syn_timeouts: 0, stalls: 1 }
    );
}

/// Linux `reqsk_timer_handler`: the SYN-ACK's timer doubles from `TCP_TIMEOUT_INIT`
/// (1, 2, 4 s) with no linear timeouts, so under linux its expiries are `timeout`s of the
/// RTO's backoff. `tcp_synack_rtt_meas` then takes no send time (`req->num_retrans` is
/// not 0) but the echo, on the 1 ms clock (`tcp_ack_update_rtt`).
#[test]
fn linux_synack_timer_doubles_and_its_handshake_is_timed_by_the_echo() {
    let segs = [
        ts(syn(seg(0, true, 100, 0, 0)), 7, 0),
        ts(syn(seg(0, false, 900, 101, 0)), 1000, 7),
        ts(syn(seg(1000, false, 900, 101, 0)), 2000, 7),
        ts(syn(seg(3000, false, 900, 101, 0)), 4000, 7),
        us(ts(seg(3040, true, 101, 901, 0), 3047, 4000), 600),
    ];
    let (csv, summary) = run_server(RtoProfile::Linux, &segs);
    let rows: Vec<&str> = csv.lines().collect();
    assert!(rows[1].starts_with("1.000000,timeout,,,,2.000000,1,"), "{csv}");
    assert!(rows[2].starts_with("3.000000,timeout,,,,4.000000,2,"), "{csv}");
    assert!(rows[3].starts_with("3.040600,sample,0.040000,0.040000,"), "{csv}");
    assert!(rows[4].starts_with("3.040600,established,,0.040000,0.050000,0.240000,0,"), "{csv}");
    assert_eq!((summary.syn_timeouts, summary.timeouts, summary.samples), (2, 0, 1));
    // The stall the profile's timer repeats: expiries at 1 and 3 s, not the SYN's 1 s
    // linear steps (which would give 1, 2, 3 s).
    let s = stalls_server(RtoProfile::Linux, &segs);
    assert_eq!(s.len(), 1, "{s:?}");
    assert_eq!((s[0].phase, s[0].armed, s[0].recovered), (Phase::SynSent, at_ms(0), Some(SimTime(3_040_600_000))));
    assert_eq!(s[0].sent, [at_ms(1000), at_ms(3000)]);
    assert_eq!(s[0].what_if.expiries, [at_ms(1000), at_ms(3000)]);
}

/// Linux `tcp_check_req`: a repeated SYN in SYN-RECV is answered by `inet_rtx_syn_ack`
/// at once, the request's timer re-armed without backoff: a `retransmit`, no stall. It
/// counts in `req->num_retrans`, so `tcp_synack_rtt_meas` has no send time and, without
/// timestamps, no sample: `tcp_init_metrics` starts data at `TCP_TIMEOUT_FALLBACK`, 3 s.
#[test]
fn linux_a_synack_answering_a_repeated_syn_is_a_retransmit_and_leaves_the_3s_fallback() {
    let segs = [
        syn(seg(0, true, 100, 0, 0)),
        syn(seg(0, false, 900, 101, 0)),
        syn(seg(1000, true, 100, 0, 0)),
        us(syn(seg(1000, false, 900, 101, 0)), 20),
        seg(1050, true, 101, 901, 0),
    ];
    let (csv, summary) = run_server(RtoProfile::Linux, &segs);
    assert_eq!(
        csv,
        "time_s,event,rtt_s,srtt_s,rttvar_s,rto_s,backoffs,mdev_s,mdev_max_s\n\
         1.000020,retransmit,,,,1.000000,0,,\n\
         1.050000,established,,,,3.000000,0,,\n"
    );
    assert_eq!((summary.retransmits, summary.syn_timeouts, summary.samples), (1, 0, 0));
    assert_eq!(stalls_server(RtoProfile::Linux, &segs), []);
}

/// RFC 6298 §5.7 ("the timer expires awaiting the ACK of a SYN segment": the SYN-ACK is
/// one) and §5.5: a SYN-ACK sent again by its timer is a `syn_timeout`, doubling, and
/// with no sample (§3, Karn) data starts at 3 s. Sent once, the SYN-ACK and its ACK are a
/// sample (§2.2).
#[test]
fn rfc6298_a_synack_sent_again_is_a_syn_timeout_and_sent_once_a_sample() {
    let mut segs = vec![
        syn(seg(0, true, 100, 0, 0)),
        syn(seg(0, false, 900, 101, 0)),
        syn(seg(1000, false, 900, 101, 0)),
        seg(1100, true, 101, 901, 0),
    ];
    let (csv, summary) = run_server(RtoProfile::Rfc6298, &segs);
    assert_eq!(
        csv,
        "time_s,event,rtt_s,srtt_s,rttvar_s,rto_s,backoffs\n\
         1.000000,syn_timeout,,,,2.000000,1\n\
         1.100000,established,,,,3.000000,1\n"
    );
    assert_eq!(summary.syn_timeouts, 1);
    segs.remove(2);
    let (csv, _) = run_server(RtoProfile::Rfc6298, &segs);
    assert!(csv.contains("\n1.100000,sample,1.100000,"), "{csv}");
    assert!(csv.contains("\n1.100000,established,"), "{csv}");
}

/// SACK-permitted on a SYN or SYN-ACK (RFC 2018 §2).
fn sack_ok(mut s: Segment) -> Segment {
    s.sack = SackOption::Permitted;
    s
}

/// A request/response exchange: the handshake (SACK offered by both when `sack`), ten
/// 100-byte requests each acknowledged 100 ms later (SRTT 100 ms, linux RTO 300 ms),
/// then `tail`: segments sent after the last ACK at 5.2 s, with no ACK until `ack_ms`.
fn request_response(sack: bool, tail: &[(u64, u32)], ack_ms: u64, acked: u32) -> Vec<Segment> {
    let o = |s: Segment| if sack { sack_ok(s) } else { s };
    let mut v =
        vec![o(syn(seg(0, true, 100, 0, 0))), o(syn(seg(100, false, 500, 101, 0))), seg(100, true, 101, 501, 0)];
    let mut seq = 101;
    for i in 0..10 {
        v.push(seg(200 + 500 * i, true, seq, 501, 100));
        seq += 100;
        v.push(seg(300 + 500 * i, false, 501, seq, 0));
    }
    for &(ms, s) in tail {
        v.push(seg(ms, true, s, 501, 100));
    }
    v.push(seg(ack_ms, false, 501, acked, 0));
    v
}

fn events(csv: &str) -> Vec<(String, String)> {
    csv.lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[0].to_string(), f[1].to_string())
        })
        .filter(|(_, e)| e != "sample")
        .collect()
}

fn rows(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter().map(|(t, e)| (t.to_string(), e.to_string())).collect()
}

/// `tcp_schedule_loss_probe` / `tcp_send_loss_probe` (RFC 8985 §7.2, §7.3): one segment
/// out and lost, SACK on. The PTO, 2·SRTT + `tcp_rto_min` = 400 ms, is cut to the RTO's
/// 300 ms deadline; the probe resends the segment without backing off; the RTO fires a
/// full RTO after the probe (`icsk_pending = 0`, `tcp_rearm_rto`) and doubles from there.
#[test]
fn linux_with_sack_probes_the_lone_segment_then_times_out_a_full_rto_after_the_probe() {
    let seq = 101 + 1000;
    let tail = [(5200, seq), (5500, seq), (5800, seq), (6400, seq)];
    let segs = request_response(true, &tail, 6500, seq + 100);
    let (csv, summary) = run(RtoProfile::Linux, &segs);
    assert_eq!(
        events(&csv),
        rows(&[("0.100000", "established"), ("5.500000", "probe"), ("5.800000", "timeout"), ("6.400000", "timeout")])
    );
    assert_eq!((summary.probes, summary.timeouts, summary.retransmits), (1, 2, 0));
    // The probe leaves the backoff alone: the first timeout is backoff 1.
    assert!(csv.contains("5.500000,probe,,0.100000,0.050000,0.300000,0,"), "{csv}");
    let s = stalls(RtoProfile::Linux, &segs);
    assert_eq!(s.len(), 1);
    assert_eq!(s[0].armed, at_ms(5200));
    assert_eq!(s[0].sent, [at_ms(5500), at_ms(5800), at_ms(6400)]);
    // The profile's timer: the probe at the PTO, then 300 ms, then 600 ms.
    assert_eq!(s[0].what_if.expiries, [at_ms(5500), at_ms(5800), at_ms(6400)]);
}

/// `tcp_is_sack`: without SACK-permitted on both SYNs no probe is scheduled, and the
/// stall's what-if is the bare RTO and its doubling (RFC 6298 §5.5).
#[test]
fn linux_without_sack_has_no_probe() {
    let seq = 101 + 1000;
    let tail = [(5200, seq), (5500, seq), (6100, seq)];
    let segs = request_response(false, &tail, 6200, seq + 100);
    let (csv, summary) = run(RtoProfile::Linux, &segs);
    assert_eq!(events(&csv), rows(&[("0.100000", "established"), ("5.500000", "timeout"), ("6.100000", "timeout")]));
    assert_eq!(summary.probes, 0);
    let s = stalls(RtoProfile::Linux, &segs);
    assert_eq!(s[0].what_if.expiries, [at_ms(5500), at_ms(6100)]);
}

/// `tcp_send_loss_probe` resends the last segment sent (`skb_rb_last` of the retransmit
/// queue), 2·SRTT + `TCP_TIMEOUT_MIN_US` (2 ms) after the last send with three in
/// flight, 202 ms rounded up to 51 jiffies at HZ 250 (`usecs_to_jiffies`): 204 ms; the RTO then resends the head a full RTO after the probe. The probe opens the
/// stall: it is the timer's first resend in the silence.
#[test]
fn linux_with_sack_probes_the_tail_of_a_flight() {
    let h = 101 + 1000;
    let tail = [(5200, h), (5201, h + 100), (5202, h + 200), (5406, h + 200), (5706, h), (6306, h)];
    let segs = request_response(true, &tail, 6406, h + 300);
    let (csv, _) = run(RtoProfile::Linux, &segs);
    assert_eq!(
        events(&csv),
        rows(&[("0.100000", "established"), ("5.406000", "probe"), ("5.706000", "timeout"), ("6.306000", "timeout")])
    );
    let s = stalls(RtoProfile::Linux, &segs);
    assert_eq!(s[0].armed, at_ms(5202));
    assert_eq!(s[0].what_if.expiries, [at_ms(5406), at_ms(5706), at_ms(6306)]);
}

/// RFC 6298 has no probe: the same capture read with rfc6298 (or linux under
/// `tlp = false`) writes no `probe` row, and its what-if starts at the RTO.
#[test]
fn rfc6298_and_linux_without_tlp_read_no_probe() {
    let seq = 101 + 1000;
    let tail = [(5200, seq), (5500, seq), (5800, seq)];
    let segs = request_response(true, &tail, 5900, seq + 100);
    let (csv, summary) = run(RtoProfile::Rfc6298, &segs);
    assert!(!csv.contains("probe"), "{csv}");
    assert_eq!(summary.probes, 0);
    let no_tlp = RtoConfig { profile: RtoProfile::Linux, tlp: Some(false), ..RtoConfig::default() }.resolve().unwrap();
    let ep = |(addr, port): (IpAddr, u16)| Endpoint { addr, port };
    let mut view = SenderView::observed(ep(C), ep(S), segs[0].time_ns, &no_tlp, Vec::new(), Stalls::default()).unwrap();
    for s in &segs {
        view.add(s).unwrap();
    }
    let (out, Stalls(st), summary) = view.finish().unwrap();
    assert!(!String::from_utf8(out).unwrap().contains("probe"));
    assert_eq!(summary.probes, 0);
    assert_eq!(st[0].what_if.expiries[0], at_ms(5500));
}

/// A capture that starts after the handshake: SACK blocks from the receiver show SACK is
/// on (RFC 2018 §3: only a SACK-permitted connection sends them), so probes are read.
#[test]
fn sack_blocks_seen_mid_way_turn_probes_on() {
    let mut segs = request_response(false, &[(5200, 1101), (5500, 1101)], 5600, 1201);
    segs.drain(..3); // no handshake
    let mut blocks = seg(350, false, 501, 401, 0);
    blocks.sack = SackOption::Blocks;
    segs.insert(3, blocks);
    let (csv, summary) = run(RtoProfile::Linux, &segs);
    assert_eq!(summary.probes, 1, "{csv}");
}

/// `tlp_high_seq`: one probe at a time. A second resend in the same silence is the RTO's.
#[test]
fn only_one_probe_is_out_at_a_time() {
    let seq = 101 + 1000;
    let tail = [(5200, seq), (5500, seq), (5800, seq)];
    let (csv, summary) = run(RtoProfile::Linux, &request_response(true, &tail, 5900, seq + 100));
    assert_eq!((summary.probes, summary.timeouts), (1, 1), "{csv}");
}

/// `tcp_send_loss_probe` sends new data when there is some and the window allows
/// (`tcp_write_xmit` with push_one = 2, `tlp_retrans = 0`): a new segment in the silence
/// once the PTO is due (here cut to the head's RTO deadline, 300 ms) is the probe, and the
/// RTO fires a full RTO after it. The committed blackout capture shows the same
/// (`capture_kernel.rs` holds its RTO to the kernel's `tcpi_rto`).
#[test]
fn a_probe_may_send_new_data_and_the_rto_follows_a_full_rto_after_it() {
    let h = 101 + 1000;
    let tail = [(5200, h), (5500, h + 100), (5800, h)];
    let (csv, summary) = run(RtoProfile::Linux, &request_response(true, &tail, 5900, h + 200));
    assert_eq!(events(&csv), rows(&[("0.100000", "established"), ("5.500000", "probe"), ("5.800000", "timeout")]));
    assert_eq!((summary.probes, summary.new_data_probes), (1, 1));
}

/// `tcp_process_tlp_ack` with FLAG_DSACK_TLP (`tcp_dsack_seen`: a D-SACK block ending at
/// `tlp_high_seq`, RFC 2883 §4): the request's ACK was lost, the probe resent it, and the
/// receiver's ACK of both copies reports the duplicate. Nothing was lost, so the episode
/// ends though that ACK advances exactly to `tlp_high_seq`: the next silence probes
/// again, then times out a full RTO later and doubles.
#[test]
fn a_dsack_of_the_probe_ends_the_episode_so_the_next_silence_probes_again() {
    let a = 101 + 1000;
    let b = a + 100;
    let mut segs = request_response(true, &[(5200, a), (5500, a)], 5600, b);
    let dsack = segs.last_mut().unwrap();
    dsack.sack = SackOption::Dsack { end: b };
    for (ms, seq) in [(6000, b), (6300, b), (6600, b), (7200, b)] {
        segs.push(seg(ms, true, seq, 501, 100));
    }
    segs.push(seg(7300, false, 501, b + 100, 0));
    let (csv, summary) = run(RtoProfile::Linux, &segs);
    assert_eq!(
        events(&csv),
        rows(&[
            ("0.100000", "established"),
            ("5.500000", "probe"),
            ("6.300000", "probe"),
            ("6.600000", "timeout"),
            ("7.200000", "timeout"),
        ])
    );
    assert_eq!(summary.probes, 2);
    let s = stalls(RtoProfile::Linux, &segs);
    assert_eq!(s[1].what_if.expiries, [at_ms(6300), at_ms(6600), at_ms(7200)]);
    // Without the D-SACK (a plain ACK to tlp_high_seq) the episode stays open: the
    // second silence's first resend is the RTO's.
    let mut plain = segs.clone();
    plain.iter_mut().find(|s| s.sack != SackOption::None && !s.syn).unwrap().sack = SackOption::None;
    let (csv, _) = run(RtoProfile::Linux, &plain);
    assert!(csv.contains("6.300000,timeout"), "{csv}");
}

/// A SACK of the probe while the head is still missing: the path is back and the head's
/// resend 25 ms later answers it (RACK, RFC 8985 §6.2), not the timer. The stall ends at
/// the SACK, recovered by the probe, under the profile's timer as in the capture.
#[test]
fn a_sack_after_the_probe_ends_the_stall_and_the_resend_it_answers_is_not_the_timers() {
    let h = 101 + 1000;
    let tail = [(5200, h), (5201, h + 100), (5202, h + 200), (5406, h + 200), (5531, h), (5532, h + 100)];
    let mut segs = request_response(true, &tail, 5631, h + 300);
    let mut sacked = seg(5506, false, 501, h, 0);
    sacked.sack = SackOption::Blocks;
    let at = segs.len() - 3;
    segs.insert(at, sacked);
    let s = stalls(RtoProfile::Linux, &segs);
    assert_eq!(s.len(), 1);
    assert_eq!(s[0].sent, [at_ms(5406)]);
    assert_eq!(s[0].recovered, Some(at_ms(5506)));
    assert_eq!(s[0].what_if.expiries, [at_ms(5406)]);
}
