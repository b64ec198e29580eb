//! A request to stop (Ctrl-C, SIGTERM), which the run and the writer of results check, so
//! that an interrupted run ends within a fraction of a second, leaves no staging
//! directory and never touches earlier results.
//!
//! The process has one flag. The command line's signal handler sets it ([`request`];
//! nothing else is safe in a signal handler) and exits at once on a second signal, as a
//! user pressing Ctrl-C twice expects; a library user who installs no handler keeps the
//! signals' default behaviour. The work stops at its next check: the engine asks the
//! run's `Budget::stop`, which the run points at this flag, every [`CHECK_EVERY`] events;
//! the loops that summarize, tabulate, plot and report the results call [`check`].

use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);

pub use crate::engine::run::CHECK_EVERY;

/// The exit code of an interrupted run: 128 + SIGINT, as shells report it.
pub const EXIT_CODE: i32 = 130;

/// Whether a stop was requested.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::Relaxed)
}

/// What work that looked at the flag and found a stop requested returns: it gave up
/// part way, and its caller must write nothing of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("interrupted")]
pub struct Interrupted;

/// `Err(Interrupted)` once a stop was requested: a look at the flag for `?` in the loops
/// of the work after the simulation (summaries, tables, plots, reports), each of which
/// looks at least once per row, group or panel it handles, so that no input makes one
/// of them run on for long after a Ctrl-C.
pub fn check() -> Result<(), Interrupted> {
    if requested() { Err(Interrupted) } else { Ok(()) }
}

/// Runs `work`, which cannot look at the flag itself (serde serializing a manifest of
/// tens of megabytes), on a thread of its own, and waits for it looking at the flag every
/// [`ABANDON_POLL`]. At a stop it returns at once and leaves the work to finish unheeded,
/// its result dropped: `work` must only compute, never write anything. Where no thread
/// can be started, `work` runs here.
pub fn abandonable<T: Send + 'static, F: FnOnce() -> T + Send + 'static>(work: F) -> Result<T, Interrupted> {
    use std::sync::mpsc::{RecvTimeoutError, channel};
    check()?;
    // The work goes over once the thread runs, so that it is still here if none can.
    let (give, take) = channel::<F>();
    let (done, result) = channel::<T>();
    let spawned = std::thread::Builder::new().name("abandonable".into()).spawn(move || {
        if let Ok(work) = take.recv() {
            // The receiver is gone when the wait was abandoned: nobody wants the result.
            let _ = done.send(work());
        }
    });
    let Ok(handle) = spawned else { return Ok(work()) };
    if let Err(unsent) = give.send(work) {
        return Ok((unsent.0)());
    }
    loop {
        match result.recv_timeout(ABANDON_POLL) {
            Ok(value) => return Ok(value),
            Err(RecvTimeoutError::Timeout) => check()?,
            // The work panicked: the panic goes on here, as if it had run here.
            Err(RecvTimeoutError::Disconnected) => match handle.join() {
                Err(panic) => std::panic::resume_unwind(panic),
                Ok(()) => unreachable!("the thread sends the work's result before it ends"),
            },
        }
    }
}

/// Drops `value` on a thread of its own: freeing the millions of small allocations of a
/// report of 40,000 variants takes longer than a Ctrl-C may wait, and no flag can be
/// looked at while it happens. Where no thread can be started, it is dropped here.
pub fn drop_aside<T: Send + 'static>(value: T) {
    let (give, take) = std::sync::mpsc::channel::<T>();
    match std::thread::Builder::new().name("drop-aside".into()).spawn(move || drop(take.recv())) {
        // A thread that ended before it took the value hands it back, dropped here.
        Ok(_) => drop(give.send(value)),
        Err(_) => drop(value),
    }
}

/// A value that is freed with [`drop_aside`] wherever it goes out of scope, on the way
/// out of an interrupted function too.
pub struct Aside<T: Send + 'static>(Option<T>);

impl<T: Send + 'static> Aside<T> {
    pub fn new(value: T) -> Self {
        Aside(Some(value))
    }
}

impl<T: Send + 'static> std::ops::Deref for Aside<T> {
    type Target = T;
    fn deref(&self) -> &T {
        match &self.0 {
            Some(value) => value,
            None => unreachable!("the value is taken only when it is dropped"),
        }
    }
}

impl<T: Send + 'static> Drop for Aside<T> {
    fn drop(&mut self) {
        if let Some(value) = self.0.take() {
            drop_aside(value);
        }
    }
}

/// How often [`abandonable`] looks at the flag while it waits.
pub const ABANDON_POLL: std::time::Duration = std::time::Duration::from_millis(10);

/// Asks the running work to stop, as a signal does; whether a stop had been asked
/// already (a second Ctrl-C, which the command line answers by exiting at once).
pub fn request() -> bool {
    REQUESTED.swap(true, Ordering::SeqCst)
}

#[cfg(test)]
mod tests {
    use super::*;

    // The flag is the process's: no test here may set it, or it would stop every other
    // test's work. The stop itself is tested through the binary (tests/integration).

    #[test]
    fn abandonable_work_runs_to_its_result_when_no_stop_is_asked() {
        let big: Vec<u64> = (0..1_000_000).collect();
        assert_eq!(abandonable(move || big.iter().sum::<u64>()), Ok(499_999_500_000));
    }

    #[test]
    fn a_value_set_aside_is_freed_on_another_thread() {
        struct Tells(std::sync::mpsc::Sender<std::thread::ThreadId>);
        impl Drop for Tells {
            fn drop(&mut self) {
                let _ = self.0.send(std::thread::current().id());
            }
        }
        let (tx, rx) = std::sync::mpsc::channel();
        let aside = Aside::new(Tells(tx));
        assert!(rx.try_recv().is_err(), "freed before it went out of scope");
        drop(aside);
        let freed_on = rx.recv_timeout(std::time::Duration::from_secs(60)).expect("never freed");
        assert_ne!(freed_on, std::thread::current().id());
    }

    #[test]
    fn a_panic_in_abandonable_work_is_the_callers() {
        let caught = std::panic::catch_unwind(|| abandonable(|| -> u32 { panic!("in the work") }));
        let message = caught.unwrap_err().downcast::<&str>().map(|m| *m);
        assert_eq!(message.ok(), Some("in the work"));
    }
}
