//! Inputs that are not what a command reads: `rto replay` on malformed CSV, and `plot` /
//! `compare` on directories that are not runs or whose files were damaged. Each exits 2
//! naming the file, the line and the column, and writes nothing. Endless inputs are
//! refused at their stated bound under an address-space limit, so a reader that tried
//! to hold them fails the test rather than taking the machine.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

use super::common::{bin, limit_memory, root, run, text};

/// The address space the bounded readers are run in: a few times what they need.
const MEMORY: u64 = 200 << 20;

/// `rto replay -` with every stream piped.
fn spawn_replay() -> std::process::Child {
    bin()
        .args(["rto", "replay", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// `rto replay -` on `input`: asserts exit 2 and returns stderr.
fn replay_refuses(input: &str) -> String {
    let mut child = spawn_replay();
    // A refused row may end the reader before all of the input is written.
    let _ = child.stdin.take().unwrap().write_all(input.as_bytes());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(!err.contains("panicked"), "{err}");
    err
}

#[test]
fn replay_names_a_missing_column_in_the_header() {
    let err = replay_refuses("time_s,event\n0.1,sample\n");
    assert!(err.contains("-: line 1 (header): missing column `rtt_s` (required: time_s, event, rtt_s)"), "{err}");
    let err = replay_refuses("time_s,event,rtt_s,srtt\n");
    assert!(err.contains("line 1 (header): unknown column `srtt`"), "{err}");
    let err = replay_refuses("");
    assert!(err.contains("the input is empty: expected a header `time_s,event,rtt_s`"), "{err}");
}

#[test]
fn replay_names_the_row_and_column_of_a_value_that_is_not_a_number() {
    let err = replay_refuses("time_s,event,rtt_s\n0.1,sample,0.1\n\n# a comment\nsoon,sample,0.1\n");
    // Blank and comment lines are counted, so the line is the file's own.
    assert!(err.contains("line 5, column time_s: `soon` is not a number of seconds"), "{err}");
    for bad in ["nan", "inf", "1e400"] {
        let err = replay_refuses(&format!("time_s,event,rtt_s\n0.1,sample,{bad}\n"));
        assert!(err.contains(&format!("line 2, column rtt_s: `{bad}` is not a number of seconds")), "{err}");
    }
}

#[test]
fn replay_refuses_negative_times_and_rtts() {
    let err = replay_refuses("time_s,event,rtt_s\n-0.1,sample,0.1\n");
    assert!(err.contains("line 2, column time_s: `-0.1` is negative: expected seconds, zero or more"), "{err}");
    let err = replay_refuses("time_s,event,rtt_s\n0.1,sample,-0.1\n");
    assert!(err.contains("line 2, column rtt_s: `-0.1` is negative"), "{err}");
}

#[test]
fn replay_says_a_time_beyond_584_years_is_too_large_rather_than_not_a_number() {
    let err = replay_refuses("time_s,event,rtt_s\n99999999999999999999,sample,0.1\n");
    assert!(
        err.contains("line 2, column time_s: `99999999999999999999` is too large: at most 18446744073 seconds"),
        "{err}"
    );
}

#[test]
fn replay_refuses_time_that_goes_backwards() {
    let err = replay_refuses("time_s,event,rtt_s\n0.2,sample,0.1\n0.1,sample,0.1\n");
    assert!(err.contains("line 3, column time_s: 0.1 s is earlier than the previous row's 0.2 s"), "{err}");
}

#[test]
fn replay_refuses_a_row_with_the_wrong_number_of_fields_or_an_unknown_event() {
    let err = replay_refuses("time_s,event,rtt_s\n0.1,sample\n");
    assert!(err.contains("line 2: has 2 fields, the header has 3"), "{err}");
    let err = replay_refuses("time_s,event,rtt_s\n0.1,smaple,0.1\n");
    assert!(err.contains("line 2, column event: `smaple` is not an event"), "{err}");
}

#[test]
fn replay_streams_rows_out_before_its_input_has_ended() {
    // A reader that loaded the file whole could print nothing until the end of its
    // input: here the input stays open until the first rows have come back.
    let mut child = spawn_replay();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (lines_tx, lines_rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut count = 0u64;
        for line in BufReader::new(stdout).lines() {
            line.unwrap();
            count += 1;
            let _ = lines_tx.send(count);
        }
        count
    });
    let rows = 20_000u64; // ~1 MB of output: well past any output buffer
    let mut input = String::from("time_s,event,rtt_s\n");
    for i in 0..rows {
        input.push_str(&format!("{}.{:03},sample,0.1\n", i / 1000, i % 1000));
    }
    stdin.write_all(input.as_bytes()).unwrap();
    stdin.flush().unwrap();
    // Not a timing bound: a guard so that a reader that waits for the end fails the test
    // instead of hanging it.
    let first = lines_rx.recv_timeout(Duration::from_secs(60));
    assert!(first.is_ok(), "no output while the input was still open: the reader waits for the end");
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.success());
    assert_eq!(reader.join().unwrap(), rows + 1, "a row out for every row in, plus the header");
}

#[test]
fn replay_of_dev_zero_is_refused_at_the_line_limit_in_bounded_memory() {
    let zero = || std::fs::File::open("/dev/zero").unwrap();
    let by_name = limit_memory(&mut bin(), MEMORY).args(["rto", "replay", "/dev/zero"]).output().unwrap();
    let piped = limit_memory(&mut bin(), MEMORY).args(["rto", "replay", "-"]).stdin(zero()).output().unwrap();
    for (o, name) in [(&by_name, "/dev/zero"), (&piped, "-")] {
        assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
        let err = text(&o.stderr);
        assert!(err.contains(&format!("{name}: line 1: is longer than 64 KiB, the most a line may be")), "{err}");
        assert!(o.stdout.is_empty());
    }
}

#[test]
fn replay_refuses_an_overlong_line_after_writing_the_rows_before_it() {
    let long = "#".repeat(100_000);
    let err = replay_refuses(&format!("time_s,event,rtt_s\n0.1,sample,0.1\n{long}\n0.2,sample,0.1\n"));
    assert!(err.contains("-: line 3: is longer than 64 KiB"), "{err}");
    // A line of exactly the limit, its line end included, is read.
    let comment = format!("#{}\n", "x".repeat(64 * 1024 - 2));
    let mut child = spawn_replay();
    child.stdin.take().unwrap().write_all(format!("time_s,event,rtt_s\n{comment}0.1,sample,0.1\n").as_bytes()).unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout).lines().count(), 2);
}

#[test]
fn replay_shows_each_row_of_a_live_feed_as_it_arrives() {
    // As `tail -f capture.csv | backoffsim rto replay -`: a row is written and the feed
    // waits for its answer before the next one, so output held back in a buffer never
    // comes and the guard below ends the test.
    let mut child = spawn_replay();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let _ = tx.send(line.unwrap());
        }
    });
    // Not a timing bound: a guard so that held-back output fails instead of hanging.
    let next = || rx.recv_timeout(Duration::from_secs(60)).expect("a row was held back while the feed was open");
    stdin.write_all(b"time_s,event,rtt_s\n").unwrap();
    stdin.flush().unwrap();
    assert_eq!(next(), "time_s,event,rtt_s,srtt_s,rttvar_s,rto_s,backoffs");
    for (k, input) in ["0.1,sample,0.1", "1.1,timeout,", "1.2,sample,0.1"].iter().enumerate() {
        stdin.write_all(format!("{input}\n").as_bytes()).unwrap();
        stdin.flush().unwrap();
        let row = next();
        assert!(row.starts_with(&input.split(',').next().unwrap().to_string()), "row {k}: {row}");
    }
    drop(stdin);
    assert!(child.wait().unwrap().success());
    reader.join().unwrap();
}

#[test]
fn replay_reads_a_header_after_a_byte_order_mark() {
    let mut child = spawn_replay();
    child.stdin.take().unwrap().write_all("\u{feff}time_s,event,rtt_s\n0.1,sample,0.1\n".as_bytes()).unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).ends_with("0.100000,sample,0.100000,0.100000,0.050000,1.000000,0\n"),
        "{}",
        text(&o.stdout)
    );
}

#[test]
fn replay_escapes_control_characters_it_quotes() {
    let err = replay_refuses("time_s,event,rtt_s\n0.1,\u{1b}[2Jsample,0.1\n");
    assert!(err.contains("line 2, column event: `\\u{1b}[2Jsample` is not an event"), "{err}");
    assert!(!err.chars().any(|c| c.is_control() && c != '\n'), "{err:?}");
}

/// A copy of a shipped run directory, to damage.
fn copy_of_run(tmp: &Path) -> std::path::PathBuf {
    copy_of(tmp, "tcp-blackout")
}

/// A copy of the shipped run `name`, to damage.
fn copy_of(tmp: &Path, name: &str) -> std::path::PathBuf {
    let from = root().join(format!("results/{name}"));
    let to = tmp.join(name);
    std::fs::create_dir(&to).unwrap();
    for entry in std::fs::read_dir(&from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
    to
}

/// `plot rto DIR` and `compare DIR GOOD` both refuse with exit 2, write nothing, and
/// give the same first line; returns it.
fn plot_and_compare_refuse(dir: &Path, tmp: &Path) -> String {
    let good = root().join("results/tcp-blackout");
    let plotted = tmp.join("plot.png");
    let compared = tmp.join("compared");
    let p = run(&["plot", "rto", dir.to_str().unwrap(), "--out", plotted.to_str().unwrap()]);
    let c = run(&["compare", dir.to_str().unwrap(), good.to_str().unwrap(), "--out", compared.to_str().unwrap()]);
    for o in [&p, &c] {
        assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
        assert!(!text(&o.stderr).contains("panicked"), "{}", text(&o.stderr));
    }
    assert!(!plotted.exists() && !compared.exists(), "a refused input must not write anything");
    text(&p.stderr)
}

#[test]
fn plot_and_compare_refuse_a_directory_that_is_not_a_run() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("notes");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("notes.txt"), "not a run").unwrap();
    let err = plot_and_compare_refuse(&dir, tmp.path());
    assert!(err.contains("is not a run directory: it has no manifest.json"), "{err}");
}

#[test]
fn plot_and_compare_name_the_place_in_a_damaged_manifest() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = copy_of_run(tmp.path());
    std::fs::write(dir.join("manifest.json"), "{\n  \"scenario\": \n").unwrap();
    let err = plot_and_compare_refuse(&dir, tmp.path());
    assert!(err.contains("manifest.json") && err.contains("line 3 column 0"), "{err}");
}

#[test]
fn plot_and_compare_name_the_line_and_column_of_a_damaged_summary() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = copy_of_run(tmp.path());
    let summary = std::fs::read_to_string(dir.join("summary.csv")).unwrap();
    let mut lines: Vec<String> = summary.lines().map(String::from).collect();
    lines[2] = lines[2].replacen(",5,", ",five,", 1);
    std::fs::write(dir.join("summary.csv"), lines.join("\n") + "\n").unwrap();
    let tmp2 = tempfile::tempdir().unwrap();
    let compared = tmp2.path().join("compared");
    let good = root().join("results/tcp-blackout");
    let o = run(&["compare", dir.to_str().unwrap(), good.to_str().unwrap(), "--out", compared.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("summary.csv: line 3, column `mean`: `five` is not a number"),
        "{}",
        text(&o.stderr)
    );
    assert!(!compared.exists());

    // A column missing altogether is named too.
    let cut: String = summary.lines().map(|l| l.split(',').take(4).collect::<Vec<_>>().join(",") + "\n").collect();
    std::fs::write(dir.join("summary.csv"), cut).unwrap();
    let o = run(&["compare", dir.to_str().unwrap(), good.to_str().unwrap(), "--out", compared.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("summary.csv: no column `mean`"), "{}", text(&o.stderr));
    assert!(!compared.exists());
}

#[test]
fn plot_names_the_line_and_column_of_a_damaged_trace() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = copy_of_run(tmp.path());
    let trace = std::fs::read_to_string(dir.join("trace.csv")).unwrap();
    let mut lines: Vec<String> = trace.lines().map(String::from).collect();
    lines[4] = lines[4].replacen(",0,", ",abc,", 1);
    std::fs::write(dir.join("trace.csv"), lines.join("\n") + "\n").unwrap();
    let err = plot_and_compare_refuse(&dir, tmp.path());
    assert!(err.contains("trace.csv: line 5, column `client`: `abc` is not a whole number"), "{err}");

    // A row cut short (a run killed mid-write would not leave one: results are staged).
    std::fs::write(dir.join("trace.csv"), trace.clone() + "1.0,0\n").unwrap();
    let err = plot_and_compare_refuse(&dir, tmp.path());
    let line = trace.lines().count() + 1;
    let fields = trace.lines().next().unwrap().split(',').count();
    assert!(err.contains(&format!("trace.csv: line {line}: has 2 fields, the header has {fields}")), "{err}");
}

/// `file` of `dir` with the field `column` (from 0) of line `line` (from 1) set to `value`.
fn set_field(dir: &Path, file: &str, line: usize, column: usize, value: &str) {
    let path = dir.join(file);
    let body = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<String> = body.lines().map(String::from).collect();
    let mut fields: Vec<&str> = lines[line - 1].split(',').collect();
    fields[column] = value;
    lines[line - 1] = fields.join(",");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
}

#[test]
fn plot_and_compare_refuse_a_nan_or_infinite_summary_value_rather_than_rank_it() {
    // summary.csv: variant,metric,unit,replications,mean,sd,ci95_low,ci95_high. A run
    // leaves what it could not compute empty: NaN was shown in bold as the best.
    let tmp = tempfile::tempdir().unwrap();
    let dir = copy_of_run(tmp.path());
    let original = std::fs::read(dir.join("summary.csv")).unwrap();
    for (column, value, name) in [(4, "NaN", "mean"), (4, "inf", "mean"), (6, "-inf", "ci95_low")] {
        std::fs::write(dir.join("summary.csv"), &original).unwrap();
        set_field(&dir, "summary.csv", 3, column, value);
        let err = plot_and_compare_refuse(&dir, tmp.path());
        assert!(
            err.contains(&format!("summary.csv: line 3, column `{name}`: `{value}` is not a finite number")),
            "{err}"
        );
    }
    // Empty cells (one replication: no spread, no interval) are what runs write, and load.
    std::fs::write(dir.join("summary.csv"), &original).unwrap();
    let plotted = tmp.path().join("ok.svg");
    let o = run(&["plot", "rto", dir.to_str().unwrap(), "-o", plotted.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
}

#[test]
fn plot_and_compare_refuse_an_interval_upside_down_or_a_negative_count() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = copy_of_run(tmp.path());
    let original = std::fs::read(dir.join("summary.csv")).unwrap();
    set_field(&dir, "summary.csv", 2, 6, "20");
    set_field(&dir, "summary.csv", 2, 7, "10");
    let err = plot_and_compare_refuse(&dir, tmp.path());
    assert!(err.contains("summary.csv: line 2, column `ci95_low`: 20 is above ci95_high 10"), "{err}");
    std::fs::write(dir.join("summary.csv"), &original).unwrap();
    set_field(&dir, "summary.csv", 2, 3, "-1");
    let err = plot_and_compare_refuse(&dir, tmp.path());
    assert!(err.contains("summary.csv: line 2, column `replications`: `-1` is not a whole number"), "{err}");

    // attempts.csv: variant,replication,bin_start_s,bin_width_s,attempts,refused.
    let grpc = copy_of(tmp.path(), "grpc-restart-storm");
    set_field(&grpc, "attempts.csv", 5, 4, "-3");
    let out = tmp.path().join("attempts.svg");
    let o = run(&["plot", "attempts", grpc.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("attempts.csv: line 5, column `attempts`: `-3` is not a whole number"),
        "{}",
        text(&o.stderr)
    );
    assert!(!out.exists());
}

#[test]
fn plot_and_compare_refuse_a_manifest_that_is_not_a_run_manifest() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = copy_of_run(tmp.path());
    let original = std::fs::read_to_string(dir.join("manifest.json")).unwrap();
    std::fs::write(dir.join("manifest.json"), "[]").unwrap();
    let err = plot_and_compare_refuse(&dir, tmp.path());
    assert!(
        err.contains(
            "manifest.json: line 1, column 1: invalid type: sequence, expected a JSON object: a run's manifest"
        ),
        "{err}"
    );
    let line = original.lines().position(|l| l.contains("\"horizon\"")).unwrap() + 1;
    std::fs::write(dir.join("manifest.json"), original.replace("\"horizon\": \"1min\"", "\"horizon\": \"soon\""))
        .unwrap();
    let err = plot_and_compare_refuse(&dir, tmp.path());
    assert!(
        err.contains(&format!("manifest.json: line {line}, column 19, key `horizon`: `soon` is not a horizon")),
        "{err}"
    );
    std::fs::write(dir.join("manifest.json"), original.replace("\"variants\"", "\"variantz\"")).unwrap();
    let err = plot_and_compare_refuse(&dir, tmp.path());
    assert!(err.contains("manifest.json: line") && err.contains("missing key `variants`"), "{err}");
}

#[test]
fn plot_and_compare_refuse_a_trace_time_beyond_the_horizon() {
    // trace.csv: time_s,client,…; the manifest's horizon is 1min.
    let tmp = tempfile::tempdir().unwrap();
    let dir = copy_of_run(tmp.path());
    let original = std::fs::read(dir.join("trace.csv")).unwrap();
    for value in ["1e300", "60.000000001", "-1"] {
        std::fs::write(dir.join("trace.csv"), &original).unwrap();
        set_field(&dir, "trace.csv", 4, 0, value);
        let err = plot_and_compare_refuse(&dir, tmp.path());
        let expected =
            if value == "-1" { "is negative".to_string() } else { "is beyond the run's horizon (1min".to_string() };
        assert!(err.contains(&format!("trace.csv: line 4, column `time_s`: `{value}` {expected}")), "{err}");
    }
}

#[test]
fn plot_reads_csv_files_saved_again_with_a_byte_order_mark() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = copy_of_run(tmp.path());
    let plot = |name: &str| {
        let plotted = tmp.path().join(name);
        let o = run(&["plot", "rto", dir.to_str().unwrap(), "-o", plotted.to_str().unwrap()]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        std::fs::read(&plotted).unwrap()
    };
    let before = plot("before.svg");
    for file in ["summary.csv", "trace.csv"] {
        let body = std::fs::read_to_string(dir.join(file)).unwrap();
        std::fs::write(dir.join(file), format!("\u{feff}{body}")).unwrap();
    }
    assert!(before == plot("after.svg"), "the mark changed what was read");
}
