//! How far the resource guard's event estimates are from the events runs really handle:
//! for every variant and sweep cell, the estimate of one replication (`Model::estimate`,
//! what `backoffsim check` and the guard use) against the events its replications
//! handled, and the ratio.
//!
//! `cargo bench -p backoffsim-benches --bench estimates` compares every shipped scenario (`scenarios/*.toml`)
//! with the events its committed run recorded (`results/<name>/manifest.json`).
//! `cargo bench -p backoffsim-benches --bench estimates -- FILE…` runs the given scenarios instead (on every
//! core, nothing written) and compares with those runs. Each line is one cell: the
//! estimate, the real events (mean, min and max over its replications), and the estimate
//! over the mean and over the extremes. Cells outside 0.5–3× of the mean are marked `!`.

use std::path::{Path, PathBuf};

use backoffsim::engine::progress::Progress;
use backoffsim::run::{RunOptions, run_scenario};
use backoffsim::scenario::{Scenario, load_file};

fn main() {
    let files: Vec<PathBuf> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).map(PathBuf::from).collect();
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    // (lowest, highest) estimate over the mean, and over any one replication.
    let mut worst: (f64, f64) = (f64::INFINITY, 0.0);
    let mut each: (f64, f64) = (f64::INFINITY, 0.0);
    println!(
        "{:<60} {:>12} {:>12} {:>12} {:>12} {:>8} {:>15}",
        "cell", "estimate", "real mean", "min", "max", "est/mean", "est/max..min"
    );
    let runs: Vec<(Scenario, Vec<Vec<Vec<u64>>>)> = if files.is_empty() {
        let mut shipped: Vec<PathBuf> = std::fs::read_dir(root.join("scenarios"))
            .expect("scenarios/ is readable")
            .map(|e| e.expect("a directory entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "toml"))
            .collect();
        shipped.sort();
        shipped.iter().map(|f| committed(root, f)).collect()
    } else {
        files.iter().map(|f| fresh(f)).collect()
    };
    for (scenario, events) in &runs {
        for (variant, cells) in scenario.variants.iter().zip(events) {
            for (cell, reps) in variant.cells.iter().zip(cells) {
                let estimate = cell.spec.estimate(scenario.horizon).events;
                let mean = reps.iter().sum::<u64>() as f64 / reps.len() as f64;
                let (min, max) =
                    (*reps.iter().min().expect("a replication"), *reps.iter().max().expect("a replication"));
                let ratio = estimate / mean;
                worst = (worst.0.min(ratio), worst.1.max(ratio));
                each = (each.0.min(estimate / max as f64), each.1.max(estimate / min.max(1) as f64));
                let mut label = format!("{} {}", scenario.name, variant.name);
                if !cell.sweep.is_empty() {
                    label.push_str(&format!(" [{}]", cell.sweep.join(", ")));
                }
                let mark = if (0.5..=3.0).contains(&ratio) { "" } else { " !" };
                println!(
                    "{label:<60} {estimate:>12.0} {mean:>12.0} {min:>12} {max:>12} {ratio:>8.2} {:>7.2}..{:<6.2}{mark}",
                    estimate / max as f64,
                    estimate / min.max(1) as f64,
                );
            }
        }
    }
    println!(
        "estimate / real mean: {:.2} to {:.2}; / each replication: {:.2} to {:.2}",
        worst.0, worst.1, each.0, each.1
    );
}

fn load(file: &Path) -> Scenario {
    load_file(file).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    })
}

/// A shipped scenario with the events of its committed run, `[variant][cell][replication]`.
fn committed(root: &Path, file: &Path) -> (Scenario, Vec<Vec<Vec<u64>>>) {
    let scenario = load(file);
    let manifest = root.join("results").join(&scenario.name).join("manifest.json");
    let text = std::fs::read_to_string(&manifest).unwrap_or_else(|e| panic!("{}: {e}", manifest.display()));
    let json: serde_json::Value = serde_json::from_str(&text).expect("a manifest is JSON");
    let events = json["variants"]
        .as_array()
        .expect("variants")
        .iter()
        .map(|v| {
            let cells = v["cells"].as_array().expect("cells");
            cells.iter().map(|c| serde_json::from_value(c["events"].clone()).expect("events")).collect()
        })
        .collect();
    (scenario, events)
}

/// A scenario with the events of a run made now.
fn fresh(file: &Path) -> (Scenario, Vec<Vec<Vec<u64>>>) {
    let scenario = load(file);
    let outcome = run_scenario(&scenario, RunOptions::default(), &Progress::new())
        .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let events =
        outcome.results.iter().map(|v| v.iter().map(|c| c.iter().map(|r| r.events).collect()).collect()).collect();
    (scenario, events)
}
