//! `backoffsim rto capture --out DIR` on a real connection (`validation/linux/captures/
//! blackout-3s.pcap`: a Linux 6.18 sender, HZ 250, 100 ms path, everything dropped for
//! 3 s from 10 s, so four RTO expiries): the files, what the stall table says the kernel
//! did against what each profile's timer would have done, and the directory's safety.

use std::path::{Path, PathBuf};

use super::common::{files, root, run, text};

fn fixture() -> PathBuf {
    root().join("validation/linux/captures/blackout-3s.pcap")
}

fn out(dir: &Path, args: &[&str]) -> std::process::Output {
    let file = fixture();
    let mut all = vec!["rto", "capture", file.to_str().unwrap(), "--out", dir.to_str().unwrap()];
    all.extend_from_slice(args);
    run(&all)
}

/// `stalls.csv`'s rows as maps of column to cell.
fn stalls(dir: &Path) -> Vec<std::collections::BTreeMap<String, String>> {
    let csv = std::fs::read_to_string(dir.join("stalls.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<String> = lines.next().unwrap().split(',').map(String::from).collect();
    lines.map(|l| header.iter().cloned().zip(l.split(',').map(String::from)).collect()).collect()
}

fn secs(list: &str) -> Vec<f64> {
    list.split(';').map(|s| s.parse().unwrap()).collect()
}

#[test]
fn the_files_are_written_and_trace_csv_is_what_stdout_would_be() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("blackout");
    let o = out(&dir, &["--profile", "linux"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(o.stdout.is_empty(), "with --out the rows go to trace.csv");
    assert!(text(&o.stderr).contains("report.md, rto.png, rto.svg, trace.csv, stalls.csv"), "{}", text(&o.stderr));
    let names: Vec<String> = files(&dir).into_iter().map(|f| f.0).collect();
    assert_eq!(names, ["report.md", "rto.png", "rto.svg", "stalls.csv", "trace.csv"]);
    let stdout = run(&["rto", "capture", fixture().to_str().unwrap(), "--profile", "linux"]);
    assert_eq!(std::fs::read(dir.join("trace.csv")).unwrap(), stdout.stdout);
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(md.contains("![RTO trace](rto.png)") && md.contains("[stalls.csv](stalls.csv)"), "{md}");
    assert!(md.contains("| 1 | 10.277318 | 0.316044, 0.956015, 2.204011, 4.668001 | 4.768803 |"), "{md}");
    let svg = std::fs::read_to_string(dir.join("rto.svg")).unwrap();
    assert!(svg.contains("a stall&apos;s retransmission") && svg.contains("blackout-3s.pcap"), "{svg}");
}

/// The kernel's own timer in the blackout: armed by the last segment sent before it
/// (`tcp_rearm_rto` after the loss probe), then `tcp_retransmit_timer` doubling
/// `icsk_rto` from 304 ms (the `tcpi_rto` the fixture's polls show). The linux profile's
/// expiries are those intervals; the kernel's retransmissions come later by at most a
/// jiffy plus an eighth of each interval, the lateness of the timer wheel
/// (`kernel/time/timer.c`, `LVL_GRAN`), and it recovers with the fourth.
#[test]
fn the_linux_profile_repeats_the_kernels_doubling_within_the_timer_wheels_lateness() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("linux");
    assert!(out(&dir, &["--profile", "linux", "-q"]).status.success());
    let rows = stalls(&dir);
    assert_eq!(rows.len(), 1, "{rows:?}");
    let s = &rows[0];
    assert_eq!((s["phase"].as_str(), s["retransmissions"].as_str()), ("established", "4"));
    let profile = secs(&s["profile_expired_after_s"]);
    assert_eq!(profile, [0.304, 0.912, 2.128, 4.56]);
    let kernel = secs(&s["retransmitted_after_s"]);
    let gaps =
        |v: &[f64]| -> Vec<f64> { v.iter().scan(0.0, |last, &t| Some(t - std::mem::replace(last, t))).collect() };
    for (k, p) in gaps(&kernel).into_iter().zip(gaps(&profile)) {
        assert!(k >= p && k <= p + p / 8.0 + 0.004, "the kernel waited {k} s where the profile's timer says {p} s");
    }
    // The path came back between the third and fourth retransmissions: the profile's
    // fourth expiry is the one that gets through, 0.100802 s before its ACK.
    assert_eq!(s["profile_recovered_after_s"], "4.660802");
    assert_eq!(s["profile_recovered_by_s"], "4.660802");
    assert_eq!(s["recovered_after_s"], "4.768803");
}

/// What-if: RFC 6298's timer on the same silence. Armed by the last ACK (§5.3), at
/// 1 s (§2.4's floor), doubling (§5.5): 1, 3, 7 s. The path came back after the kernel's
/// third retransmission (2.44 s) and by its fourth (4.90 s), so the profile recovers
/// between its expiry at 3 s and the one at 7 s. With `max_rto = 1s` (RFC 6298 §2.5
/// allows no less than 60 s, so `nonconformant`) the expiries come every second after
/// the first and it recovers between 3 and 5 s.
#[test]
fn another_profile_and_other_constants_show_their_own_expiries_and_recovery() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("rfc");
    assert!(out(&dir, &["--profile", "rfc6298", "-q"]).status.success());
    let s = &stalls(&dir)[0];
    assert_eq!(s["armed_s"], "10.041365");
    assert_eq!(secs(&s["profile_expired_after_s"]), [1.0, 3.0, 7.0]);
    assert_eq!(
        (s["profile_recovered_after_s"].as_str(), s["profile_recovered_by_s"].as_str()),
        ("3.100802", "7.100802")
    );

    let capped = tmp.path().join("capped");
    let o = out(&capped, &["--profile", "rfc6298", "--set", "max_rto=1s", "--set", "nonconformant=true", "-q"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let s = &stalls(&capped)[0];
    assert_eq!(secs(&s["profile_expired_after_s"]), [1.0, 2.0, 3.0, 4.0, 5.0]);
    assert_eq!(
        (s["profile_recovered_after_s"].as_str(), s["profile_recovered_by_s"].as_str()),
        ("3.100802", "5.100802")
    );
    let md = std::fs::read_to_string(capped.join("report.md")).unwrap();
    assert!(md.contains("profile rfc6298, max_rto=1s, nonconformant=true"), "{md}");
    assert!(md.contains("| 3.100802 to 5.100802 |"), "{md}");
}

#[test]
fn the_same_capture_gives_the_same_bytes_and_a_rerun_replaces_its_own_files() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    assert!(out(&a, &["-q"]).status.success());
    assert!(out(&b, &["-q"]).status.success());
    assert_eq!(files(&a), files(&b));
    let o = out(&a, &["--profile", "linux", "-q"]);
    assert!(o.status.success(), "a directory it wrote is its to replace: {}", text(&o.stderr));
    assert_ne!(files(&a), files(&b));
}

#[test]
fn a_directory_with_someone_elses_file_is_refused_and_left_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("mine");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("thesis.csv"), "precious").unwrap();
    let o = out(&dir, &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("thesis.csv"), "{}", text(&o.stderr));
    assert_eq!(files(&dir), [("thesis.csv".to_string(), b"precious".to_vec())]);
}

#[test]
fn a_users_own_report_and_what_it_links_are_refused_and_left_alone() {
    // An incident folder whose report.md shows the user's figure and links their data:
    // without backoffsim's signature line it is theirs, and so is all it links.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("incident-42");
    std::fs::create_dir(&dir).unwrap();
    let mine = [
        ("data.csv", b"a,b\n".to_vec()),
        ("latency.png", b"not a plot of ours".to_vec()),
        ("report.md", b"# Postmortem\n![latency](latency.png)\n[data](data.csv)\n".to_vec()),
    ];
    for (name, bytes) in &mine {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
    let o = out(&dir, &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("did not write"), "{}", text(&o.stderr));
    let kept: Vec<(String, Vec<u8>)> = mine.iter().map(|(n, b)| (n.to_string(), b.clone())).collect();
    assert_eq!(files(&dir), kept);
}

/// An `ss -ti` log of the sender made from the `TCP_INFO` polls committed beside the
/// capture (`blackout-3s.tcpinfo.csv`: `tcpi_rto`, `tcpi_rtt` and `tcpi_rttvar` in µs,
/// written as `ss` prints them, in ms), with `local` as the socket's own end.
fn ss_log(local: &str, peer: &str) -> String {
    let csv = std::fs::read_to_string(root().join("validation/linux/captures/blackout-3s.tcpinfo.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (t, rto, rtt, var) = (col("time_ns"), col("rto_us"), col("rtt_us"), col("rttvar_us"));
    let ms = |us: &str| format!("{}", us.parse::<f64>().unwrap() / 1000.0);
    let mut log = String::new();
    for l in lines {
        let f: Vec<&str> = l.split(',').collect();
        let ns: u64 = f[t].parse().unwrap();
        log.push_str(&format!("{}.{:09}\nESTAB 0 0 {local} {peer}\n", ns / 1_000_000_000, ns % 1_000_000_000));
        log.push_str(&format!("\t cubic wscale:7,7 rto:{} rtt:{}/{} cwnd:10\n", ms(f[rto]), ms(f[rtt]), ms(f[var])));
    }
    log
}

/// The kernel's own `tcpi_rto`, through `ss -ti`'s text, against the RTO derived from the
/// capture: within a jiffy (HZ 250, `hz`'s default under linux) at every poll, as
/// `capture_kernel.rs` finds from the polls directly.
#[test]
fn the_kernels_rto_from_ss_agrees_within_a_jiffy_at_every_poll() {
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("ss.log");
    std::fs::write(&log, ss_log("10.23.0.1:38900", "10.23.0.2:5001")).unwrap();
    let dir = tmp.path().join("with-ss");
    let o = out(&dir, &["--profile", "linux", "--ss", log.to_str().unwrap(), "-q"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(md.contains("## Against the kernel's own RTO"), "{md}");
    assert!(md.contains("1,256 polls of the sender's socket"), "{md}");
    assert!(
        md.contains(
            "within 0.004 s (one tick of the profile's clock) of the kernel's `rto:` at 1,256 of them (100.0 %); \
             every one to the microsecond"
        ),
        "{md}"
    );
    let svg = std::fs::read_to_string(dir.join("rto.svg")).unwrap();
    assert!(svg.contains("RTO (ss -ti)"), "the legend names the kernel's rings");

    // The receiver's side of the same log is not the sender's timer: no poll is taken.
    std::fs::write(&log, ss_log("10.23.0.2:5001", "10.23.0.1:38900")).unwrap();
    let o = out(&dir, &["--profile", "linux", "--ss", log.to_str().unwrap(), "-q"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(md.contains("has no poll of the sender's socket (local 10.23.0.1:38900"), "{md}");
    assert!(text(&o.stderr).contains("warning: --ss"), "a warning even with -q: {}", text(&o.stderr));
}

#[test]
fn ss_needs_out_and_a_log_that_reads() {
    let tmp = tempfile::tempdir().unwrap();
    let file = fixture();
    let o = run(&["rto", "capture", file.to_str().unwrap(), "--ss", "nowhere.log"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("--out"), "{}", text(&o.stderr));
    let o = out(&tmp.path().join("x"), &["--ss", tmp.path().join("nowhere.log").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("--ss") && text(&o.stderr).contains("nowhere.log"), "{}", text(&o.stderr));
    let bad = tmp.path().join("bad.log");
    std::fs::write(&bad, "1796450596.5\nESTAB 0 0 10.23.0.1:38900 10.23.0.2:5001\n\t rto:abc\n").unwrap();
    let o = out(&tmp.path().join("y"), &["--ss", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("line 3"), "{}", text(&o.stderr));
    assert!(!tmp.path().join("y").exists(), "nothing is written when the log is bad");
}

/// Linux times the handshake from the SYN's send, in microseconds (`tcp_clean_rtx_queue`
/// on a SYN sent once), not from the echoed timestamp: the fixture's first `TCP_INFO`
/// poll shows rtt 100.536 ms and rto 304 ms; the handshake in the capture took 100.497 ms.
#[test]
fn linux_times_the_handshake_in_microseconds() {
    let o = run(&["rto", "capture", fixture().to_str().unwrap(), "--profile", "linux"]);
    let csv = text(&o.stdout);
    let first = csv.lines().nth(1).unwrap();
    assert!(first.starts_with("0.100497,sample,0.100497,0.100497,0.050249,0.304000,"), "{first}");
}

/// The same records in reverse order: read as stamped, with a warning naming the first
/// packet earlier than the one before it, even with `--quiet`, and a line in the report.
#[test]
fn a_capture_whose_clock_goes_backwards_is_read_with_a_warning() {
    let bytes = std::fs::read(fixture()).unwrap();
    let (header, mut rest) = bytes.split_at(24);
    let mut records = Vec::new();
    while rest.len() >= 16 {
        let len = u32::from_le_bytes(rest[8..12].try_into().unwrap()) as usize;
        records.push(&rest[..16 + len]);
        rest = &rest[16 + len..];
    }
    let mut reversed = header.to_vec();
    for r in records.iter().rev() {
        reversed.extend_from_slice(r);
    }
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("reversed.pcap");
    std::fs::write(&file, &reversed).unwrap();
    let dir = tmp.path().join("out");
    let o = run(&["rto", "capture", file.to_str().unwrap(), "--out", dir.to_str().unwrap(), "-q"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(
        err.contains("warning") && err.contains("1361 packets are stamped earlier") && err.contains("packet 2"),
        "{err}"
    );
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(md.contains("| clock | 1,361 packets stamped earlier than the packet before them"), "{md}");
}

#[test]
fn the_profile_is_chosen_with_profile_not_set() {
    let o = run(&["rto", "capture", fixture().to_str().unwrap(), "--profile", "rfc6298", "--set", "profile=linux"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("--set profile: the profile is chosen with --profile"), "{}", text(&o.stderr));
}

#[test]
fn a_key_set_twice_and_an_unknown_profile_are_refused_naming_the_flag() {
    let file = fixture();
    let o = run(&["rto", "capture", file.to_str().unwrap(), "--set", "min_rto=300ms", "--set", "min_rto=1s"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("--set min_rto: given twice"), "{}", text(&o.stderr));
    let o = run(&["rto", "capture", file.to_str().unwrap(), "--profile", "bsd"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("--profile: unknown profile `bsd`"), "{}", text(&o.stderr));
    let o = run(&["rto", "capture", file.to_str().unwrap(), "--set", "max_rto=5s"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("add --set nonconformant=true"), "{}", text(&o.stderr));
}
