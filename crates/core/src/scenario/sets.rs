//! `--set KEY=VALUE`: each one is the TOML line `KEY = VALUE`, read by the same loader
//! and checked by the same serde types as a scenario file, so every key a file accepts
//! is accepted here with the same checks and messages. A value that is not valid TOML
//! on its own is taken as a string, so `--set max_backoff=2s` and `--set karn=false`
//! both work without shell-quoted TOML quotes.

use serde::de::DeserializeOwned;
use serde_spanned::Spanned;
use toml::de::DeTable;

use super::load::{Document, merge};

/// One `--set` as given and the TOML line it stands for.
#[derive(Clone, Debug)]
pub struct Set {
    /// As the user wrote it, to name it in errors.
    pub given: String,
    pub key: String,
    toml: String,
}

impl Set {
    /// Reads `KEY=VALUE`; a malformed one is refused with the text as given.
    pub fn parse(given: &str) -> Result<Set, String> {
        let (key, value) =
            given.split_once('=').ok_or_else(|| format!("--set `{given}`: expected KEY=VALUE, e.g. --set base=2s"))?;
        let (key, value) = (key.trim(), value.trim());
        let line = format!("{key} = {value}");
        let toml = if one_key(&line) {
            line
        } else {
            let quoted = format!("{key} = {}", toml::Value::String(value.to_string()));
            if !one_key(&quoted) {
                return Err(format!("--set `{given}`: `{key}` is not a key: write it as in a scenario file"));
            }
            quoted
        };
        Ok(Set { given: given.to_string(), key: key.to_string(), toml })
    }

    /// Reads every `--set`, in order.
    pub fn parse_all(given: &[String]) -> Result<Vec<Set>, String> {
        given.iter().map(|s| Set::parse(s)).collect()
    }

    fn table(&self) -> Spanned<DeTable<'_>> {
        DeTable::parse(&self.toml).expect("checked to parse in Set::parse")
    }
}

/// True when `line` is valid TOML setting exactly one top-level key.
fn one_key(line: &str) -> bool {
    DeTable::parse(line).is_ok_and(|t| t.get_ref().len() == 1)
}

/// A table written as TOML text (`profile = "linux"`), as the base of [`apply`].
pub fn base(text: &str) -> Spanned<DeTable<'_>> {
    DeTable::parse(text).expect("a base written by the program is valid TOML")
}

/// Lays `sets` over `base` (later ones win, as in a `[[variant]]`) and deserializes the
/// result. Each set is first deserialized alone, so a bad one is refused as
/// `--set KEY=VALUE: message` in the words a scenario file would get. Errors of the
/// combination (its checks beyond types) are left to the caller's `resolve`.
pub fn apply<'a, T: DeserializeOwned>(base: Spanned<DeTable<'a>>, sets: &'a [Set]) -> Result<T, Vec<String>> {
    let mut problems = Vec::new();
    for set in sets {
        let doc = Document::new("--set", &set.toml, set.table());
        if let Some((_, _, value)) = super::load::non_finite(&doc.root).first() {
            problems.push(format!("--set {}: {}", set.given, super::load::non_finite_message(value)));
            continue;
        }
        if let Err(d) = doc.deserialize::<T>(doc.root.clone(), "") {
            let key = if d.key.is_empty() { String::new() } else { format!("{}: ", d.key) };
            problems.push(format!("--set {}: {key}{}", set.given, d.message));
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    let mut table = base;
    for set in sets {
        merge(table.get_mut(), set.table().get_ref());
    }
    T::deserialize(toml::de::Deserializer::from(table)).map_err(|e| vec![format!("--set: {}", e.message().trim())])
}

#[cfg(test)]
mod model_keys;

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde::Deserialize;

    /// `(key, value)` pairs as `--set`s laid over `base`; panics on a bad one, as tests want.
    pub(crate) fn with_sets<T: DeserializeOwned>(base_toml: &str, sets: &[(&str, &str)]) -> T {
        let sets: Vec<Set> = sets.iter().map(|(k, v)| Set::parse(&format!("{k}={v}")).unwrap()).collect();
        apply(base(base_toml), &sets).unwrap_or_else(|e| panic!("{}", e.join("\n")))
    }

    /// The refusal of one `--set k=v` for a `T`; panics if it is accepted.
    pub(crate) fn set_error<T: DeserializeOwned + std::fmt::Debug>(k: &str, v: &str) -> String {
        let sets = vec![Set::parse(&format!("{k}={v}")).unwrap()];
        apply::<T>(base(""), &sets).unwrap_err().join("\n")
    }

    #[derive(Deserialize, Debug, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Demo {
        #[serde(default)]
        name: Option<String>,
        #[serde(default)]
        on: Option<bool>,
        #[serde(default)]
        n: Option<u32>,
        #[serde(default)]
        list: Option<Vec<String>>,
    }

    #[test]
    fn a_bare_word_is_a_string_and_valid_toml_keeps_its_type() {
        let d: Demo = with_sets("", &[("name", "2s"), ("on", "false"), ("n", "7"), ("list", "[\"a\", \"b\"]")]);
        assert_eq!(
            d,
            Demo { name: Some("2s".into()), on: Some(false), n: Some(7), list: Some(vec!["a".into(), "b".into()]) }
        );
        let d: Demo = with_sets("", &[("name", "a \"quoted\" word # not a comment")]);
        assert_eq!(d.name.as_deref(), Some("a \"quoted\" word # not a comment"));
    }

    #[test]
    fn later_sets_win_over_earlier_ones_and_over_the_base() {
        let d: Demo = with_sets("n = 1\non = true", &[("n", "2"), ("n", "3")]);
        assert_eq!((d.n, d.on), (Some(3), Some(true)));
    }

    #[test]
    fn a_bad_set_is_refused_in_the_words_of_a_scenario_file_naming_the_set() {
        let sets = Set::parse_all(&["n=-1".into(), "nme=x".into(), "on=1".into()]).unwrap();
        let errs = apply::<Demo>(base(""), &sets).unwrap_err();
        assert_eq!(errs.len(), 3, "{errs:?}");
        assert!(errs[0].starts_with("--set n=-1: n: "), "{errs:?}");
        assert!(errs[1].starts_with("--set nme=x: nme: unknown key `nme`"), "{errs:?}");
        assert!(errs[2].starts_with("--set on=1: on: wrong type"), "{errs:?}");
    }

    #[test]
    fn malformed_sets_are_refused_with_the_text_given() {
        assert!(Set::parse("base").unwrap_err().contains("--set `base`: expected KEY=VALUE"));
        assert!(Set::parse("a b=1").unwrap_err().contains("`a b` is not a key"));
        assert!(Set::parse("=1").unwrap_err().contains("is not a key"));
    }
}
