//! What the calls world writes to `summary.csv`: each metric declared once, emitted through its
//! entry (`MetricValue::of`) and listed by the catalogue in this order.

use crate::worlds::catalogue::entries;

entries! {
    model: Calls;
    CALLS: "calls", "Calls", "count", N, plain,
        "Logical calls the clients started.";
    SUCCESS_RATE: "success_rate", "Success rate", "fraction", H, headline,
        "Share of calls that succeeded.";
    GAVE_UP_ATTEMPTS: "gave_up_attempts", "Gave up: attempts exhausted", "fraction", L, headline,
        "Share of calls that failed after their last allowed attempt.";
    GAVE_UP_DEADLINE: "gave_up_deadline", "Gave up: deadline", "fraction", L, headline,
        "Share of calls that failed at their deadline.";
    GAVE_UP_PERMANENT: "gave_up_permanent", "Failed: error not retried", "fraction", L, headline,
        "Share of calls that failed with an error the policy does not retry.";
    GAVE_UP_NOT_IDEMPOTENT: "gave_up_not_idempotent", "Failed: not safe to repeat", "fraction", L, headline,
        "Share of calls that failed because they are not safe to repeat.";
    GAVE_UP_QUOTA: "gave_up_quota", "Gave up: retry quota empty", "fraction", L, headline,
        "Share of calls that failed because the client's retry quota could not pay.";
    GAVE_UP_THROTTLED: "gave_up_throttled", "Gave up: retries throttled", "fraction", L, headline,
        "Share of calls that failed because retry throttling forbade a retry.";
    GAVE_UP_BUDGET: "gave_up_budget", "Gave up: retry budget empty", "fraction", L, headline,
        "Share of calls that failed because the retry budget was used up.";
    GAVE_UP_REQUEST_LIMIT: "gave_up_request_limit", "Gave up: per-request retry limit", "fraction", L, headline,
        "Share of calls that failed after using their share of the retry budget.";
    UNFINISHED: "unfinished", "Unfinished calls", "fraction", N, plain,
        "Share of calls still running when the horizon ended.";
    ATTEMPTS_PER_CALL: "attempts_per_call", "Attempts per call", "count", L, headline,
        "Server calls per library call: 1 means no retries.";
    LIBRARY_CALLS_PER_CALL: "library_calls_per_call", "Library calls per call", "count", L, plain,
        "Calls into the retrying library per logical call (tiers retrying over tiers).";
    SERVER_CALLS_PER_CALL: "server_calls_per_call", "Server calls per call (amplification)", "count", L, plain,
        "Calls that reached the server per logical call.";
    RETRY_SHARE: "retry_share", "Retries' share of server calls", "fraction", L, plain,
        "Share of the server's calls that were retries: the number to alert on.";
    DUPLICATES: "duplicates", "Duplicate executions per call", "count", L, plain,
        "Times a call that is not safe to repeat was applied more than once.";
    TIME_TO_SUCCESS: "time_to_success", "Time to success", "s", L, headline,
        "Mean time from a call's start to its success.";
    TIME_TO_GIVEUP: "time_to_giveup", "Time to give-up", "s", L, headline,
        "Mean time from a call's start until the client gave up on it.";
    TOTAL_SLEEP: "total_sleep", "Total backoff sleep", "s", N, plain,
        "Mean time a call spent sleeping between attempts.";
    TOTAL_SLEEP_MAX: "total_sleep_max", "Longest total backoff sleep", "s", N, plain,
        "The most time any call spent sleeping between attempts.";
    TIME_TO_SUCCESS_P99: "time_to_success_p99", "Time to success, p99", "s", L, plain,
        "The 99th percentile of the time from a call's start to its success, over successes.";
    TIME_TO_SUCCESS_MAX: "time_to_success_max", "Longest time to success", "s", L, plain,
        "The longest time from a call's start to its success.";
    INCIDENT_ATTEMPTS_PER_CALL: "incident_attempts_per_call", "Attempts per call during the incident", "count", L, headline,
        "Attempts reaching the server during the incident per call started during it: the load multiplier of retries (3 × 3 tiers: 9).";
    TIME_TO_ANSWER: "time_to_answer", "Time to the final answer", "s", L, plain,
        "Mean time from a call's start to its success or final failure, over the calls that ended.";
    BAD_REQUEST_RETRIES: "bad_request_retries", "Retries of bad requests", "count", L, plain,
        "Attempts after the first of calls the server rejects as bad requests (permanent_fraction), per logical call: load that could never succeed.";
    GOODPUT: "goodput", "Goodput", "calls/s", H, plain,
        "Calls that succeeded per second, from the first call to the horizon.";
    GOODPUT_END: "goodput_end", "Goodput at the end", "calls/s", H, plain,
        "Calls that succeeded per second over the last tenth of the horizon.";
    OFFERED_LOAD: "offered_load", "Offered load", "ratio", N, plain,
        "Attempts that reached the server (first tries and retries) over what its workers can serve, from the first call to the horizon: a ratio, not a share, so above 1 when more arrived than they could serve.";
    OFFERED_LOAD_END: "offered_load_end", "Offered load at the end", "ratio", L, plain,
        "Attempts over the workers' capacity in the last tenth of the horizon, a ratio: above 1 the server is still overloaded.";
    WASTED_WORK: "wasted_work", "Wasted work", "fraction", L, headline,
        "Share of the workers' busy time spent on attempts whose client had stopped waiting (timed out or dropped).";
    RECOVERED: "recovered", "Recovered", "fraction", H, headline,
        "Share of replications whose goodput came back (90 % of the pre-incident success ratio, 5-bin windows) after the incident and stayed.";
    TIME_TO_RECOVER: "time_to_recover", "Time to recover", "s", L, headline,
        "From the end of the incident to the recovery, over the replications that recovered.";
    ALERT_DELAY: "alert_delay", "Retry-share alert delay", "s", L, headline,
        "From the incident's start to the end of the first bin whose retries reached the alert's share of attempts.";
}

/// The entry of the calls that gave up for the reason `slug` (`GiveUpReason::slug`).
pub fn gave_up(slug: &str) -> &'static Entry {
    crate::worlds::catalogue::by_reason(ALL, "gave_up_", slug)
}
