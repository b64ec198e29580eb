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
    fn window_closed(&self) -> bool {
        self.snd_max < self.available && self.snd_max >= self.snd_wnd_end
    }

    /// `tcp_check_probe_timer`, from `tcp_push_pending_frames` when nothing could be sent:
    /// with nothing in flight and no timer pending, arm PROBE0 for `tcp_probe0_base`.
    pub(super) fn check_probe_timer(&mut self, now: SimTime, out: &mut Vec<Action>) {
        if self.state != State::Established || self.outstanding() > 0 || self.timer.is_some() || !self.window_closed()
        {
            return;
        }
        if self.persist.is_none() {
            // Probing starts from the backoff the connection has (`icsk_backoff`).
            self.persist = Some(Persist::new(now, self.rto.snapshot().backoffs));
            self.observe(ObservationKind::ZeroWindow, out);
        }
        let wait = Persist::first_wait(self.rto.rto(), self.params());
        self.timer = Some((now + wait, TimerKind::Probe0));
    }

    /// `tcp_probe_timer`: give up, or send a probe and re-arm (`tcp_send_probe0`).
    pub(super) fn on_probe0(&mut self, now: SimTime, out: &mut Vec<Action>) {
        // if (tp->packets_out || !skb) { icsk_probes_out = 0; return; }
        if self.state != State::Established || self.outstanding() > 0 || !self.window_closed() {
            if let Some(p) = self.persist.as_mut() {
                p.on_ack();
            }
            return;
        }
        let rto = self.rto.rto();
        let Some(persist) = self.persist.as_mut() else {
            return;
        };
        match persist.on_expiry(now, rto, self.rto.params()) {
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
            self.observe(ObservationKind::WindowOpen, out);
        }
    }
}
