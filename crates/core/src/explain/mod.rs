//! `explain`: what a user asks first about a policy, answered without a scenario — the
//! delay before each attempt (min, p50, p99, max), the expected and worst-case time
//! until an always-failing call gives up, whether the cap is a hard cap and whether
//! draws pile up at it, and how many attempts are made.
//!
//! The analysis works on any [`DelaySource`]: anything that, told that an attempt
//! failed, says when the next one starts or that it gives up. [`retry::FailingCalls`]
//! is the retry policy's implementation. The gRPC connection-backoff profiles
//! (`grpc-connection-spec`, `-core`, `-go`, `-java`) fit the same trait
//! ([`grpc::ConnectionSource`]): their `Caller` is the connection's backoff state,
//! `after_failure` runs one turn of the connect loop (grpc-core counts the next deadline
//! from `attempt_start`, grpc-go from `now`, which is why both are passed), they never
//! give up (the simulation stops them at [`Options::horizon`] attempts, reason
//! `horizon`), and `facts` describes the profile. `cli::explain` then only needs to map
//! the name to the profile.
//!
//! Runs are independent: run i draws from `Seeds::stream(0, i, Purpose::Jitter)`, so
//! the results depend on the seed and not on the thread count (rayon over runs,
//! collected in order).

pub mod grpc;
pub mod retry;

use std::io::{self, Write};

use rayon::prelude::*;

use crate::engine::rng::{Purpose, Seeds, SimRng};
use crate::engine::time::{SimDuration, SimTime};
use crate::human::duration as human;
use crate::metrics::quantile::quantile;
use crate::metrics::trace;

/// What comes after a failed attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// The next attempt starts at `at`.
    Attempt { at: SimTime },
    /// The caller gives up at `at`; `reason` is a one-word slug.
    GiveUp { at: SimTime, reason: &'static str },
}

/// Something that decides when a caller whose attempts all fail tries again.
pub trait DelaySource: Sync {
    /// One caller's state.
    type Caller: Send;
    /// A caller whose first attempt starts at `start`.
    fn start(&self, start: SimTime) -> Self::Caller;
    /// The attempt that began at `attempt_start` failed at `now`.
    fn after_failure(&self, caller: &mut Self::Caller, attempt_start: SimTime, now: SimTime, rng: &mut SimRng) -> Next;
    /// The nominal delay before retry k+1 (k from 0), for the table; `None` if the
    /// source has none (decorrelated jitter).
    fn nominal(&self, k: u32) -> Option<SimDuration>;
    /// What can be said without simulating, for attempts that take `attempt_time`.
    fn facts(&self, attempt_time: SimDuration) -> Facts;
}

/// The analytic half of a report.
#[derive(Clone, Debug, PartialEq)]
pub struct Facts {
    pub title: String,
    /// Labelled lines: source, sleep formula, draws, limit, cap, retried, …
    pub lines: Vec<(&'static str, String)>,
    /// The cap, for the "at cap" column.
    pub cap: Option<SimDuration>,
    /// An upper bound on the total sleep of an always-failing caller (`None`: none).
    pub worst_sleep: Option<SimDuration>,
    /// An upper bound on the time until it gives up (`None`: none).
    pub worst_give_up: Option<SimDuration>,
}

/// How to simulate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    pub runs: u32,
    pub seed: u64,
    /// How long each attempt takes before it fails.
    pub attempt_time: SimDuration,
    /// Attempts per run at most (for sources that never give up).
    pub horizon: u32,
}

impl Default for Options {
    fn default() -> Self {
        Options { runs: 10_000, seed: 1, attempt_time: SimDuration::ZERO, horizon: 10_000 }
    }
}

/// One simulated caller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Run {
    /// Attempt start times since the call started; the first is 0.
    pub starts: Vec<SimDuration>,
    /// The sleep just before each attempt (0 for the first).
    pub sleeps: Vec<SimDuration>,
    pub give_up: SimDuration,
    pub reason: &'static str,
}

impl Run {
    pub fn attempts(&self) -> usize {
        self.starts.len()
    }

    /// The time spent not attempting: the sleeps between attempts plus any wait after
    /// the last attempt before giving up (`sleep-then-stop`, `cut`).
    pub fn total_sleep(&self, attempt_time: SimDuration) -> SimDuration {
        let between: u64 = self.sleeps.iter().map(|s| s.as_nanos()).sum();
        let last_end = self.starts.last().map_or(0, |s| s.as_nanos()) + attempt_time.as_nanos();
        SimDuration::from_nanos(between + self.give_up.as_nanos().saturating_sub(last_end))
    }
}

/// Simulates `opts.runs` always-failing callers, in run order.
pub fn simulate<S: DelaySource>(source: &S, opts: &Options) -> Vec<Run> {
    let seeds = Seeds::new(opts.seed);
    (0..opts.runs)
        .into_par_iter()
        .map(|i| {
            let mut rng = seeds.stream(0, u64::from(i), Purpose::Jitter);
            one_run(source, opts, &mut rng)
        })
        .collect()
}

fn one_run<S: DelaySource>(source: &S, opts: &Options, rng: &mut SimRng) -> Run {
    let t0 = SimTime::ZERO;
    let mut caller = source.start(t0);
    let mut start = t0;
    let mut run = Run {
        starts: vec![SimDuration::ZERO],
        sleeps: vec![SimDuration::ZERO],
        give_up: SimDuration::ZERO,
        reason: "",
    };
    loop {
        let end = start.saturating_add(opts.attempt_time);
        match source.after_failure(&mut caller, start, end, rng) {
            Next::Attempt { at } => {
                if run.starts.len() >= opts.horizon as usize {
                    run.give_up = end - t0;
                    run.reason = "horizon";
                    return run;
                }
                run.sleeps.push(at.saturating_since(end));
                run.starts.push(at - t0);
                start = at;
            }
            Next::GiveUp { at, reason } => {
                run.give_up = at.saturating_since(t0);
                run.reason = reason;
                return run;
            }
        }
    }
}

/// Seconds to the millisecond, for the table's aligned columns headed `… s`.
fn secs(ns: u64) -> String {
    format!("{:.3}", ns as f64 / 1e9)
}

/// Distribution summary of nanosecond values.
struct Dist {
    min: u64,
    p50: u64,
    p99: u64,
    max: u64,
    mean: f64,
}

fn dist(mut v: Vec<u64>) -> Dist {
    v.sort_unstable();
    let mean = v.iter().map(|&x| x as f64).sum::<f64>() / v.len().max(1) as f64;
    Dist {
        min: v.first().copied().unwrap_or(0),
        p50: quantile(&v, 0.5).unwrap_or(0),
        p99: quantile(&v, 0.99).unwrap_or(0),
        max: v.last().copied().unwrap_or(0),
        mean,
    }
}

/// Writes the human report.
pub fn write_report<S: DelaySource, W: Write>(
    out: &mut W,
    source: &S,
    failing_with: &str,
    runs: &[Run],
    opts: &Options,
) -> io::Result<()> {
    let facts = source.facts(opts.attempt_time);
    writeln!(out, "{}", facts.title)?;
    let width = facts.lines.iter().map(|(l, _)| l.len()).max().unwrap_or(0);
    for (label, text) in &facts.lines {
        writeln!(out, "  {label:<width$}  {text}")?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "{} always-failing calls (each attempt fails with {failing_with} after {}), seed {}:",
        runs.len(),
        human(opts.attempt_time),
        opts.seed
    )?;
    let max_attempts = runs.iter().map(Run::attempts).max().unwrap_or(0);
    writeln!(
        out,
        "  {:>7}  {:>7}  {:>9}  {:>9}  {:>9}  {:>9}  {:>9}  {:>9}  {:>6}",
        "attempt", "reached", "nominal", "min s", "p50 s", "p99 s", "max s", "mean s", "at cap"
    )?;
    let n = runs.len().max(1) as f64;
    for j in 0..max_attempts {
        let sleeps: Vec<u64> = runs.iter().filter(|r| r.attempts() > j).map(|r| r.sleeps[j].as_nanos()).collect();
        let reached = sleeps.len() as f64 / n * 100.0;
        if j == 0 {
            writeln!(
                out,
                "  {:>7}  {:>6.1}%  {:>9}  {:>9}  {:>9}  {:>9}  {:>9}  {:>9}  {:>6}",
                1, reached, "-", "-", "-", "-", "-", "-", "-"
            )?;
            continue;
        }
        let nominal = source.nominal(j as u32 - 1).map_or("-".to_string(), human);
        let at_cap = match facts.cap {
            Some(c) => {
                let k = sleeps.iter().filter(|&&s| s == c.as_nanos()).count();
                format!("{:.1}%", k as f64 / sleeps.len().max(1) as f64 * 100.0)
            }
            None => "-".to_string(),
        };
        let d = dist(sleeps);
        writeln!(
            out,
            "  {:>7}  {:>6.1}%  {:>9}  {:>9}  {:>9}  {:>9}  {:>9}  {:>9}  {:>6}",
            j + 1,
            reached,
            nominal,
            secs(d.min),
            secs(d.p50),
            secs(d.p99),
            secs(d.max),
            format!("{:.3}", d.mean / 1e9),
            at_cap
        )?;
    }
    let attempts: Vec<u64> = runs.iter().map(|r| r.attempts() as u64).collect();
    let a = dist(attempts);
    let attempts_line = if a.min == a.max {
        format!("{} in every call", a.min)
    } else {
        format!("min {}, mean {:.2}, max {}", a.min, a.mean, a.max)
    };
    // Seconds to the millisecond, one unit for the whole line, so that a maximum just
    // under the worst case (119.996 s against 120.000 s) reads as under it; the worst
    // case is said in words too where seconds are not what a person would say.
    let ms = |ns: f64| format!("{:.3} s", ns / 1e9);
    let worst = |w: Option<SimDuration>| match w {
        Some(w) => {
            let words = human(w);
            let secs = ms(w.as_nanos() as f64);
            if words.ends_with(" s") || words.ends_with("ms") || words.ends_with("µs") {
                format!("; worst case {secs}")
            } else {
                format!("; worst case {secs} ({words})")
            }
        }
        None => "; no worst case: unbounded".to_string(),
    };
    let sleep = dist(runs.iter().map(|r| r.total_sleep(opts.attempt_time).as_nanos()).collect());
    let until = dist(runs.iter().map(|r| r.give_up.as_nanos()).collect());
    let line = |d: &Dist| {
        format!("mean {}, p50 {}, p99 {}, max {}", ms(d.mean), ms(d.p50 as f64), ms(d.p99 as f64), ms(d.max as f64))
    };
    writeln!(out, "  attempts        {attempts_line}")?;
    writeln!(out, "  total sleep     {}{}", line(&sleep), worst(facts.worst_sleep))?;
    writeln!(out, "  until give-up   {}{}", line(&until), worst(facts.worst_give_up))?;
    let mut reasons: Vec<(&str, usize)> = Vec::new();
    for r in runs {
        match reasons.iter_mut().find(|(k, _)| *k == r.reason) {
            Some((_, c)) => *c += 1,
            None => reasons.push((r.reason, 1)),
        }
    }
    let reasons: Vec<String> = reasons.iter().map(|(k, c)| format!("{k} {:.1}%", *c as f64 / n * 100.0)).collect();
    writeln!(out, "  gave up         {}", reasons.join(", "))?;
    Ok(())
}

/// `run,attempt,sleep_s,elapsed_s`: one row per attempt.
pub fn write_attempts_csv<W: Write>(out: &mut W, runs: &[Run]) -> io::Result<()> {
    writeln!(out, "run,attempt,sleep_s,elapsed_s")?;
    for (i, r) in runs.iter().enumerate() {
        for (j, (sleep, start)) in r.sleeps.iter().zip(&r.starts).enumerate() {
            writeln!(out, "{i},{},{},{}", j + 1, trace::secs(sleep.as_nanos()), trace::secs(start.as_nanos()))?;
        }
    }
    Ok(())
}

/// `run,attempts,total_sleep_s,giveup_s,reason`: one row per call.
pub fn write_runs_csv<W: Write>(out: &mut W, runs: &[Run], attempt_time: SimDuration) -> io::Result<()> {
    writeln!(out, "run,attempts,total_sleep_s,giveup_s,reason")?;
    for (i, r) in runs.iter().enumerate() {
        writeln!(
            out,
            "{i},{},{},{},{}",
            r.attempts(),
            trace::secs(r.total_sleep(attempt_time).as_nanos()),
            trace::secs(r.give_up.as_nanos()),
            r.reason
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::retry::{FailingCalls, formula_text};
    use super::*;
    use crate::model::retry::RetryPolicyConfig;
    use crate::model::retry::{Outcome, RetryPolicy};

    fn policy(name: &str, sets: &[(&str, &str)]) -> RetryPolicy {
        RetryPolicyConfig::with_pairs(Some(name), sets).resolve().unwrap()
    }

    fn run(p: &RetryPolicy, runs: u32) -> Vec<Run> {
        let src = FailingCalls { policy: p, outcome: p.retry_on.typical_failure() };
        simulate(&src, &Options { runs, ..Options::default() })
    }

    #[test]
    fn seed_loop_mean_sleep_is_7_5_and_never_reaches_15() {
        let p = policy("seed-loop", &[]);
        let runs = run(&p, 20_000);
        let mean = runs.iter().map(|r| r.total_sleep(SimDuration::ZERO).as_secs_f64()).sum::<f64>() / runs.len() as f64;
        assert!((mean - 7.5).abs() < 0.1, "{mean}");
        assert!(runs.iter().all(|r| r.attempts() == 5 && r.reason == "attempts"));
        assert!(runs.iter().all(|r| r.total_sleep(SimDuration::ZERO) < SimDuration::from_secs(15)));
        let f = FailingCalls { policy: &p, outcome: Outcome::status(503) }.facts(SimDuration::ZERO);
        assert_eq!(f.worst_sleep, Some(SimDuration::from_nanos(14_999_999_996)));
    }

    #[test]
    fn results_do_not_depend_on_the_thread_count() {
        let p = policy("gcs-python", &[]);
        let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap().install(|| run(&p, 500));
        let four = rayon::ThreadPoolBuilder::new().num_threads(4).build().unwrap().install(|| run(&p, 500));
        assert_eq!(one, four);
    }

    #[test]
    fn worst_cases_follow_the_stop_rule() {
        let a = SimDuration::from_secs(1);
        let s = SimDuration::from_secs;
        let facts = |name: &str| {
            let p = policy(name, &[]);
            FailingCalls { outcome: p.retry_on.typical_failure(), policy: &p }.facts(a)
        };
        // gcs-python: never sleeps past 120 s; the attempt that starts by then ends 1 s later.
        assert_eq!(facts("gcs-python").worst_give_up, Some(s(121)));
        // gcs-cpp: a 300 s sleep may start just before 15 min.
        assert_eq!(facts("gcs-cpp").worst_give_up, Some(s(1200)));
        // tenacity: the sleep crossing 120 s (≤ 60 s) in full, then one more attempt.
        assert_eq!(facts("tenacity-random-exp").worst_give_up, Some(s(181)));
        // python-backoff: elapsed is read at the attempt's start: 120 s + 2 attempts.
        assert_eq!(facts("python-backoff").worst_give_up, Some(s(122)));
        // backon: 1 + 2 + 4 s of sleep and four attempts.
        assert_eq!(facts("backon").worst_give_up, Some(s(11)));
    }

    #[test]
    fn csv_rows_are_exact_and_complete() {
        let p = policy("backon", &[]);
        let runs = run(&p, 2);
        let mut buf = Vec::new();
        write_attempts_csv(&mut buf, &runs).unwrap();
        let text = String::from_utf8(buf).unwrap();
        assert_eq!(
            text.lines().take(5).collect::<Vec<_>>(),
            [
                "run,attempt,sleep_s,elapsed_s",
                "0,1,0.000000000,0.000000000",
                "0,2,1.000000000,1.000000000",
                "0,3,2.000000000,3.000000000",
                "0,4,4.000000000,7.000000000",
            ]
        );
        assert_eq!(text.lines().count(), 1 + 2 * 4);
        let mut buf = Vec::new();
        write_runs_csv(&mut buf, &runs, SimDuration::ZERO).unwrap();
        assert_eq!(
            String::from_utf8(buf).unwrap(),
            "run,attempts,total_sleep_s,giveup_s,reason\n0,4,7.000000000,7.000000000,attempts\n1,4,7.000000000,7.000000000,attempts\n"
        );
    }

    #[test]
    fn formula_texts() {
        assert_eq!(formula_text(&policy("seed-loop", &[])), "U(0, min(1 s × 2^k, 30 s))");
        assert_eq!(formula_text(&policy("gcloud", &[])), "min(1 s × 2^k + U(0, 1 s), 32 s)");
        assert_eq!(
            formula_text(&policy("gcs-cpp", &[])),
            "U(d, 2·d), d = 1 s × 2^k; once 2·d ≥ 5 min: U(2.5 min, 5 min), truncated to a multiple of 1 ms"
        );
        assert_eq!(
            formula_text(&policy("aws-standard", &[])),
            "U(0, min(50 ms × 2^k, 20 s)); from 1 s × 2^k after a throttling error"
        );
        assert_eq!(formula_text(&policy("backon", &[])), "min(1 s × 2^k, 60 s)");
    }
}
