//! The router of an answered outage (`[[path.event]] kind = "icmp-unreachable"` with a
//! `duration`): every forward packet sent in the window is dropped and quoted in an ICMP
//! destination unreachable (RFC 6069 section 4; RFC 792 quotes the offending header).
//!
//! Where the router sits is not known, so the answer is taken to come back one base RTT
//! after the send: half the base RTT out to the router, half back, as if the broken link
//! were at the far end of the path. That keeps the answer free of random draws (a path
//! with the window draws what it draws without) and never earlier than a real answer.

use crate::engine::time::SimTime;
use crate::model::path::Path;

/// When the unreachable answering a forward packet sent at `sent` reaches the sender, if
/// a router answers it.
pub(super) fn unreachable_at(path: &Path, sent: SimTime) -> Option<SimTime> {
    path.spec().script().answers(sent).then(|| sent.saturating_add(path.base_rtt_at(sent)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::time::SimDuration;
    use crate::model::path::{PathConfig, PathEvent};

    #[test]
    fn rfc6069_section_4_the_answer_comes_back_one_base_rtt_after_each_send_in_the_window() {
        let mut config = PathConfig::new(SimDuration::from_millis(100));
        config.event = vec![PathEvent::IcmpUnreachable {
            at: SimDuration::from_secs(1),
            duration: Some(SimDuration::from_secs(2)),
        }];
        let path = Path::new(&config);
        let at = |ms: u64| SimTime::ZERO + SimDuration::from_millis(ms);
        assert_eq!(unreachable_at(&path, at(999)), None);
        assert_eq!(unreachable_at(&path, at(1000)), Some(at(1100)));
        assert_eq!(unreachable_at(&path, at(2999)), Some(at(3099)));
        assert_eq!(unreachable_at(&path, at(3000)), None);
    }
}
