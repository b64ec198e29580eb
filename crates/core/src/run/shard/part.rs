//! A shard's part: a directory of three files.
//!
//! - `part.json`: which run and which slice it is (the scenario's name and SHA-256, the
//!   seed and replications it ran with, K and N, the backoffsim version) and the SHA-256
//!   of `results.bin`, so that a damaged or swapped copy is caught before it is merged.
//! - `scenario.toml`: the scenario's text, byte for byte, so a merge needs no file.
//! - `results.bin`: every result of the slice with its place in the work list, in
//!   postcard's encoding (exact: floats as their bits, times as nanoseconds).
//!
//! A part is staged and swapped in like a results directory: an interrupted shard leaves
//! no part, and an earlier part of the same name stays as it was.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::Shard;
use crate::metrics::ReplicationResult;
use crate::run::destination::Destination;
use crate::run::{Work, WorkItem};
use crate::scenario::{Scenario, sha256_hex};

pub const PART_FILE: &str = "part.json";
pub const SCENARIO_FILE: &str = "scenario.toml";
pub const RESULTS_FILE: &str = "results.bin";

/// Raised when what a part holds changes shape; a merge refuses other formats.
pub const FORMAT: u32 = 2;

/// `part.json`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartManifest {
    pub part_format: u32,
    pub backoffsim_version: String,
    pub scenario: String,
    pub scenario_sha256: String,
    /// The seed and replications the shard ran with, overrides included.
    pub seed: u64,
    pub replications: u32,
    /// K of `--shard K/N`, from 0.
    pub shard: u32,
    /// N of `--shard K/N`.
    pub shards: u32,
    /// Runs in this part, and in the whole run.
    pub runs: u64,
    pub total_runs: u64,
    pub results_sha256: String,
}

impl PartManifest {
    pub fn shard(&self) -> Shard {
        Shard { index: self.shard, count: self.shards }
    }
}

/// One result as a part stores it: its place in the work list, the item, the result.
pub type Entry = (u64, WorkItem, ReplicationResult);

/// Why a part could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("cannot write the part to {dir}: {source}")]
    Io { dir: String, source: std::io::Error },
    #[error("cannot encode the part: {0}")]
    Encode(String),
    #[error("interrupted while writing the part")]
    Interrupted,
}

/// Writes the part of `shard` of `work`: the results of its places, in order.
pub fn write(
    scenario: &Scenario,
    shard: Shard,
    work: &Work,
    results: &[ReplicationResult],
    dest: &Destination,
) -> Result<PathBuf, WriteError> {
    // A write that stopped for a Ctrl-C (see `Staging::write`) is an interrupt.
    let io = |source| {
        if crate::run::interrupt::requested() {
            WriteError::Interrupted
        } else {
            WriteError::Io { dir: dest.path().display().to_string(), source }
        }
    };
    let places = shard.places(work.len());
    let entries: Vec<(u64, WorkItem, &ReplicationResult)> = results
        .iter()
        .enumerate()
        .map(|(j, result)| {
            let place = places.nth(j as u64);
            (place, work.item(place), result)
        })
        .collect();
    let bytes = postcard::to_stdvec(&entries).map_err(|e| WriteError::Encode(e.to_string()))?;
    let manifest = PartManifest {
        part_format: FORMAT,
        backoffsim_version: env!("CARGO_PKG_VERSION").to_string(),
        scenario: scenario.name.clone(),
        scenario_sha256: scenario.source_sha256.clone(),
        seed: scenario.seed,
        replications: scenario.replications,
        shard: shard.index,
        shards: shard.count,
        runs: results.len() as u64,
        total_runs: work.len(),
        results_sha256: sha256_hex(&bytes),
    };
    let mut json = serde_json::to_vec_pretty(&manifest).map_err(|e| WriteError::Encode(e.to_string()))?;
    json.push(b'\n');
    let staging = dest.stage().map_err(io)?;
    staging.write(SCENARIO_FILE, scenario.source.as_bytes()).map_err(io)?;
    staging.write(RESULTS_FILE, &bytes).map_err(io)?;
    // Written last: a directory without it is not a part.
    staging.write(PART_FILE, &json).map_err(io)?;
    if crate::run::interrupt::requested() {
        return Err(WriteError::Interrupted);
    }
    staging.commit().map_err(io)
}

/// The most `part.json` may be: a part's is some 600 bytes, whatever the run.
const PART_FILE_MAX_BYTES: u64 = 64 << 10;

/// The first field of `m` that contradicts another, and how; `None` when they agree. A
/// merge relies on each: a format it reads, a slice that exists, and as many runs as
/// that slice of the whole run holds.
fn contradiction(m: &PartManifest) -> Option<(&'static str, String)> {
    if m.part_format != FORMAT {
        return Some((
            "part_format",
            format!("part format {} is not the {FORMAT} this backoffsim reads", m.part_format),
        ));
    }
    if m.shards == 0 || m.shard >= m.shards {
        return Some((
            "shard",
            format!("shard {} of {} names no slice: K counts from 0 and is below N", m.shard, m.shards),
        ));
    }
    if m.replications == 0 {
        return Some(("replications", "0: a run has at least 1 replication".into()));
    }
    if m.total_runs == 0 {
        return Some(("total_runs", "0: a run has at least one variant, cell and replication".into()));
    }
    let slice = m.shard().places(m.total_runs).count();
    if m.runs != slice {
        return Some((
            "runs",
            format!(
                "{} runs, but shard {} of a run of {} runs has {slice}: the part was changed after it was written",
                m.runs,
                m.shard(),
                m.total_runs
            ),
        ));
    }
    None
}

/// The line and column (from 1) of the top-level key `key` of the JSON object `text`.
/// A message about fields that contradict each other points at one of them; serde gives
/// the values alone.
fn key_place(text: &str, key: &str) -> Option<(usize, usize)> {
    let (mut line, mut column, mut depth) = (1, 0, 0usize);
    let mut chars = text.chars();
    let mut last_string: Option<(String, usize, usize)> = None;
    while let Some(c) = chars.next() {
        if c == '\n' {
            (line, column) = (line + 1, 0);
            continue;
        }
        column += 1;
        match c {
            '{' | '[' => depth += 1,
            '}' | ']' => depth = depth.saturating_sub(1),
            ':' if depth == 1 => {
                if let Some((name, l, col)) = last_string.take()
                    && name == key
                {
                    return Some((l, col));
                }
            }
            '"' => {
                let (l, col) = (line, column);
                let mut name = String::new();
                while let Some(c) = chars.next() {
                    column += 1;
                    match c {
                        '"' => break,
                        '\\' => {
                            chars.next();
                            column += 1;
                            name.push('\\');
                        }
                        c => name.push(c),
                    }
                }
                last_string = Some((name, l, col));
                continue;
            }
            _ => {}
        }
        if !c.is_whitespace() {
            last_string = None;
        }
    }
    None
}

/// A part opened for merging: its manifest and scenario text read, its results not yet.
#[derive(Debug)]
pub struct Part {
    pub dir: PathBuf,
    pub manifest: PartManifest,
    /// `part.json` as read, to place a message at one of its keys.
    text: String,
    pub source: String,
}

fn place(dir: &Path, text: &str, key: &str) -> String {
    let (line, column) = key_place(text, key).unwrap_or((1, 1));
    format!("{}: line {line}, column {column}, key `{key}`", dir.join(PART_FILE).display())
}

impl Part {
    /// Reads `dir`'s manifest and scenario text; the message says what is wrong with it.
    pub fn open(dir: &Path) -> Result<Part, String> {
        let at = |file: &str| dir.join(file).display().to_string();
        if !dir.is_dir() {
            return Err(format!("{}: no such directory: give the directories `run --shard K/N` wrote", dir.display()));
        }
        let not_a_part = |e: String| {
            format!(
                "{}: not a shard's part ({}: {e}); parts are what `backoffsim run FILE --shard K/N` writes",
                dir.display(),
                PART_FILE
            )
        };
        let file = std::fs::File::open(dir.join(PART_FILE)).map_err(|e| not_a_part(e.to_string()))?;
        let json = crate::input::read_at_most(file, PART_FILE_MAX_BYTES).map_err(|e| match e {
            crate::input::ReadError::Io(e) => not_a_part(e.to_string()),
            crate::input::ReadError::TooLarge => {
                not_a_part(format!("larger than {} KiB, and a part's is some 600 bytes", PART_FILE_MAX_BYTES >> 10))
            }
        })?;
        let manifest: PartManifest = serde_json::from_slice(&json)
            .map_err(|e| format!("{}: line {}, column {}: {e}", at(PART_FILE), e.line(), e.column()))?;
        let text = String::from_utf8_lossy(&json).into_owned();
        if let Some((key, problem)) = contradiction(&manifest) {
            return Err(format!("{}: {problem}", place(dir, &text, key)));
        }
        let label = at(SCENARIO_FILE);
        let file = std::fs::File::open(dir.join(SCENARIO_FILE)).map_err(|e| format!("{label}: {e}"))?;
        let bytes = crate::scenario::read_scenario(&label, file, "cannot read it")
            .map_err(|e| e.diagnostics.iter().map(|d| d.headline()).collect::<Vec<_>>().join("; "))?;
        let source = String::from_utf8(bytes).map_err(|_| format!("{label}: not UTF-8 text"))?;
        if sha256_hex(source.as_bytes()) != manifest.scenario_sha256 {
            return Err(format!(
                "{}: its SHA-256 is not the scenario_sha256 {} records: the part was changed after it was written",
                at(SCENARIO_FILE),
                PART_FILE
            ));
        }
        Ok(Part { dir: dir.to_path_buf(), manifest, text, source })
    }

    /// `part.json` and the line and column of its key `key`, for a message about it.
    pub fn place(&self, key: &str) -> String {
        place(&self.dir, &self.text, key)
    }

    /// Reads the results, checked against the manifest's SHA-256 and decoded.
    pub fn results(&self) -> Result<Vec<Entry>, String> {
        let at = self.dir.join(RESULTS_FILE).display().to_string();
        let bytes = std::fs::read(self.dir.join(RESULTS_FILE)).map_err(|e| format!("{at}: {e}"))?;
        if sha256_hex(&bytes) != self.manifest.results_sha256 {
            return Err(format!(
                "{at}: its SHA-256 is not the results_sha256 {PART_FILE} records: the file is damaged or from \
                 another part; run shard {} again",
                self.manifest.shard()
            ));
        }
        postcard::from_bytes(&bytes).map_err(|e| format!("{at}: cannot decode it: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::time::{SimDuration, SimTime};
    use crate::metrics::{ConnectionRow, MetricValue, bursts::Bins, series::Series, trace::TraceRow};

    /// A result with every field set, NaN and an empty value included.
    fn sample() -> ReplicationResult {
        let mut series = Series::new(SimDuration::from_secs(1), SimDuration::from_secs(2), &["calls", "retry_share"]);
        series.columns[1].1[2] = f64::NAN;
        ReplicationResult {
            metrics: vec![MetricValue::new("goodput", "calls/s", 0.1), MetricValue::maybe("recovered", "s", None)],
            trace: vec![TraceRow {
                time: SimTime(1_500_000_001),
                client: 3,
                event: "retransmit",
                segment: Some(7),
                sample: None,
                srtt: Some(SimDuration::from_millis(300)),
                rttvar: Some(SimDuration::from_millis(150)),
                rto: SimDuration::from_secs(2),
                backoffs: 1,
                cwnd: Some(5),
                ssthresh: Some(5),
                ca_state: Some("loss"),
            }],
            events: 12_345,
            bins: Some(Bins::new(SimDuration::from_secs(1), SimDuration::from_secs(2))),
            series: Some(series),
            quantiles: vec![("reconnect_time".into(), vec![0.0, 0.25, f64::INFINITY])],
            connections: vec![ConnectionRow {
                client: 1,
                attempt: 2,
                start: SimTime(10),
                end: SimTime(20),
                outcome: "refused",
                backoff: SimDuration::from_secs(1),
                delay: SimDuration::from_millis(800),
                deadline: Some(SimTime(u64::MAX)),
            }],
        }
    }

    fn manifest() -> PartManifest {
        PartManifest {
            part_format: FORMAT,
            backoffsim_version: "0.1.0".into(),
            scenario: "s".into(),
            scenario_sha256: "ab".into(),
            seed: 1,
            replications: 3,
            shard: 1,
            shards: 3,
            runs: 3,
            total_runs: 8,
            results_sha256: "cd".into(),
        }
    }

    #[test]
    fn fields_of_part_json_that_contradict_each_other_are_found() {
        assert_eq!(contradiction(&manifest()), None, "places 1, 4 and 7 of 8");
        let with = |f: &dyn Fn(&mut PartManifest)| {
            let mut m = manifest();
            f(&mut m);
            contradiction(&m).map(|(key, why)| format!("{key}: {why}"))
        };
        let says = |found: Option<String>, expected: &str| {
            let found = found.unwrap_or_default();
            assert!(found.starts_with(expected), "{found}");
        };
        says(with(&|m| m.shard = 2), "runs: 3 runs, but shard 2/3 of a run of 8 runs has 2");
        says(with(&|m| m.runs = 9), "runs: 9 runs");
        says(with(&|m| m.shard = 3), "shard: shard 3 of 3 names no slice");
        says(with(&|m| m.shards = 0), "shard: shard 1 of 0 names no slice");
        says(with(&|m| m.total_runs = 0), "total_runs: 0");
        says(with(&|m| m.replications = 0), "replications: 0");
        says(with(&|m| m.part_format = 7), "part_format: part format 7");
    }

    #[test]
    fn a_key_is_placed_at_its_own_line_and_not_inside_a_string_or_a_nested_object() {
        let text = "{\n  \"a\": \"\\\"runs\\\": 1\",\n  \"b\": {\"runs\": 2},\n  \"runs\": 3\n}";
        assert_eq!(key_place(text, "runs"), Some((4, 3)));
        assert_eq!(key_place(text, "a"), Some((2, 3)));
        assert_eq!(key_place(text, "nothing"), None);
    }

    #[test]
    fn a_result_reads_back_bit_for_bit() {
        let result = sample();
        let entries = vec![(5u64, WorkItem { variant: 1, cell: 2, replication: 3 }, &result)];
        let bytes = postcard::to_stdvec(&entries).unwrap();
        let back: Vec<Entry> = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(back.len(), 1);
        assert_eq!((back[0].0, back[0].1), (5, WorkItem { variant: 1, cell: 2, replication: 3 }));
        // NaN is not equal to itself: compare what is written again.
        let again: Vec<(u64, WorkItem, &ReplicationResult)> = back.iter().map(|(p, i, r)| (*p, *i, r)).collect();
        assert_eq!(postcard::to_stdvec(&again).unwrap(), bytes);
        assert!(back[0].2.series.as_ref().unwrap().columns[1].1[2].is_nan());
        assert_eq!(back[0].2.trace, sample().trace);
    }

    #[test]
    fn the_encoding_of_a_result_is_pinned_to_the_part_format() {
        // A change to what a replication records changes these bytes. A merge of parts
        // from before the change would then misread them: raise FORMAT, so that it
        // refuses them instead, and pin the new digest here.
        let result = sample();
        let entries = vec![(0u64, WorkItem { variant: 0, cell: 0, replication: 0 }, &result)];
        let digest = sha256_hex(&postcard::to_stdvec(&entries).unwrap());
        assert_eq!(
            (FORMAT, digest.as_str()),
            (2, "fe9b17a1fa5dfbdacde1254545b1d05a6bbb544f0dbf038eac71a353f527619e"),
            "the part encoding changed"
        );
    }
}
