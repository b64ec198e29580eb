//! "Did you mean": the one place every name a user types (a scenario key, a preset, a
//! profile, a metric id, a plot kind, a variant, a sweep key, a `keys` section) finds
//! its nearest known name, so that every typo gets the same kind of help.

/// Lists of at most this many names are shown whole after an unknown one; longer ones
/// would bury the suggestion, so a command that lists them is named instead.
pub const SHORT_LIST: usize = 16;

/// The candidate a user most likely meant by `word`, if any is close enough to be a typo:
///
/// - by edit distance (Levenshtein's, with a swap of two neighbours counted as one edit:
///   `tiemout`), at most one edit for short words and a third of the letters for longer
///   ones, ignoring case and whether words are joined by `-` or `_` (`grpc_go`);
/// - else the one candidate whose words include all of `word`'s (`grpc-go` for
///   `grpc-connection-go`), which an edit distance finds too far.
pub fn nearest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let candidates: Vec<&'a str> = candidates.into_iter().collect();
    let key = normal(word);
    let limit = (word.chars().count() / 3).max(1);
    let close = candidates
        .iter()
        .map(|&c| (strsim::osa_distance(&key, &normal(c)), c))
        .filter(|&(d, _)| d <= limit)
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c);
    if close.is_some() {
        return close;
    }
    let words: Vec<&str> = key.split('-').filter(|w| !w.is_empty()).collect();
    if words.len() < 2 {
        return None;
    }
    let mut holding = candidates.iter().filter(|c| {
        let theirs = normal(c);
        let theirs: Vec<&str> = theirs.split('-').collect();
        words.iter().all(|w| theirs.contains(w))
    });
    match (holding.next(), holding.next()) {
        (Some(&only), None) => Some(only),
        _ => None,
    }
}

/// Lower case, words joined by `-`: how two spellings of one name compare.
fn normal(word: &str) -> String {
    word.to_lowercase().replace('_', "-")
}

/// "unknown `what` `word`; did you mean `x`?", followed by the known names when there
/// are few enough to read (else by `where_listed`, e.g. "`backoffsim presets` lists them").
pub fn unknown<'a>(
    what: &str,
    word: &str,
    known: impl IntoIterator<Item = &'a str>,
    where_listed: Option<&str>,
) -> String {
    let known: Vec<&str> = known.into_iter().collect();
    let mut s = format!("unknown {what} `{word}`");
    if let Some(m) = nearest(word, known.iter().copied()) {
        s += &format!("; did you mean `{m}`?");
    }
    if known.len() <= SHORT_LIST || where_listed.is_none() {
        s += &format!(" (known: {})", known.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", "));
    }
    if let Some(w) = where_listed {
        s += &format!("; {w}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_within_a_third_of_the_letters_are_matched_osa_distance() {
        let keys = ["clients", "timeout", "tiers"];
        assert_eq!(nearest("timout", keys), Some("timeout"));
        assert_eq!(nearest("tiemout", keys), Some("timeout"), "a swap is one edit (optimal string alignment)");
        assert_eq!(nearest("banana", keys), None);
        assert_eq!(strsim::osa_distance("kitten", "sitting"), 3);
    }

    #[test]
    fn case_and_underscores_do_not_count_as_edits() {
        assert_eq!(nearest("grpc_go", ["spec", "grpc-core", "grpc-go", "grpc-java"]), Some("grpc-go"));
        assert_eq!(nearest("GRPC-Java", ["spec", "grpc-core", "grpc-go", "grpc-java"]), Some("grpc-java"));
    }

    #[test]
    fn a_name_whose_words_a_longer_one_holds_points_to_it_when_only_one_does() {
        let names = ["grpc-connection-go", "grpc-connection-java", "grpc-retry"];
        assert_eq!(nearest("grpc-go", names), Some("grpc-connection-go"));
        assert_eq!(nearest("connection-grpc", names), None, "two hold both words: no guess");
        assert_eq!(nearest("go", names), None, "one word alone is no evidence");
    }

    #[test]
    fn unknown_names_say_what_they_are_suggest_and_list_the_short_lists() {
        let m = unknown("plot kind", "rtto", ["rto", "cdf"], None);
        assert_eq!(m, "unknown plot kind `rtto`; did you mean `rto`? (known: `rto`, `cdf`)");
        let many: Vec<String> = (0..40).map(|i| format!("metric{i}")).collect();
        let m = unknown("metric", "zzz", many.iter().map(String::as_str), Some("`backoffsim metrics` lists them"));
        assert_eq!(m, "unknown metric `zzz`; `backoffsim metrics` lists them");
    }
}
