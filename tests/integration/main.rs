//! Integration tests: the real binary, end to end, grouped by concern. One test binary
//! builds and links faster than many.

mod bad_input;
mod calls;
mod catalogue;
mod cells;
mod cli;
mod common;
mod deploy;
mod destination;
mod determinism;
mod docs;
mod estimates;
mod golden;
mod grpc;
mod guard;
mod interrupt;
mod jobs;
mod large_inputs;
mod load;
mod load_data;
mod malformed_inputs;
mod metrics;
mod models;
mod mutated_scenarios;
mod occ;
mod paired;
mod redraw;
mod replications;
mod report;
mod retry;
mod rto_replay;
mod scenario_input;
mod scenarios;
mod shards;
mod sweep;
mod value_rules;
