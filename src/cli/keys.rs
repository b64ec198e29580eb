//! `backoffsim keys [SECTION]` and `backoffsim schema`: the scenario keys as an aligned
//! table, and as a JSON Schema for editors; both from `scenario::keys`.

use std::io::Write;

use clap::Args;

use super::CliError;
use backoffsim_core::scenario::json_schema;
use backoffsim_core::scenario::keys::{self, Key};

#[derive(Debug, Args)]
pub struct KeysArgs {
    /// Only the keys of this section, e.g. tcp, grpc, calls, server, path, calls.policy
    /// [default: every key].
    pub section: Option<String>,
}

/// The widest type the type column shows; longer lists of choices go after the doc.
const TYPE_WIDTH: usize = 28;

/// The table's rows, header first: key, type, default, range, doc.
pub fn rows(section: Option<&str>) -> Result<Vec<[String; 5]>, CliError> {
    let keys: Vec<(String, &Key)> = match section {
        None => keys::all(),
        Some(s) => keys::of_section(s).map_err(CliError::Usage)?,
    };
    let mut rows = vec![["KEY".into(), "TYPE".into(), "DEFAULT".into(), "RANGE".into(), "WHAT IT IS".into()]];
    for (path, k) in keys {
        // A long list of choices would widen the type column for every row: it moves to
        // the end of the key's line.
        let (ty, doc) = match k.ty.describe() {
            long if long.chars().count() > TYPE_WIDTH => {
                let short = if long.starts_with('[') { "[choice]" } else { "choice" };
                let choices = long.trim_matches(['[', ']']);
                let listed = choices.split('|').all(|c| k.doc.contains(&format!("`{c}`")));
                let doc = if listed { k.doc.to_string() } else { format!("{} One of: {choices}.", k.doc) };
                (short.to_string(), doc)
            }
            ty => (ty, k.doc.to_string()),
        };
        rows.push([path, ty, k.default_text(), k.range_text(), doc]);
    }
    Ok(rows)
}

pub fn keys(args: KeysArgs) -> Result<(), CliError> {
    let rows = rows(args.section.as_deref())?;
    super::aligned::print(&rows)
}

pub fn schema() -> Result<(), CliError> {
    let text = serde_json::to_string_pretty(&json_schema::schema())
        .map_err(|e| CliError::Failed(format!("cannot write the schema: {e}")))?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{text}").and_then(|()| out.flush()).map_err(CliError::from_stdout)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_section_lists_its_keys_and_those_of_the_tables_inside_it() {
        let tcp = rows(Some("tcp")).unwrap();
        assert_eq!(tcp[0][0], "KEY");
        let names: Vec<&str> = tcp[1..].iter().map(|r| r[0].as_str()).collect();
        assert!(names.contains(&"tcp.window") && names.contains(&"tcp.rto.min_rto"), "{names:?}");
        assert!(names.iter().all(|n| n.starts_with("tcp.")), "{names:?}");
        let all = rows(None).unwrap();
        assert_eq!(all.len(), 1 + keys::all().len());
        match rows(Some("serer")) {
            Err(CliError::Usage(m)) => assert!(m.contains("did you mean `server`?"), "{m}"),
            other => panic!("{other:?}"),
        }
    }
}
