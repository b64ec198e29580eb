//! `rto capture --ss LOG`: the kernel's own RTO beside the one derived from the capture.
//! The log is `ss -ti` polled with the time before each poll (`rto ss` reads the same);
//! the sender's socket is the connection whose local end is the capture's data sender.
//! A poll's wall-clock time is set on the capture's clock (both are the machine's), and
//! compared with the estimator's RTO after the last row before it, as the kernel's
//! `tcpi_rto` is the timer as it stands.
//!
//! The log is read on a thread of its own, a poll at a time through a short queue, as the
//! capture is replayed: neither file is held in memory.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, sync_channel};

use backoffsim_capture::flow::Flow;
use backoffsim_capture::ss::{Unread, endpoint, read_snapshots};
use backoffsim_core::engine::time::SimDuration;
use backoffsim_report::plot::rto::CaptureTrace;

use super::CliError;

/// Polls queued between the log's reader and the replay.
const QUEUE: usize = 1024;

/// One poll of the sender's socket: nanoseconds from the flow's first packet, `tcpi_rto`.
type Poll = (u64, SimDuration);

/// How the derived RTO compared with the kernel's.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Agreement {
    pub polls: u64,
    pub within: u64,
    /// The largest difference, and the poll's time from the flow's first packet.
    pub worst: Option<(SimDuration, u64)>,
    pub tolerance: SimDuration,
}

pub(super) struct Kernel {
    polls: Receiver<Result<Poll, String>>,
    next: Option<Poll>,
    done: bool,
    pub error: Option<String>,
    pub agreement: Agreement,
    named: Arc<AtomicBool>,
}

impl Kernel {
    /// Starts reading `log` for the polls of `flow`'s sender within the flow's span.
    pub fn start(log: &Path, flow: &Flow, tolerance: SimDuration) -> Result<Kernel, CliError> {
        let file = std::fs::File::open(log)
            .map_err(|e| CliError::Usage(format!("--ss {}: cannot read: {e}", log.display())))?;
        let (tx, rx) = sync_channel(QUEUE);
        let (sender, receiver) = (flow.sender, flow.receiver());
        let (first, last) = (flow.first_ns, flow.last_ns);
        let shown = log.display().to_string();
        let named = Arc::new(AtomicBool::new(false));
        let named_ports = Arc::clone(&named);
        std::thread::spawn(move || {
            let mut open = true;
            let read = read_snapshots(std::io::BufReader::new(file), |s| {
                let (local, peer) = (endpoint(&s.local), endpoint(&s.peer));
                if matches!((&local, &peer), (Err(Unread::NamedPort), _) | (_, Err(Unread::NamedPort))) {
                    named_ports.store(true, Ordering::Relaxed);
                }
                let ours = local == Ok(sender) && peer == Ok(receiver);
                let (Some(t), Some(rto)) = (s.time_ns, s.rto) else { return };
                if open && ours && (first..=last).contains(&t) {
                    // The replay stopped early (an error): nothing more to send it.
                    open = tx.send(Ok((t - first, rto))).is_ok();
                }
            });
            if let Err(e) = read {
                let _ = tx.send(Err(format!("--ss {shown}: {e}")));
            }
        });
        Ok(Kernel {
            polls: rx,
            next: None,
            done: false,
            error: None,
            agreement: Agreement { tolerance, ..Agreement::default() },
            named,
        })
    }

    /// Whether the log gave a port by its service name (`ss` without `-n`), so that no
    /// poll could be matched to the capture's numbers. Read once the log is drained.
    pub fn named_ports(&self) -> bool {
        self.named.load(Ordering::Relaxed)
    }

    fn peek(&mut self) -> Option<Poll> {
        if self.next.is_none() && !self.done {
            match self.polls.recv() {
                Ok(Ok(p)) => self.next = Some(p),
                Ok(Err(e)) => {
                    self.error.get_or_insert(e);
                    self.done = true;
                }
                Err(_) => self.done = true,
            }
        }
        self.next
    }

    /// Compares every poll before `ns` with `rto`, the estimator's RTO until then.
    pub fn before(&mut self, ns: u64, rto: SimDuration, trace: &mut CaptureTrace) {
        while let Some((t, kernel)) = self.peek().filter(|p| p.0 < ns) {
            self.next = None;
            let a = &mut self.agreement;
            a.polls += 1;
            let diff = SimDuration(kernel.as_nanos().abs_diff(rto.as_nanos()));
            if diff <= a.tolerance {
                a.within += 1;
            }
            if a.worst.is_none_or(|w| diff > w.0) {
                a.worst = Some((diff, t));
            }
            trace.kernel(t as f64 * 1e-9, kernel.as_secs_f64());
        }
    }
}
