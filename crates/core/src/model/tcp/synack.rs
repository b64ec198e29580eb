//! The passive open's request socket, sans-IO: the SYN-ACK a listener sends for a peer's
//! SYN, its retransmission timer and its expiry, as Linux runs them for a request that
//! has not yet become a socket (`reqsk_timer_handler`, net/ipv4/inet_connection_sock.c).
//!
//! Modelled for one request: the first SYN-ACK with the timer at `TCP_TIMEOUT_INIT`
//! (`inet_csk_reqsk_queue_hash_add` with `tcp_timeout_init`), each expiry resending the
//! SYN-ACK and re-arming at `min(TCP_TIMEOUT_INIT << num_timeout, rto_max)`
//! (`tcp_reqsk_timeout`), expiry once `num_timeout` reaches `tcp_synack_retries`
//! (`syn_ack_recalc`), a retransmitted SYN answered at once (`tcp_check_req` calls
//! `tcp_rtx_synack` and re-arms with `mod_timer_pending`), and what the ACK completing the
//! handshake lends the new socket's estimator (`tcp_synack_rtt_meas`).
//!
//! Left out: the listen queue's pruning of old requests when more than half full (the
//! `qlen`/`young` loop lowers `max_syn_ack_retries` toward 2; a single request never
//! fills a queue of at least 8), `TCP_DEFER_ACCEPT` (`rskq_defer_accept`), SYN cookies,
//! Fast Open and `tcp_oow_rate_limited` (it holds back a second SYN-ACK within 500 ms; a
//! peer's SYNs are at least a second apart).

use crate::engine::time::{NANOS_PER_SEC, SimDuration, SimTime};

/// include/net/tcp.h: `TCP_TIMEOUT_INIT` (1 s), the request's first timeout.
pub const TIMEOUT_INIT: SimDuration = SimDuration(NANOS_PER_SEC);
/// include/net/tcp.h: `TCP_SYNACK_RETRIES` (5), the default of `tcp_synack_retries`.
pub const DEFAULT_SYNACK_RETRIES: u32 = 5;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SynAckParams {
    /// `tcp_synack_retries`, or `TCP_SYNCNT` on the listener (`icsk_syn_retries`).
    pub retries: u32,
    /// The backoff's cap: `tcp_rto_max_ms` / `TCP_RTO_MAX_MS` (`TCP_RTO_MAX`, 120 s, by
    /// default), read from the listener by `tcp_reqsk_timeout`.
    pub rto_max: SimDuration,
}

impl Default for SynAckParams {
    fn default() -> Self {
        SynAckParams { retries: DEFAULT_SYNACK_RETRIES, rto_max: SimDuration::from_secs(120) }
    }
}

/// What one run of the request's timer does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fire {
    /// The SYN-ACK goes out again; the timer next runs at the given time.
    Resend(SimTime),
    /// `syn_ack_recalc` says expire: the request is dropped, nothing is sent.
    Expire,
}

/// What the handshake hands the accepted socket (`tcp_rcv_state_process`, TCP_SYN_RECV).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Accepted {
    /// The RTT sample `tcp_synack_rtt_meas` feeds the estimator, if any.
    pub rtt: Option<SimDuration>,
    /// The request's timer expired at least once before the ACK came.
    pub timed_out: bool,
}

#[derive(Clone, Debug)]
pub struct RequestSock {
    params: SynAckParams,
    /// Timer expiries so far (`req->num_timeout`).
    num_timeout: u32,
    /// SYN-ACKs sent again, by the timer or for a retransmitted SYN (`req->num_retrans`).
    num_retrans: u32,
    /// When the last SYN-ACK went out (`tcp_rsk(req)->snt_synack`).
    snt_synack: SimTime,
    timer: Option<SimTime>,
}

impl RequestSock {
    /// A SYN arrived at the listener: the request is created and the first SYN-ACK sent
    /// now (`tcp_conn_request`); the timer runs at `now + TCP_TIMEOUT_INIT`.
    pub fn on_syn(params: SynAckParams, now: SimTime) -> Self {
        RequestSock { params, num_timeout: 0, num_retrans: 0, snt_synack: now, timer: Some(now + TIMEOUT_INIT) }
    }

    /// When the timer next runs, while the request lives.
    pub fn timer(&self) -> Option<SimTime> {
        self.timer
    }

    pub fn retransmissions(&self) -> u32 {
        self.num_retrans
    }

    /// Timer expiries so far (`req->num_timeout`): the backoff's exponent.
    pub fn timeouts(&self) -> u32 {
        self.num_timeout
    }

    /// `tcp_reqsk_timeout`: `req->timeout << num_timeout`, capped at the listener's RTO max.
    pub fn timeout(&self) -> SimDuration {
        // u128 so that a shift past 64 bits saturates instead of wrapping.
        let shifted = u128::from(TIMEOUT_INIT.as_nanos()) << self.num_timeout.min(64);
        SimDuration(shifted.min(u128::from(self.params.rto_max.as_nanos())) as u64)
    }

    /// `reqsk_timer_handler`: expire once `num_timeout` has reached the retries
    /// (`syn_ack_recalc` without `TCP_DEFER_ACCEPT`), else resend and back off.
    pub fn on_timer(&mut self, now: SimTime) -> Fire {
        if self.num_timeout >= self.params.retries {
            self.timer = None;
            return Fire::Expire;
        }
        // inet_rtx_syn_ack: a SYN-ACK sent is counted in num_retrans.
        self.num_retrans += 1;
        self.snt_synack = now;
        self.num_timeout += 1;
        let next = now + self.timeout();
        self.timer = Some(next);
        Fire::Resend(next)
    }

    /// The peer's SYN came again while the request waits: `tcp_check_req` resends the
    /// SYN-ACK (`tcp_rtx_synack`, counted in num_retrans but not num_timeout) and moves
    /// the pending timer to `now + tcp_reqsk_timeout` (`mod_timer_pending`).
    pub fn on_syn_again(&mut self, now: SimTime) -> SimTime {
        self.num_retrans += 1;
        self.snt_synack = now;
        let next = now + self.timeout();
        self.timer = Some(next);
        next
    }

    /// The ACK completing the handshake arrived at `now`, echoing `tsecr` when
    /// timestamps are on. `tcp_synack_rtt_meas` times the SYN-ACK only if it was never
    /// sent again (`!req->num_retrans`, Karn); otherwise `tcp_ack_update_rtt` falls back
    /// on the echoed timestamp (FLAG_SYN_ACKED is in FLAG_ACKED). Without a sample,
    /// `tcp_init_metrics` will start the socket at `TCP_TIMEOUT_FALLBACK`.
    pub fn on_ack(&mut self, now: SimTime, tsecr: Option<SimTime>) -> Accepted {
        self.timer = None;
        let rtt = if self.num_retrans == 0 {
            Some(now.saturating_since(self.snt_synack))
        } else {
            tsecr.map(|t| now.saturating_since(t))
        };
        Accepted { rtt, timed_out: self.num_timeout > 0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(secs: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_secs(secs)
    }

    /// Runs the timer until expiry; returns the SYN-ACK times (the first included) and
    /// when the request was dropped.
    fn schedule(params: SynAckParams) -> (Vec<SimTime>, SimTime) {
        let mut req = RequestSock::on_syn(params, SimTime::ZERO);
        let mut sent = vec![SimTime::ZERO];
        loop {
            let at = req.timer().unwrap();
            match req.on_timer(at) {
                Fire::Resend(_) => sent.push(at),
                Fire::Expire => return (sent, at),
            }
        }
    }

    /// reqsk_timer_handler with tcp_synack_retries = 5 (TCP_SYNACK_RETRIES): timeouts
    /// 1 << 0, 1 << 1 … 1 << 5 s, so SYN-ACKs at 0, 1, 3, 7, 15, 31 s and, at the sixth
    /// expiry (num_timeout 5 >= 5), the request dropped at 31 + 32 = 63 s.
    #[test]
    fn reqsk_timer_handler_default_schedule_resends_five_times_and_expires_at_63s() {
        let (sent, dropped) = schedule(SynAckParams::default());
        assert_eq!(sent, [0, 1, 3, 7, 15, 31].map(s));
        assert_eq!(dropped, s(63));
    }

    /// tcp_synack_retries = 2: SYN-ACKs at 0, 1, 3 s, dropped at 3 + 4 = 7 s.
    #[test]
    fn reqsk_timer_handler_with_two_retries_expires_at_7s() {
        let (sent, dropped) = schedule(SynAckParams { retries: 2, ..SynAckParams::default() });
        assert_eq!(sent, [0, 1, 3].map(s));
        assert_eq!(dropped, s(7));
    }

    /// tcp_reqsk_timeout caps the backoff at TCP_RTO_MAX (120 s): with 8 retries the
    /// timeouts are 1, 2, 4, 8, 16, 32, 64, then 120 (not 128) and 120 (not 256) s.
    #[test]
    fn tcp_reqsk_timeout_caps_the_backoff_at_tcp_rto_max() {
        let (sent, dropped) = schedule(SynAckParams { retries: 8, ..SynAckParams::default() });
        assert_eq!(sent, [0, 1, 3, 7, 15, 31, 63, 127, 247].map(s));
        assert_eq!(dropped, s(367));
    }

    /// tools/testing/selftests/net/packetdrill/tcp_rto_synack_rto_max.pkt (torvalds/linux
    /// 7f790dd21a931c61167f7bdc327aecf2cebad327), test 2: with tcp_rto_max_ms = 1000 the
    /// SYN-ACK is resent at +1, +1, +1 s, and the ACK at 3 s completes the handshake.
    #[test]
    fn tcp_rto_synack_rto_max_pkt_resends_every_second() {
        let params = SynAckParams { rto_max: SimDuration::from_secs(1), ..SynAckParams::default() };
        let mut req = RequestSock::on_syn(params, SimTime::ZERO);
        for k in 1..=3 {
            assert_eq!(req.timer(), Some(s(k)));
            assert_eq!(req.on_timer(s(k)), Fire::Resend(s(k + 1)));
        }
        let got = req.on_ack(s(3), None);
        assert_eq!((got.rtt, got.timed_out), (None, true));
        assert_eq!(req.timer(), None);
        assert_eq!(req.retransmissions(), 3);
    }

    /// tcp_synack_rtt_meas: a SYN-ACK never resent is timed from snt_synack.
    #[test]
    fn tcp_synack_rtt_meas_times_a_syn_ack_sent_once() {
        let mut req = RequestSock::on_syn(SynAckParams::default(), s(2));
        let at = s(2) + SimDuration::from_millis(150);
        assert_eq!(req.on_ack(at, None), Accepted { rtt: Some(SimDuration::from_millis(150)), timed_out: false });
    }

    /// tcp_synack_rtt_meas: !req->num_retrans fails after a resend, so no sample without
    /// timestamps; with them tcp_ack_update_rtt times the echoed TSval.
    #[test]
    fn tcp_synack_rtt_meas_refuses_a_resent_syn_ack_unless_timestamps_echo_it() {
        let mut req = RequestSock::on_syn(SynAckParams::default(), SimTime::ZERO);
        assert_eq!(req.on_timer(s(1)), Fire::Resend(s(3)));
        let at = s(1) + SimDuration::from_millis(100);
        assert_eq!(req.clone().on_ack(at, None), Accepted { rtt: None, timed_out: true });
        assert_eq!(req.on_ack(at, Some(s(1))).rtt, Some(SimDuration::from_millis(100)));
    }

    /// tcp_check_req: a retransmitted SYN resends the SYN-ACK at once and moves the timer
    /// to now + (1 s << num_timeout); num_timeout is unchanged, so the retries left are too.
    #[test]
    fn tcp_check_req_answers_a_retransmitted_syn_and_rearms_the_timer() {
        let mut req = RequestSock::on_syn(SynAckParams::default(), SimTime::ZERO);
        assert_eq!(req.on_timer(s(1)), Fire::Resend(s(3)));
        // The peer's SYN again at 2 s: SYN-ACK now, timer at 2 + 2 = 4 s.
        assert_eq!(req.on_syn_again(s(2)), s(4));
        assert_eq!(req.timer(), Some(s(4)));
        assert_eq!(req.on_timer(s(4)), Fire::Resend(s(8)));
        assert_eq!(req.retransmissions(), 3);
        // A SYN-ACK resent for a SYN is not timed either.
        assert_eq!(req.on_ack(s(9), None).rtt, None);
    }
}
