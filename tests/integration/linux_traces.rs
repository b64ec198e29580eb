//! The tcp world against this project's measurements of a Linux kernel
//! (`validation/linux/`): for every committed trace, the equivalent scenario is run and
//! its timer events are compared with the measured ones, gap by gap.
//!
//! Slack: a Linux TCP timer is a timer-wheel timer (`kernel/time/timer.c`,
//! `calc_wheel_index`): its expiry counts from the current jiffy (HZ 250, 4 ms, so up to
//! one jiffy early against the instant it was armed) and is rounded up to its wheel
//! level's granularity, 8^level jiffies, the level set by the delay (below 63 jiffies
//! level 0, below 504 level 1, below 4032 level 2, …). A measured gap may thus be late by
//! up to that granularity, 32 ms for a 1 s timer and 256 ms for a 4 s one, and early by a
//! jiffy; 2 ms more cover the relay's and the capture's own timing. Nothing else is
//! allowed: where the model and the kernel differ the test asserts the difference.

use crate::common::{root, run};

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

/// (ms since the first SYN, kind) of the events the test compares: the instants the
/// path changed and the timer's doings.
type Events = Vec<(i64, String)>;

const COMPARED: &[&str] = &["blackout", "rtt_change", "timeout", "probe", "aborted"];

fn measured(case: &str) -> Events {
    let path = root().join(format!("validation/linux/traces/{case}.csv"));
    let mut r = csv::Reader::from_path(&path).unwrap();
    r.records()
        .map(|rec| {
            let rec = rec.unwrap();
            let kind = if &rec[1] == "syn_retransmit" { "timeout" } else { &rec[1] };
            (rec[0].parse().unwrap(), kind.to_string())
        })
        .filter(|(_, k): &(i64, String)| COMPARED.contains(&k.as_str()))
        .collect()
}

/// The scenario's timer events, with the path's changes (at the same instants as the
/// relay's schedule, counted from the first SYN) taken from the measured trace.
fn simulated(case: &str, path_changes: &Events) -> Events {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let file = root().join(format!("validation/linux/scenarios/{case}.toml"));
    let o = run(&["run", file.to_str().unwrap(), "--quiet", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut r = csv::Reader::from_path(out.join("trace.csv")).unwrap();
    let headers = r.headers().unwrap().clone();
    let col = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let (time, event) = (col("time_s"), col("event"));
    let mut events: Events = r
        .records()
        .map(|rec| {
            let rec = rec.unwrap();
            let t: f64 = rec[time].parse().unwrap();
            ((t * 1000.0).round() as i64, rec[event].to_string())
        })
        .filter(|(_, k)| COMPARED.contains(&k.as_str()))
        .collect();
    events.extend(path_changes.iter().cloned());
    events.sort();
    events
}

/// Compares gap by gap: the same kinds in the same order (up to the shorter of the
/// two, the run or the horizon having ended one of them), and each measured gap
/// within the wheel's slack of the simulated one.
fn compare(case: &str) -> Result<usize, String> {
    let m = measured(case);
    let changes: Events = m.iter().filter(|(_, k)| k == "blackout" || k == "rtt_change").cloned().collect();
    let s = simulated(case, &changes);
    let n = m.len().min(s.len());
    for i in 0..n {
        if m[i].1 != s[i].1 {
            return Err(format!(
                "event {i}: measured {} at {} ms, simulated {} at {} ms",
                m[i].1, m[i].0, s[i].1, s[i].0
            ));
        }
        if i == 0 {
            continue;
        }
        let (mg, sg) = (m[i].0 - m[i - 1].0, s[i].0 - s[i - 1].0);
        let late = mg - sg;
        let slack = wheel_granularity_ms(sg);
        if late < -JIFFY_MS - MEASURE_MS || late > slack + JIFFY_MS + MEASURE_MS {
            return Err(format!(
                "event {i} ({}): measured gap {mg} ms, simulated {sg} ms, {late} ms late, slack {slack} ms",
                m[i].1
            ));
        }
    }
    if m.len() != s.len() {
        return Err(format!("{} events measured, {} simulated", m.len(), s.len()));
    }
    Ok(n)
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
