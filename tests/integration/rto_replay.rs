//! `backoffsim rto replay`: a captured series through an estimator, end to end.

use super::common::{run, text};

const SERIES: &str = "time_s,event,rtt_s\n0.1,sample,0.1\n0.2,sample,0.1\n1.2,timeout,\n3.2,timeout,\n3.3,sample,0.1\n";

fn replay(args: &[&str]) -> std::process::Output {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("series.csv");
    std::fs::write(&file, SERIES).unwrap();
    let mut all = vec!["rto", "replay", file.to_str().unwrap()];
    all.extend_from_slice(args);
    run(&all)
}

#[test]
fn rfc6298_replay_backs_off_on_timeouts_and_collapses_on_the_next_sample() {
    let o = replay(&[]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    // RFC 6298 (2.2): 100 ms → RTTVAR 50 ms, RTO floored at 1 s (2.4); (2.3): RTTVAR
    // 37.5 ms; (5.5): 2 s, 4 s; then a fresh sample recomputes: RTTVAR 28.125 ms, RTO 1 s.
    assert_eq!(
        text(&o.stdout),
        "time_s,event,rtt_s,srtt_s,rttvar_s,rto_s,backoffs\n\
         0.100000,sample,0.100000,0.100000,0.050000,1.000000,0\n\
         0.200000,sample,0.100000,0.100000,0.037500,1.000000,0\n\
         1.200000,timeout,,0.100000,0.037500,2.000000,1\n\
         3.200000,timeout,,0.100000,0.037500,4.000000,2\n\
         3.300000,sample,0.100000,0.100000,0.028125,1.000000,0\n"
    );
}

#[test]
fn linux_replay_floors_the_variance_term_at_rto_min() {
    let o = replay(&["--profile", "linux"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    // tcp_rtt_estimator: srtt 100 ms, rttvar max(2·100/4·…, rto_min 200 ms) → RTO 300 ms
    // (75 jiffies at HZ 250), doubling to 600 ms and 1.2 s, collapsing to 300 ms.
    let rto: Vec<&str> = out.lines().skip(1).map(|l| l.split(',').nth(5).unwrap()).collect();
    assert_eq!(rto, ["0.300000", "0.300000", "0.600000", "1.200000", "0.300000"]);
    assert!(out.starts_with("time_s,event,rtt_s,srtt_s,rttvar_s,rto_s,backoffs,mdev_s,mdev_max_s\n"));
}

#[test]
fn linux_replay_takes_max_rto_5s_as_net_ipv4_tcp_rto_max_ms_5000_does() {
    // A host with tcp_rto_max_ms = 5000 is an ordinary Linux host: no nonconformant needed,
    // and the doubling stops at 5 s (tcp_retransmit_timer: min(icsk_rto << 1, tcp_rto_max)).
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("series.csv");
    let rows: String = (1..=6).map(|k| format!("{}.0,timeout,\n", k)).collect();
    std::fs::write(&file, format!("time_s,event,rtt_s\n0.1,sample,0.1\n{rows}")).unwrap();
    let o = run(&["rto", "replay", file.to_str().unwrap(), "--profile", "linux", "--set", "max_rto=5s"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let rto: Vec<&str> = out.lines().skip(1).map(|l| l.split(',').nth(5).unwrap()).collect();
    assert_eq!(rto, ["0.300000", "0.600000", "1.200000", "2.400000", "4.800000", "5.000000", "5.000000"]);
    // rfc6298 keeps its MUST: 5 s is below (2.5)'s 60 s.
    let o = run(&["rto", "replay", file.to_str().unwrap(), "--set", "max_rto=5s"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("nonconformant"), "{}", text(&o.stderr));
}

#[test]
fn set_overrides_use_the_scenario_names() {
    let o = replay(&["--set", "min_rto=200ms", "--set", "nonconformant=true"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    // SRTT 100 ms + 4·50 ms = 300 ms, no longer floored at 1 s.
    assert!(text(&o.stdout).lines().nth(1).unwrap().ends_with(",0.300000,0"), "{}", text(&o.stdout));
}

#[test]
fn bad_rows_and_bad_settings_exit_2_naming_the_place() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("bad.csv");
    std::fs::write(&file, "time_s,event,rtt_s\n0.1,sample,0.1\n0.2,sample,abc\n").unwrap();
    let o = run(&["rto", "replay", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("line 3, column rtt_s: `abc` is not a number of seconds"), "{}", text(&o.stderr));

    let o = replay(&["--set", "min_rto=10ms"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("nonconformant"), "{}", text(&o.stderr));
    let o = replay(&["--set", "nosuchkey=1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("--set nosuchkey=1: nosuchkey: unknown key `nosuchkey`"), "{}", text(&o.stderr));
    // Keys only the sender reads would change nothing here: refused, not ignored.
    for key in ["tlp=false", "retries2=3", "karn=false", "user_timeout=30s"] {
        let o = replay(&["--set", key]);
        assert_eq!(o.status.code(), Some(2), "{key}");
        assert!(text(&o.stderr).contains("has no effect on a replay"), "{}", text(&o.stderr));
    }
    let o = replay(&["--profile", "bsd"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("unknown profile `bsd`"), "{}", text(&o.stderr));
}
