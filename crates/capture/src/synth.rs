//! Small synthetic captures, written byte by byte, for tests and examples: a capture of a
//! hand-written exchange whose every number is known. And the whole read path on bytes
//! ([`read_all`], [`replay_all`]), which the tests and the fuzz target drive.

use std::borrow::Cow;
use std::io::Write;
use std::net::IpAddr;
use std::time::Duration;

use backoffsim_core::model::rto::{RtoConfig, RtoProfile};
pub use pcap_file::DataLink;
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::pcapng::PcapNgWriter;
use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketBlock;
use pcap_file::pcapng::blocks::interface_description::{InterfaceDescriptionBlock, InterfaceDescriptionOption};

use crate::flow::Flows;
use crate::reader::{Capture, CaptureError, Segment};
use crate::sender_view::{Observer, SenderView};
use crate::stall::Stall;

/// The SACK option a synthetic segment carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SynthSack {
    #[default]
    None,
    Permitted,
    Block(u32, u32),
}

/// One TCP segment to write.
#[derive(Clone, Debug)]
pub struct Packet {
    pub time_us: u64,
    pub src: (IpAddr, u16),
    pub dst: (IpAddr, u16),
    pub seq: u32,
    pub ack: u32,
    pub syn: bool,
    pub ack_flag: bool,
    pub fin: bool,
    pub len: u16,
    pub timestamps: Option<(u32, u32)>,
    /// SACK-permitted (a SYN's) or one SACK block (left, right) to write.
    pub sack: SynthSack,
    /// Keep at most this many payload bytes in the file (a snap length).
    pub snap: Option<u16>,
}

impl Packet {
    pub fn new(time_us: u64, src: (IpAddr, u16), dst: (IpAddr, u16), seq: u32, ack: u32) -> Packet {
        Packet {
            time_us,
            src,
            dst,
            seq,
            ack,
            syn: false,
            ack_flag: ack != 0,
            fin: false,
            len: 0,
            timestamps: None,
            sack: SynthSack::None,
            snap: None,
        }
    }
    pub fn syn(mut self) -> Packet {
        self.syn = true;
        self
    }
    pub fn payload(mut self, len: u16) -> Packet {
        self.len = len;
        self
    }
    pub fn ts(mut self, val: u32, ecr: u32) -> Packet {
        self.timestamps = Some((val, ecr));
        self
    }
    /// SACK-permitted (RFC 2018 §2), as a SYN offering SACK carries it.
    pub fn sack_permitted(mut self) -> Packet {
        self.sack = SynthSack::Permitted;
        self
    }
    /// One SACK block (RFC 2018 §3).
    pub fn sack_block(mut self, left: u32, right: u32) -> Packet {
        self.sack = SynthSack::Block(left, right);
        self
    }
    pub fn snap(mut self, keep: u16) -> Packet {
        self.snap = Some(keep);
        self
    }

    /// The IP packet (v4 or v6 by the source address), payload zeros, cut to `snap`.
    pub fn ip_bytes(&self) -> Vec<u8> {
        let mut tcp = Vec::new();
        let mut opts = Vec::new();
        if let Some((val, ecr)) = self.timestamps {
            opts.extend_from_slice(&[1, 1, 8, 10]);
            opts.extend_from_slice(&val.to_be_bytes());
            opts.extend_from_slice(&ecr.to_be_bytes());
        }
        match self.sack {
            SynthSack::None => {}
            SynthSack::Permitted => opts.extend_from_slice(&[1, 1, 4, 2]),
            SynthSack::Block(l, r) => {
                opts.extend_from_slice(&[1, 1, 5, 10]);
                opts.extend_from_slice(&l.to_be_bytes());
                opts.extend_from_slice(&r.to_be_bytes());
            }
        }
        let header_len = 20 + opts.len();
        tcp.extend_from_slice(&self.src.1.to_be_bytes());
        tcp.extend_from_slice(&self.dst.1.to_be_bytes());
        tcp.extend_from_slice(&self.seq.to_be_bytes());
        tcp.extend_from_slice(&self.ack.to_be_bytes());
        let flags = u8::from(self.fin) | u8::from(self.syn) << 1 | u8::from(self.ack_flag) << 4;
        tcp.extend_from_slice(&[((header_len / 4) << 4) as u8, flags, 0xff, 0xff, 0, 0, 0, 0]);
        tcp.extend_from_slice(&opts);
        let seg_len = header_len + usize::from(self.len);
        let mut ip = Vec::new();
        match (self.src.0, self.dst.0) {
            (IpAddr::V4(s), IpAddr::V4(d)) => {
                let total = (20 + seg_len) as u16;
                ip.extend_from_slice(&[0x45, 0]);
                ip.extend_from_slice(&total.to_be_bytes());
                ip.extend_from_slice(&[0, 0, 0x40, 0, 64, 6, 0, 0]);
                ip.extend_from_slice(&s.octets());
                ip.extend_from_slice(&d.octets());
            }
            (IpAddr::V6(s), IpAddr::V6(d)) => {
                ip.extend_from_slice(&[0x60, 0, 0, 0]);
                ip.extend_from_slice(&(seg_len as u16).to_be_bytes());
                ip.extend_from_slice(&[6, 64]);
                ip.extend_from_slice(&s.octets());
                ip.extend_from_slice(&d.octets());
            }
            _ => panic!("a packet's two addresses must be the same family"),
        }
        ip.extend_from_slice(&tcp);
        let keep = usize::from(self.snap.unwrap_or(self.len).min(self.len));
        ip.resize(ip.len() + keep, 0);
        ip
    }

    /// The frame for a link type: Ethernet, Linux cooked v1/v2, BSD loopback or raw IP.
    pub fn frame(&self, link: DataLink) -> Vec<u8> {
        let ip = self.ip_bytes();
        let ether_type: u16 = if self.src.0.is_ipv4() { 0x0800 } else { 0x86dd };
        let mut f = Vec::new();
        match link {
            DataLink::ETHERNET => {
                f.extend_from_slice(&[2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1]);
                f.extend_from_slice(&ether_type.to_be_bytes());
            }
            DataLink::LINUX_SLL => {
                f.extend_from_slice(&[0, 0, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0]);
                f.extend_from_slice(&ether_type.to_be_bytes());
            }
            DataLink::LINUX_SLL2 => {
                f.extend_from_slice(&ether_type.to_be_bytes());
                f.extend_from_slice(&[0, 0, 0, 0, 0, 2, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0]);
            }
            // BSD loopback: the address family, AF_INET 2 or macOS's AF_INET6 30, in the
            // writer's byte order for NULL (little-endian here), network order for LOOP.
            DataLink::NULL | DataLink::LOOP => {
                let family: u32 = if self.src.0.is_ipv4() { 2 } else { 30 };
                let bytes = if link == DataLink::NULL { family.to_le_bytes() } else { family.to_be_bytes() };
                f.extend_from_slice(&bytes);
            }
            _ => {}
        }
        f.extend_from_slice(&ip);
        f
    }
}

/// A classic pcap file (microsecond timestamps) of `packets` on `link`.
pub fn pcap(link: DataLink, packets: &[Packet]) -> Vec<u8> {
    let frames: Vec<(u64, Vec<u8>, u32)> = packets
        .iter()
        .map(|p| {
            let data = p.frame(link);
            // The length on the wire counts what the snap length cut.
            let cut = u32::from(p.len - p.snap.unwrap_or(p.len).min(p.len));
            let orig = data.len() as u32 + cut;
            (p.time_us, data, orig)
        })
        .collect();
    pcap_frames(link, &frames)
}

/// A classic pcap file of raw frames `(time_us, bytes, length on the wire)`: for what
/// [`Packet`] cannot say (other protocols, broken headers).
pub fn pcap_frames(link: DataLink, frames: &[(u64, Vec<u8>, u32)]) -> Vec<u8> {
    let header = PcapHeader { datalink: link, ..PcapHeader::default() };
    let mut w = PcapWriter::with_header(Vec::new(), header).expect("writing to memory");
    for (time_us, data, orig) in frames {
        w.write_packet(&PcapPacket::new(Duration::from_micros(*time_us), *orig, data)).expect("writing to memory");
    }
    w.into_writer()
}

/// A pcapng file with one interface per `(link, tsresol)`; each packet names its interface.
pub fn pcapng(interfaces: &[(DataLink, u8)], packets: &[(u32, Packet)]) -> Vec<u8> {
    let mut w = PcapNgWriter::new(Vec::new()).expect("writing to memory");
    for &(link, resol) in interfaces {
        let mut idb = InterfaceDescriptionBlock::new(link, 0xffff);
        idb.options.push(InterfaceDescriptionOption::IfTsResol(resol));
        w.write_pcapng_block(idb).expect("writing to memory");
    }
    for (interface, p) in packets {
        let (link, resol) = interfaces[*interface as usize];
        let units = 10u128.pow(u32::from(resol));
        // The block's 64-bit count is in the interface's units; pcap-file writes the
        // Duration's nanoseconds as that count.
        let count = u128::from(p.time_us) * units / 1_000_000;
        let data = p.frame(link);
        let epb = EnhancedPacketBlock {
            interface_id: *interface,
            timestamp: Duration::from_nanos(count as u64),
            original_len: data.len() as u32,
            data: Cow::Owned(data),
            options: vec![],
        };
        w.write_pcapng_block(epb).expect("writing to memory");
    }
    let mut out = w.into_inner();
    out.flush().expect("writing to memory");
    out
}

/// Reads `bytes` as the capture `name` as `backoffsim rto capture`'s first pass does: its
/// segments in file order and its connections, settled, up to the first error (which the
/// command would stop at; tests go on to replay what came before it).
pub fn read_all(name: &std::path::Path, bytes: &[u8]) -> (Vec<Segment>, Flows, Option<CaptureError>) {
    let mut segments = Vec::new();
    let mut flows = Flows::default();
    let mut cap = match Capture::from_reader(name, std::io::Cursor::new(bytes.to_vec())) {
        Ok(cap) => cap,
        Err(e) => return (segments, flows, Some(e)),
    };
    let mut error = None;
    while let Some(seg) = cap.next_segment() {
        match seg {
            Ok(seg) => {
                flows.add(&seg);
                segments.push(seg);
            }
            Err(e) => {
                error = Some(e);
                break;
            }
        }
    }
    flows.settle();
    (segments, flows, error)
}

/// Checks each stall as it ends: the profile's expiries in time order, its recovery span
/// the right way round, no more times kept than counted.
pub struct StallCheck;

impl Observer for StallCheck {
    fn stall(&mut self, s: &Stall) {
        assert!(s.what_if.expiries.windows(2).all(|w| w[0] <= w[1]), "{s:?}");
        assert!(s.what_if.recovered.is_none_or(|(a, b)| a <= b), "{s:?}");
        assert!(s.sent.len() as u64 <= s.retransmissions && s.what_if.expiries.len() as u64 <= s.what_if.count);
    }
}

/// Replays every connection of `flows` from its sender's side through each of
/// `profiles`' defaults, into nothing, each stall checked: the RTT samples taken in all.
pub fn replay_all(segments: &[Segment], flows: &Flows, profiles: &[RtoProfile]) -> u64 {
    let mut samples = 0;
    for &profile in profiles {
        let params = RtoConfig { profile, ..RtoConfig::default() }.resolve().expect("a profile's defaults resolve");
        for flow in flows.flows.values() {
            let mut view =
                SenderView::observed(flow.sender, flow.receiver(), flow.first_ns, &params, std::io::sink(), StallCheck)
                    .expect("a sink takes the header");
            for seg in segments.iter().filter(|s| flow.holds(s)) {
                view.add(seg).expect("a sink takes every row");
            }
            samples += view.finish().expect("a sink flushes").2.samples;
        }
    }
    samples
}
