//! Ctrl-C and SIGTERM for the command line: the handler only asks the run to stop
//! (`run::interrupt`, which the engine, the writer and the reports look at); a second
//! signal while the first is being honoured ends the process at once.

use backoffsim_core::run::interrupt;

/// Routes Ctrl-C and SIGTERM to the stop flag. Once per process: a library user who
/// installs nothing keeps the default behaviour of the signals.
pub fn install() -> Result<(), String> {
    // A second handler would be refused.
    static INSTALLED: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    INSTALLED
        .get_or_init(|| {
            ctrlc::set_handler(|| {
                if interrupt::request() {
                    std::process::exit(interrupt::EXIT_CODE);
                }
            })
            .map_err(|e| format!("cannot handle Ctrl-C: {e}"))
        })
        .clone()
}
