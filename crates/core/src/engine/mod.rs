//! The discrete-event core: simulated time, the event queue, random streams, the run loop.
//!
//! # What makes a run reproducible
//!
//! A replication is a pure function of the scenario, the master seed and the
//! replication's index; these rules, each kept by one module, make it so:
//!
//! * **Time** is whole nanoseconds ([`time`]): no float accumulates, and sums saturate
//!   at the end of representable time rather than wrap.
//! * **Order**: events pop by `(time, insertion order)`, first in first out among equal
//!   times, and time never goes backwards ([`queue`] states the contract in full).
//! * **Randomness**: every draw comes from a stream keyed by (master seed, replication,
//!   entity, purpose) ([`rng`]), so what a client draws does not depend on how many other
//!   clients exist, which thread ran it, or what another purpose consumed; variants of a
//!   scenario therefore see the same random numbers (common random numbers).
//! * **Threads** only decide which replication runs where: replications share nothing
//!   while they run, and their results are put together in a fixed order.
//! * **Progress and interrupts** are published and looked at by the run loop
//!   ([`run`], [`progress`]) without ever feeding back into what a replication does.
pub mod budget;
pub mod progress;
pub mod queue;
pub mod rng;
pub mod run;
pub mod time;
