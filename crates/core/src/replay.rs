//! `backoffsim rto replay`: feed a CSV of RTT samples and timer expiries straight through
//! an estimator and print its state after every row.
//!
//! Input: a header, then rows. Columns are found by name, in any order:
//!
//! - `time_s` (required): when the event happened, seconds; never earlier than the row before.
//! - `event` (required): `sample`, `timeout` (an established-phase expiry), and two
//!   extensions: `syn_timeout` (an expiry in SYN-SENT) and `established` (the handshake
//!   completed; see [`RtoEstimator::on_established`]). `retransmit` and `probe` (a tail
//!   loss probe, RFC 8985 §7), the rows `rto capture` writes for resends the RTO did not
//!   drive, are read too and leave the estimator as it was.
//! - `rtt_s` (required column): the RTT of a `sample`, seconds; empty for other events.
//! - `snd_una`, `snd_nxt` (optional, together): sequence numbers at a sample's ACK, for
//!   linux's once-per-RTT window. Empty cells mean "not known" for that row.
//!
//! Seconds are plain decimals (`1.04`) read exactly to the nanosecond (further digits round
//! half up); exponent forms (`1e-3`) go through `f64`. Fields are separated by commas and
//! trimmed, and may be double-quoted (RFC 4180, on one line); blank lines and lines
//! starting with `#` are skipped but counted, so every error names the physical line.
//! Unknown columns are refused, so that a typo never silently turns a feature off.
//!
//! A line is at most [`LINE_MAX_BYTES`] long and the input is read a line at a time, so a
//! replay holds the same memory whatever it is fed (`/dev/zero`, a file with no line
//! ends, an endless feed). A UTF-8 byte-order mark before the header is skipped.
//!
//! Output: `time_s,event,rtt_s,srtt_s,rttvar_s,rto_s,backoffs`, plus `mdev_s,mdev_max_s`
//! for linux (see [`RtoSnapshot`] for their units). Durations are seconds with exactly
//! six decimals (microseconds, rounded half up), printed from integers: the output is the
//! same on every machine. Unknown values (no sample yet) are empty cells. Rows are written
//! out whenever the input has nothing more buffered, so a live feed (`tail -f capture.csv
//! | backoffsim rto replay -`) shows each row as it arrives, while a file is still
//! written in large blocks.

use std::fmt::Write as _;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};

use crate::engine::time::{SimDuration, SimTime};
use crate::model::rto::{Phase, RtoEstimator, RtoParams, RtoProfile, RtoSnapshot, SeqInfo};

/// A replay failure, naming where in the input it is.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The header is missing, incomplete or has unknown columns.
    #[error("line 1 (header): {0}")]
    Header(String),
    /// One cell is wrong: `line 4, column rtt_s: `abc` is not a number of seconds`.
    #[error("line {line}, column {column}: {message}")]
    Field { line: u64, column: &'static str, message: String },
    /// A row that cannot be split (wrong number of fields, bad quoting, invalid UTF-8).
    #[error("line {line}: {message}")]
    Row { line: u64, message: String },
    #[error("reading the input: {0}")]
    Read(io::Error),
    #[error("writing the output: {0}")]
    Write(#[from] io::Error),
}

/// The longest line a replay reads, its line end included. A row is at most five
/// numbers, some tens of bytes: 64 KiB is a thousand times that and still a bound.
pub const LINE_MAX_BYTES: usize = 64 << 10;

/// One row of a replay: what happened to the connection at its time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// An RTT sample, with the sequence numbers at its ACK when known.
    Sample(SimDuration, Option<SeqInfo>),
    /// An established-phase timer expiry.
    Timeout,
    /// An expiry in SYN-SENT.
    SynTimeout,
    /// The handshake completed ([`RtoEstimator::on_established`]).
    Established,
    /// A retransmission the timer did not drive (a fast retransmit): shown in the output,
    /// the estimator unchanged.
    Retransmit,
    /// A tail loss probe (RFC 8985 §7; Linux `tcp_send_loss_probe`): its own timer, the
    /// PTO, sent it, and the RTO does not back off for it.
    Probe,
}

impl Event {
    pub fn name(self) -> &'static str {
        match self {
            Event::Sample(..) => "sample",
            Event::Timeout => "timeout",
            Event::SynTimeout => "syn_timeout",
            Event::Established => "established",
            Event::Retransmit => "retransmit",
            Event::Probe => "probe",
        }
    }
}

/// An estimator fed one event at a time, writing its state after each as a row of the
/// replay's output. What `replay` does for a CSV, for a program that has the events
/// already (a capture's reader).
pub struct Replayer<W: Write> {
    est: RtoEstimator,
    out: W,
    linux: bool,
    row: String,
}

impl<W: Write> Replayer<W> {
    /// Writes the header.
    pub fn new(output: W, params: &RtoParams) -> io::Result<Self> {
        let linux = params.profile == RtoProfile::Linux;
        let mut out = output;
        out.write_all(b"time_s,event,rtt_s,srtt_s,rttvar_s,rto_s,backoffs")?;
        out.write_all(if linux { b",mdev_s,mdev_max_s\n" } else { b"\n" })?;
        Ok(Replayer { est: RtoEstimator::new(params), out, linux, row: String::new() })
    }

    /// The timeout the estimator would arm now, backoff included.
    pub fn rto(&self) -> SimDuration {
        self.est.rto()
    }

    /// The estimator as it stands, for a caller that asks what it would do next.
    pub fn estimator(&self) -> &RtoEstimator {
        &self.est
    }

    /// Applies `event` at `now` and writes the row.
    pub fn event(&mut self, now: SimTime, event: Event) -> io::Result<()> {
        let rtt = match event {
            Event::Sample(rtt, seq) => {
                self.est.on_sample(now, rtt, seq);
                Some(rtt)
            }
            Event::Timeout => {
                self.est.on_timeout(Phase::Established);
                None
            }
            Event::SynTimeout => {
                self.est.on_timeout(Phase::SynSent);
                None
            }
            Event::Established => {
                self.est.on_established();
                None
            }
            Event::Retransmit | Event::Probe => None,
        };
        self.row.clear();
        write_row(&mut self.row, now, event, rtt, &self.est.snapshot(), self.linux);
        self.out.write_all(self.row.as_bytes())
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}

/// Where each known column sits in a row.
struct Columns {
    time: usize,
    event: usize,
    rtt: usize,
    seq: Option<(usize, usize)>,
}

const KNOWN: &str = "time_s, event, rtt_s, snd_una, snd_nxt";

fn columns(header: &[String]) -> Result<Columns, ReplayError> {
    let (mut time, mut event, mut rtt, mut una, mut nxt) = (None, None, None, None, None);
    for (i, name) in header.iter().enumerate() {
        let slot = match name.as_str() {
            "time_s" => &mut time,
            "event" => &mut event,
            "rtt_s" => &mut rtt,
            "snd_una" => &mut una,
            "snd_nxt" => &mut nxt,
            other => {
                return Err(ReplayError::Header(format!("unknown column `{other}` (known: {KNOWN})")));
            }
        };
        if slot.replace(i).is_some() {
            return Err(ReplayError::Header(format!("column `{name}` appears twice")));
        }
    }
    let need = |c: Option<usize>, name: &str| {
        c.ok_or_else(|| ReplayError::Header(format!("missing column `{name}` (required: time_s, event, rtt_s)")))
    };
    let seq = match (una, nxt) {
        (Some(u), Some(n)) => Some((u, n)),
        (None, None) => None,
        _ => {
            return Err(ReplayError::Header("snd_una and snd_nxt go together: give both or neither".into()));
        }
    };
    Ok(Columns { time: need(time, "time_s")?, event: need(event, "event")?, rtt: need(rtt, "rtt_s")?, seq })
}

/// Reads non-negative seconds to the nanosecond. Plain decimals are exact.
fn parse_seconds(text: &str) -> Option<SimDuration> {
    let t = text.strip_prefix('+').unwrap_or(text);
    let (int, frac) = t.split_once('.').unwrap_or((t, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if !(int.is_empty() && frac.is_empty()) && digits(int) && digits(frac) {
        let whole: u64 = if int.is_empty() { 0 } else { int.parse().ok()? };
        let mut ns: u64 = 0;
        for (i, b) in frac.bytes().chain(std::iter::repeat(b'0')).take(10).enumerate() {
            let d = u64::from(b - b'0');
            if i < 9 {
                ns = ns * 10 + d;
            } else if d >= 5 {
                ns += 1; // the tenth digit rounds half up
            }
        }
        return whole.checked_mul(1_000_000_000)?.checked_add(ns).map(SimDuration);
    }
    // Exponent forms only; "inf", "nan" and negatives are refused by from_secs_f64.
    if t.contains(['e', 'E']) && !t.contains(['n', 'N', 'i', 'I']) {
        return SimDuration::from_secs_f64(t.parse().ok()?);
    }
    None
}

fn is_plain_decimal(text: &str) -> bool {
    let (int, frac) = text.split_once('.').unwrap_or((text, ""));
    !int.is_empty() && (int.bytes().chain(frac.bytes())).all(|b| b.is_ascii_digit())
}

fn seconds(line: u64, column: &'static str, text: &str) -> Result<SimDuration, ReplayError> {
    parse_seconds(text).ok_or_else(|| ReplayError::Field {
        line,
        column,
        message: if text.starts_with('-') {
            format!("`{text}` is negative: expected seconds, zero or more")
        } else if is_plain_decimal(text) {
            // Digits only, so a number: one beyond what nanoseconds in 64 bits hold.
            format!("`{text}` is too large: at most 18446744073 seconds (584 years)")
        } else {
            format!("`{text}` is not a number of seconds")
        },
    })
}

/// Seconds for the output CSV: six decimals, rounded half up to the microsecond, from
/// integers. Not the simulator's nine (`metrics::trace::secs`): a replay's input is a
/// capture, whose times and samples are microseconds at best.
pub fn csv_secs(out: &mut String, d: SimDuration) {
    let us = (u128::from(d.as_nanos()) + 500) / 1000;
    // Writing into a String cannot fail.
    let _ = write!(out, "{}.{:06}", us / 1_000_000, us % 1_000_000);
}

fn csv_opt_secs(out: &mut String, d: Option<SimDuration>) {
    if let Some(d) = d {
        csv_secs(out, d);
    }
}

/// Replays `input` through an estimator built from `params`, writing one output row per
/// input row. Stops at the first bad row with an error naming its line and column.
pub fn replay<R: Read, W: Write>(input: R, output: W, params: &RtoParams) -> Result<(), ReplayError> {
    let mut lines = Lines { input: BufReader::new(input), buf: Vec::new(), number: 0 };
    let Some((_, header)) = lines.next_fields()? else {
        return Err(ReplayError::Header("the input is empty: expected a header `time_s,event,rtt_s`".into()));
    };
    let cols = columns(&header)?;
    let mut out = Replayer::new(BufWriter::new(output), params)?;
    let mut last: Option<(SimTime, String)> = None;
    loop {
        // Out before waiting for more input: what has been read is shown as it comes.
        if lines.drained() {
            out.flush()?;
        }
        let Some((line, record)) = lines.next_fields()? else { break };
        if record.len() != header.len() {
            return Err(ReplayError::Row {
                line,
                message: format!("has {} fields, the header has {}", record.len(), header.len()),
            });
        }
        let cell = |i: usize| record.get(i).map_or("", String::as_str);

        let time_text = cell(cols.time);
        if time_text.is_empty() {
            return Err(field(line, "time_s", "is empty: every row needs a time in seconds".into()));
        }
        let now = SimTime(seconds(line, "time_s", time_text)?.as_nanos());
        if let Some((prev, prev_text)) = &last
            && now < *prev
        {
            return Err(field(
                line,
                "time_s",
                format!("{time_text} s is earlier than the previous row's {prev_text} s: time must not go backwards"),
            ));
        }
        last = Some((now, time_text.to_string()));

        let event = match cell(cols.event) {
            "sample" => Event::Sample(SimDuration(0), None),
            "timeout" => Event::Timeout,
            "syn_timeout" => Event::SynTimeout,
            "established" => Event::Established,
            "retransmit" => Event::Retransmit,
            "probe" => Event::Probe,
            other => {
                return Err(field(
                    line,
                    "event",
                    format!(
                        "`{other}` is not an event: expected sample, timeout, syn_timeout, established, \
                         retransmit or probe"
                    ),
                ));
            }
        };

        let rtt_text = cell(cols.rtt);
        let rtt = if matches!(event, Event::Sample(..)) {
            if rtt_text.is_empty() {
                return Err(field(line, "rtt_s", "is empty: a sample needs an RTT in seconds".into()));
            }
            Some(seconds(line, "rtt_s", rtt_text)?)
        } else if rtt_text.is_empty() {
            None
        } else {
            return Err(field(line, "rtt_s", format!("must be empty for a {} row", event.name())));
        };

        let seq = match cols.seq {
            None => None,
            Some((u, n)) => sequence(line, cell(u), cell(n))?,
        };

        let event = match (event, rtt) {
            (Event::Sample(..), Some(rtt)) => Event::Sample(rtt, seq),
            (other, _) => other,
        };
        out.event(now, event)?;
    }
    out.flush()?;
    Ok(())
}

fn field(line: u64, column: &'static str, message: String) -> ReplayError {
    ReplayError::Field { line, column, message }
}

fn sequence(line: u64, una: &str, nxt: &str) -> Result<Option<SeqInfo>, ReplayError> {
    let number = |column: &'static str, text: &str| {
        text.parse::<u64>()
            .map_err(|_| field(line, column, format!("`{text}` is not a sequence number (a whole number of bytes)")))
    };
    match (una.is_empty(), nxt.is_empty()) {
        (true, true) => Ok(None),
        (false, false) => {
            let (snd_una, snd_nxt) = (number("snd_una", una)?, number("snd_nxt", nxt)?);
            if snd_una > snd_nxt {
                return Err(field(line, "snd_una", format!("{snd_una} is beyond snd_nxt {snd_nxt}")));
            }
            Ok(Some(SeqInfo { snd_una, snd_nxt }))
        }
        (true, false) => Err(field(line, "snd_una", "is empty but snd_nxt is not: give both or neither".into())),
        (false, true) => Err(field(line, "snd_nxt", "is empty but snd_una is not: give both or neither".into())),
    }
}

fn write_row(row: &mut String, now: SimTime, event: Event, rtt: Option<SimDuration>, s: &RtoSnapshot, linux: bool) {
    csv_secs(row, SimDuration(now.as_nanos()));
    row.push(',');
    row.push_str(event.name());
    row.push(',');
    csv_opt_secs(row, rtt);
    row.push(',');
    csv_opt_secs(row, s.srtt);
    row.push(',');
    csv_opt_secs(row, s.rttvar);
    row.push(',');
    csv_secs(row, s.rto);
    row.push(',');
    let _ = write!(row, "{}", s.backoffs);
    if linux {
        row.push(',');
        csv_opt_secs(row, s.mdev);
        row.push(',');
        csv_opt_secs(row, s.mdev_max);
    }
    row.push('\n');
}

/// Physical lines of the input, skipping blank and `#` lines but counting them.
struct Lines<R> {
    input: BufReader<R>,
    buf: Vec<u8>,
    number: u64,
}

impl<R: Read> Lines<R> {
    /// Whether everything read so far has been taken, so that the next line waits on the
    /// input.
    fn drained(&self) -> bool {
        self.input.buffer().is_empty()
    }

    /// The next line with content, as (line number, fields).
    fn next_fields(&mut self) -> Result<Option<(u64, Vec<String>)>, ReplayError> {
        loop {
            self.buf.clear();
            let limit = LINE_MAX_BYTES as u64;
            let read = (&mut self.input).take(limit).read_until(b'\n', &mut self.buf).map_err(ReplayError::Read)?;
            if read == 0 {
                return Ok(None);
            }
            self.number += 1;
            let line = self.number;
            let cut = self.buf.len() == LINE_MAX_BYTES && self.buf.last() != Some(&b'\n');
            if cut && !self.input.fill_buf().map_err(ReplayError::Read)?.is_empty() {
                return Err(ReplayError::Row {
                    line,
                    message: format!(
                        "is longer than {} KiB, the most a line may be: a replay row is a few numbers \
                         (is this a CSV of samples and timeouts?)",
                        LINE_MAX_BYTES >> 10
                    ),
                });
            }
            let text = std::str::from_utf8(&self.buf)
                .map_err(|_| ReplayError::Row { line, message: "is not valid UTF-8".into() })?;
            let text = if line == 1 { crate::input::strip_bom(text) } else { text };
            let text = text.trim_end_matches(['\n', '\r']);
            if text.trim().is_empty() || text.trim_start().starts_with('#') {
                continue;
            }
            let fields = split_fields(text).map_err(|message| ReplayError::Row { line, message })?;
            return Ok(Some((line, fields)));
        }
    }
}

/// Splits one line at commas, trimming spaces and tabs around each field. A field may be
/// double-quoted, with `""` for a quote inside (RFC 4180), but may not span lines.
fn split_fields(line: &str) -> Result<Vec<String>, String> {
    let is_space = |c: &char| *c == ' ' || *c == '\t';
    let mut fields = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        while chars.next_if(is_space).is_some() {}
        let mut field = String::new();
        if chars.next_if_eq(&'"').is_some() {
            loop {
                match chars.next() {
                    None => return Err("has an unterminated quoted field".into()),
                    Some('"') if chars.next_if_eq(&'"').is_some() => field.push('"'),
                    Some('"') => break,
                    Some(c) => field.push(c),
                }
            }
            while chars.next_if(is_space).is_some() {}
            match chars.next() {
                None => {
                    fields.push(field);
                    return Ok(fields);
                }
                Some(',') => fields.push(field),
                Some(_) => return Err("has text after a closing quote".into()),
            }
        } else {
            loop {
                match chars.next() {
                    None => {
                        fields.push(field.trim_end_matches([' ', '\t']).to_string());
                        return Ok(fields);
                    }
                    Some(',') => break,
                    Some(c) => field.push(c),
                }
            }
            fields.push(field.trim_end_matches([' ', '\t']).to_string());
        }
    }
}

#[cfg(test)]
mod tests;
