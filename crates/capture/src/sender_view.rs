//! One connection seen from its data sender: the RTT samples it could take, its
//! retransmissions and which of them the timer drove, replayed through an estimator.
//!
//! Sampling follows the simulator's TCP sender (`model/tcp/sender/ack.rs`, `sample_for`):
//!
//! - `rfc6298`: with timestamps on both sides, every ACK of new data is a sample, from
//!   the first send of the segment whose TSval the ACK echoes (RFC 7323 §4.1). Without,
//!   one segment is timed at a time and sampled by the first ACK covering its end, unless
//!   it was retransmitted meanwhile (RFC 6298 §3, Karn).
//! - `linux`: every ACK of new data, from the oldest newly acknowledged segment's send
//!   time when none of them was retransmitted (`tcp_clean_rtx_queue`,
//!   FLAG_RETRANS_DATA_ACKED); otherwise from the echoed TSval on a 1 ms clock
//!   (`tcp_ack_update_rtt`, at least one tick), or no sample.
//!
//! A retransmission of the first unacknowledged byte after at least the estimator's
//! current RTO of silence (since the timer was last armed) is a `timeout`; any other
//! retransmission is a `retransmit`, but for a tail loss probe under `linux`: see
//! `SenderView::pto`. A repeated SYN is a `syn_timeout`: in SYN-SENT only
//! the timer retransmits.
//!
//! A sender that answered the SYN (a download's server) is timed by its SYN-ACK as the
//! active side is by its SYN: see `SenderView::handshake_rtt`. Its SYN-ACK sent again
//! is the listener's timer, unless a repeated SYN asked for it: see
//! `SenderView::synack_resent`.
//!
//! Besides the rows, an [`Observer`] hears of each row with the estimator's state and of
//! each [`Stall`]: head retransmissions with nothing heard from the receiver since the
//! timer was armed, with what the profile's timer would have done in the same silence.

use std::collections::{BTreeMap, VecDeque};
use std::io::{self, Write};

use backoffsim_core::engine::time::{SimDuration, SimTime};
use backoffsim_core::model::rto::{Phase, RtoParams, RtoProfile, RtoSnapshot, SeqInfo};
use backoffsim_core::model::tcp::tlp::{Probe, probe_timeout};
use backoffsim_core::replay::{Event, Replayer};

use crate::flow::{Endpoint, FlowKey, Unwrap, source};
use crate::reader::{SackOption, Segment};
use crate::stall::{Open, Stall};

/// The most TSvals kept waiting for their echo: at one a millisecond, a minute's worth.
const TSVALS_MAX: usize = 1 << 16;

/// The least silence after a segment from the receiver that a timer can have waited.
const ANSWER_NS: u64 = 1_000_000;

/// A data segment not yet acknowledged.
#[derive(Clone, Copy, Debug)]
struct Sent {
    end: u64,
    first_ns: u64,
    retransmitted: bool,
}

/// What the sender view counted, besides the rows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub samples: u64,
    pub timeouts: u64,
    pub retransmits: u64,
    /// Tail loss probes (`linux` with SACK), the PTO's sends, not the RTO's.
    pub probes: u64,
    /// Those of them that sent new data rather than resending the last segment.
    pub new_data_probes: u64,
    pub syn_timeouts: u64,
    pub stalls: u64,
}

impl Summary {
    /// Data sent again, by whichever timer or answer: the RTO's, the fast ones and the
    /// probes that resent a segment (a probe of new data resends nothing).
    pub fn data_retransmissions(&self) -> u64 {
        self.timeouts + self.retransmits + self.probes - self.new_data_probes
    }
}

/// What a caller that wants more than the CSV rows hears, as the connection is read.
pub trait Observer {
    /// A row as written, with the estimator's state after it.
    fn row(&mut self, _at: SimTime, _event: Event, _state: &RtoSnapshot) {}
    /// A stall, once it has ended (or the capture has).
    fn stall(&mut self, _stall: &Stall) {}
}

/// Hears nothing: the rows alone.
impl Observer for () {}

/// Feeds a connection's segments, in capture order, to an estimator.
pub struct SenderView<W: Write, O: Observer = ()> {
    sender: Endpoint,
    key: FlowKey,
    linux: bool,
    params: RtoParams,
    origin_ns: u64,
    out: Replayer<W>,
    seq: Option<Unwrap>,
    ack: Option<Unwrap>,
    syn_ns: Option<u64>,
    syn_sent: u32,
    /// The sender's SYN carried an ACK: it answered the connection (SYN-RECV).
    passive: bool,
    established: bool,
    una: u64,
    nxt: u64,
    outstanding: BTreeMap<u64, Sent>,
    /// The segment timed for an RFC 6298 sample: (end, send time).
    timed: Option<(u64, u64)>,
    /// (TSval, first send time) of the sender's segments not yet echoed, in send order.
    tsvals: VecDeque<(u32, u64)>,
    /// Whether the receiver echoes timestamps (its segments carry the option).
    peer_ts: bool,
    timer_ns: u64,
    /// The last segment from the receiver, the last new data sent, and the last packet of
    /// the connection.
    heard_ns: u64,
    new_data_ns: u64,
    last_ns: u64,
    stall: Option<Open>,
    /// SACK-permitted in the sender's SYN and in the receiver's, when seen.
    syn_sack: Option<bool>,
    peer_syn_sack: Option<bool>,
    /// The receiver sent SACK blocks: SACK is on even if the handshake was not captured.
    sack_blocks: bool,
    /// The probe out (`tlp_high_seq`): snd_nxt when it was sent.
    probe: Option<Probe>,
    observer: O,
    pub summary: Summary,
}

impl<W: Write> SenderView<W> {
    /// `origin_ns` is the flow's first packet: output times are relative to it.
    pub fn new(sender: Endpoint, receiver: Endpoint, origin_ns: u64, params: &RtoParams, out: W) -> io::Result<Self> {
        SenderView::observed(sender, receiver, origin_ns, params, out, ())
    }
}

impl<W: Write, O: Observer> SenderView<W, O> {
    /// As [`SenderView::new`], telling `observer` of each row and stall.
    pub fn observed(
        sender: Endpoint,
        receiver: Endpoint,
        origin_ns: u64,
        params: &RtoParams,
        out: W,
        observer: O,
    ) -> io::Result<Self> {
        Ok(SenderView {
            sender,
            key: FlowKey::of(sender, receiver),
            linux: params.profile == RtoProfile::Linux,
            params: params.clone(),
            origin_ns,
            out: Replayer::new(out, params)?,
            seq: None,
            ack: None,
            syn_ns: None,
            syn_sent: 0,
            passive: false,
            established: false,
            una: 0,
            nxt: 0,
            outstanding: BTreeMap::new(),
            timed: None,
            tsvals: VecDeque::new(),
            peer_ts: false,
            timer_ns: origin_ns,
            heard_ns: 0,
            new_data_ns: 0,
            last_ns: origin_ns,
            stall: None,
            syn_sack: None,
            peer_syn_sack: None,
            sack_blocks: false,
            probe: None,
            observer,
            summary: Summary::default(),
        })
    }

    /// Writes the row and tells the observer.
    fn emit(&mut self, ns: u64, event: Event) -> io::Result<()> {
        let at = self.at(ns);
        self.out.event(at, event)?;
        self.observer.row(at, event, &self.out.estimator().snapshot());
        Ok(())
    }

    /// A retransmission of the head: it opens a stall when nothing was heard since the
    /// timer was armed, and adds to the open one while nothing is heard.
    fn head_resent(&mut self, ns: u64, phase: Phase, pto: Option<SimDuration>) {
        if self.stall.as_ref().is_some_and(|s| s.phase() != phase) {
            self.close_stall(None);
        }
        // Sent sooner than an SRTT after the receiver was last heard, it is loss recovery
        // answering what was heard (NewReno's partial ACK, RFC 6582 §3.2; RACK's
        // reordering timer, a quarter of the minimum RTT, RFC 8985 §6.2), not the silence
        // an RTO (at least SRTT + 4·RTTVAR, RFC 6298 §2) waits out. Never sooner than a
        // millisecond: Linux's shortest timer is two jiffies (`TCP_TIMEOUT_MIN`).
        let srtt = self.out.estimator().snapshot().srtt.map_or(0, |d| d.as_nanos());
        let answers = self.heard_ns > 0 && ns.saturating_sub(self.heard_ns) < srtt.max(ANSWER_NS);
        if self.stall.is_none() && self.heard_ns <= self.timer_ns && !answers {
            // RFC 6298 §5.1 and §5.3: the timer runs from the ACK, or from the send that
            // found it stopped. Linux restarts it at each new segment sent while a loss
            // probe is pending (`tcp_event_new_data_sent` calls `tcp_rearm_rto`) and after
            // the probe (`tcp_send_loss_probe`): from the last data sent in the silence.
            // Without a probe timer the RTO stays where the ACK or the first send put it
            // (`tcp_event_new_data_sent` re-arms only with nothing in flight).
            let armed = if self.probing() { self.timer_ns.max(self.new_data_ns) } else { self.timer_ns };
            let mut open = Open::new(phase, self.at(armed), self.out.estimator().clone());
            if let Some(pto) = pto {
                open = open.probing(pto);
            }
            // The SYN-ACK's timer backs off as the row it writes says (`synack_resent`).
            let synack = phase == Phase::SynSent && self.passive && self.linux;
            self.stall = Some(if synack { open.timed_as(Phase::Established) } else { open });
        }
        let at = self.at(ns);
        if let Some(stall) = self.stall.as_mut() {
            stall.retransmitted(at);
        }
    }

    /// Whether SACK is on: both SYNs offered it (RFC 2018 §2), or, with the handshake
    /// not captured, the receiver sent SACK blocks.
    fn sack_on(&self) -> bool {
        match (self.syn_sack, self.peer_syn_sack) {
            (Some(a), Some(b)) => a && b,
            _ => self.sack_blocks,
        }
    }

    /// Whether the sender runs a loss probe timer at all: `linux` (`tcp_early_retrans` 3,
    /// its default, unless `--set tlp=false`) with SACK (`tcp_is_sack`).
    fn probing(&self) -> bool {
        self.linux && self.params.tlp && self.sack_on()
    }

    /// The tail loss probe timeout the sender armed at its last send or ACK, when it
    /// would send a probe now (`tcp_schedule_loss_probe`, `tcp_send_loss_probe`): a
    /// probing sender, past its handshake, data in flight, no probe out (`tlp_high_seq`), and in
    /// the Open state, read as nothing in flight sent twice (a resend still unacknowledged
    /// means recovery or loss). A resend of the last segment sent (it ends at snd_nxt:
    /// `tcp_send_loss_probe` resends the tail of the retransmit queue) with nothing heard
    /// since the arming is that probe. One segment in flight is one captured segment: a
    /// TSO send seen as one larger segment counts once.
    fn pto(&self) -> Option<SimDuration> {
        // No probe before the handshake completes (`tcp_schedule_loss_probe` skips
        // SYN-RECV); a capture that starts mid-way saw no handshake to wait for.
        let handshaking = self.syn_sent > 0 && !self.established;
        if !self.probing() || handshaking || self.probe.is_some() {
            return None;
        }
        let (_, head) = self.outstanding.first_key_value()?;
        if self.outstanding.values().any(|s| s.retransmitted) {
            return None;
        }
        let est = self.out.estimator();
        let rto = est.rto().as_nanos();
        // Armed by an ACK, the RTO is about to restart (`advancing_rto`: `icsk_rto`);
        // armed by a send, it keeps the head's deadline (`tcp_rto_delta_us`).
        let until = if self.new_data_ns > self.timer_ns {
            (head.first_ns + rto).checked_sub(self.new_data_ns)
        } else {
            Some(rto)
        };
        let flight = self.outstanding.len() as u64;
        Some(probe_timeout(&self.params, est.snapshot().srtt, flight, until.map(SimDuration)))
    }

    fn close_stall(&mut self, recovered: Option<u64>) {
        if let Some(open) = self.stall.take() {
            let stall = open.close(recovered.map(|ns| self.at(ns)), self.at(self.last_ns));
            self.summary.stalls += 1;
            self.observer.stall(&stall);
        }
    }

    fn at(&self, ns: u64) -> SimTime {
        SimTime(ns.saturating_sub(self.origin_ns))
    }

    /// Takes the next segment of the capture; segments of other flows are ignored.
    pub fn add(&mut self, s: &Segment) -> io::Result<()> {
        if FlowKey::of_segment(s) != self.key {
            return Ok(());
        }
        self.last_ns = self.last_ns.max(s.time_ns);
        if s.rst {
            // Nothing recovers after a reset.
            self.close_stall(None);
            return Ok(());
        }
        if source(s) == self.sender { self.sent(s) } else { self.received(s) }
    }

    fn sent(&mut self, s: &Segment) -> io::Result<()> {
        let unwrap = self.seq.get_or_insert_with(|| Unwrap::new(s.seq));
        let start = unwrap.at(s.seq);
        let end = start + u64::from(s.seq_len());
        if self.ack.is_none() {
            self.ack = Some(Unwrap::new(s.seq));
        }
        if let Some((val, _)) = s.timestamps
            && self.tsvals.back().is_none_or(|&(v, _)| v != val)
        {
            // A peer that never echoes (or a middlebox that rewrites the option) must
            // not make the list grow with the file.
            if self.tsvals.len() == TSVALS_MAX {
                self.tsvals.pop_front();
            }
            self.tsvals.push_back((val, s.time_ns));
        }
        if s.syn {
            self.syn_sent += 1;
            self.syn_sack = Some(s.sack == SackOption::Permitted);
            if self.syn_sent == 1 {
                self.passive = s.ack_flag;
                self.syn_ns = Some(s.time_ns);
                self.timer_ns = s.time_ns;
                self.nxt = end;
                return Ok(());
            }
            if self.passive {
                return self.synack_resent(s.time_ns);
            }
            self.summary.syn_timeouts += 1;
            self.head_resent(s.time_ns, Phase::SynSent, None);
            self.timer_ns = s.time_ns;
            return self.emit(s.time_ns, Event::SynTimeout);
        }
        if s.seq_len() == 0 {
            return Ok(());
        }
        if start >= self.nxt {
            // `tcp_send_loss_probe` sends new data when it has some and the window allows:
            // a new segment in the silence once the probe timer is due is that probe
            // (`tlp_retrans = 0`), and the RTO restarts a full RTO from it. The timer fires
            // on a tick, up to one jiffy before the arming plus the PTO.
            let armed = self.timer_ns.max(self.new_data_ns);
            let jiffy = 1_000_000_000 / u64::from(self.params.hz.unwrap_or(250).max(1));
            let due = self.pto().filter(|pto| s.time_ns + jiffy >= armed + pto.as_nanos());
            let probe = due.is_some() && self.heard_ns <= self.timer_ns;
            // New data; the timer starts if nothing was in flight (RFC 6298 §5.1).
            if self.outstanding.is_empty() || probe {
                self.timer_ns = s.time_ns;
            }
            self.new_data_ns = s.time_ns;
            self.outstanding.insert(start, Sent { end, first_ns: s.time_ns, retransmitted: false });
            self.nxt = self.nxt.max(end);
            if self.timed.is_none() {
                self.timed = Some((end, s.time_ns));
            }
            if probe {
                self.probe = Some(Probe { high: self.nxt, retrans: false });
                self.summary.probes += 1;
                self.summary.new_data_probes += 1;
                return self.emit(s.time_ns, Event::Probe);
            }
            return Ok(());
        }
        // Sent before. The probe timer would have been armed as things stood before it.
        let pto = self.pto();
        let tail = end >= self.nxt;
        // Mark what it covers, then decide what drove it.
        for (_, seg) in self.outstanding.range_mut(..end) {
            if seg.end > start {
                seg.retransmitted = true;
            }
        }
        if self.timed.is_some_and(|(t_end, _)| start < t_end) {
            self.timed = None; // Karn: the timed segment's ACK is now ambiguous
        }
        self.nxt = self.nxt.max(end);
        let silence = s.time_ns.saturating_sub(self.timer_ns);
        let head = start <= self.una;
        if let Some(pto) = pto.filter(|_| tail && self.heard_ns <= self.timer_ns) {
            // `tcp_send_loss_probe`: the last segment sent again in the silence, the one
            // probe (`tlp_high_seq = snd_nxt`), and the RTO re-armed a full RTO from now
            // (`icsk_pending = 0`, then `tcp_rearm_rto`), its backoff untouched.
            self.head_resent(s.time_ns, Phase::Established, Some(pto));
            self.probe = Some(Probe { high: self.nxt, retrans: true });
            self.timer_ns = s.time_ns;
            self.summary.probes += 1;
            return self.emit(s.time_ns, Event::Probe);
        }
        if head {
            self.head_resent(s.time_ns, Phase::Established, None);
        }
        if head && silence >= self.out.rto().as_nanos() {
            self.summary.timeouts += 1;
            self.timer_ns = s.time_ns;
            // `tcp_enter_loss` (`tcp_retransmit_timer` before 6.x) ends the probe episode.
            self.probe = None;
            self.emit(s.time_ns, Event::Timeout)
        } else {
            self.summary.retransmits += 1;
            self.emit(s.time_ns, Event::Retransmit)
        }
    }

    /// A SYN-ACK sent again. With a SYN heard since its timer was armed, it answers that
    /// repeated SYN (`tcp_check_req` calls `inet_rtx_syn_ack` and re-arms the request's
    /// timer from now, its backoff unchanged): a `retransmit`. Otherwise the listener's
    /// timer sent it (`reqsk_timer_handler`). That timer doubles from `TCP_TIMEOUT_INIT`
    /// on every expiry (`reqsk_timeout`: `timeout << num_timeout`), without the SYN's
    /// linear timeouts (`tcp_syn_linear_timeouts` is `tcp_retransmit_timer`'s, in
    /// SYN-SENT only): under linux the RTO's own backoff, a `timeout`. RFC 6298 §5.7
    /// speaks of the ACK of any SYN segment, so under rfc6298 it is a `syn_timeout`, whose
    /// 3 s holds once data flows if no sample came.
    fn synack_resent(&mut self, ns: u64) -> io::Result<()> {
        if self.heard_ns > self.timer_ns {
            self.timer_ns = ns;
            self.summary.retransmits += 1;
            return self.emit(ns, Event::Retransmit);
        }
        self.summary.syn_timeouts += 1;
        self.head_resent(ns, Phase::SynSent, None);
        self.timer_ns = ns;
        // Linux's child socket starts at icsk_backoff = 0 (`inet_csk_clone_lock`): a
        // sample clears the count these leave, but the 3 s fallback keeps it in the
        // backoffs column; the RTO is the kernel's either way.
        self.emit(ns, if self.linux { Event::Timeout } else { Event::SynTimeout })
    }

    fn received(&mut self, s: &Segment) -> io::Result<()> {
        self.heard_ns = s.time_ns;
        if s.timestamps.is_some() {
            self.peer_ts = true;
        }
        match (s.syn, s.sack) {
            (true, sack) => self.peer_syn_sack = Some(sack == SackOption::Permitted),
            (false, sack) if sack.blocks() => self.sack_blocks = true,
            _ => {}
        }
        if !s.ack_flag {
            return Ok(());
        }
        let Some(unwrap) = self.ack.as_mut() else { return Ok(()) };
        let ack = unwrap.at(s.ack);
        let dsack_end = match s.sack {
            SackOption::Dsack { end } => Some(unwrap.at(end)),
            _ => None,
        };
        let now = s.time_ns;
        // The active side's SYN is acknowledged by the SYN-ACK; the passive side's
        // SYN-ACK by the third ACK, or whatever first acknowledges it if that was lost.
        if !self.established && (s.syn || self.passive) && ack >= 1 && self.syn_ns.is_some() {
            self.established = true;
            self.una = ack;
            if let Some(rtt) = self.handshake_rtt(now, s) {
                self.sample(now, rtt)?;
            }
            self.timer_ns = now;
            self.close_stall(Some(now));
            return self.emit(now, Event::Established);
        }
        if let Some(p) = self.probe {
            // `tcp_process_tlp_ack`. A segment with SACK blocks is never the pure
            // duplicate that says both copies arrived (it is FLAG_DATA_SACKED or a D-SACK).
            let moved = ack > self.una || s.sack.blocks();
            // FLAG_DSACK_TLP (`tcp_dsack_seen`): a D-SACK of the data that ends at
            // tlp_high_seq says the resent copy arrived beside the original, so nothing
            // was lost and the episode ends, even on an ACK that advances to it.
            let dsack_tlp = p.retrans && ack >= p.high && dsack_end == Some(p.high);
            if p.ended_by(ack, moved) || dsack_tlp {
                self.probe = None;
            }
        }
        if ack <= self.una {
            // SACK blocks say the receiver got data the stall's silence was sent into: the
            // path is back, and what the sender resends next answers them (RACK, RFC 6675),
            // not its timer. Without SACK a duplicate ACK can be a window update or a
            // keepalive's answer, so only an ACK that moves ends a stall.
            if s.sack.blocks() {
                self.close_stall(Some(now));
            }
            return Ok(());
        }
        self.una = ack;
        self.close_stall(Some(now));
        // What this ACK newly covers, oldest first.
        let mut oldest: Option<u64> = None;
        let mut retrans_acked = false;
        while let Some((&start, &seg)) = self.outstanding.first_key_value() {
            if seg.end > ack {
                if start < ack {
                    // Partly acknowledged: the rest stays outstanding from the ACK.
                    self.outstanding.remove(&start);
                    self.outstanding.insert(ack, seg);
                    retrans_acked |= seg.retransmitted;
                    oldest.get_or_insert(seg.first_ns);
                }
                break;
            }
            self.outstanding.remove(&start);
            retrans_acked |= seg.retransmitted;
            oldest.get_or_insert(seg.first_ns);
        }
        let ts = self.ts_rtt(now, s);
        let rtt = if self.linux {
            match oldest {
                Some(t) if !retrans_acked => now.checked_sub(t).map(SimDuration),
                _ => ts,
            }
        } else if ts.is_some() {
            ts
        } else {
            match self.timed {
                Some((end, sent)) if end <= ack => {
                    self.timed = None;
                    now.checked_sub(sent).map(SimDuration)
                }
                _ => None,
            }
        };
        if let Some(rtt) = rtt {
            self.sample(now, rtt)?;
        }
        // RFC 6298 §5.3: an ACK of new data restarts the timer.
        self.timer_ns = now;
        Ok(())
    }

    /// The handshake's sample: from the sender's SYN (or SYN-ACK) to the segment that
    /// acknowledges it. Linux times a SYN sent once from its send in microseconds, as any
    /// segment (`tcp_clean_rtx_queue`), and a SYN-ACK sent once the same way
    /// (`tcp_synack_rtt_meas`, from `tcp_check_req`: `req->num_retrans == 0`, answers to
    /// repeated SYNs counted); either sent again only by the echo (`tcp_ack_update_rtt`).
    /// RFC 6298 §3 (Karn) and RFC 7323 §4.1: the echo when both sides send it, else the
    /// send if there was only one.
    fn handshake_rtt(&mut self, now: u64, s: &Segment) -> Option<SimDuration> {
        // A reply stamped before the send (a merged file, a clock step) times nothing.
        let from_syn = self.syn_ns.filter(|_| self.syn_sent == 1).and_then(|first| now.checked_sub(first));
        let ts = self.ts_rtt(now, s);
        match (from_syn, ts) {
            (Some(d), _) if self.linux => Some(SimDuration(d)),
            (_, Some(rtt)) => Some(rtt),
            (Some(d), None) => Some(SimDuration(d)),
            // Sent again without timestamps: the reply is ambiguous. Linux's
            // `tcp_init_metrics` and RFC 6298 §5.7 then start data at 3 s.
            (None, None) => None,
        }
    }

    /// The RTT the echoed TSval gives, when both sides use timestamps: from the first
    /// send carrying it; on linux in whole milliseconds, at least one.
    fn ts_rtt(&mut self, now: u64, s: &Segment) -> Option<SimDuration> {
        let (_, ecr) = s.timestamps?;
        let pos = self.tsvals.iter().position(|&(v, _)| v == ecr)?;
        // Older values will not be echoed again by an ACK of new data.
        self.tsvals.drain(..pos);
        let sent = self.tsvals.front()?.1;
        // An echo stamped before its send (the capture's clock stepped back) times nothing.
        let rtt = now.checked_sub(sent)?;
        Some(if self.linux {
            let ticks = (now / 1_000_000) - (sent / 1_000_000);
            SimDuration::from_millis(ticks.max(1))
        } else {
            SimDuration(rtt)
        })
    }

    fn sample(&mut self, now: u64, rtt: SimDuration) -> io::Result<()> {
        self.summary.samples += 1;
        let seq = self.linux.then_some(SeqInfo { snd_una: self.una, snd_nxt: self.nxt });
        self.emit(now, Event::Sample(rtt, seq))
    }

    /// Ends the reading: a stall still open ends unrecovered at the connection's last
    /// packet. Returns the output, the observer and the counts.
    pub fn finish(mut self) -> io::Result<(W, O, Summary)> {
        self.close_stall(None);
        self.out.flush()?;
        Ok((self.out.into_inner(), self.observer, self.summary))
    }
}

#[cfg(test)]
mod tests;
