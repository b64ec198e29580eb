//! The bar `rto capture` shows on stderr while it reads: bytes of the file read over
//! both passes, as a 10 GB capture takes about a minute. None with `--quiet`, nor where
//! stderr is not a terminal (indicatif draws nothing there).

use std::cell::Cell;
use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::rc::Rc;

use backoffsim_capture::reader::{Capture, CaptureError};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A file that counts the bytes read from it.
struct Counted {
    file: File,
    read: Rc<Cell<u64>>,
}

impl Read for Counted {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.file.read(buf)?;
        self.read.set(self.read.get() + n as u64);
        Ok(n)
    }
}

pub(super) struct Progress {
    bar: Option<ProgressBar>,
    read: Rc<Cell<u64>>,
    /// Bytes of the passes before this one.
    before: u64,
}

impl Progress {
    pub fn new(file: &Path, quiet: bool) -> Progress {
        let size = std::fs::metadata(file).map_or(0, |m| m.len());
        let bar = (!quiet).then(|| ProgressBar::with_draw_target(Some(2 * size), ProgressDrawTarget::stderr()));
        let bar = bar.filter(|b| !b.is_hidden()).inspect(|b| {
            b.set_style(
                ProgressStyle::with_template("{prefix} [{bar:30}] {percent:>3}%, {elapsed}, about {eta} left")
                    .expect("valid template")
                    .progress_chars("=> "),
            );
        });
        Progress { bar, read: Rc::new(Cell::new(0)), before: 0 }
    }

    /// Opens `file` for a pass named `what`, counting what is read of it.
    pub fn open(&mut self, file: &Path, what: &str) -> Result<Capture, CaptureError> {
        self.before += self.read.replace(0);
        if let Some(bar) = &self.bar {
            bar.set_prefix(what.to_string());
        }
        let input = File::open(file).map_err(|source| CaptureError::Open { file: file.to_path_buf(), source })?;
        Capture::from_reader(file, Counted { file: input, read: Rc::clone(&self.read) })
    }

    /// Moves the bar to what has been read; cheap enough for every few thousand packets.
    pub fn show(&self) {
        if let Some(bar) = &self.bar {
            bar.set_position(self.before + self.read.get());
        }
    }
}

impl Progress {
    /// Writes `line` on stderr with the bar out of its way.
    pub fn warn(&self, line: &str) {
        match &self.bar {
            Some(bar) => bar.suspend(|| eprintln!("{line}")),
            None => eprintln!("{line}"),
        }
    }

    /// Clears the bar, for what is printed next.
    pub fn done(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.done();
    }
}
