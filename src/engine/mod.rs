//! The discrete-event core: simulated time, the event queue, random streams, the run loop.
pub mod budget;
pub mod progress;
pub mod queue;
pub mod rng;
pub mod run;
pub mod time;
