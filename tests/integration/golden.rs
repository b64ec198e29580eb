//! Golden files: a small trace checked row by row by hand against RFC 6298, pinned so
//! that any change to the model or the output format shows up as a readable diff.
//! After an intended change, regenerate with `BACKOFFSIM_BLESS=1 cargo test --release golden`
//! and check the new rows by hand again.

use super::common::{root, run, text};

/// The hand check of `tests/golden/golden-small/trace.csv`:
/// - 0 s SYN, RTO 1 s (2.1); 0.1 s SYN-ACK: first sample 100 ms gives SRTT 100 ms,
///   RTTVAR 50 ms, RTO max(1 s, 0.1 + 4·0.05) = 1 s (2.2, 2.4); segments 0 and 1 sent.
/// - 0.2 s ACK 1: sample 100 ms, RTTVAR = 3/4·50 + 1/4·|100 − 100| = 37.5 ms (2.3);
///   segments 2 and 3 leave before the blackout, but their ACKs (sent at 0.25 s) die in it.
/// - 1.2 s: the timer restarted at 0.2 s expires: RTO 2 s (5.5), segment 2 resent into
///   the blackout (5.4); 3.2 s: expires again, RTO 4 s, resent; it arrives as a duplicate
///   (spurious) and ACK 4 at 3.3 s ends the transfer without a sample (Karn, section 3).
/// - summary: the RTO held 1 s for 1.2 s, 2 s for 2 s and 4 s for 0.1 s of the 3.3 s:
///   `rto_mean` 5.6/3.3 = 1.697 s; 1.2/3.3 = 36 % of the time at 1 s, 97 % at or below
///   2 s, so `rto_p50` is 2 s and `rto_p99` 4 s.
/// - congestion columns (rfc6298: Reno as RFC 5681 writes it): `cwnd` is the initial
///   window of 10 (RFC 6928) and stays there, since the receiver's window of 2 limits the
///   flow and an ACK grows only a window that was used (RFC 7661, `tcp_is_cwnd_limited`:
///   10 is not under twice the 2 in flight); `ca_state` `open` and `ssthresh` empty up to
///   the first timeout. At 1.2 s RFC 5681 (4): ssthresh = max(FlightSize / 2, 2) =
///   max(1, 2) = 2 and cwnd = LW = 1, shown from the retransmission's row, `loss`; the
///   second timeout at 3.2 s holds ssthresh (section 3.1: the segment was already resent
///   by the timer); ACK 4 at 3.3 s finishes the transfer before any growth, `open`.
#[test]
fn small_blackout_trace_matches_the_hand_checked_golden_file() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("golden-small");
    let o = run(&["run", "tests/fixtures/golden-small.toml", "--quiet", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let golden = root().join("tests/golden/golden-small");
    for file in ["trace.csv", "summary.csv"] {
        let got = std::fs::read_to_string(out.join(file)).unwrap();
        if std::env::var_os("BACKOFFSIM_BLESS").is_some() {
            std::fs::write(golden.join(file), &got).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(golden.join(file)).unwrap();
        if got != want {
            let diff: Vec<String> = want
                .lines()
                .zip(got.lines())
                .enumerate()
                .filter(|(_, (w, g))| w != g)
                .take(5)
                .map(|(i, (w, g))| format!("line {}:\n  expected {w}\n  got      {g}", i + 1))
                .collect();
            panic!(
                "{file} differs from the golden file ({} vs {} lines):\n{}",
                want.lines().count(),
                got.lines().count(),
                diff.join("\n")
            );
        }
    }
}
