//! How the server answers one attempt of a `[calls]` client: when the attempt ends, how,
//! and what work the server did for it. The server's down times come from [`Server`];
//! brownouts fail a share of requests at once; the workers ([`Workers`]), when the
//! server has them, queue and serve the rest.
//!
//! | server | the attempt |
//! |---|---|
//! | down, `refuse` | fails `fail_time` later with `fail_with` |
//! | down, `blackhole` | times out at `timeout` |
//! | up, bad request (`permanent_fraction`) | fails `fail_time` later with `permanent_with` |
//! | brownout, drawn to fail | fails `fail_time` later with `fail_with` |
//! | workers, queue full | fails `fail_time` later with `fail_with` |
//! | workers | served over `[start, end)`; the reply `attempt_time` after `end` |
//! | no workers | the reply `attempt_time` after the handshake (the old capacity model) |
//!
//! A reply later than the timeout is a timeout with the work done; a restart before the
//! reply drops the connection (with the work done if it was). The server finishes the
//! work of an attempt whose client stopped waiting: that work is wasted.

use rand::RngExt;

use crate::engine::rng::CounterRng;
use crate::engine::time::{SimDuration, SimTime};
use crate::model::retry::Outcome;
use crate::model::server::{Admit, Brownout, ConnectAnswer, Server, ServerConfig, ServiceDist, Speed, Workers};
use crate::worlds::calls::CallsConfig;

/// The server of a `[calls]` world.
pub struct CallServer {
    server: Server,
    workers: Option<Workers>,
    service_time: SimDuration,
    service: ServiceDist,
    brownouts: Vec<Brownout>,
    /// Server-side draws: brownout failures and service times, in arrival order.
    rng: CounterRng,
    /// The last arrival, to see restarts that happened since.
    last: SimTime,
}

/// One attempt's fate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Answer {
    pub end: SimTime,
    pub outcome: Outcome,
    /// The worker time spent on it, `[start, end)`; wasted if the client stopped waiting
    /// before the reply.
    pub work: Option<(SimTime, SimTime)>,
    /// When the server did the request's work, if it did (a duplicate if retried).
    pub done_at: Option<SimTime>,
    /// Refused by the server (down, brownout, full queue) or failed as a bad request.
    pub rejected: bool,
}

impl CallServer {
    /// The server's first up period after being down (see `ServerSchedule::first_up`).
    pub fn first_up(&self) -> Option<(SimTime, SimTime)> {
        self.server.schedule().first_up()
    }

    pub fn new(config: &ServerConfig, rng: CounterRng) -> CallServer {
        CallServer {
            server: Server::new(config),
            workers: config.concurrency.map(|c| Workers::new(c, config.queue).with_speed(Speed::new(&config.brownout))),
            service_time: config.service_time.unwrap_or(SimDuration::ZERO),
            service: config.service,
            brownouts: config.brownout.clone(),
            rng,
            last: SimTime::ZERO,
        }
    }

    pub fn has_workers(&self) -> bool {
        self.workers.is_some()
    }

    /// Requests waiting for a worker at `now`.
    pub fn queued(&mut self, now: SimTime) -> usize {
        self.workers.as_mut().map_or(0, |w| w.queued(now))
    }

    fn brownout_at(&self, t: SimTime) -> Option<&Brownout> {
        let i = self.brownouts.partition_point(|b| b.at.0 <= t.0);
        i.checked_sub(1).map(|i| &self.brownouts[i]).filter(|b| t.0 < b.end().0)
    }

    /// One request's work at full speed; a brownout's slowdown stretches it only while
    /// the worker is inside the window ([`Speed`]).
    fn draw_service(&mut self) -> SimDuration {
        let mean = self.service_time.as_nanos() as f64;
        let ns = match self.service {
            ServiceDist::Fixed => mean,
            // Inversion, one draw per value; libm's log is the same on every machine.
            ServiceDist::Exponential => -libm::log(1.0 - self.rng.random::<f64>()) * mean,
        };
        SimDuration(ns.round().min(u64::MAX as f64) as u64)
    }

    /// The attempt of a call (`bad`: a bad request) that starts at `now`, non-decreasing
    /// across calls.
    pub fn answer(&mut self, now: SimTime, cfg: &CallsConfig, bad: bool) -> Answer {
        let timeout_at = now.saturating_add(cfg.timeout);
        let failed = |end: SimTime, outcome| Answer { end, outcome, work: None, done_at: None, rejected: true };
        let timed_out = |done_at: Option<SimTime>, work| Answer {
            end: timeout_at,
            outcome: Outcome::Timeout { applied: done_at.is_some() },
            work,
            done_at,
            rejected: false,
        };
        if let Some(w) = &mut self.workers
            && let Some(r) = self.server.schedule().restart_after(self.last)
            && r <= now
        {
            let back = self.server.schedule().down_at(r).map_or(r, |d| d.end);
            w.restart(back);
        }
        self.last = now;
        let fail_at = now.saturating_add(cfg.fail_time());
        let (settings_at, dropped_at) = match self.server.on_connect(now) {
            ConnectAnswer::Refused { .. } => return failed(fail_at, cfg.fail_with.outcome),
            ConnectAnswer::Silent { .. } => return timed_out(None, None),
            ConnectAnswer::Reset { at, .. } if at < timeout_at => {
                return Answer { end: at, outcome: Outcome::Dropped { applied: false }, ..timed_out(None, None) };
            }
            ConnectAnswer::Reset { .. } => return timed_out(None, None),
            ConnectAnswer::Accepted { settings_at, dropped_at } => (settings_at, dropped_at),
        };
        if bad {
            return failed(fail_at, cfg.permanent_with.outcome);
        }
        if let Some(b) = self.brownout_at(now).copied() {
            let fails = b.fail_fraction >= 1.0 || (b.fail_fraction > 0.0 && self.rng.random::<f64>() < b.fail_fraction);
            if fails {
                return failed(fail_at, cfg.fail_with.outcome);
            }
        }
        let (done, work) = if self.workers.is_some() {
            let service = self.draw_service();
            match self.workers.as_mut().map(|w| w.on_request(settings_at, service)) {
                Some(Admit::Served { start, end }) => (end, Some((start, end))),
                _ => return failed(fail_at, cfg.fail_with.outcome),
            }
        } else {
            (settings_at, None)
        };
        let reply = done.saturating_add(cfg.attempt_time);
        let restart = self.server.schedule().restart_after(settings_at);
        let drop = [dropped_at, restart].into_iter().flatten().filter(|&d| d < reply).min();
        // A restart before the work is done loses it (workers only: without them the work
        // is done at the handshake).
        let done_by = |d: SimTime| (done <= d).then_some(done);
        match drop {
            Some(d) if d < timeout_at => Answer {
                end: d,
                outcome: Outcome::Dropped { applied: done <= d },
                work: work.map(|(s, e)| (s.min(d), e.min(d))),
                done_at: done_by(d),
                rejected: false,
            },
            Some(d) => timed_out(done_by(d), work.map(|(s, e)| (s.min(d), e.min(d)))),
            None if reply <= timeout_at => {
                Answer { end: reply, outcome: Outcome::Success, work, done_at: Some(done), rejected: false }
            }
            None => timed_out(Some(done), work),
        }
    }
}
