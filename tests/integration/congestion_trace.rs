//! The congestion columns of `trace.csv` (cwnd, ssthresh, ca_state) and the RTO plot's
//! congestion strip drawn from them, including from a trace written before they were.

use super::common::{run, text, trace};

fn golden_small(out: &std::path::Path) {
    let o = run(&["run", "tests/fixtures/golden-small.toml", "--quiet", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
}

/// golden-small (window 2, ACKs lost in a blackout from 0.25 s): the congestion window
/// is the initial 10 (RFC 6928) until the first timeout, never grown because the
/// receiver's window of 2 keeps it unused (RFC 7661); no loss has set a slow-start
/// threshold before it, so the column is empty; the RTO at 1.2 s enters loss recovery
/// (RFC 5681 (4): ssthresh 2, cwnd 1; Linux `TCP_CA_Loss`), which the retransmission's
/// row shows, and the finished transfer is open again.
#[test]
fn the_trace_carries_the_window_the_threshold_and_the_recovery_state() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("golden-small");
    golden_small(&out);
    let rows = trace(&out, "base");
    let columns: Vec<&String> = rows[0].keys().collect();
    for c in ["cwnd", "ssthresh", "ca_state"] {
        assert!(columns.iter().any(|k| *k == c), "no column {c}: {columns:?}");
    }
    let first_timeout = rows.iter().position(|r| r["event"] == "timeout").expect("a timeout");
    assert_eq!(rows[first_timeout]["time_s"], "1.200000000");
    for r in &rows[..first_timeout] {
        assert_eq!((r["cwnd"].as_str(), r["ssthresh"].as_str(), r["ca_state"].as_str()), ("10", "", "open"), "{r:?}");
    }
    for r in &rows[first_timeout + 1..] {
        assert_eq!((r["cwnd"].as_str(), r["ssthresh"].as_str()), ("1", "2"), "{r:?}");
    }
    let retransmits: Vec<&str> =
        rows.iter().filter(|r| r["event"] == "retransmit").map(|r| r["ca_state"].as_str()).collect();
    assert_eq!(retransmits, ["loss", "loss"]);
    assert_eq!(rows.last().map(|r| (r["event"].as_str(), r["ca_state"].as_str())), Some(("finished", "open")));
}

/// A results directory written before the congestion columns existed still plots, with
/// no congestion strip; the same trace with them gets one.
#[test]
fn a_trace_without_the_congestion_columns_still_plots_without_the_strip() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("golden-small");
    golden_small(&out);
    let plot = |name: &str| {
        let svg = tmp.path().join(name);
        let o = run(&["plot", "rto", out.to_str().unwrap(), "-o", svg.to_str().unwrap()]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        std::fs::read_to_string(svg).unwrap()
    };
    assert!(plot("new.svg").contains("cwnd (segments)"), "the strip's legend");

    let path = out.join("trace.csv");
    let cut: Vec<String> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|l| l.splitn(12, ',').take(11).collect::<Vec<_>>().join(","))
        .collect();
    assert!(cut[0].ends_with(",rto_s,backoffs"), "{}", cut[0]);
    std::fs::write(&path, cut.join("\n") + "\n").unwrap();
    let old = plot("old.svg");
    assert!(!old.contains("cwnd"), "no strip without a window to draw");
    assert!(old.contains("2 timeouts"), "the rest of the figure as before");
}

/// Rows the world writes beside the sender (keepalive probes, the reset) carry the
/// sender's window as it stands; a listener's request rows, before any sender exists,
/// leave the three columns empty.
#[test]
fn rows_beside_the_sender_carry_its_window_and_a_listeners_request_rows_none() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("keepalive");
    let o = run(&["run", "scenarios/tcp-keepalive.toml", "--quiet", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let rows = trace(&out, "linux-defaults");
    let beside: Vec<_> = rows.iter().filter(|r| r["event"] == "keepalive" || r["event"] == "aborted").collect();
    assert!(!beside.is_empty());
    for r in beside {
        // The transfer finished long before: the window is the one it ended with, grown
        // in slow start from 10 while under twice the 10 the receiver's window let out
        // (`tcp_is_cwnd_limited`), so to 19 by the last ACK.
        assert_eq!((r["cwnd"].as_str(), r["ssthresh"].as_str(), r["ca_state"].as_str()), ("19", "", "open"), "{r:?}");
    }

    let out = tmp.path().join("synack");
    let o = run(&["run", "scenarios/tcp-synack.toml", "--quiet", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let rows = trace(&out, "client-silent");
    assert!(rows.iter().any(|r| r["event"] == "synack_retransmit"));
    for r in &rows {
        assert_eq!((r["cwnd"].as_str(), r["ssthresh"].as_str(), r["ca_state"].as_str()), ("", "", ""), "{r:?}");
    }
}
