//! TCP over a path: a sender with RFC 6298's retransmission timer and a receiver
//! returning cumulative ACKs. What a scenario writes under `[tcp]` is the tcp world's
//! (`worlds::tcp::TcpConfig`); the sender takes its [`SenderOptions`].

pub mod cc;
pub mod delack;
pub mod frto;
pub mod keepalive;
pub mod persist;
pub mod rack;
pub mod receiver;
pub mod scoreboard;
pub mod segment;
pub mod sender;
pub mod synack;
pub mod tlp;

pub use keepalive::{Keepalive, KeepaliveParams};
pub use receiver::TcpReceiver;
pub use segment::{Sack, Segment};
pub use sender::{
    Action, CaState, CcView, CongestionKind, LossDetection, Observation, ObservationKind, SenderOptions, Supply,
    TcpSender,
};
pub use synack::{RequestSock, SynAckParams};

#[cfg(test)]
mod drive;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_kernel;
#[cfg(test)]
mod tests_recovery;
