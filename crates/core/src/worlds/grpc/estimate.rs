//! What one replication costs.

use super::world::*;
use super::*;
use crate::engine::time::SimDuration;
use crate::metrics::ConnectionRow;
use crate::model::path::{Path, PathSpec};
use crate::model::server::DownBehavior;
use crate::worlds::estimate::{self, Estimate};

/// Per channel and per episode (its first connection, and each restart that drops
/// it): one event per attempt, and three for the connection that ends it (SETTINGS,
/// the drop, the next attempt). Attempts follow the backoff (its mean, the jitter
/// averaging out) over the longest down window plus the time the server's accept
/// rate needs to let the whole herd back in; an attempt nobody answers (blackhole,
/// no SETTINGS) lasts its connect deadline. A flapping server (`drop_after`) makes a
/// cycle of four events per connection, as often as the backoff allows.
pub(super) fn estimate(spec: &GrpcSpec, horizon: SimDuration) -> Estimate {
    let (p, server) = (&spec.backoff, &spec.server);
    let n = f64::from(spec.grpc.clients);
    let h = horizon.as_secs_f64();
    let backoff =
        |k: u32| (p.initial_backoff.as_secs_f64() * p.multiplier.powi(k as i32)).min(p.max_backoff.as_secs_f64());
    let silent = server.down_behavior == DownBehavior::Blackhole || !server.send_settings;
    let deadline = p.min_connect_timeout.unwrap_or(TRANSPORT_CONNECT_TIMEOUT).as_secs_f64();
    let gap = |k: u32| if silent { backoff(k).max(deadline) } else { backoff(k) };
    let down = server.restart.iter().map(|r| r.down).chain(server.outage.iter().map(|o| o.duration)).max();
    let drain = server.accept_rate.map_or(0.0, |rate| n / rate);
    let window = match down {
        _ if !server.send_settings => horizon,
        Some(d) => SimDuration::from_secs_f64(d.as_secs_f64() + drain).unwrap_or(horizon).min(horizon),
        None => SimDuration::from_secs_f64(drain).unwrap_or(horizon).min(horizon),
    };
    let per_episode = estimate::attempts_within(window, f64::INFINITY, gap) + 3.0;
    let mut episodes = server.restart.len() as f64 + f64::from(u8::from(spec.grpc.start == Start::Connecting));
    if let Some(d) = server.drop_after {
        let cycle = d.as_secs_f64() + spec.path.base_rtt.as_secs_f64();
        let flaps = if spec.grpc.reset_on_settings {
            h / cycle
        } else {
            estimate::attempts_within(horizon, f64::INFINITY, |k| cycle + backoff(k))
        };
        // Only a connection made can flap: channels that start connected never do.
        if episodes > 0.0 {
            episodes = episodes.max(flaps);
        }
    }
    let per_channel = episodes * per_episode;
    let bins = h / spec.grpc.bin.as_secs_f64() + 1.0;
    let paths = if PathSpec::new(&spec.path).has_client_state() { n } else { 1.0 };
    let recorded = if spec.grpc.records(Record::Connections) && !spec.trace.replications.is_empty() {
        crate::worlds::tcp::traced_clients(&spec.trace, spec.grpc.clients)
    } else {
        0.0
    };
    // Kept: the bins, the CDF and the recorded channels' attempts.
    let kept = estimate::bytes_of::<u32>(2.0 * bins)
        + estimate::bytes_of::<f64>(101.0)
        + estimate::bytes_of::<ConnectionRow>(recorded * per_channel);
    // Per channel: its state, its next event or two, and two reconnect times per
    // episode; a path each only when paths keep state.
    let working = n * (estimate::bytes_of::<Channel>(1.0) + estimate::queue_bytes::<Ev>(2.0) + 16.0 * episodes)
        + estimate::bytes_of::<Path>(paths)
        + kept;
    Estimate {
        events: n * per_channel + server.restart.len() as f64,
        working,
        kept,
        knobs: vec!["grpc.clients", "horizon"],
    }
}
