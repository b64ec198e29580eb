//! When a SYN on two ends already seen opens a new connection between them (a port
//! reused), rather than belonging to the one before.
//!
//! Stacks send a SYN again with the same ISN, so a SYN with another ISN comes from a new
//! socket. Yet a stray SYN (an old duplicate, a forged one) can land amid a live exchange,
//! which the peer answers with a challenge ACK (RFC 5961 §4.2) and which opens nothing. So
//! another ISN opens a new connection only when the old one cannot still be going: it
//! ended, its SYN's side went quiet, or the SYN is beyond any window it could have had.

use super::{Direction, Flow};
use crate::reader::Segment;

/// How long the SYN's side must have sent nothing for the connection to count as given
/// up. Not a stack's constant but a judgement: a crashed or timed-out sender is silent far
/// longer, a stray SYN amid an exchange comes within its round trips.
pub const QUIET_NS: u64 = 1_000_000_000;

/// The largest window a connection can have, 65535 << 14 (RFC 7323 §2.3): a sequence
/// number farther than this from where the side's data had got to is in no window of it.
pub const FAR: u32 = 1 << 30;

/// Whether `s` opens a new connection between `flow`'s two ends.
pub(super) fn opens_anew(flow: &Flow, s: &Segment) -> bool {
    if !s.syn || s.ack_flag {
        return false;
    }
    // Stamped before the connection began (a merged or reordered file), it cannot be what
    // followed it, whatever came before it in the file.
    if s.time_ns < flow.first_ns {
        return false;
    }
    let side = &flow.dirs[flow.side(s)];
    if side.isn == Some(s.seq) {
        return false;
    }
    ended(flow) || quiet(flow, side, s.time_ns) || far(side, s.seq)
}

/// A FIN each way, or a reset either way.
fn ended(flow: &Flow) -> bool {
    flow.rst || (flow.dirs[0].fin && flow.dirs[1].fin)
}

/// A side that never sent (the other side of a simultaneous open) is as quiet as the
/// connection.
fn quiet(flow: &Flow, side: &Direction, now_ns: u64) -> bool {
    now_ns.saturating_sub(side.last_ns.unwrap_or(flow.last_ns)) >= QUIET_NS
}

fn far(side: &Direction, seq: u32) -> bool {
    side.seq.is_some_and(|u| {
        let next = u.base.wrapping_add(side.high as u32);
        (seq.wrapping_sub(next) as i32).unsigned_abs() > FAR
    })
}
