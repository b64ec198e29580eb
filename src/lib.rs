//! backoffsim: a deterministic discrete-event simulator of retry timing, as a library and
//! the `backoffsim` command.
//!
//! The library is [`backoffsim_core`] (the engine, the models, their worlds, scenarios and
//! running them), re-exported here whole. With the default feature `cli` the crate adds
//! the command line and [`output`] (the files of a run, its tables, plots and reports,
//! from the `backoffsim-report` crate); with `default-features = false` it is the core
//! alone, with none of clap, plotters, indicatif or ctrlc.

pub use backoffsim_core::*;

#[cfg(feature = "cli")]
pub use backoffsim_report::output;

// The command line is the binary's, not API: public only because the binary is a crate
// of its own.
#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod cli;
