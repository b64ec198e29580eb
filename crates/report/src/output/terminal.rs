//! Summaries as tables a person reads in a terminal: `run` and `merge` print one,
//! `compare` prints one across runs. Numbers are rounded and grouped by thousands here
//! only; the CSV and JSON a program reads keep plain full-precision numbers.

use std::collections::BTreeMap;
use std::io::Write;

/// What a table's `a ± b` means, said in its header.
pub const PLUS_MINUS: &str = "mean ± half-width of the 95 % interval";

/// What a table shows where a column has no value: a mark, so that columns never shift.
pub const MISSING: &str = "—";

/// One value of a table: a mean over replications and its 95 % interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Value {
    pub mean: f64,
    pub ci95: Option<(f64, f64)>,
}

impl Value {
    /// `1,234 ± 5.6`, or the mean alone without an interval (one replication).
    pub fn text(&self) -> String {
        match self.ci95 {
            Some((lo, hi)) => format!("{} ± {}", number(self.mean), number((hi - lo) / 2.0)),
            None => number(self.mean),
        }
    }
}

/// Four significant digits (enough to read, not so many that columns explode), the
/// whole part in groups of three: `1,234,567`, `0.1235`.
pub fn number(v: f64) -> String {
    grouped(&format!("{v:.0$}", backoffsim_core::human::decimals(v, 4)))
}

/// A plain decimal number with commas between groups of three digits of its whole part.
pub fn grouped(plain: &str) -> String {
    let (sign, rest) = plain.strip_prefix('-').map_or(("", plain), |r| ("-", r));
    let (whole, fraction) = rest.split_once('.').map_or((rest, None), |(w, f)| (w, Some(f)));
    if !whole.bytes().all(|b| b.is_ascii_digit()) {
        return plain.to_string();
    }
    let mut out = String::from(sign);
    for (i, c) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if let Some(f) = fraction {
        out.push('.');
        out.push_str(f);
    }
    out
}

/// Writes `lines` as columns padded to their widest cell, two spaces apart; the last
/// column is not padded, so no line ends in spaces.
pub fn aligned<L: AsRef<[String]>>(w: &mut impl Write, lines: &[L]) -> std::io::Result<()> {
    let widths = widths(lines);
    for line in lines {
        let line = line.as_ref();
        let mut text = String::new();
        for (i, cell) in line.iter().enumerate() {
            if i > 0 {
                text.push_str("  ");
            }
            text.push_str(cell);
            if i + 1 < line.len() {
                text.extend(std::iter::repeat_n(' ', widths[i] - cell.chars().count()));
            }
        }
        writeln!(w, "{}", text.trim_end())?;
    }
    Ok(())
}

/// One row of the long layout: a metric of a variant in a sweep cell.
pub struct LongRow<'a> {
    pub variant: &'a str,
    pub point: &'a [String],
    pub metric: &'a str,
    pub unit: &'a str,
    /// `None` where no replication had a value.
    pub value: Option<Value>,
}

/// The long layout: a row per variant, sweep cell and metric, one column per swept key
/// after the variant so that the cells of a sweep can be told apart.
pub fn long(w: &mut impl Write, sweep_keys: &[String], rows: &[LongRow<'_>]) -> std::io::Result<()> {
    let mut header = vec!["variant".to_string()];
    header.extend(sweep_keys.iter().cloned());
    header.extend(["metric".to_string(), PLUS_MINUS.to_string(), "unit".to_string()]);
    let mut lines = vec![header];
    for r in rows {
        let mut line = vec![r.variant.to_string()];
        line.extend(r.point.iter().cloned());
        line.extend([
            r.metric.to_string(),
            r.value.as_ref().map_or_else(|| MISSING.to_string(), Value::text),
            r.unit.to_string(),
        ]);
        lines.push(line);
    }
    aligned(w, &lines)
}

/// The wide layout: a row per metric (and sweep cell), a column per variant, and a
/// `best` column when one is given.
pub struct Wide {
    /// The swept keys, each a column between the metric and its unit.
    pub keys: Vec<String>,
    pub columns: Vec<String>,
    pub rows: Vec<WideRow>,
    /// Whether the table ends in a `best` column.
    pub ranked: bool,
}

pub struct WideRow {
    pub metric: String,
    pub point: Vec<String>,
    pub unit: String,
    /// One per column, `None` where that variant has no value.
    pub cells: Vec<Option<Value>>,
    pub best: String,
}

impl Wide {
    /// Gathers `(variant, point, metric, unit, value)` entries into rows: the metrics in
    /// the order they first appear, each metric's cells in the order they first appear,
    /// and a value in its variant's column whatever other variants measure.
    pub fn of<'a>(
        keys: &[String],
        columns: &[String],
        entries: impl IntoIterator<Item = (&'a str, &'a [String], &'a str, &'a str, Option<Value>)>,
    ) -> Wide {
        let column: BTreeMap<&str, usize> = columns.iter().enumerate().map(|(i, c)| (c.as_str(), i)).collect();
        let mut metric_at: BTreeMap<&str, usize> = BTreeMap::new();
        let mut point_at: BTreeMap<&[String], usize> = BTreeMap::new();
        let mut row_at: BTreeMap<(usize, usize), usize> = BTreeMap::new();
        let mut rows: Vec<WideRow> = Vec::new();
        for (variant, point, metric, unit, value) in entries {
            let Some(&c) = column.get(variant) else { continue };
            let next = metric_at.len();
            let m = *metric_at.entry(metric).or_insert(next);
            let next = point_at.len();
            let p = *point_at.entry(point).or_insert(next);
            let r = *row_at.entry((m, p)).or_insert_with(|| {
                rows.push(WideRow {
                    metric: metric.to_string(),
                    point: point.to_vec(),
                    unit: unit.to_string(),
                    cells: vec![None; columns.len()],
                    best: String::new(),
                });
                rows.len() - 1
            });
            if let Some(value) = value {
                rows[r].cells[c].get_or_insert(value);
            }
        }
        // Grouped by metric, each metric's cells in the order of their first appearance.
        let mut order: Vec<((usize, usize), usize)> = row_at.into_iter().collect();
        order.sort_unstable();
        let mut rows: Vec<Option<WideRow>> = rows.into_iter().map(Some).collect();
        let rows = order.into_iter().filter_map(|(_, i)| rows[i].take()).collect();
        Wide { keys: keys.to_vec(), columns: columns.to_vec(), rows, ranked: false }
    }

    /// Writes the table: over the variants' columns a line saying what `±` is, then the
    /// header and a line per row.
    pub fn write(&self, w: &mut impl Write) -> std::io::Result<()> {
        let lead = 2 + self.keys.len();
        let mut header = vec!["metric".to_string()];
        header.extend(self.keys.iter().cloned());
        header.push("unit".to_string());
        header.extend(self.columns.iter().cloned());
        if self.ranked {
            header.push("best".to_string());
        }
        let mut lines = vec![header];
        for r in &self.rows {
            let mut line = vec![r.metric.clone()];
            line.extend(r.point.iter().map(|p| if p.is_empty() { MISSING.to_string() } else { p.clone() }));
            line.push(r.unit.clone());
            line.extend(r.cells.iter().map(|c| c.map_or(MISSING.to_string(), |v| v.text())));
            if self.ranked {
                line.push(r.best.clone());
            }
            lines.push(line);
        }
        // The line over the variants is not one of the aligned lines: it may be wider
        // than their columns, and would widen the first of them.
        writeln!(w, "{}{PLUS_MINUS}:", " ".repeat(column_start(&lines, lead)))?;
        aligned(w, &lines)
    }
}

/// The width of each column of `lines`: its widest cell.
fn widths<L: AsRef<[String]>>(lines: &[L]) -> Vec<usize> {
    let columns = lines.iter().map(|l| l.as_ref().len()).max().unwrap_or(0);
    (0..columns)
        .map(|i| lines.iter().filter_map(|l| l.as_ref().get(i)).map(|c| c.chars().count()).max().unwrap_or(0))
        .collect()
}

/// Where column `i` starts in the lines [`aligned`] writes.
fn column_start(lines: &[Vec<String>], i: usize) -> usize {
    widths(lines).iter().take(i).map(|w| w + 2).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_parts_are_grouped_by_thousands_and_fractions_are_not() {
        assert_eq!(number(1_234_567.0), "1,234,567");
        assert_eq!(number(-1_234_567.25), "-1,234,567");
        assert_eq!(number(1234.6), "1,235");
        assert_eq!(number(999.0), "999.0");
        assert_eq!(number(0.123456), "0.1235");
        assert_eq!(grouped("12345.6789"), "12,345.6789");
        assert_eq!(grouped("100"), "100");
        assert_eq!(grouped("inf"), "inf");
    }

    #[test]
    fn a_value_is_its_mean_and_the_half_width_of_its_interval() {
        let v = Value { mean: 20_000.0, ci95: Some((19_000.0, 21_000.0)) };
        assert_eq!(v.text(), "20,000 ± 1,000");
        assert_eq!(Value { mean: 2.5, ci95: None }.text(), "2.500");
    }

    #[test]
    fn variants_with_different_metrics_keep_each_value_in_its_own_column() {
        let none: &[String] = &[];
        let v = |mean| Value { mean, ci95: None };
        let columns = ["a".to_string(), "b".to_string()];
        // `b` has no `x`, and `y` appears first in `b`.
        let wide = Wide::of(
            &[],
            &columns,
            [
                ("a", none, "x", "s", Some(v(1.0))),
                ("b", none, "y", "count", Some(v(2.0))),
                ("a", none, "y", "count", Some(v(3.0))),
            ],
        );
        let mut out = Vec::new();
        wide.write(&mut out).unwrap();
        let out = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 4, "{out}");
        assert!(lines[0].trim_start().starts_with(PLUS_MINUS), "{out}");
        let at = |line: &str, word: &str| line.find(word).unwrap();
        assert_eq!(at(lines[2], "1.000"), at(lines[1], "a"), "{out}");
        assert_eq!(at(lines[2], "—"), at(lines[1], "b"), "{out}");
        assert_eq!(at(lines[3], "3.000"), at(lines[1], "a"), "{out}");
        assert_eq!(at(lines[3], "2.000"), at(lines[1], "b"), "{out}");
        assert_eq!(at(lines[0], "mean"), at(lines[1], "a"), "the ± legend stands over the variants");
    }
}
