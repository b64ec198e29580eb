//! Plots and reports: every plot kind from the committed results and from the fixtures
//! in `tests/fixtures/report/` (run directories in the formats the gRPC and sweep work
//! writes: attempts.csv, cdf.csv, sweep-key columns), valid PNG and SVG, reports with
//! their tables and plots, self-contained HTML, `compare` across runs, and exit 2 with a
//! clear message where there is nothing to draw.

use std::path::{Path, PathBuf};

use super::common::{root, run, run_scenario, text};

fn fixture(name: &str) -> String {
    format!("tests/fixtures/report/{name}")
}

/// Checks the PNG signature and decodes the image; returns its size.
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG (bad signature)");
    let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes)).read_info().expect("a decodable PNG header");
    let mut buf = vec![0; decoder.output_buffer_size().expect("a sane size")];
    let info = decoder.next_frame(&mut buf).expect("decodable image data");
    (info.width, info.height)
}

/// A minimal well-formedness check: one `<svg>` root, every tag closed in order.
fn check_svg(svg: &str) {
    assert!(svg.starts_with("<svg"), "does not start with <svg: {:.80}", svg);
    let mut stack: Vec<String> = Vec::new();
    let mut rest = svg;
    while let Some(start) = rest.find('<') {
        let end = rest[start..].find('>').expect("an unclosed tag") + start;
        let tag = &rest[start + 1..end];
        rest = &rest[end + 1..];
        if tag.starts_with('?') || tag.starts_with('!') {
            continue;
        }
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(stack.pop().as_deref(), Some(name.trim()), "mismatched </{name}>");
        } else if !tag.ends_with('/') {
            let name = tag.split_whitespace().next().unwrap_or("").to_string();
            stack.push(name);
        }
    }
    assert!(stack.is_empty(), "unclosed tags: {stack:?}");
}

/// Runs `backoffsim plot` and returns the file's bytes.
fn plot(kind: &str, dir: &str, extra: &[&str], file: &str) -> Vec<u8> {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join(file);
    let mut args = vec!["plot", kind, dir, "-o", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    let o = run(&args);
    assert!(o.status.success(), "plot {kind} {dir} {extra:?} failed: {}", text(&o.stderr));
    std::fs::read(&out).unwrap()
}

/// Every kind, from the data it applies to, as PNG and SVG, with what the SVG must say.
#[test]
fn every_plot_kind_is_a_valid_png_and_svg_with_its_title_and_axis_labels() {
    let cases: [(&str, String, &[&str]); 6] = [
        (
            "rto",
            "results/tcp-blackout".into(),
            &["Retransmission timer", "time (s)", "RTT, SRTT, RTO (s)", "rfc6298", "linux"],
        ),
        ("rto", "results/tcp-karn".into(), &["Retransmission timer", "time (s)", "rfc6298-no-karn", "RTT 1.5 s"]),
        (
            "attempts",
            fixture("grpc-restart"),
            &["Connection attempts at the server", "time (s)", "attempts per 250 ms", "no-jitter"],
        ),
        (
            "cdf",
            fixture("grpc-restart"),
            &["Distribution over clients", "time to reconnect", "fraction of clients", "full-jitter"],
        ),
        (
            "sweep",
            fixture("contention-sweep"),
            &[
                "against clients",
                "clients",
                "Calls to the store",
                "Time until all succeeded",
                "seconds",
                "decorrelated",
            ],
        ),
        (
            "heatmap",
            fixture("herd-grid"),
            &["over clients and jitter", "clients", "jitter", "Peak-to-mean attempt rate"],
        ),
    ];
    for (kind, dir, words) in &cases {
        let (w, h) = png_size(&plot(kind, dir, &[], "p.png"));
        assert!(w >= 800 && h >= 300, "{kind} from {dir}: {w}×{h}");
        let svg = String::from_utf8(plot(kind, dir, &[], "p.svg")).unwrap();
        check_svg(&svg);
        for word in *words {
            assert!(svg.contains(word), "{kind} from {dir}: the SVG lacks `{word}`");
        }
    }
}

#[test]
fn the_same_files_give_byte_identical_plots() {
    for ext in ["png", "svg"] {
        let file = format!("p.{ext}");
        let a = plot("rto", "results/tcp-karn", &[], &file);
        let b = plot("rto", "results/tcp-karn", &[], &file);
        assert!(a == b, "two {ext} renderings differ");
    }
}

#[test]
fn a_sweep_with_two_keys_draws_a_line_per_second_key_and_one_metric_on_request() {
    let svg = String::from_utf8(plot("sweep", &fixture("herd-grid"), &[], "s.svg")).unwrap();
    assert!(svg.contains("jitter=0.2") && svg.contains("grpc-go"), "legend");
    let one = String::from_utf8(plot(
        "sweep",
        &fixture("herd-grid"),
        &["--metric", "reconnect_time_p99", "--variant", "grpc-go"],
        "s.svg",
    ))
    .unwrap();
    assert!(one.contains("reconnect_time_p99 against clients"));
    assert!(!one.contains("peak_to_mean"), "only the metric asked for");
}

#[test]
fn the_rto_plot_narrows_to_a_variant_a_connection_and_a_window() {
    let svg = String::from_utf8(plot(
        "rto",
        "results/tcp-blackout",
        &["--variant", "linux", "--client", "0", "--from", "5s", "--to", "50"],
        "z.svg",
    ))
    .unwrap();
    assert!(svg.contains("linux") && !svg.contains("rfc6298:"), "one variant");
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("z.svg");
    assert_refused(
        &["plot", "rto", "results/tcp-blackout", "--client", "7", "-o", out.to_str().unwrap()],
        &["connection 7", "not traced"],
    );
}

fn assert_refused(args: &[&str], needles: &[&str]) {
    let o = run(args);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: stderr lacks `{n}`:\n{err}");
    }
}

#[test]
fn a_directory_that_is_not_a_run_or_lacks_the_data_is_refused_with_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let empty = tmp.path().to_str().unwrap();
    let out = tmp.path().join("x.png");
    let out = out.to_str().unwrap();
    let report = tmp.path().join("report");
    let report = report.to_str().unwrap();
    assert_refused(&["plot", "rto", empty, "-o", out], &["not a run directory", "manifest.json"]);
    assert_refused(
        &["compare", "results/tcp-blackout", empty, "-o", report],
        &["not a run directory", "manifest.json"],
    );
    assert!(!Path::new(report).exists(), "nothing written on refusal");
    assert_refused(
        &["plot", "attempts", "results/tcp-blackout", "-o", out],
        &["cannot draw `attempts`", "attempts.csv"],
    );
    assert_refused(&["plot", "cdf", "results/tcp-blackout", "-o", out], &["cdf.csv"]);
    assert_refused(&["plot", "sweep", "results/tcp-blackout", "-o", out], &["no sweep"]);
    assert_refused(&["plot", "heatmap", &fixture("contention-sweep"), "-o", out], &["two swept parameters", "clients"]);
    assert_refused(&["plot", "rto", &fixture("grpc-restart"), "-o", out], &["trace.csv"]);
    assert_refused(
        &["plot", "rto", "results/tcp-blackout", "--variant", "bbr", "-o", out],
        &["unknown variant `bbr`", "`rfc6298`, `linux`"],
    );
    assert_refused(&["plot", "rto", "results/tcp-blackout", "-o", "x.pdf"], &[".svg or .png"]);
    assert_refused(
        &["plot", "sweep", &fixture("contention-sweep"), "--metric", "nope", "-o", out],
        &["unknown metric `nope`", "summary.csv"],
    );
    assert!(!Path::new(out).exists());
    // compare replaces its output directory whole: not one that holds something else.
    let busy = tmp.path().join("busy");
    std::fs::create_dir(&busy).unwrap();
    std::fs::write(busy.join("notes.txt"), "mine").unwrap();
    assert_refused(
        &["compare", "results/tcp-blackout", "-o", busy.to_str().unwrap()],
        &["`notes.txt` that backoffsim did not write"],
    );
    assert!(busy.join("notes.txt").is_file());
}

fn read(dir: &Path, file: &str) -> String {
    std::fs::read_to_string(dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

/// No reference to anything outside the page: no external images, styles or scripts.
fn assert_self_contained(html: &str) {
    let lower = html.to_lowercase();
    for bad in ["src=\"http", "href=\"http", "<link", "<script", "url(", "@import"] {
        assert!(!lower.contains(bad), "report.html contains `{bad}`");
    }
    assert!(lower.contains("<svg"), "plots are inline SVG");
}

#[test]
fn every_run_ends_in_plots_and_a_report_listed_in_the_manifest() {
    // tcp-rtt-step has variants, replications with spread and an RTT change.
    let (_tmp, dir) = run_scenario("tcp-rtt-step", &["--replications", "3"]);
    let md = read(&dir, "report.md");
    // The question, the parameter table (differences only), the metric table with CIs
    // and the baseline comparison, the best variant, the plots.
    assert!(md.starts_with("# tcp-rtt-step\n"), "{md:.200}");
    assert!(md.contains("> The path's RTT steps from 100 ms to 400 ms"));
    assert!(md.contains("| parameter | rfc6298 | linux |"), "{md}");
    assert!(md.contains("| `rto.profile` | rfc6298 | **linux** |"), "{md}");
    assert!(!md.contains("`path.base_rtt`"), "shared parameters are not listed");
    assert!(md.contains("| metric | unit | better | rfc6298 (baseline) | linux | best |"), "{md}");
    let row = md
        .lines()
        .find(|l| l.starts_with("| Convergence time after RTT change 1 (convergence_time_change1) |"))
        .expect("a convergence row");
    assert!(row.contains(" ± ") && row.contains(" %)") && row.contains("| lower |"), "{row}");
    assert!(row.trim_end().ends_with("| linux |"), "linux converges faster: {row}");
    assert!(md.contains("| RTT samples (rtt_samples) | count | — |") && md.contains("not ranked"));
    assert!(md.contains("![RTO trace](rto.png)"));

    let html = read(&dir, "report.html");
    assert_self_contained(&html);
    assert!(html.contains("<td class=\"diff\">linux</td>"), "differing parameters are highlighted");
    assert!(html.contains("class=\"num best\""), "the best value is highlighted");
    assert!(html.contains("Retransmission timer: RTT samples, SRTT and RTO over time"));

    let manifest: serde_json::Value = serde_json::from_str(&read(&dir, "manifest.json")).unwrap();
    let listed: Vec<&str> = manifest["files"].as_array().unwrap().iter().map(|f| f.as_str().unwrap()).collect();
    assert_eq!(
        listed,
        [
            "manifest.json",
            "summary.csv",
            "replications.csv",
            "trace.csv",
            "rto.svg",
            "rto.png",
            "report.md",
            "report.html"
        ]
    );
    for f in &listed {
        assert!(dir.join(f).is_file(), "{f} is listed but missing");
    }
    png_size(&std::fs::read(dir.join("rto.png")).unwrap());
}

#[test]
fn the_committed_results_carry_their_reports() {
    for name in ["tcp-blackout", "tcp-karn", "tcp-rtt-above-initial-rto", "tcp-rtt-step"] {
        let dir = root().join("results").join(name);
        assert_self_contained(&read(&dir, "report.html"));
        assert!(read(&dir, "report.md").contains("![RTO trace](rto.png)"), "{name}");
    }
}

#[test]
fn fixture_reports_show_attempts_cdf_sweep_and_heatmap() {
    let tmp = tempfile::tempdir().unwrap();
    for (name, plots) in [
        ("grpc-restart", &["attempts", "cdf"][..]),
        ("contention-sweep", &["sweep"][..]),
        ("herd-grid", &["sweep", "heatmap"][..]),
    ] {
        let out = tmp.path().join(name);
        let o = run(&["compare", &fixture(name), "-o", out.to_str().unwrap(), "--quiet"]);
        assert!(o.status.success(), "{name}: {}", text(&o.stderr));
        let md = read(&out, "report.md");
        for p in plots {
            assert!(md.contains(&format!("({p}.png)")), "{name}: no {p} plot");
            png_size(&std::fs::read(out.join(format!("{p}.png"))).unwrap());
        }
        assert_self_contained(&read(&out, "report.html"));
    }
    let md = read(&tmp.path().join("contention-sweep"), "report.md");
    // A sweep gives one table per metric, a row per sweep point, a column per variant.
    assert!(md.contains("### Calls to the store (`calls`, count), lower is better"), "{md}");
    assert!(md.contains("| clients | none (baseline) | full | equal | decorrelated | best |"));
    assert!(md.lines().any(|l| l.starts_with("| 200 |")), "{md}");
    let md = read(&tmp.path().join("herd-grid"), "report.md");
    assert!(md.contains("| clients | jitter | grpc-spec (baseline) | grpc-go | best |"));
}

#[test]
fn compare_labels_variants_by_run_and_lists_metrics_only_one_side_has() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("cmp");
    let o = run(&["compare", "results/tcp-blackout", "results/tcp-rtt-step", "-o", out.to_str().unwrap(), "--quiet"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let md = read(&out, "report.md");
    assert!(md.contains("tcp-blackout:linux") && md.contains("tcp-rtt-step:rfc6298"));
    // The two runs ask different questions: both are shown.
    assert!(md.contains("**tcp-blackout:**") && md.contains("**tcp-rtt-step:**"), "{md}");
    // Only the blackout measures recovery lag, only the RTT step convergence: both are
    // listed, with — where a run has no value, and a note saying so.
    for metric in ["recovery_lag_blackout1", "convergence_time_change1"] {
        let row = md
            .lines()
            .find(|l| l.starts_with("| ") && l.contains(&format!(" ({metric}) |")))
            .unwrap_or_else(|| panic!("no row for {metric}:\n{md}"));
        assert!(row.contains("| — |"), "{row}");
        assert!(md.contains(&format!("`{metric}` has no value for")), "{md}");
    }
    assert!(md.contains("| `scenario` |"), "the runs' scenarios differ: {md}");
    assert_self_contained(&read(&out, "report.html"));
    png_size(&std::fs::read(out.join("rto.png")).unwrap());
}

#[test]
fn compare_of_one_scenario_with_two_seeds_shows_the_seed_as_the_difference() {
    let tmp = tempfile::tempdir().unwrap();
    let mut dirs: Vec<PathBuf> = Vec::new();
    for seed in ["1", "2"] {
        let dir = tmp.path().join(format!("seed{seed}"));
        let o = run(&[
            "run",
            "scenarios/tcp-karn.toml",
            "--quiet",
            "--seed",
            seed,
            "--replications",
            "2",
            "--out",
            dir.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        dirs.push(dir);
    }
    let out = tmp.path().join("cmp");
    let o =
        run(&["compare", dirs[0].to_str().unwrap(), dirs[1].to_str().unwrap(), "-o", out.to_str().unwrap(), "--quiet"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let md = read(&out, "report.md");
    assert!(md.contains("| `seed` | 1 | 1 | 1 | 1 | **2** | **2** | **2** | **2** |"), "{md}");
    assert!(md.contains("seed2:linux"), "{md}");
    // The question is shared, so it is asked once.
    assert_eq!(md.matches("> A 100 ms path with 5 % random loss").count(), 1);
}

/// The re-draw commands at the end of a report name the directory the run was written
/// to, as the user gave it (relative stays relative), quoted for the shell when needed.
#[test]
fn the_report_redraws_from_the_directory_the_run_was_written_to() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = root().join("scenarios/tcp-blackout.toml");
    let run_in = |args: &[&str]| {
        let o = super::common::bin().current_dir(tmp.path()).args(args).output().unwrap();
        assert!(o.status.success(), "{}", text(&o.stderr));
    };
    run_in(&["run", scenario.to_str().unwrap(), "--quiet", "--out", "my runs/blackout"]);
    let md = read(&tmp.path().join("my runs/blackout"), "report.md");
    assert!(md.contains("backoffsim plot rto 'my runs/blackout' --variant rfc6298 "), "{md}");
    assert!(!md.contains("results/tcp-blackout") && !md.contains("partial"), "{md}");
    let html = read(&tmp.path().join("my runs/blackout"), "report.html");
    assert!(html.contains("my runs/blackout"), "the HTML report names it too");

    run_in(&["run", scenario.to_str().unwrap(), "--quiet", "--out", "elsewhere"]);
    assert!(read(&tmp.path().join("elsewhere"), "report.md").contains("backoffsim plot rto elsewhere --variant"));

    // Without --out the run goes to results/<name>, and the report says so.
    run_in(&["run", scenario.to_str().unwrap(), "--quiet"]);
    let md = read(&tmp.path().join("results/tcp-blackout"), "report.md");
    assert!(md.contains("backoffsim plot rto results/tcp-blackout --variant"), "{md}");
}

/// Runs of different models are not compared: exit 2, each run's model named, and the
/// metric names they share only by name listed; nothing is written.
#[test]
fn compare_refuses_runs_of_different_models_naming_each_model() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("cmp");
    let o = run(&["compare", "results/tcp-blackout", "results/grpc-flapping", "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    for needle in [
        "cannot compare runs of different models",
        "results/tcp-blackout ran model `tcp`",
        "results/grpc-flapping ran model `grpc`",
        "(`timeouts`) measure different things",
    ] {
        assert!(err.contains(needle), "`{needle}` missing from: {err}");
    }
    assert!(!out.exists(), "nothing is written");
    let o = run(&["compare", "results/seed-loop", "results/brooker-occ", "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("ran model `calls`") && text(&o.stderr).contains("ran model `occ`"));
    // The first burst after a return is counted in calls by one and connections by the other.
    let o = run(&["compare", "results/seed-loop", "results/grpc-blackhole", "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("(`first_burst_peak`) measure different things"), "{}", text(&o.stderr));
}

#[test]
fn the_cdf_caption_mentions_the_grey_down_time_only_when_the_server_had_some() {
    let grey = "grey shows where the server was still down";
    let (_a, outage) = run_scenario("seed-loop", &["--replications", "2"]);
    let md = std::fs::read_to_string(outage.join("report.md")).unwrap();
    assert!(md.contains(grey), "{md}");
    // A calls run's distributions are over its calls, not its clients.
    assert!(md.contains("Distribution over calls") && md.contains("The share of calls (y)"), "{md}");
    // A brownout is not down time: nothing grey is drawn, and the caption does not say so.
    let (_b, brownout) = run_scenario("calls-permanent-errors", &["--replications", "2"]);
    let md = std::fs::read_to_string(brownout.join("report.md")).unwrap();
    assert!(md.contains("Dots mark the median") && !md.contains(grey), "{md}");
}
