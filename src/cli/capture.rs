//! `backoffsim rto capture FILE [--flow A:PORT-B:PORT]`: a connection read from a packet
//! capture, replayed from its data sender's side through an estimator.
//!
//! The file is read twice, a packet at a time: once to find the connections, once to
//! follow the chosen one, so memory stays bounded by the number of connections and the
//! sender's unacknowledged segments, not the file's size.

use std::io::Write;
use std::path::Path;

use backoffsim_capture::flow::{Endpoint, Flow, FlowKey, Flows};
use backoffsim_capture::reader::{Capture, CaptureError};
use backoffsim_capture::sender_view::SenderView;
use backoffsim_core::model::rto::RtoParams;

use super::CliError;

fn usage(e: CaptureError) -> CliError {
    CliError::Usage(e.to_string())
}

/// `A:PORT-B:PORT`, either end first.
fn parse_flow(text: &str) -> Result<FlowKey, CliError> {
    let bad = |why: String| {
        CliError::Usage(format!("--flow `{text}`: {why}: expected A:PORT-B:PORT, e.g. 10.0.0.1:40000-10.0.0.2:443"))
    };
    let (a, b) = text.split_once('-').ok_or_else(|| bad("no `-` between the two ends".into()))?;
    let a: Endpoint = a.parse().map_err(bad)?;
    let b: Endpoint = b.parse().map_err(bad)?;
    Ok(FlowKey::of(a, b))
}

/// The connections of a capture, one line each: the flow as `--flow` takes it (sender
/// first), then its counts.
fn write_list(out: &mut impl Write, flows: &Flows) -> std::io::Result<()> {
    writeln!(out, "flow,packets,bytes,retransmissions_sender,retransmissions_receiver")?;
    for flow in flows.flows.values() {
        let (s, r) = flow.retransmissions();
        writeln!(out, "{}-{},{},{},{},{}", flow.sender, flow.receiver(), flow.packets(), flow.bytes(), s, r)?;
    }
    Ok(())
}

pub fn capture(file: &Path, flow: Option<&str>, params: &RtoParams) -> Result<(), CliError> {
    let wanted = flow.map(parse_flow).transpose()?;
    let mut flows = Flows::default();
    let mut cap = Capture::open(file).map_err(usage)?;
    while let Some(seg) = cap.next_segment() {
        flows.add(&seg.map_err(usage)?);
    }
    flows.settle();
    let chosen: Flow = match wanted {
        Some(key) => flows.flows.get(&key).cloned().ok_or_else(|| {
            let has = match flows.flows.values().collect::<Vec<_>>().as_slice() {
                [] => "no TCP connection at all".to_string(),
                [only] => format!("one, {}-{}", only.sender, only.receiver()),
                all => format!("{}; leave out --flow to list them", all.len()),
            };
            CliError::Usage(format!(
                "{}: no TCP connection between {} and {} (the file has {has})",
                file.display(),
                key.0,
                key.1
            ))
        })?,
        None => match flows.flows.len() {
            0 => {
                return Err(CliError::Usage(format!(
                    "{}: no TCP segment over IPv4 or IPv6 in the file ({} other packets skipped)",
                    file.display(),
                    cap.skipped
                )));
            }
            1 => flows.flows.values().next().cloned().expect("one flow"),
            n => {
                let mut out = std::io::stdout().lock();
                write_list(&mut out, &flows).and_then(|()| out.flush()).map_err(CliError::from_stdout)?;
                return Err(CliError::Usage(format!(
                    "{}: {n} TCP connections (listed above): choose one with --flow A:PORT-B:PORT",
                    file.display()
                )));
            }
        },
    };

    let stdout = std::io::BufWriter::new(std::io::stdout().lock());
    let mut view = SenderView::new(chosen.sender, chosen.receiver(), chosen.first_ns, params, stdout)
        .map_err(CliError::from_stdout)?;
    let mut cap = Capture::open(file).map_err(usage)?;
    while let Some(seg) = cap.next_segment() {
        view.add(&seg.map_err(usage)?).map_err(CliError::from_stdout)?;
    }
    view.finish().map_err(CliError::from_stdout)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flow_is_two_ends_in_either_order() {
        let a = parse_flow("10.0.0.1:40000-10.0.0.2:443").unwrap();
        assert_eq!(a, parse_flow("10.0.0.2:443-10.0.0.1:40000").unwrap());
        assert_eq!(a.0.to_string(), "10.0.0.1:40000");
        assert!(parse_flow("[2001:db8::1]:1-[2001:db8::2]:2").is_ok());
        let err = parse_flow("10.0.0.1:40000").unwrap_err().to_string();
        assert!(err.contains("no `-`") && err.contains("A:PORT-B:PORT"), "{err}");
    }
}
