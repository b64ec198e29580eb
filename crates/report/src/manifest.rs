//! What a run's `manifest.json` must hold before `plot` and `compare` read the run: an
//! object with the scenario's name, a horizon, and its variants, each named once. A
//! manifest that is something else (`[]`, a horizon of `"soon"`, a variant without a
//! name) is refused with its line, column and key rather than read as an empty run.
//!
//! Only the shape is checked here; the values are read from the parsed document by
//! [`super::data::of_manifest`], which a run also uses on the manifest it is about to
//! write. Keys a newer version adds are ignored.

use std::collections::BTreeSet;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{MapAccess, Visitor, value::MapAccessDeserializer};
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use super::ReportError;
use backoffsim_core::engine::time::SimDuration;

/// What bounds the rest of a run's files: no time in them is beyond the horizon and no
/// replication index reaches the replications.
#[derive(Clone, Debug, PartialEq)]
pub struct Bounds {
    /// The horizon as the manifest writes it (`1min`), and in seconds.
    pub horizon: String,
    pub horizon_s: f64,
    /// `None` for a manifest without the key: replication indices are then unbounded.
    pub replications: Option<u64>,
}

impl Bounds {
    /// The horizon as messages name it.
    pub fn horizon_words(&self) -> String {
        format!("the run's horizon ({}, manifest.json)", self.horizon)
    }

    /// The largest replication index a file of the run may hold.
    pub fn last_replication(&self) -> u64 {
        self.replications.map_or(u64::from(u32::MAX), |n| n - 1)
    }
}

// Most fields are deserialized for their shape alone.
#[allow(dead_code)]
#[derive(Deserialize)]
struct Shape {
    scenario: String,
    #[serde(deserialize_with = "horizon")]
    horizon: (String, f64),
    #[serde(default)]
    seed: Option<u64>,
    #[serde(default, deserialize_with = "replications")]
    replications: Option<u64>,
    #[serde(deserialize_with = "variants")]
    variants: Vec<Object<VariantShape>>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
struct VariantShape {
    name: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    parameters: Option<Map<String, Value>>,
    #[serde(default)]
    cells: Option<Vec<Object<CellShape>>>,
}

#[allow(dead_code)]
#[derive(Deserialize)]
struct CellShape {
    #[serde(default)]
    sweep: Option<Vec<Value>>,
    #[serde(default)]
    parameters: Option<Map<String, Value>>,
}

/// What a shape is called in messages.
trait Named {
    const WHAT: &'static str;
}

impl Named for Shape {
    const WHAT: &'static str = "a JSON object: a run's manifest, with `scenario`, `horizon` and `variants`";
}

impl Named for VariantShape {
    const WHAT: &'static str = "a JSON object: a variant, with its `name` and `parameters`";
}

impl Named for CellShape {
    const WHAT: &'static str = "a JSON object: a sweep cell, with its `sweep` values";
}

/// `T` read from a JSON object only: serde's derived structs also take an array of their
/// fields in order, which no run writes.
struct Object<T>(T);

impl<'de, T: Deserialize<'de> + Named> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Only<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de> + Named> Visitor<'de> for Only<T> {
            type Value = T;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(T::WHAT)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
                T::deserialize(MapAccessDeserializer::new(map))
            }
        }
        d.deserialize_map(Only(PhantomData)).map(Object)
    }
}

fn horizon<'de, D: Deserializer<'de>>(d: D) -> Result<(String, f64), D::Error> {
    let text = String::deserialize(d)?;
    match SimDuration::parse(&text) {
        Ok(h) if h > SimDuration::ZERO => Ok((text, h.as_secs_f64())),
        Ok(_) => Err(serde::de::Error::custom("the horizon is 0s: a run's horizon is longer than that")),
        Err(e) => Err(serde::de::Error::custom(format!("`{text}` is not a horizon: {e}"))),
    }
}

fn replications<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    match u64::deserialize(d)? {
        0 => Err(serde::de::Error::custom("0 replications: a run has at least 1")),
        n => Ok(Some(n)),
    }
}

fn variants<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Object<VariantShape>>, D::Error> {
    let variants = Vec::<Object<VariantShape>>::deserialize(d)?;
    if variants.is_empty() {
        return Err(serde::de::Error::custom("no variants: a run has at least one"));
    }
    let mut seen = BTreeSet::new();
    for Object(v) in &variants {
        if v.name.is_empty() {
            return Err(serde::de::Error::custom("a variant's name is empty"));
        }
        if !seen.insert(v.name.as_str()) {
            return Err(serde::de::Error::custom(format!("two variants are named `{}`", v.name)));
        }
    }
    Ok(variants)
}

/// Checks `text`, the manifest of `file`, and returns what bounds the run's other files.
pub fn check(file: &str, text: &str) -> Result<Bounds, ReportError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let Object::<Shape>(shape) = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let (line, column) = (inner.line(), inner.column());
        let message = inner.to_string();
        let message = message.strip_suffix(&format!(" at line {line} column {column}")).unwrap_or(&message);
        // serde_json counts 0 for a place before a line's first character (a value it
        // peeked at and refused); columns here count from 1, as in scenario messages.
        let column = column.max(1);
        let message = match message.strip_prefix("missing field ") {
            Some(key) => format!("missing key {key}"),
            None => message.to_string(),
        };
        let key = if path == "." { String::new() } else { format!(", key `{path}`") };
        ReportError::Bad { file: file.to_string(), why: format!("line {line}, column {column}{key}: {message}") }
    })?;
    let (horizon, horizon_s) = shape.horizon;
    Ok(Bounds { horizon, horizon_s, replications: shape.replications })
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"{
  "scenario": "s",
  "horizon": "1min",
  "replications": 3,
  "variants": [{"name": "a", "parameters": {"model": "tcp"}, "cells": [{"sweep": []}]}],
  "added_later": true
}"#;

    fn why(text: &str) -> String {
        check("m.json", text).unwrap_err().to_string()
    }

    #[test]
    fn a_run_manifest_gives_its_horizon_and_replications() {
        let b = check("m.json", GOOD).unwrap();
        assert_eq!((b.horizon.as_str(), b.horizon_s, b.replications), ("1min", 60.0, Some(3)));
        assert_eq!(b.last_replication(), 2);
    }

    #[test]
    fn what_is_not_a_manifest_is_refused_with_its_place_and_key() {
        let e = why("[]");
        assert!(
            e.starts_with(
                "cannot read m.json: line 1, column 1: invalid type: sequence, expected a JSON object: a run's manifest"
            ),
            "{e}"
        );
        let e = why(r#"{"scenario": "s", "horizon": "1s", "variants": [["a"]]}"#);
        assert!(e.contains("key `variants[0]`: invalid type: sequence, expected a JSON object: a variant"), "{e}");
        let e = why(&GOOD.replace("\"1min\"", "\"soon\""));
        assert!(e.contains("line 3, column 19, key `horizon`: `soon` is not a horizon"), "{e}");
        let e = why(&GOOD.replace("\"name\": \"a\"", "\"name\": 3"));
        assert!(e.contains("key `variants[0].name`: invalid type: integer `3`, expected a string"), "{e}");
        let e = why(&GOOD.replace("\"replications\": 3", "\"replications\": -1"));
        assert!(e.contains("line 4, column 20, key `replications`: invalid value: integer `-1`"), "{e}");
        let e = why(&GOOD.replace("  \"horizon\": \"1min\",\n", ""));
        assert!(e.contains("missing key `horizon`"), "{e}");
        let e = why(&GOOD.replace("[{\"name\"", "[{\"name\": \"a\"}, {\"name\""));
        assert!(e.contains("key `variants`: two variants are named `a`"), "{e}");
        let e = why(&GOOD.replace("\"cells\": [{\"sweep\": []}]", "\"cells\": 5"));
        assert!(e.contains("key `variants[0].cells`"), "{e}");
    }
}
