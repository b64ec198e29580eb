//! What a user hands in, read with a bound and shown back safely: a scenario, a policy
//! file or a shard's scenario is read through [`read_at_most`], so a file of zeros or an
//! endless pipe is refused at a stated size instead of filling memory; [`strip_bom`]
//! takes off the byte-order mark some editors put before UTF-8 text; [`escaped`] makes
//! text from a file or the command line safe to print on a terminal.

use std::borrow::Cow;
use std::io::{self, Read};

/// The most a scenario may be, in bytes: the file, standard input, or a shard's copy.
///
/// A scenario with a 100,000-entry `[[path.blackout]]` list is about 5 MB, which leaves
/// three times as much room. Parsing holds the document as spanned tables, which take
/// far more than the text: `check` of that 5 MB file peaks at about 430 MB, and of a
/// 16 MiB one of blackouts at about 1.3 GB, so a larger bound would let a file alone
/// exhaust a small machine.
pub const SCENARIO_MAX_BYTES: u64 = 16 << 20;

/// [`SCENARIO_MAX_BYTES`] as messages say it.
pub const SCENARIO_MAX_SHOWN: &str = "16 MiB (16,777,216 bytes)";

/// What stopped a bounded read.
#[derive(Debug)]
pub enum ReadError {
    Io(io::Error),
    /// The input holds more than the bound.
    TooLarge,
}

/// All of `input` when it holds at most `limit` bytes. One byte past the limit is read
/// to tell a file of exactly `limit` bytes from a longer one, and no more, so the memory
/// used is bounded whatever `input` is (`/dev/zero`, a pipe that never ends).
pub fn read_at_most(input: impl Read, limit: u64) -> Result<Vec<u8>, ReadError> {
    let mut bytes = Vec::new();
    input.take(limit.saturating_add(1)).read_to_end(&mut bytes).map_err(ReadError::Io)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge);
    }
    Ok(bytes)
}

/// The UTF-8 byte-order mark, which Windows editors write before text and which is no
/// part of it.
pub const BOM: char = '\u{feff}';

/// `text` without a leading byte-order mark.
pub fn strip_bom(text: &str) -> &str {
    text.strip_prefix(BOM).unwrap_or(text)
}

/// `text` with every control character but the line feed written as an escape (`\u{1b}`,
/// `\t`, `\r`), so that a name or a cell from a file cannot move the cursor, recolour or
/// clear a terminal when a message shows it. Line feeds stay: messages span lines.
pub fn escaped(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if needs_escape(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

fn needs_escape(c: char) -> bool {
    c.is_control() && c != '\n'
}

/// `c` as one visible character: the Unicode control picture of a C0 control or DEL
/// (`␛` for escape), U+FFFD for any other control, `c` itself otherwise. A source line
/// shown under a caret keeps its width this way, so the caret stays under its span.
pub fn visible(c: char) -> char {
    match c {
        '\t' => c,
        '\0'..='\x1f' => char::from_u32(0x2400 + c as u32).unwrap_or(char::REPLACEMENT_CHARACTER),
        '\x7f' => '\u{2421}',
        c if c.is_control() => char::REPLACEMENT_CHARACTER,
        c => c,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_stops_one_byte_past_its_bound() {
        assert_eq!(read_at_most(&b"abcd"[..], 4).unwrap(), b"abcd");
        assert!(matches!(read_at_most(&b"abcde"[..], 4), Err(ReadError::TooLarge)));
        // An endless input is refused, not read to its end.
        assert!(matches!(read_at_most(io::repeat(0), 1 << 20), Err(ReadError::TooLarge)));
    }

    #[test]
    fn a_hundred_thousand_blackouts_fit_within_the_scenario_bound() {
        // As such a file is written: one `[[path.blackout]]` table each, times of six digits.
        let entry = "[[path.blackout]]\nat = \"123456.5s\"\nduration = \"100ms\"\n";
        let size = 100_000 * entry.len() as u64;
        assert!(size * 3 <= SCENARIO_MAX_BYTES, "{size} bytes: the bound leaves less than three times that");
    }

    #[test]
    fn a_leading_bom_is_dropped_and_one_inside_kept() {
        assert_eq!(strip_bom("\u{feff}name = 1"), "name = 1");
        assert_eq!(strip_bom("a\u{feff}"), "a\u{feff}");
    }

    #[test]
    fn control_characters_are_escaped_and_line_feeds_kept() {
        assert_eq!(escaped("tcp\u{1b}[31mred\u{7}"), "tcp\\u{1b}[31mred\\u{7}");
        assert_eq!(escaped("a\tb\rc\nd\u{9b}"), "a\\tb\\rc\nd\\u{9b}");
        assert!(matches!(escaped("plain, ünïcode"), Cow::Borrowed(_)));
        let shown: String = "a\u{1b}b\u{7f}\u{85}\t".chars().map(visible).collect();
        assert_eq!(shown, "a\u{241b}b\u{2421}\u{fffd}\t");
    }
}
