//! The connection-backoff profiles as a source of delays for `backoffsim explain`: a
//! channel whose every connection attempt is refused. It never gives up (gRPC channels
//! keep reconnecting), so `explain` follows it for a fixed number of attempts.

use super::{DelaySource, Facts, Next};
use crate::engine::rng::{Purpose, Seeds, SimRng};
use crate::engine::time::{SimDuration, SimTime};
use crate::human::duration as human;
use crate::model::grpc::{GrpcBackoff, GrpcBackoffParams};

pub struct ConnectionSource {
    pub params: GrpcBackoffParams,
}

impl DelaySource for ConnectionSource {
    type Caller = GrpcBackoff;

    fn start(&self, _start: SimTime) -> GrpcBackoff {
        GrpcBackoff::new(&self.params)
    }

    fn after_failure(&self, b: &mut GrpcBackoff, attempt_start: SimTime, now: SimTime, rng: &mut SimRng) -> Next {
        // The attempt that just failed began at `attempt_start`: the profile plans it
        // there (spec, grpc-core and grpc-go draw then), and reacts to its failure now.
        b.start_attempt(&self.params, attempt_start, rng);
        Next::Attempt { at: b.on_failure(&self.params, now, rng).max(now) }
    }

    fn nominal(&self, k: u32) -> Option<SimDuration> {
        // The base sequence: the same profile with jitter 0.
        let mut p = self.params.clone();
        p.jitter = 0.0;
        let mut rng = Seeds::new(0).stream(0, 0, Purpose::Jitter);
        let mut b = GrpcBackoff::new(&p);
        for i in 0..=k {
            let plan = b.start_attempt(&p, SimTime::ZERO, &mut rng);
            if i == k {
                return Some(plan.backoff);
            }
            b.on_failure(&p, SimTime::ZERO, &mut rng);
        }
        None
    }

    fn facts(&self, _attempt_time: SimDuration) -> Facts {
        let p = &self.params;
        let profile = p.profile.name();
        let source = match profile {
            "spec" => "grpc/grpc doc/connection-backoff.md",
            "grpc-core" => "grpc/grpc src/core/util/backoff.cc, src/core/client_channel/subchannel.cc",
            "grpc-go" => "grpc/grpc-go internal/backoff/backoff.go, clientconn.go",
            _ => {
                "grpc/grpc-java core/src/main/java/io/grpc/internal/ExponentialBackoffPolicy.java, InternalSubchannel.java"
            }
        };
        let deadline = match p.min_connect_timeout {
            Some(mct) => format!("each attempt gets at least {} (MIN_CONNECT_TIMEOUT)", human(mct)),
            None => "no connect deadline of its own (the transport's applies)".into(),
        };
        Facts {
            title: format!(
                "grpc-connection-{}: gRPC connection backoff, profile {profile}",
                profile.trim_start_matches("grpc-")
            ),
            lines: vec![
                ("source", source.into()),
                (
                    "sleep",
                    format!(
                        "base {} ×{} per failure up to {}, jitter ±{} %",
                        human(p.initial_backoff),
                        p.multiplier,
                        human(p.max_backoff),
                        crate::human::fmt_num(p.jitter * 100.0, 3)
                    ),
                ),
                ("limit", "never gives up: a channel reconnects for ever; the table follows it for 20 attempts".into()),
                ("deadline", deadline),
                (
                    "cap",
                    format!(
                        "{} on the base, not a hard cap: jitter takes a delay up to {} % above it",
                        human(p.max_backoff),
                        crate::human::fmt_num(p.jitter * 100.0, 3)
                    ),
                ),
            ],
            cap: Some(p.max_backoff),
            worst_sleep: None,
            worst_give_up: None,
        }
    }
}
