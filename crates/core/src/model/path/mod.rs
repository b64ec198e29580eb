//! A network path between one client and the server, sans-IO: the caller says when a
//! packet is sent and passes the random streams; the path answers when it arrives, or
//! that it is lost. The two directions are independent.
//!
//! # Semantics
//!
//! - **Delay.** A packet sent at `now` arrives at `now + base_rtt_at(now) / 2 + extra`,
//!   where `extra` is drawn from the direction's delay distribution. Half the RTT is
//!   rounded down to the nanosecond.
//! - **Everything is judged at send time.** The RTT in force when a packet is sent
//!   decides its delay, so right after a drop in RTT a later packet can overtake an
//!   earlier one. A blackout drops the packets *sent* in `[at, at + duration)` in either
//!   direction; packets already in flight when it starts still arrive (the outage is on
//!   the sender's side of the link, and no per-packet state is needed to model it).
//! - **Reordering.** Delays are independent draws, so packets may arrive out of order.
//!   `fifo = true` makes each direction first-in first-out (arrival = max(arrival,
//!   previous arrival in that direction)); it is off by default because it changes the
//!   delay distribution the scenario asked for (upwards).
//! - **Gilbert–Elliott** chains start in their stationary distribution (drawn with the
//!   first packet), advance one step per packet sent, lost or not, blackout or not, and
//!   judge each packet in the state it is sent in.
//!
//! # Draw contract (common random numbers)
//!
//! Every `transmit` call takes exactly one `u64` from the delay stream and one from the
//! loss stream of its direction, before deciding anything, whatever the distribution,
//! loss model or schedule, and whether or not the packet is lost. So the k-th packet of a
//! direction always meets the k-th draw of each stream: variants that differ only in
//! loss, blackouts or delay parameters see the same delays and the same loss coins packet
//! for packet, until their own dynamics make them send different packets. Delays are
//! sampled by inversion (one uniform each, see `delay`), and losses by comparing one
//! uniform with p, so a larger delay parameter never shortens a packet's delay and a
//! packet lost at Bernoulli p is lost at every larger p.
//!
//! - **Scripted events** (`events`) act after the draws, on the packet's number in its
//!   direction and its send time: a scripted drop loses it, a delay adds to its arrival
//!   (before `fifo` orders it), a duplicate delivers it twice.
//!
//! # Sharing
//!
//! The immutable part (`PathSpec`: distributions, loss thresholds, schedule, script) sits
//! behind an `Arc`; a `Path` adds only the per-direction chain state, last arrival and
//! packet count (48 bytes).
//! Build one `Path` (or `PathSpec`) per scenario and clone it for each client.

mod config;
mod delay;
pub mod events;
mod loss;
mod schedule;

pub use config::{Blackout, DelayConfig, DirectionOverride, LossConfig, PathConfig, RttChange};
pub use events::{PathEvent, Script};
pub use schedule::{PathSchedule, Window};

use std::sync::Arc;

use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::engine::rng::Purpose;
use crate::engine::time::{SimDuration, SimTime};
pub(crate) use delay::open_unit;
use loss::{ChainState, LossModel};

/// Which way a packet travels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Client → server.
    Forward,
    /// Server → client.
    Reverse,
}

impl Direction {
    pub const BOTH: [Direction; 2] = [Direction::Forward, Direction::Reverse];

    /// The stream `transmit` expects as `delay_rng` for this direction.
    pub fn delay_purpose(self) -> Purpose {
        match self {
            Direction::Forward => Purpose::DelayForward,
            Direction::Reverse => Purpose::DelayReverse,
        }
    }

    /// The stream `transmit` expects as `loss_rng` for this direction.
    pub fn loss_purpose(self) -> Purpose {
        match self {
            Direction::Forward => Purpose::LossForward,
            Direction::Reverse => Purpose::LossReverse,
        }
    }

    pub fn opposite(self) -> Direction {
        match self {
            Direction::Forward => Direction::Reverse,
            Direction::Reverse => Direction::Forward,
        }
    }

    fn index(self) -> usize {
        match self {
            Direction::Forward => 0,
            Direction::Reverse => 1,
        }
    }
}

#[derive(Debug)]
struct DirectionSpec {
    delay: DelayConfig,
    loss: LossModel,
}

/// The immutable, shareable part of a path, resolved from a validated `PathConfig`.
#[derive(Debug)]
pub struct PathSpec {
    directions: [DirectionSpec; 2],
    schedule: PathSchedule,
    fifo: bool,
    script: Script,
}

impl PathSpec {
    /// Assumes `config` is validated (checked in debug builds). An invalid config does
    /// not panic in release builds, but its behaviour is not specified.
    pub fn new(config: &PathConfig) -> PathSpec {
        debug_assert!(config.validate().is_empty(), "PathSpec::new on an invalid config: {:?}", config.validate());
        let direction =
            |dir| DirectionSpec { delay: config.delay_for(dir).clone(), loss: LossModel::new(config.loss_for(dir)) };
        PathSpec {
            directions: [direction(Direction::Forward), direction(Direction::Reverse)],
            schedule: PathSchedule::new(config),
            fifo: config.fifo,
            script: Script::new(&config.event),
        }
    }

    pub fn schedule(&self) -> &PathSchedule {
        &self.schedule
    }

    pub fn script(&self) -> &Script {
        &self.script
    }

    /// Whether a client's `Path` carries state of its own (a Gilbert–Elliott chain, FIFO
    /// arrival order or a count of packets for the script). Without, one `Path` can serve
    /// every client, which saves a world of a million clients 48 bytes each.
    pub fn has_client_state(&self) -> bool {
        self.fifo
            || self.script.counts_packets()
            || self.directions.iter().any(|d| matches!(d.loss, LossModel::GilbertElliott { .. }))
    }
}

/// The path of one client: a shared `PathSpec` plus the little state that is the
/// client's own.
#[derive(Clone, Debug)]
pub struct Path {
    spec: Arc<PathSpec>,
    /// Per direction; only read when `fifo` is on.
    last_arrival: [SimTime; 2],
    chain: [ChainState; 2],
    /// Packets sent so far per direction, for the script's `nth`.
    sent: [u64; 2],
}

/// Where a packet, and its scripted duplicate if any, arrives; `None` if it is lost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Delivery {
    pub arrival: Option<SimTime>,
    pub duplicate: bool,
}

impl Delivery {
    /// Each arrival, the original first: none, one, or two at the same instant.
    pub fn arrivals(self) -> impl Iterator<Item = SimTime> {
        let copies = if self.duplicate { 2 } else { 1 };
        self.arrival.into_iter().flat_map(move |t| std::iter::repeat_n(t, copies))
    }
}

impl Path {
    /// A fresh path. Assumes `config` is validated. For many clients, build one path and
    /// clone it, or use `from_spec`, so that they share one `PathSpec`.
    pub fn new(config: &PathConfig) -> Path {
        Path::from_spec(Arc::new(PathSpec::new(config)))
    }

    pub fn from_spec(spec: Arc<PathSpec>) -> Path {
        Path { spec, last_arrival: [SimTime::ZERO; 2], chain: [ChainState::default(); 2], sent: [0; 2] }
    }

    pub fn spec(&self) -> &Arc<PathSpec> {
        &self.spec
    }

    /// Decides the fate of a packet sent at `now` in `dir`: its arrival time, or `None`
    /// if it is lost. `delay_rng` and `loss_rng` are this client's streams for
    /// `dir.delay_purpose()` and `dir.loss_purpose()`; exactly one draw is taken from
    /// each (see the module docs). With `fifo`, sends in one direction must come in
    /// time order. A heavy-tailed delay past the end of time saturates at `SimTime::MAX`.
    pub fn transmit<D: Rng + ?Sized, L: Rng + ?Sized>(
        &mut self,
        dir: Direction,
        now: SimTime,
        delay_rng: &mut D,
        loss_rng: &mut L,
    ) -> Option<SimTime> {
        self.send(dir, now, delay_rng, loss_rng).arrival
    }

    /// `transmit`, and whether the script delivers the packet twice: a world that can
    /// receive a copy uses this one.
    pub fn send<D: Rng + ?Sized, L: Rng + ?Sized>(
        &mut self,
        dir: Direction,
        now: SimTime,
        delay_rng: &mut D,
        loss_rng: &mut L,
    ) -> Delivery {
        let d = dir.index();
        let spec = &self.spec.directions[d];
        // Both draws happen before any early return: the draw contract.
        let extra = spec.delay.from_uniform(open_unit(delay_rng.next_u64()));
        let lost = spec.loss.is_lost(&mut self.chain[d], loss_rng.next_u64());
        self.sent[d] += 1;
        let fate = self.spec.script.fate(dir, self.sent[d], now);
        let schedule = &self.spec.schedule;
        if lost || fate.drop || schedule.in_blackout(now) {
            return Delivery { arrival: None, duplicate: false };
        }
        let one_way = SimDuration(schedule.base_rtt_at(now).0 / 2);
        let mut arrival = now.saturating_add(one_way).saturating_add(extra).saturating_add(fate.delay);
        if self.spec.fifo {
            arrival = arrival.max(self.last_arrival[d]);
            self.last_arrival[d] = arrival;
        }
        Delivery { arrival: Some(arrival), duplicate: fate.duplicate }
    }

    /// The base RTT in force for packets sent at `t`.
    pub fn base_rtt_at(&self, t: SimTime) -> SimDuration {
        self.spec.schedule.base_rtt_at(t)
    }

    /// Whether packets sent at `t` are lost to a blackout.
    pub fn in_blackout(&self, t: SimTime) -> bool {
        self.spec.schedule.in_blackout(t)
    }

    /// When the link next comes back, seen from `t`: the end of the blackout containing
    /// `t`, else the end of the next one, else `None`.
    pub fn blackout_end_after(&self, t: SimTime) -> Option<SimTime> {
        self.spec.schedule.blackout_end_after(t)
    }
}

#[cfg(test)]
mod tests;
