use super::*;

#[test]
fn cell_facts_read_restarts_outages_blackouts_and_the_calls_start() {
    let v: Value = serde_json::json!({
        "model": "calls",
        "calls": {"start": "5s", "start_spread": "0s", "interval": null},
        "server": {
            "restart": [{"at": "100s", "down": "20s"}],
            "outage": [{"at": "10s", "duration": "30s"}, {"at": "50s", "duration": "0s"}],
            "down_behavior": "blackhole"
        },
        "path": {"base_rtt": "100ms", "blackout": [{"at": "1s", "duration": "2s"}], "rtt_change": []}
    });
    let f = facts_of(&v);
    // In time order, and a zero-length outage is no down time.
    assert_eq!(f.down, [Down { from: 10.0, to: 40.0, restart: false }, Down { from: 100.0, to: 120.0, restart: true }]);
    assert_eq!(f.blackouts, [(1.0, 3.0)]);
    assert_eq!(f.base_rtt, Some(0.1));
    assert!(f.down_silent && !f.overload_drops);
    assert_eq!(f.calls_start, Some(CallsStart { at: 5.0, spread: 0.0, repeats: false }));
}

#[test]
fn cell_facts_read_brownouts_the_first_providers_down_time_and_the_retry_share_alert() {
    let v: Value = serde_json::json!({
        "calls": {"monitor": {"retry_share_alert": 0.25}},
        "server": {"brownout": [{"at": "1min", "duration": "30s", "fail_fraction": 0.5, "slowdown": 3.0},
                                {"at": "5min", "duration": "0s"}]},
        "jobs": {"provider": [{"down": [{"at": "10s", "duration": "90min"}]}, {"down": [{"at": "0s", "duration": "5s"}]}]}
    });
    let f = facts_of(&v);
    // A zero-length brownout is none; only the first provider's down time is drawn.
    assert_eq!(f.brownouts, [Brownout { from: 60.0, to: 90.0, fail_fraction: Some(0.5), slowdown: Some(3.0) }]);
    assert_eq!(f.provider_down, [(10.0, 10.0 + 5400.0)]);
    assert_eq!(f.retry_share_alert, Some(0.25));
    assert_eq!(facts_of(&serde_json::json!({})).retry_share_alert, None);
}

fn bounds() -> Bounds {
    Bounds { horizon: "1min".into(), horizon_s: 60.0, replications: Some(2) }
}

fn series_file(body: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("series.csv");
    std::fs::write(&path, body).unwrap();
    (tmp, path)
}

#[test]
fn series_csv_reads_the_models_columns_after_the_bin_width_with_empty_cells_as_none() {
    let (_tmp, path) = series_file(
        "variant,k,replication,bin_start_s,bin_width_s,attempts,retry_share\n\
         base,a,0,0,0.5,10,0.1\n\
         base,a,0,0.5,0.5,0,\n",
    );
    let t = read_series(&path, &["k".to_string()], &bounds(), &|n| format!("r:{n}")).unwrap();
    assert_eq!(t.columns, ["attempts", "retry_share"]);
    assert_eq!(t.rows.len(), 2);
    assert_eq!(t.rows[1].variant, "r:base");
    assert_eq!(t.rows[1].point, ["a"]);
    assert_eq!((t.rows[1].bin_start, t.rows[1].bin_width), (0.5, 0.5));
    assert_eq!(t.rows[1].values, [Some(0.0), None]);
}

#[test]
fn a_malformed_series_csv_names_the_file_the_line_and_the_column() {
    let (_tmp, path) = series_file(
        "variant,replication,bin_start_s,bin_width_s,attempts,capacity\n\
         base,0,0,1,10,5\n\
         base,0,1,1,12,lots\n",
    );
    let e = read_series(&path, &[], &bounds(), &|n| n.to_string()).unwrap_err().to_string();
    assert!(
        e.contains("series.csv") && e.contains("line 3") && e.contains("`capacity`") && e.contains("`lots`"),
        "{e}"
    );
    let (_tmp, path) = series_file("variant,replication,bin_start_s,bin_width_s,attempts\nbase,0,,1,3\n");
    let e = read_series(&path, &[], &bounds(), &|n| n.to_string()).unwrap_err().to_string();
    assert!(e.contains("line 2, column `bin_start_s` is empty"), "{e}");
    let (_tmp, path) = series_file("variant,replication,bin_start_s,attempts\nbase,0,0,3\n");
    let e = read_series(&path, &[], &bounds(), &|n| n.to_string()).unwrap_err().to_string();
    assert!(e.contains("no column `bin_width_s`"), "{e}");
}

/// The error `read` gives for `body` as the file `name`.
fn refused<T: std::fmt::Debug>(name: &str, body: &str, read: impl Fn(&Path) -> Result<T, ReportError>) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join(name);
    std::fs::write(&path, body).unwrap();
    read(&path).unwrap_err().to_string()
}

#[test]
fn a_summary_row_that_no_run_writes_is_refused_at_its_line_and_column() {
    let head = "variant,metric,unit,replications,mean,sd,ci95_low,ci95_high\n";
    let read = |p: &Path| read_summary(p, &bounds(), &|n| n.to_string());
    let says = |row: &str, expected: &str| {
        let e = refused("summary.csv", &format!("{head}a,x,s,2,1,0.5,0.5,1.5\n{row}\n"), read);
        assert!(e.contains(&format!("summary.csv: line 3, {expected}")), "{row}: {e}");
    };
    says("a,y,s,2,NaN,1,0,2", "column `mean`: `NaN` is not a finite number");
    says("a,y,s,2,1,inf,0,2", "column `sd`: `inf` is not a finite number");
    says("a,y,s,2,1,-1,0,2", "column `sd`: `-1` is negative");
    says("a,y,s,2,1,1,2,0", "column `ci95_low`: 2 is above ci95_high 0");
    says("a,y,s,2,5,1,0,2", "column `mean`: 5 is outside its interval [0, 2]");
    says("a,y,s,2,1,1,0,", "column `ci95_high`: is empty while ci95_low is not");
    says("a,y,s,0,1,,,", "column `mean`: has a value while `replications` is 0");
    says("a,y,s,-2,1,,,", "column `replications`: `-2` is not a whole number");
    says("a,y,s,3,1,1,0,2", "column `replications`: 3 is beyond 2, the most it can be here");
    let ok = format!("{head}a,x,s,1,1,,,\na,y,s,2,1,0,1,1\n");
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("summary.csv"), ok).unwrap();
    assert_eq!(read(&tmp.path().join("summary.csv")).unwrap().1.len(), 2);
}

#[test]
fn times_beyond_the_horizon_and_impossible_counts_are_refused() {
    let trace = |p: &Path| read_trace(p, &[], &bounds(), &|n| n.to_string());
    let head = "time_s,client,variant,replication,event,segment,sample_s,srtt_s,rto_s\n";
    let e = refused("trace.csv", &format!("{head}1e300,0,a,0,send,1,,,1\n"), trace);
    assert!(e.contains("line 2, column `time_s`: `1e300` is beyond the run's horizon (1min"), "{e}");
    let e = refused("trace.csv", &format!("{head}1,0,a,2,send,1,,,1\n"), trace);
    assert!(e.contains("line 2, column `replication`: 2 is beyond 1"), "{e}");
    let e = refused("trace.csv", &format!("{head}1,0,a,0,send,1,,,-3\n"), trace);
    assert!(e.contains("line 2, column `rto_s`: `-3` is negative"), "{e}");

    let attempts = |p: &Path| read_attempts(p, &[], &bounds(), &|n| n.to_string());
    let head = "variant,replication,bin_start_s,bin_width_s,attempts,refused\n";
    let e = refused("attempts.csv", &format!("{head}a,0,0,1,3,4\n"), attempts);
    assert!(e.contains("line 2, column `refused`: 4 is more than the bin's 3 attempts"), "{e}");
    let e = refused("attempts.csv", &format!("{head}a,0,0,1,-3,0\n"), attempts);
    assert!(e.contains("line 2, column `attempts`: `-3` is not a whole number"), "{e}");
    let e = refused("attempts.csv", &format!("{head}a,0,61,1,3,0\n"), attempts);
    assert!(e.contains("line 2, column `bin_start_s`: `61` is beyond the run's horizon"), "{e}");
    let e = refused("attempts.csv", &format!("{head}a,0,0,0,3,0\n"), attempts);
    assert!(e.contains("line 2, column `bin_width_s`: `0` is not a bin width"), "{e}");

    let cdf = |p: &Path| read_cdf(p, &[], &|n| n.to_string());
    let e = refused("cdf.csv", "variant,metric,fraction,value_s\na,x,1.5,2\n", cdf);
    assert!(e.contains("line 2, column `fraction`: `1.5` is beyond 1: a fraction is from 0 to 1"), "{e}");
    let e = refused("replications.csv", "variant,replication,metric,unit,value\na,0,x,s,nan\n", |p| {
        read_replications(p, &[], &bounds(), &|n| n.to_string())
    });
    assert!(e.contains("line 2, column `value`: `nan` is not a finite number"), "{e}");
}

#[test]
fn merged_runs_keep_a_series_table_each_with_points_on_the_union_of_sweep_keys() {
    let table = |variant: &str, point: Vec<String>, column: &str| SeriesTable {
        columns: vec![column.to_string()],
        rows: vec![SeriesRow {
            variant: variant.into(),
            point,
            replication: 0,
            bin_start: 0.0,
            bin_width: 1.0,
            values: vec![Some(1.0)],
        }],
    };
    let a = RunSet {
        sweep_keys: vec!["x".into()],
        series: Some(vec![table("a:v", vec!["1".into()], "attempts")]),
        ..RunSet::default()
    };
    let b = RunSet {
        sweep_keys: vec!["y".into()],
        series: Some(vec![table("b:v", vec!["2".into()], "created")]),
        ..RunSet::default()
    };
    let none = RunSet::default();
    let m = merge(vec![a, none, b]);
    let tables = m.series.unwrap();
    assert_eq!(tables.len(), 2);
    assert_eq!(tables[0].rows[0].point, ["1", ""]);
    assert_eq!(tables[1].rows[0].point, ["", "2"]);
    assert_eq!(tables[1].columns, ["created"]);
    assert!(merge(vec![RunSet::default()]).series.is_none());
}

#[test]
fn a_swept_cell_takes_its_own_schedule_and_others_the_variants() {
    let v: Value = serde_json::json!({
        "name": "base",
        "parameters": {"server": {"restart": [{"at": "5s", "down": "10s"}]}},
        "cells": [
            {"sweep": ["a"], "parameters": {"server": {"restart": [{"at": "5s", "down": "30s"}]}}},
            {"sweep": ["b"]}
        ]
    });
    let info = variant_info(&v, &|n| n.to_string());
    let set = RunSet { variants: vec![info], sweep_keys: vec!["k".into()], ..RunSet::default() };
    assert_eq!(set.facts("base", &["a".to_string()]).down[0].to, 35.0);
    assert_eq!(set.facts("base", &["b".to_string()]).down[0].to, 15.0);
}

#[test]
fn flattening_keys_objects_arrays_and_nulls() {
    let v: Value = serde_json::json!({
        "rto": {"profile": "linux", "hz": null},
        "path": {"blackout": [{"at": "10s", "duration": "30s"}], "rtt_change": []},
        "k": 4
    });
    let mut out = Vec::new();
    flatten("", &v, &mut out);
    let got: Vec<String> = out.iter().map(|(k, v)| format!("{k}={v}")).collect();
    assert_eq!(
        got,
        [
            "k=4",
            "path.blackout[0].at=10s",
            "path.blackout[0].duration=30s",
            "path.rtt_change=[]",
            "rto.hz=none",
            "rto.profile=linux"
        ]
    );
}

#[test]
fn a_trace_without_the_congestion_columns_still_loads_and_one_with_them_reads_them() {
    let trace = |p: &Path| read_trace(p, &[], &bounds(), &|n| n.to_string());
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("trace.csv");
    // As written before cwnd, ssthresh and ca_state were: the user's earlier results.
    let old = "time_s,client,variant,replication,event,segment,sample_s,srtt_s,rttvar_s,rto_s,backoffs\n\
               0.1,0,a,0,send,0,,0.1,0.05,1,0\n";
    std::fs::write(&path, old).unwrap();
    let rows = trace(&path).unwrap();
    assert_eq!((rows.len(), rows[0].cwnd, rows[0].ssthresh, rows[0].ca_state.as_deref()), (1, None, None, None));

    let head = "time_s,client,variant,replication,event,segment,sample_s,srtt_s,rttvar_s,rto_s,backoffs,cwnd,ssthresh,ca_state\n";
    // A listener's row has no window; an unset ssthresh is empty.
    let new = format!(
        "{head}0.1,0,a,0,send,0,,0.1,0.05,1,0,10,,open\n1.1,0,a,0,timeout,,,0.1,0.05,2,1,1,5,loss\n0.2,0,a,0,synack,,,,,1,0,,,\n"
    );
    std::fs::write(&path, new).unwrap();
    let got: Vec<_> = trace(&path).unwrap().into_iter().map(|r| (r.cwnd, r.ssthresh, r.ca_state)).collect();
    assert_eq!(
        got,
        vec![(Some(10), None, Some("open".into())), (Some(1), Some(5), Some("loss".into())), (None, None, None)]
    );
    let e = refused("trace.csv", &format!("{head}1,0,a,0,send,1,,,,1,0,2.5,,open\n"), trace);
    assert!(e.contains("line 2, column `cwnd`: `2.5` is not a whole number"), "{e}");
    let e = refused("trace.csv", &format!("{head}1,0,a,0,send,1,,,,1,0,2,-1,open\n"), trace);
    assert!(e.contains("line 2, column `ssthresh`: `-1` is not a whole number"), "{e}");
}
