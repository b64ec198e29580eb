//! `ss -ti` snapshots: the kernel's own view of a connection's timer (its `TCP_INFO`, as
//! iproute2's `ss` prints it), read as a second source beside a capture, to check an
//! estimate against what the kernel computed.
//!
//! Input: what `ss -ti` (or `ss -tin`, `-H`, `-e`, `-o`) prints, repeated, each snapshot
//! preceded by a line holding only a wall-clock time in seconds, as a polling loop
//! writes it:
//!
//! ```sh
//! while sleep 0.05; do date +%s.%N; ss -tin dst 10.0.0.2; done > ss.log
//! ```
//!
//! A connection is a line that starts with its state (`ESTAB`, `SYN-SENT`, …) followed by
//! the queues and the two endpoints; the indented line after it holds `key:value` fields,
//! of which these are read (`tcp_show_info` in iproute2's `misc/ss.c`): `rto:` (ms,
//! `tcpi_rto`), `rtt:SRTT/RTTVAR` (ms, `tcpi_rtt` and `tcpi_rttvar`), `backoff:`,
//! `cwnd:`, `ssthresh:` and `retrans:IN_FLIGHT/TOTAL`. Other fields are skipped, so newer
//! versions of `ss` still read. Header lines (`State …`, `Netid …`) and blank lines are
//! skipped. Numbers are read exactly to the nanosecond where written in decimal; `ss`
//! prints them with `%g`, whose rare exponent form goes through `f64`.
//!
//! A line is at most [`LINE_MAX_BYTES`] long and the input is read a line at a time, so
//! memory does not grow with the input. Errors name the line.

use std::io::{BufRead, Read};
use std::net::IpAddr;

use backoffsim_core::engine::time::SimDuration;

use crate::flow::Endpoint;

/// The longest line read; `ss`'s info line is a few hundred bytes.
pub const LINE_MAX_BYTES: usize = 64 * 1024;

/// One connection in one snapshot.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// The input line of the connection's first line, from 1.
    pub line: u64,
    /// The snapshot's wall-clock time, nanoseconds since the Unix epoch, if a time line
    /// came before it.
    pub time_ns: Option<u64>,
    pub state: String,
    pub local: String,
    pub peer: String,
    /// `tcpi_rto`.
    pub rto: Option<SimDuration>,
    /// `tcpi_rtt`, the smoothed RTT.
    pub srtt: Option<SimDuration>,
    /// `tcpi_rttvar`.
    pub rttvar: Option<SimDuration>,
    /// `tcpi_backoff`.
    pub backoff: Option<u32>,
    pub cwnd: Option<u32>,
    pub ssthresh: Option<u32>,
    /// `tcpi_retrans` (in flight) and `tcpi_total_retrans`.
    pub retrans: Option<(u32, u32)>,
}

/// Why an `ss` log could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SsError {
    #[error("line {line}: {what}")]
    Bad { line: u64, what: String },
    #[error("reading: {0}")]
    Io(#[from] std::io::Error),
}

const STATES: &[&str] = &[
    "ESTAB",
    "SYN-SENT",
    "SYN-RECV",
    "FIN-WAIT-1",
    "FIN-WAIT-2",
    "TIME-WAIT",
    "CLOSE-WAIT",
    "LAST-ACK",
    "LISTEN",
    "CLOSING",
    "UNCONN",
];

/// Reads an `ss` log, calling `each` with every connection once its info line (or the next
/// connection, or the end) completes it.
pub fn read_snapshots<R: BufRead>(mut input: R, mut each: impl FnMut(Snapshot)) -> Result<(), SsError> {
    let mut time_ns = None;
    let mut open: Option<Snapshot> = None;
    let mut line_no = 0u64;
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let n = (&mut input).take(LINE_MAX_BYTES as u64 + 1).read_until(b'\n', &mut buf)?;
        if n == 0 {
            break;
        }
        line_no += 1;
        if buf.len() > LINE_MAX_BYTES && buf.last() != Some(&b'\n') {
            return Err(bad(line_no, format!("a line longer than {LINE_MAX_BYTES} bytes")));
        }
        let text = String::from_utf8_lossy(&buf);
        let line = text.trim_end_matches(['\n', '\r']);
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with("State") || trimmed.starts_with("Netid") {
            continue;
        }
        if let Some(t) = wall_time(trimmed) {
            if let Some(done) = open.take() {
                each(done);
            }
            time_ns = Some(t.map_err(|what| bad(line_no, what))?);
            continue;
        }
        let indented = line.starts_with([' ', '\t']);
        let first = trimmed.split_whitespace().next().unwrap_or("");
        if !indented && STATES.contains(&first) {
            if let Some(done) = open.take() {
                each(done);
            }
            open = Some(connection(line_no, time_ns, trimmed)?);
        } else if indented {
            let Some(conn) = open.as_mut() else {
                return Err(bad(line_no, "an info line before any connection line".into()));
            };
            info(line_no, conn, trimmed)?;
        } else if std::str::from_utf8(&buf).is_err() || line.chars().any(|c| c.is_control() && c != '\t') {
            // Echoing binary back only fills the terminal with noise; say what it is.
            return Err(bad(
                line_no,
                "binary data, not text: an `ss -ti` log is the text `ss` prints (a packet capture goes to `rto capture`)"
                    .into(),
            ));
        } else {
            return Err(bad(
                line_no,
                format!(
                    "expected a time in seconds, a connection line (ESTAB, SYN-SENT, …) or an indented info line, found `{}`",
                    clip(trimmed)
                ),
            ));
        }
    }
    if let Some(done) = open {
        each(done);
    }
    Ok(())
}

/// Why an `ss` endpoint could not be read as an address and a port number.
#[derive(Debug, PartialEq, Eq)]
pub enum Unread {
    /// `10.0.0.2:https`: a service name, as `ss` prints without `-n`.
    NamedPort,
    Other,
}

/// An endpoint as `ss` prints it (`10.0.0.1:40000`, `[2001:db8::1]:443`, with a scope
/// `%eth0` after the address at times), an IPv4-mapped IPv6 address taken as the IPv4
/// one: a socket bound to `::` shows its IPv4 peers as `[::ffff:a.b.c.d]`, while the
/// capture has plain IPv4 on the wire.
pub fn endpoint(text: &str) -> Result<Endpoint, Unread> {
    let (addr, port) = text.rsplit_once(':').ok_or(Unread::Other)?;
    let addr = addr.strip_prefix('[').map_or(addr, |a| a.split_once(']').map_or(a, |(inside, _)| inside));
    let addr = addr.split_once('%').map_or(addr, |(a, _scope)| a);
    let addr: IpAddr = addr.parse().map_err(|_| Unread::Other)?;
    let port: u16 = match port.parse() {
        Ok(p) => p,
        Err(_) if !port.is_empty() && !port.bytes().all(|b| b.is_ascii_digit()) => return Err(Unread::NamedPort),
        Err(_) => return Err(Unread::Other),
    };
    Ok(Endpoint { addr: addr.to_canonical(), port })
}

fn bad(line: u64, what: String) -> SsError {
    SsError::Bad { line, what }
}

fn clip(s: &str) -> &str {
    match s.char_indices().nth(60) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// A line that is only a number of seconds (`date +%s.%N`): `Some` with its value, or an
/// error for a number too large; `None` for any other line.
fn wall_time(s: &str) -> Option<Result<u64, String>> {
    if s.is_empty()
        || !s.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        || s.bytes().filter(|&b| b == b'.').count() > 1
    {
        return None;
    }
    Some(decimal_nanos(s, 1_000_000_000).ok_or_else(|| format!("the time `{}` is not seconds since 1970", clip(s))))
}

/// `s` in units of `scale` nanoseconds (1e9 for seconds, 1e6 for ms), read exactly from
/// decimal digits (digits past the nanosecond are dropped), or through `f64` for an
/// exponent form.
fn decimal_nanos(s: &str, scale: u64) -> Option<u64> {
    if s.contains(['e', 'E']) {
        let v: f64 = s.parse().ok()?;
        let ns = v * scale as f64;
        return (ns.is_finite() && ns >= 0.0 && ns < u64::MAX as f64).then_some(ns.round() as u64);
    }
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    if (int.is_empty() && frac.is_empty()) || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
        return None;
    }
    let whole: u64 = if int.is_empty() { 0 } else { int.parse().ok()? };
    let mut ns = whole.checked_mul(scale)?;
    let mut unit = scale;
    for d in frac.bytes() {
        unit /= 10;
        if unit == 0 {
            break;
        }
        ns = ns.checked_add(u64::from(d - b'0') * unit)?;
    }
    Some(ns)
}

fn connection(line: u64, time_ns: Option<u64>, text: &str) -> Result<Snapshot, SsError> {
    let fields: Vec<&str> = text.split_whitespace().collect();
    // State Recv-Q Send-Q Local Peer [Process]
    if fields.len() < 5 {
        return Err(bad(
            line,
            format!("a connection line needs state, two queues and two endpoints, found `{}`", clip(text)),
        ));
    }
    Ok(Snapshot {
        line,
        time_ns,
        state: fields[0].to_string(),
        local: fields[3].to_string(),
        peer: fields[4].to_string(),
        ..Snapshot::default()
    })
}

fn info(line: u64, conn: &mut Snapshot, text: &str) -> Result<(), SsError> {
    for field in text.split_whitespace() {
        let Some((key, value)) = field.split_once(':') else { continue };
        let ms = |v: &str| {
            decimal_nanos(v, 1_000_000)
                .map(SimDuration)
                .ok_or_else(|| bad(line, format!("key `{key}`: expected milliseconds, found `{}`", clip(v))))
        };
        let count = |v: &str| {
            v.parse::<u32>().map_err(|_| bad(line, format!("key `{key}`: expected a count, found `{}`", clip(v))))
        };
        match key {
            "rto" => conn.rto = Some(ms(value)?),
            "rtt" => {
                let (srtt, var) = value.split_once('/').ok_or_else(|| {
                    bad(line, format!("key `rtt`: expected SRTT/RTTVAR in ms, found `{}`", clip(value)))
                })?;
                conn.srtt = Some(ms(srtt)?);
                conn.rttvar = Some(ms(var)?);
            }
            "backoff" => conn.backoff = Some(count(value)?),
            "cwnd" => conn.cwnd = Some(count(value)?),
            "ssthresh" => conn.ssthresh = Some(count(value)?),
            "retrans" => {
                let (now, total) = value.split_once('/').ok_or_else(|| {
                    bad(line, format!("key `retrans`: expected IN_FLIGHT/TOTAL, found `{}`", clip(value)))
                })?;
                conn.retrans = Some((count(now)?, count(total)?));
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Vec<Snapshot>, SsError> {
        read_bytes(text.as_bytes())
    }

    fn read_bytes(bytes: &[u8]) -> Result<Vec<Snapshot>, SsError> {
        let mut out = Vec::new();
        read_snapshots(bytes, |s| out.push(s))?;
        Ok(out)
    }

    fn ms(v: u64) -> Option<SimDuration> {
        Some(SimDuration::from_millis(v))
    }

    /// Two polls as `date +%s.%N; ss -tin` writes them, the info lines as iproute2
    /// 6.x's `tcp_show_info` formats them (`rto:%g`, `rtt:%g/%g` in ms).
    const LOG: &str = "1733375000.250000000
State  Recv-Q Send-Q  Local Address:Port   Peer Address:Port Process
ESTAB  0      1448       10.0.0.1:40000      10.0.0.2:5001
\t cubic wscale:7,7 rto:204 rtt:1.5/0.75 ato:40 mss:1448 pmtu:1500 rcvmss:536 advmss:1448 cwnd:10 bytes_sent:14480 segs_out:12 send 77.2Mbps lastsnd:4 pacing_rate 154Mbps delivery_rate 1.2Mbps busy:20ms unacked:1 rcv_space:14480 minrtt:1.2
1733375000.300123456
ESTAB  0      0          10.0.0.1:40000      10.0.0.2:5001
\t cubic wscale:7,7 rto:408 backoff:1 rtt:100.25/50.125 mss:1448 cwnd:1 ssthresh:7 retrans:1/3 unacked:4
";

    #[test]
    fn two_polls_give_the_kernels_rto_srtt_and_rttvar_exactly() {
        let got = read(LOG).unwrap();
        assert_eq!(got.len(), 2);
        let first = &got[0];
        assert_eq!((first.line, first.time_ns), (3, Some(1_733_375_000_250_000_000)));
        assert_eq!(
            (first.state.as_str(), first.local.as_str(), first.peer.as_str()),
            ("ESTAB", "10.0.0.1:40000", "10.0.0.2:5001")
        );
        assert_eq!(
            (first.rto, first.srtt, first.rttvar),
            (ms(204), Some(SimDuration(1_500_000)), Some(SimDuration(750_000)))
        );
        assert_eq!((first.cwnd, first.backoff, first.retrans), (Some(10), None, None));
        let second = &got[1];
        assert_eq!(second.time_ns, Some(1_733_375_000_300_123_456));
        assert_eq!(
            (second.rto, second.backoff, second.ssthresh, second.retrans),
            (ms(408), Some(1), Some(7), Some((1, 3)))
        );
        assert_eq!((second.srtt, second.rttvar), (Some(SimDuration(100_250_000)), Some(SimDuration(50_125_000))));
    }

    #[test]
    fn several_connections_in_one_poll_share_its_time_and_a_headerless_log_reads() {
        let log = "12.5\nESTAB 0 0 a:1 b:2\n\t rto:200 rtt:1/0.5\nSYN-SENT 0 1 a:3 b:4\n\t rto:1000\n";
        let got = read(log).unwrap();
        assert_eq!(
            got.iter().map(|s| (s.time_ns, s.state.as_str(), s.rto)).collect::<Vec<_>>(),
            [(Some(12_500_000_000), "ESTAB", ms(200)), (Some(12_500_000_000), "SYN-SENT", ms(1000)),]
        );
        // Without time lines the snapshots have none.
        assert_eq!(read("ESTAB 0 0 a:1 b:2\n\t rto:300\n").unwrap()[0].time_ns, None);
    }

    #[test]
    fn an_exponent_form_and_more_than_nine_decimals_still_read() {
        // %g writes 1.2e+06 for 1,200,000 ms; digits past the nanosecond are dropped.
        let got = read("ESTAB 0 0 a:1 b:2\n\t rto:1.2e+06 rtt:0.0000019/0.1234567891\n").unwrap();
        assert_eq!(got[0].rto, Some(SimDuration::from_secs(1200)));
        assert_eq!((got[0].srtt, got[0].rttvar), (Some(SimDuration(1)), Some(SimDuration(123_456))));
    }

    #[test]
    fn bad_input_names_its_line_and_what_was_expected() {
        let err = |text: &str| read(text).unwrap_err().to_string();
        assert_eq!(err("\t rto:200\n"), "line 1: an info line before any connection line");
        assert_eq!(err("ESTAB 0 0 a:1 b:2\n\t rto:fast\n"), "line 2: key `rto`: expected milliseconds, found `fast`");
        assert_eq!(
            err("ESTAB 0 0 a:1 b:2\n\t rtt:100\n"),
            "line 2: key `rtt`: expected SRTT/RTTVAR in ms, found `100`"
        );
        assert_eq!(err("ESTAB 0 0 a:1 b:2\n\t retrans:x/1\n"), "line 2: key `retrans`: expected a count, found `x`");
        assert_eq!(
            err("ESTAB 0 0\n"),
            "line 1: a connection line needs state, two queues and two endpoints, found `ESTAB 0 0`"
        );
        assert!(
            err("hello\n").starts_with("line 1: expected a time in seconds, a connection line"),
            "{}",
            err("hello\n")
        );
        assert_eq!(err("99999999999999999999\n"), "line 1: the time `99999999999999999999` is not seconds since 1970");
        let binary = "line 1: binary data, not text: an `ss -ti` log is the text `ss` prints (a packet capture goes to `rto capture`)";
        // The start of a pcap file, and a line with an escape character in it.
        assert_eq!(read_bytes(b"\xd4\xc3\xb2\xa1\x02\x00\x04\x00\n").unwrap_err().to_string(), binary);
        assert_eq!(err("ESC\x1b[2J\n"), binary);
    }

    #[test]
    fn a_line_without_end_is_refused_with_bounded_memory() {
        let endless = std::io::repeat(b'x').take(LINE_MAX_BYTES as u64 * 4);
        let err = read_snapshots(std::io::BufReader::new(endless), |_| {}).unwrap_err().to_string();
        assert_eq!(err, format!("line 1: a line longer than {LINE_MAX_BYTES} bytes"));
    }

    fn at(text: &str) -> Endpoint {
        text.parse().unwrap()
    }

    #[test]
    fn an_endpoint_is_read_as_ss_prints_it() {
        // iproute2's ss: IPv6 in brackets, a scope after `%`, and a dual-stack socket's
        // IPv4 peer as an IPv4-mapped address (RFC 4291 section 2.5.5.2).
        assert_eq!(endpoint("10.23.0.1:38900"), Ok(at("10.23.0.1:38900")));
        assert_eq!(endpoint("[::ffff:10.23.0.1]:38900"), Ok(at("10.23.0.1:38900")));
        assert_eq!(endpoint("::ffff:10.23.0.1:38900"), Ok(at("10.23.0.1:38900")));
        assert_eq!(endpoint("[2001:db8::1]:443"), Ok(at("[2001:db8::1]:443")));
        assert_eq!(endpoint("[fe80::1]%eth0:22"), Ok(at("[fe80::1]:22")));
        assert_eq!(endpoint("10.0.0.1%lo:22"), Ok(at("10.0.0.1:22")));
        assert_eq!(endpoint("10.23.0.2:commplex-main"), Err(Unread::NamedPort));
        assert_eq!(endpoint("[2001:db8::2]:https"), Err(Unread::NamedPort));
        assert_eq!(endpoint("*:*"), Err(Unread::Other));
        assert_eq!(endpoint("10.0.0.1:99999"), Err(Unread::Other));
    }
}
