//! The same exchange read from its data sender's side, once as an upload (the sender
//! opened the connection) and once as a download (the sender answered it): the rows must
//! not depend on which side sent the SYN. The handshake times the connection either
//! way: Linux from the SYN (`tcp_clean_rtx_queue`) or the SYN-ACK (`tcp_synack_rtt_meas`),
//! RFC 6298 §2.2 from whichever SYN the sender sent.

use std::net::{IpAddr, Ipv4Addr};
use std::path::Path;

use backoffsim_capture::sender_view::SenderView;
use backoffsim_capture::synth::{self, Packet};
use backoffsim_core::model::rto::{RtoConfig, RtoProfile};
use pcap_file::DataLink;

const SND: (IpAddr, u16) = (IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)), 40000);
const RCV: (IpAddr, u16) = (IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)), 443);

/// As captured at the sender: a 100 ms handshake, three segments, the first ACKed, the
/// next head sent again after silence twice (the timer), recovered, then a segment sent
/// again 5 ms after an ACK (not the timer).
fn exchange(download: bool) -> Vec<Packet> {
    let (s, r) = (1000u32, 5000u32);
    let mut hs = if download {
        let mut synack = Packet::new(0, SND, RCV, s, r + 1).syn();
        synack.ack_flag = true;
        vec![Packet::new(0, RCV, SND, r, 0).syn(), synack, Packet::new(100_000, RCV, SND, r + 1, s + 1)]
    } else {
        let mut synack = Packet::new(100_000, RCV, SND, r, s + 1).syn();
        synack.ack_flag = true;
        vec![Packet::new(0, SND, RCV, s, 0).syn(), synack, Packet::new(100_000, SND, RCV, s + 1, r + 1)]
    };
    let data = |ms: u64, off: u32| Packet::new(ms * 1000, SND, RCV, s + 1 + off, r + 1).payload(1000);
    let ack = |ms: u64, off: u32| Packet::new(ms * 1000, RCV, SND, r + 1, s + 1 + off);
    hs.extend([
        data(110, 0),
        data(110, 1000),
        data(110, 2000),
        ack(210, 1000),
        data(1300, 1000),
        data(3400, 1000),
        ack(3500, 3000),
        data(3600, 3000),
        data(3600, 4000),
        ack(3700, 4000),
        data(3705, 4000),
        ack(3800, 5000),
    ]);
    hs
}

fn rows(download: bool, profile: RtoProfile) -> String {
    let bytes = synth::pcap(DataLink::ETHERNET, &exchange(download));
    let (segments, flows, error) = synth::read_all(Path::new("exchange.pcap"), &bytes);
    assert!(error.is_none() && flows.flows.len() == 1, "{error:?}");
    let flow = flows.flows.values().next().unwrap();
    assert_eq!((flow.sender.addr, flow.sender.port), SND, "the side with the data is the sender");
    let params = RtoConfig { profile, ..RtoConfig::default() }.resolve().unwrap();
    let mut view = SenderView::new(flow.sender, flow.receiver(), flow.first_ns, &params, Vec::new()).unwrap();
    for seg in &segments {
        view.add(seg).unwrap();
    }
    String::from_utf8(view.finish().unwrap().0).unwrap()
}

fn events(csv: &str) -> Vec<(&str, &str)> {
    csv.lines().skip(1).map(|l| l.split(',').collect::<Vec<_>>()).map(|f| (f[0], f[1])).collect()
}

#[test]
fn a_download_and_an_upload_of_the_same_exchange_give_the_same_rows() {
    for profile in [RtoProfile::Rfc6298, RtoProfile::Linux] {
        let (up, down) = (rows(false, profile), rows(true, profile));
        assert_eq!(down, up, "{profile:?}");
        let ev = events(&up);
        assert_eq!(&ev[..2], [("0.100000", "sample"), ("0.100000", "established")], "{profile:?}: {up}");
        // Both profiles' timers expire by 1.09 s after the ACK at 0.21 s (linux at 0.3 s,
        // rfc6298 at its 1 s floor) and by 2.1 s after that.
        let timed: Vec<_> = ev.iter().filter(|e| e.1 != "sample").collect();
        assert_eq!(
            timed,
            [
                &("0.100000", "established"),
                &("1.300000", "timeout"),
                &("3.400000", "timeout"),
                &("3.705000", "retransmit")
            ],
            "{profile:?}: {up}"
        );
    }
}
