use super::world::*;
use super::*;
use crate::engine::rng::Seeds;
use crate::scenario::{ModelSpec, load_str};

struct Ran {
    metrics: Vec<(String, Option<f64>)>,
    log: Vec<RunRecord>,
    result: ReplicationResult,
}

impl Ran {
    fn get(&self, name: &str) -> f64 {
        let m = self.metrics.iter().find(|(n, _)| n == name);
        m.unwrap_or_else(|| panic!("no {name} in {:?}", self.metrics)).1.unwrap()
    }

    fn starts(&self, job: u64) -> Vec<f64> {
        self.log.iter().filter(|r| r.job == job).map(|r| r.start.as_secs_f64()).collect()
    }

    fn column(&self, name: &str) -> Vec<f64> {
        self.result.series.as_ref().unwrap().column(name).unwrap().to_vec()
    }
}

/// Replication 0 of a scenario whose `[jobs]` tables are `body`.
fn sim(horizon: &str, body: &str) -> Ran {
    let text = format!("name = \"t\"\ndescription = \"t\"\nhorizon = \"{horizon}\"\n[jobs]\n{body}");
    let scenario = load_str("t.toml", &text).unwrap_or_else(|e| panic!("{e}"));
    let ModelSpec::Jobs(spec) = &scenario.variants[0].cells[0].spec else { panic!("not a jobs scenario") };
    let job = Job {
        seeds: Seeds::new(1),
        replication: 0,
        horizon: scenario.horizon,
        budget: crate::engine::budget::Budget::replication(1_000_000),
    };
    let (result, log) = simulate(spec, job, true).unwrap();
    Ran { metrics: result.metrics.iter().map(|m| (m.name.clone(), m.value)).collect(), log, result }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

/// One job, one worker, a provider that refuses everything after 1 s.
const ONE_JOB_ALWAYS_DOWN: &str = "rate = 1\narrivals = \"uniform\"\ncount = 1\nworkers = 1\n\
    [[jobs.provider]]\nname = \"p\"\ncall_time = \"1s\"\n\
    [[jobs.provider.down]]\nat = \"0s\"\nduration = \"1h\"\n";

#[test]
fn a_job_reenqueued_n_times_runs_at_exactly_the_scheduled_times() {
    // Each run fails 1 s after it starts; the retry is due a fixed 5 s later.
    let fixed = "[jobs.retry]\nbase = \"5s\"\nmultiplier = 1.0\njitter = \"none\"\nmax_attempts = 4\n";
    let r = sim("5min", &format!("{ONE_JOB_ALWAYS_DOWN}{fixed}"));
    assert_eq!(r.starts(0), [0.0, 6.0, 12.0, 18.0]);
    assert_eq!((r.get("dead_lettered"), r.get("dead_lettered_attempts"), r.get("runs_per_job")), (1.0, 1.0, 4.0));
    // Doubling from 2 s: sleeps 2, 4, 8 after runs ending at 1, 4, 9.
    let doubling = "[jobs.retry]\nbase = \"2s\"\njitter = \"none\"\nmax_attempts = 4\n";
    assert_eq!(sim("5min", &format!("{ONE_JOB_ALWAYS_DOWN}{doubling}")).starts(0), [0.0, 3.0, 8.0, 17.0]);
}

#[test]
fn failover_delivers_by_the_second_provider_after_the_primarys_fail_time_or_timeout() {
    let body = |behavior: &str| {
        format!(
            "rate = 1\narrivals = \"uniform\"\ncount = 3\nworkers = 3\n\
             [[jobs.provider]]\nname = \"primary\"\ncall_time = \"100ms\"\nfail_time = \"50ms\"\ntimeout = \"10s\"\n\
             [[jobs.provider.down]]\nat = \"0s\"\nduration = \"1h\"\nbehavior = \"{behavior}\"\n\
             [[jobs.provider]]\nname = \"second\"\ncall_time = \"200ms\"\n\
             [[jobs.provider]]\nname = \"third\"\ncall_time = \"300ms\"\n"
        )
    };
    let refused = sim("1min", &body("refuse"));
    assert!(close(refused.get("completion_time"), 0.25));
    assert_eq!((refused.get("delivered_by_provider1"), refused.get("delivered_by_provider2")), (0.0, 1.0));
    assert_eq!((refused.get("provider_calls_per_job"), refused.get("runs_per_job")), (2.0, 1.0));
    assert!(refused.log.iter().all(|r| r.delivered_by == Some(1)));
    // A hanging primary costs the worker's whole timeout before the failover.
    let hung = sim("1min", &body("hang"));
    assert!(close(hung.get("completion_time"), 10.2));
    assert_eq!(hung.get("delivered_by_provider3"), 0.0);
}

#[test]
fn a_poison_job_is_dead_lettered_after_exactly_max_attempts_runs() {
    let r = sim(
        "10min",
        "rate = 1\narrivals = \"uniform\"\ncount = 5\nworkers = 2\npoison_fraction = 1\n\
         [jobs.retry]\nbase = \"1s\"\nmax_attempts = 3\n\
         [[jobs.provider]]\nname = \"a\"\ncall_time = \"100ms\"\nfail_time = \"10ms\"\n\
         [[jobs.provider]]\nname = \"b\"\ncall_time = \"100ms\"\n",
    );
    assert_eq!((r.get("dead_lettered"), r.get("dead_lettered_good")), (1.0, 0.0));
    assert_eq!((r.get("runs_per_job"), r.get("provider_calls_per_job")), (3.0, 6.0));
    for job in 0..5 {
        assert_eq!(r.starts(job).len(), 3, "job {job}");
    }
}

#[test]
fn with_one_worker_a_job_due_while_it_is_busy_waits_for_it() {
    // Job 1 is due 1 ms after job 0, whose run takes the worker for 1 s.
    let r = sim(
        "10s",
        "rate = 1000\narrivals = \"uniform\"\ncount = 2\nworkers = 1\nbin = \"1s\"\n\
         [[jobs.provider]]\nname = \"p\"\ncall_time = \"1s\"\n",
    );
    assert_eq!((r.starts(0), r.starts(1)), (vec![0.0], vec![1.0]));
    assert!(close(r.get("completion_time"), (1.0 + 1.999) / 2.0));
    assert!(close(r.get("worker_utilization"), 2.0 / 10.0));
    assert_eq!(r.get("queue_depth_max"), 1.0);
    // Job 1 waited through the first bin; the worker was busy in the first two.
    assert_eq!(r.column("queue_depth")[..3], [1.0, 0.0, 0.0]);
    assert_eq!(r.column("busy_s")[..3], [1.0, 1.0, 0.0]);
    assert_eq!(r.column("delivered")[..3], [0.0, 1.0, 1.0]);
}

#[test]
fn every_job_created_is_delivered_dead_lettered_or_in_flight_at_the_horizon() {
    // Poison jobs, a long outage and a horizon in the middle of retries: all three
    // outcomes occur. In flight is counted from the jobs held, not by subtraction.
    let r = sim(
        "20min",
        "rate = 5\nworkers = 3\npoison_fraction = \"10%\"\nbin = \"1min\"\n\
         [jobs.retry]\nbase = \"1s\"\nmax_attempts = 6\n\
         [[jobs.provider]]\nname = \"a\"\ncall_time = \"300ms\"\nfail_time = \"100ms\"\n\
         [[jobs.provider.down]]\nat = \"5min\"\nduration = \"20min\"\nfail_fraction = 0.7\nbehavior = \"hang\"\n\
         [[jobs.provider]]\nname = \"b\"\ncall_time = \"300ms\"\n\
         [[jobs.provider.down]]\nat = \"10min\"\nduration = \"20min\"\n",
    );
    let (delivered, dead, in_flight) = (r.get("delivered"), r.get("dead_lettered"), r.get("in_flight"));
    assert!(delivered > 0.0 && dead > 0.0 && in_flight > 0.0, "{delivered} {dead} {in_flight}");
    assert!(close(delivered + dead + in_flight, 1.0));
    // The series agrees with the totals.
    let jobs = r.get("jobs");
    let sum = |c: &str| r.column(c).iter().sum::<f64>();
    assert_eq!(sum("created"), jobs);
    assert!(close(sum("delivered"), delivered * jobs) && close(sum("dead_lettered"), dead * jobs));
    assert!(close(sum("busy_s"), r.get("worker_utilization") * 3.0 * 1200.0));
    let depth = r.column("queue_depth");
    assert!(depth.iter().all(|&d| d <= r.get("queue_depth_max")));
}

#[test]
fn jobs_created_in_the_primarys_down_window_pay_its_timeout_as_added_latency() {
    // Jobs at 0, 1, … 29 s; those created at 10 … 19 s meet a hanging primary (5 s
    // timeout) and are delivered by the fallback 200 ms later.
    let r = sim(
        "1min",
        "rate = 1\narrivals = \"uniform\"\ncount = 30\nworkers = 10\n\
         [[jobs.provider]]\nname = \"primary\"\ncall_time = \"100ms\"\ntimeout = \"5s\"\n\
         [[jobs.provider.down]]\nat = \"10s\"\nduration = \"10s\"\nbehavior = \"hang\"\n\
         [[jobs.provider]]\nname = \"fallback\"\ncall_time = \"200ms\"\n",
    );
    assert!(close(r.get("completion_time_incident"), 5.2));
    assert!(close(r.get("completion_time_normal"), 0.1));
    assert!(close(r.get("added_latency"), 5.1));
    assert!(close(r.get("delivered_by_provider2"), 10.0 / 30.0));
}

#[test]
fn without_down_windows_on_the_primary_no_incident_metrics_are_written() {
    let r = sim("1min", "rate = 1\nworkers = 1\n[[jobs.provider]]\nname = \"p\"\n");
    assert!(!r.metrics.iter().any(|(n, _)| n.contains("incident") || n == "added_latency"));
}

#[test]
fn poisson_arrivals_average_the_rate_and_uniform_ones_keep_it_exactly_from_start() {
    let body = |arrivals: &str| {
        format!(
            "rate = 10\narrivals = \"{arrivals}\"\nstart = \"100s\"\nworkers = 4\n[[jobs.provider]]\nname = \"p\"\n"
        )
    };
    // 900 s at 10/s: 9,000 jobs, a Poisson count's standard deviation is about 95.
    let poisson = sim("1000s", &body("poisson")).get("jobs");
    assert!((poisson - 9000.0).abs() < 300.0, "{poisson}");
    // 100 s, 100.1 s, … 1000 s: the job at the horizon itself is made.
    let uniform = sim("1000s", &body("uniform"));
    assert_eq!(uniform.get("jobs"), 9001.0);
    assert_eq!(uniform.starts(0), [100.0]);
    assert_eq!(uniform.column("created")[..3], [0.0, 200.0, 600.0]);
}

#[test]
fn variants_with_other_policies_and_pools_see_the_same_jobs_and_poison() {
    let body = |workers: u32, attempts: u32| {
        format!(
            "rate = 20\nworkers = {workers}\npoison_fraction = \"5%\"\n[jobs.retry]\nmax_attempts = {attempts}\n\
             [[jobs.provider]]\nname = \"p\"\ncall_time = \"100ms\"\nfail_time = \"10ms\"\n"
        )
    };
    let (a, b) = (sim("10min", &body(4, 2)), sim("10min", &body(16, 3)));
    assert_eq!(a.get("jobs"), b.get("jobs"));
    // Only poison jobs fail here: the same jobs in both (common random numbers).
    let poison = |r: &Ran| {
        let mut jobs: Vec<u64> = r.log.iter().filter(|x| x.delivered_by.is_none()).map(|x| x.job).collect();
        jobs.sort_unstable();
        jobs.dedup();
        jobs
    };
    assert!(poison(&a).len() > 10);
    assert_eq!(poison(&a), poison(&b));
}
