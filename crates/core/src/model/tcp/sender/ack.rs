//! What an arriving segment does to the sender: the handshake's SYN-ACK, cumulative
//! ACKs, duplicate ACKs and recovery (RFC 5681 3.2, Linux `tcp_fastretrans_alert`),
//! F-RTO's verdicts and the RTT sample an ACK yields (Karn's algorithm or RFC 7323).

use super::*;

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
            self.rto.on_sample(now, rtt, Some(self.seq_info()));
            self.observe(ObservationKind::Sample { rtt }, out);
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
        sack: Option<u64>,
        out: &mut Vec<Action>,
    ) {
        let ack = ack.min(self.snd_max);
        let advanced = ack > self.snd_una;
        let prior_outstanding = self.outstanding();
        // tcp_ack_update_window: a changed window is FLAG_WIN_UPDATE, never a duplicate.
        let win_update = self.update_window(ack, window);
        let dupack = !advanced && ack == self.snd_una && self.outstanding() > 0 && !win_update;
        let mut orig_acked = false;
        if advanced {
            let newly = ack - self.snd_una;
            let high = match self.ca {
                Ca::Loss { high, .. } => high,
                _ => 0,
            };
            // FLAG_ORIG_SACK_ACKED: a never-retransmitted segment at or below high_seq.
            orig_acked = (self.snd_una..ack).zip(self.flight.iter()).any(|(seq, rec)| !rec.retransmitted && seq < high);
            let sack_rtt = self.sack_sample(now, sack);
            let rtt = self.sample_for(now, ack, tsecr, sack_rtt);
            let gone = self.flight.drain(..newly as usize).filter(|r| r.sacked).count() as u64;
            self.sacked -= gone;
            self.snd_una = ack;
            self.snd_nxt = self.snd_nxt.max(ack);
            self.lost_end = self.lost_end.max(self.snd_nxt);
            self.cwnd = (self.cwnd + newly).min(u64::from(self.opts.window));
            self.dupacks = 0;
            // tcp_ack: forward progress zeroes icsk_retransmits.
            self.retransmits = 0;
            self.observe(ObservationKind::Ack { ack }, out);
            if let Some(rtt) = rtt {
                self.rto.on_sample(now, rtt, Some(self.seq_info()));
                self.observe(ObservationKind::Sample { rtt }, out);
            }
        } else {
            self.observe(ObservationKind::Ack { ack }, out);
            if let Some(rtt) = self.sack_sample(now, sack) {
                self.rto.on_sample(now, rtt, Some(self.seq_info()));
                self.observe(ObservationKind::Sample { rtt }, out);
            }
        }
        orig_acked |= self.mark_sacked(sack);
        if let Some(p) = self.probe
            && p.ended_by(ack, advanced)
        {
            self.probe = None;
        }
        let send_new_instead = self.recovery_on_ack(now, advanced, dupack, orig_acked, out);
        if let Supply::Transfer { segments } = self.supply
            && self.snd_una >= segments
        {
            self.state = State::Finished;
            self.stop_timer();
            self.observe(ObservationKind::Finished, out);
            return;
        }
        if advanced {
            // tcp_set_xmit_timer: a probe if one may be scheduled, else RFC 6298 (5.2) /
            // (5.3): stop the timer when all is acknowledged, restart it otherwise.
            let probe_pending = self.probe_pending();
            if !self.schedule_probe(now, true) {
                self.rearm_rto(now, probe_pending);
            }
        }
        self.persist_on_ack(now, prior_outstanding, out);
        if send_new_instead {
            self.frto_send_new(now, out);
        } else {
            self.try_send(now, out);
        }
    }

    /// The congestion state machine on one ACK (`tcp_fastretrans_alert`,
    /// `tcp_process_loss`). Returns whether F-RTO wants new data sent instead of
    /// retransmissions.
    pub(super) fn recovery_on_ack(
        &mut self,
        now: SimTime,
        advanced: bool,
        dupack: bool,
        orig_acked: bool,
        out: &mut Vec<Action>,
    ) -> bool {
        if dupack {
            self.dupacks += 1;
            // RFC 5681 (3.2): the third duplicate ACK triggers a retransmission of the
            // first unacknowledged segment, without waiting for the timer.
            if self.dupacks == 3 && self.opts.fast_retransmit && self.snd_nxt > self.snd_una {
                let seq = self.snd_una;
                self.retransmit(seq, now, out);
                self.rearm_on_head_retransmit(seq, now);
                if self.ca == Ca::Open {
                    self.ca = Ca::Recovery { high: self.snd_max };
                }
            }
        }
        match self.ca {
            Ca::Open => {}
            Ca::Recovery { high } => {
                if self.snd_una >= high {
                    self.reopen();
                }
            }
            Ca::Loss { mut high, frto } => {
                if frto {
                    let can_send_new = self.new_data_fits();
                    let verdict = frto::on_loss_ack(LossAck {
                        high,
                        snd_max: self.snd_max,
                        snd_una: self.snd_una,
                        advanced,
                        dupack,
                        orig_acked,
                        can_send_new,
                    });
                    match verdict {
                        Verdict::Spurious => {
                            self.undo_loss(out);
                            return false;
                        }
                        Verdict::SendNew => {
                            high = self.snd_max;
                            self.ca = Ca::Loss { high, frto: true };
                            return true;
                        }
                        Verdict::Off => self.ca = Ca::Loss { high, frto: false },
                        Verdict::Wait => {}
                    }
                }
                if self.snd_una >= high {
                    self.reopen();
                }
            }
        }
        false
    }

    /// Recovery is over: back to the open state, with no retransmission outstanding.
    pub(super) fn reopen(&mut self) {
        self.ca = Ca::Open;
        self.retrans_stamp = None;
    }

    /// `tcp_try_undo_loss(sk, true)`: the timeout was spurious.
    pub(super) fn undo_loss(&mut self, out: &mut Vec<Action>) {
        // tcp_undo_cwnd_reduction(sk, true): the window as before, the lost marks cleared.
        self.cwnd = u64::from(self.opts.window);
        self.snd_nxt = self.snd_max;
        self.lost_end = self.snd_max;
        // WRITE_ONCE(icsk->icsk_retransmits, 0); tcp_set_ca_state(sk, TCP_CA_Open)
        self.retransmits = 0;
        self.reopen();
        self.observe(ObservationKind::SpuriousTimeout, out);
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

    /// Records the segment a duplicate ACK reports received above the hole (linux only:
    /// the rfc6298 sender has no SACK). Returns whether it newly SACKed a segment never
    /// retransmitted below `high_seq`: `tcp_sacktag_one`'s FLAG_ORIG_SACK_ACKED, which
    /// F-RTO's step 3b reads as for a cumulative ACK.
    pub(super) fn mark_sacked(&mut self, sack: Option<u64>) -> bool {
        let Some(seq) = sack.filter(|&s| self.linux() && s >= self.snd_una && s < self.snd_max) else {
            return false;
        };
        let high = match self.ca {
            Ca::Loss { high, .. } => high,
            _ => 0,
        };
        let rec = &mut self.flight[(seq - self.snd_una) as usize];
        if rec.sacked {
            return false;
        }
        rec.sacked = true;
        self.sacked += 1;
        !rec.retransmitted && seq < high
    }

    /// The RTT sample a duplicate ACK yields from the segment it SACKs, under the linux
    /// profile: `tcp_sacktag_one` records a newly SACKed segment's send time if it was
    /// never retransmitted (`first_sackt`), and `tcp_ack_update_rtt` falls back to that
    /// `sack_rtt_us` when the cumulative ACK gave none (`if (seq_rtt_us < 0) seq_rtt_us
    /// = sack_rtt_us`). So F-RTO's new data, SACKed above the hole a blackout left, ends
    /// the backoff one round trip after the retransmission's ACK.
    pub(super) fn sack_sample(&self, now: SimTime, sack: Option<u64>) -> Option<SimDuration> {
        let p = self.params();
        if !self.linux() || !p.sample_every_ack {
            return None;
        }
        let seq = sack.filter(|&s| s >= self.snd_una && s < self.snd_max)?;
        let rec = self.flight[(seq - self.snd_una) as usize];
        (!rec.retransmitted && !rec.sacked).then(|| now.saturating_since(rec.first))
    }

    /// The RTT sample this ACK yields, if any, under the sampling rule in force.
    pub(super) fn sample_for(
        &mut self,
        now: SimTime,
        ack: u64,
        tsecr: SimTime,
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
            let newly = (ack - self.snd_una) as usize;
            let acked = self.flight.iter().take(newly);
            let oldest = self.flight[0];
            return if acked.clone().all(|r| !r.retransmitted) {
                Some(now - oldest.first)
            } else if sack_rtt.is_some() {
                sack_rtt
            } else if p.timestamps {
                Some(self.ts_sample(now, tsecr))
            } else if !p.karn {
                Some(now - oldest.last)
            } else {
                None
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
