//! `[sweep]` grids: every cell runs for every variant, sweep values become columns, and a
//! bad swept value is reported at its place in the list.

use super::common::{run, text};

pub const SWEPT: &str = r#"
name = "swept"
description = "loss against window"
horizon = "5s"
replications = 2

[tcp]
workload = { kind = "steady", interval = "20ms" }

[path]
base_rtt = "50ms"

[sweep]
"tcp.window" = [2, 8]
"path.loss" = [{ model = "none" }, { model = "bernoulli", p = 0.1 }]

[[variant]]
name = "rfc6298"

[[variant]]
name = "linux"
tcp.rto.profile = "linux"
"#;

#[test]
fn every_variant_runs_every_cell_and_sweep_values_are_columns() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("swept.toml");
    std::fs::write(&file, SWEPT).unwrap();
    let out = tmp.path().join("out");
    let o = run(&["run", file.to_str().unwrap(), "--quiet", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let mut r = csv::Reader::from_path(out.join("summary.csv")).unwrap();
    let headers: Vec<String> = r.headers().unwrap().iter().map(str::to_string).collect();
    assert_eq!(&headers[..4], ["variant", "tcp.window", "path.loss", "metric"]);
    let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
    let cells: std::collections::BTreeSet<(String, String, String)> =
        rows.iter().map(|r| (r[0].to_string(), r[1].to_string(), r[2].to_string())).collect();
    // 2 variants × 2 windows × 2 loss models; a table value shows compactly.
    assert_eq!(cells.len(), 8, "{cells:?}");
    assert!(cells.contains(&("linux".into(), "8".into(), "{model=bernoulli p=0.1}".into())), "{cells:?}");
    // Loss makes retransmissions; no loss makes none, in every cell that has none.
    let retx = |v: &str, w: &str, lossy: bool| -> f64 {
        rows.iter().filter(|r| &r[0] == v && &r[1] == w && &r[3] == "retransmissions").nth(usize::from(lossy)).unwrap()
            [6]
        .parse()
        .unwrap()
    };
    assert_eq!(retx("rfc6298", "2", false), 0.0);
    assert!(retx("rfc6298", "2", true) > 0.0);
    let manifest = std::fs::read_to_string(out.join("manifest.json")).unwrap();
    assert!(manifest.contains("\"sweep_keys\": [\n    \"tcp.window\",\n    \"path.loss\"\n  ]"), "{manifest}");
}

#[test]
fn a_bad_swept_value_is_reported_at_its_place_in_the_list() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("bad.toml");
    std::fs::write(&file, SWEPT.replace("[2, 8]", "[2, 0]")).unwrap();
    let o = run(&["check", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(
        err.contains("bad.toml:14:20: key `tcp.window`: must be at least 1 segment (sweep point tcp.window = 0"),
        "{err}"
    );
}

#[test]
fn shared_keys_cannot_be_swept() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("bad.toml");
    std::fs::write(&file, SWEPT.replace("\"tcp.window\" = [2, 8]", "seed = [1, 2]")).unwrap();
    let o = run(&["check", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("key `sweep.seed`: only model parameters can be swept"), "{}", text(&o.stderr));
}

const SWEPT_OUTAGE: &str = r#"
name = "swept-outage"
seed = 1
replications = 2
horizon = "5min"

[calls]
clients = 20
attempt_time = "100ms"
fail_time = "50ms"
fail_with = "503"

[sweep]
"calls.outage" = ["30s", "2min"]

[[variant]]
name = "aws"
calls.policy.preset = "aws-standard"
"#;

#[test]
fn a_swept_duration_has_a_column_in_seconds_beside_its_label_in_every_table() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("swept.toml");
    std::fs::write(&file, SWEPT_OUTAGE).unwrap();
    let out = tmp.path().join("out");
    let o = run(&["run", file.to_str().unwrap(), "--quiet", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    // SimDuration::parse: `30s` is 30 s, `2min` is 120 s.
    let seconds = |label: &str| match label {
        "30s" => "30",
        "2min" => "120",
        other => panic!("unexpected label {other}"),
    };
    for table in ["summary.csv", "replications.csv", "series.csv", "cdf.csv"] {
        let mut r = csv::Reader::from_path(out.join(table)).unwrap();
        let headers: Vec<String> = r.headers().unwrap().iter().map(str::to_string).collect();
        assert_eq!(&headers[..3], ["variant", "calls.outage", "calls.outage_s"], "{table}");
        let mut labels = std::collections::BTreeSet::new();
        for row in r.records().map(Result::unwrap) {
            assert_eq!(&row[2], seconds(&row[1]), "{table}: {row:?}");
            labels.insert(row[1].to_string());
        }
        assert_eq!(labels.len(), 2, "{table}: both cells");
    }
    // `plot` reads the files back: the seconds column is not a swept key of its own.
    let png = tmp.path().join("sweep.png");
    let o = run(&["plot", "sweep", out.to_str().unwrap(), "--metric", "calls", "-o", png.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
}
