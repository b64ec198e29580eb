//! Atomic results directories. Files are written into a hidden sibling directory and
//! swapped in only when everything is written, so an interrupted or failed run leaves
//! the previous results as they were.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

pub struct Staging {
    target: PathBuf,
    dir: PathBuf,
    committed: bool,
}

fn sibling(target: &Path, tag: &str) -> PathBuf {
    let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "results".into());
    target.with_file_name(format!(".{name}.{tag}"))
}

impl Staging {
    /// Prepares a staging directory beside `target`, removing leftovers of a run that
    /// was killed before it could clean up.
    pub fn begin(target: &Path) -> io::Result<Staging> {
        let target = if target.file_name().is_none() { target.join(".") } else { target.to_path_buf() };
        let target = target.components().collect::<PathBuf>();
        if let Some(parent) = target.parent().filter(|p| !p.as_os_str().is_empty()) {
            fs::create_dir_all(parent)?;
        }
        let dir = sibling(&target, "partial");
        if dir.exists() {
            fs::remove_dir_all(&dir)?;
        }
        fs::create_dir(&dir)?;
        Ok(Staging { target, dir, committed: false })
    }

    /// Where a file of the results goes while it is being written.
    pub fn path(&self, file: &str) -> PathBuf {
        self.dir.join(file)
    }

    pub fn write(&self, file: &str, bytes: &[u8]) -> io::Result<()> {
        fs::write(self.path(file), bytes)
    }

    /// Swaps the finished directory in for the old one.
    pub fn commit(mut self) -> io::Result<PathBuf> {
        let old = sibling(&self.target, "old");
        if old.exists() {
            fs::remove_dir_all(&old)?;
        }
        let had_old = self.target.exists();
        if had_old {
            fs::rename(&self.target, &old)?;
        }
        if let Err(e) = fs::rename(&self.dir, &self.target) {
            if had_old {
                // Put the previous results back rather than leave nothing.
                let _ = fs::rename(&old, &self.target);
            }
            return Err(e);
        }
        self.committed = true;
        if had_old {
            fs::remove_dir_all(&old)?;
        }
        Ok(self.target.clone())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_dir_all(&self.dir);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commit_replaces_old_results_and_leaves_no_staging_behind() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("out");
        fs::create_dir(&target).unwrap();
        fs::write(target.join("old.csv"), "old").unwrap();
        let s = Staging::begin(&target).unwrap();
        s.write("new.csv", b"new").unwrap();
        s.commit().unwrap();
        assert!(target.join("new.csv").exists());
        assert!(!target.join("old.csv").exists());
        let names: Vec<_> = fs::read_dir(tmp.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from("out")]);
    }

    #[test]
    fn an_abandoned_run_keeps_the_previous_results() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("out");
        fs::create_dir(&target).unwrap();
        fs::write(target.join("summary.csv"), "kept").unwrap();
        {
            let s = Staging::begin(&target).unwrap();
            s.write("summary.csv", b"half").unwrap();
            // dropped without commit, as when the run fails
        }
        assert_eq!(fs::read_to_string(target.join("summary.csv")).unwrap(), "kept");
        assert_eq!(fs::read_dir(tmp.path()).unwrap().count(), 1);
    }
}
