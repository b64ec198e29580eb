//! A scenario whose file asks for what its horizon cannot show: warnings before the
//! run, and metrics without a value kept, empty, with the reason.

use super::common::{run, text};

fn write(dir: &std::path::Path, source: &str) -> String {
    let file = dir.join("scenario.toml");
    std::fs::write(&file, source).unwrap();
    file.to_str().unwrap().to_string()
}

const LATE_RESTART: &str = "name = \"late\"\nhorizon = \"5s\"\n\n[grpc]\nclients = 10\n\n\
                            [[server.restart]]\nat = \"10s\"\ndown = \"1s\"\n";

#[test]
fn check_and_run_warn_at_the_key_of_a_restart_after_the_horizon_and_still_succeed() {
    let tmp = tempfile::tempdir().unwrap();
    let file = write(tmp.path(), LATE_RESTART);
    let expected = format!(
        "backoffsim: warning: {file}:8:6: key `server.restart[0].at`: 10s is at or after the horizon (5s): it \
         never happens\n"
    );
    let check = run(&["check", &file]);
    assert!(check.status.success(), "{}", text(&check.stderr));
    assert_eq!(text(&check.stderr), expected);
    let out = tmp.path().join("out");
    // Warnings are not progress: `--quiet` keeps them.
    let o = run(&["run", &file, "--quiet", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(text(&o.stderr), expected);
}

#[test]
fn a_warning_in_one_variant_names_it() {
    let tmp = tempfile::tempdir().unwrap();
    let source = "name = \"v\"\nhorizon = \"5s\"\n[grpc]\nclients = 2\n[[server.restart]]\nat = \"10s\"\ndown = \"1s\"\n\
                  [[variant]]\nname = \"late\"\n[[variant]]\nname = \"early\"\nserver.restart = [{ at = \"1s\", down = \"1s\" }]\n";
    let o = run(&["check", &write(tmp.path(), source)]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(
        err.contains(
            "key `server.restart[0].at`: 10s is at or after the horizon (5s): it never happens (in variant `late`)"
        ),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// The gRPC reconnect times (`quantile_of` in the gRPC world) count only channels that
/// reconnected: with the server down past the horizon none did.
#[test]
fn a_seventy_second_outage_in_a_minute_keeps_the_reconnect_rows_empty_and_says_why() {
    let tmp = tempfile::tempdir().unwrap();
    let source = "name = \"long-outage\"\nhorizon = \"1min\"\n[grpc]\nclients = 20\n\
                  [[server.restart]]\nat = \"5s\"\ndown = \"70s\"\n";
    let file = write(tmp.path(), source);
    let out = tmp.path().join("out");
    let o = run(&["run", &file, "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let (stdout, stderr) = (text(&o.stdout), text(&o.stderr));
    let why = "too few channels reconnected before the horizon for this share (or none did)";
    for m in ["reconnect_p50", "reconnect_p99", "reconnect_all"] {
        let row =
            stdout.lines().find(|l| l.split_whitespace().nth(1) == Some(m)).unwrap_or_else(|| panic!("{m}:\n{stdout}"));
        assert_eq!(row.split_whitespace().collect::<Vec<_>>(), ["base", m, "—", "s"], "{row}");
        assert!(stderr.contains(&format!("backoffsim: note: `{m}` has no value: {why}")), "{stderr}");
    }
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert!(summary.contains("\nbase,reconnect_p50,s,0,,,,\n"), "{summary}");
    assert!(summary.contains("\nbase,reconnect_after_up_all,s,0,,,,\n"), "{summary}");
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("| Reconnect time, median (reconnect_p50) | s | lower | — |"), "{md}");
    assert!(md.contains(&format!("`reconnect_p50` has no value for base (—): {why}.")), "{md}");
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("reconnect_p50") && html.contains(why), "the HTML report shows it too");
}

#[test]
fn a_scenario_without_problems_warns_of_nothing_and_quiet_keeps_stderr_empty() {
    let tmp = tempfile::tempdir().unwrap();
    let source = "name = \"fine\"\nhorizon = \"1min\"\n[grpc]\nclients = 20\n\
                  [[server.restart]]\nat = \"5s\"\ndown = \"10s\"\n";
    let file = write(tmp.path(), source);
    let check = run(&["check", &file]);
    assert!(check.status.success());
    assert_eq!(text(&check.stderr), "");
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    let quiet = run(&["run", &file, "--quiet", "--out", a.to_str().unwrap()]);
    assert!(quiet.status.success());
    assert_eq!(text(&quiet.stderr), "", "--quiet: no progress, no message");
    let loud = run(&["run", &file, "--out", b.to_str().unwrap()]);
    assert!(loud.status.success());
    assert!(!text(&loud.stderr).contains("warning") && !text(&loud.stderr).contains("note"), "{}", text(&loud.stderr));
    assert_eq!(quiet.stdout, loud.stdout, "--quiet changes stderr only");
}
