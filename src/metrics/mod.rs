//! What a run records and how it is summarized.
pub mod stats;
pub mod trace;

/// One metric's value in one replication. `None` when the replication has no value for
/// it (a convergence that never happened): the metric is still listed, so every
/// replication reports the same metrics in the same order.
#[derive(Clone, Debug, PartialEq)]
pub struct MetricValue {
    pub name: String,
    pub unit: &'static str,
    pub value: Option<f64>,
}

impl MetricValue {
    pub fn new(name: &str, unit: &'static str, value: f64) -> Self {
        MetricValue {
            name: name.to_string(),
            unit,
            value: Some(value),
        }
    }

    pub fn maybe(name: &str, unit: &'static str, value: Option<f64>) -> Self {
        MetricValue {
            name: name.to_string(),
            unit,
            value,
        }
    }
}

/// Everything one replication of one variant produced.
#[derive(Clone, Debug, Default)]
pub struct ReplicationResult {
    pub metrics: Vec<MetricValue>,
    pub trace: Vec<trace::TraceRow>,
    pub events: u64,
}
