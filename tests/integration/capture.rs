//! `backoffsim rto capture`: a connection read from a packet capture, replayed from its
//! sender's side, end to end. The captures are written by the test, byte by byte.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use backoffsim_capture::synth::{self, DataLink, Packet};

use super::common::{run, text};

const C: (IpAddr, u16) = (IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)), 40000);
const S: (IpAddr, u16) = (IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)), 443);

/// A handshake, two segments, an ACK, one retransmission after 1 s of silence, its ACK.
fn exchange(c: (IpAddr, u16), s: (IpAddr, u16), isn: u32) -> Vec<Packet> {
    let i = |d: u32| isn.wrapping_add(d);
    let mut synack = Packet::new(1_100_000, s, c, 5000, i(1)).syn();
    synack.ack_flag = true;
    vec![
        Packet::new(1_000_000, c, s, isn, 0).syn(),
        synack,
        Packet::new(1_100_000, c, s, i(1), 5001),
        Packet::new(1_200_000, c, s, i(1), 5001).payload(1000),
        Packet::new(1_200_000, c, s, i(1001), 5001).payload(1000),
        Packet::new(1_300_000, s, c, 5001, i(1001)),
        Packet::new(2_300_000, c, s, i(1001), 5001).payload(1000),
        Packet::new(2_400_000, s, c, 5001, i(2001)),
    ]
}

/// RFC 6298: 100 ms from the handshake (2.2, RTO floored at 1 s), 100 ms from the
/// segment timed at 0.2 s (2.3), then 1 s after the last ACK the head again: the timer
/// (5.5, doubled); its ACK is ambiguous (Karn, §3) and gives no sample.
const EXCHANGE: &str = "\
time_s,event,rtt_s,srtt_s,rttvar_s,rto_s,backoffs
0.100000,sample,0.100000,0.100000,0.050000,1.000000,0
0.100000,established,,0.100000,0.050000,1.000000,0
0.300000,sample,0.100000,0.100000,0.037500,1.000000,0
1.300000,timeout,,0.100000,0.037500,2.000000,1
";

fn capture(bytes: &[u8], args: &[&str]) -> std::process::Output {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("capture.pcap");
    std::fs::write(&file, bytes).unwrap();
    let mut all = vec!["rto", "capture", file.to_str().unwrap()];
    all.extend_from_slice(args);
    run(&all)
}

#[test]
fn one_connection_on_ethernet_gives_its_samples_and_its_timeout() {
    let o = capture(&synth::pcap(DataLink::ETHERNET, &exchange(C, S, 1000)), &[]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), EXCHANGE);
}

#[test]
fn linux_cooked_captures_and_a_sequence_wrap_give_the_same_rows() {
    for (link, isn) in [
        (DataLink::LINUX_SLL, 1000),
        (DataLink::LINUX_SLL2, u32::MAX - 1200),
        (DataLink::RAW, u32::MAX),
        // A capture on macOS's lo0: BSD loopback, either byte order of its family word.
        (DataLink::NULL, 1000),
        (DataLink::LOOP, 1000),
    ] {
        let o = capture(&synth::pcap(link, &exchange(C, S, isn)), &[]);
        assert!(o.status.success(), "{link:?}: {}", text(&o.stderr));
        assert_eq!(text(&o.stdout), EXCHANGE, "{link:?}, ISN {isn}");
    }
}

#[test]
fn ipv6_in_pcapng_gives_the_same_rows() {
    let c6 = (IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1)), 40000);
    let s6 = (IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 2)), 443);
    let packets: Vec<(u32, Packet)> = exchange(c6, s6, 7).into_iter().map(|p| (0, p)).collect();
    let o = capture(
        &synth::pcapng(&[(DataLink::ETHERNET, 9)], &packets),
        &["--flow", "[2001:db8::2]:443-[2001:db8::1]:40000"],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), EXCHANGE);
}

#[test]
fn two_connections_are_listed_and_one_is_chosen_with_flow() {
    let other = (IpAddr::V4(Ipv4Addr::new(10, 0, 0, 3)), 50000);
    let mut packets = exchange(C, S, 1000);
    packets.push(Packet::new(2_500_000, other, S, 1, 0).syn());
    let bytes = synth::pcap(DataLink::ETHERNET, &packets);
    let o = capture(&bytes, &[]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o.stdout),
        "flow,start_s,packets,bytes,retransmissions_sender,retransmissions_receiver\n\
         10.0.0.1:40000-10.0.0.2:443,0.000000,8,3000,1,0\n\
         10.0.0.3:50000-10.0.0.2:443,1.500000,1,0,0,0\n"
    );
    assert!(text(&o.stderr).contains("2 TCP connections") && text(&o.stderr).contains("--flow"), "{}", text(&o.stderr));
    let o = capture(&bytes, &["--flow", "10.0.0.2:443-10.0.0.1:40000"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), EXCHANGE);
    let o = capture(&bytes, &["--flow", "10.0.0.9:1-10.0.0.2:443"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("no TCP connection between"), "{}", text(&o.stderr));
}

#[test]
fn a_truncated_file_is_refused_naming_the_packet() {
    let mut bytes = synth::pcap(DataLink::ETHERNET, &exchange(C, S, 1000));
    bytes.truncate(bytes.len() - 20);
    let o = capture(&bytes, &[]);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(err.contains("capture.pcap: packet 8") && err.contains("truncated"), "{err}");
}

#[test]
fn a_file_that_is_not_a_capture_is_refused_with_what_was_expected() {
    let o = capture(b"time_s,event,rtt_s\n", &[]);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(err.contains("capture.pcap: not a capture") && err.contains("pcapng (0a0d0d0a)"), "{err}");
}

#[test]
fn a_capture_without_tcp_says_so() {
    // A UDP datagram on raw IPv4: protocol 17.
    let mut ip = Packet::new(0, C, S, 0, 0).ip_bytes();
    ip[9] = 17;
    let len = ip.len() as u32;
    let w = synth::pcap_frames(DataLink::RAW, &[(0, ip, len)]);
    let o = capture(&w, &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("no TCP segment") && text(&o.stderr).contains("1 other packets skipped"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn a_capture_on_a_link_type_not_read_names_it() {
    // IEEE 802.11 (105): its frames are skipped, and the error says that is why.
    let o = capture(&synth::pcap(DataLink::IEEE802_11, &exchange(C, S, 1000)), &[]);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(err.contains("other packets skipped; link type 105 is not read: Ethernet (1)"), "{err}");
}

#[test]
fn a_pipe_is_refused_before_anything_is_printed() {
    // The file is read twice; a pipe's second reading would find it empty.
    use std::io::Write;
    let bytes = synth::pcap(DataLink::ETHERNET, &exchange(C, S, 1000));
    for name in ["/dev/stdin", "-"] {
        let mut child = super::common::bin()
            .args(["rto", "capture", name, "-q"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // The command may refuse before reading: a closed pipe is no failure here.
        let _ = child.stdin.take().unwrap().write_all(&bytes);
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{name}");
        assert!(o.stdout.is_empty(), "{name}: {}", text(&o.stdout));
        let err = text(&o.stderr);
        assert!(err.contains("reads its file twice") && err.contains("tcpdump -w FILE"), "{name}: {err}");
    }
}

#[test]
fn help_names_the_formats_and_the_flow_syntax() {
    let o = run(&["rto", "capture", "--help"]);
    assert!(o.status.success());
    let help = text(&o.stdout);
    assert!(help.contains("pcapng") && help.contains("A:PORT-B:PORT") && help.contains("Linux cooked"), "{help}");
    assert!(help.contains("A:PORT-B:PORT[#N]") && help.contains("10.0.0.1:40000-10.0.0.2:443#2"), "{help}");
}
