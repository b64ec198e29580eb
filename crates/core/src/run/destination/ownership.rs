//! What an output directory may replace. A command's results replace their directory
//! whole, so backoffsim writes only into a place that is new, empty, or holds nothing
//! but what backoffsim itself wrote there before. Each kind of directory it writes
//! carries its own inventory:
//!
//! - results (`run`, `merge`): `manifest.json`, whose `files` lists every file;
//! - a shard's part (`run --shard`): `part.json`, `scenario.toml` and `results.bin`;
//! - a comparison (`compare`) or a capture's replay (`rto capture --out`): a `report.md`
//!   signed with [`report_signature`]'s line, `report.html`, the plots the report shows
//!   (`NAME.png`, drawn as `NAME.svg` too) and the CSV files it links
//!   (`[NAME.csv](NAME.csv)`). An unsigned `report.md` is a user's, and so is all it links.
//!
//! A directory with anything else in it is refused, as are `.`, an ancestor of the
//! working directory and a symbolic link, before any work is done.

use std::collections::BTreeSet;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::ClaimError;

/// The line that marks a `report.md` as written by `backoffsim COMMAND`: without it a
/// report is somebody's notes, and the figures and tables it links are theirs too.
pub fn report_signature(command: &str) -> String {
    format!("Made by `backoffsim {command}` {}.", env!("CARGO_PKG_VERSION"))
}

/// Whether `md` carries a [`report_signature`] line, of any command and version.
fn signed(md: &str) -> bool {
    md.lines().any(|line| {
        line.strip_prefix("Made by `backoffsim ")
            .and_then(|rest| rest.strip_suffix('.'))
            .and_then(|rest| rest.split_once("` "))
            .is_some_and(|(command, version)| {
                !command.is_empty()
                    && command.chars().all(|c| c.is_ascii_lowercase() || c == ' ' || c == '-')
                    && !version.is_empty()
                    && !version.contains(char::is_whitespace)
            })
    })
}

/// Checks that `target` may be written and returns it as it will be used. `flag` names
/// the option the user gave it with, for the messages.
pub fn check(target: &Path, flag: &str) -> Result<PathBuf, ClaimError> {
    let shown = target.display();
    let refuse = |why: String| Err(ClaimError(format!("{flag} {shown}: {why}")));
    let meta = match fs::symlink_metadata(target) {
        Ok(meta) => meta,
        // Not there, or a file stands on the way (ENOTDIR): new_place says which.
        Err(e) if matches!(e.kind(), io::ErrorKind::NotFound | io::ErrorKind::NotADirectory) => {
            return new_place(target, flag);
        }
        Err(e) => return refuse(format!("cannot be used: {e}")),
    };
    if meta.file_type().is_symlink() {
        return refuse(
            "is a symbolic link: results replace their directory whole, and backoffsim neither follows a link \
             to replace what it points at nor replaces the link; name the directory itself, or a new place"
                .into(),
        );
    }
    if !meta.is_dir() {
        return refuse(format!(
            "{shown} is a file, not a directory: results are a directory of files; name another place"
        ));
    }
    let canonical = fs::canonicalize(target).map_err(|e| ClaimError(format!("{flag} {shown}: {e}")))?;
    if let Ok(cwd) = std::env::current_dir().and_then(fs::canonicalize)
        && cwd.starts_with(&canonical)
    {
        let what = if cwd == canonical { "the working directory" } else { "an ancestor of the working directory" };
        return refuse(format!(
            "is {what}: results replace their directory whole, so they need a directory of their own, e.g. \
             {flag} results/NAME"
        ));
    }
    if target.file_name().is_none() {
        return refuse("does not end in a directory's name: name the directory itself".into());
    }
    let foreign = foreign(target).map_err(|e| ClaimError(format!("{flag} {shown}: cannot be read: {e}")))?;
    if !foreign.is_empty() {
        let mut listed: Vec<String> = foreign.iter().take(3).map(|n| format!("`{}`", n.escape_debug())).collect();
        if foreign.len() > 3 {
            listed.push(format!("{} more", foreign.len() - 3));
        }
        return refuse(format!(
            "holds {} that backoffsim did not write: results replace their directory whole, so backoffsim writes \
             only to a new or empty directory or to one it wrote itself. Move {} elsewhere, or give another {flag}",
            crate::human::and_list(&listed),
            if foreign.len() == 1 { "it" } else { "them" }
        ));
    }
    Ok(target.components().collect())
}

/// A place that does not exist yet: refused only when a file stands where a directory
/// on its way must be.
fn new_place(target: &Path, flag: &str) -> Result<PathBuf, ClaimError> {
    if let Some(file) = target.ancestors().skip(1).find(|p| !p.as_os_str().is_empty() && p.is_file()) {
        return Err(ClaimError(format!(
            "{flag} {}: {} is a file, not a directory: results are a directory of files; name another place",
            target.display(),
            file.display()
        )));
    }
    if target.file_name().is_none() {
        return Err(ClaimError(format!(
            "{flag} {}: does not end in a directory's name: name the directory itself",
            target.display()
        )));
    }
    Ok(target.components().collect())
}

/// The entries of `dir` that its inventory does not account for, sorted; empty for an
/// empty directory or one wholly backoffsim's.
fn foreign(dir: &Path) -> io::Result<Vec<String>> {
    let mut entries = BTreeSet::new();
    let mut subdirs = BTreeSet::new();
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type()?.is_dir() {
            subdirs.insert(name.clone());
        }
        entries.insert(name);
    }
    if entries.is_empty() {
        return Ok(Vec::new());
    }
    let ours = inventory(dir, &entries);
    // backoffsim writes no subdirectories: one is never its own, whatever it is called.
    Ok(entries.into_iter().filter(|e| subdirs.contains(e) || !ours.contains(e)).collect())
}

/// The files `dir` says backoffsim wrote, by the inventory of the kind it is.
fn inventory(dir: &Path, entries: &BTreeSet<String>) -> BTreeSet<String> {
    let read_json = |name: &str| -> Option<serde_json::Value> {
        let bytes = fs::read(dir.join(name)).ok()?;
        serde_json::from_slice(&bytes).ok()
    };
    if entries.contains("manifest.json")
        && let Some(m) = read_json("manifest.json")
        && m.get("backoffsim_version").is_some_and(|v| v.is_string())
        && let Some(files) = m.get("files").and_then(|f| f.as_array())
    {
        let mut ours: BTreeSet<String> = files.iter().filter_map(|f| f.as_str()).map(String::from).collect();
        ours.insert("manifest.json".into());
        return ours;
    }
    if entries.contains("part.json")
        && let Some(m) = read_json("part.json")
        && m.get("part_format").is_some_and(|v| v.is_u64())
    {
        return ["part.json", "scenario.toml", "results.bin"].into_iter().map(String::from).collect();
    }
    if entries.contains("report.md")
        && !entries.contains("manifest.json")
        && let Ok(md) = fs::read_to_string(dir.join("report.md"))
        && signed(&md)
    {
        let mut ours: BTreeSet<String> = ["report.md", "report.html"].into_iter().map(String::from).collect();
        for stem in linked(&md, ".png") {
            ours.insert(format!("{stem}.png"));
            ours.insert(format!("{stem}.svg"));
        }
        for stem in linked(&md, ".csv") {
            ours.insert(format!("{stem}.csv"));
        }
        return ours;
    }
    BTreeSet::new()
}

/// The files of one kind a report shows or links, as the stems of its `](NAME.png)` or
/// `](NAME.csv)` targets: plain names only, never a path out of the directory.
fn linked<'a>(md: &'a str, suffix: &str) -> Vec<&'a str> {
    md.match_indices("](")
        .filter_map(|(i, _)| {
            let rest = &md[i + 2..];
            let stem = rest[..rest.find(')')?].strip_suffix(suffix)?;
            stem.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_').then_some(stem)
        })
        .filter(|s| !s.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir_with(files: &[(&str, &str)]) -> tempfile::TempDir {
        let tmp = tempfile::tempdir().unwrap();
        for (name, text) in files {
            fs::write(tmp.path().join(name), text).unwrap();
        }
        tmp
    }

    const MANIFEST: &str = r#"{"backoffsim_version": "0.1.0", "files": ["manifest.json", "summary.csv"]}"#;

    #[test]
    fn results_are_theirs_while_every_file_is_in_the_manifest() {
        let tmp = dir_with(&[("manifest.json", MANIFEST), ("summary.csv", "")]);
        assert!(foreign(tmp.path()).unwrap().is_empty());
        fs::write(tmp.path().join("thesis.txt"), "x").unwrap();
        assert_eq!(foreign(tmp.path()).unwrap(), ["thesis.txt"]);
    }

    #[test]
    fn a_manifest_not_of_backoffsim_claims_nothing() {
        let tmp = dir_with(&[("manifest.json", r#"{"files": ["manifest.json", "a"]}"#), ("a", "")]);
        assert_eq!(foreign(tmp.path()).unwrap(), ["a", "manifest.json"]);
        let tmp = dir_with(&[("manifest.json", "[]")]);
        assert_eq!(foreign(tmp.path()).unwrap(), ["manifest.json"]);
    }

    #[test]
    fn a_part_is_its_three_files() {
        let tmp = dir_with(&[("part.json", r#"{"part_format": 1}"#), ("scenario.toml", ""), ("results.bin", "")]);
        assert!(foreign(tmp.path()).unwrap().is_empty());
        fs::write(tmp.path().join("notes"), "x").unwrap();
        assert_eq!(foreign(tmp.path()).unwrap(), ["notes"]);
    }

    #[test]
    fn a_comparison_is_its_report_and_the_plots_it_shows() {
        let md = "# Report\n\n![RTO](rto.png)\n\n![Load over time](load.png)\n\nSee [the docs](https://x/y.png).\n\n\
                  Made by `backoffsim compare` 0.1.0.\n";
        let tmp = dir_with(&[
            ("report.md", md),
            ("report.html", ""),
            ("rto.png", ""),
            ("rto.svg", ""),
            ("load.png", ""),
            ("load.svg", ""),
        ]);
        assert!(foreign(tmp.path()).unwrap().is_empty());
        fs::write(tmp.path().join("diagram.png"), "mine").unwrap();
        assert_eq!(foreign(tmp.path()).unwrap(), ["diagram.png"]);
    }

    #[test]
    fn a_captures_replay_is_its_report_plots_and_the_csv_files_it_links() {
        let md = "![RTO trace](rto.png)\n- [trace.csv](trace.csv)\n- [stalls.csv](stalls.csv)\n\
                  - [elsewhere](../thesis.csv)\n\nMade by `backoffsim rto capture` 0.1.0.\n";
        let tmp =
            dir_with(&[("report.md", md), ("rto.png", ""), ("rto.svg", ""), ("trace.csv", ""), ("stalls.csv", "")]);
        assert!(foreign(tmp.path()).unwrap().is_empty());
        fs::write(tmp.path().join("notes.csv"), "mine").unwrap();
        assert_eq!(foreign(tmp.path()).unwrap(), ["notes.csv"]);
    }

    #[test]
    fn a_report_without_the_signature_is_a_users_and_so_is_all_it_links() {
        // A postmortem folder: its own report.md showing its own figure and data.
        let md = "# Postmortem\n![latency](latency.png)\n[data](data.csv)\n";
        let tmp = dir_with(&[("report.md", md), ("latency.png", "x"), ("data.csv", "a,b")]);
        assert_eq!(foreign(tmp.path()).unwrap(), ["data.csv", "latency.png", "report.md"]);
        // Nor is a signature's look-alike inside a sentence, or one with no version, enough.
        for md in ["We used Made by `backoffsim compare` 0.1.0.\n", "Made by `backoffsim compare` .\n"] {
            let tmp = dir_with(&[("report.md", md)]);
            assert_eq!(foreign(tmp.path()).unwrap(), ["report.md"], "{md}");
        }
        let tmp = dir_with(&[("report.md", &format!("# R\n\n{}\n", report_signature("compare")))]);
        assert!(foreign(tmp.path()).unwrap().is_empty());
    }

    #[test]
    fn a_subdirectory_is_never_backoffsims() {
        let tmp = dir_with(&[("manifest.json", MANIFEST)]);
        fs::create_dir(tmp.path().join("summary.csv")).unwrap();
        assert_eq!(foreign(tmp.path()).unwrap(), ["summary.csv"]);
    }

    #[test]
    fn the_working_directory_and_links_are_refused_and_new_or_empty_places_taken() {
        let tmp = tempfile::tempdir().unwrap();
        let empty = tmp.path().join("empty");
        fs::create_dir(&empty).unwrap();
        assert_eq!(check(&empty, "--out").unwrap(), empty);
        let new = tmp.path().join("a/b/./c");
        assert_eq!(check(&new, "--out").unwrap(), tmp.path().join("a/b/c"));
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&empty, &link).unwrap();
        assert!(check(&link, "--out").unwrap_err().0.contains("symbolic link"));
        let dangling = tmp.path().join("dangling");
        std::os::unix::fs::symlink(tmp.path().join("nowhere"), &dangling).unwrap();
        assert!(check(&dangling, "--out").unwrap_err().0.contains("symbolic link"));
        let root = check(Path::new("/"), "--out").unwrap_err().0;
        assert!(root.contains("an ancestor of the working directory"), "{root}");
    }
}
