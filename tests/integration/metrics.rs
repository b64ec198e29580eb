//! The RTO's distribution over a connection's life and the reconnect time counted from
//! the server's return, on cases small enough to work out by hand.

use super::common::{metric, run_text, summary};

fn summary_of(source: &str) -> Vec<(String, String, f64)> {
    let (_tmp, out) = run_text(source, &[]);
    summary(&out)
}

fn close(got: f64, want: f64, what: &str) {
    assert!((got - want).abs() < 1e-9, "{what}: got {got}, want {want}");
}

/// Three segments, one at a time, over a constant 500 ms path (RFC 6298):
/// - [0, 0.5) s: SYN out, RTO 1 s (2.1);
/// - 0.5 s: SYN-ACK, R = 0.5: SRTT 0.5, RTTVAR 0.25, RTO 0.5 + 4·0.25 = 1.5 s (2.2);
/// - 1.0 s: RTTVAR 3/4·0.25 = 0.1875, RTO 1.25 s (2.3); 1.5 s: RTTVAR 0.140625, RTO 1.0625 s;
/// - 2.0 s: the last ACK ends the transfer (its sample's 1 s holds for no time).
///
/// Each value holds 0.5 s of 2 s: mean (1 + 1.5 + 1.25 + 1.0625)/4 = 1.203125 s; half
/// the time the RTO is at or below 1.0625 s (p50) and it reaches 1.5 s (p99).
#[test]
fn rto_mean_and_quantiles_weight_each_timer_value_by_how_long_it_held() {
    let rows = summary_of(
        r#"
name = "rto-weighted"
description = "three segments, window 1, 500 ms RTT"
horizon = "10s"
[tcp]
window = 1
workload = { kind = "transfer", segments = 3 }
[path]
base_rtt = "500ms"
"#,
    );
    close(metric(&rows, "base", "rto_mean"), 1.203125, "rto_mean");
    close(metric(&rows, "base", "rto_p50"), 1.0625, "rto_p50");
    close(metric(&rows, "base", "rto_p99"), 1.5, "rto_p99");
    close(metric(&rows, "base", "max_rto"), 1.5, "max_rto");
}

/// A steady connection over 100 ms: the RTO starts at 1 s (2.1) and every sample gives
/// less than 1 s, rounded up to it (2.4), so it is 1 s at every instant.
#[test]
fn a_constant_rto_is_its_own_mean_median_and_p99() {
    let rows = summary_of(
        r#"
name = "rto-flat"
description = "constant 100 ms path"
horizon = "30s"
[tcp]
clients = 3
workload = { kind = "steady", interval = "100ms" }
[path]
base_rtt = "100ms"
"#,
    );
    for m in ["rto_mean", "rto_p50", "rto_p99"] {
        close(metric(&rows, "base", m), 1.0, m);
    }
}

/// 100 channels, no jitter, the spec's schedule, a default (zero-delay) path and an
/// unlimited server restarted at 10 s for 5 s and at 30 s for 2 s. Each channel learns of
/// the drop at once and retries at once (refused), then after 1 s and 1.6 s more:
/// - first restart: attempts at 10, 11, 12.6 s refused; 12.6 + 2.56 = 15.16 s connects:
///   5.16 s after the drop, 0.16 s after the server's return at 15 s;
/// - second: 30, 31 s refused; 32.6 s connects: 2.6 s after the drop, 0.6 s after 32 s.
///
/// 200 reconnections, half of each kind: the median is the smaller, p99 and all the larger.
#[test]
fn reconnect_after_up_counts_each_episode_from_the_servers_return() {
    let rows = summary_of(
        r#"
name = "after-up"
description = "two restarts, no jitter"
horizon = "60s"
[grpc]
clients = 100
[grpc.backoff]
profile = "spec"
jitter = 0
[[server.restart]]
at = "10s"
down = "5s"
[[server.restart]]
at = "30s"
down = "2s"
"#,
    );
    close(metric(&rows, "base", "reconnect_p50"), 2.6, "reconnect_p50");
    close(metric(&rows, "base", "reconnect_p99"), 5.16, "reconnect_p99");
    close(metric(&rows, "base", "reconnect_all"), 5.16, "reconnect_all");
    close(metric(&rows, "base", "reconnect_after_up_p50"), 0.16, "reconnect_after_up_p50");
    close(metric(&rows, "base", "reconnect_after_up_p99"), 0.6, "reconnect_after_up_p99");
    close(metric(&rows, "base", "reconnect_after_up_all"), 0.6, "reconnect_after_up_all");
}

/// A flapping server that never goes down drops each connection 2 s after SETTINGS: the
/// server is up all along, so the time after its return is the time after the drop.
#[test]
fn reconnects_while_the_server_never_went_down_count_from_the_drop() {
    let rows = summary_of(
        r#"
name = "flap"
description = "drop_after without down time"
horizon = "20s"
[grpc]
clients = 20
start = "connecting"
start_spread = "1s"
[grpc.backoff]
profile = "spec"
[path]
base_rtt = "20ms"
[server]
drop_after = "2s"
"#,
    );
    for q in ["p50", "p99", "all"] {
        let plain = metric(&rows, "base", &format!("reconnect_{q}"));
        close(metric(&rows, "base", &format!("reconnect_after_up_{q}")), plain, q);
    }
}
