//! The scenario format as a JSON Schema (draft-07, what taplo and Even Better TOML read),
//! built from [`super::keys`], so that an editor checks and completes the same keys,
//! types, choices and ranges `backoffsim check` does.
//!
//! Only the top level's `name` and `horizon` are required: a section's required keys
//! may come from a `[[variant]]`, which the loader merges before it checks them.

use serde_json::{Map, Value, json};

use super::keys::{Key, TABLES, Type};
use super::schema::SHARED_KEYS;

pub const DRAFT: &str = "http://json-schema.org/draft-07/schema#";

/// The whole schema.
pub fn schema() -> Value {
    let mut root = table("");
    let Value::Object(obj) = &mut root else { unreachable!("a table is an object") };
    obj.insert("$schema".into(), json!(DRAFT));
    obj.insert("title".into(), json!("backoffsim scenario"));
    obj.insert("required".into(), json!(["name", "horizon"]));
    obj.insert("description".into(), json!("A backoffsim scenario file; `backoffsim keys` describes every key."));
    root
}

/// The object schema of the table at `prefix`.
fn table(prefix: &str) -> Value {
    let keys = TABLES.iter().find(|t| t.prefix == prefix).map_or(&[][..], |t| t.keys);
    let mut properties = Map::new();
    for key in keys {
        properties.insert(key.name.to_string(), property(prefix, key));
    }
    json!({ "type": "object", "properties": properties, "additionalProperties": false })
}

fn property(prefix: &str, key: &Key) -> Value {
    let path = format!("{prefix}{}", key.name);
    let mut p = match key.ty {
        Type::Table => table(&format!("{path}.")),
        Type::Tables if path == "variant" => json!({ "type": "array", "items": variant() }),
        Type::Tables => json!({ "type": "array", "items": table(&format!("{path}[].")) }),
        Type::Sweep => json!({ "type": "object", "minProperties": 1 }),
        _ => value(key),
    };
    let Value::Object(obj) = &mut p else { unreachable!("every schema here is an object") };
    let mut description = key.doc.to_string();
    if key.default.len() > 1 && key.single_default().is_none() {
        description += &format!(" Default: {}.", key.default_text());
    }
    if !key.range_text().is_empty() {
        description += &format!(" Range: {}.", key.range_text());
    }
    obj.insert("description".into(), json!(description));
    if let Some(v) = key.single_default() {
        obj.insert("default".into(), default_value(key.ty, v));
    }
    p
}

/// A leaf value's type, choices and range.
fn value(key: &Key) -> Value {
    let mut v = match key.ty {
        Type::Text => json!({ "type": "string" }),
        Type::Integer => json!({ "type": "integer", "minimum": 0 }),
        Type::Number => json!({ "type": "number" }),
        Type::Fraction => json!({ "type": ["number", "string"] }),
        Type::Bool => json!({ "type": "boolean" }),
        Type::Duration | Type::DurationOrNone => json!({ "type": "string" }),
        Type::CountOrNone => json!({ "type": ["integer", "string"] }),
        Type::Outcome => json!({ "type": ["string", "integer"] }),
        Type::Integers => json!({ "type": "array", "items": { "type": "integer", "minimum": 0 } }),
        Type::Texts => json!({ "type": "array", "items": { "type": "string" } }),
        Type::Choice(c) => json!({ "type": "string", "enum": c }),
        Type::Choices(c) => json!({ "type": "array", "items": { "type": "string", "enum": c } }),
        Type::Table | Type::Tables | Type::Sweep => unreachable!("handled by property"),
    };
    let Value::Object(obj) = &mut v else { unreachable!("a literal object") };
    if let Some(min) = key.min {
        obj.insert("minimum".into(), number(min));
    }
    if let Some(max) = key.max {
        obj.insert("maximum".into(), number(max));
    }
    v
}

/// A `[[variant]]`: a name, a description and any section it overrides; the keys all
/// variants share are not among them.
fn variant() -> Value {
    let mut properties = Map::new();
    properties
        .insert("name".into(), json!({ "type": "string", "description": "The variant's name in results and plots." }));
    properties.insert(
        "description".into(),
        json!({ "type": "string", "description": "What the variant changes, for the report." }),
    );
    let top = TABLES.iter().find(|t| t.prefix.is_empty()).map_or(&[][..], |t| t.keys);
    for key in top.iter().filter(|k| k.ty == Type::Table && !SHARED_KEYS.iter().any(|(s, _)| *s == k.name)) {
        properties.insert(key.name.to_string(), property("", key));
    }
    json!({ "type": "object", "properties": properties, "additionalProperties": false })
}

fn number(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 1e15 { json!(x as i64) } else { json!(x) }
}

/// A default as the JSON value of its type; a duration or word stays a string.
fn default_value(ty: Type, text: &str) -> Value {
    let parsed = match ty {
        Type::Integer | Type::Number | Type::Fraction | Type::Bool | Type::Integers | Type::CountOrNone => {
            serde_json::from_str::<Value>(text).ok()
        }
        _ => None,
    };
    parsed.unwrap_or_else(|| json!(text))
}

#[cfg(test)]
mod tests;
