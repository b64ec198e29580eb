//! The reference listings (`keys`, `presets`, `metrics`) on stdout, as the terminal
//! tables are: columns padded to their widest cell, the last column, a sentence, left free.

use std::io::Write;

use super::CliError;

/// Prints `rows` (a header first) with [`backoffsim_report::output::terminal::aligned`].
pub fn print<R: AsRef<[String]>>(rows: &[R]) -> Result<(), CliError> {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    backoffsim_report::output::terminal::aligned(&mut out, rows)
        .and_then(|()| out.flush())
        .map_err(CliError::from_stdout)
}
