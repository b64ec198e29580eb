//! The simulation: channels, their events, and what a replication reports.

use super::*;
use crate::engine::rng::{CounterRng, Purpose, Seeds};
use crate::engine::run::{EngineError, Scheduler, World, run};
use crate::engine::time::{SimDuration, SimTime};
use crate::metrics::bursts::{Bins, FirstBurst, Running};
use crate::metrics::quantile::{Distribution, cdf_secs, quantile_of};
use crate::metrics::{ConnectionRow, MetricValue, ReplicationResult};
use crate::model::grpc::{GrpcBackoff, GrpcBackoffParams};
use crate::model::path::{Direction, Path, PathSpec};
use crate::model::server::{ConnectAnswer, Server};
use crate::worlds::{Job, start};
use std::collections::BTreeMap;
use std::sync::Arc;

/// What happens to a channel whose profile sets no connect deadline (grpc-java) when
/// the server never answers: the transport's own connect timeout ends the attempt.
/// Netty's default `CONNECT_TIMEOUT_MILLIS`, which grpc-java's Netty transport keeps.
pub(super) const TRANSPORT_CONNECT_TIMEOUT: SimDuration = SimDuration::from_secs(30);

#[derive(Clone, Copy, Debug)]
pub(super) enum Ev {
    /// The channel starts a connection attempt.
    Attempt(u32),
    /// An attempt's SYN reaches the server (channel, attempt epoch).
    AtServer(u32, u32),
    /// The deadline of an attempt whose SYN was lost on the path.
    Lost(u32, u32),
    /// SETTINGS reach the channel.
    Settings(u32, u32),
    /// The server dropped this established connection, as the channel learns it.
    Dropped(u32, u32),
    /// A server restart: every established connection is dropped.
    Restart,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum State {
    Waiting,
    Connecting,
    Connected,
}

#[derive(Clone, Debug)]
pub(super) struct Channel {
    backoff: GrpcBackoff,
    /// Attempts started so far: events carry it, so that answers to an attempt that has
    /// already ended are recognised and ignored.
    epoch: u32,
    /// Attempts since the last disconnect.
    since_drop: u32,
    state: State,
    jitter_draws: u32,
    fwd_packets: u32,
    rev_packets: u32,
    /// When the channel last connected or lost its connection.
    since: SimTime,
    /// The connect deadline of the attempt under way.
    deadline: SimTime,
}

/// The open connection attempt of a recorded channel.
#[derive(Clone, Copy, Debug)]
pub(super) struct Pending {
    attempt: u32,
    start: SimTime,
    backoff: SimDuration,
    delay: SimDuration,
    deadline: Option<SimTime>,
}

pub(super) struct GrpcWorld<'a> {
    spec: &'a GrpcSpec,
    params: &'a GrpcBackoffParams,
    seeds: Seeds,
    rep: u64,
    channels: Vec<Channel>,
    /// One path per channel when paths carry state of their own, else one for all.
    paths: Vec<Path>,
    server: Server,
    bins: Bins,
    first_burst: Option<FirstBurst>,
    /// Per attempt index after a disconnect: the spread of (start − disconnect) times.
    spread: Vec<Running>,
    reconnect_ns: Vec<u64>,
    /// Per reconnection, as `reconnect_ns` but counted from the server's return (see
    /// `connected`).
    after_up_ns: Vec<u64>,
    /// Disconnects (and first connections) that a reconnect may answer.
    disconnects: usize,
    attempts: u64,
    timeouts: u64,
    refused: u64,
    wasted: u64,
    /// Channel-nanoseconds spent connected, over finished connections.
    connected_ns: u64,
    recorded: BTreeMap<u32, Option<Pending>>,
    rows: Vec<ConnectionRow>,
}

impl GrpcWorld<'_> {
    fn jitter_rng(&self, c: u32) -> CounterRng {
        let key = self.seeds.counter_key(self.rep, u64::from(c), Purpose::Jitter);
        CounterRng::at(key, u64::from(self.channels[c as usize].jitter_draws))
    }

    /// Sends one packet over channel `c`'s path; the packet index is the draw index of
    /// both the delay and the loss stream of that direction (the path's draw contract).
    fn transmit(&mut self, c: u32, dir: Direction, at: SimTime) -> Option<SimTime> {
        let (rep, id) = (self.rep, u64::from(c));
        let ch = &mut self.channels[c as usize];
        let count = match dir {
            Direction::Forward => &mut ch.fwd_packets,
            Direction::Reverse => &mut ch.rev_packets,
        };
        let mut delay = CounterRng::at(self.seeds.counter_key(rep, id, dir.delay_purpose()), u64::from(*count));
        let mut loss = CounterRng::at(self.seeds.counter_key(rep, id, dir.loss_purpose()), u64::from(*count));
        *count = count.wrapping_add(1);
        let shared = self.paths.len() == 1;
        self.paths[if shared { 0 } else { c as usize }].transmit(dir, at, &mut delay, &mut loss)
    }

    /// Starts an attempt at `now`, which may lie ahead of the clock: a waiting channel is
    /// alone with its backoff, so its next attempt is set up as soon as it is known.
    fn start_attempt(&mut self, c: u32, now: SimTime, sched: &mut Scheduler<Ev>) {
        let mut rng = self.jitter_rng(c);
        let ch = &mut self.channels[c as usize];
        if ch.state != State::Waiting {
            return;
        }
        let plan = ch.backoff.start_attempt(self.params, now, &mut rng);
        ch.jitter_draws = rng.index() as u32;
        ch.epoch = ch.epoch.wrapping_add(1);
        ch.since_drop += 1;
        ch.state = State::Connecting;
        let (epoch, k) = (ch.epoch, ch.since_drop);
        let since = now.saturating_since(ch.since).as_secs_f64();
        if let Some(r) = self.spread.get_mut(k as usize - 1) {
            r.add(since);
        }
        let deadline = plan.connect_deadline.unwrap_or(now + TRANSPORT_CONNECT_TIMEOUT);
        ch.deadline = deadline;
        let arrival = self.transmit(c, Direction::Forward, now);
        if let Some(slot) = self.recorded.get_mut(&c) {
            *slot = Some(Pending {
                attempt: k,
                start: now,
                backoff: plan.backoff,
                delay: plan.delay,
                deadline: plan.connect_deadline,
            });
        }
        match arrival {
            Some(at) if at <= deadline => sched.at(at, Ev::AtServer(c, epoch)),
            // The deadline passes before the SYN arrives (a connect timeout shorter than
            // the path): the channel gives up first, and the server still sees the SYN.
            Some(at) => {
                sched.at(deadline, Ev::Lost(c, epoch));
                sched.at(at, Ev::AtServer(c, epoch));
            }
            // The SYN is lost: nothing will answer, the deadline ends the attempt.
            None => sched.at(deadline, Ev::Lost(c, epoch)),
        }
    }

    /// The server answers a SYN. Its answer settles the attempt: nothing else can happen
    /// to a connecting channel, so a failure is decided here, at the time the channel
    /// will learn it, and the next attempt scheduled at once. That spares an event per
    /// attempt for the RST and one for the deadline, which at a million channels is
    /// most of the run.
    fn at_server(&mut self, c: u32, epoch: u32, sched: &mut Scheduler<Ev>) {
        let now = sched.now();
        let answer = self.server.on_connect(now);
        let refused = matches!(answer, ConnectAnswer::Refused { .. });
        self.bins.add(now, refused);
        if let Some(b) = &mut self.first_burst {
            b.add(now);
        }
        self.attempts += 1;
        if refused {
            self.refused += 1;
        }
        let ch = &self.channels[c as usize];
        if ch.epoch != epoch || ch.state != State::Connecting {
            return;
        }
        let deadline = ch.deadline;
        let (sent, outcome) = match answer {
            ConnectAnswer::Refused { .. } => (Some(now), "refused"),
            ConnectAnswer::Reset { at, .. } => (Some(at), "reset"),
            ConnectAnswer::Silent { .. } => (None, "timeout"),
            ConnectAnswer::Accepted { settings_at, dropped_at } => {
                match self.transmit(c, Direction::Reverse, settings_at) {
                    Some(at) if at < deadline => {
                        sched.at(at, Ev::Settings(c, epoch));
                        if let Some(d) = dropped_at {
                            sched.at(d + self.one_way(d), Ev::Dropped(c, epoch));
                        }
                    }
                    // SETTINGS lost or too late: the server did the work for nothing.
                    _ => {
                        self.wasted += 1;
                        self.fail_at(c, deadline, "timeout", sched);
                    }
                }
                return;
            }
        };
        let learned = sent.and_then(|t| self.transmit(c, Direction::Reverse, t)).filter(|&t| t < deadline);
        match learned {
            Some(t) => self.fail_at(c, t, outcome, sched),
            None => self.fail_at(c, deadline, "timeout", sched),
        }
    }

    /// When the server last came back up at or before `t`: the end of the latest down
    /// window (restart or outage) that is over by `t`; time zero if none is.
    ///
    /// The reconnect time "after up" of a reconnection is counted from the later of the
    /// channel's disconnect (as it learned it, or its first attempt with `start =
    /// "connecting"`) and this instant: the time the channel stayed disconnected while it
    /// could have connected. So:
    /// - several down windows during one disconnection: counted from the return after
    ///   the last of them, the one the channel actually reconnected after;
    /// - several disconnections (episodes): each reconnection counts once, from its own
    ///   disconnect or the server's return within it, whichever is later;
    /// - a channel that loses its connection while the server is up (a flapping server's
    ///   `drop_after`, or a restart with `down = "0s"`) and reconnects before any down
    ///   window ends: counted from its disconnect, exactly as `reconnect_*`;
    /// - a connection cannot be made while the server is down, so no reconnection
    ///   precedes the return it is counted from.
    ///
    /// Channels that never reconnect count as never, as in `reconnect_*`.
    fn last_up(&self, t: SimTime) -> SimTime {
        let windows = self.server.schedule().windows();
        let over = windows.partition_point(|w| w.end <= t);
        // Windows are disjoint and sorted by start, so their ends are sorted too.
        over.checked_sub(1).map_or(SimTime::ZERO, |i| windows[i].end)
    }

    fn one_way(&self, t: SimTime) -> SimDuration {
        SimDuration(self.paths[0].base_rtt_at(t).as_nanos() / 2)
    }

    fn finish_row(&mut self, c: u32, end: SimTime, outcome: &'static str) {
        if let Some(slot) = self.recorded.get_mut(&c)
            && let Some(p) = slot.take()
        {
            self.rows.push(ConnectionRow {
                client: c,
                attempt: p.attempt,
                start: p.start,
                end,
                outcome,
                backoff: p.backoff,
                delay: p.delay,
                deadline: p.deadline,
            });
        }
    }

    /// The current attempt fails at `at` (now or later): schedule the next one as the
    /// profile says.
    fn fail_at(&mut self, c: u32, at: SimTime, outcome: &'static str, sched: &mut Scheduler<Ev>) {
        if outcome == "timeout" && at <= sched.horizon() {
            self.timeouts += 1;
        }
        self.finish_row(c, at, outcome);
        let mut rng = self.jitter_rng(c);
        let ch = &mut self.channels[c as usize];
        ch.state = State::Waiting;
        let next = ch.backoff.on_failure(self.params, at, &mut rng).max(at);
        ch.jitter_draws = rng.index() as u32;
        if next <= sched.horizon() {
            self.start_attempt(c, next, sched);
        }
    }

    fn connected(&mut self, c: u32, sched: &mut Scheduler<Ev>) {
        let now = sched.now();
        self.finish_row(c, now, "connected");
        let ch = &mut self.channels[c as usize];
        ch.state = State::Connected;
        if self.spec.grpc.reset_on_settings {
            ch.backoff.on_connected(self.params);
        }
        let since = ch.since;
        self.reconnect_ns.push(now.saturating_since(since).as_nanos());
        ch.since = now;
        self.after_up_ns.push(now.saturating_since(since.max(self.last_up(now))).as_nanos());
    }

    /// An established connection is gone at `now` (as the channel learns it).
    fn disconnect(&mut self, c: u32, sched: &mut Scheduler<Ev>) {
        let now = sched.now();
        let ch = &mut self.channels[c as usize];
        ch.state = State::Waiting;
        self.disconnects += 1;
        self.connected_ns += now.saturating_since(ch.since).as_nanos();
        ch.since = now;
        ch.since_drop = 0;
        if self.spec.grpc.reset_on_settings {
            sched.at(now, Ev::Attempt(c));
        } else {
            let mut rng = self.jitter_rng(c);
            let ch = &mut self.channels[c as usize];
            let next = ch.backoff.on_failure(self.params, now, &mut rng);
            ch.jitter_draws = rng.index() as u32;
            sched.at(next.max(now), Ev::Attempt(c));
        }
    }
}

impl World for GrpcWorld<'_> {
    type Event = Ev;

    fn handle(&mut self, event: Ev, sched: &mut Scheduler<Ev>) {
        let live = |w: &Self, c: u32, epoch: u32, state: State| {
            let ch = &w.channels[c as usize];
            ch.epoch == epoch && ch.state == state
        };
        match event {
            Ev::Attempt(c) => self.start_attempt(c, sched.now(), sched),
            Ev::Lost(c, epoch) if live(self, c, epoch, State::Connecting) => {
                let now = sched.now();
                self.fail_at(c, now, "timeout", sched);
            }
            Ev::AtServer(c, epoch) => self.at_server(c, epoch, sched),
            Ev::Settings(c, epoch) if live(self, c, epoch, State::Connecting) => self.connected(c, sched),
            Ev::Dropped(c, epoch) if live(self, c, epoch, State::Connected) => self.disconnect(c, sched),
            Ev::Restart => {
                let now = sched.now();
                for c in 0..self.channels.len() as u32 {
                    if self.channels[c as usize].state == State::Connected {
                        // The channel learns of the drop one one-way delay later. A new
                        // epoch makes any pending flapping drop of this connection
                        // stale, so that it is not dropped twice.
                        let learn = now + self.one_way(now);
                        let ch = &mut self.channels[c as usize];
                        ch.epoch = ch.epoch.wrapping_add(1);
                        sched.at(learn, Ev::Dropped(c, ch.epoch));
                    }
                }
            }
            _ => {}
        }
    }
}

/// Runs one replication of one gRPC variant.
pub fn run_replication(spec: &GrpcSpec, job: Job<'_>) -> Result<ReplicationResult, EngineError> {
    let Job { seeds, replication, horizon, budget } = job;
    let rep = u64::from(replication);
    let n = spec.grpc.clients;
    let path_spec = Arc::new(PathSpec::new(&spec.path));
    let paths = vec![Path::from_spec(path_spec.clone()); if path_spec.has_client_state() { n as usize } else { 1 }];
    let template = Channel {
        backoff: GrpcBackoff::new(&spec.backoff),
        epoch: 0,
        since_drop: 0,
        state: State::Waiting,
        jitter_draws: 0,
        fwd_packets: 0,
        rev_packets: 0,
        since: SimTime::ZERO,
        deadline: SimTime::ZERO,
    };
    let server = Server::new(&spec.server);
    let restarts = server.drop_all_times();
    let mut sched = Scheduler::new(SimTime::ZERO + horizon);
    let mut channels = vec![template; n as usize];
    for (c, ch) in channels.iter_mut().enumerate() {
        match spec.grpc.start {
            Start::Connected => ch.state = State::Connected,
            Start::Connecting => {
                let key = seeds.counter_key(rep, c as u64, Purpose::Workload);
                let start = start::offset(spec.grpc.start_spread, &mut CounterRng::at(key, 0));
                ch.since = SimTime::ZERO + start;
                sched.at(SimTime::ZERO + start, Ev::Attempt(c as u32));
            }
        }
    }
    for &t in &restarts {
        sched.at(t, Ev::Restart);
    }
    let traced_here = spec.trace.replications.contains(&replication);
    let recorded = if spec.grpc.records(Record::Connections) && traced_here {
        (0..n).filter(|c| spec.trace.traces(*c)).map(|c| (c, None)).collect()
    } else {
        BTreeMap::new()
    };
    let first_burst = FirstBurst::after(server.schedule().first_up(), horizon);
    let mut world = GrpcWorld {
        spec,
        params: &spec.backoff,
        seeds,
        rep,
        channels,
        paths,
        server,
        bins: Bins::new(spec.grpc.bin, horizon),
        first_burst,
        spread: vec![Running::default(); spec.grpc.spread_attempts as usize],
        reconnect_ns: Vec::new(),
        after_up_ns: Vec::new(),
        disconnects: if spec.grpc.start == Start::Connecting { n as usize } else { 0 },
        attempts: 0,
        timeouts: 0,
        refused: 0,
        wasted: 0,
        connected_ns: 0,
        recorded,
        rows: Vec::new(),
    };
    let stats = run(&mut world, &mut sched, budget)?;
    Ok(finish(world, stats.events, SimTime::ZERO + horizon))
}

pub(super) fn finish(mut w: GrpcWorld<'_>, events: u64, end: SimTime) -> ReplicationResult {
    let n = w.channels.len() as f64;
    let open: u64 = w
        .channels
        .iter()
        .filter(|c| c.state == State::Connected)
        .map(|c| end.saturating_since(c.since).as_nanos())
        .sum();
    let connected_fraction = (w.connected_ns + open) as f64 / (n * end.as_nanos() as f64);
    let secs = |ns: u64| ns as f64 / 1e9;
    w.reconnect_ns.sort_unstable();
    w.after_up_ns.sort_unstable();
    let back = w.channels.iter().filter(|c| c.state == State::Connected).count();
    // The herd that matters is the one the server must absorb: bins while it is up.
    let burst = w.bins.burst_stats_where(|from, to| w.server.is_up(from) && w.server.is_up(to));
    let mut metrics = vec![
        MetricValue::of(&metrics::ATTEMPTS, w.attempts as f64),
        MetricValue::of(&metrics::ATTEMPTS_PER_CLIENT, w.attempts as f64 / n),
        MetricValue::of(&metrics::REFUSED, w.refused as f64),
        MetricValue::of(&metrics::TIMEOUTS, w.timeouts as f64),
        MetricValue::of(&metrics::WASTED_HANDSHAKES, w.wasted as f64),
        MetricValue::maybe_of(&metrics::PEAK_ATTEMPT_RATE, burst.map(|b| b.peak_rate)),
        MetricValue::maybe_of(&metrics::PEAK_TO_MEAN, burst.map(|b| b.peak_to_mean)),
        MetricValue::maybe_of(&metrics::CV, burst.map(|b| b.cv)),
        MetricValue::of(&metrics::CONNECTED_AT_END, back as f64 / n),
        MetricValue::of(&metrics::CONNECTED_TIME, connected_fraction),
        MetricValue::maybe_of(&metrics::RECONNECT_P50, quantile_of(&w.reconnect_ns, w.disconnects, 0.5).map(secs)),
        MetricValue::maybe_of(&metrics::RECONNECT_P99, quantile_of(&w.reconnect_ns, w.disconnects, 0.99).map(secs)),
        MetricValue::maybe_of(&metrics::RECONNECT_ALL, quantile_of(&w.reconnect_ns, w.disconnects, 1.0).map(secs)),
        MetricValue::maybe_of(
            &metrics::RECONNECT_AFTER_UP_P50,
            quantile_of(&w.after_up_ns, w.disconnects, 0.5).map(secs),
        ),
        MetricValue::maybe_of(
            &metrics::RECONNECT_AFTER_UP_P99,
            quantile_of(&w.after_up_ns, w.disconnects, 0.99).map(secs),
        ),
        MetricValue::maybe_of(
            &metrics::RECONNECT_AFTER_UP_ALL,
            quantile_of(&w.after_up_ns, w.disconnects, 1.0).map(secs),
        ),
    ];
    // Fixed by the server's schedule, so every replication of a cell lists it or none does.
    if let Some(b) = &w.first_burst {
        metrics.push(MetricValue::of(&metrics::FIRST_BURST_PEAK, b.peak()));
    }
    for (k, r) in w.spread.iter().enumerate() {
        metrics.push(MetricValue::numbered(&metrics::SPREAD_ATTEMPT, k + 1, r.sd()));
    }
    // The CDF stops where the reconnected fraction does.
    let cdf = cdf_secs(&w.reconnect_ns, w.disconnects);
    let cdf = if cdf.is_empty() { Vec::new() } else { vec![(Distribution::ReconnectTime.name().to_string(), cdf)] };
    ReplicationResult {
        metrics,
        trace: Vec::new(),
        events,
        bins: Some(w.bins),
        series: None,
        quantiles: cdf,
        connections: w.rows,
    }
}
