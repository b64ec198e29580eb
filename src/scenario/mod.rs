//! Scenario files: TOML as written (`schema::RawScenario`) is checked and resolved once
//! into a `Scenario`, and only that reaches the engine.
//!
//! A file may declare `[[variant]]`s: each has a `name`, an optional `description` and
//! any keys of the model sections, which override the base. With variants, the runs are
//! the variants (the first is the baseline of comparisons); without, the base runs as
//! one variant named `base`.

pub mod diag;
pub mod load;
mod resolve;
pub mod schema;

use serde::Serialize;

use crate::engine::time::SimDuration;
use crate::model::path::PathConfig;
use crate::model::rto::RtoParams;
use crate::model::tcp::TcpConfig;

pub use diag::{Diagnostic, ScenarioError};
pub use resolve::{load_file, load_str};
pub use schema::TraceConfig;

/// A checked scenario, every default filled in.
#[derive(Clone, Debug)]
pub struct Scenario {
    pub name: String,
    pub description: String,
    pub seed: u64,
    pub replications: u32,
    pub horizon: SimDuration,
    pub max_events: u64,
    /// SHA-256 of the file's bytes, hex.
    pub source_sha256: String,
    pub variants: Vec<Variant>,
}

#[derive(Clone, Debug)]
pub struct Variant {
    pub name: String,
    pub description: String,
    pub spec: ModelSpec,
}

/// The model a scenario runs, fully resolved.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "model", rename_all = "kebab-case")]
pub enum ModelSpec {
    Tcp(TcpSpec),
}

#[derive(Clone, Debug, Serialize)]
pub struct TcpSpec {
    pub tcp: TcpConfig,
    /// The estimator's constants with the profile's defaults filled in.
    pub rto: RtoParams,
    pub path: PathConfig,
    pub trace: TraceConfig,
}
