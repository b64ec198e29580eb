//! Which numbered metrics a report lists. A numbered family such as
//! `recovery_lag_blackout{k}` has a member per blackout, RTT change or attempt, and a
//! path with 100,000 blackouts would fill the report's tables with 100,000 rows nobody
//! reads. The report lists the first [`LISTED`] members of each family and says how many
//! more there are; `summary.csv` and `replications.csv` keep every one.

use std::collections::{BTreeMap, BTreeSet};

use backoffsim_core::run::interrupt::Interrupted;
use backoffsim_core::worlds::catalogue::{self, ModelId};

/// Members of one numbered family a report lists.
pub const LISTED: usize = 20;

/// The metrics a report lists, and for each family it cuts short a sentence that says so.
pub struct Listing {
    pub listed: BTreeSet<String>,
    pub notes: Vec<String>,
}

/// Of `metrics` (ids in the order the report shows them), those listed: every plain
/// metric, and the first [`LISTED`] members of each numbered family.
pub fn listing(metrics: &[(String, String)], models: &[ModelId]) -> Result<Listing, Interrupted> {
    // A family's members in order, by the family's catalogue id (`spread_attempt{k}`).
    let mut seen: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut order: Vec<&'static str> = Vec::new();
    let mut listed = BTreeSet::new();
    for (id, _) in metrics {
        backoffsim_core::run::interrupt::check()?;
        let family = catalogue::find(id, models).map(|e| e.id).filter(|f| f.ends_with("{k}"));
        let shown = match family {
            None => true,
            Some(f) => {
                let n = seen.entry(f).or_insert_with(|| {
                    order.push(f);
                    0
                });
                *n += 1;
                *n <= LISTED
            }
        };
        if shown {
            listed.insert(id.clone());
        }
    }
    let notes = order
        .into_iter()
        .filter(|f| seen[f] > LISTED)
        .map(|f| {
            format!(
                "`{f}`: the first {LISTED} of its {} metrics are listed here; summary.csv and replications.csv \
                 hold every one.",
                seen[f]
            )
        })
        .collect();
    Ok(Listing { listed, notes })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(names: &[String]) -> Vec<(String, String)> {
        names.iter().map(|n| (n.clone(), "s".to_string())).collect()
    }

    #[test]
    fn a_family_is_cut_to_its_first_members_and_plain_metrics_are_all_listed() {
        let mut names = vec!["timeouts".to_string()];
        names.extend((1..=100_000).map(|k| format!("recovery_lag_blackout{k}")));
        names.extend((1..=3).map(|k| format!("converged_change{k}")));
        names.push("max_rto".to_string());
        let l = listing(&ids(&names), &[ModelId::Tcp]).unwrap();
        assert_eq!(l.listed.len(), 1 + LISTED + 3 + 1);
        assert!(l.listed.contains("recovery_lag_blackout20") && !l.listed.contains("recovery_lag_blackout21"));
        assert!(l.listed.contains("converged_change3") && l.listed.contains("max_rto"));
        assert_eq!(l.notes.len(), 1, "{:?}", l.notes);
        assert!(
            l.notes[0].starts_with("`recovery_lag_blackout{k}`: the first 20 of its 100000 metrics"),
            "{:?}",
            l.notes
        );
    }

    #[test]
    fn a_family_of_at_most_the_listed_number_has_no_note() {
        let names: Vec<String> = (1..=LISTED).map(|k| format!("spread_attempt{k}")).collect();
        let l = listing(&ids(&names), &[ModelId::Grpc]).unwrap();
        assert_eq!((l.listed.len(), l.notes.len()), (LISTED, 0));
    }
}
