//! F-RTO, detecting a spurious retransmission timeout from the ACKs that follow it
//! (RFC 5682; Linux `tcp_process_loss`, "F-RTO RFC5682 sec 3.1 (sack enhanced
//! version)", on with `net.ipv4.tcp_frto` = 2).
//!
//! After a timeout the sender retransmits the first unacknowledged segment. When the ACK
//! of that retransmission advances the window without covering everything sent before
//! the timeout, F-RTO sends new data instead of retransmitting more (step 2b). If the
//! next ACK then acknowledges a segment that was never retransmitted, the original
//! transmissions were only delayed: the timeout was spurious (step 3b) and the sender
//! undoes its loss recovery. A duplicate ACK instead means the loss was real (step 3a).
//!
//! What the undo restores is Linux's `tcp_try_undo_loss`: the congestion window, the
//! segments marked lost (no more retransmissions of them) and the give-up count
//! (`icsk_retransmits = 0`). It does not touch the RTO: in the kernel as in RFC 6298 (5.7
//! note) only a valid RTT sample ends the backoff (`tcp_ack_update_rtt`), and the ACK of a
//! never-retransmitted segment that detects the spurious timeout is such a sample. That
//! sample is F-RTO's effect on the timer: without F-RTO every outstanding segment is
//! retransmitted, Karn's rule then forbids sampling their ACKs, and the doubled RTO stays
//! until new data is acknowledged. RFC 5682 section 4 leaves the timer response to
//! separate algorithms (RFC 4015); none is modelled.
//!
//! Under the linux profile `orig_acked` also holds for a duplicate ACK whose SACK block
//! newly covers a never-retransmitted segment below `high` (`tcp_sacktag_one`). Not
//! modelled: a full SACK scoreboard (one block per duplicate ACK) and Linux's
//! timestamp-based undo that runs before F-RTO (`tcp_may_undo` / `tcp_packet_delayed`,
//! RFC 3522): with timestamps it can undo one ACK earlier; it saves no retransmission
//! that F-RTO's step 2b does not also save.

/// What one ACK in the loss state tells F-RTO.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LossAck {
    /// `high_seq`: snd_nxt when the timeout fired, or when step 2b last moved it.
    pub high: u64,
    /// The highest segment sent so far (Linux snd_nxt), after this ACK.
    pub snd_max: u64,
    /// snd_una after this ACK.
    pub snd_una: u64,
    /// The ACK advanced snd_una (FLAG_SND_UNA_ADVANCED).
    pub advanced: bool,
    /// The ACK was a duplicate (num_dupack).
    pub dupack: bool,
    /// It newly acknowledged a never-retransmitted segment below `high`
    /// (FLAG_ORIG_SACK_ACKED).
    pub orig_acked: bool,
    /// New data could go out now: some is waiting and the window has room beyond snd_max.
    pub can_send_new: bool,
}

/// F-RTO's decision on one ACK, in `tcp_process_loss` order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Step 3b: the timeout was spurious; undo the recovery.
    Spurious,
    /// Step 2b: set `high` to snd_max and send new data instead of retransmitting.
    SendNew,
    /// F-RTO is over for this timeout (steps 2b without new data, 3a); conventional
    /// recovery goes on.
    Off,
    /// Nothing decided yet (e.g. an ACK that neither advances nor duplicates).
    Wait,
}

pub fn on_loss_ack(a: LossAck) -> Verdict {
    let recovered = a.snd_una >= a.high;
    // Step 3.b. "A timeout is spurious if not all data are lost, i.e., never-retransmitted
    // data are (s)acked."
    if a.orig_acked {
        return Verdict::Spurious;
    }
    if a.snd_max > a.high {
        // after(tp->snd_nxt, tp->high_seq): new data went out in step 2b.
        // "Step 3.a. loss was real"
        if a.dupack {
            return Verdict::Off;
        }
    } else if a.advanced && !recovered {
        // "Step 2.b. Try send new data ... Otherwise fall back to the conventional recovery."
        return if a.can_send_new { Verdict::SendNew } else { Verdict::Off };
    }
    Verdict::Wait
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ACK of the retransmission after a timeout with segments 0..10 outstanding.
    fn first_ack() -> LossAck {
        LossAck {
            high: 10,
            snd_max: 10,
            snd_una: 1,
            advanced: true,
            dupack: false,
            orig_acked: false,
            can_send_new: true,
        }
    }

    #[test]
    fn rfc5682_step_2b_the_ack_of_the_retransmission_sends_new_data() {
        assert_eq!(on_loss_ack(first_ack()), Verdict::SendNew);
        // Nothing new to send (or no window): conventional recovery.
        assert_eq!(on_loss_ack(LossAck { can_send_new: false, ..first_ack() }), Verdict::Off);
    }

    #[test]
    fn rfc5682_step_3b_an_ack_of_never_retransmitted_data_declares_the_timeout_spurious() {
        let second = LossAck { snd_max: 12, snd_una: 2, orig_acked: true, ..first_ack() };
        assert_eq!(on_loss_ack(second), Verdict::Spurious);
        // Even on the first ACK, when it also covers segments never retransmitted.
        assert_eq!(on_loss_ack(LossAck { snd_una: 5, orig_acked: true, ..first_ack() }), Verdict::Spurious);
    }

    #[test]
    fn rfc5682_step_3a_a_duplicate_ack_after_the_new_data_means_the_loss_was_real() {
        let dup = LossAck { snd_max: 12, advanced: false, dupack: true, ..first_ack() };
        assert_eq!(on_loss_ack(dup), Verdict::Off);
    }

    #[test]
    fn rfc5682_step_2a_an_ack_covering_everything_sent_before_the_timeout_is_no_evidence() {
        // The retransmission's ACK covers high_seq: recovery ends, nothing to undo.
        let all = LossAck { snd_una: 10, ..first_ack() };
        assert_eq!(on_loss_ack(all), Verdict::Wait);
    }
}
