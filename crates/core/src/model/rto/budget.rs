//! When a connection gives up retransmitting: `syn_retries` and `retries2`.
//!
//! - linux, `tcp_write_timeout` (called at the top of `tcp_retransmit_timer`):
//!   in SYN-SENT, `icsk_retransmits >= tcp_syn_retries + tcp_syn_linear_timeouts`
//!   (6.x counts the linear SYN timeouts on top of the budget); established,
//!   `retransmits_timed_out(sk, tcp_retries2, 0)`: at least one retransmission and
//!   `tcp_model_timeout(retries2, TCP_RTO_MIN)` elapsed since `retrans_stamp`. That is the
//!   time an RTO starting at rto_min would take to back off `retries2` times (924.6 s for
//!   the default 15 at HZ 250). Here rto_min and the cap are `min_rto` and `max_rto` (the
//!   kernel uses the compile-time `TCP_RTO_MIN` / `TCP_RTO_MAX`, equal at the defaults),
//!   and the comparison is in nanoseconds, not milliseconds. The SYN-SENT time bound
//!   (`tcp_model_timeout` with `tcp_timeout_init`) never fires before the count with the
//!   default settings and is not modelled.
//! - rfc6298: RFC 6298 sets no budget. RFC 1122 (4.2.3.5) asks for an R2 of at least
//!   100 s (3 min for a SYN) without fixing a count; this profile counts retransmissions
//!   against the same defaults (6 and 15), so two profiles differ in their timers only.

use super::linux::{jiffies_to_ns, ns_to_jiffies};
use super::{Phase, RtoParams, RtoProfile};
use crate::engine::time::SimDuration;

impl RtoParams {
    /// Called when the retransmission timer expires, before retransmitting: `true` means
    /// abort the connection (ETIMEDOUT) instead. `retransmissions` is how many RTO
    /// retransmissions there have been since the last forward progress (`icsk_retransmits`,
    /// zeroed when an ACK advances snd_una); `since_stamp` is the time since the first of
    /// them (`now - retrans_stamp`).
    pub fn gives_up(&self, phase: Phase, retransmissions: u32, since_stamp: SimDuration) -> bool {
        match (self.profile, phase) {
            (RtoProfile::Rfc6298, Phase::SynSent) => retransmissions >= self.syn_retries,
            (RtoProfile::Rfc6298, Phase::Established) => retransmissions >= self.retries2,
            // tcp_write_timeout: max_retransmits = retry_until + sysctl_tcp_syn_linear_timeouts;
            //                    expired = icsk->icsk_retransmits >= max_retransmits;
            (RtoProfile::Linux, Phase::SynSent) => {
                retransmissions >= self.syn_retries.saturating_add(self.syn_linear_timeouts)
            }
            // retransmits_timed_out: if (!icsk->icsk_retransmits) return false; ...
            (RtoProfile::Linux, Phase::Established) => {
                retransmissions > 0 && since_stamp >= self.linux_retries2_timeout()
            }
        }
    }

    /// `tcp_model_timeout(sk, retries2, TCP_RTO_MIN)`, in jiffies converted to time.
    pub(crate) fn linux_retries2_timeout(&self) -> SimDuration {
        let hz = self.hz.unwrap_or(250);
        // #define TCP_RTO_MIN ((unsigned)(HZ/5)): the constant, not the route or sysctl value.
        let base = u128::from(hz / 5).max(1);
        let max = u128::from(ns_to_jiffies(self.max_rto, hz)); // tcp_rto_max(sk)
        let boundary = self.retries2;
        // linear_backoff_thresh = ilog2(tcp_rto_max(sk) / rto_base);
        let thresh = (max / base).checked_ilog2().unwrap_or(0);
        let j = if boundary <= thresh {
            // timeout = ((2 << boundary) - 1) * rto_base;
            ((2u128 << boundary) - 1) * base
        } else {
            // timeout = ((2 << linear_backoff_thresh) - 1) * rto_base +
            //           (boundary - linear_backoff_thresh) * tcp_rto_max(sk);
            ((2u128 << thresh) - 1) * base + u128::from(boundary - thresh) * max
        };
        jiffies_to_ns(j.min(u128::from(u64::MAX)) as u64, hz)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::rto::RtoConfig;

    fn params(profile: RtoProfile, sets: &[(&str, &str)]) -> RtoParams {
        RtoConfig::with_pairs(profile, sets).resolve().unwrap()
    }

    fn s(x: f64) -> SimDuration {
        SimDuration::from_secs_f64(x).unwrap()
    }

    #[test]
    fn linux_syn_gives_up_after_syn_retries_plus_linear_timeouts() {
        let p = params(RtoProfile::Linux, &[]);
        // SYNs leave at 0,1,2,3,4,5,7,11,19,35,67 (10 retransmissions); the expiry at
        // 131 s finds icsk_retransmits = 10 ≥ 6 + 4 and aborts.
        assert!(!p.gives_up(Phase::SynSent, 9, s(67.0)));
        assert!(p.gives_up(Phase::SynSent, 10, s(131.0)));
        let p = params(RtoProfile::Linux, &[("syn_linear_timeouts", "0")]);
        assert!(p.gives_up(Phase::SynSent, 6, s(127.0)));
    }

    #[test]
    fn linux_retries2_15_is_924_6_seconds_at_hz_250() {
        let p = params(RtoProfile::Linux, &[]);
        // rto_base 50 jiffies, TCP_RTO_MAX 30000: thresh = ilog2(600) = 9;
        // (2^10 − 1)·50 + (15 − 9)·30000 = 51150 + 180000 = 231150 jiffies = 924.6 s.
        assert_eq!(p.linux_retries2_timeout(), s(924.6));
        assert!(!p.gives_up(Phase::Established, 5, s(924.599)));
        assert!(p.gives_up(Phase::Established, 5, s(924.6)));
        assert!(!p.gives_up(Phase::Established, 0, s(10_000.0))); // no retransmission yet
        // retries2 = 3 ≤ thresh: (2^4 − 1)·200 ms = 3 s.
        let p = params(RtoProfile::Linux, &[("retries2", "3")]);
        assert_eq!(p.linux_retries2_timeout(), s(3.0));
        // rto_base is TCP_RTO_MIN whatever the route's rto_min: a 1 s floor changes nothing.
        let p = params(RtoProfile::Linux, &[("min_rto", "1s")]);
        assert_eq!(p.linux_retries2_timeout(), s(924.6));
    }

    #[test]
    fn linux_tcp_rto_max_ms_5000_shortens_the_model_timeout() {
        // tcp_model_timeout uses tcp_rto_max(sk) since 6.15: thresh = ilog2(1250 / 50) = 4;
        // (2^5 − 1)·50 + (15 − 4)·1250 = 1550 + 13750 = 15300 jiffies = 61.2 s.
        let p = params(RtoProfile::Linux, &[("max_rto", "5s")]);
        assert_eq!(p.linux_retries2_timeout(), s(61.2));
    }

    #[test]
    fn rfc6298_budgets_count_retransmissions() {
        let p = params(RtoProfile::Rfc6298, &[]);
        assert!(!p.gives_up(Phase::SynSent, 5, SimDuration::ZERO));
        assert!(p.gives_up(Phase::SynSent, 6, SimDuration::ZERO));
        assert!(!p.gives_up(Phase::Established, 14, SimDuration::ZERO));
        assert!(p.gives_up(Phase::Established, 15, SimDuration::ZERO));
    }
}
