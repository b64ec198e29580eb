//! What travels over the path between a TCP sender and its receiver. Sequence numbers
//! count whole segments; byte numbers are derived where an estimator needs them.

use crate::engine::time::SimTime;

/// One TCP segment. `tsval` is the sender's clock when this copy was sent (RFC 7323
/// TSval); it rides along whether or not timestamps are enabled, because the simulator
/// also uses it as ground truth for metrics. Only the sender's RTT sampling decides
/// whether it may look at an echoed value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Segment {
    Syn {
        tsval: SimTime,
        retransmit: bool,
    },
    SynAck {
        tsecr: SimTime,
    },
    Data {
        seq: u64,
        tsval: SimTime,
        retransmit: bool,
    },
    /// Cumulative acknowledgment: every segment below `ack` has arrived, and the receiver
    /// has room for `window` segments from `ack` on (`u64::MAX` for a receiver without a
    /// buffer limit). `sack` holds the SACK option's blocks (RFC 2018), empty without SACK.
    Ack {
        ack: u64,
        tsecr: SimTime,
        window: u64,
        sack: Sack,
    },
    /// A zero-window probe (`tcp_xmit_probe_skb`): no data, sequence number SND.UNA − 1,
    /// below the receiver's window, so that it answers with an ACK carrying its window.
    WindowProbe,
}

/// The blocks of a SACK option (RFC 2018 section 3), first block first: each the half-open
/// range `[start, end)` of segments received above the cumulative ACK, or, first, a DSACK
/// (RFC 2883) naming a duplicate. At most four fit in the option (three beside timestamps).
///
/// Kept compact, as every ACK in flight carries one: the blocks are stored as 32-bit
/// offsets and lengths from the lowest start. A block that cannot be (more than 2^32
/// segments from the lowest, or longer) is left out, as a receiver's option space would
/// never hold it usefully.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sack {
    base: u64,
    blocks: [(u32, u32); Sack::MAX_BLOCKS],
    len: u8,
}

/// A SACK option's blocks as absolute ranges, first block first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SackBlocks {
    items: [(u64, u64); Sack::MAX_BLOCKS],
    len: usize,
}

impl std::ops::Deref for SackBlocks {
    type Target = [(u64, u64)];
    fn deref(&self) -> &[(u64, u64)] {
        &self.items[..self.len]
    }
}

impl Sack {
    /// RFC 2018 section 3: 40 bytes of options hold at most 4 blocks.
    pub const MAX_BLOCKS: usize = 4;
    /// No SACK option.
    pub const NONE: Sack = Sack { base: 0, blocks: [(0, 0); Sack::MAX_BLOCKS], len: 0 };

    /// One block of one segment.
    pub fn one(seq: u64) -> Sack {
        Sack::from_blocks(&[(seq, seq + 1)])
    }

    /// The first `MAX_BLOCKS` of `blocks`.
    pub fn from_blocks(blocks: &[(u64, u64)]) -> Sack {
        let blocks = &blocks[..blocks.len().min(Sack::MAX_BLOCKS)];
        let base = blocks.iter().map(|&(s, _)| s).min().unwrap_or(0);
        let mut sack = Sack { base, ..Sack::NONE };
        for &(start, end) in blocks {
            let (Ok(off), Ok(len)) = (u32::try_from(start - base), u32::try_from(end.saturating_sub(start))) else {
                continue;
            };
            sack.blocks[usize::from(sack.len)] = (off, len);
            sack.len += 1;
        }
        sack
    }

    pub fn blocks(&self) -> SackBlocks {
        let mut out = SackBlocks { items: [(0, 0); Sack::MAX_BLOCKS], len: usize::from(self.len) };
        for (o, &(off, len)) in out.items.iter_mut().zip(&self.blocks[..out.len]) {
            let start = self.base + u64::from(off);
            *o = (start, start + u64::from(len));
        }
        out
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}
