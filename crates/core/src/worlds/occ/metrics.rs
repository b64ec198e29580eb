//! What the OCC clients write to `summary.csv`: each metric declared once, emitted through its
//! entry (`MetricValue::of`) and listed by the catalogue in this order.

use crate::worlds::catalogue::entries;

entries! {
    model: Occ;
    CALLS: "calls", "Calls to the store", "count", L, headline,
        "Calls of all clients to the shared store, failed ones included.";
    CALLS_PER_CLIENT: "calls_per_client", "Calls per client", "count", L, plain,
        "Calls to the store per client.";
    COMPLETION_TIME: "completion_time", "Time until all succeeded", "s", L, headline,
        "Time until the last client's write succeeded.";
    SUCCEEDED: "succeeded", "Clients succeeded", "fraction", H, plain,
        "Share of clients whose write succeeded within the horizon.";
    EVENTS: "events", "Simulation events", "count", N, internal,
        "Events the simulator processed: its cost, not an answer.";
}
