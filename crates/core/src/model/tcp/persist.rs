//! Linux's zero-window probe timer (`ICSK_TIME_PROBE0`, the "persist" timer), sans-IO:
//! how long to wait before each probe, when to give up, and what an answer does. The
//! sender owns one of these and arms its one timer with what it says, as Linux's
//! `icsk_pending` holds RETRANS, LOSS_PROBE or PROBE0, never two at once.
//!
//! Kernel sources (net/ipv4/tcp_timer.c, tcp_output.c, tcp_input.c, include/net/tcp.h):
//! - `tcp_probe0_base`: `max(icsk_rto, TCP_RTO_MIN)`;
//! - `tcp_probe0_when(sk, max_when)`: `base << min(icsk_backoff, ilog2(TCP_RTO_MAX /
//!   TCP_RTO_MIN) + 1)`, at most `max_when`;
//! - `tcp_check_probe_timer`: with nothing in flight and no timer pending, arm PROBE0 for
//!   `tcp_probe0_base`;
//! - `tcp_probe_timer`: the first expiry stamps `icsk_probes_tstamp`; a later one aborts
//!   once `TCP_USER_TIMEOUT` has passed since that stamp; otherwise abort when
//!   `icsk_probes_out >= tcp_retries2`, else `tcp_send_probe0`;
//! - `tcp_send_probe0`: probe, `icsk_probes_out++`, `icsk_backoff++` while below
//!   `tcp_retries2`, re-arm for `tcp_probe0_when`, clamped by
//!   `tcp_clamp_probe0_to_user_timeout`;
//! - `tcp_ack`: every acceptable ACK sets `icsk_probes_out = 0`, so a peer that answers
//!   keeps the connection open for ever (RFC 1122 4.2.2.17) unless a user timeout is set;
//! - `tcp_ack_probe`: a window that now fits the next segment clears the timer, the
//!   backoff and the stamp; one still closed re-arms the timer for `tcp_probe0_when`.
//!
//! - `tcp_send_probe0` when `tcp_write_wakeup` fails with local congestion (`err > 0`:
//!   the qdisc refused the probe, or the new data the timer retries): `icsk_probes_out++`,
//!   no backoff, re-arm for `TCP_RESOURCE_PROBE_INTERVAL`, clamped the same way.
//!
//! Left out: the orphaned-socket limit (`tcp_orphan_retries`).

use crate::engine::time::{SimDuration, SimTime};
use crate::model::rto::RtoParams;

/// include/net/tcp.h: `TCP_RTO_MIN`, `HZ / 5`; the constant, not the route's `rto_min`.
pub const TCP_RTO_MIN: SimDuration = SimDuration::from_millis(200);

/// `ilog2(TCP_RTO_MAX / TCP_RTO_MIN) + 1` = `ilog2(600) + 1`: beyond this shift the probe
/// interval is past `TCP_RTO_MAX` anyway, and the cap keeps the shift from overflowing.
pub const MAX_BACKOFF_SHIFT: u32 = 10;

/// include/net/tcp.h: `#define TCP_RESOURCE_PROBE_INTERVAL ((unsigned)(HZ/2U))`.
pub const RESOURCE_PROBE_INTERVAL: SimDuration = SimDuration::from_millis(500);

/// What the sender must do when the probe timer expires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expiry {
    /// Send a zero-window probe and re-arm the timer for this long.
    Probe(SimDuration),
    /// Give up: `tcp_write_err` (ETIMEDOUT).
    Abort,
}

/// The probe timer's state: `icsk_probes_out`, `icsk_backoff` (while probing) and
/// `icsk_probes_tstamp`, and when the window closed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Persist {
    probes_out: u32,
    backoff: u32,
    probes_tstamp: Option<SimTime>,
    since: SimTime,
}

impl Persist {
    /// The window closed at `now`. Probing starts from the backoff the connection
    /// already has: Linux shares `icsk_backoff` between the retransmission and probe
    /// timers.
    pub fn new(now: SimTime, backoff: u32) -> Self {
        Persist { probes_out: 0, backoff, probes_tstamp: None, since: now }
    }

    /// When the window closed.
    pub fn since(&self) -> SimTime {
        self.since
    }

    /// Probes sent since the last ACK.
    pub fn probes_out(&self) -> u32 {
        self.probes_out
    }

    /// `tcp_probe0_base`.
    pub fn base(rto: SimDuration) -> SimDuration {
        rto.max(TCP_RTO_MIN)
    }

    /// `tcp_probe0_when(sk, max_when)` with `max_when` the connection's `TCP_RTO_MAX`.
    pub fn when(&self, rto: SimDuration, p: &RtoParams) -> SimDuration {
        let shift = self.backoff.min(MAX_BACKOFF_SHIFT);
        let base = Self::base(rto).as_nanos();
        SimDuration::from_nanos(base.saturating_mul(1 << shift)).min(p.max_rto)
    }

    /// `tcp_check_probe_timer`: the first wait, before any probe.
    pub fn first_wait(rto: SimDuration, p: &RtoParams) -> SimDuration {
        p.timer_ticks(Self::base(rto).min(p.max_rto))
    }

    /// `tcp_clamp_probe0_to_user_timeout`: with a user timeout and a stamp, at most what
    /// is left of the user timeout, but never less than `TCP_TIMEOUT_MIN` (2 jiffies).
    fn clamp(&self, now: SimTime, when: SimDuration, p: &RtoParams) -> SimDuration {
        let (Some(user_timeout), Some(stamp)) = (p.user_timeout, self.probes_tstamp) else {
            return p.timer_ticks(when);
        };
        let hz = u64::from(p.hz.unwrap_or(1000));
        let timeout_min = SimDuration::from_nanos(2 * 1_000_000_000 / hz);
        let remaining = p.timer_ticks(user_timeout).saturating_sub(now.saturating_since(stamp));
        p.timer_ticks(when.min(remaining.max(timeout_min)))
    }

    /// `tcp_probe_timer` (nothing in flight, data waiting): abort, or probe via
    /// `tcp_send_probe0` and say how long until the next expiry.
    pub fn on_expiry(&mut self, now: SimTime, rto: SimDuration, p: &RtoParams) -> Expiry {
        if self.gives_up(now, p) {
            return Expiry::Abort;
        }
        self.probes_out += 1;
        if self.backoff < p.retries2 {
            self.backoff += 1;
        }
        Expiry::Probe(self.clamp(now, self.when(rto, p), p))
    }

    /// `tcp_probe_timer` when the probe cannot leave: `tcp_send_probe0` sees
    /// `tcp_write_wakeup` return `err > 0` ("If packet was not sent due to local
    /// congestion, do not backoff"), counts the probe and retries after
    /// `TCP_RESOURCE_PROBE_INTERVAL`, clamped by `tcp_clamp_probe0_to_user_timeout`.
    pub fn on_refused_expiry(&mut self, now: SimTime, p: &RtoParams) -> Expiry {
        if self.gives_up(now, p) {
            return Expiry::Abort;
        }
        self.probes_out += 1;
        Expiry::Probe(self.clamp(now, RESOURCE_PROBE_INTERVAL, p))
    }

    /// `tcp_probe_timer`'s give-up checks; the first expiry stamps `icsk_probes_tstamp`.
    fn gives_up(&mut self, now: SimTime, p: &RtoParams) -> bool {
        match self.probes_tstamp {
            None => self.probes_tstamp = Some(now),
            Some(stamp) => {
                // (s32)(tcp_jiffies32 - icsk_probes_tstamp) >= msecs_to_jiffies(user_timeout)
                if let Some(user_timeout) = p.user_timeout
                    && now.saturating_since(stamp) >= p.timer_ticks(user_timeout)
                {
                    return true;
                }
            }
        }
        self.probes_out >= p.retries2
    }

    /// `tcp_ack` on any acceptable ACK: the peer is alive.
    pub fn on_ack(&mut self) {
        self.probes_out = 0;
    }

    /// `tcp_ack_probe`'s `else` branch: an ACK found the window still closed; the timer
    /// restarts from now with the backoff reached.
    pub fn still_closed(&self, now: SimTime, rto: SimDuration, p: &RtoParams) -> SimDuration {
        self.clamp(now, self.when(rto, p), p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::rto::{RtoConfig, RtoProfile};

    fn linux(user_timeout: Option<&str>) -> RtoParams {
        let sets: Vec<(&str, &str)> = user_timeout.map(|u| ("user_timeout", u)).into_iter().collect();
        RtoConfig::with_pairs(RtoProfile::Linux, &sets).resolve().unwrap()
    }

    fn ms(n: u64) -> SimDuration {
        SimDuration::from_millis(n)
    }

    /// Runs unanswered probes from the first expiry at `first` and returns the expiry
    /// times and the time of the abort.
    fn unanswered(p: &RtoParams, rto: SimDuration, first: SimTime) -> (Vec<SimTime>, SimTime) {
        let mut persist = Persist::new(SimTime::ZERO, 0);
        let mut now = first;
        let mut probes = vec![];
        loop {
            match persist.on_expiry(now, rto, p) {
                Expiry::Probe(wait) => {
                    probes.push(now);
                    now += wait;
                }
                Expiry::Abort => return (probes, now),
            }
        }
    }

    #[test]
    fn probes_back_off_0_3_0_6_1_2_s_as_packetdrill_slow_start_after_win_update_shows() {
        // google/packetdrill gtests/net/tcp/slow_start/slow-start-after-win-update.pkt
        // (commit 8229c94928ac0c7d5039bc3d302c525d558934f7): a 100 ms RTT gives an RTO of
        // 300 ms; after "ack 26001 win 0" the probes go out at +.3, +.6 and +1.2.
        let p = linux(None);
        let rto = ms(300);
        assert_eq!(Persist::first_wait(rto, &p), ms(300)); // tcp_check_probe_timer
        let mut persist = Persist::new(SimTime::ZERO, 0);
        let t1 = SimTime::ZERO + ms(300);
        assert_eq!(persist.on_expiry(t1, rto, &p), Expiry::Probe(ms(600)));
        assert_eq!(persist.on_expiry(t1 + ms(600), rto, &p), Expiry::Probe(ms(1200)));
        assert_eq!(persist.probes_out(), 2);
    }

    #[test]
    fn the_base_is_never_below_tcp_rto_min() {
        // tcp_probe0_base: max_t(unsigned long, icsk_rto, TCP_RTO_MIN).
        let p = linux(None);
        assert_eq!(Persist::first_wait(ms(5), &p), ms(200));
        assert_eq!(Persist::new(SimTime::ZERO, 3).when(ms(5), &p), ms(1600));
    }

    #[test]
    fn an_unanswered_peer_is_given_up_on_after_retries2_probes_with_the_wait_capped_at_tcp_rto_max() {
        // tcp_probe_timer: abort when icsk_probes_out >= tcp_retries2 (15), so at the 16th
        // expiry. tcp_send_probe0: probe k is followed by min(0.3 s << k, 120 s):
        // 0.6 + 1.2 + 2.4 + 4.8 + 9.6 + 19.2 + 38.4 + 76.8 = 153 s for k = 1..8, then
        // 0.3 s << 9 = 153.6 s is capped by tcp_probe0_when's max_when: 7 × 120 s.
        let p = linux(None);
        let first = SimTime::ZERO + ms(300);
        let (probes, abort) = unanswered(&p, ms(300), first);
        assert_eq!(probes.len(), 15);
        assert_eq!(abort - first, ms(153_000 + 7 * 120_000));
        assert_eq!(abort - probes[14], SimDuration::from_secs(120));
    }

    #[test]
    fn the_backoff_shift_stops_at_ilog2_of_rto_max_over_rto_min_plus_one() {
        // tcp_probe0_when: min_t(u8, ilog2(TCP_RTO_MAX / TCP_RTO_MIN) + 1, icsk_backoff).
        // Linux's TCP_RTO_MAX (120 s) hides the cap; with a ceiling of 1000 s it shows:
        // 200 ms << 10 = 204.8 s, not << 12 = 819.2 s.
        let sets = [("nonconformant", "true"), ("max_rto", "1000s")];
        let p = RtoConfig::with_pairs(RtoProfile::Rfc6298, &sets).resolve().unwrap();
        assert_eq!(Persist::new(SimTime::ZERO, 12).when(ms(200), &p), ms(204_800));
    }

    #[test]
    fn an_answered_probe_resets_the_count_but_not_the_backoff() {
        // tcp_ack: icsk_probes_out = 0; tcp_ack_probe (window still zero): re-arm for
        // tcp_probe0_when with icsk_backoff as it stands. The count never reaches
        // retries2, so the connection never aborts.
        let p = linux(None);
        let rto = ms(300);
        let mut persist = Persist::new(SimTime::ZERO, 0);
        let mut now = SimTime::ZERO;
        for _ in 0..100 {
            assert!(matches!(persist.on_expiry(now, rto, &p), Expiry::Probe(_)));
            now += ms(100);
            persist.on_ack();
            now += persist.still_closed(now, rto, &p);
        }
        assert_eq!(persist.probes_out(), 0);
        // The backoff stopped at retries2 (15), the wait at TCP_RTO_MAX.
        assert_eq!(persist.still_closed(now, rto, &p), SimDuration::from_secs(120));
    }

    #[test]
    fn a_user_timeout_aborts_probing_even_while_the_peer_answers() {
        // tcp_probe_timer: icsk_probes_tstamp is set at the first expiry; a later expiry at
        // or past it + TCP_USER_TIMEOUT aborts; tcp_clamp_probe0_to_user_timeout keeps
        // every wait within what is left, so the abort lands exactly on 30 s.
        let p = linux(Some("30s"));
        let rto = ms(300);
        let mut persist = Persist::new(SimTime::ZERO, 0);
        let first = SimTime::ZERO + ms(300);
        let mut now = first;
        while let Expiry::Probe(wait) = persist.on_expiry(now, rto, &p) {
            // Answered 100 ms later, the window still closed.
            persist.on_ack();
            let answer = now + ms(100);
            now = if answer < now + wait { answer + persist.still_closed(answer, rto, &p) } else { now + wait };
        }
        assert_eq!(now - first, SimDuration::from_secs(30));
    }

    #[test]
    fn a_refused_probe_counts_without_backing_off_tcp_send_probe0_resource_probe_interval() {
        // tcp_send_probe0 with tcp_write_wakeup > 0: icsk_probes_out++, no icsk_backoff++,
        // timeout = TCP_RESOURCE_PROBE_INTERVAL; tcp_retries2 (15) refused probes abort.
        let p = linux(None);
        let mut persist = Persist::new(SimTime::ZERO, 2);
        let mut now = SimTime::ZERO;
        for _ in 0..15 {
            assert_eq!(persist.on_refused_expiry(now, &p), Expiry::Probe(ms(500)));
            now += ms(500);
        }
        assert_eq!(persist.on_refused_expiry(now, &p), Expiry::Abort);
        // The backoff it started with is kept for the probes that do leave.
        assert_eq!(persist.when(ms(300), &p), ms(1200));
    }

    #[test]
    fn the_clamp_never_goes_below_tcp_timeout_min() {
        // tcp_clamp_probe0_to_user_timeout: remaining = max(remaining, TCP_TIMEOUT_MIN),
        // 2 jiffies (8 ms at HZ 250).
        let p = linux(Some("1s"));
        let mut persist = Persist::new(SimTime::ZERO, 0);
        persist.on_expiry(SimTime::ZERO, ms(300), &p);
        let late = SimTime::ZERO + ms(999);
        assert_eq!(persist.still_closed(late, ms(300), &p), ms(8));
    }
}
