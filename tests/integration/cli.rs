//! The command line's own surface: shell completions, the man page and `run --json`.

use super::common::{run, text};

fn ok(args: &[&str]) -> String {
    let o = run(args);
    assert!(o.status.success(), "{args:?}: {}", text(&o.stderr));
    text(&o.stdout)
}

const COMMANDS: [&str; 9] = ["run", "check", "plot", "compare", "rto", "presets", "explain", "completions", "man"];

#[test]
fn completions_cover_every_command_for_each_shell() {
    let bash = ok(&["completions", "bash"]);
    assert!(bash.contains("_backoffsim()") && bash.contains("complete -F _backoffsim"), "{bash:.300}");
    for c in COMMANDS {
        assert!(bash.contains(&format!("backoffsim__subcmd__{c}")), "bash completes no `{c}`");
    }
    assert!(bash.contains("--replications") && bash.contains("--attempt-time"));
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let script = ok(&["completions", shell]);
        assert!(script.contains("explain") && script.contains("attempt-time"), "{shell}");
    }
    let o = run(&["completions", "tcsh"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("possible values: bash"), "{}", text(&o.stderr));
}

#[test]
fn the_man_page_is_one_roff_page_with_every_command_and_the_exit_codes() {
    let page = ok(&["man"]);
    assert!(page.contains(".TH backoffsim 1"), "{page:.300}");
    for section in [".SH NAME", ".SH SYNOPSIS", ".SH DESCRIPTION", ".SH COMMANDS", ".SH \"EXIT STATUS\""] {
        assert!(page.contains(section), "{section} missing");
    }
    for c in ["run", "check", "plot", "compare", "rto replay", "presets", "explain", "completions", "man"] {
        assert!(page.contains(&format!(".SS \"backoffsim {c}\"")), "no section for `{c}`:\n{page}");
    }
    // Options with their help and defaults, roff-escaped.
    assert!(page.contains("\\-\\-attempt\\-time"), "options are listed");
    assert!(page.contains("[default: 10000]"), "defaults are shown");
    // One page: no references to per-command pages that nothing installs.
    assert!(!page.contains("backoffsim\\-run(1)"));
}
