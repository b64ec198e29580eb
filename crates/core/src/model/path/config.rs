//! What a scenario writes under `[path]`, exactly as written, plus the semantic checks
//! the type system cannot make. Durations are human strings ("100ms"); probabilities
//! are numbers or percentages (0.05 or "5%"); shape parameters are plain numbers.

use crate::model::config_error::ConfigErrors;
use serde::{Deserialize, Serialize};

use super::Direction;
use super::events::PathEvent;
use crate::engine::time::SimDuration;
use crate::model::fraction;

/// A network path between one client and the server, as a scenario writes it.
///
/// ```toml
/// [path]
/// base_rtt = "100ms"
/// delay = { dist = "uniform", low = "0ms", high = "20ms" }
/// loss = { model = "bernoulli", p = 0.05 }
/// [[path.rtt_change]]
/// at = "20s"
/// rtt = "400ms"
/// [[path.blackout]]
/// at = "10s"
/// duration = "30s"
/// ```
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PathConfig {
    /// Round-trip propagation delay before any `rtt_change`; each direction gets half.
    pub base_rtt: SimDuration,
    /// Extra one-way delay drawn per packet, both directions unless overridden.
    #[serde(default)]
    pub delay: DelayConfig,
    /// Loss, both directions unless overridden.
    #[serde(default)]
    pub loss: LossConfig,
    /// Client → server settings that differ from `delay` / `loss`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forward: Option<DirectionOverride>,
    /// Server → client settings that differ from `delay` / `loss`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverse: Option<DirectionOverride>,
    /// When true a direction never reorders: a packet arrives no earlier than the one
    /// sent before it in the same direction. Off by default, so the per-packet delays are
    /// exactly the independent draws the scenario asked for.
    #[serde(default)]
    pub fifo: bool,
    /// Scheduled changes of the base RTT, in strictly increasing `at` order.
    #[serde(default)]
    pub rtt_change: Vec<RttChange>,
    /// Scheduled outages of both directions, in `at` order, not overlapping.
    #[serde(default)]
    pub blackout: Vec<Blackout>,
    /// Scripted events: drops, delays and duplicates of chosen packets, ICMP errors.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub event: Vec<PathEvent>,
}

/// Per-direction settings; a missing key falls back to the path-wide one.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DirectionOverride {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<DelayConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<LossConfig>,
}

/// From `at` (time since the start of the run) on, the base RTT is `rtt`.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct RttChange {
    pub at: SimDuration,
    pub rtt: SimDuration,
}

/// Every packet sent in `[at, at + duration)`, in either direction, is lost.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Blackout {
    pub at: SimDuration,
    pub duration: SimDuration,
}

/// Distribution of the extra one-way delay added to base_rtt / 2.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(tag = "dist", rename_all = "lowercase", deny_unknown_fields)]
pub enum DelayConfig {
    /// Always `value` (default 0).
    Constant {
        #[serde(default)]
        value: SimDuration,
    },
    /// Uniform on `[low, high]`, to the nanosecond.
    Uniform { low: SimDuration, high: SimDuration },
    /// Folded normal: |N(mean, sd)|. Folded rather than truncated because that is the
    /// hop delay of the optimistic-concurrency workload (|Normal(10 ms, 2 ms)|), and it
    /// keeps the mean unchanged whenever `mean` is several `sd` above zero.
    Normal { mean: SimDuration, sd: SimDuration },
    /// Log-normal with the given median and shape: median · exp(sigma · Z). The median
    /// is the readable "typical" delay; `sigma` (dimensionless) sets the spread.
    LogNormal { median: SimDuration, sigma: f64 },
    /// Pareto type I: support `[scale, ∞)`, P(X > x) = (scale / x)^shape. The mean
    /// is scale · shape / (shape − 1) for shape > 1 and infinite otherwise.
    Pareto { scale: SimDuration, shape: f64 },
}

impl Default for DelayConfig {
    fn default() -> Self {
        DelayConfig::Constant { value: SimDuration::ZERO }
    }
}

/// Loss process of one direction.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(tag = "model", rename_all = "kebab-case", deny_unknown_fields)]
pub enum LossConfig {
    /// Nothing is lost (except in blackouts).
    #[default]
    None,
    /// Each packet is lost independently with probability `p`.
    Bernoulli {
        #[serde(deserialize_with = "fraction::deserialize")]
        p: f64,
    },
    /// A two-state Markov chain (good, bad), one step per packet; a packet is lost with
    /// `loss_good` or `loss_bad` depending on the state it is sent in. With the defaults
    /// (0 and 1) losses come in bursts of mean length 1 / `p_leave_bad`.
    GilbertElliott {
        #[serde(deserialize_with = "fraction::deserialize")]
        p_enter_bad: f64,
        #[serde(deserialize_with = "fraction::deserialize")]
        p_leave_bad: f64,
        #[serde(default, deserialize_with = "fraction::deserialize")]
        loss_good: f64,
        #[serde(default = "one", deserialize_with = "fraction::deserialize")]
        loss_bad: f64,
    },
}

fn one() -> f64 {
    1.0
}

impl LossConfig {
    /// The long-run fraction of packets lost (before blackouts): p for Bernoulli,
    /// π_good · loss_good + π_bad · loss_bad for Gilbert–Elliott, where
    /// π_bad = p_enter_bad / (p_enter_bad + p_leave_bad).
    pub fn mean_loss_rate(&self) -> f64 {
        match *self {
            LossConfig::None => 0.0,
            LossConfig::Bernoulli { p } => p,
            LossConfig::GilbertElliott { p_enter_bad, p_leave_bad, loss_good, loss_bad } => {
                let bad = stationary_bad(p_enter_bad, p_leave_bad);
                (1.0 - bad) * loss_good + bad * loss_bad
            }
        }
    }
}

/// π_bad of the two-state chain. A chain that never moves (both probabilities 0) is
/// refused by validation; here it counts as always good so the function stays total.
pub(crate) fn stationary_bad(p_enter_bad: f64, p_leave_bad: f64) -> f64 {
    let total = p_enter_bad + p_leave_bad;
    if total > 0.0 { p_enter_bad / total } else { 0.0 }
}

impl PathConfig {
    /// A path with a fixed RTT: no extra delay, no loss, no schedule.
    pub fn new(base_rtt: SimDuration) -> PathConfig {
        PathConfig {
            base_rtt,
            delay: DelayConfig::default(),
            loss: LossConfig::default(),
            forward: None,
            reverse: None,
            fifo: false,
            rtt_change: Vec::new(),
            blackout: Vec::new(),
            event: Vec::new(),
        }
    }

    fn direction_override(&self, dir: Direction) -> Option<&DirectionOverride> {
        match dir {
            Direction::Forward => self.forward.as_ref(),
            Direction::Reverse => self.reverse.as_ref(),
        }
    }

    /// The delay distribution in force for `dir`, override applied.
    pub fn delay_for(&self, dir: Direction) -> &DelayConfig {
        self.direction_override(dir).and_then(|o| o.delay.as_ref()).unwrap_or(&self.delay)
    }

    /// The loss model in force for `dir`, override applied.
    pub fn loss_for(&self, dir: Direction) -> &LossConfig {
        self.direction_override(dir).and_then(|o| o.loss.as_ref()).unwrap_or(&self.loss)
    }

    /// Semantic checks the type system cannot make. Each error is (key path relative to
    /// `[path]`, message), e.g. `("loss.p", "must be a probability in [0, 1], got 1.5")`.
    /// Empty means valid.
    pub fn validate(&self) -> ConfigErrors {
        let mut errors = ConfigErrors::new();
        self.delay.validate("delay", &mut errors);
        self.loss.validate("loss", &mut errors);
        for (name, o) in [("forward", &self.forward), ("reverse", &self.reverse)] {
            if let Some(o) = o {
                if let Some(d) = &o.delay {
                    d.validate(&format!("{name}.delay"), &mut errors);
                }
                if let Some(l) = &o.loss {
                    l.validate(&format!("{name}.loss"), &mut errors);
                }
            }
        }
        // Two changes at the same instant would leave the RTT in force ambiguous.
        for (i, pair) in self.rtt_change.windows(2).enumerate() {
            if pair[1].at <= pair[0].at {
                errors.push(
                    format!("rtt_change[{}].at", i + 1),
                    format!("must be later than rtt_change[{i}].at ({}), got {}", pair[0].at, pair[1].at),
                );
            }
        }
        // Overlap is refused rather than merged: it is almost always a typo in one of the
        // two entries, and the user should see which. Back-to-back blackouts are fine.
        for (i, pair) in self.blackout.windows(2).enumerate() {
            let (prev, next) = (pair[0], pair[1]);
            let prev_end = prev.at.0.saturating_add(prev.duration.0);
            if next.at < prev.at {
                errors.push(
                    format!("blackout[{}].at", i + 1),
                    format!(
                        "must not be earlier than blackout[{i}].at ({}), got {}: list blackouts in time order",
                        prev.at, next.at
                    ),
                );
            } else if next.at.0 < prev_end {
                errors.push(
                    format!("blackout[{}].at", i + 1),
                    format!(
                        "{} is inside blackout[{i}] ({} for {}, until {}): blackouts must not overlap",
                        next.at,
                        prev.at,
                        prev.duration,
                        SimDuration(prev_end)
                    ),
                );
            }
        }
        for (i, e) in self.event.iter().enumerate() {
            errors.extend_under(&format!("event[{i}]"), e.validate());
        }
        errors
    }

    /// The events only a world with a TCP sender can act on, as (key, message), for the
    /// other worlds to refuse.
    pub fn tcp_only_events(&self) -> ConfigErrors {
        let mut errors = ConfigErrors::new();
        for (i, e) in self.event.iter().enumerate().filter(|(_, e)| e.needs_tcp()) {
            errors.push(
                format!("event[{i}].kind"),
                format!("\"{}\" acts on a TCP sender; only [tcp] scenarios take it", e.kind()),
            );
        }
        errors
    }
}

fn probability(errors: &mut ConfigErrors, key: String, p: f64) {
    if !(0.0..=1.0).contains(&p) {
        errors.push(key, format!("must be a probability in [0, 1], got {p}"));
    }
}

impl DelayConfig {
    pub(crate) fn validate(&self, key: &str, errors: &mut ConfigErrors) {
        match *self {
            DelayConfig::Constant { .. } => {}
            DelayConfig::Uniform { low, high } => {
                if high < low {
                    errors.push(format!("{key}.high"), format!("must be at least {key}.low ({low}), got {high}"));
                }
            }
            // sd = 0 is allowed: it is the natural end point of a sweep over the spread and
            // gives exactly `mean`.
            DelayConfig::Normal { .. } => {}
            DelayConfig::LogNormal { median, sigma } => {
                if median == SimDuration::ZERO {
                    errors.push(
                        format!("{key}.median"),
                        "must be greater than 0s (for no extra delay use dist = \"constant\")",
                    );
                }
                // sigma = 0 is allowed for the same reason as sd = 0: it gives exactly `median`.
                if !(sigma.is_finite() && sigma >= 0.0) {
                    errors.push(format!("{key}.sigma"), format!("must be a finite number ≥ 0, got {sigma}"));
                }
            }
            DelayConfig::Pareto { scale, shape } => {
                if scale == SimDuration::ZERO {
                    errors.push(
                        format!("{key}.scale"),
                        "must be greater than 0s: it is the smallest delay the distribution gives",
                    );
                }
                if !(shape.is_finite() && shape > 0.0) {
                    errors.push(format!("{key}.shape"), format!("must be a finite number > 0, got {shape}"));
                }
            }
        }
    }
}

impl LossConfig {
    fn validate(&self, key: &str, errors: &mut ConfigErrors) {
        match *self {
            LossConfig::None => {}
            LossConfig::Bernoulli { p } => probability(errors, format!("{key}.p"), p),
            LossConfig::GilbertElliott { p_enter_bad, p_leave_bad, loss_good, loss_bad } => {
                probability(errors, format!("{key}.p_enter_bad"), p_enter_bad);
                probability(errors, format!("{key}.p_leave_bad"), p_leave_bad);
                probability(errors, format!("{key}.loss_good"), loss_good);
                probability(errors, format!("{key}.loss_bad"), loss_bad);
                // The chain starts in its stationary distribution, which a chain that
                // never moves does not have.
                if p_enter_bad == 0.0 && p_leave_bad == 0.0 {
                    errors.push(
                        key.to_string(),
                        "p_enter_bad and p_leave_bad are both 0: the chain never changes state; \
                         for a constant loss rate use model = \"bernoulli\"",
                    );
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize, Serialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct File {
        path: PathConfig,
    }

    const EXAMPLE: &str = r#"
[path]
base_rtt = "100ms"
delay = { dist = "uniform", low = "0ms", high = "20ms" }
loss = { model = "bernoulli", p = 0.05 }
[[path.rtt_change]]
at = "20s"
rtt = "400ms"
[[path.blackout]]
at = "10s"
duration = "30s"
"#;

    fn ms(n: u64) -> SimDuration {
        SimDuration::from_millis(n)
    }

    fn s(n: u64) -> SimDuration {
        SimDuration::from_secs(n)
    }

    fn parse(text: &str) -> Result<PathConfig, toml::de::Error> {
        toml::from_str::<File>(text).map(|f| f.path)
    }

    fn round_trip(config: &PathConfig) -> PathConfig {
        let file = File { path: config.clone() };
        let text = toml::to_string(&file).expect("serializes");
        parse(&text).unwrap_or_else(|e| panic!("re-parse failed: {e}\n{text}"))
    }

    #[test]
    fn example_parses_to_the_expected_values() {
        let c = parse(EXAMPLE).unwrap();
        assert_eq!(c.base_rtt, ms(100));
        assert_eq!(c.delay, DelayConfig::Uniform { low: ms(0), high: ms(20) });
        assert_eq!(c.loss, LossConfig::Bernoulli { p: 0.05 });
        assert_eq!(c.rtt_change, vec![RttChange { at: s(20), rtt: ms(400) }]);
        assert_eq!(c.blackout, vec![Blackout { at: s(10), duration: s(30) }]);
        assert_eq!((c.forward, c.reverse, c.fifo), (None, None, false));
    }

    #[test]
    fn example_round_trips_through_toml() {
        let c = parse(EXAMPLE).unwrap();
        assert_eq!(round_trip(&c), c);
    }

    #[test]
    fn every_distribution_and_loss_model_round_trips_through_toml() {
        let text = r#"
[path]
base_rtt = "80ms"
fifo = true
delay = { dist = "lognormal", median = "5ms", sigma = 0.7 }
loss = { model = "gilbert-elliott", p_enter_bad = 0.01, p_leave_bad = 0.25 }
forward = { delay = { dist = "pareto", scale = "1ms", shape = 1.5 }, loss = { model = "none" } }
reverse = { delay = { dist = "normal", mean = "10ms", sd = "2ms" } }
"#;
        let c = parse(text).unwrap();
        assert_eq!(
            c.loss,
            LossConfig::GilbertElliott { p_enter_bad: 0.01, p_leave_bad: 0.25, loss_good: 0.0, loss_bad: 1.0 }
        );
        assert_eq!(c.loss_for(Direction::Forward), &LossConfig::None);
        assert_eq!(c.loss_for(Direction::Reverse), &c.loss);
        assert_eq!(c.delay_for(Direction::Reverse), &DelayConfig::Normal { mean: ms(10), sd: ms(2) });
        assert_eq!(round_trip(&c), c);
        let mut constant = PathConfig::new(ms(50));
        constant.delay = DelayConfig::Constant { value: ms(3) };
        assert_eq!(round_trip(&constant), constant);
    }

    #[test]
    fn omitted_keys_take_documented_defaults() {
        let c = parse("[path]\nbase_rtt = \"100ms\"\n").unwrap();
        assert_eq!(c, PathConfig::new(ms(100)));
        let c = parse("[path]\nbase_rtt = \"1s\"\ndelay = { dist = \"constant\" }\n").unwrap();
        assert_eq!(c.delay, DelayConfig::Constant { value: SimDuration::ZERO });
    }

    #[test]
    fn integer_probabilities_are_accepted() {
        let c = parse("[path]\nbase_rtt = \"1s\"\nloss = { model = \"bernoulli\", p = 1 }\n").unwrap();
        assert_eq!(c.loss, LossConfig::Bernoulli { p: 1.0 });
    }

    #[test]
    fn unknown_keys_names_and_bare_numbers_are_rejected() {
        for (text, needle) in [
            ("base_rtt = \"1s\"\nbase_rt = \"2s\"", "base_rt"),
            ("base_rtt = \"1s\"\ndelay = { dist = \"uniform\", low = \"0ms\", hi = \"1ms\" }", "hi"),
            ("base_rtt = \"1s\"\ndelay = { dist = \"gamma\" }", "gamma"),
            ("base_rtt = \"1s\"\nloss = { model = \"bernoulli\", p = 0.1, q = 0.2 }", "q"),
            ("base_rtt = \"1s\"\nforward = { jitter = \"1ms\" }", "jitter"),
            ("base_rtt = 100", "unit"),
            ("delay = { dist = \"constant\" }", "base_rtt"),
        ] {
            let err = parse(&format!("[path]\n{text}\n")).unwrap_err().to_string();
            assert!(err.contains(needle), "{text:?}: {err}");
        }
    }

    fn errors_of(c: &PathConfig) -> Vec<(String, String)> {
        c.validate().pairs()
    }

    fn keys(c: &PathConfig) -> Vec<String> {
        errors_of(c).into_iter().map(|(k, _)| k).collect()
    }

    #[test]
    fn valid_example_has_no_errors() {
        assert_eq!(errors_of(&parse(EXAMPLE).unwrap()), vec![]);
    }

    #[test]
    fn probability_above_one_is_an_error_naming_the_key() {
        let mut c = PathConfig::new(ms(100));
        c.loss = LossConfig::Bernoulli { p: 1.5 };
        assert_eq!(errors_of(&c), vec![("loss.p".to_string(), "must be a probability in [0, 1], got 1.5".to_string())]);
    }

    #[test]
    fn negative_and_non_finite_numbers_are_errors() {
        let mut c = PathConfig::new(ms(100));
        c.loss = LossConfig::GilbertElliott { p_enter_bad: -0.1, p_leave_bad: f64::NAN, loss_good: 0.0, loss_bad: 2.0 };
        c.forward =
            Some(DirectionOverride { delay: Some(DelayConfig::LogNormal { median: ms(5), sigma: -1.0 }), loss: None });
        c.reverse = Some(DirectionOverride {
            delay: Some(DelayConfig::Pareto { scale: ms(1), shape: f64::INFINITY }),
            loss: Some(LossConfig::Bernoulli { p: -0.0001 }),
        });
        assert_eq!(
            keys(&c),
            vec![
                "loss.p_enter_bad",
                "loss.p_leave_bad",
                "loss.loss_bad",
                "forward.delay.sigma",
                "reverse.delay.shape",
                "reverse.loss.p"
            ]
        );
    }

    #[test]
    fn zero_scale_and_zero_shape_are_errors() {
        let mut c = PathConfig::new(ms(100));
        c.delay = DelayConfig::Pareto { scale: SimDuration::ZERO, shape: 0.0 };
        assert_eq!(keys(&c), vec!["delay.scale", "delay.shape"]);
        c.delay = DelayConfig::LogNormal { median: SimDuration::ZERO, sigma: 0.5 };
        assert_eq!(keys(&c), vec!["delay.median"]);
    }

    #[test]
    fn zero_spread_is_allowed_because_sweeps_start_there() {
        let mut c = PathConfig::new(ms(100));
        c.delay = DelayConfig::Normal { mean: ms(10), sd: SimDuration::ZERO };
        assert_eq!(errors_of(&c), vec![]);
        c.delay = DelayConfig::LogNormal { median: ms(10), sigma: 0.0 };
        assert_eq!(errors_of(&c), vec![]);
    }

    #[test]
    fn uniform_with_high_below_low_is_an_error() {
        let mut c = PathConfig::new(ms(100));
        c.delay = DelayConfig::Uniform { low: ms(20), high: ms(10) };
        assert_eq!(
            errors_of(&c),
            vec![("delay.high".to_string(), "must be at least delay.low (20ms), got 10ms".to_string())]
        );
    }

    #[test]
    fn frozen_gilbert_elliott_chain_is_an_error() {
        let mut c = PathConfig::new(ms(100));
        c.loss = LossConfig::GilbertElliott { p_enter_bad: 0.0, p_leave_bad: 0.0, loss_good: 0.0, loss_bad: 1.0 };
        assert_eq!(keys(&c), vec!["loss"]);
    }

    #[test]
    fn unsorted_or_simultaneous_rtt_changes_are_errors() {
        let mut c = PathConfig::new(ms(100));
        c.rtt_change = vec![
            RttChange { at: s(20), rtt: ms(400) },
            RttChange { at: s(10), rtt: ms(50) },
            RttChange { at: s(10), rtt: ms(60) },
            RttChange { at: s(30), rtt: ms(60) },
        ];
        assert_eq!(
            errors_of(&c),
            vec![
                ("rtt_change[1].at".to_string(), "must be later than rtt_change[0].at (20s), got 10s".to_string()),
                ("rtt_change[2].at".to_string(), "must be later than rtt_change[1].at (10s), got 10s".to_string()),
            ]
        );
    }

    #[test]
    fn unsorted_and_overlapping_blackouts_are_errors_but_adjacent_ones_are_not() {
        let mut c = PathConfig::new(ms(100));
        c.blackout = vec![
            Blackout { at: s(10), duration: s(30) },
            Blackout { at: s(40), duration: s(5) }, // starts exactly when the first ends
            Blackout { at: s(44), duration: s(1) }, // overlaps the second
            Blackout { at: s(1), duration: s(1) },  // out of order
        ];
        let errors = errors_of(&c);
        assert_eq!(
            errors.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(),
            vec!["blackout[2].at", "blackout[3].at"]
        );
        assert!(errors[0].1.contains("inside blackout[1]"), "{}", errors[0].1);
        assert!(errors[1].1.contains("time order"), "{}", errors[1].1);
    }

    #[test]
    fn zero_length_blackout_is_allowed() {
        let mut c = PathConfig::new(ms(100));
        c.blackout = vec![Blackout { at: s(10), duration: SimDuration::ZERO }, Blackout { at: s(10), duration: s(1) }];
        assert_eq!(errors_of(&c), vec![]);
    }

    #[test]
    fn mean_loss_rate_matches_the_stationary_formula() {
        let ge = LossConfig::GilbertElliott { p_enter_bad: 0.01, p_leave_bad: 0.2, loss_good: 0.01, loss_bad: 0.8 };
        let bad = 0.01 / 0.21;
        assert!((ge.mean_loss_rate() - ((1.0 - bad) * 0.01 + bad * 0.8)).abs() < 1e-15);
        assert_eq!(LossConfig::Bernoulli { p: 0.3 }.mean_loss_rate(), 0.3);
        assert_eq!(LossConfig::None.mean_loss_rate(), 0.0);
    }
}
