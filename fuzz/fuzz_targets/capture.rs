//! `backoffsim rto capture`'s read path: any bytes as a pcap or pcapng file, its TCP
//! segments grouped into connections, and each connection replayed from its sender's side
//! through both estimator profiles, its stalls weighed against each profile's timer. Every
//! input must end in segments or a `CaptureError`, and every stall must be well formed.
#![no_main]

use std::path::Path;

use backoffsim::model::rto::RtoProfile;
use backoffsim_capture::synth;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (segments, flows, _) = synth::read_all(Path::new("fuzz.pcap"), data);
    synth::replay_all(&segments, &flows, &[RtoProfile::Rfc6298, RtoProfile::Linux]);
});
