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
    /// buffer limit). `sack` is the segment whose arrival above a hole triggered it, the
    /// one a SACK receiver puts in its first block (RFC 2018 section 4); `None` for an
    /// in-order or duplicate arrival.
    Ack {
        ack: u64,
        tsecr: SimTime,
        window: u64,
        sack: Option<u64>,
    },
    /// A zero-window probe (`tcp_xmit_probe_skb`): no data, sequence number SND.UNA − 1,
    /// below the receiver's window, so that it answers with an ACK carrying its window.
    WindowProbe,
}
