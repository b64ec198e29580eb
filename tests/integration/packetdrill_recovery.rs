//! Linux's packetdrill scripts on loss recovery (SACK, RACK, the tail loss probe,
//! NewReno, PRR and CUBIC's window after a loss), replayed in the tcp world. Each test
//! names its script (repository, path, the commit the copy was read at), builds the
//! scenario the script's network amounts to and checks the trace against the times the
//! script expects, worked out by hand from the script's lines and the kernel's code in
//! the test's comment. `docs/packetdrill.md` lists every script surveyed.
//!
//! The scripts' kernel is a server writing to a scripted client; here the model's client
//! writes and the path plays the peer. A segment the script's peer never acknowledges is
//! one the path drops by its number; a SACK the peer sends later than one RTT after the
//! segment is a segment the path delays (`kind = "delay"`), which is also how segments
//! arrive out of order. The peer ACKs every segment at once (`delayed_ack = false`), as
//! the scripts' peers do, and SACKs what arrived. Forward packets are numbered from 1,
//! the SYN, so the first flight's segment `k` is forward packet `k + 2`. Times are counted
//! from the first SYN; the data goes out one RTT later, when the handshake ends, which is
//! where the scripts' `write` stands.
//!
//! Every scenario sets the sysctls of the scripts' `defaults.sh` that matter: SACK and
//! RACK on (`tcp_sack=1`, `tcp_recovery=1`), CUBIC, an initial window of 10, no
//! timestamps (the scripts' SYNs carry none). The receiver's window is large so the
//! congestion window alone limits the flight, and `hz = 1000` so a jiffy is a millisecond
//! and the kernel's rounding to jiffies leaves whole milliseconds.

use super::common::{Row, nanos, run_for_rows};

const MS: u64 = 1_000_000;

/// How the sender finds losses, as the `[tcp]` keys `sack` and `rack` choose it.
#[derive(Clone, Copy)]
enum Detection {
    /// Linux's default: SACK with RACK (RFC 8985).
    Rack,
    /// No SACK: duplicate ACKs and NewReno (RFC 6582), as Linux runs a peer without
    /// `sackOK` (`tcp_is_reno`).
    NewReno,
}

/// Runs one connection `rtt_ms` from its peer that writes as `workload` says (a
/// `workload = …` line, and `[[tcp.write]]` tables after it), with the path's `events`;
/// returns the traced connection's rows.
fn replay(rtt_ms: u64, detection: Detection, workload: &str, events: &str) -> Vec<Row> {
    let detection = match detection {
        Detection::Rack => "sack = true\nrack = true",
        Detection::NewReno => "sack = false\nrack = false",
    };
    let scenario = format!(
        "name = \"pd\"\ndescription = \"a packetdrill script's network\"\nhorizon = \"3s\"\nseed = 1\n\
         replications = 1\n\
         [tcp]\nclients = 1\nwindow = 10000\ninitial_window = 10\ncongestion = \"cubic\"\n\
         delayed_ack = false\n{detection}\n{workload}\n\
         [tcp.rto]\nprofile = \"linux\"\ntimestamps = false\nhz = 1000\n\
         [path]\nbase_rtt = \"{rtt_ms}ms\"\n{events}"
    );
    run_for_rows(&scenario)
}

/// Forward packets `nth` to `nth + count − 1` are lost.
fn drop(nth: u32, count: u32) -> String {
    format!("[[path.event]]\nkind = \"drop\"\ndirection = \"forward\"\nnth = {nth}\ncount = {count}\n")
}

/// Forward packet `nth` arrives `by_ms` later than the base RTT would have it.
fn delay(nth: u32, by_ms: u64) -> String {
    format!("[[path.event]]\nkind = \"delay\"\ndirection = \"forward\"\nnth = {nth}\nby = \"{by_ms}ms\"\n")
}

/// What the sender put on the wire after the handshake, as (time in ms, event, segment).
fn data(rows: &[Row]) -> Vec<(u64, &str, u64)> {
    rows.iter()
        .skip_while(|r| r.event != "established")
        .filter(|r| matches!(r.event.as_str(), "send" | "retransmit" | "probe"))
        .map(|r| {
            assert_eq!(r.ns % MS, 0, "a send off the millisecond grid: {r:?}");
            (r.ns / MS, r.event.as_str(), r.segment.parse().unwrap())
        })
        .collect()
}

/// The repairs (retransmissions and probes) among `data`, in order.
fn repairs<'a>(data: &[(u64, &'a str, u64)]) -> Vec<(u64, &'a str, u64)> {
    data.iter().copied().filter(|(_, event, _)| *event != "send").collect()
}

/// `n` segments from `first` sent together at `at_ms`.
fn flight(at_ms: u64, first: u64, n: u64) -> Vec<(u64, &'static str, u64)> {
    (first..first + n).map(|seg| (at_ms, "send", seg)).collect()
}

fn first(rows: &[Row], event: &str) -> u64 {
    rows.iter().find(|r| r.event == event).unwrap_or_else(|| panic!("no `{event}` in the trace: {rows:#?}")).ns
}

/// google/packetdrill `gtests/net/tcp/fast_retransmit/fr-4pkt-sack.pkt` (commit
/// 5018df2a9f44bc41c0776845f50a27172d71829c): a 100 ms RTT, four segments written at
/// once, the first lost; `+.1` three ACKs SACKing 1461:2921, 1461:4381, 1461:5841 (the
/// other three segments) and `+0 >` the first segment again; `+.1` the ACK of all.
/// By hand (t0 = 100 ms, the handshake's end): the three SACKs arrive at t0 + 100. At the
/// first, RACK (`tcp_rack_detect_loss`) finds segment 0 sent with segment 1 and still
/// within RACK.rtt + reo_wnd (100 + 25 ms) of its send: the reordering timer is set. At the
/// third, `sacked_out` = 3 = `tp->reordering`, so `tcp_rack_reo_wnd` is 0 and segment 0
/// is lost at once: fast recovery, and PRR's first `sndcnt` of 1 retransmits it at
/// t0 + 100 = 200 ms. Its ACK at 300 ms ends the transfer, with no RTO and no probe.
#[test]
fn fr_4pkt_sack_retransmits_the_lost_first_segment_on_the_third_sack() {
    let rows = replay(100, Detection::Rack, "workload = { kind = \"transfer\", segments = 4 }", &drop(2, 1));
    let mut expected = flight(100, 0, 4);
    expected.push((200, "retransmit", 0));
    assert_eq!(data(&rows), expected, "{rows:#?}");
    assert_eq!(first(&rows, "finished"), 300 * MS, "the ACK of all data, one RTT after the retransmission");
    assert!(rows.iter().all(|r| r.event != "timeout"), "{rows:#?}");
}

/// google/packetdrill `gtests/net/tcp/fast_retransmit/fr-4pkt.pkt` (commit
/// 8229c94928ac0c7d5039bc3d302c525d558934f7): the same network with a peer that does not
/// offer SACK (its SYN has no `sackOK`): `+.1` three duplicate ACKs of 1 and `+0 >` the
/// first segment again, `+.1` the ACK of all. Without SACK Linux counts duplicate ACKs
/// (`tcp_add_reno_sack`) and enters recovery at the third (`tcp_time_to_recover`,
/// DupThresh 3; RFC 6582 3.2 step 2 for NewReno): the retransmission at t0 + 100 =
/// 200 ms, the ACK of all at 300 ms.
#[test]
fn fr_4pkt_without_sack_retransmits_on_the_third_duplicate_ack() {
    let rows = replay(100, Detection::NewReno, "workload = { kind = \"transfer\", segments = 4 }", &drop(2, 1));
    let mut expected = flight(100, 0, 4);
    expected.push((200, "retransmit", 0));
    assert_eq!(data(&rows), expected, "{rows:#?}");
    assert_eq!(first(&rows, "finished"), 300 * MS);
    assert!(rows.iter().all(|r| r.event != "timeout"), "{rows:#?}");
}

/// google/packetdrill `gtests/net/tcp/fast_retransmit/fr-4pkt-fack-last-mss.pkt` (commit
/// 5018df2a9f44bc41c0776845f50a27172d71829c): four segments, the first three lost, `+.1`
/// a SACK of the fourth, and "rtx by rack reo timer": the first segment again later.
/// By hand from `tcp_recovery.c` (t0 = 100 ms): the SACK at t0 + 100 makes RACK.rtt
/// 100 ms; `sacked_out` is 1, below DupThresh, so reo_wnd = min_rtt / 4 = 25 ms, and the
/// three segments sent with the fourth have 100 + 25 − 100 = 25 ms left
/// (`tcp_rack_skb_timeout`). `tcp_rack_mark_lost` arms the reordering timer for that plus
/// `TCP_TIMEOUT_MIN_US` (2 ms): it fires 27 ms after the SACK, at 227 ms;
/// `tcp_rack_reo_timeout` marks the three lost, enters recovery, and PRR (in flight 0,
/// ssthresh 7, one segment delivered) lets exactly one go: segment 0 at 227 ms. The
/// script writes `+.040`, 13 ms later, which a 250 Hz kernel that added `TCP_TIMEOUT_MIN`
/// (2 jiffies) after rounding gives within packetdrill's 4 ms tolerance: 7 + 2 jiffies =
/// 36 ms.
#[test]
fn fr_4pkt_fack_last_mss_retransmits_by_the_rack_reordering_timer_27_ms_after_the_sack() {
    let rows = replay(100, Detection::Rack, "workload = { kind = \"transfer\", segments = 4 }", &drop(2, 3));
    let sent = data(&rows);
    assert_eq!(sent[..4], flight(100, 0, 4)[..], "{rows:#?}");
    assert_eq!(repairs(&sent).first(), Some(&(227, "retransmit", 0)), "{rows:#?}");
    assert_eq!(sent.iter().filter(|(ms, _, _)| *ms == 227).count(), 1, "PRR lets one segment go: {rows:#?}");
    assert!(rows.iter().all(|r| r.event != "timeout" || r.ns > 227 * MS), "{rows:#?}");
}

/// google/packetdrill `gtests/net/tcp/limited_transmit/limited-transmit-sack.pkt` (commit
/// e236e6ec5666a2614b7b175bde19e3da13a4703d), RFC 3042 with SACK: 15 segments written,
/// the initial window of 10 sent; `+.11` a SACK of segment 1 and `+0 >` segment 10,
/// `+.01` a SACK of 1 and 2 and `+0 >` segment 11, `+.01` the ACK of 3001 ("it turned
/// out to be reordering") and `+0 >` segments 12 and 13, `+.02` the ACK of 5001 and
/// `+0 >` segment 14, then ACKs every 20 ms. Here segment 0 is delayed 30 ms, 1 by 10,
/// 2 by 20, 3 and 4 by 50, 5 and 6 by 70, 7 and 8 by 90 and 9 by 100, so the SACKs and
/// ACKs reach the sender when the script injects them. By hand (t0 = 100 ms):
/// - t0 + 110: a SACK, in flight 9 of cwnd 10 (`tcp_packets_in_flight` leaves SACKed
///   segments out): segment 10. RACK waits (25 ms of reo_wnd left for segment 0).
/// - t0 + 120: in flight 9 again: segment 11.
/// - t0 + 130: segment 0 arrives: the ACK of 3 delivers one segment, cwnd 11 in slow
///   start (`tcp_may_raise_cwnd`: data ACKed), in flight 9: segments 12 and 13. RACK's
///   timer (due at t0 + 147) is moot: nothing is retransmitted.
/// - t0 + 150: the ACK of 4, cwnd 12, in flight 10: segment 14, the last.
/// - The ACK of 14, sent at t0 + 150, at t0 + 250 = 350 ms ends the transfer.
#[test]
fn limited_transmit_sack_sends_new_data_on_two_sacks_and_retransmits_nothing() {
    let delays: String = [(2, 30), (3, 10), (4, 20), (5, 50), (6, 50), (7, 70), (8, 70), (9, 90), (10, 90), (11, 100)]
        .iter()
        .map(|&(nth, ms)| delay(nth, ms))
        .collect();
    let rows = replay(100, Detection::Rack, "workload = { kind = \"transfer\", segments = 15 }", &delays);
    let mut expected = flight(100, 0, 10);
    expected.extend([(210, "send", 10), (220, "send", 11), (230, "send", 12), (230, "send", 13), (250, "send", 14)]);
    assert_eq!(data(&rows), expected, "{rows:#?}");
    assert_eq!(first(&rows, "finished"), 350 * MS, "{rows:#?}");
}

/// google/packetdrill `gtests/net/tcp/fast_recovery/prr-ss-10pkt-lost-1.pkt` (commit
/// 5018df2a9f44bc41c0776845f50a27172d71829c), PRR (RFC 6937) in its slow-start reduction
/// bound with in-flight equal to ssthresh throughout: ten segments, the first lost,
/// SACKs of segments 1 to 9 at `+.11` and every 10 ms after, the retransmission at the
/// third (`+0 >`, then `tcpi_snd_cwnd == 7`, `tcpi_snd_ssthresh == 7`), a write at
/// t0 + 150 ms, one new segment per SACK from t0 + 160 to t0 + 210, `+.02` the ACK of
/// all ten and `+0 >` one more segment, then `tcpi_snd_cwnd == 7` in the Open state.
/// Here segment k (forward packet k + 2) is delayed 10·k ms, 20 ms more from segment 4
/// on. By hand (t0 = 100 ms):
/// - t0 + 130: the third SACK: `sacked_out` 3 makes reo_wnd 0, RACK marks segment 0
///   lost; CUBIC's ssthresh is 10 · 717 / 1024 = 7 (`cubictcp_recalc_ssthresh`);
///   in flight 10 − 3 SACKed − 1 lost = 6, PRR's `sndcnt` 1: the retransmission, and
///   cwnd 7.
/// - t0 + 150: the write: in flight 7 = cwnd, nothing goes.
/// - t0 + 160 … 210: each SACK delivers one, in flight 6, `sndcnt` = min(ssthresh −
///   in flight, …) = 1: segments 10 to 15, one per SACK.
/// - t0 + 230: the retransmission (sent at t0 + 130) is ACKed with all ten; recovery
///   ends with cwnd = ssthresh = 7 (`tcp_end_cwnd_reduction`), CUBIC's congestion
///   avoidance adds nothing on one ACK, in flight 6 (segments 10 to 15): one segment.
///
/// The script writes 7 segments at t0 + 150; here 20, so that what stops the sender at
/// t0 + 230 after one segment is the window of 7 the script checks, not the data.
#[test]
fn prr_ss_10pkt_lost_1_sends_one_segment_per_sack_and_leaves_recovery_with_cwnd_7() {
    // The script's SACKs of segments 1-3 come at +.11, +.12, +.13 and those of 4-9 at
    // +.16 to +.21, after the write at +.15: 20 ms more for k >= 4.
    let delays: String = (1..=9).map(|k| delay(k + 2, 10 * u64::from(k) + if k >= 4 { 20 } else { 0 })).collect();
    let rows = replay(
        100,
        Detection::Rack,
        "workload = { kind = \"script\" }\n\
         [[tcp.write]]\nat = \"0s\"\nsegments = 10\n\
         [[tcp.write]]\nat = \"250ms\"\nsegments = 20",
        &(drop(2, 1) + &delays),
    );
    let sent = data(&rows);
    assert_eq!(repairs(&sent), vec![(230, "retransmit", 0)], "the only repair: {rows:#?}");
    let new: Vec<_> = sent.iter().copied().filter(|(ms, event, _)| *ms > 100 && *event == "send").collect();
    let expected: Vec<(u64, &str, u64)> = [(260, 10), (270, 11), (280, 12), (290, 13), (300, 14), (310, 15), (330, 16)]
        .map(|(ms, seg)| (ms, "send", seg))
        .to_vec();
    assert_eq!(new[..7], expected[..], "{rows:#?}");
    assert!(new[7].0 > 330, "cwnd 7 after recovery lets only segment 16 go at 330 ms: {rows:#?}");
}

/// google/packetdrill `gtests/net/tcp/sack/sack-shift-sacked-2-6-8-3-9-nofack.pkt`, read in
/// the copy ligurio/packetdrill-testcases `testcases/tcp/sack/` (commit
/// 74875025b535ebbce085071c4fb3dafc01500fc8): ten segments; SACKs of segment 2 at `+.1`,
/// 6 at `+.001`, 8 at `+.001`, then "3 SACKed packets, so we enter Fast Recovery" with
/// `+0 >` segment 0 and `tcpi_lost == 6`; `+.007` a SACK of 3 and `+0 >` segment 1.
/// Segments 0, 1, 4, 5 and 7 are lost (forward 2, 3, 6, 7, 9); 6, 8, 3 and 9 are delayed
/// 1, 2, 9 and 19 ms. By hand (t0 = 100 ms):
/// - t0 + 100, + 101: RACK waits (reo_wnd 25 ms, `sacked_out` below 3).
/// - t0 + 102: `sacked_out` 3, reo_wnd 0: the six unSACKed segments sent with segment 8
///   are lost; ssthresh 7, in flight 10 − 3 − 6 = 1, PRR `sndcnt` 1: segment 0.
/// - t0 + 109: the SACK of segment 3 (reordering: `tp->reordering` becomes 6), in flight
///   10 − 4 − 5 + 1 = 2, PRR delivered 2 and sent 1: `sndcnt` 1, the next lost
///   segment, 1.
///
/// The script checks no packet the sender sends after that.
#[test]
fn sack_shift_sacked_2_6_8_3_9_retransmits_at_the_third_sack_then_one_per_sack() {
    let events = [drop(2, 2), drop(6, 2), drop(9, 1), delay(8, 1), delay(10, 2), delay(5, 9), delay(11, 19)].concat();
    let rows = replay(100, Detection::Rack, "workload = { kind = \"transfer\", segments = 10 }", &events);
    let sent = data(&rows);
    assert_eq!(sent[..10], flight(100, 0, 10)[..], "{rows:#?}");
    assert_eq!(repairs(&sent)[..2], [(202u64, "retransmit", 0u64), (209, "retransmit", 1)], "{rows:#?}");
}

/// google/packetdrill `gtests/net/tcp/fast_recovery/prr-ss-30pkt-lost1_4.pkt` (commit
/// 8229c94928ac0c7d5039bc3d302c525d558934f7), PRR with four losses and a 10 ms RTT: ten
/// segments, the first four lost; `+.01` a SACK of segment 4, `+.002` SACKs of 5 and 6
/// and `+0 >` segment 0, then a SACK of each of 7, 8 and 9, each answered at once by the
/// next lost segment (1, 2, 3); `+.01` the ACKs of 1, 2, 3 and all ten; `+.01` a write
/// of ten more, of which "the ssthresh*mss amount should be sent right away": seven.
/// Here segments 0 to 3 (forward 2 to 5) are dropped and 5 to 9 (forward 7 to 11)
/// delayed 2 ms. By hand (t0 = 10 ms):
/// - t0 + 10: the SACK of 4: RACK waits (reo_wnd = min_rtt / 4 = 2.5 ms).
/// - t0 + 12: the SACK of 6 makes `sacked_out` 3, reo_wnd 0: segments 0 to 3 lost.
///   ssthresh 7 (CUBIC), in flight 10 − 3 − 4 = 3, below ssthresh: PRR's slow-start
///   bound sends as many as were delivered, one per SACK: segment 0, then 1, 2 and 3 on
///   the SACKs of 7, 8 and 9, all at 22 ms.
/// - t0 + 22: the four retransmissions are ACKed; the last ACK ends recovery with cwnd =
///   ssthresh = 7 (`tcp_end_cwnd_reduction`), and nothing is in flight.
/// - t0 + 32 = 42 ms: the write: seven segments at once, cwnd 7, and no more.
#[test]
fn prr_ss_30pkt_lost1_4_retransmits_one_per_sack_and_sends_ssthresh_segments_after() {
    let delays: String = (7..=11).map(|nth| delay(nth, 2)).collect();
    let rows = replay(
        10,
        Detection::Rack,
        "workload = { kind = \"script\" }\n\
         [[tcp.write]]\nat = \"0s\"\nsegments = 10\n\
         [[tcp.write]]\nat = \"42ms\"\nsegments = 10",
        &(drop(2, 4) + &delays),
    );
    let sent = data(&rows);
    assert_eq!(sent[..10], flight(10, 0, 10)[..], "{rows:#?}");
    let retransmissions: Vec<(u64, &str, u64)> = (0..4).map(|seg| (22, "retransmit", seg)).collect();
    assert_eq!(repairs(&sent), retransmissions, "the only repairs: {rows:#?}");
    let after: Vec<_> = sent.iter().copied().filter(|(ms, _, _)| *ms >= 42).collect();
    assert_eq!(after[..7], flight(42, 10, 7)[..], "{rows:#?}");
    assert!(after[7].0 > 42, "cwnd 7 lets seven go at 42 ms, not eight: {rows:#?}");
}

/// Pengcheng Yang's packetdrill script in "Re: [PATCH] tcp: fix \"old stuff\" D-SACK
/// causing SACK to be treated as D-SACK" (netdev, 2 January 2020, quoted in Eric
/// Dumazet's reply, Message-ID <5f11208f-1a8b-23eb-1fdb-a70c6963d36a@gmail.com>), RACK
/// and TLP on, a 10 ms RTT: ten segments written and all lost; `+.02 >` the loss probe
/// of segment 9; `+.015` its SACK and `+0 >` segment 0 ("enter recovery"); `+.01` the
/// ACK of segment 0 and `+0 >` segments 1 and 2. The script's tolerance is 10 ms. Here
/// the ten segments are forward packets 2 to 11, dropped; the probe (12) is delayed 5 ms
/// so its SACK comes 15 ms after it; the retransmission of segment 1 (14) is dropped, as
/// the script's peer never acknowledges it. By hand (t0 = 10 ms, SRTT 10 ms from the
/// handshake):
/// - the probe timeout with ten segments out is 2·SRTT + `TCP_TIMEOUT_MIN_US` = 22 ms
///   (`tcp_schedule_loss_probe`): the probe at 32 ms; with nothing new to send it is the
///   last segment, 9 (`tcp_send_loss_probe`).
/// - 47 ms: the SACK of the probe: RACK.rtt 15 ms from the probe's send, and segments 0
///   to 8, sent 37 ms ago, are past RACK.rtt + reo_wnd (15 + 2.5 ms): all lost. Recovery,
///   in flight 0, PRR `sndcnt` 1: segment 0.
/// - 57 ms: its ACK advances snd_una: PRR delivered 2, sent 1, plus one for the advance
///   (`tcp_cwnd_reduction`): segments 1 and 2.
#[test]
fn dsack_old_stuff_script_probes_at_twice_srtt_then_rack_marks_the_flight_lost() {
    let events = [drop(2, 10), delay(12, 5), drop(14, 1)].concat();
    let rows = replay(10, Detection::Rack, "workload = { kind = \"transfer\", segments = 10 }", &events);
    let sent = data(&rows);
    assert_eq!(sent[..10], flight(10, 0, 10)[..], "{rows:#?}");
    assert_eq!(
        repairs(&sent)[..4],
        [(32u64, "probe", 9u64), (47, "retransmit", 0), (57, "retransmit", 1), (57, "retransmit", 2)],
        "{rows:#?}"
    );
}

#[test]
fn the_helpers_number_packets_as_the_path_does() {
    assert_eq!(nanos("0.227000000"), 227 * MS);
    assert_eq!(drop(2, 3), "[[path.event]]\nkind = \"drop\"\ndirection = \"forward\"\nnth = 2\ncount = 3\n");
    assert_eq!(delay(5, 9), "[[path.event]]\nkind = \"delay\"\ndirection = \"forward\"\nnth = 5\nby = \"9ms\"\n");
    assert_eq!(flight(100, 3, 2), vec![(100, "send", 3), (100, "send", 4)]);
}

/// The chapter's table names the test that replays each recovery script: every name it
/// gives under this module is a test here, and every replaying test is named there.
#[test]
fn the_chapter_names_every_recovery_test_and_only_those() {
    super::common::chapter_names_exactly_the_replays(
        "packetdrill_recovery",
        "tests/integration/packetdrill_recovery.rs",
        &["the_helpers_number_packets_as_the_path_does", "the_chapter_names_every_recovery_test_and_only_those"],
    );
}
