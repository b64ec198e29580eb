//! The tables `run` and `compare` print on stdout: `compare` without `-o` writes nothing,
//! a best variant is named only where the 95 % interval of its difference to every other
//! excludes 0, `run --layout wide` puts the variants side by side with every value in its
//! own column, `--metric` filters (a typo exits 2 with the nearest id), big numbers are
//! grouped by thousands, and the header says what `±` is.

use std::path::Path;

use super::common::{bin, names_in, root, run, run_text_output, text};

/// Two TCP variants over a 100 ms path, one of which goes dark for good at 10 s and so
/// gives up (RFC 6298 §5.5's retransmissions, counted out at 663 s); only it has a
/// `time_to_abort`, and only the other has an RTT at the end.
const DARK: &str = r#"name = "dark"
description = "a steady connection, and one whose path goes dark for good"
horizon = "700s"
replications = 2

[tcp]
workload = { kind = "steady", interval = "100ms" }

[path]
base_rtt = "100ms"

[[variant]]
name = "steady"
tcp.rto.profile = "rfc6298"

[[variant]]
name = "dark"
tcp.rto.profile = "rfc6298"
path.blackout = [{ at = "10s", duration = "2000s" }]
"#;

/// The byte offset of `word` in `line`, as a column: the header's and a row's agree when
/// the table is aligned.
fn column(line: &str, word: &str) -> usize {
    line[..line.find(word).unwrap_or_else(|| panic!("no `{word}` in {line}"))].chars().count()
}

#[test]
fn the_wide_layout_has_a_row_per_metric_and_a_column_per_variant_aligned_whatever_each_measures() {
    let (_tmp, o) = run_text_output(DARK, &["--layout", "wide"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].trim_start().starts_with("mean ± half-width of the 95 % interval"), "{out}");
    let header = lines[1];
    assert_eq!(header.split_whitespace().collect::<Vec<_>>(), ["metric", "unit", "steady", "dark"], "{out}");
    let row = |metric: &str| *lines.iter().find(|l| l.split_whitespace().next() == Some(metric)).unwrap();
    // One row per metric: no metric is listed twice.
    let metrics: Vec<&str> = lines[2..].iter().filter_map(|l| l.split_whitespace().next()).collect();
    let mut unique = metrics.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), metrics.len(), "{out}");
    // Only the dark variant gave up: its value stands under `dark`, and `steady` shows —.
    let abort = row("time_to_abort");
    assert_eq!(column(abort, "—"), column(header, "steady"), "{out}");
    assert_eq!(column(abort, "663"), column(header, "dark"), "{out}");
    // A metric both have sits under both names.
    let segments = row("rto_mean");
    let values: Vec<&str> = segments.split("  ").filter(|s| !s.trim().is_empty()).collect();
    assert_eq!(values.len(), 4, "metric, unit and two values: {segments}");
    // The long layout, the default, lists the same values a row each.
    let (_tmp, o) = run_text_output(DARK, &[]);
    let long = text(&o.stdout);
    let header: Vec<&str> = long.lines().next().unwrap().split("  ").filter(|s| !s.is_empty()).collect();
    assert_eq!(header, ["variant", "metric", "mean ± half-width of the 95 % interval", "unit"], "{long}");
    assert!(long.lines().any(|l| l.split_whitespace().take(3).eq(["dark", "time_to_abort", "663.0"])), "{long}");
    // A variant without a value keeps its row, marked —.
    assert!(long.lines().any(|l| l.split_whitespace().take(3).eq(["steady", "time_to_abort", "—"])), "{long}");
}

#[test]
fn metric_filters_keep_only_those_metrics_and_a_typo_exits_2_with_the_nearest_id() {
    let (tmp, o) = run_text_output(DARK, &["--layout", "wide", "--metric", "time_to_abort", "--metric", "rto_mean"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let metrics: Vec<&str> = out.lines().skip(2).filter_map(|l| l.split_whitespace().next()).collect();
    assert_eq!(metrics, ["time_to_abort", "rto_mean"], "in the run's order: {out}");
    // The files keep every metric.
    let summary = std::fs::read_to_string(tmp.path().join("out/summary.csv")).unwrap();
    assert!(summary.contains(",final_srtt,"), "{summary}");

    let (tmp, o) = run_text_output(DARK, &["--metric", "time_to_abrot"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(
        err.contains("--metric `time_to_abrot`: no tcp metric has this id; did you mean `time_to_abort`?"),
        "{err}"
    );
    assert!(err.contains("The metrics are: ") && err.contains("rto_mean") && err.contains("recovery_lag_blackoutK"));
    assert!(o.stdout.is_empty() && !tmp.path().join("out").exists(), "refused before it ran");
    // Another model's metric is not this run's.
    let (_tmp, o) = run_text_output(DARK, &["--metric", "peak_attempt_rate"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
}

#[test]
fn terminal_numbers_are_grouped_by_thousands_and_the_files_are_not() {
    let (tmp, o) = run_text_output(DARK, &["--metric", "rtt_samples", "--metric", "goodput"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    // 700 s of 1,460-byte writes every 100 ms, each acknowledged and timed by RFC 6298's
    // one sample per RTT: 14,600 bytes/s and 3,501 samples.
    let row = |metric: &str| {
        out.lines().find(|l| l.split_whitespace().take(2).eq(["steady", metric])).unwrap_or_else(|| panic!("{out}"))
    };
    assert!(row("rtt_samples").contains(" 3,501 ± 0 "), "{out}");
    assert!(row("goodput").contains(" 14,600 ± 0 "), "{out}");
    let summary = std::fs::read_to_string(tmp.path().join("out/summary.csv")).unwrap();
    assert!(summary.lines().any(|l| l.starts_with("steady,rtt_samples,count,2,3501,")), "{summary}");
    assert!(summary.lines().any(|l| l.starts_with("steady,goodput,bytes/s,2,14600,")), "{summary}");
}

/// Runs `compare` in `cwd` with `args`.
fn compare_in(cwd: &Path, args: &[&str]) -> std::process::Output {
    bin().current_dir(cwd).arg("compare").args(args).output().unwrap()
}

#[test]
fn compare_without_out_prints_the_table_and_writes_nothing_and_with_it_does_both() {
    let tmp = tempfile::tempdir().unwrap();
    let blackout = root().join("results/tcp-karn");
    let dir = blackout.to_str().unwrap();
    let o = compare_in(tmp.path(), &[dir, dir]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(names_in(tmp.path()).is_empty(), "nothing written: {:?}", names_in(tmp.path()));
    let out = text(&o.stdout);
    let header: Vec<&str> = out.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(header[..2], ["metric", "unit"], "{out}");
    assert!(header.contains(&"run1:linux") && header.contains(&"run2:linux"), "{out}");
    assert_eq!(header.last(), Some(&"best"), "{out}");
    // The same run twice: every difference is 0, so no variant of one is best.
    let best = column(out.lines().nth(1).unwrap(), "best");
    let verdicts: Vec<String> = out.lines().skip(2).map(|l| l.chars().skip(best).collect()).collect();
    for v in &verdicts {
        assert!(["", "no significant difference", "— (1 replication)"].contains(&v.as_str()), "{v}: {out}");
    }
    assert!(verdicts.iter().any(|v| v == "no significant difference"), "{out}");

    let o = compare_in(tmp.path(), &[dir, dir, "-o", "cmp"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), out, "the same table, with or without -o");
    assert!(text(&o.stderr).contains("wrote cmp"), "{}", text(&o.stderr));
    assert!(tmp.path().join("cmp/report.md").exists() && tmp.path().join("cmp/report.html").exists());
    // --quiet leaves stderr empty and stdout the table.
    let o = compare_in(tmp.path(), &[dir, dir, "--quiet", "--metric", "convergence_time_changeK"]);
    assert!(o.status.success() && o.stderr.is_empty(), "{}", text(&o.stderr));
    let rows: Vec<String> = text(&o.stdout).lines().skip(2).map(String::from).collect();
    assert!(!rows.is_empty() && rows.iter().all(|l| l.starts_with("convergence_time_change")), "{rows:?}");
}

#[test]
fn compare_names_a_best_run_only_where_the_difference_is_significant() {
    // The same connection over a clean path and over one losing a fifth of the packets:
    // the clean one never retransmits, the lossy one dozens of times in each replication.
    let tmp = tempfile::tempdir().unwrap();
    let scenario = |loss: &str| {
        format!(
            "name = \"loss\"\ndescription = \"a steady connection\"\nhorizon = \"30s\"\nreplications = 3\n\n\
             [tcp]\nworkload = {{ kind = \"steady\", interval = \"100ms\" }}\n\n[path]\nbase_rtt = \"100ms\"\n\
             loss = {{ model = \"bernoulli\", p = {loss} }}\n"
        )
    };
    for (name, loss) in [("clean", "0.0"), ("lossy", "0.2")] {
        let file = tmp.path().join(format!("{name}.toml"));
        std::fs::write(&file, scenario(loss)).unwrap();
        let o = run(&["run", file.to_str().unwrap(), "--quiet", "--out", tmp.path().join(name).to_str().unwrap()]);
        assert!(o.status.success(), "{}", text(&o.stderr));
    }
    let o = compare_in(tmp.path(), &["clean", "lossy", "--metric", "retransmissions", "--metric", "rtt_samples"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let row = out.lines().find(|l| l.starts_with("retransmissions")).unwrap_or_else(|| panic!("{out}"));
    // Fewer is better, and Welch's interval of 0 against dozens excludes 0.
    assert!(row.trim_end().ends_with("clean:base"), "{out}");
    // RTT samples have no better direction: nothing is ranked.
    let row = out.lines().find(|l| l.starts_with("rtt_samples")).unwrap_or_else(|| panic!("{out}"));
    assert!(!row.split_whitespace().last().unwrap().ends_with(":base"), "{out}");
}

#[test]
fn json_lines_keep_working_and_take_the_metric_filter() {
    let (_tmp, o) = run_text_output(DARK, &["--json", "--metric", "time_to_abort"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let lines: Vec<serde_json::Value> =
        text(&o.stdout).lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect();
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert_eq!(
        (&lines[0]["data"]["variant"], &lines[0]["data"]["metric"]),
        (&"steady".into(), &"time_to_abort".into())
    );
    assert!(lines[0]["data"]["mean"].is_null(), "steady never aborts: no value, kept as null");
    assert_eq!(lines[1]["data"]["metric"], "time_to_abort");
    assert_eq!(lines[1]["data"]["mean"], 663.0, "JSON keeps plain numbers");
    assert_eq!(lines[2]["type"], "run");
    // A layout is for the table, not for JSON.
    let (_tmp, o) = run_text_output(DARK, &["--json", "--layout", "wide"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
}
