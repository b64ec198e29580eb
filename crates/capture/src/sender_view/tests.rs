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
    assert_eq!(summary, Summary { samples: 3, timeouts: 1, retransmits: 1, syn_timeouts: 0, stalls: 2 });
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
    assert_eq!(summary, Summary { samples: 1, timeouts: 1, retransmits: 0, syn_timeouts: 0, stalls: 1 });
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
