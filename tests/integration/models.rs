//! What every model shares: one model section per scenario, command-line overrides
//! checked like the file's own values, and the metric catalogue in the manifest.

use std::path::{Path, PathBuf};
use std::process::Output;

use super::common::{run, text};

const HEAD: &str = "name = \"m\"\ndescription = \"d\"\nhorizon = \"10s\"\n";
const TCP: &str = "[tcp]\nworkload = { kind = \"transfer\", segments = 4 }\n[path]\nbase_rtt = \"100ms\"\n";
const OCC: &str = "[occ]\nclients = 5\nstrategy = \"full\"\n";
const CALLS: &str = "[calls]\nclients = 2\n";
const GRPC: &str = "[grpc]\nclients = 2\n";
const JOBS: &str = "[jobs]\nrate = 1\nworkers = 1\n[[jobs.provider]]\nname = \"p\"\n[[jobs.provider.down]]\nat = \"2s\"\nduration = \"3s\"\n";

fn write(dir: &Path, body: &str) -> PathBuf {
    let file = dir.join("s.toml");
    std::fs::write(&file, format!("{HEAD}{body}")).unwrap();
    file
}

fn refused(o: &Output) -> String {
    assert_eq!(o.status.code(), Some(2), "stdout: {}\nstderr: {}", text(&o.stdout), text(&o.stderr));
    text(&o.stderr)
}

#[test]
fn two_model_sections_are_refused_at_the_second_naming_both() {
    let tmp = tempfile::tempdir().unwrap();
    // [occ] at line 4, [calls] at line 7: the second is the one refused.
    let file = write(tmp.path(), &format!("{OCC}{CALLS}"));
    let err = refused(&run(&["check", file.to_str().unwrap()]));
    assert!(
        err.contains("s.toml:7:1: key `calls`: a scenario runs one model: [occ] and [calls] are both here"),
        "{err}"
    );
    // Also when the second model is the one listed first in the schema.
    let file = write(tmp.path(), &format!("{CALLS}{GRPC}"));
    let err = refused(&run(&["check", file.to_str().unwrap()]));
    assert!(err.contains("s.toml:6:1: key `grpc`: a scenario runs one model: [calls] and [grpc]"), "{err}");
    let file = write(tmp.path(), &format!("{GRPC}{OCC}"));
    let err = refused(&run(&["run", "-q", file.to_str().unwrap(), "--out", tmp.path().join("o").to_str().unwrap()]));
    assert!(err.contains("key `occ`: a scenario runs one model: [grpc] and [occ]"), "{err}");
    assert!(!tmp.path().join("o").exists(), "nothing is run");
}

#[test]
fn a_variant_that_adds_a_second_model_is_refused_at_the_variant() {
    let tmp = tempfile::tempdir().unwrap();
    let file = write(tmp.path(), &format!("{OCC}[[variant]]\nname = \"v\"\n[variant.calls]\nclients = 1\n"));
    let err = refused(&run(&["check", file.to_str().unwrap()]));
    assert!(err.contains("key `variant[0].calls`: a scenario runs one model: [occ] and [calls]"), "{err}");
}

#[test]
fn replications_override_that_drops_a_traced_replication_is_refused_naming_both() {
    let tmp = tempfile::tempdir().unwrap();
    let file = write(tmp.path(), &format!("replications = 3\n{TCP}[trace]\nreplications = [2]\n"));
    let out = tmp.path().join("out");
    let o = run(&["run", "-q", file.to_str().unwrap(), "--replications", "1", "--out", out.to_str().unwrap()]);
    let err = refused(&o);
    assert!(err.contains("key `trace.replications[0]`: replication 2 does not exist"), "{err}");
    assert!(err.contains("`--replications 1` replaces the file's `replications`"), "{err}");
    assert!(!out.exists(), "no empty trace.csv is written");
    // `check` takes the same overrides and says the same.
    let err = refused(&run(&["check", file.to_str().unwrap(), "--replications", "1"]));
    assert!(err.contains("key `trace.replications[0]`"), "{err}");
}

#[test]
fn replications_override_is_checked_before_the_trace_so_it_can_make_a_trace_valid() {
    let tmp = tempfile::tempdir().unwrap();
    let file = write(tmp.path(), &format!("{TCP}[trace]\nreplications = [2]\n"));
    refused(&run(&["check", file.to_str().unwrap()]));
    let out = tmp.path().join("out");
    let o = run(&[
        "run",
        "-q",
        file.to_str().unwrap(),
        "--replications",
        "3",
        "--seed",
        "7",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!((manifest["replications"].as_u64(), manifest["seed"].as_u64()), (Some(3), Some(7)));
    let trace = std::fs::read_to_string(out.join("trace.csv")).unwrap();
    assert!(trace.lines().count() > 1, "replication 2 is traced:\n{trace}");
    let replication = |l: &str| l.split(',').nth(3).map(str::to_string);
    assert_eq!(trace.lines().next().and_then(replication).as_deref(), Some("replication"));
    assert!(trace.lines().skip(1).all(|l| replication(l).as_deref() == Some("2")), "only replication 2:\n{trace}");
}

#[test]
fn a_trace_section_is_refused_by_models_without_traces() {
    let tmp = tempfile::tempdir().unwrap();
    let file = write(tmp.path(), &format!("{OCC}[trace]\nclients = [1]\n"));
    let err = refused(&run(&["check", file.to_str().unwrap()]));
    assert!(err.contains("key `trace`: [trace] does not apply to [occ]"), "{err}");
}

#[test]
fn the_manifest_lists_the_models_metric_catalogue_and_every_summary_metric_is_in_it() {
    let tmp = tempfile::tempdir().unwrap();
    for (name, body) in [("tcp", TCP), ("occ", OCC), ("calls", CALLS), ("grpc", GRPC), ("jobs", JOBS)] {
        let file = write(tmp.path(), body);
        let out = tmp.path().join(name);
        let o = run(&["run", "-q", file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
        assert!(o.status.success(), "{name}: {}", text(&o.stderr));
        let manifest: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
        let metrics = manifest["metrics"].as_array().unwrap();
        assert!(metrics.len() >= 4, "{name}: {metrics:?}");
        for m in metrics {
            assert_eq!(m["model"], name, "{m}");
            for key in ["id", "title", "unit", "doc"] {
                assert!(m[key].as_str().is_some_and(|s| !s.is_empty()), "{name}: {key} of {m}");
            }
            assert!(["lower", "higher"].contains(&m["better"].as_str().unwrap_or("lower")), "{m}");
        }
        let declared = |id: &str, unit: &str| {
            metrics.iter().any(|m| {
                let (mid, munit) = (m["id"].as_str().unwrap(), m["unit"].as_str().unwrap());
                let same = match mid.strip_suffix("{k}") {
                    Some(p) => id.strip_prefix(p).is_some_and(|k| k.parse::<u32>().is_ok()),
                    None => mid == id,
                };
                same && munit == unit
            })
        };
        let mut csv = csv::Reader::from_path(out.join("summary.csv")).unwrap();
        let mut rows = 0;
        for row in csv.records() {
            let row = row.unwrap();
            assert!(declared(&row[1], &row[2]), "{name}: `{}` ({}) is not in the manifest", &row[1], &row[2]);
            rows += 1;
        }
        assert!(rows > 0, "{name}");
    }
}
