//! A run draws its plots and report from the results it holds in memory; `plot` and
//! `compare` draw them from the files the run wrote. Both must give the same bytes, so a
//! re-drawn plot is the run's own picture.

use std::path::Path;

use super::common::{bin, root, text};

/// The files a run's manifest lists.
fn listed(dir: &Path) -> Vec<String> {
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    manifest["files"].as_array().unwrap().iter().map(|f| f.as_str().unwrap().to_string()).collect()
}

/// Runs `toml` (named `name`) from inside `tmp` with a relative `--out`, so that the run's
/// report and a re-draw name the directory alike.
fn run_in(tmp: &Path, name: &str, toml: &str) {
    let file = tmp.join(format!("{name}.toml"));
    std::fs::write(&file, toml).unwrap();
    let o = bin()
        .current_dir(tmp)
        .args(["run", file.to_str().unwrap(), "--quiet", "--replications", "2", "--out", name])
        .output()
        .unwrap();
    assert!(o.status.success(), "run {name}: {}", text(&o.stderr));
}

/// Re-draws every plot of the run `name` with `plot`, and everything with `compare` of
/// the one run, and checks each file against the run's own. Returns the plot kinds.
fn redraw_matches_the_run(tmp: &Path, name: &str) -> Vec<String> {
    let files = listed(&tmp.join(name));
    let mut kinds = Vec::new();
    for file in files.iter().filter(|f| f.ends_with(".svg") || f.ends_with(".png")) {
        let kind = file.split('.').next().unwrap();
        let out = format!("redrawn-{name}-{file}");
        let o = bin().current_dir(tmp).args(["plot", kind, name, "-o", &out]).output().unwrap();
        assert!(o.status.success(), "plot {kind} {name}: {}", text(&o.stderr));
        let (own, redrawn) =
            (std::fs::read(tmp.join(name).join(file)).unwrap(), std::fs::read(tmp.join(&out)).unwrap());
        assert!(own == redrawn, "{name}: `plot {kind}` differs from the run's {file}");
        if file.ends_with(".svg") {
            kinds.push(kind.to_string());
        }
    }
    let copy = format!("compared-{name}");
    let o = bin().current_dir(tmp).args(["compare", name, "-o", &copy, "--quiet"]).output().unwrap();
    assert!(o.status.success(), "compare {name}: {}", text(&o.stderr));
    let drawn: Vec<String> = files.into_iter().filter(|f| !f.ends_with(".csv") && f != "manifest.json").collect();
    assert!(drawn.contains(&"report.md".to_string()), "{name}: {drawn:?}");
    for file in drawn {
        let own = std::fs::read(tmp.join(name).join(&file)).unwrap();
        let mut again = std::fs::read(tmp.join(&copy).join(&file)).unwrap();
        if file == "report.md" {
            // compare signs its report so that a later `compare -o` may replace it; the
            // run's own is claimed by its manifest instead.
            let signature = format!("\nMade by `backoffsim compare` {}.\n", env!("CARGO_PKG_VERSION"));
            assert!(again.ends_with(signature.as_bytes()), "{name}: compare's report.md is not signed");
            again.truncate(again.len() - signature.len());
        }
        assert!(own == again, "{name}: {file} drawn from the files differs from the run's own");
    }
    kinds
}

#[test]
fn every_plot_and_report_redrawn_from_the_files_is_the_runs_own() {
    let tmp = tempfile::tempdir().unwrap();
    let scenarios = root().join("scenarios");
    let mut kinds = std::collections::BTreeSet::new();
    let mut names: Vec<String> = std::fs::read_dir(&scenarios)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(names.len() >= 8, "{names:?}");
    for name in &names {
        let toml = std::fs::read_to_string(scenarios.join(format!("{name}.toml"))).unwrap();
        run_in(tmp.path(), name, &toml);
        kinds.extend(redraw_matches_the_run(tmp.path(), name));
    }

    // Two shipped scenarios swept over two keys each: per-cell panels, a swept schedule
    // (the restart's down time), sweep lines and heatmaps.
    let read = |n: &str| std::fs::read_to_string(scenarios.join(format!("{n}.toml"))).unwrap();
    let tcp = read("tcp-blackout") + "\n[sweep]\n\"tcp.window\" = [4, 10]\n\"path.base_rtt\" = [\"50ms\", \"100ms\"]\n";
    let grpc = read("grpc-restart-storm").replace("clients = 10000", "clients = 1000")
        + "\n[sweep]\n\"grpc.backoff.max_backoff\" = [\"30s\", \"2min\"]\n\
           \"server.restart\" = [[{ at = \"10s\", down = \"30s\" }], [{ at = \"10s\", down = \"60s\" }]]\n";
    for (name, toml) in [("tcp-swept", tcp), ("grpc-swept", grpc)] {
        run_in(tmp.path(), name, &toml);
        let drawn = redraw_matches_the_run(tmp.path(), name);
        assert!(drawn.iter().any(|k| k == "heatmap"), "{name}: {drawn:?}");
        kinds.extend(drawn);
    }
    let all: Vec<&str> = kinds.iter().map(String::as_str).collect();
    assert_eq!(all, ["attempts", "cdf", "heatmap", "load", "rto", "sweep"]);
}
