//! What the report says the load plot shows.

use super::*;
use backoffsim_core::metrics::series::{CallsColumn, JobsColumn};

/// What the load plot shows, naming only the marks that appear in it, then what each
/// panel's numbers say.
pub(super) fn caption(data: &RunSet) -> String {
    let columns: Vec<&str> = data.series.iter().flatten().flat_map(|t| t.columns.iter().map(String::as_str)).collect();
    let has = |c: &str| columns.contains(&c);
    let per = if data.sweep_keys.is_empty() { "variant" } else { "variant and sweep cell" };
    let mut s = format!("Per time bin, the mean over replications, one panel per {per} on shared scales. ");
    if has(CallsColumn::Attempts.name()) && has(CallsColumn::Succeeded.name()) {
        s.push_str(
            "The orange line is the offered load (attempts reaching the server per second, retries \
             included), the blue line the goodput (attempts that succeeded per second)",
        );
        s.push_str(if has(CallsColumn::Capacity.name()) { ", the dashed line the server's capacity. " } else { ". " });
        s.push_str("In the strip under each panel, the purple line is the retries' share of the attempts");
        if has(CallsColumn::Wasted.name()) && has(CallsColumn::Busy.name()) {
            s.push_str(" and the light blue area the share of the server's busy time that was wasted");
        }
        let facts = data.variants.iter().flat_map(|v| v.cells.iter().map(|c| &c.facts));
        if facts.clone().any(|f| f.retry_share_alert.is_some()) {
            s.push_str("; the red dashed line is the monitor's retry-share alert");
        }
        s.push_str(
            ". Offered load climbing past capacity while goodput falls and retries fill the strip is a \
             retry storm; goodput that stays low after the incident has ended is a metastable failure.",
        );
    } else if has(JobsColumn::Created.name()) && has(JobsColumn::Delivered.name()) {
        s.push_str(
            "The orange line is jobs created per second, the blue line jobs delivered per second; the \
             strip under each panel is the queue's depth.",
        );
    } else {
        s.push_str("A line per column of series.csv, as the file holds it.");
    }
    let facts: Vec<&crate::data::CellFacts> =
        data.variants.iter().flat_map(|v| v.cells.iter().map(|c| &c.facts)).collect();
    let mut bands = Vec::new();
    if facts.iter().any(|f| !f.down.is_empty()) {
        bands.push("grey bands are the server's down time");
    }
    if facts.iter().any(|f| !f.provider_down.is_empty()) {
        bands.push("grey bands are the provider's down time");
    }
    if facts.iter().any(|f| !f.brownouts.is_empty()) {
        bands.push("yellow bands brownouts");
    }
    if !bands.is_empty() {
        let text = bands.join(", ");
        s.push_str(&format!(" {}{}.", text[..1].to_uppercase(), &text[1..]));
    }
    s
}
