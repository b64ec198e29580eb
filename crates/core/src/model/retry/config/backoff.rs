//! The delay formula's keys: the exponential curve (`base`, `multiplier`, `cap`,
//! `cap_applies`) and the jitter drawn around it (`jitter` and the parameter of its mode).

use super::{OptionalDuration, SimDuration, only, switches};
use crate::model::config_error::ConfigErrors;
use crate::model::retry::jitter::{CapApplies, Jitter, JitterMode};

/// `base`, `multiplier`, `cap`, `cap_applies` as written.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BackoffConfig {
    pub base: Option<SimDuration>,
    pub multiplier: Option<f64>,
    pub cap: Option<OptionalDuration>,
    pub cap_applies: Option<CapApplies>,
}

/// The curve's constants once checked.
pub struct Curve {
    pub base: SimDuration,
    pub multiplier: f64,
    pub cap: Option<SimDuration>,
    pub cap_applies: CapApplies,
}

impl BackoffConfig {
    pub fn over(&self, mut base: BackoffConfig) -> BackoffConfig {
        lay!(self, base; base, multiplier, cap, cap_applies);
        base
    }

    /// 1 s·2ᵏ capped at 1 min by default; a cap below the base is named by whichever of
    /// the two was written.
    pub fn build(&self, errs: &mut ConfigErrors) -> Curve {
        let secs = SimDuration::from_secs;
        let multiplier = self.multiplier.unwrap_or(2.0);
        if !(multiplier.is_finite() && multiplier >= 1.0) {
            errs.push(
                "multiplier",
                format!("must be at least 1 (is {multiplier}): a delay that shrinks is not a backoff"),
            );
        }
        let base = self.base.unwrap_or(secs(1));
        let cap = self.cap.map_or(Some(secs(60)), |o| o.0);
        match cap {
            Some(SimDuration::ZERO) => errs.push("cap", "must be greater than 0 (write \"none\" for no cap)"),
            Some(cap) if cap < base && self.cap.is_some() => errs.push(
                "cap",
                format!("must be at least base ({base}), is {cap}: below the base every delay would be the cap"),
            ),
            Some(cap) if cap < base => errs.push(
                "base",
                format!(
                    "must be at most the cap ({cap} by default), is {base}: raise `cap` too, or write cap = \"none\""
                ),
            ),
            _ => {}
        }
        Curve { base, multiplier, cap, cap_applies: self.cap_applies.unwrap_or(CapApplies::BeforeJitter) }
    }
}

/// `jitter` and its modes' parameters (`jitter_fraction`, `jitter_max`) as written.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JitterConfig {
    pub mode: Option<JitterMode>,
    /// proportional: ±fraction.
    pub fraction: Option<f64>,
    /// additive: the U(0, max) added.
    pub max: Option<SimDuration>,
}

impl JitterConfig {
    /// This laid over `base`; naming another mode drops `base`'s parameters.
    pub fn over(&self, mut base: JitterConfig) -> JitterConfig {
        if switches(&self.mode, &base.mode) {
            base.fraction = None;
            base.max = None;
        }
        lay!(self, base; mode, fraction, max);
        base
    }

    /// Full jitter by default; `multiplier` is the curve's, which `span` draws up to.
    pub fn build(&self, multiplier: f64, errs: &mut ConfigErrors) -> Jitter {
        let mode = self.mode.unwrap_or(JitterMode::Full);
        only(
            errs,
            "jitter_fraction",
            self.fraction.is_some() && mode != JitterMode::Proportional,
            "jitter = \"proportional\"",
        );
        only(errs, "jitter_max", self.max.is_some() && mode != JitterMode::Additive, "jitter = \"additive\"");
        let jitter = match mode {
            JitterMode::None => Jitter::None,
            JitterMode::Full => Jitter::Full,
            JitterMode::Equal => Jitter::Equal,
            JitterMode::Decorrelated => Jitter::Decorrelated,
            JitterMode::Half => Jitter::Half,
            JitterMode::Span => Jitter::Span,
            JitterMode::Proportional => {
                let fraction = self.fraction.unwrap_or(0.2);
                if !(fraction > 0.0 && fraction <= 1.0) {
                    errs.push("jitter_fraction", format!("must be greater than 0 and at most 1 (is {fraction})"));
                }
                Jitter::Proportional { fraction }
            }
            JitterMode::Additive => Jitter::Additive { max: self.max.unwrap_or(SimDuration::from_secs(1)) },
        };
        if mode == JitterMode::Span && multiplier <= 1.0 {
            errs.push("multiplier", "must be greater than 1 with jitter = \"span\", whose range is [d, multiplier·d)");
        }
        jitter
    }
}
