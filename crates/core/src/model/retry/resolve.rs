//! From `[retry.policy]` as written to a checked [`RetryPolicy`]: lay the config over its
//! preset, then fill the defaults and check. It sits above [`super::config`] and
//! [`super::presets`] so that the presets are built from config types while the config
//! never looks a preset up.

use super::config::{PolicyParts, RetryPolicy, RetryPolicyConfig};
use super::presets;
use crate::model::config_error::ConfigErrors;

impl RetryPolicyConfig {
    /// The preset's groups with this config's laid over them; an unknown preset is
    /// reported.
    pub fn merged(&self) -> Result<PolicyParts, ConfigErrors> {
        let parts = self.parts();
        let Some(name) = &self.preset else {
            return Ok(parts);
        };
        match presets::find(name) {
            Some(p) => Ok(parts.over(p.config().parts())),
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
        self.parts().limit.check_one_key(&mut errs);
        let parts = match self.merged() {
            Ok(parts) => parts,
            Err(e) => {
                errs.extend_under("", e);
                return Err(errs);
            }
        };
        let policy = parts.build(&mut errs);
        errs.into_result(policy)
    }
}
