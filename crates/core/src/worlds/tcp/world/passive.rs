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

use super::{Ev, TcpWorld, trace_row};
use crate::engine::run::Scheduler;
use crate::engine::time::{SimDuration, SimTime};
use crate::metrics::MetricValue;
use crate::metrics::trace::TraceEvent;
use crate::model::path::Direction;
use crate::model::rto::RtoSnapshot;
use crate::model::tcp::synack::Fire;
use crate::model::tcp::{RequestSock, SynAckParams};
use crate::worlds::tcp::metrics;

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
        self.trace_request(c, now, TraceEvent::Syn);
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
        self.trace_request(c, now, event);
    }

    /// A trace row for the request: its timeout in the RTO column and its expiries in
    /// the backoffs column (the socket's own estimator is not in force until accept).
    fn trace_request(&mut self, c: u32, now: SimTime, event: TraceEvent) {
        if !self.traced[c as usize] {
            return;
        }
        let p = self.conns[c as usize].passive.as_ref().expect("passive connection");
        let (rto, backoffs) = p.request.as_ref().map_or((SimDuration::ZERO, 0), |r| (r.timeout(), r.timeouts()));
        let snapshot = RtoSnapshot { srtt: None, rttvar: None, rto, backoffs, mdev: None, mdev_max: None };
        self.trace.push(trace_row(now, c, event, None, None, &snapshot, None));
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
                self.trace_request(c, now, TraceEvent::RequestExpired);
                let p = self.conns[c as usize].passive.as_mut().expect("passive connection");
                p.request = None;
                p.expired += 1;
                p.held = p.opened.take().map(|t| now - t);
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
    out.push(MetricValue::of(&metrics::REQUESTS_EXPIRED, passive().map(|p| f64::from(p.expired)).sum::<f64>() / n));
    out.push(MetricValue::maybe_of(&metrics::REQUEST_HELD, mean_some(&|p| p.held.map(|d| d.as_secs_f64()))));
}

#[cfg(test)]
mod tests {
    use crate::engine::time::SimDuration;
    use crate::metrics::ReplicationResult;
    use crate::metrics::trace::TraceEvent;
    use crate::scenario::load_str;
    use crate::worlds::tcp::run_text::{ms, run_text, times, value};

    /// Replication 0 of a passive open over a constant 100 ms path (50 ms each way),
    /// one 20-segment transfer, Linux's timer, with `extra` TOML appended.
    fn run_with(extra: &str) -> ReplicationResult {
        run_profile("linux", extra)
    }

    fn run_profile(profile: &str, extra: &str) -> ReplicationResult {
        run_text(&format!(
            "name = \"t\"\nhorizon = \"2min\"\n[trace]\nreplications = [0]\n[path]\nbase_rtt = \"100ms\"\n\
             [tcp]\nworkload = {{ kind = \"transfer\", segments = 20 }}\nrto.profile = \"{profile}\"\n{extra}"
        ))
    }

    /// The first SYN-ACK (sent at 50 ms) falls in a blackout from 10 ms to 1.04 s; the
    /// peer's SYN at 1 s does too. The request's timer resends at 50 ms + 1 s.
    const SYNACK_LOST: &str = "[tcp.listen]\n[[path.blackout]]\nat = \"10ms\"\nduration = \"1030ms\"\n";

    /// The peer's SYN gets through at 0; from 10 ms on nothing does.
    fn dark_after_syn(listen: &str) -> String {
        format!("[tcp.listen]\n{listen}\n[[path.blackout]]\nat = \"10ms\"\nduration = \"1h\"\n")
    }

    #[test]
    fn a_clean_passive_open_times_its_syn_ack_and_starts_at_300ms() {
        // SYN at 0 reaches the listener at 50 ms; SYN-ACK back at 100 ms; ACK at 150 ms.
        // tcp_synack_rtt_meas: 100 ms, so tcp_rtt_estimator gives srtt 100 ms and rttvar
        // max(mdev 50 ms, tcp_rto_min 200 ms): RTO 100 + 200 = 300 ms.
        let r = run_with("[tcp.listen]\n");
        assert_eq!(times(&r, TraceEvent::SynAck), [ms(50)]);
        assert_eq!(times(&r, TraceEvent::Established), [ms(150)]);
        assert_eq!(value(&r, "handshake_time"), Some(0.1));
        assert_eq!(value(&r, "accept_rto"), Some(0.3));
        assert_eq!(value(&r, "synack_retransmissions"), Some(0.0));
        assert_eq!(value(&r, "finished"), Some(1.0));
    }

    #[test]
    fn a_lost_syn_ack_without_timestamps_starts_data_at_the_3s_fallback() {
        // reqsk_timer_handler resends 1 s after the SYN, at 1.05 s, as the opening of
        // packetdrill's init_rto/init_rto_passive_open.pkt expects (its 405 ms tolerance
        // is for the old 200 ms TCP_SYNQ_INTERVAL); the ACK comes at 1.15 s. num_retrans
        // is 1, so tcp_synack_rtt_meas has no sample and no TSecr stands in:
        // tcp_init_metrics sets icsk_rto = TCP_TIMEOUT_FALLBACK (3 s; RFC 6298 5.7).
        let r = run_with(&format!("rto.timestamps = false\n{SYNACK_LOST}"));
        assert_eq!(times(&r, TraceEvent::SynAck), [ms(50)]);
        assert_eq!(times(&r, TraceEvent::SynAckRetransmit), [ms(1050)]);
        assert_eq!(times(&r, TraceEvent::Established), [ms(1150)]);
        assert_eq!(value(&r, "handshake_time"), Some(1.1));
        assert_eq!(value(&r, "accept_rto"), Some(3.0));
        assert_eq!(value(&r, "synack_retransmissions"), Some(1.0));
        let established = r.trace.iter().find(|row| row.event == TraceEvent::Established.name()).unwrap();
        assert_eq!((established.srtt, established.rto), (None, SimDuration::from_secs(3)));
    }

    #[test]
    fn a_lost_syn_ack_with_timestamps_is_timed_by_the_echoed_tsval() {
        // tcp_ack_update_rtt: no seq RTT after a resend, but the ACK echoes the resent
        // SYN-ACK's TSval (1.05 s): a 100 ms sample and the 300 ms RTO.
        let r = run_with(&format!("rto.timestamps = true\n{SYNACK_LOST}"));
        assert_eq!(value(&r, "accept_rto"), Some(0.3));
        assert_eq!(value(&r, "handshake_time"), Some(1.1));
    }

    #[test]
    fn under_rfc6298_a_syn_ack_timeout_starts_data_at_3s_and_a_clean_open_at_the_1s_floor() {
        // RFC 6298 (5.7): the timer expired awaiting the ACK of a SYN segment (the
        // SYN-ACK) with RTO < 3 s, so RTO = 3 s when data begins. A clean open's 100 ms
        // sample gives 100 + 4 × 50 = 300 ms, raised to the (2.4) minimum of 1 s.
        let lost = run_profile("rfc6298", SYNACK_LOST);
        assert_eq!(value(&lost, "accept_rto"), Some(3.0));
        let clean = run_profile("rfc6298", "[tcp.listen]\n");
        assert_eq!(value(&clean, "accept_rto"), Some(1.0));
    }

    #[test]
    fn an_unanswered_request_expires_after_five_resends_63s_after_the_syn() {
        // tcp_synack_retries 5: SYN-ACKs at 0.05 + 0, 1, 3, 7, 15, 31 s; syn_ack_recalc
        // expires the request at the sixth run of the timer, 0.05 + 63 s.
        let r = run_with(&dark_after_syn(""));
        let at = |s: &[u64]| s.iter().map(|&s| ms(50 + 1000 * s)).collect::<Vec<_>>();
        assert_eq!(times(&r, TraceEvent::SynAck), at(&[0]));
        assert_eq!(times(&r, TraceEvent::SynAckRetransmit), at(&[1, 3, 7, 15, 31]));
        assert_eq!(times(&r, TraceEvent::RequestExpired), at(&[63]));
        assert_eq!(value(&r, "requests_expired"), Some(1.0));
        assert_eq!(value(&r, "request_held"), Some(63.0));
        assert_eq!(value(&r, "handshake_time"), None);
        assert_eq!(value(&r, "accept_rto"), None);
        assert_eq!(value(&r, "finished"), Some(0.0));
    }

    #[test]
    fn two_synack_retries_hold_the_request_7s() {
        let r = run_with(&dark_after_syn("synack_retries = 2"));
        assert_eq!(times(&r, TraceEvent::SynAckRetransmit), [ms(1050), ms(3050)]);
        assert_eq!(value(&r, "request_held"), Some(7.0));
    }

    #[test]
    fn the_rto_max_caps_the_syn_ack_backoff_as_tcp_rto_synack_rto_max_pkt_shows() {
        // tcp_reqsk_timeout caps at tcp_rto_max_ms (here 1 s): a SYN-ACK every second,
        // the request dropped at the sixth run, 0.05 + 6 s.
        let r = run_with(&format!("rto.max_rto = \"1s\"\n{}", dark_after_syn("")));
        assert_eq!(times(&r, TraceEvent::SynAckRetransmit), (1..=5).map(|s| ms(50 + 1000 * s)).collect::<Vec<_>>());
        assert_eq!(value(&r, "request_held"), Some(6.0));
    }

    #[test]
    fn a_lost_syn_is_sent_again_by_the_peer_one_second_later() {
        // The first SYN (at 0) falls in a blackout to 500 ms; the peer's second SYN at
        // 1 s makes the request at 1.05 s, answered by 1.15 s: the request itself waited
        // 100 ms and timed its one SYN-ACK.
        let r = run_with("[tcp.listen]\n[[path.blackout]]\nat = \"0s\"\nduration = \"500ms\"\n");
        assert_eq!(times(&r, TraceEvent::Syn), [ms(1050)]);
        assert_eq!(times(&r, TraceEvent::Established), [ms(1150)]);
        assert_eq!(value(&r, "handshake_time"), Some(0.1));
        assert_eq!(value(&r, "accept_rto"), Some(0.3));
    }

    #[test]
    fn without_the_table_no_passive_metric_is_written() {
        let r = run_with("");
        assert!(r.metrics.iter().all(|m| m.name != "handshake_time" && m.name != "synack_retransmissions"));
        assert!(times(&r, TraceEvent::SynAck).is_empty());
    }

    #[test]
    fn listen_values_linux_refuses_are_refused_with_their_keys() {
        let text = "name = \"t\"\nhorizon = \"1s\"\n[path]\nbase_rtt = \"100ms\"\n\
                    [tcp]\nhandshake = false\nworkload = { kind = \"transfer\", segments = 1 }\n\
                    [tcp.listen]\nsynack_retries = 256\npeer_syn_retries = 0\n";
        let Err(err) = load_str("t.toml", text) else { panic!("accepted") };
        let err = err.to_string();
        for want in ["tcp.listen.synack_retries", "tcp.listen.peer_syn_retries", "tcp.handshake"] {
            assert!(err.contains(want), "{want} missing from: {err}");
        }
    }
}
