//! `replications.csv`: the per-replication values behind `summary.csv`.

use std::collections::BTreeMap;

use super::common::run_text;

const OCC: &str = r#"
name = "occ-reps"
description = "a small sweep whose replications differ"
horizon = "10min"
replications = 4

[occ]
clients = 5
strategy = "full"

[sweep]
"occ.clients" = [2, 6]

[[variant]]
name = "full"

[[variant]]
name = "none"
occ.strategy = "none"
"#;

#[test]
fn the_summary_is_the_mean_of_the_replications_rows_and_every_replication_is_there() {
    let (_tmp, dir) = run_text(OCC, &[]);
    // (variant, clients, metric) → the values of the replications that have one.
    let mut values: BTreeMap<(String, String, String), Vec<f64>> = BTreeMap::new();
    let mut reps: BTreeMap<(String, String), Vec<u32>> = BTreeMap::new();
    let mut r = csv::Reader::from_path(dir.join("replications.csv")).unwrap();
    assert_eq!(r.headers().unwrap(), vec!["variant", "occ.clients", "replication", "metric", "unit", "value"]);
    for rec in r.records() {
        let rec = rec.unwrap();
        let key = (rec[0].to_string(), rec[1].to_string());
        let rep: u32 = rec[2].parse().unwrap();
        let seen = reps.entry(key.clone()).or_default();
        if seen.last() != Some(&rep) {
            seen.push(rep);
        }
        if !rec[5].is_empty() {
            values.entry((key.0, key.1, rec[3].to_string())).or_default().push(rec[5].parse().unwrap());
        }
    }
    assert_eq!(reps.len(), 4, "two variants × two cells");
    assert!(reps.values().all(|r| r == &[0, 1, 2, 3]), "{reps:?}");

    let mut s = csv::Reader::from_path(dir.join("summary.csv")).unwrap();
    let mut rows = 0;
    for rec in s.records() {
        let rec = rec.unwrap();
        let v = &values[&(rec[0].to_string(), rec[1].to_string(), rec[2].to_string())];
        assert_eq!(rec[4].parse::<usize>().unwrap(), v.len(), "{rec:?}");
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        let summary_mean: f64 = rec[5].parse().unwrap();
        assert!((mean - summary_mean).abs() <= 1e-9 * mean.abs().max(1.0), "{rec:?}: {mean}");
        rows += 1;
    }
    assert_eq!(rows, values.len(), "every (variant, cell, metric) with a value is summarized");
    // The replications really differ, so the test would catch a row written twice.
    assert!(values.values().any(|v| v.iter().any(|x| *x != v[0])));
}
