//! The sender's SACK scoreboard: what it knows about each segment in flight, built from
//! cumulative ACKs and SACK blocks (RFC 2018), with RFC 6675's loss rules on top
//! (`IsLost`, `NextSeg()`, `SetPipe`) and DSACK detection (RFC 2883) for the caller's undo.
//!
//! Sequence numbers count whole segments, as everywhere in this model; a SACK block is
//! the half-open range `[start, end)` of segments it covers. Each segment in flight is
//! sacked or not, marked lost or not, and may have a retransmission in flight; its send
//! time (of the latest copy) is kept for RACK (`rack.rs`). With whole segments, RFC 6675's
//! `IsLost` ("DupThresh discontiguous SACKed sequences, or more than (DupThresh − 1) ·
//! SMSS bytes" above) is a count of SACKed segments above. A DSACK is reported to the
//! caller, which decides about undo; the scoreboard only ignores what it repeats.
//!
//! Cost: applying an ACK is O(blocks · log n + segments whose state changes), n being the
//! segments in flight. SACKed ranges live in an ordered map of disjoint intervals, so a
//! block that repeats what is known touches only the intervals it meets; segments marked
//! lost and waiting for a retransmission, and the unsacked segments in send-time order
//! (Linux's `tsorted_sent_queue`), sit in ordered sets. The `IsLost` frontier only moves
//! up, so each segment is marked lost by it at most once.
//!
//! Not modelled: byte ranges and partial-segment blocks (a block is rounded to the whole
//! segments it names), SACK reneging (a SACKed segment is never unsacked: Linux only
//! clears the scoreboard on an RTO, `tcp_timeout_mark_lost`), RFC 6675's rescue
//! retransmission (NextSeg rule 4), and the FACK-era `tcp_mark_head_lost` counting.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use crate::engine::time::SimTime;

/// RFC 6675 (section 2) DupThresh: a segment is lost once this many segments above it are
/// SACKed (`IsLost`, section 4); Linux's default `tp->reordering` (`TCP_FASTRETRANS_THRESH`).
pub const DUP_THRESH: u64 = 3;

/// What the sender knows about one segment in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegState {
    /// When its first copy was sent.
    pub first: SimTime,
    /// When its latest copy was sent (RFC 8985 Segment.xmit_ts).
    pub sent: SimTime,
    /// Covered by a SACK block (Linux TCPCB_SACKED_ACKED).
    pub sacked: bool,
    /// Marked lost and not SACKed (TCPCB_LOST).
    pub lost: bool,
    /// A retransmission of it is in flight and counted in `pipe` (TCPCB_SACKED_RETRANS).
    pub retrans_out: bool,
    /// Ever retransmitted (RFC 8985 Segment.retransmitted; TCPCB_EVER_RETRANS).
    pub retransmitted: bool,
    /// Its latest copy's place among all transmissions: ties of `sent` are broken by it,
    /// since the kernel's clock moves between two ACKs where the simulator's may not.
    pub order: u64,
}

/// A segment newly delivered by an ACK, cumulatively or by SACK: RACK's input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Delivered {
    pub seq: u64,
    pub sent: SimTime,
    /// The copy's transmission order (`SegState::order`).
    pub order: u64,
    pub retransmitted: bool,
}

/// Why the first SACK block is a DSACK (RFC 2883 section 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dsack {
    /// It starts below the cumulative ACK (4.1.1: a duplicate of acknowledged data).
    BelowAck { start: u64, end: u64 },
    /// It lies inside the second block (4.1.2: a duplicate of out-of-order data).
    InsideSecond { start: u64, end: u64 },
}

/// What one ACK changed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AckOutcome {
    /// The first block reported a duplicate (for undo and RACK's reordering window).
    pub dsack: Option<Dsack>,
    /// Segments delivered for the first time, in sequence order.
    pub delivered: Vec<Delivered>,
    /// Segments the `IsLost` rule newly marked lost.
    pub newly_lost: u64,
    /// The cumulative ACK advanced.
    pub advanced: bool,
}

/// What RFC 6675's `NextSeg()` (section 4) says to send next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NextSeg {
    /// Rule 1: the lowest lost segment above HighRxt and below HighSACK.
    Lost(u64),
    /// Rule 2: new data (the caller said some is ready and the window allows it).
    New(u64),
    /// Rule 3: the lowest unSACKed segment above HighRxt and below HighSACK, not yet lost.
    Unsacked(u64),
}

#[derive(Clone, Debug)]
pub struct Scoreboard {
    /// HighACK + 1 in RFC 6675 terms, Linux snd_una: the first unacknowledged segment.
    una: u64,
    /// One entry per segment in `[una, nxt)`.
    segs: VecDeque<SegState>,
    /// SACKed ranges, start -> end, disjoint and not adjacent, inside `[una, nxt)`.
    sacked: BTreeMap<u64, u64>,
    /// Lost, not SACKed, no retransmission in flight: what waits to be retransmitted.
    lost_queue: BTreeSet<u64>,
    /// Not SACKed and not waiting in `lost_queue`, by (send time, seq): RACK's scan order.
    tsorted: BTreeMap<(SimTime, u64), u64>,
    /// Transmissions so far, for `SegState::order`.
    sends: u64,
    sacked_out: u64,
    lost_out: u64,
    retrans_out: u64,
    /// RFC 6675 HighRxt: the highest segment retransmitted in this recovery.
    high_rxt: Option<u64>,
    /// Every unSACKed segment below this has been marked lost by `IsLost`.
    loss_mark: u64,
    /// Whether `IsLost` marks segments lost (RFC 6675) or leaves marking to the caller
    /// (RACK, RTO).
    dupthresh_marking: bool,
    /// Elementary steps taken (interval visits and segment updates), to check the cost.
    work: u64,
    /// Lost marks made so far (Linux `tp->lost`).
    lost_marks: u64,
}

impl Scoreboard {
    /// An empty scoreboard whose next segment is `una`. With `dupthresh_marking` the
    /// `IsLost` rule marks segments lost as SACKs arrive (RFC 6675 section 5 step 4).
    pub fn new(una: u64, dupthresh_marking: bool) -> Self {
        Scoreboard {
            una,
            segs: VecDeque::new(),
            sacked: BTreeMap::new(),
            lost_queue: BTreeSet::new(),
            tsorted: BTreeMap::new(),
            sends: 0,
            sacked_out: 0,
            lost_out: 0,
            retrans_out: 0,
            high_rxt: None,
            loss_mark: una,
            dupthresh_marking,
            work: 0,
            lost_marks: 0,
        }
    }

    pub fn una(&self) -> u64 {
        self.una
    }
    /// Linux snd_nxt / RFC 6675 HighData + 1.
    pub fn nxt(&self) -> u64 {
        self.una + self.segs.len() as u64
    }
    pub fn sacked_out(&self) -> u64 {
        self.sacked_out
    }
    pub fn lost_out(&self) -> u64 {
        self.lost_out
    }
    pub fn retrans_out(&self) -> u64 {
        self.retrans_out
    }
    pub fn high_rxt(&self) -> Option<u64> {
        self.high_rxt
    }
    pub fn work(&self) -> u64 {
        self.work
    }
    /// Segments marked lost so far, counted each time (Linux `tp->lost`).
    pub fn lost_marks(&self) -> u64 {
        self.lost_marks
    }
    pub fn segment(&self, seq: u64) -> Option<&SegState> {
        seq.checked_sub(self.una).and_then(|i| self.segs.get(i as usize))
    }
    /// RFC 6675 HighSACK + 1: one past the highest SACKed segment.
    pub fn high_sack(&self) -> Option<u64> {
        self.sacked.iter().next_back().map(|(_, &e)| e)
    }
    /// The unSACKed segments in send-time order (Linux `tsorted_sent_queue`), leaving out
    /// those lost and waiting for a retransmission, as `tcp_rack_detect_loss` skips them.
    pub fn sent_order(&self) -> impl Iterator<Item = (SimTime, u64, u64)> + '_ {
        self.tsorted.iter().map(|(&(t, order), &seq)| (t, order, seq))
    }

    fn next_order(&mut self) -> u64 {
        self.sends += 1;
        self.sends
    }
    /// The lowest segment marked lost and not yet retransmitted (the head of Linux's
    /// `tcp_xmit_retransmit_queue` walk).
    pub fn first_lost(&self) -> Option<u64> {
        self.lost_queue.iter().next().copied()
    }

    fn seg_mut(&mut self, seq: u64) -> &mut SegState {
        let i = (seq - self.una) as usize;
        &mut self.segs[i]
    }

    /// A new segment leaves at `now`; returns its sequence number.
    pub fn on_send(&mut self, now: SimTime) -> u64 {
        let seq = self.nxt();
        let order = self.next_order();
        self.segs.push_back(SegState {
            order,
            first: now,
            sent: now,
            sacked: false,
            lost: false,
            retrans_out: false,
            retransmitted: false,
        });
        self.tsorted.insert((now, order), seq);
        self.work += 1;
        seq
    }

    /// `seq` is retransmitted at `now` (RFC 6675 section 5 step 4.3: HighRxt moves up).
    /// Returns false, changing nothing, for a segment not in flight or already SACKed.
    pub fn on_retransmit(&mut self, seq: u64, now: SimTime) -> bool {
        match self.segment(seq) {
            Some(s) if !s.sacked => {}
            _ => return false,
        }
        let old = *self.seg_mut(seq);
        self.tsorted.remove(&(old.sent, old.order));
        self.lost_queue.remove(&seq);
        if !old.retrans_out {
            self.retrans_out += 1;
        }
        let order = self.next_order();
        let s = self.seg_mut(seq);
        s.retrans_out = true;
        s.retransmitted = true;
        s.sent = now;
        s.order = order;
        self.tsorted.insert((now, order), seq);
        self.high_rxt = Some(self.high_rxt.map_or(seq, |h| h.max(seq)));
        self.work += 1;
        true
    }

    /// A copy of `seq` that is not a repair of a loss (a tail loss probe,
    /// `__tcp_retransmit_skb` without `TCPCB_SACKED_RETRANS`): its send time moves and it
    /// counts as retransmitted for Karn and RACK, but not in `retrans_out`.
    pub fn on_probe_copy(&mut self, seq: u64, now: SimTime) {
        let Some(&old) = self.segment(seq) else { return };
        if old.sacked {
            return;
        }
        let waiting = self.lost_queue.contains(&seq);
        let order = self.next_order();
        if !waiting {
            self.tsorted.remove(&(old.sent, old.order));
            self.tsorted.insert((now, order), seq);
        }
        let s = self.seg_mut(seq);
        s.sent = now;
        s.order = order;
        s.retransmitted = true;
        self.work += 1;
    }

    /// Every lost mark is cleared (`tcp_undo_cwnd_reduction(sk, true)` after a spurious
    /// timeout): segments waiting for a retransmission are back in flight.
    pub fn clear_lost(&mut self) {
        for seq in std::mem::take(&mut self.lost_queue) {
            let s = self.seg_mut(seq);
            s.lost = false;
            let key = (s.sent, s.order);
            self.tsorted.insert(key, seq);
        }
        for s in self.segs.iter_mut().filter(|s| s.lost) {
            s.lost = false;
        }
        self.lost_out = 0;
        self.work += self.segs.len() as u64;
    }

    /// Forget HighRxt, as a new recovery episode or an RTO starts over (RFC 6675 section
    /// 5 step 4.1 sets it to HighACK; section 5.1 after an RTO).
    pub fn reset_high_rxt(&mut self) {
        self.high_rxt = None;
    }

    /// Mark `seq` lost (RACK, an RTO): Linux `tcp_mark_skb_lost`, which also forgets a
    /// retransmission in flight, now lost too (`retrans_out` drops). Returns whether it
    /// changed anything: SACKed segments and those already waiting are left alone.
    pub fn mark_lost(&mut self, seq: u64) -> bool {
        self.mark(seq, true)
    }

    /// `lose_retrans` false is `tcp_skb_mark_lost` as `IsLost` uses it: a segment whose
    /// retransmission is in flight is marked lost without counting that copy lost.
    fn mark(&mut self, seq: u64, lose_retrans: bool) -> bool {
        let s = match self.segment(seq) {
            Some(s) => *s,
            None => return false,
        };
        if s.sacked || (s.lost && !s.retrans_out) {
            return false;
        }
        if s.retrans_out && !lose_retrans {
            if s.lost {
                return false;
            }
            self.lost_out += 1;
            self.lost_marks += 1;
            self.seg_mut(seq).lost = true;
            self.work += 1;
            return true;
        }
        self.tsorted.remove(&(s.sent, s.order));
        if s.retrans_out {
            self.retrans_out -= 1;
        }
        if !s.lost {
            self.lost_out += 1;
        }
        self.lost_marks += 1;
        let m = self.seg_mut(seq);
        m.retrans_out = false;
        m.lost = true;
        self.lost_queue.insert(seq);
        self.work += 1;
        true
    }

    /// RFC 6675 `IsLost(seq)`: unSACKed, with at least DupThresh segments SACKed above it.
    pub fn is_lost(&self, seq: u64) -> bool {
        match self.segment(seq) {
            Some(s) if !s.sacked => self.dupthresh_frontier().is_some_and(|f| seq < f),
            _ => false,
        }
    }

    /// RFC 6675 SetPipe (section 4) with `IsLost` read as the lost mark, which is what
    /// Linux counts (`tcp_packets_in_flight`: packets_out − (sacked_out + lost_out) +
    /// retrans_out): each unSACKed segment not lost counts once, and once more if a
    /// retransmission of it is in flight.
    pub fn pipe(&self) -> u64 {
        self.segs.len() as u64 - self.sacked_out - self.lost_out + self.retrans_out
    }

    /// RFC 6675 `NextSeg()` (section 4), rules 1 to 3. `new_data` says rule 2 may apply
    /// (data is waiting and the receive window has room).
    pub fn next_seg(&self, new_data: bool) -> Option<NextSeg> {
        let high_sack = self.high_sack();
        // (1.a) S2 > HighRxt.
        let floor = self.high_rxt.map_or(self.una, |h| h + 1).max(self.una);
        let below_high_sack = |s: u64| high_sack.is_some_and(|h| s < h); // (1.b)
        // (1.c) IsLost(S2): the lost mark; the lowest such is the first in the queue.
        if let Some(&s) = self.lost_queue.range(floor..).next()
            && below_high_sack(s)
        {
            return Some(NextSeg::Lost(s));
        }
        if new_data {
            return Some(NextSeg::New(self.nxt())); // rule 2
        }
        // Rule 3: (1.a) and (1.b) without (1.c).
        let s = self.first_unsacked_from(floor);
        (s < self.nxt() && below_high_sack(s)).then_some(NextSeg::Unsacked(s))
    }

    fn first_unsacked_from(&self, seq: u64) -> u64 {
        match self.sacked.range(..=seq).next_back() {
            Some((_, &e)) if e > seq => e,
            _ => seq,
        }
    }

    /// The DupThresh-th highest SACKed segment: an unSACKed segment has DupThresh SACKed
    /// segments above it exactly when it lies below this one.
    fn dupthresh_frontier(&self) -> Option<u64> {
        let mut need = DUP_THRESH;
        for (&s, &e) in self.sacked.iter().rev() {
            if e - s >= need {
                return Some(e - need);
            }
            need -= e - s;
        }
        None
    }

    /// Apply one ACK: cumulative `ack` and its SACK blocks, first block first. An ACK
    /// beyond what was sent is ignored as Linux's `tcp_ack` ignores it ("ACK of
    /// unsent data"); blocks are clipped to the segments in flight (`tcp_is_sackblock_valid`
    /// drops the rest).
    pub fn on_ack(&mut self, ack: u64, blocks: &[(u64, u64)]) -> AckOutcome {
        if ack > self.nxt() {
            return AckOutcome::default();
        }
        let mut out = AckOutcome { dsack: dsack_of(ack, blocks), ..AckOutcome::default() };
        while self.una < ack {
            let s = self.segs.pop_front().expect("una < ack <= nxt");
            let seq = self.una;
            self.una += 1;
            self.work += 1;
            if s.sacked {
                self.sacked_out -= 1;
                continue;
            }
            self.tsorted.remove(&(s.sent, s.order));
            self.lost_queue.remove(&seq);
            self.lost_out -= u64::from(s.lost);
            self.retrans_out -= u64::from(s.retrans_out);
            out.delivered.push(Delivered { seq, sent: s.sent, order: s.order, retransmitted: s.retransmitted });
            out.advanced = true;
        }
        self.drop_sacked_below_una();
        self.loss_mark = self.loss_mark.max(self.una);
        for &(start, end) in blocks {
            let (start, end) = (start.max(self.una), end.min(self.nxt()));
            if start < end {
                for (gs, ge) in self.insert_sacked(start, end) {
                    for seq in gs..ge {
                        out.delivered.push(self.sack_one(seq));
                    }
                }
            }
        }
        out.delivered.sort_by_key(|d| d.seq);
        if self.dupthresh_marking {
            out.newly_lost = self.advance_loss_mark();
        }
        out
    }

    fn drop_sacked_below_una(&mut self) {
        while let Some((&s, &e)) = self.sacked.iter().next() {
            if s >= self.una {
                break;
            }
            self.work += 1;
            self.sacked.remove(&s);
            if e > self.una {
                self.sacked.insert(self.una, e);
            }
        }
    }

    /// `tcp_sacktag_one`: a newly SACKed segment leaves the lost and retransmitted counts.
    fn sack_one(&mut self, seq: u64) -> Delivered {
        let s = *self.seg_mut(seq);
        self.work += 1;
        self.tsorted.remove(&(s.sent, s.order));
        self.lost_queue.remove(&seq);
        self.lost_out -= u64::from(s.lost);
        self.retrans_out -= u64::from(s.retrans_out);
        self.sacked_out += 1;
        let m = self.seg_mut(seq);
        m.sacked = true;
        m.lost = false;
        m.retrans_out = false;
        Delivered { seq, sent: s.sent, order: s.order, retransmitted: s.retransmitted }
    }

    /// Merge `[start, end)` into the SACKed intervals; returns the sub-ranges that were
    /// not SACKed before, visiting only the intervals that overlap or touch it.
    fn insert_sacked(&mut self, start: u64, end: u64) -> Vec<(u64, u64)> {
        let mut lo = start;
        let mut hi = end;
        let mut met: Vec<(u64, u64)> = Vec::new();
        if let Some((&s, &e)) = self.sacked.range(..start).next_back()
            && e >= start
        {
            met.push((s, e));
        }
        met.extend(self.sacked.range(start..=end).map(|(&s, &e)| (s, e)));
        let mut gaps = Vec::new();
        let mut cursor = start;
        for &(s, e) in &met {
            self.work += 1;
            self.sacked.remove(&s);
            if s > cursor {
                gaps.push((cursor, s.min(end)));
            }
            cursor = cursor.max(e);
            lo = lo.min(s);
            hi = hi.max(e);
        }
        if cursor < end {
            gaps.push((cursor, end));
        }
        self.sacked.insert(lo, hi);
        gaps
    }

    /// RFC 6675 section 5 step 4 / `IsLost`: mark the unSACKed segments below the new
    /// DupThresh frontier that were not below the old one.
    fn advance_loss_mark(&mut self) -> u64 {
        let Some(frontier) = self.dupthresh_frontier() else { return 0 };
        let mut newly = 0;
        let mut cursor = self.loss_mark.max(self.una);
        while cursor < frontier {
            self.work += 1;
            cursor = self.first_unsacked_from(cursor);
            let next_sacked = self.sacked.range(cursor..).next().map_or(frontier, |(&s, _)| s).min(frontier);
            for seq in cursor..next_sacked {
                newly += u64::from(self.mark(seq, false));
            }
            cursor = next_sacked;
        }
        self.loss_mark = self.loss_mark.max(frontier);
        newly
    }
}

/// RFC 2883 section 4 as Linux's `tcp_check_dsack` reads it: the first block is a DSACK
/// if it starts below the cumulative ACK, or if it lies inside the second block.
pub fn dsack_of(ack: u64, blocks: &[(u64, u64)]) -> Option<Dsack> {
    let &(start, end) = blocks.first()?;
    if start < ack {
        return Some(Dsack::BelowAck { start, end });
    }
    match blocks.get(1) {
        Some(&(s1, e1)) if start >= s1 && end <= e1 => Some(Dsack::InsideSecond { start, end }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ms: u64) -> SimTime {
        SimTime(ms * 1_000_000)
    }

    /// A scoreboard with segments `0..n` sent at 0 ms, 1 ms, 2 ms, ...
    fn sent(n: u64, dupthresh: bool) -> Scoreboard {
        let mut sb = Scoreboard::new(0, dupthresh);
        for i in 0..n {
            sb.on_send(t(i));
        }
        sb
    }

    #[test]
    fn rfc6675_a_single_loss_is_lost_after_dupthresh_sacks_and_nextseg_retransmits_it() {
        // Ten segments out, 2 is dropped; 3, 4 and 5 arrive and each draws a duplicate
        // ACK of 2 whose first block (RFC 2018 section 4) covers what arrived above it.
        let mut sb = sent(10, true);
        let a = sb.on_ack(2, &[(3, 4)]);
        // The cumulative ACK delivered 0 and 1, the block 3.
        assert_eq!(a.delivered.iter().map(|d| d.seq).collect::<Vec<_>>(), vec![0, 1, 3]);
        assert!(a.advanced);
        assert_eq!(a.newly_lost, 0);
        assert!(!sb.is_lost(2)); // one SACKed above it, DupThresh is 3
        assert_eq!(sb.on_ack(2, &[(3, 5)]).newly_lost, 0);
        assert!(!sb.is_lost(2)); // two
        let a = sb.on_ack(2, &[(3, 6)]);
        assert!(!a.advanced);
        assert_eq!(a.newly_lost, 1);
        assert!(sb.is_lost(2)); // three SACKed above: IsLost (RFC 6675 section 4)
        assert!(!sb.is_lost(6)); // nothing SACKed above 6
        // SetPipe by hand, HighACK = 2, HighData = 9: segment 2 lost and not retransmitted
        // counts 0; 3, 4, 5 SACKed count 0; 6, 7, 8, 9 count 1 each: pipe = 4.
        assert_eq!(sb.pipe(), 4);
        // NextSeg rule 1: 2 > HighRxt (none), 2 < HighSACK (5), IsLost(2).
        assert_eq!(sb.next_seg(true), Some(NextSeg::Lost(2)));
        assert!(sb.on_retransmit(2, t(50)));
        // The retransmission is now the latest sent (Linux moves it to the tail of
        // tsorted_sent_queue): RACK scans 6, 7, 8, 9 before it.
        let order: Vec<u64> = sb.sent_order().map(|(_, _, s)| s).collect();
        assert_eq!(order, vec![6, 7, 8, 9, 2]);
        // SetPipe (b): 2 <= HighRxt adds one: pipe = 5.
        assert_eq!(sb.pipe(), 5);
        // Rule 1 finds nothing above HighRxt = 2; rule 2 sends new data when allowed;
        // rule 3 finds no unSACKed segment in (2, 6).
        assert_eq!(sb.next_seg(true), Some(NextSeg::New(10)));
        assert_eq!(sb.next_seg(false), None);
        // The retransmission arrives: ACK 6 delivers 2 once, none of 3..5 again.
        let a = sb.on_ack(6, &[]);
        assert_eq!(a.delivered.iter().map(|d| d.seq).collect::<Vec<_>>(), vec![2]);
        assert!(a.delivered[0].retransmitted);
        assert_eq!((sb.una(), sb.sacked_out(), sb.lost_out(), sb.retrans_out()), (6, 0, 0, 0));
        assert_eq!(sb.pipe(), 4); // 6, 7, 8, 9
    }

    #[test]
    fn rfc6675_nextseg_takes_rule_1_then_2_then_3_and_pipe_counts_by_hand() {
        // Segments 0..10 out; SACKed 3..6 and 8: holes 0..3, 6..8 and 9 above HighSACK.
        let mut sb = sent(10, true);
        let a = sb.on_ack(0, &[(8, 9), (3, 6)]);
        assert_eq!(a.dsack, None);
        // SACKed {3, 4, 5, 8}; the third highest is 4, so IsLost holds for 0, 1, 2 only.
        assert_eq!(a.newly_lost, 3);
        assert!(sb.is_lost(2) && !sb.is_lost(6) && !sb.is_lost(7));
        // SetPipe: 0, 1, 2 lost: 0; 6, 7, 9 not lost: 3.
        assert_eq!(sb.pipe(), 3);
        assert_eq!(sb.next_seg(false), Some(NextSeg::Lost(0)));
        for s in 0..3 {
            assert_eq!(sb.next_seg(true), Some(NextSeg::Lost(s)));
            sb.on_retransmit(s, t(20));
        }
        // Each retransmitted lost segment adds one (SetPipe (b)): 3 + 3 = 6.
        assert_eq!(sb.pipe(), 6);
        assert_eq!(sb.high_rxt(), Some(2));
        assert_eq!(sb.next_seg(true), Some(NextSeg::New(10))); // rule 2
        // Rule 3: the lowest unSACKed segment above HighRxt and below HighSACK (9) is 6.
        assert_eq!(sb.next_seg(false), Some(NextSeg::Unsacked(6)));
        sb.on_retransmit(6, t(21));
        // 6 is not lost and has a retransmission out: SetPipe counts it twice (a, b).
        assert_eq!(sb.pipe(), 7);
        assert_eq!(sb.next_seg(false), Some(NextSeg::Unsacked(7)));
        sb.on_retransmit(7, t(22));
        // 9 lies above HighSACK: rule 3's (1.b) excludes it.
        assert_eq!(sb.next_seg(false), None);
    }

    #[test]
    fn a_segment_lost_twice_leaves_the_retransmitted_count_tcp_mark_skb_lost() {
        let mut sb = sent(5, false);
        sb.on_ack(0, &[(1, 5)]);
        assert!(sb.mark_lost(0));
        assert!(!sb.mark_lost(0)); // already waiting for its retransmission
        assert_eq!(sb.pipe(), 0);
        sb.on_retransmit(0, t(10));
        assert_eq!((sb.lost_out(), sb.retrans_out(), sb.pipe()), (1, 1, 1));
        // RACK declares the retransmission lost too: retrans_out drops, it waits again.
        assert!(sb.mark_lost(0));
        assert_eq!((sb.lost_out(), sb.retrans_out(), sb.pipe()), (1, 0, 0));
        assert_eq!(sb.first_lost(), Some(0));
        assert!(!sb.mark_lost(3)); // SACKed segments are never marked lost
    }

    // RFC 2883 section 4.1's examples use 500-byte segments; here byte b is segment b/500
    // (3000 -> 6, 3500 -> 7, 4000 -> 8, 4500 -> 9, 5000 -> 10, 5500 -> 11).

    #[test]
    fn rfc2883_4_1_example_1_a_block_below_the_cumulative_ack_is_a_dsack() {
        // 3000-3499 and 3500-3999 arrive, both ACKs are dropped, 3000-3499 is sent again:
        // "4000, SACK=3000-3500", block [6, 7) below ACK 8.
        let mut sb = Scoreboard::new(6, true);
        sb.on_send(t(0));
        sb.on_send(t(0));
        sb.on_retransmit(6, t(300));
        let a = sb.on_ack(8, &[(6, 7)]);
        assert_eq!(a.dsack, Some(Dsack::BelowAck { start: 6, end: 7 }));
        assert_eq!(a.delivered.len(), 2); // by the cumulative ACK; the block adds nothing
        assert_eq!(sb.sacked_out(), 0);
    }

    #[test]
    fn rfc2883_4_1_example_2_a_dsack_then_an_ordinary_block() {
        // 3000..4999 sent, 4000-4499 dropped, ACKs dropped, 3000-3499 sent again:
        // "4000, SACK=3000-3500, 4500-5000": the first block is the DSACK, the second
        // still SACKs 4500-4999 (segment 9).
        let mut sb = Scoreboard::new(6, true);
        for _ in 0..4 {
            sb.on_send(t(0));
        }
        sb.on_retransmit(6, t(300));
        let a = sb.on_ack(8, &[(6, 7), (9, 10)]);
        assert_eq!(a.dsack, Some(Dsack::BelowAck { start: 6, end: 7 }));
        assert_eq!(a.delivered.iter().map(|d| d.seq).collect::<Vec<_>>(), vec![6, 7, 9]);
        assert_eq!((sb.una(), sb.sacked_out(), sb.high_sack()), (8, 1, Some(10)));
    }

    #[test]
    fn rfc2883_4_1_example_3_a_first_block_inside_the_second_is_a_dsack() {
        // 3500..5499 sent, 4000-4499 dropped; "4000, SACK=4500-5000", "4000,
        // SACK=4500-5500", then 5000-5499 arrives twice: "4000, SACK=5000-5500,
        // 4500-5500", block [10, 11) inside [9, 11).
        let mut sb = Scoreboard::new(7, true);
        for _ in 0..4 {
            sb.on_send(t(0));
        }
        assert_eq!(sb.on_ack(8, &[(9, 10)]).dsack, None);
        assert_eq!(sb.on_ack(8, &[(9, 11)]).dsack, None);
        let a = sb.on_ack(8, &[(10, 11), (9, 11)]);
        assert_eq!(a.dsack, Some(Dsack::InsideSecond { start: 10, end: 11 }));
        assert!(a.delivered.is_empty());
        // An ordinary first block, the newest arrival (RFC 2018 section 4), is none.
        assert_eq!(dsack_of(8, &[(10, 11), (9, 10)]), None);
        // A first block only overlapping the second is not inside it.
        assert_eq!(dsack_of(8, &[(9, 12), (10, 11)]), None);
        assert_eq!(dsack_of(8, &[]), None);
    }

    #[test]
    fn an_ack_of_unsent_data_is_ignored_and_blocks_are_clipped_tcp_is_sackblock_valid() {
        let mut sb = sent(4, true);
        assert_eq!(sb.on_ack(9, &[(1, 2)]), AckOutcome::default());
        assert_eq!(sb.una(), 0);
        let a = sb.on_ack(0, &[(2, 40)]);
        assert_eq!(a.delivered.len(), 2); // 2 and 3
        assert_eq!(sb.high_sack(), Some(4));
    }

    #[test]
    fn a_window_of_100000_segments_costs_linear_work_not_quadratic() {
        // Every even segment is lost: 50,000 holes. Each ACK carries the newest odd
        // segment's block and two older ones (RFC 2018 section 4 repeats recent blocks),
        // so a scoreboard that walked the window per ACK would take ~5·10⁹ steps.
        const N: u64 = 100_000;
        let mut sb = sent(N, true);
        for odd in (1..N).step_by(2) {
            let older = odd.saturating_sub(2).max(1);
            let oldest = odd.saturating_sub(4).max(1);
            sb.on_ack(0, &[(odd, odd + 1), (older, older + 1), (oldest, oldest + 1)]);
        }
        assert_eq!(sb.sacked_out(), N / 2);
        // IsLost: the third-highest SACKed segment is 99,995 (99,999, 99,997, 99,995), so
        // the even segments below it are lost: 0, 2, ..., 99,994, that is 49,998; 99,996
        // and 99,998 have only two SACKed above them.
        assert_eq!(sb.lost_out(), 49_998);
        for s in (0..99_995).step_by(2) {
            assert_eq!(sb.next_seg(false), Some(NextSeg::Lost(s)));
            sb.on_retransmit(s, t(N + s));
        }
        // Rule 3 then offers the two not yet lost.
        assert_eq!(sb.next_seg(false), Some(NextSeg::Unsacked(99_996)));
        let acks = N / 2;
        // Per ACK: at most 3 blocks, each meeting at most 2 intervals, plus the segments
        // changed (each SACKed once, lost once) and the frontier's steps.
        assert!(sb.work() <= N + acks * 3 * 3 + 3 * N, "work {}", sb.work());
        let before = sb.work();
        let a = sb.on_ack(N, &[]);
        assert_eq!(a.delivered.len() as u64, N / 2);
        assert_eq!((sb.sacked_out(), sb.lost_out(), sb.retrans_out(), sb.pipe()), (0, 0, 0, 0));
        // One step per segment acknowledged and per SACKed interval dropped (50,000).
        assert_eq!(sb.work() - before, N + N / 2);
    }

    #[test]
    fn islost_keeps_a_retransmission_in_flight_counted_tcp_skb_mark_lost() {
        // 0..6 out, 1 SACKed. NextSeg rule 3 retransmits 0 before it is lost.
        let mut sb = sent(6, true);
        sb.on_ack(0, &[(1, 2)]);
        assert_eq!(sb.next_seg(false), Some(NextSeg::Unsacked(0)));
        sb.on_retransmit(0, t(10));
        // SetPipe: 0 not lost and retransmitted counts 2; 2..6 count 4: pipe = 6.
        assert_eq!(sb.pipe(), 6);
        // 2 and 3 SACKed: three above 0, IsLost(0). Its retransmission stays counted:
        // SetPipe = 1 (0, (b) only) + 2 (4, 5) = 3.
        let a = sb.on_ack(0, &[(1, 4)]);
        assert_eq!(a.newly_lost, 1);
        assert_eq!((sb.lost_out(), sb.retrans_out(), sb.pipe()), (1, 1, 3));
        assert_eq!(sb.first_lost(), None); // nothing waits: its copy is out
        assert_eq!(sb.next_seg(false), None); // 4 and 5 lie above HighSACK
    }

    #[test]
    fn counters_match_rfc6675_setpipe_and_islost_recomputed_from_scratch() {
        // Random ACKs with up to four blocks (RFC 2018's limit without timestamps),
        // random retransmissions and RACK-style marks, checked after each step against
        // the definitions evaluated naively over the whole window.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut rnd = move |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        let mut sb = sent(0, true);
        let mut sacked_naive = std::collections::BTreeSet::new();
        let (mut saw_islost, mut saw_retrans) = (0, 0);
        for step in 0..3000u64 {
            while sb.nxt() < sb.una() + 60 {
                sb.on_send(t(step));
            }
            let (una, nxt) = (sb.una(), sb.nxt());
            match rnd(10) {
                0 => {
                    sb.mark_lost(una + rnd(nxt - una));
                }
                1 => {
                    sb.on_retransmit(una + rnd(nxt - una), t(step));
                }
                _ => {
                    let ack = if rnd(4) == 0 { una + rnd(4) } else { una };
                    let blocks: Vec<(u64, u64)> = (0..rnd(5))
                        .map(|_| {
                            let s = una + rnd(nxt - una + 2);
                            (s, s + 1 + rnd(5))
                        })
                        .collect();
                    sb.on_ack(ack, &blocks);
                    for &(s, e) in &blocks {
                        sacked_naive.extend(s.max(ack)..e.min(nxt));
                    }
                    sacked_naive.retain(|&q| q >= sb.una());
                }
            }
            let (una, nxt) = (sb.una(), sb.nxt());
            let segs: Vec<SegState> = (una..nxt).map(|q| *sb.segment(q).unwrap()).collect();
            let sacked: std::collections::BTreeSet<u64> =
                (una..nxt).filter(|&q| segs[(q - una) as usize].sacked).collect();
            assert_eq!(sacked, sacked_naive, "step {step}");
            let mut pipe = 0;
            for q in una..nxt {
                let s = segs[(q - una) as usize];
                let above = sacked.range(q + 1..).count() as u64;
                assert_eq!(sb.is_lost(q), !s.sacked && above >= DUP_THRESH, "step {step}");
                if !s.sacked && sb.is_lost(q) {
                    assert!(s.lost, "IsLost({q}) not marked at step {step}");
                }
                if !s.sacked {
                    pipe += u64::from(!s.lost) + u64::from(s.retrans_out);
                }
            }
            assert_eq!(sb.pipe(), pipe, "step {step}");
            assert_eq!(sb.sacked_out(), sacked.len() as u64);
            let waiting = segs.iter().filter(|s| s.lost && !s.retrans_out).count();
            let first = (una..nxt).find(|&q| {
                let s = segs[(q - una) as usize];
                s.lost && !s.retrans_out
            });
            assert_eq!((sb.lost_queue.len(), sb.first_lost()), (waiting, first));
            saw_islost += usize::from((una..nxt).any(|q| sb.is_lost(q)));
            saw_retrans += usize::from(sb.retrans_out() > 0);
        }
        // The walk did exercise losses, retransmissions and a moving window.
        assert!(saw_islost > 300 && saw_retrans > 100, "{saw_islost} {saw_retrans}");
        assert!(sb.una() > 1000, "una {}", sb.una());
    }
}
