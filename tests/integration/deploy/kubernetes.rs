//! deploy/kubernetes: the manifests' shape, their containers' commands run here as the
//! pods would run them, and `run`'s calls to kubectl, through a stand-in that records
//! what it applies.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use yaml_rust2::Yaml;

use super::super::common::{assert_same_files, text};
use super::{RESULTS, SWEEP, assert_usage, bash, deploy, ok, stand_in, whole_run, yaml};

fn manifest(name: &str) -> Yaml {
    let mut docs = yaml(&deploy().join("kubernetes").join(name));
    assert_eq!(docs.len(), 1, "{name} should hold one document");
    docs.remove(0)
}

/// The pod spec of a Job, or of a Pod.
fn pod(doc: &Yaml) -> &Yaml {
    if doc["kind"].as_str() == Some("Pod") { &doc["spec"] } else { &doc["spec"]["template"]["spec"] }
}

fn container(job: &Yaml) -> &Yaml {
    let containers = pod(job)["containers"].as_vec().expect("containers");
    assert_eq!(containers.len(), 1);
    &containers[0]
}

/// A container's env entry given as a plain value.
fn env_value<'a>(job: &'a Yaml, name: &str) -> &'a str {
    container(job)["env"]
        .as_vec()
        .expect("env")
        .iter()
        .find(|e| e["name"].as_str() == Some(name))
        .and_then(|e| e["value"].as_str())
        .unwrap_or_else(|| panic!("no env value {name}"))
}

/// The container's shell script (`command: [sh, -c]`, the script its one argument).
fn script(job: &Yaml) -> &str {
    let command: Vec<&str> =
        container(job)["command"].as_vec().expect("command").iter().filter_map(Yaml::as_str).collect();
    assert_eq!(command, ["sh", "-c"]);
    container(job)["args"][0].as_str().expect("the script")
}

#[test]
fn the_shard_job_is_an_indexed_job_whose_completions_are_the_shards_of_its_command() {
    let job = manifest("shard-job.yaml");
    assert_eq!(job["kind"].as_str(), Some("Job"));
    assert_eq!(job["spec"]["completionMode"].as_str(), Some("Indexed"));
    let completions = job["spec"]["completions"].as_i64().expect("completions");
    let parallelism = job["spec"]["parallelism"].as_i64().expect("parallelism");
    assert!((1..=completions).contains(&parallelism), "parallelism {parallelism}, completions {completions}");
    assert!(
        script(&job).contains(r#"--shard "$JOB_COMPLETION_INDEX/$SHARDS""#),
        "the shard is not taken from JOB_COMPLETION_INDEX: {}",
        script(&job)
    );
    assert_eq!(env_value(&job, "SHARDS"), completions.to_string(), "--shard …/N is not the Job's completions");
    // The merge names the parts one by one: it must count as many.
    assert_eq!(env_value(&manifest("merge-job.yaml"), "SHARDS"), completions.to_string());
}

#[test]
fn the_jobs_and_the_fetch_pod_mount_the_claim_which_is_read_write_many_and_the_shards_the_scenario() {
    let claim = manifest("pvc.yaml");
    assert_eq!(claim["kind"].as_str(), Some("PersistentVolumeClaim"));
    assert!(claim["spec"]["accessModes"].as_vec().unwrap().contains(&Yaml::String("ReadWriteMany".into())));
    let claim_name = claim["metadata"]["name"].as_str().unwrap();
    for name in ["shard-job.yaml", "merge-job.yaml", "fetch-pod.yaml"] {
        let job = manifest(name);
        let claims: Vec<&str> = pod(&job)["volumes"]
            .as_vec()
            .unwrap()
            .iter()
            .filter_map(|v| v["persistentVolumeClaim"]["claimName"].as_str())
            .collect();
        assert_eq!(claims, [claim_name], "{name}");
        assert_eq!(pod(&job)["restartPolicy"].as_str(), Some("Never"), "{name}");
    }
    let shards = manifest("shard-job.yaml");
    let config_maps: Vec<&str> =
        pod(&shards)["volumes"].as_vec().unwrap().iter().filter_map(|v| v["configMap"]["name"].as_str()).collect();
    assert_eq!(config_maps, ["backoffsim-scenario"]);
}

/// Where the test lays each kind of volume of a pod.
struct Volumes<'a> {
    scenario: &'a Path,
    shared: &'a Path,
}

/// A Job's container as its pod would run it: its command and script, its env
/// with the volumes' mount paths mapped to `volumes`, in its working directory (mapped
/// too), with `backoffsim` on PATH the built binary.
fn container_command(job: &Yaml, volumes: &Volumes, index: Option<u32>) -> Command {
    let mut mounts: Vec<(String, PathBuf)> = Vec::new();
    for mount in container(job)["volumeMounts"].as_vec().unwrap() {
        let name = mount["name"].as_str().unwrap();
        let volume = pod(job)["volumes"].as_vec().unwrap().iter().find(|v| v["name"].as_str() == Some(name)).unwrap();
        let host = if volume["configMap"].is_badvalue() { volumes.shared } else { volumes.scenario };
        mounts.push((mount["mountPath"].as_str().unwrap().to_string(), host.to_path_buf()));
    }
    let map = |path: &str| -> String {
        mounts
            .iter()
            .find_map(|(mount, host)| path.strip_prefix(mount.as_str()).map(|rest| format!("{}{rest}", host.display())))
            .unwrap_or_else(|| panic!("{path} is on no volume the pod mounts"))
    };
    let mut env = BTreeMap::new();
    for entry in container(job)["env"].as_vec().unwrap() {
        let name = entry["name"].as_str().unwrap();
        let value = if let Some(value) = entry["value"].as_str() {
            if value.starts_with('/') { map(value) } else { value.to_string() }
        } else {
            // The downward API's limits.cpu with divisor 1: the CPU limit, a whole number.
            assert_eq!(entry["valueFrom"]["resourceFieldRef"]["resource"].as_str(), Some("limits.cpu"), "{name}");
            container(job)["resources"]["limits"]["cpu"].as_str().expect("a CPU limit").to_string()
        };
        env.insert(name.to_string(), value);
    }
    if let Some(index) = index {
        env.insert("JOB_COMPLETION_INDEX".into(), index.to_string());
    }
    let bin = volumes.shared.parent().unwrap().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    if !bin.join("backoffsim").exists() {
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_backoffsim"), bin.join("backoffsim")).unwrap();
    }
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let cwd = container(job)["workingDir"].as_str().map_or_else(|| volumes.shared.to_path_buf(), |d| map(d).into());
    let mut c = Command::new("sh");
    c.arg("-c").arg(script(job)).envs(env).env("PATH", path).current_dir(cwd);
    c
}

#[test]
fn the_shard_pods_and_the_merge_pod_give_the_bytes_of_one_whole_run() {
    let whole = tempfile::tempdir().unwrap();
    let whole = whole_run(whole.path());
    let cluster = tempfile::tempdir().unwrap();
    let volumes = Volumes { scenario: &cluster.path().join("scenario"), shared: &cluster.path().join("shared") };
    std::fs::create_dir_all(volumes.scenario).unwrap();
    std::fs::create_dir_all(volumes.shared).unwrap();
    // The ConfigMap's one key, as `run` creates it.
    std::fs::write(volumes.scenario.join("scenario.toml"), SWEEP).unwrap();
    let shards = manifest("shard-job.yaml");
    let n = shards["spec"]["completions"].as_i64().unwrap() as u32;
    for index in 0..n {
        ok(&mut container_command(&shards, &volumes, Some(index)));
    }
    ok(&mut container_command(&manifest("merge-job.yaml"), &volumes, None));
    assert_same_files(&volumes.shared.join(RESULTS), &whole);
}

/// A stand-in kubectl that logs each call to `calls`, keeps what each `apply` is given as
/// `applied-N.yaml`, answers `create … -o yaml` with a ConfigMap and `get job` with
/// $JOB_STATE.
fn kubectl(dir: &Path) -> PathBuf {
    stand_in(
        dir,
        "kubectl",
        r#"dir=$(dirname "$0")
echo "$*" >> "$dir/calls"
n=$(find "$dir" -name 'applied-*' | wc -l)
case $1 in
    apply) if [[ $3 == - ]]; then cat > "$dir/applied-$n.yaml"; else cp "$3" "$dir/applied-$n.yaml"; fi ;;
    create) printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n' "$3" ;;
    get) echo "$JOB_STATE" ;;
esac
"#,
    )
}

fn run(dir: &Path, args: &[&str], state: &str) -> Output {
    bash(&deploy().join("kubernetes/run"))
        .args(args)
        .env("KUBECTL", kubectl(dir))
        .env("JOB_STATE", state)
        .env("POLL_SECONDS", "0")
        .env_remove("IMAGE")
        .output()
        .unwrap()
}

fn applied(dir: &Path) -> Vec<Yaml> {
    (0..).map(|n| dir.join(format!("applied-{n}.yaml"))).take_while(|p| p.exists()).flat_map(|p| yaml(&p)).collect()
}

#[test]
fn run_applies_the_claim_the_scenario_and_both_jobs_with_its_shard_count_and_image() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = tmp.path().join("sharded.toml");
    std::fs::write(&scenario, SWEEP).unwrap();
    let o = bash(&deploy().join("kubernetes/run"))
        .arg(&scenario)
        .args(["5", "2"])
        .env("KUBECTL", kubectl(tmp.path()))
        .env("JOB_STATE", "Complete")
        .env("POLL_SECONDS", "0")
        .env("IMAGE", "registry.example/backoffsim:0.1.0")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let docs = applied(tmp.path());
    let kinds: Vec<&str> = docs.iter().map(|d| d["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["PersistentVolumeClaim", "ConfigMap", "Job", "Job"]);
    let (shards, merge) = (&docs[2], &docs[3]);
    assert_eq!(shards["spec"]["completions"].as_i64(), Some(5));
    assert_eq!(shards["spec"]["parallelism"].as_i64(), Some(2));
    assert_eq!(env_value(shards, "SHARDS"), "5");
    assert_eq!(env_value(merge, "SHARDS"), "5");
    for job in [shards, merge] {
        assert_eq!(container(job)["image"].as_str(), Some("registry.example/backoffsim:0.1.0"));
    }
    // The ConfigMap's name and key are the ones the shard pods mount and read.
    let scenario_env = env_value(shards, "SCENARIO");
    let key = scenario_env.rsplit('/').next().unwrap();
    let calls = std::fs::read_to_string(tmp.path().join("calls")).unwrap();
    let create = format!("create configmap backoffsim-scenario --from-file={key}={}", scenario.display());
    assert!(calls.contains(&create), "{calls}");
    // The shard Job is complete before the merge is applied.
    let lines: Vec<&str> = calls.lines().collect();
    let waited = lines.iter().position(|l| l.starts_with("get job backoffsim-shards")).expect("waited for the shards");
    assert!(lines.iter().rposition(|l| l == &"apply -f -").unwrap() > waited, "{calls}");
}

#[test]
fn run_stops_with_exit_1_and_applies_no_merge_when_the_shard_job_fails() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = tmp.path().join("sharded.toml");
    std::fs::write(&scenario, SWEEP).unwrap();
    let o = run(tmp.path(), &[scenario.to_str().unwrap(), "3"], "Failed");
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("job/backoffsim-shards failed"), "{}", text(&o.stderr));
    let kinds: Vec<String> =
        applied(tmp.path()).iter().map(|d| d["metadata"]["name"].as_str().unwrap().to_string()).collect();
    assert_eq!(kinds, ["backoffsim-shared", "backoffsim-scenario", "backoffsim-shards"]);
}

#[test]
fn run_gives_its_usage_and_exit_2_on_wrong_arguments() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = tmp.path().join("sharded.toml");
    std::fs::write(&scenario, SWEEP).unwrap();
    let scenario = scenario.to_str().unwrap();
    for args in [&[][..], &[scenario], &[scenario, "0"], &[scenario, "x"], &[scenario, "3", "4"], &[scenario, "3", "0"]]
    {
        assert_usage(&run(tmp.path(), args, "Complete"), &format!("run {args:?}"));
    }
    let missing = run(tmp.path(), &["nowhere.toml", "3"], "Complete");
    assert_eq!(missing.status.code(), Some(2), "{}", text(&missing.stderr));
    assert!(!tmp.path().join("calls").exists(), "kubectl was called");
}
