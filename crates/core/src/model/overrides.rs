//! Test support: a config read from TOML text with `key = value` pairs laid over it, each
//! value taken as TOML when it is valid TOML on its own and as a string otherwise, as a
//! scenario's overrides are. It deserializes through the config's own serde types, so
//! the model's tests need nothing from the layers above.

use serde::de::DeserializeOwned;

/// `base` (TOML text) with `pairs` laid over it, later ones winning; panics on a value
/// the config refuses, as tests want.
pub(crate) fn from_pairs<T: DeserializeOwned>(base: &str, pairs: &[(&str, &str)]) -> T {
    let mut table: toml::Table = toml::from_str(base).unwrap_or_else(|e| panic!("{base}: {e}"));
    for (key, value) in pairs {
        let parsed =
            toml::from_str::<toml::Table>(&format!("value = {value}")).ok().and_then(|mut t| t.remove("value"));
        table.insert(key.to_string(), parsed.unwrap_or_else(|| toml::Value::String(value.to_string())));
    }
    table.try_into().unwrap_or_else(|e| panic!("{pairs:?}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, Debug, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Demo {
        name: Option<String>,
        n: Option<u32>,
        list: Option<Vec<String>>,
    }

    #[test]
    fn a_value_that_is_not_toml_is_a_string_and_later_pairs_win() {
        let d: Demo = from_pairs("name = \"a\"", &[("name", "2s, 5xx"), ("n", "7"), ("list", "[\"x\"]"), ("n", "8")]);
        assert_eq!(d, Demo { name: Some("2s, 5xx".into()), n: Some(8), list: Some(vec!["x".into()]) });
    }
}
