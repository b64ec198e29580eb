//! The cluster templates under deploy/: every script parses and can be executed, every
//! manifest parses, and the Slurm and Kubernetes templates, run here as the cluster would
//! run them, merge into the bytes of one whole `backoffsim run`.

mod kubernetes;
mod slurm;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use super::common::{bin, files_under, root, text};

/// A sweep of 2 windows × 2 variants × 2 replications: 8 work items, which 3 shards split
/// unevenly (3, 3 and 2) and the manifests' 4 evenly.
pub const SWEEP: &str = r#"
name = "sharded"
description = "A small sweep for the cluster templates: two windows, two estimators, two replications."
horizon = "2s"
replications = 2

[tcp]
workload = { kind = "steady", interval = "20ms" }

[path]
base_rtt = "50ms"
loss = { model = "bernoulli", p = 0.05 }

[sweep]
"tcp.window" = [2, 8]

[[variant]]
name = "rfc6298"

[[variant]]
name = "linux"
tcp.rto.profile = "linux"
"#;

/// Where a run of `SWEEP` writes by default, relative to its working directory. Reports
/// name the directory as given, so a merge compares equal to a whole run only when both
/// are written under the same relative path.
pub const RESULTS: &str = "results/sharded";

pub fn deploy() -> PathBuf {
    root().join("deploy")
}

/// The shell scripts under deploy/: the files that start with a `#!` line.
pub fn scripts() -> Vec<PathBuf> {
    files_under(&deploy()).into_iter().filter(|p| std::fs::read(p).unwrap().starts_with(b"#!")).collect()
}

/// Every YAML document of a file.
pub fn yaml(path: &Path) -> Vec<yaml_rust2::Yaml> {
    let source = std::fs::read_to_string(path).unwrap();
    yaml_rust2::YamlLoader::load_from_str(&source).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

pub fn bash(script: &Path) -> Command {
    let mut c = Command::new("bash");
    c.arg(script);
    c
}

/// Runs a command and asserts it succeeded, showing its stderr when it did not.
pub fn ok(command: &mut Command) -> Output {
    let o = command.output().expect("the command starts");
    assert!(o.status.success(), "{command:?} failed ({}): {}{}", o.status, text(&o.stderr), text(&o.stdout));
    o
}

/// A whole run of `SWEEP` to its default directory, from inside `cwd`.
pub fn whole_run(cwd: &Path) -> PathBuf {
    std::fs::write(cwd.join("sharded.toml"), SWEEP).unwrap();
    ok(bin().current_dir(cwd).args(["run", "sharded.toml", "--quiet"]));
    cwd.join(RESULTS)
}

/// Asserts a script refused its arguments: exit 2 with its usage line on stderr.
pub fn assert_usage(o: &Output, what: &str) {
    assert_eq!(o.status.code(), Some(2), "{what}: {}", text(&o.stderr));
    assert!(text(&o.stderr).contains("usage:"), "{what}: {}", text(&o.stderr));
}

/// A stand-in for a cluster command (sbatch, kubectl): a bash script named `name` in
/// `dir` with the given body.
pub fn stand_in(dir: &Path, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/usr/bin/env bash\nset -euo pipefail\n{body}")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[test]
fn every_script_under_deploy_passes_bash_n() {
    let scripts = scripts();
    assert!(scripts.len() >= 4, "{scripts:?}");
    for script in scripts {
        let o = Command::new("bash").arg("-n").arg(&script).output().unwrap();
        assert!(o.status.success(), "bash -n {}: {}", script.display(), text(&o.stderr));
    }
}

#[test]
fn every_script_under_deploy_is_executable_bash_with_strict_mode() {
    use std::os::unix::fs::PermissionsExt;
    for script in scripts() {
        let mode = std::fs::metadata(&script).unwrap().permissions().mode();
        assert!(mode & 0o111 == 0o111, "{} is not executable (mode {mode:o})", script.display());
        let source = std::fs::read_to_string(&script).unwrap();
        assert!(source.starts_with("#!/usr/bin/env bash\n"), "{}", script.display());
        assert!(source.contains("\nset -euo pipefail\n"), "{} lacks set -euo pipefail", script.display());
    }
}

#[test]
fn every_yaml_under_deploy_parses_and_names_its_kind() {
    let manifests: Vec<PathBuf> = files_under(&deploy())
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        .collect();
    assert!(manifests.len() >= 3, "{manifests:?}");
    for path in manifests {
        let docs = yaml(&path);
        assert!(!docs.is_empty(), "{} holds no document", path.display());
        for doc in docs {
            assert!(doc["apiVersion"].as_str().is_some(), "{}: no apiVersion", path.display());
            assert!(doc["kind"].as_str().is_some(), "{}: no kind", path.display());
        }
    }
}
