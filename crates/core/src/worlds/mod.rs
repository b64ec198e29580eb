//! The worlds: one folder per scenario model, its parts in files named for them:
//! `mod.rs` the section's [`ModelSection`] impl (its checks, how it resolves into the spec
//! a replication runs), `config.rs` the section and its spec, `world.rs` the simulation,
//! `estimate.rs` what one replication costs, `metrics.rs` the metrics it writes (the
//! catalogue's entries, which belong to the metrics layer and are reached as
//! `<world>::metrics`), and `tests.rs`. The one list of models (`scenario::models`) turns
//! the impls into the scenario file's sections and the dispatch of a run.
//!
//! A world is built from the sans-IO models of `crate::model` and writes what happened
//! into `crate::metrics`; it knows nothing of files, scenarios or threads.

pub mod calls;
pub mod catalogue;
pub mod estimate;
pub mod grpc;
pub mod jobs;
pub mod occ;
pub mod start;
pub mod tcp;
mod trace;

use std::fmt::Debug;

use serde::Serialize;

use crate::engine::budget::Budget;
use crate::engine::rng::Seeds;
use crate::engine::run::EngineError;
use crate::engine::time::SimDuration;
use crate::metrics::ReplicationResult;
use crate::model::config_error::ConfigErrors;
use crate::model::path::PathConfig;
use crate::model::server::ServerConfig;
use catalogue::{CATALOGUE, Entry};

pub use estimate::Estimate;
pub use trace::TraceConfig;

/// The one list of models, handed to the macro `$then`: each line is
/// `Variant(field: Config)`, `field` being the section's key in a scenario file and
/// `Config` the section's type, which implements [`ModelSection`]. From it come the
/// scenario file's model sections (`scenario::schema::RawScenario`), the resolved
/// `scenario::ModelSpec` and the dispatch over it, and the catalogue's order of the
/// worlds' metrics ([`catalogue::CATALOGUE`]). Adding a model is its folder here and one
/// line below.
macro_rules! for_each_model {
    ($then:ident) => {
        $then! {
            Tcp(tcp: $crate::worlds::tcp::TcpConfig),
            Grpc(grpc: $crate::worlds::grpc::GrpcConfig),
            Occ(occ: $crate::worlds::occ::OccConfig),
            Calls(calls: $crate::worlds::calls::CallsConfig),
            Jobs(jobs: $crate::worlds::jobs::JobsConfig),
        }
    };
}
pub(crate) use for_each_model;

/// One replication to run: what a model's `run` takes besides its spec.
#[derive(Clone, Copy, Debug)]
pub struct Job<'a> {
    pub seeds: Seeds,
    pub replication: u32,
    pub horizon: SimDuration,
    /// The scenario's `max_events`, and the run's total budget it draws on.
    pub budget: Budget<'a>,
}

/// The sections every model may share.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section {
    Path,
    Server,
    Trace,
}

impl Section {
    /// In the order their problems are reported.
    pub const ALL: [Section; 3] = [Section::Server, Section::Path, Section::Trace];

    pub fn name(self) -> &'static str {
        match self {
            Section::Path => "path",
            Section::Server => "server",
            Section::Trace => "trace",
        }
    }
}

/// How a model treats a shared section.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Use {
    /// Read when present; the model has a default.
    Optional,
    /// Must be present; the message tells the user what to write.
    Required(&'static str),
    /// Must be absent (for `[trace]`: left at its default); the message says why it
    /// does not apply.
    Refused(&'static str),
}

/// The shared sections as a model's `resolve` sees them: a section the model refuses is
/// never handed over, so a model cannot read what it did not declare.
#[derive(Clone, Copy, Debug)]
pub struct Shared<'a> {
    pub path: Option<&'a PathConfig>,
    pub server: Option<&'a ServerConfig>,
    pub trace: &'a TraceConfig,
}

/// A simulation model, implemented by its section's config type.
pub trait ModelSection: Sized {
    /// The model's tag: its section's name and its metrics' owner in the catalogue.
    const TAG: catalogue::ModelId;
    /// Everything one replication needs, resolved: no defaults or presets left to look up.
    type Spec: Clone + Debug + Serialize + Send + Sync;
    /// What the section sets up, for a user who has not written one yet
    /// ("connections with RFC 6298 timers").
    const ABOUT: &'static str;

    /// How the model treats the shared `section`.
    fn uses(section: Section) -> Use;
    /// Checks of the section itself, as (key relative to the section, message).
    fn check(&self) -> ConfigErrors;
    /// The clients `[trace] clients` may name, for models that read `[trace]`.
    fn clients(&self) -> u32;
    /// The key and width of the model's `series.csv` bins, if it bins time: the loader
    /// bounds how many a replication makes.
    fn series_bin(&self) -> Option<(&'static str, SimDuration)> {
        None
    }
    /// The spec of a checked section; errors as (full key path, message).
    fn resolve(&self, shared: Shared<'_>) -> Result<Self::Spec, ConfigErrors>;
    /// Runs one replication.
    fn run(spec: &Self::Spec, job: Job<'_>) -> Result<ReplicationResult, EngineError>;
    /// What one replication over `horizon` costs, about: events and memory, for the
    /// guard that refuses a run too large before it starts (`crate::run::guard`).
    fn estimate(spec: &Self::Spec, horizon: SimDuration) -> Estimate;

    /// The model's metrics, in catalogue order.
    fn metrics() -> Vec<&'static Entry> {
        CATALOGUE.iter().filter(|e| e.models.contains(&Self::TAG)).collect()
    }
}

/// Errors of a part of a section, their keys placed under `prefix`.
pub fn prefixed(prefix: &str, errors: ConfigErrors) -> ConfigErrors {
    let mut out = ConfigErrors::new();
    out.extend_under(prefix, errors);
    out
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    fn sources(dir: &Path, out: &mut Vec<(String, String)>) {
        for entry in std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()) {
            if entry.is_dir() {
                sources(&entry, out);
            } else if entry.extension().is_some_and(|x| x == "rs") {
                out.push((entry.display().to_string(), std::fs::read_to_string(&entry).unwrap()));
            }
        }
    }

    /// A world's metric takes its id and unit from its catalogue entry
    /// (`MetricValue::of`): the constructors that take a bare id are for values that no
    /// world wrote, so no world calls them and no metric goes out without an entry.
    #[test]
    fn worlds_write_metrics_only_through_their_entries() {
        let mut files = Vec::new();
        sources(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src/worlds"), &mut files);
        assert!(files.len() > 20, "{} files", files.len());
        for (path, text) in files {
            // Spelled in two parts so that this file does not match itself.
            for call in ["new(", "maybe("].map(|f| format!("MetricValue::{f}")) {
                assert!(!text.contains(&call), "{path} calls {call}: name the metric's entry");
            }
        }
    }
}
