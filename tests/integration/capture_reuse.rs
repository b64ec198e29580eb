//! `backoffsim rto capture` on two connections between the same two ends, one after the
//! other (a client reusing its port): listed apart, picked with `--flow A-B#N`, each
//! followed on its own, so the second's SYN is no `syn_timeout` of the first and its data
//! no retransmission.

use std::net::{IpAddr, Ipv4Addr};

use backoffsim_capture::synth::{self, DataLink, Packet};

use super::common::{run, text};

const C: (IpAddr, u16) = (IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)), 40000);
const S: (IpAddr, u16) = (IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)), 443);
const FLOW: &str = "10.0.0.1:40000-10.0.0.2:443";

/// From `t0` µs: a handshake on ISNs `isn` and `server_isn`, two segments of 1000 bytes,
/// each acked 100 ms after it left; with `close`, a FIN each way.
fn connection(t0: u64, isn: u32, server_isn: u32, close: bool) -> Vec<Packet> {
    let (i, j) = (|d: u32| isn.wrapping_add(d), |d: u32| server_isn.wrapping_add(d));
    let mut synack = Packet::new(t0 + 100_000, S, C, server_isn, i(1)).syn();
    synack.ack_flag = true;
    let mut p = vec![
        Packet::new(t0, C, S, isn, 0).syn(),
        synack,
        Packet::new(t0 + 100_000, C, S, i(1), j(1)),
        Packet::new(t0 + 200_000, C, S, i(1), j(1)).payload(1000),
        Packet::new(t0 + 300_000, S, C, j(1), i(1001)),
        Packet::new(t0 + 300_000, C, S, i(1001), j(1)).payload(1000),
        Packet::new(t0 + 400_000, S, C, j(1), i(2001)),
    ];
    if close {
        let mut fin = Packet::new(t0 + 400_000, C, S, i(2001), j(1));
        fin.fin = true;
        let mut fin_back = Packet::new(t0 + 500_000, S, C, j(1), i(2002));
        fin_back.fin = true;
        p.extend([fin, fin_back, Packet::new(t0 + 500_000, C, S, i(2002), j(2))]);
    }
    p
}

/// RFC 6298 from the connection's own first packet: the handshake's 100 ms, then each
/// segment's; the initial 1 s RTO, never doubled.
const FRESH: &str = "\
time_s,event,rtt_s,srtt_s,rttvar_s,rto_s,backoffs
0.100000,sample,0.100000,0.100000,0.050000,1.000000,0
0.100000,established,,0.100000,0.050000,1.000000,0
0.300000,sample,0.100000,0.100000,0.037500,1.000000,0
0.400000,sample,0.100000,0.100000,0.028125,1.000000,0
";

/// The same, and the FIN, which takes sequence space, timed by the ACK of it.
const FRESH_CLOSED: &str = "0.500000,sample,0.100000,0.100000,0.021094,1.000000,0\n";

fn capture(packets: &[Packet], args: &[&str]) -> std::process::Output {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("reuse.pcap");
    std::fs::write(&file, synth::pcap(DataLink::ETHERNET, packets)).unwrap();
    let mut all = vec!["rto", "capture", file.to_str().unwrap()];
    all.extend_from_slice(args);
    run(&all)
}

/// Both connections listed with their start, `--flow` without `#N` refused with the
/// two listed, and each picked by its number replayed from its own start.
fn two_connections_each_on_its_own(packets: &[Packet], second_start: &str, first_closed: bool) {
    let list = format!(
        "flow,start_s,packets,bytes,retransmissions_sender,retransmissions_receiver\n\
         {FLOW}#1,0.000000,{n1},2000,0,0\n\
         {FLOW}#2,{second_start},{n2},2000,0,0\n",
        n1 = packets.iter().filter(|p| p.time_us < 1_000_000 + 1_000_000).count(),
        n2 = packets.iter().filter(|p| p.time_us >= 1_000_000 + 1_000_000).count(),
    );
    let o = capture(packets, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), list);
    assert!(text(&o.stderr).contains("with the #N shown"), "{}", text(&o.stderr));

    let o = capture(packets, &["--flow", "10.0.0.2:443-10.0.0.1:40000"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(text(&o.stdout), list);
    let err = text(&o.stderr);
    assert!(err.contains("2 TCP connections between") && err.contains(&format!("--flow {FLOW}#N")), "{err}");

    for n in ["1", "2"] {
        let o = capture(packets, &["--flow", &format!("{FLOW}#{n}")]);
        assert!(o.status.success(), "#{n}: {}", text(&o.stderr));
        let rows = text(&o.stdout);
        assert!(
            !rows.contains("syn_timeout") && !rows.contains("timeout") && !rows.contains("retransmit"),
            "#{n}: {rows}"
        );
        let closed = if n == "1" && first_closed { FRESH_CLOSED } else { "" };
        assert_eq!(rows, format!("{FRESH}{closed}"), "#{n}");
    }

    let o = capture(packets, &["--flow", &format!("{FLOW}#3")]);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(err.contains("reuse.pcap") && err.contains("--flow #3") && err.contains("give #1 to #2"), "{err}");
}

/// Linux tcp_timewait_state_process: after a FIN each way, a SYN whose ISN is beyond the
/// old data (after tw_rcv_nxt) opens a new connection; here 0.6 s after the close.
#[test]
fn after_fin_both_ways_a_new_syn_is_a_second_connection_on_the_same_ends() {
    let mut packets = connection(1_000_000, 1000, 5000, true);
    packets.extend(connection(2_100_000, 90_000, 70_000, false));
    two_connections_each_on_its_own(&packets, "1.100000", true);
}

/// A client that crashed and came back on the same port 10 s later: no FIN, no reset, and
/// a new ISN only a little beyond the old one (Linux's ISNs for the same ends grow with the
/// clock, RFC 6528), so only the client's silence before its new SYN sets them apart.
#[test]
fn after_a_long_silence_without_fin_a_new_syn_is_a_second_connection_on_the_same_ends() {
    let mut packets = connection(1_000_000, 1000, 5000, false);
    packets.extend(connection(10_600_000, 3000, 70_000, false));
    two_connections_each_on_its_own(&packets, "9.600000", false);
}

/// Linux tcp_retransmit_timer sends the SYN again with its ISN: one connection, the
/// repeat a `syn_timeout`, `--flow` without `#N` taking it and `#1` as well.
#[test]
fn a_syn_sent_again_with_its_isn_stays_one_connection() {
    let mut packets = vec![Packet::new(0, C, S, 1000, 0).syn()];
    packets.extend(connection(1_000_000, 1000, 5000, true));
    let o = capture(&packets, &[]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("syn_timeout"), "{}", text(&o.stdout));
    assert_eq!(capture(&packets, &["--flow", FLOW]).stdout, o.stdout);
    assert_eq!(capture(&packets, &["--flow", &format!("{FLOW}#1")]).stdout, o.stdout);
    let o = capture(&packets, &["--flow", &format!("{FLOW}#2")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("leave out #2, or give #1"), "{}", text(&o.stderr));
}

/// With `--out`, the second connection's files are its own: trace.csv is what stdout gives.
#[test]
fn out_writes_the_chosen_connections_rows() {
    let mut packets = connection(1_000_000, 1000, 5000, true);
    packets.extend(connection(2_100_000, 90_000, 70_000, false));
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("reuse.pcap");
    std::fs::write(&file, synth::pcap(DataLink::ETHERNET, &packets)).unwrap();
    let dir = tmp.path().join("out");
    let flow = format!("{FLOW}#2");
    let o = run(&["rto", "capture", file.to_str().unwrap(), "--flow", &flow, "-q", "--out", dir.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(std::fs::read_to_string(dir.join("trace.csv")).unwrap(), FRESH);
    // The report says which of the two it is, and when it began.
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(report.contains("(`#2`: these two ends carried several connections"), "{report}");
    assert!(report.contains("this one began 1.1 s into the capture"), "{report}");
}
