//! Integration tests: the real binary, end to end, grouped by concern. One test binary
//! builds and links faster than many.

mod bad_input;
mod calls;
mod cli;
mod common;
mod determinism;
mod golden;
mod grpc;
mod occ;
mod report;
mod retry;
mod rto_replay;
mod scenarios;
mod sweep;
