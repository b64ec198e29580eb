//! Diagnostics for scenario files: every error names the file, line, column and key,
//! and shows the offending line, so a user can fix it without reading the source.

use std::fmt;
use std::ops::Range;

use crate::input::{escaped, visible};

/// One problem in a scenario file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub file: String,
    /// 1-based; 0 when the problem has no place in the file (e.g. it cannot be read).
    pub line: usize,
    /// 1-based, in characters.
    pub column: usize,
    /// Dotted key path, e.g. `tcp.rto.max_rto` or `variant[1].path.loss.p`; empty for
    /// syntax errors.
    pub key: String,
    pub message: String,
    /// The source line (or the part of a long one around the span), the caret's column
    /// in it and the width of the marked span, for the caret display.
    /// Both numbers are at most `SNIPPET_MAX + 1`; `u32` keeps the `Err` of every
    /// loader function small.
    snippet: Option<(String, u32, u32)>,
}

/// Where each line of a source starts, so that placing a diagnostic is a binary search
/// rather than a count of the newlines before it: a file with a hundred thousand bad
/// entries gets its hundred thousand places in one pass over the text.
pub struct Lines {
    /// Byte offsets of the first byte of every line, the first being 0.
    starts: Vec<usize>,
}

impl Lines {
    pub fn new(source: &str) -> Self {
        let starts = std::iter::once(0).chain(source.match_indices('\n').map(|(i, _)| i + 1)).collect();
        Lines { starts }
    }

    /// The 1-based line of byte offset `at`, and the offset its line starts at.
    fn of(&self, at: usize) -> (usize, usize) {
        let line = self.starts.partition_point(|&s| s <= at);
        (line, self.starts[line - 1])
    }
}

impl Diagnostic {
    /// A diagnostic at a byte span of `source`.
    pub fn at(file: &str, source: &str, span: Option<Range<usize>>, key: &str, message: &str) -> Self {
        match span {
            Some(_) => Diagnostic::within(file, source, &Lines::new(source), span, key, message),
            None => Diagnostic::within(file, source, &Lines { starts: vec![0] }, None, key, message),
        }
    }

    /// A diagnostic at a byte span of `source`, whose lines `lines` has indexed.
    pub fn within(
        file: &str,
        source: &str,
        lines: &Lines,
        span: Option<Range<usize>>,
        key: &str,
        message: &str,
    ) -> Self {
        let (line, column, snippet) = match span {
            Some(span) => {
                let start = span.start.min(source.len());
                let (line, line_start) = lines.of(start);
                let column = source[line_start..start].chars().count() + 1;
                let text = source[line_start..].lines().next().unwrap_or("");
                let end = span.end.clamp(start, source.len());
                let width = source[start..end].lines().next().map_or(1, |l| l.chars().count().max(1));
                (line, column, Some(excerpt(text, column, width)))
            }
            None => (0, 0, None),
        };
        Diagnostic { file: file.to_string(), line, column, key: key.to_string(), message: message.to_string(), snippet }
    }
}

/// Characters of a source line shown around the marked span: a line of a megabyte (a
/// long `[sweep]` list) is neither worth showing nor worth copying into every cell's error.
const SNIPPET_BEFORE: usize = 40;
const SNIPPET_MAX: usize = 160;

/// The line, caret column and width to show for a span at `column` of `line`: the line
/// itself when short, else a window around the span marked `…` where it was cut.
fn excerpt(line: &str, column: usize, width: usize) -> (String, u32, u32) {
    let chars = line.chars().count();
    let small = |n: usize| n.min(SNIPPET_MAX + 1) as u32;
    if chars <= SNIPPET_MAX {
        return (line.to_string(), small(column), small(width));
    }
    let from = (column - 1).saturating_sub(SNIPPET_BEFORE);
    let shown: String = line.chars().skip(from).take(SNIPPET_MAX).collect();
    let (lead, caret) = if from > 0 { ("…", column - from + 1) } else { ("", column) };
    let tail = if from + SNIPPET_MAX < chars { "…" } else { "" };
    let width = width.min(SNIPPET_MAX + 1 - (caret - lead.chars().count()));
    (format!("{lead}{shown}{tail}"), small(caret), small(width))
}

impl Diagnostic {
    /// The first line alone: place, key and message.
    /// What comes from the file (its name, a key, a value quoted in the message) is
    /// shown with its control characters escaped.
    pub fn headline(&self) -> String {
        let mut s = escaped(&self.file).into_owned();
        if self.line > 0 {
            s.push_str(&format!(":{}:{}", self.line, self.column));
        }
        if !self.key.is_empty() {
            s.push_str(&format!(": key `{}`", escaped(&self.key)));
        }
        s.push_str(&format!(": {}", escaped(&self.message)));
        s
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.headline())?;
        if let Some((text, caret, width)) = &self.snippet {
            let gutter = self.line.to_string().len();
            writeln!(f)?;
            writeln!(f, "{:gutter$} |", "")?;
            // One visible character for each control one keeps the caret under its span.
            let text: String = text.chars().map(visible).collect();
            writeln!(f, "{} | {}", self.line, text)?;
            write!(f, "{:gutter$} | {}{}", "", " ".repeat(*caret as usize - 1), "^".repeat(*width as usize))?;
        }
        Ok(())
    }
}

/// All problems found in one scenario file. Loading reports as many as it can at once,
/// so a user fixes a file in one pass rather than one error per run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    pub diagnostics: Vec<Diagnostic>,
}

impl ScenarioError {
    pub fn single(d: Diagnostic) -> Self {
        ScenarioError { diagnostics: vec![d] }
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Every problem, yet about one screen: the first few with their source line, the
        // next ones on a line each, and only then a count.
        const WITH_SOURCE: usize = 5;
        const ONE_LINE: usize = 15;
        for (i, d) in self.diagnostics.iter().take(WITH_SOURCE + ONE_LINE).enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            if i < WITH_SOURCE { write!(f, "{d}")? } else { write!(f, "{}", d.headline())? }
        }
        if self.diagnostics.len() > WITH_SOURCE + ONE_LINE {
            write!(f, "\n… and {} more problems", self.diagnostics.len() - WITH_SOURCE - ONE_LINE)?;
        }
        Ok(())
    }
}

impl std::error::Error for ScenarioError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locates_line_and_column_and_draws_a_caret() {
        let src = "a = 1\n[tcp]\nwindow = \"x\"\n";
        let start = src.find("\"x\"").unwrap();
        let d = Diagnostic::at("f.toml", src, Some(start..start + 3), "tcp.window", "expected an integer");
        assert_eq!((d.line, d.column), (3, 10));
        let shown = d.to_string();
        assert!(shown.starts_with("f.toml:3:10: key `tcp.window`: expected an integer"), "{shown}");
        assert!(shown.contains("3 | window = \"x\""), "{shown}");
        assert!(shown.ends_with("|          ^^^"), "{shown}");
    }

    #[test]
    fn many_problems_are_all_listed_the_later_ones_on_one_line_each() {
        let src = "a = 1\n";
        let d = |i: usize| Diagnostic::at("f.toml", src, Some(0..1), &format!("k{i}"), "bad");
        let shown = ScenarioError { diagnostics: (0..30).map(d).collect() }.to_string();
        for i in 0..20 {
            assert!(shown.contains(&format!("key `k{i}`: bad")), "k{i} missing:\n{shown}");
        }
        assert_eq!(shown.matches("1 | a = 1").count(), 5, "{shown}");
        assert!(shown.ends_with("… and 10 more problems"), "{shown}");
        assert_eq!(shown.lines().count(), 5 * 4 + 15 + 1, "{shown}");
    }

    #[test]
    fn a_long_line_is_shown_as_a_window_around_the_span_with_the_caret_under_it() {
        let src = format!("a = [{}]\n", (0..1000).map(|i| i.to_string()).collect::<Vec<_>>().join(", "));
        let start = src.find(" 500,").unwrap() + 1;
        let d = Diagnostic::at("f.toml", &src, Some(start..start + 3), "a", "bad");
        assert_eq!((d.line, d.column), (1, start + 1), "the column is still the line's");
        let shown = d.to_string();
        let lines: Vec<&str> = shown.lines().collect();
        assert!(lines[2].len() < 200, "{shown}");
        assert!(lines[2].starts_with("1 | …") && lines[2].ends_with('…'), "{shown}");
        let caret = lines[3].find('^').unwrap();
        let under: String = lines[2].chars().skip(caret).take(3).collect();
        assert_eq!(under, "500", "{shown}");
        assert!(lines[3].ends_with(" ^^^"), "{shown}");
    }

    #[test]
    fn a_long_span_is_marked_to_the_end_of_the_window() {
        let src = format!("a = \"{}\"\n", "x".repeat(1000));
        let d = Diagnostic::at("f.toml", &src, Some(4..src.len() - 1), "a", "bad");
        let shown = d.to_string();
        let lines: Vec<&str> = shown.lines().collect();
        assert_eq!(lines[2].chars().count(), "1 | ".len() + SNIPPET_MAX + 1, "{shown}");
        assert_eq!(lines[3].chars().count(), lines[2].chars().count() - 1, "{shown}");
    }

    #[test]
    fn control_characters_are_escaped_in_the_headline_and_pictured_in_the_source_line() {
        let src = "name = \"a\u{1b}[2Jb\"\n";
        let d = Diagnostic::at("f\u{7}.toml", src, Some(7..src.len() - 1), "x\u{1b}", "`a\u{1b}[2Jb` is bad");
        let shown = d.to_string();
        assert!(!shown.chars().any(|c| c.is_control() && c != '\n'), "{shown:?}");
        assert!(shown.starts_with("f\\u{7}.toml:1:8: key `x\\u{1b}`: `a\\u{1b}[2Jb` is bad"), "{shown}");
        let lines: Vec<&str> = shown.lines().collect();
        assert_eq!(lines[2], "1 | name = \"a\u{241b}[2Jb\"");
        assert_eq!(lines[3], "  |        ^^^^^^^^");
    }

    #[test]
    fn the_line_index_places_every_offset_where_counting_newlines_does() {
        let src = "a = 1\n\n[tcp] # é\nwindow = \"ü\"\n\nlast";
        let lines = Lines::new(src);
        for (at, _) in src.char_indices().chain([(src.len(), ' ')]) {
            let before = &src[..at];
            let line = before.matches('\n').count() + 1;
            let column = before[before.rfind('\n').map_or(0, |i| i + 1)..].chars().count() + 1;
            let d = Diagnostic::within("f.toml", src, &lines, Some(at..at), "k", "m");
            assert_eq!((d.line, d.column), (line, column), "offset {at}");
        }
    }

    #[test]
    fn without_a_span_names_only_the_file() {
        let d = Diagnostic::at("f.toml", "", None, "", "cannot read the file");
        assert_eq!(d.to_string(), "f.toml: cannot read the file");
    }
}
