//! What a model is to the rest of the simulator, and the one list of models.
//!
//! A model is its section's config type (`[tcp]` is `TcpConfig`) implementing `Model`:
//! the checks of its section, which shared sections (`[path]`, `[server]`, `[trace]`) it
//! reads, how it resolves into the spec a replication runs, how it runs one replication,
//! and its metrics in the catalogue. The loader, the run loop and the manifest go
//! through the list at the bottom of this file (`models!`), so adding a model is its
//! config, its world (which implements this trait), one line here and one field of
//! `RawScenario`, plus its catalogue entries.
//!
//! The trait lives beside the file format rather than in `sim` so that the loader can
//! use it without depending on the worlds: `sim` implements `run`, `scenario` calls it.

use crate::model::config_error::ConfigErrors;
use std::fmt::Debug;

use serde::Serialize;

use crate::engine::budget::Budget;
use crate::engine::rng::Seeds;
use crate::engine::run::EngineError;
use crate::engine::time::SimDuration;
use crate::guard::Estimate;
use crate::metrics::ReplicationResult;
use crate::metrics::catalogue::{self, CATALOGUE, Entry};
use crate::model::path::PathConfig;
use crate::model::server::ServerConfig;
use crate::model::tcp::TcpConfig;

use super::calls::CallsConfig;
use super::grpc::GrpcConfig;
use super::jobs::JobsConfig;
use super::occ::OccConfig;
use super::schema::{RawScenario, TraceConfig};

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
pub trait Model: Sized {
    /// The model's tag: its section's name and its metrics' owner in the catalogue.
    const TAG: catalogue::Model;
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
    /// guard that refuses a run too large before it starts (`crate::guard`).
    fn estimate(spec: &Self::Spec, horizon: SimDuration) -> Estimate;

    /// The model's metrics, in catalogue order.
    fn metrics() -> Vec<&'static Entry> {
        CATALOGUE.iter().filter(|e| e.models.contains(&Self::TAG)).collect()
    }
}

/// The one list of models: generates the resolved `ModelSpec` and the dispatch over it.
/// Each line is `Variant(field: Config)`, `field` being the section's key in
/// `RawScenario`.
macro_rules! models {
    ($($variant:ident($field:ident: $config:ty)),* $(,)?) => {
        /// The model a scenario runs, fully resolved.
        #[derive(Clone, Debug, Serialize)]
        #[serde(tag = "model", rename_all = "kebab-case")]
        pub enum ModelSpec {
            // Boxed: specs differ a lot in size (a resolved retry policy is large).
            $($variant(Box<<$config as Model>::Spec>)),*
        }

        /// Every model, in the order the loader names them.
        pub const MODELS: &[catalogue::Model] = &[$(<$config as Model>::TAG),*];

        impl ModelSpec {
            pub fn model(&self) -> catalogue::Model {
                match self {
                    $(ModelSpec::$variant(_) => <$config as Model>::TAG),*
                }
            }

            pub fn run(&self, job: Job<'_>) -> Result<ReplicationResult, EngineError> {
                match self {
                    $(ModelSpec::$variant(spec) => <$config as Model>::run(spec, job)),*
                }
            }

            pub fn estimate(&self, horizon: SimDuration) -> Estimate {
                match self {
                    $(ModelSpec::$variant(spec) => <$config as Model>::estimate(spec, horizon)),*
                }
            }
        }

        /// "a `[tcp]` table (connections with RFC 6298 timers), …, or an `[occ]` table (…)":
        /// the sections a scenario may choose from.
        pub fn choices() -> String {
            let each: Vec<String> = [$((<$config as Model>::TAG.name(), <$config as Model>::ABOUT)),*]
                .iter()
                .map(|(name, about)| {
                    let article = if name.starts_with(['a', 'e', 'i', 'o', 'u']) { "an" } else { "a" };
                    format!("{article} [{name}] table ({about})")
                })
                .collect();
            crate::human::or_list(&each)
        }

        /// The model sections `raw` has, in list order.
        pub fn present(raw: &RawScenario) -> Vec<catalogue::Model> {
            let mut found = Vec::new();
            $(if raw.$field.is_some() { found.push(<$config as Model>::TAG); })*
            found
        }

        /// `model`'s own checks and its use of the shared sections, as (key, message).
        pub fn check(model: catalogue::Model, raw: &RawScenario) -> ConfigErrors {
            $(if model == <$config as Model>::TAG {
                if let Some(config) = &raw.$field {
                    return check_one(config, raw);
                }
            })*
            ConfigErrors::new()
        }

        /// Resolves `model`'s section of a checked scenario.
        pub fn resolve(model: catalogue::Model, raw: &RawScenario) -> Result<ModelSpec, ConfigErrors> {
            $(if model == <$config as Model>::TAG {
                if let Some(config) = &raw.$field {
                    return resolve_one(config, raw).map(|s| ModelSpec::$variant(Box::new(s)));
                }
            })*
            let mut errors = ConfigErrors::new();
            errors.push("", format!("no [{}] section", model.name()));
            Err(errors)
        }

        /// The metrics of `model`, in catalogue order.
        pub fn metrics(model: catalogue::Model) -> Vec<&'static Entry> {
            $(if model == <$config as Model>::TAG {
                return <$config as Model>::metrics();
            })*
            Vec::new()
        }
    };
}

models! {
    Tcp(tcp: TcpConfig),
    Grpc(grpc: GrpcConfig),
    Calls(calls: CallsConfig),
    Occ(occ: OccConfig),
    Jobs(jobs: JobsConfig),
}

/// The problems of a scenario running `config`'s model, besides the top-level keys'.
fn check_one<M: Model>(config: &M, raw: &RawScenario) -> ConfigErrors {
    let mut errors = prefixed(M::TAG.name(), config.check());
    if let Some((key, bin)) = config.series_bin()
        && let Some(why) = too_many_bins(bin, raw.horizon)
    {
        errors.push(format!("{}.{key}", M::TAG.name()), why);
    }
    for shared in Section::ALL {
        let present = match shared {
            Section::Path => raw.path.is_some(),
            Section::Server => raw.server.is_some(),
            Section::Trace => raw.trace != TraceConfig::default(),
        };
        match (M::uses(shared), present) {
            (Use::Refused(why), true) => errors.push(shared.name(), why),
            (Use::Required(what), false) => errors.push("", what),
            (Use::Refused(_), false) | (Use::Optional, false) => {}
            (Use::Optional | Use::Required(_), true) => {
                errors.extend_under("", check_shared(shared, config.clients(), raw))
            }
        }
    }
    errors
}

/// Bins one replication may make: a million rows of a few numbers each is already tens
/// of megabytes per replication in memory and in `series.csv`.
pub const MAX_BINS: u64 = 1_000_000;

/// Why bins of `bin` over `horizon` are too many (or too small to count), if they are.
fn too_many_bins(bin: SimDuration, horizon: SimDuration) -> Option<String> {
    if bin == SimDuration::ZERO {
        return None; // the section's own check says so
    }
    let bins = horizon.as_nanos().div_ceil(bin.as_nanos());
    (bins > MAX_BINS).then(|| {
        let least = SimDuration(horizon.as_nanos().div_ceil(MAX_BINS));
        format!(
            "{bin} bins over the horizon of {horizon} make {bins} bins per replication; at most {MAX_BINS}: \
             make bins at least {least} wide"
        )
    })
}

/// A shared section's own checks, for a model that reads it.
fn check_shared(section: Section, clients: u32, raw: &RawScenario) -> ConfigErrors {
    match section {
        Section::Path => raw.path.as_ref().map(|p| prefixed("path", p.validate())).unwrap_or_default(),
        Section::Server => raw.server.as_ref().map(|s| prefixed("server", s.validate())).unwrap_or_default(),
        Section::Trace => {
            let mut errors = ConfigErrors::new();
            // Without clients the section's own check has said so.
            let missing = |c: u32| clients > 0 && c >= clients;
            for (i, c) in raw.trace.clients.iter().enumerate().filter(|(_, c)| missing(**c)) {
                errors.push(
                    format!("trace.clients[{i}]"),
                    format!("client {c} does not exist: clients are numbered 0 to {}", clients - 1),
                );
            }
            for (i, r) in raw.trace.replications.iter().enumerate().filter(|(_, r)| **r >= raw.replications) {
                errors.push(
                    format!("trace.replications[{i}]"),
                    format!(
                        "replication {r} does not exist: replications are numbered 0 to {}",
                        raw.replications.saturating_sub(1)
                    ),
                );
            }
            errors
        }
    }
}

/// Errors of a part of a section, their keys placed under `prefix`.
pub fn prefixed(prefix: &str, errors: ConfigErrors) -> ConfigErrors {
    let mut out = ConfigErrors::new();
    out.extend_under(prefix, errors);
    out
}

fn resolve_one<M: Model>(config: &M, raw: &RawScenario) -> Result<M::Spec, ConfigErrors> {
    let reads = |s: Section| !matches!(M::uses(s), Use::Refused(_));
    let shared = Shared {
        path: raw.path.as_ref().filter(|_| reads(Section::Path)),
        server: raw.server.as_ref().filter(|_| reads(Section::Server)),
        trace: &raw.trace,
    };
    config.resolve(shared)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_names_every_catalogue_model_once() {
        let mut listed = MODELS.to_vec();
        listed.sort();
        assert_eq!(listed, catalogue::Model::ALL.to_vec());
    }

    #[test]
    fn the_choices_name_every_section_with_its_article() {
        assert_eq!(
            choices(),
            "a [tcp] table (connections with RFC 6298 timers), a [grpc] table (channels reconnecting to one \
             server), a [calls] table (calls retried by a policy), an [occ] table (clients contending for one row) or a [jobs] \
             table (a job queue with asynchronous retry)"
        );
    }

    #[test]
    fn every_model_declares_metrics_and_a_headline() {
        for &m in MODELS {
            let entries = metrics(m);
            assert!(!entries.is_empty(), "{}", m.name());
            assert!(entries.iter().all(|e| e.models.contains(&m)), "{}", m.name());
            assert!(entries.iter().any(|e| e.is_headline_for(&[m])), "{}", m.name());
        }
    }
}
