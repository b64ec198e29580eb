//! `rto capture --out DIR`: the replay's rows as `trace.csv`, each stall measured against
//! the profile's timer as `stalls.csv`, the RTO figure (`rto.png`, `rto.svg`) and a short
//! `report.md`, made whole in a staging directory and swapped in at the end, as `run`'s
//! results are. The figure is gathered while the capture is read, in memory that does not
//! grow with it (`CaptureTrace`); the report keeps the longest stalls only.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, BufWriter, Write};

use backoffsim_capture::flow::Flow;
use backoffsim_capture::sender_view::{Observer, SenderView, Summary};
use backoffsim_capture::stall::Stall;
use backoffsim_core::engine::time::{SimDuration, SimTime};
use backoffsim_core::metrics::trace::TraceEvent;
use backoffsim_core::model::rto::{Phase, RtoEstimator, RtoProfile, RtoSnapshot};
use backoffsim_core::replay::{Event, csv_secs};
use backoffsim_core::run::destination::{Destination, ownership};
use backoffsim_report::output::terminal::grouped;
use backoffsim_report::plot::Format;
use backoffsim_report::plot::rto::CaptureTrace;

use super::kernel::Kernel;
use super::{CliError, Request, replay};

/// How many stalls the report lists, the longest first; `stalls.csv` has them all.
const REPORT_STALLS: usize = 20;

const STALLS_HEADER: &str = "stall,phase,armed_s,retransmissions,retransmitted_after_s,recovered_after_s,\
profile_expiries,profile_expired_after_s,profile_recovered_after_s,profile_recovered_by_s\n";

/// Hears the replay: draws the figure, writes `stalls.csv`, keeps the longest stalls.
struct Gather<W: Write> {
    trace: CaptureTrace,
    stalls: W,
    /// The first failure to write `stalls.csv`: the observer cannot return it.
    error: Option<io::Error>,
    count: u64,
    recovered: u64,
    /// (how long, its number, the stall), longest first, at most [`REPORT_STALLS`].
    longest: Vec<(SimDuration, u64, Stall)>,
    end: SimTime,
    line: String,
    /// The kernel's own RTO from `--ss`, and the estimator's until the next row.
    kernel: Option<Kernel>,
    rto: SimDuration,
}

fn secs(d: SimDuration) -> String {
    let mut s = String::new();
    csv_secs(&mut s, d);
    s
}

fn at(t: SimTime) -> f64 {
    t.as_secs_f64()
}

/// Offsets from `from`, `;`-joined.
fn offsets(from: SimTime, times: &[SimTime]) -> String {
    times.iter().map(|t| secs(t.saturating_since(from))).collect::<Vec<_>>().join(";")
}

fn phase_name(p: Phase) -> &'static str {
    match p {
        Phase::SynSent => "syn_sent",
        Phase::Established => "established",
    }
}

impl<W: Write> Observer for Gather<W> {
    fn row(&mut self, t: SimTime, event: Event, state: &RtoSnapshot) {
        if let Some(k) = self.kernel.as_mut() {
            k.before(t.as_nanos(), self.rto, &mut self.trace);
        }
        self.rto = state.rto;
        let (kind, sample) = match event {
            Event::Sample(rtt, _) => (TraceEvent::Sample, Some(rtt.as_secs_f64())),
            Event::Timeout | Event::SynTimeout => (TraceEvent::Timeout, None),
            Event::Established => (TraceEvent::Established, None),
            Event::Retransmit => (TraceEvent::Retransmit, None),
            // A probe may carry new data, no retransmission: it is counted in the report,
            // and a probe that resent data is a triangle of its stall, not in the strip.
            Event::Probe => return,
        };
        self.trace.row(at(t), kind, sample, state.srtt.map(|d| d.as_secs_f64()), state.rto.as_secs_f64());
    }

    fn stall(&mut self, s: &Stall) {
        self.count += 1;
        let mut before = s.armed;
        for &t in &s.sent {
            self.trace.waited(at(t), t.saturating_since(before).as_secs_f64());
            before = t;
        }
        let mut before = s.armed;
        for &e in &s.what_if.expiries {
            self.trace.expiry(at(e), e.saturating_since(before).as_secs_f64());
            before = e;
        }
        let stalled = s.stalled();
        if stalled.is_some() {
            self.recovered += 1;
        }
        let what_if = s.stalled_what_if();
        self.line.clear();
        let _ = writeln!(
            self.line,
            "{},{},{},{},{},{},{},{},{},{}",
            self.count,
            phase_name(s.phase),
            secs(SimDuration(s.armed.as_nanos())),
            s.retransmissions,
            offsets(s.armed, &s.sent),
            stalled.map(secs).unwrap_or_default(),
            s.what_if.count,
            offsets(s.armed, &s.what_if.expiries),
            what_if.map(|w| secs(w.0)).unwrap_or_default(),
            what_if.map(|w| secs(w.1)).unwrap_or_default(),
        );
        if self.error.is_none()
            && let Err(e) = self.stalls.write_all(self.line.as_bytes())
        {
            self.error = Some(e);
        }
        // An unrecovered stall lasted at least to the capture's end.
        let length = stalled.unwrap_or_else(|| self.end.saturating_since(s.armed));
        let place = self.longest.partition_point(|(d, _, _)| *d >= length);
        if place < REPORT_STALLS {
            self.longest.insert(place, (length, self.count, s.clone()));
            self.longest.truncate(REPORT_STALLS);
        }
    }
}

pub(super) fn write(
    req: &Request<'_>,
    flow: &Flow,
    dest: &Destination,
    progress: &mut super::Progress,
) -> Result<(), CliError> {
    let failed = |e: io::Error| {
        if backoffsim_core::run::interrupt::requested() {
            CliError::Interrupted(dest.path().display().to_string())
        } else {
            CliError::Failed(format!("cannot write to {}: {e}", dest.path().display()))
        }
    };
    let staging = dest.stage().map_err(failed)?;
    let span = SimDuration(flow.last_ns.saturating_sub(flow.first_ns));
    let trace_csv = BufWriter::new(File::create(staging.path("trace.csv")).map_err(failed)?);
    let mut stalls_csv = BufWriter::new(File::create(staging.path("stalls.csv")).map_err(failed)?);
    stalls_csv.write_all(STALLS_HEADER.as_bytes()).map_err(failed)?;
    let kernel = match req.ss {
        Some(log) => Some(Kernel::start(log, flow, req.params.granularity.max(SimDuration::from_millis(1)))?),
        None => None,
    };
    let gather = Gather {
        kernel,
        rto: RtoEstimator::new(req.params).rto(),
        trace: CaptureTrace::new(span.as_secs_f64()),
        stalls: stalls_csv,
        error: None,
        count: 0,
        recovered: 0,
        longest: Vec::new(),
        end: SimTime(span.as_nanos()),
        line: String::new(),
    };
    let mut view = SenderView::observed(flow.sender, flow.receiver(), flow.first_ns, req.params, trace_csv, gather)
        .map_err(failed)?;
    replay(req.file, flow, &mut view, Some(dest), progress)?.map_err(failed)?;
    let (trace_csv, mut gather, summary) = view.finish().map_err(failed)?;
    if let Some(k) = gather.kernel.as_mut() {
        k.before(u64::MAX, gather.rto, &mut gather.trace);
        if let Some(e) = k.error.take() {
            return Err(CliError::Usage(e));
        }
        if k.agreement.polls == 0
            && let Some(log) = req.ss
        {
            // A warning even with --quiet: the comparison asked for is not in the results.
            eprintln!(
                "backoffsim: warning: --ss {}: no poll of the sender's socket (local {}, peer {}) within the \
                 capture's time{}; the report has no comparison",
                backoffsim_core::input::escaped(&log.display().to_string()),
                flow.sender,
                flow.receiver(),
                if k.named_ports() {
                    " (the log names ports by service, as `ss` prints them without `-n`: poll with `ss -tin`)"
                } else {
                    ""
                }
            );
        }
    }
    trace_csv.into_inner().map_err(|e| failed(e.into_error()))?.sync_all().map_err(failed)?;
    if let Some(e) = gather.error {
        return Err(failed(e));
    }
    gather.stalls.flush().map_err(failed)?;
    gather.stalls.get_ref().sync_all().map_err(failed)?;

    let subtitle = format!(
        "{} · {} → {}{} · {}",
        req.file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
        flow.sender,
        flow.receiver(),
        req.reused.map(|(n, _)| format!(" #{n}")).unwrap_or_default(),
        req.asked
    );
    let caption = caption(&summary, gather.count);
    let draw = |format| {
        gather.trace.render(&subtitle, &caption, format).map_err(|e| CliError::Failed(format!("the RTO figure: {e}")))
    };
    staging.write("rto.png", &draw(Format::Png)?).map_err(failed)?;
    staging.write("rto.svg", &draw(Format::Svg)?).map_err(failed)?;
    staging.write("report.md", report(req, flow, &summary, &gather).as_bytes()).map_err(failed)?;
    let dir = staging.commit().map_err(failed)?;
    if !req.quiet {
        eprintln!(
            "backoffsim: wrote {}: report.md, rto.png, rto.svg, trace.csv, stalls.csv",
            backoffsim_core::input::escaped(&dir.display().to_string())
        );
    }
    Ok(())
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", count(n), if n == 1 { one } else { many })
}

fn count(n: u64) -> String {
    grouped(&n.to_string())
}

/// The panel's heading: what the capture shows.
fn caption(s: &Summary, stalls: u64) -> String {
    format!(
        "captured connection: {}, {} ({} after a full RTO of the profile's timer), {}",
        plural(s.samples, "RTT sample", "RTT samples"),
        plural(s.data_retransmissions() + s.syn_timeouts, "retransmission", "retransmissions"),
        count(s.timeouts + s.syn_timeouts),
        plural(stalls, "stall", "stalls"),
    )
}

/// Seconds for the report: the CSV's six decimals, trailing zeros dropped.
fn short(d: SimDuration) -> String {
    let s = secs(d);
    let s = s.trim_end_matches('0');
    s.strip_suffix('.').unwrap_or(s).to_string()
}

/// A list of offsets, cut after a few.
fn listed(from: SimTime, times: &[SimTime], all: u64) -> String {
    const SHOWN: usize = 6;
    let mut parts: Vec<String> = times.iter().take(SHOWN).map(|t| short(t.saturating_since(from))).collect();
    if all > SHOWN as u64 {
        parts.push(format!("… ({all})"));
    }
    parts.join(", ")
}

fn report<W: Write>(req: &Request<'_>, flow: &Flow, s: &Summary, g: &Gather<W>) -> String {
    let mut md = String::new();
    let name = req.file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let _ = writeln!(md, "# RTO of a captured connection\n");
    let _ = writeln!(
        md,
        "`{name}`: the connection {} → {}{}, read from its data sender's side and replayed through the \
         estimator of {}.\n",
        flow.sender,
        flow.receiver(),
        req.reused
            .map(|(n, since)| format!(
                " (`#{n}`: these two ends carried several connections, one after another; this one began {} s \
                 into the capture)",
                short(since)
            ))
            .unwrap_or_default(),
        req.asked
    );
    let _ = writeln!(md, "| | |\n|---|---|");
    let _ = writeln!(md, "| packets | {} ({} bytes of payload) |", count(flow.packets()), count(flow.bytes()));
    let _ = writeln!(md, "| duration | {} s |", short(SimDuration(flow.last_ns.saturating_sub(flow.first_ns))));
    let _ = writeln!(md, "| RTT samples | {} |", count(s.samples));
    let _ = writeln!(
        md,
        "| retransmissions | {} of data, {} of the SYN; {} after a full RTO of the profile's timer |",
        count(s.data_retransmissions()),
        count(s.syn_timeouts),
        count(s.timeouts)
    );
    // A profile without probes (rfc6298, or `--set tlp=false`) reads a probe of the kernel's
    // as what it is on the wire, new data or a retransmission: no row to count.
    if req.params.tlp {
        let _ = writeln!(
            md,
            "| tail loss probes | {}: {} resending the last segment, {} of new data |",
            count(s.probes),
            count(s.probes - s.new_data_probes),
            count(s.new_data_probes)
        );
    }
    let _ = writeln!(md, "| stalls | {}, {} recovered within the capture |", count(g.count), count(g.recovered));
    if req.backwards > 0 {
        let _ = writeln!(
            md,
            "| clock | {} stamped earlier than the packet before them: times are read as stamped |",
            plural(req.backwards, "packet", "packets")
        );
    }
    let _ = writeln!(md, "\n![RTO trace](rto.png)\n");
    let _ = writeln!(
        md,
        "Dots are RTT samples, the lines the profile's SRTT and RTO, its estimator fed the capture's \
         samples and retransmissions (so the RTO doubles where the sender retransmitted after a full RTO \
         of the profile's timer). Triangles are the retransmissions of each stall, the sender's own timer \
         at work, drawn at the time it waited (since the arming, or the retransmission before); crosses \
         are where the profile's timer would have expired in the same silence, drawn at its interval. A \
         triangle higher than the cross of the same rank is a sender that waited longer than the profile \
         would have.{}\n",
        if req.params.profile == RtoProfile::Linux {
            " Linux's timer wheel fires a timeout up to an eighth of it late (`kernel/time/timer.c`), which \
             the profile's expiries leave out: a kernel's waits run longer by that much, and its recoveries \
             later."
        } else {
            ""
        }
    );
    if let (Some(k), Some(log)) = (&g.kernel, req.ss) {
        against_the_kernel(&mut md, &k.agreement, log, flow);
    }
    let _ = writeln!(md, "## Stalls\n");
    if g.longest.is_empty() {
        let _ = writeln!(md, "None: no retransmission of the sender's oldest data with the receiver silent.");
    } else {
        let _ = writeln!(
            md,
            "A stall is the sender retransmitting its oldest unacknowledged data (or, under linux with SACK, \
             resending its last segment as a tail loss probe) with nothing heard from the receiver since its \
             timer was armed (and for at least an SRTT), until an ACK moves past it or reports SACK blocks. \
             The timer is armed as the profile arms it, so the sender's own times, counted from there, \
             differ between profiles. `armed at` counts from the connection's first packet, every other \
             time in seconds after the arming. The capture cannot say when the path came back, only that it was after \
             the last retransmission lost and by the one that got through; so the profile's recovery is a \
             span. {}\n",
            if g.count as usize > g.longest.len() {
                format!("The {} longest of {} stalls; `stalls.csv` has all of them.", g.longest.len(), g.count)
            } else {
                "`stalls.csv` has them with every time.".to_string()
            }
        );
        let _ = writeln!(
            md,
            "| stall | armed at (s) | sender retransmitted after | recovered after | profile's timer expires after \
             | profile recovers after |\n|---|---|---|---|---|---|"
        );
        for (_, n, st) in &g.longest {
            let recovered = st.stalled().map_or_else(|| "not within the capture".to_string(), short);
            let what_if = match st.stalled_what_if() {
                Some((a, b)) if a == b => short(a),
                Some((a, b)) => format!("{} to {}", short(a), short(b)),
                None => "—".to_string(),
            };
            let _ = writeln!(
                md,
                "| {n}{} | {} | {} | {recovered} | {} | {what_if} |",
                if st.phase == Phase::SynSent { " (SYN)" } else { "" },
                short(SimDuration(st.armed.as_nanos())),
                listed(st.armed, &st.sent, st.retransmissions),
                listed(st.armed, &st.what_if.expiries, st.what_if.count),
            );
        }
    }
    let _ = writeln!(md, "\n## Files\n");
    let _ = writeln!(
        md,
        "- [trace.csv](trace.csv): the estimator's state after each sample and retransmission, as \
         `rto capture` prints it without `--out`.\n- [stalls.csv](stalls.csv): every stall, measured and \
         as the profile's timer would have run it.\n- `rto.png`, `rto.svg`: the figure above."
    );
    let _ = writeln!(md, "\n{}", ownership::report_signature("rto capture"));
    md
}

/// The report's paragraph on `--ss`: how often the derived RTO was the kernel's.
fn against_the_kernel(md: &mut String, a: &super::kernel::Agreement, log: &std::path::Path, flow: &Flow) {
    let name = log.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let _ = writeln!(md, "## Against the kernel's own RTO\n");
    if a.polls == 0 {
        let _ = writeln!(
            md,
            "`{name}` has no poll of the sender's socket (local {}, peer {}) within the capture: was `ss` run \
             on the sender, with `-n`?\n",
            flow.sender,
            flow.receiver()
        );
        return;
    }
    let share = a.within as f64 / a.polls as f64 * 100.0;
    let _ = writeln!(
        md,
        "`{name}`: {} of the sender's socket within the capture. The RTO derived here is within {} s \
         (one tick of the profile's clock) of the kernel's `rto:` at {} of them ({share:.1} %){}. Rings in \
         the figure are the kernel's values.\n",
        plural(a.polls, "poll", "polls"),
        short(a.tolerance),
        count(a.within),
        match a.worst {
            Some((d, _)) if d.as_micros() == 0 => "; every one to the microsecond".to_string(),
            Some((d, t)) => format!("; the largest difference is {} s, at {} s", short(d), short(SimDuration(t))),
            None => String::new(),
        },
    );
}
