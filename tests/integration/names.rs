//! Names a user types: `keys` and `schema` describe every scenario key, and an unknown
//! name anywhere (a section, a plot kind, a profile in a scenario) is told the nearest.

use super::common::{ok, refused};

#[test]
fn keys_lists_every_key_aligned_and_a_section_only_its_own() {
    let out = ok(&["keys"]);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("KEY") && lines[0].contains("DEFAULT") && lines[0].contains("RANGE"));
    let doc_col = lines[0].find("WHAT IT IS").unwrap();
    for key in ["name", "horizon", "tcp.rto.min_rto", "calls.policy.jitter", "jobs.retry.preset", "path.blackout[].at"]
    {
        let line =
            lines.iter().find(|l| l.split_whitespace().next() == Some(key)).unwrap_or_else(|| panic!("no {key}"));
        assert!(line.len() > doc_col, "{line}");
    }
    // RFC 6298 (2.4) rounds the RTO up to 1 s; Linux's TCP_RTO_MIN is 200 ms.
    let min_rto = lines.iter().find(|l| l.starts_with("tcp.rto.min_rto ")).unwrap();
    assert!(min_rto.contains("rfc6298: 1s, linux: 200ms"), "{min_rto}");
    let tcp = ok(&["keys", "tcp"]);
    assert!(tcp.lines().skip(1).all(|l| l.starts_with("tcp.")), "{tcp}");
    let err = refused(&["keys", "servr"]);
    assert!(err.contains("unknown section `servr`; did you mean `server`?"), "{err}");
}

#[test]
fn schema_is_json_and_names_every_section() {
    let out = ok(&["schema"]);
    let schema: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(schema["$schema"], "http://json-schema.org/draft-07/schema#");
    for section in ["tcp", "grpc", "occ", "calls", "jobs", "server", "path", "trace", "sweep", "variant"] {
        assert!(schema["properties"][section].is_object(), "no {section}");
    }
    assert_eq!(ok(&["schema"]), out, "the same bytes every time");
}

#[test]
fn a_misspelt_plot_kind_or_profile_is_told_the_nearest_name() {
    let err = refused(&["plot", "rtto", "results/tcp-blackout", "-o", "x.svg"]);
    assert!(err.contains("unknown plot kind `rtto`; did you mean `rto`?"), "{err}");
    assert!(err.contains("`heatmap`"), "the kinds are listed: {err}");
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("s.toml");
    std::fs::write(
        &file,
        "name = \"s\"\nhorizon = \"10s\"\n[grpc]\nclients = 2\n[grpc.backoff]\nprofile = \"grpc_go\"\n",
    )
    .unwrap();
    let err = refused(&["check", file.to_str().unwrap()]);
    assert!(err.contains(":6:11: key `grpc.backoff.profile`"), "{err}");
    assert!(err.contains("did you mean `grpc-go`?"), "{err}");
}
