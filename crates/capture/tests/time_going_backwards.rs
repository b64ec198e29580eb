//! Captures whose timestamps go backwards: a merged capture, a clock stepped while
//! capturing, or a flipped byte. Each reproduces a panic the hostile-capture sweep
//! (`hostile.rs`) and the `capture` fuzz target found in the sender view: an RTT computed
//! as `now - sent` with `now` earlier than `sent` underflows. The sender view must give
//! no sample (or an error), not panic.

use std::net::{IpAddr, Ipv4Addr};
use std::path::Path;

use backoffsim_capture::synth::{self, Packet};
use backoffsim_core::model::rto::RtoProfile;
use pcap_file::DataLink;

const A: (IpAddr, u16) = (IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)), 40000);
const B: (IpAddr, u16) = (IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)), 443);

/// The capture's flows replayed from their sender's side under `profile`, as `backoffsim
/// rto capture` does; the number of RTT samples.
fn replay(bytes: &[u8], profile: RtoProfile) -> u64 {
    let (segments, flows, error) = synth::read_all(Path::new("backwards.pcap"), bytes);
    assert!(error.is_none() && flows.flows.len() == 1, "{error:?}");
    synth::replay_all(&segments, &flows, &[profile])
}

/// `sender_view.rs`, the SYN-ACK's sample `now - first` (RFC 6298 §3's handshake sample):
/// the SYN-ACK stamped before the SYN.
#[test]
fn a_syn_ack_stamped_before_its_syn_gives_no_sample_and_no_panic() {
    let pcap = synth::pcap(
        DataLink::ETHERNET,
        &[Packet::new(2_000_000, A, B, 100, 0).syn(), Packet::new(1_000_000, B, A, 900, 101).syn()],
    );
    for profile in [RtoProfile::Rfc6298, RtoProfile::Linux] {
        assert_eq!(replay(&pcap, profile), 0, "{profile:?}");
    }
}

/// `sender_view.rs`, an ACK stamped before the data it covers: the rfc6298 profile's
/// sample of the one timed segment without timestamps (RFC 6298 §3, Karn), and the linux
/// profile's from the oldest newly acknowledged segment (`tcp_clean_rtx_queue`).
#[test]
fn an_ack_stamped_before_the_data_it_covers_gives_no_sample_and_no_panic() {
    let pcap = synth::pcap(
        DataLink::ETHERNET,
        &[
            Packet::new(1_000_000, A, B, 100, 0).syn(),
            Packet::new(1_010_000, B, A, 900, 101).syn(),
            Packet::new(1_020_000, A, B, 101, 901).payload(1000),
            Packet::new(1_015_000, B, A, 901, 1101),
        ],
    );
    for profile in [RtoProfile::Rfc6298, RtoProfile::Linux] {
        // The handshake's sample only.
        assert_eq!(replay(&pcap, profile), 1, "{profile:?}");
    }
}

/// The smallest input of each of the three kinds the `capture` fuzz target found (all
/// 484 of its crashing inputs panicked at one of these three places), read as
/// `backoffsim rto capture` reads them: every flow, both profiles.
#[test]
fn the_fuzz_targets_crashing_inputs_read_without_panic() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fuzz");
    for name in ["syn-ack-before-syn.bin", "linux-ack-before-data.bin", "rfc6298-ack-before-timed-segment.bin"] {
        let bytes = std::fs::read(dir.join(name)).unwrap();
        let (segments, flows, _) = synth::read_all(Path::new(name), &bytes);
        assert!(!flows.flows.is_empty(), "{name}: no flow");
        synth::replay_all(&segments, &flows, &[RtoProfile::Rfc6298, RtoProfile::Linux]);
    }
}
