//! What an arriving segment does to the sender: the handshake's SYN-ACK, cumulative
//! ACKs, duplicate ACKs and recovery (RFC 5681 3.2, Linux `tcp_fastretrans_alert`),
//! F-RTO's verdicts and the RTT sample an ACK yields (Karn's algorithm or RFC 7323).

use super::*;

/// `net.ipv4.tcp_max_reordering`: the most DupThresh can grow to.
const MAX_REORDERING: u64 = 300;

/// What an advancing ACK covered, read before the scoreboard forgets it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Acked {
    /// The oldest newly acknowledged segment never retransmitted nor SACKed, when first
    /// sent (`first_ackt`).
    first_ackt: Option<SimTime>,
    /// A retransmitted segment is among them (FLAG_RETRANS_DATA_ACKED).
    retrans_acked: bool,
    /// The old head's latest transmission.
    head_last: Option<SimTime>,
}

/// `net.ipv4.tcp_min_rtt_wlen`: the window of the minimum RTT, 300 s.
const MIN_RTT_WINDOW: SimDuration = SimDuration::from_secs(300);

impl TcpSender {
    pub fn on_segment(&mut self, now: SimTime, seg: Segment, out: &mut Vec<Action>) {
        match seg {
            Segment::SynAck { tsecr } if self.state == State::SynSent => self.on_syn_ack(now, tsecr, out),
            Segment::Ack { ack, tsecr, window, sack } if self.state == State::Established => {
                self.on_ack(now, ack, tsecr, window, sack, out)
            }
            _ => {}
        }
    }

    pub(super) fn on_syn_ack(&mut self, now: SimTime, tsecr: SimTime, out: &mut Vec<Action>) {
        self.observe(ObservationKind::Ack { ack: 0 }, out);
        let rtt = if self.params().timestamps && self.linux() && !self.syn_retransmitted {
            // tcp_ack_update_rtt prefers the SYN's own send time to TS-ECR ("Prefer RTT
            // measured from ACK's timing to TS-ECR") while it was sent once.
            Some(now - self.syn_first)
        } else if self.params().timestamps {
            Some(self.ts_sample(now, tsecr))
        } else if !self.syn_retransmitted {
            Some(now - self.syn_first)
        } else if !self.params().karn {
            Some(now - self.syn_last)
        } else {
            // RFC 6298 (3): the SYN was retransmitted, so this SYN-ACK is ambiguous.
            None
        };
        if let Some(rtt) = rtt {
            self.on_rtt_sample(now, rtt, out);
        }
        self.state = State::Established;
        // The SYN is acknowledged: FLAG_SYN_ACKED clears retrans_stamp; snd_una advanced.
        self.retransmits = 0;
        self.retrans_stamp = None;
        // RFC 6298 (5.7): data transmission begins (the estimator applies the 3 s rule).
        self.rto.on_established();
        self.stop_timer();
        self.observe(ObservationKind::Established, out);
        self.try_send(now, out);
    }

    pub(super) fn on_ack(
        &mut self,
        now: SimTime,
        ack: u64,
        tsecr: SimTime,
        window: u64,
        sack: Sack,
        out: &mut Vec<Action>,
    ) {
        if ack < self.snd_una {
            // tcp_ack: "If the ack is older than previous acks then we can probably
            // ignore it" (its SACK blocks are not read here).
            self.observe(ObservationKind::Ack { ack }, out);
            return;
        }
        let ack = ack.min(self.snd_max);
        let advanced = ack > self.snd_una;
        let prior_outstanding = self.outstanding();
        let prior_delivered = self.delivered;
        let prior_lost = self.sb.lost_marks();
        let prior_fack = self.sb.high_sack().unwrap_or(self.snd_una);
        // tcp_ack_update_window: a changed window is FLAG_WIN_UPDATE, never a duplicate.
        let win_update = self.update_window(ack, window);
        let listed = sack.blocks();
        let blocks: &[(u64, u64)] = if self.opts.sack { &listed } else { &[] };
        let high = match self.ca {
            Ca::Loss { high, .. } => high,
            _ => 0,
        };
        // tcp_clean_rtx_queue, before the scoreboard forgets: the oldest newly
        // acknowledged segment never retransmitted nor SACKed (first_ackt), and whether any
        // retransmitted one is among them (FLAG_RETRANS_DATA_ACKED).
        let mut first_ackt = None;
        let mut retrans_acked = false;
        for seq in self.snd_una..ack {
            let Some(seg) = self.sb.segment(seq) else { break };
            if seg.retransmitted {
                retrans_acked = true;
            } else if !seg.sacked && first_ackt.is_none() {
                first_ackt = Some(seg.first);
            }
        }
        let head_last = self.sb.segment(self.snd_una).map(|head| head.sent);
        let outcome = self.sb.on_ack(ack, blocks);
        let mut orig_acked = false;
        let mut reord = None;
        let mut sack_first = None;
        let mut data_sacked = false;
        for d in &outcome.delivered {
            if !d.retransmitted {
                orig_acked |= d.seq < high;
                reord = Some(reord.map_or(d.seq, |r: u64| r.min(d.seq)));
                if d.seq >= ack && sack_first.is_none() {
                    sack_first = Some(d.sent); // tcp_sacktag_one's first_sackt
                }
            }
            data_sacked |= d.seq >= ack;
        }
        self.delivered += outcome.delivered.len() as u64;
        // tcp_check_sack_reordering: an original segment delivered below the highest
        // SACKed one arrived out of order.
        if self.opts.sack
            && let Some(low) = reord
            && low < prior_fack
        {
            self.reord_seen = true;
            self.reordering = self.reordering.max(prior_fack - low).min(MAX_REORDERING);
        }
        if let Some(dsack) = outcome.dsack {
            self.on_dsack(dsack);
        }
        let sack_rtt = sack_first.filter(|_| self.linux() && self.params().sample_every_ack).map(|t| now - t);
        let mut rtt = None;
        if advanced {
            let newly = ack - self.snd_una;
            let acked = Acked { first_ackt, retrans_acked, head_last };
            rtt = self.sample_for(now, ack, tsecr, acked, sack_rtt);
            self.snd_una = ack;
            // tcp_ack: forward progress zeroes icsk_retransmits.
            self.retransmits = 0;
            if !self.opts.sack {
                self.remove_reno_sacks(newly);
            } else {
                self.dupacks = 0;
            }
        } else if sack_rtt.is_some() {
            rtt = sack_rtt;
        }
        self.observe(ObservationKind::Ack { ack }, out);
        if let Some(rtt) = rtt {
            self.on_rtt_sample(now, rtt, out);
        }
        self.rack.advance(now, &outcome.delivered, self.min_rtt.map(|(m, _)| m));
        self.rack.update_reo_wnd(prior_delivered, self.delivered);
        let dupack = !advanced && prior_outstanding > 0 && !win_update;
        match self.opts.loss_detection() {
            // RFC 6675 (2): a duplicate ACK carries new SACK information.
            LossDetection::DupThresh if !advanced && data_sacked => self.dupacks += 1,
            // tcp_add_reno_sack, outside the loss state (tcp_process_loss counts its own).
            LossDetection::NewReno if dupack && !matches!(self.ca, Ca::Loss { .. }) => self.add_reno_sack(),
            _ => {}
        }
        if let Some(p) = self.probe
            && p.ended_by(ack, advanced)
        {
            self.probe = None;
        }
        let mut flags = recovery::AckFlags {
            advanced,
            dupack,
            data_sacked,
            orig_acked,
            delivered: self.delivered - prior_delivered,
            tsecr: self.params().timestamps.then_some(tsecr),
            rtt,
            newly_lost: 0,
        };
        let reorder_was_pending = matches!(self.timer, Some((_, TimerKind::Reorder)));
        let send_new_instead = self.recovery_on_ack(now, &flags, out);
        flags.newly_lost = self.sb.lost_marks() - prior_lost;
        if let Supply::Transfer { segments } = self.supply
            && self.snd_una >= segments
        {
            self.state = State::Finished;
            self.stop_timer();
            self.observe(ObservationKind::Finished, out);
            return;
        }
        let reorder_armed = matches!(self.timer, Some((_, TimerKind::Reorder))) && !reorder_was_pending;
        if advanced && !reorder_armed {
            // tcp_set_xmit_timer (FLAG_SET_XMIT_TIMER, unless RACK armed its timer): a
            // probe if one may be scheduled, else RFC 6298 (5.2) / (5.3): stop the timer
            // when all is acknowledged, restart it otherwise. RFC 6582's impatient
            // variant restarts it on the first partial ACK of a recovery only.
            let probe_pending = self.probe_pending();
            let impatient = !self.linux()
                && self.opts.loss_detection() == LossDetection::NewReno
                && self.in_recovery()
                && self.episode.partial_acks > 1;
            if !impatient && !self.schedule_probe(now, true) {
                self.rearm_rto(now, probe_pending);
            }
        }
        self.cong_control(now, &flags);
        self.persist_on_ack(now, prior_outstanding, out);
        if send_new_instead {
            self.frto_send_new(now, out);
        } else {
            self.try_send(now, out);
        }
    }

    /// Feed one RTT sample to the estimator and the windowed minimum.
    pub(super) fn on_rtt_sample(&mut self, now: SimTime, rtt: SimDuration, out: &mut Vec<Action>) {
        self.rto.on_sample(now, rtt, Some(self.seq_info()));
        self.observe(ObservationKind::Sample { rtt }, out);
        // tcp_update_rtt_min: a running minimum over `tcp_min_rtt_wlen` (300 s); an
        // expired minimum is replaced by the sample (Linux's filter would fall back to
        // its second- or third-best of the window).
        self.min_rtt = match self.min_rtt {
            Some((m, at)) if rtt > m && now.saturating_since(at) <= MIN_RTT_WINDOW => Some((m, at)),
            _ => Some((rtt, now)),
        };
    }

    /// `tcp_check_dsack` / `tcp_dsack_seen`: a DSACK of a retransmission counts toward
    /// undo (`undo_retrans`), and grows RACK's reordering window once reordering is seen.
    fn on_dsack(&mut self, dsack: super::super::scoreboard::Dsack) {
        let (start, end) = match dsack {
            super::super::scoreboard::Dsack::BelowAck { start, end }
            | super::super::scoreboard::Dsack::InsideSecond { start, end } => (start, end),
        };
        let dup_segs = end.saturating_sub(start).max(1);
        // A DSACK that names a TLP's copy is the probe's, not reordering's
        // (FLAG_DSACK_TLP).
        let tlp = self.probe.is_some_and(|p| p.high == end);
        if self.reord_seen && !tlp {
            self.rack.on_dsack();
        }
        if let Some(marker) = self.episode.undo_marker
            && self.episode.undo_retrans > 0
            && end > marker
        {
            self.episode.undo_retrans = (self.episode.undo_retrans - dup_segs as i64).max(0);
        }
    }

    /// `tcp_add_reno_sack` with `tcp_limit_reno_sacked`: a duplicate ACK stands for a
    /// segment that left the network, short of the holes.
    fn add_reno_sack(&mut self) {
        self.dupacks = (self.dupacks + 1).min(self.reno_sacked_max());
    }

    /// `tcp_remove_reno_sacks`: a cumulative ACK of `acked` segments takes back the
    /// duplicates it explains, all but one.
    fn remove_reno_sacks(&mut self, acked: u64) {
        if !self.in_recovery() {
            self.dupacks = 0;
        } else if acked > 0 {
            self.dupacks = self.dupacks.saturating_sub(acked - 1);
        }
    }

    /// F-RTO step 2b (REXMIT_NEW in `tcp_xmit_recovery`): new data as the congestion
    /// window allows, RFC 5682's "up to two new segments"; if none can go, F-RTO ends and
    /// the lost segments are retransmitted after all.
    pub(super) fn frto_send_new(&mut self, now: SimTime, out: &mut Vec<Action>) {
        if !self.push_new(now, out) {
            if let Ca::Loss { high, .. } = self.ca {
                self.ca = Ca::Loss { high, frto: false };
            }
            self.try_send(now, out);
        }
    }

    pub(super) fn linux(&self) -> bool {
        self.params().profile == RtoProfile::Linux
    }

    /// An RTT measured from the timestamp echo. RFC 7323 (4.1) exactly; Linux's
    /// `tcp_rtt_tsopt_us` on its 1 ms timestamp clock (`TCP_TS_HZ` = 1000: TSval is the
    /// send time truncated to ms, `tcp_time_stamp_ts` the ACK's), a zero delta counting as
    /// 1 ms (`tcp_rtt_tsopt_us(tp, 1)` in `tcp_ack_update_rtt`).
    pub(super) fn ts_sample(&self, now: SimTime, tsecr: SimTime) -> SimDuration {
        if !self.linux() {
            return now.saturating_since(tsecr);
        }
        let ticks = (now.0 / 1_000_000).saturating_sub(tsecr.0 / 1_000_000);
        SimDuration::from_millis(ticks.max(1))
    }

    /// The RTT sample this ACK yields, if any, under the sampling rule in force.
    pub(super) fn sample_for(
        &mut self,
        now: SimTime,
        ack: u64,
        tsecr: SimTime,
        acked: Acked,
        sack_rtt: Option<SimDuration>,
    ) -> Option<SimDuration> {
        let p = self.params();
        if p.timestamps && !(p.sample_every_ack && self.linux()) {
            // RFC 7323 (4.1) / RFC 6298 (3): with timestamps every ACK of new data is a
            // valid sample, retransmitted or not, since the echo names the copy.
            return Some(self.ts_sample(now, tsecr));
        }
        if p.sample_every_ack {
            // Linux tcp_clean_rtx_queue / tcp_ack_update_rtt: from the oldest newly
            // acknowledged segment's send time, unless any segment this ACK covers was
            // retransmitted (FLAG_RETRANS_DATA_ACKED: Karn); then from the SACKed
            // segment, then from TS-ECR if timestamps are on ("Prefer RTT measured from
            // ACK's timing to TS-ECR").
            return match acked.first_ackt {
                Some(t) if !acked.retrans_acked => Some(now - t),
                _ if sack_rtt.is_some() => sack_rtt,
                _ if p.timestamps => Some(self.ts_sample(now, tsecr)),
                _ if !p.karn => acked.head_last.map(|t| now - t),
                _ => None,
            };
        }
        match self.timed {
            Some((seq, sent)) if seq < ack => {
                self.timed = None;
                Some(now - sent)
            }
            _ => None,
        }
    }
}
