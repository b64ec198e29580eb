//! What every summary metric means: a human title, its unit, which way is better, a
//! one-line doc, and the models that write it. Plots and reports look metrics up here
//! instead of guessing from their ids, and the headline flags say which few metrics
//! answer a model's question, so a sweep plot shows those rather than everything.
//!
//! An id may belong to more than one model with a different meaning (`timeouts` of a
//! TCP connection and of gRPC connection attempts; `calls` of OCC and of client calls),
//! so lookups take the models of the run when they are known.

/// Which way a metric is better.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Better {
    Lower,
    Higher,
}

/// The simulation models, as a scenario's `model` names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ModelId {
    Tcp,
    Grpc,
    Calls,
    Occ,
    Jobs,
}

impl ModelId {
    pub const ALL: [ModelId; 5] = [ModelId::Tcp, ModelId::Grpc, ModelId::Calls, ModelId::Occ, ModelId::Jobs];

    pub fn name(self) -> &'static str {
        match self {
            ModelId::Tcp => "tcp",
            ModelId::Grpc => "grpc",
            ModelId::Calls => "calls",
            ModelId::Occ => "occ",
            ModelId::Jobs => "jobs",
        }
    }

    pub fn from_name(name: &str) -> Option<ModelId> {
        ModelId::ALL.into_iter().find(|m| m.name() == name)
    }
}

/// One metric, or a numbered family of them (`spread_attempt1`, `spread_attempt2`, …).
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    /// The id; for a numbered family the id without its number, ending before `{k}`
    /// (`spread_attempt{k}`).
    pub id: &'static str,
    /// Human title; `{k}` stands for a family member's number.
    pub title: &'static str,
    pub unit: &'static str,
    pub better: Option<Better>,
    pub doc: &'static str,
    /// Bookkeeping of the simulator rather than an answer (e.g. `events`): never plotted
    /// unless asked for by name.
    pub internal: bool,
    pub models: &'static [ModelId],
    /// The models for which this is a headline metric.
    pub headline: &'static [ModelId],
}

impl Entry {
    /// Whether `id` is this entry's id or a member of its numbered family; returns the
    /// member's number (empty for a plain id).
    fn matches<'a>(&self, id: &'a str) -> Option<&'a str> {
        match self.id.strip_suffix("{k}") {
            Some(prefix) => {
                let k = id.strip_prefix(prefix)?;
                (!k.is_empty() && k.bytes().all(|b| b.is_ascii_digit())).then_some(k)
            }
            None => (self.id == id).then_some(""),
        }
    }

    pub fn is_headline_for(&self, models: &[ModelId]) -> bool {
        self.headline.iter().any(|m| models.contains(m))
    }
}

use Better::{Higher, Lower};
use ModelId::{Calls, Grpc, Jobs, Occ, Tcp};

const fn e(
    id: &'static str,
    title: &'static str,
    unit: &'static str,
    better: Option<Better>,
    models: &'static [ModelId],
    headline: bool,
    doc: &'static str,
) -> Entry {
    Entry { id, title, unit, better, doc, internal: false, models, headline: if headline { models } else { &[] } }
}

const L: Option<Better> = Some(Lower);
const H: Option<Better> = Some(Higher);
const N: Option<Better> = None;

/// Every metric a model writes to `summary.csv`. Where two models share an id, the
/// first entry is the one an id-only lookup finds.
#[rustfmt::skip]
pub static CATALOGUE: &[Entry] = &[
    // ---- TCP: the retransmission timer --------------------------------------------
    e("retransmissions", "Retransmissions", "count", L, &[Tcp], false,
        "Segments sent again, by the timer or fast retransmit; mean per connection."),
    e("timeouts", "Retransmission timeouts", "count", L, &[Tcp], true,
        "Expiries of the retransmission timer; mean per connection."),
    e("spurious_retransmissions", "Spurious retransmissions", "count", L, &[Tcp], true,
        "Retransmissions of segments whose first copy was not lost; mean per connection."),
    e("tail_loss_probes", "Tail loss probes", "count", N, &[Tcp], false,
        "Loss probes sent before the RTO (RFC 8985 TLP), new data or the last segment again; mean per connection."),
    e("spurious_timeouts_detected", "Spurious timeouts detected", "count", N, &[Tcp], false,
        "Timeouts F-RTO (RFC 5682) found spurious and undid; mean per connection."),
    e("aborted", "Connections aborted", "fraction", L, &[Tcp], true,
        "Share of connections that gave up retransmitting (syn_retries or retries2 exhausted: ETIMEDOUT)."),
    e("time_to_abort", "Time to abort", "s", N, &[Tcp], true,
        "From the first transmission of the data (or SYN) never acknowledged to the abort, over the connections that aborted."),
    e("rtt_samples", "RTT samples", "count", N, &[Tcp], false,
        "RTT measurements fed to the estimator; mean per connection."),
    e("max_rto", "Largest RTO", "s", N, &[Tcp], false,
        "The highest value the retransmission timer reached; mean per connection."),
    e("goodput", "Goodput", "bytes/s", H, &[Tcp], false,
        "Bytes delivered in order per second of the connection's life."),
    e("final_srtt", "Final SRTT", "s", N, &[Tcp], false,
        "The smoothed RTT at the end of the run; mean per connection."),
    e("srtt_abs_error", "SRTT error", "s", L, &[Tcp], true,
        "Mean |SRTT − the path's median RTT| at each sample."),
    e("finished", "Transfers finished", "fraction", H, &[Tcp], false,
        "Share of connections that delivered their whole transfer within the horizon."),
    e("transfer_time", "Transfer time", "s", L, &[Tcp], false,
        "Time to deliver the whole transfer, over the connections that finished."),
    e("converged_change{k}", "Converged after RTT change {k}", "fraction", H, &[Tcp], false,
        "Share of connections whose SRTT came within 10 % of the new RTT after change k."),
    e("convergence_time_change{k}", "Convergence time after RTT change {k}", "s", L, &[Tcp], true,
        "Time after RTT change k until SRTT is within 10 % of the new RTT."),
    e("recovery_lag_blackout{k}", "Recovery lag after blackout {k}", "s", L, &[Tcp], true,
        "From the link's return after blackout k to the send time of the first retransmission that got through."),
    e("rto_mean", "Mean RTO", "s", N, &[Tcp], false,
        "The timer's value averaged over time; mean per connection."),
    e("rto_p50", "Median RTO", "s", N, &[Tcp], false,
        "The median of the timer's value over time (time-weighted); mean per connection."),
    e("rto_p99", "RTO, 99th percentile", "s", N, &[Tcp], false,
        "The 99th percentile of the timer's value over time (time-weighted); mean per connection."),
    // ---- gRPC: connection backoff against one server -------------------------------
    e("attempts", "Connection attempts", "count", L, &[Grpc], false,
        "Connection attempts of all channels at the server."),
    e("attempts_per_client", "Attempts per channel", "count", L, &[Grpc], true,
        "Connection attempts per channel."),
    e("refused", "Refused attempts", "count", L, &[Grpc], false,
        "Connection attempts the server refused."),
    e("timeouts", "Connect timeouts", "count", L, &[Grpc], false,
        "Connection attempts that ended at their connect deadline."),
    e("wasted_handshakes", "Wasted handshakes", "count", L, &[Grpc], false,
        "Handshakes the server completed after the client had given up on the attempt."),
    e("peak_attempt_rate", "Peak attempt rate", "attempts/s", L, &[Grpc], true,
        "The most attempts per second in any bin at the server."),
    e("peak_to_mean", "Peak-to-mean attempt rate", "ratio", L, &[Grpc], false,
        "The busiest bin's attempts over the mean bin, over the bins while the server is up."),
    e("cv", "Burstiness: CV of attempts per bin", "ratio", L, &[Grpc], false,
        "Coefficient of variation of attempts per bin while the server is up: 0 is perfectly even."),
    e("connected_at_end", "Connected at the end", "fraction", H, &[Grpc], false,
        "Share of channels connected when the run ends."),
    e("connected_time", "Time connected", "fraction", H, &[Grpc], true,
        "Share of channel-time spent connected."),
    e("reconnect_p50", "Reconnect time, median", "s", L, &[Grpc], true,
        "Time from a disconnect until the channel is connected again, over every disconnect: the median."),
    e("reconnect_p99", "Reconnect time, 99th percentile", "s", L, &[Grpc], true,
        "Time from a disconnect until the channel is connected again: the 99th percentile."),
    e("reconnect_all", "Reconnect time, all channels", "s", L, &[Grpc], true,
        "Time from a disconnect until the last channel is connected again."),
    e("reconnect_after_up_p50", "Reconnect after the server is back, median", "s", L, &[Grpc], false,
        "Time from the server's return until a channel is connected: the median."),
    e("reconnect_after_up_p99", "Reconnect after the server is back, 99th percentile", "s", L, &[Grpc], false,
        "Time from the server's return until a channel is connected: the 99th percentile."),
    e("reconnect_after_up_all", "Reconnect after the server is back, all channels", "s", L, &[Grpc], false,
        "Time from the server's return until the last channel is connected."),
    e("first_burst_peak", "First burst after the server is back", "attempts/s", L, &[Grpc, Calls], false,
        "The most attempts reaching the server in any one second from its first return after a restart or outage until it next goes down: the herd it meets (absent when it is never down)."),
    e("spread_attempt{k}", "Spread of attempt {k}", "s", N, &[Grpc], false,
        "Standard deviation over channels of when attempt k starts after a disconnect."),
    // ---- OCC: Brooker's contention study ---------------------------------------------
    e("calls", "Calls to the store", "count", L, &[Occ], true,
        "Calls of all clients to the shared store, failed ones included."),
    e("calls_per_client", "Calls per client", "count", L, &[Occ], false,
        "Calls to the store per client."),
    e("completion_time", "Time until all succeeded", "s", L, &[Occ], true,
        "Time until the last client's write succeeded."),
    e("succeeded", "Clients succeeded", "fraction", H, &[Occ], false,
        "Share of clients whose write succeeded within the horizon."),
    Entry {
        id: "events",
        title: "Simulation events",
        unit: "count",
        better: None,
        doc: "Events the simulator processed: its cost, not an answer.",
        internal: true,
        models: &[Occ],
        headline: &[],
    },
    // ---- calls: client retry policies -----------------------------------------------
    e("calls", "Calls", "count", N, &[Calls], false,
        "Logical calls the clients started."),
    e("success_rate", "Success rate", "fraction", H, &[Calls], true,
        "Share of calls that succeeded."),
    e("gave_up_attempts", "Gave up: attempts exhausted", "fraction", L, &[Calls], true,
        "Share of calls that failed after their last allowed attempt."),
    e("gave_up_deadline", "Gave up: deadline", "fraction", L, &[Calls], true,
        "Share of calls that failed at their deadline."),
    e("gave_up_permanent", "Failed: error not retried", "fraction", L, &[Calls], true,
        "Share of calls that failed with an error the policy does not retry."),
    e("gave_up_not_idempotent", "Failed: not safe to repeat", "fraction", L, &[Calls], true,
        "Share of calls that failed because they are not safe to repeat."),
    e("gave_up_quota", "Gave up: retry quota empty", "fraction", L, &[Calls], true,
        "Share of calls that failed because the client's retry quota could not pay."),
    e("gave_up_throttled", "Gave up: retries throttled", "fraction", L, &[Calls], true,
        "Share of calls that failed because retry throttling forbade a retry."),
    e("gave_up_budget", "Gave up: retry budget empty", "fraction", L, &[Calls], true,
        "Share of calls that failed because the retry budget was used up."),
    e("gave_up_request_limit", "Gave up: per-request retry limit", "fraction", L, &[Calls], true,
        "Share of calls that failed after using their share of the retry budget."),
    e("unfinished", "Unfinished calls", "fraction", N, &[Calls], false,
        "Share of calls still running when the horizon ended."),
    e("attempts_per_call", "Attempts per call", "count", L, &[Calls], true,
        "Server calls per library call: 1 means no retries."),
    e("library_calls_per_call", "Library calls per call", "count", L, &[Calls], false,
        "Calls into the retrying library per logical call (tiers retrying over tiers)."),
    e("server_calls_per_call", "Server calls per call (amplification)", "count", L, &[Calls], false,
        "Calls that reached the server per logical call."),
    e("retry_share", "Retries' share of server calls", "fraction", L, &[Calls], false,
        "Share of the server's calls that were retries: the number to alert on."),
    e("duplicates", "Duplicate executions per call", "count", L, &[Calls], false,
        "Times a call that is not safe to repeat was applied more than once."),
    e("time_to_success", "Time to success", "s", L, &[Calls], true,
        "Mean time from a call's start to its success."),
    e("time_to_giveup", "Time to give-up", "s", L, &[Calls], true,
        "Mean time from a call's start until the client gave up on it."),
    e("total_sleep", "Total backoff sleep", "s", N, &[Calls], false,
        "Mean time a call spent sleeping between attempts."),
    e("total_sleep_max", "Longest total backoff sleep", "s", N, &[Calls], false,
        "The most time any call spent sleeping between attempts."),
    e("time_to_success_p99", "Time to success, p99", "s", L, &[Calls], false,
        "The 99th percentile of the time from a call's start to its success, over successes."),
    e("time_to_success_max", "Longest time to success", "s", L, &[Calls], false,
        "The longest time from a call's start to its success."),
    e("incident_attempts_per_call", "Attempts per call during the incident", "count", L, &[Calls], true,
        "Attempts reaching the server during the incident per call started during it: the load multiplier of retries (3 × 3 tiers: 9)."),
    e("time_to_answer", "Time to the final answer", "s", L, &[Calls], false,
        "Mean time from a call's start to its success or final failure, over the calls that ended."),
    e("bad_request_retries", "Retries of bad requests", "count", L, &[Calls], false,
        "Attempts after the first of calls the server rejects as bad requests (permanent_fraction), per logical call: load that could never succeed."),
    e("goodput", "Goodput", "calls/s", H, &[Calls], false,
        "Calls that succeeded per second, from the first call to the horizon."),
    e("goodput_end", "Goodput at the end", "calls/s", H, &[Calls], false,
        "Calls that succeeded per second over the last tenth of the horizon."),
    e("offered_load", "Offered load", "ratio", N, &[Calls], false,
        "Attempts that reached the server (first tries and retries) over what its workers can serve, from the first call to the horizon: a ratio, not a share, so above 1 when more arrived than they could serve."),
    e("offered_load_end", "Offered load at the end", "ratio", L, &[Calls], false,
        "Attempts over the workers' capacity in the last tenth of the horizon, a ratio: above 1 the server is still overloaded."),
    e("wasted_work", "Wasted work", "fraction", L, &[Calls], true,
        "Share of the workers' busy time spent on attempts whose client had stopped waiting (timed out or dropped)."),
    e("recovered", "Recovered", "fraction", H, &[Calls], true,
        "Share of replications whose goodput came back (90 % of the pre-incident success ratio, 5-bin windows) after the incident and stayed."),
    e("time_to_recover", "Time to recover", "s", L, &[Calls], true,
        "From the end of the incident to the recovery, over the replications that recovered."),
    e("alert_delay", "Retry-share alert delay", "s", L, &[Calls], true,
        "From the incident's start to the end of the first bin whose retries reached the alert's share of attempts."),
    // ---- jobs: a queue with asynchronous retry ------------------------------------------
    e("jobs", "Jobs", "count", N, &[Jobs], false,
        "Jobs the producer created by the horizon."),
    e("delivered", "Delivered", "fraction", H, &[Jobs], true,
        "Share of jobs a provider accepted by the horizon."),
    e("dead_lettered", "Dead-lettered", "fraction", L, &[Jobs], true,
        "Share of jobs the retry policy gave up on, moved to the dead-letter queue."),
    e("in_flight", "In flight at the horizon", "fraction", N, &[Jobs], false,
        "Share of jobs neither delivered nor dead-lettered: waiting, scheduled for a retry, or in a worker."),
    e("dead_lettered_good", "Good jobs dead-lettered", "fraction", L, &[Jobs], true,
        "Share of jobs dead-lettered that were not poison: the ones a better retry policy would have delivered."),
    e("dead_lettered_attempts", "Dead-lettered: attempts exhausted", "fraction", L, &[Jobs], false,
        "Share of jobs dead-lettered after their last allowed run."),
    e("dead_lettered_deadline", "Dead-lettered: deadline", "fraction", L, &[Jobs], false,
        "Share of jobs dead-lettered because the policy's deadline (the job's age) ran out."),
    e("dead_lettered_permanent", "Dead-lettered: failure not retried", "fraction", L, &[Jobs], false,
        "Share of jobs dead-lettered at once because the policy does not retry the failure."),
    e("dead_lettered_quota", "Dead-lettered: retry quota empty", "fraction", L, &[Jobs], false,
        "Share of jobs dead-lettered because the queue's retry quota could not pay."),
    e("dead_lettered_throttled", "Dead-lettered: retries throttled", "fraction", L, &[Jobs], false,
        "Share of jobs dead-lettered because retry throttling forbade a retry."),
    e("dead_lettered_budget", "Dead-lettered: retry budget empty", "fraction", L, &[Jobs], false,
        "Share of jobs dead-lettered because the retry budget was used up."),
    e("dead_lettered_request_limit", "Dead-lettered: per-job retry limit", "fraction", L, &[Jobs], false,
        "Share of jobs dead-lettered after using their share of the retry budget."),
    e("delivered_by_provider{k}", "Delivered by provider {k}", "fraction", N, &[Jobs], true,
        "Share of the delivered jobs that the k-th provider in failover order delivered."),
    e("completion_time", "Completion time", "s", L, &[Jobs], true,
        "Mean time from a job's creation to its delivery, over delivered jobs."),
    e("completion_time_p99", "Completion time, 99th percentile", "s", L, &[Jobs], true,
        "The 99th percentile of creation-to-delivery time, over delivered jobs."),
    e("completion_time_incident", "Completion time during the incident", "s", L, &[Jobs], false,
        "Mean completion time of the jobs created while the first provider was in a down window."),
    e("completion_time_normal", "Completion time outside the incident", "s", L, &[Jobs], false,
        "Mean completion time of the jobs created while the first provider was not in a down window."),
    e("added_latency", "Latency added by the incident", "s", L, &[Jobs], true,
        "Completion time during the first provider's down windows minus outside them."),
    e("runs_per_job", "Runs per job", "count", L, &[Jobs], false,
        "Times a worker ran a job (first run and retries), per job created."),
    e("provider_calls_per_job", "Provider calls per job", "count", L, &[Jobs], false,
        "Calls to any provider per job created: failover and retries multiply them."),
    e("worker_utilization", "Worker utilization", "fraction", N, &[Jobs], true,
        "Busy worker-time over workers × horizon."),
    e("queue_depth_max", "Largest queue depth", "count", L, &[Jobs], false,
        "The most jobs waiting or scheduled for a retry at once (not counting those in a worker)."),
];

/// What it means that a metric has no value in any replication, where that is an answer
/// rather than a gap: "did not recover within the horizon".
pub fn absent_means(id: &str) -> Option<&'static str> {
    match id {
        "time_to_recover" => Some("did not recover within the horizon in any replication"),
        "alert_delay" => Some("the alert never fired"),
        "time_to_abort" => Some("no connection gave up"),
        "added_latency" | "completion_time_incident" => Some("no job was delivered during the incident"),
        // A quantile needs that share of the channels back: p99 is missing when more than
        // 1 % never reconnected (`quantile_of` in the gRPC world).
        "reconnect_p50" | "reconnect_p99" | "reconnect_all" => {
            Some("too few channels reconnected before the horizon for this share (or none did)")
        }
        "reconnect_after_up_p50" | "reconnect_after_up_p99" | "reconnect_after_up_all" => {
            Some("too few channels reconnected after the server came back, before the horizon (or none did)")
        }
        "time_to_success" | "time_to_success_p99" | "time_to_success_max" => {
            Some("no call succeeded before the horizon")
        }
        "time_to_giveup" => Some("no call gave up"),
        // Bursts are measured over the bins with the server up at both ends.
        "peak_attempt_rate" | "peak_to_mean" | "cv" => Some("the server was up for no whole bin before the horizon"),
        _ if id.starts_with("spread_attempt") => Some("too few channels made this attempt before the horizon"),
        _ if id.starts_with("convergence_time_change") => {
            Some("the estimate did not converge after the change before the horizon")
        }
        _ if id.starts_with("recovery_lag_blackout") => {
            Some("no connection recovered from the blackout before the horizon")
        }
        _ => None,
    }
}

/// Why `id` has no value: [`absent_means`] where the catalogue knows, else the plain fact.
pub fn no_value(id: &str) -> &'static str {
    absent_means(id).unwrap_or("no replication had a value for it before the horizon")
}

/// The entry of `id`: among the entries of `models` first, then any.
pub fn find(id: &str, models: &[ModelId]) -> Option<&'static Entry> {
    let mut any = CATALOGUE.iter().filter(|e| e.matches(id).is_some());
    let first = any.clone().next();
    any.find(|e| e.models.iter().any(|m| models.contains(m))).or(first)
}

/// The human title of `id` (`Recovery lag after blackout 1`), or the id itself when
/// the catalogue does not know it.
pub fn title(id: &str, models: &[ModelId]) -> String {
    CATALOGUE
        .iter()
        .filter_map(|e| Some((e, e.matches(id)?)))
        .find(|(e, _)| e.models.iter().any(|m| models.contains(m)))
        .or_else(|| CATALOGUE.iter().find_map(|e| Some((e, e.matches(id)?))))
        .map(|(e, k)| e.title.replace("{k}", k))
        .unwrap_or_else(|| id.to_string())
}

/// Which way `id` is better, `None` when neither (or unknown).
pub fn better(id: &str, models: &[ModelId]) -> Option<Better> {
    find(id, models).and_then(|e| e.better)
}

/// `Peak attempt rate (`peak_attempt_rate`, attempts/s), lower is better`: a metric as
/// a heading names it, in Markdown.
pub fn heading(id: &str, unit: &str, models: &[ModelId]) -> String {
    let unit = if unit.is_empty() { String::new() } else { format!(", {unit}") };
    let better = match better(id, models) {
        Some(Lower) => ", lower is better",
        Some(Higher) => ", higher is better",
        None => "",
    };
    let title = title(id, models);
    if title == id { format!("`{id}`{unit}{better}") } else { format!("{title} (`{id}`{unit}){better}") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::retry::GiveUpReason;
    use crate::model::retry::outcome::Outcome;

    #[test]
    fn numbered_families_match_only_their_prefix_and_a_number() {
        assert_eq!(title("recovery_lag_blackout2", &[ModelId::Tcp]), "Recovery lag after blackout 2");
        assert_eq!(title("spread_attempt12", &[]), "Spread of attempt 12");
        assert!(find("recovery_lag_blackout", &[]).is_none());
        assert!(find("recovery_lag_blackoutx", &[]).is_none());
        assert_eq!(title("no_such_metric", &[]), "no_such_metric");
    }

    #[test]
    fn a_shared_id_takes_the_meaning_of_the_runs_model() {
        assert_eq!(title("timeouts", &[ModelId::Tcp]), "Retransmission timeouts");
        assert_eq!(title("timeouts", &[ModelId::Grpc]), "Connect timeouts");
        assert_eq!(title("calls", &[ModelId::Occ]), "Calls to the store");
        assert_eq!(title("calls", &[ModelId::Calls]), "Calls");
        assert!(find("calls", &[ModelId::Occ]).is_some_and(|e| e.is_headline_for(&[ModelId::Occ])));
        assert!(find("calls", &[ModelId::Calls]).is_some_and(|e| !e.is_headline_for(&[ModelId::Calls])));
        // The calls model's count of calls is its workload, not a cost.
        assert_eq!(better("calls", &[ModelId::Occ]), Some(Better::Lower));
        assert_eq!(better("calls", &[ModelId::Calls]), None);
    }

    #[test]
    fn no_id_is_listed_twice_for_a_model_and_every_entry_is_complete() {
        for (i, a) in CATALOGUE.iter().enumerate() {
            for b in &CATALOGUE[i + 1..] {
                if a.id == b.id {
                    assert!(!a.models.iter().any(|m| b.models.contains(m)), "{} twice", a.id);
                }
            }
            assert!(!a.title.is_empty() && !a.doc.is_empty() && !a.models.is_empty(), "{}", a.id);
            assert!(a.headline.iter().all(|m| a.models.contains(m)), "{}", a.id);
            assert!(!a.internal || a.headline.is_empty(), "{} is internal and a headline", a.id);
        }
    }

    #[test]
    fn every_model_has_headline_metrics() {
        for m in ModelId::ALL {
            assert!(CATALOGUE.iter().any(|e| e.is_headline_for(&[m])), "{}", m.name());
        }
    }

    #[test]
    fn headings_name_title_id_unit_and_direction() {
        assert_eq!(
            heading("peak_attempt_rate", "attempts/s", &[ModelId::Grpc]),
            "Peak attempt rate (`peak_attempt_rate`, attempts/s), lower is better"
        );
        assert_eq!(heading("rtt_samples", "count", &[ModelId::Tcp]), "RTT samples (`rtt_samples`, count)");
        assert_eq!(heading("mystery", "", &[]), "`mystery`");
    }

    /// Every id the shipped scenarios wrote (the committed `results/*/summary.csv`) has
    /// an entry of its model, with the unit the run wrote.
    #[test]
    fn every_metric_in_the_shipped_results_has_an_entry_of_its_model() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../results");
        let mut checked = 0;
        for dir in std::fs::read_dir(&root).expect("results/ is committed").map(|d| d.unwrap().path()) {
            let Ok(manifest) = std::fs::read_to_string(dir.join("manifest.json")) else { continue };
            let manifest: serde_json::Value = serde_json::from_str(&manifest).unwrap();
            let model = manifest["variants"][0]["parameters"]["model"].as_str().and_then(ModelId::from_name);
            let model = model.unwrap_or_else(|| panic!("{}: no known model", dir.display()));
            let mut csv = csv::Reader::from_path(dir.join("summary.csv")).unwrap();
            let h = csv.headers().unwrap().clone();
            let col = |n: &str| h.iter().position(|c| c == n).unwrap();
            let (metric, unit) = (col("metric"), col("unit"));
            for row in csv.records() {
                let row = row.unwrap();
                let e = find(&row[metric], &[model]);
                let e = e.unwrap_or_else(|| panic!("{}: `{}` is not in the catalogue", dir.display(), &row[metric]));
                assert!(
                    e.models.contains(&model),
                    "{}: `{}` has no {} entry",
                    dir.display(),
                    &row[metric],
                    model.name()
                );
                assert_eq!(e.unit, &row[unit], "{}: unit of `{}`", dir.display(), &row[metric]);
                checked += 1;
            }
        }
        assert!(checked > 100, "only {checked} rows checked");
    }

    #[test]
    fn absent_values_are_explained_only_for_metrics_the_catalogue_has() {
        for id in ["time_to_recover", "alert_delay", "time_to_abort", "added_latency", "completion_time_incident"] {
            assert!(absent_means(id).is_some(), "{id}");
            assert!(CATALOGUE.iter().any(|e| e.id == id), "{id} is not in the catalogue");
        }
        assert_eq!(absent_means("success_rate"), None);
        for id in [
            "reconnect_p50",
            "reconnect_after_up_all",
            "time_to_success_p99",
            "spread_attempt3",
            "recovery_lag_blackout1",
        ] {
            assert!(absent_means(id).is_some(), "{id}");
            assert!(find(id, &[]).is_some(), "{id} is not in the catalogue");
        }
    }

    /// The ids the models can write but no shipped scenario does: the literal ids in
    /// the models' summary writers, the numbered families and every give-up reason.
    #[test]
    fn every_id_the_summary_writers_name_has_an_entry_of_its_model() {
        let sources = [
            (ModelId::Tcp, include_str!("../worlds/tcp/mod.rs")),
            (ModelId::Grpc, include_str!("../worlds/grpc/mod.rs")),
            (ModelId::Calls, include_str!("../worlds/calls/mod.rs")),
            (ModelId::Calls, include_str!("../worlds/calls/monitor.rs")),
            (ModelId::Occ, include_str!("../worlds/occ/mod.rs")),
            (ModelId::Jobs, include_str!("../worlds/jobs/mod.rs")),
        ];
        for (model, src) in sources {
            let mut ids = Vec::new();
            for call in ["MetricValue::new(", "MetricValue::maybe("] {
                for part in src.split(call).skip(1) {
                    let part = part.trim_start().trim_start_matches("&format!(");
                    let Some(rest) = part.strip_prefix('"') else { continue };
                    let id = &rest[..rest.find('"').unwrap()];
                    ids.push(id.replace("{}", "1").replace("{name}", "1"));
                }
            }
            assert!(ids.len() >= 4, "{}: found only {ids:?}", model.name());
            for id in ids {
                if id.starts_with("gave_up_") {
                    continue; // the give-up reasons, below
                }
                let e = find(&id, &[model]).unwrap_or_else(|| panic!("`{id}` is not in the catalogue"));
                assert!(e.models.contains(&model), "`{id}` has no {} entry", model.name());
            }
        }
        let o = Outcome::Refused;
        for r in [
            GiveUpReason::AttemptsExhausted { attempts: 1 },
            GiveUpReason::Deadline,
            GiveUpReason::Permanent(o),
            GiveUpReason::NotIdempotent(o),
            GiveUpReason::QuotaEmpty,
            GiveUpReason::Throttled,
            GiveUpReason::BudgetEmpty,
            GiveUpReason::RequestLimit { retries: 1 },
        ] {
            let id = format!("gave_up_{}", r.slug().replace('-', "_"));
            assert!(find(&id, &[ModelId::Calls]).is_some_and(|e| e.models == [ModelId::Calls]), "`{id}`");
            let id = format!("dead_lettered_{}", r.slug().replace('-', "_"));
            if !matches!(r, GiveUpReason::NotIdempotent(_)) {
                assert!(find(&id, &[ModelId::Jobs]).is_some_and(|e| e.models == [ModelId::Jobs]), "`{id}`");
            }
        }
    }
}
