//! One test per value rule of a scenario file: each hostile value is refused by `check`
//! and `run` with exit 2, at its file:line:column and key, saying what is expected, and
//! nothing is written (`refuse` asserts the exit codes and the empty directory).

use super::bad_input::refuse;

/// A calls scenario; each test adds or replaces one line. Line 6 is `clients = 10`.
const CALLS: &str = "name = \"t\"
description = \"\"
horizon = \"10s\"

[calls]
clients = 10
interval = \"1s\"
";

fn with_lines(lines: &str) -> String {
    format!("{CALLS}{lines}")
}

/// Asserts the diagnostic's first line names `place` and `key` and says `expected`.
fn says(err: &str, place: &str, key: &str, expected: &str) {
    let first = err.lines().next().unwrap_or_default();
    assert!(first.contains(&format!("bad.toml:{place}: key `{key}`")), "{err}");
    assert!(first.contains(expected), "{err}");
}

#[test]
fn nan_and_infinity_are_refused_wherever_a_number_is_written() {
    // A NaN passes every `x < min` bound, so it is refused before any key's own check.
    let err = refuse(&with_lines("permanent_fraction = nan\n"));
    says(&err, "8:22", "calls.permanent_fraction", "`nan` is not a number the simulator can use");
    let err = refuse(&with_lines("[calls.policy]\nmultiplier = inf\n"));
    says(&err, "9:14", "calls.policy.multiplier", "must be finite");
    let err = refuse(&with_lines("[calls.policy]\nbudget = \"finagle\"\nbudget_max_retries_per_request = -inf\n"));
    says(&err, "10:34", "calls.policy.budget_max_retries_per_request", "`-inf`");
    // Every one of them is named at once, as type errors are.
    let err = refuse(&with_lines("permanent_fraction = nan\n[calls.policy]\nmultiplier = inf\n"));
    assert!(err.contains("bad.toml:8:22: key `calls.permanent_fraction`"), "{err}");
    assert!(err.contains("bad.toml:10:14: key `calls.policy.multiplier`"), "{err}");
}

#[test]
fn probabilities_outside_zero_to_one_are_refused() {
    let err = refuse(&with_lines("permanent_fraction = \"150%\"\n"));
    says(&err, "8:22", "calls.permanent_fraction", "between 0 and 1, got 1.5");
}

#[test]
fn a_multiplier_below_one_is_refused() {
    let err = refuse(&with_lines("[calls.policy]\nmultiplier = 0.5\n"));
    says(&err, "9:14", "calls.policy.multiplier", "must be at least 1 (is 0.5)");
}

#[test]
fn jitter_outside_zero_to_one_is_refused() {
    let err = refuse(
        "name = \"t\"\ndescription = \"\"\nhorizon = \"10s\"\n[grpc]\nclients = 1\n[grpc.backoff]\njitter = 1.5\n",
    );
    says(&err, "7:10", "grpc.backoff.jitter", "must be from 0 to 1 (is 1.5)");
}

#[test]
fn a_cap_below_the_base_is_refused() {
    let err = refuse(&with_lines("[calls.policy]\nbase = \"2s\"\ncap = \"1s\"\n"));
    says(&err, "10:7", "calls.policy.cap", "must be at least base (2s), is 1s");
    // With the cap left at its default, the base is what the user wrote wrong.
    let err = refuse(&with_lines("[calls.policy]\nbase = \"2min\"\n"));
    says(&err, "9:8", "calls.policy.base", "must be at most the cap (1min by default), is 2min");
}

#[test]
fn an_initial_backoff_above_the_maximum_is_refused() {
    let err = refuse(
        "name = \"t\"\ndescription = \"\"\nhorizon = \"10s\"\n[grpc]\nclients = 1\n[grpc.backoff]\n\
         initial_backoff = \"10s\"\nmax_backoff = \"1s\"\n",
    );
    says(&err, "7:19", "grpc.backoff.initial_backoff", "must be at most max_backoff (1s)");
}

#[test]
fn a_count_of_zero_is_refused() {
    let err = refuse(&CALLS.replace("clients = 10", "clients = 0"));
    says(&err, "6:11", "calls.clients", "must be at least 1");
}

#[test]
fn a_count_beyond_what_its_type_holds_is_refused_with_the_range() {
    let err = refuse(&CALLS.replace("clients = 10", "clients = 4294967296"));
    says(&err, "6:11", "calls.clients", "expected a whole number from 0 to 4294967295");
    let err = refuse(&CALLS.replace("horizon = \"10s\"", "horizon = \"10s\"\nreplications = -1"));
    says(&err, "4:16", "replications", "expected a whole number from 0 to 4294967295");
}

#[test]
fn a_bin_of_zero_width_is_refused() {
    let err = refuse(&with_lines("[calls.monitor]\nbin = \"0s\"\n"));
    says(&err, "9:7", "calls.monitor.bin", "must be longer than 0s");
}

#[test]
fn bins_too_narrow_for_the_horizon_are_refused_with_the_width_that_would_do() {
    // 10 s in 1 µs bins is ten million rows per replication.
    let err = refuse(&with_lines("[calls.monitor]\nbin = \"1us\"\n"));
    says(&err, "9:7", "calls.monitor.bin", "make 10000000 bins per replication; at most 1000000");
    assert!(err.contains("make bins at least 10us wide"), "{err}");
}

#[test]
fn a_non_error_status_for_a_down_server_is_refused() {
    let err = refuse(&with_lines("fail_with = 302\n"));
    says(&err, "8:13", "calls.fail_with", "a status from 400 to 599");
}

#[test]
fn an_empty_sweep_list_is_refused() {
    let err = refuse(&with_lines("[sweep]\n\"calls.clients\" = []\n"));
    says(&err, "9:19", "sweep.calls.clients", "the list of values is empty");
}

#[test]
fn two_variants_of_one_name_are_refused() {
    let err = refuse(&with_lines("[[variant]]\nname = \"a\"\n[[variant]]\nname = \"a\"\n"));
    says(&err, "11:8", "variant[1].name", "a variant named `a` already exists");
}

#[test]
fn a_name_longer_than_200_characters_is_refused_with_the_limit_and_200_checks() {
    // results/<name>, a shard's results/<name>.shard-K-of-N and the hidden staging
    // directories beside them: 247 to 255 characters passed `check` and failed `run`.
    for length in [201, 255, 300] {
        let err = refuse(&CALLS.replace("name = \"t\"", &format!("name = \"{}\"", "n".repeat(length))));
        says(
            &err,
            "1:8",
            "name",
            &format!("is {length} characters long: at most 200, since it names the results directory"),
        );
    }
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("ok.toml");
    std::fs::write(&file, CALLS.replace("name = \"t\"", &format!("name = \"{}\"", "n".repeat(200)))).unwrap();
    let o = super::common::run(&["check", file.to_str().unwrap()]);
    assert!(o.status.success(), "{}", super::common::text(&o.stderr));
}

#[test]
fn a_bad_top_level_name_is_reported_at_name_even_with_variants() {
    // Every variant inherits the base's name; the error is the base's, shown once.
    let err = refuse(
        &with_lines("[[variant]]\nname = \"a\"\n[[variant]]\nname = \"b\"\n").replace("name = \"t\"", "name = \"t t\""),
    );
    says(&err, "1:8", "name", "`t t` is not a usable name");
    assert!(!err.contains("variant["), "{err}");
    assert_eq!(err.matches("is not a usable name").count(), 1, "{err}");
}

#[test]
fn control_characters_in_names_are_refused_and_shown_escaped() {
    // TOML writes them as escapes; the message must not hand them to the terminal raw.
    let err = refuse(&CALLS.replace("name = \"t\"", "name = \"t\\u001b[2J\""));
    says(&err, "1:8", "name", "`t\\u{1b}[2J` is not a usable name");
    let err = refuse(&with_lines("[[variant]]\nname = \"v\\u0007\\u009b\"\n"));
    says(&err, "9:8", "variant[0].name", "`v\\u{7}\\u{9b}` is not a usable name");
    assert!(!err.chars().any(|c| c.is_control() && c != '\n'), "{err:?}");
}

#[test]
fn a_name_that_would_leave_the_results_directory_is_refused() {
    for name in ["../evil", "/etc/x", "a/b", ".hidden", "tab\\there"] {
        let err = refuse(&CALLS.replace("name = \"t\"", &format!("name = \"{name}\"")));
        says(&err, "1:8", "name", "is not a usable name: use letters, digits, `-`, `_` and `.`");
    }
}
