//! `backoffsim rto capture --profile linux` on a request/response connection whose last
//! request is lost: with SACK negotiated the sender first sends a tail loss probe
//! (RFC 8985 §7; Linux `tcp_schedule_loss_probe`, `tcp_send_loss_probe`), then the RTO
//! fires a full RTO after the probe (`tcp_rearm_rto` from now) and doubles
//! (`tcp_retransmit_timer`). Without SACK (`tcp_is_sack`) there is no probe.

use std::net::{IpAddr, Ipv4Addr};
use std::path::Path;

use backoffsim_capture::synth::{self, DataLink, Packet};

use super::common::{run, text};

const C: (IpAddr, u16) = (IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)), 40000);
const S: (IpAddr, u16) = (IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)), 443);

/// Ten 100-byte requests, each acked 100 ms later (SRTT 100 ms, linux RTO 300 ms), then
/// one lost from 5.2 s, resent at `resent` (ms) and acked 100 ms after the last.
fn capture(sack: bool, resent: &[u64]) -> Vec<u8> {
    let ms = |t: u64| t * 1000;
    let mut syn = Packet::new(0, C, S, 100, 0).syn();
    let mut synack = Packet::new(ms(100), S, C, 500, 101).syn();
    synack.ack_flag = true;
    if sack {
        syn = syn.sack_permitted();
        synack = synack.sack_permitted();
    }
    let mut p = vec![syn, synack, Packet::new(ms(100), C, S, 101, 501)];
    let mut seq = 101;
    for i in 0..10 {
        p.push(Packet::new(ms(200 + 500 * i), C, S, seq, 501).payload(100));
        seq += 100;
        p.push(Packet::new(ms(300 + 500 * i), S, C, 501, seq));
    }
    p.push(Packet::new(ms(5200), C, S, seq, 501).payload(100));
    for &t in resent {
        p.push(Packet::new(ms(t), C, S, seq, 501).payload(100));
    }
    p.push(Packet::new(ms(resent.last().unwrap() + 100), S, C, 501, seq + 100));
    synth::pcap(DataLink::ETHERNET, &p)
}

fn out(dir: &Path, file: &Path, sets: &[&str]) -> (String, String) {
    let mut args = vec!["rto", "capture", file.to_str().unwrap(), "--profile", "linux", "-q"];
    for s in sets {
        args.extend(["--set", s]);
    }
    args.extend(["--out", dir.to_str().unwrap()]);
    let o = run(&args);
    assert!(o.status.success(), "{}", text(&o.stderr));
    (std::fs::read_to_string(dir.join("trace.csv")).unwrap(), std::fs::read_to_string(dir.join("stalls.csv")).unwrap())
}

fn resends(trace: &str) -> Vec<String> {
    trace
        .lines()
        .filter(|l| !l.contains(",sample,") && !l.contains(",established,") && !l.starts_with("time_s"))
        .map(|l| l.split(',').take(2).collect::<Vec<_>>().join(","))
        .collect()
}

/// The probe 300 ms after the last send (2·SRTT + `tcp_rto_min` = 400 ms, cut to the
/// RTO's deadline), the RTO 300 ms after the probe, then 600 ms: where the kernel puts
/// them, and where the profile's what-if puts them too.
#[test]
fn with_sack_the_probe_then_a_full_rto_then_doubling_as_the_kernel() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tlp.pcap");
    std::fs::write(&file, capture(true, &[5500, 5800, 6400])).unwrap();
    let (trace, stalls) = out(&dir.path().join("out"), &file, &[]);
    assert_eq!(resends(&trace), ["5.500000,probe", "5.800000,timeout", "6.400000,timeout"]);
    let row: Vec<&str> = stalls.lines().nth(1).unwrap().split(',').collect();
    assert_eq!(row[4], "0.300000;0.600000;1.200000", "{stalls}");
    assert_eq!(row[7], "0.300000;0.600000;1.200000", "{stalls}");
    let report = std::fs::read_to_string(dir.path().join("out/report.md")).unwrap();
    assert!(report.contains("| tail loss probes | 1: 1 resending the last segment, 0 of new data |"), "{report}");

    // `--set tlp=false`: a sender without probes; the same resends are then the RTO's,
    // and the what-if has no probe.
    let (trace, stalls) = out(&dir.path().join("no-tlp"), &file, &["tlp=false"]);
    assert!(!trace.contains("probe"), "{trace}");
    let row: Vec<&str> = stalls.lines().nth(1).unwrap().split(',').collect();
    assert!(row[7].starts_with("0.300000;0.900000"), "{stalls}");
}

/// No SACK-permitted in the SYNs: no probe (`tcp_is_sack`); the RTO at 300 ms, then 600
/// ms after it, 1.2 s after that (RFC 6298 §5.5).
#[test]
fn without_sack_there_is_no_probe() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("nosack.pcap");
    std::fs::write(&file, capture(false, &[5500, 6100, 7300])).unwrap();
    let (trace, stalls) = out(&dir.path().join("out"), &file, &[]);
    assert_eq!(resends(&trace), ["5.500000,timeout", "6.100000,timeout", "7.300000,timeout"]);
    let row: Vec<&str> = stalls.lines().nth(1).unwrap().split(',').collect();
    assert_eq!(row[7], "0.300000;0.900000;2.100000", "{stalls}");
}

/// RFC 6298 has no probe: asking the rfc6298 reading for one is refused, not ignored.
#[test]
fn tlp_true_under_rfc6298_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sack.pcap");
    std::fs::write(&file, capture(true, &[5500])).unwrap();
    let f = file.to_str().unwrap();
    let o = run(&["rto", "capture", f, "--profile", "rfc6298", "--set", "tlp=true"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
    assert!(text(&o.stderr).contains("--set tlp=true: has no effect under --profile rfc6298"), "{}", text(&o.stderr));
}
