//! Scenario files: TOML as written (`schema::RawScenario`) is checked and resolved once
//! into a `Scenario`, and only that reaches the engine.
//!
//! A file may declare `[[variant]]`s: each has a `name`, an optional `description` and
//! any keys of the model sections, which override the base. With variants, the runs are
//! the variants (the first is the baseline of comparisons); without, the base runs as
//! one variant named `base`. A `[sweep]` grid (see `sweep`) multiplies every variant
//! into cells.
//!
//! A file runs exactly one model, chosen by its section (`[tcp]`, `[grpc]`, `[calls]`,
//! `[occ]`, `[jobs]`); what each model checks, reads and runs is its `models::Model` impl.

pub mod diag;
mod horizon;
pub mod json_schema;
pub mod keys;
pub mod load;
pub mod models;
mod resolve;
pub mod schema;
pub mod sets;
pub mod sweep;

use crate::engine::time::SimDuration;

pub use crate::worlds::TraceConfig;
pub use diag::{Diagnostic, ScenarioError};
pub use models::ModelSpec;
pub use resolve::{
    NAME_MAX_BYTES, Overrides, STDIN_LABEL, arg_label, load_arg, load_arg_with, load_file, load_str, load_str_with,
    read_scenario, sha256_hex,
};

/// A checked scenario, every default filled in.
#[derive(Clone, Debug)]
pub struct Scenario {
    pub name: String,
    pub description: String,
    pub seed: u64,
    pub replications: u32,
    pub horizon: SimDuration,
    pub max_events: u64,
    /// Where `max_events` is written (the file alone when it is not), for a message
    /// about it: the guard's, when one replication would exceed it.
    pub max_events_at: Diagnostic,
    /// SHA-256 of the file's bytes, hex.
    pub source_sha256: String,
    /// The file's text, which a shard's part carries so that a merge needs no file.
    pub source: String,
    /// The swept parameters' dotted keys, in grid order; empty without a `[sweep]`.
    pub sweep_keys: Vec<String>,
    pub variants: Vec<Variant>,
    /// What the file asks for that the run cannot show (a restart at or after the
    /// horizon, clients that never start): placed like errors, but the scenario runs.
    pub warnings: Vec<Diagnostic>,
}

impl Scenario {
    /// Independent runs: every replication of every cell of every variant.
    pub fn jobs(&self) -> u64 {
        let cells: usize = self.variants.iter().map(|v| v.cells.len()).sum();
        cells as u64 * u64::from(self.replications)
    }
}

#[derive(Clone, Debug)]
pub struct Variant {
    pub name: String,
    pub description: String,
    /// One cell per point of the sweep grid (exactly one without a sweep), in grid order.
    pub cells: Vec<Cell>,
}

/// One point of the sweep grid for one variant.
#[derive(Clone, Debug)]
pub struct Cell {
    /// The swept values as result files show them, in the order of `sweep_keys`.
    pub sweep: Vec<String>,
    pub spec: ModelSpec,
}
