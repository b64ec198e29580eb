//! `backoffsim completions SHELL` and `backoffsim man`: shell completions and a man page,
//! both generated from the same clap definition as the parser, so they cannot drift
//! from the commands they describe.

use std::io::Write;

use clap::{Args, CommandFactory};
use clap_complete::Shell;
use clap_mangen::roff::{Roff, bold, roman};

use super::{Cli, CliError};

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for, e.g. `backoffsim completions bash > /etc/bash_completion.d/backoffsim`.
    #[arg(value_enum)]
    pub shell: Shell,
}

/// Prints the completion script for `args.shell` on stdout.
pub fn completions(args: CompletionsArgs) -> Result<(), CliError> {
    let mut cmd = Cli::command();
    let mut buf = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "backoffsim", &mut buf);
    print(&buf)
}

/// Prints the man page (roff) on stdout, e.g. `backoffsim man > backoffsim.1`.
pub fn man() -> Result<(), CliError> {
    print(&man_page().map_err(|e| CliError::Failed(format!("cannot render the man page: {e}")))?)
}

/// One page for the whole tool: clap_mangen's header sections, then every command with
/// its usage and options (clap_mangen alone would point at one page per subcommand,
/// which nothing installs), then the exit codes.
pub fn man_page() -> std::io::Result<Vec<u8>> {
    let mut cmd = Cli::command();
    cmd.build();
    let man = clap_mangen::Man::new(cmd.clone());
    let mut buf = Vec::new();
    man.render_title(&mut buf)?;
    man.render_name_section(&mut buf)?;
    man.render_synopsis_section(&mut buf)?;
    man.render_description_section(&mut buf)?;
    man.render_options_section(&mut buf)?;
    let mut roff = Roff::new();
    roff.control("SH", ["COMMANDS"]);
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        command_section(&mut roff, sub, "backoffsim");
    }
    roff.control("SH", ["EXIT STATUS"]);
    for (code, what) in [
        ("0", "success (also when the reader of standard output goes away, e.g. | head)"),
        ("1", "the run failed, e.g. it exceeded its event budget"),
        ("2", "bad usage, a bad scenario or bad input; scenario errors name file:line:column and the key"),
        ("130", "run was interrupted (Ctrl-C or SIGTERM): nothing was written, earlier results are untouched"),
    ] {
        roff.control("TP", []).text([bold(code)]).text([roman(what)]);
    }
    roff.to_writer(&mut buf)?;
    man.render_version_section(&mut buf)?;
    Ok(buf)
}

/// `.SS backoffsim NAME`, its usage, what it does and its arguments; nested commands
/// (`rto replay`) follow their parent.
fn command_section(roff: &mut Roff, cmd: &clap::Command, parent: &str) {
    let path = format!("{parent} {}", cmd.get_name());
    if cmd.has_subcommands() {
        for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
            command_section(roff, sub, &path);
        }
        return;
    }
    roff.control("SS", [path.as_str()]);
    let usage = cmd.clone().render_usage().to_string();
    let usage = usage.trim_start_matches("Usage: ");
    roff.text([bold(usage)]);
    if let Some(about) = cmd.get_long_about().or(cmd.get_about()) {
        roff.control("PP", []).text([roman(about.to_string())]);
    }
    for arg in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
        let mut head: Vec<String> = Vec::new();
        if let Some(s) = arg.get_short() {
            head.push(format!("-{s}"));
        }
        if let Some(l) = arg.get_long() {
            head.push(format!("--{l}"));
        }
        let value =
            arg.get_value_names().map(|v| v.join(" ")).unwrap_or_else(|| arg.get_id().to_string().to_uppercase());
        let head = match (head.is_empty(), arg.get_action().takes_values()) {
            (true, _) => format!("<{value}>"),
            (false, true) => format!("{} <{value}>", head.join(", ")),
            (false, false) => head.join(", "),
        };
        let mut help = arg.get_long_help().or(arg.get_help()).map(|h| h.to_string()).unwrap_or_default();
        let values: Vec<String> =
            arg.get_possible_values().iter().filter(|v| !v.is_hide_set()).map(|v| v.get_name().to_string()).collect();
        if !values.is_empty() && arg.get_action().takes_values() {
            help += &format!(" [possible values: {}]", values.join(", "));
        }
        let defaults: Vec<String> = arg.get_default_values().iter().map(|v| v.to_string_lossy().into_owned()).collect();
        if !defaults.is_empty() && arg.get_action().takes_values() {
            help += &format!(" [default: {}]", defaults.join(" "));
        }
        roff.control("TP", []).text([bold(head)]).text([roman(help)]);
    }
}

fn print(bytes: &[u8]) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes).and_then(|()| out.flush()).map_err(CliError::from_stdout)
}
