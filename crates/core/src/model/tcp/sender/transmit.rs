//! What the sender puts on the wire and when: retransmissions of segments marked lost and
//! new data as the windows allow, the loss probe and the retransmission timer's expiry
//! (RFC 6298 section 5, Linux `tcp_retransmit_timer`).

use super::*;

impl TcpSender {
    pub(super) fn seq_info(&self) -> SeqInfo {
        let mss = u64::from(self.opts.segment_size);
        SeqInfo { snd_una: self.snd_una * mss, snd_nxt: self.snd_max * mss }
    }

    /// Sends what the windows and the application allow: first the segments marked lost
    /// (`tcp_xmit_retransmit_queue`), then new data (`tcp_write_xmit`).
    pub(super) fn try_send(&mut self, now: SimTime, out: &mut Vec<Action>) {
        if self.state != State::Established {
            return;
        }
        self.retransmit_lost(now, out);
        self.push_new(now, out);
        self.check_probe_timer(now, out);
    }

    /// `tcp_xmit_retransmit_queue`: the lost segments, lowest first, while the congestion
    /// window has room: RFC 6675's `NextSeg()` rule 1 (rules 3 and 4, unSACKed segments
    /// not yet deemed lost, are left out, as Linux leaves them).
    pub(super) fn retransmit_lost(&mut self, now: SimTime, out: &mut Vec<Action>) {
        while self.in_flight() < self.cwnd() && !self.local_congestion {
            let Some(seq) = self.sb.first_lost() else { break };
            self.retransmit(seq, now, out);
            self.rearm_on_head_retransmit(seq, now);
            if self.timer.is_none() {
                self.arm_rto(now); // RFC 6298 (5.1)
            }
        }
    }

    /// New data as the receiver's window and the congestion window allow
    /// (`tcp_write_xmit`); returns whether any went out.
    pub(super) fn push_new(&mut self, now: SimTime, out: &mut Vec<Action>) -> bool {
        let had_outstanding = self.outstanding() > 0;
        if !had_outstanding && self.snd_max < self.available {
            self.restart_after_idle(now);
        }
        let mut sent = false;
        while self.new_data_fits() && self.in_flight() < self.cwnd() && !self.refuses_new_data() {
            self.send_new(now, ObservationKind::Send { seq: Some(self.snd_max) }, out);
            // RFC 6298 (5.1): start the timer on sending data if it is not running.
            if self.timer.is_none() {
                self.arm_rto(now);
            }
            sent = true;
        }
        // tcp_write_xmit: is_cwnd_limited when the congestion window, not the
        // application or the receiver, stopped it.
        let cwnd_limited = self.snd_max < self.available && self.in_flight() >= self.cwnd();
        if sent || cwnd_limited {
            self.validate_cwnd(cwnd_limited);
        }
        if sent {
            // The probe timer's state goes with the stall (`tcp_probe_timer` finds
            // packets_out and clears icsk_probes_out and icsk_probes_tstamp).
            self.persist = None;
            self.after_new_data(now, had_outstanding);
        }
        sent
    }

    /// `tcp_slow_start_after_idle_check` (RFC 5681 4.1): the first send with nothing in
    /// flight after more than an RTO without sending restarts the window.
    fn restart_after_idle(&mut self, now: SimTime) {
        let Some(last) = self.last_send else { return };
        if self.opts.slow_start_after_idle || self.opts.congestion == CongestionKind::Cubic {
            // CUBIC also shifts its epoch over the idle spell (CA_EVENT_TX_START), whatever
            // the sysctl says; its own `slow_start_after_idle` gates the restart.
            self.cc.on_send_after_idle(now, now.saturating_since(last), self.rto.rto());
        }
    }

    /// `tcp_cwnd_validate`'s first half: how much of the window the last flight used.
    fn validate_cwnd(&mut self, is_cwnd_limited: bool) {
        let u = &mut self.usage;
        let packets_out = self.snd_max - self.snd_una;
        if self.snd_una >= u.seq || is_cwnd_limited || (!u.is_cwnd_limited && packets_out > u.max_packets_out) {
            u.is_cwnd_limited = is_cwnd_limited;
            u.max_packets_out = packets_out;
            u.seq = self.snd_max;
        }
    }

    pub(super) fn cwnd_use(&self) -> super::super::cc::CwndUse {
        super::super::cc::CwndUse {
            is_cwnd_limited: self.usage.is_cwnd_limited,
            max_packets_out: u32::try_from(self.usage.max_packets_out).unwrap_or(u32::MAX),
        }
    }

    /// Transmits segment `snd_max` for the first time, observed as `kind`.
    pub(super) fn send_new(&mut self, now: SimTime, kind: ObservationKind, out: &mut Vec<Action>) {
        let seq = self.sb.on_send(now);
        debug_assert_eq!(seq, self.snd_max);
        self.snd_max += 1;
        self.last_send = Some(now);
        if self.in_recovery() {
            self.episode.prr_out += 1;
        }
        let p = self.params();
        if self.timed.is_none() && !p.sample_every_ack && !p.timestamps {
            self.timed = Some((seq, now));
        }
        out.push(Action::Transmit(Segment::Data { seq, tsval: now, retransmit: false }));
        self.observe(kind, out);
    }

    /// `tcp_event_new_data_sent` and the end of `tcp_write_xmit`: new data restarts the
    /// RTO if nothing was outstanding or a probe was pending, then "Send one loss probe
    /// per tail loss episode".
    pub(super) fn after_new_data(&mut self, now: SimTime, had_outstanding: bool) {
        let probe_pending = self.probe_pending();
        if !had_outstanding || probe_pending {
            self.rearm_rto(now, probe_pending);
        }
        self.schedule_probe(now, false);
    }

    /// Karn's rule for the segment timed once per RTT.
    pub(super) fn untime(&mut self, seq: u64, now: SimTime) {
        if let Some((timed, _)) = self.timed
            && timed == seq
        {
            // RFC 6298 (3), Karn: a retransmitted segment must not be timed. Without
            // Karn the measurement restarts from this copy, the naive choice whose
            // ambiguity Karn's algorithm exists to avoid.
            self.timed = if self.params().karn { None } else { Some((seq, now)) };
        }
    }

    /// `tcp_xmit_retransmit_queue`: a retransmission of the head of the queue (on an ACK:
    /// fast retransmit, or a lost segment after a timeout) restarts the RTO from now with
    /// `icsk_rto` ("if (skb == rtx_head ...) rearm_timer = true"). Linux only: RFC 6298
    /// restarts the timer on an ACK of new data (5.3) and on expiry (5.6), not here.
    pub(super) fn rearm_on_head_retransmit(&mut self, seq: u64, now: SimTime) {
        // "if (skb == rtx_head && icsk->icsk_pending != ICSK_TIME_REO_TIMEOUT)"
        if seq == self.snd_una && self.linux() && !matches!(self.timer, Some((_, TimerKind::Reorder))) {
            self.arm_rto(now);
        }
    }

    /// `tcp_retransmit_skb`: a repair of a segment marked lost (or the head, on a
    /// timeout).
    pub(super) fn retransmit(&mut self, seq: u64, now: SimTime, out: &mut Vec<Action>) {
        self.sb.on_retransmit(seq, now);
        self.untime(seq, now);
        // tcp_retransmit_skb: "Save stamp of the first (attempted) retransmit."
        self.retrans_stamp.get_or_insert(now);
        // "if (tp->undo_retrans < 0) tp->undo_retrans = 0; tp->undo_retrans += segs"
        self.episode.undo_retrans = self.episode.undo_retrans.max(0) + 1;
        if self.in_recovery() {
            self.episode.prr_out += 1;
        }
        out.push(Action::Transmit(Segment::Data { seq, tsval: now, retransmit: true }));
        self.observe(ObservationKind::Retransmit { seq: Some(seq) }, out);
    }

    /// The timer expired. Call only at the time `timer()` named.
    pub fn on_timer(&mut self, now: SimTime, out: &mut Vec<Action>) {
        let Some((at, kind)) = self.timer else { return };
        if at != now {
            return;
        }
        self.timer = None;
        match kind {
            TimerKind::Probe => self.send_probe(now, out),
            TimerKind::Rto => self.on_rto(now, out),
            TimerKind::Reorder => self.on_reorder_timeout(now, out),
            TimerKind::Probe0 => self.on_probe0(now, out),
        }
    }

    /// `tcp_send_loss_probe`: new data if the window allows it, else the last segment
    /// again; either way the RTO is then re-armed in full from now (RFC 8985 7.3).
    pub(super) fn send_probe(&mut self, now: SimTime, out: &mut Vec<Action>) {
        if self.state != State::Established || self.outstanding() == 0 {
            self.stop_timer();
            return;
        }
        // "At most one outstanding TLP": the RTO takes over for what is left of it.
        if self.probe.is_some() {
            if self.rto_due() <= now {
                self.timer = Some((now + tlp::overdue_rto_wait(self.params()), TimerKind::Rto));
            } else {
                self.rearm_rto(now, true);
            }
            return;
        }
        let retrans = if self.new_data_fits() {
            // tcp_write_xmit(.., push_one = 2): one new segment, whatever cwnd says.
            self.send_new(now, ObservationKind::Probe { seq: self.snd_max, retransmit: false }, out);
            false
        } else {
            // The highest segment sent so far; __tcp_retransmit_skb, which (unlike a
            // timeout's retransmission) leaves retrans_stamp alone.
            let seq = self.snd_max - 1;
            self.sb.on_probe_copy(seq, now);
            self.untime(seq, now);
            out.push(Action::Transmit(Segment::Data { seq, tsval: now, retransmit: true }));
            self.observe(ObservationKind::Probe { seq, retransmit: true }, out);
            true
        };
        // tlp_high_seq = snd_nxt; icsk_pending = 0 so the RTO restarts from now.
        self.probe = Some(Probe { high: self.snd_max, retrans });
        self.rearm_rto(now, false);
    }

    pub(super) fn abort(&mut self, now: SimTime, out: &mut Vec<Action>) {
        let first = if self.state == State::SynSent {
            self.syn_first
        } else {
            self.sb.segment(self.snd_una).map_or(now, |head| head.first)
        };
        self.state = State::Aborted;
        self.stop_timer();
        self.observe(ObservationKind::Aborted { waited: now.saturating_since(first) }, out);
    }

    /// `tcp_retransmit_timer`: give up (`tcp_write_timeout`), or enter loss recovery,
    /// retransmit, back off and restart the timer.
    pub(super) fn on_rto(&mut self, now: SimTime, out: &mut Vec<Action>) {
        let phase = match self.state {
            State::SynSent => Phase::SynSent,
            State::Established if self.outstanding() > 0 => Phase::Established,
            _ => return,
        };
        let since = now.saturating_since(self.retrans_stamp.unwrap_or(now));
        if self.params().gives_up(phase, self.retransmits, since) {
            self.abort(now, out);
            return;
        }
        if self.local_congestion && self.params().profile == crate::model::rto::RtoProfile::Linux {
            self.on_rto_refused_locally(now, phase, out);
            return;
        }
        self.rto.on_timeout(phase);
        self.observe(ObservationKind::Timeout, out);
        self.retransmits = self.retransmits.saturating_add(1);
        if phase == Phase::SynSent {
            self.syn_retransmitted = true;
            self.syn_last = now;
            out.push(Action::Transmit(Segment::Syn { tsval: now, retransmit: true }));
            self.observe(ObservationKind::Retransmit { seq: None }, out);
            self.arm_rto_after_timeout(now);
            return;
        }
        self.enter_loss(now);
        // RFC 6298 (5.4): retransmit the earliest unacknowledged segment; the others
        // marked lost go as ACKs open the window.
        let seq = self.snd_una;
        self.retransmit(seq, now, out);
        // RFC 6298 (5.6): restart the timer with the backed-off RTO.
        self.arm_rto_after_timeout(now);
    }
}
