//! The `backoffsim` binary: parse, call the library, map errors to exit codes
//! (0 ok, 1 run failed, 2 bad usage or bad scenario, 130 interrupted).

use clap::Parser;

use backoffsim::cli::{Cli, dispatch};

fn main() {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints help and version to stdout with exit 0, usage errors to stderr with 2.
            let _ = e.print();
            std::process::exit(if e.use_stderr() { 2 } else { 0 });
        }
    };
    if let Err(e) = dispatch(cli) {
        let code = e.exit_code();
        if code != 0 {
            eprintln!("backoffsim: error: {e}");
        }
        std::process::exit(code);
    }
}
