//! Tail loss probes: when the last segments of a flight are lost there are no duplicate
//! ACKs to trigger fast retransmit, so instead of waiting for the RTO the sender probes
//! after about two round trips (RFC 8985 section 7; Linux `tcp_schedule_loss_probe`,
//! `tcp_send_loss_probe`, `tcp_process_tlp_ack`, on with `net.ipv4.tcp_early_retrans` = 3).
//!
//! This module holds the two pure rules, the probe timeout and what an ACK does to an
//! outstanding probe; the sender decides when to schedule and what to send.
//!
//! The sender schedules a probe only with SACK and in the Open state, as
//! `tcp_schedule_loss_probe` does. Not modelled: the cwnd reduction when a probe repaired
//! a loss (`tcp_process_tlp_ack`'s CWR), and pacing delays.

use crate::engine::time::SimDuration;
use crate::model::rto::linux::{jiffies_to_ns, jiffies_to_usecs, ns_to_jiffies, usecs_to_jiffies};
use crate::model::rto::{RtoParams, RtoProfile};

/// RFC 8985 (7.2): "when there is no SRTT estimate available, the PTO SHOULD be 1
/// second"; Linux: `timeout = TCP_TIMEOUT_INIT`.
const NO_SRTT_PTO: SimDuration = SimDuration::from_secs(1);

/// `TCP_TIMEOUT_MIN_US` (include/net/tcp.h, since Linux 6.6): 2 ms added to 2·SRTT when
/// more than one segment is in flight.
const TCP_TIMEOUT_MIN_US: u64 = 2_000;

/// RFC 8985 (7.2) TLP.max_ack_delay, a MAY when one segment is in flight: the worst-case
/// delayed-ACK timer, 200 ms as the RFC's drafts recommended (WCDelAckT).
const MAX_ACK_DELAY: SimDuration = SimDuration::from_millis(200);

/// The probe timeout. `srtt` is the estimator's SRTT (`None` before the first sample),
/// `flight` the segments outstanding, and `until_rto` how far away the RTO deadline is
/// (`None` if it is already due): the probe never fires after the RTO would have.
pub fn probe_timeout(
    params: &RtoParams,
    srtt: Option<SimDuration>,
    flight: u64,
    until_rto: Option<SimDuration>,
) -> SimDuration {
    match params.profile {
        RtoProfile::Rfc6298 => {
            // RFC 8985 (7.2) TLP_calc_PTO: PTO = 2·SRTT, + max_ack_delay if FlightSize is
            // one segment; 1 s without SRTT; cut to the RTO's expiration.
            let pto = match srtt {
                Some(s) if flight == 1 => s.saturating_mul(2) + MAX_ACK_DELAY,
                Some(s) => s.saturating_mul(2),
                None => NO_SRTT_PTO,
            };
            until_rto.map_or(pto, |cap| pto.min(cap))
        }
        RtoProfile::Linux => {
            let hz = params.hz.unwrap_or(250);
            let j = match srtt {
                Some(s) => {
                    // timeout_us = tp->srtt_us >> 2  (srtt_us is SRTT in µs × 8: 2·SRTT)
                    let srtt_us8 = s.as_nanos() / 125;
                    let mut us = srtt_us8 >> 2;
                    // if (tp->packets_out == 1) timeout_us += tcp_rto_min_us(sk);
                    // else timeout_us += TCP_TIMEOUT_MIN_US;
                    us += if flight == 1 {
                        jiffies_to_usecs(ns_to_jiffies(params.min_rto, hz), hz)
                    } else {
                        TCP_TIMEOUT_MIN_US
                    };
                    usecs_to_jiffies(us, hz)
                }
                None => ns_to_jiffies(NO_SRTT_PTO, hz), // timeout = TCP_TIMEOUT_INIT
            };
            // if (rto_delta_us > 0) timeout = min(timeout, usecs_to_jiffies(rto_delta_us));
            let j = match until_rto {
                Some(cap) if cap.as_micros() > 0 => j.min(usecs_to_jiffies(cap.as_micros(), hz)),
                _ => j,
            };
            jiffies_to_ns(j, hz)
        }
    }
}

/// How long after a loss probe timer that could not send (a probe already out,
/// `tlp_high_seq` set) an RTO that is already overdue fires.
///
/// Linux: `tcp_send_loss_probe` goes to `rearm_timer:` -> `tcp_rearm_rto`, where
/// `tcp_rto_delta_us` ≤ 0 arms `usecs_to_jiffies(max(delta_us, 1))` = 1 jiffy ahead
/// (`inet_csk_reset_xmit_timer`). The timer wheel then fires that level-0 timer in the
/// bucket after its expiry (`calc_wheel_index` -> `calc_index`: `(expires >> 0) + 1`), and
/// since the probe timer's callback runs on a tick, the RTO goes out exactly two jiffies
/// after it. Other timers are armed from a write or an ACK at any point within a tick,
/// where the wheel's extra tick is a spread, not a constant, and is left out.
///
/// rfc6298 (RFC 8985 7.3 rearms "the RTO timer", whose expiry has passed): timers are
/// exact, so it fires at once, a nanosecond later.
pub fn overdue_rto_wait(params: &RtoParams) -> SimDuration {
    match params.hz {
        Some(hz) if params.profile == RtoProfile::Linux => jiffies_to_ns(2, hz),
        _ => SimDuration::from_nanos(1),
    }
}

/// The one probe a sender may have outstanding (RFC 8985 TLP.end_seq / TLP.is_retrans;
/// Linux `tlp_high_seq` / `tlp_retrans`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Probe {
    /// snd_nxt when the probe was sent, in segments.
    pub high: u64,
    /// The probe retransmitted the last segment rather than sending new data.
    pub retrans: bool,
}

impl Probe {
    /// `tcp_process_tlp_ack`: does this ACK end the probe episode? `advanced` says whether
    /// it acknowledged new data (FLAG_SND_UNA_ADVANCED).
    pub fn ended_by(self, ack: u64, advanced: bool) -> bool {
        if ack < self.high {
            return false; // if (before(ack, tp->tlp_high_seq)) return;
        }
        // !tlp_retrans: "TLP of new data has been acknowledged".
        // after(ack, tlp_high_seq): "ACK advances: there was a loss" (the kernel also
        // enters CWR there, a window reduction this sender does not model).
        // Otherwise only a pure duplicate ACK at tlp_high_seq: "original and TLP probe
        // arrived; no loss". An ACK that advances exactly to tlp_high_seq keeps it.
        !self.retrans || ack > self.high || !advanced
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::rto::RtoConfig;

    fn params(profile: RtoProfile) -> RtoParams {
        RtoConfig::with_pairs(profile, &[("tlp", "true")]).resolve().unwrap()
    }
    fn ms(x: u64) -> SimDuration {
        SimDuration::from_millis(x)
    }

    #[test]
    fn rfc8985_7_2_pto_is_twice_srtt_with_a_full_window() {
        let p = params(RtoProfile::Rfc6298);
        assert_eq!(probe_timeout(&p, Some(ms(100)), 10, Some(ms(1000))), ms(200));
        // FlightSize of one segment: + max_ack_delay (200 ms).
        assert_eq!(probe_timeout(&p, Some(ms(100)), 1, Some(ms(1000))), ms(400));
        // No SRTT: 1 s.
        assert_eq!(probe_timeout(&p, None, 3, None), ms(1000));
        // "If Now() + PTO > TCP_RTO_expiration(): PTO = TCP_RTO_expiration() - Now()".
        assert_eq!(probe_timeout(&p, Some(ms(100)), 10, Some(ms(150))), ms(150));
    }

    #[test]
    fn linux_tcp_schedule_loss_probe_adds_2ms_or_rto_min_and_rounds_to_jiffies() {
        let p = params(RtoProfile::Linux);
        // srtt_us >> 2 = 200000 µs, + TCP_TIMEOUT_MIN_US = 202000 µs = 50.5 jiffies at
        // HZ 250, rounded up by usecs_to_jiffies to 51 jiffies = 204 ms.
        assert_eq!(probe_timeout(&p, Some(ms(100)), 10, Some(ms(300))), ms(204));
        // packets_out == 1: + tcp_rto_min_us (200 ms): 400 ms, then capped by the RTO.
        assert_eq!(probe_timeout(&p, Some(ms(100)), 1, Some(ms(1000))), ms(400));
        assert_eq!(probe_timeout(&p, Some(ms(100)), 1, Some(ms(300))), ms(300));
        // No srtt_us: TCP_TIMEOUT_INIT.
        assert_eq!(probe_timeout(&p, None, 1, Some(ms(3000))), ms(1000));
        // rto_delta_us ≤ 0 does not cap.
        assert_eq!(probe_timeout(&p, Some(ms(100)), 10, None), ms(204));
        assert_eq!(probe_timeout(&p, Some(ms(100)), 10, Some(SimDuration::ZERO)), ms(204));
    }

    #[test]
    fn an_overdue_rto_after_an_unsent_probe_fires_two_jiffies_later_tcp_rearm_rto_calc_index() {
        // tcp_send_loss_probe (tlp_high_seq set) -> tcp_rearm_rto: tcp_rto_delta_us <= 0,
        // usecs_to_jiffies(max(delta_us, 1)) = 1 jiffy; calc_index puts it one tick later.
        assert_eq!(overdue_rto_wait(&params(RtoProfile::Linux)), ms(8)); // HZ 250
        let hz1000 = RtoConfig::with_pairs(RtoProfile::Linux, &[("hz", "1000")]).resolve().unwrap();
        assert_eq!(overdue_rto_wait(&hz1000), ms(2));
        assert_eq!(overdue_rto_wait(&params(RtoProfile::Rfc6298)), SimDuration::from_nanos(1));
    }

    #[test]
    fn tcp_process_tlp_ack_ends_the_episode_as_the_kernel_does() {
        let new_data = Probe { high: 10, retrans: false };
        assert!(!new_data.ended_by(9, true)); // before(ack, tlp_high_seq)
        assert!(new_data.ended_by(10, true));
        let rexmit = Probe { high: 10, retrans: true };
        assert!(rexmit.ended_by(11, true)); // the probe repaired a loss
        assert!(rexmit.ended_by(10, false)); // pure dupack: both copies arrived
        assert!(!rexmit.ended_by(10, true)); // advanced exactly to tlp_high_seq: kept
    }
}
