//! What a scenario schedules at or after its horizon: a restart, outage, brownout,
//! blackout or RTT change that never happens, clients that never start. Such a scenario
//! is valid and runs, but its numbers answer nothing about what the user wrote, so the
//! loader warns rather than refuses.
//!
//! The keys are found by name over the whole file rather than listed per model, so that
//! a time key a model adds later (every scheduled time in a section is an `at`, every
//! first start a `start`) is covered without being remembered here.

use serde_spanned::Spanned;
use toml::de::{DeTable, DeValue};

use crate::engine::time::SimDuration;

use super::load::join;

/// A key and what is wrong with its time, the message to show after it.
pub type Late = (String, String);

/// Every time in `table` at or after `horizon`, in file order.
pub fn late(table: &Spanned<DeTable<'_>>, horizon: SimDuration) -> Vec<Late> {
    let mut found: Vec<(usize, Late)> = Vec::new();
    walk(table.get_ref(), "", horizon, &mut found);
    found.sort_by_key(|(at, _)| *at);
    found.into_iter().map(|(_, late)| late).collect()
}

fn duration(value: Option<&Spanned<DeValue<'_>>>) -> Option<SimDuration> {
    match value?.get_ref() {
        DeValue::String(s) => SimDuration::parse(s).ok(),
        _ => None,
    }
}

fn walk(table: &DeTable<'_>, prefix: &str, horizon: SimDuration, out: &mut Vec<(usize, Late)>) {
    let start = duration(table.get("start")).unwrap_or(SimDuration::ZERO);
    for (key, value) in table {
        let path = join(prefix, key.get_ref());
        let at = value.span().start;
        match value.get_ref() {
            DeValue::Table(t) => walk(t, &path, horizon, out),
            DeValue::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    if let DeValue::Table(t) = item.get_ref() {
                        walk(t, &format!("{path}[{i}]"), horizon, out);
                    }
                }
            }
            _ => {
                let Some(time) = duration(Some(value)) else { continue };
                let message = match key.get_ref().as_ref() {
                    "at" if time >= horizon => {
                        format!("{time} is at or after the horizon ({horizon}): it never happens")
                    }
                    "start" if time >= horizon => {
                        format!("{time} is at or after the horizon ({horizon}): no client ever starts")
                    }
                    // Starts are uniform over [start, start + spread): the share past the
                    // horizon never starts.
                    "start_spread" if start < horizon && SimDuration(start.0.saturating_add(time.0)) > horizon => {
                        let past = (start.0.saturating_add(time.0) - horizon.0) as f64 / time.0 as f64;
                        format!(
                            "{time} spreads first starts past the horizon ({horizon}): about {:.0} % of the clients \
                             never start",
                            past * 100.0
                        )
                    }
                    _ => continue,
                };
                out.push((at, (path, message)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn late_in(toml: &str, horizon: &str) -> Vec<Late> {
        let table = DeTable::parse(toml).unwrap();
        late(&table, SimDuration::parse(horizon).unwrap())
    }

    #[test]
    fn a_scheduled_time_at_or_after_the_horizon_never_happens_and_one_before_it_does() {
        // The run loop handles an event exactly at the horizon, but nothing after it is
        // measured, so a restart there changes no metric: "at" the horizon warns too.
        let found = late_in(
            "[[server.restart]]\nat = \"10s\"\ndown = \"1s\"\n[[server.restart]]\nat = \"5s\"\ndown = \"1s\"\n\
             [[server.restart]]\nat = \"4999ms\"\ndown = \"1s\"\n[[path.blackout]]\nat = \"1min\"\nduration = \"1s\"\n",
            "5s",
        );
        let keys: Vec<&str> = found.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["server.restart[0].at", "server.restart[1].at", "path.blackout[0].at"]);
        assert_eq!(found[0].1, "10s is at or after the horizon (5s): it never happens");
    }

    #[test]
    fn clients_starting_after_the_horizon_are_named_and_a_spread_past_it_says_how_many() {
        let found = late_in("[calls]\nstart = \"6s\"\n[jobs.provider]\nx = 1\n", "5s");
        assert_eq!(found, [("calls.start".into(), "6s is at or after the horizon (5s): no client ever starts".into())]);
        // Uniform over [0, 10s): half fall after 5 s.
        let found = late_in("[tcp]\nstart_spread = \"10s\"\n", "5s");
        assert_eq!(found[0].0, "tcp.start_spread");
        assert!(found[0].1.contains("about 50 % of the clients never start"), "{}", found[0].1);
        // [2s, 5s) ends before 5 s: every client starts.
        assert!(late_in("[calls]\nstart = \"2s\"\nstart_spread = \"3s\"\n", "5s").is_empty());
    }

    #[test]
    fn words_and_durations_that_are_not_times_are_left_alone() {
        // `start = "connected"` is a mode, and a long `max_backoff` is a length, not a time.
        assert!(late_in("[grpc]\nstart = \"connected\"\n[grpc.backoff]\nmax_backoff = \"2min\"\n", "5s").is_empty());
    }
}
