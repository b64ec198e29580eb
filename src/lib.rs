//! backoffsim: a deterministic discrete-event simulator of retry timing.
pub mod engine;
pub mod model;
