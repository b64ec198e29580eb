//! `backoffsim rto replay FILE.csv --profile P [--set key=value]…`: feed a captured
//! series of RTT samples and timeouts straight through an estimator.

use std::path::PathBuf;

use clap::Subcommand;

use super::CliError;
use backoffsim_core::model::rto::{RtoConfig, RtoParams, RtoProfile};
use backoffsim_core::replay::{ReplayError, replay};
use backoffsim_core::scenario::sets::{self, Set};

#[derive(Debug, Subcommand)]
pub enum RtoCommand {
    /// Replay rows `time_s,event,rtt_s` (event `sample` or `timeout`, optional
    /// `snd_una,snd_nxt`) through an estimator and print its state after each row as CSV.
    /// Also read: `syn_timeout`, `established`, and `retransmit` and `probe` (a tail loss
    /// probe), which `rto capture` writes and which leave the estimator as it was.
    Replay {
        /// The CSV file of samples and timeouts; `-` reads standard input.
        file: PathBuf,
        /// The estimator profile: `rfc6298` or `linux`.
        #[arg(long, default_value = "rfc6298")]
        profile: String,
        /// Override a constant by its scenario name, e.g. `--set min_rto=200ms --set hz=1000`
        /// (keys: min_rto, max_rto, initial_rto, alpha, beta, k, granularity, hz, …).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
    },
    /// Read a TCP connection from a packet capture (pcap or pcapng) and replay, from its
    /// data sender's side, the RTT samples and retransmissions it shows through an
    /// estimator, printing the estimator's state after each as CSV (the columns of
    /// `rto replay`: a retransmission of the first unacknowledged byte after a full RTO
    /// of the profile's timer is a `timeout`; under `linux` with SACK, the first resend in
    /// a silence is a tail loss `probe` (off with `--set tlp=false`); any other is a
    /// `retransmit`).
    ///
    /// With several connections in the file and no `--flow`, lists them and exits 2.
    Capture {
        /// The capture: pcap or pcapng, on Ethernet, Linux cooked (v1, v2), BSD loopback (macOS lo0) or raw IP.
        file: PathBuf,
        /// The connection, by its two ends in either order: `10.0.0.1:40000-10.0.0.2:443`,
        /// `[2001:db8::1]:40000-[2001:db8::2]:443`. When the same two ends carried several
        /// connections one after another (a port reused: a new SYN with a new ISN after a
        /// close, a reset or a silence), `#N` picks the Nth in order of first packet:
        /// `10.0.0.1:40000-10.0.0.2:443#2`; the list shows each with its `#N` and start.
        #[arg(long, value_name = "A:PORT-B:PORT[#N]")]
        flow: Option<String>,
        /// The estimator profile: `rfc6298` or `linux`. It also picks how RTT is sampled:
        /// `rfc6298` one timed segment at a time (Karn), or with timestamps every ACK from
        /// the echoed send; `linux` every ACK from its oldest segment's send, in
        /// microseconds, and from the echo on a 1 ms clock only after a retransmission.
        #[arg(long, default_value = "rfc6298")]
        profile: String,
        /// Override an estimator constant by its scenario name, to see what another timer
        /// would have done in the same silences: min_rto, max_rto, initial_rto, alpha,
        /// beta, k, granularity (rfc6298), hz, tlp (linux). RFC 6298's floors (1 s, and 60 s
        /// for max_rto) hold unless `--set nonconformant=true`. See docs/commands.md,
        /// "Replaying a capture".
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
        /// Write `trace.csv`, `stalls.csv` (each stall measured against the profile's
        /// timer), the RTO figure `rto.png`/`rto.svg` and `report.md` into this directory
        /// instead of printing the rows.
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// With `--out`: a log of `ss -tin` polls on the sender (each after a line holding
        /// the time, as `rto ss` reads; `-n` keeps ports numeric, as the capture has them),
        /// whose `rto:` the figure and report set beside the derived RTO.
        #[arg(long, value_name = "LOG", requires = "out")]
        ss: Option<PathBuf>,
        /// No progress bar and no note of what was written on stderr.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Read a log of `ss -ti` snapshots (each poll after a line holding the time in
    /// seconds, as `date +%s.%N` prints it) and print the kernel's own RTO, SRTT, RTTVAR,
    /// backoff and window for each connection in each poll as CSV.
    Ss {
        /// The log: what `while sleep 0.05; do date +%s.%N; ss -tin; done` writes.
        file: PathBuf,
        /// Only this connection, by its two ends as `ss` prints them, in either order.
        #[arg(long, value_name = "A:PORT-B:PORT")]
        flow: Option<String>,
    },
}

pub fn rto(command: RtoCommand) -> Result<(), CliError> {
    match command {
        RtoCommand::Replay { file, profile, sets } => {
            let params = params(&profile, &sets, ("a replay", "a replay drives the estimator alone"), &[])?;
            let input: Box<dyn std::io::Read> = if file.as_os_str() == "-" {
                Box::new(std::io::stdin().lock())
            } else {
                Box::new(
                    std::fs::File::open(&file)
                        .map_err(|e| CliError::Usage(format!("cannot read {}: {e}", file.display())))?,
                )
            };
            let stdout = std::io::stdout().lock();
            replay(input, stdout, &params).map_err(|e| match e {
                ReplayError::Write(e) => CliError::from_stdout(e),
                other => CliError::Usage(format!("{}: {other}", file.display())),
            })
        }
        RtoCommand::Capture { file, flow, profile, sets, out, ss, quiet } => {
            // `tlp` is the one sender key a capture reads: whether the linux sender it
            // follows (and the profile's timer in a stall) probes before its RTO.
            let params = params(&profile, &sets, ("a capture", "a capture shows what the sender did"), &["tlp"])?;
            if params.tlp && profile == "rfc6298" {
                // The probe is read the way Linux's sender runs it; RFC 6298 has none.
                return Err(CliError::Usage(
                    "--set tlp=true: has no effect under --profile rfc6298: a tail loss probe is read as Linux's \
                     sender sends it (tcp_schedule_loss_probe); use --profile linux"
                        .into(),
                ));
            }
            let mut asked = format!("profile {profile}");
            for s in &sets {
                asked.push_str(", ");
                asked.push_str(s);
            }
            let mut req = super::capture::Request {
                file: &file,
                flow: flow.as_deref(),
                params: &params,
                asked,
                out: out.as_deref(),
                ss: ss.as_deref(),
                quiet,
                backwards: 0,
                reused: None,
            };
            super::capture::capture(&mut req)
        }
        RtoCommand::Ss { file, flow } => super::ss_log::ss(&file, flow.as_deref()),
    }
}

/// The estimator's parameters from `--profile` and `--set`.
fn params(profile: &str, sets: &[String], why: (&str, &str), read: &[&str]) -> Result<RtoParams, CliError> {
    let base = format!("profile = \"{}\"", parse_profile(profile)?);
    let sets = Set::parse_all(sets).map_err(CliError::Usage)?;
    // A key given twice would leave the report listing both while only the last counts.
    if let Some(s) = sets.iter().enumerate().find_map(|(i, s)| sets[..i].iter().any(|t| t.key == s.key).then_some(s)) {
        return Err(CliError::Usage(format!("--set {}: given twice; give each key once", s.key)));
    }
    if sets.iter().any(|s| s.key == "profile") {
        return Err(CliError::Usage(
            "--set profile: the profile is chosen with --profile rfc6298|linux; --set changes its constants".into(),
        ));
    }
    refuse_sender_keys(&sets, why, read)?;
    let config: RtoConfig = sets::apply(sets::base(&base), &sets).map_err(|e| CliError::Usage(e.join("\n")))?;
    config.resolve().map_err(|errors| {
        let lines: Vec<String> = errors
            .into_iter()
            .map(|e| {
                format!(
                    "--set {}: {}",
                    e.key,
                    // The scenario file's wording, said as this command line says it.
                    e.message.replace("set nonconformant = true", "add --set nonconformant=true")
                )
            })
            .collect();
        CliError::Usage(lines.join("\n"))
    })
}

/// Keys the TCP sender reads, not the estimator: a replay feeds samples and expiries
/// straight in, so they would change nothing and are refused rather than ignored.
const SENDER_KEYS: &[&str] =
    &["karn", "timestamps", "sample_every_ack", "syn_retries", "retries2", "tlp", "frto", "user_timeout"];

fn refuse_sender_keys(sets: &[Set], (what, why): (&str, &str), read: &[&str]) -> Result<(), CliError> {
    let lines: Vec<String> = sets
        .iter()
        .filter(|s| SENDER_KEYS.contains(&s.key.as_str()) && !read.contains(&s.key.as_str()))
        .map(|s| {
            format!(
                "--set {}: has no effect on {what}: the TCP sender reads it (which segments to sample, when \
                 to probe or give up), and {why}",
                s.key
            )
        })
        .collect();
    if lines.is_empty() { Ok(()) } else { Err(CliError::Usage(lines.join("\n"))) }
}

fn parse_profile(name: &str) -> Result<RtoProfile, CliError> {
    match name {
        "rfc6298" => Ok(RtoProfile::Rfc6298),
        "linux" => Ok(RtoProfile::Linux),
        other => Err(CliError::Usage(format!(
            "--profile: {}",
            backoffsim_core::suggest::unknown("profile", other, ["rfc6298", "linux"], None)
        ))),
    }
}
