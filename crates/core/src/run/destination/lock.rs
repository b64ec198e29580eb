//! One writer per destination: an advisory lock (`flock` on Unix, through std's
//! `File::try_lock`) on a hidden file beside it, holding the holder's process id so that
//! a refused run can name it.
//!
//! The lock file is removed when its holder lets go. That opens a race every lock file
//! with removal has: a second process may open the file just before the holder removes
//! it, and then lock a file no longer at the path. So a taker checks, once it holds the
//! lock, that the path still names the file it locked, and starts again if not.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};

#[derive(Debug)]
pub struct Lock {
    file: File,
    path: PathBuf,
}

#[derive(Debug)]
pub enum Error {
    /// Held by another process: who, as well as it can be told.
    Busy(String),
    Io(io::Error),
}

impl Lock {
    /// Takes the lock at `path` without waiting.
    pub fn take(path: &Path) -> Result<Lock, Error> {
        // Each round loses only to a holder that let go in between; a handful is plenty.
        for _ in 0..100 {
            let mut file =
                OpenOptions::new().read(true).write(true).create(true).truncate(false).open(path).map_err(Error::Io)?;
            match file.try_lock() {
                Ok(()) => {}
                Err(std::fs::TryLockError::WouldBlock) => return Err(Error::Busy(holder(&mut file))),
                Err(std::fs::TryLockError::Error(e)) => return Err(Error::Io(e)),
            }
            if !still_at(&file, path) {
                continue;
            }
            file.set_len(0).map_err(Error::Io)?;
            file.rewind().map_err(Error::Io)?;
            write!(file, "{}", std::process::id()).map_err(Error::Io)?;
            return Ok(Lock { file, path: path.to_path_buf() });
        }
        Err(Error::Busy("a process that keeps taking and releasing the lock".into()))
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        // Removed while still held, so nobody can lock the file between the two steps;
        // the lock itself goes with the file handle.
        let _ = std::fs::remove_file(&self.path);
        let _ = self.file.unlock();
    }
}

/// The holder as its lock file names it.
fn holder(file: &mut File) -> String {
    let mut text = String::new();
    let _ = file.take(32).read_to_string(&mut text);
    match text.trim().parse::<u32>() {
        Ok(pid) => format!("process {pid}"),
        Err(_) => "another process".into(),
    }
}

/// Whether `path` still names the open `file`.
#[cfg(unix)]
fn still_at(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn still_at(_: &File, path: &Path) -> bool {
    path.exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_taker_is_refused_and_told_the_holders_process() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join(".out.lock");
        let held = Lock::take(&path).unwrap();
        match Lock::take(&path) {
            Err(Error::Busy(who)) => assert_eq!(who, format!("process {}", std::process::id())),
            other => panic!("a second lock was not refused: {other:?}"),
        }
        drop(held);
        assert!(!path.exists(), "the lock file outlived its holder");
        Lock::take(&path).expect("free again once the holder let go");
    }

    #[test]
    fn a_lock_file_removed_under_a_taker_is_not_trusted() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join(".out.lock");
        let file = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        // What a taker that opened the file just before its holder removed it sees.
        assert!(!still_at(&file, &path));
        std::fs::write(&path, "").unwrap();
        assert!(!still_at(&file, &path), "a new file at the path is another lock");
    }
}
