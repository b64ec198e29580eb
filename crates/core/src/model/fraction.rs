//! Fractions and probabilities as a user writes them: `0.2` or `"20%"`.
//!
//! People say "20 % jitter" and "5 % loss", and a key that takes a number from 0 to 1
//! should take that too rather than answer "expected f64". A percentage is read by
//! moving the decimal point in the text (`"0.1%"` is read as `0.1e-2`), so `"20%"` gives
//! exactly the f64 that `0.2` gives. Range checks stay with each key's validation.

use serde::Deserializer;
use serde::de::{Error, Visitor};
use std::fmt;

/// A number (`0.2`) or a percentage (`"20%"`, `"12.5 %"`) as a fraction; NaN, infinities
/// and anything else are refused with an example of both forms.
pub fn parse(v: &str) -> Result<f64, String> {
    let t = v.trim();
    let number = match t.strip_suffix('%') {
        Some(pct) => {
            let pct = pct.trim_end();
            // A bare number without sign or exponent, so that the shifted text means
            // what the user wrote ("1e2%" or "%%" would be surprising).
            let plain = !pct.is_empty() && pct.chars().all(|c| c.is_ascii_digit() || c == '.' || c == '-');
            if plain { format!("{pct}e-2").parse::<f64>().ok() } else { None }
        }
        None => t.parse::<f64>().ok(),
    };
    match number {
        Some(x) if x.is_finite() => Ok(x),
        _ => Err(format!("`{v}` is not {EXPECTED}")),
    }
}

const EXPECTED: &str = "a fraction: write a number between 0 and 1, e.g. 0.2, or a percentage, e.g. \"20%\"";

struct FractionVisitor;

impl Visitor<'_> for FractionVisitor {
    type Value = f64;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(EXPECTED)
    }

    fn visit_f64<E: Error>(self, v: f64) -> Result<f64, E> {
        Ok(v)
    }

    fn visit_i64<E: Error>(self, v: i64) -> Result<f64, E> {
        Ok(v as f64)
    }

    fn visit_u64<E: Error>(self, v: u64) -> Result<f64, E> {
        Ok(v as f64)
    }

    fn visit_str<E: Error>(self, v: &str) -> Result<f64, E> {
        parse(v).map_err(E::custom)
    }
}

/// For `#[serde(deserialize_with = "fraction::deserialize")]` on an `f64`.
pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    d.deserialize_any(FractionVisitor)
}

/// For `#[serde(default, deserialize_with = "fraction::option")]` on an `Option<f64>`:
/// a key that is present is `Some`.
pub fn option<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    d.deserialize_any(FractionVisitor).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, Debug)]
    struct T {
        #[serde(deserialize_with = "deserialize")]
        p: f64,
        #[serde(default, deserialize_with = "option")]
        q: Option<f64>,
    }

    fn read(src: &str) -> Result<T, String> {
        toml::from_str::<T>(src).map_err(|e| e.to_string())
    }

    #[test]
    fn a_percentage_is_exactly_the_fraction_written_as_a_number() {
        for (pct, frac) in [("20%", 0.2), ("5%", 0.05), ("12.5%", 0.125), ("0.1%", 0.001), ("100 %", 1.0), ("0%", 0.0)]
        {
            assert_eq!(parse(pct), Ok(frac), "{pct}");
        }
        assert_eq!(read("p = \"20%\"\nq = \"7%\"").unwrap().p, 0.2);
        assert_eq!(read("p = \"20%\"\nq = \"7%\"").unwrap().q, Some(0.07));
    }

    #[test]
    fn numbers_still_work_and_integers_are_numbers() {
        let t = read("p = 0.25").unwrap();
        assert_eq!((t.p, t.q), (0.25, None));
        assert_eq!(read("p = 1").unwrap().p, 1.0);
        assert_eq!(read("p = 0").unwrap().p, 0.0);
    }

    #[test]
    fn out_of_range_values_pass_through_for_the_key_to_refuse() {
        assert_eq!(parse("150%"), Ok(1.5));
        assert_eq!(parse("-5%"), Ok(-0.05));
    }

    #[test]
    fn anything_else_is_refused_with_both_forms_as_examples() {
        for bad in ["p = \"twenty\"", "p = \"1e2%\"", "p = \"%\"", "p = true", "p = \"nan\""] {
            let err = read(bad).unwrap_err();
            assert!(err.contains("between 0 and 1, e.g. 0.2") && err.contains("\"20%\""), "{bad}: {err}");
        }
    }
}
