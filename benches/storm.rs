//! A 100,000-channel gRPC restart storm through the whole engine (no file output): the
//! end-to-end rate of the simulator at scale. `cargo bench --bench storm`.

use std::path::Path;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

use backoffsim::scenario::load_file;
use backoffsim::sim::{RunOptions, run_scenario};

fn storm(c: &mut Criterion) {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/scenarios/grpc-restart-storm-100k.toml");
    let scenario = load_file(&file).expect("the bench scenario checks");
    let once = || run_scenario(&scenario, RunOptions { threads: 1 }, &|| {}).expect("the storm runs");
    let events: u64 = once().results.iter().flatten().flatten().map(|r| r.events).sum();
    let mut group = c.benchmark_group("grpc_restart_storm");
    group.sample_size(10);
    group.throughput(Throughput::Elements(events));
    group.bench_function("100k_channels_events", |b| b.iter(once));
    group.finish();
}

criterion_group!(benches, storm);
criterion_main!(benches);
