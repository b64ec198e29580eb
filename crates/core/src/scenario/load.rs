//! From TOML text to typed values, keeping every value's place in the file.
//!
//! The document is parsed once into a spanned table. A `[[variant]]` is an overlay:
//! its keys replace the base's (tables merge key by key, everything else is replaced
//! whole). Because the merge works on spanned values, a value that came from a variant
//! still points at the variant's line, and one inherited from the base at the base's
//! line, so errors found after merging land where the user wrote the value.

use std::borrow::Cow;
use std::ops::Range;

use serde::de::DeserializeOwned;
use serde_spanned::Spanned;
use toml::de::{DeTable, DeValue};

use super::diag::{Diagnostic, Lines, ScenarioError};

/// A parsed scenario document.
pub struct Document<'a> {
    pub file: &'a str,
    pub source: &'a str,
    pub root: Spanned<DeTable<'a>>,
    lines: Lines,
}

/// One `[[variant]]` entry: its position in the array and its table as written.
pub struct VariantTable<'a> {
    pub index: usize,
    pub table: Spanned<DeTable<'a>>,
}

impl<'a> Document<'a> {
    /// The document, or what stops it being read: a TOML syntax error or an empty file
    /// (the first such), or every `nan` and `inf` in it.
    pub fn parse(file: &'a str, source: &'a str) -> Result<Self, ScenarioError> {
        let single = |d| ScenarioError::single(d);
        let root = DeTable::parse(source).map_err(|e| {
            let msg = e.message().trim().replace('\n', "; ");
            single(Diagnostic::at(file, source, e.span(), "", &format!("not valid TOML: {msg}")))
        })?;
        if root.get_ref().is_empty() {
            return Err(single(Diagnostic::at(
                file,
                source,
                None,
                "",
                "the file is empty: a scenario needs at least `name`, `horizon` and a model section such as [tcp]",
            )));
        }
        let doc = Document::new(file, source, root);
        let diagnostics: Vec<Diagnostic> = non_finite(&doc.root)
            .into_iter()
            .map(|(key, span, value)| doc.diag(Some(span), &key, &non_finite_message(&value)))
            .collect();
        if !diagnostics.is_empty() {
            return Err(ScenarioError { diagnostics });
        }
        Ok(doc)
    }

    /// The document `root` parsed from `source`.
    pub fn new(file: &'a str, source: &'a str, root: Spanned<DeTable<'a>>) -> Self {
        Document { file, source, root, lines: Lines::new(source) }
    }

    pub fn diag(&self, span: Option<Range<usize>>, key: &str, message: &str) -> Diagnostic {
        Diagnostic::within(self.file, self.source, &self.lines, span, key, message)
    }

    /// Splits off the `variant` array. The base is the document without it.
    pub fn split_variants(&self) -> Result<(Spanned<DeTable<'a>>, Vec<VariantTable<'a>>), Diagnostic> {
        let mut base = self.root.clone();
        let Some(value) = base.get_mut().remove("variant") else {
            return Ok((base, Vec::new()));
        };
        let span = value.span();
        let DeValue::Array(items) = value.into_inner() else {
            return Err(self.diag(Some(span), "variant", "expected an array of tables: write each one as [[variant]]"));
        };
        let mut variants = Vec::new();
        for (index, item) in items.into_iter().enumerate() {
            let span = item.span();
            match item.into_inner() {
                DeValue::Table(t) => variants.push(VariantTable { index, table: Spanned::new(span, t) }),
                _ => {
                    return Err(self.diag(
                        Some(span),
                        &format!("variant[{index}]"),
                        "expected a table of overrides, e.g. [[variant]] name = \"linux\" followed by its keys",
                    ));
                }
            }
        }
        Ok((base, variants))
    }

    /// Deserializes `table` into `T`. `prefix` is prepended to key paths in errors.
    pub fn deserialize<T: DeserializeOwned>(&self, table: Spanned<DeTable<'a>>, prefix: &str) -> Result<T, Diagnostic> {
        self.deserialize_once(table, prefix).map_err(|e| e.diagnostic)
    }

    fn deserialize_once<T: DeserializeOwned>(
        &self,
        table: Spanned<DeTable<'a>>,
        prefix: &str,
    ) -> Result<T, Box<TypeError>> {
        let whole = table.span();
        let de = toml::de::Deserializer::from(table);
        serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            let path = if path == "." { String::new() } else { path };
            let inner = e.into_inner();
            let span = inner.span().or(Some(whole));
            let missing = missing_field(inner.message());
            let diagnostic = self.diag(span, &join(prefix, &path), &explain(inner.message()));
            Box::new(TypeError { path, missing, diagnostic })
        })
    }

    /// Deserializes `table` into `T`, reporting every type error rather than the first.
    /// Serde stops at the first bad value, so each one found is removed from a copy of the
    /// table and the rest tried again: a removed key takes its default. A required key
    /// that this makes missing is not reported (the user did write it); its table is
    /// removed in turn. At the top level, where there is no table to remove, `required`
    /// gives a stand-in for a missing required key so that the keys after it are still
    /// checked; the stand-in itself never reaches a result, since errors were found.
    pub fn deserialize_all<T: DeserializeOwned>(
        &self,
        table: Spanned<DeTable<'a>>,
        required: &dyn Fn(&str) -> Option<DeValue<'static>>,
    ) -> Result<T, Vec<Diagnostic>> {
        // Enough for any real file; bounds the work on a pathological one.
        const MAX_ERRORS: usize = 64;
        let mut table = table;
        let mut diags = Vec::new();
        let mut removed: Vec<String> = Vec::new();
        for _ in 0..MAX_ERRORS * 2 {
            let e = match self.deserialize_once::<T>(table.clone(), "") {
                Ok(value) if diags.is_empty() => return Ok(value),
                Ok(_) => break,
                Err(e) => e,
            };
            let ours = e.missing.as_ref().is_some_and(|m| removed.contains(&join(&e.path, m)));
            if !ours {
                diags.push(e.diagnostic);
                if diags.len() >= MAX_ERRORS {
                    break;
                }
            }
            if e.path.is_empty() {
                // A top-level key: put a fallback in place of a missing required one
                // (missing because the user left it out or because it was removed).
                let Some(m) = e.missing else { break };
                let Some(fallback) = required(&m) else { break };
                if table.get_ref().get(m.as_str()).is_some() {
                    break;
                }
                let span = table.span();
                table.get_mut().insert(Spanned::new(span.clone(), Cow::Owned(m)), Spanned::new(span, fallback));
                continue;
            }
            // The bad value, or the table that lacks a required key.
            if !remove(&mut table, &e.path) {
                break;
            }
            removed.push(e.path);
        }
        // Serde finds a missing key at the end of its table: show them in file order.
        diags.sort_by_key(|d| (d.line, d.column));
        Err(diags)
    }
}

/// A failed deserialization: where, and for a missing key which.
struct TypeError {
    path: String,
    missing: Option<String>,
    diagnostic: Diagnostic,
}

fn missing_field(message: &str) -> Option<String> {
    let rest = message.trim().strip_prefix("missing field `")?;
    Some(rest[..rest.find('`')?].to_string())
}

/// What is said of a `nan` or `inf` written as `value`.
pub fn non_finite_message(value: &str) -> String {
    format!(
        "`{value}` is not a number the simulator can use: every number must be finite (keys without a limit take \"none\")"
    )
}

/// Every `nan` and `inf` in the document, with its dotted key path and span, in the
/// order written. TOML writes them as plain numbers, and no key means one: a NaN
/// compares false with every bound, so it would slip past range checks written as
/// `x < min`.
pub fn non_finite(root: &Spanned<DeTable<'_>>) -> Vec<(String, Range<usize>, String)> {
    fn walk(value: &Spanned<DeValue<'_>>, key: String, out: &mut Vec<(String, Range<usize>, String)>) {
        match value.get_ref() {
            DeValue::Float(f) if !f.as_str().parse::<f64>().is_ok_and(f64::is_finite) => {
                out.push((key, value.span(), f.as_str().to_string()));
            }
            DeValue::Array(items) => {
                items.iter().enumerate().for_each(|(i, item)| walk(item, format!("{key}[{i}]"), out));
            }
            DeValue::Table(t) => t.iter().for_each(|(k, v)| walk(v, join(&key, k.get_ref()), out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    root.get_ref().iter().for_each(|(k, v)| walk(v, k.get_ref().to_string(), &mut out));
    out.sort_by_key(|(_, span, _)| span.start);
    out
}

/// Removes the value at a dotted key path (`path.rtt_change[1].at`) from `root`; false
/// when there is nothing there to remove.
pub fn remove(root: &mut Spanned<DeTable<'_>>, path: &str) -> bool {
    let parts: Vec<&str> = path.split('.').collect();
    let mut table: &mut DeTable<'_> = root.get_mut();
    for (i, part) in parts.iter().enumerate() {
        let (name, indices) = split_indices(part);
        let last = i + 1 == parts.len();
        if last && indices.is_empty() {
            return table.remove(name).is_some();
        }
        let Some(v) = table.get_mut(name) else { return false };
        let mut node: &mut DeValue<'_> = v.get_mut();
        for (j, &k) in indices.iter().enumerate() {
            let DeValue::Array(a) = node else { return false };
            if k >= a.len() {
                return false;
            }
            if last && j + 1 == indices.len() {
                *a = a.iter().enumerate().filter(|(i, _)| *i != k).map(|(_, v)| v.clone()).collect();
                return true;
            }
            node = a.as_mut()[k].get_mut();
        }
        let DeValue::Table(t) = node else { return false };
        table = t;
    }
    false
}

/// Deep-merges `over` onto `base`: tables merge key by key, any other value replaces.
pub fn merge<'a>(base: &mut DeTable<'a>, over: &DeTable<'a>) {
    for (key, value) in over.iter() {
        let existing = base.get_mut(key.get_ref().as_ref());
        match (existing, value.get_ref()) {
            (Some(slot), DeValue::Table(over_t)) if matches!(slot.get_ref(), DeValue::Table(_)) => {
                if let DeValue::Table(base_t) = slot.get_mut() {
                    merge(base_t, over_t);
                }
            }
            _ => {
                base.insert(key.clone(), value.clone());
            }
        }
    }
}

/// The span of the value at a dotted key path such as `tcp.rto.max_rto` or
/// `path.rtt_change[1].at`, or of the deepest table on the way that exists.
pub fn locate(root: &Spanned<DeTable<'_>>, path: &str) -> Range<usize> {
    let mut span = root.span();
    let mut table: Option<&DeTable<'_>> = Some(root.get_ref());
    for part in path.split('.').filter(|p| !p.is_empty()) {
        let (name, indices) = split_indices(part);
        let Some(t) = table else { break };
        let Some(v) = t.get(name) else { break };
        span = v.span();
        let mut node = Some(v.get_ref());
        for i in indices {
            match node {
                Some(DeValue::Array(a)) if i < a.len() => {
                    span = a[i].span();
                    node = Some(a[i].get_ref());
                }
                _ => return span,
            }
        }
        table = match node {
            Some(DeValue::Table(t)) => Some(t),
            _ => None,
        };
    }
    span
}

/// True when `path` names a key that `table` itself sets.
pub fn sets_key(table: &Spanned<DeTable<'_>>, path: &str) -> bool {
    let mut t: &DeTable<'_> = table.get_ref();
    let parts: Vec<&str> = path.split('.').collect();
    for (i, part) in parts.iter().enumerate() {
        let (name, indices) = split_indices(part);
        let Some(v) = t.get(name) else { return false };
        if i + 1 == parts.len() || !indices.is_empty() {
            return true;
        }
        match v.get_ref() {
            DeValue::Table(inner) => t = inner,
            _ => return true,
        }
    }
    false
}

fn split_indices(part: &str) -> (&str, Vec<usize>) {
    let name_end = part.find('[').unwrap_or(part.len());
    let indices = part[name_end..].split(['[', ']']).filter_map(|s| s.parse().ok()).collect();
    (&part[..name_end], indices)
}

pub fn join(prefix: &str, path: &str) -> String {
    match (prefix.is_empty(), path.is_empty()) {
        (true, _) => path.to_string(),
        (false, true) => prefix.to_string(),
        (false, false) => format!("{prefix}.{path}"),
    }
}

/// Serde's messages are written for programmers; say the same in a user's words.
fn explain(message: &str) -> String {
    let m = message.trim();
    if let Some(rest) = m.strip_prefix("unknown field ") {
        // `timout`, expected one of `clients`, …, `timeout`, …: the first quoted word is
        // the key written, the others the keys there are.
        let mut quoted = rest.split('`').skip(1).step_by(2);
        let suggestion = quoted.next().and_then(|key| crate::suggest::nearest(key, quoted));
        return match suggestion {
            Some(s) => format!("unknown key {rest}; did you mean `{s}`?"),
            None => format!("unknown key {rest}"),
        };
    }
    if m.starts_with("unknown variant ") {
        // A name from a fixed list (a profile, a mode): `grpc_go`, expected one of
        // `spec`, `grpc-core`, `grpc-go`, ….
        let mut quoted = m.split('`').skip(1).step_by(2);
        return match quoted.next().and_then(|word| crate::suggest::nearest(word, quoted)) {
            Some(s) => format!("{m}; did you mean `{s}`?"),
            None => m.to_string(),
        };
    }
    if let Some(rest) = m.strip_prefix("missing field ") {
        return format!("missing required key {rest}");
    }
    if let Some(rest) = m.strip_prefix("invalid type: ") {
        return format!("wrong type: {}", in_words(rest));
    }
    in_words(m)
}

/// Serde names integer types (`expected u32`); a user needs the range they allow.
fn in_words(message: &str) -> String {
    const RANGES: [(&str, &str); 5] = [
        ("expected u8", "expected a whole number from 0 to 255"),
        ("expected u16", "expected a whole number from 0 to 65535"),
        ("expected u32", "expected a whole number from 0 to 4294967295"),
        ("expected u64", "expected a whole number from 0 to 18446744073709551615"),
        ("expected f64", "expected a number"),
    ];
    RANGES
        .iter()
        .find_map(|(ty, words)| message.strip_suffix(ty).map(|head| format!("{head}{words}")))
        .unwrap_or_else(|| message.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_near_miss_key_gets_a_did_you_mean_and_a_stranger_does_not() {
        let m = |key: &str| explain(&format!("unknown field `{key}`, expected one of `clients`, `timeout`, `tiers`"));
        assert!(m("timout").ends_with("; did you mean `timeout`?"), "{}", m("timout"));
        assert!(m("tiemout").ends_with("did you mean `timeout`?"));
        assert!(m("client").ends_with("did you mean `clients`?"));
        assert!(!m("banana").contains("did you mean"), "{}", m("banana"));
        assert!(m("banana").starts_with("unknown key `banana`, expected one of `clients`"));
    }

    #[test]
    fn a_near_miss_among_a_fixed_list_of_names_gets_a_did_you_mean() {
        let m = explain("unknown variant `grpc_go`, expected one of `spec`, `grpc-core`, `grpc-go`, `grpc-java`");
        assert!(
            m.ends_with("expected one of `spec`, `grpc-core`, `grpc-go`, `grpc-java`; did you mean `grpc-go`?"),
            "{m}"
        );
        let m = explain("unknown variant `bsd`, expected `rfc6298` or `linux`");
        assert_eq!(m, "unknown variant `bsd`, expected `rfc6298` or `linux`");
    }

    #[derive(serde::Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct T {
        name: String,
        inner: Inner,
    }
    #[derive(serde::Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Inner {
        x: u32,
        #[serde(default)]
        y: u32,
    }

    #[test]
    fn variant_values_keep_their_own_lines_after_merging() {
        let src = "name = \"a\"\n[inner]\nx = 1\n[[variant]]\n[variant.inner]\nx = \"two\"\n";
        let doc = Document::parse("s.toml", src).unwrap();
        let (mut base, variants) = doc.split_variants().unwrap();
        assert_eq!(variants.len(), 1);
        merge(base.get_mut(), variants[0].table.get_ref());
        let err = doc.deserialize::<T>(base, "").unwrap_err();
        assert_eq!((err.line, err.key.as_str()), (6, "inner.x"), "{err}");
        assert!(err.message.contains("wrong type"), "{err}");
    }

    #[test]
    fn unknown_keys_are_named_with_their_place() {
        let src = "name = \"a\"\n[inner]\nx = 1\nz = 3\n";
        let doc = Document::parse("s.toml", src).unwrap();
        let err = doc.deserialize::<T>(doc.root.clone(), "").unwrap_err();
        assert_eq!(err.line, 4, "{err}");
        assert!(err.message.contains("unknown key `z`"), "{err}");
    }

    #[derive(serde::Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Many {
        name: String,
        #[serde(default)]
        inner: Option<Inner>,
        #[serde(default)]
        items: Vec<Inner>,
        #[serde(default)]
        n: u32,
    }

    fn all_errors(src: &str) -> Vec<(usize, String)> {
        let doc = Document::parse("s.toml", src).unwrap();
        let stand_in = |k: &str| (k == "name").then(|| DeValue::String(Cow::Borrowed("x")));
        match doc.deserialize_all::<Many>(doc.root.clone(), &stand_in) {
            Ok(_) => Vec::new(),
            Err(diags) => diags.into_iter().map(|d| (d.line, d.key)).collect(),
        }
    }

    #[test]
    fn every_type_error_is_found_not_only_the_first() {
        let src = "name = 3\nn = \"x\"\n[inner]\nx = \"y\"\nq = 1\n[[items]]\nx = 1\n[[items]]\nx = true\n";
        assert_eq!(
            all_errors(src),
            [
                (1, "name".to_string()),
                (2, "n".to_string()),
                (4, "inner.x".to_string()),
                (5, "inner.q".to_string()),
                (9, "items[1].x".to_string())
            ]
        );
        assert!(all_errors("name = \"ok\"\n").is_empty());
    }

    #[test]
    fn a_missing_required_key_is_reported_once_and_the_rest_still_checked() {
        let src = "[inner]\ny = 2\n[[items]]\nx = \"z\"\n";
        assert_eq!(
            all_errors(src),
            [(1, "inner".to_string()), (1, "".to_string()), (4, "items[0].x".to_string())],
            "name and inner.x missing, items[0].x wrong"
        );
    }

    #[test]
    fn remove_takes_out_keys_and_array_items() {
        let src = "[a]\nb = 1\nc = 2\n[[d]]\ne = 1\n[[d]]\ne = 2\n";
        let doc = Document::parse("s.toml", src).unwrap();
        let mut t = doc.root.clone();
        assert!(remove(&mut t, "a.b"));
        assert!(!remove(&mut t, "a.b"));
        assert!(remove(&mut t, "d[0]"));
        assert!(!remove(&mut t, "d[5].e"));
        assert!(sets_key(&t, "a.c") && !sets_key(&t, "a.b"));
        let DeValue::Array(d) = t.get_ref().get("d").unwrap().get_ref() else { panic!() };
        assert_eq!(d.len(), 1);
        assert_eq!(&src[locate(&t, "d[0].e")], "2");
    }

    #[test]
    fn locate_finds_nested_keys_and_array_items() {
        let src = "[path]\nbase = 1\n[[path.change]]\nat = 1\n[[path.change]]\nat = 2\n";
        let doc = Document::parse("s.toml", src).unwrap();
        let span = locate(&doc.root, "path.change[1].at");
        assert_eq!(&src[span], "2");
        assert!(sets_key(&doc.root, "path.base"));
        assert!(!sets_key(&doc.root, "path.nothing"));
    }

    #[test]
    fn syntax_errors_and_empty_files_are_diagnosed() {
        let err = Document::parse("s.toml", "name = \n").err().unwrap().diagnostics.remove(0);
        assert_eq!(err.line, 1);
        assert!(err.message.starts_with("not valid TOML"), "{err}");
        let err = Document::parse("s.toml", "  \n").err().unwrap().diagnostics.remove(0);
        assert!(err.message.contains("empty"), "{err}");
    }
}
