//! The command line's own surface: shell completions, the man page and `run --json`.

use super::common::{ok, run, text};

const COMMANDS: [&str; 9] = ["run", "check", "plot", "compare", "rto", "presets", "explain", "completions", "man"];

#[test]
fn completions_cover_every_command_for_each_shell() {
    let bash = ok(&["completions", "bash"]);
    assert!(bash.contains("_backoffsim()") && bash.contains("complete -F _backoffsim"), "{bash:.300}");
    for c in COMMANDS {
        assert!(bash.contains(&format!("backoffsim__subcmd__{c}")), "bash completes no `{c}`");
    }
    assert!(bash.contains("--replications") && bash.contains("--attempt-time"));
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let script = ok(&["completions", shell]);
        assert!(script.contains("explain") && script.contains("attempt-time"), "{shell}");
    }
    let o = run(&["completions", "tcsh"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("possible values: bash"), "{}", text(&o.stderr));
}

#[test]
fn the_man_page_is_one_roff_page_with_every_command_and_the_exit_codes() {
    let page = ok(&["man"]);
    assert!(page.contains(".TH backoffsim 1"), "{page:.300}");
    for section in [".SH NAME", ".SH SYNOPSIS", ".SH DESCRIPTION", ".SH COMMANDS", ".SH \"EXIT STATUS\""] {
        assert!(page.contains(section), "{section} missing");
    }
    for c in ["run", "check", "plot", "compare", "rto replay", "presets", "explain", "completions", "man"] {
        assert!(page.contains(&format!(".SS \"backoffsim {c}\"")), "no section for `{c}`:\n{page}");
    }
    // Options with their help and defaults, roff-escaped.
    assert!(page.contains("\\-\\-attempt\\-time"), "options are listed");
    assert!(page.contains("[default: 10000]"), "defaults are shown");
    // One page: no references to per-command pages that nothing installs.
    assert!(!page.contains("backoffsim\\-run(1)"));
}

/// `run --json`: one `summary` line per row of summary.csv with the same values, the
/// sweep as an object in key order, then the `run` line naming the directory as given;
/// the same bytes twice, and nothing but JSON on stdout even with progress on.
#[test]
fn run_json_prints_the_summary_as_json_lines_then_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = tmp.path().join("sweep.toml");
    std::fs::write(
        &scenario,
        "name = \"json-sweep\"\ndescription = \"A sweep for --json.\"\nreplications = 2\nhorizon = \"1min\"\n\n[calls]\nclients = 50\n\
         attempt_time = \"100ms\"\nfail_time = \"50ms\"\nfail_with = \"503\"\noutage = \"10s\"\n\n\
         [calls.policy]\npreset = \"seed-loop\"\n\n[sweep]\n\"calls.outage\" = [\"1s\", \"20s\"]\n",
    )
    .unwrap();
    let run_json = || {
        let o = super::common::bin()
            .current_dir(tmp.path())
            .args(["run", "sweep.toml", "--json", "--out", "out dir"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o.stderr));
        o
    };
    let o = run_json();
    let stdout = text(&o.stdout);
    assert_eq!(stdout, text(&run_json().stdout), "the same scenario and seed give the same lines");
    assert!(text(&o.stderr).contains("wrote out dir"), "messages stay on stderr");
    let lines: Vec<serde_json::Value> =
        stdout.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect();
    let (last, summaries) = lines.split_last().unwrap();
    assert_eq!(last["type"], "run");
    assert_eq!(last["data"]["scenario"], "json-sweep");
    assert_eq!(last["data"]["seed"], 1);
    assert_eq!(last["data"]["replications"], 2);
    assert_eq!(last["data"]["out_dir"], "out dir");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(tmp.path().join("out dir/manifest.json")).unwrap()).unwrap();
    assert_eq!(last["data"]["files"], manifest["files"]);

    let mut csv = csv::Reader::from_path(tmp.path().join("out dir/summary.csv")).unwrap();
    let h = csv.headers().unwrap().clone();
    let col = |name: &str| h.iter().position(|c| c == name).unwrap();
    let (metric, unit, n, mean) = (col("metric"), col("unit"), col("replications"), col("mean"));
    let rows: Vec<csv::StringRecord> = csv.records().map(Result::unwrap).collect();
    assert_eq!(summaries.len(), rows.len());
    for ((line, row), raw) in summaries.iter().zip(&rows).zip(stdout.lines()) {
        assert_eq!(line["type"], "summary");
        let d = &line["data"];
        assert_eq!(d["variant"], row[0]);
        // The label as written; the CSV's `calls.outage_s` beside it is for sorting.
        assert_eq!(d["sweep"], serde_json::json!({ "calls.outage": &row[col("calls.outage")] }));
        assert_eq!((d["metric"].as_str().unwrap(), d["unit"].as_str().unwrap()), (&row[metric], &row[unit]));
        assert_eq!(d["replications"].as_u64().unwrap().to_string(), row[n]);
        // The very digits of the CSV (serde_json's reader may be an ulp off, so the text
        // of the line is compared): both are the shortest round-trip form.
        let mean = match &row[mean] {
            "" => "null".to_string(),
            m if m.contains(['.', 'e']) => m.to_string(),
            m => format!("{m}.0"),
        };
        assert!(raw.contains(&format!("\"mean\":{mean},")), "{raw} vs {mean}");
    }
    assert!(summaries.iter().any(|l| l["data"]["sweep"]["calls.outage"] == "20s"));
}
