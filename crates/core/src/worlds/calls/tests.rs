//! The calls world end to end, on cases small enough to check by hand.
use super::*;
use crate::scenario::{ModelSpec, load_str};

/// Runs replication 0 of a `[calls]` scenario whose `[calls]` and other tables are
/// `body`, and returns its metrics by name.
fn metrics(body: &str) -> Vec<(String, Option<f64>)> {
    let r = run_for("1h", body);
    r.metrics.into_iter().map(|m| (m.name, m.value)).collect()
}

/// Replication 0 of a `[calls]` scenario of `horizon` whose tables are `body`.
fn run_for(horizon: &str, body: &str) -> ReplicationResult {
    let text = format!("name = \"t\"\ndescription = \"t\"\nhorizon = \"{horizon}\"\n{body}");
    let scenario = load_str("t.toml", &text).unwrap_or_else(|e| panic!("{e}"));
    let ModelSpec::Calls(spec) = &scenario.variants[0].cells[0].spec else { panic!("not a calls scenario") };
    let job = super::Job {
        seeds: crate::engine::rng::Seeds::new(1),
        replication: 0,
        horizon: scenario.horizon,
        budget: crate::engine::budget::Budget::replication(scenario.max_events),
    };
    run_replication(spec, job).unwrap()
}

fn value(r: &ReplicationResult, name: &str) -> Option<f64> {
    r.metrics.iter().find(|m| m.name == name).unwrap_or_else(|| panic!("no {name}")).value
}

fn column<'a>(r: &'a ReplicationResult, name: &str) -> &'a [f64] {
    r.series.as_ref().and_then(|s| s.column(name)).unwrap_or_else(|| panic!("no column {name}"))
}

fn get(m: &[(String, Option<f64>)], name: &str) -> f64 {
    m.iter().find(|(n, _)| n == name).unwrap_or_else(|| panic!("no {name} in {m:?}")).1.unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn three_app_attempts_around_three_library_attempts_make_nine_server_calls() {
    let m = metrics(
        "[calls]\nclients = 10\ntiers = [3]\noutage = \"1h\"\n\
         [calls.policy]\npreset = \"seed-loop\"\nmax_attempts = 3\n",
    );
    assert_eq!(get(&m, "gave_up_attempts"), 1.0);
    assert_eq!(get(&m, "attempts_per_call"), 3.0);
    assert_eq!(get(&m, "library_calls_per_call"), 3.0);
    assert_eq!(get(&m, "server_calls_per_call"), 9.0);
    assert!(close(get(&m, "retry_share"), 8.0 / 9.0));
    // Two nested loops multiply again: 2 × 3 × 3.
    let m = metrics(
        "[calls]\nclients = 1\ntiers = [2, 3]\noutage = \"1h\"\n\
         [calls.policy]\npreset = \"seed-loop\"\nmax_attempts = 3\n",
    );
    assert_eq!(get(&m, "server_calls_per_call"), 18.0);
}

#[test]
fn a_silent_server_makes_every_attempt_last_the_timeout() {
    // 2 attempts of 5 s each with a fixed 1 s sleep between them.
    let m = metrics(
        "[calls]\nclients = 3\ntimeout = \"5s\"\noutage = \"1h\"\n[server]\ndown_behavior = \"blackhole\"\n\
         [calls.policy]\nmax_attempts = 2\njitter = \"none\"\n",
    );
    assert!(close(get(&m, "time_to_giveup"), 11.0));
    assert!(close(get(&m, "total_sleep"), 1.0));
}

#[test]
fn a_cut_deadline_ends_the_attempt_in_flight() {
    // gRPC's deadline spans the attempts: a 60 s timeout is cut at the 2 s deadline.
    let m = metrics(
        "[calls]\nclients = 3\noutage = \"1h\"\n[server]\ndown_behavior = \"blackhole\"\n\
         [calls.policy]\npreset = \"grpc-retry\"\ndeadline = \"2s\"\n",
    );
    assert_eq!(get(&m, "gave_up_deadline"), 1.0);
    assert!(close(get(&m, "time_to_giveup"), 2.0));
    assert_eq!(get(&m, "server_calls_per_call"), 1.0);
}

#[test]
fn the_server_comes_back_and_the_next_attempt_succeeds() {
    // Fixed 1 s sleeps, 100 ms attempts, refused at once: attempts at 0, 1, 2, 3 s;
    // the outage ends at 2.5 s, so the fourth succeeds at 3.1 s.
    let m = metrics(
        "[calls]\nclients = 2\nattempt_time = \"100ms\"\nfail_time = \"0s\"\noutage = \"2.5s\"\n\
         [calls.policy]\njitter = \"none\"\nmultiplier = 1.0\n",
    );
    assert_eq!(get(&m, "success_rate"), 1.0);
    assert!(close(get(&m, "time_to_success"), 3.1));
    assert_eq!(get(&m, "server_calls_per_call"), 4.0);
}

#[test]
fn retrying_work_the_server_already_did_duplicates_it_in_every_tier() {
    // The server takes 2 s, the client waits 1 s: every attempt times out with the
    // work done. gcs-cpp retries non-idempotent calls: 3 attempts make 2
    // duplicates; an app loop of 2 around it adds its own retry: 5.
    let body = |tiers: &str| {
        format!(
            "[calls]\nclients = 4\ntimeout = \"1s\"\nidempotency = \"never\"\n{tiers}\n\
             [server]\nhandshake_time = \"2s\"\n\
             [calls.policy]\npreset = \"gcs-cpp\"\nmax_attempts = 3\ndeadline = \"none\"\n"
        )
    };
    let m = metrics(&body(""));
    assert_eq!(get(&m, "duplicates"), 2.0);
    assert_eq!(get(&m, "success_rate"), 0.0);
    let m = metrics(&body("tiers = [2]"));
    assert_eq!(get(&m, "duplicates"), 5.0);
    // A strict policy refuses to retry such calls at all.
    let m = metrics(&body("").replace("deadline = \"none\"", "deadline = \"none\"\nretry_non_idempotent = false"));
    assert_eq!(get(&m, "gave_up_not_idempotent"), 1.0);
    assert_eq!(get(&m, "duplicates"), 0.0);
}

#[test]
fn one_clients_aws_quota_is_shared_by_its_calls_until_it_runs_dry() {
    // 100 calls, a second apart, against a permanent outage; each retry costs 14 of
    // 500: 17 calls make both their retries (34), the 18th one (the 35th, leaving
    // 10), and from then on no retry is paid for.
    let m = metrics(
        "[calls]\nclients = 1\ninterval = \"1s\"\ncalls_per_client = 100\noutage = \"1h\"\n\
         [calls.policy]\npreset = \"aws-standard\"\n",
    );
    assert_eq!(get(&m, "calls"), 100.0);
    assert!(close(get(&m, "gave_up_attempts"), 0.17));
    assert!(close(get(&m, "gave_up_quota"), 0.83));
    assert!(close(get(&m, "server_calls_per_call"), (17.0 * 3.0 + 2.0 + 82.0) / 100.0));
}

#[test]
fn calls_still_running_at_the_horizon_are_unfinished_not_failed() {
    let m = metrics("[calls]\nclients = 5\noutage = \"2h\"\n[calls.policy]\npreset = \"gcloud\"\ncap = \"1h\"\n");
    assert_eq!(get(&m, "unfinished"), 1.0);
    assert_eq!(get(&m, "gave_up_attempts"), 0.0);
}

#[test]
fn one_worker_serves_in_arrival_order_so_latency_grows_with_the_queue() {
    // M/D/1 by hand: three calls at 0 on one worker of 100 ms each answer at 0.1, 0.2 and
    // 0.3 s; the third found one request waiting ahead of it (and one in service).
    let r = run_for(
        "10s",
        "[calls]\nclients = 3\n[server]\nconcurrency = 1\nservice_time = \"100ms\"\nservice = \"fixed\"\n",
    );
    assert!(close(value(&r, "time_to_success").unwrap(), 0.2));
    assert!(close(value(&r, "time_to_success_max").unwrap(), 0.3));
    assert_eq!(column(&r, "queue_max")[0], 1.0);
    assert!(close(column(&r, "busy_s")[0], 0.3));
    // 1 worker at 100 ms serves 10 a second.
    assert_eq!(column(&r, "capacity")[0], 10.0);
}

#[test]
fn an_attempt_that_times_out_keeps_its_worker_busy_and_all_that_work_is_wasted() {
    // Two calls, one attempt each, 1 s of work, a 500 ms timeout: the server works 2 s
    // (the second waits for the first) and nobody reads either reply.
    let r = run_for(
        "10s",
        "[calls]\nclients = 2\ntimeout = \"500ms\"\n[calls.policy]\nmax_attempts = 1\n\
         [server]\nconcurrency = 1\nservice_time = \"1s\"\nservice = \"fixed\"\n",
    );
    assert_eq!(value(&r, "success_rate"), Some(0.0));
    assert_eq!(value(&r, "wasted_work"), Some(1.0));
    let busy: f64 = column(&r, "busy_s").iter().sum();
    assert!(close(busy, 2.0));
    assert_eq!(column(&r, "timed_out")[0], 2.0);
}

#[test]
fn a_full_queue_and_a_brownout_refuse_at_once_without_a_worker() {
    // One worker, no room to wait: of two calls at 0 one is served, one refused (503 at
    // fail_time, no retry).
    let full = run_for(
        "10s",
        "[calls]\nclients = 2\nfail_with = 503\nfail_time = \"5ms\"\n[calls.policy]\nmax_attempts = 1\n\
         [server]\nconcurrency = 1\nservice_time = \"1s\"\nservice = \"fixed\"\nqueue = 0\n",
    );
    assert_eq!(value(&full, "success_rate"), Some(0.5));
    assert_eq!(column(&full, "rejected")[0], 1.0);
    // A brownout failing everything from 0 to 1 s: the call at 0 fails in 5 ms, its retry
    // after the fixed 1 s sleep is served.
    let brown = run_for(
        "10s",
        "[calls]\nclients = 1\nfail_with = 503\nfail_time = \"5ms\"\n\
         [calls.policy]\njitter = \"none\"\nmultiplier = 1.0\n\
         [server]\nconcurrency = 1\nservice_time = \"100ms\"\nservice = \"fixed\"\n\
         [[server.brownout]]\nat = \"0s\"\nduration = \"1s\"\n",
    );
    assert!(close(value(&brown, "time_to_success").unwrap(), 1.105));
    assert!(close(column(&brown, "busy_s").iter().sum::<f64>(), 0.1));
}

#[test]
fn bad_requests_fail_with_their_status_and_a_retry_everything_policy_repeats_them() {
    // Every call is a bad request (400). Retrying any exception with 3 attempts makes two
    // hopeless retries per call; retrying only transient errors answers at once.
    let body = |retry_on: &str| {
        format!(
            "[calls]\nclients = 4\nfail_time = \"10ms\"\npermanent_fraction = 1.0\n\
             [calls.policy]\njitter = \"none\"\nmax_attempts = 3\nretry_on = {retry_on}\n"
        )
    };
    let all = metrics(&body("[\"any\"]"));
    assert_eq!(get(&all, "bad_request_retries"), 2.0);
    assert_eq!(get(&all, "gave_up_attempts"), 1.0);
    // 10 ms + 1 s + 10 ms + 2 s + 10 ms.
    assert!(close(get(&all, "time_to_answer"), 3.03));
    let transient = metrics(&body("[\"5xx\", \"timeout\"]"));
    assert_eq!(get(&transient, "bad_request_retries"), 0.0);
    assert_eq!(get(&transient, "gave_up_permanent"), 1.0);
    assert!(close(get(&transient, "time_to_answer"), 0.01));
}

#[test]
fn poisson_pacing_makes_calls_at_the_mean_interval() {
    // 1,000 s at a mean of 1 s: 1,000 calls ± 4 standard deviations (√1000 ≈ 32).
    let r = run_for("1000s", "[calls]\nclients = 1\ninterval = \"1s\"\npacing = \"poisson\"\n");
    let calls = value(&r, "calls").unwrap();
    assert!((870.0..=1130.0).contains(&calls), "{calls}");
    assert_ne!(calls, 1000.0, "gaps are drawn, not fixed");
}

#[test]
fn closed_pacing_starts_the_next_call_an_interval_after_the_last_ended() {
    // 5 s calls, 10 s apart after each end: starts at 0, 15 and 30 s before 32 s; open
    // pacing starts them at 0, 10, 20 and 30 s.
    let body = |pacing: &str| {
        format!(
            "[calls]\nclients = 1\ninterval = \"10s\"\npacing = \"{pacing}\"\nphase = \"together\"\n\
             attempt_time = \"5s\"\n"
        )
    };
    assert_eq!(value(&run_for("32s", &body("closed")), "calls"), Some(3.0));
    assert_eq!(value(&run_for("32s", &body("open")), "calls"), Some(4.0));
}

#[test]
fn a_kept_backoff_never_reset_makes_the_next_short_failure_wait_the_old_backoff() {
    // Sleeps 1, 2, 4 s (no jitter): the first call fails at 0, 1 and 3 s and succeeds at
    // 7 s, leaving k = 3. The second starts at 17 s into a half-second outage: after a
    // reset it sleeps 1 s (answer after 1 s); never reset, it sleeps 8 s.
    let body = |reset: bool| {
        format!(
            "[calls]\nclients = 1\ninterval = \"10s\"\npacing = \"closed\"\nkeep_backoff = true\n\
             calls_per_client = 2\nphase = \"together\"\n\
             [calls.policy]\njitter = \"none\"\nmax_attempts = \"none\"\nreset_after_success = {reset}\n\
             [server]\n[[server.outage]]\nat = \"0s\"\nduration = \"6.5s\"\n\
             [[server.outage]]\nat = \"17s\"\nduration = \"500ms\"\n"
        )
    };
    let reset = metrics(&body(true));
    assert!(close(get(&reset, "time_to_success"), (7.0 + 1.0) / 2.0));
    let kept = metrics(&body(false));
    assert!(close(get(&kept, "time_to_success"), (7.0 + 8.0) / 2.0));
}

#[test]
fn without_a_budget_a_short_slowdown_becomes_a_lasting_storm_and_a_budget_ends_it() {
    // 200 calls/s against 5 workers of 20 ms (250/s), 1 s timeout, 3 attempts; the workers
    // slow fivefold from 20 s to 30 s. Without a budget the queue stays longer than the
    // timeout to the horizon; gRPC throttling stops the retries and goodput returns.
    let body = |budget: &str| {
        format!(
            "[calls]\nclients = 20\ninterval = \"100ms\"\npacing = \"poisson\"\ntimeout = \"1s\"\n\
             fail_with = 503\nfail_time = \"5ms\"\n\
             [calls.policy]\npreset = \"aws-standard\"\nbudget = \"{budget}\"\n\
             [server]\nconcurrency = 5\nservice_time = \"20ms\"\nqueue = 400\n\
             [[server.brownout]]\nat = \"20s\"\nduration = \"10s\"\nfail_fraction = 0\nslowdown = 5\n"
        )
    };
    let storm = run_for("90s", &body("none"));
    assert_eq!(value(&storm, "recovered"), Some(0.0));
    assert!(value(&storm, "goodput_end").unwrap() < 20.0);
    assert!(value(&storm, "offered_load_end").unwrap() > 1.5);
    let budget = run_for("90s", &body("grpc-throttle"));
    assert_eq!(value(&budget, "recovered"), Some(1.0));
    assert!(value(&budget, "time_to_recover").unwrap() < 20.0);
    assert!(value(&budget, "goodput_end").unwrap() > 180.0);
}

#[test]
fn a_slowdown_slows_the_work_done_in_the_window_not_the_requests_that_arrived_in_it() {
    // One worker, 100 ms of work per request, three requests at 0 and a brownout from 0
    // to 1 s slowing the worker a hundredfold. The first request's work is consumed at
    // 1/100 speed inside the window (1 s does 10 ms of it) and at full speed after:
    // done at 1.09 s; the next two at 1.19 and 1.29 s. Were the slowdown stamped on the
    // requests that arrived in the window, each would take 10 s: done at 10, 20 and 30 s.
    let r = run_for(
        "60s",
        "[calls]\nclients = 3\ntimeout = \"60s\"\n[calls.policy]\nmax_attempts = 1\n\
         [server]\nconcurrency = 1\nservice_time = \"100ms\"\nservice = \"fixed\"\n\
         [[server.brownout]]\nat = \"0s\"\nduration = \"1s\"\nfail_fraction = 0\nslowdown = 100\n",
    );
    assert_eq!(value(&r, "success_rate"), Some(1.0));
    assert!(close(value(&r, "time_to_success_max").unwrap(), 1.29));
    assert!(close(value(&r, "time_to_success").unwrap(), (1.09 + 1.19 + 1.29) / 3.0));
    // The worker was busy from 0 to 1.29 s.
    let busy = column(&r, "busy_s");
    assert!(close(busy[0], 1.0) && close(busy[1], 0.29), "{:?}", &busy[..3]);
}

#[test]
fn no_bin_holds_more_busy_time_than_the_workers_can_give_the_last_bin_included() {
    // A storm that keeps 5 workers busy to the horizon, with work queued past it: every
    // bin holds at most workers × the part of its width before the horizon. A horizon
    // on a bin edge leaves the last bin (which holds only the horizon's instant) empty.
    let body = "[calls]\nclients = 20\ninterval = \"100ms\"\npacing = \"poisson\"\ntimeout = \"1s\"\n\
                fail_with = 503\nfail_time = \"5ms\"\n\
                [calls.policy]\npreset = \"aws-standard\"\nbudget = \"none\"\n\
                [server]\nconcurrency = 5\nservice_time = \"20ms\"\nqueue = 400\n\
                [[server.brownout]]\nat = \"20s\"\nduration = \"10s\"\nfail_fraction = 0\nslowdown = 5\n";
    for (horizon, h) in [("60s", 60.0), ("60.5s", 60.5)] {
        let r = run_for(horizon, body);
        let busy = column(&r, "busy_s");
        for (i, &b) in busy.iter().enumerate() {
            let width = (h - i as f64).clamp(0.0, 1.0);
            assert!(b <= 5.0 * width + 1e-9, "horizon {horizon}: bin {i} holds {b} s of 5 × {width} s");
        }
        // Saturated to the end: the bins before the horizon are full.
        assert!(close(busy[58], 5.0), "{horizon}: {}", busy[58]);
        assert!(close(*busy.last().unwrap(), 5.0 * (h - 60.0)), "{horizon}: {:?}", busy.last());
    }
}

/// The calls started in `[0, until)` of a 1 ms series.
fn calls_before(r: &ReplicationResult, until_ms: usize) -> f64 {
    column(r, "calls")[..until_ms].iter().sum()
}

#[test]
fn clients_start_in_steady_state_unless_told_to_start_together() {
    // 200 clients, one call a second each: in steady state the fleet makes 200 calls in
    // any second (a Poisson process of rate 200 for Poisson pacing), the first included.
    let body = |pacing: &str, phase: &str| {
        format!(
            "[calls]\nclients = 200\ninterval = \"1s\"\npacing = \"{pacing}\"\n{phase}\
             [calls.monitor]\nbin = \"1ms\"\n"
        )
    };
    // Open pacing in steady state: each client calls once in every interval, so exactly
    // once in the first second, and the first millisecond holds about 0.2 of them.
    let open = run_for("3s", &body("open", ""));
    assert_eq!(calls_before(&open, 1000), 200.0);
    assert_eq!(calls_before(&open, 2000) - calls_before(&open, 1000), 200.0);
    assert!(calls_before(&open, 1) <= 3.0, "{}", calls_before(&open, 1));
    // Poisson in steady state: the first second's count is Poisson(200), sd √200 ≈ 14;
    // 4 sd either side.
    let poisson = run_for("3s", &body("poisson", ""));
    let first = calls_before(&poisson, 1000);
    assert!((143.0..=257.0).contains(&first), "{first}");
    assert!(calls_before(&poisson, 1) <= 3.0, "{}", calls_before(&poisson, 1));
    // Together: every client's first call at 0 (a gap under 1 ms may add one), and the
    // Poisson clients' next calls on top in the first second (about 200 more).
    let together = run_for("3s", &body("poisson", "phase = \"together\"\n"));
    assert!((200.0..=203.0).contains(&column(&together, "calls")[0]));
    assert!(calls_before(&together, 1000) > 300.0, "{}", calls_before(&together, 1000));
    let open_together = run_for("3s", &body("open", "phase = \"together\"\n"));
    assert_eq!(column(&open_together, "calls")[0], 200.0);
}
