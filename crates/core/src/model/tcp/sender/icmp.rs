//! An ICMP destination unreachable (net or host) quoting the connection's oldest
//! outstanding segment, as Linux's `tcp_v4_err` (net/ipv4/tcp_ipv4.c) handles it:
//! RFC 6069's backoff revert once established, the end of the connection in SYN-SENT.
//! The rfc6298 profile ignores the message: RFC 6069 is optional and RFC 1122 4.2.3.9
//! calls these errors soft ("MUST NOT abort the connection").

use super::*;
use crate::model::rto::RtoProfile;

impl TcpSender {
    /// An ICMP net or host unreachable reaches the sender, quoting `quoted` (the packet a
    /// router could not forward), or `snd_una`'s segment when `None`.
    pub fn on_icmp_unreachable(&mut self, now: SimTime, quoted: Option<Segment>, out: &mut Vec<Action>) {
        if matches!(self.state, State::Idle | State::Finished | State::Aborted) {
            return;
        }
        if self.params().profile != RtoProfile::Linux {
            self.observe(ObservationKind::IcmpUnreachable { reverted: false }, out);
            return;
        }
        // tcp_v4_err: `if (sk->sk_state != TCP_LISTEN && !between(seq, snd_una,
        // tp->snd_nxt)) goto out;` A SYN quotes the ISS, which is snd_una in SYN-SENT; a
        // window probe quotes snd_una - 1, below the window.
        let seq = match quoted {
            None => self.snd_una,
            Some(Segment::Syn { .. }) if self.state == State::SynSent => self.snd_una,
            Some(Segment::Data { seq, .. }) if self.state != State::SynSent => seq,
            Some(_) => return,
        };
        if !(self.snd_una..=self.snd_max).contains(&seq) {
            return;
        }
        match self.state {
            // tcp_v4_err, `case TCP_SYN_SENT:` -> tcp_done_with_error(sk, err): connect()
            // fails with EHOSTUNREACH / ENETUNREACH.
            State::SynSent => {
                self.observe(ObservationKind::IcmpUnreachable { reverted: false }, out);
                self.abort(now, out);
            }
            // tcp_ld_RTO_revert: `if (seq != tp->snd_una || ...) return;` only a quote of
            // the head can undo a backoff; any other is a soft error and nothing more.
            _ if seq != self.snd_una => self.observe(ObservationKind::IcmpUnreachable { reverted: false }, out),
            _ => self.ld_rto_revert(now, out),
        }
    }

    /// `tcp_ld_RTO_revert`: only while the timer is backed off for `snd_una`
    /// (`seq != tp->snd_una || !icsk->icsk_retransmits || !icsk->icsk_backoff` return),
    /// undo one doubling and re-arm for what is left of the RTO counted from the head
    /// segment's last transmission (`tcp_skb_timestamp_us(tcp_rtx_queue_head(sk))`), or
    /// run `tcp_retransmit_timer` at once when nothing is left.
    fn ld_rto_revert(&mut self, now: SimTime, out: &mut Vec<Action>) {
        let Some(head) = self.sb.segment(self.snd_una).copied() else {
            // Nothing outstanding: no segment the message could quote is in the window
            // (`!between(seq, snd_una, tp->snd_nxt)`), so tcp_v4_err drops it.
            return;
        };
        let elapsed = now.saturating_since(head.sent);
        if self.retransmits == 0 || self.rto.snapshot().backoffs == 0 {
            self.observe(ObservationKind::IcmpUnreachable { reverted: false }, out);
            return;
        }
        let Some(remaining) = self.rto.revert_backoff(elapsed) else { return };
        self.observe(ObservationKind::IcmpUnreachable { reverted: true }, out);
        if remaining > SimDuration::ZERO {
            // tcp_reset_xmit_timer(sk, ICSK_TIME_RETRANS, remaining, false)
            self.timer = Some((now + remaining, TimerKind::Rto));
        } else {
            // "RTO revert clocked out retransmission. Will retransmit now."
            self.timer = None;
            self.on_rto(now, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::tcp::drive::{dur_ms as ms, ms as at, new_sender, sender};

    /// Linux at HZ 1000, no handshake, timestamps off so only the first ACK samples.
    fn linux_sender(segments: u64) -> TcpSender {
        let sets = [("hz", "1000"), ("tlp", "false"), ("frto", "false")];
        sender(RtoProfile::Linux, &sets, 10, Supply::Transfer { segments })
    }

    /// Two segments; the first ACK at 100 ms gives SRTT 100 ms, RTTVAR 200 ms floor ->
    /// RTO 300 ms (tcp_rtt_estimator's first measure: rttvar = max(2·m, rto_min) = 200 ms).
    /// Segment 1 is then lost: the RTO fires at 100 + 300 = 400 ms (backoff 1, RTO 600 ms),
    /// again at 1000 ms (backoff 2, RTO 1200 ms, next expiry at 2200 ms).
    fn backed_off_twice() -> (TcpSender, Vec<Action>) {
        let mut s = linux_sender(2);
        let mut out = Vec::new();
        s.start(at(0), &mut out);
        s.on_segment(at(100), Segment::Ack { ack: 1, tsecr: at(0), window: u64::MAX, sack: Sack::NONE }, &mut out);
        assert_eq!(s.snapshot().rto, ms(300));
        s.on_timer(at(400), &mut out);
        s.on_timer(at(1000), &mut out);
        assert_eq!((s.snapshot().backoffs, s.snapshot().rto, s.timer()), (2, ms(1200), Some(at(2200))));
        out.clear();
        (s, out)
    }

    #[test]
    fn tcp_ld_rto_revert_undoes_one_doubling_and_rearms_from_the_last_retransmission() {
        // net/ipv4/tcp_ipv4.c tcp_ld_RTO_revert: backoff 2 -> 1, icsk_rto = 300 ms << 1
        // = 600 ms; the head was last sent at 1000 ms, so at 1200 ms remaining = 600 - 200
        // = 400 ms: the timer moves from 2200 ms to 1600 ms.
        let (mut s, mut out) = backed_off_twice();
        s.on_icmp_unreachable(at(1200), None, &mut out);
        assert_eq!((s.snapshot().backoffs, s.snapshot().rto, s.timer()), (1, ms(600), Some(at(1600))));
        assert!(
            out.iter().any(
                |a| matches!(a, Action::Observe(o) if o.kind == ObservationKind::IcmpUnreachable { reverted: true })
            )
        );
        assert!(!out.iter().any(|a| matches!(a, Action::Transmit(_))), "nothing is sent");
        // A second message undoes the other doubling: backoff 0, RTO 300 ms; 400 ms have
        // passed since 1000 ms, so nothing remains and tcp_retransmit_timer runs at once,
        // backing off again (backoff 1, RTO 600 ms, next expiry 1400 + 600 = 2000 ms).
        out.clear();
        s.on_icmp_unreachable(at(1400), None, &mut out);
        assert!(out.iter().any(|a| matches!(a, Action::Transmit(Segment::Data { seq: 1, retransmit: true, .. }))));
        assert_eq!((s.snapshot().backoffs, s.snapshot().rto, s.timer()), (1, ms(600), Some(at(2000))));
    }

    #[test]
    fn tcp_ld_rto_revert_ignores_a_quote_of_any_segment_but_snd_una() {
        // tcp_ld_RTO_revert returns on `seq != tp->snd_una`; tcp_v4_err drops a quote
        // outside [snd_una, snd_nxt] before that. Segment 1 is snd_una here, segment 0 is
        // acknowledged (out of window), segment 5 was never sent.
        let (mut s, mut out) = backed_off_twice();
        let before = (s.snapshot(), s.timer());
        for seq in [0, 5] {
            s.on_icmp_unreachable(at(1200), Some(Segment::Data { seq, tsval: at(0), retransmit: false }), &mut out);
        }
        s.on_icmp_unreachable(at(1200), Some(Segment::WindowProbe), &mut out);
        assert_eq!((s.snapshot(), s.timer()), before);
        assert!(out.is_empty(), "out-of-window quotes are dropped unseen (LINUX_MIB_OUTOFWINDOWICMPS)");
        // The quoted head reverts, as the unquoted message does.
        s.on_icmp_unreachable(at(1200), Some(Segment::Data { seq: 1, tsval: at(1000), retransmit: true }), &mut out);
        assert_eq!((s.snapshot().backoffs, s.timer()), (1, Some(at(1600))));
    }

    #[test]
    fn without_a_backoff_the_message_changes_nothing() {
        // tcp_ld_RTO_revert returns on `!icsk->icsk_retransmits || !icsk->icsk_backoff`.
        let mut s = linux_sender(2);
        let mut out = Vec::new();
        s.start(at(0), &mut out);
        s.on_segment(at(100), Segment::Ack { ack: 1, tsecr: at(0), window: u64::MAX, sack: Sack::NONE }, &mut out);
        let before = (s.snapshot(), s.timer());
        s.on_icmp_unreachable(at(200), None, &mut out);
        assert_eq!((s.snapshot(), s.timer()), before);
    }

    #[test]
    fn in_syn_sent_linux_gives_up_and_rfc6298_ignores_it() {
        // tcp_v4_err, case TCP_SYN_SENT: tcp_done_with_error.
        let mut s = new_sender(true, RtoProfile::Linux, &[], 10, Supply::Transfer { segments: 1 });
        let mut out = Vec::new();
        s.start(at(0), &mut out);
        s.on_icmp_unreachable(at(500), None, &mut out);
        assert!(s.is_aborted());
        assert_eq!(s.timer(), None);
        // RFC 1122 4.2.3.9: net and host unreachable are soft errors; the rfc6298
        // profile does not implement RFC 6069 either, so nothing changes.
        let mut s = new_sender(true, RtoProfile::Rfc6298, &[], 10, Supply::Transfer { segments: 1 });
        s.start(at(0), &mut out);
        s.on_timer(at(1000), &mut out);
        let before = (s.snapshot(), s.timer());
        s.on_icmp_unreachable(at(1500), None, &mut out);
        assert_eq!((s.snapshot(), s.timer(), s.is_aborted()), (before.0, before.1, false));
    }
}
