//! Hostile captures: the committed kernel captures and a few synthetic ones, cut, flipped
//! and stuffed with garbage in a fixed, seeded way, through the whole read path (reader,
//! flows, a sender view per flow under both profiles). Whatever the bytes, the result is
//! segments or a `CaptureError` naming the file, never a panic. The same path as the
//! `capture` fuzz target, on inputs that do not need a nightly toolchain.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use backoffsim_capture::reader::CaptureError;
use backoffsim_capture::synth::{self, Packet};
use backoffsim_core::model::rto::RtoProfile;
use pcap_file::DataLink;

/// Reads `bytes` as the capture `name`, as `backoffsim rto capture` does, and replays every
/// flow; the number of segments read.
fn read_path(name: &Path, bytes: &[u8]) -> Result<usize, CaptureError> {
    let (segments, flows, error) = synth::read_all(name, bytes);
    // What came before an error is replayed too: the sender view must take any segments.
    synth::replay_all(&segments, &flows, &[RtoProfile::Rfc6298, RtoProfile::Linux]);
    error.map_or(Ok(segments.len()), Err)
}

/// xorshift64*: a fixed sequence from a fixed seed, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn fixtures() -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../validation/linux/captures");
    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "pcap" || x == "pcapng"))
        .collect();
    names.sort();
    assert!(names.len() >= 6, "the kernel captures under {}", dir.display());
    let mut out: Vec<(String, Vec<u8>)> = names
        .iter()
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(p).unwrap()))
        .collect();
    out.extend(synthetic());
    out
}

/// What the kernel captures lack: IPv6, cooked v1, raw IP, two pcapng interfaces with
/// different timestamp resolutions.
fn synthetic() -> Vec<(String, Vec<u8>)> {
    let a = (IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)), 40000);
    let b = (IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)), 443);
    let a6 = (IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1)), 5000);
    let b6 = (IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 2)), 80);
    let talk = |a, b| {
        vec![
            Packet::new(1_000_000, a, b, 100, 0).syn().ts(1, 0),
            Packet::new(1_010_000, b, a, 900, 101).syn().ts(7, 1),
            Packet::new(1_020_000, a, b, 101, 901).payload(1000).ts(2, 7),
            Packet::new(1_030_000, b, a, 901, 1101).ts(8, 2),
            Packet::new(1_400_000, a, b, 101, 901).payload(1000).ts(3, 8).snap(20),
        ]
    };
    let mixed: Vec<(u32, Packet)> =
        talk(a, b).into_iter().map(|p| (0, p)).chain(talk(a6, b6).into_iter().map(|p| (1, p))).collect();
    vec![
        ("synth-ipv6.pcap".into(), synth::pcap(DataLink::ETHERNET, &talk(a6, b6))),
        ("synth-sll.pcap".into(), synth::pcap(DataLink::LINUX_SLL, &talk(a, b))),
        ("synth-raw.pcap".into(), synth::pcap(DataLink::RAW, &talk(a, b))),
        ("synth-two-interfaces.pcapng".into(), synth::pcapng(&[(DataLink::ETHERNET, 6), (DataLink::RAW, 9)], &mixed)),
    ]
}

/// Runs every case, catching panics so that all are reported, each with what reproduces it.
fn check_all(cases: impl Iterator<Item = (String, Vec<u8>)>) -> usize {
    let mut failures = Vec::new();
    let mut count = 0;
    for (name, bytes) in cases {
        count += 1;
        let path = PathBuf::from(&name);
        match catch_unwind(AssertUnwindSafe(|| read_path(&path, &bytes))) {
            Err(_) => failures.push(format!("{name}: panicked")),
            Ok(Err(e)) => {
                let message = e.to_string();
                if !message.starts_with(&format!("{name}: ")) {
                    failures.push(format!("{name}: the error does not name the file: {message}"));
                }
            }
            Ok(Ok(_)) => {}
        }
    }
    assert!(failures.is_empty(), "{} of {count} cases:\n{}", failures.len(), failures.join("\n"));
    count
}

#[test]
fn every_fixture_reads_whole_as_segments() {
    for (name, bytes) in fixtures() {
        let n = read_path(Path::new(&name), &bytes).unwrap_or_else(|e| panic!("{e}"));
        assert!(n >= 5, "{name}: {n} segments");
    }
}

/// A file cut anywhere (a capture still being written, a copy cut short) ends in the
/// segments before the cut, or in an error naming the file, the packet and "truncated".
#[test]
fn captures_cut_at_every_offset_step_end_cleanly() {
    let cases = fixtures().into_iter().flat_map(|(name, bytes)| {
        // Every offset of the first 200 bytes (the file and first record headers), then
        // every 1009th, a prime, so that the cuts fall at every position within a record.
        let offsets: Vec<usize> = (0..bytes.len().min(200)).chain((200..bytes.len()).step_by(1009)).collect();
        offsets.into_iter().map(move |at| (format!("{name}@cut{at}"), bytes[..at].to_vec()))
    });
    assert!(check_all(cases) > 1500);
}

#[test]
fn a_cut_inside_a_record_is_reported_as_truncated() {
    let (name, bytes) = fixtures().into_iter().find(|(n, _)| n == "steady-100ms.pcap").unwrap();
    let cut = &bytes[..bytes.len() - 10];
    let e = read_path(Path::new(&name), cut).unwrap_err().to_string();
    assert!(e.starts_with("steady-100ms.pcap: packet ") && e.contains("truncated"), "{e}");
}

/// Flipped bits anywhere: lengths, link types, magic numbers, IP and TCP headers.
#[test]
fn captures_with_seeded_byte_flips_read_or_fail_with_the_file_named() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut cases = Vec::new();
    for (name, bytes) in fixtures() {
        // Shorter copies mostly, so that a flip lands in a header more often than in a
        // payload and the whole run stays fast.
        for case in 0..200 {
            let keep = if case % 4 == 0 { bytes.len() } else { bytes.len().min(4096) };
            let mut b = bytes[..keep].to_vec();
            for _ in 0..=rng.below(8) {
                let at = if rng.below(2) == 0 { rng.below(b.len().min(64)) } else { rng.below(b.len()) };
                b[at] ^= 1 << rng.below(8);
                if rng.below(4) == 0 {
                    b[at] = [0x00, 0xff, 0x7f, 0x80][rng.below(4)];
                }
            }
            cases.push((format!("{name}@flip{case}"), b));
        }
    }
    assert!(check_all(cases.into_iter()) >= 2000);
}

/// Random bytes inserted or overwritten at random places, and files of nothing but them.
#[test]
fn captures_with_inserted_garbage_read_or_fail_with_the_file_named() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut cases = Vec::new();
    for (name, bytes) in fixtures() {
        for case in 0..100 {
            let mut b = bytes[..bytes.len().min(8192)].to_vec();
            let at = rng.below(b.len());
            let garbage: Vec<u8> = (0..1 + rng.below(64)).map(|_| rng.next() as u8).collect();
            if case % 2 == 0 {
                b.splice(at..at, garbage);
            } else {
                let end = (at + garbage.len()).min(b.len());
                b.splice(at..end, garbage);
            }
            cases.push((format!("{name}@garbage{case}"), b));
        }
    }
    // Bare magic numbers followed by noise: the headers themselves are hostile.
    for magic in [[0xd4, 0xc3, 0xb2, 0xa1], [0xa1, 0xb2, 0x3c, 0x4d], [0x0a, 0x0d, 0x0d, 0x0a]] {
        for case in 0..100 {
            let noise = (0..rng.below(512)).map(|_| rng.next() as u8);
            cases.push((format!("magic{magic:02x?}@noise{case}"), magic.into_iter().chain(noise).collect()));
        }
    }
    assert!(check_all(cases.into_iter()) >= 1300);
}
