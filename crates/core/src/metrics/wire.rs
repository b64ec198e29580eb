//! How a replication's results cross from a shard to a merge: exactly. Times go as
//! integer nanoseconds (their human `Serialize` rounds nothing today, but a part must
//! not depend on a display format), floats as their bits (postcard's encoding, so NaN
//! bins and every last digit survive), and the fixed names the models give events,
//! units and columns come back as `&'static str` through a small interner.

use std::collections::BTreeSet;
use std::sync::{Mutex, PoisonError};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::engine::time::{SimDuration, SimTime};

/// A fixed name a model gives (an event, a unit, a column): `&'static str`. The alias
/// also keeps serde's derive from taking a `&str` field as borrowed from the input, which
/// would tie what is read to the bytes it was read from.
pub type Name = &'static str;

/// A value carried as plain integers.
pub trait Exact: Sized {
    type Repr: Serialize + for<'de> Deserialize<'de>;
    fn to_repr(&self) -> Self::Repr;
    fn from_repr(repr: Self::Repr) -> Self;
}

impl Exact for SimTime {
    type Repr = u64;
    fn to_repr(&self) -> u64 {
        self.as_nanos()
    }
    fn from_repr(repr: u64) -> Self {
        SimTime(repr)
    }
}

impl Exact for SimDuration {
    type Repr = u64;
    fn to_repr(&self) -> u64 {
        self.as_nanos()
    }
    fn from_repr(repr: u64) -> Self {
        SimDuration::from_nanos(repr)
    }
}

impl<T: Exact> Exact for Option<T> {
    type Repr = Option<T::Repr>;
    fn to_repr(&self) -> Self::Repr {
        self.as_ref().map(T::to_repr)
    }
    fn from_repr(repr: Self::Repr) -> Self {
        repr.map(T::from_repr)
    }
}

/// `#[serde(with = "crate::metrics::wire::nanos")]` on a time, a duration, or an option of
/// either.
pub mod nanos {
    use super::*;

    pub fn serialize<T: Exact, S: Serializer>(value: &T, s: S) -> Result<S::Ok, S::Error> {
        value.to_repr().serialize(s)
    }

    pub fn deserialize<'de, T: Exact, D: Deserializer<'de>>(d: D) -> Result<T, D::Error> {
        T::Repr::deserialize(d).map(T::from_repr)
    }
}

/// Every distinct name read back, kept for the life of the process: a merge reads a
/// handful (events, units, column names), however many rows hold them.
static NAMES: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());

/// `name` as a `&'static str`, allocated once per distinct name.
pub fn intern(name: String) -> &'static str {
    let mut names = NAMES.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(&known) = names.get(name.as_str()) {
        return known;
    }
    let leaked: &'static str = Box::leak(name.into_boxed_str());
    names.insert(leaked);
    leaked
}

/// `#[serde(deserialize_with = "crate::metrics::wire::name")]` on a `&'static str`.
pub fn name<'de, D: Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
    String::deserialize(d).map(intern)
}

/// `name` on an `Option<&'static str>`.
pub fn opt_name<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'static str>, D::Error> {
    Option::<String>::deserialize(d).map(|n| n.map(intern))
}

/// `name` for a series' named columns.
pub fn columns<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(&'static str, Vec<f64>)>, D::Error> {
    let columns: Vec<(String, Vec<f64>)> = Vec::deserialize(d)?;
    Ok(columns.into_iter().map(|(n, v)| (intern(n), v)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_read_twice_is_the_same_allocation() {
        let a = intern("retransmit".to_string());
        let b = intern(String::from("retransmit"));
        assert!(std::ptr::eq(a, b));
        assert_eq!(a, "retransmit");
    }

    #[test]
    fn times_and_optional_durations_cross_as_exact_nanoseconds() {
        #[derive(Serialize, Deserialize, PartialEq, Debug)]
        struct Row {
            #[serde(with = "nanos")]
            at: SimTime,
            #[serde(with = "nanos")]
            rto: Option<SimDuration>,
            #[serde(with = "nanos")]
            none: Option<SimDuration>,
        }
        let row = Row { at: SimTime(u64::MAX), rto: Some(SimDuration::from_nanos(1_000_000_001)), none: None };
        let bytes = postcard::to_stdvec(&row).unwrap();
        assert_eq!(postcard::from_bytes::<Row>(&bytes).unwrap(), row);
    }
}
