//! The load plot end to end: a run whose model wrote `series.csv` (hand-made series put
//! through the run's own writer) draws `load.svg` and `load.png` with the report's
//! sentence per panel, and `plot load` and `compare` re-draw them byte for byte from the
//! files.

use super::common::{bin, text};
use super::load_data;

#[test]
fn a_run_with_series_draws_the_load_plot_and_plot_redraws_it_from_the_files() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    load_data::write(&run);
    let manifest = std::fs::read_to_string(run.join("manifest.json")).unwrap();
    for file in ["series.csv", "load.svg", "load.png"] {
        assert!(manifest.contains(&format!("\"{file}\"")), "the manifest lists {file}");
    }
    for file in ["load.svg", "load.png"] {
        let out = tmp.path().join(format!("redrawn-{file}"));
        let o = bin().args(["plot", "load", run.to_str().unwrap(), "-o", out.to_str().unwrap()]).output().unwrap();
        assert!(o.status.success(), "{}", text(&o.stderr));
        assert!(std::fs::read(run.join(file)).unwrap() == std::fs::read(&out).unwrap(), "`plot load` differs: {file}");
    }
    let copy = tmp.path().join("compared");
    let o = bin().args(["compare", run.to_str().unwrap(), "-o", copy.to_str().unwrap(), "--quiet"]).output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(std::fs::read(run.join("load.png")).unwrap() == std::fs::read(copy.join("load.png")).unwrap());

    let svg = std::fs::read_to_string(run.join("load.svg")).unwrap();
    for text in
        ["Offered load, goodput and retries over time", "attempts/s", "time (s)", "collapse", "recover", "server down"]
    {
        assert!(svg.contains(text), "load.svg lacks `{text}`");
    }
    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(report.contains("![Load over time](load.png)"), "{report}");
    assert!(report.contains("- **collapse**: Offered load peaks at"), "{report}");
    assert!(
        report.contains("goodput is 800/s before the server went down at 60 s and 0/s over the last 18 s"),
        "{report}"
    );
    assert!(report.contains("backoffsim plot load"), "{report}");
    let html = std::fs::read_to_string(run.join("report.html")).unwrap();
    assert!(html.contains("<li><b>recover</b>: Offered load peaks at"), "the HTML caption lists the panels");
}

#[test]
fn plot_load_on_a_run_without_series_says_which_file_is_missing() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    load_data::write(&run);
    std::fs::remove_file(run.join("series.csv")).unwrap();
    let out = tmp.path().join("x.png");
    let o = bin().args(["plot", "load", run.to_str().unwrap(), "-o", out.to_str().unwrap()]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("series.csv is missing"), "{}", text(&o.stderr));
}

#[test]
fn a_malformed_series_csv_is_refused_naming_its_line_and_column() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    load_data::write(&run);
    let csv = std::fs::read_to_string(run.join("series.csv")).unwrap();
    let mut lines: Vec<String> = csv.lines().map(str::to_string).collect();
    lines[3] = lines[3].replacen(",0,", ",zero,", 1);
    std::fs::write(run.join("series.csv"), lines.join("\n") + "\n").unwrap();
    let out = tmp.path().join("x.svg");
    let o = bin().args(["plot", "load", run.to_str().unwrap(), "-o", out.to_str().unwrap()]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(
        err.contains("series.csv") && err.contains("line 4, column `replication`: `zero` is not a whole number"),
        "{err}"
    );
}
