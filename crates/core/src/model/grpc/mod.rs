//! gRPC connection backoff, sans-IO: when a channel that failed to connect tries again.
//!
//! The protocol is gRPC's `doc/connection-backoff.md` (INITIAL_BACKOFF 1 s, MULTIPLIER 1.6,
//! JITTER 0.2, MAX_BACKOFF 120 s, MIN_CONNECT_TIMEOUT 20 s; the backoff resets once the
//! server's SETTINGS frame arrives). [`GrpcBackoff`] is one channel's backoff state; it
//! never reads a clock and never owns an RNG: the world passes `now`, the resolved
//! [`GrpcBackoffParams`] and the channel's jitter stream (`Purpose::Jitter`) to each call.
//!
//! # Driving it
//!
//! ```text
//! let mut b = GrpcBackoff::new(&params);
//! loop {
//!     let plan = b.start_attempt(&params, now, rng);   // connect, give up at plan.connect_deadline
//!     // … TCP, handshake, first SETTINGS …
//!     on success (SETTINGS arrived): b.on_connected(&params); wait for the connection to drop
//!     on failure (refused, timed out, closed before SETTINGS) at `now`:
//!         next = b.on_failure(&params, now, rng);        // sleep until `next`, then loop
//! }
//! ```
//!
//! A world must pass the same params to every call of one backoff (debug builds check
//! the profile). It starts the next attempt at the instant `on_failure` returned: every profile
//! assumes the load-balancing policy reconnects as soon as the backoff allows (pick_first
//! does; see "Left out").
//!
//! # Profiles
//!
//! | profile | base b(k+1) | delay | first delay | counted from | connect deadline |
//! |---|---|---|---|---|---|
//! | `spec` | min(b·M, MAX), ns | b + U(−J·b, J·b), nearest ns | INITIAL, unjittered | attempt start | max(start + delay, start + MCT) |
//! | `grpc-core` | min(b·M, MAX), integer ms | b·U(1−J, 1+J), truncated to ms | jittered | attempt start | max(start + delay, start + MCT) |
//! | `grpc-go` | min(I·M^k, MAX), float64 ns | b·(1 + J·(2r−1)), truncated to ns | exactly I, no draw | end of the failed attempt | start + max(MCT, delay) |
//! | `grpc-java` | min(b·M, MAX), integer ns | b + U(−J·b, J·b), truncated to ns | jittered | attempt (pass) start | none |
//!
//! - `spec` (`spec.rs`): the document's pseudo-code, line by line. It is real-valued; here the
//!   base is kept in integer ns, b·M rounded to the nearest ns (exact for the defaults up to
//!   68.719476736 s; 109.9511627776 s becomes 109.951162778 s), the jittered delay too.
//! - `grpc-core` (`core.rs`): grpc/grpc `src/core/util/backoff.cc` (`BackOff::NextAttemptDelay`,
//!   `BackOff::Reset`), `src/core/util/time.h` (`Duration` is integer ms; `Duration *
//!   double` is `FromSecondsAsDouble(millis * x / 1000.0)`, truncating), and
//!   `src/core/client_channel/subchannel.cc` (`ParseArgsForBackoffValues`,
//!   `StartConnectingLocked`, `OnConnectingFinishedLocked`). The connect deadline covers TCP,
//!   the handshakes and the first SETTINGS (`chttp2_connector.cc`: `Chttp2Connector::OnTimeout`,
//!   "connection attempt timed out before receiving SETTINGS frame").
//! - `grpc-go` (`go.rs`): grpc/grpc-go `internal/backoff/backoff.go` (`Exponential.Backoff`),
//!   `backoff/backoff.go` (`DefaultConfig`) and `clientconn.go`
//!   (`addrConn.resetTransportAndUnlock`, `minConnectTimeout`); success is
//!   `newHTTP2Client` returning, which blocks until the server preface (SETTINGS) is read.
//! - `grpc-java` (`java.rs`): grpc/grpc-java `core/.../internal/ExponentialBackoffPolicy.java`
//!   (`nextBackoffNanos`, `uniformRandom`) and `InternalSubchannel.java` (`startNewTransport`,
//!   `scheduleBackoff`, `TransportListener.transportReady`); READY is the first SETTINGS
//!   (`NettyClientHandler` `onSettingsRead`: `lifecycleManager.notifyReady()`).
//!
//! # Which call draws
//!
//! Every delay takes exactly one uniform from the stream, as the libraries do (one
//! `absl::Uniform`, one `rand.Float64()`, one `Random.nextDouble()`), so that profiles that
//! draw at the same points see the same numbers (common random numbers). The uniform is
//! `(next_u64 >> 11) · 2⁻⁵³` in [0, 1), one `u64` (`unit`), whatever generator the
//! library uses (an LCG, absl's BitGen, Go's math/rand, `java.util.Random`): the same
//! distribution, not the same numbers.
//!
//! | profile | `start_attempt` | `on_failure` |
//! |---|---|---|
//! | spec | 1, except the first attempt after a reset (0) | 0 |
//! | grpc-core | 1, every attempt (2 if the uniform is the top one of 2⁵³, which lands on 1+J: absl redraws it) | 0 |
//! | grpc-go | 1, except when `backoffIdx` = 0 (0) | 0 |
//! | grpc-java | 0 | 1 |
//!
//! So in [`AttemptPlan`], `delay` is the drawn delay for spec, grpc-core and grpc-go; for
//! grpc-java, which draws only when the attempt has failed, it is the base the draw will
//! jitter (the drawn delay is what `on_failure` returns, minus the pass start).
//!
//! # Left out
//!
//! - **Shared subchannels (grpc-core).** In grpc-core every channel to one address with
//!   the same channel args gets the *same* subchannel from the global subchannel pool
//!   (`Subchannel::Create`: `subchannel_pool->FindSubchannel(key)`, the key being address
//!   plus args), hence one backoff sequence and one connection for all of them. That is a
//!   property of the world, not of one backoff: a world models it by giving all channels
//!   with identical (address, params) one shared `GrpcBackoff` (and one connection
//!   attempt), keyed the way `SubchannelKey` is, and fanning its outcome out to them. grpc-go
//!   (one `addrConn` per `ClientConn`) and grpc-java (one `InternalSubchannel` per channel)
//!   share nothing: one `GrpcBackoff` per channel.
//! - **Several addresses.** grpc-go tries every address within one connect deadline
//!   (`tryAllAddrs`), grpc-java backs off only after a pass over all of them and counts the
//!   delay from the start of the pass, grpc-core's happy-eyeballs interleaving lives in the
//!   LB policy. Here an attempt is one address (a pass of one): a world with several
//!   addresses calls `start_attempt` at the start of a pass and `on_failure` when the whole
//!   pass failed.
//! - **The LB policy's part.** After the backoff a subchannel goes IDLE (core, go) or
//!   CONNECTING (java); pick_first then reconnects at once. A policy that waits for an RPC
//!   would start later; the world decides.
//! - **Explicit resets** (`ResetConnectBackoff`, `resetConnectBackoff`): a world may call
//!   `on_connected` for one, but the libraries differ in details (go's interrupted timer does
//!   not advance `backoffIdx`; java reconnects at once without resetting the policy).
//! - **grpc-core's reset point.** It resets when the established connection is *lost*
//!   (`ConnectedSubchannelStateWatcher::OnConnectivityStateChange`: `backoff_.Reset()`), not
//!   at SETTINGS; no attempt starts in between, so `on_connected` at SETTINGS is the same.
//! - **Transport timeouts outside gRPC.** grpc-java has no connect deadline, but Netty's
//!   TCP connect alone times out after `CONNECT_TIMEOUT_MILLIS` (30 s by default); TLS
//!   handshake timeouts; the OS's SYN retries. Those belong to the world's transport.
//! - **Platform float details.** Go may fuse `1 + J·(2r−1)` into an FMA on arm64, ppc64
//!   and s390x; this follows amd64 (no fusion), as Java (strict IEEE) and x86-64 C++ do.
//! - Clock granularity: grpc-core's clock is in ms; here `now` keeps its ns and only the
//!   durations are whole ms.
//!
//! # Where the sources differ from the usual description of the protocol (the sources win)
//!
//! - grpc-go draws its delay **at attempt start**, not after the failure:
//!   `backoffFor := ac.dopts.bs.Backoff(ac.backoffIdx)` comes before `tryAllAddrs`, and the
//!   connect deadline `now + max(MCT, backoffFor)` uses that *jittered* value. The delay is
//!   still slept after the failed attempt (`time.NewTimer(backoffFor)`).
//! - grpc-go's I·M^(k−1) is repeated multiplication that stops once the cap is reached
//!   (`for backoff < max && retries > 0 { backoff *= M }`), not a power: the last bit can
//!   differ (M = 1.7: 2.89 s, where `powf` gives 2.889999999 s).
//! - grpc-core's "truncated at each multiply" is the float path `millis·M/1000·1000`
//!   truncated, which continues 16774, 26838, 42940, 68704, 109926, 120000 ms and can even
//!   *lose* 1 ms when M = 1 (1001 ms → 1000 ms), e.g. under
//!   `grpc.testing.fixed_reconnect_backoff_ms`; the base is not monotone then.
//! - grpc-core's jittered first delay and multiplicative jitter are the current
//!   `NextAttemptDelay`; older releases (`src/core/lib/backoff/backoff.cc`,
//!   `NextAttemptTime`) returned INITIAL unjittered and added U(−J·b, J·b) instead.
//! - grpc-core's and grpc-java's multiplier and jitter are not user settings (a `#define`;
//!   a `@VisibleForTesting` setter); see [`config`].
//! - grpc-java worked in ms (`nextBackoffMillis`) before it moved to ns; this is the ns code.

pub mod config;
mod core;
mod go;
mod java;
mod spec;

#[cfg(test)]
mod tests;

use rand::Rng;

use crate::engine::time::{NANOS_PER_MILLI, SimDuration, SimTime};

pub use config::{GrpcBackoffConfig, GrpcBackoffParams, GrpcProfile};

/// What `start_attempt` decided for the attempt that starts now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttemptPlan {
    /// When the attempt is abandoned if the connection (TCP, handshakes, the server's first
    /// SETTINGS) is not up by then. Absolute. `None` for grpc-java, which sets none.
    pub connect_deadline: Option<SimTime>,
    /// The profile's base backoff for this attempt, before jitter.
    pub backoff: SimDuration,
    /// The delay that schedules the next attempt, counted from where the profile counts
    /// (see the module docs): drawn now for spec, grpc-core and grpc-go; for grpc-java, not
    /// drawn yet, so equal to `backoff`.
    pub delay: SimDuration,
}

/// One channel's (or one shared subchannel's) backoff state: 24 bytes, because a
/// simulation holds a million of these. The parameters are passed to each call instead of
/// being stored. The fields mean what the profile's library keeps (each profile's module
/// says which variable of the source it is).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GrpcBackoff {
    /// The base backoff, in the library's representation: spec, grpc-java: ns;
    /// grpc-core: ms (`current_backoff_`); grpc-go: the bits of an `f64` of ns, the running
    /// `min(BaseDelay·M^idx, MaxDelay)` of `Exponential.Backoff`.
    base: u64,
    /// An instant or a duration, in ns: spec: `current_deadline`; grpc-core:
    /// `next_attempt_time_`; grpc-go: `backoffFor`, the delay drawn at attempt start;
    /// grpc-java: when the pass started (`connectingTimer`).
    mark: u64,
    /// Failed attempts since the last reset (grpc-go: `backoffIdx`).
    failures: u32,
    /// spec, grpc-core: the next attempt is the first since a reset (`initial_`);
    /// grpc-java: `reconnectPolicy == null`. Unused by grpc-go (`backoffIdx == 0`).
    initial: bool,
    /// Which arithmetic `base` and `mark` follow.
    profile: GrpcProfile,
}

impl GrpcBackoff {
    pub fn new(params: &GrpcBackoffParams) -> Self {
        let mut b = GrpcBackoff { base: 0, mark: 0, failures: 0, initial: true, profile: params.profile };
        b.on_connected(params);
        b
    }

    /// An attempt starts at `now`. Returns the attempt's connect deadline (absolute; `None`
    /// for grpc-java, which has none) and records what the profile needs to schedule the
    /// next attempt. Draws (see the module docs): spec, unless first after a reset;
    /// grpc-core, always; grpc-go, unless `backoffIdx` is 0; grpc-java, never.
    pub fn start_attempt<R: Rng + ?Sized>(
        &mut self,
        params: &GrpcBackoffParams,
        now: SimTime,
        rng: &mut R,
    ) -> AttemptPlan {
        self.check(params);
        match self.profile {
            GrpcProfile::Spec => spec::start_attempt(self, params, now, rng),
            GrpcProfile::GrpcCore => core::start_attempt(self, params, now, rng),
            GrpcProfile::GrpcGo => go::start_attempt(self, params, now, rng),
            GrpcProfile::GrpcJava => java::start_attempt(self, params, now),
        }
    }

    /// The attempt that started last failed at `now` (refused, timed out, dropped before
    /// SETTINGS). Returns when the next attempt starts (never before `now`). Draws only
    /// under grpc-java.
    pub fn on_failure<R: Rng + ?Sized>(&mut self, params: &GrpcBackoffParams, now: SimTime, rng: &mut R) -> SimTime {
        self.check(params);
        self.failures = self.failures.saturating_add(1);
        let next = match self.profile {
            GrpcProfile::Spec => spec::on_failure(self, now),
            GrpcProfile::GrpcCore => core::on_failure(self, now),
            GrpcProfile::GrpcGo => go::on_failure(self, params, now),
            GrpcProfile::GrpcJava => java::on_failure(self, params, now, rng),
        };
        debug_assert!(next >= now);
        next
    }

    /// SETTINGS arrived: the connection counts as established; the backoff resets to
    /// INITIAL_BACKOFF. Never draws.
    pub fn on_connected(&mut self, params: &GrpcBackoffParams) {
        self.check(params);
        self.failures = 0;
        match self.profile {
            GrpcProfile::Spec => spec::reset(self, params),
            GrpcProfile::GrpcCore => core::reset(self, params),
            GrpcProfile::GrpcGo => go::reset(self, params),
            GrpcProfile::GrpcJava => java::reset(self, params),
        }
    }

    /// The profile's base backoff for the current attempt, or for the next one once the
    /// current one has failed (grpc-java: the base its next failure will jitter).
    pub fn current_backoff(&self) -> SimDuration {
        match self.profile {
            GrpcProfile::Spec | GrpcProfile::GrpcJava => SimDuration(self.base),
            GrpcProfile::GrpcCore => SimDuration(self.base * NANOS_PER_MILLI),
            GrpcProfile::GrpcGo => SimDuration(go::as_duration(f64::from_bits(self.base))),
        }
    }

    /// Failed attempts since the last reset (grpc-go's `backoffIdx`).
    pub fn failures(&self) -> u32 {
        self.failures
    }

    pub fn profile(&self) -> GrpcProfile {
        self.profile
    }

    #[inline]
    fn check(&self, params: &GrpcBackoffParams) {
        debug_assert_eq!(
            self.profile, params.profile,
            "a GrpcBackoff must always be driven with the params it was made from"
        );
    }
}

/// One uniform in [0, 1) from one `u64`: the top 53 bits, as rand's `StandardUniform` for
/// `f64` does today; spelled out so that results do not move with rand's implementation.
pub(crate) fn unit<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// One draw from [low, high) as `low + u·(high − low)`, `u` from [`unit`]: the one formula
/// behind the spec's `UniformRandom`, grpc-java's `uniformRandom` (`nextDouble() * mag +
/// low`, the same sum) and one try of absl's `uniform_real_distribution`. grpc-go's
/// `1 + J·(2r−1)` is another expression of the same draw and rounds differently, so it
/// keeps its own.
pub(crate) fn uniform<R: Rng + ?Sized>(rng: &mut R, low: f64, high: f64) -> f64 {
    low + unit(rng) * (high - low)
}

/// The connect deadline of an attempt started at `now` whose backoff runs until
/// `backoff_end`: whichever is later of that and the minimum connect timeout after the
/// start (the spec's `Max(current_deadline, now() + MIN_CONNECT_TIMEOUT)`, grpc-core's
/// `std::max(next_attempt_time_, min_deadline)`, grpc-go's `now + max(minConnectTimeout,
/// backoffFor)`: adding `now` saturates, which keeps the order, so the max moves out).
pub(crate) fn connect_deadline(p: &GrpcBackoffParams, now: SimTime, backoff_end: SimTime) -> Option<SimTime> {
    let mct = p.min_connect_timeout.unwrap_or(SimDuration::ZERO);
    Some(backoff_end.max(now.saturating_add(mct)))
}
