//! backoffsim: a deterministic discrete-event simulator of retry timing.
//!
//! Data flows one way: a scenario file is checked into a `scenario::Scenario`, `sim`
//! runs its models (`model`) on the discrete-event `engine`, `metrics` records what
//! happened, `output` writes it, and `report` draws plots and reports from what was
//! written.
pub mod cli;
pub mod engine;
pub mod human;
pub mod metrics;
pub mod model;
pub mod output;
pub mod report;
pub mod scenario;
pub mod sim;
