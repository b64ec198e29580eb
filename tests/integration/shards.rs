//! `run --shard K/N` and `merge`: the parts of a sharded run merge into exactly the
//! bytes one whole run writes, whatever N (1, 3, more than there are runs) and whatever
//! threads each shard used; parts that are not one run exactly once are refused by name.

use std::path::{Path, PathBuf};
use std::process::Output;

use super::common::{assert_same_files, bin, files_under, text};

/// 2 variants × 4 sweep cells × 2 replications of TCP: traces and RTO samples.
const TCP_SWEEP: &str = super::sweep::SWEPT;

/// 2 variants × 2 cells × 3 replications of gRPC channels: attempt bins, CDFs and
/// connection rows.
const GRPC_SWEEP: &str = r#"
name = "sharded-grpc"
description = "channels that are dropped 2 s after connecting"
seed = 3
replications = 3
horizon = "20s"

[grpc]
clients = 40
start = "connecting"
start_spread = "1s"
bin = "1s"

[server]
drop_after = "2s"

[path]
base_rtt = "50ms"

[sweep]
"grpc.clients" = [20, 40]

[[variant]]
name = "reset"
grpc.reset_on_settings = true

[[variant]]
name = "never"
grpc.reset_on_settings = false
"#;

/// Calls against a server with a brownout: per-bin series and load plots.
const CALLS: &str = r#"
name = "sharded-calls"
description = "calls through a brownout"
replications = 3
horizon = "20s"

[calls]
clients = 20
interval = "100ms"
pacing = "poisson"
timeout = "1s"

[calls.policy]
preset = "aws-standard"

[server]
concurrency = 4
service_time = "20ms"

[[server.brownout]]
at = "5s"
duration = "3s"
fail_fraction = 0
slowdown = 5

[[variant]]
name = "quota"
calls.policy.budget = "aws-quota"

[[variant]]
name = "no-budget"
calls.policy.budget = "none"
"#;

/// A scratch directory holding the scenario file.
fn scratch(source: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("scenario.toml");
    std::fs::write(&file, source).unwrap();
    (tmp, file)
}

/// Runs the binary in `dir`.
fn at(dir: &Path, args: &[&str]) -> Output {
    bin().current_dir(dir).args(args).output().expect("the binary runs")
}

fn ok(o: Output) -> Output {
    assert!(o.status.success(), "exit {:?}: {}", o.status.code(), text(&o.stderr));
    o
}

/// The whole run into `out` of a fresh directory; `extra` are run options.
fn whole(file: &Path, extra: &[&str]) -> (tempfile::TempDir, Output) {
    let tmp = tempfile::tempdir().unwrap();
    let mut args = vec!["run", file.to_str().unwrap(), "--quiet", "--out", "out"];
    args.extend_from_slice(extra);
    let o = ok(at(tmp.path(), &args));
    (tmp, o)
}

/// The run as `n` shards (shard k on 1 + k % 2 threads) into `parts/k`, merged into
/// `out` of a fresh directory, whose relative name matches `whole`'s: a report names its
/// directory as given.
fn sharded(file: &Path, n: u32, extra: &[&str]) -> (tempfile::TempDir, Output) {
    let tmp = tempfile::tempdir().unwrap();
    for k in 0..n {
        let (shard, out, threads) = (format!("{k}/{n}"), format!("parts/{k}"), (1 + k % 2).to_string());
        let mut args = vec!["run", file.to_str().unwrap(), "--quiet", "--shard", &shard, "--out", &out];
        args.extend_from_slice(&["--threads", &threads]);
        args.extend_from_slice(extra);
        ok(at(tmp.path(), &args));
    }
    let parts: Vec<String> = (0..n).map(|k| format!("parts/{k}")).collect();
    let mut args = vec!["merge", "--quiet", "-o", "out"];
    args.extend(parts.iter().map(String::as_str));
    let o = ok(at(tmp.path(), &args));
    (tmp, o)
}

fn assert_identical(source: &str, shards: u32, extra: &[&str]) {
    let (_s, file) = scratch(source);
    let (a, run) = whole(&file, extra);
    let (b, merge) = sharded(&file, shards, extra);
    let (whole, merged) = (a.path().join("out"), b.path().join("out"));
    assert_same_files(&merged, &whole);
    let names = files_under(&whole);
    assert!(names.iter().any(|f| f.ends_with("report.md")), "a report");
    assert!(names.iter().any(|f| f.extension().is_some_and(|e| e == "png")), "plots");
    assert_eq!(text(&run.stdout), text(&merge.stdout), "merge prints the summary run prints");
}

#[test]
fn three_shards_merged_are_byte_identical_to_the_whole_run() {
    for source in [TCP_SWEEP, GRPC_SWEEP, CALLS] {
        assert_identical(source, 3, &[]);
    }
}

#[test]
fn one_shard_merged_is_byte_identical_to_the_whole_run() {
    assert_identical(GRPC_SWEEP, 1, &[]);
}

#[test]
fn more_shards_than_runs_leave_empty_parts_that_still_merge_identically() {
    // 2 variants × 4 cells × 2 replications = 16 runs over 20 shards.
    assert_identical(TCP_SWEEP, 20, &[]);
    let (_s, file) = scratch(TCP_SWEEP);
    let tmp = tempfile::tempdir().unwrap();
    let o = ok(at(tmp.path(), &["run", file.to_str().unwrap(), "--shard", "19/20", "--out", "p"]));
    assert!(text(&o.stderr).contains("wrote shard 19/20 (0 of 16 runs)"), "{}", text(&o.stderr));
}

#[test]
fn shards_run_with_seed_and_replication_overrides_merge_to_the_overridden_run() {
    assert_identical(GRPC_SWEEP, 2, &["--seed", "77", "--replications", "4"]);
}

/// Three parts of `source` in a fresh directory, as `parts/0` … `parts/2`.
fn three_parts(source: &str, extra: &[&str]) -> tempfile::TempDir {
    let (s, file) = scratch(source);
    let tmp = tempfile::tempdir().unwrap();
    for k in 0..3 {
        let (shard, out) = (format!("{k}/3"), format!("parts/{k}"));
        let mut args = vec!["run", file.to_str().unwrap(), "--quiet", "--shard", &shard, "--out", &out];
        args.extend_from_slice(extra);
        ok(at(tmp.path(), &args));
    }
    drop(s);
    tmp
}

/// `merge` of `parts` in `dir` refused with exit 2 and nothing written; its message.
fn refused(dir: &Path, parts: &[&str]) -> String {
    let mut args = vec!["merge", "--quiet", "-o", "out"];
    args.extend_from_slice(parts);
    let o = at(dir, &args);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(o.stdout.is_empty());
    assert!(!dir.join("out").exists(), "nothing written");
    let staged: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().starts_with('.'))
        .collect();
    assert!(staged.is_empty(), "nothing staged: {staged:?}");
    text(&o.stderr)
}

#[test]
fn a_missing_shard_is_named_with_how_to_run_it() {
    let tmp = three_parts(GRPC_SWEEP, &[]);
    let e = refused(tmp.path(), &["parts/0", "parts/2"]);
    assert!(e.contains("not every shard of scenario `sharded-grpc` exactly once"), "{e}");
    assert!(e.contains("shard(s) 1/3 missing: run them with `backoffsim run FILE --shard K/3`"), "{e}");
}

#[test]
fn a_shard_given_twice_is_named_with_both_directories() {
    let tmp = three_parts(GRPC_SWEEP, &[]);
    copy_dir(&tmp.path().join("parts/1"), &tmp.path().join("again"));
    let e = refused(tmp.path(), &["parts/0", "parts/1", "parts/2", "again"]);
    assert!(e.contains("shard 1/3 is given 2 times (parts/1, again)"), "{e}");
}

#[test]
fn a_part_of_another_seed_is_refused_naming_what_differs() {
    let ours = three_parts(GRPC_SWEEP, &[]);
    let other = three_parts(GRPC_SWEEP, &["--seed", "9"]);
    copy_dir(&other.path().join("parts/2"), &ours.path().join("other"));
    let e = refused(ours.path(), &["parts/0", "parts/1", "other"]);
    assert!(
        e.contains(
            "other is a part of another run than parts/0 (scenario `sharded-grpc`): it has seed 9 where it is 3"
        ),
        "{e}"
    );
}

#[test]
fn a_part_of_another_scenario_is_refused_by_its_hash() {
    let ours = three_parts(GRPC_SWEEP, &[]);
    let other = three_parts(&GRPC_SWEEP.replace("clients = 40", "clients = 30"), &[]);
    copy_dir(&other.path().join("parts/2"), &ours.path().join("other"));
    let e = refused(ours.path(), &["parts/0", "parts/1", "other"]);
    assert!(e.contains("it has scenario_sha256"), "{e}");
}

#[test]
fn a_damaged_results_file_is_refused_by_its_checksum() {
    let tmp = three_parts(GRPC_SWEEP, &[]);
    let bin = tmp.path().join("parts/1/results.bin");
    let mut bytes = std::fs::read(&bin).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x40;
    std::fs::write(&bin, &bytes).unwrap();
    let e = refused(tmp.path(), &["parts/0", "parts/1", "parts/2"]);
    assert!(e.contains("parts/1/results.bin: its SHA-256 is not the results_sha256 part.json records"), "{e}");
    assert!(e.contains("run shard 1/3 again"), "{e}");
    // Cut short, as a copy that stopped halfway.
    std::fs::write(&bin, &bytes[..middle]).unwrap();
    let e = refused(tmp.path(), &["parts/0", "parts/1", "parts/2"]);
    assert!(e.contains("parts/1/results.bin: its SHA-256"), "{e}");
}

#[test]
fn an_edited_scenario_in_a_part_is_refused() {
    let tmp = three_parts(GRPC_SWEEP, &[]);
    let toml = tmp.path().join("parts/0/scenario.toml");
    std::fs::write(&toml, GRPC_SWEEP.replace("seed = 3", "seed = 4")).unwrap();
    let e = refused(tmp.path(), &["parts/0", "parts/1", "parts/2"]);
    assert!(e.contains("parts/0/scenario.toml: its SHA-256 is not the scenario_sha256 part.json records"), "{e}");
}

#[test]
fn a_directory_that_is_not_a_part_is_refused() {
    let tmp = three_parts(GRPC_SWEEP, &[]);
    std::fs::create_dir(tmp.path().join("empty")).unwrap();
    let e = refused(tmp.path(), &["parts/0", "empty"]);
    assert!(e.contains("empty: not a shard's part (part.json:"), "{e}");
    let e = refused(tmp.path(), &["parts/0", "nowhere"]);
    assert!(e.contains("nowhere: no such directory"), "{e}");
    std::fs::write(tmp.path().join("parts/2/part.json"), "{\"part_format\": 1,\n \"shard\": }").unwrap();
    let e = refused(tmp.path(), &["parts/0", "parts/1", "parts/2"]);
    assert!(e.contains("parts/2/part.json: line 2, column"), "{e}");
}

/// `part.json` of `part` with the line holding `"key": ` replaced by `"key": value`.
fn edit_part(part: &Path, key: &str, value: &str) {
    let path = part.join("part.json");
    let json = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<String> = json
        .lines()
        .map(|l| match l.trim_start().strip_prefix(&format!("\"{key}\": ")) {
            Some(rest) => format!("  \"{key}\": {value}{}", if rest.ends_with(',') { "," } else { "" }),
            None => l.to_string(),
        })
        .collect();
    assert_ne!(lines.join("\n") + "\n", json, "no key {key} in {}", path.display());
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
}

/// The line of `key` in a part's `part.json`, from 1.
fn line_of(part: &Path, key: &str) -> usize {
    let json = std::fs::read_to_string(part.join("part.json")).unwrap();
    json.lines().position(|l| l.trim_start().starts_with(&format!("\"{key}\":"))).unwrap() + 1
}

#[test]
fn part_json_fields_that_contradict_each_other_are_refused_at_their_key() {
    let tmp = three_parts(GRPC_SWEEP, &[]);
    let all = ["parts/0", "parts/1", "parts/2"];
    let part = tmp.path().join("parts/1");
    let original = std::fs::read(part.join("part.json")).unwrap();
    // 12 runs in 3 shards: 4 each.
    edit_part(&part, "runs", "5");
    let e = refused(tmp.path(), &all);
    let line = line_of(&part, "runs");
    assert!(
        e.contains(&format!(
            "parts/1/part.json: line {line}, column 3, key `runs`: 5 runs, but shard 1/3 of a run of 12 runs has 4"
        )),
        "{e}"
    );
    std::fs::write(part.join("part.json"), &original).unwrap();
    edit_part(&part, "total_runs", "0");
    let e = refused(tmp.path(), &all);
    assert!(e.contains(&format!("line {}, column 3, key `total_runs`: 0", line_of(&part, "total_runs"))), "{e}");

    std::fs::write(part.join("part.json"), &original).unwrap();

    // The name part.json gives its run is the one of the scenario it carries.
    let first = tmp.path().join("parts/0");
    edit_part(&first, "scenario", "\"other\"");
    let e = refused(tmp.path(), &["parts/0", "parts/1", "parts/2"]);
    assert!(
        e.contains(&format!(
            "parts/0/part.json: line {}, column 3, key `scenario`: `other`, but its scenario.toml is named `sharded-grpc`",
            line_of(&first, "scenario")
        )),
        "{e}"
    );
}

#[test]
fn an_endless_part_json_is_refused_at_its_bound() {
    let tmp = three_parts(GRPC_SWEEP, &[]);
    let json = tmp.path().join("parts/2/part.json");
    std::fs::write(&json, format!("{{\"pad\": \"{}\"}}", "x".repeat(100_000))).unwrap();
    let e = refused(tmp.path(), &["parts/0", "parts/1", "parts/2"]);
    assert!(e.contains("parts/2: not a shard's part (part.json: larger than 64 KiB"), "{e}");
}

#[test]
fn shard_k_counts_from_zero_and_must_be_below_n() {
    let (_s, file) = scratch(GRPC_SWEEP);
    let tmp = tempfile::tempdir().unwrap();
    for (arg, says) in
        [("3/3", "K counts from 0, so it must be below N = 3"), ("1/0", "N must be at least 1"), ("2", "is not K/N")]
    {
        let o = at(tmp.path(), &["run", file.to_str().unwrap(), "--shard", arg]);
        assert_eq!(o.status.code(), Some(2), "{arg}");
        assert!(text(&o.stderr).contains(says), "{arg}: {}", text(&o.stderr));
    }
    let o = at(tmp.path(), &["run", file.to_str().unwrap(), "--shard", "0/2", "--json"]);
    assert_eq!(o.status.code(), Some(2), "a part has no summary to print");
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0, "nothing written");
}

#[test]
fn a_part_carries_the_scenario_so_the_merge_needs_no_file() {
    let tmp = three_parts(GRPC_SWEEP, &[]);
    let part = tmp.path().join("parts/1");
    assert_eq!(std::fs::read_to_string(part.join("scenario.toml")).unwrap(), GRPC_SWEEP);
    let manifest: serde_json::Value = serde_json::from_slice(&std::fs::read(part.join("part.json")).unwrap()).unwrap();
    assert_eq!(manifest["shard"], 1);
    assert_eq!(manifest["shards"], 3);
    // 12 runs dealt round robin: places 1, 4, 7 and 10.
    assert_eq!(manifest["runs"], 4);
    assert_eq!(manifest["total_runs"], 12);
    let o = ok(at(tmp.path(), &["merge", "parts/0", "parts/1", "parts/2"]));
    assert!(tmp.path().join("results/sharded-grpc/summary.csv").exists(), "default: results/<name>");
    assert!(text(&o.stderr).contains("merging 3 parts of `sharded-grpc`"), "{}", text(&o.stderr));
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}
