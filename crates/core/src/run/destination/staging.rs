//! Atomic results directories. Files are written into a hidden staging directory beside
//! the destination and swapped in only when everything is written, so an interrupted or
//! failed run leaves the previous results as they were.
//!
//! The swap is one step where the system allows it: on Linux, `renameat2` with
//! `RENAME_EXCHANGE` trades the staging directory and the old results in a single
//! rename, so a kill at any moment leaves either the old results or the new ones in
//! place. Where the exchange is not available (another system, or a file system that
//! refuses it) the old results are first renamed aside to `.NAME.old` and the new ones
//! renamed in; a kill between those two renames leaves no `NAME`, and the next claim of
//! the destination ([`repair`]) puts `.NAME.old` back.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

pub struct Staging {
    target: PathBuf,
    dir: PathBuf,
    committed: bool,
}

/// Hidden siblings of a destination (`.NAME.lock`, `.NAME.partial.PID`, `.NAME.old`)
/// must stay valid file names even for a NAME near the 255-byte limit: a long name is
/// cut and given a hash of the whole, so siblings of two long names never collide.
pub fn sibling(target: &Path, tag: &str) -> PathBuf {
    target.with_file_name(format!("{}.{tag}", stem(target)))
}

/// The part every sibling's name starts with.
fn stem(target: &Path) -> String {
    // Room for the longest tag, `.partial.` and a process id.
    const ROOM: usize = 255 - 30;
    let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "results".into());
    if name.len() < ROOM {
        return format!(".{name}");
    }
    let mut cut = ROOM - 20;
    while !name.is_char_boundary(cut) {
        cut -= 1;
    }
    use sha2::Digest;
    let digest: String = sha2::Sha256::digest(name.as_bytes())[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!(".{}~{digest}", &name[..cut])
}

/// Repairs what a killed run left beside `target`: puts back results that a swap moved
/// aside and could not replace, and removes stale staging directories. Called with the
/// destination's lock held, when no other process can be writing there.
pub fn repair(target: &Path) -> io::Result<()> {
    let old = sibling(target, "old");
    if fs::symlink_metadata(&old).is_ok() {
        if fs::symlink_metadata(target).is_err() {
            // Killed between the two renames: the old results are the only ones.
            fs::rename(&old, target)?;
        } else {
            // Killed after the new results went in, before the old were removed.
            fs::remove_dir_all(&old)?;
        }
    }
    let partial = format!("{}.partial", stem(target));
    let parent = target.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    for entry in fs::read_dir(parent)? {
        let entry = entry?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name == partial.as_str() || name.strip_prefix(partial.as_str()).is_some_and(|r| r.starts_with('.')) {
            fs::remove_dir_all(entry.path())?;
        }
    }
    Ok(())
}

impl Staging {
    /// Makes a fresh staging directory beside `target`, named for this process so that
    /// no two processes ever write into one.
    pub fn begin(target: &Path) -> io::Result<Staging> {
        let dir = sibling(target, &format!("partial.{}", std::process::id()));
        if fs::symlink_metadata(&dir).is_ok() {
            fs::remove_dir_all(&dir)?;
        }
        fs::create_dir(&dir)?;
        Ok(Staging { target: target.to_path_buf(), dir, committed: false })
    }

    /// Where a file of the results goes while it is being written.
    pub fn path(&self, file: &str) -> PathBuf {
        self.dir.join(file)
    }

    /// Writes `bytes` as the staged `file` a megabyte at a time, looking at the interrupt
    /// flag between: a trace of a hundred megabytes is a write that takes longer than a
    /// Ctrl-C may wait. A write stopped that way is an I/O error, which callers that see
    /// the flag set report as the interrupt it is.
    pub fn write(&self, file: &str, bytes: &[u8]) -> io::Result<()> {
        use std::io::Write;
        const CHUNK: usize = 1 << 20;
        let mut out = fs::File::create(self.path(file))?;
        for chunk in bytes.chunks(CHUNK) {
            if crate::run::interrupt::requested() {
                return Err(io::Error::other("a stop was requested"));
            }
            out.write_all(chunk)?;
        }
        Ok(())
    }

    /// Swaps the finished directory in for the old one.
    pub fn commit(mut self) -> io::Result<PathBuf> {
        if fs::symlink_metadata(&self.target).is_err() {
            fs::rename(&self.dir, &self.target)?;
        } else if exchange(&self.dir, &self.target)? {
            // The staging name now holds the old results. The new ones are in place
            // whatever happens next: should removing the old fail, the next claim of
            // the destination removes them as a stale staging directory.
            self.committed = true;
            let _ = fs::remove_dir_all(&self.dir);
            return Ok(self.target.clone());
        } else {
            self.swap_in_two_steps()?;
        }
        self.committed = true;
        Ok(self.target.clone())
    }

    /// The swap where no exchange is to be had: old results aside, new ones in, old
    /// ones removed. [`repair`] finishes it after a kill.
    fn swap_in_two_steps(&mut self) -> io::Result<()> {
        let old = sibling(&self.target, "old");
        if fs::symlink_metadata(&old).is_ok() {
            fs::remove_dir_all(&old)?;
        }
        fs::rename(&self.target, &old)?;
        #[cfg(test)]
        if fault::killed_between_renames() {
            // What a SIGKILL here leaves: no cleanup of any kind.
            self.committed = true;
            return Err(io::Error::other("killed between the renames (test)"));
        }
        if let Err(e) = fs::rename(&self.dir, &self.target) {
            // Put the previous results back rather than leave nothing.
            let _ = fs::rename(&old, &self.target);
            return Err(e);
        }
        self.committed = true;
        // As above: a leftover `.old` beside new results is removed by the next claim.
        let _ = fs::remove_dir_all(&old);
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_dir_all(&self.dir);
        }
    }
}

/// Exchanges two existing paths in one step; `Ok(false)` when the system or the file
/// system cannot, so that the caller falls back to two renames.
#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> io::Result<bool> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    #[cfg(test)]
    if fault::no_exchange() {
        return Ok(false);
    }
    let c = |p: &Path| CString::new(p.as_os_str().as_bytes()).map_err(io::Error::other);
    let (a, b) = (c(a)?, c(b)?);
    // SAFETY: both are valid NUL-terminated paths that outlive the call. The raw system
    // call rather than glibc's wrapper, which older C libraries lack.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if rc == 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    match e.raw_os_error() {
        // No renameat2 in this kernel, or a file system without RENAME_EXCHANGE.
        Some(libc::ENOSYS | libc::EINVAL | libc::EOPNOTSUPP) => Ok(false),
        _ => Err(e),
    }
}

#[cfg(not(target_os = "linux"))]
fn exchange(_: &Path, _: &Path) -> io::Result<bool> {
    Ok(false)
}

/// Faults injected by the unit tests, per thread so that parallel tests do not meet.
#[cfg(test)]
pub(crate) mod fault {
    use std::cell::Cell;

    thread_local! {
        static NO_EXCHANGE: Cell<bool> = const { Cell::new(false) };
        static KILL_BETWEEN_RENAMES: Cell<bool> = const { Cell::new(false) };
    }

    /// Makes this thread's swaps take the two-rename path.
    pub fn without_exchange() {
        NO_EXCHANGE.with(|c| c.set(true));
    }

    /// Makes this thread's next two-rename swap stop dead between its renames.
    pub fn kill_between_renames() {
        KILL_BETWEEN_RENAMES.with(|c| c.set(true));
    }

    pub(super) fn no_exchange() -> bool {
        NO_EXCHANGE.with(Cell::get)
    }

    pub(super) fn killed_between_renames() -> bool {
        KILL_BETWEEN_RENAMES.with(|c| c.replace(false))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> =
            fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    }

    fn results(target: &Path, file: &str, text: &str) {
        fs::create_dir_all(target).unwrap();
        fs::write(target.join(file), text).unwrap();
    }

    fn replace(target: &Path) {
        let s = Staging::begin(target).unwrap();
        s.write("new.csv", b"new").unwrap();
        s.commit().unwrap();
        assert!(target.join("new.csv").exists());
        assert!(!target.join("old.csv").exists());
        assert_eq!(names(target.parent().unwrap()), ["out"], "only the results are left");
    }

    #[test]
    fn commit_exchanges_old_results_for_new_and_leaves_nothing_beside_them() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("out");
        results(&target, "old.csv", "old");
        replace(&target);
    }

    #[test]
    fn without_an_exchange_the_two_renames_replace_the_results_too() {
        fault::without_exchange();
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("out");
        results(&target, "old.csv", "old");
        replace(&target);
    }

    #[test]
    fn a_commit_into_a_new_place_renames_the_staging_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("out");
        let s = Staging::begin(&target).unwrap();
        s.write("new.csv", b"new").unwrap();
        s.commit().unwrap();
        assert_eq!(names(&target), ["new.csv"]);
    }

    #[test]
    fn a_kill_between_the_renames_is_repaired_by_the_next_claim() {
        fault::without_exchange();
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("out");
        results(&target, "summary.csv", "kept");
        let s = Staging::begin(&target).unwrap();
        s.write("summary.csv", b"new").unwrap();
        fault::kill_between_renames();
        assert!(s.commit().is_err());
        // What the kill left: no results, the old ones aside, the new ones staged.
        assert!(!target.exists());
        let partial = format!(".out.partial.{}", std::process::id());
        assert_eq!(names(tmp.path()), [".out.old".to_string(), partial]);
        repair(&target).unwrap();
        assert_eq!(fs::read_to_string(target.join("summary.csv")).unwrap(), "kept");
        assert_eq!(names(tmp.path()), ["out"]);
    }

    #[test]
    fn a_kill_after_the_renames_leaves_the_new_results_and_the_old_are_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("out");
        results(&target, "summary.csv", "new");
        results(&sibling(&target, "old"), "summary.csv", "old");
        repair(&target).unwrap();
        assert_eq!(fs::read_to_string(target.join("summary.csv")).unwrap(), "new");
        assert_eq!(names(tmp.path()), ["out"]);
    }

    #[test]
    fn stale_staging_directories_of_any_process_are_removed_and_others_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("out");
        for stale in [".out.partial", ".out.partial.17", ".out.partial.4242"] {
            results(&tmp.path().join(stale), "summary.csv", "half");
        }
        // Not ours: another destination's staging, and a user's file that only looks alike.
        results(&tmp.path().join(".out2.partial.9"), "summary.csv", "theirs");
        fs::write(tmp.path().join(".out.partialx"), "mine").unwrap();
        repair(&target).unwrap();
        assert_eq!(names(tmp.path()), [".out.partialx", ".out2.partial.9"]);
    }

    #[test]
    fn an_abandoned_run_keeps_the_previous_results() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("out");
        results(&target, "summary.csv", "kept");
        {
            let s = Staging::begin(&target).unwrap();
            s.write("summary.csv", b"half").unwrap();
            // dropped without commit, as when the run fails
        }
        assert_eq!(fs::read_to_string(target.join("summary.csv")).unwrap(), "kept");
        assert_eq!(names(tmp.path()), ["out"]);
    }

    #[test]
    fn siblings_of_a_name_near_the_limit_are_valid_names_and_distinct() {
        let tmp = tempfile::tempdir().unwrap();
        let a = tmp.path().join("a".repeat(250));
        let b = tmp.path().join(format!("{}b", "a".repeat(249)));
        for tag in ["lock", "old", "partial.4294967295"] {
            let (sa, sb) = (sibling(&a, tag), sibling(&b, tag));
            assert!(sa.file_name().unwrap().len() <= 255, "{}", sa.display());
            assert_ne!(sa, sb);
            fs::create_dir(&sa).unwrap();
        }
        assert_eq!(sibling(&tmp.path().join("out"), "lock"), tmp.path().join(".out.lock"));
    }
}
