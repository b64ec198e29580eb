//! Running replication 0 of a `[tcp]` scenario written inline, and reading its trace and
//! metrics, for the world's tests.

use super::run_replication;
use crate::engine::time::{SimDuration, SimTime};
use crate::metrics::ReplicationResult;
use crate::metrics::trace::TraceEvent;
use crate::scenario::{ModelSpec, load_str};

/// Replication 0, seed 1, of the scenario `text`.
pub(super) fn run_text(text: &str) -> ReplicationResult {
    let scenario = load_str("t.toml", text).unwrap_or_else(|e| panic!("{e}"));
    let ModelSpec::Tcp(spec) = &scenario.variants[0].cells[0].spec else { panic!("not a tcp scenario") };
    let job = crate::worlds::Job {
        seeds: crate::engine::rng::Seeds::new(1),
        replication: 0,
        horizon: scenario.horizon,
        budget: crate::engine::budget::Budget::replication(scenario.max_events),
    };
    run_replication(spec, job).unwrap()
}

pub(super) fn times(r: &ReplicationResult, event: TraceEvent) -> Vec<SimTime> {
    r.trace.iter().filter(|row| row.event == event.name()).map(|row| row.time).collect()
}

pub(super) fn value(r: &ReplicationResult, name: &str) -> Option<f64> {
    r.metrics.iter().find(|m| m.name == name).unwrap_or_else(|| panic!("no {name}")).value
}

pub(super) fn ms(ms: u64) -> SimTime {
    SimTime::ZERO + SimDuration::from_millis(ms)
}
