//! `backoffsim rto ss`: the kernel's own timer state from a log of `ss -ti` polls.

use super::common::{run, text};

const LOG: &str = "1733375000.25
State Recv-Q Send-Q Local Address:Port Peer Address:Port
ESTAB 0 0 10.0.0.1:40000 10.0.0.2:5001
\t cubic wscale:7,7 rto:204 rtt:1.5/0.75 mss:1448 cwnd:10
ESTAB 0 0 10.0.0.1:40001 10.0.0.3:22
\t rto:300
1733375000.30
ESTAB 0 0 10.0.0.1:40000 10.0.0.2:5001
\t rto:408 backoff:1 rtt:100.25/50.125 cwnd:1 ssthresh:7 retrans:1/3
";

fn ss(log: &str, extra: &[&str]) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ss.log");
    std::fs::write(&path, log).unwrap();
    let mut args = vec!["rto", "ss", path.to_str().unwrap()];
    args.extend(extra);
    run(&args)
}

#[test]
fn every_connection_of_every_poll_is_a_row_with_the_kernels_values_in_seconds() {
    let o = ss(LOG, &[]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(
        text(&o.stdout),
        "time_s,local,peer,state,rto_s,srtt_s,rttvar_s,backoff,cwnd,ssthresh,retrans,total_retrans\n\
         1733375000.250000000,10.0.0.1:40000,10.0.0.2:5001,ESTAB,0.204000000,0.001500000,0.000750000,,10,,,\n\
         1733375000.250000000,10.0.0.1:40001,10.0.0.3:22,ESTAB,0.300000000,,,,,,,\n\
         1733375000.300000000,10.0.0.1:40000,10.0.0.2:5001,ESTAB,0.408000000,0.100250000,0.050125000,1,1,7,1,3\n"
    );
}

#[test]
fn a_flow_keeps_one_connection_named_from_either_end() {
    let o = ss(LOG, &["--flow", "10.0.0.2:5001-10.0.0.1:40000"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout).lines().count(), 3, "{}", text(&o.stdout));
    let none = ss(LOG, &["--flow", "10.0.0.9:1-10.0.0.2:5001"]);
    assert_eq!(none.status.code(), Some(2));
    assert!(text(&none.stderr).contains("no snapshot of that connection"), "{}", text(&none.stderr));
}

#[test]
fn a_bad_value_is_refused_with_its_line_and_key_and_no_rows() {
    let o = ss("ESTAB 0 0 a:1 b:2\n\t rto:fast\n", &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("line 2: key `rto`: expected milliseconds, found `fast`"), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), "");
}
