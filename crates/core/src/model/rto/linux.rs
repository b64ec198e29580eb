//! The Linux 6.x RTO, transcribed from `net/ipv4/tcp_input.c` (`tcp_rtt_estimator`,
//! `tcp_set_rto`, `tcp_ack_update_rtt`), `include/net/tcp.h` (`__tcp_set_rto`,
//! `tcp_bound_rto`), `net/ipv4/tcp_timer.c` (`tcp_retransmit_timer`) and
//! `net/ipv4/tcp_metrics.c` (`tcp_init_metrics`).
//!
//! Units are the kernel's: the estimator runs on integer microseconds with `srtt_us`
//! stored ×8 and `mdev_us`, `mdev_max_us`, `rttvar_us` stored ×4; the RTO (`icsk_rto`) is
//! kept in jiffies at `hz` ticks per second. A sample's nanoseconds are truncated to µs,
//! as `tcp_stamp_us_delta` does. Differences from the kernel's C: 64-bit arithmetic
//! (no u32 wraparound of `srtt_us` above ~536 s of RTT) and unwrapped sequence numbers.
//!
//! The snapshot reports SRTT = srtt_us/8 and RTTVAR, mdev, mdev_max = value/4, exactly
//! (125 ns and 250 ns steps), so that RTO ≈ SRTT + 4·RTTVAR reads as in RFC 6298. The
//! variance floor then shows as RTTVAR ≥ rto_min/4 (50 ms by default).

use super::{Phase, RtoParams, RtoSnapshot, SeqInfo};
use crate::engine::time::{SimDuration, SimTime};

const NS_PER_SEC: u128 = 1_000_000_000;
const US_PER_SEC: u128 = 1_000_000;

/// Whole jiffies in `d`, rounded up as `usecs_to_jiffies` / `msecs_to_jiffies` round.
/// Values less than one jiffy-step of slop above a boundary (as [`jiffies_to_ns`] writes a
/// non-integral jiffy, e.g. 3333334 ns at HZ 300) map back to that boundary, so
/// `ns_to_jiffies(jiffies_to_ns(j)) == j` for every `j`.
pub(crate) fn ns_to_jiffies(d: SimDuration, hz: u32) -> u64 {
    let hz = u128::from(hz.max(1));
    // d·hz = j·1e9 + t; jiffies_to_ns leaves t ≤ hz − 1.
    let x = (u128::from(d.as_nanos()) * hz).saturating_sub(hz - 1);
    x.div_ceil(NS_PER_SEC).min(u128::from(u64::MAX)) as u64
}

/// The duration of `j` jiffies, rounded up to whole nanoseconds (a timer never fires early).
pub(crate) fn jiffies_to_ns(j: u64, hz: u32) -> SimDuration {
    let ns = (u128::from(j) * NS_PER_SEC).div_ceil(u128::from(hz.max(1)));
    SimDuration(ns.min(u128::from(u64::MAX)) as u64)
}

/// `usecs_to_jiffies`: rounds up.
pub(crate) fn usecs_to_jiffies(us: u64, hz: u32) -> u64 {
    let j = (u128::from(us) * u128::from(hz.max(1))).div_ceil(US_PER_SEC);
    j.min(u128::from(u64::MAX)) as u64
}

/// `jiffies_to_usecs`: rounds down.
pub(crate) fn jiffies_to_usecs(j: u64, hz: u32) -> u64 {
    let us = u128::from(j) * US_PER_SEC / u128::from(hz.max(1));
    us.min(u128::from(u64::MAX)) as u64
}

/// `tcp_rtt_estimator`'s state, present from the first valid sample on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Vj {
    /// Smoothed RTT << 3, µs.
    srtt_us: u64,
    /// Smoothed mean deviation << 2, µs.
    mdev_us: u64,
    /// Largest mdev_us in the current RTT window (reset to rto_min at each window).
    mdev_max_us: u64,
    /// The variance term: RTO = srtt + rttvar. Jumps up to mdev_max, decays once per RTT.
    rttvar_us: u64,
    /// snd_nxt when the window opened, if the caller gave sequence numbers.
    rtt_seq: Option<u64>,
    /// When the window opened, for callers without sequence numbers.
    window_opened: SimTime,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Linux {
    params: RtoParams,
    hz: u32,
    /// `tcp_rto_min_us(sk)`: `jiffies_to_usecs(tcp_rto_min(sk))`.
    rto_min_us: u64,
    max_j: u64,
    fallback_j: u64,
    est: Option<Vj>,
    /// `icsk_rto`, jiffies.
    rto_j: u64,
    /// `rto_j` in ns, cached because `rto()` is called on every send.
    rto: SimDuration,
    /// `icsk_backoff`.
    backoffs: u32,
    /// `tp->total_rto`: every expiry of this connection.
    total_rto: u32,
    established: bool,
}

impl Linux {
    pub fn new(params: &RtoParams) -> Self {
        let hz = params.hz.unwrap_or(250).clamp(1, 1_000_000);
        let max_j = ns_to_jiffies(params.max_rto, hz);
        let mut e = Linux {
            params: params.clone(),
            hz,
            rto_min_us: jiffies_to_usecs(ns_to_jiffies(params.min_rto, hz), hz),
            max_j,
            fallback_j: ns_to_jiffies(params.fallback_rto, hz),
            est: None,
            rto_j: 0,
            rto: SimDuration::ZERO,
            backoffs: 0,
            total_rto: 0,
            established: false,
        };
        // tcp_init_sock / tcp_timeout_init: icsk_rto = TCP_TIMEOUT_INIT (1 s).
        e.set_rto_j(ns_to_jiffies(params.initial_rto, hz).min(max_j));
        e
    }

    #[inline]
    pub fn rto(&self) -> SimDuration {
        self.rto
    }

    pub fn params(&self) -> &RtoParams {
        &self.params
    }

    fn set_rto_j(&mut self, j: u64) {
        self.rto_j = j;
        self.rto = jiffies_to_ns(j, self.hz);
    }

    /// `tcp_ack_update_rtt` with a valid sample: `tcp_rtt_estimator`, `tcp_set_rto`, and
    /// `icsk_backoff = 0` ("RFC6298: only reset backoff on valid RTT measurement").
    pub fn on_sample(&mut self, now: SimTime, rtt: SimDuration, seq: Option<SeqInfo>) {
        let m = (rtt.as_nanos() / 1000) as i64; // < 2^54: no overflow below
        let v = match self.est {
            Some(v) => self.estimate(v, m, now, rtt, seq),
            None => {
                // tcp_rtt_estimator, "no previous measure":
                let mdev_us = (m as u64) << 1; // "make sure rto = 3*rtt"
                // rttvar_us = max(mdev_us, tcp_rto_min_us(sk))
                let rttvar_us = mdev_us.max(self.rto_min_us);
                Vj {
                    srtt_us: ((m as u64) << 3).max(1), // srtt = m << 3; srtt_us = max(1U, srtt)
                    mdev_us,
                    mdev_max_us: rttvar_us, // mdev_max_us = rttvar_us
                    rttvar_us,
                    rtt_seq: seq.map(|s| s.snd_nxt), // rtt_seq = snd_nxt
                    window_opened: now,
                }
            }
        };
        self.est = Some(v);
        // tcp_set_rto -> __tcp_set_rto: usecs_to_jiffies((srtt_us >> 3) + rttvar_us)
        let j = usecs_to_jiffies((v.srtt_us >> 3) + v.rttvar_us, self.hz);
        // tcp_bound_rto: icsk_rto = min(icsk_rto, TCP_RTO_MAX)
        self.set_rto_j(j.min(self.max_j));
        // tcp_ack_update_rtt: icsk_backoff = 0
        self.backoffs = 0;
    }

    /// `tcp_rtt_estimator` with a previous measure, line by line.
    fn estimate(&self, mut v: Vj, m: i64, now: SimTime, rtt: SimDuration, seq: Option<SeqInfo>) -> Vj {
        let mut m = m - (v.srtt_us >> 3) as i64; // m -= (srtt >> 3): m is now error in rtt est
        let srtt = v.srtt_us as i64 + m; //         srtt += m: rtt = 7/8 rtt + 1/8 new
        let quarter = (v.mdev_us >> 2) as i64;
        if m < 0 {
            m = -m; //                              m = -m: abs(error)
            m -= quarter; //                        m -= (mdev_us >> 2)
            // "we use finer gain for mdev in this case (alpha*beta)": a sample below SRTT
            // whose error exceeds mdev/4 moves mdev with gain 1/32 instead of 1/4.
            if m > 0 {
                m >>= 3;
            }
        } else {
            m -= quarter; //                        m -= (mdev_us >> 2)
        }
        v.mdev_us = (v.mdev_us as i64 + m) as u64; // mdev = 3/4 mdev + 1/4 new (never below 0)
        if v.mdev_us > v.mdev_max_us {
            v.mdev_max_us = v.mdev_us;
            if v.mdev_max_us > v.rttvar_us {
                v.rttvar_us = v.mdev_max_us; // rttvar jumps up to the window's maximum
            }
        }
        let window_over = match (seq, v.rtt_seq) {
            // if (after(tp->snd_una, tp->rtt_seq))
            (Some(s), Some(rtt_seq)) => s.snd_una > rtt_seq,
            // Without sequence numbers (this sample's or the window's): the sampled segment
            // left at or after the window opened (now − rtt ≥ opened), i.e. it was sent
            // beyond the snd_nxt of that moment.
            _ => now.saturating_since(v.window_opened) >= rtt,
        };
        if window_over {
            if v.mdev_max_us < v.rttvar_us {
                v.rttvar_us -= (v.rttvar_us - v.mdev_max_us) >> 2; // a quarter of the way down
            }
            v.rtt_seq = seq.map(|s| s.snd_nxt); //  rtt_seq = snd_nxt
            v.window_opened = now;
            v.mdev_max_us = self.rto_min_us; //     mdev_max_us = tcp_rto_min_us(sk)
        }
        v.srtt_us = srtt.max(1) as u64; //          srtt_us = max(1U, srtt)
        v
    }

    /// `tcp_retransmit_timer`'s backoff (after `tcp_update_rto_stats` counted the expiry).
    pub fn on_timeout(&mut self, phase: Phase) {
        self.total_rto = self.total_rto.saturating_add(1); // tp->total_rto++
        // } else if (sk->sk_state != TCP_SYN_SENT ||
        //            tp->total_rto > READ_ONCE(net->ipv4.sysctl_tcp_syn_linear_timeouts)) {
        if phase != Phase::SynSent || self.total_rto > self.params.syn_linear_timeouts {
            self.backoffs = self.backoffs.saturating_add(1); // icsk->icsk_backoff++;
            // icsk->icsk_rto = min(icsk->icsk_rto << 1, TCP_RTO_MAX);
            self.set_rto_j(self.rto_j.saturating_mul(2).min(self.max_j));
        }
        // else: a linear SYN timeout keeps icsk_rto (1 s) and icsk_backoff.
    }

    /// An expiry whose retransmission the sender's own queue refused: `tcp_update_rto_stats`
    /// counts it (`tp->total_rto++`) and `tcp_retransmit_timer` leaves before the backoff.
    pub fn on_local_drop(&mut self) {
        self.total_rto = self.total_rto.saturating_add(1);
    }

    /// `tcp_ld_RTO_revert` (net/ipv4/tcp_ipv4.c, RFC 6069), the estimator's part:
    /// `icsk_backoff--`, `icsk_rto = tp->srtt_us ? __tcp_set_rto(tp) : TCP_TIMEOUT_INIT`,
    /// `icsk_rto = inet_csk_rto_backoff(icsk, TCP_RTO_MAX)`. Then, with `elapsed` since
    /// the head segment was last sent, what is left of that RTO:
    /// `remaining = icsk_rto - usecs_to_jiffies(delta_us)`, zero when nothing is (the
    /// caller then retransmits at once). The caller has checked `icsk_backoff > 0`.
    pub fn revert_backoff(&mut self, elapsed: SimDuration) -> SimDuration {
        self.backoffs = self.backoffs.saturating_sub(1);
        let base = match self.est {
            // __tcp_set_rto: usecs_to_jiffies((srtt_us >> 3) + rttvar_us), not bounded here
            Some(v) => usecs_to_jiffies((v.srtt_us >> 3) + v.rttvar_us, self.hz),
            None => ns_to_jiffies(self.params.initial_rto, self.hz),
        };
        // inet_csk_rto_backoff: min((u64)icsk_rto << icsk_backoff, max_when)
        let backed_off =
            if base == 0 || base.leading_zeros() > self.backoffs { base << self.backoffs } else { u64::MAX };
        self.set_rto_j(backed_off.min(self.max_j));
        let elapsed_j = usecs_to_jiffies(elapsed.as_nanos() / 1000, self.hz);
        jiffies_to_ns(self.rto_j.saturating_sub(elapsed_j), self.hz)
    }

    /// `tcp_init_metrics` on entering ESTABLISHED (the metrics cache is not modelled):
    /// `else if (tp->srtt_us == 0)`, i.e. the handshake gave no RTT sample ("most likely
    /// due to retransmission"), `icsk_rto = TCP_TIMEOUT_FALLBACK` (3 s). The kernel also
    /// parks rttvar/mdev at 3 s there; the next sample's first-measure branch overwrites
    /// them before they can influence an RTO, so they are not modelled.
    pub fn on_established(&mut self) {
        if self.established {
            return;
        }
        self.established = true;
        if self.est.is_none() {
            self.set_rto_j(self.fallback_j.min(self.max_j));
        }
    }

    pub fn snapshot(&self) -> RtoSnapshot {
        let quarter = |x: u64| SimDuration(x.saturating_mul(250)); // µs ×4 -> ns
        RtoSnapshot {
            srtt: self.est.map(|v| SimDuration(v.srtt_us.saturating_mul(125))), // µs ×8 -> ns
            rttvar: self.est.map(|v| quarter(v.rttvar_us)),
            rto: self.rto,
            backoffs: self.backoffs,
            mdev: self.est.map(|v| quarter(v.mdev_us)),
            mdev_max: self.est.map(|v| quarter(v.mdev_max_us)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::rto::{RtoConfig, RtoProfile};

    fn ms(x: u64) -> SimDuration {
        SimDuration::from_millis(x)
    }
    fn at_ms(x: u64) -> SimTime {
        SimTime(x * 1_000_000)
    }
    fn seq(snd_una: u64, snd_nxt: u64) -> Option<SeqInfo> {
        Some(SeqInfo { snd_una, snd_nxt })
    }

    fn linux(sets: &[(&str, &str)]) -> Linux {
        Linux::new(&RtoConfig::with_pairs(RtoProfile::Linux, sets).resolve().unwrap())
    }

    /// (srtt_us, mdev_us, mdev_max_us, rttvar_us): the kernel's scaled fields.
    fn kernel(e: &Linux) -> (u64, u64, u64, u64) {
        let v = e.est.unwrap();
        (v.srtt_us, v.mdev_us, v.mdev_max_us, v.rttvar_us)
    }

    #[test]
    fn linux_initial_rto_is_1s_in_jiffies() {
        let e = linux(&[]);
        assert_eq!((e.rto_j, e.rto()), (250, ms(1000))); // TCP_TIMEOUT_INIT = HZ
        assert_eq!(e.rto_min_us, 200_000);
        assert_eq!(e.max_j, 30_000);
    }

    #[test]
    fn linux_first_sample_100ms_gives_300ms() {
        let mut e = linux(&[]);
        e.on_sample(at_ms(100), ms(100), seq(1000, 2000));
        // srtt_us = 100000 << 3 = 800000; mdev_us = 100000 << 1 = 200000;
        // rttvar_us = max(200000, rto_min 200000) = 200000 = mdev_max_us.
        assert_eq!(kernel(&e), (800_000, 200_000, 200_000, 200_000));
        // RTO = 800000/8 + 200000 = 300000 µs = 75 jiffies at HZ 250 = 300 ms.
        assert_eq!((e.rto_j, e.rto()), (75, ms(300)));
        let s = e.snapshot();
        assert_eq!((s.srtt, s.rttvar, s.mdev, s.mdev_max), (Some(ms(100)), Some(ms(50)), Some(ms(50)), Some(ms(50))));
    }

    #[test]
    fn linux_first_sample_10ms_hits_the_variance_floor_and_rounds_up_to_a_jiffy() {
        let mut e = linux(&[]);
        e.on_sample(at_ms(10), ms(10), None);
        // srtt_us = 80000, mdev_us = 20000, rttvar_us = max(20000, 200000) = 200000.
        assert_eq!(kernel(&e), (80_000, 20_000, 200_000, 200_000));
        // RTO = 10000 + 200000 = 210000 µs = 52.5 jiffies -> 53 jiffies = 212 ms.
        assert_eq!((e.rto_j, e.rto()), (53, ms(212)));
        // At HZ 1000 the same RTO is exactly 210 ms.
        let mut e = linux(&[("hz", "1000")]);
        e.on_sample(at_ms(10), ms(10), None);
        assert_eq!(e.rto(), ms(210));
    }

    #[test]
    fn linux_falling_rtt_with_large_error_uses_gain_one_32nd() {
        let mut e = linux(&[]);
        e.on_sample(at_ms(100), ms(100), seq(1000, 2000));
        e.on_sample(at_ms(120), ms(20), seq(1500, 2000));
        // m = 20000 − 800000/8 = −80000; srtt = 800000 − 80000 = 720000.
        // m < 0: |m| = 80000; 80000 − 200000/4 = 30000 > 0 -> 30000 >> 3 = 3750.
        // mdev = 200000 + 3750 = 203750 (a 1/4 gain would give 230000).
        // mdev > mdev_max -> mdev_max = rttvar = 203750. snd_una 1500 ≤ rtt_seq 2000: same window.
        assert_eq!(kernel(&e), (720_000, 203_750, 203_750, 203_750));
        // RTO = 90000 + 203750 = 293750 µs = 73.4375 -> 74 jiffies = 296 ms.
        assert_eq!(e.rto(), ms(296));
    }

    #[test]
    fn linux_falling_rtt_with_small_error_uses_gain_one_quarter() {
        let mut e = linux(&[]);
        e.on_sample(at_ms(100), ms(100), seq(1000, 2000));
        e.on_sample(at_ms(190), ms(90), seq(1500, 2000));
        // m = 90000 − 100000 = −10000; srtt = 790000; |m| − 50000 = −40000 (not > 0, no >> 3).
        // mdev = 200000 − 40000 = 160000; mdev_max and rttvar stay 200000.
        assert_eq!(kernel(&e), (790_000, 160_000, 200_000, 200_000));
        // RTO = 98750 + 200000 = 298750 µs = 74.6875 -> 75 jiffies = 300 ms.
        assert_eq!(e.rto(), ms(300));
    }

    /// Samples 100, 300, 125 and 125 ms; snd_una passes rtt_seq at the 3rd and 4th.
    fn decay_run(fourth_una: u64) -> Linux {
        let mut e = linux(&[]);
        e.on_sample(at_ms(100), ms(100), seq(1000, 2000));
        // (800000, 200000, 200000, 200000), rtt_seq = 2000, RTO 300 ms
        e.on_sample(at_ms(300), ms(300), seq(1500, 3000));
        // m = 300000 − 100000 = 200000; srtt = 1000000; m − 50000 = 150000; mdev = 350000
        // -> mdev_max = 350000 -> rttvar = 350000. 1500 ≤ 2000: window stays open.
        assert_eq!(kernel(&e), (1_000_000, 350_000, 350_000, 350_000));
        assert_eq!(e.rto(), ms(476)); // 125000 + 350000 = 475000 µs = 118.75 -> 119 jiffies
        e.on_sample(at_ms(425), ms(125), seq(2500, 4000));
        // m = 125000 − 125000 = 0; srtt = 1000000; m − 87500 = −87500; mdev = 262500.
        // 2500 > 2000: window over; mdev_max 350000 is not < rttvar 350000: no decay;
        // rtt_seq = 4000; mdev_max = rto_min = 200000.
        assert_eq!(kernel(&e), (1_000_000, 262_500, 200_000, 350_000));
        assert_eq!(e.rto(), ms(476));
        e.on_sample(at_ms(550), ms(125), seq(fourth_una, 5000));
        e
    }

    #[test]
    fn linux_rttvar_decays_a_quarter_toward_mdev_max_once_snd_una_passes_rtt_seq() {
        let e = decay_run(4500);
        // m = 0; mdev = 262500 − 65625 = 196875 (not > mdev_max 200000).
        // 4500 > 4000: rttvar = 350000 − (350000 − 200000)/4 = 312500; mdev_max = 200000.
        assert_eq!(kernel(&e), (1_000_000, 196_875, 200_000, 312_500));
        // RTO = 125000 + 312500 = 437500 µs = 109.375 -> 110 jiffies = 440 ms.
        assert_eq!(e.rto(), ms(440));
        let s = e.snapshot();
        assert_eq!(s.rttvar, Some(SimDuration::from_micros(78_125))); // 312500 / 4
        assert_eq!(s.mdev, Some(SimDuration::from_nanos(49_218_750))); // 196875 / 4
    }

    #[test]
    fn linux_rttvar_does_not_decay_within_the_same_rtt() {
        let e = decay_run(3900); // 3900 ≤ rtt_seq 4000
        assert_eq!(kernel(&e), (1_000_000, 196_875, 200_000, 350_000));
        assert_eq!(e.rto(), ms(476));
    }

    #[test]
    fn linux_without_seq_the_window_closes_by_time() {
        let mut e = linux(&[]);
        e.on_sample(at_ms(1000), ms(100), None); // window opens at 1.000 s
        e.on_sample(at_ms(1200), ms(300), None); // sent at 0.900 < 1.000: same window
        assert_eq!(kernel(&e), (1_000_000, 350_000, 350_000, 350_000));
        e.on_sample(at_ms(1300), ms(125), None); // sent at 1.175 ≥ 1.000: window over at 1.300
        assert_eq!(kernel(&e), (1_000_000, 262_500, 200_000, 350_000));
        e.on_sample(at_ms(1400), ms(125), None); // sent at 1.275 < 1.300: same window
        assert_eq!(kernel(&e).3, 350_000);
        e.on_sample(at_ms(1425), ms(125), None); // sent at 1.300 ≥ 1.300: window over, decay
        assert_eq!(kernel(&e).3, 312_500);
    }

    #[test]
    fn linux_syn_timeouts_stay_linear_for_the_first_four_expiries() {
        let mut e = linux(&[]);
        let mut waits = vec![e.rto().as_secs_f64()];
        let mut backoffs = vec![];
        for _ in 0..7 {
            e.on_timeout(Phase::SynSent);
            waits.push(e.rto().as_secs_f64());
            backoffs.push(e.snapshot().backoffs);
        }
        // total_rto 1..4 ≤ 4 keep 1 s; the 5th expiry doubles. SYNs leave at 0,1,2,3,4,5,7,11,19.
        assert_eq!(waits, [1.0, 1.0, 1.0, 1.0, 1.0, 2.0, 4.0, 8.0]);
        assert_eq!(backoffs, [0, 0, 0, 0, 1, 2, 3]);
    }

    #[test]
    fn linux_syn_linear_timeouts_zero_doubles_at_once() {
        let mut e = linux(&[("syn_linear_timeouts", "0")]);
        e.on_timeout(Phase::SynSent);
        assert_eq!(e.rto(), ms(2000));
    }

    #[test]
    fn linux_established_timeouts_double_up_to_120s() {
        let mut e = linux(&[]);
        let mut seen = vec![];
        for _ in 0..8 {
            e.on_timeout(Phase::Established);
            seen.push(e.rto().as_secs_f64());
        }
        assert_eq!(seen, [2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 120.0, 120.0]);
        assert_eq!(e.snapshot().backoffs, 8);
    }

    #[test]
    fn linux_backoff_is_cleared_only_by_a_valid_sample() {
        let mut e = linux(&[]);
        e.on_sample(at_ms(100), ms(100), None); // 300 ms
        e.on_timeout(Phase::Established);
        e.on_timeout(Phase::Established);
        assert_eq!((e.rto(), e.snapshot().backoffs), (ms(1200), 2));
        e.on_established(); // had a sample: tcp_init_metrics leaves icsk_rto alone
        assert_eq!(e.rto(), ms(1200));
        e.on_sample(at_ms(2000), ms(100), None);
        // m = 0 error; mdev = 200000 − 50000 = 150000; window over (sent at 1.9 s ≥ 0.1 s):
        // rttvar stays 200000 (mdev_max == rttvar). RTO = 100000 + 200000 µs = 300 ms.
        assert_eq!((e.rto(), e.snapshot().backoffs), (ms(300), 0));
    }

    #[test]
    fn linux_handshake_without_sample_falls_back_to_3s() {
        let mut e = linux(&[]);
        e.on_timeout(Phase::SynSent); // linear: still 1 s
        e.on_established(); // srtt_us == 0: icsk_rto = TCP_TIMEOUT_FALLBACK
        assert_eq!(e.rto(), ms(3000));
        assert_eq!(e.snapshot().srtt, None);
        // The kernel sets it even over a larger backed-off SYN RTO.
        let mut e = linux(&[("syn_linear_timeouts", "0")]);
        for _ in 0..3 {
            e.on_timeout(Phase::SynSent); // 2, 4, 8 s
        }
        e.on_established();
        assert_eq!(e.rto(), ms(3000));
    }

    #[test]
    fn linux_handshake_with_sample_keeps_its_rto() {
        let mut e = linux(&[]);
        e.on_timeout(Phase::SynSent);
        e.on_sample(at_ms(1100), ms(100), None); // e.g. a TS-ECR sample of the retransmitted SYN
        e.on_established();
        assert_eq!(e.rto(), ms(300)); // no 3 s: unlike RFC 6298 (5.7), only srtt == 0 counts
    }

    #[test]
    fn linux_rto_is_capped_at_max_after_a_sample() {
        let mut e = linux(&[]);
        e.on_sample(at_ms(0), SimDuration::from_secs(50), None);
        // 50 s + 2·50 s = 150 s -> tcp_bound_rto -> 120 s.
        assert_eq!(e.rto(), SimDuration::from_secs(120));
    }

    #[test]
    fn linux_zero_rtt_keeps_srtt_at_one() {
        let mut e = linux(&[]);
        e.on_sample(at_ms(0), SimDuration::ZERO, None);
        assert_eq!(kernel(&e), (1, 0, 200_000, 200_000)); // srtt_us = max(1U, 0)
        assert_eq!(e.rto(), ms(200)); // 0 + 200000 µs = 50 jiffies
    }

    #[test]
    fn jiffy_conversions_round_trip_and_round_up() {
        for hz in [100, 250, 300, 1000, 1024] {
            for j in [0, 1, 2, 59, 60, 61, 30_000] {
                assert_eq!(ns_to_jiffies(jiffies_to_ns(j, hz), hz), j, "hz {hz} j {j}");
            }
        }
        assert_eq!(ns_to_jiffies(ms(201), 250), 51);
        assert_eq!(ns_to_jiffies(SimDuration::from_nanos(1), 250), 1);
        assert_eq!(usecs_to_jiffies(210_000, 250), 53);
        assert_eq!(jiffies_to_usecs(61, 300), 203_333);
    }
}
