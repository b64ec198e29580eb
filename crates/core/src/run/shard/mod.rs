//! Sweeps beyond one machine. `run --shard K/N` runs the K-th of N slices of a scenario's
//! work list and writes a part: the scenario's text and every result of its slice,
//! exact. `merge` checks that a set of parts is one whole run, every slice exactly once,
//! and writes what that run would have written, byte for byte, because it hands the
//! same results to the same writer.

pub mod merge;
pub mod part;

use std::fmt;
use std::str::FromStr;

use crate::run::Places;

/// The K-th (from 0) of N slices: `--shard K/N`. Counting from 0 matches the index a
/// Slurm job array (`SLURM_ARRAY_TASK_ID` with `--array=0-…`) and a Kubernetes Indexed
/// Job (`JOB_COMPLETION_INDEX`) hand each task.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Shard {
    /// The places of a work list of `runs` this shard runs. Round robin rather than
    /// blocks: neighbouring places are the same cell's replications, and a sweep's costly
    /// corner would otherwise land on one shard.
    pub fn places(self, runs: u64) -> Places {
        Places { first: u64::from(self.index), step: u64::from(self.count), end: runs }
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = String;

    fn from_str(s: &str) -> Result<Shard, String> {
        let form = "write it K/N: the K-th of N slices, K from 0 to N-1 (e.g. 0/4 … 3/4)";
        let (k, n) = s.split_once('/').ok_or_else(|| format!("`{s}` is not K/N; {form}"))?;
        let number = |part: &str, what: &str| {
            part.trim().parse::<u32>().map_err(|_| format!("`{s}`: {what} `{part}` is not a whole number; {form}"))
        };
        let (index, count) = (number(k, "K")?, number(n, "N")?);
        if count == 0 {
            return Err(format!("`{s}`: N must be at least 1; {form}"));
        }
        if index >= count {
            return Err(format!("`{s}`: K counts from 0, so it must be below N = {count}; {form}"));
        }
        Ok(Shard { index, count })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(p: Places) -> Vec<u64> {
        (0..p.count()).map(|j| p.nth(j)).collect()
    }

    #[test]
    fn the_slices_of_n_shards_cover_the_work_once_each() {
        for count in [1, 3, 10, 17] {
            let mut seen: Vec<u64> = (0..count).flat_map(|index| listed(Shard { index, count }.places(10))).collect();
            seen.sort();
            assert_eq!(seen, (0..10).collect::<Vec<u64>>(), "{count} shards");
        }
    }

    #[test]
    fn shards_take_turns_so_one_cell_spreads_over_all_of_them() {
        assert_eq!(listed(Shard { index: 1, count: 3 }.places(7)), [1, 4]);
        assert_eq!(listed(Shard { index: 5, count: 9 }.places(7)), [5]);
        assert!(listed(Shard { index: 8, count: 9 }.places(7)).is_empty());
        assert!(Shard { index: 1, count: 3 }.places(7).count_in(0, 7) == 2);
    }

    #[test]
    fn k_of_n_parses_from_zero_and_refuses_what_names_no_slice() {
        assert_eq!("0/3".parse::<Shard>(), Ok(Shard { index: 0, count: 3 }));
        assert_eq!("2/3".parse::<Shard>().unwrap().to_string(), "2/3");
        let err = |s: &str| s.parse::<Shard>().unwrap_err();
        assert!(err("3/3").contains("K counts from 0, so it must be below N = 3"), "{}", err("3/3"));
        assert!(err("1/0").contains("N must be at least 1"));
        assert!(err("3").contains("is not K/N"));
        assert!(err("a/3").contains("K `a` is not a whole number"));
        assert!(err("-1/3").contains("is not a whole number"));
    }
}
