//! What the gRPC channels write to `summary.csv`: each metric declared once, emitted through its
//! entry (`MetricValue::of`) and listed by the catalogue in this order.

use crate::worlds::catalogue::entries;

entries! {
    model: Grpc;
    ATTEMPTS: "attempts", "Connection attempts", "count", L, plain,
        "Connection attempts of all channels at the server.";
    ATTEMPTS_PER_CLIENT: "attempts_per_client", "Attempts per channel", "count", L, headline,
        "Connection attempts per channel.";
    REFUSED: "refused", "Refused attempts", "count", L, plain,
        "Connection attempts the server refused.";
    TIMEOUTS: "timeouts", "Connect timeouts", "count", L, plain,
        "Connection attempts that ended at their connect deadline.";
    WASTED_HANDSHAKES: "wasted_handshakes", "Wasted handshakes", "count", L, plain,
        "Handshakes the server completed after the client had given up on the attempt.";
    PEAK_ATTEMPT_RATE: "peak_attempt_rate", "Peak attempt rate", "attempts/s", L, headline,
        "The most attempts per second in any bin at the server.";
    PEAK_TO_MEAN: "peak_to_mean", "Peak-to-mean attempt rate", "ratio", L, plain,
        "The busiest bin's attempts over the mean bin, over the bins while the server is up.";
    CV: "cv", "Burstiness: CV of attempts per bin", "ratio", L, plain,
        "Coefficient of variation of attempts per bin while the server is up: 0 is perfectly even.";
    CONNECTED_AT_END: "connected_at_end", "Connected at the end", "fraction", H, plain,
        "Share of channels connected when the run ends.";
    CONNECTED_TIME: "connected_time", "Time connected", "fraction", H, headline,
        "Share of channel-time spent connected.";
    RECONNECT_P50: "reconnect_p50", "Reconnect time, median", "s", L, headline,
        "Time from a disconnect until the channel is connected again, over every disconnect: the median.";
    RECONNECT_P99: "reconnect_p99", "Reconnect time, 99th percentile", "s", L, headline,
        "Time from a disconnect until the channel is connected again: the 99th percentile.";
    RECONNECT_ALL: "reconnect_all", "Reconnect time, all channels", "s", L, headline,
        "Time from a disconnect until the last channel is connected again.";
    RECONNECT_AFTER_UP_P50: "reconnect_after_up_p50", "Reconnect after the server is back, median", "s", L, plain,
        "Time from the server's return until a channel is connected: the median.";
    RECONNECT_AFTER_UP_P99: "reconnect_after_up_p99", "Reconnect after the server is back, 99th percentile", "s", L, plain,
        "Time from the server's return until a channel is connected: the 99th percentile.";
    RECONNECT_AFTER_UP_ALL: "reconnect_after_up_all", "Reconnect after the server is back, all channels", "s", L, plain,
        "Time from the server's return until the last channel is connected.";
    FIRST_BURST_PEAK: "first_burst_peak", "First burst after the server is back", "attempts/s", L, plain + Calls,
        "The most attempts reaching the server in any one second from its first return after a restart or outage until it next goes down: the herd it meets (absent when it is never down).";
    SPREAD_ATTEMPT: "spread_attempt{k}", "Spread of attempt {k}", "s", N, plain,
        "Standard deviation over channels of when attempt k starts after a disconnect.";
}
