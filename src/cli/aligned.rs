//! The reference listings (`keys`, `presets`, `metrics`) as people read them in a
//! terminal: columns padded to their widest cell, the last column, a sentence, left free.

use std::io::Write;

use super::CliError;

/// Prints `rows` (a header first) with every column but the last padded to its widest
/// cell and two spaces between columns.
pub fn print<R: AsRef<[String]>>(rows: &[R]) -> Result<(), CliError> {
    let last = rows.first().map_or(0, |r| r.as_ref().len().saturating_sub(1));
    let widths: Vec<usize> =
        (0..last).map(|i| rows.iter().map(|r| r.as_ref()[i].chars().count()).max().unwrap_or(0)).collect();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for r in rows {
        let r = r.as_ref();
        let mut line = String::new();
        for (cell, width) in r.iter().zip(&widths) {
            line += &format!("{cell:width$}  ");
        }
        line += &r[last];
        writeln!(out, "{}", line.trim_end()).map_err(CliError::from_stdout)?;
    }
    out.flush().map_err(CliError::from_stdout)
}
