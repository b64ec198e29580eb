//! The scenario file as written: serde types, defaults, and nothing resolved yet.

use serde::Deserialize;

use crate::engine::time::SimDuration;
use crate::model::path::PathConfig;
use crate::model::server::ServerConfig;

use crate::worlds::TraceConfig;

/// The scenario file as written; its model sections come from the list of models.
macro_rules! raw_scenario {
    ($($variant:ident($field:ident: $config:ty)),* $(,)?) => {
        #[derive(Clone, Debug, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct RawScenario {
            /// Names the results directory; letters, digits, `-`, `_` and `.`.
            pub name: String,
            /// The question the scenario asks, shown at the top of its report; none by default.
            #[serde(default)]
            pub description: String,
            #[serde(default = "default_seed")]
            pub seed: u64,
            #[serde(default = "default_replications")]
            pub replications: u32,
            /// How much simulated time each replication covers.
            pub horizon: SimDuration,
            /// Events one replication may handle before it is stopped with an error.
            #[serde(default = "default_max_events")]
            pub max_events: u64,
            $(pub $field: Option<$config>,)*
            pub server: Option<ServerConfig>,
            pub path: Option<PathConfig>,
            #[serde(default)]
            pub trace: TraceConfig,
        }
    };
}

crate::worlds::for_each_model!(raw_scenario);

/// Keys a `[[variant]]` may not set, with the reason given to the user.
pub const SHARED_KEYS: &[(&str, &str)] = &[
    (
        "seed",
        "all variants share the seed, so that they see the same random numbers (common random numbers); set it at the top level",
    ),
    ("replications", "all variants run the same replications; set it at the top level"),
    ("horizon", "all variants cover the same simulated time; set it at the top level"),
    ("max_events", "set the event budget at the top level"),
    ("trace", "set [trace] at the top level"),
    ("sweep", "the sweep is shared by all variants; set [sweep] at the top level"),
];

/// Keys of a `[[variant]]` table that describe it rather than override the base.
pub const VARIANT_OWN_KEYS: &[&str] = &["name", "description"];

fn default_seed() -> u64 {
    1
}
fn default_replications() -> u32 {
    1
}
fn default_max_events() -> u64 {
    100_000_000
}
