//! Retransmission-timer (RTO) estimators, sans-IO.
//!
//! An estimator turns RTT samples and timer expiries into the value the TCP sender arms
//! its retransmission timer with. It never reads a clock, never does I/O and never
//! decides *whether* a segment may be sampled: the sender does that (with
//! [`RtoParams::may_sample`] for Karn's rule) and calls the event handlers below.
//!
//! # Profiles
//!
//! - [`Rfc6298`]: RFC 6298 as written, in integer nanoseconds: (2.1)–(2.5), Karn and its
//!   RFC 7323 timestamps exception (3), backoff (5.5), the 3 s rule for a timed-out SYN
//!   (5.7), and the optional "clear SRTT/RTTVAR after backing off multiple times" (5).
//! - [`Linux`]: the Linux 6.x estimator: `tcp_rtt_estimator` (integer µs, srtt ×8,
//!   mdev ×4, the 1/32 gain on falling RTTs, mdev_max per RTT and rttvar decaying toward
//!   it), `tcp_set_rto` / `__tcp_set_rto` (RTO = srtt + rttvar rounded up to jiffies,
//!   `tcp_bound_rto` at `TCP_RTO_MAX`), `tcp_ack_update_rtt` (icsk_backoff cleared only by
//!   a valid sample), `tcp_retransmit_timer` (doubling, linear SYN timeouts) and
//!   `tcp_init_metrics` (the `TCP_TIMEOUT_FALLBACK` 3 s when the handshake gave no sample).
//!
//! Tail loss probes and F-RTO are the sender's (`model::tcp::tlp`, `model::tcp::frto`);
//! the estimator only supplies SRTT and the RTO they use. Left out of the linux profile,
//! on purpose: the RACK reordering timer, thin-stream linear timeouts
//! (`tcp_thin_linear_timeouts`), the per-destination metrics cache (`crtt` in
//! `tcp_init_metrics`), BPF hooks and the u32
//! wraparound of `srtt_us` (RTTs above ~536 s). Samples reach the estimator as the
//! sender measured them, truncated to µs; the sender takes TS-ECR samples on Linux's
//! 1 ms timestamp clock (`tcp_rtt_tsopt_us`). The server side (SYN-RECV, `tcp_synack_rtt_meas`) is not modelled.
//!
//! # Backoff sticks
//!
//! The backed-off RTO lives in the estimator, not in the sender's timer: [`RtoEstimator::rto`]
//! always includes it, and only [`RtoEstimator::on_sample`] (a *valid* sample) brings it
//! back down. A sender that re-arms from `rto()` therefore cannot lose the backoff when it
//! leaves a retransmission state (the smoltcp#1023 bug class); see the libudx#316
//! regression test in `tests.rs`, with the proptest invariants.
//!
//! The retry budgets (`syn_retries`, `retries2`, `user_timeout`) are in `budget.rs`
//! ([`RtoParams::gives_up`], [`RtoParams::clamp_to_user_timeout`]); the `replay` command drives an estimator from a CSV trace.

mod budget;
pub mod config;
pub mod linux;
pub mod rfc6298;

#[cfg(test)]
pub(crate) mod tests;

use serde::Serialize;

use crate::engine::time::{SimDuration, SimTime};

pub use config::{RtoConfig, RtoParams, RtoProfile};
pub use linux::Linux;
pub use rfc6298::Rfc6298;

/// Sequence numbers at the ACK that produced a sample: `snd_una` after the ACK was
/// processed (as in `tcp_ack`, which advances snd_una before `tcp_clean_rtx_queue`
/// samples) and `snd_nxt`. Unwrapped 64-bit byte counts: no modular comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SeqInfo {
    pub snd_una: u64,
    pub snd_nxt: u64,
}

/// Where the connection is when its retransmission timer expires.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Phase {
    /// Waiting for the SYN-ACK (RFC 6298 (5.7); linux's linear SYN timeouts).
    SynSent,
    /// Handshake done; data flows.
    Established,
}

/// The estimator's state, for traces. Every duration is in RFC 6298 units, whatever the
/// profile stores internally: RTO = SRTT + max(G, K·RTTVAR) before clamping.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct RtoSnapshot {
    /// SRTT; `None` before the first sample (and after a clear-after-backoffs).
    pub srtt: Option<SimDuration>,
    /// RTTVAR, the mean deviation. Linux keeps its variance term `rttvar_us` scaled ×4;
    /// this is that value divided by 4, so linux's RTO ≈ SRTT + 4·RTTVAR too.
    pub rttvar: Option<SimDuration>,
    /// The current timer value, backoff included.
    pub rto: SimDuration,
    /// Backoff doublings since the last valid sample (linux: `icsk_backoff`, which the
    /// linear SYN timeouts do not advance).
    pub backoffs: u32,
    /// Linux only: `mdev_us / 4`, the smoothed mean deviation.
    pub mdev: Option<SimDuration>,
    /// Linux only: `mdev_max_us / 4`, the largest mdev in the current RTT window.
    pub mdev_max: Option<SimDuration>,
}

/// One connection's RTO estimator. An enum rather than a trait object: the sender calls
/// it on every ACK, and a match on two variants inlines where a vtable call does not.
#[derive(Clone, Debug, PartialEq)]
pub enum RtoEstimator {
    Rfc6298(Rfc6298),
    Linux(Linux),
}

impl RtoEstimator {
    /// A fresh estimator for a connection that is about to send its SYN.
    pub fn new(params: &RtoParams) -> Self {
        match params.profile {
            RtoProfile::Rfc6298 => RtoEstimator::Rfc6298(Rfc6298::new(params)),
            RtoProfile::Linux => RtoEstimator::Linux(Linux::new(params)),
        }
    }

    /// The value to arm the retransmission timer with now, backoff included.
    #[inline]
    pub fn rto(&self) -> SimDuration {
        match self {
            RtoEstimator::Rfc6298(e) => e.rto(),
            RtoEstimator::Linux(e) => e.rto(),
        }
    }

    /// A valid RTT measurement (the sender has already applied Karn's rule). `seq`
    /// carries (snd_una, snd_nxt) at that ACK when the caller knows them; linux uses it to
    /// close its once-per-RTT window the way `tcp_rtt_estimator` does. With `None`, linux
    /// closes the window on the first sample whose segment left at or after the moment
    /// the window opened (`now - rtt >= opened`): that is when snd_una passes rtt_seq for
    /// a sender that samples the segment that advanced snd_una. RFC 6298 ignores both.
    #[inline]
    pub fn on_sample(&mut self, now: SimTime, rtt: SimDuration, seq: Option<SeqInfo>) {
        match self {
            RtoEstimator::Rfc6298(e) => e.on_sample(rtt),
            RtoEstimator::Linux(e) => e.on_sample(now, rtt, seq),
        }
    }

    /// The retransmission timer expired (before the sender retransmits and re-arms).
    #[inline]
    pub fn on_timeout(&mut self, phase: Phase) {
        match self {
            RtoEstimator::Rfc6298(e) => e.on_timeout(phase),
            RtoEstimator::Linux(e) => e.on_timeout(phase),
        }
    }

    /// The timer expired and its retransmission was refused locally (linux only; see
    /// `Linux::on_local_drop`): counted, not backed off.
    pub fn on_local_drop(&mut self) {
        if let RtoEstimator::Linux(e) = self {
            e.on_local_drop();
        }
    }

    /// An ICMP unreachable undoes one backoff (RFC 6069 as Linux's `tcp_ld_RTO_revert`
    /// does it) and says what is left of the reverted RTO counted from `elapsed` ago;
    /// `None` for rfc6298, which leaves RFC 6069 (optional) out and ignores the message.
    pub fn revert_backoff(&mut self, elapsed: SimDuration) -> Option<SimDuration> {
        match self {
            RtoEstimator::Rfc6298(_) => None,
            RtoEstimator::Linux(e) => Some(e.revert_backoff(elapsed)),
        }
    }

    /// The handshake completed and data transmission begins; call it after feeding the
    /// handshake's sample, if any. Only the first call has an effect.
    pub fn on_established(&mut self) {
        match self {
            RtoEstimator::Rfc6298(e) => e.on_established(),
            RtoEstimator::Linux(e) => e.on_established(),
        }
    }

    /// A passive open's SYN-ACK timer expired before the handshake completed: RFC 6298
    /// (5.7)'s "timer expired awaiting the ACK of a SYN segment" for the RFC profile.
    /// Linux keys its fallback on having no sample instead (`tcp_init_metrics`).
    pub fn on_handshake_timed_out(&mut self) {
        if let RtoEstimator::Rfc6298(e) = self {
            e.on_handshake_timed_out();
        }
    }

    pub fn snapshot(&self) -> RtoSnapshot {
        match self {
            RtoEstimator::Rfc6298(e) => e.snapshot(),
            RtoEstimator::Linux(e) => e.snapshot(),
        }
    }

    /// The resolved parameters, so the sender can read `karn`, `timestamps`,
    /// `sample_every_ack` and the retry budgets.
    pub fn params(&self) -> &RtoParams {
        match self {
            RtoEstimator::Rfc6298(e) => e.params(),
            RtoEstimator::Linux(e) => e.params(),
        }
    }
}
