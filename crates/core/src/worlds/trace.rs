//! `[trace]`, the section shared by the models that trace single clients: which
//! clients' and replications' RTO traces are written to `trace.csv`.

use serde::{Deserialize, Serialize};

/// `[trace]`: which connections' RTO traces are written to `trace.csv`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct TraceConfig {
    #[serde(default = "first")]
    pub clients: Vec<u32>,
    /// Also trace clients 0 to `first_clients − 1`, for tests and small herds.
    #[serde(default)]
    pub first_clients: u32,
    #[serde(default = "first")]
    pub replications: Vec<u32>,
}

impl Default for TraceConfig {
    fn default() -> Self {
        TraceConfig { clients: first(), first_clients: 0, replications: first() }
    }
}

impl TraceConfig {
    pub fn traces(&self, client: u32) -> bool {
        client < self.first_clients || self.clients.contains(&client)
    }
}

fn first() -> Vec<u32> {
    vec![0]
}
