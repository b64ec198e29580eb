//! The simulation: connections, their events and the per-replication metrics.

use super::Workload;
use super::*;
use crate::engine::rng::{Purpose, SimRng};
use crate::engine::run::{EngineError, Scheduler, World, run};
use crate::engine::time::{SimDuration, SimTime};
use crate::metrics::time_weighted::TimeWeighted;
use crate::metrics::trace::{TraceEvent, TraceRow};
use crate::metrics::{MetricValue, ReplicationResult};
use crate::model::path::{Direction, Path, PathSpec};
use crate::model::rto::RtoSnapshot;
use crate::model::tcp::keepalive::Step;
use crate::model::tcp::{Action, CcView, Keepalive, ObservationKind, Segment, Supply, TcpReceiver, TcpSender};
use crate::worlds::{Job, start};
use std::sync::Arc;

mod passive;
use passive::Passive;

#[derive(Clone, Copy, Debug)]
pub(super) enum Ev {
    Start(u32),
    AppWrite(u32),
    Timer(u32),
    ToServer(u32, Segment),
    ToClient(u32, Segment),
    /// The keepalive timer runs (`tcp_keepalive_timer`).
    Keepalive(u32),
    /// A keepalive probe reaches the peer, which answers it with an ACK.
    ProbeToServer(u32),
    /// The answer to a keepalive probe reaches the sender.
    ProbeAnswer(u32),
    /// The peer's application stops reading (`[tcp.receiver]` stall).
    ReadStop(u32),
    /// The peer's application reads again.
    ReadResume(u32),
    /// Passive open (`[tcp.listen]`): the peer sends its SYN, first or again.
    PeerSyn(u32),
    /// The peer's SYN reaches the listener.
    SynAtListener(u32),
    /// The listener's request timer runs (`reqsk_timer_handler`).
    SynAckTimer(u32),
    /// A SYN-ACK sent at the given time reaches the peer.
    SynAckAtPeer(u32, SimTime),
    /// The peer's ACK, echoing the given SYN-ACK timestamp, reaches the listener.
    AckAtListener(u32, SimTime),
    /// A scripted ICMP unreachable reaches the sender (`[[path.event]]`), quoting the
    /// segment a router could not forward, or the oldest outstanding one when `None`.
    Icmp(u32, Option<Segment>),
    /// The scripted workload's `k`-th batch of writes.
    Write(u32, u32),
    /// The scripted workload closes.
    Close(u32),
    /// The peer's delayed-ACK timer runs (`tcp_delack_timer_handler`).
    DelAck(u32),
}

/// What happened to one connection, for the metrics.
#[derive(Clone, Debug, Default)]
pub(super) struct Tally {
    retransmissions: u64,
    timeouts: u64,
    spurious: u64,
    probes: u64,
    spurious_timeouts: u64,
    /// How long the connection waited on unacknowledged data before giving up.
    aborted: Option<SimDuration>,
    keepalive_probes: u64,
    /// When keepalive gave up on the peer.
    keepalive_abort: Option<SimTime>,
    zero_window_probes: u64,
    /// Time spent with the receiver's window closed, and when the current closure began.
    zero_window_stall: SimDuration,
    zero_window_since: Option<SimTime>,
    samples: u64,
    max_rto: SimDuration,
    /// The RTO in force (the estimator's value, backoff included, whether or not the
    /// timer is running) from the connection's start to its finish or the horizon.
    rto_held: TimeWeighted,
    last_srtt: Option<SimDuration>,
    /// Sum over samples of |SRTT − the path's typical RTT at that moment|, in seconds.
    srtt_error_sum: f64,
    finished_at: Option<SimTime>,
    /// Per scheduled RTT change: time from the change until SRTT first came within 10 %.
    converged: Vec<Option<SimDuration>>,
    /// Per blackout: from the link's return to the send time of the first retransmission
    /// that got through.
    recovered: Vec<Option<SimDuration>>,
}

impl Tally {
    /// A zero-window stall ends (the window reopened, the connection aborted or the run
    /// is over).
    fn end_zero_window(&mut self, now: SimTime) {
        if let Some(since) = self.zero_window_since.take() {
            self.zero_window_stall += now.saturating_since(since);
        }
    }
}

pub(super) struct Conn {
    sender: TcpSender,
    receiver: TcpReceiver,
    path: Path,
    delay_fwd: SimRng,
    delay_rev: SimRng,
    loss_fwd: SimRng,
    loss_rev: SimRng,
    /// The timer event already in the queue, so that an unchanged timer is not queued twice.
    armed: Option<SimTime>,
    /// The same for the peer's delayed-ACK timer.
    delack_armed: Option<SimTime>,
    /// Linux's keepalive timer, from establishment on, when `[tcp.keepalive]` is on.
    keepalive: Option<Keepalive>,
    /// Keepalive reset the connection: nothing more is sent or received.
    closed: bool,
    /// The handshake of a passive open, with `[tcp.listen]`.
    passive: Option<Passive>,
    tally: Tally,
}

pub(super) struct TcpWorld<'a> {
    spec: &'a TcpSpec,
    conns: Vec<Conn>,
    traced: Vec<bool>,
    trace: Vec<TraceRow>,
    /// (time, target RTT) of each scheduled RTT change.
    changes: Vec<(SimTime, SimDuration)>,
    /// The median extra delay of a round trip, added to the base RTT to get the RTT a
    /// packet typically sees.
    extra: SimDuration,
    /// (start, end) of each blackout.
    blackouts: Vec<(SimTime, SimTime)>,
    actions: Vec<Action>,
    /// The scripted workload's writes: (offset from the start, segments).
    batches: Vec<(SimDuration, u64)>,
}

impl TcpWorld<'_> {
    fn dispatch(&mut self, c: u32, sched: &mut Scheduler<Ev>) {
        let now = sched.now();
        let mut actions = std::mem::take(&mut self.actions);
        for action in actions.drain(..) {
            match action {
                Action::Transmit(seg) => {
                    let conn = &mut self.conns[c as usize];
                    if conn.path.spec().script().local_drop(now) {
                        continue; // refused by the sender's own queue: never on the path
                    }
                    for at in
                        conn.path.send(Direction::Forward, now, &mut conn.delay_fwd, &mut conn.loss_fwd).arrivals()
                    {
                        sched.at(at, Ev::ToServer(c, seg));
                    }
                    if let Some(at) = super::answer::unreachable_at(&conn.path, now) {
                        sched.at(at, Ev::Icmp(c, Some(seg)));
                    }
                }
                Action::Observe(o) => self.observe(c, now, o),
            }
        }
        self.actions = actions;
        let conn = &mut self.conns[c as usize];
        // Every change of the RTO happens inside a sender call, and each is followed by
        // this dispatch: reading it here sees every value it takes.
        // A listener's RTO is in force from accept on, not while its request waits.
        if conn.passive.is_none() || conn.sender.is_established() {
            conn.tally.rto_held.set(now, conn.sender.snapshot().rto.as_nanos());
        }
        let timer = conn.sender.timer();
        if timer != conn.armed {
            conn.armed = timer;
            if let Some(t) = timer {
                sched.at(t, Ev::Timer(c));
            }
        }
        if let Some(ka) = &self.spec.tcp.keepalive
            && conn.keepalive.is_none()
            && conn.sender.is_established()
        {
            let (keepalive, first) = Keepalive::established(ka.params(), now);
            conn.keepalive = Some(keepalive.with_user_timeout(self.spec.rto.user_timeout));
            sched.at(first, Ev::Keepalive(c));
        }
    }

    /// One run of the keepalive timer: wait, probe over the path, or reset the connection.
    fn keepalive(&mut self, c: u32, sched: &mut Scheduler<Ev>) {
        let now = sched.now();
        let conn = &mut self.conns[c as usize];
        // A connection the retransmission timer gave up on has no keepalive timer left.
        if conn.closed || conn.sender.is_aborted() {
            return;
        }
        let busy = conn.sender.has_data_pending();
        let Some(ka) = conn.keepalive.as_mut() else {
            return;
        };
        match ka.on_timer(now, busy) {
            Step::Wait(next) => sched.at(next, Ev::Keepalive(c)),
            Step::Probe(next) => {
                conn.tally.keepalive_probes += 1;
                if !conn.path.spec().script().local_drop(now)
                    && let Some(at) =
                        conn.path.transmit(Direction::Forward, now, &mut conn.delay_fwd, &mut conn.loss_fwd)
                {
                    sched.at(at, Ev::ProbeToServer(c));
                }
                sched.at(next, Ev::Keepalive(c));
                // The probe carries sequence number snd_una - 1 (`tcp_xmit_probe_skb`).
                let seq = conn.sender.acked().checked_sub(1);
                self.trace_beside(c, now, TraceEvent::Keepalive, seq);
            }
            Step::Abort => {
                conn.closed = true;
                conn.tally.keepalive_abort = Some(now);
                conn.tally.rto_held.finish(now);
                self.trace_beside(c, now, TraceEvent::Aborted, None);
            }
        }
    }

    /// A trace row for something the world did beside the sender, with the sender's
    /// estimator and congestion window as they stand.
    fn trace_beside(&mut self, c: u32, now: SimTime, event: TraceEvent, segment: Option<u64>) {
        if !self.traced[c as usize] {
            return;
        }
        let sender = &self.conns[c as usize].sender;
        let (rto, cc) = (sender.snapshot(), sender.cc_view());
        self.trace.push(trace_row(now, c, event, segment, None, &rto, Some(cc)));
    }

    fn observe(&mut self, c: u32, now: SimTime, o: crate::model::tcp::Observation) {
        let tally = &mut self.conns[c as usize].tally;
        tally.max_rto = tally.max_rto.max(o.rto.rto);
        let (event, segment, sample) = match o.kind {
            ObservationKind::Send { seq } => (TraceEvent::Send, seq, None),
            ObservationKind::Retransmit { seq } => {
                tally.retransmissions += 1;
                (TraceEvent::Retransmit, seq, None)
            }
            ObservationKind::Ack { ack } => (TraceEvent::Ack, Some(ack), None),
            ObservationKind::Sample { rtt } => {
                tally.samples += 1;
                tally.last_srtt = o.rto.srtt;
                if let Some(srtt) = o.rto.srtt {
                    let truth = self.conns[c as usize].path.base_rtt_at(now) + self.extra;
                    let tally = &mut self.conns[c as usize].tally;
                    tally.srtt_error_sum += (srtt.as_secs_f64() - truth.as_secs_f64()).abs();
                }
                let tally = &mut self.conns[c as usize].tally;
                if let Some(srtt) = o.rto.srtt
                    // Changes are in strictly increasing time: a binary search, not a scan.
                    && let Some(k) = self.changes.partition_point(|(at, _)| *at <= now).checked_sub(1)
                {
                    let target = self.changes[k].1.as_nanos() as f64;
                    let off = (srtt.as_nanos() as f64 - target).abs();
                    if tally.converged[k].is_none() && off <= 0.1 * target {
                        tally.converged[k] = Some(now - self.changes[k].0);
                    }
                }
                (TraceEvent::Sample, None, Some(rtt))
            }
            ObservationKind::Timeout => {
                tally.timeouts += 1;
                (TraceEvent::Timeout, None, None)
            }
            ObservationKind::Probe { seq, retransmit } => {
                tally.probes += 1;
                tally.retransmissions += u64::from(retransmit);
                (TraceEvent::Probe, Some(seq), None)
            }
            ObservationKind::SpuriousTimeout => {
                tally.spurious_timeouts += 1;
                (TraceEvent::SpuriousTimeout, None, None)
            }
            ObservationKind::ZeroWindow => {
                tally.zero_window_since = Some(now);
                (TraceEvent::ZeroWindow, None, None)
            }
            ObservationKind::WindowProbe => {
                tally.zero_window_probes += 1;
                (TraceEvent::WindowProbe, None, None)
            }
            ObservationKind::WindowOpen => {
                tally.end_zero_window(now);
                (TraceEvent::WindowOpen, None, None)
            }
            ObservationKind::Aborted { waited } => {
                tally.end_zero_window(now);
                tally.aborted = Some(waited);
                // The connection is gone: no RTO is in force after this.
                tally.rto_held.finish(now);
                (TraceEvent::Aborted, None, None)
            }
            ObservationKind::Established => (TraceEvent::Established, None, None),
            ObservationKind::IcmpUnreachable { .. } => (TraceEvent::IcmpUnreachable, None, None),
            ObservationKind::Finished => {
                tally.finished_at = Some(now);
                // A finished transfer's life ends here, with the RTO it had before.
                tally.rto_held.finish(now);
                (TraceEvent::Finished, None, None)
            }
        };
        if self.traced[c as usize] {
            self.trace.push(trace_row(now, c, event, segment, sample, &o.rto, Some(o.cc)));
        }
    }

    fn at_server(&mut self, c: u32, seg: Segment, sched: &mut Scheduler<Ev>) {
        let now = sched.now();
        let conn = &mut self.conns[c as usize];
        let Some(got) = conn.receiver.on_segment_at(now, seg) else {
            return;
        };
        if got.spurious {
            conn.tally.spurious += 1;
        }
        if let Segment::Data { tsval, retransmit: true, .. } = seg
            && let Some(k) = recovering(&self.blackouts, tsval)
            && conn.tally.recovered[k].is_none()
        {
            conn.tally.recovered[k] = Some(tsval - self.blackouts[k].1);
        }
        if got.delayed.is_none() {
            for at in conn.path.send(Direction::Reverse, now, &mut conn.delay_rev, &mut conn.loss_rev).arrivals() {
                sched.at(at, Ev::ToClient(c, got.reply));
            }
        }
        let timer = conn.receiver.delack_timer();
        if timer != conn.delack_armed {
            conn.delack_armed = timer;
            if let Some(t) = timer {
                sched.at(t, Ev::DelAck(c));
            }
        }
    }

    /// The peer's delayed-ACK timer: the ACK it held goes out as it now stands.
    fn delack(&mut self, c: u32, sched: &mut Scheduler<Ev>) {
        let now = sched.now();
        let conn = &mut self.conns[c as usize];
        if conn.delack_armed != Some(now) {
            return; // stopped or moved since this event was queued
        }
        conn.delack_armed = None;
        if let Some(ack) = conn.receiver.on_delack_timer(now) {
            for at in conn.path.send(Direction::Reverse, now, &mut conn.delay_rev, &mut conn.loss_rev).arrivals() {
                sched.at(at, Ev::ToClient(c, ack));
            }
        }
    }
}

impl World for TcpWorld<'_> {
    type Event = Ev;

    fn handle(&mut self, event: Ev, sched: &mut Scheduler<Ev>) {
        let now = sched.now();
        let (Ev::Start(c)
        | Ev::AppWrite(c)
        | Ev::Timer(c)
        | Ev::ToServer(c, _)
        | Ev::ToClient(c, _)
        | Ev::Keepalive(c)
        | Ev::ProbeToServer(c)
        | Ev::ProbeAnswer(c)
        | Ev::ReadStop(c)
        | Ev::ReadResume(c)
        | Ev::PeerSyn(c)
        | Ev::SynAtListener(c)
        | Ev::SynAckTimer(c)
        | Ev::SynAckAtPeer(c, _)
        | Ev::AckAtListener(c, _)
        | Ev::Icmp(c, _)
        | Ev::Write(c, _)
        | Ev::Close(c)
        | Ev::DelAck(c)) = event;
        // Reset by keepalive: the application's writes fail and the peer's packets meet
        // no socket.
        if self.conns[c as usize].closed {
            return;
        }
        let conn = &mut self.conns[c as usize];
        let refused = conn.path.spec().script().local_drop(now);
        conn.sender.set_local_congestion(refused);
        match event {
            Ev::Start(c) => {
                match &self.spec.tcp.workload {
                    Workload::Steady { .. } => sched.at(now, Ev::AppWrite(c)),
                    Workload::Script { close, .. } => {
                        for (k, (at, _)) in self.batches.iter().enumerate() {
                            sched.at(now + *at, Ev::Write(c, k as u32));
                        }
                        if let Some(close) = close {
                            sched.at(now + *close, Ev::Close(c));
                        }
                    }
                    Workload::Transfer { .. } => {}
                }
                // A listener waits for the peer's SYN, and its RTO is in force from accept.
                if self.spec.tcp.listen.is_some() {
                    sched.at(now, Ev::PeerSyn(c));
                    return;
                }
                self.conns[c as usize].sender.start(now, &mut self.actions);
                self.dispatch(c, sched);
            }
            Ev::AppWrite(c) => {
                self.conns[c as usize].sender.app_write(now, &mut self.actions);
                if let Workload::Steady { interval } = self.spec.tcp.workload {
                    sched.after(interval, Ev::AppWrite(c));
                }
                self.dispatch(c, sched);
            }
            Ev::Timer(c) => {
                let conn = &mut self.conns[c as usize];
                if conn.armed == Some(now) {
                    conn.armed = None;
                    conn.sender.on_timer(now, &mut self.actions);
                    self.dispatch(c, sched);
                }
            }
            Ev::ToServer(c, seg) => self.at_server(c, seg, sched),
            Ev::ToClient(c, seg) => {
                let conn = &mut self.conns[c as usize];
                // tcp_ack sets rcv_tstamp only for an ACK that is not older than snd_una
                // (an old one goes to `old_ack` first).
                let fresh = !matches!(seg, Segment::Ack { ack, .. } if ack < conn.sender.acked());
                conn.sender.on_segment(now, seg, &mut self.actions);
                if fresh && let Some(ka) = conn.keepalive.as_mut() {
                    ka.on_receipt(now);
                }
                self.dispatch(c, sched);
            }
            Ev::Keepalive(c) => self.keepalive(c, sched),
            Ev::DelAck(c) => self.delack(c, sched),
            Ev::Write(c, k) => {
                let segments = self.batches[k as usize].1;
                self.conns[c as usize].sender.app_write_segments(now, segments, &mut self.actions);
                self.dispatch(c, sched);
            }
            Ev::Close(c) => {
                self.conns[c as usize].sender.app_close(&mut self.actions);
                self.dispatch(c, sched);
            }
            Ev::Icmp(c, quoted) => {
                self.conns[c as usize].sender.on_icmp_unreachable(now, quoted, &mut self.actions);
                self.dispatch(c, sched);
            }
            Ev::ProbeToServer(c) => {
                // The probe lies below the peer's window: it answers with a duplicate ACK
                // (`tcp_send_dupack`) and its receive state does not change.
                let conn = &mut self.conns[c as usize];
                if let Some(at) = conn.path.transmit(Direction::Reverse, now, &mut conn.delay_rev, &mut conn.loss_rev) {
                    sched.at(at, Ev::ProbeAnswer(c));
                }
            }
            Ev::ProbeAnswer(c) => {
                // A duplicate ACK with nothing outstanding: tcp_ack resets icsk_probes_out
                // and rcv_tstamp and leaves the sender's state alone (no RTT sample,
                // no duplicate-ACK count with nothing in flight).
                let conn = &mut self.conns[c as usize];
                if let Some(ka) = conn.keepalive.as_mut() {
                    ka.on_receipt(now);
                }
                let ack = conn.receiver.delivered();
                self.trace_beside(c, now, TraceEvent::Ack, Some(ack));
            }
            Ev::ReadStop(c) => self.conns[c as usize].receiver.stop_reading(),
            Ev::ReadResume(c) => {
                let conn = &mut self.conns[c as usize];
                if let Some(update) = conn.receiver.resume_reading()
                    && let Some(at) =
                        conn.path.transmit(Direction::Reverse, now, &mut conn.delay_rev, &mut conn.loss_rev)
                {
                    sched.at(at, Ev::ToClient(c, update));
                }
            }
            Ev::PeerSyn(c) => self.peer_syn(c, sched),
            Ev::SynAtListener(c) => self.syn_at_listener(c, sched),
            Ev::SynAckTimer(c) => self.synack_timer(c, sched),
            Ev::SynAckAtPeer(c, tsval) => self.synack_at_peer(c, tsval, sched),
            Ev::AckAtListener(c, tsecr) => self.ack_at_listener(c, tsecr, sched),
        }
    }
}

/// Runs one replication of one TCP variant.
pub fn run_replication(spec: &TcpSpec, job: Job<'_>) -> Result<ReplicationResult, EngineError> {
    let Job { seeds, replication, horizon, budget } = job;
    let rep = u64::from(replication);
    let supply = match spec.tcp.workload {
        Workload::Transfer { segments } => Supply::Transfer { segments },
        Workload::Steady { .. } | Workload::Script { .. } => Supply::Steady,
    };
    let batches = super::script::batches(&spec.tcp.write);
    // Convergence is judged against the RTT a packet typically sees after the change:
    // the new base RTT plus the median extra delay of each direction.
    let extra = spec.path.delay_for(Direction::Forward).from_uniform(0.5)
        + spec.path.delay_for(Direction::Reverse).from_uniform(0.5);
    let changes: Vec<(SimTime, SimDuration)> =
        spec.path.rtt_change.iter().map(|ch| (SimTime::ZERO + ch.at, ch.rtt + extra)).collect();
    let path_spec = Arc::new(PathSpec::new(&spec.path));
    let blackouts: Vec<(SimTime, SimTime)> =
        spec.path.blackout.iter().map(|b| (SimTime::ZERO + b.at, SimTime::ZERO + b.at + b.duration)).collect();
    let traced_here = spec.trace.replications.contains(&replication);
    let mut sched = Scheduler::new(SimTime::ZERO + horizon);
    let mut conns = Vec::with_capacity(spec.tcp.clients as usize);
    for c in 0..spec.tcp.clients {
        let id = u64::from(c);
        let start = start::offset(spec.tcp.start_spread, &mut seeds.stream(rep, id, Purpose::Workload));
        sched.at(SimTime::ZERO + start, Ev::Start(c));
        for stall in spec.tcp.receiver.iter().flat_map(|r| &r.stall) {
            sched.at(SimTime::ZERO + stall.at, Ev::ReadStop(c));
            if let Some(end) = stall.end() {
                sched.at(SimTime::ZERO + end, Ev::ReadResume(c));
            }
        }
        for &at in path_spec.script().icmp_unreachable() {
            sched.at(at, Ev::Icmp(c, None));
        }
        conns.push(Conn {
            sender: TcpSender::new(spec.tcp.sender_options(), &spec.rto, supply),
            receiver: spec.receiver(extra),
            path: Path::from_spec(path_spec.clone()),
            delay_fwd: seeds.stream(rep, id, Purpose::DelayForward),
            delay_rev: seeds.stream(rep, id, Purpose::DelayReverse),
            loss_fwd: seeds.stream(rep, id, Purpose::LossForward),
            loss_rev: seeds.stream(rep, id, Purpose::LossReverse),
            armed: None,
            delack_armed: None,
            keepalive: None,
            closed: false,
            passive: spec.tcp.listen.map(|_| Passive::default()),
            tally: Tally {
                converged: vec![None; changes.len()],
                recovered: vec![None; blackouts.len()],
                ..Tally::default()
            },
        });
    }
    let traced = (0..spec.tcp.clients).map(|c| traced_here && spec.trace.clients.contains(&c)).collect();
    let mut world =
        TcpWorld { spec, conns, traced, trace: Vec::new(), changes, extra, blackouts, actions: Vec::new(), batches };
    let stats = run(&mut world, &mut sched, budget)?;
    for conn in &mut world.conns {
        conn.tally.rto_held.finish(SimTime::ZERO + horizon);
        conn.tally.end_zero_window(SimTime::ZERO + horizon);
    }
    Ok(ReplicationResult {
        metrics: metrics(&world, horizon),
        trace: world.trace,
        events: stats.events,
        ..Default::default()
    })
}

/// The blackout whose recovery a segment sent at `sent` belongs to: the last one over by
/// then, if the next has not begun. Blackouts are in time order and do not overlap, so
/// their ends are in order too and a binary search finds it: a retransmission costs
/// O(log n) however many blackouts the path has.
pub(super) fn recovering(blackouts: &[(SimTime, SimTime)], sent: SimTime) -> Option<usize> {
    let k = blackouts.partition_point(|b| b.1 <= sent).checked_sub(1)?;
    let next_start = blackouts.get(k + 1).map_or(SimTime::MAX, |b| b.0);
    (sent < next_start).then_some(k)
}

/// Per-replication values: the mean over connections of each per-connection figure.
pub(super) fn metrics(world: &TcpWorld<'_>, horizon: SimDuration) -> Vec<MetricValue> {
    let n = world.conns.len() as f64;
    let mean = |f: &dyn Fn(&Conn) -> f64| world.conns.iter().map(f).sum::<f64>() / n;
    let mean_some = |f: &dyn Fn(&Conn) -> Option<f64>| {
        let v: Vec<f64> = world.conns.iter().filter_map(f).collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    };
    let mss = f64::from(world.spec.tcp.segment_size);
    let mut out = vec![
        MetricValue::of(&metrics::RETRANSMISSIONS, mean(&|c| c.tally.retransmissions as f64)),
        MetricValue::of(&metrics::TIMEOUTS, mean(&|c| c.tally.timeouts as f64)),
        MetricValue::of(&metrics::SPURIOUS_RETRANSMISSIONS, mean(&|c| c.tally.spurious as f64)),
        MetricValue::of(&metrics::TAIL_LOSS_PROBES, mean(&|c| c.tally.probes as f64)),
        MetricValue::of(&metrics::SPURIOUS_TIMEOUTS_DETECTED, mean(&|c| c.tally.spurious_timeouts as f64)),
        MetricValue::of(&metrics::ABORTED, mean(&|c| f64::from(u8::from(c.tally.aborted.is_some())))),
        MetricValue::maybe_of(&metrics::TIME_TO_ABORT, mean_some(&|c| c.tally.aborted.map(|d| d.as_secs_f64()))),
        MetricValue::of(&metrics::RTT_SAMPLES, mean(&|c| c.tally.samples as f64)),
        MetricValue::of(&metrics::MAX_RTO, mean(&|c| c.tally.max_rto.as_secs_f64())),
        MetricValue::maybe_of(&metrics::RTO_MEAN, mean_some(&|c| c.tally.rto_held.mean().map(|ns| ns / 1e9))),
        MetricValue::maybe_of(
            &metrics::RTO_P50,
            mean_some(&|c| c.tally.rto_held.quantile(0.5).map(|ns| ns as f64 / 1e9)),
        ),
        MetricValue::maybe_of(
            &metrics::RTO_P99,
            mean_some(&|c| c.tally.rto_held.quantile(0.99).map(|ns| ns as f64 / 1e9)),
        ),
        MetricValue::of(
            &metrics::GOODPUT,
            mean(&|c| {
                let span = c.tally.finished_at.map_or(horizon, |t| t.saturating_since(SimTime::ZERO));
                c.receiver.delivered() as f64 * mss / span.as_secs_f64().max(1e-9)
            }),
        ),
    ];
    out.push(MetricValue::maybe_of(&metrics::FINAL_SRTT, mean_some(&|c| c.tally.last_srtt.map(|d| d.as_secs_f64()))));
    out.push(MetricValue::maybe_of(
        &metrics::SRTT_ABS_ERROR,
        mean_some(&|c| (c.tally.samples > 0).then(|| c.tally.srtt_error_sum / c.tally.samples as f64)),
    ));
    if matches!(world.spec.tcp.workload, Workload::Transfer { .. } | Workload::Script { close: Some(_), .. }) {
        out.push(MetricValue::of(&metrics::FINISHED, mean(&|c| f64::from(u8::from(c.tally.finished_at.is_some())))));
        out.push(MetricValue::maybe_of(
            &metrics::TRANSFER_TIME,
            mean_some(&|c| c.tally.finished_at.map(|t| t.as_secs_f64())),
        ));
    }
    for k in 0..world.changes.len() {
        out.push(MetricValue::numbered(
            &metrics::CONVERGED_CHANGE,
            k + 1,
            Some(mean(&|c| f64::from(u8::from(c.tally.converged[k].is_some())))),
        ));
        out.push(MetricValue::numbered(
            &metrics::CONVERGENCE_TIME_CHANGE,
            k + 1,
            mean_some(&|c| c.tally.converged[k].map(|d| d.as_secs_f64())),
        ));
    }
    for k in 0..world.blackouts.len() {
        out.push(MetricValue::numbered(
            &metrics::RECOVERY_LAG_BLACKOUT,
            k + 1,
            mean_some(&|c| c.tally.recovered[k].map(|d| d.as_secs_f64())),
        ));
    }
    if world.spec.tcp.receiver.is_some() {
        out.push(MetricValue::of(&metrics::ZERO_WINDOW_PROBES, mean(&|c| c.tally.zero_window_probes as f64)));
        out.push(MetricValue::of(&metrics::ZERO_WINDOW_STALL, mean(&|c| c.tally.zero_window_stall.as_secs_f64())));
    }
    if world.spec.tcp.listen.is_some() {
        passive::values(world, &mut out);
    }
    if world.spec.tcp.keepalive.is_some() {
        out.push(MetricValue::of(&metrics::KEEPALIVE_PROBES, mean(&|c| c.tally.keepalive_probes as f64)));
        out.push(MetricValue::of(
            &metrics::KEEPALIVE_RESETS,
            mean(&|c| f64::from(u8::from(c.tally.keepalive_abort.is_some()))),
        ));
        for k in 0..world.blackouts.len() {
            let lag = |c: &Conn| {
                let at = c.tally.keepalive_abort?;
                (begun(&world.blackouts, at) == Some(k)).then(|| (at - world.blackouts[k].0).as_secs_f64())
            };
            out.push(MetricValue::numbered(&metrics::KEEPALIVE_LAG_BLACKOUT, k + 1, mean_some(&lag)));
        }
    }
    out
}

/// The last blackout begun by `t` (in force or over), if any: the one a keepalive reset at
/// `t` is blamed on.
pub(super) fn begun(blackouts: &[(SimTime, SimTime)], t: SimTime) -> Option<usize> {
    blackouts.partition_point(|b| b.0 <= t).checked_sub(1)
}

/// A trace row: what happened to connection `c` at `now`, with its estimator's state and
/// its congestion window (`None` where no sender is in force, as for a listener's request).
fn trace_row(
    now: SimTime,
    c: u32,
    event: TraceEvent,
    segment: Option<u64>,
    sample: Option<SimDuration>,
    rto: &RtoSnapshot,
    cc: Option<CcView>,
) -> TraceRow {
    TraceRow {
        time: now,
        client: c,
        event: event.name(),
        segment,
        sample,
        srtt: rto.srtt,
        rttvar: rto.rttvar,
        rto: rto.rto,
        backoffs: rto.backoffs,
        cwnd: cc.map(|cc| cc.cwnd),
        ssthresh: cc.and_then(|cc| cc.ssthresh),
        ca_state: cc.map(|cc| cc.state.name()),
    }
}
