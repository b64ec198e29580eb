//! Behaviour across profiles: the libudx#316 regression and proptest invariants.

use proptest::prelude::*;

use super::*;

fn secs_f(x: f64) -> SimDuration {
    SimDuration::from_secs_f64(x).unwrap()
}

fn params(profile: RtoProfile, sets: &[(&str, &str)]) -> RtoParams {
    RtoConfig::with_pairs(profile, sets).resolve().unwrap()
}

/// What happened to one segment of a stop-and-wait sender.
#[derive(Debug, PartialEq)]
struct Segment {
    timeouts: u32,
    sampled: bool,
    /// The RTO after the segment's ACK was processed.
    rto_after: SimDuration,
}

/// A stop-and-wait sender over a lossless path with a fixed RTT: each segment arms the
/// timer with `rto()`; every expiry backs off and retransmits; the original's ACK arrives
/// one RTT after the first transmission and is sampled only if Karn allows (with
/// timestamps it echoes the original, so the sample is that RTT). `fresh_estimator_per_segment`
/// reproduces the smoltcp#1023 bug class: the backoff lived in the timer and is gone once
/// the sender leaves retransmission. There is no handshake (libudx runs over UDP), so the
/// first segment meets the initial RTO rather than linux's post-handshake 3 s fallback.
fn stop_and_wait(p: &RtoParams, path_rtt: SimDuration, n: usize, fresh_estimator_per_segment: bool) -> Vec<Segment> {
    let mut est = RtoEstimator::new(p);
    let mut now = SimTime::ZERO;
    let mut out = Vec::new();
    for _ in 0..n {
        if fresh_estimator_per_segment {
            est = RtoEstimator::new(p);
        }
        let sent = now;
        let ack_at = sent + path_rtt;
        let mut deadline = sent + est.rto();
        let mut timeouts = 0;
        // RFC 6298 (5.4)–(5.6): on expiry retransmit, back off, restart the timer.
        while deadline <= ack_at {
            est.on_timeout(Phase::Established);
            timeouts += 1;
            deadline += est.rto();
        }
        let sampled = est.params().may_sample(timeouts > 0);
        if sampled {
            est.on_sample(ack_at, path_rtt, None);
        }
        now = ack_at;
        out.push(Segment { timeouts, sampled, rto_after: est.rto() });
    }
    out
}

#[test]
fn libudx_316_backoff_sticks_when_the_path_rtt_exceeds_the_initial_rto() {
    // Path RTT 1.04 s against the 1 s initial RTO, Karn on, no timestamps.
    let p = params(RtoProfile::Rfc6298, &[]);
    let trace = stop_and_wait(&p, secs_f(1.04), 5, false);
    // Segment 0: the timer fires at 1.00 s (RTO doubles to 2 s), the ACK of the original
    // arrives at 1.04 s but the segment was retransmitted: Karn forbids the sample, and
    // the 2 s RTO sticks.
    assert_eq!(trace[0], Segment { timeouts: 1, sampled: false, rto_after: secs_f(2.0) });
    // Segment 1 is sent at 1.04 s with the backed-off 2 s timer; its ACK at 2.08 s beats
    // the timer, the segment was never retransmitted, so the sample is valid:
    // SRTT 1.04, RTTVAR 0.52, RTO = 1.04 + 4·0.52 = 3.12 s (RFC 6298 (2.2)).
    assert_eq!(trace[1], Segment { timeouts: 0, sampled: true, rto_after: secs_f(3.12) });
    // From then on the RTO sits above the RTT: no more spurious timeouts.
    assert!(trace[2..].iter().all(|s| s.timeouts == 0 && s.sampled), "{trace:?}");

    // The bug this guards against: drop the backoff when leaving retransmission and every
    // segment times out at 1 s, every ACK is ambiguous, and no sample ever arrives.
    let buggy = stop_and_wait(&p, secs_f(1.04), 20, true);
    assert!(buggy.iter().all(|s| s.timeouts == 1 && !s.sampled));
}

#[test]
fn libudx_316_linux_without_timestamps_behaves_the_same() {
    let p = params(RtoProfile::Linux, &[("timestamps", "false")]);
    let trace = stop_and_wait(&p, secs_f(1.04), 3, false);
    assert_eq!(trace[0], Segment { timeouts: 1, sampled: false, rto_after: secs_f(2.0) });
    // srtt 1.04 s, rttvar_us = max(2·1040000, 200000): RTO 3.12 s = 780 jiffies.
    assert_eq!(trace[1], Segment { timeouts: 0, sampled: true, rto_after: secs_f(3.12) });
    assert_eq!(trace[2].timeouts, 0);
}

#[test]
fn libudx_316_linux_with_timestamps_samples_the_retransmitted_segment() {
    // RFC 7323 timestamps remove Karn's ambiguity: the first ACK already yields 1.04 s.
    let p = params(RtoProfile::Linux, &[]);
    let trace = stop_and_wait(&p, secs_f(1.04), 2, false);
    assert_eq!(trace[0], Segment { timeouts: 1, sampled: true, rto_after: secs_f(3.12) });
    assert_eq!(trace[1].timeouts, 0);
}

// ----- proptest invariants -----

#[derive(Clone, Debug)]
enum Op {
    /// Time advances by `gap_us`, then a sample of `rtt_us`; `seq` advances snd_una/snd_nxt.
    Sample {
        gap_us: u64,
        rtt_us: u64,
        seq: Option<(u64, u64)>,
    },
    Timeout(Phase),
    Established,
}

fn op() -> impl Strategy<Value = Op> {
    let rtt = prop_oneof![4 => 0u64..2_000_000, 1 => 0u64..300_000_000];
    let phase = prop_oneof![Just(Phase::SynSent), Just(Phase::Established)];
    prop_oneof![
        5 => (0u64..3_000_000, rtt, prop::option::of((0u64..5_000, 0u64..5_000)))
            .prop_map(|(gap_us, rtt_us, seq)| Op::Sample { gap_us, rtt_us, seq }),
        3 => phase.prop_map(Op::Timeout),
        1 => Just(Op::Established),
    ]
}

/// Applies ops, calling `check(before, after, op)` after each.
fn drive(p: &RtoParams, ops: &[Op], mut check: impl FnMut(&RtoSnapshot, &RtoSnapshot, &Op)) -> RtoEstimator {
    let mut est = RtoEstimator::new(p);
    let (mut now, mut una, mut nxt) = (SimTime::ZERO, 0u64, 0u64);
    for o in ops {
        let before = est.snapshot();
        match *o {
            Op::Sample { gap_us, rtt_us, seq } => {
                now += SimDuration::from_micros(gap_us);
                let seq = seq.map(|(a, b)| {
                    una += a;
                    nxt = nxt.max(una) + b;
                    SeqInfo { snd_una: una, snd_nxt: nxt }
                });
                est.on_sample(now, SimDuration::from_micros(rtt_us), seq);
            }
            Op::Timeout(phase) => est.on_timeout(phase),
            Op::Established => est.on_established(),
        }
        check(&before, &est.snapshot(), o);
    }
    est
}

fn rfc_params() -> impl Strategy<Value = RtoParams> {
    (0u64..=2_000, 0u64..=120_000, 0u64..=100, 0u64..=5, 0u32..=8, prop::option::of(1u32..=4)).prop_filter_map(
        "valid rfc6298 parameters",
        |(min, extra, pct, g, k, clear)| {
            let ms = SimDuration::from_millis;
            RtoConfig {
                min_rto: Some(ms(min)),
                max_rto: Some(ms(min + extra)),
                initial_rto: Some(ms(min + extra * pct / 100).max(ms(1))),
                granularity: Some(ms(g)),
                k: Some(k),
                clear_after_backoffs: clear,
                nonconformant: Some(true),
                ..RtoConfig::default()
            }
            .resolve()
            .ok()
        },
    )
}

fn linux_params() -> impl Strategy<Value = RtoParams> {
    let hz = prop_oneof![Just(100u32), Just(250), Just(300), Just(1000)];
    (hz, 0u64..=1_000, 1_000u64..=200_000, 1u64..=3_000, 1u64..=5_000, 0u32..=6).prop_filter_map(
        "valid linux parameters",
        |(hz, min, max, initial, fallback, linear)| {
            let ms = SimDuration::from_millis;
            RtoConfig {
                profile: RtoProfile::Linux,
                hz: Some(hz),
                min_rto: Some(ms(min)),
                max_rto: Some(ms(max)),
                initial_rto: Some(ms(initial.min(max))),
                fallback_rto: Some(ms(fallback)),
                syn_linear_timeouts: Some(linear),
                nonconformant: Some(true),
                ..RtoConfig::default()
            }
            .resolve()
            .ok()
        },
    )
}

/// Parameters of either profile, as a hand-edited file might hold them.
pub(crate) fn any_params() -> impl Strategy<Value = RtoParams> {
    prop_oneof![rfc_params(), linux_params()]
}

/// RFC 6298 (2.2)–(2.5) from a snapshot.
fn rfc_formula(p: &RtoParams, s: &RtoSnapshot) -> SimDuration {
    let (srtt, rttvar) = (s.srtt.unwrap().as_nanos(), s.rttvar.unwrap().as_nanos());
    let raw = srtt + (u64::from(p.k) * rttvar).max(p.granularity.as_nanos());
    SimDuration(raw.clamp(p.min_rto.as_nanos(), p.max_rto.as_nanos()))
}

/// `__tcp_set_rto` + `tcp_bound_rto` from a snapshot (srtt = srtt_us·125 ns, rttvar = rttvar_us·250 ns).
fn linux_formula(p: &RtoParams, s: &RtoSnapshot) -> SimDuration {
    let hz = u128::from(p.hz.unwrap());
    let srtt_us_shifted = u128::from(s.srtt.unwrap().as_nanos()) / 1000; // srtt_us >> 3
    let rttvar_us = u128::from(s.rttvar.unwrap().as_nanos()) / 250;
    let jiffies = ((srtt_us_shifted + rttvar_us) * hz).div_ceil(1_000_000);
    let ns = (jiffies * 1_000_000_000).div_ceil(hz) as u64;
    SimDuration(ns).min(p.max_rto)
}

fn doubled(p: &RtoParams, before: SimDuration) -> SimDuration {
    SimDuration(before.as_nanos().saturating_mul(2)).min(p.max_rto)
}

proptest! {
    #[test]
    fn rfc6298_rto_always_within_min_and_max(p in rfc_params(), ops in prop::collection::vec(op(), 0..64)) {
        drive(&p, &ops, |_, s, _| {
            assert!(p.min_rto <= s.rto && s.rto <= p.max_rto, "{s:?} outside [{}, {}]", p.min_rto, p.max_rto);
        });
    }

    #[test]
    fn linux_rto_always_within_floor_and_max(p in linux_params(), ops in prop::collection::vec(op(), 0..64)) {
        let floor = p.min_rto.min(p.initial_rto).min(p.fallback_rto);
        let mut sampled = false;
        drive(&p, &ops, |_, s, o| {
            sampled |= matches!(o, Op::Sample { .. });
            assert!(s.rto <= p.max_rto, "{s:?} above {}", p.max_rto);
            assert!(s.rto >= floor, "{s:?} below {floor}");
            // Once sampled, the variance floor rto_min holds (tcp_rtt_estimator keeps rttvar ≥ it).
            assert!(!sampled || s.rto >= p.min_rto.min(p.max_rto), "{s:?} below rto_min");
        });
    }

    #[test]
    fn timeouts_never_shrink_the_rto_and_double_until_the_cap(
        p in any_params(),
        ops in prop::collection::vec(op(), 0..32),
        n in 1usize..12,
    ) {
        let mut est = drive(&p, &ops, |_, _, _| {});
        for _ in 0..n {
            let before = est.snapshot();
            est.on_timeout(Phase::Established);
            let after = est.snapshot();
            assert!(after.rto >= before.rto);
            // Linux doubles whole jiffies: at HZ 300 a jiffy is not a whole number of ns.
            let want = doubled(&p, before.rto);
            assert!(after.rto.as_nanos().abs_diff(want.as_nanos()) <= 1, "{before:?} -> {after:?}, want {want}");
            assert_eq!(after.backoffs, before.backoffs.saturating_add(1));
        }
    }

    #[test]
    fn rfc6298_syn_timeouts_double_too(p in rfc_params(), n in 1usize..12) {
        let mut est = RtoEstimator::new(&p);
        for _ in 0..n {
            let before = est.rto();
            est.on_timeout(Phase::SynSent);
            assert_eq!(est.rto(), doubled(&p, before));
        }
    }

    #[test]
    fn a_fresh_sample_collapses_the_backoff_to_the_formula(
        p in any_params(),
        ops in prop::collection::vec(op(), 0..48),
        rtt_us in 0u64..5_000_000,
    ) {
        let mut est = drive(&p, &ops, |_, _, _| {});
        let now = SimTime(u64::from(u32::MAX) * 1000);
        est.on_sample(now, SimDuration::from_micros(rtt_us), None);
        let s = est.snapshot();
        assert_eq!(s.backoffs, 0);
        let want = match p.profile {
            RtoProfile::Rfc6298 => rfc_formula(&p, &s),
            RtoProfile::Linux => linux_formula(&p, &s),
        };
        assert_eq!(s.rto, want, "{s:?}");
    }

    #[test]
    fn nothing_panics_on_extreme_values(
        p in any_params(),
        max_ns in prop::option::of(any::<u64>()),
        raw in prop::collection::vec((any::<u64>(), any::<u64>(), 0u8..4, any::<Option<(u64, u64)>>()), 0..32),
    ) {
        let mut p = p;
        if let Some(m) = max_ns {
            // Out-of-range parameters (as a hand-edited RtoParams might hold) must not panic either.
            p.max_rto = SimDuration(m);
        }
        let mut est = RtoEstimator::new(&p);
        for (t, rtt, kind, seq) in raw {
            match kind {
                0 => est.on_sample(SimTime(t), SimDuration(rtt), seq.map(|(a, b)| SeqInfo { snd_una: a, snd_nxt: b })),
                1 => est.on_timeout(Phase::SynSent),
                2 => est.on_timeout(Phase::Established),
                _ => est.on_established(),
            }
            let _ = est.snapshot();
            let _ = p.gives_up(Phase::Established, kind.into(), SimDuration(t));
        }
    }
}
