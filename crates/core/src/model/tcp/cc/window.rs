//! The window arithmetic every algorithm shares (Linux `net/ipv4/tcp_cong.c`,
//! `include/net/tcp.h`): slow start, additive increase with a credit counter, the restart
//! after idle and `tcp_is_cwnd_limited`.

use super::{CwndUse, INFINITE_SSTHRESH};
use crate::engine::time::SimDuration;

/// cwnd, ssthresh and the additive-increase credit (`snd_cwnd_cnt`), in segments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub cwnd: u32,
    pub ssthresh: u32,
    /// Segments acknowledged towards the next +1 in congestion avoidance.
    pub cwnd_cnt: u32,
    pub initial: u32,
}

impl Window {
    pub fn new(initial: u32) -> Self {
        Window { cwnd: initial.max(1), ssthresh: INFINITE_SSTHRESH, cwnd_cnt: 0, initial: initial.max(1) }
    }

    /// `tcp_in_slow_start`: `snd_cwnd < snd_ssthresh`.
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// `tcp_slow_start`: cwnd grows by the segments acked, up to ssthresh; returns what is
    /// left over for congestion avoidance.
    pub fn slow_start(&mut self, acked: u32) -> u32 {
        // cwnd = min(tcp_snd_cwnd(tp) + acked, tp->snd_ssthresh);
        let cwnd = self.cwnd.saturating_add(acked).min(self.ssthresh);
        // acked -= cwnd - tcp_snd_cwnd(tp);
        let left = acked - (cwnd - self.cwnd);
        self.cwnd = cwnd;
        left
    }

    /// `tcp_cong_avoid_ai`: +1 segment per `w` segments acked, credits carried over.
    pub fn cong_avoid_ai(&mut self, w: u32, acked: u32) {
        let w = w.max(1);
        // If credits accumulated at a higher w, apply them gently now.
        if self.cwnd_cnt >= w {
            self.cwnd_cnt = 0;
            self.cwnd = self.cwnd.saturating_add(1);
        }
        self.cwnd_cnt = self.cwnd_cnt.saturating_add(acked);
        if self.cwnd_cnt >= w {
            let delta = self.cwnd_cnt / w;
            self.cwnd_cnt -= delta * w;
            self.cwnd = self.cwnd.saturating_add(delta);
        }
    }

    /// `tcp_snd_cwnd_set`, never below one segment.
    pub fn set_cwnd(&mut self, cwnd: u32) {
        self.cwnd = cwnd.max(1);
    }

    /// `tcp_undo_cwnd_reduction`: `snd_cwnd = ca_ops->undo_cwnd(sk)` (`tcp_reno_undo_cwnd`:
    /// max(cwnd, prior_cwnd)); `if (tp->prior_ssthresh > tp->snd_ssthresh) snd_ssthresh =
    /// prior_ssthresh`.
    pub fn undo(&mut self, prior_cwnd: u32, prior_ssthresh: u32) {
        self.cwnd = self.cwnd.max(prior_cwnd);
        if prior_ssthresh > self.ssthresh {
            self.ssthresh = prior_ssthresh;
        }
    }

    /// `tcp_current_ssthresh` outside a cwnd reduction: at least 3/4 of cwnd.
    pub fn current_ssthresh(&self) -> u32 {
        self.ssthresh.max((self.cwnd >> 1) + (self.cwnd >> 2))
    }

    /// `tcp_cwnd_restart` (RFC 2861's decay): ssthresh keeps 3/4 of cwnd, and cwnd halves
    /// once per RTO of idleness beyond the first, never below min(initial window, cwnd).
    /// Linux counts in jiffies; durations here are nanoseconds, so an idle spell within a
    /// jiffy of a multiple of the RTO may halve once more or less than the kernel would.
    pub fn linux_restart(&mut self, idle: SimDuration, rto: SimDuration) {
        self.ssthresh = self.current_ssthresh();
        let restart = self.initial.min(self.cwnd);
        let mut cwnd = self.cwnd;
        let mut delta = i128::from(idle.as_nanos());
        let rto = i128::from(rto.as_nanos().max(1));
        // while ((delta -= inet_csk(sk)->icsk_rto) > 0 && cwnd > restart_cwnd) cwnd >>= 1;
        loop {
            delta -= rto;
            if !(delta > 0 && cwnd > restart) {
                break;
            }
            cwnd >>= 1;
        }
        self.cwnd = cwnd.max(restart);
    }
}

/// `tcp_is_cwnd_limited`: an ACK grows the window only if the window was what limited the
/// sender, or, in slow start, if cwnd is under twice the most segments recently in flight
/// (RFC 7661's application-limited rule, Linux's variant).
pub fn is_cwnd_limited(window: &Window, usage: CwndUse) -> bool {
    if usage.is_cwnd_limited {
        return true;
    }
    if window.in_slow_start() {
        return u64::from(window.cwnd) < 2 * u64::from(usage.max_packets_out);
    }
    false
}
