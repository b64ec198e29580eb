//! Delayed ACKs at the receiver, as Linux sends them (RFC 1122 4.2.3.2, RFC 5681 4.2).
//!
//! The receiver acknowledges at once when more than one full-sized segment is
//! unacknowledged (every second segment), when data arrives out of order, fills a hole
//! or repeats data already received, and while it is in quick-ack mode (the first
//! segments of a connection, `tcp_incr_quickack`); otherwise it arms the delayed-ACK
//! timer at the ACK timeout `ato` (`tcp_send_delayed_ack`), which adapts to the gaps
//! between arrivals (`tcp_event_data_recv`) and doubles each time the timer has to fire
//! (`tcp_delack_timer_handler`). Times are kept in jiffies: the timer expires on a tick
//! of the kernel's clock, not a fixed delay after the arrival.
//!
//! Left out: pingpong (interactive) mode, since the modelled peer never sends data;
//! compressed SACK (`tcp_comp_sack_nr`: here every out-of-order arrival is ACKed at
//! once, as for the first three duplicates in Linux); `ICSK_ACK_PUSHED` (segments are
//! full-sized); the timer wheel's coarser slots beyond 63 jiffies; `TCP_QUICKACK` and the
//! route's `quickack` metric.

use crate::engine::time::{NANOS_PER_SEC, SimDuration, SimTime};

/// include/net/tcp.h: `TCP_MAX_QUICKACKS`, the most ACKs quick-ack mode sends at once.
pub const TCP_MAX_QUICKACKS: u32 = 16;

/// What the receiver made of one data segment, as far as when to ACK is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// New data at RCV.NXT, with no hole behind it.
    InOrder,
    /// Data above a hole (`tcp_data_queue_ofo`).
    OutOfOrder,
    /// Data at RCV.NXT while segments above it are held: a hole (partly) filled.
    HoleFilled,
    /// Data already received, or beyond the window (`tcp_data_queue`'s retransmit and
    /// out_of_window cases).
    Duplicate,
}

/// When the ACK for an arrival goes out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckTiming {
    Now,
    /// Held: the delayed-ACK timer expires at this time.
    Delayed(SimTime),
}

/// What the receiver knows of the connection that bounds its timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DelAckParams {
    /// Jiffies per second.
    pub hz: u32,
    /// The receiver's own SRTT (from the handshake), which caps `ato` (`tp->srtt_us`).
    pub srtt: Option<SimDuration>,
    /// The receiver's own RTO (`icsk_rto`): `ato` never exceeds it, and a gap longer than
    /// it puts the receiver back in quick-ack mode.
    pub rto: SimDuration,
    /// The receive window in segments (`u64::MAX` unlimited), which sets how many
    /// quick ACKs are given.
    pub window: u64,
}

impl DelAckParams {
    /// The receiver's estimator after the handshake's one sample `rtt`: `tcp_rtt_estimator`
    /// sets SRTT = m and mdev = 2m, and `tcp_set_rto` gives SRTT + max(mdev, `TCP_RTO_MIN`
    /// 200 ms).
    pub fn after_handshake(hz: u32, rtt: SimDuration, window: u64) -> Self {
        let rto = rtt + (rtt + rtt).max(SimDuration::from_millis(200));
        DelAckParams { hz, srtt: Some(rtt), rto, window }
    }

    /// Without a handshake sample: no SRTT and `TCP_TIMEOUT_INIT`, 1 s.
    pub fn unsampled(hz: u32, window: u64) -> Self {
        DelAckParams { hz, srtt: None, rto: SimDuration::from_secs(1), window }
    }
}

#[derive(Clone, Debug)]
pub struct DelAck {
    hz: u64,
    /// `tp->srtt_us >> 3` in jiffies (`usecs_to_jiffies`, at least `TCP_DELACK_MIN`).
    srtt_j: Option<u64>,
    rto_j: u64,
    quick_max: u32,
    /// `icsk_ack.ato` in jiffies; 0 before the first data (`tcp_event_data_recv`).
    ato: u64,
    /// `icsk_ack.lrcvtime`: the jiffy of the last in-order data.
    lrcvtime: u64,
    /// `icsk_ack.quick`: quick ACKs left.
    quick: u32,
    /// Full segments received and not yet acknowledged (`rcv_nxt - rcv_wup`).
    unacked: u64,
    /// `icsk_ack.timeout` in jiffies while `ICSK_ACK_TIMER` is set.
    timer: Option<u64>,
    /// An ACK is owed for data received (`inet_csk_ack_scheduled`).
    scheduled: bool,
}

impl DelAck {
    pub fn new(p: DelAckParams) -> Self {
        let hz = u64::from(p.hz.max(1));
        let to_j = |d: SimDuration| (u128::from(d.as_nanos()) * u128::from(hz)).div_ceil(u128::from(NANOS_PER_SEC));
        // tcp_incr_quickack: rcv_wnd / (2 * rcv_mss), 2 if that is 0, at most 16.
        let quick = (p.window / 2).clamp(2, u64::from(TCP_MAX_QUICKACKS)) as u32;
        DelAck {
            hz,
            srtt_j: p.srtt.map(|s| (to_j(s) as u64).max(hz / 25)),
            rto_j: to_j(p.rto) as u64,
            quick_max: quick,
            ato: 0,
            lrcvtime: 0,
            quick: 0,
            unacked: 0,
            timer: None,
            scheduled: false,
        }
    }

    fn jiffies(&self, t: SimTime) -> u64 {
        (u128::from(t.as_nanos()) * u128::from(self.hz) / u128::from(NANOS_PER_SEC)) as u64
    }

    fn at(&self, j: u64) -> SimTime {
        SimTime((u128::from(j) * u128::from(NANOS_PER_SEC)).div_ceil(u128::from(self.hz)) as u64)
    }

    /// When the delayed-ACK timer expires, if it is armed.
    pub fn timer(&self) -> Option<SimTime> {
        self.timer.map(|j| self.at(j))
    }

    /// The current `ato`, for tests and traces.
    pub fn ato(&self) -> SimDuration {
        SimDuration::from_nanos((u128::from(self.ato) * u128::from(NANOS_PER_SEC) / u128::from(self.hz)) as u64)
    }

    fn incr_quickack(&mut self) {
        self.quick = self.quick.max(self.quick_max);
    }

    /// `tcp_event_data_recv`: the ato estimator, run for new in-order data.
    fn data_recv(&mut self, now: u64) {
        let ato_min = self.hz / 25; // TCP_ATO_MIN = HZ / 25
        if self.ato == 0 {
            // The first data: quick-ack mode and ato = TCP_ATO_MIN.
            self.quick = self.quick.max(self.quick_max);
            self.ato = ato_min;
        } else {
            let m = now - self.lrcvtime;
            if m <= ato_min / 2 {
                self.ato = self.ato / 2 + ato_min / 2;
            } else if m < self.ato {
                self.ato = (self.ato / 2 + m).min(self.rto_j);
            } else if m > self.rto_j {
                // "Too long gap": the sender restarted; ACK quickly again.
                self.incr_quickack();
            }
        }
        self.lrcvtime = now;
    }

    /// A data segment arrived that delivered `delivered` new in-order segments; `edge_moves`
    /// is false while the application is not reading (the window's right edge stays put,
    /// so `__tcp_select_window` does not reach `rcv_wnd`). Returns when to ACK it; an
    /// immediate ACK counts as sent.
    pub fn on_data(&mut self, now: SimTime, arrival: Arrival, delivered: u64, edge_moves: bool) -> AckTiming {
        let j = self.jiffies(now);
        let mut ack_now = false;
        self.scheduled = true; // inet_csk_schedule_ack
        match arrival {
            Arrival::InOrder => self.data_recv(j),
            Arrival::HoleFilled => {
                self.data_recv(j);
                // RFC 5681 4.2 / tcp_data_queue: "SHOULD send immediate ACK, when gap in
                // queue is filled" (ICSK_ACK_NOW); a partial fill leaves segments queued
                // and is ACKed at once as a duplicate carrying SACK.
                ack_now = true;
            }
            // __tcp_ack_snd_check with the out-of-order queue non-empty: ACKed at once.
            Arrival::OutOfOrder => ack_now = true,
            Arrival::Duplicate => {
                // tcp_enter_quickack_mode(sk, TCP_MAX_QUICKACKS): "Force an immediate ack".
                self.incr_quickack();
                self.ato = self.hz / 25;
                ack_now = true;
            }
        }
        self.unacked += delivered;
        // __tcp_ack_snd_check: more than one full frame unacknowledged (and the window's
        // right edge advances), or quick-ack mode, or ICSK_ACK_NOW.
        if (self.unacked > 1 && edge_moves) || self.quick > 0 || ack_now {
            self.ack_sent();
            return AckTiming::Now;
        }
        self.send_delayed(j)
    }

    /// `tcp_send_delayed_ack`.
    fn send_delayed(&mut self, now: u64) -> AckTiming {
        let mut ato = self.ato;
        if ato > self.hz / 25 {
            // TCP_DELACK_MIN = HZ / 25; max_ato = HZ / 2, bounded by the RTT measured but
            // never below TCP_DELACK_MIN (`max(tp->srtt >> 3, TCP_DELACK_MIN)`).
            let mut max_ato = self.hz / 2;
            if let Some(rtt) = self.srtt_j {
                max_ato = max_ato.min(rtt.max(self.hz / 25));
            }
            ato = ato.min(max_ato);
        }
        ato = ato.min(self.hz / 5); // icsk_delack_max = TCP_DELACK_MAX = HZ / 5
        let mut timeout = now + ato;
        if let Some(old) = self.timer {
            // "If delack timer is about to expire, send ACK now."
            if old <= now + ato / 4 {
                self.ack_sent();
                return AckTiming::Now;
            }
            timeout = timeout.min(old);
        }
        self.timer = Some(timeout);
        AckTiming::Delayed(self.at(timeout))
    }

    /// `tcp_delack_timer_handler`: the timer expired with an ACK still owed. Returns
    /// whether to send it; `ato` doubles, up to the RTO ("Delayed ACK missed").
    pub fn on_timer(&mut self, now: SimTime) -> bool {
        match self.timer {
            Some(j) if self.at(j) <= now => {
                self.ato = (self.ato * 2).min(self.rto_j);
                self.ack_sent();
                true
            }
            _ => false,
        }
    }

    /// Any ACK went out (`tcp_event_ack_sent`): nothing is owed, the timer stops, and
    /// one quick ACK is used up (`tcp_dec_quickack_mode`, which deflates ato on leaving).
    pub fn ack_sent(&mut self) {
        let scheduled = std::mem::take(&mut self.scheduled);
        self.unacked = 0;
        self.timer = None;
        if self.quick > 0 && scheduled {
            self.quick -= 1;
            if self.quick == 0 {
                self.ato = self.hz / 25;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_millis(n)
    }

    /// HZ 1000, a 100 ms handshake, an unlimited window: 16 quick ACKs.
    fn linux() -> DelAck {
        DelAck::new(DelAckParams::after_handshake(1000, SimDuration::from_millis(100), u64::MAX))
    }

    /// Past quick-ack mode: the 16 quick ACKs used up by 16 segments 100 ms apart.
    fn settled() -> DelAck {
        let mut d = linux();
        for k in 0..16 {
            assert_eq!(d.on_data(ms(100 * k), Arrival::InOrder, 1, true), AckTiming::Now, "quick ACK {k}");
        }
        d
    }

    #[test]
    fn tcp_incr_quickack_gives_the_first_segments_an_ack_each() {
        // tcp_event_data_recv on the first data: tcp_incr_quickack(sk, TCP_MAX_QUICKACKS)
        // with rcv_wnd / (2 * mss) = 20 / 2 = 10 for a 20-segment window: the first 10
        // segments, 100 ms apart, are ACKed at once; the 11th waits for the timer.
        let mut d = DelAck::new(DelAckParams::after_handshake(1000, SimDuration::from_millis(100), 20));
        for k in 0..10 {
            assert_eq!(d.on_data(ms(100 * k), Arrival::InOrder, 1, true), AckTiming::Now);
        }
        assert_eq!(d.on_data(ms(1000), Arrival::InOrder, 1, true), AckTiming::Delayed(ms(1040)));
        // A window under two segments still gets 2 (`if (quickacks == 0) quickacks = 2`).
        assert_eq!(DelAck::new(DelAckParams::unsampled(1000, 1)).quick_max, 2);
    }

    #[test]
    fn the_rtt_bound_on_ato_is_never_below_tcp_delack_min() {
        // tcp_send_delayed_ack: an ato above TCP_DELACK_MIN is bounded by
        // max(srtt, TCP_DELACK_MIN): on a 10 ms path an ato of 80 ms is cut to 40 ms, not
        // to 10. The RTO is 10 + max(20, 200) = 210 ms, so gaps of 100 and 190 ms keep
        // quick-ack mode off and leave ato where the timer put it.
        let mut d = DelAck::new(DelAckParams::after_handshake(1000, SimDuration::from_millis(10), u64::MAX));
        for k in 0..16 {
            assert_eq!(d.on_data(ms(100 * k), Arrival::InOrder, 1, true), AckTiming::Now, "quick ACK {k}");
        }
        assert_eq!(d.on_data(ms(1600), Arrival::InOrder, 1, true), AckTiming::Delayed(ms(1640)));
        assert!(d.on_timer(ms(1640)));
        assert_eq!(d.ato(), SimDuration::from_millis(80));
        assert_eq!(d.on_data(ms(1790), Arrival::InOrder, 1, true), AckTiming::Delayed(ms(1830)));
    }

    #[test]
    fn a_single_segment_waits_tcp_delack_min_then_the_timer_acks_it_and_doubles_ato() {
        // tcp_send_delayed_ack with ato = TCP_ATO_MIN (reset on leaving quick mode,
        // tcp_dec_quickack_mode) = 40 jiffies at HZ 1000: timer at 1600 + 40 = 1640 ms.
        let mut d = settled();
        assert_eq!(d.on_data(ms(1600), Arrival::InOrder, 1, true), AckTiming::Delayed(ms(1640)));
        assert!(!d.on_timer(ms(1639)));
        assert!(d.on_timer(ms(1640)));
        assert_eq!(d.timer(), None);
        // tcp_delack_timer_handler: ato = min(ato << 1, icsk_rto) = 80 ms.
        assert_eq!(d.ato(), SimDuration::from_millis(80));
        // The next lone segment at 1840 ms: m = 240 >= ato, not above the RTO (100 +
        // max(200, 200) = 300 ms), ato stays 80, above TCP_DELACK_MIN, so bounded by
        // min(HZ/2, SRTT 100 ms) and TCP_DELACK_MAX: 80 ms, timer at 1920 ms.
        assert_eq!(d.on_data(ms(1840), Arrival::InOrder, 1, true), AckTiming::Delayed(ms(1920)));
    }

    #[test]
    fn every_second_full_segment_is_acked_at_once() {
        // __tcp_ack_snd_check: rcv_nxt - rcv_wup > rcv_mss. Segments 1, 2, 3 arriving
        // 1 ms apart at 1600 ms: 1 arms the timer (1640), 2 makes two unACKed and is ACKed
        // at once, 3 arms the timer again from its own arrival (1602 + 40 = 1642).
        let mut d = settled();
        assert_eq!(d.on_data(ms(1600), Arrival::InOrder, 1, true), AckTiming::Delayed(ms(1640)));
        assert_eq!(d.on_data(ms(1601), Arrival::InOrder, 1, true), AckTiming::Now);
        assert_eq!(d.timer(), None);
        assert_eq!(d.on_data(ms(1602), Arrival::InOrder, 1, true), AckTiming::Delayed(ms(1642)));
        // While the application does not read, the right edge stays put and two
        // segments no longer force the ACK; the earlier timeout is kept.
        assert_eq!(d.on_data(ms(1603), Arrival::InOrder, 1, false), AckTiming::Delayed(ms(1642)));
    }

    #[test]
    fn out_of_order_data_a_filled_hole_and_a_duplicate_are_acked_at_once() {
        // RFC 5681 4.2: "an immediate ACK SHOULD be generated when an out-of-order
        // segment arrives" and when it "fills in all or part of a gap"; tcp_data_queue
        // forces one for a retransmission of data already held.
        let mut d = settled();
        assert_eq!(d.on_data(ms(1600), Arrival::InOrder, 1, true), AckTiming::Delayed(ms(1640)));
        assert_eq!(d.on_data(ms(1601), Arrival::OutOfOrder, 0, true), AckTiming::Now);
        assert_eq!(d.on_data(ms(1602), Arrival::HoleFilled, 2, true), AckTiming::Now);
        assert_eq!(d.on_data(ms(1603), Arrival::Duplicate, 0, true), AckTiming::Now);
        // The duplicate entered quick-ack mode: the next lone segment is ACKed at once.
        assert_eq!(d.on_data(ms(1700), Arrival::InOrder, 1, true), AckTiming::Now);
    }

    #[test]
    fn a_gap_longer_than_the_rto_restores_quick_acks() {
        // tcp_event_data_recv: m > icsk_rto (300 ms) -> tcp_incr_quickack.
        let mut d = settled();
        assert_eq!(d.on_data(ms(1600), Arrival::InOrder, 1, true), AckTiming::Delayed(ms(1640)));
        assert!(d.on_timer(ms(1640)));
        assert_eq!(d.on_data(ms(2600), Arrival::InOrder, 1, true), AckTiming::Now);
    }

    #[test]
    fn the_timer_expires_on_a_jiffy_of_the_kernels_clock() {
        // HZ 250: a segment at 1601.5 ms is in jiffy 400 (1600 ms); timeout = 400 + 10
        // jiffies (TCP_DELACK_MIN = HZ/25) = 410, expiring at 1640 ms, 38.5 ms later.
        let mut d = DelAck::new(DelAckParams::after_handshake(250, SimDuration::from_millis(100), u64::MAX));
        for k in 0..16 {
            d.on_data(ms(100 * k), Arrival::InOrder, 1, true);
        }
        let at = SimTime::ZERO + SimDuration::from_micros(1_601_500);
        assert_eq!(d.on_data(at, Arrival::InOrder, 1, true), AckTiming::Delayed(ms(1640)));
    }
}
