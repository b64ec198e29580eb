//! What one replication costs.

use super::Workload;
use super::world::*;
use super::*;
use crate::engine::time::SimDuration;
use crate::metrics::trace::TraceRow;
use crate::model::path::PathEvent;
use crate::worlds::estimate::{self, Estimate};

/// How many of `n` clients `[trace]` names.
pub fn traced_clients(trace: &crate::worlds::TraceConfig, n: u32) -> f64 {
    let first = trace.first_clients.min(n);
    let listed = trace.clients.iter().filter(|&&c| c >= first && c < n).count() as u32;
    f64::from(first + listed)
}

/// Per connection, per segment sent: the segment and its ACK crossing the path and the
/// timer re-armed by the ACK; one more per segment leaves room for losses and their
/// retransmissions (measured: 3.5 to 4.5 events per write with a blackout or 5 %
/// loss). A steady workload adds its writes. Segments go out while the path is not
/// blacked out: a transfer at most a window per round trip of the shortest RTT, a
/// steady workload one per interval. A blackout adds its timer's expiries, the RTO
/// doubling from 200 ms (Linux's floor). Keepalive adds its runs and probes, a reader's
/// stalls their zero-window probes, a passive open its handshake.
pub(super) fn estimate(spec: &TcpSpec, horizon: SimDuration) -> Estimate {
    let h = horizon.as_secs_f64();
    let rtt = spec.path.rtt_change.iter().map(|c| c.rtt).fold(spec.path.base_rtt, SimDuration::min);
    // Nothing gets through a blackout but the timer's retransmissions.
    let dark: f64 = spec
        .path
        .blackout
        .iter()
        .map(|b| estimate::overlap((0.0, h), (b.at.as_secs_f64(), (b.at + b.duration).as_secs_f64())))
        .sum();
    let lit = h - dark;
    // A reader that stops for good lets through what flows until then and a buffer more.
    let reader = spec.tcp.receiver.as_ref();
    let reads_until = reader.and_then(|r| r.stall.last()).filter(|s| s.duration.is_none()).map(|s| s.at.as_secs_f64());
    let flowing = lit.min(reads_until.unwrap_or(h));
    let mut fastest = f64::from(spec.tcp.window) * (flowing / rtt.as_secs_f64().max(1e-6) + 1.0);
    if reads_until.is_some() {
        fastest += reader.map_or(0.0, |r| r.buffer as f64);
    }
    let (writes, segments) = match &spec.tcp.workload {
        Workload::Transfer { segments } => (0.0, (*segments as f64).min(fastest)),
        Workload::Steady { interval } => (h / interval.as_secs_f64() + 1.0, lit / interval.as_secs_f64() + 1.0),
        // One event per batch of writes (and the close), each segment as in a transfer.
        Workload::Script { .. } => {
            let total: f64 = spec.tcp.write.iter().map(|w| w.segments as f64).sum();
            (spec.tcp.write.len() as f64 + 1.0, total.min(fastest))
        }
    };
    // A transfer that is over, about, before a blackout begins leaves nothing for the
    // timer to retransmit in it: a window per round trip after the handshake's, twice
    // over for slack.
    let rounds_for = |segments: u64| segments as f64 / f64::from(spec.tcp.window.max(1)) + 2.0;
    let round_trip = spec.path.base_rtt.max(rtt).as_secs_f64();
    let done_by = match &spec.tcp.workload {
        Workload::Transfer { segments } => Some(2.0 * rounds_for(*segments) * round_trip),
        Workload::Steady { .. } => None,
        // The last batch written, then as a transfer of it.
        Workload::Script { .. } => {
            spec.tcp.write.last().map(|w| w.at.as_secs_f64() + 2.0 * rounds_for(w.segments) * round_trip)
        }
    };
    let expiries: f64 = spec
        .path
        .blackout
        .iter()
        .filter(|b| done_by.is_none_or(|end| b.at.as_secs_f64() <= end))
        .map(|b| estimate::attempts_within(b.duration, f64::INFINITY, |k| (0.2 * 2f64.powi(k as i32)).min(120.0)))
        .sum();
    // Keepalive: per cycle a run of its timer, the probe and its answer (a run that
    // waits may be followed closely by the one it waited for). While the path is up a
    // probe is answered once per idle time; a blackout long enough to lose every probe
    // (`probes − 1` intervals from the first) ends the connection, and one that is
    // shorter costs at most a probe per interval.
    let keepalive = spec.tcp.keepalive.map_or(0.0, |ka| {
        let (idle, every) = (ka.time.as_secs_f64().max(1.0), ka.interval.as_secs_f64().max(1.0));
        let fatal = f64::from(ka.probes.saturating_sub(1)) * every;
        let dark_probes: f64 = spec
            .path
            .blackout
            .iter()
            .map(|b| {
                // No probe before the connection has been idle for `idle`, at the
                // earliest from the start.
                let (from, to) = (b.at.as_secs_f64().max(idle), (b.at + b.duration).as_secs_f64().min(h));
                if to < from { 0.0 } else { ((to - from) / every + 1.0).min(f64::from(ka.probes)) + 1.0 }
            })
            .sum();
        // Probes are answered until the first blackout that ends the connection.
        let lit_for = spec
            .path
            .blackout
            .iter()
            .filter(|b| b.duration.as_secs_f64() >= fatal)
            .map(|b| b.at.as_secs_f64())
            .fold(h, f64::min);
        4.0 * (lit_for / idle + dark_probes + 1.0)
    });
    // Zero-window probes: per stall, the probe interval doubles from 200 ms to 120 s
    // (about ten probes) and stays there; each probe is a timer run, the probe and its
    // answer, and the stall's end a window update.
    let probes: f64 = reader.map_or(0.0, |r| {
        r.stall
            .iter()
            .map(|s| {
                let end = s.end().map_or(h, |e| e.as_secs_f64().min(h));
                let long = (end - s.at.as_secs_f64()).max(0.0);
                long / 120.0 + 11.0
            })
            .sum()
    });
    // A passive open's handshake; a request that expires leaves nothing to send.
    let (handshake, never) =
        spec.tcp.listen.as_ref().map_or((0.0, false), |l| super::listen::handshake_events(l, spec));
    let (segments, expiries) = if never { (0.0, 0.0) } else { (segments, expiries) };
    // A scripted ICMP unreachable is an event of its own, and may retransmit at once.
    let icmp = 2.0 * spec.path.event.iter().filter(|e| matches!(e, PathEvent::IcmpUnreachable { .. })).count() as f64;
    let answered = if never { 0.0 } else { answered(spec, h) };
    let per_conn =
        4.0 + handshake + writes + 4.0 * segments + 3.0 * expiries + keepalive + 4.0 * probes + icmp + answered;
    let n = f64::from(spec.tcp.clients);
    // Per connection: its state, its segments in flight, and the RTO's time-weighted
    // record (one entry per distinct value, at most one per segment). No more are in
    // flight than the window or than the workload ever supplies, whichever is fewer: a
    // window of billions over a few hundred writes holds a few hundred.
    let outstanding = f64::from(spec.tcp.window).min(writes.max(segments));
    let conn = estimate::bytes_of::<Conn>(1.0)
        + estimate::queue_bytes::<Ev>(outstanding + 3.0)
        + 48.0 * segments.min(10_000.0);
    // Traced connections keep a row per send, ACK and sample.
    let traced = if spec.trace.replications.is_empty() { 0.0 } else { traced_clients(&spec.trace, spec.tcp.clients) };
    let kept = traced * estimate::bytes_of::<TraceRow>(3.0 * segments + expiries + answered);
    // A window far above a few thousand segments, when the workload fills it, is what
    // makes each connection big.
    let knobs = if outstanding > 4096.0 {
        vec!["tcp.window", "tcp.clients", "horizon"]
    } else {
        vec!["tcp.clients", "horizon"]
    };
    Estimate { events: n * per_conn, working: n * conn + kept, kept, knobs }
}

/// A router answering an outage (`icmp-unreachable` with a `duration`): under linux each
/// answer undoes the doubling its retransmission's expiry made (tcp_ld_RTO_revert), so the
/// timer keeps its un-backed-off value, 200 ms at the floor, for the whole window; each
/// expiry is a timer run, a retransmission and its answer. The window's first packets, up
/// to a window of them, are answered too.
fn answered(spec: &TcpSpec, h: f64) -> f64 {
    spec.path
        .event
        .iter()
        .filter_map(|e| match *e {
            PathEvent::IcmpUnreachable { at, duration: Some(d) } => {
                Some(estimate::overlap((0.0, h), (at.as_secs_f64(), (at + d).as_secs_f64())))
            }
            _ => None,
        })
        .map(|open| 3.0 * (open / 0.2 + f64::from(spec.tcp.window)))
        .sum()
}
