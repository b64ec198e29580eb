//! `[sweep]`: a grid over one or more parameters. Each key is a dotted path into the
//! scenario (`"tcp.clients" = [1, 5, 10]`, or written as nested tables), each value a
//! list; every combination is a cell, run for every variant. The grid is the cartesian
//! product in the order the keys are written, the first key varying slowest.
//!
//! A cell is an overlay like a variant, built from spanned values, so an error in a swept
//! value points at the value in the `[sweep]` list.

use std::borrow::Cow;
use std::ops::Range;

use serde_spanned::Spanned;
use toml::de::{DeTable, DeValue};

use super::diag::Diagnostic;
use super::load::Document;

/// One swept parameter.
pub struct Axis<'a> {
    /// The dotted path, as it names the column in result files.
    pub key: String,
    pub key_span: Range<usize>,
    pub values: Vec<Spanned<DeValue<'a>>>,
}

/// Removes `sweep` from the base table and reads its axes.
pub fn take_axes<'a>(doc: &Document<'a>, base: &mut Spanned<DeTable<'a>>) -> Result<Vec<Axis<'a>>, Diagnostic> {
    let Some(sweep) = base.get_mut().remove("sweep") else {
        return Ok(Vec::new());
    };
    let span = sweep.span();
    let DeValue::Table(table) = sweep.into_inner() else {
        return Err(doc.diag(
            Some(span),
            "sweep",
            "expected a table of lists, e.g. [sweep] \"tcp.clients\" = [1, 5, 10]",
        ));
    };
    let mut axes = Vec::new();
    flatten(doc, &table, "", &mut axes)?;
    if axes.is_empty() {
        return Err(doc.diag(Some(span), "sweep", "the sweep lists no parameters"));
    }
    Ok(axes)
}

fn flatten<'a>(
    doc: &Document<'a>,
    table: &DeTable<'a>,
    prefix: &str,
    axes: &mut Vec<Axis<'a>>,
) -> Result<(), Diagnostic> {
    for (key, value) in table.iter() {
        let path = if prefix.is_empty() { key.get_ref().to_string() } else { format!("{prefix}.{}", key.get_ref()) };
        match value.get_ref() {
            DeValue::Table(inner) => flatten(doc, inner, &path, axes)?,
            DeValue::Array(items) if !items.is_empty() => {
                axes.push(Axis { key: path, key_span: key.span(), values: items.iter().cloned().collect() })
            }
            DeValue::Array(_) => {
                return Err(doc.diag(Some(value.span()), &format!("sweep.{path}"), "the list of values is empty"));
            }
            _ => {
                return Err(doc.diag(
                    Some(value.span()),
                    &format!("sweep.{path}"),
                    "expected a list of values to sweep over, e.g. [1, 5, 10]",
                ));
            }
        }
    }
    Ok(())
}

/// The most cells a file may ask for, over all its variants. Each is checked at load and
/// is a run of its own, so a few short lists could otherwise ask for billions: a hang
/// at load rather than an error.
pub const MAX_CELLS: u64 = 10_000;

/// Why the grid times `variants` is too large to check or run, or `None`.
pub fn too_large(axes: &[Axis<'_>], variants: usize) -> Option<String> {
    let points = axes.iter().fold(1u64, |n, a| n.saturating_mul(a.values.len() as u64));
    let cells = points.saturating_mul(variants as u64);
    if cells <= MAX_CELLS {
        return None;
    }
    let sizes: Vec<String> = axes.iter().map(|a| a.values.len().to_string()).collect();
    let per_variant = if variants > 1 { format!(" for each of {variants} variants") } else { String::new() };
    Some(format!(
        "the grid has {} points ({}){per_variant}: at most {MAX_CELLS} cells in all; split it over several scenarios",
        if points == u64::MAX { "too many".to_string() } else { points.to_string() },
        sizes.join(" × ")
    ))
}

/// Every cell of the grid as one value index per axis, first axis slowest.
pub fn cells(axes: &[Axis<'_>]) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new()];
    for axis in axes {
        out = out
            .into_iter()
            .flat_map(|prefix| {
                (0..axis.values.len()).map(move |i| {
                    let mut p = prefix.clone();
                    p.push(i);
                    p
                })
            })
            .collect();
    }
    out
}

/// The overlay that sets each axis to its value in `cell`.
pub fn overlay<'a>(axes: &[Axis<'a>], cell: &[usize]) -> DeTable<'a> {
    let mut root = DeTable::new();
    for (axis, &i) in axes.iter().zip(cell) {
        let parts: Vec<&str> = axis.key.split('.').collect();
        let mut table = &mut root;
        for part in &parts[..parts.len() - 1] {
            let key = Spanned::new(axis.key_span.clone(), Cow::Owned(part.to_string()));
            let slot =
                table.entry(key).or_insert_with(|| Spanned::new(axis.key_span.clone(), DeValue::Table(DeTable::new())));
            if !matches!(slot.get_ref(), DeValue::Table(_)) {
                *slot = Spanned::new(axis.key_span.clone(), DeValue::Table(DeTable::new()));
            }
            let DeValue::Table(inner) = slot.get_mut() else { unreachable!("made a table above") };
            table = inner;
        }
        let last = Spanned::new(axis.key_span.clone(), Cow::Owned(parts[parts.len() - 1].to_string()));
        table.insert(last, axis.values[i].clone());
    }
    root
}

/// A swept value as a result column shows it: strings bare, numbers as written, tables
/// and lists compactly.
pub fn display(value: &DeValue<'_>) -> String {
    match value {
        DeValue::String(s) => s.to_string(),
        DeValue::Integer(i) => i.as_str().to_string(),
        DeValue::Float(f) => f.as_str().to_string(),
        DeValue::Boolean(b) => b.to_string(),
        DeValue::Datetime(d) => d.to_string(),
        DeValue::Array(items) => {
            let parts: Vec<String> = items.iter().map(|v| display(v.get_ref())).collect();
            format!("[{}]", parts.join(" "))
        }
        // Compact and comma-free, so that a CSV cell needs no quoting: {model=bernoulli p=0.1}.
        DeValue::Table(t) => {
            let parts: Vec<String> =
                t.iter().map(|(k, v)| format!("{}={}", k.get_ref(), display(v.get_ref()))).collect();
            format!("{{{}}}", parts.join(" "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn axes_of(src: &str) -> (Vec<String>, Vec<Vec<String>>) {
        let doc = Document::parse("s.toml", src).unwrap();
        let mut base = doc.root.clone();
        let axes = take_axes(&doc, &mut base).unwrap();
        let keys = axes.iter().map(|a| a.key.clone()).collect();
        let grid = cells(&axes)
            .iter()
            .map(|c| axes.iter().zip(c).map(|(a, &i)| display(a.values[i].get_ref())).collect())
            .collect();
        (keys, grid)
    }

    #[test]
    fn the_grid_is_the_product_with_the_first_key_slowest() {
        let (keys, grid) = axes_of("[sweep]\n\"tcp.clients\" = [1, 5]\njitter = [\"none\", \"full\", 0.5]\n");
        assert_eq!(keys, ["tcp.clients", "jitter"]);
        assert_eq!(grid.len(), 6);
        assert_eq!(grid[0], ["1", "none"]);
        assert_eq!(grid[1], ["1", "full"]);
        assert_eq!(grid[5], ["5", "0.5"]);
    }

    #[test]
    fn a_grid_over_the_cell_limit_is_too_large_counting_every_variant() {
        let src = "[sweep]\na = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\nb = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n";
        let doc = Document::parse("s.toml", src).unwrap();
        let mut base = doc.root.clone();
        let axes = take_axes(&doc, &mut base).unwrap();
        assert_eq!(too_large(&axes, 100), None, "100 points × 100 variants is exactly the limit");
        assert_eq!(
            too_large(&axes, 101).as_deref(),
            Some(
                "the grid has 100 points (10 × 10) for each of 101 variants: at most 10000 cells in all; split it over several scenarios"
            )
        );
    }

    #[test]
    fn dotted_and_quoted_keys_name_the_same_parameter() {
        let (a, _) = axes_of("[sweep]\ntcp.clients = [1]\n");
        let (b, _) = axes_of("[sweep]\n\"tcp.clients\" = [1]\n");
        assert_eq!(a, b);
    }

    #[test]
    fn the_overlay_sets_nested_keys() {
        let src = "[sweep]\n\"path.loss.p\" = [0.1, 0.2]\n";
        let doc = Document::parse("s.toml", src).unwrap();
        let mut base = doc.root.clone();
        let axes = take_axes(&doc, &mut base).unwrap();
        let o = overlay(&axes, &[1]);
        let DeValue::Table(path) = o.get("path").unwrap().get_ref() else { panic!() };
        let DeValue::Table(loss) = path.get("loss").unwrap().get_ref() else { panic!() };
        assert_eq!(display(loss.get("p").unwrap().get_ref()), "0.2");
        assert_eq!(&src[loss.get("p").unwrap().span()], "0.2");
    }

    #[test]
    fn empty_lists_and_scalars_are_refused() {
        for src in ["[sweep]\nx = []\n", "[sweep]\nx = 3\n", "sweep = 3\n", "[sweep]\n"] {
            let text = format!("name = \"n\"\n{src}");
            let doc = Document::parse("s.toml", &text).unwrap();
            let mut base = doc.root.clone();
            assert!(take_axes(&doc, &mut base).is_err(), "{src}");
        }
    }
}
