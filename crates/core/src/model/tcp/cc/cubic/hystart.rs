//! HyStart, CUBIC's exit from slow start before the first loss (Linux `tcp_cubic.c`:
//! `hystart_update`, `bictcp_hystart_reset`; Ha and Rhee, "Taming the elephants", 2011).
//! Once cwnd reaches 16 segments, slow start ends (ssthresh = cwnd) when, within one
//! round, either the ACK train (ACKs at most 2 ms apart) has lasted more than half the
//! minimum RTT, or the smallest of the round's first eight RTT samples exceeds the minimum
//! RTT by an eighth of it, clamped to 4–16 ms.
//!
//! `hystart_ack_delay`'s cushion is min(1 ms, 4·GSO_MAX_SIZE/pacing rate); the 1 ms cap
//! holds for every pacing rate under 262 MB/s, so it is taken as 1 ms. The ACK-train
//! threshold is halved as with `SK_PACING_NONE` (no fq qdisc).

/// `hystart_low_window`: no detection below 16 segments.
const LOW_WINDOW: u32 = 16;
/// `hystart_ack_delta_us`: ACKs this close belong to one train.
const ACK_DELTA_US: u32 = 2_000;
/// `HYSTART_MIN_SAMPLES`: RTT samples taken per round before the delay test.
const MIN_SAMPLES: u32 = 8;
/// `HYSTART_DELAY_MIN`, `HYSTART_DELAY_MAX`: the clamp on delay_min/8.
const DELAY_MIN_US: u32 = 4_000;
const DELAY_MAX_US: u32 = 16_000;
/// `hystart_ack_delay` at its 1 ms cap.
const ACK_DELAY_US: u32 = 1_000;

/// Where the sender's sequence space stands, in segments: what this ACK acknowledged up
/// to, and the next segment to send. HyStart's rounds are counted with them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Round {
    pub snd_una: u64,
    pub snd_nxt: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct HyStart {
    pub(super) found: bool,
    round_start: u32,
    last_ack: u32,
    end_seq: u64,
    curr_rtt: u32,
    sample_cnt: u32,
}

impl Default for HyStart {
    fn default() -> Self {
        HyStart { found: false, round_start: 0, last_ack: 0, end_seq: 0, curr_rtt: u32::MAX, sample_cnt: 0 }
    }
}

impl HyStart {
    /// `bictcp_hystart_reset`: a new round starts now and ends once `snd_nxt` is acked.
    fn reset(&mut self, now_us: u32, snd_nxt: u64) {
        self.round_start = now_us;
        self.last_ack = now_us;
        self.end_seq = snd_nxt;
        self.curr_rtt = u32::MAX;
        self.sample_cnt = 0;
    }

    /// `hystart_update` with an RTT sample `delay` (µs): true when slow start should end.
    pub(super) fn update(&mut self, now_us: u32, delay: u32, delay_min: u32, cwnd: u32, round: Round) -> bool {
        // if (after(tp->snd_una, ca->end_seq)) bictcp_hystart_reset(sk);
        if round.snd_una > self.end_seq {
            self.reset(now_us, round.snd_nxt);
        }
        if cwnd < LOW_WINDOW {
            return false;
        }
        // HYSTART_ACK_TRAIN
        if (now_us.wrapping_sub(self.last_ack) as i32) <= ACK_DELTA_US as i32 {
            self.last_ack = now_us;
            let threshold = delay_min.saturating_add(ACK_DELAY_US) >> 1;
            if (now_us.wrapping_sub(self.round_start) as i32) > threshold as i32 {
                self.found = true;
                return true;
            }
        }
        // HYSTART_DELAY
        self.curr_rtt = self.curr_rtt.min(delay);
        if self.sample_cnt < MIN_SAMPLES {
            self.sample_cnt += 1;
        } else if self.curr_rtt > delay_min.saturating_add((delay_min >> 3).clamp(DELAY_MIN_US, DELAY_MAX_US)) {
            self.found = true;
            return true;
        }
        false
    }
}
