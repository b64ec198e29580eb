//! Paired differences in the report: common random numbers make variant − baseline per
//! replication much less noisy than the two means are apart.

use super::common::{run_text, text};

/// One estimator with two lower bounds over the same jittery path: every replication's
/// delays are the same for both (common random numbers), and with no loss both send the
/// same packets, so their mean RTOs rise and fall together with the SRTT.
const CRN: &str = r#"
name = "crn"
description = "two lower bounds for one estimator on the same jittery paths"
horizon = "20s"
replications = 8

[tcp]
clients = 4
workload = { kind = "steady", interval = "20ms" }
rto = { profile = "linux", hz = 1000 }

[path]
base_rtt = "80ms"
delay = { dist = "uniform", low = "0ms", high = "40ms" }

[[variant]]
name = "rto-min-200ms"

[[variant]]
name = "rto-min-199ms"
tcp.rto.min_rto = "199ms"
"#;

/// (mean, ci low, ci high) of `metric` for `variant` in summary.csv.
fn summary_ci(dir: &std::path::Path, variant: &str, metric: &str) -> (f64, f64, f64) {
    let mut r = csv::Reader::from_path(dir.join("summary.csv")).unwrap();
    for rec in r.records() {
        let rec = rec.unwrap();
        if &rec[0] == variant && &rec[1] == metric {
            return (rec[4].parse().unwrap(), rec[6].parse().unwrap(), rec[7].parse().unwrap());
        }
    }
    panic!("no {variant} {metric}");
}

#[test]
fn the_paired_interval_is_narrower_than_the_unpaired_one_under_common_random_numbers() {
    let (_tmp, dir) = run_text(CRN, &[]);
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    let section = md.split("## Paired differences").nth(1).expect("a paired section");
    let row = section
        .lines()
        .find(|l| l.starts_with("| rto_mean | s | rto-min-199ms |"))
        .unwrap_or_else(|| panic!("no row for rto_mean:\n{section}"));
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    // | metric | unit | variant | difference | interval | pairs | zero |
    let (lo, hi) = cells[5].split_once(" to ").unwrap();
    let (lo, hi): (f64, f64) = (lo.parse().unwrap(), hi.parse().unwrap());
    assert_eq!(cells[6], "8", "{row}");
    let paired_width = hi - lo;

    let (a, alo, ahi) = summary_ci(&dir, "rto-min-200ms", "rto_mean");
    let (b, blo, bhi) = summary_ci(&dir, "rto-min-199ms", "rto_mean");
    // The unpaired interval of b − a: the two half-widths combined as independent.
    let unpaired_width = ((ahi - alo).powi(2) + (bhi - blo).powi(2)).sqrt();
    assert!(
        paired_width < 0.8 * unpaired_width,
        "paired {paired_width} vs unpaired {unpaired_width} (means {a}, {b})\n{row}"
    );
    // What pairing is for: the two means' intervals overlap, the paired one excludes 0.
    assert!(alo.max(blo) < ahi.min(bhi), "the means' intervals overlap: [{alo}, {ahi}] and [{blo}, {bhi}]");
    assert_eq!(cells[7], "excluded", "{row}");
    // The difference itself is the difference of the means (all replications paired).
    let diff: f64 = cells[4].parse().unwrap();
    assert!((diff - (b - a)).abs() <= 1e-3 * (b - a).abs().max(1.0), "{diff} vs {}", b - a);
    assert!(text(md.as_bytes()).contains("draws the same random numbers"));
}
