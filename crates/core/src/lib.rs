//! backoffsim's core: the discrete-event engine, the sans-IO models, the worlds that
//! simulate them, scenarios, and running them. No command line, plots or terminal here:
//! a program that only wants an estimator or a run's numbers compiles this crate alone.
//!
//! The layers, each using only those below it (a test reads every `use crate::` and
//! fails on an arrow up; ARCHITECTURE.md at the repository's root draws them):
//!
//! 1. [`engine`]: time, the event queue, random streams, budgets; with the small
//!    utilities [`human`] (numbers for people), [`suggest`] (did-you-mean) and [`input`].
//! 2. [`model`]: sans-IO state machines and their configs (RTO estimators, the TCP sender,
//!    gRPC backoff, retry policies, servers, paths).
//! 3. [`metrics`]: what a replication produces (values, series, traces, distributions).
//! 4. [`worlds`]: one folder per scenario model (its section, checks, resolution,
//!    simulation, cost estimate and metrics), the one list of models, and the catalogue
//!    of what each metric means; [`explain`] and [`replay`] drive models without a
//!    scenario.
//! 5. [`scenario`]: loading, checking and resolving a scenario file.
//! 6. [`run`]: the work list, the resource guard, shards, stopping, and the
//!    destination that makes results appear whole or not at all.
//!
//! # The RFC 6298 estimator on its own
//!
//! The retransmission-timer estimators of [`model::rto`] are sans-IO: they never read a
//! clock or do I/O. Feed them RTT samples and timer expiries, read the RTO back:
//!
//! ```
//! use backoffsim_core::engine::time::SimDuration;
//! use backoffsim_core::model::rto::{Phase, Rfc6298, RtoConfig};
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

pub mod engine;
pub mod explain;
pub mod human;
#[doc(hidden)]
pub mod input;
pub mod metrics;
pub mod model;
pub mod replay;
pub mod run;
pub mod scenario;
pub mod suggest;
pub mod worlds;
