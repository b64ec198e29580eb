//! RFC 6298 "Computing TCP's Retransmission Timer", in integer nanoseconds.
//!
//! Rounding: each update is computed as one exact rational and rounded once, to the
//! nearest nanosecond, halves away from zero:
//!
//! - (2.2) RTTVAR = R/2 rounds a half nanosecond up.
//! - (2.3) is evaluated in the equivalent form `X + g·(Y − X)` (= (1−g)·X + g·Y), where the
//!   correction `g·(Y − X)` is rounded. A gain is an `f64`, and every finite `f64` is an
//!   exact binary fraction m/2^k, so the default α = 1/8 and β = 1/4, and any override
//!   such as 0.1, are applied exactly with one rounding, in 128-bit integers, with no
//!   floating-point arithmetic on time values.
//!
//! The RTO then follows (2.2)/(2.3): SRTT + max(G, K·RTTVAR), raised to the minimum (2.4)
//! and capped at the maximum (2.5).
//!
//! The timer itself (5.1–5.4, 5.6: start, stop, restart) belongs to the sender: it arms
//! the timer with [`Rfc6298::rto`], which already includes any backoff.

use super::{Phase, RtoParams, RtoSnapshot};
use crate::engine::time::SimDuration;

/// A gain α or β as the exact binary fraction m / 2^k that its `f64` denotes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Gain {
    m: u64,
    k: u32,
}

impl Gain {
    /// `x` should be in (0, 1] (`resolve` checks); out-of-range values saturate to 0 or 1.
    pub(crate) fn from_f64(x: f64) -> Gain {
        if x.is_nan() || x <= 0.0 {
            return Gain { m: 0, k: 0 };
        }
        if x >= 1.0 {
            return Gain { m: 1, k: 0 };
        }
        // x = mantissa · 2^exp (IEEE 754 binary64), here with exp < 0 since x < 1.
        let bits = x.to_bits();
        let biased = ((bits >> 52) & 0x7ff) as i32;
        let frac = bits & ((1u64 << 52) - 1);
        let (mut m, mut exp) = if biased == 0 { (frac, -1074) } else { (frac | (1u64 << 52), biased - 1075) };
        let tz = m.trailing_zeros();
        m >>= tz;
        exp += tz as i32;
        Gain { m, k: (-exp) as u32 }
    }

    /// round(d · m / 2^k) for a magnitude `d`, halves away from zero. Never exceeds `d`.
    pub(crate) fn apply(self, d: u64) -> u64 {
        let p = d as u128 * self.m as u128; // < 2^117: m has at most 53 bits
        if self.k == 0 {
            return p.min(u64::MAX as u128) as u64;
        }
        if self.k >= 118 {
            return 0; // p < 2^117 ≤ half of 2^k
        }
        let q = p >> self.k;
        let r = p - (q << self.k);
        (q + u128::from(r >= 1u128 << (self.k - 1))) as u64
    }
}

/// SRTT and RTTVAR in nanoseconds; both exist from the first sample on (or neither).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Smoothed {
    srtt: u64,
    rttvar: u64,
}

/// `x + g·(y − x)`, i.e. `(1 − g)·x + g·y`, with the correction rounded once.
fn toward(x: u64, y: u64, g: Gain) -> u64 {
    if y >= x { x + g.apply(y - x) } else { x - g.apply(x - y) }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Rfc6298 {
    params: RtoParams,
    alpha: Gain,
    beta: Gain,
    /// `None` until the first sample: the type forces the (2.2) branch.
    smoothed: Option<Smoothed>,
    /// The current RTO, backoff included.
    rto: SimDuration,
    /// Doublings since the last valid sample.
    backoffs: u32,
    /// The timer expired while waiting for the SYN's ACK (5.7).
    syn_timed_out: bool,
    established: bool,
}

impl Rfc6298 {
    pub fn new(params: &RtoParams) -> Self {
        Rfc6298 {
            params: params.clone(),
            alpha: Gain::from_f64(params.alpha),
            beta: Gain::from_f64(params.beta),
            smoothed: None,
            // RFC 6298 (2.1): until a measurement is made, RTO <- 1 second (initial_rto).
            rto: params.initial_rto,
            backoffs: 0,
            syn_timed_out: false,
            established: false,
        }
    }

    #[inline]
    pub fn rto(&self) -> SimDuration {
        self.rto
    }

    pub fn params(&self) -> &RtoParams {
        &self.params
    }

    pub fn on_sample(&mut self, rtt: SimDuration) {
        let r = rtt.as_nanos();
        let s = match self.smoothed {
            // RFC 6298 (2.2): SRTT <- R, RTTVAR <- R/2
            None => Smoothed { srtt: r, rttvar: r / 2 + r % 2 },
            Some(Smoothed { srtt, rttvar }) => {
                // RFC 6298 (2.3): RTTVAR <- (1 - beta) * RTTVAR + beta * |SRTT - R'|,
                // with the SRTT from before this sample (the order is a MUST).
                let rttvar = toward(rttvar, srtt.abs_diff(r), self.beta);
                // RFC 6298 (2.3): SRTT <- (1 - alpha) * SRTT + alpha * R'
                let srtt = toward(srtt, r, self.alpha);
                Smoothed { srtt, rttvar }
            }
        };
        self.smoothed = Some(s);
        self.rto = self.rto_from(s);
        // RFC 6298 (5.7, last note): a new measurement recomputes RTO and may "collapse"
        // it back down after it has been doubled; the backoff ends here and only here.
        self.backoffs = 0;
    }

    /// RFC 6298 (2.2)/(2.3): RTO <- SRTT + max (G, K*RTTVAR), then (2.4) and (2.5).
    fn rto_from(&self, s: Smoothed) -> SimDuration {
        let var = u128::from(self.params.k) * u128::from(s.rttvar);
        let raw = u128::from(s.srtt) + var.max(u128::from(self.params.granularity.as_nanos()));
        // RFC 6298 (2.4): an RTO below the minimum (1 s) is rounded up to it.
        let raw = raw.max(u128::from(self.params.min_rto.as_nanos()));
        // RFC 6298 (2.5): a maximum may be placed on RTO (at least 60 s).
        SimDuration(raw.min(u128::from(self.params.max_rto.as_nanos())) as u64)
    }

    pub fn on_timeout(&mut self, phase: Phase) {
        if phase == Phase::SynSent {
            self.syn_timed_out = true;
        }
        // RFC 6298 (5.5): RTO <- RTO * 2 ("back off the timer"), bounded by the (2.5) maximum.
        self.rto = SimDuration(self.rto.as_nanos().saturating_mul(2).min(self.params.max_rto.as_nanos()));
        self.backoffs = self.backoffs.saturating_add(1);
        // RFC 6298 (5), note: a TCP MAY clear SRTT and RTTVAR after backing off the timer
        // multiple times; the next sample then initializes them per (2.2). The backed-off
        // RTO itself stays until that sample.
        if let Some(n) = self.params.clear_after_backoffs
            && self.backoffs >= n
        {
            self.smoothed = None;
        }
    }

    pub fn on_handshake_timed_out(&mut self) {
        self.syn_timed_out = true;
    }

    pub fn on_established(&mut self) {
        if self.established {
            return;
        }
        self.established = true;
        // RFC 6298 (5.7): if the timer expired awaiting the ACK of a SYN and RTO < 3 s,
        // RTO MUST be re-initialized to 3 s when data transmission begins.
        if self.syn_timed_out && self.rto < self.params.fallback_rto {
            self.rto = self.params.fallback_rto.min(self.params.max_rto);
        }
    }

    pub fn snapshot(&self) -> RtoSnapshot {
        RtoSnapshot {
            srtt: self.smoothed.map(|s| SimDuration(s.srtt)),
            rttvar: self.smoothed.map(|s| SimDuration(s.rttvar)),
            rto: self.rto,
            backoffs: self.backoffs,
            mdev: None,
            mdev_max: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::rto::RtoConfig;

    fn ms(x: u64) -> SimDuration {
        SimDuration::from_millis(x)
    }
    fn us(x: u64) -> SimDuration {
        SimDuration::from_micros(x)
    }
    fn secs(x: u64) -> SimDuration {
        SimDuration::from_secs(x)
    }

    fn est(sets: &[(&str, &str)]) -> Rfc6298 {
        Rfc6298::new(&RtoConfig::with_pairs(super::super::RtoProfile::Rfc6298, sets).resolve().unwrap())
    }

    /// min 0 (nonconformant), so the RFC formula shows through (2.4)'s 1 s floor.
    fn bare() -> Rfc6298 {
        est(&[("min_rto", "0s"), ("nonconformant", "true")])
    }

    fn state(e: &Rfc6298) -> (Option<SimDuration>, Option<SimDuration>, SimDuration, u32) {
        let s = e.snapshot();
        (s.srtt, s.rttvar, s.rto, s.backoffs)
    }

    #[test]
    fn rfc6298_2_1_before_any_sample_rto_is_1s() {
        let e = est(&[]);
        assert_eq!(state(&e), (None, None, secs(1), 0));
    }

    #[test]
    fn rfc6298_2_1_backoff_applies_before_any_sample() {
        // "though the backing off on repeated retransmission discussed in (5.5) still applies"
        let mut e = est(&[]);
        e.on_timeout(Phase::Established);
        assert_eq!(state(&e), (None, None, secs(2), 1));
    }

    #[test]
    fn rfc6298_2_2_first_sample_sets_srtt_r_rttvar_half_r() {
        let mut e = est(&[]);
        e.on_sample(ms(100));
        // SRTT = 100 ms, RTTVAR = 100/2 = 50 ms,
        // RTO = 100 + max(1 ms, 4·50 ms) = 300 ms -> (2.4) rounded up to 1 s.
        assert_eq!(state(&e), (Some(ms(100)), Some(ms(50)), secs(1), 0));

        let mut e = bare();
        e.on_sample(ms(100));
        // Same arithmetic without the 1 s floor: 100 + max(1, 200) = 300 ms.
        assert_eq!(state(&e), (Some(ms(100)), Some(ms(50)), ms(300), 0));
    }

    #[test]
    fn rfc6298_2_2_granularity_g_bounds_the_variance_term() {
        let mut e = bare();
        e.on_sample(us(100));
        // SRTT = 100 µs, RTTVAR = 50 µs, K·RTTVAR = 200 µs < G = 1 ms:
        // RTO = 100 µs + max(1000 µs, 200 µs) = 1100 µs.
        assert_eq!(state(&e), (Some(us(100)), Some(us(50)), us(1100), 0));
    }

    #[test]
    fn rfc6298_2_2_half_nanosecond_rounds_up() {
        let mut e = bare();
        e.on_sample(SimDuration::from_nanos(3));
        // RTTVAR = 3/2 = 1.5 ns -> 2 ns (halves away from zero).
        assert_eq!(e.snapshot().rttvar, Some(SimDuration::from_nanos(2)));
    }

    #[test]
    fn rfc6298_2_3_second_sample_updates_rttvar_before_srtt() {
        let mut e = bare();
        e.on_sample(ms(100));
        e.on_sample(ms(200));
        // RTTVAR = 3/4·50 + 1/4·|100 − 200| = 37.5 + 25 = 62.5 ms (old SRTT, as (2.3) requires;
        //   with the new SRTT it would be 37.5 + 1/4·|112.5 − 200| = 59.375 ms).
        // SRTT   = 7/8·100 + 1/8·200 = 87.5 + 25 = 112.5 ms.
        // RTO    = 112.5 + max(1, 4·62.5) = 362.5 ms.
        assert_eq!(state(&e), (Some(us(112_500)), Some(us(62_500)), us(362_500), 0));
    }

    #[test]
    fn rfc6298_2_3_third_sample() {
        let mut e = bare();
        for r in [100, 200, 150] {
            e.on_sample(ms(r));
        }
        // From SRTT 112.5, RTTVAR 62.5 and R' = 150:
        // RTTVAR = 3/4·62.5 + 1/4·|112.5 − 150| = 46.875 + 9.375 = 56.25 ms
        // SRTT   = 7/8·112.5 + 1/8·150 = 98.4375 + 18.75 = 117.1875 ms
        // RTO    = 117.1875 + 4·56.25 = 342.1875 ms
        assert_eq!(
            state(&e),
            (Some(SimDuration::from_nanos(117_187_500)), Some(us(56_250)), SimDuration::from_nanos(342_187_500), 0)
        );
    }

    #[test]
    fn rfc6298_2_3_corrections_round_to_the_nearest_nanosecond() {
        let mut e = bare();
        e.on_sample(SimDuration::from_nanos(100)); // SRTT 100, RTTVAR 50
        e.on_sample(SimDuration::from_nanos(101));
        // RTTVAR = 50 + 1/4·(|100 − 101| − 50) = 50 − 12.25 -> 50 − 12 = 38
        // SRTT   = 100 + 1/8·(101 − 100) = 100.125 -> 100
        let s = e.snapshot();
        assert_eq!((s.srtt, s.rttvar), (Some(SimDuration::from_nanos(100)), Some(SimDuration::from_nanos(38))));
    }

    #[test]
    fn rfc6298_2_3_general_alpha_is_applied_exactly() {
        let mut e = est(&[("alpha", "0.1"), ("min_rto", "0s"), ("nonconformant", "true")]);
        e.on_sample(ms(100));
        e.on_sample(ms(200));
        // 0.1 as f64 is 3602879701896397/2^55 = 0.1000000000000000055…;
        // SRTT = 100 ms + 0.1000…055·100 ms = 110.000000000000000555 ms -> 110 ms exactly.
        assert_eq!(e.snapshot().srtt, Some(ms(110)));
    }

    #[test]
    fn rfc6298_2_4_rto_below_min_is_rounded_up_and_above_is_kept() {
        let mut e = est(&[]);
        e.on_sample(ms(500));
        // 500 + 4·250 = 1500 ms: above the 1 s floor, kept.
        assert_eq!(e.rto(), ms(1500));
        let mut e = est(&[]);
        e.on_sample(ms(10));
        // 10 + 4·5 = 30 ms -> 1 s.
        assert_eq!(e.rto(), secs(1));
    }

    #[test]
    fn rfc6298_2_5_rto_is_capped_at_max() {
        let mut e = est(&[]);
        e.on_sample(secs(30));
        // 30 + 4·15 = 90 s -> capped at 60 s.
        assert_eq!(state(&e), (Some(secs(30)), Some(secs(15)), secs(60), 0));
    }

    #[test]
    fn rfc6298_5_5_timeouts_double_until_the_cap() {
        let mut e = est(&[]);
        let mut seen = vec![e.rto().as_secs_f64()];
        for _ in 0..8 {
            e.on_timeout(Phase::Established);
            seen.push(e.rto().as_secs_f64());
        }
        assert_eq!(seen, [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 60.0, 60.0, 60.0]);
        assert_eq!(e.snapshot().backoffs, 8);
    }

    #[test]
    fn rfc6298_5_5_backoff_sticks_until_a_sample_then_collapses() {
        let mut e = est(&[]);
        e.on_sample(ms(100)); // RTO 1 s
        e.on_timeout(Phase::Established);
        e.on_timeout(Phase::Established);
        assert_eq!(state(&e), (Some(ms(100)), Some(ms(50)), secs(4), 2));
        e.on_established(); // not a sample: nothing changes
        assert_eq!(e.rto(), secs(4));
        e.on_sample(ms(100));
        // RTTVAR = 3/4·50 + 0 = 37.5; SRTT = 100; RTO = 100 + 150 = 250 ms -> 1 s; backoff gone.
        assert_eq!(state(&e), (Some(ms(100)), Some(us(37_500)), secs(1), 0));
    }

    #[test]
    fn rfc6298_5_7_syn_timeout_sets_3s_when_data_starts() {
        let mut e = est(&[]);
        e.on_timeout(Phase::SynSent); // 1 s -> 2 s
        assert_eq!(e.rto(), secs(2));
        e.on_established(); // 2 s < 3 s -> 3 s
        assert_eq!(e.rto(), secs(3));
        e.on_established(); // only the first call counts
        assert_eq!(e.rto(), secs(3));
    }

    #[test]
    fn rfc6298_5_7_applies_even_after_a_handshake_sample() {
        // With timestamps, the SYN-ACK of a retransmitted SYN can still be sampled; the
        // timer did expire awaiting the SYN's ACK, so 5.7 applies as written.
        let mut e = est(&[("timestamps", "true")]);
        e.on_timeout(Phase::SynSent);
        e.on_sample(ms(100)); // RTO 1 s
        e.on_established();
        assert_eq!(e.rto(), secs(3));
    }

    #[test]
    fn rfc6298_5_7_does_not_lower_an_rto_of_3s_or_more_nor_apply_without_a_syn_timeout() {
        let mut e = est(&[]);
        e.on_timeout(Phase::SynSent);
        e.on_timeout(Phase::SynSent); // 4 s
        e.on_established();
        assert_eq!(e.rto(), secs(4));

        let mut e = est(&[]);
        e.on_sample(ms(100));
        e.on_timeout(Phase::Established); // not awaiting a SYN
        e.on_established();
        assert_eq!(e.rto(), secs(2));
    }

    #[test]
    fn rfc6298_3_karn_samples_are_the_senders_choice() {
        // The estimator cannot tell a retransmitted segment; the rule lives in
        // RtoParams::may_sample (config.rs), which the sender applies before on_sample.
        let e = est(&[]);
        assert!(!e.params().may_sample(true));
        assert!(e.params().may_sample(false));
        let e = est(&[("timestamps", "true")]);
        assert!(e.params().may_sample(true));
    }

    #[test]
    fn rfc6298_5_note_clear_srtt_rttvar_after_n_backoffs() {
        let mut e = est(&[("clear_after_backoffs", "2")]);
        e.on_sample(ms(100));
        e.on_timeout(Phase::Established);
        assert_eq!(state(&e), (Some(ms(100)), Some(ms(50)), secs(2), 1));
        e.on_timeout(Phase::Established);
        // Two backoffs: SRTT and RTTVAR are cleared; the backed-off RTO stays.
        assert_eq!(state(&e), (None, None, secs(4), 2));
        e.on_sample(ms(2000));
        // Re-initialized per (2.2), not (2.3): SRTT 2 s, RTTVAR 1 s, RTO = 2 + 4 = 6 s.
        assert_eq!(state(&e), (Some(secs(2)), Some(secs(1)), secs(6), 0));
    }

    #[test]
    fn rfc6298_5_note_without_clearing_the_old_estimate_is_blended() {
        let mut e = est(&[]);
        e.on_sample(ms(100));
        e.on_timeout(Phase::Established);
        e.on_timeout(Phase::Established);
        e.on_sample(ms(2000));
        // (2.3): RTTVAR = 3/4·50 + 1/4·1900 = 37.5 + 475 = 512.5 ms;
        //        SRTT = 7/8·100 + 1/8·2000 = 87.5 + 250 = 337.5 ms;
        //        RTO = 337.5 + 2050 = 2387.5 ms.
        assert_eq!(state(&e), (Some(us(337_500)), Some(us(512_500)), us(2_387_500), 0));
    }

    #[test]
    fn gain_decomposes_floats_exactly() {
        assert_eq!(Gain::from_f64(0.125), Gain { m: 1, k: 3 });
        assert_eq!(Gain::from_f64(0.25), Gain { m: 1, k: 2 });
        assert_eq!(Gain::from_f64(0.75), Gain { m: 3, k: 2 });
        assert_eq!(Gain::from_f64(1.0), Gain { m: 1, k: 0 });
        assert_eq!(Gain::from_f64(0.1), Gain { m: 3_602_879_701_896_397, k: 55 });
        assert_eq!(Gain::from_f64(f64::MIN_POSITIVE / 4.0).apply(u64::MAX), 0);
        assert_eq!(Gain::from_f64(0.125).apply(12), 2); // 1.5 -> 2
        assert_eq!(Gain::from_f64(0.125).apply(11), 1); // 1.375 -> 1
        assert_eq!(Gain::from_f64(1.0).apply(u64::MAX), u64::MAX);
    }
}
