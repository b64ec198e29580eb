//! The user guide's list of metrics (docs/outputs.md) and `backoffsim metrics`, which prints the catalogue the
//! plots and reports use, name the same metrics for every model.

use std::collections::BTreeSet;

use super::common::{root, run, text};

/// The ids `backoffsim metrics --model MODEL` lists (families end in `K`).
fn catalogue(model: &str) -> BTreeSet<String> {
    let o = run(&["metrics", "--model", model]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let mut lines = out.lines();
    assert!(lines.next().is_some_and(|h| h.starts_with("ID ")), "{out}");
    lines.map(|l| l.split_whitespace().next().unwrap().to_string()).collect()
}

/// The ids in backticks in the guide's sub-bullet of `summary.csv` that begins
/// `  - <label>` in docs/outputs.md.
fn guide(label: &str) -> BTreeSet<String> {
    let section = std::fs::read_to_string(root().join("docs/outputs.md")).unwrap();
    let mut lines = section.lines().skip_while(|l| !l.starts_with(&format!("  - {label}")));
    let first = lines.next().unwrap_or_else(|| panic!("no `  - {label}` bullet under Output files"));
    let bullet: Vec<&str> = [first].into_iter().chain(lines.take_while(|l| l.starts_with("    "))).collect();
    bullet.join(" ").split('`').skip(1).step_by(2).map(str::to_string).collect()
}

#[test]
fn the_guide_lists_exactly_the_catalogues_metrics_of_each_model() {
    for (model, label) in [("tcp", "TCP"), ("grpc", "gRPC"), ("calls", "calls"), ("occ", "OCC"), ("jobs", "jobs")] {
        let (listed, known) = (guide(label), catalogue(model));
        assert!(known.len() >= 5, "{model}: {known:?}");
        let unknown: Vec<&String> = listed.difference(&known).collect();
        assert!(
            unknown.is_empty(),
            "docs/outputs.md lists {unknown:?} for {model}, which `backoffsim metrics` does not know"
        );
        let unlisted: Vec<&String> = known.difference(&listed).collect();
        assert!(unlisted.is_empty(), "docs/outputs.md's {label} metrics lack {unlisted:?}");
    }
}

/// docs/metrics.md is an introduction followed by `backoffsim metrics --markdown`: a
/// metric added, renamed or re-documented in its world's entries changes the page.
#[test]
fn the_metric_reference_is_what_metrics_markdown_prints() {
    let o = run(&["metrics", "--markdown"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let printed = text(&o.stdout);
    assert!(printed.starts_with("## tcp\n") && printed.contains("\n## jobs\n"), "{printed}");
    let page = std::fs::read_to_string(root().join("docs/metrics.md")).unwrap();
    let generated = &page[page.find("\n## ").expect("docs/metrics.md has no model section") + 1..];
    assert!(
        generated == printed,
        "docs/metrics.md differs from `backoffsim metrics --markdown`: replace everything from its first \
         `## ` heading by that command's output"
    );
}

#[test]
fn metrics_refuses_an_unknown_model_with_exit_2() {
    let o = run(&["metrics", "--model", "udp"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("unknown model `udp` (known: `tcp`, `grpc`, `occ`, `calls`, `jobs`)"),
        "{}",
        text(&o.stderr)
    );
    let o = run(&["metrics", "--model", "tpc"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("unknown model `tpc`; did you mean `tcp`?"), "{}", text(&o.stderr));
}
