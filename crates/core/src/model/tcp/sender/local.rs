//! Local congestion: the sender's own queue refuses what it transmits (qdisc full,
//! memory pressure). Linux's `tcp_retransmit_timer` (net/ipv4/tcp_timer.c) then sees
//! `tcp_retransmit_skb(...) > 0` and, instead of backing off, re-arms at
//! `TCP_RESOURCE_PROBE_INTERVAL` ("Let senders fight for local resources
//! conservatively"). The expiry still counts (`tcp_update_rto_stats` runs before the
//! retransmission: `icsk_retransmits++`, `total_rto++`), so the give-up checks see it.
//! Older kernels re-armed at `min(icsk_rto, TCP_RESOURCE_PROBE_INTERVAL)` and did not
//! count the expiry; the model follows 6.x. The rfc6298 profile has no such rule: its
//! refused retransmission is lost like any other and the timer backs off.
//!
//! New data meets the same refusal under linux: `tcp_write_xmit` stops at the first
//! `tcp_transmit_skb` that fails, the data stays queued (not sent, not in flight), and
//! with nothing in flight `tcp_push_pending_frames` -> `tcp_check_probe_timer` arms the
//! zero-window probe timer for `tcp_probe0_base`. Its expiries (`tcp_probe_timer` ->
//! `tcp_send_probe0` -> `tcp_write_wakeup`) retry the data every
//! `TCP_RESOURCE_PROBE_INTERVAL` without backing off, counting each try in
//! `icsk_probes_out`, so `tcp_retries2` or `TCP_USER_TIMEOUT` (from the first expiry,
//! `icsk_probes_tstamp`) end it; once the queue takes it, `tcp_write_wakeup` sends one
//! segment and the RTO takes over.

use super::*;
use crate::model::rto::Phase;

pub use crate::model::tcp::persist::RESOURCE_PROBE_INTERVAL;

impl TcpSender {
    /// Whether the sender's own queue refuses transmissions from now on, until told
    /// otherwise. The caller drops whatever is transmitted meanwhile.
    pub fn set_local_congestion(&mut self, refused: bool) {
        self.local_congestion = refused;
    }

    /// Whether new data is held back: the queue refuses it and the profile is linux
    /// (under rfc6298 it is sent and lost).
    pub(super) fn refuses_new_data(&self) -> bool {
        self.local_congestion && self.linux()
    }

    /// New data waits and cannot go: the peer's window is closed or the sender's own
    /// queue refuses it. The zero-window probe timer runs while this holds.
    pub(super) fn stalled(&self) -> bool {
        self.window_closed() || (self.refuses_new_data() && self.snd_max < self.available)
    }

    /// `tcp_send_probe0` once the queue takes data again: `tcp_write_wakeup` sends one new
    /// segment (`tcp_event_new_data_sent` arms the RTO), and with `packets_out` set the
    /// probe state is dropped (`icsk_probes_out = 0`, `icsk_backoff = 0`,
    /// `icsk_probes_tstamp = 0`).
    pub(super) fn wake_up(&mut self, now: SimTime, out: &mut Vec<Action>) {
        self.send_new(now, ObservationKind::Send { seq: Some(self.snd_max) }, out);
        self.persist = None;
        self.arm_rto(now);
    }

    /// `tcp_retransmit_timer` after `tcp_write_timeout` let it go on, with the
    /// retransmission refused: `tcp_enter_loss`, `tcp_update_rto_stats`, then
    /// `tcp_reset_xmit_timer(sk, ICSK_TIME_RETRANS, TCP_RESOURCE_PROBE_INTERVAL, false)`.
    pub(super) fn on_rto_refused_locally(&mut self, now: SimTime, phase: Phase, out: &mut Vec<Action>) {
        self.rto.on_local_drop();
        self.observe(ObservationKind::Timeout, out);
        self.retransmits = self.retransmits.saturating_add(1);
        // tcp_retransmit_skb: "Save stamp of the first (attempted) retransmit."
        self.retrans_stamp.get_or_insert(now);
        if phase == Phase::Established {
            // tcp_enter_loss: everything outstanding is marked lost and waits, the
            // window closes to one; nothing went out, so nothing is in flight.
            self.enter_loss(now);
        }
        self.timer = Some((now + self.params().timer_ticks(RESOURCE_PROBE_INTERVAL), TimerKind::Rto));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::rto::RtoProfile;
    use crate::model::tcp::drive::{dur_ms as ms, ms as at};

    fn sent(out: &[Action]) -> usize {
        out.iter().filter(|a| matches!(a, Action::Transmit(_))).count()
    }

    fn sender(profile: RtoProfile) -> TcpSender {
        crate::model::tcp::drive::sender(profile, &[("tlp", "false")], 10, Supply::Transfer { segments: 1 })
    }

    #[test]
    fn a_refused_retransmission_retries_after_the_resource_probe_interval_without_backing_off() {
        // tcp_retransmit_timer: tcp_retransmit_skb > 0 -> TCP_RESOURCE_PROBE_INTERVAL
        // (HZ/2 = 500 ms), no icsk_backoff++, no icsk_rto << 1. The segment is sent at 0
        // with the initial RTO of 1 s; the expiry at 1 s is refused, as is the one at
        // 1.5 s; at 2 s the queue takes it: backoff 1, RTO 2 s, next expiry at 4 s.
        let mut s = sender(RtoProfile::Linux);
        let mut out = Vec::new();
        s.start(at(0), &mut out);
        assert_eq!(s.timer(), Some(at(1000)));
        s.set_local_congestion(true);
        out.clear();
        s.on_timer(at(1000), &mut out);
        assert_eq!((sent(&out), s.timer(), s.snapshot().backoffs, s.snapshot().rto), (0, Some(at(1500)), 0, ms(1000)));
        s.on_timer(at(1500), &mut out);
        assert_eq!((sent(&out), s.timer(), s.snapshot().backoffs), (0, Some(at(2000)), 0));
        s.set_local_congestion(false);
        s.on_timer(at(2000), &mut out);
        assert_eq!((sent(&out), s.timer(), s.snapshot().backoffs, s.snapshot().rto), (1, Some(at(4000)), 1, ms(2000)));
        // Each refused expiry counted toward the give-up checks (tcp_update_rto_stats).
        assert_eq!(s.retransmits, 3);
    }

    #[test]
    fn rfc6298_backs_off_as_if_the_retransmission_had_been_sent() {
        // RFC 6298 (5.5), (5.6): the timer doubles on every expiry; the sender does not
        // know its copy was refused (the world drops it).
        let mut s = sender(RtoProfile::Rfc6298);
        let mut out = Vec::new();
        s.start(at(0), &mut out);
        s.set_local_congestion(true);
        out.clear();
        s.on_timer(at(1000), &mut out);
        assert_eq!((sent(&out), s.timer(), s.snapshot().backoffs), (1, Some(at(3000)), 1));
    }
}
