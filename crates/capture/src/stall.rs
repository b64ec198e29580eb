//! Stalls: the sender retransmitting the head of its data (or probing with its tail) with
//! nothing heard from the receiver since its timer was armed, until an ACK moves past it
//! or reports SACK blocks. Only a timer can
//! drive such a retransmission (a fast retransmit answers an incoming ACK), so what the
//! capture shows there is the sender's own timer at work, and the question worth asking
//! is what another timer would have done in the same silence.
//!
//! For each stall the capture gives when the timer was armed, the retransmissions sent
//! and the ACK that ended it. The profile's estimator, as it stood when the stall began,
//! gives its own expiries: armed + RTO, then each backed-off RTO after the one before
//! (RFC 6298 §5.5; Linux `tcp_retransmit_timer`). When the path came back the capture
//! cannot say exactly: after the last retransmission that was lost and by the one that
//! got through. So the profile's recovery is a span: its first expiry after the former,
//! and its first at or after the latter, each plus the time the real ACK took to come
//! back.
//!
//! Under `linux` with SACK, no probe out and nothing in recovery, the first expiry is the
//! tail loss probe's (RFC 8985 §7.2; `tcp_schedule_loss_probe`): 2·SRTT plus `rto_min`
//! with one segment in flight or 2 ms with more, cut to the RTO's deadline. The RTO is
//! then re-armed a full, unbacked RTO from the probe (`tcp_send_loss_probe` clears
//! `icsk_pending` before `tcp_rearm_rto`), and doubles from there. RFC 6298 has no probe.

use backoffsim_core::engine::time::{SimDuration, SimTime};
use backoffsim_core::model::rto::{Phase, RtoEstimator};

/// How far apart an expiry and a measured retransmission may be and still count as the
/// same moment: a tick (10 ms at HZ = 100, the coarsest common setting) plus an eighth of
/// the interval, since Linux's timer wheel (`kernel/time/timer.c`, since 4.8) files a
/// timeout in a level whose granularity is up to an eighth of it and fires it at the end
/// of that slot. The blackout fixture shows it: intervals of 0.608, 1.216 and 2.432 s
/// timed 32 ms long each.
pub const SLACK: SimDuration = SimDuration(10_000_000);

fn slack(interval: SimDuration) -> SimDuration {
    SLACK + SimDuration(interval.as_nanos() / 8)
}

/// The most retransmissions, and expiries, a stall keeps the times of; the rest are
/// counted. A stall's first ones are what a reader compares.
pub const MARKS_MAX: usize = 64;

/// The most expiries computed for one stall: a what-if of `max_rto = 1ms` over an hour's
/// silence must still end.
const EXPIRIES_MAX: u64 = 1 << 20;

/// One stall, measured and as the profile would have run it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stall {
    /// `SynSent` for SYNs sent again, `Established` for data.
    pub phase: Phase,
    /// When the timer was last armed before the first retransmission.
    pub armed: SimTime,
    /// The retransmissions of the head during the stall: the first [`MARKS_MAX`].
    pub sent: Vec<SimTime>,
    /// How many there were in all.
    pub retransmissions: u64,
    /// The ACK that moved past the head; `None` if the capture ends (or the connection
    /// is reset) first.
    pub recovered: Option<SimTime>,
    /// The profile's timer in the same stall.
    pub what_if: WhatIf,
}

/// The profile's timer over a stall.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WhatIf {
    /// Its expiries from the arming until it would have recovered (until the capture's
    /// end for a stall without recovery): the first [`MARKS_MAX`].
    pub expiries: Vec<SimTime>,
    /// How many expiries that is in all.
    pub count: u64,
    /// When it would have recovered: the earliest and the latest the capture allows.
    pub recovered: Option<(SimTime, SimTime)>,
}

impl Stall {
    /// How long the sender was stalled, arming to recovery.
    pub fn stalled(&self) -> Option<SimDuration> {
        self.recovered.map(|r| r.saturating_since(self.armed))
    }

    /// The same for the profile's timer: (earliest, latest).
    pub fn stalled_what_if(&self) -> Option<(SimDuration, SimDuration)> {
        self.what_if.recovered.map(|(a, b)| (a.saturating_since(self.armed), b.saturating_since(self.armed)))
    }
}

/// A stall still going: what it started with and the retransmissions so far.
#[derive(Clone, Debug)]
pub(crate) struct Open {
    phase: Phase,
    /// Whose backoff the profile's timer follows: the phase's, but for a SYN-ACK.
    timer: Phase,
    armed: SimTime,
    /// The estimator as it was before the first retransmission's expiry.
    est: RtoEstimator,
    sent: Vec<SimTime>,
    retransmissions: u64,
    /// The last retransmission and the one before it (the arming for the first).
    last: SimTime,
    before_last: SimTime,
    /// The loss probe's timeout from the arming, when the profile's timer probes first.
    probe: Option<SimDuration>,
}

impl Open {
    pub(crate) fn new(phase: Phase, armed: SimTime, est: RtoEstimator) -> Open {
        Open {
            phase,
            timer: phase,
            armed,
            est,
            sent: Vec::new(),
            retransmissions: 0,
            last: armed,
            before_last: armed,
            probe: None,
        }
    }

    /// The same stall, its timer sending a tail loss probe `pto` after the arming before
    /// its first RTO.
    pub(crate) fn probing(mut self, pto: SimDuration) -> Open {
        self.probe = Some(pto);
        self
    }

    /// The same stall, its expiries backed off as `timer`'s are: Linux's SYN-ACK timer
    /// (`reqsk_timer_handler`) doubles every time, as an established RTO does, without
    /// the linear timeouts of a SYN (`tcp_syn_linear_timeouts`).
    pub(crate) fn timed_as(mut self, timer: Phase) -> Open {
        self.timer = timer;
        self
    }

    pub(crate) fn phase(&self) -> Phase {
        self.phase
    }

    pub(crate) fn retransmitted(&mut self, at: SimTime) {
        if self.sent.len() < MARKS_MAX {
            self.sent.push(at);
        }
        self.retransmissions += 1;
        self.before_last = self.last;
        self.last = at;
    }

    /// The stall ended by an ACK at `recovered`, or unrecovered when the capture ended
    /// at `end`.
    pub(crate) fn close(self, recovered: Option<SimTime>, end: SimTime) -> Stall {
        let what_if = self.what_if(recovered, end);
        Stall {
            phase: self.phase,
            armed: self.armed,
            sent: self.sent,
            retransmissions: self.retransmissions,
            recovered,
            what_if,
        }
    }

    fn what_if(&self, recovered: Option<SimTime>, end: SimTime) -> WhatIf {
        // The path was certainly back by the last retransmission (its ACK came) and
        // certainly not before the one before it, which was lost.
        let (after, by) = (self.before_last, self.last);
        let first = self.retransmissions <= 1;
        let mut est = self.est.clone();
        let mut expiries = Vec::new();
        let mut count = 0;
        let mut earliest = None;
        let mut latest = None;
        let mut step = self.probe.unwrap_or(est.rto());
        let mut at = self.armed + step;
        // The probe's expiry is followed by a full RTO, not a backed-off one.
        let mut probe_pending = self.probe.is_some();
        while count < EXPIRIES_MAX {
            if recovered.is_none() && at > end {
                // Without recovery, only the expiries the capture covers.
                break;
            }
            if expiries.len() < MARKS_MAX {
                expiries.push(at);
            }
            count += 1;
            // The next moment that decides something: the path possibly back, the path
            // surely back, the capture's end.
            let threshold = if recovered.is_some() {
                // The original send may have been all that was lost: then any expiry
                // after it gets through.
                let past_loss = if first { at > after } else { at > after + slack(step) };
                if earliest.is_none() && past_loss {
                    earliest = Some(at);
                }
                if at + slack(step) >= by {
                    latest = Some(at);
                    break;
                }
                if earliest.is_none() {
                    after + if first { SimDuration(1) } else { SLACK }
                } else {
                    SimTime(by.as_nanos().saturating_sub(slack(step).as_nanos()))
                }
            } else {
                end
            };
            if probe_pending {
                probe_pending = false;
                step = est.rto().max(SimDuration(1));
                at += step;
                continue;
            }
            let before = est.rto();
            est.on_timeout(self.timer);
            step = est.rto().max(SimDuration(1));
            if step == before && expiries.len() >= MARKS_MAX && self.timer == Phase::Established {
                // The backoff is at its ceiling and no more times are kept: count the
                // expiries short of the threshold without stepping through each.
                let skip = (threshold.as_nanos().saturating_sub(at.as_nanos() + 1) / step.as_nanos())
                    .min(EXPIRIES_MAX - count);
                at += SimDuration(step.as_nanos() * skip);
                count += skip;
            }
            at += step;
        }
        let recovered = match (recovered, earliest.min(latest).or(latest), latest) {
            (Some(ack), Some(a), Some(b)) => {
                let back = ack.saturating_since(by);
                Some((a + back, b + back))
            }
            _ => None,
        };
        WhatIf { expiries, count, recovered }
    }
}

#[cfg(test)]
mod tests;
