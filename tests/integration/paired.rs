//! Paired differences in the report: common random numbers make variant − baseline per
//! replication much less noisy than the two means are apart.

use super::common::{run_text, text};

/// Two estimators over the same lossy path: every replication's losses are the same for
/// both (common random numbers), so their needless retransmission counts rise and fall together.
const CRN: &str = r#"
name = "crn"
description = "two estimators on the same lossy paths"
horizon = "20s"
replications = 8

[tcp]
clients = 4
workload = { kind = "steady", interval = "20ms" }

[path]
base_rtt = "80ms"
delay = { dist = "uniform", low = "0ms", high = "40ms" }
loss = { model = "bernoulli", p = 0.03 }

[[variant]]
name = "rfc6298"
tcp.rto.profile = "rfc6298"

[[variant]]
name = "linux"
tcp.rto.profile = "linux"
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
        .find(|l| l.starts_with("| spurious_retransmissions | count | linux |"))
        .unwrap_or_else(|| panic!("no row for spurious_retransmissions:\n{section}"));
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    // | metric | unit | variant | difference | interval | pairs | zero |
    let (lo, hi) = cells[5].split_once(" to ").unwrap();
    let (lo, hi): (f64, f64) = (lo.parse().unwrap(), hi.parse().unwrap());
    assert_eq!(cells[6], "8", "{row}");
    let paired_width = hi - lo;

    let (a, alo, ahi) = summary_ci(&dir, "rfc6298", "spurious_retransmissions");
    let (b, blo, bhi) = summary_ci(&dir, "linux", "spurious_retransmissions");
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
