//! Scripted path events (`[[path.event]]`) and the scripted workload (`[[tcp.write]]`),
//! end to end: each trace time below is worked out by hand from the kernel functions
//! named beside it, over a 100 ms path with no random delay or loss.

use super::bad_input::refuse;
use super::common::{metric, run_text, summary, trace};

/// Linux at the default HZ 250 without tail loss probes, so the RTO alone decides.
/// The SYN-ACK at 100 ms gives the first RTT sample: tcp_rtt_estimator's first measure
/// sets srtt = 100 ms and rttvar = max(2 · 100 ms, rto_min 200 ms), so __tcp_set_rto
/// gives RTO = 100 + 200 = 300 ms.
const LINUX: &str = r#"
name = "events"
horizon = "10s"

[tcp.rto]
profile = "linux"
tlp = false

[path]
base_rtt = "100ms"
"#;

fn scenario(tcp: &str, events: &str) -> String {
    format!("{LINUX}{events}\n[tcp]\n{tcp}\n")
}

/// (time in s, event, rto in s, backoffs) of the trace's rows, in order.
fn rows(dir: &std::path::Path, variant: &str) -> Vec<(f64, String, f64, u32)> {
    trace(dir, variant)
        .iter()
        .map(|r| {
            (
                r["time_s"].parse().unwrap(),
                r["event"].clone(),
                r["rto_s"].parse().unwrap(),
                r["backoffs"].parse().unwrap(),
            )
        })
        .collect()
}

/// The times of one kind of row, to the microsecond.
fn times(rows: &[(f64, String, f64, u32)], event: &str) -> Vec<u64> {
    rows.iter().filter(|r| r.1 == event).map(|r| (r.0 * 1e6).round() as u64).collect()
}

fn ms(v: &[u64]) -> Vec<u64> {
    v.iter().map(|m| m * 1000).collect()
}

#[test]
fn dropping_the_first_data_segment_retransmits_it_one_rto_after_it_was_sent() {
    // Forward packet 1 is the SYN, packet 2 the first data segment, sent at 100 ms on
    // establishment and dropped. tcp_retransmit_timer fires 300 ms later, at 400 ms; the
    // retransmission's ACK is back at 500 ms and the transfer is over.
    let text = scenario(
        "workload = { kind = \"transfer\", segments = 1 }",
        "[[path.event]]\nkind = \"drop\"\ndirection = \"forward\"\nnth = 2\n",
    );
    let (_t, dir) = run_text(&text, &[]);
    let r = rows(&dir, "base");
    assert_eq!(times(&r, "send"), ms(&[0, 100]), "{r:?}");
    assert_eq!(times(&r, "timeout"), ms(&[400]));
    assert_eq!(times(&r, "retransmit"), ms(&[400]));
    assert_eq!(times(&r, "finished"), ms(&[500]));
    // The backed-off RTO: 300 ms << 1 (tcp_retransmit_timer's icsk_rto << 1).
    assert!(r.iter().any(|x| x.1 == "timeout" && (x.2 - 0.6).abs() < 1e-9 && x.3 == 1), "{r:?}");
}

#[test]
fn a_dropped_ack_times_out_like_lost_data_and_the_receiver_knows_it_was_spurious() {
    // Reverse packet 2 is the ACK of the only segment: the sender times out at 400 ms as
    // if the data were lost, and the retransmission's ACK (reverse packet 3) gets through.
    let text = scenario(
        "workload = { kind = \"transfer\", segments = 1 }",
        "[[path.event]]\nkind = \"drop\"\ndirection = \"reverse\"\nnth = 2\n",
    );
    let (_t, dir) = run_text(&text, &[]);
    let r = rows(&dir, "base");
    assert_eq!(times(&r, "retransmit"), ms(&[400]));
    assert_eq!(times(&r, "finished"), ms(&[500]));
    let s = summary(&dir);
    assert_eq!(metric(&s, "base", "spurious_retransmissions"), 1.0, "the data had arrived");
}

#[test]
fn an_icmp_unreachable_during_an_outage_undoes_one_doubling() {
    // One segment written at 1 s into a forward outage [1 s, 4 s): tcp_retransmit_timer
    // at 1.3 s (RTO 600 ms), 1.9 s (1.2 s), 3.1 s (2.4 s), all lost.
    // Silent: the next expiry is 3.1 + 2.4 = 5.5 s, past the outage; ACK at 5.6 s.
    // One ICMP at 3.2 s (tcp_ld_RTO_revert): backoff 3 -> 2, RTO = 300 ms << 2 = 1.2 s,
    // 100 ms since the retransmission at 3.1 s: the timer moves to 3.1 + 1.2 = 4.3 s.
    // Two ICMPs, the second at 4.0 s: backoff 2 -> 1, RTO 600 ms, 900 ms since 3.1 s, so
    // nothing remains and tcp_retransmit_timer runs at once, at 4.0 s, when the outage
    // is over.
    let text = format!(
        "{}\n[[variant]]\nname = \"silent\"\n\n[[variant]]\nname = \"one-icmp\"\npath.event = [{drop}, {{ kind = \
         \"icmp-unreachable\", at = \"3.2s\" }}]\n\n[[variant]]\nname = \"two-icmp\"\npath.event = [{drop}, {{ kind = \
         \"icmp-unreachable\", at = \"3.2s\" }}, {{ kind = \"icmp-unreachable\", at = \"4s\" }}]\n\n[[variant]]\n\
         name = \"rfc6298\"\ntcp.rto.profile = \"rfc6298\"\npath.event = [{drop}, {{ kind = \
         \"icmp-unreachable\", at = \"3.2s\" }}]\n",
        scenario(
            "workload = { kind = \"script\" }\n[[tcp.write]]\nat = \"1s\"\nsegments = 1\n",
            "[[path.event]]\nkind = \"drop\"\nat = \"1s\"\nduration = \"3s\"\n",
        ),
        drop = "{ kind = \"drop\", at = \"1s\", duration = \"3s\" }",
    );
    let (_t, dir) = run_text(&text, &[]);
    let silent = rows(&dir, "silent");
    assert_eq!(times(&silent, "retransmit"), ms(&[1300, 1900, 3100, 5500]));
    assert_eq!(times(&silent, "icmp_unreachable"), Vec::<u64>::new());
    let one = rows(&dir, "one-icmp");
    assert_eq!(times(&one, "retransmit"), ms(&[1300, 1900, 3100, 4300]));
    assert_eq!(times(&one, "ack").last(), Some(&4_400_000));
    let icmp: Vec<_> = one.iter().filter(|r| r.1 == "icmp_unreachable").collect();
    assert!(icmp.len() == 1 && (icmp[0].2 - 1.2).abs() < 1e-9 && icmp[0].3 == 2, "{icmp:?}");
    let two = rows(&dir, "two-icmp");
    assert_eq!(times(&two, "icmp_unreachable"), ms(&[3200, 4000]));
    assert_eq!(times(&two, "retransmit"), ms(&[1300, 1900, 3100, 4000]));
    // rfc6298 leaves RFC 6069 out: RTO 1 s (the floor), doubling: 2 s, then 4 s.
    let rfc = rows(&dir, "rfc6298");
    assert_eq!(times(&rfc, "icmp_unreachable"), ms(&[3200]));
    assert_eq!(times(&rfc, "retransmit"), ms(&[2000, 4000]));
}

#[test]
fn rfc6069_an_answering_router_keeps_the_linux_timer_at_its_unbacked_off_rto() {
    // One segment written at 1 s into an outage [1 s, 4 s) whose router answers every
    // packet it cannot forward, one base RTT (100 ms) after the send (RFC 6069 section 4).
    // The first answer, at 1.1 s, finds no backoff: tcp_ld_RTO_revert returns on
    // `!icsk->icsk_retransmits`. tcp_retransmit_timer at 1.3 s backs off to 600 ms; the
    // answer at 1.4 s undoes it (backoff 0, RTO 300 ms) and re-arms for 300 - 100 =
    // 200 ms, at 1.6 s; and so every 300 ms, until the retransmission at 4.0 s, sent when
    // the link is back, is acknowledged at 4.1 s. Silent, the same outage costs 5.5 s.
    let text = format!(
        "{}\n[[variant]]\nname = \"linux\"\n\n[[variant]]\nname = \"rfc6298\"\ntcp.rto.profile = \"rfc6298\"\n",
        scenario(
            "workload = { kind = \"script\" }\n[[tcp.write]]\nat = \"1s\"\nsegments = 1\n",
            "[[path.event]]\nkind = \"icmp-unreachable\"\nat = \"1s\"\nduration = \"3s\"\n",
        ),
    );
    let (_t, dir) = run_text(&text, &[]);
    let r = rows(&dir, "linux");
    assert_eq!(times(&r, "retransmit"), ms(&[1300, 1600, 1900, 2200, 2500, 2800, 3100, 3400, 3700, 4000]), "{r:?}");
    assert_eq!(times(&r, "icmp_unreachable"), ms(&[1100, 1400, 1700, 2000, 2300, 2600, 2900, 3200, 3500, 3800]));
    assert!(
        r.iter().filter(|x| x.1 == "icmp_unreachable").all(|x| (x.2 - 0.3).abs() < 1e-9 && x.3 == 0),
        "each answer leaves RTO 300 ms, backoff 0: {r:?}"
    );
    assert_eq!(times(&r, "ack").last(), Some(&4_100_000));
    // rfc6298 leaves RFC 6069 out: RTO 1 s, doubling to 2 s; the answers to the sends at
    // 1 s and 2 s change nothing, and the retransmission at 4.0 s gets through.
    let rfc = rows(&dir, "rfc6298");
    assert_eq!(times(&rfc, "icmp_unreachable"), ms(&[1100, 2100]));
    assert_eq!(times(&rfc, "retransmit"), ms(&[2000, 4000]));
}

#[test]
fn a_delayed_segment_makes_the_rto_fire_before_its_ack() {
    // The data segment (forward packet 2) arrives 300 ms late, at 100 + 50 + 300 = 450 ms:
    // the RTO fires first, at 400 ms, and the copy reaches the receiver at 450 ms after
    // the original. The original's ACK at 500 ms ends the transfer.
    let text = scenario(
        "workload = { kind = \"transfer\", segments = 1 }",
        "[[path.event]]\nkind = \"delay\"\nnth = 2\nby = \"300ms\"\n",
    );
    let (_t, dir) = run_text(&text, &[]);
    let r = rows(&dir, "base");
    assert_eq!(times(&r, "timeout"), ms(&[400]));
    assert_eq!(times(&r, "finished"), ms(&[500]));
    assert_eq!(metric(&summary(&dir), "base", "spurious_retransmissions"), 1.0);
}

#[test]
fn a_duplicated_segment_is_acknowledged_twice_without_a_retransmission() {
    // With a window of one, segment 0 (forward packet 2) leaves at 100 ms and arrives
    // twice at 150 ms: the receiver ACKs each copy, so two ACKs of 1 reach the sender at
    // 200 ms, the second a duplicate while segment 1 is out. A network copy is no
    // retransmission, so neither count moves.
    let text = scenario(
        "window = 1\nworkload = { kind = \"transfer\", segments = 2 }",
        "[[path.event]]\nkind = \"duplicate\"\nnth = 2\n",
    );
    let (_t, dir) = run_text(&text, &[]);
    let acks: Vec<(u64, String)> = trace(&dir, "base")
        .iter()
        .filter(|r| r["event"] == "ack")
        .map(|r| (((r["time_s"].parse::<f64>().unwrap()) * 1e3).round() as u64, r["segment"].clone()))
        .collect();
    let want: Vec<(u64, String)> =
        [(100, "0"), (200, "1"), (200, "1"), (300, "2")].iter().map(|(t, a)| (*t, a.to_string())).collect();
    assert_eq!(acks, want);
    let s = summary(&dir);
    assert_eq!(metric(&s, "base", "retransmissions"), 0.0);
    assert_eq!(metric(&s, "base", "spurious_retransmissions"), 0.0);
}

#[test]
fn a_scripted_workload_writes_at_its_times_and_finishes_when_closed_and_acknowledged() {
    // Two segments written 500 ms after the start go out at once (the handshake is long
    // over) and are acknowledged at 600 ms. Closed at 1 s, the connection is finished
    // then; closed at 550 ms, when the last ACK arrives.
    let text = format!(
        "{}\n[[variant]]\nname = \"late-close\"\n\n[[variant]]\nname = \"early-close\"\ntcp.workload = {{ kind = \
         \"script\", close = \"550ms\" }}\n",
        scenario("workload = { kind = \"script\", close = \"1s\" }\n[[tcp.write]]\nat = \"500ms\"\nsegments = 2\n", "",)
    );
    let (_t, dir) = run_text(&text, &[]);
    let late = rows(&dir, "late-close");
    assert_eq!(times(&late, "send"), ms(&[0, 500, 500]));
    assert_eq!(times(&late, "finished"), ms(&[1000]));
    assert_eq!(times(&rows(&dir, "early-close"), "finished"), ms(&[600]));
    assert_eq!(metric(&summary(&dir), "early-close", "transfer_time"), 0.6);
}

#[test]
fn bad_events_and_writes_are_refused_with_their_place_and_key() {
    let good = scenario("workload = { kind = \"transfer\", segments = 1 }", "");
    let err = refuse(&format!("{good}\n[[path.event]]\nkind = \"drop\"\nnth = 0\n"));
    assert!(err.contains("key `path.event[0].nth`") && err.contains("at least 1"), "{err}");
    assert!(err.contains("bad.toml:"), "{err}");
    let err = refuse(&format!("{good}\n[[path.event]]\nkind = \"drop\"\nnth = 1\nat = \"1s\"\n"));
    assert!(err.contains("key `path.event[0].at`") && err.contains("not both"), "{err}");
    let err = refuse(&format!("{good}\n[[path.event]]\nkind = \"teleport\"\n"));
    assert!(err.contains("path.event[0]") && err.contains("teleport"), "{err}");
    let err = refuse(&format!("{good}\n[[tcp.write]]\nat = \"1s\"\n"));
    assert!(err.contains("key `tcp.write`") && err.contains("script"), "{err}");
    let err = refuse(&scenario("workload = { kind = \"script\", close = \"1s\" }\n[[tcp.write]]\nat = \"2s\"\n", ""));
    assert!(err.contains("key `tcp.write[0].at`") && err.contains("after the close"), "{err}");
    let grpc = "name = \"g\"\nhorizon = \"10s\"\n[grpc]\nclients = 1\n[path]\nbase_rtt = \"100ms\"\n[[path.event]]\nkind = \
                \"icmp-unreachable\"\nat = \"1s\"\n";
    let err = refuse(grpc);
    assert!(err.contains("key `path.event[0].kind`") && err.contains("[tcp]"), "{err}");
}

#[test]
fn a_retransmission_refused_by_the_local_queue_retries_every_half_second_without_backing_off() {
    // One segment written at 1 s and lost on the path; from 1.1 s to 2.2 s the sender's
    // queue refuses everything. tcp_retransmit_timer at 1.3 s and 1.8 s: tcp_retransmit_skb fails, so the
    // timer is re-armed at TCP_RESOURCE_PROBE_INTERVAL (500 ms) and the RTO stays
    // 300 ms; at 2.3 s the queue takes the retransmission: backoff 1, ACK at 2.4 s.
    // The same window lost on the path instead backs off: 1.3 s, 1.9 s, then 3.1 s.
    let text = format!(
        "{}\n[[variant]]\nname = \"local\"\n\n[[variant]]\nname = \"on-the-path\"\npath.event = [{{ kind = \"drop\", \
         at = \"1s\", duration = \"1.2s\" }}]\n",
        scenario(
            "workload = { kind = \"script\" }\n[[tcp.write]]\nat = \"1s\"\n",
            "[[path.event]]\nkind = \"drop\"\nat = \"1s\"\nduration = \"50ms\"\n[[path.event]]\nkind = \"local-drop\"\nat = \
             \"1.1s\"\nduration = \"1.1s\"\n",
        ),
    );
    let (_t, dir) = run_text(&text, &[]);
    let local = rows(&dir, "local");
    assert_eq!(times(&local, "timeout"), ms(&[1300, 1800, 2300]));
    assert_eq!(times(&local, "retransmit"), ms(&[2300]));
    let backoffs: Vec<u32> = local.iter().filter(|r| r.1 == "timeout").map(|r| r.3).collect();
    assert_eq!(backoffs, [0, 0, 1]);
    assert_eq!(times(&local, "ack").last(), Some(&2_400_000));
    let path = rows(&dir, "on-the-path");
    assert_eq!(times(&path, "retransmit"), ms(&[1300, 1900, 3100]));
}

#[test]
fn new_data_refused_by_the_local_queue_waits_for_the_probe_timer() {
    // One segment written at 1 s while the sender's queue refuses everything until
    // 2.2 s: tcp_write_xmit fails and the data stays queued; tcp_check_probe_timer arms
    // PROBE0 for tcp_probe0_base = max(RTO 300 ms, TCP_RTO_MIN). tcp_send_probe0 at
    // 1.3 s and 1.8 s: tcp_write_wakeup refused, re-armed at TCP_RESOURCE_PROBE_INTERVAL;
    // at 2.3 s it sends the segment, ACKed at 2.4 s. No RTO fires, nothing backs off.
    let text = scenario(
        "workload = { kind = \"script\" }\n[[tcp.write]]\nat = \"1s\"\n",
        "[[path.event]]\nkind = \"local-drop\"\nat = \"1s\"\nduration = \"1.2s\"\n",
    );
    let (_t, dir) = run_text(&text, &[]);
    let local = rows(&dir, "base");
    assert_eq!(times(&local, "window_probe"), ms(&[1300, 1800]));
    assert_eq!(times(&local, "send"), ms(&[0, 2300]));
    assert_eq!(times(&local, "timeout"), ms(&[]));
    assert_eq!(times(&local, "ack").last(), Some(&2_400_000));
    assert!(local.iter().all(|r| r.3 == 0));
}
