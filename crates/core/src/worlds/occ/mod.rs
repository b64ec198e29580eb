//! Optimistic-concurrency contention (Brooker 2015): N clients race to update one row,
//! wired into the engine. The rules are `model::occ`'s; this module owns the message
//! hops and the event queue, as the original's `run_sim` and `Net` do
//! (aws-samples/aws-arch-backoff-simulator, `src/backoff_simulator.py`, l. 11–19 and
//! l. 117–128).
//!
//! One write call is four events, each a message arriving after one hop:
//! the read at the server, its reply at the client, the write at the server, its reply
//! at the client. A failed client's next read reaches the server one hop plus its
//! backoff after the reply. So a run that ends with every client done has handled
//! exactly 4 × calls events, and ends when the last client learns of its success, which
//! is the original's completion time (`run_sim` returns the time of the last message).
//!
//! Random streams, per client and independent of every other client: hop delays from
//! `(replication, client, DelayForward)`, one draw per hop in the order the client's
//! messages are sent (a client has one message in flight at a time, so that order is
//! its own); backoff jitter from `(replication, client, Jitter)`. The original draws
//! everything from Python's one global `random`; the distribution is the same, the
//! numbers are not, and here strategies see the same hop delays (common random numbers).
//! The folded normal is sampled by inversion (one uniform per hop), where Python's
//! `normalvariate` uses Kinderman–Monahan rejection.

mod config;
pub use config::*;

use rand::Rng;

use crate::engine::rng::{Purpose, SimRng};
use crate::engine::run::{EngineError, Scheduler, World, run};
use crate::engine::time::{SimDuration, SimTime};
use crate::metrics::{MetricValue, ReplicationResult};
use crate::model::config_error::ConfigErrors;
use crate::model::occ::{Backoff, Client, Row};
use crate::model::path::{DelayConfig, open_unit};
use crate::worlds::catalogue;
use crate::worlds::estimate::{Estimate, bytes_of, queue_bytes};
use crate::worlds::{ModelSection, Section, Shared, Use};

use super::Job;

mod estimate;
pub mod metrics;

#[derive(Clone, Copy, Debug)]
enum Ev {
    /// A client's read reaches the server.
    Read(u32),
    /// The read's reply, carrying the version, reaches the client.
    ReadReply(u32, u64),
    /// A client's write, conditioned on a version, reaches the server.
    Write(u32, u64),
    /// The write's reply (success or not) reaches the client.
    WriteReply(u32, bool),
}

struct OccWorld<'a> {
    backoff: Backoff,
    hop: &'a DelayConfig,
    row: Row,
    clients: Vec<Client>,
    hops: Vec<SimRng>,
    jitter: Vec<SimRng>,
    /// Writes that reached the server.
    calls: u64,
    done: u32,
    /// When the last client learned of its success.
    last_success: SimTime,
}

impl OccWorld<'_> {
    /// When a message client `c` sends (or the server sends to it) at `at` arrives.
    fn hop(&mut self, c: u32, at: SimTime) -> SimTime {
        let delay = self.hop.from_uniform(open_unit(self.hops[c as usize].next_u64()));
        at.saturating_add(delay)
    }
}

impl World for OccWorld<'_> {
    type Event = Ev;

    fn handle(&mut self, event: Ev, sched: &mut Scheduler<Ev>) {
        let now = sched.now();
        match event {
            Ev::Read(c) => {
                // l. 91–92: the version as of now, one hop back.
                let version = self.row.read();
                let at = self.hop(c, now);
                sched.at(at, Ev::ReadReply(c, version));
            }
            Ev::ReadReply(c, version) => {
                // l. 106–107: a write conditioned on the version read, one hop out.
                let condition = self.clients[c as usize].on_read_reply(version);
                let at = self.hop(c, now);
                sched.at(at, Ev::Write(c, condition));
            }
            Ev::Write(c, condition) => {
                // l. 79–88: every write is a call; it wins only if nobody won since its read.
                self.calls += 1;
                let success = self.row.write(condition);
                let at = self.hop(c, now);
                sched.at(at, Ev::WriteReply(c, success));
            }
            Ev::WriteReply(c, success) => {
                let client = &mut self.clients[c as usize];
                match client.on_write_reply(&self.backoff, success, &mut self.jitter[c as usize]) {
                    None => {
                        self.done += 1;
                        self.last_success = now;
                    }
                    // l. 112: the next read reaches the server after one hop plus the backoff.
                    Some(sleep) => {
                        let at = self.hop(c, now).saturating_add(sleep);
                        sched.at(at, Ev::Read(c));
                    }
                }
            }
        }
    }
}

impl ModelSection for OccConfig {
    const TAG: catalogue::ModelId = catalogue::ModelId::Occ;
    type Spec = OccSpec;
    const ABOUT: &'static str = "clients contending for one row";

    /// The hops are `occ.hop` and the server answers at once: nothing shared applies.
    fn uses(section: Section) -> Use {
        Use::Refused(match section {
            Section::Path => "[path] does not apply to [occ]: set the delay of every hop with occ.hop",
            Section::Server => "[server] does not apply to [occ]: its server answers at once",
            Section::Trace => "[trace] does not apply to [occ]: it has no per-client trace",
        })
    }

    fn check(&self) -> ConfigErrors {
        self.validate()
    }

    fn clients(&self) -> u32 {
        self.clients
    }

    fn resolve(&self, _: Shared<'_>) -> Result<OccSpec, ConfigErrors> {
        Ok(OccSpec { occ: self.clone() })
    }

    fn run(spec: &OccSpec, job: Job<'_>) -> Result<ReplicationResult, EngineError> {
        run_replication(spec, job)
    }

    /// Four events per write call; the calls are `estimate::calls`: the row lets one
    /// write through at a time, and the clients that lose keep retrying as their backoff
    /// allows until their turn comes or the horizon does.
    fn estimate(spec: &OccSpec, horizon: SimDuration) -> Estimate {
        let n = f64::from(spec.occ.clients);
        // Per client: its state, its two streams, and the one message it has in flight.
        let per = bytes_of::<Client>(1.0) + bytes_of::<SimRng>(2.0) + queue_bytes::<Ev>(1.0);
        Estimate {
            events: 4.0 * estimate::calls(&spec.occ, horizon),
            working: n * per,
            kept: 0.0,
            knobs: vec!["occ.clients"],
        }
    }
}

/// Runs one replication: every client starts at t = 0 with a read one hop away.
pub fn run_replication(spec: &OccSpec, job: Job<'_>) -> Result<ReplicationResult, EngineError> {
    let Job { seeds, replication, horizon, budget } = job;
    let rep = u64::from(replication);
    let cfg = &spec.occ;
    let backoff = cfg.backoff();
    let n = cfg.clients;
    let mut world = OccWorld {
        backoff,
        hop: &cfg.hop,
        row: Row::default(),
        clients: vec![Client::new(&backoff); n as usize],
        hops: (0..n).map(|c| seeds.stream(rep, u64::from(c), Purpose::DelayForward)).collect(),
        jitter: (0..n).map(|c| seeds.stream(rep, u64::from(c), Purpose::Jitter)).collect(),
        calls: 0,
        done: 0,
        last_success: SimTime::ZERO,
    };
    let mut sched = Scheduler::new(SimTime::ZERO + horizon);
    for c in 0..n {
        // l. 103–104, l. 137: `client.start(0)`.
        let at = world.hop(c, SimTime::ZERO);
        sched.at(at, Ev::Read(c));
    }
    let stats = run(&mut world, &mut sched, budget)?;
    let all_done = world.done == n;
    let metrics = vec![
        MetricValue::of(&metrics::CALLS, world.calls as f64),
        MetricValue::of(&metrics::CALLS_PER_CLIENT, world.calls as f64 / f64::from(n)),
        // Only defined when everyone got through before the horizon.
        MetricValue::maybe_of(&metrics::COMPLETION_TIME, all_done.then(|| world.last_success.as_secs_f64())),
        MetricValue::of(&metrics::SUCCEEDED, f64::from(world.done) / f64::from(n)),
        MetricValue::of(&metrics::EVENTS, stats.events as f64),
    ];
    Ok(ReplicationResult { metrics, events: stats.events, ..Default::default() })
}
