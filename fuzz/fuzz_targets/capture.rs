//! `backoffsim rto capture`'s read path: any bytes as a pcap or pcapng file, its TCP
//! segments grouped into connections, and each connection replayed from its sender's side
//! through both estimator profiles, its stalls weighed against each profile's timer. Every
//! input must end in segments or a `CaptureError`, and every stall must be well formed.
#![no_main]

use std::path::Path;

use backoffsim::model::rto::{RtoConfig, RtoProfile};
use backoffsim_capture::flow::Flows;
use backoffsim_capture::reader::Capture;
use backoffsim_capture::sender_view::{Observer, SenderView};
use backoffsim_capture::stall::Stall;
use libfuzzer_sys::fuzz_target;

/// Checks each stall as it ends: the profile's expiries in time order, its recovery span
/// the right way round, no more times kept than retransmissions counted.
struct Stalls;

impl Observer for Stalls {
    fn stall(&mut self, s: &Stall) {
        assert!(s.what_if.expiries.windows(2).all(|w| w[0] <= w[1]), "{s:?}");
        assert!(s.what_if.recovered.is_none_or(|(a, b)| a <= b), "{s:?}");
        assert!(s.sent.len() as u64 <= s.retransmissions && s.what_if.expiries.len() as u64 <= s.what_if.count);
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(mut cap) = Capture::from_reader(Path::new("fuzz.pcap"), std::io::Cursor::new(data.to_vec())) else {
        return;
    };
    let mut segments = Vec::new();
    let mut flows = Flows::default();
    while let Some(Ok(seg)) = cap.next_segment() {
        flows.add(&seg);
        segments.push(seg);
    }
    flows.settle();
    for profile in [RtoProfile::Rfc6298, RtoProfile::Linux] {
        let params = RtoConfig { profile, ..RtoConfig::default() }.resolve().expect("a profile's defaults resolve");
        for flow in flows.flows.values() {
            let mut view =
                SenderView::observed(flow.sender, flow.receiver(), flow.first_ns, &params, std::io::sink(), Stalls)
                    .expect("a sink takes the header");
            for seg in &segments {
                view.add(seg).expect("a sink takes every row");
            }
            view.finish().expect("a sink flushes");
        }
    }
});
