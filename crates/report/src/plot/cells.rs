//! Sweep cells and series: which (variant, cell) pairs a plot draws and what they are
//! called.

use super::PlotOptions;
use crate::ReportError;
use crate::data::RunSet;

/// The names plots give the sweep keys: the last dotted segment (`max_backoff`) where no
/// other key ends the same way, else the whole key.
pub(crate) fn short_keys(keys: &[String]) -> Vec<String> {
    let last = |k: &str| k.rsplit('.').next().unwrap_or(k).to_string();
    keys.iter()
        .map(|k| {
            let l = last(k);
            if keys.iter().filter(|o| last(o) == l).count() == 1 { l } else { k.clone() }
        })
        .collect()
}

/// A sweep cell as people read it: `max_backoff = 30s, window = 8`; empty without a
/// sweep.
pub(crate) fn cell_label(keys: &[String], point: &[String]) -> String {
    short_keys(keys)
        .iter()
        .zip(point)
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| format!("{k} = {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What a panel or a line is called: the variant and the cell, `jitter-0.2 · max_backoff
/// = 30s`; the cell alone when the figure shows one variant, the variant alone without a
/// sweep.
pub(crate) fn series_label(variant: &str, cell: &str, one_variant: bool) -> String {
    match (cell.is_empty(), one_variant) {
        (true, _) => variant.to_string(),
        (false, true) => cell.to_string(),
        (false, false) => format!("{variant} · {cell}"),
    }
}

/// Whether two swept values are the same: the same text, or the same duration or number
/// written differently (`30s` and `30 s`, `0.5` and `0.50`).
fn same_value(a: &str, b: &str) -> bool {
    let (a, b) = (a.trim(), b.trim());
    if a == b {
        return true;
    }
    let dur = |s: &str| backoffsim_core::engine::time::SimDuration::parse(s).ok();
    if let (Some(x), Some(y)) = (dur(a), dur(b)) {
        return x == y;
    }
    matches!((a.parse::<f64>(), b.parse::<f64>()), (Ok(x), Ok(y)) if x == y)
}

/// The sweep cells of `data` that `wanted` selects (every cell when it is empty), in the
/// run's order; an error names the keys and values there are when a key or a value
/// matches nothing.
pub fn select_cells(data: &RunSet, wanted: &[(String, String)]) -> Result<Vec<Vec<String>>, ReportError> {
    let points = data.points();
    if wanted.is_empty() {
        return Ok(points);
    }
    let keys = &data.sweep_keys;
    if keys.is_empty() {
        return Err(ReportError::Missing("--cell picks sweep cells, and this run has no [sweep]".into()));
    }
    let values = |i: usize| {
        let mut out: Vec<&str> = Vec::new();
        for p in &points {
            if !out.contains(&p[i].as_str()) {
                out.push(&p[i]);
            }
        }
        out.join(", ")
    };
    let mut by_key: Vec<(usize, Vec<&str>)> = Vec::new();
    for (k, v) in wanted {
        let hits: Vec<usize> = (0..keys.len())
            .filter(|&i| keys[i] == *k || (!k.contains('.') && keys[i].rsplit('.').next() == Some(k.as_str())))
            .collect();
        let i = match hits.as_slice() {
            [i] => *i,
            [] => {
                // A near miss of the whole key or of its last segment.
                let mut names: Vec<&str> = keys.iter().map(String::as_str).collect();
                names.extend(keys.iter().filter_map(|k| k.rsplit_once('.').map(|(_, last)| last)));
                let known = backoffsim_core::suggest::unknown("sweep key", k, names, None);
                let known = known.split(" (known: ").next().unwrap_or_default();
                return Err(ReportError::Missing(format!(
                    "--cell {k}={v}: {known} (keys: {})",
                    keys.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
                )));
            }
            several => {
                return Err(ReportError::Missing(format!(
                    "--cell {k}={v}: `{k}` could be any of {}; write the whole key",
                    several.iter().map(|&i| format!("`{}`", keys[i])).collect::<Vec<_>>().join(", ")
                )));
            }
        };
        if !points.iter().any(|p| same_value(&p[i], v)) {
            return Err(ReportError::Missing(format!(
                "--cell {k}={v}: `{}` is never `{v}` (its values: {})",
                keys[i],
                values(i)
            )));
        }
        match by_key.iter_mut().find(|(j, _)| *j == i) {
            Some((_, vs)) => vs.push(v),
            None => by_key.push((i, vec![v])),
        }
    }
    let chosen: Vec<Vec<String>> =
        points.into_iter().filter(|p| by_key.iter().all(|(i, vs)| vs.iter().any(|v| same_value(&p[*i], v)))).collect();
    if chosen.is_empty() {
        return Err(ReportError::Missing(format!(
            "no sweep cell has {}",
            wanted.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" and ")
        )));
    }
    Ok(chosen)
}

/// One (variant, cell) a plot draws: a panel or a line.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Series {
    pub variant: String,
    /// The variant's place in the run, which picks its colour in every plot.
    pub variant_index: usize,
    pub point: Vec<String>,
    /// The cell's place among the run's cells.
    pub cell_index: usize,
    /// `variant · key = value`, or the shorter form [`series_label`] gives.
    pub label: String,
}

/// The (variant, cell) pairs of `data` that `opts` selects and `has` finds data for,
/// variant by variant, cells in the run's order. Variants the rows name but the manifest
/// lacks come last.
pub(crate) fn series(
    data: &RunSet,
    opts: &PlotOptions,
    row_variants: &[&str],
    has: &dyn Fn(&str, &[String]) -> bool,
) -> Result<Vec<Series>, ReportError> {
    let mut names: Vec<String> = data.variants.iter().map(|v| v.name.clone()).collect();
    let mut known: std::collections::BTreeSet<String> = names.iter().cloned().collect();
    for v in row_variants {
        if known.insert(v.to_string()) {
            names.push(v.to_string());
        }
    }
    // Each cell's place among the run's, looked up once per series: a sweep has up to
    // 10,000 cells.
    let mut cell_at: std::collections::BTreeMap<Vec<String>, usize> = std::collections::BTreeMap::new();
    for (i, p) in data.points().into_iter().enumerate() {
        cell_at.entry(p).or_insert(i);
    }
    let points = select_cells(data, &opts.cells)?;
    let chosen: Vec<(usize, &String)> =
        names.iter().enumerate().filter(|(_, n)| opts.variants.is_empty() || opts.variants.contains(n)).collect();
    let mut out = Vec::new();
    for (vi, name) in &chosen {
        backoffsim_core::run::interrupt::check()?;
        for p in &points {
            if has(name, p) {
                let cell_index = cell_at.get(p).copied().unwrap_or(0);
                out.push(Series {
                    variant: (*name).clone(),
                    variant_index: *vi,
                    point: p.clone(),
                    cell_index,
                    label: String::new(),
                });
            }
        }
    }
    let one_variant = out.iter().all(|s| out.first().is_some_and(|f| f.variant == s.variant));
    for s in &mut out {
        s.label = series_label(&s.variant, &cell_label(&data.sweep_keys, &s.point), one_variant);
    }
    Ok(out)
}

/// What a figure that shows `shown` of `total` (variant, cell) pairs says about the rest.
pub(crate) fn omitted_note(shown: usize, total: usize, what: &str) -> Option<String> {
    (shown < total).then(|| format!("{shown} of {total} {what} shown (others: --cell, --variant)"))
}

#[cfg(test)]
mod cell_tests {
    use super::*;

    #[test]
    fn short_keys_drop_the_dotted_prefix_only_where_the_last_segment_is_unique() {
        let keys = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(short_keys(&keys(&["grpc.backoff.max_backoff", "tcp.window"])), ["max_backoff", "window"]);
        assert_eq!(
            short_keys(&keys(&["path.forward.loss", "path.reverse.loss"])),
            keys(&["path.forward.loss", "path.reverse.loss"])
        );
        assert_eq!(cell_label(&keys(&["grpc.backoff.max_backoff"]), &keys(&["30s"])), "max_backoff = 30s");
        assert_eq!(cell_label(&[], &[]), "");
    }

    #[test]
    fn series_labels_name_the_variant_only_when_there_are_several() {
        assert_eq!(series_label("base", "max_backoff = 30s", true), "max_backoff = 30s");
        assert_eq!(series_label("jitter", "max_backoff = 30s", false), "jitter · max_backoff = 30s");
        assert_eq!(series_label("linux", "", false), "linux");
    }

    #[test]
    fn swept_values_match_when_written_differently() {
        assert!(same_value("30s", "30 s"));
        assert!(same_value("0.5min", "30s"));
        assert!(same_value("0.50", "0.5"));
        assert!(!same_value("10s", "100s"));
    }
}
