pub mod time;
pub mod rng;
pub mod queue;
