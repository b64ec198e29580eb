use super::*;

fn row(variant: &str, n: u64, mean: f64, sd: f64) -> super::super::data::SummaryRow {
    super::super::data::SummaryRow {
        variant: variant.into(),
        point: Vec::new(),
        metric: "m".into(),
        unit: "s".into(),
        n,
        mean,
        sd: Some(sd),
        ci: None,
    }
}

/// The report names a best variant only where `compare`'s table would: a difference of
/// 3 with spreads 2 and 1 is within chance at 4 replications and beyond it at 40
/// (Welch's interval, as `significance::welch` computes by hand).
#[test]
fn a_best_variant_is_named_only_where_the_difference_is_significant() {
    let names = ["a".to_string(), "b".to_string()];
    let (a4, b4) = (row("a", 4, 7.0, 1.0), row("b", 4, 10.0, 2.0));
    fn welch(stats: [&super::super::data::SummaryRow; 2]) -> impl Fn(usize, usize) -> Option<(f64, f64)> + '_ {
        move |i, j| {
            let (a, b) = (stats[i], stats[j]);
            super::super::significance::welch((a.n, a.mean, a.sd), (b.n, b.mean, b.sd))
        }
    }
    let text = verdict(&names, &[Some(&a4), Some(&b4)], Some(Better::Lower), welch([&a4, &b4])).text();
    assert_eq!(text, super::super::compare::NOT_SIGNIFICANT);
    let (a40, b40) = (row("a", 40, 7.0, 1.0), row("b", 40, 10.0, 2.0));
    assert_eq!(verdict(&names, &[Some(&a40), Some(&b40)], Some(Better::Lower), welch([&a40, &b40])).text(), "a");
    assert_eq!(verdict(&names, &[Some(&a40), Some(&b40)], Some(Better::Higher), welch([&a40, &b40])).text(), "b");
    // Pairing: the same spreads, but every replication of `a` 3 below `b`'s.
    let paired = |_: usize, _: usize| Some((-3.0, -3.0));
    assert_eq!(verdict(&names, &[Some(&a4), Some(&b4)], Some(Better::Lower), paired).text(), "a");
}

#[test]
fn directories_are_quoted_for_the_shell_only_when_they_need_it() {
    assert_eq!(shell_word("results/tcp-blackout"), "results/tcp-blackout");
    assert_eq!(shell_word("my runs/a"), "'my runs/a'");
    assert_eq!(shell_word("it's"), r"'it'\''s'");
    assert_eq!(shell_word("$HOME"), "'$HOME'");
    assert_eq!(shell_word(""), "''");
}

#[test]
fn a_parameter_table_lists_the_first_differences_and_says_how_many_more() {
    use super::super::data::{RunInfo, VariantInfo};
    // Two variants whose paths differ in 150 blackouts' start times, and agree on one key.
    let params = |shift: u32| -> Vec<(String, String)> {
        let mut p: Vec<(String, String)> =
            (0..150).map(|i| (format!("path.blackout[{i}].at"), format!("{}s", i * 10 + shift))).collect();
        p.push(("model".to_string(), "tcp".to_string()));
        p
    };
    let data = RunSet {
        runs: vec![RunInfo::default()],
        variants: vec![
            VariantInfo { name: "a".into(), params: params(0), ..Default::default() },
            VariantInfo { name: "b".into(), params: params(1), ..Default::default() },
        ],
        ..Default::default()
    };
    let r = build(&data, &[]).unwrap();
    assert_eq!((r.params.len(), r.params_more), (MAX_PARAMS, 50));
    assert_eq!(r.params[0].key, "path.blackout[0].at");
    assert_eq!(r.params[0].values, [Some("0s".to_string()), Some("1s".to_string())]);
    let md = super::super::markdown::render(&r).unwrap();
    assert!(md.contains("50 more parameters differ between the variants"), "{md}");
}

#[test]
fn a_set_valued_parameter_is_one_row_of_set_differences() {
    use super::super::data::{RunInfo, VariantInfo};
    let params = |codes: &[&str]| -> Vec<(String, String)> {
        let mut p: Vec<(String, String)> =
            codes.iter().enumerate().map(|(i, c)| (format!("policy.retry_on[{i}]"), c.to_string())).collect();
        p.extend([("calls.tiers[0]".to_string(), "3".to_string()), ("model".to_string(), "calls".to_string())]);
        p
    };
    let variant =
        |name: &str, codes: &[&str]| VariantInfo { name: name.into(), params: params(codes), ..Default::default() };
    let data = RunSet {
        runs: vec![RunInfo::default()],
        variants: vec![
            variant("a", &["timeout", "500", "503"]),
            variant("b", &["timeout", "408", "503"]),
            variant("c", &["503", "timeout", "500"]),
        ],
        ..Default::default()
    };
    let r = build(&data, &[]).unwrap();
    assert_eq!(r.params.len(), 1, "one row for the set, none for the equal tiers");
    assert_eq!(r.params[0].key, "policy.retry_on");
    assert_eq!(
        r.params[0].values,
        [
            Some("{timeout, 500, 503}".to_string()),
            Some("only in b {408}, only in a {500}".to_string()),
            Some("{timeout, 500, 503}".to_string())
        ]
    );
    assert!(r.params[0].differs(1) && !r.params[0].differs(2), "the same set in another order is no difference");
}

#[test]
fn relative_differences_read_naturally() {
    assert_eq!(relative(19.1, 6.5), "+194 %");
    assert_eq!(relative(6.5, 6.5), "±0 %");
    assert_eq!(relative(0.9, 1.0), "-10 %");
    assert_eq!(relative(1.05, 1.0), "+5.0 %");
    assert_eq!(relative(3.0, 0.0), "+3 vs 0");
    assert_eq!(mean_ci(6.5, Some((3.61, 9.39))), "6.5 ± 2.9");
    assert_eq!(mean_ci(14600.0, None), "14600");
}
