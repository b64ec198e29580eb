//! Storms of 100,000 clients through the whole engine (no file output), one thread: a
//! gRPC restart storm and a `[calls]` retry storm. The end-to-end rate of the simulator
//! at scale. `cargo bench --bench storm`.

use std::path::Path;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

use backoffsim::engine::progress::Progress;
use backoffsim::run::{RunOptions, run_scenario};
use backoffsim::scenario::load_file;

fn storm(c: &mut Criterion) {
    let file =
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("benches/scenarios/grpc-restart-storm-100k.toml");
    let scenario = load_file(&file).expect("the bench scenario checks");
    let once = || {
        run_scenario(&scenario, RunOptions { threads: 1, max_events: None }, &Progress::new()).expect("the storm runs")
    };
    let events: u64 = once().results.iter().flatten().flatten().map(|r| r.events).sum();
    let mut group = c.benchmark_group("grpc_restart_storm");
    group.sample_size(10);
    group.throughput(Throughput::Elements(events));
    group.bench_function("100k_channels_events", |b| b.iter(once));
    group.finish();
}

/// The retry storm that does not recover: 100,000 clients, 5 simulated minutes, every
/// call making its three attempts against a queue longer than the timeout.
fn calls_storm(c: &mut Criterion) {
    let file =
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("benches/scenarios/calls-retry-storm-100k.toml");
    let scenario = load_file(&file).expect("the bench scenario checks");
    let once = || {
        run_scenario(&scenario, RunOptions { threads: 1, max_events: None }, &Progress::new()).expect("the storm runs")
    };
    let events: u64 = once().results.iter().flatten().flatten().map(|r| r.events).sum();
    let mut group = c.benchmark_group("calls_retry_storm");
    group.sample_size(10);
    group.throughput(Throughput::Elements(events));
    group.bench_function("100k_clients_events", |b| b.iter(once));
    group.finish();
}

criterion_group!(benches, storm, calls_storm);
criterion_main!(benches);
