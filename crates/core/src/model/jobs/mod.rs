//! Asynchronous retry's sans-IO pieces: a provider answering one call
//! ([`provider`]) and the queue of jobs by due time ([`queue`]). The world that runs
//! them is `sim::jobs`; the file format is `scenario::jobs`.

pub mod provider;
pub mod queue;
