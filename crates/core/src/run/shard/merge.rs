//! Parts back into one run: the checks that make a set of parts exactly one whole run,
//! then the results in work-list order, ready for the same writer a single run uses.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::part::{Part, RESULTS_FILE, SCENARIO_FILE};
use crate::metrics::ReplicationResult;
use crate::run::{Outcome, Work, assemble};
use crate::scenario::{Overrides, Scenario, ScenarioError, load_str_with};

/// Why parts do not merge. Both are bad input: exit 2.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error("{0}")]
    Parts(String),
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
}

/// The whole run the parts make up.
#[derive(Debug)]
pub struct Merged {
    pub scenario: Scenario,
    pub outcome: Outcome,
    pub parts: usize,
}

/// Opens the parts in `dirs`, checks they are every slice of one run exactly once, and
/// puts their results together.
pub fn merge(dirs: &[PathBuf]) -> Result<Merged, MergeError> {
    let parts: Vec<Part> = dirs.iter().map(|d| Part::open(d)).collect::<Result<_, _>>().map_err(MergeError::Parts)?;
    let first = parts.first().ok_or_else(|| MergeError::Parts("no parts to merge".into()))?;
    for part in &parts[1..] {
        same_run(first, part)?;
    }
    if first.manifest.backoffsim_version != env!("CARGO_PKG_VERSION") {
        return Err(MergeError::Parts(format!(
            "{}: written by backoffsim {}, and this is {}: merge with the version that ran the shards",
            first.dir.display(),
            first.manifest.backoffsim_version,
            env!("CARGO_PKG_VERSION")
        )));
    }
    coverage(&parts)?;

    // The scenario as the shards resolved it: the seed and replications they ran with
    // are those of the part, overrides included.
    let m = &first.manifest;
    let label = first.dir.join(SCENARIO_FILE).display().to_string();
    let overrides = Overrides { seed: Some(m.seed), replications: Some(m.replications) };
    let scenario = load_str_with(&label, &first.source, overrides)?;
    if scenario.name != m.scenario {
        return Err(MergeError::Parts(format!(
            "{}: `{}`, but its scenario.toml is named `{}`: the part was changed after it was written",
            first.place("scenario"),
            m.scenario,
            scenario.name
        )));
    }
    let work = Work::of(&scenario);
    if work.len() != m.total_runs {
        return Err(MergeError::Parts(format!(
            "{}: {} runs in all, but its scenario makes {}: the part was not written by this backoffsim",
            first.place("total_runs"),
            m.total_runs,
            work.len()
        )));
    }

    // Each part's results are decoded and checked before anything the size of the whole
    // run is made: a part.json that claims more runs than its results hold is refused
    // without allocating for the claim.
    let mut decoded = Vec::with_capacity(parts.len());
    for part in &parts {
        let shard = part.manifest.shard();
        let expected = shard.places(work.len());
        let damaged = |why: String| {
            MergeError::Parts(format!("{}: {why}; run shard {shard} again", part.dir.join(RESULTS_FILE).display()))
        };
        let entries = part.results().map_err(MergeError::Parts)?;
        // `runs` agrees with the slice: `Part::open` checked it against `total_runs`.
        if entries.len() as u64 != expected.count() {
            return Err(damaged(format!("holds {} runs, and shard {shard} has {}", entries.len(), expected.count())));
        }
        for (j, (place, item, result)) in entries.iter().enumerate() {
            let want = expected.nth(j as u64);
            if *place != want || *item != work.item(want) {
                return Err(damaged(format!("holds run {place} where shard {shard} has run {want}")));
            }
            if let Some(why) = impossible(result, &scenario) {
                return Err(damaged(format!("run {place} {why}, which no run writes")));
            }
        }
        decoded.push(entries);
    }
    let mut slots: Vec<Option<ReplicationResult>> = Vec::new();
    slots.resize_with(decoded.iter().map(Vec::len).sum(), || None);
    for (place, _, result) in decoded.into_iter().flatten() {
        slots[place as usize] = Some(result);
    }
    // Every place is filled: every shard is there once and each held exactly its slice.
    let results: Vec<ReplicationResult> = slots.into_iter().map(|r| r.expect("every slice checked")).collect();
    Ok(Merged { outcome: assemble(&scenario, results), scenario, parts: parts.len() })
}

/// What in a decoded result no run produces, if anything: a metric that is NaN or
/// infinite (one a run cannot compute it leaves without a value), a traced event after
/// the horizon. Bins and series keep NaN on purpose and are not looked at.
fn impossible(result: &ReplicationResult, scenario: &Scenario) -> Option<String> {
    if let Some(m) = result.metrics.iter().find(|m| m.value.is_some_and(|v| !v.is_finite())) {
        return Some(format!("holds `{}` = {}", m.name, m.value.unwrap_or_default()));
    }
    let horizon = scenario.horizon.as_nanos();
    if let Some(row) = result.trace.iter().find(|r| r.time.as_nanos() > horizon) {
        return Some(format!(
            "holds a traced event at {} s, after the horizon ({})",
            crate::metrics::trace::secs(row.time.as_nanos()),
            scenario.horizon
        ));
    }
    None
}

/// Refuses a part of another run than `first`'s, naming what differs.
fn same_run(first: &Part, part: &Part) -> Result<(), MergeError> {
    let (a, b) = (&first.manifest, &part.manifest);
    let fields: [(&str, String, String); 5] = [
        ("scenario_sha256", a.scenario_sha256.clone(), b.scenario_sha256.clone()),
        ("seed", a.seed.to_string(), b.seed.to_string()),
        ("replications", a.replications.to_string(), b.replications.to_string()),
        ("shards (N)", a.shards.to_string(), b.shards.to_string()),
        ("backoffsim_version", a.backoffsim_version.clone(), b.backoffsim_version.clone()),
    ];
    let differ: Vec<String> =
        fields.iter().filter(|(_, x, y)| x != y).map(|(name, x, y)| format!("{name} {y} where it is {x}")).collect();
    if differ.is_empty() {
        return Ok(());
    }
    Err(MergeError::Parts(format!(
        "{} is a part of another run than {} (scenario `{}`): it has {}",
        part.dir.display(),
        first.dir.display(),
        a.scenario,
        differ.join(", ")
    )))
}

/// Refuses a set of parts that gives some shard twice or leaves one out, naming them all.
fn coverage(parts: &[Part]) -> Result<(), MergeError> {
    let n = parts[0].manifest.shards;
    let mut given: BTreeMap<u32, Vec<&Part>> = BTreeMap::new();
    for part in parts {
        given.entry(part.manifest.shard).or_default().push(part);
    }
    let mut problems = Vec::new();
    for (k, dup) in given.iter().filter(|(_, ps)| ps.len() > 1) {
        let dirs: Vec<String> = dup.iter().map(|p| p.dir.display().to_string()).collect();
        problems.push(format!("shard {k}/{n} is given {} times ({})", dup.len(), dirs.join(", ")));
    }
    let missing: Vec<String> = (0..n).filter(|k| !given.contains_key(k)).map(|k| format!("{k}/{n}")).collect();
    if !missing.is_empty() {
        let list = if missing.len() > 12 {
            format!(
                "{} … {} ({} in all)",
                missing[..6].join(", "),
                missing[missing.len() - 3..].join(", "),
                missing.len()
            )
        } else {
            missing.join(", ")
        };
        problems.push(format!(
            "shard(s) {list} missing: run them with `backoffsim run FILE --shard K/{n}` and give their directories too"
        ));
    }
    if problems.is_empty() {
        return Ok(());
    }
    Err(MergeError::Parts(format!(
        "the parts are not every shard of scenario `{}` exactly once: {}",
        parts[0].manifest.scenario,
        problems.join("; ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::time::{SimDuration, SimTime};
    use crate::metrics::MetricValue;
    use crate::metrics::trace::TraceRow;

    #[test]
    fn a_non_finite_metric_or_an_event_after_the_horizon_is_impossible_and_nan_bins_are_not() {
        let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/tcp-blackout.toml");
        let scenario = crate::scenario::load_file(&file).unwrap_or_else(|e| panic!("{e}"));
        let ok = ReplicationResult { metrics: vec![MetricValue::maybe("x", "s", None)], ..Default::default() };
        assert_eq!(impossible(&ok, &scenario), None);
        let nan =
            ReplicationResult { metrics: vec![MetricValue::new("goodput", "calls/s", f64::NAN)], ..Default::default() };
        assert_eq!(impossible(&nan, &scenario).as_deref(), Some("holds `goodput` = NaN"));
        let row = TraceRow {
            time: SimTime(61_000_000_000),
            client: 0,
            event: "send",
            segment: None,
            sample: None,
            srtt: None,
            rttvar: None,
            rto: SimDuration::from_secs(1),
            backoffs: 0,
            cwnd: None,
            ssthresh: None,
            ca_state: None,
        };
        let late = ReplicationResult { trace: vec![row], ..Default::default() };
        assert_eq!(
            impossible(&late, &scenario).as_deref(),
            Some("holds a traced event at 61.000000000 s, after the horizon (1min)")
        );
    }
}
