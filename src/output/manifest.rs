//! `manifest.json`: what a run was (scenario, seed, every variant's and cell's resolved
//! parameters, events per replication), what its metrics mean and which files it wrote.
//!
//! The manifest owns copies of what it lists, so that serializing it, and reading the
//! report's facts back out of it, can run on a thread of their own
//! ([`crate::interrupt::abandonable`]): a path of 100,000 blackouts makes a manifest of
//! tens of megabytes, whose serialization cannot stop part way for a Ctrl-C.

use serde::Serialize;

use crate::interrupt::Interrupted;
use crate::metrics::catalogue;
use crate::scenario::{ModelSpec, Scenario};
use crate::sim::Outcome;

#[derive(Serialize)]
pub struct Manifest {
    backoffsim_version: &'static str,
    scenario: String,
    description: String,
    scenario_sha256: String,
    seed: u64,
    replications: u32,
    horizon: String,
    max_events: u64,
    sweep_keys: Vec<String>,
    variants: Vec<ManifestVariant>,
    /// What every metric the run's models can write means, in catalogue order, so that
    /// a reader of `summary.csv` needs nothing else.
    metrics: Vec<ManifestMetric>,
    pub files: Vec<String>,
}

#[derive(Serialize)]
struct ManifestMetric {
    /// The model that writes it: an id may mean different things in two models.
    model: &'static str,
    /// A numbered family (`spread_attempt{k}`) keeps `{k}` for the number.
    id: &'static str,
    title: &'static str,
    unit: &'static str,
    /// `lower`, `higher`, or null when neither is better.
    better: Option<&'static str>,
    doc: &'static str,
}

/// The catalogue entries of the models `scenario` runs, each model's in catalogue order.
fn metric_catalogue(scenario: &Scenario) -> Vec<ManifestMetric> {
    let mut models: Vec<catalogue::Model> =
        scenario.variants.iter().flat_map(|v| v.cells.iter().map(|c| c.spec.model())).collect();
    models.sort();
    models.dedup();
    models
        .into_iter()
        .flat_map(|m| {
            crate::scenario::models::metrics(m).into_iter().map(move |e| ManifestMetric {
                model: m.name(),
                id: e.id,
                title: e.title,
                unit: e.unit,
                better: e.better.map(|b| match b {
                    catalogue::Better::Lower => "lower",
                    catalogue::Better::Higher => "higher",
                }),
                doc: e.doc,
            })
        })
        .collect()
}

#[derive(Serialize)]
struct ManifestVariant {
    name: String,
    description: String,
    /// The first cell's fully resolved parameters; other cells differ in the swept keys,
    /// whose values `cells` lists, and in what follows from them (each swept cell's
    /// `parameters` has it all).
    parameters: ModelSpec,
    cells: Vec<ManifestCell>,
}

#[derive(Serialize)]
struct ManifestCell {
    /// The swept values, in the order of `sweep_keys`.
    sweep: Vec<String>,
    /// Events handled by each replication, in replication order.
    events: Vec<u64>,
    /// The cell's fully resolved parameters, written when the variant has several cells:
    /// a swept value can move what plots draw per cell (a restart's down time, a
    /// blackout), and a derived value (e.g. the server outage `calls.outage` makes) is
    /// not in `sweep`.
    #[serde(skip_serializing_if = "Option::is_none")]
    parameters: Option<ModelSpec>,
}

impl Manifest {
    /// The manifest of a run that wrote `files`; it looks at the interrupt flag once per
    /// sweep cell it copies.
    pub fn of(scenario: &Scenario, outcome: &Outcome, files: Vec<String>) -> Result<Manifest, Interrupted> {
        let mut variants = Vec::with_capacity(scenario.variants.len());
        for (v, cells) in scenario.variants.iter().zip(&outcome.results) {
            let mut listed = Vec::with_capacity(v.cells.len());
            for (cell, reps) in v.cells.iter().zip(cells) {
                crate::interrupt::check()?;
                listed.push(ManifestCell {
                    sweep: cell.sweep.clone(),
                    events: reps.iter().map(|r| r.events).collect(),
                    parameters: (v.cells.len() > 1).then(|| cell.spec.clone()),
                });
            }
            let Some(first) = v.cells.first() else { continue };
            variants.push(ManifestVariant {
                name: v.name.clone(),
                description: v.description.clone(),
                parameters: first.spec.clone(),
                cells: listed,
            });
        }
        Ok(Manifest {
            backoffsim_version: env!("CARGO_PKG_VERSION"),
            scenario: scenario.name.clone(),
            description: scenario.description.clone(),
            scenario_sha256: scenario.source_sha256.clone(),
            seed: scenario.seed,
            replications: scenario.replications,
            horizon: scenario.horizon.to_string(),
            max_events: scenario.max_events,
            sweep_keys: scenario.sweep_keys.clone(),
            variants,
            metrics: metric_catalogue(scenario),
            files,
        })
    }

    /// The text of `manifest.json`: pretty JSON and a final newline.
    pub fn json(&self) -> Result<Vec<u8>, serde_json::Error> {
        let mut json = serde_json::to_vec_pretty(self)?;
        json.push(b'\n');
        Ok(json)
    }
}
