//! From a file to a `Scenario`: parse, split variants, merge, deserialize, check.
//! Every problem found is reported with its place; as many as can be found at once.

use crate::model::config_error::ConfigErrors;
use serde_spanned::Spanned;
use sha2::{Digest, Sha256};
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use toml::de::{DeTable, DeValue};

use crate::input;
use crate::worlds::catalogue;

use super::diag::{Diagnostic, ScenarioError};
use super::load::{Document, join, locate, merge, sets_key};
use super::schema::{RawScenario, SHARED_KEYS, VARIANT_OWN_KEYS};
use super::{Cell, ModelSpec, Scenario, Variant};
use super::{horizon, models, sweep};

/// What `run -` and `check -` call standard input in diagnostics.
pub const STDIN_LABEL: &str = "<stdin>";

/// Values a command line sets in place of the file's. They are laid over the file before
/// it is checked, so that what depends on them (`[trace] replications`) is checked
/// against them, and a problem they cause says so.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Overrides {
    pub seed: Option<u64>,
    pub replications: Option<u32>,
}

impl Overrides {
    /// `message`, naming the override when it is what `key` was checked against.
    fn note(&self, key: &str, message: &str) -> String {
        match self.replications {
            Some(n) if key == "replications" || key.starts_with("trace.replications") => {
                format!("{message} (`--replications {n}` replaces the file's `replications`)")
            }
            _ => message.to_string(),
        }
    }
}

/// The file a command line names: `-` is standard input, anything else a path.
pub fn load_arg(arg: &std::path::Path) -> Result<Scenario, ScenarioError> {
    load_arg_with(arg, Overrides::default())
}

/// `load_arg` with a command line's overrides applied before checking.
pub fn load_arg_with(arg: &std::path::Path, overrides: Overrides) -> Result<Scenario, ScenarioError> {
    if arg.as_os_str() != "-" {
        return load_file_with(arg, overrides);
    }
    let bytes = read_scenario(STDIN_LABEL, std::io::stdin().lock(), "cannot read standard input")?;
    load_bytes(STDIN_LABEL, bytes, overrides)
}

/// A scenario's bytes from `input`, refused beyond [`input::SCENARIO_MAX_BYTES`].
/// `cannot` says what failed when reading does; `label` names the input.
pub fn read_scenario(label: &str, input: impl std::io::Read, cannot: &str) -> Result<Vec<u8>, ScenarioError> {
    let fail = |message: &str| ScenarioError::single(Diagnostic::at(label, "", None, "", message));
    input::read_at_most(input, input::SCENARIO_MAX_BYTES).map_err(|e| match e {
        input::ReadError::Io(e) => fail(&format!("{cannot}: {e}")),
        input::ReadError::TooLarge => fail(&format!(
            "larger than {}, the most a scenario may be (a 100,000-entry [[path.blackout]] list is about 5 MB): \
             is this a scenario file?",
            input::SCENARIO_MAX_SHOWN
        )),
    })
}

/// How a command line's scenario argument is named in messages.
pub fn arg_label(arg: &std::path::Path) -> String {
    if arg.as_os_str() == "-" { STDIN_LABEL.to_string() } else { arg.display().to_string() }
}

pub fn load_file(path: &std::path::Path) -> Result<Scenario, ScenarioError> {
    load_file_with(path, Overrides::default())
}

fn load_file_with(path: &std::path::Path, overrides: Overrides) -> Result<Scenario, ScenarioError> {
    let label = path.display().to_string();
    let cannot = "cannot read the scenario file";
    let file = std::fs::File::open(path)
        .map_err(|e| ScenarioError::single(Diagnostic::at(&label, "", None, "", &format!("{cannot}: {e}"))))?;
    let bytes = read_scenario(&label, file, cannot)?;
    load_bytes(&label, bytes, overrides)
}

fn load_bytes(label: &str, bytes: Vec<u8>, overrides: Overrides) -> Result<Scenario, ScenarioError> {
    let source = String::from_utf8(bytes).map_err(|_| {
        ScenarioError::single(Diagnostic::at(label, "", None, "", "the file is not UTF-8 text: is it a TOML scenario?"))
    })?;
    load_str_with(label, &source, overrides)
}

/// Loads a scenario from text; `label` names it in diagnostics.
pub fn load_str(label: &str, source: &str) -> Result<Scenario, ScenarioError> {
    load_str_with(label, source, Overrides::default())
}

/// `load_str` with a command line's overrides applied before checking.
pub fn load_str_with(label: &str, source: &str, overrides: Overrides) -> Result<Scenario, ScenarioError> {
    // Parsed without its byte-order mark, so that columns on the first line are those an
    // editor shows; `source` keeps it, as the file's identity and a shard's copy.
    let doc = Document::parse(label, input::strip_bom(source))?;
    let (mut base, variant_tables) = doc.split_variants().map_err(ScenarioError::single)?;
    let axes = sweep::take_axes(&doc, &mut base).map_err(ScenarioError::single)?;
    let mut diags: Vec<Found> = Vec::new();
    for axis in &axes {
        let root = axis.key.split('.').next().unwrap_or_default();
        if SHARED_KEYS.iter().any(|(k, _)| *k == root) || ["name", "description", "variant"].contains(&root) {
            diags.push(Found::file(doc.diag(
                Some(axis.key_span.clone()),
                &format!("sweep.{}", axis.key),
                "only model parameters can be swept (not seed, replications, horizon, max_events, trace, name or description)",
            )));
        }
    }

    // Each run is the base, or the base with one variant laid over it.
    let mut runs: Vec<(String, String, Spanned<DeTable<'_>>, Option<usize>)> = Vec::new();
    // Looked up, not searched: a file of 40,000 variants.
    let mut names: BTreeSet<String> = BTreeSet::new();
    if variant_tables.is_empty() {
        runs.push(("base".into(), String::new(), base.clone(), None));
    }
    for v in &variant_tables {
        let prefix = format!("variant[{}]", v.index);
        let (name, description) = variant_identity(&doc, &v.table, &prefix, &mut diags);
        for (key, why) in SHARED_KEYS {
            if v.table.get_ref().get(*key).is_some() {
                diags.push(Found::file(doc.diag(Some(locate(&v.table, key)), &join(&prefix, key), why)));
            }
        }
        if !names.insert(name.clone()) {
            diags.push(Found::file(doc.diag(
                Some(locate(&v.table, "name")),
                &join(&prefix, "name"),
                &format!("a variant named `{name}` already exists"),
            )));
        }
        let mut overrides = v.table.get_ref().clone();
        for key in VARIANT_OWN_KEYS.iter().chain(SHARED_KEYS.iter().map(|(k, _)| k)) {
            overrides.remove(*key);
        }
        let mut merged = base.clone();
        merge(merged.get_mut(), &overrides);
        runs.push((name, description, merged, Some(v.index)));
    }

    if let Some(span) = axes.first().map(|a| a.key_span.clone()) {
        let runs = runs.len().max(1);
        if let Some(message) = sweep::too_large(&axes, runs) {
            diags.push(Found::file(doc.diag(Some(span), "sweep", &message)));
            return Err(ScenarioError { diagnostics: diags.into_iter().map(|f| f.diag).collect() });
        }
    }
    let grid = sweep::cells(&axes);
    let mut first: Option<RawScenario> = None;
    let mut variants = Vec::new();
    // Warnings, with the variant (its place in `runs`) each was found in.
    let mut warned: Vec<(Found, usize)> = Vec::new();
    for (run, (name, description, table, index)) in runs.into_iter().enumerate() {
        let mut cells = Vec::new();
        for (cell, point) in grid.iter().enumerate() {
            let mut cell_table = table.clone();
            merge(cell_table.get_mut(), &sweep::overlay(&axes, point));
            let values: Vec<String> =
                axes.iter().zip(point).map(|(a, &i)| sweep::display(a.values[i].get_ref())).collect();
            let ctx = Context {
                doc: &doc,
                overrides,
                table: &cell_table,
                variant: index.map(|i| &variant_tables[i].table),
                index,
                cell: (!axes.is_empty()).then_some(cell),
            };
            if let Some((raw, spec)) = ctx.resolve(&mut diags) {
                for (key, message) in horizon::late(&cell_table, raw.horizon) {
                    let at = doc.diag(Some(locate(&cell_table, &key)), &ctx.place(&key), &message);
                    warned.push((ctx.cell(at), run));
                }
                first.get_or_insert(raw);
                cells.push(Cell { sweep: values, spec });
            }
        }
        variants.push(Variant { name, description, cells });
    }

    let labels: Vec<Vec<String>> = grid
        .iter()
        .map(|point| axes.iter().zip(point).map(|(a, &i)| sweep::display(a.values[i].get_ref())).collect())
        .collect();
    let keys: Vec<&str> = axes.iter().map(|a| a.key.as_str()).collect();
    if !diags.is_empty() {
        return Err(ScenarioError { diagnostics: merge_cells(diags, &keys, &grid, &labels) });
    }
    let names: Vec<&str> = variants.iter().map(|v: &Variant| v.name.as_str()).collect();
    let warnings = merge_cells(in_variants(warned, &names), &keys, &grid, &labels);
    let raw = first.expect("no diagnostics implies at least one resolved cell");
    Ok(Scenario {
        name: raw.name,
        description: raw.description.trim().to_string(),
        seed: raw.seed,
        replications: raw.replications,
        horizon: raw.horizon,
        max_events: raw.max_events,
        max_events_at: doc.diag(base.get_ref().get("max_events").map(|v| v.span()), "max_events", ""),
        source_sha256: sha256_hex(source.as_bytes()),
        source: source.to_string(),
        sweep_keys: axes.iter().map(|a| a.key.clone()).collect(),
        variants,
        warnings,
    })
}

/// Where one (variant, sweep cell) comes from, for resolving it and placing its errors.
struct Context<'d, 'a> {
    doc: &'d Document<'a>,
    overrides: Overrides,
    table: &'d Spanned<DeTable<'a>>,
    variant: Option<&'d Spanned<DeTable<'a>>>,
    index: Option<usize>,
    /// The sweep cell, when the scenario has a sweep.
    cell: Option<usize>,
}

impl Context<'_, '_> {
    /// The key path as the user wrote it: prefixed by the variant when the value came from it.
    fn place(&self, key: &str) -> String {
        // A variant's own `name` and `description` are taken out before its keys are laid
        // over the base (see `variant_identity`): these keys are always the base's.
        let own = VARIANT_OWN_KEYS.contains(&key);
        match (self.index, self.variant) {
            (Some(i), Some(v)) if !own && sets_key(v, key) => join(&format!("variant[{i}]"), key),
            _ => key.to_string(),
        }
    }

    fn push(&self, diags: &mut Vec<Found>, key: &str, message: &str) {
        diags.push(self.cell(self.doc.diag(Some(locate(self.table, key)), &self.place(key), message)));
    }

    fn cell(&self, diag: Diagnostic) -> Found {
        Found { diag, cell: self.cell }
    }

    fn resolve(&self, diags: &mut Vec<Found>) -> Option<(RawScenario, ModelSpec)> {
        let mut raw: RawScenario = match self.doc.deserialize_all(self.table.clone(), &stand_in) {
            Ok(raw) => raw,
            Err(found) => {
                for mut d in found {
                    d.key = self.place(&d.key);
                    diags.push(self.cell(d));
                }
                return None;
            }
        };
        if let Some(seed) = self.overrides.seed {
            raw.seed = seed;
        }
        if let Some(replications) = self.overrides.replications {
            raw.replications = replications;
        }
        let model = self.one_model(&raw, diags);
        let mut problems = check(&raw);
        if let Some(m) = model {
            problems.extend_under("", models::check(m, &raw));
        }
        for e in problems.iter() {
            self.push(diags, &e.key, &self.overrides.note(&e.key, &e.message));
        }
        let model = model.filter(|_| problems.is_empty() && models::present(&raw).len() == 1)?;
        match models::resolve(model, &raw) {
            Ok(spec) => Some((raw, spec)),
            Err(errors) => {
                for e in errors {
                    self.push(diags, &e.key, &e.message);
                }
                None
            }
        }
    }

    /// The one model the cell runs. A second model section is refused at its place,
    /// naming both; the first, in file order, is then checked as if alone.
    fn one_model(&self, raw: &RawScenario, diags: &mut Vec<Found>) -> Option<catalogue::ModelId> {
        let mut found = models::present(raw);
        found.sort_by_key(|m| locate(self.table, m.name()).start);
        let (&first, rest) = found.split_first()?;
        for second in rest {
            self.push(
                diags,
                second.name(),
                &format!(
                    "a scenario runs one model: [{}] and [{}] are both here; keep one of them (or make each a \
                     separate scenario file)",
                    first.name(),
                    second.name()
                ),
            );
        }
        Some(first)
    }
}

fn variant_identity(
    doc: &Document<'_>,
    table: &Spanned<DeTable<'_>>,
    prefix: &str,
    diags: &mut Vec<Found>,
) -> (String, String) {
    let get = |key: &str| table.get_ref().get(key).map(|v| (v.get_ref().as_str().map(str::to_string), v.span()));
    let name = match get("name") {
        Some((Some(name), span)) => {
            if let Err(why) = check_name(&name) {
                diags.push(Found::file(doc.diag(Some(span), &join(prefix, "name"), &why)));
            }
            name
        }
        Some((None, span)) => {
            diags.push(Found::file(doc.diag(Some(span), &join(prefix, "name"), "wrong type: expected a string")));
            String::new()
        }
        None => {
            diags.push(Found::file(doc.diag(
                Some(table.span()),
                &join(prefix, "name"),
                "missing required key `name`: every variant needs a name",
            )));
            String::new()
        }
    };
    let description = match get("description") {
        Some((Some(d), _)) => d,
        Some((None, span)) => {
            diags.push(Found::file(doc.diag(
                Some(span),
                &join(prefix, "description"),
                "wrong type: expected a string",
            )));
            String::new()
        }
        None => String::new(),
    };
    (name, description)
}

/// A valid value for a required top-level key, to check the rest of a file without it.
fn stand_in(key: &str) -> Option<DeValue<'static>> {
    let text = match key {
        "name" => "stand-in",
        "description" => "",
        "horizon" => "1s",
        _ => return None,
    };
    Some(DeValue::String(Cow::Borrowed(text)))
}

/// Checks the type system cannot make, as (key path, message).
fn check(raw: &RawScenario) -> ConfigErrors {
    let mut errors = ConfigErrors::new();
    if let Err(why) = check_name(&raw.name) {
        errors.push("name", why);
    } else if raw.name.len() > NAME_MAX_BYTES {
        errors.push(
            "name",
            format!(
                "is {} characters long: at most {NAME_MAX_BYTES}, since it names the results directory \
                 (results/<name>, results/<name>.shard-K-of-N and hidden staging directories beside them) and \
                 a file name has at most 255 bytes",
                raw.name.len()
            ),
        );
    }
    if raw.replications == 0 {
        errors.push("replications", "must be at least 1");
    }
    if raw.horizon.as_nanos() == 0 {
        errors.push("horizon", "must be longer than 0s");
    }
    if raw.max_events == 0 {
        errors.push("max_events", "must be at least 1");
    }
    if models::present(raw).is_empty() {
        errors.push("", format!("no model section: add {}", models::choices()));
    }
    errors
}

/// The longest scenario `name`, in bytes (a name is ASCII, so characters too). It becomes
/// a directory's name, the longest form of which is the hidden staging directory of a
/// shard, `.<name>.shard-K-of-N.partial.<pid>`: 51 bytes more with K, N and the process id
/// of ten digits, within the 255 bytes most file systems allow in one component.
pub const NAME_MAX_BYTES: usize = 200;

fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && !name.starts_with('.')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "`{}` is not a usable name: use letters, digits, `-`, `_` and `.` (it names files and directories)",
            input::escaped(name)
        ))
    }
}

/// A problem and the sweep cell it was found in (`None`: it does not depend on one).
struct Found {
    diag: Diagnostic,
    cell: Option<usize>,
}

impl Found {
    fn file(diag: Diagnostic) -> Self {
        Found { diag, cell: None }
    }
}

/// Warnings found in some variants only, their message naming them: a base key a
/// variant replaces does not apply to that variant. (A key a variant sets is already
/// named as the variant's.)
fn in_variants(warned: Vec<(Found, usize)>, names: &[&str]) -> Vec<Found> {
    let id = |d: &Diagnostic| (d.line, d.column, d.key.clone(), d.message.clone());
    let mut seen: BTreeMap<(usize, usize, String, String), BTreeSet<usize>> = BTreeMap::new();
    for (f, run) in &warned {
        seen.entry(id(&f.diag)).or_default().insert(*run);
    }
    warned
        .into_iter()
        .map(|(mut f, _)| {
            let runs = &seen[&id(&f.diag)];
            if runs.len() < names.len() && !f.diag.key.starts_with("variant[") {
                let named: Vec<String> = runs.iter().map(|&r| format!("`{}`", names[r])).collect();
                let noun = if named.len() == 1 { "variant" } else { "variants" };
                f.diag.message.push_str(&format!(" (in {noun} {})", named.join(", ")));
            }
            f
        })
        .collect()
}

/// One diagnostic per problem: the same error found in several variants or sweep cells
/// is shown once, naming the cells it applies to unless it applies to all of them.
fn merge_cells(found: Vec<Found>, keys: &[&str], grid: &[Vec<usize>], labels: &[Vec<String>]) -> Vec<Diagnostic> {
    // Indexed, not searched: a large grid with an error in every cell is many thousands.
    let mut merged: Vec<(Diagnostic, BTreeSet<Option<usize>>)> = Vec::new();
    let mut index: BTreeMap<(usize, usize, String, String), usize> = BTreeMap::new();
    for f in found {
        let id = (f.diag.line, f.diag.column, f.diag.key.clone(), f.diag.message.clone());
        match index.get(&id) {
            Some(&i) => {
                merged[i].1.insert(f.cell);
            }
            None => {
                index.insert(id, merged.len());
                merged.push((f.diag, BTreeSet::from([f.cell])));
            }
        }
    }
    merged
        .into_iter()
        .map(|(mut d, cells)| {
            let cells: Option<BTreeSet<usize>> = cells.into_iter().collect();
            if let Some(cells) = cells
                && cells.len() < grid.len()
            {
                d.message.push_str(&describe_cells(&cells, keys, grid, labels));
            }
            d
        })
        .collect()
}

/// " (sweep point a = 1)" or " (sweep points a = 1, 2)" for some cells of the grid,
/// naming only the swept keys that matter: a key is left out when the cells include it at
/// every one of its values (`tcp.window = 0` fails whatever the loss).
fn describe_cells(cells: &BTreeSet<usize>, keys: &[&str], grid: &[Vec<usize>], labels: &[Vec<String>]) -> String {
    let points: BTreeSet<&[usize]> = cells.iter().map(|&c| grid[c].as_slice()).collect();
    // The grid's last point holds every axis at its last value (see `sweep::cells`): read
    // there, not searched for, since this runs once per problem of a grid of thousands.
    let sizes: Vec<usize> = (0..keys.len()).map(|k| grid.last().map_or(0, |p| p[k] + 1)).collect();
    let matters: Vec<usize> = (0..keys.len())
        .filter(|&k| {
            !points.iter().all(|p| {
                (0..sizes[k]).all(|v| {
                    let mut q = p.to_vec();
                    q[k] = v;
                    points.contains(q.as_slice())
                })
            })
        })
        .collect();
    let value = |c: usize, k: usize| labels[c][k].as_str();
    let mut shown: Vec<Vec<&str>> = Vec::new();
    let mut seen: BTreeSet<Vec<&str>> = BTreeSet::new();
    for &c in cells {
        let v: Vec<&str> = matters.iter().map(|&k| value(c, k)).collect();
        if seen.insert(v.clone()) {
            shown.push(v);
        }
    }
    let noun = if shown.len() == 1 { "point" } else { "points" };
    let list = if matters.len() == 1 {
        let values: Vec<&str> = shown.iter().map(|v| v[0]).collect();
        format!("{} = {}", keys[matters[0]], values.join(", "))
    } else {
        let each: Vec<String> = shown
            .iter()
            .map(|v| matters.iter().zip(v).map(|(&k, x)| format!("{} = {x}", keys[k])).collect::<Vec<_>>().join(", "))
            .collect();
        each.join("; ")
    };
    format!(" (sweep {noun} {list})")
}

/// SHA-256 of `bytes`, in lower-case hex: a scenario's identity, and a part's check.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid_2x3() -> (Vec<Vec<usize>>, Vec<Vec<String>>) {
        let grid: Vec<Vec<usize>> = (0..2).flat_map(|a| (0..3).map(move |b| vec![a, b])).collect();
        let labels = grid.iter().map(|p| vec![format!("a{}", p[0]), format!("b{}", p[1])]).collect();
        (grid, labels)
    }

    #[test]
    fn cells_are_named_by_the_keys_that_matter_only() {
        let (grid, labels) = grid_2x3();
        let keys = ["a", "b"];
        let set = |cells: &[usize]| cells.iter().copied().collect::<BTreeSet<usize>>();
        // a = a1 at every b: b does not matter.
        assert_eq!(describe_cells(&set(&[3, 4, 5]), &keys, &grid, &labels), " (sweep point a = a1)");
        // b = b2 at every a.
        assert_eq!(describe_cells(&set(&[2, 5]), &keys, &grid, &labels), " (sweep point b = b2)");
        assert_eq!(describe_cells(&set(&[1, 2, 4, 5]), &keys, &grid, &labels), " (sweep points b = b1, b2)");
        // No key alone explains it: both are named, per cell.
        assert_eq!(
            describe_cells(&set(&[0, 4]), &keys, &grid, &labels),
            " (sweep points a = a0, b = b0; a = a1, b = b1)"
        );
    }
}
