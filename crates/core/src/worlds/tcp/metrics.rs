//! What a TCP connection writes to `summary.csv`: each metric declared once, emitted through its
//! entry (`MetricValue::of`) and listed by the catalogue in this order.

use crate::worlds::catalogue::entries;

entries! {
    model: Tcp;
    RETRANSMISSIONS: "retransmissions", "Retransmissions", "count", L, plain,
        "Segments sent again, by the timer or fast retransmit; mean per connection.";
    TIMEOUTS: "timeouts", "Retransmission timeouts", "count", L, headline,
        "Expiries of the retransmission timer; mean per connection.";
    SPURIOUS_RETRANSMISSIONS: "spurious_retransmissions", "Spurious retransmissions", "count", L, headline,
        "Retransmissions of segments whose first copy was not lost; mean per connection.";
    TAIL_LOSS_PROBES: "tail_loss_probes", "Tail loss probes", "count", N, plain,
        "Loss probes sent before the RTO (RFC 8985 TLP), new data or the last segment again; mean per connection.";
    SPURIOUS_TIMEOUTS_DETECTED: "spurious_timeouts_detected", "Spurious timeouts detected", "count", N, plain,
        "Timeouts F-RTO (RFC 5682) found spurious and undid; mean per connection.";
    ABORTED: "aborted", "Connections aborted", "fraction", L, headline,
        "Share of connections that gave up retransmitting (syn_retries or retries2 exhausted: ETIMEDOUT).";
    TIME_TO_ABORT: "time_to_abort", "Time to abort", "s", N, headline,
        "From the first transmission of the data (or SYN) never acknowledged to the abort (for a zero-window abort, from when the window closed), over the connections that aborted.";
    RTT_SAMPLES: "rtt_samples", "RTT samples", "count", N, plain,
        "RTT measurements fed to the estimator; mean per connection.";
    MAX_RTO: "max_rto", "Largest RTO", "s", N, plain,
        "The highest value the retransmission timer reached; mean per connection.";
    GOODPUT: "goodput", "Goodput", "bytes/s", H, plain,
        "Bytes delivered in order per second of the connection's life.";
    FINAL_SRTT: "final_srtt", "Final SRTT", "s", N, plain,
        "The smoothed RTT at the end of the run; mean per connection.";
    SRTT_ABS_ERROR: "srtt_abs_error", "SRTT error", "s", L, headline,
        "Mean |SRTT − the path's median RTT| at each sample.";
    FINISHED: "finished", "Transfers finished", "fraction", H, plain,
        "Share of connections that delivered their whole transfer within the horizon.";
    TRANSFER_TIME: "transfer_time", "Transfer time", "s", L, plain,
        "Time to deliver the whole transfer, over the connections that finished.";
    CONVERGED_CHANGE: "converged_change{k}", "Converged after RTT change {k}", "fraction", H, plain,
        "Share of connections whose SRTT came within 10 % of the new RTT after change k.";
    CONVERGENCE_TIME_CHANGE: "convergence_time_change{k}", "Convergence time after RTT change {k}", "s", L, headline,
        "Time after RTT change k until SRTT is within 10 % of the new RTT.";
    RECOVERY_LAG_BLACKOUT: "recovery_lag_blackout{k}", "Recovery lag after blackout {k}", "s", L, headline,
        "From the link's return after blackout k to the send time of the first retransmission that got through.";
    KEEPALIVE_PROBES: "keepalive_probes", "Keepalive probes", "count", N, plain,
        "Keepalive probes sent (Linux tcp_keepalive_timer), answered or not; mean per connection. Written with [tcp.keepalive].";
    KEEPALIVE_RESETS: "keepalive_resets", "Connections reset by keepalive", "fraction", N, headline,
        "Share of connections keepalive gave up on (keepalive_probes unanswered: ETIMEDOUT). Written with [tcp.keepalive].";
    KEEPALIVE_LAG_BLACKOUT: "keepalive_lag_blackout{k}", "Keepalive reset after blackout {k}", "s", L, headline,
        "From the start of blackout k to keepalive's reset, over the connections reset after it began and before the next. Written with [tcp.keepalive].";
    ZERO_WINDOW_PROBES: "zero_window_probes", "Zero-window probes", "count", N, plain,
        "Zero-window probes sent (Linux tcp_send_probe0), answered or not; mean per connection. Written with [tcp.receiver].";
    ZERO_WINDOW_STALL: "zero_window_stall", "Zero-window stall", "s", L, headline,
        "Time the sender spent with the receiver's window closed and data waiting, until it reopened, the connection aborted or the run ended; mean per connection. Written with [tcp.receiver].";
    SYNACK_RETRANSMISSIONS: "synack_retransmissions", "SYN-ACK retransmissions", "count", L, plain,
        "SYN-ACKs a listener sent again, on its request timer or for a retransmitted SYN; mean per connection. Written with [tcp.listen].";
    HANDSHAKE_TIME: "handshake_time", "Passive handshake time", "s", L, headline,
        "From the peer's first SYN at the listener to the ACK completing the handshake, over the connections accepted. Written with [tcp.listen].";
    ACCEPT_RTO: "accept_rto", "RTO at accept", "s", N, headline,
        "The RTO the accepted socket starts its data with (tcp_synack_rtt_meas's sample, or the 3 s fallback); mean over the connections accepted. Written with [tcp.listen].";
    REQUESTS_EXPIRED: "requests_expired", "Requests expired", "count", L, headline,
        "Requests the listener dropped after synack_retries unanswered SYN-ACKs; mean per connection. Written with [tcp.listen].";
    REQUEST_HELD: "request_held", "Half-open request held", "s", N, plain,
        "From a request's first SYN at the listener to its expiry, over the connections whose request expired. Written with [tcp.listen].";
    RTO_MEAN: "rto_mean", "Mean RTO", "s", N, plain,
        "The timer's value averaged over time; mean per connection.";
    RTO_P50: "rto_p50", "Median RTO", "s", N, plain,
        "The median of the timer's value over time (time-weighted); mean per connection.";
    RTO_P99: "rto_p99", "RTO, 99th percentile", "s", N, plain,
        "The 99th percentile of the timer's value over time (time-weighted); mean per connection.";
}
