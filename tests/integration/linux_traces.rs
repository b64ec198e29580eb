//! The tcp world against this project's measurements of a Linux kernel
//! (`validation/linux/`): for every committed trace, the equivalent scenario is run and
//! its timer events are compared with the measured ones, gap by gap; for the lossy bulk
//! transfers (`lossy-*`), its counts of timeouts and recoveries with the measured range.
//!
//! Slack: a Linux TCP timer is a timer-wheel timer (`kernel/time/timer.c`,
//! `calc_wheel_index`): its expiry counts from the current jiffy (HZ 250, 4 ms, so up to
//! one jiffy early against the instant it was armed) and is rounded up to its wheel
//! level's granularity, 8^level jiffies, the level set by the delay (below 63 jiffies
//! level 0, below 504 level 1, below 4032 level 2, …). A measured gap may thus be late by
//! up to that granularity, 32 ms for a 1 s timer and 256 ms for a 4 s one, and early by a
//! jiffy; 2 ms more cover the relay's and the capture's own timing. Nothing else is
//! allowed: where the model and the kernel differ the test asserts the difference.

use backoffsim::engine::budget::Budget;
use backoffsim::engine::rng::Seeds;
use backoffsim::scenario::load_file;
use backoffsim::worlds::Job;

use crate::common::root;

const JIFFY_MS: i64 = 4;
const MEASURE_MS: i64 = 2;

/// The wheel granularity (`LVL_GRAN`) of a timer set `delay_ms` ahead, in ms.
fn wheel_granularity_ms(delay_ms: i64) -> i64 {
    let jiffies = (delay_ms + JIFFY_MS - 1) / JIFFY_MS;
    let mut level = 0;
    // LVL_START(n + 1) = 63 << 3n: the first delay that goes to the next level.
    while level < 8 && jiffies >= 63 << (3 * level) {
        level += 1;
    }
    (1 << (3 * level)) * JIFFY_MS
}

/// (ms since the first SYN, kind) of the events the test compares: the first SYN, the
/// first segment sent after each change of the path (the send that armed the timer the
/// change lets expire), the last new segment before the change's first timeout (once
/// the window is full, the loss probe timer it set decides when the RTO fires) and the
/// timer's doings.
type Events = Vec<(i64, String)>;

const COMPARED: &[&str] = &["syn", "send", "last_send", "timeout", "probe", "aborted"];
/// Sends: the client's writes decide them, not a timer, so their gaps are not compared.
const ANCHORS: &[&str] = &["send", "last_send"];
const PATH_CHANGES: &[&str] = &["blackout", "rtt_change"];

/// The measured events and the instants the path changed.
fn measured(case: &str) -> (Events, Vec<i64>) {
    let path = root().join(format!("validation/linux/traces/{case}.csv"));
    let mut r = csv::Reader::from_path(&path).unwrap();
    let rows: Events = r
        .records()
        .map(|rec| {
            let rec = rec.unwrap();
            let kind = if &rec[1] == "syn_retransmit" { "timeout" } else { &rec[1] };
            (rec[0].parse().unwrap(), kind.to_string())
        })
        .collect();
    let changes = rows.iter().filter(|(_, k)| PATH_CHANGES.contains(&k.as_str())).map(|(t, _)| *t).collect();
    (rows.into_iter().filter(|(_, k)| COMPARED.contains(&k.as_str())).collect(), changes)
}

/// The scenario's events: its first SYN, its first send at or after each of `changes`
/// (the scenario changes its path at the same instants as the relay) and its timer's.
fn simulated(case: &str, changes: &[i64]) -> Events {
    // Through the library: the command line would also draw the plots, most of a run's time.
    let scenario = load_file(&root().join(format!("validation/linux/scenarios/{case}.toml"))).unwrap();
    assert_eq!((scenario.replications, scenario.variants.len()), (1, 1), "{case}: one run");
    let job = Job {
        seeds: Seeds::new(scenario.seed),
        replication: 0,
        horizon: scenario.horizon,
        budget: Budget::replication(scenario.max_events),
    };
    let result = scenario.variants[0].cells[0].spec.run(job).unwrap();
    let rows: Vec<(i64, String, bool)> = result
        .trace
        .iter()
        .filter(|row| row.client == 0)
        .map(|row| ((row.time.as_nanos() / 1_000_000) as i64, row.event.to_string(), row.segment.is_none()))
        .collect();
    let mut events: Events = Vec::new();
    if let Some((t, _, _)) = rows.iter().find(|(_, k, syn)| k == "send" && *syn) {
        events.push((*t, "syn".to_string()));
    }
    for &at in changes {
        let data = |t: &i64, k: &str, syn: &bool| k == "send" && !syn && *t >= at;
        if let Some((t, _, _)) = rows.iter().find(|(t, k, syn)| data(t, k, syn)) {
            events.push((*t, "send".to_string()));
        }
        let first_timeout = rows.iter().find(|(t, k, _)| k == "timeout" && *t >= at).map(|(t, _, _)| *t);
        if let Some(first) = first_timeout
            && let Some((t, _, _)) = rows.iter().rfind(|(t, k, syn)| data(t, k, syn) && *t < first)
        {
            events.push((*t, "last_send".to_string()));
        }
    }
    events.extend(
        rows.iter().filter(|(_, k, _)| COMPARED.contains(&k.as_str()) && k != "send").map(|(t, k, _)| (*t, k.clone())),
    );
    events.sort();
    events
}

/// How a case's events are measured from one another.
#[derive(Clone, Copy)]
enum Abort {
    /// At an expiry of the retransmission timer: from the event before it.
    AtExpiry,
    /// At a deadline counted from the first retransmission (`retransmits_timed_out`
    /// with `TCP_USER_TIMEOUT`, the last timer clamped to it): from the first timeout.
    FromFirstTimeout,
}

/// A known difference: the kernel's gap before event `event` is longer than the
/// model's by `kernel_later_ms`, for a reason the README's table gives. The comparison
/// takes it off before the slack applies, so a model that closes it fails here.
struct Known {
    event: usize,
    kernel_later_ms: i64,
}

/// The blackout with a 500 ms route `rto_min`: its run measured an SRTT of 102.1 ms
/// (`ss`, `traces/blackout-rto-min-500ms.ss.csv`), not the 101 ms the scenario sets, so
/// the kernel's loss probe timeout before the RTO that follows the last send was
/// `usecs_to_jiffies(2 * 102.1 ms + 2 ms)` = 52 jiffies where the scenario's is 51
/// (`tcp_schedule_loss_probe`). Event 4: syn, send, probe, last send, that timeout.
const RTO_MIN_SRTT: &[Known] = &[Known { event: 4, kernel_later_ms: JIFFY_MS }];

/// Compares gap by gap: the same kinds in the same order, and each measured gap within
/// the wheel's slack of the simulated one. Returns the number of events compared, or
/// every event out of its slack (index and what each side says).
fn compare(case: &str, abort: Abort, known: &[Known]) -> Result<usize, Vec<(usize, String)>> {
    let (m, changes) = measured(case);
    let s = simulated(case, &changes);
    let kinds = |e: &Events| e.iter().map(|(_, k)| k.clone()).collect::<Vec<_>>();
    if kinds(&m) != kinds(&s) {
        return Err(vec![(0, format!("measured {m:?}, simulated {s:?}"))]);
    }
    let first_timeout = m.iter().position(|(_, k)| k == "timeout");
    let mut off = Vec::new();
    for i in (1..m.len()).filter(|&i| !ANCHORS.contains(&m[i].1.as_str())) {
        let from = match (abort, first_timeout) {
            (Abort::FromFirstTimeout, Some(f)) if m[i].1 == "aborted" => f,
            _ => i - 1,
        };
        let (mg, sg) = (m[i].0 - m[from].0, s[i].0 - s[from].0);
        let late = mg - sg - known.iter().filter(|k| k.event == i).map(|k| k.kernel_later_ms).sum::<i64>();
        // The timer that fired was set the simulated gap from the event before it.
        let slack = wheel_granularity_ms(s[i].0 - s[i - 1].0);
        if late < -JIFFY_MS - MEASURE_MS || late > slack + JIFFY_MS + MEASURE_MS {
            off.push((i, format!("{}: measured {mg} ms, simulated {sg} ms, slack {slack} ms", m[i].1)));
        }
    }
    if off.is_empty() { Ok(m.len()) } else { Err(off) }
}

#[test]
fn the_wheel_granularity_follows_calc_wheel_index_at_hz_250() {
    // kernel/time/timer.c: LVL_START(1) = 63 jiffies, LVL_START(2) = 504, LVL_START(3) = 4032.
    assert_eq!(wheel_granularity_ms(200), 4);
    assert_eq!(wheel_granularity_ms(300), 32);
    assert_eq!(wheel_granularity_ms(1000), 32);
    assert_eq!(wheel_granularity_ms(2012), 32);
    assert_eq!(wheel_granularity_ms(2016), 256);
    assert_eq!(wheel_granularity_ms(8000), 256);
    assert_eq!(wheel_granularity_ms(16128), 2048);
}

/// The comparison of one case, printed so that a failure shows both sides.
fn check(case: &str, abort: Abort, known: &[Known]) -> Result<usize, Vec<(usize, String)>> {
    let r = compare(case, abort, known);
    eprintln!("{case}: {r:?}");
    r
}

#[test]
fn syn_retries_3_tcp_write_timeout() {
    // tcp_write_timeout: syn_retries + tcp_syn_linear_timeouts (3 + 4) SYN retransmissions
    // at 1, 2, 3, 4, 5 s (linear), 7, 11 s (doubling), then the give-up at 19 s.
    assert_eq!(check("syn-dropped-3", Abort::AtExpiry, &[]), Ok(9));
}

#[test]
fn syn_retries_5_tcp_write_timeout() {
    // 5 + 4 retransmissions, the last two 16 s and 32 s apart; the give-up at 67 s.
    assert_eq!(check("syn-dropped-5", Abort::AtExpiry, &[]), Ok(11));
}

#[test]
fn blackout_with_timestamps_tcp_retransmit_timer() {
    // tcp_schedule_loss_probe / tcp_send_loss_probe; the last send's probe timer finds a
    // probe out and tcp_rearm_rto arms the overdue RTO a jiffy ahead, which the wheel
    // fires a tick later (2 jiffies); then tcp_retransmit_timer doubling
    // an RTO of 101 ms + rto_min 200 ms, rounded up to 76 jiffies (__tcp_set_rto).
    assert_eq!(check("blackout-timestamps", Abort::AtExpiry, &[]), Ok(9));
}

#[test]
fn blackout_without_timestamps_tcp_retransmit_timer() {
    assert_eq!(check("blackout-no-timestamps", Abort::AtExpiry, &[]), Ok(9));
}

#[test]
fn blackout_with_route_rto_min_tcp_rto_min() {
    // tcp_rto_min: the route's RTAX_RTO_MIN replaces the 200 ms floor of the variance.
    assert_eq!(check("blackout-rto-min-500ms", Abort::AtExpiry, RTO_MIN_SRTT), Ok(8));
}

#[test]
fn rtt_step_tcp_rtt_estimator() {
    assert_eq!(check("rtt-step", Abort::AtExpiry, &[]), Ok(3));
}

#[test]
fn user_timeout_tcp_clamp_rto_to_user_timeout() {
    // retransmits_timed_out with TCP_USER_TIMEOUT: the abort 5 s after the first
    // retransmission, its timer clamped to end then.
    assert_eq!(check("user-timeout-5s", Abort::FromFirstTimeout, &[]), Ok(9));
}

#[test]
fn retries2_4_tcp_model_timeout() {
    // tcp_model_timeout(4) with TCP_RTO_MIN = 200 ms: (2^5 - 1) * 200 ms = 6.2 s after the
    // first retransmission; the expiry that finds it passed aborts.
    assert_eq!(check("retries2-4", Abort::AtExpiry, &[]), Ok(9));
}

/// Every case the tests above compare; a trace or scenario outside it would go unchecked.
const CASES: &[&str] = &[
    "blackout-no-timestamps",
    "blackout-rto-min-500ms",
    "blackout-timestamps",
    "lossy-newreno-200ms",
    "lossy-newreno-50ms",
    "lossy-sack-200ms",
    "lossy-sack-50ms",
    "retries2-4",
    "rtt-step",
    "syn-dropped-3",
    "syn-dropped-5",
    "synack-retries-2",
    "user-timeout-5s",
    "zero-window",
    "zero-window-retries2-4",
];

#[test]
fn every_measured_trace_has_its_scenario_and_its_test() {
    let stems = |dir: &str, ext: &str| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(root().join(dir))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter_map(|n| n.strip_suffix(ext).map(str::to_string))
            .filter(|n| !n.ends_with(".ss"))
            .collect();
        names.sort();
        names
    };
    assert_eq!(stems("validation/linux/traces", ".csv"), CASES);
    assert_eq!(stems("validation/linux/scenarios", ".toml"), CASES);
}

/// A case whose every compared event after the first is a timer's: the measured and the
/// simulated events of the given kinds, in order.
fn timer_events(case: &str, kinds: &[&str]) -> (Events, Events) {
    let path = root().join(format!("validation/linux/traces/{case}.csv"));
    let mut r = csv::Reader::from_path(&path).unwrap();
    let m: Events = r
        .records()
        .map(|rec| rec.unwrap())
        .filter(|rec| kinds.contains(&&rec[1]))
        .map(|rec| (rec[0].parse().unwrap(), rec[1].to_string()))
        .collect();
    let scenario = load_file(&root().join(format!("validation/linux/scenarios/{case}.toml"))).unwrap();
    let job = Job {
        seeds: Seeds::new(scenario.seed),
        replication: 0,
        horizon: scenario.horizon,
        budget: Budget::replication(scenario.max_events),
    };
    let result = scenario.variants[0].cells[0].spec.run(job).unwrap();
    let s: Events = result
        .trace
        .iter()
        .filter(|row| row.client == 0 && kinds.contains(&row.event.to_string().as_str()))
        .map(|row| ((row.time.as_nanos() / 1_000_000) as i64, row.event.to_string()))
        .collect();
    (m, s)
}

/// The gaps between successive events, from the second on.
fn gaps(e: &Events) -> Vec<i64> {
    e.windows(2).map(|w| w[1].0 - w[0].0).collect()
}

/// Each measured gap within the wheel's slack of the simulated one (the timer set for
/// the simulated gap fires up to a jiffy early and up to its level's granularity late).
fn within_slack(case: &str, m: &Events, s: &Events) -> Result<usize, Vec<String>> {
    let kinds = |e: &Events| e.iter().map(|(_, k)| k.clone()).collect::<Vec<_>>();
    if kinds(m) != kinds(s) {
        return Err(vec![format!("{case}: measured {m:?}, simulated {s:?}")]);
    }
    let off: Vec<String> = gaps(m)
        .iter()
        .zip(gaps(s))
        .zip(&m[1..])
        .filter(|((mg, sg), _)| {
            let late = *mg - sg;
            late < -JIFFY_MS - MEASURE_MS || late > wheel_granularity_ms(*sg) + JIFFY_MS + MEASURE_MS
        })
        .map(|((mg, sg), (_, k))| format!("{k}: measured {mg} ms, simulated {sg} ms"))
        .collect();
    eprintln!("{case}: measured {:?}, simulated {:?}", gaps(m), gaps(s));
    if off.is_empty() { Ok(m.len()) } else { Err(off) }
}

const ZERO_WINDOW: &[&str] = &["zero_window", "window_probe", "aborted"];

#[test]
fn zero_window_answered_tcp_send_probe0_and_tcp_ack_probe() {
    // The model's gaps by hand, RTT 101 ms and RTO 304 ms (76 jiffies): the timer is armed
    // for tcp_probe0_base = max(RTO, TCP_RTO_MIN) = 304 ms (tcp_check_probe_timer); each
    // probe's answer re-arms it from the answer for tcp_probe0_when = 304 << icsk_backoff
    // (tcp_ack_probe), the backoff raised by the probe before it (tcp_send_probe0).
    let (m, s) = timer_events("zero-window", ZERO_WINDOW);
    assert_eq!(gaps(&s), [304, 101 + 608, 101 + 1216, 101 + 2432, 101 + 4864]);
    assert_eq!(within_slack("zero-window", &m, &s), Ok(6));
}

#[test]
fn zero_window_unanswered_tcp_probe_timer_retries2_4() {
    // Three answered probes as above (backoff 3); the path goes dark at 8 s. Each probe
    // from then on re-arms from itself (tcp_send_probe0), the backoff raised to 4 and no
    // further (icsk_backoff < tcp_retries2), so 304 << 4 = 4864 ms; the expiry that finds
    // icsk_probes_out = 4 >= tcp_retries2 aborts (tcp_probe_timer).
    let (m, s) = timer_events("zero-window-retries2-4", ZERO_WINDOW);
    assert_eq!(gaps(&s), [304, 101 + 608, 101 + 1216, 101 + 2432, 4864, 4864, 4864, 4864]);
    assert_eq!(s.last().map(|(_, k)| k.as_str()), Some("aborted"));
    assert_eq!(within_slack("zero-window-retries2-4", &m, &s), Ok(9));
}

#[test]
fn synack_retries_2_reqsk_timer_handler() {
    // The SYN-ACK at once (tcp_conn_request), again after TCP_TIMEOUT_INIT << num_timeout:
    // 1 s, 2 s (reqsk_timer_handler); the run after that finds num_timeout = 2 >=
    // tcp_synack_retries and drops the request (syn_ack_recalc) 4 s later.
    let (m, s) = timer_events("synack-retries-2", &["syn", "synack", "synack_retransmit"]);
    assert_eq!(gaps(&s), [0, 1000, 2000]);
    assert_eq!(within_slack("synack-retries-2", &m, &s), Ok(4));
    // The kernel's drop shows only in ss: between the last poll that saw the request in
    // SYN-RECV and the first that did not. The simulated drop, as a gap from the last
    // SYN-ACK, must fit that window widened by the slack.
    let (held, _) = timer_events("synack-retries-2", &["request_seen", "request_gone"]);
    let (_, expired) = timer_events("synack-retries-2", &["request_expired"]);
    let (last_m, last_s) = (m.last().unwrap().0, s.last().unwrap().0);
    let sim_gap = expired[0].0 - last_s;
    assert_eq!(sim_gap, 4000);
    let (seen, gone) = (held[0].0 - last_m, held[1].0 - last_m);
    assert!(
        seen <= sim_gap + wheel_granularity_ms(sim_gap) + JIFFY_MS + MEASURE_MS
            && gone >= sim_gap - JIFFY_MS - MEASURE_MS,
        "request held until {seen}..{gone} ms after the last SYN-ACK, simulated {sim_gap} ms"
    );
}

/// Bulk transfers over a path that drops the client's packets listed in
/// `validation/linux/drops/2pct-seed1.txt` (`[[path.event]] kind = "drop"` in the
/// scenario, `relay.py --drop-client-nth` in the measurement), each measured over ten
/// runs with the same list (`validation/linux/lossy.py`).
const LOSSY: &[&str] = &["lossy-newreno-200ms", "lossy-newreno-50ms", "lossy-sack-200ms", "lossy-sack-50ms"];
const DROPS: &str = "validation/linux/drops/2pct-seed1.txt";

/// A lossy case's runs: one map of column to value per run.
fn lossy_runs(case: &str) -> Vec<std::collections::BTreeMap<String, String>> {
    let path = root().join(format!("validation/linux/traces/{case}.csv"));
    let mut r = csv::Reader::from_path(&path).unwrap();
    let head = r.headers().unwrap().clone();
    r.records().map(|rec| head.iter().zip(rec.unwrap().iter()).map(|(h, v)| (h.into(), v.into())).collect()).collect()
}

/// The smallest and the largest a counter (or the sum of counters) took over the runs.
fn measured_range(case: &str, columns: &[&str]) -> (u64, u64) {
    let values: Vec<u64> =
        lossy_runs(case).iter().map(|run| columns.iter().map(|c| run[*c].parse::<u64>().unwrap()).sum()).collect();
    (*values.iter().min().unwrap(), *values.iter().max().unwrap())
}

/// What the kernel counts, from the model's trace: expiries of the retransmission timer
/// (`TcpExtTCPTimeouts`, `tcp_retransmit_timer`), and entries into fast recovery
/// (`TcpExtTCPSackRecovery` or `TcpExtTCPRenoRecovery`, `tcp_enter_recovery`): a
/// `retransmit` with no recovery under way starts one, which lasts until the cumulative
/// ACK reaches the highest segment sent when it started (`tp->high_seq`, left in
/// `tcp_try_undo_recovery` / `tcp_end_cwnd_reduction` once `snd_una >= high_seq`). A
/// timeout ends it and starts the loss state (`tcp_enter_loss`), in which
/// retransmissions start no recovery until the ACK passes what was sent by then.
#[derive(Debug, Default, PartialEq, Eq)]
struct LossCounts {
    timeouts: u64,
    recoveries: u64,
    retransmissions: u64,
    /// The first segment sent again (from 0), however: where the numbering of the drops
    /// lines up with the kernel's, it is the first one dropped.
    first_retransmitted: Option<u64>,
}

fn loss_counts<'a>(rows: impl IntoIterator<Item = (&'a str, Option<u64>)>) -> LossCounts {
    let mut counts = LossCounts::default();
    // One past the highest segment sent (SND.NXT), and the point the ACK must reach to
    // end the recovery or loss state under way.
    let mut next = 0;
    let mut until: Option<u64> = None;
    for (event, segment) in rows {
        match (event, segment) {
            ("send", Some(seq)) => next = next.max(seq + 1),
            // A probe sends new data if it can, else the last segment again.
            ("probe", Some(seq)) if seq >= next => next = seq + 1,
            ("probe", Some(seq)) => {
                counts.retransmissions += 1;
                counts.first_retransmitted.get_or_insert(seq);
            }
            // The expiry comes first, then the retransmission it sends (its own row).
            ("timeout", _) => {
                counts.timeouts += 1;
                until = Some(next);
            }
            ("retransmit", _) => {
                counts.retransmissions += 1;
                if let Some(seq) = segment {
                    counts.first_retransmitted.get_or_insert(seq);
                }
                if until.is_none() {
                    counts.recoveries += 1;
                    until = Some(next);
                }
            }
            ("ack", Some(ack)) if until.is_some_and(|u| ack >= u) => until = None,
            _ => {}
        }
    }
    counts
}

#[test]
fn loss_counts_follow_tcp_enter_recovery_and_tcp_enter_loss() {
    // Ten segments out; 3 lost: its retransmission starts a recovery, whose end is 10
    // (high_seq = SND.NXT at entry). A second hole (5) before the ACK reaches 10 is the
    // same recovery; the ACK of 10 ends it. A probe sends 10 (new data), then 11 goes out
    // and is probed again; the RTO then retransmits 10: loss, not a recovery, even with
    // the retransmission of 11 after it; the ACK of 12 ends it, and the retransmission of
    // 12 afterwards starts a second recovery.
    let mut rows: Vec<(&str, Option<u64>)> = (0..10).map(|s| ("send", Some(s))).collect();
    rows.extend([("ack", Some(3)), ("retransmit", Some(3)), ("ack", Some(5)), ("retransmit", Some(5))]);
    rows.extend([("ack", Some(9)), ("ack", Some(10)), ("probe", Some(10)), ("send", Some(11))]);
    rows.extend([("probe", Some(11)), ("timeout", None), ("retransmit", Some(10)), ("ack", Some(11))]);
    rows.extend([("retransmit", Some(11)), ("ack", Some(12)), ("send", Some(12)), ("send", Some(13))]);
    rows.extend([("retransmit", Some(12))]);
    assert_eq!(
        loss_counts(rows),
        LossCounts { timeouts: 1, recoveries: 2, retransmissions: 6, first_retransmitted: Some(3) }
    );
}

fn simulated_loss_counts(case: &str) -> LossCounts {
    let scenario = load_file(&root().join(format!("validation/linux/scenarios/{case}.toml"))).unwrap();
    assert_eq!((scenario.replications, scenario.variants.len()), (1, 1), "{case}: one run");
    let job = Job {
        seeds: Seeds::new(scenario.seed),
        replication: 0,
        horizon: scenario.horizon,
        budget: Budget::replication(scenario.max_events),
    };
    let result = scenario.variants[0].cells[0].spec.run(job).unwrap();
    let rows: Vec<(String, Option<u64>)> =
        result.trace.iter().filter(|row| row.client == 0).map(|row| (row.event.to_string(), row.segment)).collect();
    let mut counts = loss_counts(rows.iter().map(|(e, s)| (e.as_str(), *s)));
    // The trace names the sender's recovery state: each entry into `recovery` is one
    // tcp_enter_recovery, which is what TcpExtTCPSackRecovery / TCPRenoRecovery count.
    let states = result.trace.iter().filter(|row| row.client == 0).map(|row| row.ca_state.unwrap_or_default());
    counts.recoveries = entries_into(states, "recovery");
    counts
}

/// How many times a run of state names enters `state`.
fn entries_into<'a>(states: impl Iterator<Item = &'a str>, state: &str) -> u64 {
    let mut prev = "";
    let mut n = 0;
    for s in states {
        n += u64::from(s == state && prev != state);
        prev = s;
    }
    n
}

/// Where the model is known to differ from every measured run, by how many recovery
/// episodes (model minus the nearest measured value), so that a fix shows up here.
/// `lossy-newreno-50ms`: one fewer recovery than the kernel's least (36 against 37–38),
/// with the same timeouts and retransmission count; which two drops the kernel repairs in
/// separate episodes and the model in one is not yet found.
const LOSSY_KNOWN: &[(&str, i64)] = &[("lossy-newreno-50ms", -1)];

#[test]
fn entries_into_counts_each_arrival_in_a_state_once() {
    let states = ["open", "recovery", "recovery", "open", "loss", "recovery", "disorder", "recovery"];
    assert_eq!(entries_into(states.into_iter(), "recovery"), 3);
    assert_eq!(entries_into(states.into_iter(), "loss"), 1);
}

/// The simulated timeouts and recoveries each within the range the kernel's runs
/// measured, min to max: the kernel's own spread with the same drops is the only slack.
fn check_lossy(case: &str) {
    let timeouts = measured_range(case, &["timeouts"]);
    let recoveries = measured_range(case, &["sack_recovery", "reno_recovery"]);
    let retrans = measured_range(case, &["retrans_segs"]);
    let s = simulated_loss_counts(case);
    // Packet number n of the drop list is data segment n - 2 (the SYN is 1), in the model
    // as in every run (`every_lossy_scenario_drops_the_measured_list…`).
    assert_eq!(s.first_retransmitted, Some(drop_list()[0] - 2), "{case}: the first segment sent again");
    eprintln!(
        "{case}: measured timeouts {timeouts:?}, recoveries {recoveries:?}, retransmitted segments {retrans:?}; \
         simulated {s:?}"
    );
    let within = |x: u64, (lo, hi): (u64, u64)| lo <= x && x <= hi;
    if let Some(&(_, off)) = LOSSY_KNOWN.iter().find(|(c, _)| *c == case) {
        let nearest = if off < 0 { recoveries.0 } else { recoveries.1 };
        assert_eq!(s.recoveries as i64 - nearest as i64, off, "{case}: the known difference changed: {s:?}");
        assert!(within(s.timeouts, timeouts), "{case}: simulated {} timeouts, measured {timeouts:?}", s.timeouts);
        return;
    }
    assert!(
        within(s.timeouts, timeouts) && within(s.recoveries, recoveries),
        "{case}: simulated {} timeouts and {} recoveries, measured {timeouts:?} and {recoveries:?}",
        s.timeouts,
        s.recoveries
    );
}

#[test]
fn lossy_sack_200ms_rack_tlp_cubic() {
    // tcp_sack = 1: RACK (tcp_rack_mark_lost) and loss probes (tcp_schedule_loss_probe).
    check_lossy("lossy-sack-200ms");
}

#[test]
fn lossy_sack_50ms_rack_tlp_cubic() {
    check_lossy("lossy-sack-50ms");
}

#[test]
fn lossy_newreno_200ms_tcp_sack_0() {
    // tcp_sack = 0: three duplicate ACKs (tcp_time_to_recover with tp->reordering 3),
    // NewReno's partial ACKs (tcp_try_undo_partial, RFC 6582); no RACK, no loss probes.
    check_lossy("lossy-newreno-200ms");
}

#[test]
fn lossy_newreno_50ms_tcp_sack_0() {
    check_lossy("lossy-newreno-50ms");
}

/// The drops a scenario writes, in order.
fn scenario_drops(case: &str) -> Vec<u64> {
    let text = std::fs::read_to_string(root().join(format!("validation/linux/scenarios/{case}.toml"))).unwrap();
    let mut drops = Vec::new();
    let mut in_drop = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_drop = false;
        } else if line == "kind = \"drop\"" {
            in_drop = true;
        } else if in_drop && let Some(n) = line.strip_prefix("nth = ") {
            drops.push(n.parse().unwrap());
        }
    }
    drops
}

/// The packet numbers the relay and the scenarios drop.
fn drop_list() -> Vec<u64> {
    let text = std::fs::read_to_string(root().join(DROPS)).unwrap();
    text.lines()
        .map(|l| l.split('#').next().unwrap().trim())
        .filter(|l| !l.is_empty())
        .map(|l| l.parse().unwrap())
        .collect()
}

#[test]
fn every_lossy_scenario_drops_the_measured_list_and_every_case_ran_five_times() {
    let list = drop_list();
    // 2 % of packets 2..=2400 (the first is the SYN).
    assert!((30..=70).contains(&list.len()) && list[0] >= 2, "{list:?}");
    for case in LOSSY {
        assert_eq!(scenario_drops(case), list, "{case}");
        let runs = lossy_runs(case);
        assert!(runs.len() >= 5, "{case}: {} runs", runs.len());
        // Every run met the same list: the relay dropped each listed packet the client sent
        // (SYNs and segments with data, counted in the capture as the model counts them).
        for run in &runs {
            let sent: u64 = run["packets"].parse().unwrap();
            let reached = list.iter().filter(|&&n| n <= sent).count();
            assert_eq!(run["dropped"].parse::<usize>().unwrap(), reached, "{case}: run {}", run["run"]);
            // The first segment sent again is the first one dropped: data segment n - 2 for
            // packet n (the SYN is 1, the handshake's pure ACK takes no number).
            assert_eq!(run["first_retransmitted"], (list[0] - 2).to_string(), "{case}: run {}", run["run"]);
        }
    }
}
