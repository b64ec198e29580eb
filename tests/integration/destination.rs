//! Where results may go: `run --out`, `merge -o` and `compare -o` replace only a
//! directory backoffsim wrote, refuse `.`, an ancestor of the working directory and
//! symbolic links before anything runs, let one writer at a time into a place, and
//! repair what a run killed in its swap left behind.

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use super::common::{bin, files, names_in, root, stop_with, text};

/// A quick scenario: one TCP connection for a few seconds.
const QUICK: &str = r#"name = "quick"
description = "one steady connection"
horizon = "5s"

[tcp]
workload = { kind = "steady", interval = "100ms" }

[path]
base_rtt = "100ms"
"#;

fn scenario(dir: &Path) -> PathBuf {
    let file = dir.join("quick.toml");
    std::fs::write(&file, QUICK).unwrap();
    file
}

/// Every entry under `dir` with its bytes (a link: where it points), for "nothing
/// changed" checks.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut all = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let meta = std::fs::symlink_metadata(&path).unwrap();
        if meta.file_type().is_symlink() {
            all.push((path.clone(), std::fs::read_link(&path).unwrap().into_os_string().into_encoded_bytes()));
        } else if meta.is_dir() {
            all.push((path.clone(), Vec::new()));
            all.extend(snapshot(&path));
        } else {
            all.push((path.clone(), std::fs::read(&path).unwrap()));
        }
    }
    all.sort();
    all
}

/// Runs `args` in `cwd`; asserts exit 2 and that stderr holds every one of `needles`.
fn refused(cwd: &Path, args: &[&str], needles: &[&str]) -> String {
    let o = bin().current_dir(cwd).args(args).output().unwrap();
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: `{n}` not in: {err}");
    }
    err
}

#[test]
fn a_directory_holding_a_users_files_is_refused_and_left_byte_for_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let file = scenario(tmp.path());
    let proj = tmp.path().join("proj");
    std::fs::create_dir_all(proj.join("docs")).unwrap();
    std::fs::write(proj.join("docs/thesis.txt"), "three years of work\n").unwrap();
    std::fs::write(proj.join("notes.md"), "mine\n").unwrap();
    let before = snapshot(tmp.path());
    let err = refused(
        tmp.path(),
        &["run", file.to_str().unwrap(), "--quiet", "--out", "proj"],
        &["--out proj", "`docs` and `notes.md`", "did not write", "another --out"],
    );
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(snapshot(tmp.path()), before, "the user's files changed");
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 2, "nothing staged beside them");
}

#[test]
fn results_with_a_users_file_added_are_no_longer_replaced() {
    let tmp = tempfile::tempdir().unwrap();
    let file = scenario(tmp.path());
    let run =
        |cwd: &Path| bin().current_dir(cwd).args(["run", file.to_str().unwrap(), "--quiet", "--out", "out"]).output();
    assert!(run(tmp.path()).unwrap().status.success());
    // Results backoffsim wrote are replaced by the next run.
    let again = run(tmp.path()).unwrap();
    assert!(again.status.success(), "{}", text(&again.stderr));
    std::fs::write(tmp.path().join("out/analysis.ipynb"), "{}").unwrap();
    let before = snapshot(tmp.path());
    refused(tmp.path(), &["run", file.to_str().unwrap(), "--quiet", "--out", "out"], &["`analysis.ipynb`"]);
    assert_eq!(snapshot(tmp.path()), before);
}

#[test]
fn the_working_directory_its_ancestors_and_links_are_refused_before_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let file = scenario(tmp.path());
    let file = file.to_str().unwrap();
    let work = tmp.path().join("work");
    std::fs::create_dir(&work).unwrap();
    std::fs::write(work.join("data.csv"), "1,2\n").unwrap();
    refused(&work, &["run", file, "--quiet", "--out", "."], &["--out .", "is the working directory"]);
    refused(&work, &["run", file, "--quiet", "--out", ".."], &["an ancestor of the working directory"]);
    refused(&work, &["run", file, "--quiet", "--out", "/"], &["an ancestor of the working directory"]);
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    std::os::unix::fs::symlink(&empty, work.join("link")).unwrap();
    std::os::unix::fs::symlink(tmp.path().join("nowhere"), work.join("dangling")).unwrap();
    let before = snapshot(tmp.path());
    refused(&work, &["run", file, "--quiet", "--out", "link"], &["--out link", "symbolic link"]);
    refused(&work, &["run", file, "--quiet", "--out", "dangling"], &["--out dangling", "symbolic link"]);
    assert_eq!(snapshot(tmp.path()), before);
    assert!(!tmp.path().join("nowhere").exists(), "the dangling link was followed");
    // An empty directory is a fine place for results.
    let o = bin().current_dir(&work).args(["run", file, "--quiet", "--out"]).arg(&empty).output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(empty.join("manifest.json").is_file());
}

#[test]
fn merge_and_compare_write_only_where_run_may() {
    let tmp = tempfile::tempdir().unwrap();
    let file = scenario(tmp.path());
    let file = file.to_str().unwrap();
    for k in 0..2 {
        let shard = format!("{k}/2");
        let o = bin()
            .current_dir(tmp.path())
            .args(["run", file, "--quiet", "--shard", &shard, "--out"])
            .arg(format!("p{k}"))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o.stderr));
    }
    let busy = tmp.path().join("busy");
    std::fs::create_dir(&busy).unwrap();
    std::fs::write(busy.join("thesis.txt"), "x").unwrap();
    let before = snapshot(tmp.path());
    refused(tmp.path(), &["merge", "p0", "p1", "--quiet", "-o", "busy"], &["--out busy", "`thesis.txt`"]);
    refused(tmp.path(), &["merge", "p0", "p1", "--quiet", "-o", "."], &["is the working directory"]);
    assert_eq!(snapshot(tmp.path()), before);
    // A part may be replaced by results, and results by a comparison of a run.
    let o = bin().current_dir(tmp.path()).args(["merge", "p0", "p1", "--quiet", "-o", "p1"]).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let o = bin().current_dir(tmp.path()).args(["run", file, "--quiet", "--out", "r"]).output().unwrap();
    assert!(o.status.success());
    refused(tmp.path(), &["compare", "r", "--quiet", "-o", "busy"], &["--out busy", "`thesis.txt`"]);
    for _ in 0..2 {
        // The second time it replaces its own report.
        let o = bin().current_dir(tmp.path()).args(["compare", "r", "--quiet", "-o", "cmp"]).output().unwrap();
        assert!(o.status.success(), "{}", text(&o.stderr));
    }
    std::fs::write(tmp.path().join("cmp/diagram.png"), "mine").unwrap();
    refused(tmp.path(), &["compare", "r", "--quiet", "-o", "cmp"], &["`diagram.png`"]);
    assert_eq!(std::fs::read(tmp.path().join("cmp/diagram.png")).unwrap(), b"mine");
}

/// A run long enough (a second or more) that a second one surely starts while it works.
fn long_run(out: &Path) -> Child {
    bin()
        .args(["run", root().join("scenarios/library-defaults.toml").to_str().unwrap(), "--quiet", "--out"])
        .arg(out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits until `path` exists (the lock a run takes before it simulates).
fn wait_for(path: &Path, child: &mut Child) {
    let start = Instant::now();
    while !path.exists() {
        assert!(child.try_wait().unwrap().is_none(), "the run ended before its lock was seen");
        assert!(start.elapsed() < Duration::from_secs(60), "no {} after a minute", path.display());
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn of_two_runs_into_one_place_the_second_is_refused_naming_the_first_and_the_first_completes() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let lock = tmp.path().join(".out.lock");
    let mut complete: Option<Vec<(String, Vec<u8>)>> = None;
    for pair in 0..10 {
        let mut first = long_run(&out);
        let pid = first.id();
        wait_for(&lock, &mut first);
        // Staggered into the first run's work: at once, then later and later.
        std::thread::sleep(Duration::from_millis(40 * pair));
        let second = long_run(&out).wait_with_output().unwrap();
        let err = text(&second.stderr);
        let first_out = first.wait_with_output().unwrap();
        assert_eq!(first_out.status.code(), Some(0), "pair {pair}: {}", text(&first_out.stderr));
        match second.status.code() {
            Some(2) => assert!(
                err.contains(&format!("another backoffsim (process {pid}) is writing there")),
                "pair {pair}: {err}"
            ),
            // Only once the first run is done may the second have the place.
            Some(0) => assert!(pair > 0, "the second run went ahead while the first held the place"),
            other => panic!("pair {pair}: the second run exited {other:?}: {err}"),
        }
        // Whatever the interleaving, the results are whole (every file the manifest
        // lists, and nothing else) and the same every time.
        let now = files(&out);
        let manifest: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
        let mut listed: Vec<&str> = manifest["files"].as_array().unwrap().iter().map(|f| f.as_str().unwrap()).collect();
        listed.sort();
        assert_eq!(now.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(), listed, "pair {pair}");
        if let Some(c) = &complete {
            assert!(c == &now, "pair {pair}: the results differ from the first pair's");
        }
        complete = Some(now);
        assert_eq!(names_in(tmp.path()), ["out"], "pair {pair}: something was left beside the results");
    }
}

#[test]
fn results_a_kill_left_aside_between_the_renames_are_put_back_by_the_next_run_even_an_interrupted_one() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    assert!(long_run(&out).wait().unwrap().success());
    let earlier = files(&out);
    // What a SIGKILL between the swap's two renames leaves where the system has no
    // exchange: the results moved aside, the new ones staged.
    std::fs::rename(&out, tmp.path().join(".out.old")).unwrap();
    let stale = tmp.path().join(".out.partial.4194304");
    std::fs::create_dir(&stale).unwrap();
    std::fs::write(stale.join("summary.csv"), "half").unwrap();

    let mut next = long_run(&out);
    wait_for(&tmp.path().join(".out.lock"), &mut next);
    let o = stop_with("INT", next);
    assert_eq!(o.status.code(), Some(130), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("nothing was written, and"), "{}", text(&o.stderr));
    assert_eq!(files(&out), earlier, "the earlier results are back, byte for byte");
    assert_eq!(names_in(tmp.path()), ["out"]);
}

#[test]
fn a_name_the_system_refuses_is_refused_before_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let file = scenario(tmp.path());
    let long = "r".repeat(256);
    refused(tmp.path(), &["run", file.to_str().unwrap(), "--quiet", "--out", &long], &["--out rrr", "too long"]);
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1, "nothing made beside the scenario");
    // 255 bytes is a valid name, and its hidden siblings are shortened to fit.
    let longest = "r".repeat(255);
    let o = bin()
        .current_dir(tmp.path())
        .args(["run", file.to_str().unwrap(), "--quiet", "--out", &longest])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(tmp.path().join(&longest).join("manifest.json").is_file());
}
