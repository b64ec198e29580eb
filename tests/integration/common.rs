//! Running the binary and reading what it wrote.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_backoffsim"));
    c.current_dir(root());
    c
}

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("the binary runs")
}

/// Every file of a results directory (flat) with its bytes, sorted by name.
pub fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap()))
        .collect();
    files.sort();
    files
}

/// Sends `signal` (`INT`, `TERM`) to `child` and waits for it to end, failing the test
/// should it run on for 30 s: a guard against a hang, not a timing claim.
pub fn stop_with(signal: &str, mut child: std::process::Child) -> Output {
    let kill = Command::new("kill").args(["-s", signal, &child.id().to_string()]).status().unwrap();
    assert!(kill.success());
    let sent = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        assert!(sent.elapsed() < std::time::Duration::from_secs(30), "still running 30 s after SIG{signal}");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    child.wait_with_output().unwrap()
}

/// The names of the entries of `dir`, sorted: what a command left in a place.
pub fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

/// Every file under `dir`, recursively, sorted.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(files_under(&path));
        } else {
            files.push(path);
        }
    }
    files.sort();
    files
}

/// Two result directories hold the same files with the same bytes.
pub fn assert_same_files(merged: &Path, whole: &Path) {
    let names = |dir: &Path| -> Vec<PathBuf> {
        files_under(dir).into_iter().map(|p| p.strip_prefix(dir).unwrap().to_path_buf()).collect()
    };
    let (m, w) = (names(merged), names(whole));
    assert!(!w.is_empty(), "the whole run wrote nothing");
    assert_eq!(m, w, "the merge and the whole run wrote different files");
    for name in &w {
        assert!(
            std::fs::read(merged.join(name)).unwrap() == std::fs::read(whole.join(name)).unwrap(),
            "{} differs between the merge and the whole run",
            name.display()
        );
    }
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs the binary, which must succeed; its stdout.
pub fn ok(args: &[&str]) -> String {
    let o = run(args);
    assert!(o.status.success(), "{args:?}: {}", text(&o.stderr));
    text(&o.stdout)
}

/// Runs the binary, which must refuse with exit code 2, no panic and nothing on stdout;
/// its message on stderr.
pub fn refused(args: &[&str]) -> String {
    let o = run(args);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert!(o.stdout.is_empty(), "nothing on stdout");
    err
}

/// Runs a shipped scenario into a fresh directory and returns it. The run is made from
/// inside the temporary directory with a relative `--out`, so that the report (which
/// names the directory as given) is the same bytes for every call.
pub fn run_scenario(name: &str, extra: &[&str]) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join(name);
    let file = root().join(format!("scenarios/{name}.toml"));
    let mut args = vec!["run", file.to_str().unwrap(), "--quiet", "--out", name];
    args.extend_from_slice(extra);
    let o = bin().current_dir(tmp.path()).args(&args).output().expect("the binary runs");
    assert!(o.status.success(), "run {name} failed: {}", text(&o.stderr));
    (tmp, out)
}

/// Runs a scenario given as text (with `extra` arguments) into a fresh temporary
/// directory and returns it with the run's directory inside it.
pub fn run_text(source: &str, extra: &[&str]) -> (tempfile::TempDir, PathBuf) {
    let (tmp, o) = run_text_output(source, extra);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = tmp.path().join("out");
    (tmp, out)
}

/// As [`run_text`], whether or not the run succeeds: the directory (the run's is `out`
/// inside it) and what the run printed.
pub fn run_text_output(source: &str, extra: &[&str]) -> (tempfile::TempDir, std::process::Output) {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("scenario.toml");
    std::fs::write(&file, source).unwrap();
    let out = tmp.path().join("out");
    let mut args = vec!["run", file.to_str().unwrap(), "--quiet", "--out", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    let o = run(&args);
    (tmp, o)
}

/// `summary.csv` as (variant, metric) → mean, leaving out the metrics without a value.
pub fn summary(dir: &Path) -> Vec<(String, String, f64)> {
    let mut r = csv::Reader::from_path(dir.join("summary.csv")).unwrap();
    r.records()
        .filter_map(|rec| {
            let rec = rec.unwrap();
            (!rec[4].is_empty()).then(|| (rec[0].to_string(), rec[1].to_string(), rec[4].parse().unwrap()))
        })
        .collect()
}

pub fn metric(rows: &[(String, String, f64)], variant: &str, metric: &str) -> f64 {
    rows.iter()
        .find(|(v, m, _)| v == variant && m == metric)
        .unwrap_or_else(|| panic!("no metric {metric} for variant {variant}"))
        .2
}

/// `trace.csv` rows of one variant as maps from column name to value.
pub fn trace(dir: &Path, variant: &str) -> Vec<std::collections::BTreeMap<String, String>> {
    let mut r = csv::Reader::from_path(dir.join("trace.csv")).unwrap();
    let headers = r.headers().unwrap().clone();
    r.records()
        .map(|rec| headers.iter().zip(rec.unwrap().iter()).map(|(h, v)| (h.to_string(), v.to_string())).collect())
        .filter(|row: &std::collections::BTreeMap<String, String>| row["variant"] == variant)
        .collect()
}

/// Limits `cmd`'s address space to `bytes` (setrlimit RLIMIT_AS), so that an input that
/// would make it allocate without bound fails the test instead of taking the machine.
pub fn limit_memory(cmd: &mut Command, bytes: u64) -> &mut Command {
    use std::os::unix::process::CommandExt;
    // SAFETY: between fork and exec only setrlimit and errno are touched, both
    // async-signal-safe; nothing allocates.
    unsafe {
        cmd.pre_exec(move || {
            let limit = libc::rlimit { rlim_cur: bytes as libc::rlim_t, rlim_max: bytes as libc::rlim_t };
            if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        })
    };
    cmd
}

/// The packetdrill chapter's table and a test module agree: every test the table names
/// under `module::` is a test in `file`, and every test there but `helpers` is named.
pub fn chapter_names_exactly_the_replays(module: &str, file: &str, helpers: &[&str]) {
    let root = root();
    let chapter = std::fs::read_to_string(root.join("docs/packetdrill.md")).unwrap();
    let source = std::fs::read_to_string(root.join(file)).unwrap();
    let prefix = format!("`{module}::");
    let named: std::collections::BTreeSet<&str> =
        chapter.split(prefix.as_str()).skip(1).map(|rest| rest.split('`').next().unwrap()).collect();
    let tests: std::collections::BTreeSet<&str> = source
        .split("#[test]\n")
        .skip(1)
        // An `#[ignore = "…"]` line may stand between the attribute and the function.
        .map(|rest| rest.split("fn ").nth(1).unwrap().split('(').next().unwrap())
        .filter(|name| !helpers.contains(name))
        .collect();
    assert!(!tests.is_empty(), "no replaying test found in {file}");
    assert_eq!(named, tests, "docs/packetdrill.md and {file} disagree");
}

/// `time_s` as written ("1.020000000") in whole nanoseconds, so a comparison is exact.
pub fn nanos(time_s: &str) -> u64 {
    let (s, frac) = time_s.split_once('.').unwrap_or((time_s, "0"));
    let frac = format!("{frac:0<9}");
    s.parse::<u64>().unwrap() * 1_000_000_000 + frac[..9].parse::<u64>().unwrap()
}

/// One trace row: when (ns), what, and the segment it concerns (empty for the SYN).
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub ns: u64,
    pub event: String,
    pub segment: String,
}

/// Runs `scenario` (its whole text) and returns the traced connection's rows of its
/// variant `base`.
pub fn run_for_rows(scenario: &str) -> Vec<Row> {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("pd.toml");
    std::fs::write(&file, scenario).unwrap();
    let out = tmp.path().join("out");
    let o = run(&["run", file.to_str().unwrap(), "--quiet", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "scenario:\n{scenario}\nstdout: {}\nstderr: {}", text(&o.stdout), text(&o.stderr));
    trace(&out, "base")
        .into_iter()
        .map(|r| Row { ns: nanos(&r["time_s"]), event: r["event"].clone(), segment: r["segment"].clone() })
        .collect()
}
