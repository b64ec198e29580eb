//! The core's layers go one way: a module may use its own layer and those below it,
//! never one above. This test reads every `crate::` path in the core's sources (test code
//! aside: a world's tests may load a scenario to build their input) and fails on any
//! arrow up, naming the file, the line and the two layers. The crates above the core
//! (report, command line) are kept out of it by the crate boundary itself.

use std::fs;
use std::path::{Path, PathBuf};

/// Bottom to top; a module's layer is its top-level module's.
const LAYERS: &[(&str, &[&str])] = &[
    ("engine", &["engine", "human", "suggest", "input"]),
    ("models", &["model"]),
    ("metrics", &["metrics"]),
    ("worlds", &["worlds", "explain", "replay"]),
    ("scenario", &["scenario"]),
    ("run", &["run"]),
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|(_, modules)| modules.contains(&module))
}

/// One use of a module of a higher layer.
#[derive(Debug, PartialEq)]
struct Arrow {
    line: usize,
    from: &'static str,
    to: &'static str,
    path: String,
}

/// The arrows up in the source `text` of a file of layer `own`.
fn arrows_up(text: &str, own: usize) -> Vec<Arrow> {
    let mut arrows = Vec::new();
    for (i, line) in code_lines(text) {
        for module in crate_modules(line) {
            match layer_of(&module) {
                Some(l) if l > own => arrows.push(Arrow {
                    line: i + 1,
                    from: LAYERS[own].0,
                    to: LAYERS[l].0,
                    path: format!("crate::{module}"),
                }),
                _ => {}
            }
        }
    }
    arrows
}

/// The lines of `text` that are code outside tests, numbered from 0: comments are cut,
/// and the item after a `#[cfg(test)]` is skipped (to its closing brace at its own
/// indentation, or its line when it ends with `;`).
fn code_lines(text: &str) -> Vec<(usize, &str)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if line.trim() == "#[cfg(test)]" {
            let mut j = i + 1;
            while j < lines.len() && lines[j].trim_start().starts_with("#[") {
                j += 1;
            }
            if j < lines.len() && lines[j].trim_end().ends_with('{') {
                let indent = &lines[j][..lines[j].len() - lines[j].trim_start().len()];
                let close = format!("{indent}}}");
                while j < lines.len() && lines[j].trim_end() != close {
                    j += 1;
                }
            }
            i = j + 1;
            continue;
        }
        let code = line.split("//").next().unwrap_or("");
        out.push((i, code));
        i += 1;
    }
    out
}

/// The top-level modules a line names through `crate::` (`crate::a::b`, `crate::{a, b::c}`).
fn crate_modules(line: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("crate::") {
        let before = rest[..at].chars().last();
        rest = &rest[at + "crate::".len()..];
        // `backoffsim_core::` and the like are other crates.
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            let inner = group.split('}').next().unwrap_or("");
            found.extend(inner.split(',').map(|p| ident(p.trim())).filter(|m| !m.is_empty()));
        } else {
            found.push(ident(rest));
        }
    }
    found
}

fn ident(s: &str) -> String {
    s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect()
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> =
        fs::read_dir(dir).expect("a readable source directory").map(|e| e.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// A file's layer: that of the first component of its path under `src/`.
fn file_layer(src: &Path, file: &Path) -> Option<usize> {
    let relative = file.strip_prefix(src).ok()?;
    let first = relative.components().next()?.as_os_str().to_str()?;
    layer_of(first.trim_end_matches(".rs"))
}

fn is_test_file(file: &Path) -> bool {
    file.file_name().is_some_and(|n| n == "tests.rs")
        || file.components().any(|c| c.as_os_str() == "tests")
        || declared_for_tests(file)
}

/// Whether the module that `file` holds is declared `#[cfg(test)] mod name;` in its
/// parent (`dir/mod.rs` or `dir.rs` beside `dir/`): a test-only helper module.
fn declared_for_tests(file: &Path) -> bool {
    let (name, dir) = if file.file_name().is_some_and(|n| n == "mod.rs") {
        let dir = file.parent().unwrap();
        (dir.file_name().unwrap().to_string_lossy().into_owned(), dir.parent().unwrap().to_path_buf())
    } else {
        (file.file_stem().unwrap().to_string_lossy().into_owned(), file.parent().unwrap().to_path_buf())
    };
    let parents = [dir.join("mod.rs"), dir.with_extension("rs"), dir.join("lib.rs")];
    let declaration = format!("mod {name};");
    parents.iter().filter_map(|p| fs::read_to_string(p).ok()).any(|text| {
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        lines
            .windows(2)
            .any(|w| w[0] == "#[cfg(test)]" && (w[1] == declaration || w[1] == format!("pub {declaration}")))
    })
}

#[test]
fn every_module_of_the_core_uses_only_its_layer_and_those_below() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut problems = Vec::new();
    let mut checked = 0;
    for file in files.iter().filter(|f| !is_test_file(f)) {
        let name = file.strip_prefix(&src).unwrap().display().to_string();
        if name == "lib.rs" {
            continue;
        }
        let own = file_layer(&src, file)
            .unwrap_or_else(|| panic!("{name}: a top-level module of no layer; add it to LAYERS"));
        checked += 1;
        for a in arrows_up(&fs::read_to_string(file).unwrap(), own) {
            problems.push(format!("src/{name}:{}: layer `{}` uses `{}` of layer `{}`", a.line, a.from, a.path, a.to));
        }
    }
    assert!(checked > 100, "only {checked} files read: is the source tree where the test looks?");
    assert!(problems.is_empty(), "arrows up:\n{}", problems.join("\n"));
}

#[test]
fn an_arrow_up_is_found_in_a_use_a_group_and_a_path_but_not_in_comments_or_tests() {
    let model = layer_of("model").unwrap();
    let text = "\
use crate::engine::time::SimDuration;
use crate::{metrics::MetricValue, scenario::Scenario};
// crate::run in a comment is no arrow
fn f() -> crate::run::RunOptions { todo!() }
use backoffsim_core::scenario::Scenario;

#[cfg(test)]
mod tests {
    use crate::scenario::load_str;
}
";
    let arrows = arrows_up(text, model);
    let found: Vec<(usize, &str, &str)> = arrows.iter().map(|a| (a.line, a.path.as_str(), a.to)).collect();
    assert_eq!(found, [(2, "crate::metrics", "metrics"), (2, "crate::scenario", "scenario"), (4, "crate::run", "run")]);
}

#[test]
fn every_top_level_module_of_the_core_has_a_layer() {
    let lib = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")).unwrap();
    for line in lib.lines().filter_map(|l| l.strip_prefix("pub mod ")) {
        let module = line.trim_end_matches(';');
        assert!(layer_of(module).is_some(), "`{module}` is in no layer");
    }
}

#[test]
fn a_module_declared_under_cfg_test_is_test_code_and_others_are_not() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    assert!(is_test_file(&src.join("worlds/tcp/run_text.rs")));
    assert!(is_test_file(&src.join("model/tcp/drive.rs")));
    assert!(!is_test_file(&src.join("worlds/tcp/world.rs")));
    assert!(!is_test_file(&src.join("model/tcp/persist.rs")));
}
