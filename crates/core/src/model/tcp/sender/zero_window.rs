//! The receiver's window as the sender sees it, and the zero-window probe that keeps
//! asking about it: Linux's `tcp_ack_update_window`, `tcp_check_probe_timer`,
//! `tcp_probe_timer`/`tcp_send_probe0` and `tcp_ack_probe`, with the timer's arithmetic in
//! `persist.rs`.

use super::*;
use crate::model::tcp::persist::Expiry;

impl TcpSender {
    /// `tcp_ack_update_window`: take the window an ACK advertises, unless the ACK is older
    /// than SND.UNA. Returns whether the window changed (`FLAG_WIN_UPDATE`).
    pub(super) fn update_window(&mut self, ack: u64, window: u64) -> bool {
        if ack < self.snd_una {
            return false;
        }
        let changed = window != self.snd_wnd;
        self.snd_wnd = window;
        self.snd_wnd_end = ack.saturating_add(window);
        changed
    }

    /// Data is waiting and the window leaves no room for the next new segment.
    pub(super) fn window_closed(&self) -> bool {
        self.snd_max < self.available && self.snd_max >= self.snd_wnd_end
    }

    /// `tcp_check_probe_timer`, from `tcp_push_pending_frames` when nothing could be sent:
    /// with nothing in flight and no timer pending, arm PROBE0 for `tcp_probe0_base`.
    pub(super) fn check_probe_timer(&mut self, now: SimTime, out: &mut Vec<Action>) {
        if self.state != State::Established || self.outstanding() > 0 || self.timer.is_some() || !self.stalled() {
            return;
        }
        if self.persist.is_none() {
            // Probing starts from the backoff the connection has (`icsk_backoff`).
            self.persist = Some(Persist::new(now, self.rto.snapshot().backoffs));
            if self.window_closed() {
                self.observe(ObservationKind::ZeroWindow, out);
            }
        }
        let wait = Persist::first_wait(self.rto.rto(), self.params());
        self.timer = Some((now + wait, TimerKind::Probe0));
    }

    /// `tcp_probe_timer`: give up, or send a probe and re-arm (`tcp_send_probe0`).
    pub(super) fn on_probe0(&mut self, now: SimTime, out: &mut Vec<Action>) {
        // if (tp->packets_out || !skb) { icsk_probes_out = 0; return; }
        if self.state != State::Established || self.outstanding() > 0 || !self.stalled() {
            if self.state == State::Established && self.outstanding() == 0 && self.new_data_fits() {
                // The queue takes data again (`local.rs`): tcp_write_wakeup sends it.
                self.wake_up(now, out);
                return;
            }
            if let Some(p) = self.persist.as_mut() {
                p.on_ack();
            }
            return;
        }
        let rto = self.rto.rto();
        // tcp_write_wakeup fails with local congestion, the probe or the data refused.
        let refused = self.refuses_new_data();
        let Some(persist) = self.persist.as_mut() else {
            return;
        };
        let expiry = if refused {
            persist.on_refused_expiry(now, self.rto.params())
        } else {
            persist.on_expiry(now, rto, self.rto.params())
        };
        match expiry {
            Expiry::Probe(wait) if refused => {
                self.observe(ObservationKind::WindowProbe, out);
                self.timer = Some((now + wait, TimerKind::Probe0));
            }
            Expiry::Probe(wait) => {
                out.push(Action::Transmit(Segment::WindowProbe));
                self.observe(ObservationKind::WindowProbe, out);
                self.timer = Some((now + wait, TimerKind::Probe0));
            }
            Expiry::Abort => {
                // Nothing is unacknowledged: the wait runs from when the window closed.
                let waited = now.saturating_since(persist.since());
                self.state = State::Aborted;
                self.stop_timer();
                self.observe(ObservationKind::Aborted { waited }, out);
            }
        }
    }

    /// What an acceptable ACK does to probing (`tcp_ack`): the peer answered, so
    /// `icsk_probes_out = 0`; with nothing in flight before it, `tcp_ack_probe` clears the
    /// timer if the window now fits the next segment, else re-arms it from now.
    pub(super) fn persist_on_ack(&mut self, now: SimTime, prior_outstanding: u64, out: &mut Vec<Action>) {
        let closed = self.window_closed();
        let rto = self.rto.rto();
        let Some(persist) = self.persist.as_mut() else {
            return;
        };
        persist.on_ack();
        if prior_outstanding > 0 {
            return;
        }
        if closed {
            let wait = persist.still_closed(now, rto, self.rto.params());
            self.timer = Some((now + wait, TimerKind::Probe0));
        } else {
            // icsk_backoff = 0; icsk_probes_tstamp = 0; clear ICSK_TIME_PROBE0.
            self.persist = None;
            if matches!(self.timer, Some((_, TimerKind::Probe0))) {
                self.stop_timer();
            }
            // A stall of the sender's own queue never closed the window; the ACK's
            // tcp_data_snd_check re-arms the timer from scratch.
            if !self.refuses_new_data() {
                self.observe(ObservationKind::WindowOpen, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::rto::RtoProfile;
    use crate::model::tcp::drive::{kinds, ms, sender};

    /// A Linux sender of 20 segments whose first 10 the peer acknowledges at 100 ms with
    /// a zero window: one 100 ms sample gives SRTT 100 ms and RTO 100 + 200 ms (rto_min).
    fn stalled(sets: &[(&str, &str)]) -> TcpSender {
        let mut s = sender(RtoProfile::Linux, sets, 10, Supply::Transfer { segments: 20 });
        s.start(ms(0), &mut Vec::new());
        let out = ack(&mut s, ms(100), 10, 0);
        assert!(kinds(&out).contains(&ObservationKind::ZeroWindow));
        s
    }

    fn ack(s: &mut TcpSender, at: SimTime, ack: u64, window: u64) -> Vec<Action> {
        let mut out = Vec::new();
        s.on_segment(at, Segment::Ack { ack, tsecr: ms(0), window, sack: Sack::NONE }, &mut out);
        out
    }

    fn fire(s: &mut TcpSender) -> Vec<Action> {
        crate::model::tcp::drive::fire(s).1
    }

    #[test]
    fn a_closed_window_is_probed_at_0_3_0_6_1_2_s_and_an_answer_restarts_the_wait_from_now() {
        // packetdrill gtests/net/tcp/slow_start/slow-start-after-win-update.pkt: probes at
        // +.3, +.6, +1.2 after "ack … win 0" with a 100 ms RTT. tcp_check_probe_timer arms
        // tcp_probe0_base = 300 ms; each tcp_send_probe0 doubles it.
        // No loss probe (tlp = false), so that the RTO shows once data flows again.
        let mut s = stalled(&[("tlp", "false")]);
        assert_eq!(s.timer(), Some(ms(400)));
        let out = fire(&mut s);
        assert_eq!(out[0], Action::Transmit(Segment::WindowProbe));
        assert_eq!(s.timer(), Some(ms(1000)));
        fire(&mut s);
        assert_eq!(s.timer(), Some(ms(2200)));
        // The peer answers at 2.3 s, window still 0: tcp_ack_probe re-arms for
        // tcp_probe0_when with icsk_backoff 2: 1.2 s from now.
        ack(&mut s, ms(2300), 10, 0);
        assert_eq!(s.timer(), Some(ms(3500)));
        // The window opens at 3 s: the timer is cleared and data flows, the RTO armed.
        let out = ack(&mut s, ms(3000), 10, 10);
        assert!(kinds(&out).contains(&ObservationKind::WindowOpen));
        assert_eq!(out.iter().filter(|a| matches!(a, Action::Transmit(Segment::Data { .. }))).count(), 10);
        assert_eq!(s.timer(), Some(ms(3300)));
    }

    #[test]
    fn a_write_into_a_window_closed_while_nothing_waited_arms_the_probe_timer() {
        // __tcp_push_pending_frames (net/ipv4/tcp_output.c): when tcp_write_xmit leaves the
        // write unsent with nothing in flight, tcp_check_probe_timer arms PROBE0 for
        // tcp_probe0_base = max(RTO, TCP_RTO_MIN): here 100 + 200 ms after one 100 ms sample.
        let mut s = sender(RtoProfile::Linux, &[], 10, Supply::Steady);
        s.start(ms(0), &mut Vec::new());
        s.app_write(ms(0), &mut Vec::new());
        // The ACK closes the window with nothing waiting: no probing yet.
        let out = ack(&mut s, ms(100), 1, 0);
        assert!(!kinds(&out).contains(&ObservationKind::ZeroWindow));
        assert_eq!(s.timer(), None);
        let mut out = Vec::new();
        s.app_write(ms(130), &mut out);
        assert!(kinds(&out).contains(&ObservationKind::ZeroWindow));
        assert_eq!(s.timer(), Some(ms(430)));
        let out = fire(&mut s);
        assert_eq!(out[0], Action::Transmit(Segment::WindowProbe));
    }

    #[test]
    fn unanswered_probes_abort_after_retries2_993_3_s_after_the_window_closed() {
        // tcp_probe_timer: the 16th expiry finds icsk_probes_out = 15 = tcp_retries2.
        // Waits: 0.3 s, then 0.6 + 1.2 + … + 76.8 = 153 s, then 7 × 120 s (TCP_RTO_MAX).
        let mut s = stalled(&[]);
        let mut probes = 0;
        while !s.is_aborted() {
            let out = fire(&mut s);
            probes += out.iter().filter(|a| **a == Action::Transmit(Segment::WindowProbe)).count();
            if let Some(ObservationKind::Aborted { waited }) = kinds(&out).last().copied() {
                assert_eq!(waited, SimDuration::from_millis(993_300));
            }
        }
        assert_eq!(probes, 15);
        assert_eq!(s.timer(), None);
    }

    #[test]
    fn a_peer_that_answers_every_probe_keeps_the_connection_open() {
        // tcp_ack: icsk_probes_out = 0 on every ACK, so tcp_probe_timer never reaches
        // retries2 (RFC 1122 4.2.2.17).
        let mut s = stalled(&[]);
        for _ in 0..50 {
            let at = s.timer().unwrap();
            fire(&mut s);
            ack(&mut s, at + SimDuration::from_millis(100), 10, 0);
        }
        assert!(!s.is_aborted());
        // The wait has reached TCP_RTO_MAX.
        let at = s.timer().unwrap();
        fire(&mut s);
        assert_eq!(s.timer(), Some(at + SimDuration::from_secs(120)));
    }

    #[test]
    fn a_user_timeout_ends_probing_30_s_after_the_first_expiry_even_when_answered() {
        // tcp_probe_timer: icsk_probes_tstamp is stamped at the first expiry (0.4 s) and
        // not reset by ACKs; tcp_clamp_probe0_to_user_timeout puts the last expiry on
        // 30.4 s, which aborts.
        let mut s = stalled(&[("user_timeout", "30s")]);
        let mut last = None;
        while !s.is_aborted() {
            let at = s.timer().unwrap();
            let out = fire(&mut s);
            last = Some(at);
            if !s.is_aborted() && !out.is_empty() {
                ack(&mut s, at + SimDuration::from_millis(100), 10, 0);
            }
        }
        assert_eq!(last, Some(ms(30_400)));
    }

    #[test]
    fn without_a_limited_window_nothing_changes() {
        // u64::MAX: the window never closes, no probe timer is ever armed.
        let mut s = sender(RtoProfile::Linux, &[], 10, Supply::Transfer { segments: 20 });
        s.start(ms(0), &mut Vec::new());
        let out = ack(&mut s, ms(100), 10, u64::MAX);
        assert!(!kinds(&out).contains(&ObservationKind::ZeroWindow));
        assert!(s.persist.is_none());
    }
}
