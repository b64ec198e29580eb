//! Packets grouped into TCP connections, both directions of one connection together.

use std::collections::BTreeMap;
use std::fmt;
use std::net::IpAddr;

use backoffsim_core::engine::time::SimDuration;

use crate::reader::Segment;

/// One end of a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Endpoint {
    pub addr: IpAddr,
    pub port: u16,
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.addr {
            IpAddr::V4(a) => write!(f, "{a}:{}", self.port),
            IpAddr::V6(a) => write!(f, "[{a}]:{}", self.port),
        }
    }
}

impl std::str::FromStr for Endpoint {
    type Err = String;
    /// `10.0.0.1:443` or `[2001:db8::1]:443`.
    fn from_str(s: &str) -> Result<Endpoint, String> {
        let (addr, port) = s.rsplit_once(':').ok_or_else(|| format!("`{s}` has no `:PORT`"))?;
        let addr = addr.strip_prefix('[').and_then(|a| a.strip_suffix(']')).unwrap_or(addr);
        let addr: IpAddr = addr.parse().map_err(|_| format!("`{addr}` is not an IPv4 or IPv6 address"))?;
        let port: u16 = port.parse().map_err(|_| format!("`{port}` is not a port (0 to 65535)"))?;
        Ok(Endpoint { addr, port })
    }
}

/// A connection's two ends, the lower first, so that both directions share one key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FlowKey(pub Endpoint, pub Endpoint);

impl FlowKey {
    pub fn of(a: Endpoint, b: Endpoint) -> FlowKey {
        if a <= b { FlowKey(a, b) } else { FlowKey(b, a) }
    }
    pub fn of_segment(s: &Segment) -> FlowKey {
        FlowKey::of(source(s), destination(s))
    }
}

pub fn source(s: &Segment) -> Endpoint {
    Endpoint { addr: s.src.0, port: s.src.1 }
}
pub fn destination(s: &Segment) -> Endpoint {
    Endpoint { addr: s.dst.0, port: s.dst.1 }
}

/// What one direction of a connection carried.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Direction {
    pub packets: u64,
    /// Payload bytes, retransmissions included.
    pub bytes: u64,
    /// Data segments whose sequence range had been sent before, wholly or in part.
    pub retransmissions: u64,
    /// Sequence numbers relative to the first seen, widened past the 32-bit wrap.
    seq: Option<Unwrap>,
    /// The highest end sent so far, relative.
    high: u64,
    /// The sequence number of this side's first SYN, its ISN.
    isn: Option<u32>,
    fin: bool,
    /// The latest time this side sent.
    last_ns: Option<u64>,
}

/// Widens 32-bit sequence numbers to 64 bits relative to the first one seen, assuming
/// consecutive numbers are less than 2^31 apart (RFC 9293 §3.4's comparison).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unwrap {
    base: u32,
    last: u64,
}

impl Unwrap {
    pub fn new(base: u32) -> Unwrap {
        Unwrap { base, last: 0 }
    }
    /// The relative position of `seq`, nearest the last one returned.
    pub fn at(&mut self, seq: u32) -> u64 {
        let rel = seq.wrapping_sub(self.base);
        let low = self.last as u32;
        let delta = rel.wrapping_sub(low) as i32;
        let pos = (self.last as i64 + i64::from(delta)).max(0) as u64;
        self.last = self.last.max(pos);
        pos
    }
}

impl Direction {
    /// Counts `s`; whether its data had been sent before.
    pub fn add(&mut self, s: &Segment) -> bool {
        self.packets += 1;
        self.bytes += u64::from(s.len);
        if s.syn {
            self.isn.get_or_insert(s.seq);
        }
        self.fin |= s.fin;
        self.last_ns = Some(self.last_ns.map_or(s.time_ns, |t| t.max(s.time_ns)));
        let unwrap = self.seq.get_or_insert_with(|| Unwrap::new(s.seq));
        let start = unwrap.at(s.seq);
        let end = start + u64::from(s.seq_len());
        let again = s.len > 0 && start < self.high;
        if again {
            self.retransmissions += 1;
        }
        self.high = self.high.max(end);
        again
    }
}

/// One connection: its data sender and what each direction carried. The sender is first
/// the side that sent the first SYN, or else the first data; [`Flows::settle`] then makes
/// it the side that carried more payload, so that a download is read from the server's
/// side, whose timer moved the data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Flow {
    pub key: FlowKey,
    /// 1-based place among the connections between the same two ends (a port reused),
    /// in order of first packet.
    pub ordinal: u32,
    /// The data sender, once known; until then the first packet's source.
    pub sender: Endpoint,
    sender_known: bool,
    pub first_ns: u64,
    /// The latest packet's time (a capture's clock may step back).
    pub last_ns: u64,
    /// `[from key.0, from key.1]`.
    pub dirs: [Direction; 2],
    rst: bool,
    /// The packet number of this connection's first segment, and of the next connection's
    /// between the same ends: the second pass tells them apart by it.
    first_number: u64,
    next_number: Option<u64>,
}

impl Flow {
    fn new(key: FlowKey, ordinal: u32, s: &Segment) -> Flow {
        Flow {
            key,
            ordinal,
            sender: source(s),
            sender_known: false,
            first_ns: s.time_ns,
            last_ns: s.time_ns,
            dirs: Default::default(),
            rst: false,
            first_number: s.number,
            next_number: None,
        }
    }
    pub fn receiver(&self) -> Endpoint {
        if self.sender == self.key.0 { self.key.1 } else { self.key.0 }
    }
    pub fn packets(&self) -> u64 {
        self.dirs[0].packets + self.dirs[1].packets
    }
    pub fn bytes(&self) -> u64 {
        self.dirs[0].bytes + self.dirs[1].bytes
    }
    /// Retransmissions from the sender, then from the receiver.
    pub fn retransmissions(&self) -> (u64, u64) {
        let s = usize::from(self.sender != self.key.0);
        (self.dirs[s].retransmissions, self.dirs[1 - s].retransmissions)
    }
    /// Whether `s`, a segment of the same capture, is one of this connection's: between
    /// its two ends, and neither before it nor after the next connection between them began.
    pub fn holds(&self, s: &Segment) -> bool {
        FlowKey::of_segment(s) == self.key
            && s.number >= self.first_number
            && self.next_number.is_none_or(|next| s.number < next)
    }
    /// The index into `dirs` of the side that sent `s`.
    fn side(&self, s: &Segment) -> usize {
        usize::from(source(s) != self.key.0)
    }
    fn add(&mut self, s: &Segment) {
        self.last_ns = self.last_ns.max(s.time_ns);
        let syn_only = s.syn && !s.ack_flag;
        if !self.sender_known && (syn_only || s.len > 0) {
            self.sender = source(s);
            self.sender_known = true;
        }
        self.rst |= s.rst;
        let side = self.side(s);
        self.dirs[side].add(s);
    }
}

/// All connections in a capture, in a stable order: by their two ends, then, for ends
/// used by several connections in turn, by first packet.
#[derive(Debug, Default)]
pub struct Flows {
    pub flows: BTreeMap<(FlowKey, u32), Flow>,
    /// The earliest packet's time, which the list's start times count from.
    pub origin_ns: Option<u64>,
}

impl Flows {
    /// Once every packet is added: each flow's sender becomes the side that carried more
    /// payload bytes, the opening side keeping it on a tie.
    pub fn settle(&mut self) {
        for flow in self.flows.values_mut() {
            let mine = usize::from(flow.sender != flow.key.0);
            if flow.dirs[1 - mine].bytes > flow.dirs[mine].bytes {
                flow.sender = flow.receiver();
            }
        }
    }

    pub fn add(&mut self, s: &Segment) {
        let key = FlowKey::of_segment(s);
        self.origin_ns = Some(self.origin_ns.map_or(s.time_ns, |o| o.min(s.time_ns)));
        let ordinal = match self.flows.range_mut((key, 1)..=(key, u32::MAX)).next_back() {
            None => 1,
            Some((&(_, n), latest)) if n < u32::MAX && reuse::opens_anew(latest, s) => {
                latest.next_number = Some(s.number);
                n + 1
            }
            Some((&(_, n), _)) => n,
        };
        self.flows.entry((key, ordinal)).or_insert_with(|| Flow::new(key, ordinal, s)).add(s);
    }

    /// The connections between `key`'s two ends, in order of first packet.
    pub fn between(&self, key: FlowKey) -> impl Iterator<Item = &Flow> {
        self.flows.range((key, 1)..=(key, u32::MAX)).map(|(_, f)| f)
    }

    /// Whether `flow`'s two ends carried other connections too, so that it is named by
    /// its ordinal as well.
    pub fn reused(&self, flow: &Flow) -> bool {
        self.between(flow.key).nth(1).is_some()
    }

    /// When `flow` began, from the capture's earliest packet.
    pub fn since_origin(&self, flow: &Flow) -> SimDuration {
        SimDuration(flow.first_ns.saturating_sub(self.origin_ns.unwrap_or(flow.first_ns)))
    }
}

mod reuse;

#[cfg(test)]
mod tests;
