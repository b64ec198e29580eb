//! The loader as `check` drives it, fed the shipped scenarios broken in the ways a hand
//! edit breaks them (a range deleted, a line doubled or moved, a hostile value, stray
//! bytes) and fed arbitrary text: it never panics, and every error names the file and,
//! when it has a place, its line and column. The coverage-guided fuzz targets in `fuzz/`
//! go deeper; these keep the same promise in every `cargo test`.

use std::sync::LazyLock;

use backoffsim::scenario::{ScenarioError, load_str, sweep};
use proptest::prelude::*;

use super::common::root;

const LABEL: &str = "mutated.toml";

/// Every shipped scenario's text: the examples and the benchmarks' large ones.
static SHIPPED: LazyLock<Vec<String>> = LazyLock::new(|| {
    let mut texts = Vec::new();
    for dir in ["scenarios", "benches/scenarios"] {
        let mut paths: Vec<_> = std::fs::read_dir(root().join(dir)).unwrap().map(|e| e.unwrap().path()).collect();
        paths.retain(|p| p.extension().is_some_and(|e| e == "toml"));
        paths.sort();
        texts.extend(paths.iter().map(|p| std::fs::read_to_string(p).unwrap()));
    }
    assert!(texts.len() >= 10, "the shipped scenarios are found");
    texts
});

/// Values a typo, a unit slip or a hostile file puts after `=`.
const HOSTILE: &[&str] = &[
    "-1",
    "0",
    "\"-1s\"",
    "\"nan\"",
    "nan",
    "\"inf\"",
    "inf",
    "-inf",
    "1e308",
    "\"1e30s\"",
    "18446744073709551615",
    "-9223372036854775808",
    "4294967296",
    "\"\"",
    "\"0%\"",
    "\"200%\"",
    "\"-5%\"",
    "[]",
    "{}",
    "[[]]",
    "{ a = 1 }",
    "true",
    "0.0000000001",
    "\"1ns\"",
    "\"100000y\"",
    "1979-05-27T07:32:00Z",
];

#[derive(Clone, Debug)]
enum Mutation {
    /// Delete bytes `[at, at + len)` (positions are taken modulo the text's length).
    Delete {
        at: usize,
        len: usize,
    },
    DuplicateLine(usize),
    SwapLines(usize, usize),
    /// Replace what follows the `=` of the n-th assignment with a hostile value.
    HostileValue {
        line: usize,
        value: usize,
    },
    /// A very long value: strings, numbers and arrays of it.
    LongValue {
        line: usize,
        kind: u8,
        len: usize,
    },
    InsertBytes {
        at: usize,
        bytes: Vec<u8>,
    },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 1..64usize).prop_map(|(at, len)| Mutation::Delete { at, len }),
        any::<usize>().prop_map(Mutation::DuplicateLine),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::SwapLines(a, b)),
        (any::<usize>(), any::<usize>()).prop_map(|(line, value)| Mutation::HostileValue { line, value }),
        (any::<usize>(), 0..3u8, 1_000..20_000usize).prop_map(|(line, kind, len)| Mutation::LongValue {
            line,
            kind,
            len
        }),
        (any::<usize>(), prop::collection::vec(any::<u8>(), 1..8))
            .prop_map(|(at, bytes)| Mutation::InsertBytes { at, bytes }),
    ]
}

/// Byte positions are moved back to a character boundary: the loader takes `&str`, and
/// `InsertBytes` is read lossily as a file of bytes would be refused otherwise.
fn floor_char(s: &str, at: usize) -> usize {
    let mut at = at.min(s.len());
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn apply(text: &str, m: &Mutation) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let n = lines.len().max(1);
    let assignments: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].contains('=')).collect();
    let set_value = |lines: &mut Vec<String>, pick: usize, value: &str| {
        if let Some(&i) = assignments.get(pick % assignments.len().max(1)) {
            let eq = lines[i].find('=').unwrap();
            lines[i] = format!("{}= {value}", &lines[i][..eq]);
        }
    };
    match m {
        Mutation::Delete { at, len } => {
            let start = floor_char(text, at % (text.len() + 1));
            let end = floor_char(text, start + len).max(start);
            return format!("{}{}", &text[..start], &text[end..]);
        }
        Mutation::InsertBytes { at, bytes } => {
            let at = floor_char(text, at % (text.len() + 1));
            return format!("{}{}{}", &text[..at], String::from_utf8_lossy(bytes), &text[at..]);
        }
        Mutation::DuplicateLine(i) if !lines.is_empty() => {
            let line = lines[i % n].clone();
            lines.insert(i % n, line);
        }
        Mutation::SwapLines(a, b) if !lines.is_empty() => lines.swap(a % n, b % n),
        Mutation::HostileValue { line, value } => set_value(&mut lines, *line, HOSTILE[value % HOSTILE.len()]),
        Mutation::LongValue { line, kind, len } => {
            let value = match kind {
                0 => format!("\"{}\"", "x".repeat(*len)),
                1 => "9".repeat(*len),
                _ => format!("[{}]", vec!["1"; *len].join(", ")),
            };
            set_value(&mut lines, *line, &value);
        }
        _ => {}
    }
    lines.join("\n") + "\n"
}

/// What `check` promises of a failure: each problem names the file, and one with a place
/// names it as `file:line:column` within the text.
fn assert_names_its_place(source: &str, err: &ScenarioError) {
    let shown = err.to_string();
    assert!(!err.diagnostics.is_empty(), "an error with no problem in it");
    assert!(shown.starts_with(LABEL), "the error does not start with the file's name:\n{shown}");
    let lines = source.split('\n').count();
    for (i, d) in err.diagnostics.iter().enumerate() {
        assert_eq!(d.file, LABEL);
        assert!(!d.message.is_empty(), "a problem without a message: {d:?}");
        if d.line > 0 {
            assert!(d.line <= lines && d.column >= 1, "{}:{} is outside the text ({lines} lines)", d.line, d.column);
            // The first twenty are shown in full (see `ScenarioError`'s Display).
            if i < 20 {
                let place = format!("{LABEL}:{}:{}", d.line, d.column);
                assert!(shown.contains(&place), "`{place}` is not in the message:\n{shown}");
            }
        }
    }
}

fn check(source: &str) {
    match load_str(LABEL, source) {
        // What `check` computes for its summary line.
        Ok(scenario) => assert!(scenario.replications > 0 && scenario.jobs() >= u64::from(scenario.replications)),
        Err(err) => assert_names_its_place(source, &err),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn a_mutated_shipped_scenario_is_loaded_or_refused_with_its_place_never_a_panic(
        pick in any::<usize>(),
        mutations in prop::collection::vec(mutation(), 1..4),
    ) {
        let shipped = &SHIPPED[pick % SHIPPED.len()];
        let mut text = shipped.clone();
        for m in &mutations {
            text = apply(&text, m);
        }
        check(&text);
    }

    #[test]
    fn arbitrary_text_is_loaded_or_refused_with_its_place_never_a_panic(text in "\\PC{0,200}") {
        check(&text);
    }

    #[test]
    fn toml_shaped_text_is_loaded_or_refused_with_its_place_never_a_panic(
        text in "((name|description|horizon|seed|replications|\\[tcp\\]|\\[grpc\\]|\\[calls\\]|\\[\\[variant\\]\\]|\\[sweep\\]|clients|rto|policy) ?= ?(\"[a-z0-9%]{0,4}\"|-?[0-9]{1,3}|\\[\\]|\\{\\})?\n){0,12}",
    ) {
        check(&text);
    }
}

#[test]
fn every_hostile_value_in_every_assignment_of_a_small_scenario_is_refused_or_accepted_without_a_panic() {
    // Exhaustive where it is cheap: the golden scenario is small enough to try each value
    // in each of its assignments.
    let source = std::fs::read_to_string(root().join("tests/fixtures/golden-small.toml")).unwrap();
    let assignments = source.lines().filter(|l| l.contains('=')).count();
    for line in 0..assignments {
        for value in 0..HOSTILE.len() {
            check(&apply(&source, &Mutation::HostileValue { line, value }));
        }
    }
}

// Inputs the fuzzer or these tests found, kept in tests/fixtures/fuzz/ with the error each
// now gives.

fn fixture(name: &str) -> (String, String) {
    let path = format!("tests/fixtures/fuzz/{name}");
    (path.clone(), std::fs::read_to_string(root().join(&path)).unwrap())
}

#[test]
fn a_sweep_of_millions_of_cells_is_refused_at_its_first_key_before_any_cell_is_built() {
    let (path, source) = fixture("scenario/sweep-grid-millions.toml");
    let started = std::time::Instant::now();
    let err = load_str(&path, &source).unwrap_err().to_string();
    assert!(started.elapsed().as_secs_f64() < 0.5, "refusing took {:?}", started.elapsed());
    assert!(
        err.starts_with(&format!(
            "{path}:15:1: key `sweep`: the grid has 2560000 points (40 × 40 × 40 × 40): at most 10000 cells in all"
        )),
        "{err}"
    );
}

#[test]
fn a_sweep_whose_every_value_is_wrong_is_reported_in_about_one_screen() {
    // Ten thousand bad values on one line: each cell's error used to carry its own copy of
    // that line (gigabytes at fifty thousand) and to show all of it.
    let (path, source) = fixture("scenario/sweep-grid-millions.toml");
    let base = &source[..source.find("[sweep]").unwrap()];
    let values: Vec<String> = (1..=sweep::MAX_CELLS).map(|i| format!("-{i}")).collect();
    let source = format!("{base}[sweep]\n\"occ.clients\" = [{}]\n", values.join(","));
    let err = load_str(&path, &source).unwrap_err();
    assert_eq!(err.diagnostics.len() as u64, sweep::MAX_CELLS, "one problem per value");
    let shown = err.to_string();
    assert!(shown.starts_with(&format!("{path}:15:18: key `occ.clients`: invalid value: integer `-1`")), "{shown}");
    assert!(shown.lines().all(|l| l.chars().count() < 200), "{shown}");
    assert!(shown.ends_with("… and 9980 more problems"), "{shown}");
}
