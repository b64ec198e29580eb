//! The one server every client connects to, sans-IO: the world tells it when a
//! connection attempt's SYN arrives, and it answers at once with the attempt's whole fate
//! on the server's side, up to the server's HTTP/2 SETTINGS. O(1) time per call (amortized
//! over the schedule, which a cursor walks once), O(1) memory in clients: no per-client
//! storage, no events of its own.
//!
//! # The contract with the world
//!
//! - `on_connect(now)` is called when a SYN reaches the server, with non-decreasing `now`
//!   (the world's event order). Each SYN is one call: if the world models SYN
//!   retransmissions, each retransmitted SYN is a call of its own.
//! - The answer is final for everything **before SETTINGS**, restarts and outages
//!   included: an `Accepted` answer's `settings_at` is always a time the server is up,
//!   with no restart or outage in `(now, settings_at]`. Nothing is promised past the
//!   next time the server goes down.
//! - **After SETTINGS** the connection is open until the first of: the flap drop
//!   (`dropped_at`), the next restart (`drop_all_times`, scheduled by the world: every
//!   connection whose SETTINGS were sent before the restart and that is still open), or
//!   the client closing it. `dropped_at` is `None` when a restart drops the connection
//!   first, so the world never sees two drops for one connection.
//! - **Wasted work** is the world's to count, because only the world knows the client's
//!   deadline: an `Accepted` answer is completed by the server at `settings_at` whatever
//!   the client does, so SETTINGS that reach the client after its connect deadline are
//!   wasted work (and so is a `Reset` or `Lost` handshake: it held a token and a queue
//!   place). `stats()` gives the server's side: handshakes, queueing, the longest wait.
//!
//! # Semantics
//!
//! - **Down.** Restarts and outages are half-open windows `[at, at + down)`. A SYN that
//!   arrives while the server is down is refused (`down_behavior = "refuse"`: RST) or
//!   unanswered (`"blackhole"`). Both kinds of window empty the accept queue and leave the
//!   token bucket full when the server comes back (the backlog was discarded; a restarted
//!   process starts afresh). A restart with `down = "0s"` drops connections and empties
//!   the queue but is never seen as down; an outage of length 0 has no effect.
//! - **Restart vs outage.** A restart drops every open connection (the process died); an
//!   outage does not (the listener is closed, or the host is unreachable, and comes back):
//!   established connections survive it, which is what makes it different from a restart.
//!   For an outage that kills connections, write a restart.
//! - **Handshakes caught by a down time.** A handshake still in the queue or in
//!   `handshake_time` when the server goes down at `W` never gets SETTINGS. A restart
//!   resets it at `W` (`Reset`), as it does every other connection; an outage resets it
//!   at `W` with `down_behavior = "refuse"` (closing a listening socket resets the
//!   connections in its accept queue) and loses it silently with `"blackhole"` (`Silent`,
//!   reason `Lost`). SETTINGS due exactly at `W` are not sent.
//! - **Capacity** (`accept_rate`): a token bucket of `burst` tokens refilled at the rate,
//!   with a FIFO queue of `accept_queue` handshakes in front (see `capacity` for the
//!   integer arithmetic and its single rounding: token times rounded up to the ns). The
//!   SYN-ACK goes out at once (the kernel answers the SYN); the token is the server
//!   taking the connection from its accept queue; SETTINGS leave `handshake_time` after
//!   the token. A SYN that finds the queue full is refused (RST) or dropped
//!   (`overload`). Without `accept_rate` every handshake takes its token at once.
//! - **Never-SETTINGS** (`send_settings = false`): handshakes are admitted exactly as
//!   above (they use capacity), and then SETTINGS never come. The answer is
//!   `Silent(NoSettings)`, or `Reset` at the next restart if there is one: the restart
//!   drops the hung connection, and the world needs no other record of it.
//! - **Flapping** (`drop_after`): an accepted connection is dropped `drop_after` after its
//!   SETTINGS are sent, outages or not, unless a restart comes first (at or before).

mod capacity;
mod config;
mod schedule;
mod speed;
mod workers;

pub use capacity::{AcceptQueue, Admitted, QueueFull};
pub use config::{
    Brownout, DownBehavior, MAX_ACCEPT_RATE, MIN_ACCEPT_RATE, Outage, Overload, Restart, ServerConfig, ServiceDist,
};
pub use schedule::{DownKind, DownWindow, ServerSchedule};
pub use speed::Speed;
pub use workers::{Admit, Workers};

use serde::Serialize;

use crate::engine::time::{SimDuration, SimTime};

/// What the server does with one SYN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConnectAnswer {
    /// RST: the client learns at once (after the reply's path delay) that the attempt failed.
    Refused { reason: RefuseReason },
    /// No answer after the SYN-ACK, or none at all (see `SilentReason::syn_acked`): the
    /// client's attempt ends at its own connect deadline.
    Silent { reason: SilentReason },
    /// SYN-ACK at once; SETTINGS sent at `settings_at` (after queueing and
    /// `handshake_time`), a time the server is up. With `drop_after`, the connection is
    /// dropped at `dropped_at`, unless a restart drops it first (then `None`).
    Accepted { settings_at: SimTime, dropped_at: Option<SimTime> },
    /// SYN-ACK at once, then no SETTINGS: the connection is reset at `at` (> now), when the
    /// server goes down while the handshake waits or is processed, or at the next restart
    /// when SETTINGS never come. The client learns it at `at` plus the reply's path
    /// delay, if its deadline has not passed by then.
    Reset { at: SimTime, reason: ResetReason },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RefuseReason {
    /// The server is down and `down_behavior = "refuse"`.
    Down,
    /// The accept queue is full and `overload = "refuse"`.
    Overload,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SilentReason {
    /// The server is down and `down_behavior = "blackhole"`: no SYN-ACK.
    Down,
    /// The accept queue is full and `overload = "drop"`: no SYN-ACK.
    Overload,
    /// `send_settings = false`: SYN-ACK, then nothing.
    NoSettings,
    /// SYN-ACK, then an outage with `down_behavior = "blackhole"` began before SETTINGS:
    /// the handshake is lost and nothing more comes.
    Lost,
}

impl SilentReason {
    /// Whether the SYN got a SYN-ACK (the client's TCP handshake completes at once).
    pub fn syn_acked(self) -> bool {
        matches!(self, SilentReason::NoSettings | SilentReason::Lost)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ResetReason {
    /// A restart, at `at`.
    Restart,
    /// An outage with `down_behavior = "refuse"` began at `at`.
    Outage,
}

impl ConnectAnswer {
    /// Whether the SYN got a SYN-ACK: the client's TCP handshake completes one path RTT
    /// after its SYN, whatever happens to SETTINGS.
    pub fn syn_acked(&self) -> bool {
        match self {
            ConnectAnswer::Refused { .. } => false,
            ConnectAnswer::Silent { reason } => reason.syn_acked(),
            ConnectAnswer::Accepted { .. } | ConnectAnswer::Reset { .. } => true,
        }
    }

    /// When SETTINGS leave the server, if they ever do.
    pub fn settings_at(&self) -> Option<SimTime> {
        match *self {
            ConnectAnswer::Accepted { settings_at, .. } => Some(settings_at),
            _ => None,
        }
    }
}

/// The server's side of a run. Every `on_connect` call lands in exactly one of the nine
/// answer counters (`answers()` is their sum and equals `connects`); the rest describe
/// the work done.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ServerStats {
    /// `on_connect` calls: SYNs that reached the server.
    pub connects: u64,
    pub accepted: u64,
    pub refused_down: u64,
    pub refused_overload: u64,
    pub silent_down: u64,
    /// SYNs dropped on a full queue (`overload = "drop"`).
    pub silent_overload: u64,
    pub silent_no_settings: u64,
    pub silent_lost: u64,
    pub reset_restart: u64,
    pub reset_outage: u64,
    /// Handshakes admitted: they got (or were promised) a token and a place in the queue.
    /// Every answer but `Refused` and `Silent(Down | Overload)`.
    pub handshakes: u64,
    /// Of those, the ones that had to wait for their token.
    pub queued: u64,
    /// The longest the queue has been (handshakes waiting for a token, right after an arrival).
    pub max_queue_len: u64,
    /// The longest wait from SYN to token.
    pub max_queue_wait: SimDuration,
    /// `Accepted` answers with a `dropped_at` (flapping).
    pub flap_drops: u64,
}

impl ServerStats {
    /// The sum of the nine answer counters; equals `connects`.
    pub fn answers(&self) -> u64 {
        self.accepted
            + self.refused_down
            + self.refused_overload
            + self.silent_down
            + self.silent_overload
            + self.silent_no_settings
            + self.silent_lost
            + self.reset_restart
            + self.reset_outage
    }
}

/// Runtime state of the server for one replication: the schedule (fixed size), the
/// bucket (two numbers) and counters. Nothing grows with calls.
#[derive(Clone, Debug)]
pub struct Server {
    schedule: ServerSchedule,
    queue: Option<AcceptQueue>,
    down_behavior: DownBehavior,
    overload: Overload,
    handshake_time: SimDuration,
    drop_after: Option<SimDuration>,
    send_settings: bool,
    /// Down windows begun (start ≤ the last arrival): a cursor into the schedule.
    begun: usize,
    stats: ServerStats,
}

impl Server {
    /// Assumes `config` is validated (checked in debug builds). An invalid config does
    /// not panic in release builds, but its behaviour is not specified.
    pub fn new(config: &ServerConfig) -> Server {
        debug_assert!(config.validate().is_empty(), "Server::new on an invalid config: {:?}", config.validate());
        Server {
            schedule: ServerSchedule::new(config),
            queue: (config.accept_rate).map(|rate| AcceptQueue::new(rate, config.burst, config.accept_queue)),
            down_behavior: config.down_behavior,
            overload: config.overload,
            handshake_time: config.handshake_time,
            drop_after: config.drop_after,
            send_settings: config.send_settings,
            begun: 0,
            stats: ServerStats::default(),
        }
    }

    /// A connection attempt's SYN reaches the server at `now`; calls come in
    /// non-decreasing `now`.
    pub fn on_connect(&mut self, now: SimTime) -> ConnectAnswer {
        let answer = self.answer(now);
        self.count(&answer);
        answer
    }

    fn answer(&mut self, now: SimTime) -> ConnectAnswer {
        // Walk past the windows that have begun since the last call; each one emptied the
        // queue and (by the time the server is back) filled the bucket.
        let begun = self.begun;
        while self.schedule.window(self.begun).is_some_and(|w| w.start <= now) {
            self.begun += 1;
        }
        if self.begun != begun
            && let Some(q) = &mut self.queue
        {
            q.reset();
        }
        if self.schedule.window_containing(self.begun, now).is_some() {
            return match self.down_behavior {
                DownBehavior::Refuse => ConnectAnswer::Refused { reason: RefuseReason::Down },
                DownBehavior::Blackhole => ConnectAnswer::Silent { reason: SilentReason::Down },
            };
        }

        let start = match &mut self.queue {
            None => now,
            Some(q) => match q.admit(now) {
                Ok(admitted) => {
                    if admitted.queue_len > 0 {
                        self.stats.queued += 1;
                        self.stats.max_queue_len = self.stats.max_queue_len.max(admitted.queue_len);
                        let wait = admitted.start.saturating_since(now);
                        self.stats.max_queue_wait = self.stats.max_queue_wait.max(wait);
                    }
                    admitted.start
                }
                Err(QueueFull) => {
                    return match self.overload {
                        Overload::Refuse => ConnectAnswer::Refused { reason: RefuseReason::Overload },
                        Overload::Drop => ConnectAnswer::Silent { reason: SilentReason::Overload },
                    };
                }
            },
        };
        self.stats.handshakes += 1;
        // When SETTINGS would leave (or, without SETTINGS, the handshake would be done).
        let done = start.saturating_add(self.handshake_time);

        // The next window begins after `now` (the server is up at `now`); if it begins at
        // or before `done`, the handshake is caught by it.
        if let Some(w) = self.schedule.window(self.begun)
            && w.start <= done
        {
            return match (w.kind, self.down_behavior) {
                (DownKind::Restart, _) => ConnectAnswer::Reset { at: w.start, reason: ResetReason::Restart },
                (DownKind::Outage, DownBehavior::Refuse) => {
                    ConnectAnswer::Reset { at: w.start, reason: ResetReason::Outage }
                }
                (DownKind::Outage, DownBehavior::Blackhole) => ConnectAnswer::Silent { reason: SilentReason::Lost },
            };
        }
        // No window in (now, done]: the first restart after `now` is after `done`.
        let restart = self.schedule.restart_from(self.begun);
        if !self.send_settings {
            return match restart {
                Some(at) => ConnectAnswer::Reset { at, reason: ResetReason::Restart },
                None => ConnectAnswer::Silent { reason: SilentReason::NoSettings },
            };
        }
        let dropped_at =
            self.drop_after.map(|d| done.saturating_add(d)).filter(|&drop| restart.is_none_or(|r| drop < r));
        ConnectAnswer::Accepted { settings_at: done, dropped_at }
    }

    fn count(&mut self, answer: &ConnectAnswer) {
        let s = &mut self.stats;
        s.connects += 1;
        let counter = match *answer {
            ConnectAnswer::Accepted { dropped_at, .. } => {
                s.flap_drops += u64::from(dropped_at.is_some());
                &mut s.accepted
            }
            ConnectAnswer::Refused { reason } => match reason {
                RefuseReason::Down => &mut s.refused_down,
                RefuseReason::Overload => &mut s.refused_overload,
            },
            ConnectAnswer::Silent { reason } => match reason {
                SilentReason::Down => &mut s.silent_down,
                SilentReason::Overload => &mut s.silent_overload,
                SilentReason::NoSettings => &mut s.silent_no_settings,
                SilentReason::Lost => &mut s.silent_lost,
            },
            ConnectAnswer::Reset { reason, .. } => match reason {
                ResetReason::Restart => &mut s.reset_restart,
                ResetReason::Outage => &mut s.reset_outage,
            },
        };
        *counter += 1;
    }

    /// Times at which every open connection is dropped (restarts), in order — the world
    /// schedules them. They concern connections whose SETTINGS were sent; handshakes in
    /// progress learn their fate from `on_connect`.
    pub fn drop_all_times(&self) -> Vec<SimTime> {
        self.schedule.restarts().to_vec()
    }

    /// Whether the server is up at `t` (any `t`, not only the current one).
    pub fn is_up(&self, t: SimTime) -> bool {
        self.schedule.down_at(t).is_none()
    }

    /// Restarts and outages, resolved.
    pub fn schedule(&self) -> &ServerSchedule {
        &self.schedule
    }

    pub fn stats(&self) -> ServerStats {
        self.stats
    }

    /// Handshakes waiting for a token at `t` (≥ the last arrival), 0 without `accept_rate`.
    pub fn queue_len(&self, t: SimTime) -> u64 {
        match &self.queue {
            Some(q) if self.schedule.begun_at(t) == self.begun => q.waiting(t),
            _ => 0, // unlimited, or a down time has emptied the queue since
        }
    }

    /// Bytes this server holds on the heap: the schedule's, fixed at construction.
    pub fn heap_bytes(&self) -> usize {
        self.schedule.heap_bytes()
    }
}

#[cfg(test)]
mod tests;
