//! What a run records and how it is summarized.

/// An enum of the names a world writes into a file and a reader matches on again (trace
/// events, series columns, distributions): the writer writes `name()`, the reader
/// matches `from_name`, and neither spells the string. A variant's index is its
/// position, which a world uses as its column index.
macro_rules! names {
    ($(#[$doc:meta])* $enum:ident { $($(#[$vdoc:meta])* $variant:ident = $name:literal,)* }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum $enum {
            $($(#[$vdoc])* $variant,)*
        }

        impl $enum {
            /// In the order written, a variant at its index.
            pub const ALL: &[$enum] = &[$($enum::$variant),*];
            pub const NAMES: &[&'static str] = &[$($name),*];

            pub const fn name(self) -> &'static str {
                Self::NAMES[self as usize]
            }

            pub fn from_name(name: &str) -> Option<Self> {
                Self::ALL.iter().copied().find(|v| v.name() == name)
            }

            pub const fn index(self) -> usize {
                self as usize
            }
        }
    };
}

pub mod bursts;
pub mod quantile;
pub mod series;
pub mod stats;
pub mod time_weighted;
pub mod trace;
pub mod wire;

/// The step between the fractions of `ReplicationResult::quantiles`.
pub const QUANTILE_STEP: f64 = 0.01;

/// One metric's value in one replication. `None` when the replication has no value for
/// it (a convergence that never happened): the metric is still listed, so every
/// replication reports the same metrics in the same order.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MetricValue {
    pub name: String,
    #[serde(deserialize_with = "crate::metrics::wire::name")]
    pub unit: crate::metrics::wire::Name,
    pub value: Option<f64>,
}

impl MetricValue {
    /// A value not written by a world (a file read back, a test's made-up metric);
    /// the worlds write theirs through `MetricValue::of`, which takes a catalogue entry
    /// (`worlds::catalogue`).
    pub fn new(name: &str, unit: &'static str, value: f64) -> Self {
        MetricValue { name: name.to_string(), unit, value: Some(value) }
    }

    pub fn maybe(name: &str, unit: &'static str, value: Option<f64>) -> Self {
        MetricValue { name: name.to_string(), unit, value }
    }
}

/// Everything one replication of one variant produced.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct ReplicationResult {
    pub metrics: Vec<MetricValue>,
    pub trace: Vec<trace::TraceRow>,
    pub events: u64,
    /// Attempts per time bin at the server, for models with a shared server.
    pub bins: Option<bursts::Bins>,
    /// Quantities per time bin (`series.csv`), for models that track load over time.
    pub series: Option<series::Series>,
    /// Per-client distributions as quantiles at fractions 0, 0.01, 0.02, … (seconds), by
    /// metric name, e.g. `reconnect_time`; a series stops early when the rest of the
    /// population never got there.
    pub quantiles: Vec<(String, Vec<f64>)>,
    /// One row per connection attempt of the recorded clients.
    pub connections: Vec<ConnectionRow>,
}

/// One connection attempt, as `connections.csv` shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ConnectionRow {
    pub client: u32,
    /// Attempts since the client's last disconnect, from 1.
    pub attempt: u32,
    #[serde(with = "crate::metrics::wire::nanos")]
    pub start: crate::engine::time::SimTime,
    #[serde(with = "crate::metrics::wire::nanos")]
    pub end: crate::engine::time::SimTime,
    /// `connected`, `refused`, `timeout` or `reset`.
    #[serde(deserialize_with = "crate::metrics::wire::name")]
    pub outcome: crate::metrics::wire::Name,
    /// The profile's base backoff for this attempt.
    #[serde(with = "crate::metrics::wire::nanos")]
    pub backoff: crate::engine::time::SimDuration,
    /// The drawn delay that schedules the next attempt.
    #[serde(with = "crate::metrics::wire::nanos")]
    pub delay: crate::engine::time::SimDuration,
    #[serde(with = "crate::metrics::wire::nanos")]
    pub deadline: Option<crate::engine::time::SimTime>,
}
