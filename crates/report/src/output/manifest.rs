//! `manifest.json`: what a run was (scenario, seed, every variant's and cell's resolved
//! parameters, events per replication), what its metrics mean and which files it wrote.
//!
//! A path of 100,000 blackouts makes a manifest of tens of megabytes, and serde cannot
//! stop part way for a Ctrl-C: the text goes through a writer that looks at the
//! interrupt flag at every write, and the JSON tree the report reads is built a variant
//! at a time, with a look between.

use serde::Serialize;
use serde_json::Value;

use super::OutputError;
use backoffsim_core::run::Outcome;
use backoffsim_core::run::interrupt::Interrupted;
use backoffsim_core::scenario::{ModelSpec, Scenario};
use backoffsim_core::worlds::catalogue;

#[derive(Serialize)]
pub struct Manifest<'a> {
    backoffsim_version: &'static str,
    scenario: &'a str,
    description: &'a str,
    scenario_sha256: &'a str,
    seed: u64,
    replications: u32,
    horizon: String,
    max_events: u64,
    sweep_keys: &'a [String],
    variants: Vec<ManifestVariant<'a>>,
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
    let mut models: Vec<catalogue::ModelId> =
        scenario.variants.iter().flat_map(|v| v.cells.iter().map(|c| c.spec.model())).collect();
    models.sort();
    models.dedup();
    models
        .into_iter()
        .flat_map(|m| {
            backoffsim_core::scenario::models::metrics(m).into_iter().map(move |e| ManifestMetric {
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
struct ManifestVariant<'a> {
    name: &'a str,
    description: &'a str,
    /// The first cell's fully resolved parameters; other cells differ in the swept keys,
    /// whose values `cells` lists, and in what follows from them (each swept cell's
    /// `parameters` has it all).
    parameters: &'a ModelSpec,
    cells: Vec<ManifestCell<'a>>,
}

#[derive(Serialize)]
struct ManifestCell<'a> {
    /// The swept values, in the order of `sweep_keys`.
    sweep: &'a [String],
    /// Events handled by each replication, in replication order.
    events: Vec<u64>,
    /// The cell's fully resolved parameters, written when the variant has several cells:
    /// a swept value can move what plots draw per cell (a restart's down time, a
    /// blackout), and a derived value (e.g. the server outage `calls.outage` makes) is
    /// not in `sweep`.
    #[serde(skip_serializing_if = "Option::is_none")]
    parameters: Option<&'a ModelSpec>,
}

impl<'a> Manifest<'a> {
    /// The manifest of a run that wrote `files`; it looks at the interrupt flag once per
    /// sweep cell it copies.
    pub fn of(scenario: &'a Scenario, outcome: &Outcome, files: Vec<String>) -> Result<Manifest<'a>, Interrupted> {
        let mut variants = Vec::with_capacity(scenario.variants.len());
        for (v, cells) in scenario.variants.iter().zip(&outcome.results) {
            let mut listed = Vec::with_capacity(v.cells.len());
            for (cell, reps) in v.cells.iter().zip(cells) {
                backoffsim_core::run::interrupt::check()?;
                listed.push(ManifestCell {
                    sweep: &cell.sweep,
                    events: reps.iter().map(|r| r.events).collect(),
                    parameters: (v.cells.len() > 1).then_some(&cell.spec),
                });
            }
            let Some(first) = v.cells.first() else { continue };
            variants.push(ManifestVariant {
                name: &v.name,
                description: &v.description,
                parameters: &first.spec,
                cells: listed,
            });
        }
        Ok(Manifest {
            backoffsim_version: env!("CARGO_PKG_VERSION"),
            scenario: &scenario.name,
            description: &scenario.description,
            scenario_sha256: &scenario.source_sha256,
            seed: scenario.seed,
            replications: scenario.replications,
            horizon: scenario.horizon.to_string(),
            max_events: scenario.max_events,
            sweep_keys: &scenario.sweep_keys,
            variants,
            metrics: metric_catalogue(scenario),
            files,
        })
    }

    /// The text of `manifest.json`: pretty JSON and a final newline.
    pub fn json(&self) -> Result<Vec<u8>, OutputError> {
        let mut json = Vec::new();
        serde_json::to_writer_pretty(Looking(&mut json), self).map_err(|e| stopped_or(e.into()))?;
        json.push(b'\n');
        Ok(json)
    }

    /// The manifest as the JSON tree `manifest.json` parses to, built a variant at a time.
    pub fn tree(&mut self) -> Result<Value, OutputError> {
        let variants = std::mem::take(&mut self.variants);
        let head = serde_json::to_value(&*self);
        self.variants = variants;
        let mut head = head?;
        let mut listed = Vec::with_capacity(self.variants.len());
        for v in &self.variants {
            backoffsim_core::run::interrupt::check()?;
            listed.push(serde_json::to_value(v)?);
        }
        if let Value::Object(fields) = &mut head {
            fields.insert("variants".to_string(), Value::Array(listed));
        }
        Ok(head)
    }
}

/// A buffer that refuses a write once a stop was requested, so that serde gives up.
struct Looking<'a>(&'a mut Vec<u8>);

impl std::io::Write for Looking<'_> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        if backoffsim_core::run::interrupt::requested() {
            // Not `ErrorKind::Interrupted`: `write_all` would retry it.
            return Err(std::io::Error::other("a stop was requested"));
        }
        self.0.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// `e`, or the interrupt that caused it.
fn stopped_or(e: OutputError) -> OutputError {
    if backoffsim_core::run::interrupt::requested() { OutputError::Interrupted } else { e }
}

#[cfg(test)]
mod tests {
    use super::*;
    use backoffsim_core::metrics::ReplicationResult;

    #[test]
    fn the_text_and_the_tree_built_a_variant_at_a_time_are_serdes_own() {
        let scenario = backoffsim_core::scenario::load_str(
            "s.toml",
            "name = \"m\"\ndescription = \"d\"\nhorizon = \"10s\"\nreplications = 2\n[tcp]\nclients = 1\n\
             workload = { kind = \"steady\", interval = \"1s\" }\n\
             [path]\nbase_rtt = \"100ms\"\n[[path.blackout]]\nat = \"1s\"\nduration = \"2s\"\n\
             [sweep]\n\"tcp.window\" = [2, 4]\n[[variant]]\nname = \"a\"\n[[variant]]\nname = \"b\"\n\
             tcp.rto.profile = \"linux\"\n",
        )
        .unwrap();
        let rep = |events| ReplicationResult { events, ..ReplicationResult::default() };
        let outcome = Outcome {
            results: (0..2).map(|v| (0..2).map(|c| vec![rep(v * 10 + c), rep(v * 10 + c + 5)]).collect()).collect(),
        };
        let mut manifest = Manifest::of(&scenario, &outcome, vec!["summary.csv".into()]).unwrap();
        let mut text = serde_json::to_vec_pretty(&manifest).unwrap();
        text.push(b'\n');
        assert!(manifest.json().unwrap() == text, "manifest.json differs from serde's own text");
        let tree = manifest.tree().unwrap();
        assert_eq!(tree, serde_json::to_value(&manifest).unwrap());
        assert_eq!(tree["variants"][1]["cells"][1]["events"], serde_json::json!([11, 16]));
        assert_eq!(tree["variants"][0]["cells"][0]["parameters"]["path"]["blackout"][0]["at"], "1s");
    }
}
