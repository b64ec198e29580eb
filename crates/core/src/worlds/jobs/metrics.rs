//! What the job queue writes to `summary.csv`: each metric declared once, emitted through its
//! entry (`MetricValue::of`) and listed by the catalogue in this order.

use crate::worlds::catalogue::entries;

entries! {
    model: Jobs;
    JOBS: "jobs", "Jobs", "count", N, plain,
        "Jobs the producer created by the horizon.";
    DELIVERED: "delivered", "Delivered", "fraction", H, headline,
        "Share of jobs a provider accepted by the horizon.";
    DEAD_LETTERED: "dead_lettered", "Dead-lettered", "fraction", L, headline,
        "Share of jobs the retry policy gave up on, moved to the dead-letter queue.";
    IN_FLIGHT: "in_flight", "In flight at the horizon", "fraction", N, plain,
        "Share of jobs neither delivered nor dead-lettered: waiting, scheduled for a retry, or in a worker.";
    DEAD_LETTERED_GOOD: "dead_lettered_good", "Good jobs dead-lettered", "fraction", L, headline,
        "Share of jobs dead-lettered that were not poison: the ones a better retry policy would have delivered.";
    DEAD_LETTERED_ATTEMPTS: "dead_lettered_attempts", "Dead-lettered: attempts exhausted", "fraction", L, plain,
        "Share of jobs dead-lettered after their last allowed run.";
    DEAD_LETTERED_DEADLINE: "dead_lettered_deadline", "Dead-lettered: deadline", "fraction", L, plain,
        "Share of jobs dead-lettered because the policy's deadline (the job's age) ran out.";
    DEAD_LETTERED_PERMANENT: "dead_lettered_permanent", "Dead-lettered: failure not retried", "fraction", L, plain,
        "Share of jobs dead-lettered at once because the policy does not retry the failure.";
    DEAD_LETTERED_QUOTA: "dead_lettered_quota", "Dead-lettered: retry quota empty", "fraction", L, plain,
        "Share of jobs dead-lettered because the queue's retry quota could not pay.";
    DEAD_LETTERED_THROTTLED: "dead_lettered_throttled", "Dead-lettered: retries throttled", "fraction", L, plain,
        "Share of jobs dead-lettered because retry throttling forbade a retry.";
    DEAD_LETTERED_BUDGET: "dead_lettered_budget", "Dead-lettered: retry budget empty", "fraction", L, plain,
        "Share of jobs dead-lettered because the retry budget was used up.";
    DEAD_LETTERED_REQUEST_LIMIT: "dead_lettered_request_limit", "Dead-lettered: per-job retry limit", "fraction", L, plain,
        "Share of jobs dead-lettered after using their share of the retry budget.";
    DELIVERED_BY_PROVIDER: "delivered_by_provider{k}", "Delivered by provider {k}", "fraction", N, headline,
        "Share of the delivered jobs that the k-th provider in failover order delivered.";
    COMPLETION_TIME: "completion_time", "Completion time", "s", L, headline,
        "Mean time from a job's creation to its delivery, over delivered jobs.";
    COMPLETION_TIME_P99: "completion_time_p99", "Completion time, 99th percentile", "s", L, headline,
        "The 99th percentile of creation-to-delivery time, over delivered jobs.";
    COMPLETION_TIME_INCIDENT: "completion_time_incident", "Completion time during the incident", "s", L, plain,
        "Mean completion time of the jobs created while the first provider was in a down window.";
    COMPLETION_TIME_NORMAL: "completion_time_normal", "Completion time outside the incident", "s", L, plain,
        "Mean completion time of the jobs created while the first provider was not in a down window.";
    ADDED_LATENCY: "added_latency", "Latency added by the incident", "s", L, headline,
        "Completion time during the first provider's down windows minus outside them.";
    RUNS_PER_JOB: "runs_per_job", "Runs per job", "count", L, plain,
        "Times a worker ran a job (first run and retries), per job created.";
    PROVIDER_CALLS_PER_JOB: "provider_calls_per_job", "Provider calls per job", "count", L, plain,
        "Calls to any provider per job created: failover and retries multiply them.";
    WORKER_UTILIZATION: "worker_utilization", "Worker utilization", "fraction", N, headline,
        "Busy worker-time over workers × horizon.";
    QUEUE_DEPTH_MAX: "queue_depth_max", "Largest queue depth", "count", L, plain,
        "The most jobs waiting or scheduled for a retry at once (not counting those in a worker).";
}

/// The entry of the jobs dead-lettered for the reason `slug` (`GiveUpReason::slug`).
pub fn dead_lettered(slug: &str) -> &'static Entry {
    crate::worlds::catalogue::by_reason(ALL, "dead_lettered_", slug)
}
