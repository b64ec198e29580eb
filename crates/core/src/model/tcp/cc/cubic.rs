//! CUBIC (RFC 9438) as Linux's `net/ipv4/tcp_cubic.c` computes it: after a loss the window
//! follows W_cubic(t) = C·(t − K)³ + W_max, with K = cbrt(W_max·(1 − β)/C), β = 717/1024
//! and C = 0.4 (`bic_scale` 41 → 410/1024), in the kernel's fixed point: time in jiffies
//! then in 1/1024 s (`BICTCP_HZ`), the cube root of `cubic_root`, and the target one
//! minimum RTT ahead (`delay_min`). Fast convergence (RFC 9438 4.7) lowers W_max when a
//! loss comes before the last one's W_max; the Reno-friendly estimate (`tcp_friendliness`,
//! RFC 9438 4.3) keeps the window at least what Reno's would be; the epoch shifts over an
//! idle spell (`cubictcp_cwnd_event`, `CA_EVENT_TX_START`).
//!
//! HyStart (on by default, as in Linux) can end slow start before a loss: see
//! [`hystart`]. It runs only on ACKs that carry a [`Round`]. After an RTO its round
//! restarts at the next ACK rather than at the `snd_nxt` of the timeout.
//!
//! Left out: `initial_ssthresh` (0 by default). Undo restores the window as Reno's does
//! (`cubictcp_undo_cwnd` is `tcp_reno_undo_cwnd`); W_max is not restored.

pub mod hystart;
mod root;
#[cfg(test)]
mod tests;

pub use hystart::Round;
pub use root::cubic_root;

use super::window::{Window, is_cwnd_limited};
use super::{Ack, Congestion, INITIAL_WINDOW, Timeout};
use crate::engine::time::{NANOS_PER_SEC, SimDuration, SimTime};
use crate::model::rto::linux::usecs_to_jiffies;
use hystart::HyStart;

/// Scale of `beta` (`BICTCP_BETA_SCALE`).
const BETA_SCALE: u32 = 1024;
/// CUBIC's time unit is 2^10 per second (`BICTCP_HZ`).
const BICTCP_HZ: u32 = 10;

/// Linux's module parameters and the kernel's tick rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CubicParams {
    /// `beta`: 717/1024 ≈ 0.7 (RFC 9438 4.6 β_cubic).
    pub beta: u32,
    /// `bic_scale`: C·1024/10, 41 → C ≈ 0.4 (RFC 9438 4.2).
    pub bic_scale: u32,
    pub fast_convergence: bool,
    pub tcp_friendliness: bool,
    /// `hystart` (1 by default, both detections: `hystart_detect` = 3).
    pub hystart: bool,
    /// `CONFIG_HZ`: CUBIC's clock is `tcp_jiffies32`.
    pub hz: u32,
    /// `net.ipv4.tcp_slow_start_after_idle` (1 by default).
    pub slow_start_after_idle: bool,
    pub initial_window: u32,
}

impl Default for CubicParams {
    fn default() -> Self {
        CubicParams {
            beta: 717,
            bic_scale: 41,
            fast_convergence: true,
            tcp_friendliness: true,
            hystart: true,
            hz: 250,
            slow_start_after_idle: true,
            initial_window: INITIAL_WINDOW,
        }
    }
}

/// `struct bictcp`, less HyStart's fields.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct State {
    /// Segments acked per +1 of cwnd.
    cnt: u32,
    last_max_cwnd: u32,
    last_cwnd: u32,
    last_time: u32,
    bic_origin_point: u32,
    /// Time from the epoch's start to the origin point, in 1/1024 s.
    bic_k: u32,
    /// Minimum RTT seen, µs (0: none yet).
    delay_min: u32,
    /// In jiffies; the kernel's 0 sentinel is `None` here.
    epoch_start: Option<u32>,
    ack_cnt: u32,
    /// The Reno-friendly estimate of cwnd.
    tcp_cwnd: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cubic {
    pub window: Window,
    params: CubicParams,
    ca: State,
    hystart: HyStart,
    /// `beta_scale`: 8·(1024 + β)/3/(1024 − β), segments acked per Reno +1, ×8/cwnd.
    beta_scale: u32,
    /// `cube_rtt_scale`: `bic_scale` · 10.
    cube_rtt_scale: u32,
    /// `cube_factor`: 2^(10 + 3·BICTCP_HZ) / (`bic_scale` · 10).
    cube_factor: u64,
    /// The last `bic_target`, kept for tests to compare with RFC 9438's W_cubic.
    #[cfg(test)]
    last_target: u32,
}

impl Cubic {
    pub fn new(params: CubicParams) -> Self {
        // cubictcp_register: the precomputed scale factors.
        let beta = params.beta.min(BETA_SCALE - 1);
        let bic_scale = params.bic_scale.max(1);
        Cubic {
            window: Window::new(params.initial_window),
            params: CubicParams { beta, bic_scale, hz: params.hz.max(1), ..params },
            ca: State::default(),
            hystart: HyStart::default(),
            beta_scale: 8 * (BETA_SCALE + beta) / 3 / (BETA_SCALE - beta),
            cube_rtt_scale: bic_scale * 10,
            cube_factor: (1u64 << (10 + 3 * BICTCP_HZ)) / u64::from(bic_scale * 10),
            #[cfg(test)]
            last_target: 0,
        }
    }

    /// `tcp_jiffies32` at `now` (the run starts at jiffy 0).
    fn jiffies(&self, now: SimTime) -> u32 {
        (u128::from(now.as_nanos()) * u128::from(self.params.hz) / u128::from(NANOS_PER_SEC)) as u32
    }

    /// W_max as the last loss left it (`last_max_cwnd`).
    pub fn w_max(&self) -> u32 {
        self.ca.last_max_cwnd
    }

    /// `cubictcp_acked`: track the minimum RTT, skipping the first second of an epoch, and
    /// let HyStart look at the sample while in slow start.
    fn on_rtt(&mut self, now: SimTime, now_j: u32, rtt: SimDuration, round: Option<Round>) {
        // Discard delay samples right after fast recovery.
        if let Some(epoch) = self.ca.epoch_start
            && (now_j.wrapping_sub(epoch) as i32) < self.params.hz as i32
        {
            return;
        }
        let delay = u32::try_from(rtt.as_micros()).unwrap_or(u32::MAX).max(1);
        if self.ca.delay_min == 0 || self.ca.delay_min > delay {
            self.ca.delay_min = delay;
        }
        // if (!ca->found && tcp_in_slow_start(tp) && hystart) hystart_update(sk, delay);
        if let Some(round) = round
            && self.params.hystart
            && !self.hystart.found
            && self.window.in_slow_start()
        {
            // bictcp_clock_us: tcp_mstamp, µs.
            let now_us = (now.as_nanos() / 1_000) as u32;
            if self.hystart.update(now_us, delay, self.ca.delay_min, self.window.cwnd, round) {
                // tp->snd_ssthresh = tcp_snd_cwnd(tp);
                self.window.ssthresh = self.window.cwnd;
            }
        }
    }

    /// `bictcp_update`: how many segments must be acked per +1 of cwnd (`ca->cnt`).
    fn update(&mut self, now_j: u32, cwnd: u32, acked: u32) {
        let ca = &mut self.ca;
        let hz = self.params.hz;
        ca.ack_cnt = ca.ack_cnt.wrapping_add(acked);
        if ca.last_cwnd == cwnd && (now_j.wrapping_sub(ca.last_time) as i32) <= (hz / 32) as i32 {
            return;
        }
        // At most one recalculation per jiffy; a reduction clears the epoch and forces one.
        if !(ca.epoch_start.is_some() && now_j == ca.last_time) {
            ca.last_cwnd = cwnd;
            ca.last_time = now_j;
            let epoch = match ca.epoch_start {
                Some(e) => e,
                None => {
                    ca.ack_cnt = acked;
                    ca.tcp_cwnd = cwnd;
                    if ca.last_max_cwnd <= cwnd {
                        ca.bic_k = 0;
                        ca.bic_origin_point = cwnd;
                    } else {
                        // K = cubic_root(cube_factor * (last_max_cwnd - cwnd)): RFC 9438 (2)
                        // K = cbrt((W_max − cwnd_epoch)/C), in 1/1024 s.
                        ca.bic_k = cubic_root(self.cube_factor.wrapping_mul(u64::from(ca.last_max_cwnd - cwnd)));
                        ca.bic_origin_point = ca.last_max_cwnd;
                    }
                    ca.epoch_start = Some(now_j);
                    now_j
                }
            };
            // t = (s32)(now - epoch_start) + usecs_to_jiffies(delay_min), in 1/1024 s: RFC
            // 9438 4.2 evaluates W_cubic(t + RTT), the window one RTT ahead.
            let mut t = i64::from(now_j.wrapping_sub(epoch) as i32) as u64;
            t = t.wrapping_add(usecs_to_jiffies(u64::from(ca.delay_min), hz));
            t = (t << BICTCP_HZ) / u64::from(hz);
            let k = u64::from(ca.bic_k);
            let offs = k.abs_diff(t);
            // delta = (cube_rtt_scale * offs^3) >> (10 + 3*BICTCP_HZ): C·(t − K)³ segments.
            let cube = u64::from(self.cube_rtt_scale).wrapping_mul(offs).wrapping_mul(offs).wrapping_mul(offs);
            let delta = (cube >> (10 + 3 * BICTCP_HZ)) as u32;
            let target =
                if t < k { ca.bic_origin_point.wrapping_sub(delta) } else { ca.bic_origin_point.wrapping_add(delta) };
            #[cfg(test)]
            {
                self.last_target = target;
            }
            ca.cnt = if target > cwnd { cwnd / (target - cwnd) } else { cwnd.wrapping_mul(100) };
            // No W_max yet: grow at least 5 % per RTT.
            if ca.last_max_cwnd == 0 && ca.cnt > 20 {
                ca.cnt = 20;
            }
        }
        // tcp_friendliness: Reno's window grows by 1 per cwnd·beta_scale/8 segments acked,
        // RFC 9438 4.3's α = 3(1 − β)/(1 + β) per RTT.
        if self.params.tcp_friendliness {
            let per = ((u64::from(cwnd) * u64::from(self.beta_scale)) >> 3).max(1) as u32;
            while ca.ack_cnt > per {
                ca.ack_cnt -= per;
                ca.tcp_cwnd = ca.tcp_cwnd.wrapping_add(1);
            }
            if ca.tcp_cwnd > cwnd {
                let max_cnt = cwnd / (ca.tcp_cwnd - cwnd);
                ca.cnt = ca.cnt.min(max_cnt);
            }
        }
        // At most 1 segment per 2 acked: 1.5× per RTT.
        ca.cnt = ca.cnt.max(2);
    }

    /// `cubictcp_recalc_ssthresh`: end the epoch, remember W_max (lowered by fast
    /// convergence), and return cwnd·β.
    fn recalc_ssthresh(&mut self) -> u32 {
        let cwnd = self.window.cwnd;
        self.ca.epoch_start = None;
        self.ca.last_max_cwnd = if cwnd < self.ca.last_max_cwnd && self.params.fast_convergence {
            // RFC 9438 4.7: W_max = cwnd·(1 + β)/2.
            ((u64::from(cwnd) * u64::from(BETA_SCALE + self.params.beta)) / u64::from(2 * BETA_SCALE)) as u32
        } else {
            cwnd
        };
        // RFC 9438 4.6: ssthresh = cwnd·β, at least 2.
        ((u64::from(cwnd) * u64::from(self.params.beta) / u64::from(BETA_SCALE)) as u32).max(2)
    }
}

impl Congestion for Cubic {
    fn on_ack(&mut self, ack: &Ack) {
        let now_j = self.jiffies(ack.now);
        if let Some(rtt) = ack.rtt {
            self.on_rtt(ack.now, now_j, rtt, ack.round);
        }
        // cubictcp_cong_avoid
        if !is_cwnd_limited(&self.window, ack.usage) {
            return;
        }
        let mut acked = ack.acked;
        if self.window.in_slow_start() {
            acked = self.window.slow_start(acked);
            if acked == 0 {
                return;
            }
        }
        self.update(now_j, self.window.cwnd, acked);
        let cnt = self.ca.cnt;
        self.window.cong_avoid_ai(cnt, acked);
    }

    fn on_loss(&mut self, _now: SimTime, _flight_size: u32) {
        // tcp_init_cwnd_reduction, and where tcp_end_cwnd_reduction leaves cwnd.
        self.window.ssthresh = self.recalc_ssthresh();
        self.window.cwnd_cnt = 0;
        self.window.cwnd = self.window.ssthresh;
    }

    fn on_rto(&mut self, t: &Timeout) {
        if t.new_episode {
            self.window.ssthresh = self.recalc_ssthresh();
        }
        // tcp_enter_loss: cwnd = tcp_packets_in_flight(tp) + 1.
        self.window.cwnd = t.in_flight.saturating_add(1);
        self.window.cwnd_cnt = 0;
        // tcp_set_ca_state(sk, TCP_CA_Loss) → cubictcp_state → bictcp_reset: W_max is
        // forgotten, the next epoch starts from cwnd.
        self.ca = State::default();
        self.hystart = HyStart::default();
    }

    fn on_send_after_idle(&mut self, now: SimTime, idle: SimDuration, rto: SimDuration) {
        // tcp_slow_start_after_idle_check, when data is queued with nothing in flight.
        if self.params.slow_start_after_idle && idle > rto {
            self.window.linux_restart(idle, rto);
        }
        // cubictcp_cwnd_event(CA_EVENT_TX_START): shift the epoch by the idle time so the
        // window keeps to the cubic curve, never past now.
        let now_j = self.jiffies(now);
        let last_send_j = self.jiffies(SimTime(now.as_nanos().saturating_sub(idle.as_nanos())));
        let delta = now_j.wrapping_sub(last_send_j) as i32;
        if let Some(epoch) = self.ca.epoch_start
            && delta > 0
        {
            let mut shifted = epoch.wrapping_add(delta as u32);
            // if (after(ca->epoch_start, now)) ca->epoch_start = now;
            if (shifted.wrapping_sub(now_j) as i32) > 0 {
                shifted = now_j;
            }
            self.ca.epoch_start = Some(shifted);
        }
    }

    fn cwnd(&self) -> u32 {
        self.window.cwnd
    }

    fn ssthresh(&self) -> u32 {
        self.window.ssthresh
    }

    fn set_cwnd(&mut self, cwnd: u32) {
        self.window.set_cwnd(cwnd);
    }

    fn undo(&mut self, prior_cwnd: u32, prior_ssthresh: u32) {
        self.window.undo(prior_cwnd, prior_ssthresh);
    }
}
