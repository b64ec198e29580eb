//! The sending end of one TCP connection, sans-IO: it never reads a clock and never
//! sends anything itself. Each call takes `now`, pushes what it wants transmitted and
//! what happened into `out`, and `timer()` says when it next wants `on_timer`.
//!
//! Modelled: the three-way handshake (optional), a fixed window of segments, the
//! retransmission timer managed exactly as RFC 6298 section 5 says, RTT sampling under
//! Karn's algorithm (or RFC 7323 timestamps), go-back-N after a timeout with the window
//! reopening one segment per ACK, and fast retransmit on the third duplicate ACK
//! (RFC 5681 3.2). Left out: congestion control beyond that (no ssthresh, no cwnd
//! reduction on fast retransmit), SACK, delayed ACKs, give-up budgets.

use std::collections::VecDeque;

use super::segment::Segment;
use crate::engine::time::SimTime;
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
    /// An acknowledgment arrived; `ack` is the cumulative ACK (0 for a SYN-ACK).
    Ack { ack: u64 },
    /// A valid RTT measurement was fed to the estimator.
    Sample { rtt: crate::engine::time::SimDuration },
    /// The retransmission timer expired.
    Timeout,
    /// The handshake completed.
    Established,
    /// A finite transfer was fully acknowledged.
    Finished,
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
    karn: bool,
    timestamps: bool,
    every_ack: bool,
    rto: RtoEstimator,
    state: State,
    supply: Supply,
    /// Segments the application has handed over (the end of a transfer, or written so far).
    available: u64,
    snd_una: u64,
    snd_nxt: u64,
    snd_max: u64,
    /// Congestion window in segments: the full window except after a timeout, when it
    /// restarts at one and grows by one per newly acknowledged segment.
    cwnd: u64,
    flight: VecDeque<TxRecord>,
    /// The one segment being timed when sampling once per RTT (RFC 6298 section 3).
    timed: Option<(u64, SimTime)>,
    timer: Option<SimTime>,
    dupacks: u32,
    syn_first: SimTime,
    syn_last: SimTime,
    syn_retransmitted: bool,
}

impl TcpSender {
    pub fn new(opts: SenderOptions, params: &RtoParams, supply: Supply) -> Self {
        TcpSender {
            opts,
            karn: params.karn,
            timestamps: params.timestamps,
            every_ack: params.sample_every_ack,
            rto: RtoEstimator::new(params),
            state: State::Idle,
            supply,
            available: match supply {
                Supply::Transfer { segments } => segments,
                Supply::Steady => 0,
            },
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            cwnd: u64::from(opts.window),
            flight: VecDeque::new(),
            timed: None,
            timer: None,
            dupacks: 0,
            syn_first: SimTime::ZERO,
            syn_last: SimTime::ZERO,
            syn_retransmitted: false,
        }
    }

    /// When the retransmission timer expires, if it is running.
    pub fn timer(&self) -> Option<SimTime> {
        self.timer
    }

    pub fn is_finished(&self) -> bool {
        self.state == State::Finished
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

    fn observe(&self, kind: ObservationKind, out: &mut Vec<Action>) {
        out.push(Action::Observe(Observation { kind, rto: self.rto.snapshot() }));
    }

    fn arm(&mut self, now: SimTime) {
        self.timer = Some(now + self.rto.rto());
    }

    pub fn start(&mut self, now: SimTime, out: &mut Vec<Action>) {
        if self.state != State::Idle {
            return;
        }
        if self.opts.handshake {
            self.state = State::SynSent;
            self.syn_first = now;
            self.syn_last = now;
            out.push(Action::Transmit(Segment::Syn { tsval: now, retransmit: false }));
            self.observe(ObservationKind::Send { seq: None }, out);
            // RFC 6298 (5.1): the SYN is the first segment; the timer starts with it.
            self.arm(now);
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

    /// Sends what the window and the application allow.
    fn try_send(&mut self, now: SimTime, out: &mut Vec<Action>) {
        if self.state != State::Established {
            return;
        }
        while self.snd_nxt < self.available && self.snd_nxt - self.snd_una < self.cwnd {
            let seq = self.snd_nxt;
            let retransmit = seq < self.snd_max;
            if retransmit {
                self.mark_retransmitted(seq, now);
            } else {
                self.flight.push_back(TxRecord { first: now, last: now, retransmitted: false });
                self.snd_max += 1;
                if self.timed.is_none() && !self.every_ack && !self.timestamps {
                    self.timed = Some((seq, now));
                }
            }
            self.snd_nxt += 1;
            out.push(Action::Transmit(Segment::Data { seq, tsval: now, retransmit }));
            let kind = if retransmit {
                ObservationKind::Retransmit { seq: Some(seq) }
            } else {
                ObservationKind::Send { seq: Some(seq) }
            };
            self.observe(kind, out);
            // RFC 6298 (5.1): start the timer on sending data if it is not running.
            if self.timer.is_none() {
                self.arm(now);
            }
        }
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
            self.timed = if self.karn { None } else { Some((seq, now)) };
        }
    }

    fn retransmit(&mut self, seq: u64, now: SimTime, out: &mut Vec<Action>) {
        self.mark_retransmitted(seq, now);
        out.push(Action::Transmit(Segment::Data { seq, tsval: now, retransmit: true }));
        self.observe(ObservationKind::Retransmit { seq: Some(seq) }, out);
    }

    /// The retransmission timer expired. Call only at the time `timer()` named.
    pub fn on_timer(&mut self, now: SimTime, out: &mut Vec<Action>) {
        if self.timer != Some(now) {
            return;
        }
        self.timer = None;
        match self.state {
            State::SynSent => {
                self.rto.on_timeout(Phase::SynSent);
                self.observe(ObservationKind::Timeout, out);
                self.syn_retransmitted = true;
                self.syn_last = now;
                out.push(Action::Transmit(Segment::Syn { tsval: now, retransmit: true }));
                self.observe(ObservationKind::Retransmit { seq: None }, out);
                self.arm(now);
            }
            State::Established if self.snd_una < self.snd_max => {
                // RFC 6298 (5.5): back off the timer, RTO = min(2·RTO, max).
                self.rto.on_timeout(Phase::Established);
                self.observe(ObservationKind::Timeout, out);
                // RFC 6298 (5.4): retransmit the earliest unacknowledged segment.
                let seq = self.snd_una;
                self.retransmit(seq, now, out);
                // Go back N with a window of one: the rest is resent as ACKs come in.
                self.snd_nxt = seq + 1;
                self.cwnd = 1;
                self.dupacks = 0;
                // RFC 6298 (5.6): restart the timer with the backed-off RTO.
                self.arm(now);
            }
            _ => {}
        }
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
        let rtt = if self.timestamps {
            Some(now.saturating_since(tsecr))
        } else if !self.syn_retransmitted {
            Some(now - self.syn_first)
        } else if !self.karn {
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
        // RFC 6298 (5.7): data transmission begins (the estimator applies the 3 s rule).
        self.rto.on_established();
        self.timer = None;
        self.observe(ObservationKind::Established, out);
        self.try_send(now, out);
    }

    fn on_ack(&mut self, now: SimTime, ack: u64, tsecr: SimTime, out: &mut Vec<Action>) {
        if ack > self.snd_una {
            let newly = ack - self.snd_una;
            let oldest = self.flight[0];
            let rtt = self.sample_for(now, ack, tsecr, oldest);
            for _ in 0..newly {
                self.flight.pop_front();
            }
            self.snd_una = ack;
            self.snd_nxt = self.snd_nxt.max(ack);
            self.cwnd = (self.cwnd + newly).min(u64::from(self.opts.window));
            self.dupacks = 0;
            self.observe(ObservationKind::Ack { ack }, out);
            if let Some(rtt) = rtt {
                self.rto.on_sample(now, rtt, Some(self.seq_info()));
                self.observe(ObservationKind::Sample { rtt }, out);
            }
            if self.snd_una == self.snd_max {
                // RFC 6298 (5.2): all outstanding data acknowledged: stop the timer.
                self.timer = None;
            } else {
                // RFC 6298 (5.3): an ACK of new data restarts the timer.
                self.arm(now);
            }
            if let Supply::Transfer { segments } = self.supply
                && self.snd_una >= segments
            {
                self.state = State::Finished;
                self.timer = None;
                self.observe(ObservationKind::Finished, out);
                return;
            }
            self.try_send(now, out);
        } else {
            self.observe(ObservationKind::Ack { ack }, out);
            if ack == self.snd_una && self.snd_max > self.snd_una {
                self.dupacks += 1;
                // RFC 5681 (3.2): the third duplicate ACK triggers a retransmission of
                // the first unacknowledged segment, without waiting for the timer.
                if self.dupacks == 3 && self.opts.fast_retransmit && self.snd_nxt > self.snd_una {
                    let seq = self.snd_una;
                    self.retransmit(seq, now, out);
                }
            }
        }
    }

    /// The RTT sample this ACK yields, if any, under the sampling rule in force.
    fn sample_for(
        &mut self,
        now: SimTime,
        ack: u64,
        tsecr: SimTime,
        oldest: TxRecord,
    ) -> Option<crate::engine::time::SimDuration> {
        if self.timestamps {
            // RFC 7323 (4.1) / RFC 6298 (3): with timestamps every ACK of new data is a
            // valid sample, retransmitted or not, since the echo names the copy.
            return Some(now.saturating_since(tsecr));
        }
        if self.every_ack {
            // As Linux's tcp_clean_rtx_queue without timestamps: the oldest newly
            // acknowledged segment, unless it was retransmitted (Karn).
            return if !oldest.retransmitted {
                Some(now - oldest.first)
            } else if !self.karn {
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
mod tests {
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

    fn sent(out: &[Action]) -> Vec<(u64, bool)> {
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
