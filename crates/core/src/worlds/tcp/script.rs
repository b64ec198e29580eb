//! A scripted workload (`[tcp] workload = { kind = "script" }` with `[[tcp.write]]`): the
//! application writes given numbers of segments at given times after its connection
//! starts, idles in between, and may close. A close ends the writes; no FIN is sent, since the model has no FIN on
//! the wire: the connection counts as finished once everything written before the close
//! is acknowledged, as a transfer does.

use serde::{Deserialize, Serialize};

use super::Workload;
use crate::engine::time::SimDuration;
use crate::model::config_error::ConfigErrors;

/// One `[[tcp.write]]`: `segments` segments handed to the sender `at` after the
/// connection starts (the SYN, or the first data without a handshake).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ScriptedWrite {
    pub at: SimDuration,
    #[serde(default = "one")]
    pub segments: u64,
}

fn one() -> u64 {
    1
}

/// Writes only with a script, in time order (equal times allowed: they add up), each at
/// least one segment, all before the close; keys relative to `[tcp]`.
pub(super) fn validate(workload: &Workload, write: &[ScriptedWrite]) -> ConfigErrors {
    let mut errors = ConfigErrors::new();
    let close = match *workload {
        Workload::Script { close } => close,
        _ if write.is_empty() => return errors,
        _ => {
            errors.push("write", "goes with workload = { kind = \"script\" }: other workloads write on their own");
            return errors;
        }
    };
    if write.is_empty() {
        errors.push("write", "missing: a script needs at least one [[tcp.write]] with `at` and `segments`");
    }
    for (i, w) in write.iter().enumerate() {
        if w.segments == 0 {
            errors.push(format!("write[{i}].segments"), "must be at least 1");
        }
        if i > 0 && w.at < write[i - 1].at {
            errors.push(
                format!("write[{i}].at"),
                format!(
                    "must not be earlier than write[{}].at ({}), got {}: list writes in time order",
                    i - 1,
                    write[i - 1].at,
                    w.at
                ),
            );
        }
        if let Some(close) = close
            && w.at > close
        {
            errors.push(
                format!("write[{i}].at"),
                format!("{} is after the close at {close}: nothing is written after a close", w.at),
            );
        }
    }
    errors
}

/// The writes grouped by time: (offset from the start, segments written then).
pub(super) fn batches(write: &[ScriptedWrite]) -> Vec<(SimDuration, u64)> {
    let mut out: Vec<(SimDuration, u64)> = Vec::with_capacity(write.len());
    for w in write {
        match out.last_mut() {
            Some(last) if last.0 == w.at => last.1 = last.1.saturating_add(w.segments),
            _ => out.push((w.at, w.segments)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(n: u64) -> SimDuration {
        SimDuration::from_secs(n)
    }

    #[test]
    fn writes_at_one_time_add_up() {
        let w = [
            ScriptedWrite { at: s(1), segments: 2 },
            ScriptedWrite { at: s(1), segments: 1 },
            ScriptedWrite { at: s(3), segments: 4 },
        ];
        assert_eq!(batches(&w), vec![(s(1), 3), (s(3), 4)]);
    }

    #[test]
    fn out_of_order_empty_or_late_writes_name_their_key() {
        let w = [
            ScriptedWrite { at: s(2), segments: 1 },
            ScriptedWrite { at: s(1), segments: 0 },
            ScriptedWrite { at: s(6), segments: 1 },
        ];
        let script = |close| Workload::Script { close };
        assert_eq!(validate(&script(Some(s(5))), &w).keys(), ["write[1].segments", "write[1].at", "write[2].at"]);
        assert_eq!(validate(&script(None), &[]).keys(), ["write"]);
        assert!(validate(&script(Some(s(2))), &w[..1]).is_empty(), "a write at the close itself is allowed");
        assert_eq!(validate(&Workload::Transfer { segments: 1 }, &w[..1]).keys(), ["write"]);
        assert!(validate(&Workload::Transfer { segments: 1 }, &[]).is_empty());
    }
}
