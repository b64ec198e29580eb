//! Behaviour of a whole path: schedule, directions, draw contract, fifo; and property
//! tests over arbitrary valid configs.

use super::*;
use crate::engine::rng::Seeds;
use crate::engine::rng::SimRng;
use proptest::prelude::*;

fn ms(n: u64) -> SimDuration {
    SimDuration::from_millis(n)
}

fn secs(n: u64) -> SimTime {
    SimTime(SimDuration::from_secs(n).0)
}

/// The four streams of one client, derived the way the run loop derives them.
struct Streams {
    delay: [SimRng; 2],
    loss: [SimRng; 2],
}

impl Streams {
    fn new(seed: u64, client: u64) -> Streams {
        let s = Seeds::new(seed);
        let stream = |p| s.stream(0, client, p);
        Streams {
            delay: Direction::BOTH.map(|d| stream(d.delay_purpose())),
            loss: Direction::BOTH.map(|d| stream(d.loss_purpose())),
        }
    }

    fn send(&mut self, path: &mut Path, dir: Direction, now: SimTime) -> Option<SimTime> {
        let i = dir.index();
        path.transmit(dir, now, &mut self.delay[i], &mut self.loss[i])
    }
}

#[test]
fn scripted_events_take_no_draws_and_touch_only_their_packets() {
    // The draw contract: a script changes the fate of the packets it names and nothing
    // else, so every other packet meets the same delay and loss draws as without it.
    let mut plain = PathConfig::new(ms(100));
    plain.delay = DelayConfig::Uniform { low: ms(0), high: ms(20) };
    plain.loss = LossConfig::Bernoulli { p: 0.2 };
    let mut scripted = plain.clone();
    scripted.event = vec![
        PathEvent::Drop { direction: Direction::Forward, nth: Some(2), count: Some(2), at: None, duration: None },
        PathEvent::Delay { direction: Direction::Forward, nth: 5, by: ms(300) },
        PathEvent::Duplicate { direction: Direction::Forward, nth: 6 },
    ];
    assert!(scripted.validate().is_empty());
    let (mut a, mut b) = (Path::new(&plain), Path::new(&scripted));
    let (mut sa, mut sb) = (Streams::new(8, 0), Streams::new(8, 0));
    for n in 1..=40u64 {
        let now = SimTime(ms(10 * n).0);
        let d = Direction::Forward.index();
        let x = a.send(Direction::Forward, now, &mut sa.delay[d], &mut sa.loss[d]);
        let y = b.send(Direction::Forward, now, &mut sb.delay[d], &mut sb.loss[d]);
        match n {
            2 | 3 => assert_eq!(y.arrival, None, "packet {n} is dropped"),
            5 => assert_eq!(y.arrival, x.arrival.map(|t| t + ms(300)), "packet 5 is 300 ms late"),
            6 => {
                assert!(x.arrival.is_some(), "the seed delivers packet 6, so the copy shows");
                assert_eq!((y.arrival, y.arrivals().count()), (x.arrival, 2));
            }
            _ => assert_eq!(y, x, "packet {n}"),
        }
    }
    assert!(PathSpec::new(&scripted).has_client_state(), "the count is per client");
}

#[test]
fn path_state_per_client_is_tiny() {
    assert!(std::mem::size_of::<Path>() <= 48, "{}", std::mem::size_of::<Path>());
}

#[test]
fn clones_share_one_spec() {
    let a = Path::new(&PathConfig::new(ms(100)));
    let b = a.clone();
    assert!(Arc::ptr_eq(a.spec(), b.spec()));
}

#[test]
fn directions_map_to_their_own_streams() {
    assert_eq!(Direction::Forward.delay_purpose(), Purpose::DelayForward);
    assert_eq!(Direction::Reverse.delay_purpose(), Purpose::DelayReverse);
    assert_eq!(Direction::Forward.loss_purpose(), Purpose::LossForward);
    assert_eq!(Direction::Reverse.loss_purpose(), Purpose::LossReverse);
    assert_eq!(Direction::Forward.opposite(), Direction::Reverse);
}

#[test]
fn one_way_delay_is_half_the_base_rtt_plus_the_extra() {
    let mut c = PathConfig::new(SimDuration(100_000_001)); // odd: half rounds down
    c.delay = DelayConfig::Constant { value: ms(3) };
    let mut path = Path::new(&c);
    let mut st = Streams::new(1, 0);
    for dir in Direction::BOTH {
        assert_eq!(st.send(&mut path, dir, secs(1)), Some(SimTime(secs(1).0 + 50_000_000 + 3_000_000)));
    }
}

#[test]
fn rtt_change_takes_effect_for_packets_sent_at_or_after_it() {
    let mut c = PathConfig::new(ms(100));
    c.rtt_change = vec![RttChange { at: SimDuration::from_secs(20), rtt: ms(400) }];
    let mut path = Path::new(&c);
    let mut st = Streams::new(2, 0);
    let before = SimTime(secs(20).0 - 1);
    assert_eq!(st.send(&mut path, Direction::Forward, before), Some(before + ms(50)));
    assert_eq!(st.send(&mut path, Direction::Forward, secs(20)), Some(secs(20) + ms(200)));
    assert_eq!(st.send(&mut path, Direction::Reverse, secs(21)), Some(secs(21) + ms(200)));
    assert_eq!(path.base_rtt_at(before), ms(100));
    assert_eq!(path.base_rtt_at(secs(20)), ms(400));
}

#[test]
fn blackout_drops_exactly_the_packets_sent_inside_it() {
    let mut c = PathConfig::new(ms(100));
    c.blackout = vec![Blackout { at: SimDuration::from_secs(10), duration: SimDuration::from_secs(30) }];
    let mut path = Path::new(&c);
    let mut st = Streams::new(3, 0);
    let (start, end) = (secs(10).0, secs(40).0);
    for t in [0, start - 1, start, start + 1, secs(25).0, end - 1, end, end + 1, secs(100).0] {
        let inside = (start..end).contains(&t);
        for dir in Direction::BOTH {
            let fate = st.send(&mut path, dir, SimTime(t));
            assert_eq!(fate.is_none(), inside, "sent at {t} ns in {dir:?}");
            assert_eq!(path.in_blackout(SimTime(t)), inside);
        }
    }
    assert_eq!(path.blackout_end_after(secs(12)), Some(secs(40)));
    assert_eq!(path.blackout_end_after(secs(40)), None);
}

#[test]
fn packets_in_flight_when_a_blackout_starts_still_arrive() {
    let mut c = PathConfig::new(ms(100));
    c.blackout = vec![Blackout { at: SimDuration::from_secs(10), duration: SimDuration::from_secs(30) }];
    let mut path = Path::new(&c);
    let sent = SimTime(secs(10).0 - 1);
    let arrival = Streams::new(4, 0).send(&mut path, Direction::Forward, sent);
    assert_eq!(arrival, Some(sent + ms(50)));
    assert!(path.in_blackout(arrival.unwrap()));
}

/// Sends `n` packets alternating directions, 1 ms apart, and returns each fate.
fn run(config: &PathConfig, seed: u64, n: u64) -> Vec<(Direction, Option<SimTime>)> {
    let mut path = Path::new(config);
    let mut st = Streams::new(seed, 7);
    (0..n)
        .map(|i| {
            let dir = if i % 2 == 0 { Direction::Forward } else { Direction::Reverse };
            (dir, st.send(&mut path, dir, SimTime(i * 1_000_000)))
        })
        .collect()
}

fn only(dir: Direction, fates: &[(Direction, Option<SimTime>)]) -> Vec<Option<SimTime>> {
    fates.iter().filter(|(d, _)| *d == dir).map(|&(_, f)| f).collect()
}

#[test]
fn directions_are_independent() {
    let mut a = PathConfig::new(ms(80));
    a.delay = DelayConfig::LogNormal { median: ms(5), sigma: 0.8 };
    a.loss = LossConfig::GilbertElliott { p_enter_bad: 0.02, p_leave_bad: 0.3, loss_good: 0.0, loss_bad: 1.0 };
    let mut b = a.clone();
    b.forward = Some(DirectionOverride {
        delay: Some(DelayConfig::Pareto { scale: ms(2), shape: 1.2 }),
        loss: Some(LossConfig::Bernoulli { p: 0.4 }),
    });
    let (fa, fb) = (run(&a, 9, 20_000), run(&b, 9, 20_000));
    assert_eq!(only(Direction::Reverse, &fa), only(Direction::Reverse, &fb));
    assert_ne!(only(Direction::Forward, &fa), only(Direction::Forward, &fb));
}

#[test]
fn changing_loss_does_not_shift_delays() {
    let mut lossless = PathConfig::new(ms(100));
    lossless.delay = DelayConfig::Uniform { low: ms(0), high: ms(20) };
    let mut lossy = lossless.clone();
    lossy.loss = LossConfig::Bernoulli { p: 0.3 };
    let mut bursty = lossless.clone();
    bursty.loss = LossConfig::GilbertElliott { p_enter_bad: 0.05, p_leave_bad: 0.2, loss_good: 0.0, loss_bad: 1.0 };
    let base = run(&lossless, 11, 10_000);
    for variant in [&lossy, &bursty] {
        let fates = run(variant, 11, 10_000);
        let delivered = fates.iter().filter(|(_, f)| f.is_some()).count();
        assert!(delivered < 9_000, "the variant should lose packets");
        for (i, (&(_, f), &(_, g))) in fates.iter().zip(&base).enumerate() {
            if f.is_some() {
                assert_eq!(f, g, "packet {i}");
            }
        }
    }
}

#[test]
fn a_blackout_does_not_shift_the_draws_of_later_packets() {
    let mut plain = PathConfig::new(ms(100));
    plain.delay = DelayConfig::Normal { mean: ms(10), sd: ms(3) };
    plain.loss = LossConfig::Bernoulli { p: 0.1 };
    let mut dark = plain.clone();
    dark.blackout = vec![Blackout { at: SimDuration::from_secs(2), duration: SimDuration::from_secs(3) }];
    let (a, b) = (run(&plain, 12, 10_000), run(&dark, 12, 10_000));
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        let sent = SimTime(i as u64 * 1_000_000);
        if sent >= secs(2) && sent < secs(5) {
            assert_eq!(y.1, None);
        } else {
            assert_eq!(x, y, "packet {i}");
        }
    }
}

#[test]
fn lower_loss_variants_lose_a_subset_of_the_packets() {
    let mut low = PathConfig::new(ms(100));
    low.loss = LossConfig::Bernoulli { p: 0.05 };
    let mut high = low.clone();
    high.loss = LossConfig::Bernoulli { p: 0.25 };
    for ((_, l), (_, h)) in run(&low, 13, 10_000).iter().zip(&run(&high, 13, 10_000)) {
        assert!(l.is_some() || h.is_none());
    }
}

fn reorderings(fates: &[Option<SimTime>]) -> usize {
    let arrivals: Vec<SimTime> = fates.iter().flatten().copied().collect();
    arrivals.windows(2).filter(|w| w[1] < w[0]).count()
}

#[test]
fn fifo_never_reorders_and_the_default_does() {
    let mut c = PathConfig::new(ms(100));
    c.delay = DelayConfig::Uniform { low: ms(0), high: ms(50) };
    let free = run(&c, 14, 10_000);
    c.fifo = true;
    let fifo = run(&c, 14, 10_000);
    for dir in Direction::BOTH {
        assert!(reorderings(&only(dir, &free)) > 100);
        assert_eq!(reorderings(&only(dir, &fifo)), 0);
    }
    // FIFO only ever holds a packet back.
    for ((_, f), (_, g)) in free.iter().zip(&fifo) {
        assert!(g >= f);
    }
}

#[test]
fn fifo_survives_a_drop_in_rtt() {
    // Packets sent just before the RTT falls would be overtaken without fifo.
    let mut c = PathConfig::new(ms(400));
    c.rtt_change = vec![RttChange { at: SimDuration::from_secs(1), rtt: ms(20) }];
    c.fifo = true;
    let mut path = Path::new(&c);
    let mut st = Streams::new(15, 0);
    let early = st.send(&mut path, Direction::Forward, SimTime(secs(1).0 - 1)).unwrap();
    let late = st.send(&mut path, Direction::Forward, secs(1)).unwrap();
    assert_eq!(late, early);
}

#[test]
fn same_seed_same_fates() {
    let mut c = PathConfig::new(ms(60));
    c.delay = DelayConfig::Pareto { scale: ms(1), shape: 1.5 };
    c.loss = LossConfig::GilbertElliott { p_enter_bad: 0.01, p_leave_bad: 0.1, loss_good: 0.001, loss_bad: 0.9 };
    assert_eq!(run(&c, 16, 5_000), run(&c, 16, 5_000));
    assert_ne!(run(&c, 16, 5_000), run(&c, 17, 5_000));
}

// ---- properties over arbitrary valid configs ----

fn duration(max_ns: u64) -> impl Strategy<Value = SimDuration> {
    (0..=max_ns).prop_map(SimDuration)
}

fn positive_duration(max_ns: u64) -> impl Strategy<Value = SimDuration> {
    (1..=max_ns).prop_map(SimDuration)
}

fn probability() -> impl Strategy<Value = f64> {
    prop_oneof![Just(0.0), Just(1.0), 0.0..=1.0f64]
}

const SECOND: u64 = 1_000_000_000;

fn delay_config() -> impl Strategy<Value = DelayConfig> {
    prop_oneof![
        duration(SECOND).prop_map(|value| DelayConfig::Constant { value }),
        (duration(SECOND), duration(SECOND)).prop_map(|(a, b)| DelayConfig::Uniform { low: a.min(b), high: a.max(b) }),
        (duration(SECOND), duration(SECOND)).prop_map(|(mean, sd)| DelayConfig::Normal { mean, sd }),
        (positive_duration(SECOND), 0.0..20.0f64).prop_map(|(median, sigma)| DelayConfig::LogNormal { median, sigma }),
        (positive_duration(SECOND), 0.001..10.0f64).prop_map(|(scale, shape)| DelayConfig::Pareto { scale, shape }),
    ]
}

fn loss_config() -> impl Strategy<Value = LossConfig> {
    prop_oneof![
        Just(LossConfig::None),
        probability().prop_map(|p| LossConfig::Bernoulli { p }),
        (probability(), probability(), probability(), probability())
            .prop_filter("a chain that never moves is invalid", |(e, l, _, _)| *e > 0.0 || *l > 0.0)
            .prop_map(|(p_enter_bad, p_leave_bad, loss_good, loss_bad)| {
                LossConfig::GilbertElliott { p_enter_bad, p_leave_bad, loss_good, loss_bad }
            }),
    ]
}

fn direction_override() -> impl Strategy<Value = Option<DirectionOverride>> {
    proptest::option::of(
        (proptest::option::of(delay_config()), proptest::option::of(loss_config()))
            .prop_map(|(delay, loss)| DirectionOverride { delay, loss }),
    )
}

fn path_config() -> impl Strategy<Value = PathConfig> {
    let changes = proptest::collection::vec((positive_duration(10 * SECOND), duration(2 * SECOND)), 0..5);
    let blackouts = proptest::collection::vec((duration(10 * SECOND), duration(10 * SECOND)), 0..5);
    (
        duration(2 * SECOND),
        delay_config(),
        loss_config(),
        direction_override(),
        direction_override(),
        any::<bool>(),
        changes,
        blackouts,
    )
        .prop_map(|(base_rtt, delay, loss, forward, reverse, fifo, changes, blackouts)| {
            let mut t = 0;
            let rtt_change = changes
                .into_iter()
                .map(|(gap, rtt)| {
                    t += gap.0;
                    RttChange { at: SimDuration(t), rtt }
                })
                .collect();
            let mut end = 0;
            let blackout = blackouts
                .into_iter()
                .map(|(gap, duration)| {
                    let at = SimDuration(end + gap.0);
                    end = at.0 + duration.0;
                    Blackout { at, duration }
                })
                .collect();
            PathConfig { base_rtt, delay, loss, forward, reverse, fifo, rtt_change, blackout, event: Vec::new() }
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn generated_configs_are_valid_and_round_trip_through_toml(c in path_config()) {
        prop_assert!(c.validate().is_empty(), "{}", c.validate());
        #[derive(serde::Serialize, serde::Deserialize)]
        struct File { path: PathConfig }
        let text = toml::to_string(&File { path: c.clone() }).unwrap();
        let back: File = toml::from_str(&text).unwrap();
        prop_assert_eq!(back.path, c);
    }

    #[test]
    fn arrival_never_beats_half_the_base_rtt_and_never_panics(
        c in path_config(),
        seed in any::<u64>(),
        sends in proptest::collection::vec((any::<bool>(), 0..(3 * SECOND)), 1..200),
    ) {
        let mut path = Path::new(&c);
        let mut st = Streams::new(seed, 0);
        let mut now = SimTime::ZERO;
        let mut last = [None; 2];
        for (forward, gap) in sends {
            now = now.saturating_add(SimDuration(gap));
            let dir = if forward { Direction::Forward } else { Direction::Reverse };
            let fate = st.send(&mut path, dir, now);
            if path.in_blackout(now) {
                prop_assert_eq!(fate, None);
            }
            if let Some(arrival) = fate {
                let floor = now.saturating_add(SimDuration(path.base_rtt_at(now).0 / 2));
                prop_assert!(arrival >= floor, "arrival {:?} before {:?}", arrival, floor);
                if c.fifo {
                    prop_assert!(Some(arrival) >= last[dir.index()]);
                }
                last[dir.index()] = Some(arrival);
            }
        }
    }

    #[test]
    fn validate_never_panics_on_arbitrary_numbers(
        p in any::<f64>(), sigma in any::<f64>(), shape in any::<f64>(),
    ) {
        let mut c = PathConfig::new(ms(100));
        c.loss = LossConfig::GilbertElliott { p_enter_bad: p, p_leave_bad: p, loss_good: p, loss_bad: p };
        c.delay = DelayConfig::LogNormal { median: ms(1), sigma };
        c.forward = Some(DirectionOverride { delay: Some(DelayConfig::Pareto { scale: ms(1), shape }), loss: None });
        let _ = c.validate();
    }
}
