//! The README and the user guide under `docs/`: every link leads somewhere, every chapter
//! is reachable from the guide's index, every repository path they name exists, and every
//! whole scenario they show passes `backoffsim check`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::common::{root, run, text};

/// The README and every page of the guide, with their text.
fn pages() -> Vec<(PathBuf, String)> {
    let mut paths = vec![root().join("README.md")];
    let mut guide: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("the guide lives in docs/")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    guide.sort();
    paths.extend(guide);
    // For those who change the code; held to the same links and paths as the guide.
    paths.push(root().join("ARCHITECTURE.md"));
    paths.into_iter().map(|p| (p.clone(), std::fs::read_to_string(&p).unwrap())).collect()
}

/// The text outside fenced code blocks, line by line with its number.
fn prose(text: &str) -> Vec<(usize, &str)> {
    let mut fenced = false;
    let mut lines = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            lines.push((i + 1, line));
        }
    }
    lines
}

/// The targets of the Markdown links and images on one line: `[text](target)`.
fn link_targets(line: &str) -> Vec<&str> {
    let mut targets = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let Some(end) = after.find(')') else { break };
        targets.push(&after[..end]);
        rest = &after[end..];
    }
    targets
}

/// The anchors GitHub gives a page's headings: lower case, punctuation dropped but `-` and
/// `_`, spaces to `-`.
fn anchors(text: &str) -> BTreeSet<String> {
    prose(text)
        .into_iter()
        .filter_map(|(_, l)| l.strip_prefix('#').map(|h| h.trim_start_matches('#').trim()))
        .map(|h| {
            h.to_lowercase()
                .chars()
                .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
                .map(|c| if c == ' ' { '-' } else { c })
                .collect()
        })
        .collect()
}

fn shown(path: &Path) -> String {
    path.strip_prefix(root()).unwrap_or(path).display().to_string()
}

#[test]
fn every_link_in_the_readme_and_the_guide_leads_to_a_file_and_heading_that_exist() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for (page, text) in pages() {
        for (n, line) in prose(&text) {
            for target in link_targets(line) {
                if target.starts_with("http://") || target.starts_with("https://") || target.starts_with("mailto:") {
                    continue;
                }
                checked += 1;
                let (file, anchor) = target.split_once('#').unwrap_or((target, ""));
                let dest = if file.is_empty() { page.clone() } else { page.parent().unwrap().join(file) };
                if !dest.exists() {
                    broken.push(format!("{}:{n}: `{target}`: no such file", shown(&page)));
                } else if !anchor.is_empty() && !anchors(&std::fs::read_to_string(&dest).unwrap()).contains(anchor) {
                    broken.push(format!("{}:{n}: `{target}`: no heading with that anchor", shown(&page)));
                }
            }
        }
    }
    assert!(checked >= 30, "only {checked} links found: is the link reader still right?");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn a_broken_link_or_anchor_would_be_caught() {
    assert_eq!(
        link_targets("see [a](docs/a.md#x-y) and ![p](../results/r.png)."),
        ["docs/a.md#x-y", "../results/r.png"]
    );
    let found = anchors("# Retry policies and `explain`\n```\n# not a heading\n```\n## A 100,000-client retry storm\n");
    assert_eq!(
        found,
        BTreeSet::from(["retry-policies-and-explain".to_string(), "a-100000-client-retry-storm".to_string()])
    );
}

#[test]
fn every_chapter_of_the_guide_is_linked_from_its_index_and_the_index_from_the_readme() {
    let index = std::fs::read_to_string(root().join("docs/README.md")).unwrap();
    let linked: BTreeSet<&str> = prose(&index).into_iter().flat_map(|(_, l)| link_targets(l)).collect();
    for (page, _) in pages().into_iter().skip(1) {
        let name = page.file_name().unwrap().to_str().unwrap();
        if name != "README.md" && name != "ARCHITECTURE.md" {
            assert!(linked.contains(name), "docs/{name} is not linked from docs/README.md");
        }
    }
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    assert!(readme.contains("](docs/README.md)"), "the README does not link the guide's index");
}

/// Repository paths written in backticks, e.g. `tests/integration/scenarios.rs`, must exist:
/// a renamed file would leave the guide pointing at nothing.
#[test]
fn every_repository_path_the_docs_name_exists() {
    const TOP: [&str; 11] = [
        "src/",
        "crates/",
        "tests/",
        "benches/",
        "scenarios/",
        "deploy/",
        "scripts/",
        "docs/",
        "examples/",
        "fuzz/",
        "LICENSES/",
    ];
    let mut missing = Vec::new();
    for (page, text) in pages() {
        for (n, line) in prose(&text) {
            for span in line.split('`').skip(1).step_by(2) {
                let path = span.split_whitespace().next().unwrap_or("");
                let literal = !path.contains(['<', '*', '…', '$', '{']);
                if literal && TOP.iter().any(|t| path.starts_with(t)) && !root().join(path).exists() {
                    missing.push(format!("{}:{n}: `{path}`", shown(&page)));
                }
            }
        }
    }
    assert!(missing.is_empty(), "paths named in the docs that do not exist:\n{}", missing.join("\n"));
}

/// A TOML block that starts with `name =` is a whole scenario: it must be one `check` accepts.
#[test]
fn every_whole_scenario_in_the_docs_passes_check() {
    let dir = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for (page, page_text) in pages() {
        for (i, block) in page_text.split("```toml\n").skip(1).enumerate() {
            let block = block.split("```").next().unwrap();
            if !block.starts_with("name =") {
                continue;
            }
            let file = dir.path().join(format!("{}-{i}.toml", page.file_stem().unwrap().to_string_lossy()));
            std::fs::write(&file, block).unwrap();
            let o = run(&["check", file.to_str().unwrap()]);
            assert!(o.status.success(), "{} block {i}:\n{}", shown(&page), text(&o.stderr));
            checked += 1;
        }
    }
    assert!(checked >= 2, "only {checked} whole scenarios found in the docs");
}
