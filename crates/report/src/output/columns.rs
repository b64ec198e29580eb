//! The sweep columns every CSV of a run carries: each swept key's label as the scenario
//! wrote it (`2min`), and beside a key swept over durations a `<key>_s` column with the
//! same value in seconds (`120`), so that pandas or R sort and plot the cells by value
//! rather than as text, where `10s` comes after `1min`.

use backoffsim_core::engine::time::SimDuration;

/// The suffix of a swept duration's column in seconds.
pub const SECONDS_SUFFIX: &str = "_s";

/// Which sweep columns a run's CSVs have, fixed by the scenario alone: every shard of a
/// run, and every table of it, has the same header.
pub struct SweepColumns {
    /// Each key, and whether a `<key>_s` column follows it.
    keys: Vec<(String, bool)>,
}

impl SweepColumns {
    /// A key gets a seconds column when any cell's label for it is a duration (a number
    /// with a unit: a bare number never is one, so `clients = [1, 5]` gets none); a cell
    /// whose label is not one (`none` beside `30s`) leaves that column empty.
    pub fn of<'a>(keys: &[String], cells: impl IntoIterator<Item = &'a [String]>) -> Self {
        let mut timed = vec![false; keys.len()];
        for cell in cells {
            for (t, label) in timed.iter_mut().zip(cell) {
                *t = *t || seconds(label).is_some();
            }
        }
        SweepColumns { keys: keys.iter().cloned().zip(timed).collect() }
    }

    /// The header's sweep columns, in the scenario's key order.
    pub fn header(&self) -> Vec<String> {
        let mut out = Vec::with_capacity(self.keys.len() * 2);
        for (key, timed) in &self.keys {
            out.push(key.clone());
            if *timed {
                out.push(format!("{key}{SECONDS_SUFFIX}"));
            }
        }
        out
    }

    /// A cell's values under [`SweepColumns::header`].
    pub fn values(&self, cell: &[String]) -> Vec<String> {
        let mut out = Vec::with_capacity(self.keys.len() * 2);
        for ((_, timed), label) in self.keys.iter().zip(cell) {
            out.push(label.clone());
            if *timed {
                out.push(seconds(label).unwrap_or_default());
            }
        }
        out
    }
}

/// A duration label in seconds, exact and without trailing zeros (`250ms` → `0.25`,
/// `2min` → `120`); `None` when the label is not a duration.
pub fn seconds(label: &str) -> Option<String> {
    let ns = SimDuration::parse(label).ok()?.as_nanos();
    let (whole, frac) = (ns / 1_000_000_000, ns % 1_000_000_000);
    if frac == 0 {
        return Some(whole.to_string());
    }
    let digits = format!("{frac:09}");
    Some(format!("{whole}.{}", digits.trim_end_matches('0')))
}

/// The swept keys among a CSV header's sweep columns: a `<key>_s` column right after
/// `<key>` is that key in seconds, not a key of its own.
pub fn keys_of(columns: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in columns {
        let companion = out.last().is_some_and(|k| c.strip_suffix(SECONDS_SUFFIX) == Some(k.as_str()));
        if !companion {
            out.push(c.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn a_key_swept_over_durations_gets_a_seconds_column_beside_its_label() {
        let keys = strings(&["server.restart_at", "grpc.clients", "calls.deadline"]);
        let cells = [strings(&["10s", "5", "none"]), strings(&["2min", "10", "250ms"])];
        let cols = SweepColumns::of(&keys, cells.iter().map(Vec::as_slice));
        assert_eq!(
            cols.header(),
            ["server.restart_at", "server.restart_at_s", "grpc.clients", "calls.deadline", "calls.deadline_s"]
        );
        assert_eq!(cols.values(&cells[0]), ["10s", "10", "5", "none", ""]);
        assert_eq!(cols.values(&cells[1]), ["2min", "120", "10", "250ms", "0.25"]);
    }

    #[test]
    fn seconds_are_exact_and_bare_numbers_are_not_durations() {
        // The units of SimDuration::parse: ns, us, ms, s, min, h.
        assert_eq!(seconds("1h").as_deref(), Some("3600"));
        assert_eq!(seconds("1.5s").as_deref(), Some("1.5"));
        assert_eq!(seconds("100us").as_deref(), Some("0.0001"));
        assert_eq!(seconds("1ns").as_deref(), Some("0.000000001"));
        assert_eq!(seconds("0s").as_deref(), Some("0"));
        assert_eq!(seconds("10"), None);
        assert_eq!(seconds("full"), None);
    }

    #[test]
    fn a_header_read_back_names_only_the_keys() {
        let header = strings(&["server.restart_at", "server.restart_at_s", "grpc.clients", "jitter_s"]);
        assert_eq!(keys_of(&header), ["server.restart_at", "grpc.clients", "jitter_s"]);
    }
}
