use std::net::{Ipv4Addr, Ipv6Addr};

use super::*;
use crate::synth::{self, Packet};

const A: (IpAddr, u16) = (IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)), 40000);
const B: (IpAddr, u16) = (IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)), 443);

fn write(bytes: &[u8]) -> tempfile::NamedTempFile {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    std::io::Write::write_all(&mut f, bytes).unwrap();
    f
}

fn read_all(path: &Path) -> (Vec<Segment>, u64) {
    let mut cap = Capture::open(path).unwrap();
    let mut out = Vec::new();
    while let Some(s) = cap.next_segment() {
        out.push(s.unwrap());
    }
    (out, cap.skipped)
}

fn three() -> Vec<Packet> {
    vec![
        Packet::new(1_000_000, A, B, 100, 0).syn(),
        Packet::new(1_010_000, B, A, 900, 101).syn(),
        Packet::new(1_020_000, A, B, 101, 901).payload(1000),
    ]
}

#[test]
fn a_pcap_on_ethernet_yields_its_tcp_segments_with_times_flags_and_lengths() {
    let f = write(&synth::pcap(DataLink::ETHERNET, &three()));
    let (segs, skipped) = read_all(f.path());
    assert_eq!(skipped, 0);
    assert_eq!(segs.len(), 3);
    assert_eq!((segs[0].time_ns, segs[0].number, segs[0].syn, segs[0].ack_flag), (1_000_000_000, 1, true, false));
    assert_eq!((segs[1].src, segs[1].seq, segs[1].ack, segs[1].seq_len()), (B, 900, 101, 1));
    assert_eq!((segs[2].len, segs[2].time_ns, segs[2].number), (1000, 1_020_000_000, 3));
}

#[test]
fn linux_cooked_v1_and_v2_and_raw_ip_read_the_same_segments() {
    let eth = read_all(write(&synth::pcap(DataLink::ETHERNET, &three())).path()).0;
    for link in [DataLink::LINUX_SLL, DataLink::LINUX_SLL2, DataLink::RAW] {
        assert_eq!(read_all(write(&synth::pcap(link, &three())).path()).0, eth, "{link:?}");
    }
}

#[test]
fn ipv6_segments_carry_their_addresses_and_the_payload_length_from_the_header() {
    let a6 = (IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1)), 5000);
    let b6 = (IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 2)), 80);
    let p = Packet::new(5, a6, b6, 7, 9).payload(1400).ts(11, 22);
    let (segs, _) = read_all(write(&synth::pcap(DataLink::ETHERNET, &[p])).path());
    assert_eq!((segs[0].src, segs[0].dst, segs[0].len, segs[0].timestamps), (a6, b6, 1400, Some((11, 22))));
}

/// A snap length cuts the payload, not the segment: the length is the IP header's.
#[test]
fn a_payload_cut_by_the_snap_length_still_counts_its_whole_length() {
    let p = Packet::new(5, A, B, 7, 9).payload(1448).ts(1, 2).snap(0);
    let (segs, _) = read_all(write(&synth::pcap(DataLink::ETHERNET, &[p])).path());
    assert_eq!((segs[0].len, segs[0].timestamps), (1448, Some((1, 2))));
}

/// pcapng §4.2: each interface has its link type and `if_tsresol` (here 10^-9 and 10^-3).
#[test]
fn pcapng_reads_each_interfaces_link_type_and_timestamp_resolution() {
    let bytes = synth::pcapng(
        &[(DataLink::ETHERNET, 9), (DataLink::LINUX_SLL, 3)],
        &[(0, Packet::new(2_500_000, A, B, 1, 0).syn()), (1, Packet::new(3_000_000, B, A, 5, 2).syn())],
    );
    let (segs, _) = read_all(write(&bytes).path());
    assert_eq!(segs.len(), 2);
    assert_eq!((segs[0].time_ns, segs[0].src), (2_500_000_000, A));
    assert_eq!((segs[1].time_ns, segs[1].src), (3_000_000_000, B));
    // Block numbers count the section and interface blocks too.
    assert_eq!((segs[0].number, segs[1].number), (4, 5));
}

#[test]
fn a_packet_that_is_not_tcp_is_skipped_and_counted() {
    // A TCP segment, then an ARP frame (EtherType 0x0806).
    let tcp = three()[0].frame(DataLink::ETHERNET);
    let mut arp = vec![0xff; 6];
    arp.extend_from_slice(&[2, 0, 0, 0, 0, 1, 0x08, 0x06]);
    arp.extend_from_slice(&[0; 28]);
    let bytes = synth::pcap_frames(DataLink::ETHERNET, &[(0, tcp.clone(), tcp.len() as u32), (1, arp, 42)]);
    let (segs, skipped) = read_all(write(&bytes).path());
    assert_eq!((segs.len(), skipped), (1, 1));
}

#[test]
fn a_file_cut_inside_a_packet_is_an_error_naming_the_file_and_packet() {
    let mut bytes = synth::pcap(DataLink::ETHERNET, &three());
    bytes.truncate(bytes.len() - 10);
    let f = write(&bytes);
    let mut cap = Capture::open(f.path()).unwrap();
    assert!(cap.next_segment().unwrap().is_ok());
    assert!(cap.next_segment().unwrap().is_ok());
    let err = cap.next_segment().unwrap().unwrap_err().to_string();
    assert!(err.contains(&f.path().display().to_string()) && err.contains("packet 3"), "{err}");
    assert!(err.contains("truncated"), "{err}");
}

#[test]
fn a_file_with_the_wrong_magic_is_refused_with_what_was_expected() {
    let f = write(b"time_s,event\n1,sample\n");
    let err = Capture::open(f.path()).err().unwrap().to_string();
    assert!(err.contains("not a capture") && err.contains("74696d65") && err.contains("pcapng"), "{err}");
    let empty = write(b"");
    let err = Capture::open(empty.path()).err().unwrap().to_string();
    assert!(err.contains("empty"), "{err}");
}

#[test]
fn a_bad_pcapng_block_is_an_error_not_a_panic() {
    let mut bytes = synth::pcapng(&[(DataLink::ETHERNET, 6)], &[(0, Packet::new(1, A, B, 1, 0))]);
    // The enhanced packet block (type 6) gets an interface id that names no interface.
    let at = bytes.windows(4).rposition(|w| w == [6, 0, 0, 0]).unwrap();
    bytes[at + 8] = 7;
    let f = write(&bytes);
    let mut cap = Capture::open(f.path()).unwrap();
    let err = cap.next_segment().unwrap().unwrap_err().to_string();
    assert!(err.contains("interface 7"), "{err}");
}

/// pcapng §4.2 `if_tsresol`: bit 7 clear, 10^-n seconds; set, 2^-n; absent, 10^-6.
#[test]
fn timestamp_resolution_follows_if_tsresol() {
    assert_eq!(units_per_sec(&[]), 1_000_000);
    assert_eq!(units_per_sec(&[InterfaceDescriptionOption::IfTsResol(9)]), 1_000_000_000);
    assert_eq!(units_per_sec(&[InterfaceDescriptionOption::IfTsResol(0x80 | 10)]), 1024);
    assert_eq!(units_per_sec(&[InterfaceDescriptionOption::IfTsResol(0x7f)]), u64::MAX);
}

/// Whatever byte is damaged, reading ends in segments or a typed error, never a panic.
#[test]
fn a_damaged_byte_anywhere_never_panics() {
    let pcap = synth::pcap(DataLink::ETHERNET, &three());
    let ng = synth::pcapng(&[(DataLink::LINUX_SLL, 6)], &three().into_iter().map(|p| (0, p)).collect::<Vec<_>>());
    for bytes in [pcap, ng] {
        let (mut refused, mut read) = (0, 0);
        for at in 0..bytes.len() {
            for value in [0x00, 0xff, 0x7f] {
                let mut damaged = bytes.clone();
                damaged[at] = value;
                let f = write(&damaged);
                let Ok(mut cap) = Capture::open(f.path()) else {
                    refused += 1;
                    continue;
                };
                let mut n = 0;
                while let Some(s) = cap.next_segment() {
                    n += 1;
                    if s.is_err() {
                        refused += 1;
                        break;
                    }
                    assert!(n <= 3, "byte {at} = {value:#x}: more segments than packets");
                }
                read += 1;
            }
        }
        // Damage to the headers is caught; damage to a payload byte is read through.
        assert!(refused > 0 && read > 0, "refused {refused}, read {read}");
    }
}

/// The fuzz target and the hostile-capture sweep read bytes, not files: the same reader.
#[test]
fn a_capture_read_from_bytes_yields_what_its_file_yields_and_errors_name_the_given_name() {
    let bytes = synth::pcapng(&[(DataLink::ETHERNET, 6)], &three().into_iter().map(|p| (0, p)).collect::<Vec<_>>());
    let f = write(&bytes);
    let mut cap = Capture::from_reader(Path::new("in-memory.pcapng"), std::io::Cursor::new(bytes.clone())).unwrap();
    let mut from_bytes = Vec::new();
    while let Some(s) = cap.next_segment() {
        from_bytes.push(s.unwrap());
    }
    assert_eq!(from_bytes, read_all(f.path()).0);
    let cut = bytes[..bytes.len() - 3].to_vec();
    let mut cap = Capture::from_reader(Path::new("in-memory.pcapng"), std::io::Cursor::new(cut)).unwrap();
    let e = std::iter::from_fn(|| cap.next_segment()).find_map(Result::err).unwrap().to_string();
    assert!(e.starts_with("in-memory.pcapng: block "), "{e}");
    let e = Capture::from_reader(Path::new("x.bin"), std::io::Cursor::new(b"ab".to_vec())).err().unwrap().to_string();
    assert!(e.starts_with("x.bin: not a capture: the file starts with 6162"), "{e}");
}

#[test]
fn a_file_cut_inside_its_header_says_so() {
    let pcap = synth::pcap(DataLink::ETHERNET, &three());
    let f = write(&pcap[..20]);
    let err = Capture::open(f.path()).err().expect("refused").to_string();
    assert!(err.contains("bad pcap header: the file ends inside its 24-byte file header"), "{err}");
}

#[test]
fn rfc2883_4_a_first_block_below_the_ack_or_within_the_second_is_a_dsack() {
    // RFC 2883 §4.1.1: ACK 4000, first block 3000-3500 below it.
    assert_eq!(sack_blocks(4000, (3000, 3500), None), SackOption::Dsack { end: 3500 });
    // §4.1.3: ACK 1000, first block 3000-3500 within the second, 3000-4000.
    assert_eq!(sack_blocks(1000, (3000, 3500), Some((3000, 4000))), SackOption::Dsack { end: 3500 });
    // An ordinary SACK above the ACK, and one across the sequence wrap.
    assert_eq!(sack_blocks(1000, (3000, 3500), Some((5000, 6000))), SackOption::Blocks);
    assert_eq!(sack_blocks(u32::MAX - 10, (5, 100), None), SackOption::Blocks);
    assert_eq!(sack_blocks(5, (u32::MAX - 100, u32::MAX - 10), None), SackOption::Dsack { end: u32::MAX - 10 });
}
