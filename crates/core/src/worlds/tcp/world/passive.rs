//! The passive open: `[tcp.listen]` makes the simulated end a listening server. A peer
//! connects to it; the listener's request socket (`model::tcp::synack`) answers with
//! SYN-ACKs on Linux's timer until the peer's ACK completes the handshake, and the
//! accepted socket then sends the workload as an active opener would.
//!
//! The peer is simple: it sends its SYN at the connection's start and again on the
//! classic exponential schedule (1 s doubling: 1, 3, 7, 15, 31, 63 s for
//! `peer_syn_retries = 6`, without Linux's newer linear SYN timeouts) until a SYN-ACK
//! reaches it; it answers every SYN-ACK with an ACK echoing that SYN-ACK's timestamp, and
//! sends no data of its own (so only its ACK, never a data segment, completes the
//! handshake). SYNs and ACKs travel the path's reverse direction, SYN-ACKs the forward
//! one, with the same losses and blackouts as data.

use super::{Ev, TcpWorld};
use crate::worlds::tcp::metrics;
use crate::metrics::MetricValue;
use crate::engine::run::Scheduler;
use crate::engine::time::{SimDuration, SimTime};
use crate::metrics::trace::TraceEvent;
use crate::model::path::Direction;
use crate::model::tcp::synack::Fire;
use crate::model::tcp::{RequestSock, SynAckParams};

/// One connection's passive open: the peer's side and the listener's request.
#[derive(Clone, Debug, Default)]
pub(super) struct Passive {
    /// The listener's request, while one waits for the ACK.
    request: Option<RequestSock>,
    /// The request timer's event already in the queue.
    armed: Option<SimTime>,
    /// SYNs the peer has sent.
    peer_syns: u32,
    /// A SYN-ACK reached the peer: it sends no more SYNs.
    peer_answered: bool,
    /// When the current request's first SYN reached the listener.
    opened: Option<SimTime>,
    pub(super) synack_retransmissions: u64,
    /// From the first SYN at the listener to the ACK that completed the handshake.
    pub(super) handshake: Option<SimDuration>,
    /// Requests that expired, and how long the last one was held.
    pub(super) expired: u32,
    pub(super) held: Option<SimDuration>,
    /// The RTO the accepted socket started with.
    pub(super) accept_rto: Option<SimDuration>,
}

impl TcpWorld<'_> {
    fn listen_params(&self) -> (SynAckParams, u32) {
        let listen = self.spec.tcp.listen.expect("passive events only with [tcp.listen]");
        (SynAckParams { retries: listen.synack_retries, rto_max: self.spec.rto.max_rto }, listen.peer_syn_retries)
    }

    /// The peer sends its SYN, or sends it again, unless a SYN-ACK has reached it.
    pub(super) fn peer_syn(&mut self, c: u32, sched: &mut Scheduler<Ev>) {
        let now = sched.now();
        let (_, retries) = self.listen_params();
        let conn = &mut self.conns[c as usize];
        let p = conn.passive.as_mut().expect("passive connection");
        if p.peer_answered || p.peer_syns > retries {
            return;
        }
        p.peer_syns += 1;
        // The k-th SYN after the first waits 1 s << k (tcp_retransmit_timer's doubling).
        if p.peer_syns <= retries {
            sched.after(SimDuration::from_secs(1u64 << (p.peer_syns - 1).min(40)), Ev::PeerSyn(c));
        }
        if let Some(at) = conn.path.transmit(Direction::Reverse, now, &mut conn.delay_rev, &mut conn.loss_rev) {
            sched.at(at, Ev::SynAtListener(c));
        }
    }

    /// The peer's SYN reaches the listener: a new request, or the waiting one resends.
    pub(super) fn syn_at_listener(&mut self, c: u32, sched: &mut Scheduler<Ev>) {
        let now = sched.now();
        let (params, _) = self.listen_params();
        let conn = &mut self.conns[c as usize];
        // A SYN for a socket already accepted is not the request's business.
        if conn.sender.is_established() || conn.sender.is_aborted() {
            return;
        }
        let p = conn.passive.as_mut().expect("passive connection");
        let event = match p.request.as_mut() {
            Some(req) => {
                req.on_syn_again(now);
                p.synack_retransmissions += 1;
                TraceEvent::SynAckRetransmit
            }
            None => {
                p.request = Some(RequestSock::on_syn(params, now));
                p.opened = Some(now);
                TraceEvent::SynAck
            }
        };
        self.trace_beside(c, now, TraceEvent::Syn, None);
        self.send_synack(c, now, event, sched);
    }

    /// A SYN-ACK leaves the listener; the request's timer is queued if it moved.
    fn send_synack(&mut self, c: u32, now: SimTime, event: TraceEvent, sched: &mut Scheduler<Ev>) {
        let conn = &mut self.conns[c as usize];
        if let Some(at) = conn.path.transmit(Direction::Forward, now, &mut conn.delay_fwd, &mut conn.loss_fwd) {
            sched.at(at, Ev::SynAckAtPeer(c, now));
        }
        let p = conn.passive.as_mut().expect("passive connection");
        let timer = p.request.as_ref().and_then(RequestSock::timer);
        if timer != p.armed {
            p.armed = timer;
            if let Some(t) = timer {
                sched.at(t, Ev::SynAckTimer(c));
            }
        }
        self.trace_beside(c, now, event, None);
    }

    /// The request's timer runs (`reqsk_timer_handler`).
    pub(super) fn synack_timer(&mut self, c: u32, sched: &mut Scheduler<Ev>) {
        let now = sched.now();
        let p = self.conns[c as usize].passive.as_mut().expect("passive connection");
        if p.armed != Some(now) {
            return;
        }
        p.armed = None;
        let Some(req) = p.request.as_mut() else {
            return;
        };
        match req.on_timer(now) {
            Fire::Resend(_) => {
                p.synack_retransmissions += 1;
                self.send_synack(c, now, TraceEvent::SynAckRetransmit, sched);
            }
            Fire::Expire => {
                p.request = None;
                p.expired += 1;
                p.held = p.opened.take().map(|t| now - t);
                self.trace_beside(c, now, TraceEvent::RequestExpired, None);
            }
        }
    }

    /// A SYN-ACK reaches the peer, which answers it with an ACK echoing its timestamp.
    pub(super) fn synack_at_peer(&mut self, c: u32, tsval: SimTime, sched: &mut Scheduler<Ev>) {
        let now = sched.now();
        let conn = &mut self.conns[c as usize];
        conn.passive.as_mut().expect("passive connection").peer_answered = true;
        if let Some(at) = conn.path.transmit(Direction::Reverse, now, &mut conn.delay_rev, &mut conn.loss_rev) {
            sched.at(at, Ev::AckAtListener(c, tsval));
        }
    }

    /// The peer's ACK reaches the listener: a waiting request becomes the accepted
    /// socket; with no request (never made, or expired) the ACK finds nothing to complete.
    pub(super) fn ack_at_listener(&mut self, c: u32, tsecr: SimTime, sched: &mut Scheduler<Ev>) {
        let now = sched.now();
        let timestamps = self.spec.rto.timestamps;
        let conn = &mut self.conns[c as usize];
        let p = conn.passive.as_mut().expect("passive connection");
        let Some(mut req) = p.request.take() else {
            return;
        };
        p.armed = None;
        let accepted = req.on_ack(now, timestamps.then_some(tsecr));
        p.handshake = p.opened.take().map(|t| now - t);
        conn.sender.accept(now, accepted, &mut self.actions);
        let rto = conn.sender.snapshot().rto;
        conn.passive.as_mut().expect("passive connection").accept_rto = Some(rto);
        self.dispatch(c, sched);
    }
}

/// Per-replication values of the passive open: means over connections.
pub(super) fn values(world: &TcpWorld<'_>, out: &mut Vec<MetricValue>) {
    let passive = || world.conns.iter().filter_map(|c| c.passive.as_ref());
    let n = world.conns.len() as f64;
    let mean_some = |f: &dyn Fn(&Passive) -> Option<f64>| {
        let v: Vec<f64> = passive().filter_map(f).collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    };
    out.push(MetricValue::of(
        &metrics::SYNACK_RETRANSMISSIONS,
        passive().map(|p| p.synack_retransmissions as f64).sum::<f64>() / n,
    ));
    out.push(MetricValue::maybe_of(&metrics::HANDSHAKE_TIME, mean_some(&|p| p.handshake.map(|d| d.as_secs_f64()))));
    out.push(MetricValue::maybe_of(&metrics::ACCEPT_RTO, mean_some(&|p| p.accept_rto.map(|d| d.as_secs_f64()))));
    out.push(MetricValue::of(
        &metrics::REQUESTS_EXPIRED,
        passive().map(|p| f64::from(p.expired)).sum::<f64>() / n,
    ));
    out.push(MetricValue::maybe_of(&metrics::REQUEST_HELD, mean_some(&|p| p.held.map(|d| d.as_secs_f64()))));
}
