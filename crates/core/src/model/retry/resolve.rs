//! From `[retry.policy]` as written to a checked [`RetryPolicy`]: lay the config over its
//! preset, then fill the defaults and check. It sits above [`super::config`] and
//! [`super::presets`] so that the presets are built from config types while the config
//! never looks a preset up.

use super::config::{RetryPolicy, RetryPolicyConfig};
use super::presets;
use crate::model::config_error::ConfigErrors;

impl RetryPolicyConfig {
    /// The preset's config with this one laid over it; an unknown preset is reported.
    pub fn merged(&self) -> Result<RetryPolicyConfig, ConfigErrors> {
        let Some(name) = &self.preset else {
            return Ok(self.clone());
        };
        match presets::find(name) {
            Some(p) => Ok(self.over(p.config())),
            None => {
                let mut errs = ConfigErrors::new();
                errs.push("preset", presets::unknown(name));
                Err(errs)
            }
        }
    }

    /// Fills defaults from the preset (or the table in the module docs) and checks the
    /// combination. Every problem is reported, each naming its key.
    pub fn resolve(&self) -> Result<RetryPolicy, ConfigErrors> {
        let mut errs = ConfigErrors::new();
        if self.max_attempts.is_some() && self.max_retries.is_some() {
            errs.push(
                "max_retries",
                "set max_attempts or max_retries, not both (max_retries = n means max_attempts = n + 1)",
            );
        }
        let c = match self.merged() {
            Ok(c) => c,
            Err(e) => {
                errs.extend_under("", e);
                return Err(errs);
            }
        };
        let policy = c.build(&mut errs);
        errs.into_result(policy)
    }
}
