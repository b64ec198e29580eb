//! When a connection gives up retransmitting: `syn_retries`, `retries2` and
//! `TCP_USER_TIMEOUT`.
//!
//! - linux, `tcp_write_timeout` (called at the top of `tcp_retransmit_timer`), as in
//!   torvalds/linux `net/ipv4/tcp_timer.c` since the linear SYN timeouts (6.5, "tcp: make
//!   the first N SYN RTO backoffs linear"), with the SYN-SENT time check that commit
//!   a41e8a88b06e ("tcp: better handle TCP_USER_TIMEOUT in SYN_SENT state", 5.4) moved
//!   after the count (read at commit 602bf18307981f3bfd9ebf19921791a4256d3fd1):
//!   - SYN-SENT: `expired = icsk_retransmits >= tcp_syn_retries + tcp_syn_linear_timeouts`;
//!     if not, `retransmits_timed_out(sk, tcp_syn_retries, icsk_user_timeout)`. Without a
//!     user timeout that is the time budget `tcp_model_timeout(syn_retries,
//!     tcp_timeout_init(sk))`: the time an RTO starting at the initial RTO (1 s) would take
//!     to back off `syn_retries` times, 2^(n+1) − 1 s (7 s for 2). It ignores the linear
//!     timeouts, so with the default 4 of them and `syn_retries` 1 or 2 the time budget
//!     fires before the count: 2 retries give up at 7 s, not at the count's 11 s. From 3
//!     on both end the attempt at the same expiry.
//!   - established: `retransmits_timed_out(sk, tcp_retries2, icsk_user_timeout)`: at least
//!     one retransmission and `tcp_model_timeout(retries2, TCP_RTO_MIN)` elapsed since
//!     `retrans_stamp` (924.6 s for the default 15 at HZ 250), or the user timeout instead
//!     when one is set.
//!
//!   `retransmits_timed_out` returns false before the first retransmission and otherwise
//!   `tcp_time_stamp - retrans_stamp - timeout >= 0`: the boundary itself expires. Here
//!   the caps are `max_rto` (the kernel's `tcp_rto_max(sk)`), TCP_RTO_MIN is the compile
//!   time HZ/5 whatever `min_rto` says, and the comparison is in nanoseconds, not ms.
//! - linux, `tcp_clamp_rto_to_user_timeout`: with a user timeout, the timer re-armed after
//!   an RTO expiry waits at most until `retrans_stamp + user_timeout` (at least one jiffy
//!   once that has passed), so the abort comes on time rather than up to an RTO later.
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
    /// them (`now - retrans_stamp`; in SYN-SENT since the first SYN, as `tcp_connect`
    /// stamps it).
    pub fn gives_up(&self, phase: Phase, retransmissions: u32, since_stamp: SimDuration) -> bool {
        match (self.profile, phase) {
            (RtoProfile::Rfc6298, Phase::SynSent) => retransmissions >= self.syn_retries,
            (RtoProfile::Rfc6298, Phase::Established) => retransmissions >= self.retries2,
            // tcp_write_timeout: max_retransmits = retry_until + sysctl_tcp_syn_linear_timeouts;
            //                    expired = icsk->icsk_retransmits >= max_retransmits;
            //                    if (!expired) expired = retransmits_timed_out(sk, retry_until,
            //                                                icsk->icsk_user_timeout);
            (RtoProfile::Linux, Phase::SynSent) => {
                retransmissions >= self.syn_retries.saturating_add(self.syn_linear_timeouts)
                    || self.linux_timed_out(retransmissions, since_stamp, self.linux_syn_timeout())
            }
            (RtoProfile::Linux, Phase::Established) => {
                self.linux_timed_out(retransmissions, since_stamp, self.linux_retries2_timeout())
            }
        }
    }

    /// `retransmits_timed_out(sk, boundary, icsk_user_timeout)`, `model` being
    /// `tcp_model_timeout(sk, boundary, rto_base)`: a user timeout replaces it.
    fn linux_timed_out(&self, retransmissions: u32, since_stamp: SimDuration, model: SimDuration) -> bool {
        // if (!icsk->icsk_retransmits) return false;
        // if (likely(timeout == 0)) timeout = tcp_model_timeout(...);
        // return (s32)(tcp_time_stamp(tp) - start_ts - timeout) >= 0;
        retransmissions > 0 && since_stamp >= self.user_timeout.unwrap_or(model)
    }

    /// `tcp_clamp_rto_to_user_timeout`, for the timer `tcp_retransmit_timer` re-arms after
    /// an expiry: `rto` unless a user timeout is set, else at most what is left of it
    /// counted from `retrans_stamp`, and one jiffy once it has passed ("fire ASAP").
    pub fn clamp_to_user_timeout(&self, rto: SimDuration, since_stamp: SimDuration) -> SimDuration {
        let (Some(user_timeout), RtoProfile::Linux) = (self.user_timeout, self.profile) else {
            return rto;
        };
        let hz = self.hz.unwrap_or(250);
        // remaining = icsk->icsk_user_timeout - elapsed;
        let remaining = user_timeout.saturating_sub(since_stamp);
        if remaining == SimDuration::ZERO {
            return jiffies_to_ns(1, hz); // if (remaining <= 0) return 1;
        }
        // return min_t(u32, icsk->icsk_rto, msecs_to_jiffies(remaining));
        rto.min(jiffies_to_ns(ns_to_jiffies(remaining, hz), hz))
    }

    /// `tcp_model_timeout(sk, syn_retries, tcp_timeout_init(sk))`: the SYN-SENT time
    /// budget, from the initial RTO (`TCP_TIMEOUT_INIT`, 1 s).
    pub(crate) fn linux_syn_timeout(&self) -> SimDuration {
        let hz = self.hz.unwrap_or(250);
        self.linux_model_timeout(self.syn_retries, ns_to_jiffies(self.initial_rto, hz))
    }

    /// `tcp_model_timeout(sk, retries2, TCP_RTO_MIN)`, in jiffies converted to time.
    pub(crate) fn linux_retries2_timeout(&self) -> SimDuration {
        // #define TCP_RTO_MIN ((unsigned)(HZ/5)): the constant, not the route or sysctl value.
        self.linux_model_timeout(self.retries2, u64::from(self.hz.unwrap_or(250) / 5))
    }

    /// `tcp_model_timeout(sk, boundary, rto_base)`: the time an RTO starting at `rto_base`
    /// jiffies takes to back off `boundary` times, doubling up to `tcp_rto_max(sk)`.
    fn linux_model_timeout(&self, boundary: u32, rto_base: u64) -> SimDuration {
        let hz = self.hz.unwrap_or(250);
        let base = u128::from(rto_base).max(1);
        let max = u128::from(ns_to_jiffies(self.max_rto, hz)); // tcp_rto_max(sk)
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
    fn linux_tcp_model_timeout_with_tcp_timeout_init_is_the_syn_time_budget() {
        // retransmits_timed_out in SYN-SENT: rto_base = tcp_timeout_init(sk) = 250 jiffies,
        // thresh = ilog2(30000 / 250) = 6; boundary ≤ 6: ((2 << n) − 1)·1 s.
        for (syn_retries, budget) in [("1", 3.0), ("2", 7.0), ("6", 127.0)] {
            let p = params(RtoProfile::Linux, &[("syn_retries", syn_retries)]);
            assert_eq!(p.linux_syn_timeout(), s(budget), "syn_retries {syn_retries}");
        }
        // Beyond thresh the 120 s cap: (2^7 − 1)·1 s + (8 − 6)·120 s = 367 s.
        assert_eq!(params(RtoProfile::Linux, &[("syn_retries", "8")]).linux_syn_timeout(), s(367.0));
    }

    #[test]
    fn linux_tcp_write_timeout_syn_sent_expires_on_the_time_budget_before_the_count() {
        // syn_retries 2 with 4 linear timeouts: the count limit is 6, the time budget 7 s.
        // SYNs at 0,1,2,3,4,5; the expiry at 7 s finds 5 retransmissions and 7 s ≥ 7 s.
        let p = params(RtoProfile::Linux, &[("syn_retries", "2")]);
        assert!(!p.gives_up(Phase::SynSent, 4, s(5.0)));
        assert!(!p.gives_up(Phase::SynSent, 5, s(6.999)));
        assert!(p.gives_up(Phase::SynSent, 5, s(7.0))); // (s32)(now − start − timeout) >= 0
        // retransmits_timed_out: no retransmission yet, no time check.
        assert!(!p.gives_up(Phase::SynSent, 0, s(100.0)));
        // The count still ends it when the time has not run out (a long initial RTO).
        assert!(p.gives_up(Phase::SynSent, 6, s(1.0)));
    }

    #[test]
    fn linux_user_timeout_replaces_the_time_budgets() {
        // tcp_write_timeout: retransmits_timed_out(sk, retry_until, icsk_user_timeout).
        let p = params(RtoProfile::Linux, &[("user_timeout", "30s")]);
        assert!(!p.gives_up(Phase::Established, 3, s(29.999)));
        assert!(p.gives_up(Phase::Established, 3, s(30.0)));
        assert!(!p.gives_up(Phase::Established, 0, s(30.0)));
        // SYN-SENT: the user timeout replaces tcp_model_timeout(syn_retries, ..), the count
        // (6 + 4) still applies.
        assert!(!p.gives_up(Phase::SynSent, 9, s(29.0)));
        assert!(p.gives_up(Phase::SynSent, 10, s(29.0)));
        assert!(p.gives_up(Phase::SynSent, 3, s(30.0)));
        // Longer than retries2's 924.6 s: only the user timeout counts.
        let p = params(RtoProfile::Linux, &[("user_timeout", "1000s")]);
        assert!(!p.gives_up(Phase::Established, 20, s(999.0)));
        assert!(p.gives_up(Phase::Established, 20, s(1000.0)));
        // 0 is off, as icsk_user_timeout == 0 is.
        let p = params(RtoProfile::Linux, &[("user_timeout", "0s")]);
        assert_eq!(p.user_timeout, None);
        assert!(!p.gives_up(Phase::Established, 3, s(30.0)));
    }

    #[test]
    fn linux_tcp_clamp_rto_to_user_timeout() {
        let p = params(RtoProfile::Linux, &[("user_timeout", "30s")]);
        // min_t(u32, icsk_rto, msecs_to_jiffies(remaining)): 30 − 25.2 = 4.8 s < 25.6 s.
        assert_eq!(p.clamp_to_user_timeout(s(25.6), s(25.2)), s(4.8));
        assert_eq!(p.clamp_to_user_timeout(s(1.6), s(1.2)), s(1.6));
        // remaining <= 0: "fire ASAP", one jiffy (4 ms at HZ 250).
        assert_eq!(p.clamp_to_user_timeout(s(120.0), s(30.0)), s(0.004));
        assert_eq!(p.clamp_to_user_timeout(s(120.0), s(31.0)), s(0.004));
        // msecs_to_jiffies rounds up: 1 ms left is one 4 ms jiffy.
        assert_eq!(p.clamp_to_user_timeout(s(120.0), s(29.999)), s(0.004));
        // Off: icsk_rto unchanged.
        let p = params(RtoProfile::Linux, &[]);
        assert_eq!(p.clamp_to_user_timeout(s(120.0), s(1e6)), s(120.0));
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
