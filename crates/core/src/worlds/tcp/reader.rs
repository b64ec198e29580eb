//! `[tcp.receiver]`: the peer's receive buffer and when its application stops reading.

use serde::{Deserialize, Serialize};

use crate::engine::time::SimDuration;
use crate::model::config_error::ConfigErrors;

/// `[tcp.receiver]`: a receive buffer of `buffer` segments, read by an application that
/// takes everything as it arrives except during its stalls.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ReceiverConfig {
    /// Receive buffer in segments: the most the receiver advertises.
    pub buffer: u64,
    /// Times the application stops reading, in `at` order, not overlapping.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stall: Vec<Stall>,
}

/// The application stops reading at `at`, for `duration` or, without one, for good.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Stall {
    pub at: SimDuration,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<SimDuration>,
}

impl Stall {
    /// When the application reads again, if it does.
    pub fn end(&self) -> Option<SimDuration> {
        self.duration.map(|d| self.at + d)
    }
}

impl ReceiverConfig {
    /// Keys relative to `[tcp.receiver]`.
    pub fn validate(&self) -> ConfigErrors {
        let mut errors = ConfigErrors::new();
        if self.buffer == 0 {
            errors.push("buffer", "must be at least 1 segment");
        }
        for (k, stall) in self.stall.iter().enumerate() {
            if stall.duration == Some(SimDuration::ZERO) {
                errors.push(
                    format!("stall[{k}].duration"),
                    "must be longer than 0s (leave it out for a stall that never ends)",
                );
            }
            if let Some(next) = self.stall.get(k + 1) {
                match stall.end() {
                    None => errors.push(
                        format!("stall[{k}].duration"),
                        "is required: only the last stall may last for good",
                    ),
                    Some(end) if end > next.at => errors.push(
                        format!("stall[{}].at", k + 1),
                        format!("must be at or after the end of stall {k} ({end}): stalls are in `at` order and do not overlap"),
                    ),
                    Some(_) => {}
                }
            }
        }
        errors
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stall(at: u64, duration: Option<u64>) -> Stall {
        Stall { at: SimDuration::from_secs(at), duration: duration.map(SimDuration::from_secs) }
    }

    #[test]
    fn stalls_must_be_in_order_and_only_the_last_may_last_for_good() {
        let ok = ReceiverConfig { buffer: 64, stall: vec![stall(5, Some(10)), stall(15, None)] };
        assert!(ok.validate().is_empty());
        let bad = ReceiverConfig { buffer: 0, stall: vec![stall(5, None), stall(8, Some(0)), stall(7, Some(1))] };
        let text = bad.validate().to_string();
        assert!(text.contains("buffer"), "{text}");
        assert!(text.contains("stall[0].duration"), "{text}");
        assert!(text.contains("stall[1].duration"), "{text}");
        assert!(text.contains("stall[2].at"), "{text}");
    }
}
