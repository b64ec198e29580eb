//! Where a command's output directory goes, and what may be replaced there.
//!
//! `run`, `merge` and `compare` each write a directory of files, made whole in a hidden
//! staging directory beside it and swapped in at the end. Before any work starts a
//! command *claims* its destination: the place is checked ([`ownership`]: backoffsim
//! replaces only a directory it wrote itself, never `.`, an ancestor of the working
//! directory or a symbolic link), an advisory lock is taken (`lock`: one writer per
//! destination, a second is refused naming the first), and what a killed run left behind
//! is repaired ([`staging`]: a stale staging directory removed, results a broken swap
//! moved aside put back). The claim is held until the results are swapped in or the
//! command ends.

mod lock;
pub mod ownership;
pub mod staging;

use std::io;
use std::path::{Path, PathBuf};

pub use staging::Staging;

/// A destination claimed for writing: checked, locked and repaired.
#[derive(Debug)]
pub struct Destination {
    target: PathBuf,
    /// Held for as long as the destination is: dropping it lets the next writer in.
    _lock: lock::Lock,
}

/// Why a destination cannot be written: the message names the place and what to do.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ClaimError(pub String);

impl Destination {
    /// Claims `target` for writing, before any work is done. `flag` is how the user
    /// names the place on the command line (`--out`), for the messages.
    pub fn claim(target: &Path, flag: &str) -> Result<Destination, ClaimError> {
        let target = ownership::check(target, flag)?;
        let cannot = |e: io::Error| ClaimError(format!("cannot write to {}: {e}", target.display()));
        if let Some(parent) = target.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(cannot)?;
        }
        let lock = lock::Lock::take(&staging::sibling(&target, "lock")).map_err(|e| match e {
            lock::Error::Busy(holder) => ClaimError(format!(
                "{flag} {}: another backoffsim ({holder}) is writing there; wait for it to end, or give this \
                 one another {flag}",
                target.display()
            )),
            lock::Error::Io(e) => cannot(e),
        })?;
        // Under the lock nobody else writes here: what a killed run left is stale.
        staging::repair(&target).map_err(cannot)?;
        // A place the results cannot be put in is refused now, not after the run: the
        // staging directory is made and removed, and so is a new target, whose name the
        // system may refuse (too long, a read-only place).
        Staging::begin(&target).map(drop).map_err(cannot)?;
        if std::fs::symlink_metadata(&target).is_err() {
            std::fs::create_dir(&target).and_then(|()| std::fs::remove_dir(&target)).map_err(cannot)?;
        }
        Ok(Destination { target, _lock: lock })
    }

    /// The directory the results will be in.
    pub fn path(&self) -> &Path {
        &self.target
    }

    /// A fresh staging directory for this destination's files.
    pub fn stage(&self) -> io::Result<Staging> {
        Staging::begin(&self.target)
    }
}
