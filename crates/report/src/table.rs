//! A CSV file of a run, read by column name (so added columns do not break old readers),
//! with every number checked as it is taken: what a run writes is finite, and counts and
//! indices are whole numbers, so anything else is a damaged or foreign file and is refused
//! naming its file, line and column, never drawn.

use std::path::Path;

use super::ReportError;

pub struct Table {
    pub file: String,
    pub headers: Vec<String>,
    rows: Vec<csv::StringRecord>,
}

/// A CSV reader's error in the words of the other file errors: the line first.
fn csv_problem(e: &csv::Error) -> String {
    match e.kind() {
        csv::ErrorKind::UnequalLengths { pos: Some(pos), expected_len, len } => {
            format!("line {}: has {len} fields, the header has {expected_len}", pos.line())
        }
        csv::ErrorKind::Utf8 { pos: Some(pos), .. } => format!("line {}: not UTF-8 text", pos.line()),
        _ => e.to_string(),
    }
}

/// The number a cell's text stands for: the one parse every numeric cell goes through,
/// so what a run hands the report in memory can be the same `f64` a reader gets.
pub fn number(text: &str) -> Result<f64, std::num::ParseFloatError> {
    text.parse()
}

impl Table {
    pub fn read(path: &Path) -> Result<Table, ReportError> {
        let file = path.display().to_string();
        let bad = |e: csv::Error| ReportError::Bad { file: file.clone(), why: csv_problem(&e) };
        let mut r = csv::Reader::from_path(path).map_err(bad)?;
        let mut headers: Vec<String> = r.headers().map_err(bad)?.iter().map(str::to_string).collect();
        // A spreadsheet saving the file again may put a byte-order mark before it.
        if let Some(first) = headers.first_mut() {
            *first = backoffsim_core::input::strip_bom(first).to_string();
        }
        let rows = r.records().collect::<Result<Vec<_>, _>>().map_err(bad)?;
        Ok(Table { file, headers, rows })
    }

    pub fn row_count(&self) -> usize {
        self.rows.len()
    }

    pub fn col(&self, name: &str) -> Result<usize, ReportError> {
        self.headers
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| ReportError::Bad { file: self.file.clone(), why: format!("no column `{name}`") })
    }

    /// The file's line of a row: the reader's own count, which a quoted field spanning
    /// lines moves on.
    pub fn line(&self, row: usize) -> u64 {
        self.rows[row].position().map_or(row as u64 + 2, |p| p.line())
    }

    /// A problem with the value at `row`, `col`.
    pub fn bad(&self, row: usize, col: usize, problem: &str) -> ReportError {
        ReportError::Bad {
            file: self.file.clone(),
            why: format!("line {}, column `{}`: {problem}", self.line(row), self.headers[col]),
        }
    }

    /// A finite number, or `None` for an empty cell: a run leaves a value it could not
    /// compute empty and writes no NaN or infinity.
    pub fn num(&self, row: usize, col: usize) -> Result<Option<f64>, ReportError> {
        let s = self.str(row, col).trim();
        if s.is_empty() {
            return Ok(None);
        }
        match number(s) {
            Ok(v) if v.is_finite() => Ok(Some(v)),
            Ok(_) => Err(self.bad(
                row,
                col,
                &format!("`{s}` is not a finite number (a run leaves a value it could not compute empty)"),
            )),
            Err(_) => Err(self.bad(row, col, &format!("`{s}` is not a number"))),
        }
    }

    /// A finite number that must be there.
    pub fn req(&self, row: usize, col: usize) -> Result<f64, ReportError> {
        self.num(row, col)?.ok_or_else(|| ReportError::Bad {
            file: self.file.clone(),
            why: format!("line {}, column `{}` is empty", self.line(row), self.headers[col]),
        })
    }

    /// A finite number from 0 to `max`, or `None` for an empty cell; `what` says what
    /// the bound is in the message.
    pub fn within(&self, row: usize, col: usize, max: f64, what: &str) -> Result<Option<f64>, ReportError> {
        let text = self.str(row, col).trim();
        match self.num(row, col)? {
            Some(v) if v < 0.0 => Err(self.bad(row, col, &format!("`{text}` is negative: expected zero or more"))),
            Some(v) if v > max => Err(self.bad(row, col, &format!("`{text}` is beyond {what}"))),
            v => Ok(v),
        }
    }

    /// A finite number from 0 to `max` that must be there.
    pub fn req_within(&self, row: usize, col: usize, max: f64, what: &str) -> Result<f64, ReportError> {
        self.req(row, col)?;
        Ok(self.within(row, col, max, what)?.unwrap_or_default())
    }

    /// A count or an index: a whole number from 0 to `max`.
    pub fn whole(&self, row: usize, col: usize, max: u64) -> Result<u64, ReportError> {
        let s = self.str(row, col).trim();
        if s.is_empty() {
            return Err(self.bad(row, col, "is empty: expected a whole number"));
        }
        match s.parse::<u64>() {
            Ok(v) if v <= max => Ok(v),
            Ok(v) => Err(self.bad(row, col, &format!("{v} is beyond {max}, the most it can be here"))),
            Err(_) => Err(self.bad(row, col, &format!("`{s}` is not a whole number (0 or more)"))),
        }
    }

    pub fn str(&self, row: usize, col: usize) -> &str {
        self.rows[row].get(col).unwrap_or("")
    }

    /// The columns of the sweep keys (`None` where this table lacks one).
    pub fn cols(&self, keys: &[String]) -> Vec<Option<usize>> {
        keys.iter().map(|k| self.headers.iter().position(|h| h == k)).collect()
    }

    /// The sweep cell of a row, by the columns [`Table::cols`] found.
    pub fn point(&self, row: usize, cols: &[Option<usize>]) -> Vec<String> {
        cols.iter().map(|c| c.map(|c| self.str(row, c).to_string()).unwrap_or_default()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(body: &str) -> (tempfile::TempDir, Table) {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("t.csv");
        std::fs::write(&path, body).unwrap();
        let t = Table::read(&path).unwrap();
        (tmp, t)
    }

    #[test]
    fn non_finite_numbers_are_refused_and_empty_cells_are_none() {
        let (_tmp, t) = table("a,b\n1.5,\nnan,inf\n-inf,x\n");
        assert_eq!(t.num(0, 0).unwrap(), Some(1.5));
        assert_eq!(t.num(0, 1).unwrap(), None);
        for (row, col, text) in [(1, 0, "nan"), (1, 1, "inf"), (2, 0, "-inf")] {
            let e = t.num(row, col).unwrap_err().to_string();
            assert!(
                e.contains(&format!("line {}, column ", row + 2))
                    && e.contains(&format!("`{text}` is not a finite number")),
                "{e}"
            );
        }
        assert!(t.num(2, 1).unwrap_err().to_string().contains("`x` is not a number"));
    }

    #[test]
    fn bounds_and_whole_numbers_name_the_line_and_column() {
        let (_tmp, t) = table("time_s,n\n-1,3.5\n1e300,-2\n5,7\n");
        let e = t.within(0, 0, 60.0, "the horizon (60 s)").unwrap_err().to_string();
        assert!(e.ends_with("line 2, column `time_s`: `-1` is negative: expected zero or more"), "{e}");
        let e = t.req_within(1, 0, 60.0, "the horizon (60 s)").unwrap_err().to_string();
        assert!(e.ends_with("line 3, column `time_s`: `1e300` is beyond the horizon (60 s)"), "{e}");
        assert_eq!(t.req_within(2, 0, 60.0, "").unwrap(), 5.0);
        assert!(t.whole(0, 1, 10).unwrap_err().to_string().contains("`3.5` is not a whole number"));
        assert!(t.whole(1, 1, 10).unwrap_err().to_string().contains("`-2` is not a whole number"));
        assert!(t.whole(2, 1, 6).unwrap_err().to_string().contains("7 is beyond 6"));
        assert_eq!(t.whole(2, 1, 7).unwrap(), 7);
    }

    #[test]
    fn a_byte_order_mark_before_the_header_is_no_part_of_the_first_column() {
        let (_tmp, t) = table("\u{feff}variant,metric\nbase,x\n");
        assert_eq!(t.col("variant").unwrap(), 0);
    }
}
