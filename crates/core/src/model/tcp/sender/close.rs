//! The application closes a connection it wrote to one segment at a time: nothing more
//! is written, and the connection finishes once everything written is acknowledged. No
//! FIN is modelled: the sender's timers do not change for it.

use super::*;

impl TcpSender {
    /// The application closes (steady supply): what it has written is now the whole
    /// transfer. Writes after this are ignored.
    pub fn app_close(&mut self, out: &mut Vec<Action>) {
        if self.supply != Supply::Steady {
            return;
        }
        self.supply = Supply::Transfer { segments: self.available };
        // Everything written may be acknowledged already: finished as of the close.
        if self.state == State::Established && self.snd_una >= self.available {
            self.state = State::Finished;
            self.stop_timer();
            self.observe(ObservationKind::Finished, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::rto::RtoConfig;

    fn at(ms: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_millis(ms)
    }

    fn finished(out: &[Action]) -> bool {
        out.iter().any(|a| matches!(a, Action::Observe(o) if o.kind == ObservationKind::Finished))
    }

    #[test]
    fn a_close_turns_what_was_written_into_the_transfer() {
        let opts = SenderOptions::for_profile(crate::model::rto::RtoProfile::Rfc6298, false, 10, 1000);
        let mut s = TcpSender::new(opts, &RtoConfig::default().resolve().unwrap(), Supply::Steady);
        let mut out = Vec::new();
        s.start(at(0), &mut out);
        s.app_write(at(0), &mut out);
        s.app_write(at(0), &mut out);
        s.app_close(&mut out);
        assert!(!finished(&out) && !s.is_finished(), "two segments are still unacknowledged");
        out.clear();
        s.app_write(at(20), &mut out);
        assert!(out.is_empty(), "nothing is written after a close: {out:?}");
        s.on_segment(at(100), Segment::Ack { ack: 2, tsecr: at(0), window: u64::MAX, sack: Sack::NONE }, &mut out);
        assert!(finished(&out) && s.is_finished(), "the write after the close was ignored");
        // Closing with everything acknowledged finishes at once.
        let mut s = TcpSender::new(opts, &RtoConfig::default().resolve().unwrap(), Supply::Steady);
        let mut out = Vec::new();
        s.start(at(0), &mut out);
        s.app_write(at(0), &mut out);
        s.on_segment(at(100), Segment::Ack { ack: 1, tsecr: at(0), window: u64::MAX, sack: Sack::NONE }, &mut out);
        assert!(!s.is_finished());
        s.app_close(&mut out);
        assert!(s.is_finished() && s.timer().is_none());
    }
}
