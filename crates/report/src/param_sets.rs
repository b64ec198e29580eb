//! Parameters whose list is a set: which failures a policy retries (`retry_on`), which
//! clients or replications are traced. Their order means nothing, so the report's
//! parameter table compares them as sets (`only in cautious {408}, only in base {500}`)
//! rather than position by position, where one code more at the front would make every
//! later position differ.

use std::collections::BTreeSet;

/// The last segment (after the last `.`) of the keys whose list is a set.
const SET_NAMES: [&str; 1] = ["retry_on"];
/// Whole keys whose list is a set.
const SET_KEYS: [&str; 2] = ["trace.clients", "trace.replications"];

/// Whether `key` (a flattened parameter's key without an index) lists a set.
pub fn is_set(key: &str) -> bool {
    SET_KEYS.contains(&key) || SET_NAMES.contains(&key.rsplit('.').next().unwrap_or(key))
}

/// The set a flattened parameter `key[i]` is a member of; `None` for any other key.
pub fn member_of(key: &str) -> Option<&str> {
    let (base, index) = key.strip_suffix(']')?.rsplit_once('[')?;
    (!index.is_empty() && index.bytes().all(|b| b.is_ascii_digit()) && is_set(base)).then_some(base)
}

/// A set's members in the order first written, each once.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Members<'a>(Vec<&'a str>);

impl<'a> Members<'a> {
    pub fn add(&mut self, member: &'a str) {
        if !self.0.contains(&member) {
            self.0.push(member);
        }
    }

    fn same(&self, other: &Members<'_>) -> bool {
        self.0.iter().collect::<BTreeSet<_>>() == other.0.iter().collect::<BTreeSet<_>>()
    }

    fn missing_from(&self, other: &Members<'_>) -> Vec<&'a str> {
        self.0.iter().copied().filter(|m| !other.0.contains(m)).collect()
    }
}

fn braces(members: &[&str]) -> String {
    format!("{{{}}}", members.join(", "))
}

/// Whether the variants' sets are not all equal.
pub fn differ(sets: &[Option<Members<'_>>]) -> bool {
    sets.iter().any(|s| match (s, &sets[0]) {
        (Some(a), Some(b)) => !a.same(b),
        (a, b) => a.is_some() != b.is_some(),
    })
}

/// The table's cells for one set parameter, one per variant: the baseline's (the first)
/// set whole; another variant's the same when equal (in the baseline's order, so that it
/// reads as equal), else what only it and only the baseline have; its whole set when the
/// baseline has none.
pub fn cells(sets: &[Option<Members<'_>>], names: &[&str]) -> Vec<Option<String>> {
    let baseline = sets.first().and_then(Option::as_ref);
    sets.iter()
        .zip(names)
        .enumerate()
        .map(|(i, (set, name))| {
            let set = set.as_ref()?;
            let base = match baseline {
                Some(base) if i > 0 && set.same(base) => return Some(braces(&base.0)),
                Some(base) if i > 0 => base,
                _ => return Some(braces(&set.0)),
            };
            let mut parts = Vec::new();
            let (only_here, only_base) = (set.missing_from(base), base.missing_from(set));
            if !only_here.is_empty() {
                parts.push(format!("only in {name} {}", braces(&only_here)));
            }
            if !only_base.is_empty() {
                parts.push(format!("only in {} {}", names[0], braces(&only_base)));
            }
            Some(parts.join(", "))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set<'a>(members: &[&'a str]) -> Option<Members<'a>> {
        let mut m = Members::default();
        members.iter().for_each(|x| m.add(x));
        Some(m)
    }

    #[test]
    fn retry_on_and_the_traced_clients_are_sets_and_tiers_are_not() {
        assert_eq!(member_of("policy.retry_on[3]"), Some("policy.retry_on"));
        assert_eq!(member_of("variant.policy.retry_on[12]"), Some("variant.policy.retry_on"));
        assert_eq!(member_of("trace.clients[0]"), Some("trace.clients"));
        // Tiers retry over one another in order: a list, not a set.
        assert_eq!(member_of("calls.tiers[0]"), None);
        assert_eq!(member_of("policy.retry_on"), None);
        assert_eq!(member_of("policy.retry_on[x]"), None);
    }

    #[test]
    fn a_set_differs_by_its_members_not_their_order() {
        // RetryOn::matches asks whether any condition matches: the order of retry_on
        // changes nothing the simulator does.
        let names = ["base", "cautious", "same"];
        let sets = [set(&["500", "503"]), set(&["408", "503"]), set(&["503", "500"])];
        assert!(differ(&sets));
        assert_eq!(
            cells(&sets, &names),
            [
                Some("{500, 503}".into()),
                Some("only in cautious {408}, only in base {500}".into()),
                Some("{500, 503}".into())
            ]
        );
        assert!(!differ(&[set(&["a", "b"]), set(&["b", "a"])]));
        // A superset says only what it adds; a variant without the parameter has no cell.
        assert_eq!(
            cells(&[set(&["a"]), set(&["a", "b"]), None], &["x", "y", "z"]),
            [Some("{a}".into()), Some("only in y {b}".into()), None]
        );
        assert!(differ(&[set(&["a"]), None]));
    }
}
