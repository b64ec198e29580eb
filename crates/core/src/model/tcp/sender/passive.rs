//! The passive open: a listener's request socket completed the handshake and the sender
//! starts as the accepted socket, with what the handshake measured.

use super::*;
use crate::model::tcp::synack::Accepted;

impl TcpSender {
    /// The ACK completing a passive open arrived (`tcp_rcv_state_process` in
    /// TCP_SYN_RECV): feed `tcp_synack_rtt_meas`'s sample, if any, then begin data
    /// transmission (`tcp_init_transfer` → `tcp_init_metrics`, whose RFC 6298 (5.7) rule
    /// starts a socket without a sample at `TCP_TIMEOUT_FALLBACK`).
    pub fn accept(&mut self, now: SimTime, handshake: Accepted, out: &mut Vec<Action>) {
        if self.state != State::Idle {
            return;
        }
        if let Some(rtt) = handshake.rtt {
            self.on_rtt_sample(now, rtt, out);
        }
        if handshake.timed_out {
            self.rto.on_handshake_timed_out();
        }
        self.state = State::Established;
        self.rto.on_established();
        self.observe(ObservationKind::Established, out);
        self.try_send(now, out);
    }
}
