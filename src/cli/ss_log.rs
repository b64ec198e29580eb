//! `backoffsim rto ss FILE [--flow A:PORT-B:PORT]`: the kernel's own timer state, read
//! from a log of `ss -ti` snapshots, as CSV beside what `rto capture` derives.

use std::io::Write;
use std::path::Path;

use backoffsim_capture::flow::Endpoint;
use backoffsim_capture::ss::{Snapshot, endpoint, read_snapshots};
use backoffsim_core::metrics::trace::{opt_secs, secs};

use super::CliError;

const HEADER: &str = "time_s,local,peer,state,rto_s,srtt_s,rttvar_s,backoff,cwnd,ssthresh,retrans,total_retrans";

fn count(v: Option<u32>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

fn row(s: &Snapshot) -> String {
    let time = s.time_ns.map(secs).unwrap_or_default();
    let (now, total) = s.retrans.map_or((None, None), |(a, b)| (Some(a), Some(b)));
    format!(
        "{time},{},{},{},{},{},{},{},{},{},{},{}",
        s.local,
        s.peer,
        s.state,
        opt_secs(s.rto),
        opt_secs(s.srtt),
        opt_secs(s.rttvar),
        count(s.backoff),
        count(s.cwnd),
        count(s.ssthresh),
        count(now),
        count(total)
    )
}

/// `A:PORT-B:PORT` as `ss` prints the two ends, either first.
fn ends(flow: &str) -> Result<(String, String), CliError> {
    // An IPv6 end is bracketed, so the `-` between the ends is the one after a `:PORT`.
    let split = flow.char_indices().filter(|&(_, c)| c == '-').map(|(i, _)| i).find(|&i| {
        let (a, b) = (&flow[..i], &flow[i + 1..]);
        let end = |e: &str| {
            e.rsplit_once(':').is_some_and(|(host, port)| {
                port.parse::<u16>().is_ok()
                    && !host.is_empty()
                    && ((host.starts_with('[') && host.ends_with(']')) || !host.contains(':'))
            })
        };
        end(a) && end(b)
    });
    let i = split.ok_or_else(|| {
        CliError::Usage(format!("--flow `{flow}`: expected A:PORT-B:PORT, e.g. 10.0.0.1:40000-10.0.0.2:5001"))
    })?;
    Ok((flow[..i].to_string(), flow[i + 1..].to_string()))
}

/// An end `--flow` names: its text, and its address and port when it has them.
struct End {
    text: String,
    at: Option<Endpoint>,
}

impl End {
    fn of(text: String) -> End {
        End { at: endpoint(&text).ok(), text }
    }
}

/// Whether an end as `ss` printed it is the one `--flow` names: the same text, or the
/// same address and port (`[::ffff:10.0.0.1]:40000` is `10.0.0.1:40000`).
fn same(logged: &str, wanted: &End) -> bool {
    logged == wanted.text || wanted.at.is_some_and(|w| endpoint(logged) == Ok(w))
}

pub fn ss(file: &Path, flow: Option<&str>) -> Result<(), CliError> {
    let wanted = flow.map(ends).transpose()?.map(|(a, b)| (End::of(a), End::of(b)));
    let input =
        std::fs::File::open(file).map_err(|e| CliError::Usage(format!("cannot read {}: {e}", file.display())))?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut written = Ok(());
    let mut rows = 0u64;
    read_snapshots(std::io::BufReader::new(input), |s| {
        let keep = wanted
            .as_ref()
            .is_none_or(|(a, b)| (same(&s.local, a) && same(&s.peer, b)) || (same(&s.local, b) && same(&s.peer, a)));
        if keep && written.is_ok() {
            // The header goes with the first row, so that a log refused part-way has
            // written nothing but the rows before the error.
            if rows == 0 {
                written = writeln!(out, "{HEADER}");
            }
            rows += 1;
            if written.is_ok() {
                written = writeln!(out, "{}", row(&s));
            }
        }
    })
    .map_err(|e| CliError::Usage(format!("{}: {e}", file.display())))?;
    if rows == 0 {
        if wanted.is_some() {
            return Err(CliError::Usage(format!("{}: no snapshot of that connection", file.display())));
        }
        written = writeln!(out, "{HEADER}");
    }
    written.and_then(|()| out.flush()).map_err(CliError::from_stdout)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flow_splits_at_the_dash_between_two_ends_of_either_family() {
        assert_eq!(ends("10.0.0.1:40000-10.0.0.2:5001").unwrap(), ("10.0.0.1:40000".into(), "10.0.0.2:5001".into()));
        assert_eq!(
            ends("[2001:db8::1]:40000-[2001:db8::2]:443").unwrap(),
            ("[2001:db8::1]:40000".into(), "[2001:db8::2]:443".into())
        );
        assert_eq!(ends("host-a:1-host-b:2").unwrap(), ("host-a:1".into(), "host-b:2".into()));
        assert!(ends("10.0.0.1:40000").is_err());
    }

    #[test]
    fn an_end_matches_by_its_text_or_by_its_address_and_port() {
        let end = |text: &str| End::of(text.to_string());
        assert!(same("[::ffff:10.0.0.1]:40000", &end("10.0.0.1:40000")));
        assert!(same("10.0.0.2:https", &end("10.0.0.2:https")));
        assert!(!same("10.0.0.2:https", &end("10.0.0.2:443")));
        assert!(!same("10.0.0.1:40000", &end("10.0.0.1:40001")));
    }
}
