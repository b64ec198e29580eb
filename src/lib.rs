//! backoffsim: a deterministic discrete-event simulator of retry timing.
//!
//! Data flows one way: a scenario file is checked into a [`scenario::Scenario`], [`sim`]
//! runs its models ([`model`]) on the discrete-event [`engine`], [`metrics`] records what
//! happened, and [`output`] writes it with the plots and reports drawn from it, through
//! [`destination`], which replaces only what backoffsim wrote, lets one writer at a time
//! in, and makes a directory appear whole or not at all.
//! Two tools use the models without a scenario: [`explain`] follows one policy's calls
//! that always fail, and [`replay`] drives an RTO estimator from a captured trace.
//! The command line sits on top; [`human`] formats numbers for people. [`engine`] states
//! what makes a run reproducible: integer time, FIFO order among equal times, random
//! streams keyed by purpose.
//!
//! With `default-features = false` the crate leaves out the command line, its plots,
//! reports, progress bar and Ctrl-C handling (and clap, plotters, indicatif and ctrlc):
//! what remains is the engine, the models, scenarios, the simulation and its metrics.
//!
//! # The RFC 6298 estimator on its own
//!
//! The retransmission-timer estimators of [`model::rto`] are sans-IO: they never read a
//! clock or do I/O. Feed them RTT samples and timer expiries, read the RTO back:
//!
//! ```
//! use backoffsim::engine::time::SimDuration;
//! use backoffsim::model::rto::{Phase, Rfc6298, RtoConfig};
//!
//! let params = RtoConfig::default().resolve().expect("RFC 6298's defaults check");
//! let mut rto = Rfc6298::new(&params);
//! // (2.1): before any sample the RTO is 1 s.
//! assert_eq!(rto.rto(), SimDuration::from_secs(1));
//!
//! // (2.2): the first sample R = 300 ms gives SRTT = R, RTTVAR = R/2,
//! // RTO = SRTT + 4·RTTVAR = 900 ms, raised to the 1 s minimum (2.4).
//! rto.on_sample(SimDuration::from_millis(300));
//! assert_eq!(rto.snapshot().srtt, Some(SimDuration::from_millis(300)));
//! assert_eq!(rto.rto(), SimDuration::from_secs(1));
//!
//! // A 2 s sample: RTTVAR = 3/4·150 ms + 1/4·1.7 s = 537.5 ms,
//! // SRTT = 7/8·300 ms + 1/8·2 s = 512.5 ms, RTO = 512.5 + 4·537.5 = 2.6625 s.
//! rto.on_sample(SimDuration::from_secs(2));
//! assert_eq!(rto.rto(), SimDuration::from_micros(2_662_500));
//!
//! // (5.5): each expiry doubles the timer, until a new sample (Karn: not one of a
//! // retransmitted segment) recomputes it.
//! rto.on_timeout(Phase::Established);
//! assert_eq!(rto.rto(), SimDuration::from_micros(5_325_000));
//! rto.on_timeout(Phase::Established);
//! assert_eq!(rto.rto(), SimDuration::from_micros(10_650_000));
//! assert_eq!(rto.snapshot().backoffs, 2);
//! ```
//!
//! [`model::rto::RtoEstimator`] wraps this profile and Linux's behind one type, as the
//! simulated TCP sender uses them; `examples/rto_estimator.rs` drives one through a
//! sample series, and `examples/run_scenario.rs` runs a whole scenario from code.
// The command line and what only it needs are the binary's, not API: public only because
// the binary is a crate of its own.
#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod cli;
pub mod destination;
pub mod engine;
pub mod explain;
// Its per-run totals serve only the command line; the estimates serve the simulation too.
#[cfg_attr(not(feature = "cli"), allow(dead_code))]
pub(crate) mod guard;
pub mod human;
#[doc(hidden)]
pub mod input;
pub mod interrupt;
pub mod metrics;
pub mod model;
#[cfg(feature = "cli")]
pub mod output;
pub mod replay;
#[cfg(feature = "cli")]
pub(crate) mod report;
pub mod scenario;
// Splitting a run over machines is the command line's `run --shard` and `merge`.
#[cfg_attr(not(feature = "cli"), allow(dead_code))]
pub(crate) mod shard;
pub mod sim;
pub mod suggest;
