//! Ctrl-C and SIGTERM: a request to stop, which the engine and the writer of results
//! check, so that an interrupted run ends within a fraction of a second, leaves no
//! staging directory and never touches earlier results.
//!
//! The handler only sets a flag (nothing else is safe in a signal handler); the work
//! stops at its next check: every [`CHECK_EVERY`] events in the engine, and between the
//! files of the results. A second signal while the first is being honoured ends the
//! process at once, as a user pressing Ctrl-C twice expects.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Events between two looks at the flag: about a millisecond of simulation.
pub const CHECK_EVERY: u64 = 1 << 14;

/// The exit code of an interrupted run: 128 + SIGINT, as shells report it.
pub const EXIT_CODE: i32 = 130;

/// Routes Ctrl-C and SIGTERM to the flag. Call once, from the binary; a library user
/// who installs nothing keeps the default behaviour of the signals.
pub fn install() -> Result<(), String> {
    // Once per process: a second handler would be refused.
    static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();
    INSTALLED
        .get_or_init(|| {
            ctrlc::set_handler(|| {
                if REQUESTED.swap(true, Ordering::SeqCst) {
                    std::process::exit(EXIT_CODE);
                }
            })
            .map_err(|e| format!("cannot handle Ctrl-C: {e}"))
        })
        .clone()
}

/// Whether a stop was requested.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::Relaxed)
}

/// Asks the running work to stop, as a signal does (for tests and embedders).
pub fn request() {
    REQUESTED.store(true, Ordering::SeqCst);
}
