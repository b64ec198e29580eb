pub mod queue;
pub mod rng;
pub mod run;
pub mod time;
