//! Linux's keepalive timer, sans-IO: given when the connection last heard from its peer
//! and how many probes are unanswered, what the timer does when it runs and when it runs
//! next. It follows `tcp_keepalive_timer` (net/ipv4/tcp_timer.c) step by step; the
//! world calls [`Keepalive::on_timer`] at the times it returns and
//! [`Keepalive::on_receipt`] for every acceptable packet from the peer.
//!
//! The kernel's timer is lazy: it is not restarted by traffic, it wakes up, measures the
//! idle time and sleeps again for what is left. That is reproduced as such, because it
//! decides when the first probe goes out after a busy period (see `on_timer`).

use crate::engine::time::{SimDuration, SimTime};

/// `tcp_keepalive_time`, `tcp_keepalive_intvl` and `tcp_keepalive_probes`, or the socket
/// options that override them (`TCP_KEEPIDLE`, `TCP_KEEPINTVL`, `TCP_KEEPCNT`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct KeepaliveParams {
    /// Idle time before the first probe (`keepalive_time_when`).
    pub time: SimDuration,
    /// Time between unanswered probes (`keepalive_intvl_when`).
    pub interval: SimDuration,
    /// Unanswered probes before the connection is aborted (`keepalive_probes`).
    pub probes: u32,
}

impl Default for KeepaliveParams {
    /// include/net/tcp.h: `TCP_KEEPALIVE_TIME` (2 hours), `TCP_KEEPALIVE_INTVL` (75 s),
    /// `TCP_KEEPALIVE_PROBES` (9), the sysctls' initial values.
    fn default() -> Self {
        KeepaliveParams { time: SimDuration::from_secs(7200), interval: SimDuration::from_secs(75), probes: 9 }
    }
}

/// What one run of the timer did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Nothing to send; run again at this time.
    Wait(SimTime),
    /// Send a probe (`tcp_write_wakeup`) and run again at this time.
    Probe(SimTime),
    /// Give up: reset the connection, ETIMEDOUT (`tcp_write_err`). The timer stops.
    Abort,
}

#[derive(Clone, Copy, Debug)]
pub struct Keepalive {
    params: KeepaliveParams,
    /// `tp->rcv_tstamp`: when the last acceptable ACK arrived.
    last_receipt: SimTime,
    /// `icsk_probes_out`: probes sent since the peer was last heard from.
    probes_out: u32,
    /// When the first of the unanswered probes went out.
    first_unanswered: Option<SimTime>,
    /// `icsk_user_timeout` (`TCP_USER_TIMEOUT`), when set: it replaces the probe count.
    user_timeout: Option<SimDuration>,
}

impl Keepalive {
    /// The connection is established at `now`. `tcp_finish_connect` arms the timer for
    /// `keepalive_time_when` from here; the SYN-ACK it handles has just set `rcv_tstamp`.
    pub fn established(params: KeepaliveParams, now: SimTime) -> (Self, SimTime) {
        let ka = Keepalive { params, last_receipt: now, probes_out: 0, first_unanswered: None, user_timeout: None };
        (ka, now + params.time)
    }

    /// With `TCP_USER_TIMEOUT` set, `tcp_keepalive_timer` resets the connection once the
    /// peer has been silent that long and a probe is out, instead of counting probes.
    pub fn with_user_timeout(mut self, user_timeout: Option<SimDuration>) -> Self {
        self.user_timeout = user_timeout.filter(|t| *t > SimDuration::ZERO);
        self
    }

    /// An acceptable ACK arrived (a probe's answer included): `tcp_ack` sets
    /// `icsk_probes_out = 0` and `tp->rcv_tstamp = now`. The timer is not touched.
    pub fn on_receipt(&mut self, now: SimTime) {
        self.last_receipt = now;
        self.probes_out = 0;
        self.first_unanswered = None;
    }

    pub fn probes_out(&self) -> u32 {
        self.probes_out
    }

    /// When the oldest unanswered probe was sent.
    pub fn first_unanswered(&self) -> Option<SimTime> {
        self.first_unanswered
    }

    /// `tcp_keepalive_timer` running at `now`. `busy` is `tp->packets_out ||
    /// !tcp_write_queue_empty(sk)`: data in flight or waiting to be sent.
    pub fn on_timer(&mut self, now: SimTime, busy: bool) -> Step {
        let KeepaliveParams { time, interval, probes } = self.params;
        // "It is alive without keepalive 8)": the retransmission timer watches the
        // connection; look again a whole keepalive_time later, not from the last receipt.
        if busy {
            return Step::Wait(now + time);
        }
        // keepalive_time_elapsed: min(now - lrcvtime, now - rcv_tstamp); this end only
        // receives ACKs, so lrcvtime (last data received) is never the later of the two.
        let elapsed = now.saturating_since(self.last_receipt);
        if elapsed < time {
            // "It is tp->rcv_tstamp + keepalive_time_when(tp)".
            return Step::Wait(now + (time - elapsed));
        }
        // "If the TCP_USER_TIMEOUT option is enabled, use that to determine when to
        // timeout instead": elapsed >= user_timeout with a probe out, else the count.
        let give_up = match self.user_timeout {
            Some(user_timeout) => elapsed >= user_timeout && self.probes_out > 0,
            None => self.probes_out >= probes,
        };
        if give_up {
            return Step::Abort;
        }
        // tcp_write_wakeup sent the probe (<= 0): icsk_probes_out++ and the next run is
        // keepalive_intvl_when later.
        self.probes_out += 1;
        self.first_unanswered.get_or_insert(now);
        Step::Probe(now + interval)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// tcp_keepalive_timer with icsk_user_timeout set: the reset comes at the first run
    /// that finds the peer silent for the user timeout with a probe out, whatever
    /// keepalive_probes says; without a probe out it does not come at all.
    #[test]
    fn tcp_keepalive_timer_with_a_user_timeout_resets_on_the_silence_not_the_probe_count() {
        let p = KeepaliveParams { time: SimDuration::from_secs(60), interval: SimDuration::from_secs(10), probes: 3 };
        let t = |s: u64| SimTime(s * 1_000_000_000);
        // 25 s, shorter than the idle time: the run at 60 s probes (none was out), the
        // one at 70 s finds 70 s of silence with a probe out: reset after one probe.
        let (ka, first) = Keepalive::established(p, t(0));
        let mut ka = ka.with_user_timeout(Some(SimDuration::from_secs(25)));
        assert_eq!(first, t(60));
        assert_eq!(ka.on_timer(t(60), false), Step::Probe(t(70)));
        assert_eq!(ka.on_timer(t(70), false), Step::Abort);
        // 120 s: more probes than keepalive_probes go out until the silence reaches it.
        let (ka, _) = Keepalive::established(p, t(0));
        let mut ka = ka.with_user_timeout(Some(SimDuration::from_secs(120)));
        let steps: Vec<Step> = [60, 70, 80, 90, 100, 110, 120].iter().map(|&s| ka.on_timer(t(s), false)).collect();
        assert_eq!(
            steps,
            [
                Step::Probe(t(70)),
                Step::Probe(t(80)),
                Step::Probe(t(90)),
                Step::Probe(t(100)),
                Step::Probe(t(110)),
                Step::Probe(t(120)),
                Step::Abort
            ]
        );
        // Zero is off: the count decides again.
        let (ka, _) = Keepalive::established(p, t(0));
        let mut ka = ka.with_user_timeout(Some(SimDuration::ZERO));
        let steps: Vec<Step> = [60, 70, 80, 90].iter().map(|&s| ka.on_timer(t(s), false)).collect();
        assert_eq!(steps, [Step::Probe(t(70)), Step::Probe(t(80)), Step::Probe(t(90)), Step::Abort]);
    }

    fn s(secs: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_secs(secs)
    }

    fn params(time: u64, interval: u64, probes: u32) -> KeepaliveParams {
        KeepaliveParams { time: SimDuration::from_secs(time), interval: SimDuration::from_secs(interval), probes }
    }

    /// Runs the timer with no answer and nothing to send; returns the probe times and the
    /// abort time.
    fn silent_peer(p: KeepaliveParams, established: SimTime) -> (Vec<SimTime>, SimTime) {
        let (mut ka, mut at) = Keepalive::established(p, established);
        let mut probes = Vec::new();
        loop {
            match ka.on_timer(at, false) {
                Step::Wait(next) => at = next,
                Step::Probe(next) => {
                    probes.push(at);
                    at = next;
                }
                Step::Abort => return (probes, at),
            }
        }
    }

    #[test]
    fn linux_defaults_are_the_sysctls_initial_values() {
        // include/net/tcp.h: TCP_KEEPALIVE_TIME (120*60*HZ), TCP_KEEPALIVE_PROBES 9,
        // TCP_KEEPALIVE_INTVL (75*HZ); Documentation/networking/ip-sysctl.rst.
        assert_eq!(KeepaliveParams::default(), params(7200, 75, 9));
    }

    #[test]
    fn a_silent_peer_gets_probes_every_interval_and_the_run_after_the_last_aborts() {
        // tcp_keepalive_timer: probe at rcv_tstamp + time, then one every intvl while
        // icsk_probes_out < keepalive_probes; the run that finds probes_out >= probes
        // (one interval after the last probe) resets the connection.
        let (probes, abort) = silent_peer(params(60, 10, 3), s(5));
        assert_eq!(probes, vec![s(65), s(75), s(85)]);
        assert_eq!(abort, s(95), "last receipt + 60 s + 3 · 10 s");
    }

    #[test]
    fn with_linux_defaults_a_silent_peer_is_noticed_after_two_hours_eleven_minutes_and_fifteen_seconds() {
        // tcp(7): 7200 s idle, then 9 probes 75 s apart: 7200 + 9 · 75 = 7875 s.
        let (probes, abort) = silent_peer(KeepaliveParams::default(), s(0));
        assert_eq!(probes.len(), 9);
        assert_eq!((probes[0], probes[8]), (s(7200), s(7800)));
        assert_eq!(abort, s(7875));
    }

    #[test]
    fn an_answered_probe_resets_the_idle_clock() {
        // tcp_ack: icsk_probes_out = 0, rcv_tstamp = now. The run one interval after the
        // probe finds elapsed < time and sleeps until rcv_tstamp + time.
        let (mut ka, at) = Keepalive::established(params(60, 10, 3), s(0));
        assert_eq!(ka.on_timer(at, false), Step::Probe(s(70)));
        ka.on_receipt(SimTime(s(60).0 + 200_000_000));
        assert_eq!(ka.probes_out(), 0);
        assert_eq!(ka.on_timer(s(70), false), Step::Wait(SimTime(s(120).0 + 200_000_000)));
        // Only probes after the answer count towards the abort.
        let mut at = SimTime(s(120).0 + 200_000_000);
        for _ in 0..3 {
            match ka.on_timer(at, false) {
                Step::Probe(next) => at = next,
                other => panic!("expected a probe, got {other:?}"),
            }
        }
        assert_eq!(ka.on_timer(at, false), Step::Abort);
        assert_eq!(ka.first_unanswered(), Some(SimTime(s(120).0 + 200_000_000)));
    }

    #[test]
    fn no_probe_while_data_is_outstanding_and_the_timer_waits_a_whole_time() {
        // tcp_keepalive_timer: `if (tp->packets_out || !tcp_write_queue_empty(sk)) goto
        // resched;` with elapsed = keepalive_time_when: the next run is a full time later,
        // even though the peer was last heard from long ago.
        let (mut ka, at) = Keepalive::established(params(60, 10, 3), s(0));
        assert_eq!(ka.on_timer(at, true), Step::Wait(s(120)));
        assert_eq!(ka.probes_out(), 0);
        // Idle at the next run and silent since 0: elapsed 120 s >= 60 s, probe now.
        assert_eq!(ka.on_timer(s(120), false), Step::Probe(s(130)));
    }

    #[test]
    fn a_run_before_the_idle_time_is_up_sleeps_until_last_receipt_plus_time() {
        // "It is tp->rcv_tstamp + keepalive_time_when(tp)".
        let (mut ka, at) = Keepalive::established(params(60, 10, 3), s(0));
        ka.on_receipt(s(45));
        assert_eq!(ka.on_timer(at, false), Step::Wait(s(105)));
        assert_eq!(ka.on_timer(s(105), false), Step::Probe(s(115)));
    }

    #[test]
    fn packetdrill_keepalive_without_timestamps_probes_four_times_then_resets() {
        // The packetdrill test of keepalive without timestamps that Neal Cardwell posted
        // to netdev (reply to a tcp_keepalive_timer patch, "passes on recent Linux
        // kernels"): last ACK in at 0.1 s, TCP_KEEPIDLE 3, TCP_KEEPINTVL 2, TCP_KEEPCNT 4;
        // probes at +3, +2, +2, +2 and `R.` +2 after the last: 3.1, 5.1, 7.1, 9.1, 11.1 s.
        let ms = |ms: u64| SimTime::ZERO + SimDuration::from_millis(ms);
        let (probes, abort) = silent_peer(params(3, 2, 4), ms(100));
        assert_eq!(probes, vec![ms(3100), ms(5100), ms(7100), ms(9100)]);
        assert_eq!(abort, ms(11_100));
    }

    #[test]
    fn one_probe_allowed_aborts_one_interval_after_it() {
        // TCP_KEEPCNT = 1: the second run finds icsk_probes_out (1) >= keepalive_probes.
        let (probes, abort) = silent_peer(params(1, 1, 1), s(0));
        assert_eq!((probes, abort), (vec![s(1)], s(2)));
    }
}
