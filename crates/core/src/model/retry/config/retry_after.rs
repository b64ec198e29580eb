//! A server's Retry-After hint: how it combines with the computed backoff
//! (`retry_after`), the extra it may add in `max` mode, and whether it resets the backoff.

use super::{OptionalDuration, only, switches};
use crate::model::config_error::ConfigErrors;
use crate::model::retry::retry_after::{RetryAfterMode, RetryAfterPolicy};

/// `retry_after`, `retry_after_max_extra`, `retry_after_resets_backoff` as written.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RetryAfterConfig {
    pub mode: Option<RetryAfterMode>,
    /// max: the hint counts up to the computed delay plus this.
    pub max_extra: Option<OptionalDuration>,
    pub resets_backoff: Option<bool>,
}

impl RetryAfterConfig {
    /// This laid over `base`; naming another mode drops `base`'s `max_extra`.
    pub fn over(&self, mut base: RetryAfterConfig) -> RetryAfterConfig {
        if switches(&self.mode, &base.mode) {
            base.max_extra = None;
        }
        lay!(self, base; mode, max_extra, resets_backoff);
        base
    }

    /// The hint replaces the computed delay by default, with no extra and no reset.
    pub fn build(&self, errs: &mut ConfigErrors) -> RetryAfterPolicy {
        let mode = self.mode.unwrap_or(RetryAfterMode::Replace);
        let max_extra = self.max_extra.and_then(|o| o.0);
        only(
            errs,
            "retry_after_max_extra",
            max_extra.is_some() && mode != RetryAfterMode::Max,
            "retry_after = \"max\"",
        );
        RetryAfterPolicy { mode, max_extra, resets_backoff: self.resets_backoff.unwrap_or(false) }
    }
}
