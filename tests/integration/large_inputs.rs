//! Scenarios of 100,000 blackouts: every phase after the simulation (summary, tables,
//! manifest, plots, report) stops at a Ctrl-C or SIGTERM, writes nothing and leaves the
//! earlier results as they were. Before the phases were made linear such a run took
//! over five minutes to write its results and honoured SIGTERM only after four.

use std::process::Stdio;
use std::time::{Duration, Instant};

use super::common::{bin, files, limit_memory, names_in, root, stop_with, text};

/// A TCP scenario whose path goes dark for 100 ms every second, 100,000 times, for
/// RFC 6298 and Linux: a few seconds of simulation and a summary of 100,000 numbered
/// metrics per variant.
fn many_blackouts(n: usize) -> String {
    let mut s = format!(
        "name = \"many-blackouts\"\ndescription = \"x\"\nseed = 1\nreplications = 1\nhorizon = \"{}s\"\n\n\
         [tcp]\nclients = 1\nwindow = 10\nworkload = {{ kind = \"steady\", interval = \"1s\" }}\n\n\
         [path]\nbase_rtt = \"100ms\"\n",
        n + 10
    );
    for i in 0..n {
        s.push_str(&format!("\n[[path.blackout]]\nat = \"{}s\"\nduration = \"100ms\"\n", i + 5));
    }
    s.push_str("\n[[variant]]\nname = \"rfc6298\"\ntcp.rto.profile = \"rfc6298\"\n");
    s.push_str("\n[[variant]]\nname = \"linux\"\ntcp.rto.profile = \"linux\"\n");
    s
}

/// Runs `scenario` into `out`, which holds earlier results, sends SIGTERM once the
/// staging directory has `file` (so the run is past its simulation, in the phase that
/// writes what follows `file`), and checks what an interrupt must leave.
fn interrupted_once_staging_has(file: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("results");
    let earlier = bin()
        .args(["run", root().join("scenarios/tcp-blackout.toml").to_str().unwrap(), "--quiet", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(earlier.status.success(), "{}", text(&earlier.stderr));
    let before = files(&out);
    let scenario = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(scenario.path(), many_blackouts(100_000)).unwrap();

    // Under an address-space limit, with two workers (each thread may get an arena of
    // its own): the loader's tables of 100,000 blackouts, the results and the report's
    // copy of them fit in 2 GiB.
    let mut run = bin();
    run.args(["run", scenario.path().to_str().unwrap(), "--quiet", "--threads", "2", "--out"])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = limit_memory(&mut run, 2 << 30).spawn().unwrap();
    let staged = tmp.path().join(format!(".results.partial.{}", child.id())).join(file);
    let started = Instant::now();
    // Guards against a hang, not timing claims.
    while !staged.exists() {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the run ended ({status}) before {} was staged", staged.display());
        }
        assert!(started.elapsed() < Duration::from_secs(300), "{file} not staged after 300 s");
        std::thread::sleep(Duration::from_millis(2));
    }
    let o = stop_with("TERM", child);
    let stderr = text(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "SIGTERM once {file} was staged: {stderr}");
    assert!(stderr.contains("interrupted: nothing was written"), "{stderr}");
    assert_eq!(files(&out), before, "SIGTERM changed the earlier results");
    assert_eq!(names_in(tmp.path()), ["results"], "SIGTERM left a staging directory behind");
}

#[test]
fn sigterm_while_the_tables_and_the_manifest_of_100000_blackouts_are_written_stops_the_run() {
    // summary.csv is the first file: replications.csv, trace.csv, the manifest, the plots
    // and the reports are still to come.
    interrupted_once_staging_has("summary.csv");
}

#[test]
fn sigterm_while_the_report_of_100000_blackouts_is_drawn_stops_the_run() {
    // The RTO plot's SVG is the report's first file: its PNG, report.md, report.html and
    // the manifest that lists them are still to come.
    interrupted_once_staging_has("rto.svg");
}

#[test]
fn sigterm_while_a_large_scenario_is_loaded_stops_before_anything_is_claimed() {
    // 250,000 blackouts: some 13 MB of TOML, a second or more of parsing.
    let tmp = tempfile::tempdir().unwrap();
    let scenario = tmp.path().join("many.toml");
    std::fs::write(&scenario, many_blackouts(250_000)).unwrap();
    let out = tmp.path().join("results");
    let child = bin()
        .args(["run", scenario.to_str().unwrap(), "--quiet", "--out"])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let o = stop_with("TERM", child);
    let stderr = text(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{stderr}");
    // Said only by a stop during the load, before the results' place is known.
    assert!(stderr.contains("interrupted: nothing was written, and every earlier result is as it was"), "{stderr}");
    assert_eq!(names_in(tmp.path()), ["many.toml"], "nothing claimed or staged");
}

/// A scripted write of 2^64 − 1 segments, twice at one time: the writes add up without
/// wrapping, the estimate is finite, and the run takes what a write of a window takes
/// (one push per write, not one per segment: it used to spin for hours, deaf to SIGTERM).
#[test]
fn a_scripted_write_of_u64_max_segments_runs_like_a_small_one() {
    let scenario = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(
        scenario.path(),
        "name = \"huge-write\"\nseed = 1\nhorizon = \"60s\"\n\n[tcp]\nworkload = { kind = \"script\" }\n\
         rto.profile = \"linux\"\n\n[[tcp.write]]\nat = \"1s\"\nsegments = 18446744073709551615\n\n\
         [[tcp.write]]\nat = \"1s\"\nsegments = 18446744073709551615\n\n[path]\nbase_rtt = \"100ms\"\n",
    )
    .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let mut child = bin()
        .args(["run", scenario.path().to_str().unwrap(), "--quiet", "--out"])
        .arg(tmp.path().join("out"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    // Guards against a hang, not timing claims.
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(120) {
            child.kill().unwrap();
            panic!("a huge write still running after 120 s");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    assert!(status.success(), "{status}");
    let summary = std::fs::read_to_string(tmp.path().join("out/summary.csv")).unwrap();
    // The window flows from the write to the horizon: a sample per segment, ten per
    // 100 ms round trip for 59 s, and the handshake's.
    assert!(summary.contains("base,rtt_samples,count,1,5901,"), "{summary}");
}
