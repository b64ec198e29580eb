//! The sending end of one TCP connection, sans-IO: it never reads a clock and never
//! sends anything itself. Each call takes `now`, pushes what it wants transmitted and
//! what happened into `out`, and `timer()` says when it next wants `on_timer`.
//!
//! Modelled: the three-way handshake (optional), a fixed window of segments, the
//! retransmission timer managed exactly as RFC 6298 section 5 says, RTT sampling under
//! Karn's algorithm (or RFC 7323 timestamps), go-back-N after a timeout with the window
//! reopening one segment per ACK, fast retransmit on the third duplicate ACK (RFC 5681
//! 3.2; again on every third duplicate after an advance, a stand-in for NewReno's partial
//! ACKs), tail loss probes (`tlp.rs`), F-RTO (`frto.rs`) and giving up (`syn_retries`, `retries2`:
//! [`RtoParams::gives_up`]). Left out: congestion control beyond that (no ssthresh, no
//! cwnd reduction on fast retransmit), SACK and delayed ACKs.
//!
//! One timer serves both the RTO and the loss probe, as Linux's `icsk_pending` does: a
//! pending probe replaces the RTO, and the RTO is re-armed when the probe fires.

use std::collections::VecDeque;

use super::frto::{self, LossAck, Verdict};
use super::segment::Segment;
use super::tlp::{self, Probe};
use crate::engine::time::{SimDuration, SimTime};
use crate::model::rto::{Phase, RtoEstimator, RtoParams, RtoSnapshot, SeqInfo};

/// What the sender wants done or reports, in the order it happened.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Action {
    Transmit(Segment),
    Observe(Observation),
}

/// Something a trace or a metric may want to know, with the estimator's state after it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Observation {
    pub kind: ObservationKind,
    pub rto: RtoSnapshot,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObservationKind {
    /// A first transmission (`seq` is `None` for a SYN).
    Send { seq: Option<u64> },
    /// A retransmission (`seq` is `None` for a SYN).
    Retransmit { seq: Option<u64> },
    /// A tail loss probe: new data, or a retransmission of the last segment sent.
    Probe { seq: u64, retransmit: bool },
    /// An acknowledgment arrived; `ack` is the cumulative ACK (0 for a SYN-ACK).
    Ack { ack: u64 },
    /// A valid RTT measurement was fed to the estimator.
    Sample { rtt: SimDuration },
    /// The retransmission timer expired.
    Timeout,
    /// F-RTO found the last timeout spurious and undid its recovery.
    SpuriousTimeout,
    /// The handshake completed.
    Established,
    /// A finite transfer was fully acknowledged.
    Finished,
    /// The connection gave up (ETIMEDOUT). `waited` runs from the first transmission of
    /// the segment (or SYN) that was never acknowledged.
    Aborted { waited: SimDuration },
}

/// What the application gives the sender to transmit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Supply {
    /// A fixed number of segments, all ready at the start.
    Transfer { segments: u64 },
    /// Segments arrive one at a time through `app_write`.
    Steady,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Idle,
    SynSent,
    Established,
    Finished,
    Aborted,
}

/// Linux's `icsk_ca_state`, reduced to what the timers need.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ca {
    Open,
    /// After a fast retransmit, until snd_una reaches `high` (TCP_CA_Recovery).
    Recovery {
        high: u64,
    },
    /// After a timeout, until snd_una reaches `high` (TCP_CA_Loss); `frto` while F-RTO
    /// may still call the timeout spurious (`tp->frto`).
    Loss {
        high: u64,
        frto: bool,
    },
}

/// Which use of the one timer is pending.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TimerKind {
    Rto,
    Probe,
}

/// One segment between SND.UNA and the highest segment ever sent.
#[derive(Clone, Copy, Debug)]
struct TxRecord {
    first: SimTime,
    last: SimTime,
    retransmitted: bool,
}

/// Sender options that are properties of the TCP stack rather than of the estimator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SenderOptions {
    pub handshake: bool,
    pub window: u32,
    pub segment_size: u32,
    pub fast_retransmit: bool,
}

#[derive(Clone, Debug)]
pub struct TcpSender {
    opts: SenderOptions,
    rto: RtoEstimator,
    state: State,
    supply: Supply,
    /// Segments the application has handed over (the end of a transfer, or written so far).
    available: u64,
    snd_una: u64,
    /// The next segment to send: below `lost_end` while go-back-N retransmits after a
    /// timeout, `snd_max` otherwise.
    snd_nxt: u64,
    /// Segments in [snd_nxt, lost_end) are marked lost and wait for retransmission.
    lost_end: u64,
    snd_max: u64,
    /// Congestion window in segments: the full window except after a timeout, when it
    /// restarts at one and grows by one per newly acknowledged segment.
    cwnd: u64,
    flight: VecDeque<TxRecord>,
    /// The one segment being timed when sampling once per RTT (RFC 6298 section 3).
    timed: Option<(u64, SimTime)>,
    /// The one timer and what it is for (`icsk_timeout`, `icsk_pending`).
    timer: Option<(SimTime, TimerKind)>,
    dupacks: u32,
    ca: Ca,
    /// The outstanding tail loss probe, if any.
    probe: Option<Probe>,
    /// RTO expiries since the last forward progress (`icsk_retransmits`).
    retransmits: u32,
    /// When the first retransmission since the connection last recovered went out
    /// (`retrans_stamp`; the first SYN's time in SYN-SENT).
    retrans_stamp: Option<SimTime>,
    syn_first: SimTime,
    syn_last: SimTime,
    syn_retransmitted: bool,
}

impl TcpSender {
    pub fn new(opts: SenderOptions, params: &RtoParams, supply: Supply) -> Self {
        TcpSender {
            opts,
            rto: RtoEstimator::new(params),
            state: State::Idle,
            supply,
            available: match supply {
                Supply::Transfer { segments } => segments,
                Supply::Steady => 0,
            },
            snd_una: 0,
            snd_nxt: 0,
            lost_end: 0,
            snd_max: 0,
            cwnd: u64::from(opts.window),
            flight: VecDeque::new(),
            timed: None,
            timer: None,
            dupacks: 0,
            ca: Ca::Open,
            probe: None,
            retransmits: 0,
            retrans_stamp: None,
            syn_first: SimTime::ZERO,
            syn_last: SimTime::ZERO,
            syn_retransmitted: false,
        }
    }

    /// When the retransmission timer (or the loss probe in its place) expires, if running.
    pub fn timer(&self) -> Option<SimTime> {
        self.timer.map(|(at, _)| at)
    }

    pub fn is_finished(&self) -> bool {
        self.state == State::Finished
    }

    pub fn is_aborted(&self) -> bool {
        self.state == State::Aborted
    }

    pub fn is_established(&self) -> bool {
        matches!(self.state, State::Established | State::Finished)
    }

    pub fn snapshot(&self) -> RtoSnapshot {
        self.rto.snapshot()
    }

    /// Segments acknowledged so far.
    pub fn acked(&self) -> u64 {
        self.snd_una
    }

    fn params(&self) -> &RtoParams {
        self.rto.params()
    }

    fn observe(&self, kind: ObservationKind, out: &mut Vec<Action>) {
        out.push(Action::Observe(Observation { kind, rto: self.rto.snapshot() }));
    }

    /// Segments sent and not yet acknowledged (Linux `packets_out`).
    fn outstanding(&self) -> u64 {
        self.snd_max - self.snd_una
    }

    /// Segments in the network: outstanding ones less those marked lost and not yet
    /// retransmitted (`tcp_packets_in_flight` without SACK).
    fn in_flight(&self) -> u64 {
        debug_assert!(self.snd_una <= self.snd_nxt && self.snd_nxt <= self.lost_end && self.lost_end <= self.snd_max);
        self.outstanding() - (self.lost_end - self.snd_nxt)
    }

    /// New data is waiting and the window has room for it beyond the highest sent.
    fn new_data_fits(&self) -> bool {
        self.snd_max < self.available && self.snd_max < self.snd_una + u64::from(self.opts.window)
    }

    fn arm_rto(&mut self, now: SimTime) {
        self.timer = Some((now + self.rto.rto(), TimerKind::Rto));
    }

    fn stop_timer(&mut self) {
        self.timer = None;
    }

    /// When the RTO would fire counted from the oldest outstanding segment's last
    /// transmission, as `tcp_rto_delta_us` counts it.
    fn rto_due(&self) -> SimTime {
        self.flight.front().map_or(SimTime::ZERO, |head| head.last) + self.rto.rto()
    }

    /// `tcp_rearm_rto`: stop the timer if nothing is outstanding, else arm the RTO from
    /// now, or, replacing a pending probe (`probe_pending`), for what is left of the RTO
    /// counted from the oldest outstanding segment ("Offset the time elapsed after
    /// installing regular RTO").
    fn rearm_rto(&mut self, now: SimTime, probe_pending: bool) {
        if self.outstanding() == 0 {
            self.stop_timer();
        } else if probe_pending {
            let left = self.rto_due().saturating_since(now);
            self.timer = Some((now + self.params().timer_ticks(left), TimerKind::Rto));
        } else {
            self.arm_rto(now);
        }
    }

    fn probe_pending(&self) -> bool {
        matches!(self.timer, Some((_, TimerKind::Probe)))
    }

    /// `tcp_schedule_loss_probe`: replace the RTO with a probe timeout when there is
    /// something outstanding and no recovery under way. `advancing` says the RTO would be
    /// restarted from now (an ACK of new data) rather than left running.
    fn schedule_probe(&mut self, now: SimTime, advancing: bool) -> bool {
        if !self.params().tlp || self.state != State::Established || self.outstanding() == 0 || self.ca != Ca::Open {
            return false;
        }
        let until_rto = if advancing { self.rto.rto() } else { self.rto_due().saturating_since(now) };
        let pto = tlp::probe_timeout(self.params(), self.rto.snapshot().srtt, self.outstanding(), Some(until_rto));
        // A zero SRTT or an RTO already due would give 0: a timer is always in the future.
        self.timer = Some((now + self.params().timer_ticks(pto), TimerKind::Probe));
        true
    }

    pub fn start(&mut self, now: SimTime, out: &mut Vec<Action>) {
        if self.state != State::Idle {
            return;
        }
        if self.opts.handshake {
            self.state = State::SynSent;
            self.syn_first = now;
            self.syn_last = now;
            // tcp_connect: in SYN-SENT retrans_stamp remembers the first SYN.
            self.retrans_stamp = Some(now);
            out.push(Action::Transmit(Segment::Syn { tsval: now, retransmit: false }));
            self.observe(ObservationKind::Send { seq: None }, out);
            // RFC 6298 (5.1): the SYN is the first segment; the timer starts with it.
            self.arm_rto(now);
        } else {
            self.state = State::Established;
            self.try_send(now, out);
        }
    }

    /// The application writes one more segment (steady supply).
    pub fn app_write(&mut self, now: SimTime, out: &mut Vec<Action>) {
        if self.supply == Supply::Steady {
            self.available += 1;
            self.try_send(now, out);
        }
    }

    fn seq_info(&self) -> SeqInfo {
        let mss = u64::from(self.opts.segment_size);
        SeqInfo { snd_una: self.snd_una * mss, snd_nxt: self.snd_nxt * mss }
    }

    /// Sends what the window and the application allow: first the segments marked lost
    /// (go-back-N), then new data once none is left.
    fn try_send(&mut self, now: SimTime, out: &mut Vec<Action>) {
        if self.state != State::Established {
            return;
        }
        while self.snd_nxt < self.lost_end && self.in_flight() < self.cwnd {
            let seq = self.snd_nxt;
            self.retransmit(seq, now, out);
            self.snd_nxt = seq + 1;
            if self.timer.is_none() {
                self.arm_rto(now); // RFC 6298 (5.1)
            }
        }
        if self.snd_nxt == self.lost_end {
            // Go-back-N is done (or never started): continue after the highest sent.
            self.snd_nxt = self.snd_max;
            self.lost_end = self.snd_max;
            self.push_new(now, out);
        }
    }

    /// New data as the window and the congestion window allow (`tcp_write_xmit`);
    /// returns whether any went out. Segments still marked lost are left as they are.
    fn push_new(&mut self, now: SimTime, out: &mut Vec<Action>) -> bool {
        let had_outstanding = self.outstanding() > 0;
        let mut sent = false;
        while self.new_data_fits() && self.in_flight() < self.cwnd {
            self.send_new(now, ObservationKind::Send { seq: Some(self.snd_max) }, out);
            // RFC 6298 (5.1): start the timer on sending data if it is not running.
            if self.timer.is_none() {
                self.arm_rto(now);
            }
            sent = true;
        }
        if sent {
            self.after_new_data(now, had_outstanding);
        }
        sent
    }

    /// Transmits segment `snd_max` for the first time, observed as `kind`.
    fn send_new(&mut self, now: SimTime, kind: ObservationKind, out: &mut Vec<Action>) {
        let seq = self.snd_max;
        self.flight.push_back(TxRecord { first: now, last: now, retransmitted: false });
        if self.snd_nxt == self.snd_max {
            self.snd_nxt += 1;
        }
        if self.lost_end == self.snd_max {
            self.lost_end += 1;
        }
        self.snd_max += 1;
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
    fn after_new_data(&mut self, now: SimTime, had_outstanding: bool) {
        let probe_pending = self.probe_pending();
        if !had_outstanding || probe_pending {
            self.rearm_rto(now, probe_pending);
        }
        self.schedule_probe(now, false);
    }

    fn mark_retransmitted(&mut self, seq: u64, now: SimTime) {
        let rec = &mut self.flight[(seq - self.snd_una) as usize];
        rec.last = now;
        rec.retransmitted = true;
        if let Some((timed, _)) = self.timed
            && timed == seq
        {
            // RFC 6298 (3), Karn: a retransmitted segment must not be timed. Without
            // Karn the measurement restarts from this copy, the naive choice whose
            // ambiguity Karn's algorithm exists to avoid.
            self.timed = if self.params().karn { None } else { Some((seq, now)) };
        }
    }

    fn retransmit(&mut self, seq: u64, now: SimTime, out: &mut Vec<Action>) {
        self.mark_retransmitted(seq, now);
        // tcp_retransmit_skb: "Save stamp of the first (attempted) retransmit."
        self.retrans_stamp.get_or_insert(now);
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
        }
    }

    /// `tcp_send_loss_probe`: new data if the window allows it, else the last segment
    /// again; either way the RTO is then re-armed in full from now (RFC 8985 7.3).
    fn send_probe(&mut self, now: SimTime, out: &mut Vec<Action>) {
        if self.state != State::Established || self.outstanding() == 0 {
            self.stop_timer();
            return;
        }
        // "At most one outstanding TLP": the RTO takes over for what is left of it.
        if self.probe.is_some() {
            self.rearm_rto(now, true);
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
            self.mark_retransmitted(seq, now);
            out.push(Action::Transmit(Segment::Data { seq, tsval: now, retransmit: true }));
            self.observe(ObservationKind::Probe { seq, retransmit: true }, out);
            true
        };
        // tlp_high_seq = snd_nxt; icsk_pending = 0 so the RTO restarts from now.
        self.probe = Some(Probe { high: self.snd_max, retrans });
        self.rearm_rto(now, false);
    }

    fn abort(&mut self, now: SimTime, out: &mut Vec<Action>) {
        let first = if self.state == State::SynSent {
            self.syn_first
        } else {
            self.flight.front().map_or(now, |head| head.first)
        };
        self.state = State::Aborted;
        self.stop_timer();
        self.observe(ObservationKind::Aborted { waited: now.saturating_since(first) }, out);
    }

    /// `tcp_retransmit_timer`: give up (`tcp_write_timeout`), or enter loss recovery,
    /// retransmit, back off and restart the timer.
    fn on_rto(&mut self, now: SimTime, out: &mut Vec<Action>) {
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
        self.rto.on_timeout(phase);
        self.observe(ObservationKind::Timeout, out);
        self.retransmits = self.retransmits.saturating_add(1);
        if phase == Phase::SynSent {
            self.syn_retransmitted = true;
            self.syn_last = now;
            out.push(Action::Transmit(Segment::Syn { tsval: now, retransmit: true }));
            self.observe(ObservationKind::Retransmit { seq: None }, out);
            self.arm_rto(now);
            return;
        }
        // tcp_enter_loss: F-RTO unless this timeout interrupts a fast recovery (a repeated
        // timeout on the same snd_una keeps it, RFC 5682 section 3.2).
        let new_recovery = self.ca == Ca::Open;
        let frto = self.params().frto && (new_recovery || self.retransmits > 1);
        self.ca = Ca::Loss { high: self.snd_max, frto };
        self.probe = None; // tlp_high_seq = 0
        // RFC 6298 (5.4): retransmit the earliest unacknowledged segment; every other
        // outstanding segment is marked lost and resent as ACKs reopen the window.
        let seq = self.snd_una;
        self.retransmit(seq, now, out);
        self.snd_nxt = seq + 1;
        self.lost_end = self.snd_max;
        self.cwnd = 1;
        self.dupacks = 0;
        // RFC 6298 (5.6): restart the timer with the backed-off RTO.
        self.arm_rto(now);
    }

    pub fn on_segment(&mut self, now: SimTime, seg: Segment, out: &mut Vec<Action>) {
        match seg {
            Segment::SynAck { tsecr } if self.state == State::SynSent => self.on_syn_ack(now, tsecr, out),
            Segment::Ack { ack, tsecr } if self.state == State::Established => self.on_ack(now, ack, tsecr, out),
            _ => {}
        }
    }

    fn on_syn_ack(&mut self, now: SimTime, tsecr: SimTime, out: &mut Vec<Action>) {
        self.observe(ObservationKind::Ack { ack: 0 }, out);
        let rtt = if self.params().timestamps {
            Some(now.saturating_since(tsecr))
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

    fn on_ack(&mut self, now: SimTime, ack: u64, tsecr: SimTime, out: &mut Vec<Action>) {
        let ack = ack.min(self.snd_max);
        let advanced = ack > self.snd_una;
        let dupack = !advanced && ack == self.snd_una && self.outstanding() > 0;
        let mut orig_acked = false;
        if advanced {
            let newly = ack - self.snd_una;
            let high = match self.ca {
                Ca::Loss { high, .. } => high,
                _ => 0,
            };
            // FLAG_ORIG_SACK_ACKED: a never-retransmitted segment at or below high_seq.
            orig_acked = (self.snd_una..ack).zip(self.flight.iter()).any(|(seq, rec)| !rec.retransmitted && seq < high);
            let rtt = self.sample_for(now, ack, tsecr);
            self.flight.drain(..newly as usize);
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
        }
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
        if send_new_instead {
            self.frto_send_new(now, out);
        } else {
            self.try_send(now, out);
        }
    }

    /// The congestion state machine on one ACK (`tcp_fastretrans_alert`,
    /// `tcp_process_loss`). Returns whether F-RTO wants new data sent instead of
    /// retransmissions.
    fn recovery_on_ack(
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
    fn reopen(&mut self) {
        self.ca = Ca::Open;
        self.retrans_stamp = None;
    }

    /// `tcp_try_undo_loss(sk, true)`: the timeout was spurious.
    fn undo_loss(&mut self, out: &mut Vec<Action>) {
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
    fn frto_send_new(&mut self, now: SimTime, out: &mut Vec<Action>) {
        if !self.push_new(now, out) {
            if let Ca::Loss { high, .. } = self.ca {
                self.ca = Ca::Loss { high, frto: false };
            }
            self.try_send(now, out);
        }
    }

    /// The RTT sample this ACK yields, if any, under the sampling rule in force.
    fn sample_for(&mut self, now: SimTime, ack: u64, tsecr: SimTime) -> Option<SimDuration> {
        let p = self.params();
        if p.timestamps {
            // RFC 7323 (4.1) / RFC 6298 (3): with timestamps every ACK of new data is a
            // valid sample, retransmitted or not, since the echo names the copy.
            return Some(now.saturating_since(tsecr));
        }
        if p.sample_every_ack {
            // Linux tcp_clean_rtx_queue / tcp_ack_update_rtt without timestamps: from the
            // oldest newly acknowledged segment, unless any segment this ACK covers was
            // retransmitted (FLAG_RETRANS_DATA_ACKED: Karn).
            let newly = (ack - self.snd_una) as usize;
            let acked = self.flight.iter().take(newly);
            let oldest = self.flight[0];
            return if acked.clone().all(|r| !r.retransmitted) {
                Some(now - oldest.first)
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

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::engine::time::SimDuration;
    use crate::model::rto::{RtoConfig, RtoProfile};

    fn ms(v: u64) -> SimTime {
        SimTime(v * 1_000_000)
    }

    fn sender(window: u32, segments: u64, config: RtoConfig) -> TcpSender {
        let opts = SenderOptions { handshake: false, window, segment_size: 1000, fast_retransmit: true };
        TcpSender::new(opts, &config.resolve().unwrap(), Supply::Transfer { segments })
    }

    fn rfc() -> RtoConfig {
        RtoConfig::default()
    }

    /// The data segments sent, as (seq, retransmit).
    pub(in crate::model::tcp) fn sent(out: &[Action]) -> Vec<(u64, bool)> {
        out.iter()
            .filter_map(|a| match a {
                Action::Transmit(Segment::Data { seq, retransmit, .. }) => Some((*seq, *retransmit)),
                _ => None,
            })
            .collect()
    }

    fn samples(out: &[Action]) -> Vec<SimDuration> {
        out.iter()
            .filter_map(|a| match a {
                Action::Observe(Observation { kind: ObservationKind::Sample { rtt }, .. }) => Some(*rtt),
                _ => None,
            })
            .collect()
    }

    fn ack(s: &mut TcpSender, at: SimTime, ack: u64, tsecr: SimTime) -> Vec<Action> {
        let mut out = Vec::new();
        s.on_segment(at, Segment::Ack { ack, tsecr }, &mut out);
        out
    }

    #[test]
    fn rfc6298_5_1_timer_starts_with_the_first_data_and_is_not_restarted_by_later_sends() {
        let mut s = sender(4, 4, rfc());
        let mut out = Vec::new();
        s.start(ms(0), &mut out);
        assert_eq!(sent(&out), [(0, false), (1, false), (2, false), (3, false)]);
        // RFC 6298 (2.1): initial RTO 1 s.
        assert_eq!(s.timer(), Some(ms(1000)));
    }

    #[test]
    fn rfc6298_5_2_timer_stops_when_everything_is_acknowledged() {
        let mut s = sender(2, 2, rfc());
        s.start(ms(0), &mut Vec::new());
        ack(&mut s, ms(100), 1, ms(0));
        assert!(s.timer().is_some());
        ack(&mut s, ms(100), 2, ms(0));
        assert_eq!(s.timer(), None);
        assert!(s.is_finished());
    }

    #[test]
    fn rfc6298_5_3_an_ack_of_new_data_restarts_the_timer_with_the_current_rto() {
        let mut s = sender(2, 4, rfc());
        s.start(ms(0), &mut Vec::new());
        ack(&mut s, ms(300), 1, ms(0));
        // Sample 300 ms: SRTT 300, RTTVAR 150, RTO max(1 s, 0.9 s) = 1 s, from 300 ms.
        assert_eq!(s.timer(), Some(ms(1300)));
        // A duplicate ACK acknowledges nothing new and leaves the timer alone.
        ack(&mut s, ms(400), 1, ms(0));
        assert_eq!(s.timer(), Some(ms(1300)));
    }

    #[test]
    fn rfc6298_5_4_to_5_6_expiry_retransmits_the_earliest_doubles_and_restarts() {
        let mut s = sender(3, 3, rfc());
        s.start(ms(0), &mut Vec::new());
        let mut out = Vec::new();
        s.on_timer(ms(1000), &mut out);
        // (5.4) only the earliest unacknowledged segment; (5.5) RTO 2 s; (5.6) restarted.
        assert_eq!(sent(&out), [(0, true)]);
        assert_eq!(s.snapshot().rto, SimDuration::from_secs(2));
        assert_eq!(s.timer(), Some(ms(3000)));
        let mut out = Vec::new();
        s.on_timer(ms(3000), &mut out);
        assert_eq!(s.snapshot().rto, SimDuration::from_secs(4));
        assert_eq!(s.timer(), Some(ms(7000)));
    }

    #[test]
    fn a_stale_timer_call_does_nothing() {
        let mut s = sender(1, 1, rfc());
        s.start(ms(0), &mut Vec::new());
        let mut out = Vec::new();
        s.on_timer(ms(999), &mut out);
        assert!(out.is_empty());
        assert_eq!(s.timer(), Some(ms(1000)));
    }

    #[test]
    fn rfc6298_3_karn_takes_no_sample_from_a_retransmitted_segment_and_the_backoff_sticks() {
        let mut s = sender(1, 3, rfc());
        s.start(ms(0), &mut Vec::new());
        s.on_timer(ms(1000), &mut Vec::new());
        // The ACK of segment 0 arrives: ambiguous, so no sample, and the doubled RTO is
        // kept for the next segment (the smoltcp#1023 bug lost it here).
        let out = ack(&mut s, ms(1040), 1, ms(0));
        assert!(samples(&out).is_empty());
        assert_eq!(s.snapshot().rto, SimDuration::from_secs(2));
        assert_eq!(s.timer(), Some(ms(3040)));
        // Segment 1 was sent fresh at 1040 ms and is timed: its ACK is a valid sample,
        // RFC 6298 (2.2) recomputes, and the backoff collapses.
        let out = ack(&mut s, ms(2080), 2, ms(0));
        assert_eq!(samples(&out), [SimDuration::from_millis(1040)]);
        assert_eq!(s.snapshot().backoffs, 0);
        // SRTT 1.04 s + 4 · 0.52 s = 3.12 s.
        assert_eq!(s.snapshot().rto, SimDuration::from_millis(3120));
    }

    #[test]
    fn rfc7323_timestamps_make_the_ack_of_a_retransmission_a_valid_sample() {
        let config = RtoConfig { timestamps: Some(true), ..RtoConfig::default() };
        let mut s = sender(1, 2, config);
        s.start(ms(0), &mut Vec::new());
        s.on_timer(ms(1000), &mut Vec::new());
        // The ACK echoes the retransmission's TSval (1000 ms): the RTT is 40 ms.
        let out = ack(&mut s, ms(1040), 1, ms(1000));
        assert_eq!(samples(&out), [SimDuration::from_millis(40)]);
    }

    #[test]
    fn without_karn_the_retransmission_is_timed_from_its_latest_copy() {
        let config = RtoConfig { karn: Some(false), nonconformant: Some(true), ..RtoConfig::default() };
        let mut s = sender(1, 2, config);
        s.start(ms(0), &mut Vec::new());
        s.on_timer(ms(1000), &mut Vec::new());
        let out = ack(&mut s, ms(1040), 1, ms(0));
        // The ACK answered the original (sent at 0), but is attributed to the copy: 40 ms.
        assert_eq!(samples(&out), [SimDuration::from_millis(40)]);
    }

    #[test]
    fn linux_samples_every_ack_from_the_oldest_newly_acknowledged_segment() {
        let config = RtoConfig { profile: RtoProfile::Linux, timestamps: Some(false), ..RtoConfig::default() };
        let mut s = sender(4, 4, config);
        s.start(ms(0), &mut Vec::new());
        let out = ack(&mut s, ms(100), 2, ms(0));
        assert_eq!(samples(&out), [SimDuration::from_millis(100)]);
        let out = ack(&mut s, ms(110), 3, ms(0));
        assert_eq!(samples(&out), [SimDuration::from_millis(110)]);
    }

    #[test]
    fn rfc5681_3_2_third_duplicate_ack_retransmits_without_waiting_for_the_timer() {
        let mut s = sender(5, 5, rfc());
        s.start(ms(0), &mut Vec::new());
        ack(&mut s, ms(100), 1, ms(0));
        assert!(sent(&ack(&mut s, ms(101), 1, ms(0))).is_empty());
        assert!(sent(&ack(&mut s, ms(102), 1, ms(0))).is_empty());
        assert_eq!(sent(&ack(&mut s, ms(103), 1, ms(0))), [(1, true)]);
        // No backoff: fast retransmit is not a timeout.
        assert_eq!(s.snapshot().backoffs, 0);
    }

    #[test]
    fn after_a_timeout_the_window_reopens_one_segment_per_ack_going_back_n() {
        let mut s = sender(4, 4, rfc());
        s.start(ms(0), &mut Vec::new());
        s.on_timer(ms(1000), &mut Vec::new());
        // ACK 1 (segment 0's copy arrived): window 2, so segments 1 and 2 are resent.
        assert_eq!(sent(&ack(&mut s, ms(1100), 1, ms(0))), [(1, true), (2, true)]);
    }

    #[test]
    fn handshake_sample_and_rfc6298_5_7_after_a_syn_timeout() {
        let opts = SenderOptions { handshake: true, window: 1, segment_size: 1000, fast_retransmit: true };
        let params = RtoConfig::default().resolve().unwrap();
        let mut s = TcpSender::new(opts, &params, Supply::Steady);
        let mut out = Vec::new();
        s.start(ms(0), &mut out);
        assert!(matches!(out[0], Action::Transmit(Segment::Syn { retransmit: false, .. })));
        s.on_timer(ms(1000), &mut Vec::new());
        let mut out = Vec::new();
        s.on_segment(ms(1040), Segment::SynAck { tsecr: ms(0) }, &mut out);
        // Karn: the SYN was retransmitted, so the SYN-ACK is not sampled; (5.7): RTO < 3 s
        // after a SYN timeout becomes 3 s when data starts.
        assert!(samples(&out).is_empty());
        assert!(s.is_established());
        assert_eq!(s.snapshot().rto, SimDuration::from_secs(3));
    }
}
