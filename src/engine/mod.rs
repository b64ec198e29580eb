pub mod time;
pub mod rng;
