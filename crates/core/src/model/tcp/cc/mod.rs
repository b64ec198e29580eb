//! Congestion control as sans-IO state machines: how many segments the sender may have
//! in flight (`cwnd`) and where slow start ends (`ssthresh`), moved by the events a TCP
//! sender sees. Two algorithms: [`Reno`] (RFC 5681, as Linux's `tcp_reno_*` or as the RFC
//! writes it) and [`Cubic`] (RFC 9438, as Linux's `net/ipv4/tcp_cubic.c`, its default).
//!
//! Everything counts whole segments (Linux's `snd_cwnd` is in packets) and takes time as
//! [`SimTime`]; where Linux decides a value in fixed point (CUBIC's jiffies, `BICTCP_HZ`,
//! `cubic_root`), the same integer arithmetic is kept so that windows match the kernel's.
//!
//! The caller (a sender) says what happened: data cumulatively or selectively acknowledged
//! ([`Ack`]), entry into fast recovery ([`Congestion::on_loss`]), a retransmission timeout
//! ([`Congestion::on_rto`], Linux's `tcp_enter_loss`), and the first send after an idle
//! spell ([`Congestion::on_send_after_idle`]). It decides when a loss is a loss and when a
//! recovery episode begins; this module only moves the window.
//!
//! Proportional Rate Reduction (RFC 6937) inside recovery and the undo of a needless
//! reduction are the sender's (`sender/recovery.rs`), which sets the window through
//! [`Congestion::set_cwnd`] and [`Congestion::undo`]. Left out: ECN's CWR, pacing, and
//! `snd_cwnd_clamp` (no
//! route metric caps the window).

pub mod cubic;
pub mod reno;
mod window;

pub use cubic::{Cubic, CubicParams, Round};
pub use reno::{Reno, RenoFlavour};
pub use window::{Window, is_cwnd_limited};

use crate::engine::time::{SimDuration, SimTime};

/// RFC 6928 (2): an initial window of 10 segments; Linux's `TCP_INIT_CWND`.
pub const INITIAL_WINDOW: u32 = 10;

/// Linux's `TCP_INFINITE_SSTHRESH`: no threshold until the first loss.
pub const INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

/// How much of the window the sender used, for `tcp_is_cwnd_limited`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CwndUse {
    /// Linux's `tp->is_cwnd_limited`: the window, not the application or the receiver,
    /// stopped a send since the last window validation (`tcp_cwnd_validate`).
    pub is_cwnd_limited: bool,
    /// Linux's `tp->max_packets_out`: the most segments in flight in the last window.
    pub max_packets_out: u32,
}

impl CwndUse {
    /// A sender that always had more to send than the window let out (a bulk transfer).
    pub const LIMITED: CwndUse = CwndUse { is_cwnd_limited: true, max_packets_out: u32::MAX };
}

/// An ACK that acknowledged new data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ack {
    pub now: SimTime,
    /// Segments newly delivered by this ACK (cumulatively or by SACK): Linux's `acked`.
    pub acked: u32,
    /// The RTT sample this ACK gave, if any (Karn: none for a retransmitted segment).
    pub rtt: Option<SimDuration>,
    pub usage: CwndUse,
    /// The sequence space after this ACK, for CUBIC's HyStart rounds; without it HyStart
    /// does not run.
    pub round: Option<Round>,
}

/// What a sender knows when a retransmission timeout fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeout {
    pub now: SimTime,
    /// RFC 5681's FlightSize: segments outstanding when the timer fired.
    pub flight_size: u32,
    /// Linux's `tcp_packets_in_flight` once the outstanding segments are marked lost
    /// (usually 0): `tcp_enter_loss` sets cwnd to this plus one.
    pub in_flight: u32,
    /// Whether this timeout starts a loss episode, so ssthresh is recomputed: Linux's test
    /// in `tcp_enter_loss` (state Open or Disorder, or recovery already over, or Loss with
    /// no retransmission yet); RFC 5681 (4) holds ssthresh across repeated timeouts of one
    /// segment.
    pub new_episode: bool,
}

/// A congestion controller. Each method is one event; `cwnd` and `ssthresh` read the result.
pub trait Congestion {
    /// New data acknowledged (Linux's `pkts_acked` then `cong_avoid`).
    fn on_ack(&mut self, ack: &Ack);
    /// Entry into fast recovery with `flight_size` segments outstanding (Linux's
    /// `tcp_init_cwnd_reduction`; RFC 5681 3.2 step 4). ssthresh drops, and cwnd is set to
    /// where recovery leaves it.
    fn on_loss(&mut self, now: SimTime, flight_size: u32);
    /// A retransmission timeout (`tcp_enter_loss`; RFC 5681 (4) and LW).
    fn on_rto(&mut self, timeout: &Timeout);
    /// The first send with nothing in flight after `idle` without sending; `rto` is the
    /// current retransmission timeout (RFC 5681 4.1; `tcp_slow_start_after_idle_check`,
    /// `tcp_cwnd_restart`, `CA_EVENT_TX_START`).
    fn on_send_after_idle(&mut self, now: SimTime, idle: SimDuration, rto: SimDuration);
    fn cwnd(&self) -> u32;
    fn ssthresh(&self) -> u32;
    /// The sender sets the window itself: Proportional Rate Reduction inside recovery and
    /// its end (`tcp_snd_cwnd_set` in `tcp_cwnd_reduction`, `tcp_end_cwnd_reduction`).
    fn set_cwnd(&mut self, cwnd: u32);
    /// A reduction found needless is undone (`tcp_undo_cwnd_reduction`): cwnd back to at
    /// least `prior_cwnd` (`tcp_reno_undo_cwnd`, which CUBIC also uses) and ssthresh to
    /// `prior_ssthresh` if that is higher.
    fn undo(&mut self, prior_cwnd: u32, prior_ssthresh: u32);
}

/// Which algorithm a sender runs (`net.ipv4.tcp_congestion_control`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Controller {
    Reno(Reno),
    Cubic(Box<Cubic>),
}

impl Controller {
    fn inner(&self) -> &dyn Congestion {
        match self {
            Controller::Reno(r) => r,
            Controller::Cubic(c) => c.as_ref(),
        }
    }
    fn inner_mut(&mut self) -> &mut dyn Congestion {
        match self {
            Controller::Reno(r) => r,
            Controller::Cubic(c) => c.as_mut(),
        }
    }
}

impl Congestion for Controller {
    fn on_ack(&mut self, ack: &Ack) {
        self.inner_mut().on_ack(ack)
    }
    fn on_loss(&mut self, now: SimTime, flight_size: u32) {
        self.inner_mut().on_loss(now, flight_size)
    }
    fn on_rto(&mut self, timeout: &Timeout) {
        self.inner_mut().on_rto(timeout)
    }
    fn on_send_after_idle(&mut self, now: SimTime, idle: SimDuration, rto: SimDuration) {
        self.inner_mut().on_send_after_idle(now, idle, rto)
    }
    fn cwnd(&self) -> u32 {
        self.inner().cwnd()
    }
    fn ssthresh(&self) -> u32 {
        self.inner().ssthresh()
    }
    fn set_cwnd(&mut self, cwnd: u32) {
        self.inner_mut().set_cwnd(cwnd)
    }
    fn undo(&mut self, prior_cwnd: u32, prior_ssthresh: u32) {
        self.inner_mut().undo(prior_cwnd, prior_ssthresh)
    }
}
