//! From `[retry.policy]` as written to a checked [`RetryPolicy`]: lay the config over its
//! preset, then fill the defaults and check. It sits above [`super::config`] and
//! [`super::presets`] so that the presets are built from config types while the config
//! never looks a preset up.

use super::config::{Errors, RetryPolicy, RetryPolicyConfig};
use super::presets;

impl RetryPolicyConfig {
    /// The preset's config with this one laid over it; an unknown preset is reported.
    pub fn merged(&self) -> Result<RetryPolicyConfig, Vec<(String, String)>> {
        let Some(name) = &self.preset else {
            return Ok(self.clone());
        };
        match presets::find(name) {
            Some(p) => Ok(self.over(p.config())),
            None => Err(vec![(
                "preset".into(),
                format!("unknown preset `{name}` (known: {})", presets::names().join(", ")),
            )]),
        }
    }

    /// Fills defaults from the preset (or the table in the module docs) and checks the
    /// combination. Every problem is reported, each naming its key.
    pub fn resolve(&self) -> Result<RetryPolicy, Vec<(String, String)>> {
        let mut errs = Errors(Vec::new());
        if self.max_attempts.is_some() && self.max_retries.is_some() {
            errs.push(
                "max_retries",
                "set max_attempts or max_retries, not both (max_retries = n means max_attempts = n + 1)",
            );
        }
        let c = match self.merged() {
            Ok(c) => c,
            Err(mut e) => {
                errs.0.append(&mut e);
                return Err(errs.0);
            }
        };
        let policy = c.build(&mut errs);
        if errs.0.is_empty() { Ok(policy) } else { Err(errs.0) }
    }
}
