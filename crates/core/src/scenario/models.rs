//! What the one list of models (`worlds::for_each_model!`) gives the loader: the
//! resolved `ModelSpec`, the dispatch over it, and the loader's view of the model
//! sections.

use serde::Serialize;

use crate::engine::run::EngineError;
use crate::engine::time::SimDuration;
use crate::metrics::ReplicationResult;
use crate::model::config_error::ConfigErrors;
use crate::worlds::catalogue::{self, Entry};
use crate::worlds::{Estimate, Job, ModelSection, Section, Shared, TraceConfig, Use, prefixed};

use super::schema::RawScenario;

/// Generates the resolved `ModelSpec` and the dispatch over it from the list of models.
macro_rules! models {
    ($($variant:ident($field:ident: $config:ty)),* $(,)?) => {
        /// The model a scenario runs, fully resolved.
        #[derive(Clone, Debug, Serialize)]
        #[serde(tag = "model", rename_all = "kebab-case")]
        pub enum ModelSpec {
            // Boxed: specs differ a lot in size (a resolved retry policy is large).
            $($variant(Box<<$config as ModelSection>::Spec>)),*
        }

        /// Every model, in the order the loader names them.
        pub const MODELS: &[catalogue::ModelId] = &[$(<$config as ModelSection>::TAG),*];

        impl ModelSpec {
            pub fn model(&self) -> catalogue::ModelId {
                match self {
                    $(ModelSpec::$variant(_) => <$config as ModelSection>::TAG),*
                }
            }

            pub fn run(&self, job: Job<'_>) -> Result<ReplicationResult, EngineError> {
                match self {
                    $(ModelSpec::$variant(spec) => <$config as ModelSection>::run(spec, job)),*
                }
            }

            pub fn estimate(&self, horizon: SimDuration) -> Estimate {
                match self {
                    $(ModelSpec::$variant(spec) => <$config as ModelSection>::estimate(spec, horizon)),*
                }
            }
        }

        /// "a `[tcp]` table (connections with RFC 6298 timers), …, or an `[occ]` table (…)":
        /// the sections a scenario may choose from.
        pub fn choices() -> String {
            let each: Vec<String> = [$((<$config as ModelSection>::TAG.name(), <$config as ModelSection>::ABOUT)),*]
                .iter()
                .map(|(name, about)| {
                    let article = if name.starts_with(['a', 'e', 'i', 'o', 'u']) { "an" } else { "a" };
                    format!("{article} [{name}] table ({about})")
                })
                .collect();
            crate::human::or_list(&each)
        }

        /// The model sections `raw` has, in list order.
        pub fn present(raw: &RawScenario) -> Vec<catalogue::ModelId> {
            let mut found = Vec::new();
            $(if raw.$field.is_some() { found.push(<$config as ModelSection>::TAG); })*
            found
        }

        /// `model`'s own checks and its use of the shared sections, as (key, message).
        pub fn check(model: catalogue::ModelId, raw: &RawScenario) -> ConfigErrors {
            $(if model == <$config as ModelSection>::TAG {
                if let Some(config) = &raw.$field {
                    return check_one(config, raw);
                }
            })*
            ConfigErrors::new()
        }

        /// Resolves `model`'s section of a checked scenario.
        pub fn resolve(model: catalogue::ModelId, raw: &RawScenario) -> Result<ModelSpec, ConfigErrors> {
            $(if model == <$config as ModelSection>::TAG {
                if let Some(config) = &raw.$field {
                    return resolve_one(config, raw).map(|s| ModelSpec::$variant(Box::new(s)));
                }
            })*
            let mut errors = ConfigErrors::new();
            errors.push("", format!("no [{}] section", model.name()));
            Err(errors)
        }

        /// The metrics of `model`, in catalogue order.
        pub fn metrics(model: catalogue::ModelId) -> Vec<&'static Entry> {
            $(if model == <$config as ModelSection>::TAG {
                return <$config as ModelSection>::metrics();
            })*
            Vec::new()
        }
    };
}

crate::worlds::for_each_model!(models);

/// The problems of a scenario running `config`'s model, besides the top-level keys'.
fn check_one<M: ModelSection>(config: &M, raw: &RawScenario) -> ConfigErrors {
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

fn resolve_one<M: ModelSection>(config: &M, raw: &RawScenario) -> Result<M::Spec, ConfigErrors> {
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
        assert_eq!(listed, catalogue::ModelId::ALL.to_vec());
    }

    #[test]
    fn the_choices_name_every_section_with_its_article() {
        assert_eq!(
            choices(),
            "a [tcp] table (connections with RFC 6298 timers), a [grpc] table (channels reconnecting to one \
             server), an [occ] table (clients contending for one row), a [calls] table (calls retried by a policy) or a [jobs] \
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
