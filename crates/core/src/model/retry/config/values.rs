//! Values a key may take besides its plain type: a duration or `"none"`, a count or
//! `"none"`, and `retry_on`'s list of words written either way.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::engine::time::SimDuration;

/// A duration, or `"none"` for no such limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OptionalDuration(pub Option<SimDuration>);

/// A whole number, or `"none"` for no limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OptionalCount(pub Option<u32>);

impl OptionalDuration {
    pub fn parse(v: &str) -> Result<Self, String> {
        match v.trim() {
            "none" => Ok(OptionalDuration(None)),
            d => SimDuration::parse(d).map(|d| OptionalDuration(Some(d))),
        }
    }
}

impl OptionalCount {
    pub fn parse(v: &str) -> Result<Self, String> {
        match v.trim() {
            "none" => Ok(OptionalCount(None)),
            n => n
                .parse::<u32>()
                .map(|n| OptionalCount(Some(n)))
                .map_err(|_| format!("`{n}` is not a whole number or \"none\"")),
        }
    }
}

impl fmt::Display for OptionalDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(d) => write!(f, "{d}"),
            None => f.write_str("none"),
        }
    }
}

impl Serialize for OptionalDuration {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for OptionalDuration {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = OptionalDuration;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a duration with a unit, e.g. \"60s\", or \"none\"")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<OptionalDuration, E> {
                OptionalDuration::parse(v).map_err(E::custom)
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<OptionalDuration, E> {
                Err(E::custom(format!(
                    "a bare number ({v}) is not a duration: write it with a unit, e.g. \"{v}s\", or \"none\""
                )))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<OptionalDuration, E> {
                self.visit_i64(v as i64)
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<OptionalDuration, E> {
                Err(E::custom(format!(
                    "a bare number ({v}) is not a duration: write it with a unit, e.g. \"{v}s\", or \"none\""
                )))
            }
        }
        d.deserialize_any(V)
    }
}

impl Serialize for OptionalCount {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Some(n) => s.serialize_u32(n),
            None => s.serialize_str("none"),
        }
    }
}

impl<'de> Deserialize<'de> for OptionalCount {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = OptionalCount;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a whole number, or \"none\"")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<OptionalCount, E> {
                match v {
                    "none" => Ok(OptionalCount(None)),
                    _ => Err(E::custom(format!("`{v}` is not a count: write a whole number (e.g. 5) or \"none\""))),
                }
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<OptionalCount, E> {
                u32::try_from(v)
                    .map(|n| OptionalCount(Some(n)))
                    .map_err(|_| E::custom(format!("{v} is not a whole number from 0 to {}", u32::MAX)))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<OptionalCount, E> {
                u32::try_from(v)
                    .map(|n| OptionalCount(Some(n)))
                    .map_err(|_| E::custom(format!("{v} is not a whole number from 0 to {}", u32::MAX)))
            }
        }
        d.deserialize_any(V)
    }
}

/// `retry_on` as a list of words or one comma-separated string of them, so that
/// `--set retry_on=timeout,5xx` needs no TOML array.
pub(super) fn words<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<String>>, D::Error> {
    struct Words;
    impl<'de> serde::de::Visitor<'de> for Words {
        type Value = Vec<String>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a list of conditions such as [\"timeout\", \"5xx\"], or one string \"timeout, 5xx\"")
        }
        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Vec<String>, E> {
            Ok(v.split(',').map(|w| w.trim().to_string()).filter(|w| !w.is_empty()).collect())
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<String>, A::Error> {
            let mut words = Vec::new();
            while let Some(w) = seq.next_element::<String>()? {
                words.push(w);
            }
            Ok(words)
        }
    }
    d.deserialize_any(Words).map(Some)
}
