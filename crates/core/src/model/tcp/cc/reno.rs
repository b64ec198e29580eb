//! Reno (RFC 5681): slow start to ssthresh, then one segment per window of ACKs; half the
//! window on a loss, one segment after a timeout. Two flavours differ where Linux and the
//! RFC do: what ssthresh halves, how slow start counts a stretch ACK, and the restart after
//! idle.

use super::window::{Window, is_cwnd_limited};
use super::{Ack, Congestion, INITIAL_WINDOW, Timeout};
use crate::engine::time::{SimDuration, SimTime};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RenoFlavour {
    /// Linux `tcp_reno_cong_avoid`, `tcp_reno_ssthresh`, `tcp_enter_loss`, `tcp_cwnd_restart`.
    Linux,
    /// RFC 5681 as written: (2) `cwnd += min(N, SMSS)` per ACK in slow start, (4) ssthresh
    /// from FlightSize, LW = 1 after a timeout, 4.1's restart window.
    Rfc5681,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reno {
    pub window: Window,
    flavour: RenoFlavour,
}

impl Reno {
    pub fn new(flavour: RenoFlavour) -> Self {
        Reno::with_initial_window(flavour, INITIAL_WINDOW)
    }

    pub fn with_initial_window(flavour: RenoFlavour, initial: u32) -> Self {
        Reno { window: Window::new(initial), flavour }
    }

    /// The ssthresh a loss leaves.
    fn halved(&self, flight_size: u32) -> u32 {
        match self.flavour {
            // tcp_reno_ssthresh: max(tcp_snd_cwnd(tp) >> 1U, 2U)
            RenoFlavour::Linux => (self.window.cwnd >> 1).max(2),
            // RFC 5681 (4): ssthresh = max(FlightSize / 2, 2*SMSS)
            RenoFlavour::Rfc5681 => (flight_size / 2).max(2),
        }
    }
}

impl Congestion for Reno {
    fn on_ack(&mut self, ack: &Ack) {
        // tcp_reno_cong_avoid: if (!tcp_is_cwnd_limited(sk)) return;
        if !is_cwnd_limited(&self.window, ack.usage) {
            return;
        }
        let mut acked = ack.acked;
        if self.window.in_slow_start() {
            acked = match self.flavour {
                RenoFlavour::Linux => self.window.slow_start(acked),
                // RFC 5681 (2): at most one SMSS per ACK, so nothing carries over.
                RenoFlavour::Rfc5681 => {
                    self.window.slow_start(acked.min(1));
                    0
                }
            };
            if acked == 0 {
                return;
            }
        }
        // RFC 5681 3.1 (3), byte counting per RFC 3465: +1 SMSS per cwnd acked;
        // tcp_cong_avoid_ai(tp, tcp_snd_cwnd(tp), acked).
        let w = self.window.cwnd;
        self.window.cong_avoid_ai(w, acked);
    }

    fn on_loss(&mut self, _now: SimTime, flight_size: u32) {
        // tcp_init_cwnd_reduction: snd_ssthresh = ca_ops->ssthresh(sk); snd_cwnd_cnt = 0.
        self.window.ssthresh = self.halved(flight_size);
        self.window.cwnd_cnt = 0;
        // RFC 5681 3.2 step 6 / tcp_end_cwnd_reduction: cwnd = ssthresh when recovery ends.
        self.window.cwnd = self.window.ssthresh;
    }

    fn on_rto(&mut self, t: &Timeout) {
        if t.new_episode {
            self.window.ssthresh = self.halved(t.flight_size);
        }
        self.window.cwnd = match self.flavour {
            // tcp_enter_loss: tcp_snd_cwnd_set(tp, tcp_packets_in_flight(tp) + 1)
            RenoFlavour::Linux => t.in_flight.saturating_add(1),
            // RFC 5681 3.1: cwnd = LW = 1 full-sized segment.
            RenoFlavour::Rfc5681 => 1,
        };
        self.window.cwnd_cnt = 0;
    }

    fn on_send_after_idle(&mut self, _now: SimTime, idle: SimDuration, rto: SimDuration) {
        // Both: only after an idle spell longer than the RTO.
        if idle <= rto {
            return;
        }
        match self.flavour {
            RenoFlavour::Linux => self.window.linux_restart(idle, rto),
            // RFC 5681 4.1: cwnd = RW = min(IW, cwnd).
            RenoFlavour::Rfc5681 => self.window.cwnd = self.window.initial.min(self.window.cwnd),
        }
    }

    fn cwnd(&self) -> u32 {
        self.window.cwnd
    }

    fn ssthresh(&self) -> u32 {
        self.window.ssthresh
    }

    fn set_cwnd(&mut self, cwnd: u32) {
        self.window.set_cwnd(cwnd);
    }

    fn undo(&mut self, prior_cwnd: u32, prior_ssthresh: u32) {
        self.window.undo(prior_cwnd, prior_ssthresh);
    }
}

#[cfg(test)]
mod tests;
