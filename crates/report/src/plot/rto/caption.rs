//! What the report says the RTO plot shows.

use super::*;
use backoffsim_core::metrics::trace::TraceEvent;

/// What the RTO plot shows, naming only the marks that appear in it.
pub(super) fn caption(data: &RunSet) -> Result<String, backoffsim_core::run::interrupt::Interrupted> {
    let mut s = String::from(if data.sweep_keys.is_empty() {
        "One traced connection per variant, on shared axes. Grey dots are RTT samples, the \
         blue line is SRTT and the orange line the RTO (the timer's value)"
    } else {
        "One traced connection per variant and sweep cell, on shared axes. Grey dots are RTT \
         samples, the blue line is SRTT and the orange line the RTO (the timer's value)"
    });
    // The kinds of event in the trace, in one pass over its (maybe millions of) rows.
    let mut events: BTreeSet<&str> = BTreeSet::new();
    for r in &data.trace {
        backoffsim_core::run::interrupt::check()?;
        events.insert(&r.event);
    }
    let has = |e: &str| events.contains(e);
    if has(TraceEvent::Timeout.name()) {
        s.push_str("; a red × marks a timer expiry, at the RTO it fired with");
    }
    if has(TraceEvent::SpuriousTimeout.name()) {
        s.push_str(
            "; a black ring on the RTO line marks where F-RTO found the last timeout spurious \
             and undid it",
        );
    }
    match (has(TraceEvent::Retransmit.name()), has(TraceEvent::Probe.name())) {
        (true, false) => s.push_str("; purple triangles in the strip under each panel mark retransmissions"),
        (false, true) => s.push_str("; sky-blue dots in the strip under each panel mark tail loss probes"),
        (true, true) => s.push_str(
            "; in the strip under each panel, purple triangles mark retransmissions and sky-blue \
             dots (a row of their own) tail loss probes",
        ),
        (false, false) => {}
    }
    if has(TraceEvent::WindowProbe.name()) {
        s.push_str(
            "; pink dots are zero-window probes, drawn at the time since the probe before \
             (the persist timer's backed-off wait), and a pale bar in the strip spans the time \
             the receiver's window was zero",
        );
    }
    if has(TraceEvent::Keepalive.name()) {
        s.push_str("; brown dots in the strip mark keepalive probes");
    }
    if has(TraceEvent::SynAck.name()) || has(TraceEvent::SynAckRetransmit.name()) {
        s.push_str(
            "; green marks in the strip are a listener's SYN-ACKs (a dot the first, a triangle \
             each one its timer sent again), and the RTO line is then the SYN-ACK timer",
        );
    }
    if has(TraceEvent::IcmpUnreachable.name()) {
        s.push_str("; orange crosses in the strip mark ICMP unreachables reaching the sender");
    }
    if has(TraceEvent::Aborted.name()) || has(TraceEvent::RequestExpired.name()) {
        s.push_str(
            "; a black vertical line marks where the connection was aborted, after which \
             nothing happens on it, labelled with what ended it where the trace tells: \
             \"keepalive reset\" after an unanswered keepalive probe, \"zero-window abort\" \
             while the window was zero, \"request expired\" when a listener dropped the \
             request, otherwise \"gave up\" (the retransmission timer's limit)",
        );
    }
    let (mut window, mut threshold, mut recovery, mut loss) = (false, false, false, false);
    for r in data.trace.iter().filter(|r| r.cwnd.is_some()) {
        window = true;
        threshold |= r.ssthresh.is_some();
        recovery |= r.ca_state.as_deref() == Some("recovery");
        loss |= r.ca_state.as_deref() == Some("loss");
    }
    if window {
        s.push_str("; a strip at the bottom of each panel shows the congestion window in segments (green steps)");
        if threshold {
            s.push_str(" and the slow-start threshold where a loss set one (dashed red)");
        }
        match (recovery, loss) {
            (true, true) => s.push_str(", shaded lilac in fast recovery and pale red in loss recovery after a timeout"),
            (true, false) => s.push_str(", shaded lilac in fast recovery"),
            (false, true) => s.push_str(", shaded pale red in loss recovery after a timeout"),
            (false, false) => {}
        }
    }
    s.push('.');
    if data.variants.iter().any(|v| !v.blackouts.is_empty()) {
        s.push_str(" Grey bands are blackouts.");
    }
    if data.variants.iter().any(|v| !v.rtt_changes.is_empty()) {
        s.push_str(
            " Green bands mark where the path's RTT differs from its base (the dashed green \
             line is the path's RTT).",
        );
    }
    Ok(s)
}
