//! Streams the TCP segments of a pcap or pcapng file, one packet at a time, so a capture
//! of any size is read in bounded memory.
//!
//! The format is chosen by the first four bytes. Link types: Ethernet (VLAN tags
//! included), Linux cooked capture v1 and v2, BSD loopback, raw IPv4/IPv6. A packet cut by the snap
//! length still counts its whole segment: the length comes from the IP header, not from
//! the bytes captured. Packets that are not TCP over IP are skipped and counted.

use std::fs::File;
use std::io::Read;
use std::net::IpAddr;
use std::path::{Path, PathBuf};

use etherparse::{EtherType, LaxNetSlice, LaxSlicedPacket, TcpOptionElement, TransportSlice};
use pcap_file::DataLink;
use pcap_file::pcap::PcapReader;
use pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionOption;
use pcap_file::pcapng::{Block, PcapNgReader};

/// A failure reading a capture, naming the file and where in it.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    #[error("{file}: cannot read: {source}")]
    Open { file: PathBuf, source: std::io::Error },
    #[error(
        "{file}: not a capture: the file starts with {magic}, expected pcap (a1b2c3d4, a1b23c4d, either byte order) or pcapng (0a0d0d0a)"
    )]
    Magic { file: PathBuf, magic: String },
    #[error("{file}: bad {format} header: {message}")]
    Header { file: PathBuf, format: &'static str, message: String },
    #[error("{file}: {what} {number}: {message}")]
    Record { file: PathBuf, what: &'static str, number: u64, message: String },
    #[error("{file}: packet {number} is on interface {interface}, which no interface block describes")]
    Interface { file: PathBuf, number: u64, interface: u32 },
}

/// One TCP segment as captured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    /// The capture's timestamp, nanoseconds since the Unix epoch.
    pub time_ns: u64,
    /// 1-based number of the packet (pcap) or block (pcapng) in the file.
    pub number: u64,
    pub src: (IpAddr, u16),
    pub dst: (IpAddr, u16),
    pub seq: u32,
    pub ack: u32,
    pub syn: bool,
    pub ack_flag: bool,
    pub fin: bool,
    pub rst: bool,
    /// Payload bytes by the IP header's length, whatever the snap length kept.
    pub len: u32,
    /// The timestamp option (TSval, TSecr), RFC 7323, when present.
    pub timestamps: Option<(u32, u32)>,
    /// What the segment says of SACK (RFC 2018): whether a loss probe can be in play.
    pub sack: SackOption,
}

/// The SACK options a segment carries (RFC 2018 §2, §3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SackOption {
    #[default]
    None,
    /// SACK-permitted, which only a SYN may carry.
    Permitted,
    /// SACK blocks: the receiver's SACK is on, so the sender's SYN offered it.
    Blocks,
    /// SACK blocks whose first reports a duplicate (a D-SACK, RFC 2883 §4): its end, the
    /// sequence number after the data received twice.
    Dsack { end: u32 },
}

impl SackOption {
    /// Whether the segment carries SACK blocks, a D-SACK among them or not.
    pub fn blocks(self) -> bool {
        matches!(self, SackOption::Blocks | SackOption::Dsack { .. })
    }
}

/// The option's blocks as SACK or D-SACK, as `tcp_check_dsack` tells them apart: the
/// first block is a duplicate when it starts below the cumulative ACK, or lies within
/// the second (RFC 2883 §4).
fn sack_blocks(ack: u32, first: (u32, u32), second: Option<(u32, u32)>) -> SackOption {
    let before = |a: u32, b: u32| (a.wrapping_sub(b) as i32) < 0;
    let below_ack = before(first.0, ack);
    let inside = second.is_some_and(|(start, end)| !before(end, first.1) && !before(first.0, start));
    if below_ack || inside { SackOption::Dsack { end: first.1 } } else { SackOption::Blocks }
}

impl Segment {
    /// Sequence space the segment occupies: payload plus one each for SYN and FIN.
    pub fn seq_len(&self) -> u32 {
        self.len + u32::from(self.syn) + u32::from(self.fin)
    }
}

/// Where the bytes come from: a file, or any reader (a test's bytes, a fuzzer's input).
type Input = Box<dyn Read>;

enum Format {
    Pcap { reader: PcapReader<Input>, link: DataLink, nanos: bool },
    PcapNg { reader: PcapNgReader<Input>, interfaces: Vec<Interface> },
}

/// What an interface description block says about the packets on it.
struct Interface {
    link: DataLink,
    /// Timestamp units per second: 10^6 unless `if_tsresol` says otherwise.
    units_per_sec: u64,
}

/// The TCP segments of one capture file, in file order.
pub struct Capture {
    file: PathBuf,
    format: Format,
    number: u64,
    /// Packets read that were not TCP over IPv4/IPv6, or on a link type not read.
    pub skipped: u64,
    /// The link types met that are not read (their numbers, as pcap's LINKTYPE_ list
    /// has them), so that a file of nothing but those says why.
    pub unread_links: std::collections::BTreeSet<u32>,
}

/// What a header that cannot be read says: where the file ends, when it ends too soon.
fn header_message(e: pcap_file::PcapError, what: &str) -> String {
    match e {
        pcap_file::PcapError::IncompleteBuffer => format!("the file ends inside {what}"),
        pcap_file::PcapError::IoError(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
            format!("the file ends inside {what}")
        }
        other => other.to_string(),
    }
}

const TRUNCATED: &str = "the file ends inside it (truncated, still being written, or a record over 8 MB)";

const PCAP_MAGICS: [[u8; 4]; 4] =
    [[0xd4, 0xc3, 0xb2, 0xa1], [0xa1, 0xb2, 0xc3, 0xd4], [0x4d, 0x3c, 0xb2, 0xa1], [0xa1, 0xb2, 0x3c, 0x4d]];
const PCAPNG_MAGIC: [u8; 4] = [0x0a, 0x0d, 0x0d, 0x0a];

impl Capture {
    pub fn open(path: &Path) -> Result<Capture, CaptureError> {
        let input = File::open(path).map_err(|source| CaptureError::Open { file: path.to_path_buf(), source })?;
        Capture::from_reader(path, input)
    }

    /// Reads a capture from any byte stream; `name` is the file its errors name.
    pub fn from_reader(name: &Path, mut input: impl Read + 'static) -> Result<Capture, CaptureError> {
        let file = name.to_path_buf();
        let mut magic = [0u8; 4];
        let got =
            read_up_to(&mut input, &mut magic).map_err(|source| CaptureError::Open { file: file.clone(), source })?;
        // The magic goes back in front: the readers parse the header from its first byte.
        let input: Input = Box::new(std::io::Cursor::new(magic[..got].to_vec()).chain(input));
        // pcap-file reads through a buffer of its own, of a fixed 8 MB.
        let format = if got == 4 && PCAP_MAGICS.contains(&magic) {
            let reader = PcapReader::new(input).map_err(|e| CaptureError::Header {
                file: file.clone(),
                format: "pcap",
                message: header_message(e, "its 24-byte file header"),
            })?;
            let header = reader.header();
            let nanos = header.ts_resolution == pcap_file::TsResolution::NanoSecond;
            Format::Pcap { link: header.datalink, reader, nanos }
        } else if got == 4 && magic == PCAPNG_MAGIC {
            let reader = PcapNgReader::new(input).map_err(|e| CaptureError::Header {
                file: file.clone(),
                format: "pcapng",
                message: header_message(e, "its section header block"),
            })?;
            Format::PcapNg { reader, interfaces: Vec::new() }
        } else {
            let magic = if got == 0 {
                "nothing (the file is empty)".to_string()
            } else {
                magic[..got].iter().map(|b| format!("{b:02x}")).collect::<String>()
            };
            return Err(CaptureError::Magic { file, magic });
        };
        // The pcapng reader has taken the section header block, block 1, already.
        let number = u64::from(matches!(format, Format::PcapNg { .. }));
        Ok(Capture { file, format, number, skipped: 0, unread_links: Default::default() })
    }

    /// The next TCP segment, skipping everything else; `None` at the end of the file.
    pub fn next_segment(&mut self) -> Option<Result<Segment, CaptureError>> {
        loop {
            self.number += 1;
            let number = self.number;
            let record = |what: &'static str, e: pcap_file::PcapError, file: &PathBuf| {
                let message = match e {
                    pcap_file::PcapError::IncompleteBuffer => TRUNCATED.to_string(),
                    pcap_file::PcapError::IoError(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                        TRUNCATED.to_string()
                    }
                    pcap_file::PcapError::IoError(e) => format!("cannot read: {e}"),
                    other => other.to_string(),
                };
                CaptureError::Record { file: file.clone(), what, number, message }
            };
            let (time_ns, link, data) = match &mut self.format {
                Format::Pcap { reader, link, nanos } => match reader.next_raw_packet()? {
                    Err(e) => return Some(Err(record("packet", e, &self.file))),
                    Ok(p) => {
                        let frac = u64::from(p.ts_frac);
                        let ns = u64::from(p.ts_sec) * 1_000_000_000 + if *nanos { frac } else { frac * 1000 };
                        (ns, *link, p.data.into_owned())
                    }
                },
                Format::PcapNg { reader, interfaces } => match reader.next_block()? {
                    Err(e) => return Some(Err(record("block", e, &self.file))),
                    Ok(Block::SectionHeader(_)) => {
                        // A new section starts its own interface numbering.
                        interfaces.clear();
                        continue;
                    }
                    Ok(Block::InterfaceDescription(idb)) => {
                        interfaces.push(Interface { link: idb.linktype, units_per_sec: units_per_sec(&idb.options) });
                        continue;
                    }
                    Ok(Block::EnhancedPacket(epb)) => {
                        let Some(ifc) = interfaces.get(epb.interface_id as usize) else {
                            return Some(Err(CaptureError::Interface {
                                file: self.file.clone(),
                                number,
                                interface: epb.interface_id,
                            }));
                        };
                        // pcap-file hands the raw 64-bit count as nanoseconds; its unit
                        // is the interface's.
                        let raw = epb.timestamp.as_nanos();
                        let ns = raw * 1_000_000_000 / u128::from(ifc.units_per_sec);
                        (u64::try_from(ns).unwrap_or(u64::MAX), ifc.link, epb.data.into_owned())
                    }
                    Ok(Block::SimplePacket(spb)) => {
                        // No timestamp in a simple packet block: it cannot time anything.
                        let _ = spb;
                        self.skipped += 1;
                        continue;
                    }
                    Ok(_) => continue,
                },
            };
            match parse(link, &data) {
                Some(mut seg) => {
                    seg.time_ns = time_ns;
                    seg.number = number;
                    return Some(Ok(seg));
                }
                None => {
                    self.skipped += 1;
                    if !read(link) {
                        self.unread_links.insert(u32::from(link));
                    }
                }
            }
        }
    }
}

fn read_up_to(file: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match file.read(&mut buf[got..])? {
            0 => break,
            n => got += n,
        }
    }
    Ok(got)
}

/// pcapng's `if_tsresol`: bit 7 clear, a power of ten; set, a power of two (§4.2).
fn units_per_sec(options: &[InterfaceDescriptionOption]) -> u64 {
    for opt in options {
        if let InterfaceDescriptionOption::IfTsResol(r) = opt {
            let exp = u32::from(r & 0x7f);
            let base: u64 = if r & 0x80 == 0 { 10 } else { 2 };
            // Finer than a nanosecond overflows nothing useful; clamp to what u64 holds.
            return base.checked_pow(exp).unwrap_or(u64::MAX).max(1);
        }
    }
    1_000_000
}

/// Whether [`parse`] reads frames of `link`.
fn read(link: DataLink) -> bool {
    matches!(
        link,
        DataLink::ETHERNET
            | DataLink::RAW
            | DataLink::IPV4
            | DataLink::IPV6
            | DataLink::NULL
            | DataLink::LOOP
            | DataLink::LINUX_SLL
            | DataLink::LINUX_SLL2
    )
}

/// The TCP segment in one link-layer frame, if it holds one.
fn parse(link: DataLink, data: &[u8]) -> Option<Segment> {
    let packet = match link {
        DataLink::ETHERNET => LaxSlicedPacket::from_ethernet(data).ok()?,
        DataLink::RAW | DataLink::IPV4 | DataLink::IPV6 => LaxSlicedPacket::from_ip(data).ok()?,
        // BSD loopback (macOS `lo0`, link type 0 in host order, 108 in network order): a
        // 4-byte address family, then the IP packet, whose first nibble says which.
        DataLink::NULL | DataLink::LOOP => LaxSlicedPacket::from_ip(data.get(4..)?).ok()?,
        // Linux cooked v1: 16 bytes, the protocol (an EtherType) in the last two.
        DataLink::LINUX_SLL => {
            let proto = u16::from_be_bytes([*data.get(14)?, *data.get(15)?]);
            LaxSlicedPacket::from_ether_type(EtherType(proto), data.get(16..)?)
        }
        // Linux cooked v2: 20 bytes, the protocol in the first two.
        DataLink::LINUX_SLL2 => {
            let proto = u16::from_be_bytes([*data.first()?, *data.get(1)?]);
            LaxSlicedPacket::from_ether_type(EtherType(proto), data.get(20..)?)
        }
        _ => return None,
    };
    let Some(TransportSlice::Tcp(tcp)) = &packet.transport else { return None };
    let (src, dst, ip_start, ip_total) = match packet.net.as_ref()? {
        LaxNetSlice::Ipv4(ip) => {
            let h = ip.header();
            let start = h.slice().as_ptr() as usize;
            (IpAddr::from(h.source_addr()), IpAddr::from(h.destination_addr()), start, usize::from(h.total_len()))
        }
        LaxNetSlice::Ipv6(ip) => {
            let h = ip.header();
            let start = h.slice().as_ptr() as usize;
            (
                IpAddr::from(h.source_addr()),
                IpAddr::from(h.destination_addr()),
                start,
                40 + usize::from(h.payload_length()),
            )
        }
        LaxNetSlice::Arp(_) => return None,
    };
    // Headers in front of the payload: IP, its extensions, TCP with options.
    let tcp_start = tcp.slice().as_ptr() as usize;
    let headers = tcp_start.checked_sub(ip_start)? + tcp.header_len();
    let len = u32::try_from(ip_total.saturating_sub(headers)).ok()?;
    let mut timestamps = None;
    let mut sack = SackOption::None;
    for o in tcp.options_iterator() {
        match o {
            Ok(TcpOptionElement::Timestamp(val, ecr)) => timestamps = timestamps.or(Some((val, ecr))),
            Ok(TcpOptionElement::SelectiveAcknowledgementPermitted) => sack = SackOption::Permitted,
            Ok(TcpOptionElement::SelectiveAcknowledgement(first, rest)) => {
                sack = sack_blocks(tcp.acknowledgment_number(), first, rest[0]);
            }
            _ => {}
        }
    }
    Some(Segment {
        time_ns: 0,
        number: 0,
        src: (src, tcp.source_port()),
        dst: (dst, tcp.destination_port()),
        seq: tcp.sequence_number(),
        ack: tcp.acknowledgment_number(),
        syn: tcp.syn(),
        ack_flag: tcp.ack(),
        fin: tcp.fin(),
        rst: tcp.rst(),
        len,
        timestamps,
        sack,
    })
}

#[cfg(test)]
mod tests;
