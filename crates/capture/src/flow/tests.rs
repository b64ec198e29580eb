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
        sack: Default::default(),
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

fn key(a: (IpAddr, u16), b: (IpAddr, u16)) -> FlowKey {
    FlowKey::of(Endpoint { addr: a.0, port: a.1 }, Endpoint { addr: b.0, port: b.1 })
}

/// Segments numbered in order, as the reader numbers packets, for the port-reuse tests.
struct Script {
    segments: Vec<Segment>,
}

const MS: u64 = 1_000_000;

impl Script {
    fn new() -> Script {
        Script { segments: Vec::new() }
    }
    /// `flags` among `S`, `A`, `F`, `R`.
    fn send(&mut self, ms: u64, src: (IpAddr, u16), dst: (IpAddr, u16), seq: u32, len: u32, flags: &str) -> &mut Self {
        let mut s = seg(ms * MS, src, dst, seq, len, flags.contains('S'), flags.contains('A'));
        s.fin = flags.contains('F');
        s.rst = flags.contains('R');
        s.number = self.segments.len() as u64 + 1;
        self.segments.push(s);
        self
    }
    fn flows(&self) -> Flows {
        let mut flows = Flows::default();
        for s in &self.segments {
            flows.add(s);
        }
        flows.settle();
        flows
    }
    /// Each connection's packet numbers, by what [`Flow::holds`] says, as the second pass
    /// tells them apart.
    fn held(&self) -> Vec<Vec<u64>> {
        let flows = self.flows();
        let held: Vec<Vec<u64>> = flows
            .flows
            .values()
            .map(|f| self.segments.iter().filter(|s| f.holds(s)).map(|s| s.number).collect())
            .collect();
        // Every segment in exactly one connection.
        let mut all: Vec<u64> = held.concat();
        all.sort_unstable();
        assert_eq!(all, (1..=self.segments.len() as u64).collect::<Vec<_>>());
        held
    }
}

/// A client at 10.0.0.9:50000 opens with ISN `isn`, sends 100 bytes at `t` ms, acked.
fn opening(script: &mut Script, t: u64, isn: u32, server_isn: u32) {
    let (c, s) = (ep(9, 50000), ep(1, 80));
    script
        .send(t, c, s, isn, 0, "S")
        .send(t + 1, s, c, server_isn, 0, "SA")
        .send(t + 2, c, s, isn + 1, 0, "A")
        .send(t + 3, c, s, isn + 1, 100, "A")
        .send(t + 4, s, c, server_isn + 1, 0, "A");
}

/// Linux's tcp_retransmit_timer sends the same SYN again (tcp_retransmit_skb of the queued
/// SYN), so a repeated ISN is the same connect(), however long the wait.
#[test]
fn a_syn_sent_again_with_the_same_isn_stays_in_its_connection_however_late() {
    let (c, s) = (ep(9, 50000), ep(1, 80));
    let mut script = Script::new();
    script.send(0, c, s, 1000, 0, "S").send(1000, c, s, 1000, 0, "S").send(3000, c, s, 1000, 0, "S");
    script.send(7000, c, s, 1000, 0, "S").send(7001, s, c, 5000, 0, "SA");
    assert_eq!(script.held(), vec![vec![1, 2, 3, 4, 5]]);
}

/// Linux tcp_timewait_state_process: in TIME-WAIT, a SYN (no ACK) whose sequence number is
/// after tw_rcv_nxt is accepted as a new connection (RFC 1122 §4.2.2.13), here 50 ms
/// after the close, the new ISN only a little beyond the old data.
#[test]
fn after_fin_both_ways_a_syn_beyond_rcv_nxt_opens_a_new_connection_as_tcp_timewait_state_process_accepts() {
    let (c, s) = (ep(9, 50000), ep(1, 80));
    let mut script = Script::new();
    opening(&mut script, 0, 1000, 5000);
    script.send(10, c, s, 1101, 0, "FA").send(11, s, c, 5001, 0, "FA").send(12, c, s, 1102, 0, "A");
    opening(&mut script, 60, 1200, 9000);
    assert_eq!(script.held(), vec![(1..=8).collect::<Vec<u64>>(), (9..=13).collect()]);
    let flows = script.flows();
    let second = flows.between(key(c, s)).nth(1).unwrap();
    assert_eq!((second.ordinal, second.first_ns, second.packets(), second.bytes()), (2, 60 * MS, 5, 100));
    assert_eq!(second.sender.to_string(), "10.0.0.9:50000");
}

/// Linux tcp_timewait_state_process answers a SYN not after tw_rcv_nxt (and no newer
/// timestamp) with an ACK; the client's stack resets at that ACK (RFC 9293 §3.10.7.3,
/// SYN-SENT, an unacceptable ACK) and its SYN sent again opens the connection. The new
/// connection starts at the first SYN with the new ISN, the ACK and reset inside it.
#[test]
fn after_fin_both_ways_a_syn_below_rcv_nxt_still_opens_a_new_connection_with_its_ack_and_reset() {
    let (c, s) = (ep(9, 50000), ep(1, 80));
    let mut script = Script::new();
    opening(&mut script, 0, 1000, 5000);
    script.send(10, c, s, 1101, 0, "FA").send(11, s, c, 5001, 0, "FA").send(12, c, s, 1102, 0, "A");
    script.send(60, c, s, 500, 0, "S").send(61, s, c, 5002, 0, "A").send(62, c, s, 1102, 0, "R");
    script.send(1060, c, s, 500, 0, "S").send(1061, s, c, 9000, 0, "SA");
    assert_eq!(script.held(), vec![(1..=8).collect::<Vec<u64>>(), (9..=13).collect()]);
}

/// A reset ends the connection: the refused connect() that tries again, a new socket with a
/// new ISN (Linux tcp_reset, then tcp_v4_connect's fresh secure_tcp_seq).
#[test]
fn after_a_reset_a_syn_with_a_new_isn_opens_a_new_connection() {
    let (c, s) = (ep(9, 50000), ep(1, 80));
    let mut script = Script::new();
    script.send(0, c, s, 1000, 0, "S").send(1, s, c, 0, 0, "RA");
    script.send(5, c, s, 2000, 0, "S").send(6, s, c, 7000, 0, "SA");
    assert_eq!(script.held(), vec![vec![1, 2], vec![3, 4]]);
}

/// A client that crashed and came back on the same port: no FIN, no reset, the server still
/// sending into the silence; the client's own silence before its new SYN ends the old one.
#[test]
fn after_its_side_went_quiet_a_syn_with_a_new_isn_opens_a_new_connection_without_fin_or_reset() {
    let (c, s) = (ep(9, 50000), ep(1, 80));
    let mut script = Script::new();
    opening(&mut script, 0, 1000, 5000);
    script.send(10, s, c, 5001, 100, "A").send(300, s, c, 5001, 100, "A").send(900, s, c, 5001, 100, "A");
    script.send(1010, s, c, 5001, 100, "A");
    // 1.01 s after the client last sent, a new ISN close to the old one (not far).
    opening(&mut script, 1013, 1500, 9000);
    assert_eq!(script.held(), vec![(1..=9).collect::<Vec<u64>>(), (10..=14).collect()]);
    let flows = script.flows();
    let [first, second] = flows.between(key(c, s)).collect::<Vec<_>>()[..] else { panic!() };
    assert_eq!((first.retransmissions(), second.retransmissions()), ((3, 0), (0, 0)));
}

/// RFC 5961 §4.2: a SYN amid a synchronized connection gets a challenge ACK and opens
/// nothing; a stray SYN with another ISN, near the data and while its side is talking,
/// stays in the connection.
#[test]
fn amid_a_live_exchange_a_stray_syn_near_the_window_stays_in_the_connection() {
    let (c, s) = (ep(9, 50000), ep(1, 80));
    let mut script = Script::new();
    opening(&mut script, 0, 1000, 5000);
    script.send(20, c, s, 40_000, 0, "S").send(21, s, c, 5001, 0, "A").send(30, c, s, 1101, 100, "A");
    assert_eq!(script.held(), vec![(1..=8).collect::<Vec<u64>>()]);
}

/// RFC 7323 §2.3: no window exceeds 2^30 bytes, so a SYN farther than that from where its
/// side had got to is in none, and is a new socket even amid the exchange.
#[test]
fn a_syn_farther_than_any_window_rfc7323_allows_opens_a_new_connection_amid_an_exchange() {
    let (c, s) = (ep(9, 50000), ep(1, 80));
    let mut script = Script::new();
    opening(&mut script, 0, 1000, 5000);
    script.send(20, c, s, 1101 + reuse::FAR + 1, 0, "S");
    opening(&mut script, 21, 1101u32.wrapping_sub(reuse::FAR + 1), 9000);
    let held = script.held();
    assert_eq!(held, vec![(1..=5).collect::<Vec<u64>>(), vec![6], (7..=11).collect()]);
    // Just inside the bound it stays.
    let mut near = Script::new();
    opening(&mut near, 0, 1000, 5000);
    near.send(20, c, s, 1101 + reuse::FAR, 0, "S");
    assert_eq!(near.held().len(), 1);
}

/// RFC 9293 §3.5, Figure 8, simultaneous open: each side's SYN has its own ISN, and the
/// second is the same connection, not a new one.
#[test]
fn in_a_simultaneous_open_the_other_side_s_syn_stays_in_the_connection() {
    let (a, b) = (ep(9, 50000), ep(1, 80));
    let mut script = Script::new();
    script.send(0, a, b, 100, 0, "S").send(1, b, a, 300, 0, "S").send(2, a, b, 100, 0, "SA");
    script.send(3, b, a, 300, 0, "SA").send(4, a, b, 101, 10, "A");
    assert_eq!(script.held(), vec![vec![1, 2, 3, 4, 5]]);
}

/// A SYN-ACK answers; it never opens (RFC 9293 §3.5).
#[test]
fn a_syn_ack_with_another_isn_after_the_close_stays_in_the_connection() {
    let (c, s) = (ep(9, 50000), ep(1, 80));
    let mut script = Script::new();
    opening(&mut script, 0, 1000, 5000);
    script.send(10, c, s, 1101, 0, "RA").send(5000, s, c, 77, 0, "SA");
    assert_eq!(script.held().len(), 1);
}

#[test]
fn connections_between_the_same_ends_are_numbered_in_order_of_first_packet_each_pair_on_its_own() {
    let (c, s, other) = (ep(9, 50000), ep(1, 80), ep(3, 40000));
    let mut script = Script::new();
    opening(&mut script, 0, 1000, 5000);
    script.send(3, other, s, 1, 0, "S");
    script.send(10, c, s, 1101, 0, "RA");
    opening(&mut script, 20, 3000, 6000);
    script.send(25, s, other, 9, 0, "SA");
    let flows = script.flows();
    let ordinals: Vec<(String, u32)> =
        flows.flows.values().map(|f| (f.key.0.to_string() + "-" + &f.key.1.to_string(), f.ordinal)).collect();
    assert_eq!(
        ordinals,
        [
            ("10.0.0.1:80-10.0.0.3:40000".into(), 1),
            ("10.0.0.1:80-10.0.0.9:50000".into(), 1),
            ("10.0.0.1:80-10.0.0.9:50000".into(), 2)
        ]
    );
    assert_eq!(flows.between(key(other, s)).count(), 1);
    assert_eq!(script.held().len(), 3);
    assert_eq!(flows.origin_ns, Some(0));
}

/// A file written backwards (records reversed, a merge gone wrong): the SYN comes after the
/// FINs in the file but is stamped before the connection's first packet, so it opens
/// nothing.
#[test]
fn a_syn_stamped_before_the_connection_began_opens_nothing_whatever_its_place_in_the_file() {
    let mut script = Script::new();
    opening(&mut script, 0, 1000, 5000);
    let (c, s) = (ep(9, 50000), ep(1, 80));
    script.send(10, c, s, 1101, 0, "FA").send(11, s, c, 5001, 0, "FA").send(12, c, s, 1102, 0, "A");
    let mut reversed = Script::new();
    for seg in script.segments.iter().rev() {
        reversed.segments.push(Segment { number: reversed.segments.len() as u64 + 1, ..seg.clone() });
    }
    assert_eq!(reversed.held().len(), 1);
}
