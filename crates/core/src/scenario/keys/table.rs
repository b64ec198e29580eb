//! The keys, table by table, in the order a scenario is usually written.

use super::{Key, Table, Type};

pub const TABLES: &[Table] = &[
    Table { prefix: "", keys: RAW_SCENARIO },
    Table { prefix: "tcp.", keys: TCP_CONFIG },
    Table { prefix: "tcp.workload.", keys: WORKLOAD },
    Table { prefix: "tcp.write[].", keys: SCRIPTED_WRITE },
    Table { prefix: "tcp.rto.", keys: RTO_CONFIG },
    Table { prefix: "tcp.keepalive.", keys: KEEPALIVE_CONFIG },
    Table { prefix: "tcp.receiver.", keys: RECEIVER_CONFIG },
    Table { prefix: "tcp.receiver.stall[].", keys: STALL },
    Table { prefix: "tcp.listen.", keys: LISTEN_CONFIG },
    Table { prefix: "grpc.", keys: GRPC_CONFIG },
    Table { prefix: "grpc.backoff.", keys: GRPC_BACKOFF_CONFIG },
    Table { prefix: "occ.", keys: OCC_CONFIG },
    Table { prefix: "occ.hop.", keys: DELAY_CONFIG },
    Table { prefix: "calls.", keys: CALLS_CONFIG },
    Table { prefix: "calls.policy.", keys: RETRY_POLICY_CONFIG },
    Table { prefix: "calls.monitor.", keys: MONITOR_CONFIG },
    Table { prefix: "jobs.", keys: JOBS_CONFIG },
    Table { prefix: "jobs.retry.", keys: RETRY_POLICY_CONFIG },
    Table { prefix: "jobs.provider[].", keys: PROVIDER_CONFIG },
    Table { prefix: "jobs.provider[].down[].", keys: DOWN_WINDOW },
    Table { prefix: "server.", keys: SERVER_CONFIG },
    Table { prefix: "server.restart[].", keys: RESTART },
    Table { prefix: "server.outage[].", keys: OUTAGE },
    Table { prefix: "server.brownout[].", keys: BROWNOUT },
    Table { prefix: "path.", keys: PATH_CONFIG },
    Table { prefix: "path.delay.", keys: DELAY_CONFIG },
    Table { prefix: "path.loss.", keys: LOSS_CONFIG },
    Table { prefix: "path.forward.", keys: DIRECTION_OVERRIDE },
    Table { prefix: "path.forward.delay.", keys: DELAY_CONFIG },
    Table { prefix: "path.forward.loss.", keys: LOSS_CONFIG },
    Table { prefix: "path.reverse.", keys: DIRECTION_OVERRIDE },
    Table { prefix: "path.reverse.delay.", keys: DELAY_CONFIG },
    Table { prefix: "path.reverse.loss.", keys: LOSS_CONFIG },
    Table { prefix: "path.rtt_change[].", keys: RTT_CHANGE },
    Table { prefix: "path.blackout[].", keys: BLACKOUT },
    Table { prefix: "path.event[].", keys: PATH_EVENT },
    Table { prefix: "trace.", keys: TRACE_CONFIG },
];

const RAW_SCENARIO: &[Key] = &[
    Key { name: "name", ty: Type::Text, required: true, default: &[], min: None, max: None, doc: "Names the results directory; letters, digits, `-`, `_` and `.`." },
    Key { name: "description", ty: Type::Text, required: false, default: &[("", "\"\"")], min: None, max: None, doc: "The question the scenario asks, shown at the top of its report; none by default." },
    Key { name: "seed", ty: Type::Integer, required: false, default: &[("", "1")], min: Some(0.0), max: None, doc: "Seed of every random stream; the same seed gives byte-identical results." },
    Key { name: "replications", ty: Type::Integer, required: false, default: &[("", "1")], min: Some(0.0), max: None, doc: "Independent runs of the scenario, each with its own streams." },
    Key { name: "horizon", ty: Type::Duration, required: true, default: &[], min: None, max: None, doc: "How much simulated time each replication covers." },
    Key { name: "max_events", ty: Type::Integer, required: false, default: &[("", "100000000")], min: Some(0.0), max: None, doc: "Events one replication may handle before it is stopped with an error." },
    Key { name: "tcp", ty: Type::Table, required: false, default: &[], min: None, max: None, doc: "TCP connections and their retransmission timer." },
    Key { name: "grpc", ty: Type::Table, required: false, default: &[], min: None, max: None, doc: "gRPC channels reconnecting to a server with connection backoff." },
    Key { name: "occ", ty: Type::Table, required: false, default: &[], min: None, max: None, doc: "Optimistic-concurrency writers contending for one row." },
    Key { name: "calls", ty: Type::Table, required: false, default: &[], min: None, max: None, doc: "Clients making calls with a retry policy." },
    Key { name: "jobs", ty: Type::Table, required: false, default: &[], min: None, max: None, doc: "A job queue whose workers call providers with a retry policy." },
    Key { name: "server", ty: Type::Table, required: false, default: &[], min: None, max: None, doc: "The server: restarts, outages, capacity and brownouts." },
    Key { name: "path", ty: Type::Table, required: false, default: &[], min: None, max: None, doc: "The network path: delay, loss, RTT changes and blackouts." },
    Key { name: "trace", ty: Type::Table, required: false, default: &[], min: None, max: None, doc: "Which connections and replications write their RTO trace to trace.csv." },
    Key { name: "sweep", ty: Type::Sweep, required: false, default: &[], min: None, max: None, doc: "Parameters to sweep: a dotted key = a list of its values; one cell per combination." },
    Key { name: "variant", ty: Type::Tables, required: false, default: &[], min: None, max: None, doc: "Variants compared in one run: a name, a description and the keys each overrides." },
];

const TCP_CONFIG: &[Key] = &[
    Key { name: "clients", ty: Type::Integer, required: false, default: &[("", "1")], min: Some(0.0), max: None, doc: "Independent connections, each over its own draw of the path." },
    Key { name: "handshake", ty: Type::Bool, required: false, default: &[("", "true")], min: None, max: None, doc: "Open each connection with a three-way handshake (SYN, SYN-ACK) first." },
    Key { name: "window", ty: Type::Integer, required: false, default: &[("", "10")], min: Some(0.0), max: None, doc: "The receiver's window in segments: never more in flight, whatever the congestion window allows." },
    Key { name: "segment_size", ty: Type::Integer, required: false, default: &[("", "1460")], min: Some(0.0), max: None, doc: "Bytes per segment; sets byte sequence numbers and goodput." },
    Key { name: "fast_retransmit", ty: Type::Bool, required: false, default: &[("", "true")], min: None, max: None, doc: "Find losses on ACKs (fast retransmit, RACK, RFC 6675); false: only the retransmission timer repairs them." },
    Key { name: "delayed_ack", ty: Type::Bool, required: false, default: &[("", "false")], min: None, max: None, doc: "The receiver delays its ACKs as Linux does: every second segment, out-of-order data and quick-ack mode at once, else after the delayed-ACK timer (40 ms and up)." },
    Key { name: "sack", ty: Type::Bool, required: false, default: &[("rfc6298", "false"), ("linux", "true")], min: None, max: None, doc: "SACK at both ends (RFC 2018), with DSACK (RFC 2883); false: NewReno (RFC 6582)." },
    Key { name: "rack", ty: Type::Bool, required: false, default: &[("rfc6298", "false"), ("linux", "true")], min: None, max: None, doc: "With SACK, find losses by RACK (RFC 8985) rather than RFC 6675's three SACKed segments." },
    Key { name: "congestion", ty: Type::Choice(&["cubic", "reno"]), required: false, default: &[("rfc6298", "reno"), ("linux", "cubic")], min: None, max: None, doc: "Congestion control: CUBIC (RFC 9438, Linux's default) or Reno (RFC 5681)." },
    Key { name: "initial_window", ty: Type::Integer, required: false, default: &[("", "10")], min: Some(0.0), max: None, doc: "The initial congestion window in segments (RFC 6928)." },
    Key { name: "slow_start_after_idle", ty: Type::Bool, required: false, default: &[("", "true")], min: None, max: None, doc: "Restart the congestion window after an idle spell longer than the RTO (RFC 5681 4.1)." },
    Key { name: "workload", ty: Type::Table, required: false, default: &[], min: None, max: None, doc: "What the application sends: kind = \"transfer\", \"steady\" or \"script\"." },
    Key { name: "start_spread", ty: Type::Duration, required: false, default: &[("", "0s")], min: None, max: None, doc: "Connections start at a uniform random time in [0, start_spread)." },
    Key { name: "rto", ty: Type::Table, required: false, default: &[], min: None, max: None, doc: "The retransmission timer: profile and overrides." },
    Key { name: "keepalive", ty: Type::Table, required: false, default: &[], min: None, max: None, doc: "Linux's keepalive timer (SO_KEEPALIVE); off unless the table is present." },
    Key { name: "receiver", ty: Type::Table, required: false, default: &[], min: None, max: None, doc: "The peer's receive buffer and its application's stalls; without it the window is never limited." },
    Key { name: "listen", ty: Type::Table, required: false, default: &[], min: None, max: None, doc: "A passive open: the simulated end listens and a peer connects; off unless the table is present." },
    Key { name: "write", ty: Type::Tables, required: false, default: &[], min: None, max: None, doc: "With workload kind = script: the writes, in time order, each `at` a time after the connection starts." },
];

const RECEIVER_CONFIG: &[Key] = &[
    Key { name: "buffer", ty: Type::Integer, required: true, default: &[], min: Some(1.0), max: None, doc: "Receive buffer in segments: the window advertised is the buffer less what the application has not read." },
    Key { name: "stall", ty: Type::Tables, required: false, default: &[], min: None, max: None, doc: "Times the application stops reading, in `at` order, not overlapping." },
];

const STALL: &[Key] = &[
    Key { name: "at", ty: Type::Duration, required: true, default: &[], min: None, max: None, doc: "When the application stops reading." },
    Key { name: "duration", ty: Type::Duration, required: false, default: &[], min: None, max: None, doc: "How long until it reads again (and empties the buffer); left out, it never does." },
];

const LISTEN_CONFIG: &[Key] = &[
    Key { name: "synack_retries", ty: Type::Integer, required: false, default: &[("", "5")], min: Some(0.0), max: Some(255.0), doc: "tcp_synack_retries (or TCP_SYNCNT on the listener): SYN-ACKs sent again before the request expires." },
    Key { name: "peer_syn_retries", ty: Type::Integer, required: false, default: &[("", "6")], min: Some(1.0), max: Some(127.0), doc: "The connecting peer's tcp_syn_retries: SYNs it sends again (1 s doubling) before giving up." },
];

const KEEPALIVE_CONFIG: &[Key] = &[
    Key { name: "time", ty: Type::Duration, required: false, default: &[("", "7200s")], min: None, max: None, doc: "TCP_KEEPIDLE / tcp_keepalive_time: idle time before the first probe; whole seconds, 1s to 32767s." },
    Key { name: "interval", ty: Type::Duration, required: false, default: &[("", "75s")], min: None, max: None, doc: "TCP_KEEPINTVL / tcp_keepalive_intvl: time between unanswered probes; whole seconds, 1s to 32767s." },
    Key { name: "probes", ty: Type::Integer, required: false, default: &[("", "9")], min: Some(1.0), max: Some(127.0), doc: "TCP_KEEPCNT / tcp_keepalive_probes: unanswered probes before the connection is reset (ETIMEDOUT)." },
];

const WORKLOAD: &[Key] = &[
    Key { name: "kind", ty: Type::Choice(&["transfer", "steady", "script"]), required: true, default: &[], min: None, max: None, doc: "A finite bulk transfer, one segment every interval until the horizon, or writes at given times." },
    Key { name: "segments", ty: Type::Integer, required: false, default: &[], min: Some(1.0), max: None, doc: "kind = transfer: segments to send, as fast as the window allows." },
    Key { name: "interval", ty: Type::Duration, required: false, default: &[], min: None, max: None, doc: "kind = steady: time between the segments the application writes." },
    Key { name: "close", ty: Type::Duration, required: false, default: &[], min: None, max: None, doc: "kind = script: when the application closes, after the start (no FIN is modelled); finished once all written is acknowledged." },
];

const SCRIPTED_WRITE: &[Key] = &[
    Key { name: "at", ty: Type::Duration, required: true, default: &[], min: None, max: None, doc: "When the application writes, after its connection starts." },
    Key { name: "segments", ty: Type::Integer, required: false, default: &[("", "1")], min: Some(1.0), max: None, doc: "Segments written then." },
];

const RTO_CONFIG: &[Key] = &[
    Key { name: "profile", ty: Type::Choice(&["rfc6298", "linux"]), required: false, default: &[("", "rfc6298")], min: None, max: None, doc: "Whose retransmission timer: RFC 6298 as written, or Linux." },
    Key { name: "initial_rto", ty: Type::Duration, required: false, default: &[("rfc6298", "1s"), ("linux", "1s")], min: None, max: None, doc: "The RTO before the first RTT sample." },
    Key { name: "min_rto", ty: Type::Duration, required: false, default: &[("rfc6298", "1s"), ("linux", "200ms")], min: None, max: None, doc: "The floor of the RTO (under linux, of the variance term)." },
    Key { name: "max_rto", ty: Type::Duration, required: false, default: &[("rfc6298", "60s"), ("linux", "120s")], min: None, max: None, doc: "The ceiling of the RTO, backoff included." },
    Key { name: "fallback_rto", ty: Type::Duration, required: false, default: &[("rfc6298", "3s"), ("linux", "3s")], min: None, max: None, doc: "RFC 6298 (5.7) / `TCP_TIMEOUT_FALLBACK`: the RTO when data starts after a SYN timeout (rfc6298) or after a handshake without an RTT sample (linux)." },
    Key { name: "alpha", ty: Type::Fraction, required: false, default: &[("rfc6298", "1/8"), ("linux", "-")], min: Some(0.0), max: Some(1.0), doc: "The SRTT gain (RFC 6298 2.3)." },
    Key { name: "beta", ty: Type::Fraction, required: false, default: &[("rfc6298", "1/4"), ("linux", "-")], min: Some(0.0), max: Some(1.0), doc: "The RTTVAR gain (RFC 6298 2.3)." },
    Key { name: "k", ty: Type::Integer, required: false, default: &[("rfc6298", "4"), ("linux", "-")], min: Some(0.0), max: None, doc: "The RTTVAR multiplier in RTO = SRTT + max(G, K·RTTVAR) (RFC 6298 2.2)." },
    Key { name: "granularity", ty: Type::Duration, required: false, default: &[("rfc6298", "1ms"), ("linux", "-")], min: None, max: None, doc: "The clock granularity G (RFC 6298 2.2)." },
    Key { name: "hz", ty: Type::Integer, required: false, default: &[("rfc6298", "-"), ("linux", "250")], min: Some(1.0), max: Some(1000000.0), doc: "linux: timer ticks per second (one jiffy is 1/hz)." },
    Key { name: "clear_after_backoffs", ty: Type::Integer, required: false, default: &[("rfc6298", "never"), ("linux", "-")], min: Some(1.0), max: None, doc: "Clear SRTT and RTTVAR after this many backoffs (RFC 6298 5.7); never when absent." },
    Key { name: "karn", ty: Type::Bool, required: false, default: &[("rfc6298", "true"), ("linux", "true")], min: None, max: None, doc: "Take no RTT sample from a retransmitted segment (Karn's algorithm, RFC 6298 3)." },
    Key { name: "timestamps", ty: Type::Bool, required: false, default: &[("rfc6298", "false"), ("linux", "true")], min: None, max: None, doc: "TCP timestamps: every ACK carries a sample, retransmissions included (RFC 7323)." },
    Key { name: "sample_every_ack", ty: Type::Bool, required: false, default: &[("rfc6298", "false"), ("linux", "true")], min: None, max: None, doc: "Sample the RTT on every ACK rather than one timed segment per RTT." },
    Key { name: "nonconformant", ty: Type::Bool, required: false, default: &[("rfc6298", "false"), ("linux", "false")], min: None, max: None, doc: "Accept values RFC 6298 forbids (e.g. min_rto below 1s)." },
    Key { name: "syn_linear_timeouts", ty: Type::Integer, required: false, default: &[("rfc6298", "-"), ("linux", "4")], min: Some(0.0), max: None, doc: "linux: SYN timeouts that stay linear before doubling." },
    Key { name: "syn_retries", ty: Type::Integer, required: false, default: &[("rfc6298", "6"), ("linux", "6")], min: Some(1.0), max: None, doc: "SYN retransmissions before connect fails." },
    Key { name: "retries2", ty: Type::Integer, required: false, default: &[("rfc6298", "15"), ("linux", "15")], min: Some(0.0), max: None, doc: "Data retransmission budget." },
    Key { name: "tlp", ty: Type::Bool, required: false, default: &[("rfc6298", "false"), ("linux", "true")], min: None, max: None, doc: "Tail loss probes (RFC 8985 section 7)." },
    Key { name: "frto", ty: Type::Bool, required: false, default: &[("rfc6298", "false"), ("linux", "true")], min: None, max: None, doc: "Spurious-timeout detection (RFC 5682)." },
    Key { name: "user_timeout", ty: Type::Duration, required: false, default: &[("rfc6298", "-"), ("linux", "0s")], min: None, max: None, doc: "linux: `TCP_USER_TIMEOUT`, whole milliseconds: abort once this long has passed since the first unacknowledged retransmission (in SYN-SENT since the first SYN), instead of the retries2 and syn_retries time budgets; 0s is off." },
];

const GRPC_CONFIG: &[Key] = &[
    Key { name: "clients", ty: Type::Integer, required: true, default: &[], min: Some(0.0), max: None, doc: "Channels, each its own process with its own backoff (no shared subchannel)." },
    Key { name: "start", ty: Type::Choice(&["connected", "connecting"]), required: false, default: &[("", "connected")], min: None, max: None, doc: "How the run starts: every channel connected (a later restart drops them), or every channel making its first connection attempt." },
    Key { name: "start_spread", ty: Type::Duration, required: false, default: &[("", "0s")], min: None, max: None, doc: "With `start = \"connecting\"`, first attempts are spread uniformly over this span." },
    Key { name: "reset_on_settings", ty: Type::Bool, required: false, default: &[("", "true")], min: None, max: None, doc: "Reset the backoff when SETTINGS arrive, as the protocol says. `false` models a client that never resets: its backoff keeps growing across connections, and a dropped connection counts as one more failure." },
    Key { name: "bin", ty: Type::Duration, required: false, default: &[("", "100ms")], min: None, max: None, doc: "Width of the bins of attempts seen by the server (`attempts.csv`)." },
    Key { name: "spread_attempts", ty: Type::Integer, required: false, default: &[("", "5")], min: Some(0.0), max: None, doc: "Attempts after a disconnect whose spread across clients is reported (`spread_attempt1` …)." },
    Key { name: "record", ty: Type::Choices(&["connections"]), required: false, default: &[("", "[]")], min: None, max: None, doc: "Extra outputs: `\"connections\"` writes one row per connection attempt of the traced clients (`[trace]`) to `connections.csv`." },
    Key { name: "backoff", ty: Type::Table, required: false, default: &[], min: None, max: None, doc: "The connection backoff: profile and overrides." },
];

const GRPC_BACKOFF_CONFIG: &[Key] = &[
    Key { name: "profile", ty: Type::Choice(&["spec", "grpc-core", "grpc-go", "grpc-java"]), required: false, default: &[("", "spec")], min: None, max: None, doc: "Whose arithmetic the connection backoff follows." },
    Key { name: "initial_backoff", ty: Type::Duration, required: false, default: &[("spec", "1s"), ("grpc-core", "1s"), ("grpc-go", "1s"), ("grpc-java", "1s")], min: None, max: None, doc: "INITIAL_BACKOFF: the first delay (and the base after a reset)." },
    Key { name: "multiplier", ty: Type::Number, required: false, default: &[("spec", "1.6"), ("grpc-core", "1.6"), ("grpc-go", "1.6"), ("grpc-java", "1.6")], min: Some(1.0), max: None, doc: "MULTIPLIER: the factor applied to the base after each failure." },
    Key { name: "jitter", ty: Type::Fraction, required: false, default: &[("spec", "0.2"), ("grpc-core", "0.2"), ("grpc-go", "0.2"), ("grpc-java", "0.2")], min: Some(0.0), max: Some(1.0), doc: "JITTER: delays are drawn uniformly within ±jitter of the base (0.2 or \"20%\")." },
    Key { name: "max_backoff", ty: Type::Duration, required: false, default: &[("spec", "2min"), ("grpc-core", "2min"), ("grpc-go", "2min"), ("grpc-java", "2min")], min: None, max: None, doc: "MAX_BACKOFF: the cap on the base." },
    Key { name: "min_connect_timeout", ty: Type::Duration, required: false, default: &[("spec", "20s"), ("grpc-core", "20s"), ("grpc-go", "20s"), ("grpc-java", "-")], min: None, max: None, doc: "MIN_CONNECT_TIMEOUT: the least time an attempt is given. Refused under grpc-java." },
];

const OCC_CONFIG: &[Key] = &[
    Key { name: "clients", ty: Type::Integer, required: true, default: &[], min: Some(0.0), max: None, doc: "Clients, all starting at t = 0; each updates the row once." },
    Key { name: "strategy", ty: Type::Choice(&["none", "exponential", "full", "equal", "decorrelated"]), required: true, default: &[], min: None, max: None, doc: "How a client waits after a failed write." },
    Key { name: "base", ty: Type::Duration, required: false, default: &[("", "5ms")], min: None, max: None, doc: "The backoff's base: the first exponential value is base·2¹." },
    Key { name: "cap", ty: Type::Duration, required: false, default: &[("", "2s")], min: None, max: None, doc: "The largest backoff." },
    Key { name: "hop", ty: Type::Table, required: false, default: &[], min: None, max: None, doc: "The delay of every message hop (read, read reply, write, write reply), drawn independently each time. The default is the original's |Normal(10 ms, 2 ms)| (`dist = \"normal\"` is folded, not clamped)." },
];

const DELAY_CONFIG: &[Key] = &[
    Key { name: "dist", ty: Type::Choice(&["constant", "uniform", "normal", "lognormal", "pareto"]), required: true, default: &[], min: None, max: None, doc: "The distribution of the one-way hop delay." },
    Key { name: "value", ty: Type::Duration, required: false, default: &[("", "0s")], min: None, max: None, doc: "dist = constant: the delay." },
    Key { name: "low", ty: Type::Duration, required: false, default: &[], min: None, max: None, doc: "dist = uniform: the least delay." },
    Key { name: "high", ty: Type::Duration, required: false, default: &[], min: None, max: None, doc: "dist = uniform: the greatest delay." },
    Key { name: "mean", ty: Type::Duration, required: false, default: &[], min: None, max: None, doc: "dist = normal: the mean of |N(mean, sd)|." },
    Key { name: "sd", ty: Type::Duration, required: false, default: &[], min: None, max: None, doc: "dist = normal: the standard deviation." },
    Key { name: "median", ty: Type::Duration, required: false, default: &[], min: None, max: None, doc: "dist = lognormal: the median, median · exp(sigma · Z)." },
    Key { name: "sigma", ty: Type::Number, required: false, default: &[], min: Some(0.0), max: None, doc: "dist = lognormal: the shape." },
    Key { name: "scale", ty: Type::Duration, required: false, default: &[], min: None, max: None, doc: "dist = pareto: the least value, P(X > x) = (scale / x)^shape." },
    Key { name: "shape", ty: Type::Number, required: false, default: &[], min: Some(0.0), max: None, doc: "dist = pareto: the tail index." },
];

const CALLS_CONFIG: &[Key] = &[
    Key { name: "clients", ty: Type::Integer, required: true, default: &[], min: Some(0.0), max: None, doc: "Clients, each with its own random streams and its own retry budget." },
    Key { name: "start", ty: Type::Duration, required: false, default: &[("", "0s")], min: None, max: None, doc: "When each client's first call starts." },
    Key { name: "start_spread", ty: Type::Duration, required: false, default: &[("", "0s")], min: None, max: None, doc: "First calls are spread uniformly over `[start, start + start_spread)`." },
    Key { name: "interval", ty: Type::Duration, required: false, default: &[], min: None, max: None, doc: "A new logical call every `interval` after the client's first, whether or not the earlier ones have finished (an open loop: calls overlap while they retry)." },
    Key { name: "calls_per_client", ty: Type::Integer, required: false, default: &[], min: Some(0.0), max: None, doc: "Logical calls per client: 1 without `interval`; with it, until the horizon unless set." },
    Key { name: "attempt_time", ty: Type::Duration, required: false, default: &[("", "0s")], min: None, max: None, doc: "How long a successful attempt takes, request to reply." },
    Key { name: "fail_time", ty: Type::Duration, required: false, default: &[], min: None, max: None, doc: "How long an attempt refused by a down server takes to fail; `attempt_time` if unset." },
    Key { name: "fail_with", ty: Type::Outcome, required: false, default: &[("", "refused")], min: None, max: None, doc: "What an attempt refused by a down server fails with." },
    Key { name: "timeout", ty: Type::Duration, required: false, default: &[("", "1min")], min: None, max: None, doc: "The client's per-attempt timeout: an attempt without an answer fails then." },
    Key { name: "idempotency", ty: Type::Choice(&["idempotent", "conditional", "conditional-without-precondition", "never"]), required: false, default: &[("", "idempotent")], min: None, max: None, doc: "How safe the calls are to repeat." },
    Key { name: "tiers", ty: Type::Integers, required: false, default: &[("", "[]")], min: None, max: None, doc: "Retry loops around the library's policy, outermost first: attempts per loop." },
    Key { name: "outage", ty: Type::Duration, required: false, default: &[], min: None, max: None, doc: "Shorthand for one `[[server.outage]]` beginning at `start`, handy to sweep." },
    Key { name: "policy", ty: Type::Table, required: false, default: &[], min: None, max: None, doc: "The retry policy: a preset and overrides." },
    Key { name: "pacing", ty: Type::Choice(&["open", "poisson", "closed"]), required: false, default: &[("", "open")], min: None, max: None, doc: "How calls follow each other with `interval`." },
    Key { name: "phase", ty: Type::Choice(&["steady", "together"]), required: false, default: &[("", "steady")], min: None, max: None, doc: "With `interval`: `steady` starts each client at a random point of its cycle (uniform, or an exponential first gap for poisson); `together` calls all at `start`." },
    Key { name: "keep_backoff", ty: Type::Bool, required: false, default: &[("", "false")], min: None, max: None, doc: "The client keeps one backoff across its calls instead of a fresh one per call." },
    Key { name: "permanent_fraction", ty: Type::Fraction, required: false, default: &[("", "0")], min: Some(0.0), max: Some(1.0), doc: "Share of logical calls that are bad requests: the server answers every attempt of such a call with `permanent_with` (at `fail_time`, without using a worker)." },
    Key { name: "permanent_with", ty: Type::Outcome, required: false, default: &[("", "400")], min: None, max: None, doc: "What the server answers a bad request with: an outcome word or an HTTP status." },
    Key { name: "monitor", ty: Type::Table, required: false, default: &[], min: None, max: None, doc: "What `series.csv` bins and the retry-share alert." },
];

const RETRY_POLICY_CONFIG: &[Key] = &[
    Key { name: "preset", ty: Type::Text, required: false, default: &[], min: None, max: None, doc: "A preset's name." },
    Key { name: "base", ty: Type::Duration, required: false, default: &[("", "1s")], min: None, max: None, doc: "Nominal delay of the first retry." },
    Key { name: "multiplier", ty: Type::Number, required: false, default: &[("", "2")], min: Some(1.0), max: None, doc: "Growth per retry, ≥ 1." },
    Key { name: "cap", ty: Type::DurationOrNone, required: false, default: &[("", "1min")], min: None, max: None, doc: "A duration or `\"none\"`." },
    Key { name: "cap_applies", ty: Type::Choice(&["before-jitter", "after-jitter"]), required: false, default: &[("", "before-jitter")], min: None, max: None, doc: "`before-jitter`, `after-jitter`." },
    Key { name: "jitter", ty: Type::Choice(&["none", "full", "equal", "decorrelated", "proportional", "additive", "half", "span"]), required: false, default: &[("", "full")], min: None, max: None, doc: "`none`, `full`, `equal`, `decorrelated`, `proportional`, `additive`, `half`, `span`." },
    Key { name: "jitter_fraction", ty: Type::Fraction, required: false, default: &[("", "0.2")], min: Some(0.0), max: Some(1.0), doc: "Proportional: ±f, in (0, 1]." },
    Key { name: "jitter_max", ty: Type::Duration, required: false, default: &[("", "1s")], min: None, max: None, doc: "Additive: the U(0, x) added." },
    Key { name: "max_attempts", ty: Type::CountOrNone, required: false, default: &[("", "5")], min: Some(1.0), max: None, doc: "Attempts in all, or `\"none\"`." },
    Key { name: "max_retries", ty: Type::CountOrNone, required: false, default: &[], min: None, max: None, doc: "Retries after the first attempt (instead of `max_attempts`)." },
    Key { name: "deadline", ty: Type::DurationOrNone, required: false, default: &[("", "none")], min: None, max: None, doc: "A duration or `\"none\"`." },
    Key { name: "deadline_rule", ty: Type::Choice(&["give-up-before-crossing", "give-up-before-reaching", "truncate", "sleep-then-attempt", "sleep-then-stop", "cut"]), required: false, default: &[("", "give-up-before-crossing")], min: None, max: None, doc: "See `super::limits`." },
    Key { name: "deadline_clock", ty: Type::Choice(&["wall", "attempt-start", "sleeps-only"]), required: false, default: &[("", "wall")], min: None, max: None, doc: "`wall`, `attempt-start`, `sleeps-only`." },
    Key { name: "truncate_to", ty: Type::DurationOrNone, required: false, default: &[("", "none")], min: None, max: None, doc: "Sleeps truncated to a multiple of this (`\"1ms\"`), or `\"none\"`." },
    Key { name: "throttle_base", ty: Type::DurationOrNone, required: false, default: &[("", "none")], min: None, max: None, doc: "Base for throttling errors (AWS 2.1), or `\"none\"`." },
    Key { name: "reset_after_success", ty: Type::Bool, required: false, default: &[("", "true")], min: None, max: None, doc: "A success resets a kept backoff." },
    Key { name: "retry_on", ty: Type::Texts, required: false, default: &[("", "timeout, dropped, refused, 408, 429, 5xx")], min: None, max: None, doc: "A list of words, or one string of them separated by commas (`\"timeout, 5xx\"`)." },
    Key { name: "retry_non_idempotent", ty: Type::Bool, required: false, default: &[("", "false")], min: None, max: None, doc: "Retry calls that are not safe to repeat." },
    Key { name: "retry_after", ty: Type::Choice(&["ignore", "replace", "max"]), required: false, default: &[("", "replace")], min: None, max: None, doc: "`ignore`, `replace`, `max`." },
    Key { name: "retry_after_max_extra", ty: Type::DurationOrNone, required: false, default: &[("", "none")], min: None, max: None, doc: "Max: hint counts up to computed + this, or `\"none\"`." },
    Key { name: "retry_after_resets_backoff", ty: Type::Bool, required: false, default: &[("", "false")], min: None, max: None, doc: "A used hint resets the backoff." },
    Key { name: "budget", ty: Type::Choice(&["none", "aws-quota", "grpc-throttle", "envoy-concurrent", "finagle"]), required: false, default: &[], min: None, max: None, doc: "`none`, `aws-quota`, `grpc-throttle`, `envoy-concurrent`, `finagle`." },
    Key { name: "quota_capacity", ty: Type::Integer, required: false, default: &[("", "500")], min: Some(1.0), max: None, doc: "Aws-quota." },
    Key { name: "quota_retry_cost", ty: Type::Integer, required: false, default: &[("", "5")], min: Some(0.0), max: None, doc: "Aws-quota." },
    Key { name: "quota_throttle_cost", ty: Type::Integer, required: false, default: &[("", "5")], min: Some(0.0), max: None, doc: "Aws-quota." },
    Key { name: "quota_timeout_cost", ty: Type::Integer, required: false, default: &[("", "10")], min: Some(0.0), max: None, doc: "Aws-quota." },
    Key { name: "quota_success_refund", ty: Type::Integer, required: false, default: &[("", "1")], min: Some(0.0), max: None, doc: "Aws-quota." },
    Key { name: "throttle_max_tokens", ty: Type::Number, required: false, default: &[("", "10")], min: None, max: None, doc: "Grpc-throttle." },
    Key { name: "throttle_token_ratio", ty: Type::Number, required: false, default: &[("", "0.1")], min: Some(0.001), max: None, doc: "Grpc-throttle." },
    Key { name: "max_concurrent_retries", ty: Type::Integer, required: false, default: &[("", "3")], min: Some(0.0), max: None, doc: "Envoy-concurrent." },
    Key { name: "budget_ttl", ty: Type::Duration, required: false, default: &[("", "10s")], min: None, max: None, doc: "Finagle." },
    Key { name: "budget_min_retries_per_sec", ty: Type::Integer, required: false, default: &[("", "10")], min: Some(0.0), max: None, doc: "Finagle." },
    Key { name: "budget_percent_can_retry", ty: Type::Fraction, required: false, default: &[("", "0.2")], min: Some(0.0), max: Some(1000.0), doc: "Finagle." },
    Key { name: "budget_max_retries_per_request", ty: Type::Number, required: false, default: &[("", "0.2")], min: Some(0.0), max: None, doc: "Finagle." },
    Key { name: "rate_limiter", ty: Type::Choice(&["none", "aws-adaptive"]), required: false, default: &[], min: None, max: None, doc: "`none`, `aws-adaptive`." },
    Key { name: "adaptive_min_fill_rate", ty: Type::Number, required: false, default: &[("", "0.5")], min: None, max: None, doc: "Aws-adaptive: tokens/s floor." },
];

const MONITOR_CONFIG: &[Key] = &[
    Key { name: "bin", ty: Type::Duration, required: false, default: &[("", "1s")], min: None, max: None, doc: "Width of the bins of series.csv." },
    Key { name: "retry_share_alert", ty: Type::Fraction, required: false, default: &[], min: Some(0.0), max: Some(1.0), doc: "The alert fires at the end of the first bin, after an incident began, whose retries make at least this share of the attempts." },
];

const JOBS_CONFIG: &[Key] = &[
    Key { name: "rate", ty: Type::Number, required: true, default: &[], min: None, max: None, doc: "Jobs created per second." },
    Key { name: "arrivals", ty: Type::Choice(&["poisson", "uniform"]), required: false, default: &[("", "poisson")], min: None, max: None, doc: "How jobs arrive: a Poisson process or evenly spaced." },
    Key { name: "start", ty: Type::Duration, required: false, default: &[("", "0s")], min: None, max: None, doc: "When the first job is created." },
    Key { name: "count", ty: Type::Integer, required: false, default: &[], min: Some(0.0), max: None, doc: "Jobs in all; until the horizon when absent." },
    Key { name: "workers", ty: Type::Integer, required: true, default: &[], min: Some(0.0), max: None, doc: "Workers taking jobs from the queue, one job each at a time." },
    Key { name: "poison_fraction", ty: Type::Fraction, required: false, default: &[("", "0")], min: Some(0.0), max: Some(1.0), doc: "Share of jobs that can never succeed." },
    Key { name: "bin", ty: Type::Duration, required: false, default: &[("", "1min")], min: None, max: None, doc: "Width of `series.csv`'s bins." },
    Key { name: "retry", ty: Type::Table, required: false, default: &[], min: None, max: None, doc: "The retry policy." },
    Key { name: "provider", ty: Type::Tables, required: false, default: &[], min: None, max: None, doc: "The providers, in failover order." },
];

const PROVIDER_CONFIG: &[Key] = &[
    Key { name: "name", ty: Type::Text, required: true, default: &[], min: None, max: None, doc: "The provider's name in the results." },
    Key { name: "call_time", ty: Type::Duration, required: false, default: &[("", "0s")], min: None, max: None, doc: "A successful call, request to reply." },
    Key { name: "fail_time", ty: Type::Duration, required: false, default: &[], min: None, max: None, doc: "A refused call; `call_time` if unset." },
    Key { name: "timeout", ty: Type::Duration, required: false, default: &[("", "30s")], min: None, max: None, doc: "The worker's per-call timeout: a call without an answer fails then." },
    Key { name: "down", ty: Type::Tables, required: false, default: &[], min: None, max: None, doc: "Down windows, in time order, not overlapping." },
];

const DOWN_WINDOW: &[Key] = &[
    Key { name: "at", ty: Type::Duration, required: true, default: &[], min: None, max: None, doc: "When the provider goes down." },
    Key { name: "duration", ty: Type::Duration, required: true, default: &[], min: None, max: None, doc: "How long it stays down." },
    Key { name: "fail_fraction", ty: Type::Fraction, required: false, default: &[("", "1.0")], min: Some(0.0), max: Some(1.0), doc: "Share of the calls started in the window that fail." },
    Key { name: "behavior", ty: Type::Choice(&["refuse", "hang"]), required: false, default: &[("", "refuse")], min: None, max: None, doc: "How a call fails while it is down: an explicit error or no answer." },
];

const SERVER_CONFIG: &[Key] = &[
    Key { name: "restart", ty: Type::Tables, required: false, default: &[], min: None, max: None, doc: "Restarts, in strictly increasing `at` order." },
    Key { name: "outage", ty: Type::Tables, required: false, default: &[], min: None, max: None, doc: "Outages, in strictly increasing `at` order; no restart or outage may overlap another." },
    Key { name: "down_behavior", ty: Type::Choice(&["refuse", "blackhole"]), required: false, default: &[("", "refuse")], min: None, max: None, doc: "What a SYN meets while the server is down (restart or outage)." },
    Key { name: "accept_rate", ty: Type::Number, required: false, default: &[], min: None, max: None, doc: "Handshakes started per second, resolved to the nearest 10⁻⁶ per second; absent = unlimited (no queue, no overload). Between 10⁻⁶ and 10⁹." },
    Key { name: "burst", ty: Type::Integer, required: false, default: &[("", "1")], min: Some(0.0), max: None, doc: "Handshakes that may start back to back after a quiet spell: the token bucket's size. At least 1; only with `accept_rate`." },
    Key { name: "accept_queue", ty: Type::Integer, required: false, default: &[("", "128")], min: Some(0.0), max: None, doc: "Handshakes that may wait for a token; one more finds the queue full (`overload`). 0 = no queue: a SYN that finds no token is overloaded at once. Only with `accept_rate`." },
    Key { name: "overload", ty: Type::Choice(&["refuse", "drop"]), required: false, default: &[("", "refuse")], min: None, max: None, doc: "What a SYN meets when the accept queue is full. Only with `accept_rate`." },
    Key { name: "handshake_time", ty: Type::Duration, required: false, default: &[("", "0s")], min: None, max: None, doc: "Server-side processing per handshake, between its token and SETTINGS. Latency only: it does not use capacity (capacity is `accept_rate`)." },
    Key { name: "drop_after", ty: Type::Duration, required: false, default: &[], min: None, max: None, doc: "Flapping: every connection is dropped this long after its SETTINGS are sent." },
    Key { name: "send_settings", ty: Type::Bool, required: false, default: &[("", "true")], min: None, max: None, doc: "false: TCP is accepted but SETTINGS never come, so every attempt that gets in times out at the client's connect deadline." },
    Key { name: "concurrency", ty: Type::Integer, required: false, default: &[], min: Some(0.0), max: None, doc: "`[calls]`: requests served at once by the server's workers; absent = no workers (each request takes `handshake_time`, capacity from `accept_rate`)." },
    Key { name: "service_time", ty: Type::Duration, required: false, default: &[], min: None, max: None, doc: "Mean work per request on one worker. Required with `concurrency`." },
    Key { name: "service", ty: Type::Choice(&["exponential", "fixed"]), required: false, default: &[("", "exponential")], min: None, max: None, doc: "How service times vary around `service_time`." },
    Key { name: "queue", ty: Type::Integer, required: false, default: &[], min: Some(0.0), max: None, doc: "Requests that may wait for a worker; one more is refused at once. Absent = no limit." },
    Key { name: "brownout", ty: Type::Tables, required: false, default: &[], min: None, max: None, doc: "Windows in which a share of requests fail and the rest may be slower, in time order." },
];

const RESTART: &[Key] = &[
    Key { name: "at", ty: Type::Duration, required: true, default: &[], min: None, max: None, doc: "When the server restarts, dropping every connection." },
    Key { name: "down", ty: Type::Duration, required: true, default: &[], min: None, max: None, doc: "How long it refuses connections before it is back." },
];

const OUTAGE: &[Key] = &[
    Key { name: "at", ty: Type::Duration, required: true, default: &[], min: None, max: None, doc: "When the outage begins." },
    Key { name: "duration", ty: Type::Duration, required: true, default: &[], min: None, max: None, doc: "How long the server is down." },
];

const BROWNOUT: &[Key] = &[
    Key { name: "at", ty: Type::Duration, required: true, default: &[], min: None, max: None, doc: "When the brownout begins." },
    Key { name: "duration", ty: Type::Duration, required: true, default: &[], min: None, max: None, doc: "How long it lasts." },
    Key { name: "fail_fraction", ty: Type::Fraction, required: false, default: &[("", "1.0")], min: Some(0.0), max: Some(1.0), doc: "Share of attempts that fail during it." },
    Key { name: "slowdown", ty: Type::Number, required: false, default: &[("", "1.0")], min: Some(1.0), max: None, doc: "Factor on service time during it." },
];

const PATH_CONFIG: &[Key] = &[
    Key { name: "base_rtt", ty: Type::Duration, required: true, default: &[], min: None, max: None, doc: "Round-trip propagation delay before any `rtt_change`; each direction gets half." },
    Key { name: "delay", ty: Type::Table, required: false, default: &[], min: None, max: None, doc: "Extra one-way delay drawn per packet, both directions unless overridden." },
    Key { name: "loss", ty: Type::Table, required: false, default: &[], min: None, max: None, doc: "Loss, both directions unless overridden." },
    Key { name: "forward", ty: Type::Table, required: false, default: &[], min: None, max: None, doc: "Client → server settings that differ from `delay` / `loss`." },
    Key { name: "reverse", ty: Type::Table, required: false, default: &[], min: None, max: None, doc: "Server → client settings that differ from `delay` / `loss`." },
    Key { name: "fifo", ty: Type::Bool, required: false, default: &[("", "false")], min: None, max: None, doc: "When true a direction never reorders: a packet arrives no earlier than the one sent before it in the same direction. Off by default, so the per-packet delays are exactly the independent draws the scenario asked for." },
    Key { name: "rtt_change", ty: Type::Tables, required: false, default: &[], min: None, max: None, doc: "Scheduled changes of the base RTT, in strictly increasing `at` order." },
    Key { name: "blackout", ty: Type::Tables, required: false, default: &[], min: None, max: None, doc: "Scheduled outages of both directions, in `at` order, not overlapping." },
    Key { name: "event", ty: Type::Tables, required: false, default: &[], min: None, max: None, doc: "Scripted events: drops, delays and duplicates of chosen packets, ICMP errors." },
];

const LOSS_CONFIG: &[Key] = &[
    Key { name: "model", ty: Type::Choice(&["none", "bernoulli", "gilbert-elliott"]), required: false, default: &[("", "none")], min: None, max: None, doc: "How packets are lost, besides blackouts." },
    Key { name: "p", ty: Type::Fraction, required: false, default: &[], min: Some(0.0), max: Some(1.0), doc: "model = bernoulli: each packet is lost independently with this probability." },
    Key { name: "p_enter_bad", ty: Type::Fraction, required: false, default: &[], min: Some(0.0), max: Some(1.0), doc: "model = gilbert-elliott: probability per packet of going from the good state to the bad." },
    Key { name: "p_leave_bad", ty: Type::Fraction, required: false, default: &[], min: Some(0.0), max: Some(1.0), doc: "model = gilbert-elliott: probability per packet of going from the bad state to the good." },
    Key { name: "loss_good", ty: Type::Fraction, required: false, default: &[("", "0")], min: Some(0.0), max: Some(1.0), doc: "model = gilbert-elliott: loss probability in the good state." },
    Key { name: "loss_bad", ty: Type::Fraction, required: false, default: &[("", "1")], min: Some(0.0), max: Some(1.0), doc: "model = gilbert-elliott: loss probability in the bad state." },
];

const DIRECTION_OVERRIDE: &[Key] = &[
    Key { name: "delay", ty: Type::Table, required: false, default: &[], min: None, max: None, doc: "This direction's hop delay, replacing path.delay." },
    Key { name: "loss", ty: Type::Table, required: false, default: &[], min: None, max: None, doc: "This direction's loss, replacing path.loss." },
];

const RTT_CHANGE: &[Key] = &[
    Key { name: "at", ty: Type::Duration, required: true, default: &[], min: None, max: None, doc: "When the base RTT changes." },
    Key { name: "rtt", ty: Type::Duration, required: true, default: &[], min: None, max: None, doc: "The base RTT from then on." },
];

const BLACKOUT: &[Key] = &[
    Key { name: "at", ty: Type::Duration, required: true, default: &[], min: None, max: None, doc: "When every packet starts being lost." },
    Key { name: "duration", ty: Type::Duration, required: true, default: &[], min: None, max: None, doc: "How long the blackout lasts." },
];

const PATH_EVENT: &[Key] = &[
    Key { name: "kind", ty: Type::Choice(&["drop", "delay", "duplicate", "icmp-unreachable", "local-drop"]), required: true, default: &[], min: None, max: None, doc: "What happens: a packet lost, held back or delivered twice; an ICMP unreachable, or the sender's queue refusing to send (tcp)." },
    Key { name: "direction", ty: Type::Choice(&["forward", "reverse"]), required: false, default: &[("", "forward")], min: None, max: None, doc: "drop, delay, duplicate: which way the packet travels (forward is client → server)." },
    Key { name: "nth", ty: Type::Integer, required: false, default: &[], min: Some(1.0), max: None, doc: "drop, delay, duplicate: the packet's number in its direction and connection, from 1, in send order." },
    Key { name: "count", ty: Type::Integer, required: false, default: &[("", "1")], min: Some(1.0), max: None, doc: "drop with nth: how many packets in a row are dropped." },
    Key { name: "at", ty: Type::Duration, required: false, default: &[], min: None, max: None, doc: "drop, local-drop, icmp-unreachable with duration: start of the window of send times dropped (and, for icmp-unreachable, answered); icmp-unreachable alone: when it reaches the sender." },
    Key { name: "duration", ty: Type::Duration, required: false, default: &[], min: None, max: None, doc: "drop with at, local-drop, icmp-unreachable: how long the window [at, at + duration) lasts; icmp-unreachable without it is one message at `at`." },
    Key { name: "by", ty: Type::Duration, required: false, default: &[], min: None, max: None, doc: "delay: how much later the packet arrives." },
];

const TRACE_CONFIG: &[Key] = &[
    Key { name: "clients", ty: Type::Integers, required: false, default: &[("", "[0]")], min: None, max: None, doc: "Clients whose RTO traces are written." },
    Key { name: "first_clients", ty: Type::Integer, required: false, default: &[("", "0")], min: Some(0.0), max: None, doc: "Also trace clients 0 to `first_clients − 1`, for tests and small herds." },
    Key { name: "replications", ty: Type::Integers, required: false, default: &[("", "[0]")], min: None, max: None, doc: "Replications whose traces are written." },
];
