//! The receiving end: cumulative ACKs, by default one per arriving segment (so every
//! segment can produce an RTT sample and duplicate ACKs are exact), or held back as
//! Linux's delayed ACKs do (`delack.rs`); and the ground truth about spurious
//! retransmissions, which only the receiver can know.
//!
//! With a buffer, the receiver also advertises a window: the buffer less what the
//! application has not read yet (RFC 9293 3.8.6; the right edge never moves left, since a
//! segment taken in and not read takes the place it was given). An application that
//! stops reading closes the window; when it reads again the receiver announces the room
//! (`tcp_cleanup_rbuf`: an ACK once the window can at least double).
//!
//! With SACK (RFC 2018) every ACK carries the out-of-order ranges held, most recently
//! changed first, as Linux keeps them (`tcp_sack_new_ofo_skb`: the block an arrival
//! extends, or a new one, moves to the front; four remembered, `TCP_NUM_SACKS`); and a
//! duplicate arrival is reported once in a DSACK block put first (RFC 2883 section 4,
//! `tcp_dsack_set`, on by default through `net.ipv4.tcp_dsack`).

use std::collections::BTreeSet;

use super::delack::{AckTiming, Arrival, DelAck, DelAckParams};
use super::segment::{Sack, Segment};
use crate::engine::time::SimTime;

#[derive(Clone, Debug, Default)]
pub struct TcpReceiver {
    /// Next in-order segment expected (RCV.NXT, in segments).
    rcv_nxt: u64,
    /// Segments above a hole, held until the hole fills.
    out_of_order: BTreeSet<u64>,
    /// RFC 7323 TS.Recent: the TSval of the latest in-order segment, echoed in TSecr.
    ts_recent: SimTime,
    syn_seen: bool,
    /// Receive buffer in segments; `None`: no limit, the window is never advertised as
    /// anything but unlimited.
    buffer: Option<u64>,
    /// In-order segments delivered and not yet read by the application.
    unread: u64,
    /// The application has stopped reading.
    stalled: bool,
    /// Delayed ACKs; `None`: every segment is answered at once.
    delack: Option<DelAck>,
    /// SACK blocks fit in an ACK (0: SACK off): 3 beside timestamps, else 4.
    sack_blocks: usize,
    /// The out-of-order ranges as the SACK option reports them, most recent first.
    sacks: Vec<(u64, u64)>,
    /// A duplicate to report in the next ACK's first block.
    dsack: Option<(u64, u64)>,
}

/// `TCP_NUM_SACKS`: the ranges Linux remembers for its SACK option.
const NUM_SACKS: usize = 4;

/// What the receiver did with one arriving segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Received {
    pub reply: Segment,
    /// The segment was a retransmission of data that had already arrived: the sender
    /// retransmitted needlessly.
    pub spurious: bool,
    /// New in-order segments delivered to the application by this arrival.
    pub delivered: u64,
    /// The reply is held by the delayed-ACK timer, which expires at this time; `None`:
    /// it goes out now.
    pub delayed: Option<SimTime>,
}

impl TcpReceiver {
    pub fn new() -> Self {
        Self::default()
    }

    /// A receiver whose application reads through a buffer of `buffer` segments.
    pub fn with_buffer(buffer: u64) -> Self {
        TcpReceiver { buffer: Some(buffer), ..Self::default() }
    }

    /// The window it advertises: room left in the buffer.
    pub fn window(&self) -> u64 {
        self.buffer.map_or(u64::MAX, |b| b.saturating_sub(self.unread))
    }

    /// The application stops reading: what arrives from now on stays in the buffer.
    pub fn stop_reading(&mut self) {
        self.stalled = true;
    }

    /// The application reads again and empties the buffer. Returns the window update
    /// to send, if the window at least doubled (`tcp_cleanup_rbuf`: `new_window >= 2 *
    /// rcv_window_now`), which a window that was zero always does.
    pub fn resume_reading(&mut self) -> Option<Segment> {
        self.stalled = false;
        let before = self.window();
        self.unread = 0;
        let now = self.window();
        let update = (self.buffer.is_some() && now >= before.saturating_mul(2)).then(|| self.ack());
        if let (Some(_), Some(d)) = (update, self.delack.as_mut()) {
            d.ack_sent();
        }
        update
    }

    /// This receiver delays its ACKs as Linux does.
    pub fn with_delayed_ack(mut self, params: DelAckParams) -> Self {
        self.delack = Some(DelAck::new(params));
        self
    }

    /// This receiver sends SACK blocks, at most `blocks` per ACK (RFC 2018 section 3: 4,
    /// or 3 beside the timestamp option).
    pub fn with_sack(mut self, blocks: usize) -> Self {
        self.sack_blocks = blocks.min(Sack::MAX_BLOCKS);
        self
    }

    /// [`Self::on_segment`] at `now`: with delayed ACKs, a data segment's reply may be
    /// held (`Received::delayed`) until [`Self::on_delack_timer`].
    pub fn on_segment_at(&mut self, now: SimTime, seg: Segment) -> Option<Received> {
        let (before, had_ofo) = (self.rcv_nxt, !self.out_of_order.is_empty());
        let held = matches!(seg, Segment::Data { seq, .. } if self.out_of_order.contains(&seq));
        let mut got = self.on_segment(seg)?;
        let (Some(d), Segment::Data { seq, .. }) = (self.delack.as_mut(), seg) else {
            return Some(got);
        };
        // Data not taken in (already held, or beyond the window) counts as a duplicate:
        // `tcp_data_queue` enters quick-ack mode for both.
        let arrival = if seq < before || held || (got.delivered == 0 && seq == before) {
            Arrival::Duplicate
        } else if seq > before {
            if self.out_of_order.contains(&seq) { Arrival::OutOfOrder } else { Arrival::Duplicate }
        } else if had_ofo {
            Arrival::HoleFilled
        } else {
            Arrival::InOrder
        };
        if let AckTiming::Delayed(at) = d.on_data(now, arrival, got.delivered, !self.stalled) {
            got.delayed = Some(at);
        }
        Some(got)
    }

    /// When the delayed-ACK timer expires, if an ACK is held.
    pub fn delack_timer(&self) -> Option<SimTime> {
        self.delack.as_ref().and_then(DelAck::timer)
    }

    /// The delayed-ACK timer runs at `now`: the held ACK, as it now stands, if it is due.
    pub fn on_delack_timer(&mut self, now: SimTime) -> Option<Segment> {
        self.delack.as_mut()?.on_timer(now).then(|| self.ack())
    }

    /// The ACK as things stand; it carries (and so spends) a pending DSACK.
    fn ack(&mut self) -> Segment {
        let mut blocks: Vec<(u64, u64)> = self.dsack.take().into_iter().collect();
        blocks.extend(self.sacks.iter().copied());
        blocks.truncate(self.sack_blocks);
        Segment::Ack {
            ack: self.rcv_nxt,
            tsecr: self.ts_recent,
            window: self.window(),
            sack: Sack::from_blocks(&blocks),
        }
    }

    /// `tcp_sack_new_ofo_skb`: the block `seq` extends (merged with any it now touches)
    /// moves to the front, or a new one goes there and the oldest beyond four is forgotten.
    fn sack_new_ofo(&mut self, seq: u64) {
        if self.sack_blocks == 0 {
            return;
        }
        let (mut lo, mut hi) = (seq, seq + 1);
        // tcp_sack_extend then tcp_sack_maybe_coalesce: every block touching it joins.
        self.sacks.retain(|&(s, e)| {
            let touches = s <= hi && e >= lo;
            if touches {
                lo = lo.min(s);
                hi = hi.max(e);
            }
            !touches
        });
        self.sacks.insert(0, (lo, hi));
        self.sacks.truncate(NUM_SACKS);
    }

    /// `tcp_sack_remove`: blocks the cumulative ACK has reached are dropped.
    fn sack_remove(&mut self) {
        let nxt = self.rcv_nxt;
        self.sacks.retain(|&(_, e)| e > nxt);
    }

    /// Segments delivered in order so far.
    pub fn delivered(&self) -> u64 {
        self.rcv_nxt
    }

    pub fn on_segment(&mut self, seg: Segment) -> Option<Received> {
        match seg {
            // Every SYN, first or retransmitted, is answered; the SYN-ACK echoes the
            // SYN's own timestamp so that a timestamp-enabled sender can sample it.
            Segment::Syn { tsval, retransmit } => {
                let spurious = retransmit && self.syn_seen;
                self.syn_seen = true;
                Some(Received { reply: Segment::SynAck { tsecr: tsval }, spurious, delivered: 0, delayed: None })
            }
            // Below the window: answered with the ACK as it stands (`tcp_send_dupack`).
            Segment::WindowProbe => Some(Received { reply: self.ack(), spurious: false, delivered: 0, delayed: None }),
            // Beyond the right edge: dropped and answered (`tcp_data_queue`'s
            // out_of_window). A sender that keeps to the window never sends it.
            Segment::Data { seq, .. } if seq >= self.rcv_nxt.saturating_add(self.window()) => {
                Some(Received { reply: self.ack(), spurious: false, delivered: 0, delayed: None })
            }
            Segment::Data { seq, tsval, retransmit } => {
                let duplicate = seq < self.rcv_nxt || self.out_of_order.contains(&seq);
                let before = self.rcv_nxt;
                if duplicate {
                    // tcp_dsack_set (below rcv_nxt) or the full-overlap case of
                    // tcp_data_queue_ofo: report the copy in a DSACK block.
                    if self.sack_blocks > 0 {
                        self.dsack = Some((seq, seq + 1));
                    }
                } else if seq == self.rcv_nxt {
                    self.rcv_nxt += 1;
                    while self.out_of_order.remove(&self.rcv_nxt) {
                        self.rcv_nxt += 1;
                    }
                    self.sack_remove();
                } else {
                    self.out_of_order.insert(seq);
                    self.sack_new_ofo(seq);
                }
                // RFC 7323 (4.3): TS.Recent is updated from a segment that does not
                // lie above the left window edge, i.e. one that arrived in order.
                if seq <= before {
                    self.ts_recent = tsval;
                }
                let delivered = self.rcv_nxt - before;
                if self.stalled {
                    self.unread += delivered;
                }
                Some(Received { reply: self.ack(), spurious: duplicate && retransmit, delivered, delayed: None })
            }
            Segment::SynAck { .. } | Segment::Ack { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(seq: u64, t: u64, retransmit: bool) -> Segment {
        Segment::Data { seq, tsval: SimTime(t), retransmit }
    }

    #[test]
    fn acks_are_cumulative_and_a_filled_hole_releases_buffered_segments() {
        let mut r = TcpReceiver::new().with_sack(3);
        assert_eq!(
            r.on_segment(data(0, 1, false)).unwrap().reply,
            Segment::Ack { ack: 1, tsecr: SimTime(1), window: u64::MAX, sack: Sack::NONE }
        );
        // Segment 1 is lost; 2 and 3 arrive above the hole: duplicate ACKs for 1 that
        // still echo the last in-order segment's timestamp (RFC 7323 4.3).
        assert_eq!(
            r.on_segment(data(2, 3, false)).unwrap().reply,
            Segment::Ack { ack: 1, tsecr: SimTime(1), window: u64::MAX, sack: Sack::one(2) }
        );
        // RFC 2018 section 4: the first block holds the segment that triggered the ACK,
        // grown to the whole contiguous range it joined.
        assert_eq!(
            r.on_segment(data(3, 4, false)).unwrap().reply,
            Segment::Ack { ack: 1, tsecr: SimTime(1), window: u64::MAX, sack: Sack::from_blocks(&[(2, 4)]) }
        );
        let got = r.on_segment(data(1, 9, true)).unwrap();
        assert_eq!(got.reply, Segment::Ack { ack: 4, tsecr: SimTime(9), window: u64::MAX, sack: Sack::NONE });
        assert_eq!((got.delivered, got.spurious), (3, false));
        assert_eq!(r.delivered(), 4);
    }

    #[test]
    fn a_retransmission_of_data_already_received_is_spurious() {
        let mut r = TcpReceiver::new();
        r.on_segment(data(0, 1, false));
        let again = r.on_segment(data(0, 5, true)).unwrap();
        assert!(again.spurious);
        assert_eq!(again.delivered, 0);
        // A duplicate that is not a retransmission (cannot happen with this sender) is
        // not blamed on the timer.
        assert!(!r.on_segment(data(0, 6, false)).unwrap().spurious);
    }

    #[test]
    fn the_window_is_the_buffer_less_what_the_stalled_application_has_not_read() {
        // RFC 9293 3.8.6: RCV.WND is the room left in the buffer; the right edge
        // (RCV.NXT + RCV.WND) stays at 4 while the application does not read.
        let mut r = TcpReceiver::with_buffer(4);
        assert_eq!(
            r.on_segment(data(0, 1, false)).unwrap().reply,
            Segment::Ack { ack: 1, tsecr: SimTime(1), window: 4, sack: Sack::NONE }
        );
        r.stop_reading();
        for seq in 1..3 {
            r.on_segment(data(seq, 2, false));
        }
        let full = r.on_segment(data(3, 3, false)).unwrap();
        assert_eq!(full.reply, Segment::Ack { ack: 4, tsecr: SimTime(3), window: 1, sack: Sack::NONE });
        // A zero-window probe is answered with the ACK as it stands.
        r.on_segment(data(4, 4, false));
        let probe = r.on_segment(Segment::WindowProbe).unwrap();
        assert_eq!(probe.reply, Segment::Ack { ack: 5, tsecr: SimTime(4), window: 0, sack: Sack::NONE });
        // Data beyond the right edge is dropped and answered, not delivered.
        let beyond = r.on_segment(data(5, 5, false)).unwrap();
        assert_eq!((beyond.delivered, r.delivered()), (0, 5));
        // tcp_cleanup_rbuf: reading again announces the reopened window.
        assert_eq!(r.resume_reading(), Some(Segment::Ack { ack: 5, tsecr: SimTime(4), window: 4, sack: Sack::NONE }));
        // Already open: nothing to announce.
        assert_eq!(r.resume_reading(), None);
    }

    #[test]
    fn sack_blocks_put_the_latest_range_first_and_a_duplicate_in_a_dsack_block() {
        // RFC 2018 section 4 / tcp_sack_new_ofo_skb: the block the arrival made or grew
        // goes first, the others follow most recent first; RFC 2883 section 4 /
        // tcp_dsack_set: a copy of data already held is named once, in the first block.
        let mut r = TcpReceiver::new().with_sack(3);
        r.on_segment(data(0, 0, false));
        let blocks = |r: &mut TcpReceiver, seq: u64, again: bool| match r.on_segment(data(seq, 1, again)).unwrap().reply
        {
            Segment::Ack { sack, .. } => sack.blocks().to_vec(),
            other => panic!("{other:?}"),
        };
        assert_eq!(blocks(&mut r, 2, false), [(2, 3)]);
        assert_eq!(blocks(&mut r, 4, false), [(4, 5), (2, 3)]);
        assert_eq!(blocks(&mut r, 6, false), [(6, 7), (4, 5), (2, 3)]);
        // A fourth range: three fit beside timestamps, the oldest is left out.
        assert_eq!(blocks(&mut r, 8, false), [(8, 9), (6, 7), (4, 5)]);
        // Segment 3 joins 2 and 4 into one range, which moves to the front.
        assert_eq!(blocks(&mut r, 3, false), [(2, 5), (8, 9), (6, 7)]);
        // A copy of 4: DSACK first, then the blocks; the next ACK has no DSACK.
        assert_eq!(blocks(&mut r, 4, true), [(4, 5), (2, 5), (8, 9)]);
        // Segment 1 fills the hole: 0..5 in order, the block below rcv_nxt goes.
        assert_eq!(blocks(&mut r, 1, false), [(8, 9), (6, 7)]);
        // A copy of in-order data is a DSACK below the cumulative ACK.
        assert_eq!(blocks(&mut r, 0, true), [(0, 1), (8, 9), (6, 7)]);
        // Without SACK no blocks at all.
        let mut plain = TcpReceiver::new();
        plain.on_segment(data(0, 0, false));
        assert_eq!(blocks(&mut plain, 2, false), []);
    }

    #[test]
    fn without_a_buffer_the_window_is_unlimited_and_never_announced() {
        let mut r = TcpReceiver::new();
        r.stop_reading();
        r.on_segment(data(0, 1, false));
        assert_eq!(r.window(), u64::MAX);
        assert_eq!(r.resume_reading(), None);
    }

    #[test]
    fn every_syn_gets_a_syn_ack_echoing_it() {
        let mut r = TcpReceiver::new();
        let got = r.on_segment(Segment::Syn { tsval: SimTime(7), retransmit: false }).unwrap();
        assert_eq!(got.reply, Segment::SynAck { tsecr: SimTime(7) });
        assert!(!got.spurious);
        // The copy of a SYN that had already arrived was sent for nothing.
        let again = r.on_segment(Segment::Syn { tsval: SimTime(9), retransmit: true }).unwrap();
        assert_eq!((again.reply, again.spurious), (Segment::SynAck { tsecr: SimTime(9) }, true));
    }

    #[test]
    fn with_delayed_acks_a_lone_segment_is_held_and_the_timer_sends_the_ack_as_it_stands() {
        use crate::model::tcp::delack::DelAckParams;
        let ms = |n: u64| SimTime(n * 1_000_000);
        // A 4-segment buffer: tcp_incr_quickack gives 4 / 2 = 2 quick ACKs.
        let mut r = TcpReceiver::with_buffer(4).with_delayed_ack(DelAckParams::unsampled(1000, 4)).with_sack(3);
        assert_eq!(r.on_segment_at(ms(0), data(0, 0, false)).unwrap().delayed, None);
        assert_eq!(r.on_segment_at(ms(100), data(1, 100, false)).unwrap().delayed, None);
        // Quick ACKs spent: held for TCP_ATO_MIN, 40 ms.
        let held = r.on_segment_at(ms(200), data(2, 200, false)).unwrap();
        assert_eq!((held.delayed, r.delack_timer()), (Some(ms(240)), Some(ms(240))));
        assert_eq!(r.on_delack_timer(ms(239)), None);
        assert_eq!(
            r.on_delack_timer(ms(240)),
            Some(Segment::Ack { ack: 3, tsecr: SimTime(200), window: 4, sack: Sack::NONE })
        );
        assert_eq!(r.delack_timer(), None);
        // Above a hole: out of order, answered at once with its SACK block.
        let ofo = r.on_segment_at(ms(300), data(4, 300, false)).unwrap();
        assert_eq!(
            (ofo.delayed, ofo.reply),
            (None, Segment::Ack { ack: 3, tsecr: SimTime(200), window: 4, sack: Sack::one(4) })
        );
        // Without delayed ACKs nothing is ever held.
        let mut plain = TcpReceiver::new();
        assert!((0..5).all(|k| plain.on_segment_at(ms(k), data(k, k, false)).unwrap().delayed.is_none()));
    }
}
