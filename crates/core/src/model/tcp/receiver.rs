//! The receiving end: cumulative ACKs, one per arriving segment (no delayed ACKs, so
//! every segment can produce an RTT sample and duplicate ACKs are exact), and the
//! ground truth about spurious retransmissions, which only the receiver can know.

use std::collections::BTreeSet;

use super::segment::Segment;
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
}

/// What the receiver did with one arriving segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Received {
    pub reply: Segment,
    /// The segment was a retransmission of data that had already arrived: the sender
    /// retransmitted needlessly.
    pub spurious: bool,
    /// New in-order segments delivered to the application by this arrival.
    pub delivered: u64,
}

impl TcpReceiver {
    pub fn new() -> Self {
        Self::default()
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
                Some(Received { reply: Segment::SynAck { tsecr: tsval }, spurious, delivered: 0 })
            }
            Segment::Data { seq, tsval, retransmit } => {
                let duplicate = seq < self.rcv_nxt || self.out_of_order.contains(&seq);
                let before = self.rcv_nxt;
                if !duplicate {
                    if seq == self.rcv_nxt {
                        self.rcv_nxt += 1;
                        while self.out_of_order.remove(&self.rcv_nxt) {
                            self.rcv_nxt += 1;
                        }
                    } else {
                        self.out_of_order.insert(seq);
                    }
                }
                // RFC 7323 (4.3): TS.Recent is updated from a segment that does not
                // lie above the left window edge, i.e. one that arrived in order.
                if seq <= before {
                    self.ts_recent = tsval;
                }
                Some(Received {
                    reply: Segment::Ack {
                        ack: self.rcv_nxt,
                        tsecr: self.ts_recent,
                        sack: (!duplicate && seq > before).then_some(seq),
                    },
                    spurious: duplicate && retransmit,
                    delivered: self.rcv_nxt - before,
                })
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
        let mut r = TcpReceiver::new();
        assert_eq!(
            r.on_segment(data(0, 1, false)).unwrap().reply,
            Segment::Ack { ack: 1, tsecr: SimTime(1), sack: None }
        );
        // Segment 1 is lost; 2 and 3 arrive above the hole: duplicate ACKs for 1 that
        // still echo the last in-order segment's timestamp (RFC 7323 4.3).
        assert_eq!(
            r.on_segment(data(2, 3, false)).unwrap().reply,
            Segment::Ack { ack: 1, tsecr: SimTime(1), sack: Some(2) }
        );
        assert_eq!(
            r.on_segment(data(3, 4, false)).unwrap().reply,
            Segment::Ack { ack: 1, tsecr: SimTime(1), sack: Some(3) }
        );
        let got = r.on_segment(data(1, 9, true)).unwrap();
        assert_eq!(got.reply, Segment::Ack { ack: 4, tsecr: SimTime(9), sack: None });
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
    fn every_syn_gets_a_syn_ack_echoing_it() {
        let mut r = TcpReceiver::new();
        let got = r.on_segment(Segment::Syn { tsval: SimTime(7), retransmit: false }).unwrap();
        assert_eq!(got.reply, Segment::SynAck { tsecr: SimTime(7) });
        assert!(!got.spurious);
        // The copy of a SYN that had already arrived was sent for nothing.
        let again = r.on_segment(Segment::Syn { tsval: SimTime(9), retransmit: true }).unwrap();
        assert_eq!((again.reply, again.spurious), (Segment::SynAck { tsecr: SimTime(9) }, true));
    }
}
