//! deploy/slurm: the array task and the merge run here as Slurm would run them, and the
//! submitter's calls to sbatch, through a stand-in that records them.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::super::common::{assert_same_files, root, text};
use super::{RESULTS, SWEEP, assert_usage, bash, deploy, ok, stand_in, whole_run};

fn script(name: &str) -> PathBuf {
    deploy().join("slurm").join(name)
}

/// One array task as Slurm starts it: the whole array submitted as --array=0-(count-1).
fn array_task(scenario: &Path, parts: &Path, id: u32, count: u32) -> Command {
    let mut c = bash(&script("shard.sbatch"));
    c.arg(scenario)
        .arg(parts)
        .env("BACKOFFSIM", env!("CARGO_BIN_EXE_backoffsim"))
        .env("SLURM_ARRAY_TASK_ID", id.to_string())
        .env("SLURM_ARRAY_TASK_COUNT", count.to_string())
        .env("SLURM_ARRAY_TASK_MIN", "0")
        .env("SLURM_CPUS_PER_TASK", "1")
        .env_remove("BACKOFFSIM_SHARDS");
    c
}

fn merge(parts: &Path, cwd: &Path) -> Command {
    let mut c = bash(&script("merge.sbatch"));
    c.arg(parts).env("BACKOFFSIM", env!("CARGO_BIN_EXE_backoffsim")).current_dir(cwd);
    c
}

#[test]
fn three_array_tasks_and_the_merge_give_the_bytes_of_one_whole_run() {
    let whole = tempfile::tempdir().unwrap();
    let whole = whole_run(whole.path());
    // The shared directory, and the merge job's working directory as `submit` sets it.
    let shared = tempfile::tempdir().unwrap();
    let scenario = shared.path().join("scenario.toml");
    std::fs::write(&scenario, SWEEP).unwrap();
    let parts = shared.path().join("parts");
    for id in 0..3 {
        ok(array_task(&scenario, &parts, id, 3).current_dir(shared.path()));
        assert!(parts.join(format!("shard-{id}")).is_dir(), "task {id} wrote no part");
    }
    ok(&mut merge(&parts, shared.path()));
    assert_same_files(&shared.path().join(RESULTS), &whole);
}

#[test]
fn a_shard_rerun_alone_with_backoffsim_shards_set_writes_the_part_the_array_wrote() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = tmp.path().join("scenario.toml");
    std::fs::write(&scenario, SWEEP).unwrap();
    let (first, again) = (tmp.path().join("first"), tmp.path().join("again"));
    ok(array_task(&scenario, &first, 2, 3).current_dir(tmp.path()));
    // `sbatch --array=2 --export=ALL,BACKOFFSIM_SHARDS=3`: an array of one task, numbered 2.
    ok(array_task(&scenario, &again, 2, 1)
        .env("SLURM_ARRAY_TASK_MIN", "2")
        .env("BACKOFFSIM_SHARDS", "3")
        .current_dir(tmp.path()));
    assert_same_files(&again.join("shard-2"), &first.join("shard-2"));
}

#[test]
fn the_array_task_outside_an_array_gives_its_usage_and_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let no_args = output(bash(&script("shard.sbatch")).env_remove("SLURM_ARRAY_TASK_ID"));
    assert_usage(&no_args, "shard.sbatch without arguments");
    let no_array = output(
        bash(&script("shard.sbatch"))
            .arg(tmp.path().join("scenario.toml"))
            .arg(tmp.path().join("parts"))
            .env_remove("SLURM_ARRAY_TASK_ID"),
    );
    assert_usage(&no_array, "shard.sbatch outside a job array");
    assert!(text(&no_array.stderr).contains("SLURM_ARRAY_TASK_ID is not set"), "{}", text(&no_array.stderr));
}

#[test]
fn the_array_task_refuses_an_array_that_does_not_start_at_0() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = tmp.path().join("scenario.toml");
    std::fs::write(&scenario, SWEEP).unwrap();
    // --array=1-3: three tasks, but shard 0 would never run and shard 3 of 3 does not exist.
    let o = output(array_task(&scenario, &tmp.path().join("parts"), 1, 3).env("SLURM_ARRAY_TASK_MIN", "1"));
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("starts at 1, not 0"), "{}", text(&o.stderr));
    assert!(!tmp.path().join("parts").exists(), "a refused task wrote its parts directory");
}

#[test]
fn the_merge_script_gives_its_usage_without_arguments_and_says_when_there_are_no_parts() {
    let tmp = tempfile::tempdir().unwrap();
    assert_usage(&output(&mut bash(&script("merge.sbatch"))), "merge.sbatch without arguments");
    let empty = tmp.path().join("parts");
    std::fs::create_dir(&empty).unwrap();
    let o = output(&mut merge(&empty, tmp.path()));
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("no parts (shard-*) in"), "{}", text(&o.stderr));
}

/// A stand-in sbatch that appends each call's arguments, one a line and a blank line
/// after, to `calls`, and answers as `--parsable` does: the array's id with a cluster
/// name, the merge's without.
fn sbatch(dir: &Path) -> PathBuf {
    stand_in(
        dir,
        "sbatch",
        r#"printf '%s\n' "$@" "" >> "$(dirname "$0")/calls"
case " $* " in
    *" --dependency="*) echo 4243 ;;
    *) echo "4242;main" ;;
esac
"#,
    )
}

fn submit(scenario: &Path, shards: &str, shared: &Path, sbatch: &Path) -> Command {
    let mut c = bash(&script("submit"));
    c.arg(scenario).arg(shards).arg(shared).env("BACKOFFSIM", env!("CARGO_BIN_EXE_backoffsim")).env("SBATCH", sbatch);
    c
}

#[test]
fn submit_sends_the_array_then_a_merge_that_waits_for_every_task() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = tmp.path().join("sharded.toml");
    std::fs::write(&scenario, SWEEP).unwrap();
    let shared = tmp.path().join("shared");
    let o = ok(submit(&scenario, "3", &shared, &sbatch(tmp.path())).arg("--force"));
    let calls = std::fs::read_to_string(tmp.path().join("calls")).unwrap();
    let calls: Vec<Vec<&str>> = calls.split_terminator("\n\n").map(|c| c.lines().collect()).collect();
    assert_eq!(calls.len(), 2, "{calls:?}");
    let (array, merge) = (&calls[0], &calls[1]);
    let shared = shared.to_str().unwrap();
    let (shard_script, merge_script) = (script("shard.sbatch"), script("merge.sbatch"));
    assert_eq!(
        array[..],
        [
            "--parsable",
            "--array=0-2",
            "--export=ALL,BACKOFFSIM_SHARDS=3",
            &format!("--chdir={shared}"),
            &format!("--output={shared}/logs/shard-%a.out"),
            shard_script.to_str().unwrap(),
            &format!("{shared}/scenario.toml"),
            &format!("{shared}/parts"),
            "--force",
        ]
    );
    // The array's id without the cluster name `--parsable` may add.
    assert_eq!(
        merge[..],
        [
            "--parsable",
            "--dependency=afterok:4242",
            "--kill-on-invalid-dep=yes",
            &format!("--chdir={shared}"),
            &format!("--output={shared}/logs/merge.out"),
            merge_script.to_str().unwrap(),
            &format!("{shared}/parts"),
        ]
    );
    assert_eq!(std::fs::read_to_string(format!("{shared}/scenario.toml")).unwrap(), SWEEP);
    assert!(
        text(&o.stdout).contains("submitted 3 shards as job 4242 and the merge as job 4243"),
        "{}",
        text(&o.stdout)
    );
}

#[test]
fn submit_refuses_bad_arguments_a_bad_scenario_and_parts_of_an_earlier_run_before_calling_sbatch() {
    let tmp = tempfile::tempdir().unwrap();
    let sbatch = sbatch(tmp.path());
    let scenario = tmp.path().join("sharded.toml");
    std::fs::write(&scenario, SWEEP).unwrap();
    let shared = tmp.path().join("shared");
    assert_usage(&output(bash(&script("submit")).env("SBATCH", &sbatch)), "submit without arguments");
    for shards in ["0", "x", "-1", ""] {
        assert_usage(&output(&mut submit(&scenario, shards, &shared, &sbatch)), &format!("SHARDS '{shards}'"));
    }
    let missing = output(&mut submit(&tmp.path().join("nowhere.toml"), "2", &shared, &sbatch));
    assert_eq!(missing.status.code(), Some(2), "{}", text(&missing.stderr));
    let bad = tmp.path().join("bad.toml");
    std::fs::write(&bad, SWEEP.replace("base_rtt = \"50ms\"", "base_rtt = 50")).unwrap();
    let refused = output(&mut submit(&bad, "2", &shared, &sbatch));
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused.stderr));
    assert!(text(&refused.stderr).contains("path.base_rtt"), "{}", text(&refused.stderr));
    std::fs::create_dir_all(shared.join("parts/shard-0")).unwrap();
    let stale = output(&mut submit(&scenario, "2", &shared, &sbatch));
    assert_eq!(stale.status.code(), Some(2), "{}", text(&stale.stderr));
    assert!(text(&stale.stderr).contains("already holds parts of an earlier run"), "{}", text(&stale.stderr));
    assert!(!tmp.path().join("calls").exists(), "sbatch was called");
}

fn output(command: &mut Command) -> std::process::Output {
    command.output().expect("bash starts")
}

/// tests/slurm/run, which runs these templates on a real Slurm, must never install or
/// start anything where it cannot: without root it says why and exits 77 (automake's
/// "skipped", which .ci/run counts as such) before it touches apt.
#[test]
fn the_real_slurm_test_parses_and_skips_with_77_before_apt_when_not_root() {
    let run = root().join("tests/slurm/run");
    ok(Command::new("bash").arg("-n").arg(&run));
    let tmp = tempfile::tempdir().unwrap();
    stand_in(tmp.path(), "id", r#"[[ $* == -u ]] && echo 1000 || exec /usr/bin/id "$@""#);
    stand_in(tmp.path(), "apt-get", r#"echo "$@" >> "$(dirname "$0")/apt-calls""#);
    let path = format!("{}:{}", tmp.path().display(), std::env::var("PATH").unwrap());
    let o = output(bash(&run).env("PATH", path));
    assert_eq!(o.status.code(), Some(77), "{}{}", text(&o.stdout), text(&o.stderr));
    assert!(text(&o.stdout).starts_with("skipped: not root"), "{}", text(&o.stdout));
    assert!(!tmp.path().join("apt-calls").exists(), "apt-get was called");
}
