//! Drives a retransmission-timer estimator through a series of RTT samples and timer
//! expiries and prints its state after each event: the path's RTT steps from 100 ms to
//! 1.2 s, two timeouts double the timer, and a fresh sample brings it back down.
//!
//! `cargo run --example rto_estimator [rfc6298|linux]`

use backoffsim::engine::time::{SimDuration, SimTime};
use backoffsim::human::duration;
use backoffsim::model::rto::{Phase, RtoConfig, RtoEstimator};

enum Event {
    /// An RTT sample, in milliseconds.
    Sample(u64),
    Timeout,
}

fn main() {
    let profile = std::env::args().nth(1).unwrap_or_else(|| "rfc6298".into());
    match table(&profile) {
        Ok(text) => print!("{text}"),
        Err(e) => {
            eprintln!("rto_estimator: {e}");
            std::process::exit(2);
        }
    }
}

/// The estimator's state after each event, as a table.
fn table(profile: &str) -> Result<String, String> {
    let config = RtoConfig { profile: profile.parse()?, ..RtoConfig::default() };
    let params = config.resolve().expect("a profile's defaults always check");
    let mut rto = RtoEstimator::new(&params);

    let mut events: Vec<Event> = [100, 110, 95, 100, 1200, 1250, 1180, 1200].into_iter().map(Event::Sample).collect();
    events.extend([Event::Timeout, Event::Timeout, Event::Sample(1200)]);

    let mut out = format!("profile {profile}: initial RTO {}\n", duration(rto.rto()));
    let row = |cells: [&str; 6]| {
        format!(
            "{:>8}  {:>10}  {:>10}  {:>10}  {:>10}  {:>8}\n",
            cells[0], cells[1], cells[2], cells[3], cells[4], cells[5]
        )
    };
    out += &row(["t", "event", "srtt", "rttvar", "rto", "backoffs"]);
    let show = |d: Option<SimDuration>| d.map_or("-".to_string(), duration);
    // One event every 100 ms of simulated time.
    let mut now = SimTime::ZERO;
    for event in events {
        now = now.saturating_add(SimDuration::from_millis(100));
        let what = match event {
            Event::Sample(ms) => {
                let rtt = SimDuration::from_millis(ms);
                rto.on_sample(now, rtt, None);
                format!("rtt {}", duration(rtt))
            }
            Event::Timeout => {
                rto.on_timeout(Phase::Established);
                "timeout".to_string()
            }
        };
        let s = rto.snapshot();
        let t = duration(now.saturating_since(SimTime::ZERO));
        out += &row([&t, &what, &show(s.srtt), &show(s.rttvar), &duration(s.rto), &s.backoffs.to_string()]);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_timeouts_double_the_rto_twice_and_a_sample_brings_it_back() {
        let text = table("rfc6298").unwrap();
        let rto_of = |event: &str| -> Vec<String> {
            text.lines()
                .filter(|l| l.contains(event))
                .map(|l| l.split_whitespace().nth_back(2).unwrap().into())
                .collect()
        };
        // SRTT 558 ms + 4·RTTVAR 602 ms ≈ 2.97 s before the timeouts; 5.93 s, 11.9 s after.
        assert_eq!(rto_of("timeout"), ["5.93", "11.9"], "{text}");
        assert!(text.lines().last().unwrap().trim_end().ends_with(" 0"), "a sample clears the backoff:\n{text}");
        assert_eq!(text.lines().count(), 2 + 11);
    }

    #[test]
    fn the_linux_profile_starts_lower_and_an_unknown_one_is_refused() {
        assert!(table("linux").unwrap().lines().nth(2).unwrap().contains("300 ms"));
        assert!(table("bbr").is_err());
    }
}
