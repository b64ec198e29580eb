use std::net::{IpAddr, Ipv4Addr};

use super::*;

fn ep(last: u8, port: u16) -> (IpAddr, u16) {
    (IpAddr::V4(Ipv4Addr::new(10, 0, 0, last)), port)
}

fn seg(t: u64, src: (IpAddr, u16), dst: (IpAddr, u16), seq: u32, len: u32, syn: bool, ack: bool) -> Segment {
    Segment {
        time_ns: t,
        number: 0,
        src,
        dst,
        seq,
        ack: 0,
        syn,
        ack_flag: ack,
        fin: false,
        rst: false,
        len,
        timestamps: None,
    }
}

#[test]
fn both_directions_share_one_flow_and_the_syn_sender_is_the_sender() {
    // The server (10.0.0.1) sorts first, yet the client sent the SYN.
    let (c, s) = (ep(9, 50000), ep(1, 80));
    let mut flows = Flows::default();
    flows.add(&seg(1, c, s, 0, 0, true, false));
    flows.add(&seg(2, s, c, 0, 0, true, true));
    flows.add(&seg(3, c, s, 1, 100, false, true));
    assert_eq!(flows.flows.len(), 1);
    let flow = flows.flows.values().next().unwrap();
    assert_eq!(flow.sender.to_string(), "10.0.0.9:50000");
    assert_eq!(flow.receiver().to_string(), "10.0.0.1:80");
    assert_eq!((flow.packets(), flow.bytes(), flow.first_ns), (3, 100, 1));
}

#[test]
fn without_a_syn_the_first_side_to_send_data_is_the_sender() {
    let (a, b) = (ep(1, 80), ep(2, 50000));
    let mut flows = Flows::default();
    flows.add(&seg(1, a, b, 5, 0, false, true)); // a bare ACK decides nothing
    flows.add(&seg(2, b, a, 7, 10, false, true));
    assert_eq!(flows.flows.values().next().unwrap().sender.to_string(), "10.0.0.2:50000");
}

/// A data segment whose range was sent before is a retransmission, counted per side.
#[test]
fn a_data_segment_sent_again_counts_as_a_retransmission_of_its_side() {
    let (c, s) = (ep(1, 50000), ep(2, 80));
    let mut flows = Flows::default();
    flows.add(&seg(1, c, s, 0, 0, true, false));
    flows.add(&seg(2, c, s, 1, 100, false, true));
    flows.add(&seg(3, c, s, 101, 100, false, true));
    flows.add(&seg(4, c, s, 1, 100, false, true)); // again
    flows.add(&seg(5, c, s, 0, 0, true, false)); // a SYN again carries no data
    flows.add(&seg(6, s, c, 0, 0, false, true));
    let flow = flows.flows.values().next().unwrap();
    assert_eq!(flow.retransmissions(), (1, 0));
    assert_eq!(flow.bytes(), 300);
}

/// RFC 9293 §3.4: sequence numbers are compared modulo 2^32.
#[test]
fn sequence_numbers_unwrap_across_the_32_bit_wrap() {
    let mut u = Unwrap::new(u32::MAX - 99);
    assert_eq!(u.at(u32::MAX - 99), 0);
    assert_eq!(u.at(0), 100);
    assert_eq!(u.at(1000), 1100);
    assert_eq!(u.at(u32::MAX - 49), 50); // an older number, before the wrap
    let (c, s) = (ep(1, 50000), ep(2, 80));
    let mut flows = Flows::default();
    flows.add(&seg(1, c, s, u32::MAX - 99, 100, false, true));
    flows.add(&seg(2, c, s, 0, 100, false, true));
    flows.add(&seg(3, c, s, u32::MAX - 99, 100, false, true));
    assert_eq!(flows.flows.values().next().unwrap().retransmissions(), (1, 0));
}

#[test]
fn endpoints_parse_and_print_both_families() {
    for text in ["10.0.0.1:443", "[2001:db8::1]:443"] {
        assert_eq!(text.parse::<Endpoint>().unwrap().to_string(), text);
    }
    assert!("10.0.0.1".parse::<Endpoint>().unwrap_err().contains(":PORT"));
    assert!("10.0.0.1:99999".parse::<Endpoint>().unwrap_err().contains("not a port"));
    assert!("host:1".parse::<Endpoint>().unwrap_err().contains("not an IPv4 or IPv6"));
}

#[test]
fn settled_the_sender_is_the_side_that_carried_more_data_so_a_download_reads_from_the_server() {
    // The client opens and sends a 100-byte request; the server answers with 3,000 bytes.
    let (c, s) = (ep(9, 50000), ep(1, 80));
    let mut flows = Flows::default();
    flows.add(&seg(1, c, s, 0, 0, true, false));
    flows.add(&seg(2, s, c, 0, 0, true, true));
    flows.add(&seg(3, c, s, 1, 100, false, true));
    flows.add(&seg(4, s, c, 1, 1500, false, true));
    flows.add(&seg(5, s, c, 1501, 1500, false, true));
    assert_eq!(flows.flows.values().next().unwrap().sender.to_string(), "10.0.0.9:50000");
    flows.settle();
    let flow = flows.flows.values().next().unwrap();
    assert_eq!((flow.sender.to_string(), flow.receiver().to_string()), ("10.0.0.1:80".into(), "10.0.0.9:50000".into()));
    // A tie keeps the side that opened.
    let mut even = Flows::default();
    even.add(&seg(1, c, s, 0, 0, true, false));
    even.add(&seg(2, c, s, 1, 100, false, true));
    even.add(&seg(3, s, c, 1, 100, false, true));
    even.settle();
    assert_eq!(even.flows.values().next().unwrap().sender.to_string(), "10.0.0.9:50000");
}
