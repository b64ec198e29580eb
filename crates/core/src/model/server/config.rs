//! What a scenario writes under `[server]`, exactly as written, plus the semantic checks
//! the type system cannot make. Every key is optional: an empty `[server]` is a server
//! that is always up, accepts every handshake at once and sends SETTINGS at once.

use crate::model::config_error::ConfigErrors;
use serde::{Deserialize, Serialize};

use crate::engine::time::SimDuration;

/// The server every client connects to, as a scenario writes it.
///
/// ```toml
/// [server]
/// down_behavior = "refuse"     # or "blackhole": what a SYN meets while the server is down
/// accept_rate = 1000           # handshakes per second; omit for unlimited
/// burst = 10                   # handshakes that may start back to back (default 1)
/// accept_queue = 128           # handshakes that may wait for the rate (default 128)
/// overload = "refuse"          # or "drop": what a SYN meets when the queue is full
/// handshake_time = "2ms"       # server-side latency before SETTINGS (default 0s)
/// drop_after = "2s"            # flapping: drop every connection this long after SETTINGS
/// send_settings = true         # false: accept TCP, never send SETTINGS
/// [[server.restart]]           # every connection dropped at `at`; down for `down`
/// at = "10s"
/// down = "30s"
/// [[server.outage]]            # down from `at` for `duration`; connections survive
/// at = "100s"
/// duration = "20s"
/// ```
///
/// `[calls]` may give the server workers instead of an accept rate: requests wait in a
/// FIFO queue for one of `concurrency` workers, each busy for a service time, so latency
/// rises as the queue fills (an M/M/c queue with exponential service). Brownouts fail a
/// share of the requests and may slow the rest:
///
/// ```toml
/// [server]
/// concurrency = 50             # requests served at once
/// service_time = "40ms"        # mean work per request
/// service = "exponential"      # or "fixed"
/// queue = 5000                 # requests that may wait; one more is refused (default: no limit)
/// [[server.brownout]]
/// at = "60s"
/// duration = "10s"
/// fail_fraction = 0.5          # share of requests failed at once (default 1)
/// slowdown = 1.0               # workers work this many times slower in the window (default 1)
/// ```
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    /// Restarts, in strictly increasing `at` order.
    #[serde(default)]
    pub restart: Vec<Restart>,
    /// Outages, in strictly increasing `at` order; no restart or outage may overlap another.
    #[serde(default)]
    pub outage: Vec<Outage>,
    /// What a SYN meets while the server is down (restart or outage).
    #[serde(default)]
    pub down_behavior: DownBehavior,
    /// Handshakes started per second, resolved to the nearest 10⁻⁶ per second;
    /// absent = unlimited (no queue, no overload). Between 10⁻⁶ and 10⁹.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accept_rate: Option<f64>,
    /// Handshakes that may start back to back after a quiet spell: the token bucket's
    /// size. At least 1; only with `accept_rate`.
    #[serde(default = "default_burst")]
    pub burst: u32,
    /// Handshakes that may wait for a token; one more finds the queue full (`overload`).
    /// 0 = no queue: a SYN that finds no token is overloaded at once. Only with `accept_rate`.
    #[serde(default = "default_accept_queue")]
    pub accept_queue: u32,
    /// What a SYN meets when the accept queue is full. Only with `accept_rate`.
    #[serde(default)]
    pub overload: Overload,
    /// Server-side processing per handshake, between its token and SETTINGS. Latency
    /// only: it does not use capacity (capacity is `accept_rate`).
    #[serde(default)]
    pub handshake_time: SimDuration,
    /// Flapping: every connection is dropped this long after its SETTINGS are sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drop_after: Option<SimDuration>,
    /// false: TCP is accepted but SETTINGS never come, so every attempt that gets in
    /// times out at the client's connect deadline.
    #[serde(default = "yes")]
    pub send_settings: bool,
    /// `[calls]`: requests served at once by the server's workers; absent = no workers
    /// (each request takes `handshake_time`, capacity from `accept_rate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<u32>,
    /// Mean work per request on one worker. Required with `concurrency`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_time: Option<SimDuration>,
    /// How service times vary around `service_time`.
    #[serde(default, skip_serializing_if = "is_default")]
    pub service: ServiceDist,
    /// Requests that may wait for a worker; one more is refused at once. Absent = no limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<u32>,
    /// Windows in which a share of requests fail and the rest may be slower, in time order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub brownout: Vec<Brownout>,
}

fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

/// How a worker's service times are drawn.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ServiceDist {
    /// Exponential with mean `service_time`: the M/M/c queue.
    #[default]
    Exponential,
    /// Exactly `service_time`: hand-checkable, and the best case for queueing.
    Fixed,
}

/// In `[at, at + duration)` each request fails at once with probability `fail_fraction`
/// (a fast 503, no worker used), and the workers work at `1 / slowdown` of their speed:
/// whatever request they serve, the part of its work done inside the window takes
/// `slowdown` times as long, and the part done after it runs at full speed again.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Brownout {
    pub at: SimDuration,
    pub duration: SimDuration,
    #[serde(default = "one", deserialize_with = "crate::model::fraction::deserialize")]
    pub fail_fraction: f64,
    #[serde(default = "one")]
    pub slowdown: f64,
}

fn one() -> f64 {
    1.0
}

impl Brownout {
    pub fn end(&self) -> SimDuration {
        SimDuration(self.at.0.saturating_add(self.duration.0))
    }
}

/// At `at` every open connection is dropped and the server is down for `down`
/// (`"0s"` = back at once, with an empty queue and a full bucket).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Restart {
    pub at: SimDuration,
    pub down: SimDuration,
}

/// The server is down in `[at, at + duration)` without restarting: open connections
/// survive, handshakes in progress are lost. A zero duration has no effect.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Outage {
    pub at: SimDuration,
    pub duration: SimDuration,
}

/// What a SYN meets while the server is down.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "lowercase")]
pub enum DownBehavior {
    /// The port is closed: RST, the attempt fails one path RTT after it started.
    #[default]
    Refuse,
    /// The host is gone: no answer; the attempt ends at the client's connect deadline.
    Blackhole,
}

/// What a SYN meets when the accept queue is full.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "lowercase")]
pub enum Overload {
    /// RST at once (Linux `tcp_abort_on_overflow = 1`).
    #[default]
    Refuse,
    /// The SYN is dropped silently; the client times out (Linux's default).
    Drop,
}

fn default_burst() -> u32 {
    1
}

fn default_accept_queue() -> u32 {
    128
}

fn yes() -> bool {
    true
}

/// Bounds of `accept_rate`: the rate is held in micro-handshakes per second (so 10⁻⁶ is
/// the smallest), and above one handshake per nanosecond time itself is too coarse.
pub const MIN_ACCEPT_RATE: f64 = 1e-6;
pub const MAX_ACCEPT_RATE: f64 = 1e9;

impl Default for ServerConfig {
    /// Always up, unlimited, SETTINGS at once, never drops a connection.
    fn default() -> Self {
        ServerConfig {
            restart: Vec::new(),
            outage: Vec::new(),
            down_behavior: DownBehavior::default(),
            accept_rate: None,
            burst: default_burst(),
            accept_queue: default_accept_queue(),
            overload: Overload::default(),
            handshake_time: SimDuration::ZERO,
            drop_after: None,
            send_settings: true,
            concurrency: None,
            service_time: None,
            service: ServiceDist::default(),
            queue: None,
            brownout: Vec::new(),
        }
    }
}

impl ServerConfig {
    /// Semantic checks the type system cannot make. Each error is (key path relative to
    /// `[server]`, message), e.g. `("accept_rate", "must be … got NaN")`. Empty means valid.
    pub fn validate(&self) -> ConfigErrors {
        let mut errors = ConfigErrors::new();
        let mut err = |key: &str, msg: String| errors.push(key.to_string(), msg);
        match self.accept_rate {
            Some(rate) => {
                if !(MIN_ACCEPT_RATE..=MAX_ACCEPT_RATE).contains(&rate) {
                    err(
                        "accept_rate",
                        format!(
                            "must be a number of handshakes per second between {MIN_ACCEPT_RATE} \
                             and {MAX_ACCEPT_RATE}, got {rate} (omit it for an unlimited server; \
                             to refuse everything, write an outage)"
                        ),
                    );
                }
                // A bucket that holds no token admits nothing, ever; accept_queue = 0 on
                // the other hand is a plain rate limiter and is fine.
                if self.burst == 0 {
                    err(
                        "burst",
                        "must be at least 1: a bucket that holds no token admits no handshake \
                         (for no burst at all write 1; to refuse everything write an outage)"
                            .into(),
                    );
                }
            }
            None => {
                // An unlimited server never queues: these keys would silently do nothing.
                let why = "applies only with accept_rate (an unlimited server never queues): \
                           set accept_rate or remove this key";
                if self.burst != default_burst() {
                    err("burst", why.into());
                }
                if self.accept_queue != default_accept_queue() {
                    err("accept_queue", why.into());
                }
                if self.overload != Overload::default() {
                    err("overload", why.into());
                }
            }
        }
        match self.drop_after {
            Some(d) if d == SimDuration::ZERO => err(
                "drop_after",
                "must be greater than 0s: a connection dropped as its SETTINGS leave is never \
                 really up (to never establish connections use send_settings = false)"
                    .into(),
            ),
            Some(_) if !self.send_settings => err(
                "drop_after",
                "has no effect with send_settings = false: connections are dropped a time \
                 after their SETTINGS, which never come"
                    .into(),
            ),
            _ => {}
        }
        let restarts: Vec<Entry> =
            (self.restart.iter().enumerate()).map(|(i, r)| Entry::new(format!("restart[{i}]"), r.at, r.down)).collect();
        let outages: Vec<Entry> = (self.outage.iter().enumerate())
            .map(|(i, o)| Entry::new(format!("outage[{i}]"), o.at, o.duration))
            .collect();
        let mut ordered = true;
        for list in [&restarts, &outages] {
            for pair in list.windows(2) {
                if pair[1].at <= pair[0].at {
                    ordered = false;
                    err(
                        &format!("{}.at", pair[1].name),
                        format!(
                            "must be later than {}.at ({}), got {}: list them in time order",
                            pair[0].name, pair[0].at, pair[1].at
                        ),
                    );
                }
            }
        }
        // Overlap is refused rather than merged, as for path blackouts: it is almost always
        // a typo, and a restart inside an outage has no clear meaning (drop the
        // connections the outage kept? restart the clock of the down time?). Back to back
        // is fine. An empty outage has no effect and overlaps nothing.
        if ordered {
            let mut all: Vec<&Entry> =
                restarts.iter().chain(outages.iter().filter(|o| o.len > SimDuration::ZERO)).collect();
            all.sort_by_key(|e| e.at);
            for pair in all.windows(2) {
                let (prev, next) = (pair[0], pair[1]);
                let prev_end = SimDuration(prev.at.0.saturating_add(prev.len.0));
                if next.at < prev_end {
                    err(
                        &format!("{}.at", next.name),
                        format!(
                            "{} is inside {} ({} for {}, until {}): the server's down times \
                             must not overlap",
                            next.at, prev.name, prev.at, prev.len, prev_end
                        ),
                    );
                }
            }
        }
        errors.extend_under("", self.validate_workers());
        errors
    }
}

impl ServerConfig {
    /// Whether the server has workers (`concurrency`) or brownouts: what only `[calls]` reads.
    pub fn has_workers_or_brownouts(&self) -> bool {
        self.concurrency.is_some() || !self.brownout.is_empty()
    }

    fn validate_workers(&self) -> ConfigErrors {
        let mut errors = ConfigErrors::new();
        let mut err = |key: &str, msg: String| errors.push(key.to_string(), msg);
        match self.concurrency {
            Some(0) => err("concurrency", "must be at least 1 worker".into()),
            Some(_) if self.accept_rate.is_some() => err(
                "concurrency",
                "and accept_rate are two capacity models: give the server workers or an accept rate, not both".into(),
            ),
            Some(_) if self.service_time.is_none_or(|t| t == SimDuration::ZERO) => {
                err("service_time", "must be longer than 0s: the mean work per request on one worker".into())
            }
            Some(_) => {}
            None => {
                let why = "applies only with concurrency (the server's workers): set concurrency or remove this key";
                if self.service_time.is_some() {
                    err("service_time", why.into());
                }
                if self.service != ServiceDist::default() {
                    err("service", why.into());
                }
                if self.queue.is_some() {
                    err("queue", why.into());
                }
            }
        }
        let mut prev_end: Option<(usize, SimDuration)> = None;
        for (i, b) in self.brownout.iter().enumerate() {
            let key = |k: &str| format!("brownout[{i}].{k}");
            if b.duration == SimDuration::ZERO {
                err(&key("duration"), "must be longer than 0s".into());
            }
            if !(0.0..=1.0).contains(&b.fail_fraction) {
                err(&key("fail_fraction"), format!("must be a share between 0 and 1, got {}", b.fail_fraction));
            }
            if !(1.0..=1e6).contains(&b.slowdown) {
                err(&key("slowdown"), format!("must be a factor between 1 and 1000000, got {}", b.slowdown));
            }
            if b.slowdown != 1.0 && self.concurrency.is_none() {
                err(&key("slowdown"), "slows the server's workers: set concurrency and service_time".into());
            }
            if let Some((j, end)) = prev_end
                && b.at < end
            {
                err(
                    &key("at"),
                    format!("{} is before the end of brownout[{j}] ({end}): list brownouts in time order, apart", b.at),
                );
            }
            prev_end = Some((i, b.end()));
        }
        errors
    }
}

/// A restart or an outage, for the order and overlap checks.
struct Entry {
    name: String,
    at: SimDuration,
    len: SimDuration,
}

impl Entry {
    fn new(name: String, at: SimDuration, len: SimDuration) -> Entry {
        Entry { name, at, len }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize, Serialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct File {
        server: ServerConfig,
    }

    const EXAMPLE: &str = r#"
[server]
down_behavior = "blackhole"
accept_rate = 1000
burst = 10
accept_queue = 64
overload = "drop"
handshake_time = "2ms"
drop_after = "2s"
[[server.restart]]
at = "10s"
down = "30s"
[[server.outage]]
at = "100s"
duration = "20s"
"#;

    fn ms(n: u64) -> SimDuration {
        SimDuration::from_millis(n)
    }

    fn s(n: u64) -> SimDuration {
        SimDuration::from_secs(n)
    }

    fn parse(text: &str) -> Result<ServerConfig, toml::de::Error> {
        toml::from_str::<File>(text).map(|f| f.server)
    }

    fn round_trip(config: &ServerConfig) -> ServerConfig {
        let text = toml::to_string(&File { server: config.clone() }).expect("serializes");
        parse(&text).unwrap_or_else(|e| panic!("re-parse failed: {e}\n{text}"))
    }

    fn keys(c: &ServerConfig) -> Vec<String> {
        c.validate().keys().into_iter().map(str::to_string).collect()
    }

    fn message(c: &ServerConfig, key: &str) -> String {
        let errors = c.validate().pairs();
        errors.iter().find(|(k, _)| k == key).unwrap_or_else(|| panic!("no error on {key}: {errors:?}")).1.clone()
    }

    #[test]
    fn example_parses_to_the_expected_values_and_is_valid() {
        let c = parse(EXAMPLE).unwrap();
        assert_eq!(
            c,
            ServerConfig {
                restart: vec![Restart { at: s(10), down: s(30) }],
                outage: vec![Outage { at: s(100), duration: s(20) }],
                down_behavior: DownBehavior::Blackhole,
                accept_rate: Some(1000.0),
                burst: 10,
                accept_queue: 64,
                overload: Overload::Drop,
                handshake_time: ms(2),
                drop_after: Some(s(2)),
                send_settings: true,
                ..ServerConfig::default()
            }
        );
        assert!(c.validate().is_empty());
        assert_eq!(round_trip(&c), c);
    }

    #[test]
    fn empty_table_is_the_documented_default() {
        let c = parse("[server]\n").unwrap();
        assert_eq!(c, ServerConfig::default());
        assert_eq!((c.burst, c.accept_queue, c.send_settings, c.handshake_time), (1, 128, true, SimDuration::ZERO));
        assert_eq!((c.down_behavior, c.overload), (DownBehavior::Refuse, Overload::Refuse));
        assert!(c.validate().is_empty());
        assert_eq!(round_trip(&c), c);
        let quiet = parse("[server]\nsend_settings = false\naccept_rate = 2.5\n").unwrap();
        assert_eq!(quiet.accept_rate, Some(2.5));
        assert_eq!(round_trip(&quiet), quiet);
    }

    #[test]
    fn unknown_keys_names_and_bare_numbers_are_rejected() {
        for (text, needle) in [
            ("accept_rte = 10", "accept_rte"),
            ("down_behavior = \"hang\"", "hang"),
            ("overload = \"reject\"", "reject"),
            ("handshake_time = 2", "unit"),
            ("[[server.restart]]\nat = \"1s\"", "down"),
            ("[[server.restart]]\nat = \"1s\"\nduration = \"1s\"", "duration"),
            ("[[server.outage]]\nat = \"1s\"\ndown = \"1s\"", "down"),
            ("burst = -1", "burst"),
        ] {
            let err = parse(&format!("[server]\n{text}\n")).unwrap_err().to_string();
            assert!(err.contains(needle), "{text:?}: {err}");
        }
    }

    #[test]
    fn accept_rate_must_be_a_positive_finite_number_in_range() {
        for rate in [-1.0, 0.0, f64::NAN, f64::INFINITY, 1e-7, 2e9, f64::NEG_INFINITY] {
            let c = ServerConfig { accept_rate: Some(rate), ..ServerConfig::default() };
            assert_eq!(keys(&c), vec!["accept_rate"], "rate {rate}");
        }
        for rate in [MIN_ACCEPT_RATE, 0.5, 1000.0, MAX_ACCEPT_RATE] {
            let c = ServerConfig { accept_rate: Some(rate), ..ServerConfig::default() };
            assert!(c.validate().is_empty(), "rate {rate}");
        }
        // TOML's own nan and inf reach validation, not the parser.
        let c = parse("[server]\naccept_rate = nan\n").unwrap();
        assert!(message(&c, "accept_rate").contains("NaN"));
    }

    #[test]
    fn zero_burst_is_refused_but_a_zero_queue_is_a_plain_rate_limiter() {
        let mut c = ServerConfig { accept_rate: Some(100.0), burst: 0, accept_queue: 0, ..ServerConfig::default() };
        assert_eq!(keys(&c), vec!["burst"]);
        assert!(message(&c, "burst").contains("at least 1"));
        c.burst = 1;
        assert!(c.validate().is_empty());
    }

    #[test]
    fn capacity_keys_without_accept_rate_are_refused() {
        let c = ServerConfig { burst: 5, accept_queue: 7, overload: Overload::Drop, ..ServerConfig::default() };
        assert_eq!(keys(&c), vec!["burst", "accept_queue", "overload"]);
        assert!(message(&c, "accept_queue").contains("only with accept_rate"));
    }

    #[test]
    fn drop_after_must_be_positive_and_needs_settings() {
        let mut c = ServerConfig { drop_after: Some(SimDuration::ZERO), ..ServerConfig::default() };
        assert_eq!(keys(&c), vec!["drop_after"]);
        c.drop_after = Some(s(2));
        assert!(c.validate().is_empty());
        c.send_settings = false;
        assert!(message(&c, "drop_after").contains("send_settings = false"));
    }

    fn restart(at: u64, down: u64) -> Restart {
        Restart { at: s(at), down: s(down) }
    }

    fn outage(at: u64, duration: u64) -> Outage {
        Outage { at: s(at), duration: s(duration) }
    }

    #[test]
    fn down_times_must_be_in_order_and_not_overlap() {
        let mut c = ServerConfig {
            restart: vec![restart(10, 30), restart(5, 1)],
            outage: vec![outage(100, 10), outage(100, 5)],
            ..ServerConfig::default()
        };
        assert_eq!(keys(&c), vec!["restart[1].at", "outage[1].at"]);
        assert!(message(&c, "restart[1].at").contains("time order"));

        c.restart = vec![restart(10, 30), restart(39, 1)];
        c.outage = vec![outage(100, 10)];
        assert_eq!(keys(&c), vec!["restart[1].at"]);
        assert!(message(&c, "restart[1].at").contains("inside restart[0]"));

        // Across the two lists: a restart inside an outage, and the other way round.
        c.restart = vec![restart(10, 30)];
        c.outage = vec![outage(20, 5), outage(50, 10)];
        assert_eq!(keys(&c), vec!["outage[0].at"]);
        c.restart = vec![restart(55, 0)];
        c.outage = vec![outage(50, 10)];
        assert_eq!(keys(&c), vec!["restart[0].at"]);
        assert!(message(&c, "restart[0].at").contains("inside outage[0]"));
    }

    #[test]
    fn back_to_back_and_empty_down_times_are_fine() {
        let c = ServerConfig {
            restart: vec![restart(10, 30), restart(40, 0), restart(41, 5)],
            outage: vec![outage(46, 4), outage(60, 0), outage(70, 1)],
            ..ServerConfig::default()
        };
        assert!(c.validate().is_empty());
        // An empty outage inside a restart's down time overlaps nothing.
        let c = ServerConfig { restart: vec![restart(10, 30)], outage: vec![outage(20, 0)], ..ServerConfig::default() };
        assert!(c.validate().is_empty());
    }
}
