//! Hand-made load series for the load plot's tests, written through the real writer: an
//! 80 %-load calls service whose server restarts at 60 s, in one variant collapsing into
//! a retry storm it never leaves (goodput falls to 0 while offered load doubles) and in
//! the other recovering once the server is back.

use std::path::Path;

use backoffsim::engine::time::SimDuration;
use backoffsim::metrics::series::Series;
use backoffsim::metrics::{MetricValue, ReplicationResult};
use backoffsim::run::Outcome;

pub const SCENARIO: &str = r#"
name = "load-synthetic"
description = "A service at 80 % load whose server restarts at 60 s: does it come back?"
seed = 1
replications = 3
horizon = "3min"

[calls]
clients = 100
attempt_time = "100ms"

[[server.restart]]
at = "60s"
down = "10s"

[[variant]]
name = "collapse"
description = "retries on every failure: the storm outlives the restart"

[[variant]]
name = "recover"
description = "a retry budget: the backlog drains"
"#;

pub const COLUMNS: [&str; 12] = [
    "calls",
    "attempts",
    "retries",
    "succeeded",
    "failed",
    "timed_out",
    "rejected",
    "busy_s",
    "wasted_s",
    "queue_max",
    "capacity",
    "retry_share",
];

/// One replication's series: 1 s bins, a server of 100 workers serving 1000 attempts/s,
/// 800 calls/s arriving; the server is down from 60 s to 70 s.
pub fn series(collapse: bool, rep: u32) -> Series {
    let horizon = SimDuration::from_secs(180);
    let mut s = Series::new(SimDuration::from_secs(1), horizon, &COLUMNS);
    let wobble = |i: usize| ((i * 7 + rep as usize * 13) % 11) as f64 - 5.0;
    for i in 0..s.bins() {
        let t = i as f64;
        let calls = 800.0 + wobble(i);
        let down = (60.0..70.0).contains(&t);
        let retries = match (collapse, t) {
            (_, t) if t < 60.0 => 8.0,
            (_, t) if t < 70.0 => 700.0 + (t - 60.0) * 40.0,
            (true, t) => (800.0 + (t - 70.0) * 20.0).min(900.0),
            (false, t) => 600.0 * (-(t - 70.0) / 8.0).exp() + 8.0,
        };
        let attempts = calls + retries;
        let capacity = if down { 0.0 } else { 1000.0 };
        let served = attempts.min(capacity);
        let succeeded = if collapse && t >= 70.0 { 0.0 } else { served.min(calls) };
        let busy = served / 10.0;
        let wasted = if down { 0.0 } else { (served - succeeded).max(0.0) / 10.0 };
        let row = [
            calls,
            attempts,
            retries,
            succeeded,
            attempts - succeeded,
            if collapse && t >= 70.0 { served } else { 0.0 },
            (attempts - capacity).max(0.0),
            busy,
            wasted,
            (attempts - served).max(0.0),
            if down { f64::NAN } else { capacity },
            retries / attempts,
        ];
        for (c, v) in row.into_iter().enumerate() {
            s.columns[c].1[i] = v;
        }
    }
    s
}

/// The synthetic run's results, as the simulator would hand them to the writer.
pub fn outcome() -> Outcome {
    let variant = |collapse: bool| {
        vec![
            (0..3)
                .map(|rep| ReplicationResult {
                    metrics: vec![MetricValue::new("success_rate", "fraction", if collapse { 0.4 } else { 0.95 })],
                    series: Some(series(collapse, rep)),
                    ..ReplicationResult::default()
                })
                .collect(),
        ]
    };
    Outcome { results: vec![variant(true), variant(false)] }
}

/// Writes the synthetic run into `dir` through the run's own writer.
pub fn write(dir: &Path) {
    let scenario = backoffsim::scenario::load_str("load-synthetic.toml", SCENARIO).expect("the scenario checks");
    let dest = backoffsim::run::destination::Destination::claim(dir, "--out").expect("the place is free");
    backoffsim::output::write_results(&scenario, &outcome(), &dest).expect("the results are written");
}
