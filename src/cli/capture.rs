//! `backoffsim rto capture FILE [--flow A:PORT-B:PORT]`: a connection read from a packet
//! capture, replayed from its data sender's side through an estimator.
//!
//! The file is read twice, a packet at a time: once to find the connections, once to
//! follow the chosen one, so memory stays bounded by the number of connections and the
//! sender's unacknowledged segments, not the file's size.

use std::io::Write;
use std::path::Path;

use backoffsim_capture::flow::{Endpoint, Flow, FlowKey, Flows};
use backoffsim_capture::reader::CaptureError;
use backoffsim_capture::sender_view::{Observer, SenderView};
use backoffsim_core::engine::time::SimDuration;
use backoffsim_core::model::rto::RtoParams;
use backoffsim_core::run::destination::Destination;

use super::CliError;

mod kernel;
mod out;
mod progress;

use progress::Progress;

fn usage(e: CaptureError) -> CliError {
    CliError::Usage(e.to_string())
}

/// What `--flow` names: two ends, and which of the connections between them when they
/// were used by several in turn (a port reused), 1-based in order of first packet.
#[derive(Debug, PartialEq, Eq)]
struct Wanted {
    key: FlowKey,
    ordinal: Option<u32>,
}

/// `A:PORT-B:PORT`, either end first, and `#N` after it to pick one of several connections.
fn parse_flow(text: &str) -> Result<Wanted, CliError> {
    let bad = |why: String| {
        CliError::Usage(format!(
            "--flow `{text}`: {why}: expected A:PORT-B:PORT or A:PORT-B:PORT#N, e.g. 10.0.0.1:40000-10.0.0.2:443"
        ))
    };
    let (ends, ordinal) = match text.rsplit_once('#') {
        Some((ends, n)) => {
            let n = n.parse::<u32>().ok().filter(|&n| n >= 1).ok_or_else(|| {
                bad(format!(
                    "`#{n}` is not a connection's number (1 for the first between the two ends, 2 the next, …)"
                ))
            })?;
            (ends, Some(n))
        }
        None => (text, None),
    };
    let (a, b) = ends.split_once('-').ok_or_else(|| bad("no `-` between the two ends".into()))?;
    let a: Endpoint = a.parse().map_err(bad)?;
    let b: Endpoint = b.parse().map_err(bad)?;
    Ok(Wanted { key: FlowKey::of(a, b), ordinal })
}

/// The flow as `--flow` takes it, sender first, with `#N` when its two ends carried
/// several connections.
fn label(flows: &Flows, flow: &Flow) -> String {
    let ends = format!("{}-{}", flow.sender, flow.receiver());
    if flows.reused(flow) { format!("{ends}#{}", flow.ordinal) } else { ends }
}

/// The connections of a capture, one line each: the flow as `--flow` takes it, when it
/// began (seconds from the capture's earliest packet, to tell apart connections of the
/// same two ends), then its counts.
fn write_list<'f>(out: &mut impl Write, flows: &Flows, list: impl Iterator<Item = &'f Flow>) -> std::io::Result<()> {
    writeln!(out, "flow,start_s,packets,bytes,retransmissions_sender,retransmissions_receiver")?;
    for flow in list {
        let (s, r) = flow.retransmissions();
        let mut start = String::new();
        backoffsim_core::replay::csv_secs(&mut start, flows.since_origin(flow));
        writeln!(out, "{},{start},{},{},{},{}", label(flows, flow), flow.packets(), flow.bytes(), s, r)?;
    }
    Ok(())
}

/// The connection `--flow` names; when its two ends carried several and no `#N` says
/// which, they are listed on stdout and the error says how to pick one.
fn choose(file: &Path, flows: &Flows, wanted: &Wanted) -> Result<Flow, CliError> {
    let (key, found) = (wanted.key, flows.between(wanted.key).collect::<Vec<_>>());
    let usage = |what: String| Err(CliError::Usage(format!("{}: {what}", file.display())));
    match (wanted.ordinal, found.as_slice()) {
        (_, []) => {
            let has = match flows.flows.values().collect::<Vec<_>>().as_slice() {
                [] => "no TCP connection at all".to_string(),
                [only] => format!("one, {}", label(flows, only)),
                all => format!("{}; leave out --flow to list them", all.len()),
            };
            usage(format!("no TCP connection between {} and {} (the file has {has})", key.0, key.1))
        }
        (None, [only]) => Ok((*only).clone()),
        (None, all) => {
            let mut out = std::io::stdout().lock();
            write_list(&mut out, flows, all.iter().copied())
                .and_then(|()| out.flush())
                .map_err(CliError::from_stdout)?;
            usage(format!(
                "{} TCP connections between {} and {}, one after another (listed above): choose one with \
                 --flow {}-{}#N, N from 1 (the first) to {}",
                all.len(),
                key.0,
                key.1,
                key.0,
                key.1,
                all.len()
            ))
        }
        (Some(n), all) => match all.get(n as usize - 1) {
            Some(flow) => Ok((*flow).clone()),
            None if all.len() == 1 => usage(format!(
                "--flow #{n}: one TCP connection between {} and {}; leave out #{n}, or give #1",
                key.0, key.1
            )),
            None => usage(format!(
                "--flow #{n}: {} TCP connections between {} and {}; give #1 to #{}",
                all.len(),
                key.0,
                key.1,
                all.len()
            )),
        },
    }
}

/// What `rto capture` was asked: the file, the connection, the estimator and where the
/// files go (stdout when `out` is `None`).
pub struct Request<'a> {
    pub file: &'a Path,
    pub flow: Option<&'a str>,
    pub params: &'a RtoParams,
    /// The command line's `--profile` and `--set`s, as the report repeats them.
    pub asked: String,
    pub out: Option<&'a Path>,
    /// A log of `ss -ti` polls of the sender, to set the kernel's RTO beside the derived one.
    pub ss: Option<&'a Path>,
    pub quiet: bool,
    /// Packets stamped earlier than the one before them, found by the first pass.
    pub backwards: u64,
    /// `#N` when the chosen connection's two ends carried several, one after another, and
    /// when it began, from the capture's earliest packet.
    pub reused: Option<(u32, SimDuration)>,
}

/// Refuses, before anything is written, an input that cannot be read twice: a pipe
/// (`/dev/stdin`, `<(zcat …)`), a terminal, a device or a socket. A missing file or a
/// directory is left to the reader, whose messages say so.
fn readable_twice(file: &Path) -> Result<(), CliError> {
    use std::os::unix::fs::FileTypeExt;
    let twice = "rto capture reads its file twice (once to find the connections, once to follow one), so \
                 it needs a file: save the capture first (e.g. `tcpdump -w FILE`, or `zcat X.pcap.gz > FILE`)";
    match std::fs::metadata(file) {
        Err(_) if file == Path::new("-") => {
            Err(CliError::Usage(format!("`-`: standard input cannot be read as a capture: {twice}")))
        }
        Ok(meta) if !meta.is_file() && !meta.is_dir() => {
            let t = meta.file_type();
            let what = if t.is_fifo() {
                "a pipe"
            } else if t.is_socket() {
                "a socket"
            } else {
                "a device or terminal"
            };
            Err(CliError::Usage(format!("{}: is {what}, not a file: {twice}", file.display())))
        }
        _ => Ok(()),
    }
}

pub fn capture(req: &mut Request<'_>) -> Result<(), CliError> {
    readable_twice(req.file)?;
    let wanted = req.flow.map(parse_flow).transpose()?;
    // Claimed before any work, as `run` claims its own.
    let dest = req.out.map(super::run::claim).transpose()?;
    if dest.is_some() {
        super::signals::install().map_err(CliError::Failed)?;
    }
    if let Some(log) = req.ss {
        // Refused now, not after a first pass over a large capture.
        std::fs::File::open(log).map_err(|e| CliError::Usage(format!("--ss {}: cannot read: {e}", log.display())))?;
    }
    let file = req.file;
    let mut progress = Progress::new(file, req.quiet);
    let mut flows = Flows::default();
    let mut cap = progress.open(file, "finding connections").map_err(usage)?;
    let mut read = 0u64;
    let (mut last_ns, mut first_backwards) = (0u64, None);
    while let Some(seg) = cap.next_segment() {
        let seg = seg.map_err(usage)?;
        if seg.time_ns < last_ns {
            req.backwards += 1;
            first_backwards.get_or_insert(seg.number);
        }
        last_ns = last_ns.max(seg.time_ns);
        flows.add(&seg);
        read += 1;
        every_few(read, dest.as_ref(), &progress)?;
    }
    flows.settle();
    if let Some(number) = first_backwards {
        // A warning even with --quiet: the times, and so every RTT, may be wrong.
        progress.warn(&format!(
            "backoffsim: warning: {}: {} stamped earlier than the packet before (the first is packet {number}): \
             a merged file or a clock stepped while capturing? Times are read as stamped; an RTT that would be \
             negative is no sample",
            backoffsim_core::input::escaped(&file.display().to_string()),
            if req.backwards == 1 { "1 packet is".to_string() } else { format!("{} packets are", req.backwards) }
        ));
    }
    let chosen: Flow = match wanted {
        Some(wanted) => choose(file, &flows, &wanted)?,
        None => match flows.flows.len() {
            0 => {
                let links = if cap.unread_links.is_empty() {
                    String::new()
                } else {
                    let numbers: Vec<String> = cap.unread_links.iter().map(u32::to_string).collect();
                    format!(
                        "; link type {} is not read: Ethernet (1), raw IP (101, 228, 229), BSD loopback (0, 108) \
                         and Linux cooked v1/v2 (113, 276) are",
                        numbers.join(", ")
                    )
                };
                return Err(CliError::Usage(format!(
                    "{}: no TCP segment over IPv4 or IPv6 in the file ({} other packets skipped{links})",
                    file.display(),
                    cap.skipped
                )));
            }
            1 => flows.flows.values().next().cloned().expect("one flow"),
            n => {
                let mut out = std::io::stdout().lock();
                write_list(&mut out, &flows, flows.flows.values())
                    .and_then(|()| out.flush())
                    .map_err(CliError::from_stdout)?;
                let reused = flows.flows.values().any(|f| f.ordinal > 1);
                return Err(CliError::Usage(format!(
                    "{}: {n} TCP connections (listed above): choose one with --flow A:PORT-B:PORT{}",
                    file.display(),
                    if reused { ", with the #N shown where two ends carried several" } else { "" }
                )));
            }
        },
    };
    match dest {
        Some(dest) => {
            req.reused = flows.reused(&chosen).then(|| (chosen.ordinal, flows.since_origin(&chosen)));
            out::write(req, &chosen, &dest, &mut progress)
        }
        None => {
            let stdout = std::io::BufWriter::new(std::io::stdout().lock());
            let mut view = SenderView::new(chosen.sender, chosen.receiver(), chosen.first_ns, req.params, stdout)
                .map_err(CliError::from_stdout)?;
            replay(file, &chosen, &mut view, None, &mut progress)?.map_err(CliError::from_stdout)?;
            view.finish().map_err(CliError::from_stdout)?;
            Ok(())
        }
    }
}

/// The second pass: every segment of `flow` in `file` through `view` (the view itself
/// keeps only its two ends; another connection between them is left out here). The outer
/// error is the file's (or a stop); the inner one the output's.
fn replay<W: Write, O: Observer>(
    file: &Path,
    flow: &Flow,
    view: &mut SenderView<W, O>,
    dest: Option<&Destination>,
    progress: &mut Progress,
) -> Result<std::io::Result<()>, CliError> {
    let mut cap = progress.open(file, "replaying").map_err(usage)?;
    let mut read = 0u64;
    while let Some(seg) = cap.next_segment() {
        let seg = seg.map_err(usage)?;
        if flow.holds(&seg)
            && let Err(e) = view.add(&seg)
        {
            return Ok(Err(e));
        }
        read += 1;
        every_few(read, dest, progress)?;
    }
    progress.done();
    Ok(Ok(()))
}

/// Every few thousand packets: the bar moves, and a look at the stop flag (set only when
/// files are written: without `--out` Ctrl-C ends the command as it ends any filter).
fn every_few(read: u64, dest: Option<&Destination>, progress: &Progress) -> Result<(), CliError> {
    if !read.is_multiple_of(4096) {
        return Ok(());
    }
    progress.show();
    match dest {
        Some(d) if backoffsim_core::run::interrupt::requested() => {
            Err(CliError::Interrupted(d.path().display().to_string()))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flow_is_two_ends_in_either_order() {
        let a = parse_flow("10.0.0.1:40000-10.0.0.2:443").unwrap();
        assert_eq!(a, parse_flow("10.0.0.2:443-10.0.0.1:40000").unwrap());
        assert_eq!((a.key.0.to_string(), a.ordinal), ("10.0.0.1:40000".to_string(), None));
        assert!(parse_flow("[2001:db8::1]:1-[2001:db8::2]:2").is_ok());
        let err = parse_flow("10.0.0.1:40000").unwrap_err().to_string();
        assert!(err.contains("no `-`") && err.contains("A:PORT-B:PORT"), "{err}");
    }

    #[test]
    fn a_hash_and_number_pick_one_of_several_connections_between_the_same_ends() {
        let a = parse_flow("10.0.0.2:443-10.0.0.1:40000#2").unwrap();
        assert_eq!(a, Wanted { key: parse_flow("10.0.0.1:40000-10.0.0.2:443").unwrap().key, ordinal: Some(2) });
        assert_eq!(parse_flow("[2001:db8::1]:1-[2001:db8::2]:2#1").unwrap().ordinal, Some(1));
        for bad in
            ["10.0.0.1:1-10.0.0.2:2#0", "10.0.0.1:1-10.0.0.2:2#", "10.0.0.1:1-10.0.0.2:2#x", "10.0.0.1:1-10.0.0.2:2#-1"]
        {
            let err = parse_flow(bad).unwrap_err().to_string();
            assert!(err.contains("is not a connection's number") && err.contains("A:PORT-B:PORT#N"), "{bad}: {err}");
        }
    }
}
