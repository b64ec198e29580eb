//! RACK, loss detection by time (RFC 8985 section 6; Linux `net/ipv4/tcp_recovery.c`):
//! a segment is lost when a segment sent sufficiently later has been delivered. The
//! sender remembers the send time of the most recently sent segment delivered so far
//! (RACK.xmit_ts, RACK.end_seq) and that segment's round trip (RACK.rtt); a segment
//! still outstanding that was sent before it is lost once RACK.rtt plus a reordering
//! window has passed since its own transmission, and otherwise sets the reordering timer.
//!
//! The reordering window is Linux's `tcp_rack_reo_wnd` (RFC 8985 6.2 step 4): zero while
//! no reordering has been seen and the sender is in recovery or has DupThresh segments
//! SACKed, otherwise min_rtt/4 times `reo_wnd_steps`, capped at SRTT. A DSACK grows the
//! steps by one at most once per round trip (`tcp_rack_update_reo_wnd`); they return to
//! one after 16 recoveries without DSACK (`tcp_try_undo_recovery`).
//!
//! Input: the segments an ACK newly delivered and the scoreboard (`scoreboard.rs`), whose
//! segments this module marks lost. Not modelled: the timestamp check on retransmitted
//! segments (RFC 8985 6.2 step 2, "ACK.ts_option.echo_reply < Segment.xmit_ts"), the
//! sysctl bits `TCP_RACK_STATIC_REO_WND` and `TCP_RACK_NO_DUPTHRESH` (both off by
//! default), and what the sender does with a loss (recovery, cwnd): the caller's. The
//! caller also supplies min_rtt (Linux's 5-minute windowed minimum, `tcp_min_rtt`), SRTT
//! and whether reordering was seen (`tcp_check_sack_reordering` sets `reord_seen`). Times
//! are kept in nanoseconds where Linux truncates to microseconds; the window's quarter of
//! min_rtt can differ from the kernel's by under a microsecond.

use super::scoreboard::{Delivered, Scoreboard};
use crate::engine::time::{SimDuration, SimTime};
use crate::model::rto::linux::{jiffies_to_ns, usecs_to_jiffies};

/// `TCP_RACK_RECOVERY_THRESH` (include/net/tcp.h), RFC 8985's 16: recoveries a grown
/// reordering window persists for.
pub const RECOVERY_THRESH: u32 = 16;

/// `TCP_TIMEOUT_MIN_US` (include/net/tcp.h): 2 ms of slack added to the reordering timer
/// before it is rounded to jiffies (older kernels added `TCP_TIMEOUT_MIN`, 2 jiffies,
/// after rounding).
const TCP_TIMEOUT_MIN_US: u64 = 2_000;

/// What the reordering window depends on besides RACK's own state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReoWndInputs {
    /// `tcp_min_rtt`: the windowed minimum RTT; `None` before any sample.
    pub min_rtt: Option<SimDuration>,
    pub srtt: SimDuration,
    /// `tp->reord_seen` / RACK.reordering_seen: reordering was observed on this connection.
    pub reordering_seen: bool,
    /// In fast recovery or after an RTO (`icsk_ca_state >= TCP_CA_Recovery`).
    pub in_recovery: bool,
    /// SACKed segments (`tp->sacked_out`).
    pub sacked_out: u64,
    /// `tp->reordering`, DupThresh: 3 unless reordering raised it.
    pub reordering: u64,
}

/// What one loss detection pass found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Detection {
    /// Segments newly marked lost, in send-time order.
    pub lost: Vec<u64>,
    /// How long until the last of the others would be lost: the reordering timer's
    /// deadline from now (RFC 8985 6.2 step 5 `timeout`); `None` if nothing waits.
    pub timeout: Option<SimDuration>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rack {
    /// RACK.xmit_ts (Linux `rack.mstamp`); `None` until something is delivered.
    xmit_ts: Option<SimTime>,
    /// RACK.end_seq: one past that segment.
    end_seq: u64,
    /// That copy's transmission order, which breaks ties of `xmit_ts`.
    end_order: u64,
    /// RACK.rtt (`rack.rtt_us`).
    rtt: SimDuration,
    /// `rack.advanced`: delivery moved RACK since the last detection.
    advanced: bool,
    /// RACK.reo_wnd_mult (`rack.reo_wnd_steps`).
    reo_wnd_steps: u32,
    /// RACK.reo_wnd_persist.
    reo_wnd_persist: u32,
    /// A DSACK arrived and has not yet grown the window (`rack.dsack_seen`).
    dsack_seen: bool,
    /// `tp->delivered` when the window last grew (`rack.last_delivered`).
    last_delivered: u64,
}

impl Default for Rack {
    fn default() -> Self {
        Self::new()
    }
}

/// RFC 8985 RACK_sent_after / `tcp_skb_sent_after`: later time, or the same time and
/// sent later. The kernel breaks a tie by sequence, which within one burst is the order
/// of transmission; here the order itself decides, since two ACKs at the same simulated
/// instant would be microseconds apart in a kernel.
fn sent_after(t1: SimTime, order1: u64, t2: SimTime, order2: u64) -> bool {
    t1 > t2 || (t1 == t2 && order1 > order2)
}

impl Rack {
    /// `tcp_init_sock`: `rack.reo_wnd_steps = 1`; nothing delivered yet.
    pub fn new() -> Self {
        Rack {
            xmit_ts: None,
            end_seq: 0,
            end_order: 0,
            rtt: SimDuration::ZERO,
            advanced: false,
            reo_wnd_steps: 1,
            reo_wnd_persist: 0,
            dsack_seen: false,
            last_delivered: 0,
        }
    }
    pub fn xmit_ts(&self) -> Option<SimTime> {
        self.xmit_ts
    }
    pub fn end_seq(&self) -> u64 {
        self.end_seq
    }
    pub fn rtt(&self) -> SimDuration {
        self.rtt
    }
    pub fn reo_wnd_steps(&self) -> u32 {
        self.reo_wnd_steps
    }

    /// RFC 8985 6.2 step 2 (RACK_update) / `tcp_rack_advance`, for the segments one ACK
    /// newly delivered, taken in ascending send-time order so that RACK.rtt ends as the
    /// most recently sent one's.
    pub fn advance(&mut self, now: SimTime, delivered: &[Delivered], min_rtt: Option<SimDuration>) {
        let mut order: Vec<&Delivered> = delivered.iter().collect();
        order.sort_by_key(|d| (d.sent, d.seq));
        for d in order {
            let rtt = now.saturating_since(d.sent);
            // A retransmitted segment's delivery is ambiguous: it could be the original.
            // Taken only if its RTT is at least min_rtt (`tcp_min_rtt` is ~0 before any
            // sample, so never then).
            if d.retransmitted && min_rtt.is_none_or(|m| rtt < m) {
                continue;
            }
            self.advanced = true;
            self.rtt = rtt;
            let later = self.xmit_ts.is_none_or(|x| sent_after(d.sent, d.order, x, self.end_order));
            if later {
                self.xmit_ts = Some(d.sent);
                self.end_seq = d.seq + 1;
                self.end_order = d.order;
            }
        }
    }

    /// `tcp_rack_reo_wnd` (RFC 8985 6.2 step 4, RACK_update_reo_wnd's return).
    pub fn reo_wnd(&self, i: &ReoWndInputs) -> SimDuration {
        if !i.reordering_seen {
            // "If reordering has not been observed, be aggressive during the recovery or
            // starting the recovery by DUPACK threshold."
            if i.in_recovery || i.sacked_out >= i.reordering {
                return SimDuration::ZERO;
            }
        }
        // min((tcp_min_rtt(tp) >> 2) * reo_wnd_steps, srtt_us >> 3); without a min_rtt
        // sample tcp_min_rtt is ~0U and the SRTT cap decides.
        let quarter = i.min_rtt.map_or(u64::MAX, |m| m.as_nanos() / 4);
        SimDuration(quarter.saturating_mul(u64::from(self.reo_wnd_steps)).min(i.srtt.as_nanos()))
    }

    /// `tcp_rack_mark_lost`: run detection only if a delivery advanced RACK since the last
    /// run (`rack.advanced`); `None` otherwise.
    pub fn mark_lost(&mut self, sb: &mut Scoreboard, now: SimTime, reo_wnd: SimDuration) -> Option<Detection> {
        if !self.advanced {
            return None;
        }
        self.advanced = false;
        Some(self.detect_loss(sb, now, reo_wnd))
    }

    /// RFC 8985 6.2 step 5 (RACK_detect_loss) / `tcp_rack_detect_loss`, also what the
    /// reordering timer runs when it fires (`tcp_rack_reo_timeout`). Walks the unSACKed
    /// segments by send time, up to the first not sent before RACK.xmit_ts.
    pub fn detect_loss(&self, sb: &mut Scoreboard, now: SimTime, reo_wnd: SimDuration) -> Detection {
        let mut found = Detection::default();
        let Some(xmit_ts) = self.xmit_ts else { return found };
        let mut lost = Vec::new();
        let mut timeout: Option<i128> = None;
        for (sent, order, seq) in sb.sent_order() {
            if !sent_after(xmit_ts, self.end_order, sent, order) {
                break;
            }
            // "remaining = tp->rack.rtt_us + reo_wnd - tcp_stamp_us_delta(now, skb_mstamp)":
            // lost if not s/acked beyond the recent RTT plus the reordering window.
            let remaining = i128::from(self.rtt.as_nanos()) + i128::from(reo_wnd.as_nanos())
                - i128::from(now.saturating_since(sent).as_nanos());
            if remaining <= 0 {
                lost.push(seq);
            } else {
                timeout = Some(timeout.map_or(remaining, |t| t.max(remaining)));
            }
        }
        for &seq in &lost {
            sb.mark_lost(seq);
        }
        found.lost = lost;
        found.timeout = timeout.map(|t| SimDuration(t as u64));
        found
    }

    /// `tcp_dsack_seen`: a DSACK arrived (`rack.dsack_seen = 1`).
    pub fn on_dsack(&mut self) {
        self.dsack_seen = true;
    }

    /// `tcp_rack_update_reo_wnd`, once per ACK: `prior_delivered` and `delivered` are the
    /// connection's delivered-segment count before and after it (`rs->prior_delivered`,
    /// `tp->delivered`).
    pub fn update_reo_wnd(&mut self, prior_delivered: u64, delivered: u64) {
        if prior_delivered == 0 {
            return;
        }
        // "Disregard DSACK if a rtt has not passed since we adjusted reo_wnd"
        if prior_delivered < self.last_delivered {
            self.dsack_seen = false;
        }
        if self.dsack_seen {
            self.reo_wnd_steps = (self.reo_wnd_steps + 1).min(0xFF);
            self.dsack_seen = false;
            self.last_delivered = delivered;
            self.reo_wnd_persist = RECOVERY_THRESH;
        } else if self.reo_wnd_persist == 0 {
            self.reo_wnd_steps = 1;
        }
    }

    /// A recovery ended (`tcp_try_undo_recovery`): a recovery that was not undone counts
    /// down the window's persistence.
    pub fn on_recovery_end(&mut self, undone: bool) {
        if !undone {
            self.reo_wnd_persist = self.reo_wnd_persist.saturating_sub(1);
        }
    }

    /// `tcp_try_undo_dsack`: DSACKs showed every retransmission spurious.
    pub fn on_dsack_undo(&mut self) {
        self.reo_wnd_persist = (self.reo_wnd_persist + 1).min(RECOVERY_THRESH);
    }
}

/// The reordering timer as Linux arms it (`tcp_rack_mark_lost`): `usecs_to_jiffies(timeout
/// + TCP_TIMEOUT_MIN_US)` jiffies from now.
pub fn linux_reo_timer(timeout: SimDuration, hz: u32) -> SimDuration {
    jiffies_to_ns(usecs_to_jiffies(timeout.as_micros() + TCP_TIMEOUT_MIN_US, hz), hz)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::tcp::scoreboard::NextSeg;

    fn t(ms: u64) -> SimTime {
        SimTime(ms * 1_000_000)
    }
    fn ms(x: u64) -> SimDuration {
        SimDuration::from_millis(x)
    }

    fn inputs(sacked_out: u64) -> ReoWndInputs {
        ReoWndInputs {
            min_rtt: Some(ms(100)),
            srtt: ms(100),
            reordering_seen: false,
            in_recovery: false,
            sacked_out,
            reordering: 3,
        }
    }

    /// Segment 0 sent at 0 ms, segment 1 at 10 ms; the path's RTT is 100 ms.
    fn two_sent() -> Scoreboard {
        let mut sb = Scoreboard::new(0, false);
        sb.on_send(t(0));
        sb.on_send(t(10));
        sb
    }

    #[test]
    fn rfc8985_6_2_step_5_a_segment_is_lost_after_rack_rtt_plus_reo_wnd() {
        let mut sb = two_sent();
        let mut rack = Rack::new();
        // At 110 ms segment 1 is SACKed: RACK.xmit_ts = 10 ms, RACK.rtt = 100 ms.
        let a = sb.on_ack(0, &[(1, 2)]);
        rack.advance(t(110), &a.delivered, Some(ms(100)));
        assert_eq!((rack.xmit_ts(), rack.end_seq(), rack.rtt()), (Some(t(10)), 2, ms(100)));
        // One SACKed, below DupThresh: reo_wnd = min_rtt/4 = 25 ms.
        let wnd = rack.reo_wnd(&inputs(sb.sacked_out()));
        assert_eq!(wnd, ms(25));
        // Segment 0 was sent before RACK.xmit_ts: remaining = 0 + 100 + 25 - 110 = 15 ms.
        let d = rack.mark_lost(&mut sb, t(110), wnd).unwrap();
        assert_eq!(d, Detection { lost: vec![], timeout: Some(ms(15)) });
        // Nothing new delivered: tcp_rack_mark_lost does not scan again.
        assert_eq!(rack.mark_lost(&mut sb, t(111), wnd), None);
        // The reordering timer fires at 125 ms (tcp_rack_reo_timeout): remaining = 0,
        // "remaining <= 0": lost.
        let d = rack.detect_loss(&mut sb, t(125), wnd);
        assert_eq!(d, Detection { lost: vec![0], timeout: None });
        assert_eq!((sb.lost_out(), sb.first_lost()), (1, Some(0)));
        // Marked lost and not retransmitted: skipped by the next scan.
        assert_eq!(rack.detect_loss(&mut sb, t(300), wnd), Detection::default());
    }

    #[test]
    fn rfc8985_3_4_a_segment_reordered_within_the_window_is_not_marked_lost() {
        let mut sb = two_sent();
        let mut rack = Rack::new();
        let a = sb.on_ack(0, &[(1, 2)]);
        rack.advance(t(110), &a.delivered, Some(ms(100)));
        let wnd = rack.reo_wnd(&inputs(1));
        assert_eq!(rack.detect_loss(&mut sb, t(110), wnd).timeout, Some(ms(15)));
        // Segment 0 arrives 10 ms late, at 120 ms (< 125 ms): the cumulative ACK covers
        // both; no loss, nothing left to wait for.
        let a = sb.on_ack(2, &[]);
        rack.advance(t(120), &a.delivered, Some(ms(100)));
        assert_eq!(rack.detect_loss(&mut sb, t(120), wnd), Detection::default());
        assert_eq!(sb.lost_out(), 0);
    }

    #[test]
    fn tcp_rack_mark_lost_arms_the_timer_at_timeout_plus_tcp_timeout_min_us_in_jiffies() {
        // usecs_to_jiffies(15000 + 2000) at HZ 1000 = 17 jiffies = 17 ms.
        assert_eq!(linux_reo_timer(ms(15), 1000), ms(17));
        // At HZ 250 (4 ms jiffies): 17 ms rounds up to 5 jiffies = 20 ms.
        assert_eq!(linux_reo_timer(ms(15), 250), ms(20));
        // 1 µs left still waits the 2 ms slack: 2001 µs -> 3 jiffies at HZ 1000.
        assert_eq!(linux_reo_timer(SimDuration::from_micros(1), 1000), ms(3));
    }

    #[test]
    fn tcp_rack_reo_wnd_is_zero_at_dupthresh_or_in_recovery_until_reordering_is_seen() {
        let rack = Rack::new();
        assert_eq!(rack.reo_wnd(&inputs(2)), ms(25));
        assert_eq!(rack.reo_wnd(&inputs(3)), SimDuration::ZERO); // sacked_out >= reordering
        let rec = ReoWndInputs { in_recovery: true, ..inputs(0) };
        assert_eq!(rack.reo_wnd(&rec), SimDuration::ZERO);
        let seen = ReoWndInputs { reordering_seen: true, in_recovery: true, ..inputs(5) };
        assert_eq!(rack.reo_wnd(&seen), ms(25));
        // No min_rtt sample: ~0U >> 2 is huge, the SRTT cap (srtt_us >> 3) decides.
        assert_eq!(rack.reo_wnd(&ReoWndInputs { min_rtt: None, ..inputs(0) }), ms(100));
    }

    #[test]
    fn with_dupthresh_sacks_and_no_reordering_a_hole_is_lost_one_rtt_after_its_send() {
        // 0 at 0 ms, 1, 2, 3 at 10, 11, 12 ms; SACKed at 110, 111, 112 ms. After the
        // third, RACK.xmit_ts = 12 ms, RACK.rtt = 100 ms and reo_wnd = 0 (3 SACKed):
        // remaining for 0 = 100 + 0 - 112 = -12 ms: lost at once.
        let mut sb = Scoreboard::new(0, false);
        for x in [0, 10, 11, 12] {
            sb.on_send(t(x));
        }
        let mut rack = Rack::new();
        let mut last = None;
        for s in 1..4 {
            let a = sb.on_ack(0, &[(1, s + 1)]);
            rack.advance(t(109 + s), &a.delivered, Some(ms(100)));
            let wnd = rack.reo_wnd(&inputs(sb.sacked_out()));
            last = rack.mark_lost(&mut sb, t(109 + s), wnd);
            if s < 3 {
                // 2 SACKed: reo_wnd 25 ms; remaining = 100 + 25 - (109 + s) = 16 - s ms.
                assert_eq!(last.as_ref().unwrap().timeout, Some(ms(16 - s)));
            }
        }
        assert_eq!(last, Some(Detection { lost: vec![0], timeout: None }));
    }

    #[test]
    fn tcp_rack_advance_ignores_a_retransmission_delivered_faster_than_min_rtt() {
        let mut sb = two_sent();
        sb.on_retransmit(0, t(200));
        let mut rack = Rack::new();
        // Delivered at 250 ms, 50 ms after the retransmission: below min_rtt (100 ms),
        // so it may be the original's delivery; RACK stays put.
        let a = sb.on_ack(1, &[]);
        rack.advance(t(250), &a.delivered, Some(ms(100)));
        assert_eq!(rack.xmit_ts(), None);
        assert_eq!(rack.mark_lost(&mut sb, t(250), ms(25)), None);
        // Without a min_rtt sample no retransmission is taken either.
        rack.advance(t(400), &a.delivered, None);
        assert_eq!(rack.xmit_ts(), None);
        // 150 ms after it, at least min_rtt: taken.
        rack.advance(t(350), &a.delivered, Some(ms(100)));
        assert_eq!((rack.xmit_ts(), rack.rtt()), (Some(t(200)), ms(150)));
    }

    #[test]
    fn rack_sent_after_breaks_a_send_time_tie_by_sequence() {
        // Two segments sent in the same instant; the higher one delivered: the lower one
        // counts as sent before it (RFC 8985 RACK_sent_after) and can be marked lost.
        let mut sb = Scoreboard::new(0, false);
        sb.on_send(t(0));
        sb.on_send(t(0));
        let mut rack = Rack::new();
        let a = sb.on_ack(0, &[(1, 2)]);
        rack.advance(t(100), &a.delivered, Some(ms(100)));
        assert_eq!(rack.end_seq(), 2);
        let d = rack.detect_loss(&mut sb, t(100), SimDuration::ZERO);
        assert_eq!(d.lost, vec![0]);
    }

    #[test]
    fn tcp_rack_update_reo_wnd_grows_a_step_per_round_with_dsack_and_resets_after_16() {
        let mut rack = Rack::new();
        let wnd = |r: &Rack| r.reo_wnd(&ReoWndInputs { srtt: ms(1000), ..inputs(0) });
        assert_eq!(wnd(&rack), ms(25));
        // No delivery before this ACK (rs->prior_delivered == 0): nothing happens.
        rack.on_dsack();
        rack.update_reo_wnd(0, 2);
        assert_eq!(rack.reo_wnd_steps(), 1);
        // The DSACK stays pending; the next ACK grows the window: 2 · 25 = 50 ms.
        rack.update_reo_wnd(10, 12);
        assert_eq!((rack.reo_wnd_steps(), wnd(&rack)), (2, ms(50)));
        // A DSACK on an ACK whose prior_delivered (11) is before last_delivered (12):
        // "a rtt has not passed since we adjusted reo_wnd": disregarded.
        rack.on_dsack();
        rack.update_reo_wnd(11, 13);
        assert_eq!(rack.reo_wnd_steps(), 2);
        rack.on_dsack();
        rack.update_reo_wnd(13, 14);
        assert_eq!((rack.reo_wnd_steps(), wnd(&rack)), (3, ms(75)));
        // Capped at SRTT: 3 · 25 = 75 ms > 60 ms.
        assert_eq!(rack.reo_wnd(&ReoWndInputs { srtt: ms(60), ..inputs(0) }), ms(60));
        // It persists for TCP_RACK_RECOVERY_THRESH (16) recoveries not undone.
        for _ in 0..15 {
            rack.on_recovery_end(false);
            rack.update_reo_wnd(20, 21);
        }
        rack.on_recovery_end(true); // an undone recovery does not count
        rack.update_reo_wnd(21, 22);
        assert_eq!(rack.reo_wnd_steps(), 3);
        rack.on_recovery_end(false);
        rack.update_reo_wnd(22, 23);
        assert_eq!(rack.reo_wnd_steps(), 1);
        // tcp_try_undo_dsack adds one recovery of persistence, up to 16.
        rack.on_dsack();
        rack.update_reo_wnd(40, 41);
        rack.on_dsack_undo(); // 16 + 1, capped at 16
        for _ in 0..15 {
            rack.on_recovery_end(false);
        }
        rack.update_reo_wnd(60, 61);
        assert_eq!(rack.reo_wnd_steps(), 2); // one recovery of persistence left
        rack.on_recovery_end(false);
        rack.update_reo_wnd(61, 62);
        assert_eq!(rack.reo_wnd_steps(), 1);
    }

    #[test]
    fn packetdrill_fr_4pkt_sack_the_third_sack_marks_the_head_lost_by_dupthresh_and_rack() {
        // google/packetdrill gtests/net/tcp/fast_retransmit/fr-4pkt-sack.pkt (commit
        // 5018df2a9f44bc41c0776845f50a27172d71829c): four 1460-byte segments written at
        // 0.2 s (segment i = bytes 1+1460i..), SACKs of 1461:2921, 1461:4381, 1461:5841 at
        // 0.3 s, and "+0 > . 1:1461(1460)": the head is retransmitted at the third.
        // The SYN-ACK's RTT (100 ms) gives min_rtt and SRTT.
        let mut sb = Scoreboard::new(0, true);
        for _ in 0..4 {
            sb.on_send(t(200));
        }
        let mut rack = Rack::new();
        let now = t(300);
        let mut lost_by = Vec::new();
        for end in 2..5 {
            let a = sb.on_ack(0, &[(1, end)]);
            rack.advance(now, &a.delivered, Some(ms(100)));
            // reo_wnd: 25 ms with one or two SACKed; 0 at three (sacked_out >= reordering).
            let wnd = rack.reo_wnd(&inputs(sb.sacked_out()));
            assert_eq!(wnd, if end < 4 { ms(25) } else { SimDuration::ZERO });
            // Same send time, lower sequence: sent before RACK's segment; remaining =
            // 100 + reo_wnd - 100 ms: 25 ms, then 0, lost ("remaining <= 0").
            let d = rack.detect_loss(&mut sb, now, wnd);
            lost_by.push((a.newly_lost, d.lost.clone(), d.timeout));
        }
        assert_eq!(lost_by, vec![(0, vec![], Some(ms(25))), (0, vec![], Some(ms(25))), (1, vec![], None)]);
        // IsLost marked it first (RFC 6675, DupThresh 3), so RACK found it waiting; either
        // way NextSeg retransmits segment 0, bytes 1:1461.
        assert_eq!(sb.first_lost(), Some(0));
        assert_eq!(sb.next_seg(false), Some(NextSeg::Lost(0)));
        // Without the IsLost marking (RACK alone) the third ACK marks it.
        let mut sb = Scoreboard::new(0, false);
        for _ in 0..4 {
            sb.on_send(t(200));
        }
        let mut rack = Rack::new();
        let a = sb.on_ack(0, &[(1, 4)]);
        rack.advance(now, &a.delivered, Some(ms(100)));
        let wnd = rack.reo_wnd(&inputs(sb.sacked_out()));
        let d = rack.detect_loss(&mut sb, now, wnd);
        assert_eq!(d.lost, vec![0]);
    }

    #[test]
    fn packetdrill_cubic_rack_reo_timeout_fires_within_the_scripts_20ms() {
        // google/packetdrill gtests/net/tcp/cubic/
        // cubic-rack-reo-timeout-retrans-failed-incoming-data.pkt (commit
        // 8d63bbc7d6273f86e826ac16dbc3c38d4a41b129): RTT 20 ms, reordering already seen;
        // 10001:11001 and 11001:12001 written together, the second SACKed 20 ms later,
        // and 20 ms after that the first is lost (tcpi_lost == 1) by the reordering timer.
        let mut sb = Scoreboard::new(0, false);
        sb.on_send(t(0));
        sb.on_send(t(0));
        let mut rack = Rack::new();
        let a = sb.on_ack(0, &[(1, 2)]);
        rack.advance(t(20), &a.delivered, Some(ms(20)));
        let seen = ReoWndInputs {
            min_rtt: Some(ms(20)),
            srtt: ms(20),
            reordering_seen: true,
            in_recovery: false,
            sacked_out: 1,
            reordering: 10,
        };
        // reo_wnd = 20/4 = 5 ms; remaining = 20 + 5 - 20 = 5 ms.
        let wnd = rack.reo_wnd(&seen);
        assert_eq!(wnd, ms(5));
        let d = rack.mark_lost(&mut sb, t(20), wnd).unwrap();
        assert_eq!(d.timeout, Some(ms(5)));
        // usecs_to_jiffies(5000 + 2000) at HZ 1000: the timer fires at 27 ms, before the
        // script's check at 40 ms; it finds the segment 27 ms old, past 25 ms: lost.
        let fire = t(20) + linux_reo_timer(ms(5), 1000);
        assert_eq!(fire, t(27));
        assert_eq!(rack.detect_loss(&mut sb, fire, wnd).lost, vec![0]);
        assert_eq!((sb.lost_out(), sb.sacked_out(), sb.pipe()), (1, 1, 0));
    }
}
