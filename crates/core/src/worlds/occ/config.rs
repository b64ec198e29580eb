//! `[occ]`: N clients contending to update one row with optimistic concurrency, each
//! backing off after a lost race (Brooker, "Exponential Backoff And Jitter", 2015; see
//! `model::occ`).
//!
//! ```toml
//! [occ]
//! clients = 100
//! strategy = "full"   # none | exponential | full | equal | decorrelated
//! base = "5ms"
//! cap = "2s"
//! hop = { dist = "normal", mean = "10ms", sd = "2ms" }
//! ```
//!
//! A scenario with `[occ]` has no `[path]` and no `[server]`: every message hop takes one
//! independent draw of `hop`, and the server answers at once.

use crate::model::config_error::ConfigErrors;
use serde::{Deserialize, Serialize};

use crate::engine::time::SimDuration;
use crate::model::occ::{Backoff, Strategy};
use crate::model::path::DelayConfig;

/// Optimistic-concurrency contention: the resolved `[occ]` section is all it needs.
#[derive(Clone, Debug, Serialize)]
pub struct OccSpec {
    pub occ: OccConfig,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct OccConfig {
    /// Clients, all starting at t = 0; each updates the row once.
    pub clients: u32,
    /// How a client waits after a failed write.
    pub strategy: Strategy,
    /// The backoff's base: the first exponential value is base·2¹.
    #[serde(default = "default_base")]
    pub base: SimDuration,
    /// The largest backoff.
    #[serde(default = "default_cap")]
    pub cap: SimDuration,
    /// The delay of every message hop (read, read reply, write, write reply), drawn
    /// independently each time. The default is the original's |Normal(10 ms, 2 ms)|
    /// (`dist = "normal"` is folded, not clamped).
    #[serde(default = "default_hop")]
    pub hop: DelayConfig,
}

fn default_base() -> SimDuration {
    SimDuration::from_millis(5)
}
fn default_cap() -> SimDuration {
    SimDuration::from_secs(2)
}
fn default_hop() -> DelayConfig {
    DelayConfig::Normal { mean: SimDuration::from_millis(10), sd: SimDuration::from_millis(2) }
}

impl OccConfig {
    pub fn backoff(&self) -> Backoff {
        Backoff { strategy: self.strategy, base: self.base, cap: self.cap }
    }

    /// Checks the type system cannot make; keys relative to `[occ]`.
    pub fn validate(&self) -> ConfigErrors {
        let mut errors = ConfigErrors::new();
        if self.clients == 0 {
            errors.push("clients", "must be at least 1");
        }
        if self.base > self.cap {
            errors
                .push("base", format!("{} is above the cap ({}): every backoff would be the cap", self.base, self.cap));
        }
        self.hop.validate("hop", &mut errors);
        errors
    }
}
