//! Every key a scenario file may hold: its type, default (per profile where the profile
//! decides it), range and meaning. `backoffsim keys` prints this table and `backoffsim
//! schema` turns it into a JSON Schema; the tests hold it to the loader's own key lists
//! (what serde's `deny_unknown_fields` accepts), so neither can drift from what `check`
//! takes.
//!
//! A table that appears in several places (a retry policy, a delay distribution, a loss
//! model) is written once and mounted under each prefix in [`TABLES`].

/// What a key holds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Type {
    Text,
    /// A whole number, at least 0.
    Integer,
    Number,
    /// 0 to 1, or a percentage string such as "20%".
    Fraction,
    Bool,
    /// A string with a unit: "250ms", "1.5s", "2min".
    Duration,
    /// A duration, or "none".
    DurationOrNone,
    /// A whole number, or "none".
    CountOrNone,
    /// An outcome word (`refused`, `dropped`, `timeout`, `throttling`) or an HTTP status.
    Outcome,
    Integers,
    Texts,
    /// One of these words.
    Choice(&'static [&'static str]),
    /// A list of these words.
    Choices(&'static [&'static str]),
    /// A table (`[section]`) whose keys are listed under its own prefix.
    Table,
    /// An array of tables (`[[section]]`).
    Tables,
    /// `[sweep]`: dotted keys, each with the list of values it takes.
    Sweep,
}

impl Type {
    /// How `keys` names the type.
    pub fn describe(self) -> String {
        match self {
            Type::Text => "text".into(),
            Type::Integer => "integer".into(),
            Type::Number => "number".into(),
            Type::Fraction => "fraction".into(),
            Type::Bool => "bool".into(),
            Type::Duration => "duration".into(),
            Type::DurationOrNone => "duration|none".into(),
            Type::CountOrNone => "integer|none".into(),
            Type::Outcome => "outcome|status".into(),
            Type::Integers => "[integer]".into(),
            Type::Texts => "[text]".into(),
            Type::Choice(c) => c.join("|"),
            Type::Choices(c) => format!("[{}]", c.join("|")),
            Type::Table => "table".into(),
            Type::Tables => "[[table]]".into(),
            Type::Sweep => "table of lists".into(),
        }
    }
}

/// One key, named relative to the table it sits in.
#[derive(Clone, Copy, Debug)]
pub struct Key {
    pub name: &'static str,
    pub ty: Type,
    /// The table cannot be checked without it.
    pub required: bool,
    /// (profile, value) pairs; a profile of "" means every profile. Empty when the key
    /// is unset by default (off, derived from other keys, or required).
    pub default: &'static [(&'static str, &'static str)],
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub doc: &'static str,
}

impl Key {
    /// The default when every profile has the same one.
    pub fn single_default(&self) -> Option<&'static str> {
        match self.default {
            [(_, v), rest @ ..] if rest.iter().all(|(_, w)| w == v) => Some(v),
            _ => None,
        }
    }

    /// The default as `keys` shows it: one value, or one per profile.
    pub fn default_text(&self) -> String {
        if let Some(v) = self.single_default() {
            return v.to_string();
        }
        match self.default {
            [] if self.required => "required".into(),
            [] => "-".into(),
            many => many.iter().map(|(p, v)| format!("{p}: {v}")).collect::<Vec<_>>().join(", "),
        }
    }

    /// The allowed range, where the type does not already say it.
    pub fn range_text(&self) -> String {
        match (self.min, self.max) {
            // An integer says it is at least 0.
            (Some(a), None) if a == 0.0 && self.ty == Type::Integer => String::new(),
            (Some(a), Some(b)) => format!("{a} to {b}"),
            (Some(a), None) => format!("≥ {a}"),
            (None, Some(b)) => format!("≤ {b}"),
            (None, None) => String::new(),
        }
    }
}

/// The keys of the table at `prefix` (`""` for the top level; `[]` marks an array of tables).
#[derive(Clone, Copy, Debug)]
pub struct Table {
    pub prefix: &'static str,
    pub keys: &'static [Key],
}

/// Every key with its full dotted path, in the order of [`TABLES`].
pub fn all() -> Vec<(String, &'static Key)> {
    TABLES.iter().flat_map(|t| t.keys.iter().map(move |k| (format!("{}{}", t.prefix, k.name), k))).collect()
}

/// The sections `keys SECTION` takes: every table's prefix, without its dot.
pub fn sections() -> Vec<&'static str> {
    TABLES.iter().map(|t| t.prefix.trim_end_matches('.')).filter(|p| !p.is_empty()).collect()
}

/// The keys of `section` and the tables inside it, or what is said of an unknown one.
pub fn of_section(section: &str) -> Result<Vec<(String, &'static Key)>, String> {
    let section = section.trim_end_matches('.');
    if !sections().contains(&section) {
        return Err(crate::suggest::unknown("section", section, sections(), Some("`backoffsim keys` lists them all")));
    }
    let inside = format!("{section}.");
    Ok(all().into_iter().filter(|(p, _)| p.starts_with(&inside)).collect())
}

// One line a key: the table reads as a table.
#[rustfmt::skip]
mod table;
pub use table::TABLES;

#[cfg(test)]
mod tests {
    use super::*;

    /// The keys that select a tagged table's variant.
    const TAGS: [&str; 3] = ["kind", "dist", "model"];

    /// The keys the loader names when it meets an unknown one in the table at `prefix`
    /// (serde's `deny_unknown_fields` list, "expected one of `a`, `b`"), with `lines`
    /// written in that table first; `None` when it reported no unknown key there.
    fn loader_keys(prefix: &str, lines: &str) -> Option<Vec<String>> {
        let found = diagnostics(prefix, &format!("{lines}zz_not_a_key = 1\n"));
        let d = found.iter().find(|d| d.message.starts_with("unknown key `zz_not_a_key`"))?;
        let listed = d.message.split("expected").nth(1).unwrap_or("");
        let listed = listed.split("; did you mean").next().unwrap_or("");
        Some(listed.split('`').skip(1).step_by(2).map(String::from).collect())
    }

    #[test]
    fn every_key_the_loader_accepts_is_in_the_table_and_no_other() {
        for table in TABLES {
            let ours: Vec<&str> = table.keys.iter().map(|k| k.name).collect();
            // A tagged table (`kind`, `dist`, `model`) has one key list per tag value.
            let tag = table.keys.iter().find(|k| k.required && matches!(k.ty, Type::Choice(_)));
            // A required choice is a tag only under a tag's name (occ's `strategy` is not).
            let tagged = tag.filter(|k| TAGS.contains(&k.name));
            let theirs: Vec<String> = match tagged.or(table.keys.iter().find(|k| k.name == "model")) {
                Some(tag @ Key { ty: Type::Choice(values), .. }) if !table.prefix.is_empty() => {
                    let mut all = vec![tag.name.to_string()];
                    for v in *values {
                        let found = loader_keys(table.prefix, &format!("{} = \"{v}\"\n", tag.name));
                        all.extend(found.unwrap_or_default());
                    }
                    all
                }
                _ => loader_keys(table.prefix, "").unwrap_or_else(|| panic!("{}: no unknown-key error", table.prefix)),
            };
            for k in &theirs {
                assert!(ours.contains(&k.as_str()), "`{}{k}` is accepted by the loader but missing here", table.prefix);
            }
            for k in &ours {
                let handled_outside_serde = table.prefix.is_empty() && ["sweep", "variant"].contains(k);
                assert!(
                    handled_outside_serde || theirs.iter().any(|t| t == k),
                    "`{}{k}` is listed here but the loader refuses it (it takes {theirs:?})",
                    table.prefix
                );
            }
        }
    }

    /// The diagnostics the loader gives for `key = value` in the table at `prefix`.
    fn diagnostics(prefix: &str, line: &str) -> Vec<crate::scenario::Diagnostic> {
        let mut toml = String::from("name = \"k\"\nhorizon = \"1s\"\n");
        let segments: Vec<&str> = prefix.trim_end_matches('.').split('.').filter(|s| !s.is_empty()).collect();
        let mut path = Vec::new();
        for (i, seg) in segments.iter().enumerate() {
            path.push(seg.trim_end_matches("[]"));
            if seg.ends_with("[]") {
                toml += &format!("[[{}]]\n", path.join("."));
            } else if i + 1 == segments.len() {
                toml += &format!("[{}]\n", path.join("."));
            }
        }
        toml += line;
        crate::scenario::load_str("k.toml", &toml).err().map_or(Vec::new(), |e| e.diagnostics)
    }

    #[test]
    fn every_choice_is_one_the_loader_takes_and_every_one_it_takes_is_listed() {
        for table in TABLES {
            for key in table.keys {
                let (Type::Choice(values) | Type::Choices(values)) = key.ty else { continue };
                // In a tagged table another choice is read only once the tag names a variant.
                let tag = table
                    .keys
                    .iter()
                    .find(|k| k.required && k.name != key.name && TAGS.contains(&k.name))
                    .and_then(|k| {
                        if let Type::Choice(v) = k.ty { Some(format!("{} = \"{}\"\n", k.name, v[0])) } else { None }
                    })
                    .unwrap_or_default();
                let write = |v: &str| match key.ty {
                    Type::Choices(_) => format!("{tag}{} = [\"{v}\"]\n", key.name),
                    _ => format!("{tag}{} = \"{v}\"\n", key.name),
                };
                let path = format!("{}{}", table.prefix, key.name).replace("[]", "[0]");
                // Inside a tagged table the loader can only place a bad value at the table.
                let table_key = path.rsplit_once('.').map_or("", |(t, _)| t).to_string();
                let at_key = |d: &&crate::scenario::Diagnostic| {
                    d.key.starts_with(&path) || (!tag.is_empty() && d.key == table_key)
                };
                for v in values.iter() {
                    let found = diagnostics(table.prefix, &write(v));
                    let wrong: Vec<_> =
                        found.iter().filter(at_key).filter(|d| d.message.contains("unknown variant")).collect();
                    assert!(wrong.is_empty(), "`{path} = {v}`: {wrong:?}");
                }
                let found = diagnostics(table.prefix, &write("zz-not-a-value"));
                let refusal = found.iter().find(at_key).unwrap_or_else(|| panic!("`{path}` took a bogus value"));
                if let Some(listed) = refusal.message.split("expected").nth(1) {
                    let listed = listed.split("; did you mean").next().unwrap_or("");
                    let theirs: Vec<&str> = listed.split('`').skip(1).step_by(2).collect();
                    if !theirs.is_empty() {
                        let mut ours: Vec<&str> = values.to_vec();
                        let mut theirs = theirs;
                        ours.sort_unstable();
                        theirs.sort_unstable();
                        assert_eq!(ours, theirs, "`{path}`");
                    }
                }
            }
        }
    }

    #[test]
    fn every_key_has_a_one_line_doc_and_is_listed_once() {
        for (path, key) in all() {
            assert!(!key.doc.trim().is_empty(), "`{path}` has no doc");
            assert!(!key.doc.contains('\n'), "`{path}`: one line");
        }
        let paths: Vec<String> = all().into_iter().map(|(p, _)| p).collect();
        let mut unique = paths.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), paths.len(), "a key is listed twice");
    }

    #[test]
    fn every_table_key_has_its_keys_listed_under_its_prefix() {
        for (path, key) in all() {
            let prefix = match key.ty {
                Type::Table => format!("{path}."),
                Type::Tables if path != "variant" => format!("{path}[]."),
                _ => continue,
            };
            assert!(TABLES.iter().any(|t| t.prefix == prefix), "no table at `{prefix}`");
        }
    }

    #[test]
    fn defaults_depend_on_the_profile_where_the_models_tables_say_so() {
        let find = |p: &str| all().into_iter().find(|(q, _)| q == p).unwrap().1;
        // RFC 6298 (2.4) puts the floor at 1 s; Linux's TCP_RTO_MIN is 200 ms.
        assert_eq!(find("tcp.rto.min_rto").default_text(), "rfc6298: 1s, linux: 200ms");
        // gRPC doc/connection-backoff.md: MIN_CONNECT_TIMEOUT 20 s; grpc-java has none.
        assert_eq!(
            find("grpc.backoff.min_connect_timeout").default_text(),
            "spec: 20s, grpc-core: 20s, grpc-go: 20s, grpc-java: -"
        );
        assert_eq!(find("name").default_text(), "required");
        assert_eq!(find("calls.policy.jitter_fraction").range_text(), "0 to 1");
    }

    #[test]
    fn an_unknown_section_gets_a_did_you_mean() {
        assert!(of_section("tcp").unwrap().iter().all(|(p, _)| p.starts_with("tcp.")));
        assert!(of_section("calls.policy").unwrap().iter().any(|(p, _)| p == "calls.policy.base"));
        let e = of_section("grcp").unwrap_err();
        assert!(e.starts_with("unknown section `grcp`; did you mean `grpc`?"), "{e}");
    }
}
