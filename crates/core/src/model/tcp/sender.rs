//! The sending end of one TCP connection, sans-IO: it never reads a clock and never
//! sends anything itself. Each call takes `now`, pushes what it wants transmitted and
//! what happened into `out`, and `timer()` says when it next wants `on_timer`.
//!
//! Modelled: the three-way handshake (optional); the retransmission timer managed exactly
//! as RFC 6298 section 5 says; RTT sampling under Karn's algorithm (or RFC 7323
//! timestamps); a congestion window (`cc/`: Reno or CUBIC, initial window 10, slow start
//! after idle) under the receiver's window; a SACK scoreboard (`scoreboard.rs`) fed by the
//! ACKs' SACK blocks; loss detection by RACK (`rack.rs`, RFC 8985, Linux's default), by
//! RFC 6675's DupThresh with SACK, or by NewReno's duplicate ACKs and partial ACKs (RFC
//! 6582) without it (`sender/recovery.rs`); fast recovery with Proportional Rate
//! Reduction (RFC 6937, Linux) or cwnd = ssthresh (RFC 6675); undo of a needless
//! reduction by DSACK (RFC 2883) and timestamps (Linux); tail loss probes (`tlp.rs`),
//! F-RTO (`frto.rs`) and giving up (`syn_retries`, `retries2`, `user_timeout`:
//! [`RtoParams::gives_up`], with the timer clamped by [`RtoParams::clamp_to_user_timeout`]).
//!
//! One timer serves the RTO, the loss probe and RACK's reordering timer, as Linux's
//! `icsk_pending` does: a pending probe or reordering timeout replaces the RTO, and the RTO
//! is re-armed when they fire. With nothing in flight and the receiver's window closed, it
//! serves the zero-window probe (`zero_window.rs`, `persist.rs`).

use super::cc::{Congestion, Controller, Cubic, CubicParams, INFINITE_SSTHRESH, Reno, RenoFlavour};
use super::persist::Persist;
use super::rack::Rack;
use super::scoreboard::Scoreboard;
use super::segment::{Sack, Segment};
use super::tlp::{self, Probe};
use crate::engine::time::{SimDuration, SimTime};
use crate::model::rto::{Phase, RtoEstimator, RtoParams, RtoProfile, RtoSnapshot, SeqInfo};

/// What the sender wants done or reports, in the order it happened.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Action {
    Transmit(Segment),
    Observe(Observation),
}

/// Something a trace or a metric may want to know, with the estimator's state after it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Observation {
    pub kind: ObservationKind,
    pub rto: RtoSnapshot,
    /// The congestion window and recovery state after it.
    pub cc: CcView,
}

/// The loss-recovery state, named as Linux's `icsk_ca_state` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaState {
    /// No loss suspected (`TCP_CA_Open`).
    Open,
    /// Duplicate ACKs or SACKs arrived, no loss marked yet (`TCP_CA_Disorder`).
    Disorder,
    /// Fast recovery after a loss found on ACKs (`TCP_CA_Recovery`).
    Recovery,
    /// After a retransmission timeout (`TCP_CA_Loss`).
    Loss,
}

impl CaState {
    /// The name a trace writes: `open`, `disorder`, `recovery` or `loss`.
    pub fn name(self) -> &'static str {
        match self {
            CaState::Open => "open",
            CaState::Disorder => "disorder",
            CaState::Recovery => "recovery",
            CaState::Loss => "loss",
        }
    }
}

/// The sender's congestion control as a trace shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CcView {
    /// Segments the sender may have in flight (`snd_cwnd`).
    pub cwnd: u32,
    /// Slow-start threshold in segments; `None` until the first loss sets one.
    pub ssthresh: Option<u32>,
    pub state: CaState,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObservationKind {
    /// A first transmission (`seq` is `None` for a SYN).
    Send { seq: Option<u64> },
    /// A retransmission (`seq` is `None` for a SYN).
    Retransmit { seq: Option<u64> },
    /// A tail loss probe: new data, or a retransmission of the last segment sent.
    Probe { seq: u64, retransmit: bool },
    /// An acknowledgment arrived; `ack` is the cumulative ACK (0 for a SYN-ACK).
    Ack { ack: u64 },
    /// A valid RTT measurement was fed to the estimator.
    Sample { rtt: SimDuration },
    /// The retransmission timer expired.
    Timeout,
    /// F-RTO found the last timeout spurious and undid its recovery.
    SpuriousTimeout,
    /// The handshake completed.
    Established,
    /// A finite transfer was fully acknowledged.
    Finished,
    /// The receiver's window is closed with data waiting and nothing in flight: the
    /// zero-window probe timer starts (`tcp_check_probe_timer`).
    ZeroWindow,
    /// A zero-window probe went out (`tcp_send_probe0`).
    WindowProbe,
    /// The window reopened after a zero-window stall (`tcp_ack_probe`).
    WindowOpen,
    /// An ICMP unreachable reached the sender; `reverted` if it undid a backoff
    /// (RFC 6069, `icmp.rs`).
    IcmpUnreachable { reverted: bool },
    /// The connection gave up (ETIMEDOUT). `waited` runs from the first transmission of
    /// the segment (or SYN) that was never acknowledged.
    Aborted { waited: SimDuration },
}

/// What the application gives the sender to transmit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Supply {
    /// A fixed number of segments, all ready at the start.
    Transfer { segments: u64 },
    /// Segments arrive one at a time through `app_write`.
    Steady,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Idle,
    SynSent,
    Established,
    Finished,
    Aborted,
}

/// Linux's `icsk_ca_state`, less Disorder (read from the scoreboard) and CWR (no ECN).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ca {
    Open,
    /// After a loss found on ACKs, until snd_una reaches `high` (TCP_CA_Recovery).
    Recovery {
        high: u64,
    },
    /// After a timeout, until snd_una reaches `high` (TCP_CA_Loss); `frto` while F-RTO
    /// may still call the timeout spurious (`tp->frto`).
    Loss {
        high: u64,
        frto: bool,
    },
}

/// How losses are found between timeouts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossDetection {
    /// RACK by time (RFC 8985), Linux's default with SACK (`net.ipv4.tcp_recovery` 1).
    Rack,
    /// RFC 6675's `IsLost`: DupThresh segments SACKed above.
    DupThresh,
    /// Without SACK: the third duplicate ACK and partial ACKs (RFC 6582, Linux's
    /// `tcp_newreno_mark_lost`).
    NewReno,
}

/// Which congestion control the sender runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CongestionKind {
    Reno,
    Cubic,
}

/// Which use of the one timer is pending.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TimerKind {
    Rto,
    Probe,
    /// RACK's reordering timer (`ICSK_TIME_REO_TIMEOUT`).
    Reorder,
    /// The zero-window probe (`ICSK_TIME_PROBE0`).
    Probe0,
}

/// Sender options that are properties of the TCP stack rather than of the estimator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SenderOptions {
    pub handshake: bool,
    /// The receiver's window in segments: never more in flight, whatever cwnd allows.
    pub window: u32,
    pub segment_size: u32,
    /// Find losses on ACKs (fast retransmit, RACK, RFC 6675); off: only the RTO repairs.
    pub fast_retransmit: bool,
    /// SACK in use at both ends (RFC 2018).
    pub sack: bool,
    /// With SACK: RACK (RFC 8985) rather than RFC 6675's DupThresh.
    pub rack: bool,
    pub congestion: CongestionKind,
    /// RFC 6928's initial window (`TCP_INIT_CWND`).
    pub initial_window: u32,
    /// RFC 5681 4.1 / `net.ipv4.tcp_slow_start_after_idle`.
    pub slow_start_after_idle: bool,
}

impl SenderOptions {
    /// A profile's TCP stack: Linux (SACK, RACK, CUBIC) or the RFCs' (Reno, NewReno).
    pub fn for_profile(profile: RtoProfile, handshake: bool, window: u32, segment_size: u32) -> Self {
        let linux = profile == RtoProfile::Linux;
        SenderOptions {
            handshake,
            window,
            segment_size,
            fast_retransmit: true,
            sack: linux,
            rack: linux,
            congestion: if linux { CongestionKind::Cubic } else { CongestionKind::Reno },
            initial_window: super::cc::INITIAL_WINDOW,
            slow_start_after_idle: true,
        }
    }

    pub fn loss_detection(&self) -> LossDetection {
        match (self.sack, self.rack) {
            (true, true) => LossDetection::Rack,
            (true, false) => LossDetection::DupThresh,
            (false, _) => LossDetection::NewReno,
        }
    }
}

/// What recovery remembers to undo itself and to pace its retransmissions.
#[derive(Clone, Copy, Debug, Default)]
struct Episode {
    /// cwnd and `tcp_current_ssthresh` when the reduction began (`prior_cwnd`,
    /// `prior_ssthresh`).
    prior_cwnd: u32,
    prior_ssthresh: u32,
    /// RFC 6937's prr_delivered and prr_out.
    prr_delivered: u64,
    prr_out: u64,
    /// `undo_marker`: SND.UNA when the episode began; `None` once undo is impossible.
    undo_marker: Option<u64>,
    /// `undo_retrans`: retransmissions not yet shown needless by a DSACK; −1 before any.
    undo_retrans: i64,
    /// RFC 6582's partial ACKs seen in this recovery (the timer restarts on the first).
    partial_acks: u32,
}

/// `tcp_cwnd_validate`'s record of how much of the window was used.
#[derive(Clone, Copy, Debug, Default)]
struct Usage {
    is_cwnd_limited: bool,
    max_packets_out: u64,
    /// `cwnd_usage_seq`: the record holds until SND.UNA passes this.
    seq: u64,
}

#[derive(Clone, Debug)]
pub struct TcpSender {
    opts: SenderOptions,
    rto: RtoEstimator,
    state: State,
    supply: Supply,
    /// Segments the application has handed over (the end of a transfer, or written so far).
    available: u64,
    snd_una: u64,
    snd_max: u64,
    /// What is known about each segment in flight.
    sb: Scoreboard,
    rack: Rack,
    cc: Controller,
    episode: Episode,
    usage: Usage,
    /// Duplicate ACKs: RFC 6675's DupAcks with SACK, Linux's emulated `sacked_out`
    /// (`tcp_add_reno_sack`) without.
    dupacks: u64,
    /// `tp->reordering`: DupThresh, raised when reordering is seen.
    reordering: u64,
    /// `tp->reord_seen`: reordering was seen (RACK's window opens).
    reord_seen: bool,
    /// `tp->delivered`: segments delivered, cumulatively or by SACK.
    delivered: u64,
    /// `tcp_min_rtt`: the least RTT sample and when it was taken.
    min_rtt: Option<(SimDuration, SimTime)>,
    /// RFC 6582's `recover`: no new fast retransmit on duplicate ACKs below it.
    recover: Option<u64>,
    /// When data was last sent (`lsndtime`), for the restart after idle.
    last_send: Option<SimTime>,
    /// The one segment being timed when sampling once per RTT (RFC 6298 section 3).
    timed: Option<(u64, SimTime)>,
    /// The one timer and what it is for (`icsk_timeout`, `icsk_pending`).
    timer: Option<(SimTime, TimerKind)>,
    ca: Ca,
    /// The outstanding tail loss probe, if any.
    probe: Option<Probe>,
    /// RTO expiries since the last forward progress (`icsk_retransmits`).
    retransmits: u32,
    /// When the first retransmission since the connection last recovered went out
    /// (`retrans_stamp`; the first SYN's time in SYN-SENT).
    retrans_stamp: Option<SimTime>,
    syn_first: SimTime,
    syn_last: SimTime,
    syn_retransmitted: bool,
    /// The last window the receiver advertised (SND.WND, in segments).
    snd_wnd: u64,
    /// The segment the window ends before (SND.UNA + SND.WND at the ACK that said it).
    snd_wnd_end: u64,
    /// The zero-window probe timer's state, while the window is closed.
    persist: Option<Persist>,
    /// The sender's own queue refuses transmissions now (`local.rs`).
    local_congestion: bool,
}

impl TcpSender {
    pub fn new(opts: SenderOptions, params: &RtoParams, supply: Supply) -> Self {
        TcpSender {
            opts,
            rto: RtoEstimator::new(params),
            state: State::Idle,
            supply,
            available: match supply {
                Supply::Transfer { segments } => segments,
                Supply::Steady => 0,
            },
            snd_una: 0,
            snd_max: 0,
            sb: Scoreboard::new(0, opts.loss_detection() == LossDetection::DupThresh),
            rack: Rack::new(),
            cc: match opts.congestion {
                CongestionKind::Reno => {
                    let flavour =
                        if params.profile == RtoProfile::Linux { RenoFlavour::Linux } else { RenoFlavour::Rfc5681 };
                    Controller::Reno(Reno::with_initial_window(flavour, opts.initial_window))
                }
                CongestionKind::Cubic => Controller::Cubic(Box::new(Cubic::new(CubicParams {
                    hz: params.hz.unwrap_or(1000),
                    slow_start_after_idle: opts.slow_start_after_idle,
                    initial_window: opts.initial_window,
                    ..CubicParams::default()
                }))),
            },
            episode: Episode::default(),
            usage: Usage::default(),
            dupacks: 0,
            reordering: super::scoreboard::DUP_THRESH,
            reord_seen: false,
            delivered: 0,
            min_rtt: None,
            recover: None,
            last_send: None,
            timed: None,
            timer: None,
            ca: Ca::Open,
            probe: None,
            retransmits: 0,
            retrans_stamp: None,
            syn_first: SimTime::ZERO,
            syn_last: SimTime::ZERO,
            syn_retransmitted: false,
            snd_wnd: u64::MAX,
            snd_wnd_end: u64::MAX,
            persist: None,
            local_congestion: false,
        }
    }

    /// When the retransmission timer (or the loss probe in its place) expires, if running.
    pub fn timer(&self) -> Option<SimTime> {
        self.timer.map(|(at, _)| at)
    }

    pub fn is_finished(&self) -> bool {
        self.state == State::Finished
    }

    pub fn is_aborted(&self) -> bool {
        self.state == State::Aborted
    }

    pub fn is_established(&self) -> bool {
        matches!(self.state, State::Established | State::Finished)
    }

    pub fn snapshot(&self) -> RtoSnapshot {
        self.rto.snapshot()
    }

    /// Segments acknowledged so far.
    pub fn acked(&self) -> u64 {
        self.snd_una
    }

    /// Data sent and not yet acknowledged, or handed over and not yet sent: Linux's
    /// `tp->packets_out || !tcp_write_queue_empty(sk)`, under which keepalive stays quiet.
    pub fn has_data_pending(&self) -> bool {
        self.snd_una < self.available
    }

    /// The congestion window, slow-start threshold and recovery state now.
    pub fn cc_view(&self) -> CcView {
        let state = match self.ca {
            Ca::Open if self.sb.sacked_out() + self.dupacks + self.sb.retrans_out() > 0 => CaState::Disorder,
            Ca::Open => CaState::Open,
            Ca::Recovery { .. } => CaState::Recovery,
            Ca::Loss { .. } => CaState::Loss,
        };
        let ssthresh = self.cc.ssthresh();
        CcView { cwnd: self.cc.cwnd(), ssthresh: (ssthresh < INFINITE_SSTHRESH).then_some(ssthresh), state }
    }

    fn params(&self) -> &RtoParams {
        self.rto.params()
    }

    fn observe(&self, kind: ObservationKind, out: &mut Vec<Action>) {
        out.push(Action::Observe(Observation { kind, rto: self.rto.snapshot(), cc: self.cc_view() }));
    }

    /// Segments sent and not yet acknowledged (Linux `packets_out`).
    fn outstanding(&self) -> u64 {
        self.snd_max - self.snd_una
    }

    /// Segments in the network (`tcp_packets_in_flight`: packets_out less sacked_out and
    /// lost_out, plus retrans_out). Without SACK, duplicate ACKs stand for segments that
    /// left the network (`tcp_limit_reno_sacked` keeps at least one hole).
    pub(super) fn in_flight(&self) -> u64 {
        let pipe = self.sb.pipe();
        if self.opts.sack {
            return pipe;
        }
        pipe.saturating_sub(self.dupacks.min(self.reno_sacked_max()))
    }

    /// `tcp_limit_reno_sacked`: duplicate ACKs stand for at most the outstanding segments
    /// less the holes (the lost ones, at least one).
    pub(super) fn reno_sacked_max(&self) -> u64 {
        let holes = self.sb.lost_out().max(1).min(self.outstanding());
        self.outstanding() - holes
    }

    /// The congestion window in segments.
    pub(super) fn cwnd(&self) -> u64 {
        u64::from(self.cc.cwnd())
    }

    /// New data is waiting and the receiver's window has room for it beyond the highest
    /// sent (`tcp_snd_wnd_test`; the `window` option is the most the receiver offers).
    fn new_data_fits(&self) -> bool {
        self.snd_max < self.available
            && self.snd_max < self.snd_una + u64::from(self.opts.window)
            && self.snd_max < self.snd_wnd_end
    }

    fn arm_rto(&mut self, now: SimTime) {
        self.timer = Some((now + self.rto.rto(), TimerKind::Rto));
    }

    /// `tcp_retransmit_timer`'s re-arm after an expiry, through
    /// `tcp_clamp_rto_to_user_timeout` (only this path clamps, not `tcp_rearm_rto`).
    fn arm_rto_after_timeout(&mut self, now: SimTime) {
        let since = now.saturating_since(self.retrans_stamp.unwrap_or(now));
        let wait = self.params().clamp_to_user_timeout(self.rto.rto(), since);
        self.timer = Some((now + wait, TimerKind::Rto));
    }

    fn stop_timer(&mut self) {
        self.timer = None;
    }

    /// When the RTO would fire counted from the oldest outstanding segment's last
    /// transmission, as `tcp_rto_delta_us` counts it.
    fn rto_due(&self) -> SimTime {
        self.sb.segment(self.snd_una).map_or(SimTime::ZERO, |head| head.sent) + self.rto.rto()
    }

    /// `tcp_rearm_rto`: stop the timer if nothing is outstanding, else arm the RTO from
    /// now, or, replacing a pending probe (`probe_pending`), for what is left of the RTO
    /// counted from the oldest outstanding segment ("Offset the time elapsed after
    /// installing regular RTO").
    fn rearm_rto(&mut self, now: SimTime, probe_pending: bool) {
        if self.outstanding() == 0 {
            self.stop_timer();
        } else if probe_pending {
            let left = self.rto_due().saturating_since(now);
            self.timer = Some((now + self.params().timer_ticks(left), TimerKind::Rto));
        } else {
            self.arm_rto(now);
        }
    }

    fn probe_pending(&self) -> bool {
        matches!(self.timer, Some((_, TimerKind::Probe)))
    }

    /// `tcp_schedule_loss_probe`: replace the RTO with a probe timeout when there is
    /// something outstanding and no recovery under way. `advancing` says the RTO would be
    /// restarted from now (an ACK of new data) rather than left running.
    fn schedule_probe(&mut self, now: SimTime, advancing: bool) -> bool {
        // "if (... !tp->packets_out || !tcp_is_sack(tp) || (icsk->icsk_ca_state !=
        // TCP_CA_Open && icsk->icsk_ca_state != TCP_CA_CWR)) return false;" (RFC 8985 7:
        // TLP needs SACK); Disorder is not Open.
        if !self.params().tlp
            || !self.opts.sack
            || self.state != State::Established
            || self.outstanding() == 0
            || self.cc_view().state != CaState::Open
        {
            return false;
        }
        let until_rto = if advancing { self.rto.rto() } else { self.rto_due().saturating_since(now) };
        let pto = tlp::probe_timeout(self.params(), self.rto.snapshot().srtt, self.outstanding(), Some(until_rto));
        // A zero SRTT or an RTO already due would give 0: a timer is always in the future.
        self.timer = Some((now + self.params().timer_ticks(pto), TimerKind::Probe));
        true
    }

    pub fn start(&mut self, now: SimTime, out: &mut Vec<Action>) {
        if self.state != State::Idle {
            return;
        }
        if self.opts.handshake {
            self.state = State::SynSent;
            self.syn_first = now;
            self.syn_last = now;
            // tcp_connect: in SYN-SENT retrans_stamp remembers the first SYN.
            self.retrans_stamp = Some(now);
            out.push(Action::Transmit(Segment::Syn { tsval: now, retransmit: false }));
            self.observe(ObservationKind::Send { seq: None }, out);
            // RFC 6298 (5.1): the SYN is the first segment; the timer starts with it.
            self.arm_rto(now);
        } else {
            self.state = State::Established;
            self.try_send(now, out);
        }
    }

    /// The application writes one more segment (steady supply). A write sends new data
    /// only, as the window allows (`tcp_push` -> `tcp_write_xmit`): retransmissions go
    /// out on ACKs (`tcp_xmit_recovery`) and on the timer, never on a write.
    pub fn app_write(&mut self, now: SimTime, out: &mut Vec<Action>) {
        self.app_write_segments(now, 1, out);
    }

    /// One write of `segments` segments: one push of all that fits, as one `write()`
    /// ends in one `tcp_push`; its cost does not grow with the size of the write.
    pub fn app_write_segments(&mut self, now: SimTime, segments: u64, out: &mut Vec<Action>) {
        if self.supply == Supply::Steady {
            self.available = self.available.saturating_add(segments);
            if self.state == State::Established {
                self.push_new(now, out);
                // __tcp_push_pending_frames: a write the window leaves no room for, with
                // nothing in flight, arms the probe timer (tcp_check_probe_timer).
                self.check_probe_timer(now, out);
            }
        }
    }
}

mod ack;
mod close;
mod icmp;
mod local;
mod passive;
mod recovery;
mod transmit;
mod zero_window;

#[cfg(test)]
mod tests;
