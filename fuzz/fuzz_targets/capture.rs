//! `backoffsim rto capture`'s read path: any bytes as a pcap or pcapng file, its TCP
//! segments grouped into connections, and each connection replayed from its sender's side
//! through both estimator profiles. Every input must end in segments or a `CaptureError`.
#![no_main]

use std::path::Path;

use backoffsim::model::rto::{RtoConfig, RtoProfile};
use backoffsim_capture::flow::Flows;
use backoffsim_capture::reader::Capture;
use backoffsim_capture::sender_view::SenderView;
use libfuzzer_sys::fuzz_target;

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
            let mut view = SenderView::new(flow.sender, flow.receiver(), flow.first_ns, &params, std::io::sink())
                .expect("a sink takes the header");
            for seg in &segments {
                view.add(seg).expect("a sink takes every row");
            }
            view.finish().expect("a sink flushes");
        }
    }
});
