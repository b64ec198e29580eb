//! The `backoffsim` binary: parse, call the library, map errors to exit codes
//! (0 ok, 1 run failed, 2 bad usage or bad scenario, 130 interrupted).

use clap::builder::Styles;
use clap::{CommandFactory, Parser};

use backoffsim::cli::{Cli, dispatch};
use backoffsim::input::escaped;

fn main() {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            // clap prints help and version to stdout with exit 0, usage errors to stderr
            // with 2. It quotes what was typed as it was typed, so with a control character
            // on the command line the message is printed plain (no colours), escaped.
            let typed_controls = std::env::args_os().any(|a| a.to_string_lossy().chars().any(char::is_control));
            if !typed_controls {
                let _ = e.print();
            } else {
                // Plain styles, so the rendered text holds no escapes but the user's.
                let plain = Cli::command().styles(Styles::plain()).try_get_matches().err().unwrap_or(e);
                let text = plain.render().ansi().to_string();
                if plain.use_stderr() {
                    eprint!("{}", escaped(&text));
                } else {
                    print!("{}", escaped(&text));
                }
            }
            std::process::exit(code);
        }
    };
    if let Err(e) = dispatch(cli) {
        let code = e.exit_code();
        if code != 0 {
            // Messages quote file names, cells and keys from the user's input.
            eprintln!("backoffsim: error: {}", escaped(&e.to_string()));
        }
        std::process::exit(code);
    }
}
