//! Sans-IO state machines: they take time and randomness from the engine and never do I/O.
pub mod config_error;
pub mod fraction;
pub mod grpc;
pub mod jitter;
pub mod jobs;
pub mod occ;
#[cfg(test)]
pub(crate) mod overrides;
pub mod path;
pub mod retry;
pub mod rto;
pub mod server;
pub mod tcp;
