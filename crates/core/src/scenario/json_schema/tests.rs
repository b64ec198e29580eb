use super::*;
use crate::scenario::keys;

/// The subset of JSON Schema that `schema()` emits, checked as a validator would:
/// type, enum, properties, additionalProperties, items, minimum, maximum, required,
/// minProperties. Every problem is returned with its place.
fn validate(schema: &Value, value: &Value, at: &str, errors: &mut Vec<String>) {
    if let Some(types) = schema.get("type") {
        let types: Vec<&str> = match types {
            Value::String(t) => vec![t],
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
            other => panic!("{at}: type {other}"),
        };
        let fits = |t: &str| match t {
            "object" => value.is_object(),
            "array" => value.is_array(),
            "string" => value.is_string(),
            "boolean" => value.is_boolean(),
            "integer" => value.is_i64() || value.is_u64(),
            "number" => value.is_number(),
            other => panic!("{at}: unknown type {other}"),
        };
        if !types.iter().any(|t| fits(t)) {
            errors.push(format!("{at}: {value} is not {types:?}"));
            return;
        }
    }
    if let Some(Value::Array(allowed)) = schema.get("enum")
        && !allowed.contains(value)
    {
        errors.push(format!("{at}: {value} is not one of {allowed:?}"));
    }
    if let Some(n) = value.as_f64() {
        if schema.get("minimum").and_then(Value::as_f64).is_some_and(|m| n < m) {
            errors.push(format!("{at}: {n} is below the minimum"));
        }
        if schema.get("maximum").and_then(Value::as_f64).is_some_and(|m| n > m) {
            errors.push(format!("{at}: {n} is above the maximum"));
        }
    }
    if let Value::Object(obj) = value {
        let properties = schema.get("properties").and_then(Value::as_object);
        for (k, v) in obj {
            match properties.and_then(|p| p.get(k)) {
                Some(s) => validate(s, v, &format!("{at}.{k}"), errors),
                None if schema.get("additionalProperties") == Some(&Value::Bool(false)) => {
                    errors.push(format!("{at}: `{k}` is not allowed"));
                }
                None => {}
            }
        }
        for r in schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str) {
            if !obj.contains_key(r) {
                errors.push(format!("{at}: `{r}` is required"));
            }
        }
        if schema.get("minProperties").and_then(Value::as_u64).is_some_and(|m| (obj.len() as u64) < m) {
            errors.push(format!("{at}: too few keys"));
        }
    }
    if let (Value::Array(items), Some(s)) = (value, schema.get("items")) {
        for (i, item) in items.iter().enumerate() {
            validate(s, item, &format!("{at}[{i}]"), errors);
        }
    }
}

fn errors_of(toml_text: &str) -> Vec<String> {
    let table: toml::Table = toml::from_str(toml_text).unwrap();
    let value = serde_json::to_value(&table).unwrap();
    let mut errors = Vec::new();
    validate(&schema(), &value, "", &mut errors);
    errors
}

#[test]
fn the_schema_is_draft_07_json_and_closed_at_every_table() {
    let text = serde_json::to_string_pretty(&schema()).unwrap();
    let back: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(back["$schema"], DRAFT);
    assert_eq!(back["additionalProperties"], false);
    assert_eq!(back["properties"]["tcp"]["properties"]["rto"]["additionalProperties"], false);
    assert_eq!(back["properties"]["calls"]["properties"]["policy"]["properties"]["jitter"]["default"], "full");
    assert_eq!(back["properties"]["tcp"]["properties"]["window"]["default"], 10);
}

#[test]
fn every_key_of_the_reference_is_in_the_schema_with_a_description() {
    let s = schema();
    for (path, _) in keys::all() {
        let mut node = &s;
        for part in path.split('.') {
            let (name, array) = match part.strip_suffix("[]") {
                Some(n) => (n, true),
                None => (part, false),
            };
            node = &node["properties"][name];
            assert!(node.is_object(), "`{path}` is not in the schema");
            assert!(node["description"].as_str().is_some_and(|d| !d.is_empty()), "`{path}` has no description");
            if array {
                node = &node["items"];
            }
        }
    }
}

#[test]
fn every_shipped_scenario_validates_and_a_misspelt_one_does_not() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.retain(|p| p.extension().is_some_and(|e| e == "toml"));
    files.sort();
    assert!(files.len() >= 10, "{files:?}");
    for f in &files {
        let errors = errors_of(&std::fs::read_to_string(f).unwrap());
        assert!(errors.is_empty(), "{}: {errors:?}", f.display());
    }
    let bad = "name = \"x\"\nhorizon = \"1s\"\n[tcp]\nwindw = 3\n[tcp.rto]\nprofile = \"bsd\"\n[path.loss]\nmodel = \"bernoulli\"\np = 2\n";
    let errors = errors_of(bad);
    assert_eq!(errors.len(), 3, "{errors:?}");
    for needle in ["`windw` is not allowed", "\"bsd\" is not one of", "2 is above the maximum"] {
        assert!(errors.iter().any(|e| e.contains(needle)), "{needle}: {errors:?}");
    }
    let missing = errors_of("horizon = \"1s\"\n");
    assert!(missing.iter().any(|e| e.contains("`name` is required")), "{missing:?}");
}

#[test]
fn a_variant_may_override_a_section_but_not_a_shared_key() {
    let ok = "name = \"x\"\nhorizon = \"1s\"\n[[variant]]\nname = \"a\"\n[variant.tcp]\nwindow = 4\n";
    assert!(errors_of(ok).is_empty(), "{:?}", errors_of(ok));
    let shared = "name = \"x\"\nhorizon = \"1s\"\n[[variant]]\nname = \"a\"\nseed = 3\n";
    assert!(errors_of(shared)[0].contains("`seed` is not allowed"), "{:?}", errors_of(shared));
}
