//! Loss recovery between timeouts and after one: finding losses (RACK, RFC 6675's
//! DupThresh, NewReno), the recovery state machine (Linux `tcp_fastretrans_alert`,
//! `tcp_process_loss`; RFC 6675 section 5, RFC 6582 section 3.2), the window inside it
//! (RFC 6937's PRR under linux, cwnd = ssthresh under the RFCs), the timeout's
//! `tcp_enter_loss`, and undo of a reduction DSACKs or timestamps show needless.

use super::super::cc::{Ack as CcAck, Round, Timeout};
use super::super::frto::{self, LossAck, Verdict};
use super::super::rack::{ReoWndInputs, linux_reo_timer};
use super::*;

/// What one ACK told the recovery state machine (Linux's `flag` bits).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct AckFlags {
    /// FLAG_SND_UNA_ADVANCED.
    pub advanced: bool,
    /// A duplicate ACK (`num_dupack`): nothing advanced, no window update, data out.
    pub dupack: bool,
    /// FLAG_DATA_SACKED: new SACK information.
    pub data_sacked: bool,
    /// FLAG_ORIG_SACK_ACKED: a never-retransmitted segment below high_seq delivered.
    pub orig_acked: bool,
    /// Segments newly delivered, cumulatively or by SACK (`acked_sacked`).
    pub delivered: u64,
    /// The ACK's TSecr, when timestamps are on (`tcp_packet_delayed`).
    pub tsecr: Option<SimTime>,
    /// The RTT sample this ACK gave, for the congestion control.
    pub rtt: Option<SimDuration>,
    /// Segments newly marked lost while this ACK was processed (`tp->lost - lost`).
    pub newly_lost: u64,
}

impl TcpSender {
    pub(super) fn in_recovery(&self) -> bool {
        matches!(self.ca, Ca::Recovery { .. })
    }

    /// `tcp_current_ssthresh` outside a reduction: at least 3/4 of cwnd.
    fn current_ssthresh(&self) -> u32 {
        let cwnd = self.cc.cwnd();
        self.cc.ssthresh().max((cwnd >> 1) + (cwnd >> 2))
    }

    /// `tcp_init_undo`: undo is possible from here until recovery ends.
    fn init_undo(&mut self) {
        self.episode.undo_marker = Some(self.snd_una);
        self.episode.undo_retrans = if self.sb.retrans_out() > 0 { self.sb.retrans_out() as i64 } else { -1 };
    }

    /// `tcp_may_undo`: every retransmission was shown needless by a DSACK, or the ACK
    /// echoes a timestamp from before the first retransmission (`tcp_packet_delayed`).
    /// Linux only: the RFCs' sender does not undo.
    fn may_undo(&self, tsecr: Option<SimTime>) -> bool {
        if !self.linux() || self.episode.undo_marker.is_none() {
            return false;
        }
        let delayed = matches!((tsecr, self.retrans_stamp), (Some(ts), Some(stamp)) if ts < stamp);
        self.episode.undo_retrans == 0 || delayed
    }

    /// `tcp_undo_cwnd_reduction`.
    fn undo_reduction(&mut self, unmark_loss: bool) {
        if unmark_loss {
            self.sb.clear_lost();
        }
        if self.episode.prior_ssthresh > 0 {
            self.cc.undo(self.episode.prior_cwnd, self.episode.prior_ssthresh);
        }
        self.episode.undo_marker = None;
    }

    /// `tcp_try_undo_dsack` (linux): DSACKs showed every retransmission of the episode
    /// needless, in recovery or after it.
    fn try_undo_dsack(&mut self) {
        if self.linux() && self.episode.undo_marker.is_some() && self.episode.undo_retrans == 0 {
            self.rack.on_dsack_undo();
            self.undo_reduction(false);
        }
    }

    /// The reordering timer, `wait` from now as Linux rounds it (`tcp_rack_mark_lost`).
    fn arm_reorder(&mut self, now: SimTime, wait: SimDuration) {
        let hz = self.params().hz.unwrap_or(1000);
        self.timer = Some((now + linux_reo_timer(wait, hz), TimerKind::Reorder));
    }

    /// `tcp_timeout_mark_lost` and `tcp_enter_loss` (with RFC 5681 (4) and RFC 6675 5.1
    /// for the RFCs' sender): everything outstanding is lost but what RACK says was sent
    /// too recently to tell, the window closes to what is in flight plus one.
    pub(super) fn enter_loss(&mut self, now: SimTime) {
        let flight_size = self.outstanding();
        let new_recovery = matches!(self.ca, Ca::Open);
        // The caller has counted this expiry already; Linux reads icsk_retransmits here
        // before tcp_update_rto_stats counts it.
        let prior_retransmits = self.retransmits.saturating_sub(1);
        // "Reduce ssthresh if it has not yet been made inside this window."
        let new_episode = match self.ca {
            Ca::Open => true,
            Ca::Recovery { high } => high <= self.snd_una,
            Ca::Loss { high, .. } => high <= self.snd_una || prior_retransmits == 0,
        };
        let head = self.snd_una;
        let rack = self.linux().then_some(self.rack.rtt());
        for seq in head..self.snd_max {
            let Some(seg) = self.sb.segment(seq).copied() else { continue };
            // "Don't mark recently sent ones lost yet" (tcp_rack_skb_timeout(tp, skb, 0) > 0).
            if seq != head && rack.is_some_and(|rtt| rtt > now.saturating_since(seg.sent)) {
                continue;
            }
            self.sb.mark_lost(seq);
        }
        if !self.opts.sack {
            self.dupacks = 0; // tcp_reset_reno_sack
            // RFC 6582 (3.2 step 1 and section 4): a timeout also records `recover`.
            self.recover = Some(self.snd_max);
        }
        if new_episode {
            self.episode.prior_ssthresh = self.current_ssthresh();
            self.episode.prior_cwnd = self.cc.cwnd();
            self.init_undo();
        }
        self.cc.on_rto(&Timeout {
            now,
            flight_size: u32::try_from(flight_size).unwrap_or(u32::MAX),
            in_flight: u32::try_from(self.in_flight()).unwrap_or(u32::MAX),
            new_episode,
        });
        let frto = self.params().frto && (new_recovery || prior_retransmits > 0);
        self.ca = Ca::Loss { high: self.snd_max, frto };
        self.probe = None; // tlp_high_seq = 0
        self.sb.reset_high_rxt();
        self.episode.partial_acks = 0;
    }

    /// `tcp_enter_recovery` with `tcp_init_cwnd_reduction` (RFC 6675 section 5 step 4;
    /// RFC 6582 step 2): ssthresh drops, PRR starts counting.
    fn enter_recovery(&mut self, now: SimTime) {
        self.episode.prior_ssthresh = self.current_ssthresh();
        self.init_undo();
        self.episode.prior_cwnd = self.cc.cwnd();
        self.episode.prr_delivered = 0;
        self.episode.prr_out = 0;
        self.episode.partial_acks = 0;
        let flight = u32::try_from(self.outstanding()).unwrap_or(u32::MAX);
        self.cc.on_loss(now, flight);
        self.ca = Ca::Recovery { high: self.snd_max };
        self.recover = Some(self.snd_max);
        self.probe = None; // tlp_high_seq = 0
        self.sb.reset_high_rxt();
    }

    /// Recovery is over: back to the open state (`tcp_set_ca_state(sk, TCP_CA_Open)`).
    pub(super) fn reopen(&mut self) {
        self.ca = Ca::Open;
        if self.sb.retrans_out() == 0 {
            self.retrans_stamp = None; // tcp_try_to_open: !tcp_any_retrans_done
        }
    }

    /// `tcp_try_undo_recovery` at the end of an episode: undo if it proved needless,
    /// else the window lands on ssthresh (`tcp_end_cwnd_reduction`, RFC 6675 / RFC 6582
    /// step 3), and the state opens.
    fn end_recovery(&mut self, tsecr: Option<SimTime>) {
        let undone = self.may_undo(tsecr);
        if undone {
            self.undo_reduction(false);
        } else if self.in_recovery() {
            let ssthresh = self.cc.ssthresh();
            if ssthresh < INFINITE_SSTHRESH {
                self.cc.set_cwnd(ssthresh);
            }
        }
        self.rack.on_recovery_end(undone);
        // The marker stays: a DSACK that comes after the recovery can still show it
        // needless (`tcp_try_undo_dsack` in Open and Disorder).
        self.reopen();
    }

    /// `tcp_try_undo_loss`: the timeout was needless (F-RTO's verdict, or `may_undo`).
    pub(super) fn undo_loss(&mut self, out: &mut Vec<Action>) {
        self.undo_reduction(true);
        // WRITE_ONCE(icsk->icsk_retransmits, 0); tcp_set_ca_state(sk, TCP_CA_Open)
        self.retransmits = 0;
        self.reopen();
        self.observe(ObservationKind::SpuriousTimeout, out);
    }

    /// `tcp_identify_packet_loss`: mark what the detection in force finds lost.
    fn identify_loss(&mut self, now: SimTime, advanced: bool) {
        if self.outstanding() == 0 || !self.opts.fast_retransmit {
            return;
        }
        match self.opts.loss_detection() {
            LossDetection::Rack => self.rack_mark_lost(now),
            // Marked by the scoreboard's IsLost as the SACKs arrived.
            LossDetection::DupThresh => {}
            LossDetection::NewReno => {
                // tcp_newreno_mark_lost: the head, at DupThresh duplicates outside
                // recovery or on a partial ACK inside it (RFC 6582 step 3).
                let head_lost = self.sb.segment(self.snd_una).is_some_and(|s| s.lost);
                let due = match self.ca {
                    Ca::Recovery { .. } => advanced,
                    Ca::Loss { .. } => false,
                    // RFC 6582 (3.2 step 2): not while the ACK covers no more than `recover`;
                    // Linux guards with its hold in `tcp_try_undo_recovery` instead.
                    Ca::Open => {
                        self.dupacks >= self.reordering
                            && (self.linux() || self.recover.is_none_or(|r| self.snd_una > r))
                    }
                };
                if due && !head_lost {
                    self.sb.mark_lost(self.snd_una);
                }
            }
        }
    }

    fn reo_wnd(&self) -> SimDuration {
        self.rack.reo_wnd(&ReoWndInputs {
            min_rtt: self.min_rtt.map(|(m, _)| m),
            srtt: self.rto.snapshot().srtt.unwrap_or(SimDuration::ZERO),
            reordering_seen: self.reord_seen,
            in_recovery: !matches!(self.ca, Ca::Open),
            sacked_out: self.sb.sacked_out(),
            reordering: self.reordering,
        })
    }

    /// `tcp_rack_mark_lost`: detection, and the reordering timer for what is not yet
    /// late enough (`ICSK_TIME_REO_TIMEOUT`, replacing the RTO until it fires).
    fn rack_mark_lost(&mut self, now: SimTime) {
        let reo_wnd = self.reo_wnd();
        let Some(found) = self.rack.mark_lost(&mut self.sb, now, reo_wnd) else { return };
        if let Some(wait) = found.timeout {
            self.arm_reorder(now, wait);
        }
    }

    /// `tcp_rack_reo_timeout`: detection again; what it finds lost starts a recovery if
    /// none is under way, and is retransmitted; then the RTO is re-armed.
    pub(super) fn on_reorder_timeout(&mut self, now: SimTime, out: &mut Vec<Action>) {
        let before = self.in_flight();
        let reo_wnd = self.reo_wnd();
        let found = self.rack.detect_loss(&mut self.sb, now, reo_wnd);
        if self.in_flight() != before {
            if !self.in_recovery() {
                self.enter_recovery(now);
                // tcp_cwnd_reduction(sk, 1, tp->lost - lost, 0)
                self.prr(1, false, found.lost.len() as u64);
            }
            self.retransmit_lost(now, out);
        }
        if let Some(wait) = found.timeout
            && self.timer.is_none()
        {
            self.arm_reorder(now, wait);
        }
        if !matches!(self.timer, Some((_, TimerKind::Rto | TimerKind::Reorder))) {
            self.rearm_rto(now, false);
        }
    }

    /// `tcp_time_to_recover`: a loss is marked, or (without RACK) DupThresh duplicates
    /// arrived (RFC 6675 section 5 step 3, RFC 6582 step 1 with its `recover` guard).
    fn time_to_recover(&self) -> bool {
        if !self.opts.fast_retransmit {
            return false;
        }
        // RFC 6675 also starts recovery on DupThresh duplicate ACKs (section 5 step 3).
        self.sb.lost_out() > 0
            || (self.opts.loss_detection() == LossDetection::DupThresh && self.dupacks >= self.reordering)
    }

    /// The congestion state machine on one ACK (`tcp_fastretrans_alert`,
    /// `tcp_process_loss`). Returns whether F-RTO wants new data sent instead of
    /// retransmissions.
    pub(super) fn recovery_on_ack(&mut self, now: SimTime, f: &AckFlags, out: &mut Vec<Action>) -> bool {
        // D: state exit when high_seq is acknowledged.
        // tcp_try_undo_recovery: "Hold old state until something *above* high_seq is
        // ACKed. NewReno bug avoidance."
        // The held ACK ends the processing (`if (tcp_try_undo_recovery(sk)) return;`).
        if let Ca::Recovery { high } = self.ca
            && self.snd_una >= high
        {
            if !self.opts.sack {
                self.dupacks = 0; // tcp_reset_reno_sack
            }
            if self.linux() && !self.opts.sack && self.snd_una == high {
                return false;
            }
            self.end_recovery(f.tsecr);
        }
        match self.ca {
            Ca::Recovery { .. } => {
                if f.advanced {
                    self.episode.partial_acks += 1;
                }
                self.try_undo_dsack();
                self.identify_loss(now, f.advanced);
                false
            }
            Ca::Loss { .. } => {
                let send_new = self.process_loss(now, f, out);
                if send_new {
                    return true;
                }
                self.identify_loss(now, f.advanced);
                if self.ca == Ca::Open {
                    self.open_state(now, f, out);
                }
                false
            }
            Ca::Open => {
                self.open_state(now, f, out);
                false
            }
        }
    }

    /// The default branch of `tcp_fastretrans_alert`: Open or Disorder.
    fn open_state(&mut self, now: SimTime, f: &AckFlags, out: &mut Vec<Action>) {
        self.try_undo_dsack();
        self.identify_loss(now, f.advanced);
        if !self.time_to_recover() {
            if self.sb.retrans_out() == 0 {
                self.retrans_stamp = None;
            }
            return;
        }
        self.enter_recovery(now);
        if self.opts.loss_detection() == LossDetection::DupThresh && !self.sb.is_lost(self.snd_una) {
            // RFC 6675 section 5 step 4.3: retransmit HighACK + 1.
            self.sb.mark_lost(self.snd_una);
        }
        // The RFCs' fast retransmit goes whatever the window says (RFC 5681 3.2 step 4,
        // RFC 6582 step 2, RFC 6675 step 4.3); Linux's PRR forces it with its first
        // `sndcnt` instead.
        if !self.linux()
            && let Some(seq) = self.sb.first_lost()
        {
            self.retransmit(seq, now, out);
        }
    }

    /// `tcp_process_loss`: F-RTO's verdicts and the end of the loss state.
    fn process_loss(&mut self, _now: SimTime, f: &AckFlags, out: &mut Vec<Action>) -> bool {
        let Ca::Loss { high, frto } = self.ca else { return false };
        let recovered = self.snd_una >= high;
        if f.advanced && self.may_undo(f.tsecr) {
            self.undo_loss(out);
            return false;
        }
        if frto {
            let verdict = frto::on_loss_ack(LossAck {
                high,
                snd_max: self.snd_max,
                snd_una: self.snd_una,
                advanced: f.advanced,
                dupack: f.dupack || f.data_sacked,
                orig_acked: f.orig_acked,
                can_send_new: self.new_data_fits(),
            });
            match verdict {
                Verdict::Spurious => {
                    self.undo_loss(out);
                    return false;
                }
                Verdict::SendNew => {
                    self.ca = Ca::Loss { high: self.snd_max, frto: true };
                    return true;
                }
                Verdict::Off => self.ca = Ca::Loss { high, frto: false },
                Verdict::Wait => {}
            }
        }
        if recovered {
            self.end_recovery(f.tsecr);
            return false;
        }
        if !self.opts.sack {
            let Ca::Loss { high, .. } = self.ca else { return false };
            if self.snd_max > high && f.dupack {
                self.dupacks += 1;
            } else if f.advanced {
                self.dupacks = 0;
            }
        }
        false
    }

    /// `tcp_cong_control` without a `cong_control` hook: PRR inside recovery (linux),
    /// else growth on an ACK of new data (`tcp_may_raise_cwnd`, `tcp_cong_avoid`).
    pub(super) fn cong_control(&mut self, now: SimTime, f: &AckFlags) {
        if self.in_recovery() {
            if self.linux() {
                self.prr(f.delivered, f.advanced, f.newly_lost);
            }
            return;
        }
        let may_raise = if self.reordering > super::super::scoreboard::DUP_THRESH {
            f.advanced || f.data_sacked
        } else {
            f.advanced
        };
        if may_raise && f.delivered > 0 {
            let usage = self.cwnd_use();
            self.cc.on_ack(&CcAck {
                now,
                acked: u32::try_from(f.delivered).unwrap_or(u32::MAX),
                rtt: f.rtt,
                usage,
                // HyStart's rounds (`hystart_update`) run on the sequence space.
                round: Some(Round { snd_una: self.snd_una, snd_nxt: self.snd_max }),
            });
        }
    }

    /// `tcp_cwnd_reduction` (RFC 6937): send in proportion to what is delivered while
    /// more than ssthresh is in flight, then slow start back up to it (PRR-SSRB).
    pub(super) fn prr(&mut self, newly_acked_sacked: u64, una_advanced: bool, newly_lost: u64) {
        let in_flight = self.in_flight() as i64;
        let e = &mut self.episode;
        if newly_acked_sacked == 0 || e.prior_cwnd == 0 {
            return;
        }
        let ssthresh = i64::from(self.cc.ssthresh());
        let delta = ssthresh - in_flight;
        e.prr_delivered += newly_acked_sacked;
        let prr_out = e.prr_out as i64;
        let mut sndcnt = if delta < 0 {
            // DIV_ROUND_UP(ssthresh * prr_delivered, prior_cwnd) - prr_out
            let dividend = ssthresh * e.prr_delivered as i64 + i64::from(e.prior_cwnd) - 1;
            dividend / i64::from(e.prior_cwnd) - prr_out
        } else {
            let mut n = (e.prr_delivered as i64 - prr_out).max(newly_acked_sacked as i64);
            if una_advanced && newly_lost == 0 {
                n += 1;
            }
            delta.min(n)
        };
        // "Force a fast retransmit upon entering fast recovery"
        sndcnt = sndcnt.max(if e.prr_out > 0 { 0 } else { 1 });
        let cwnd = (in_flight + sndcnt).max(1);
        self.cc.set_cwnd(u32::try_from(cwnd).unwrap_or(u32::MAX));
    }
}
