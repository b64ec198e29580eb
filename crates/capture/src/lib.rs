//! What a real connection's sender saw, read from what was captured: packet captures
//! (pcap, pcapng) and the kernel's own `ss -ti` snapshots, turned into RTT samples,
//! retransmissions and timer values that the estimators of `backoffsim-core` can replay.

pub mod flow;
pub mod reader;
pub mod sender_view;
pub mod ss;
pub mod stall;
pub mod synth;
