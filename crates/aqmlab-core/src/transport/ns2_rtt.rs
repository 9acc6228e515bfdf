//! ns-2's retransmission timer as the papers ran it (tcp.cc of 1997–2001:
//! `output`, `newack`, `rtt_init`, `rtt_update`, `rtt_timeout`, `rtt_backoff`;
//! without timestamps, `timestamps_ false`, the default).
//!
//! - One packet per round trip is timed: the first new packet sent while no
//!   packet is being timed (`rtt_active_`, `rtt_seq_`, `rtt_ts_`); a timeout or
//!   fast retransmit stops the timing (`reset_rtx_timer`), so retransmissions
//!   are never timed (Karn).
//! - The sample counts the ticks of a coarse clock (`tcpTick_`) that passed
//!   between sending and the ACK: `t_rtt_ = int((tao + fmod(sendtime +
//!   boot_time_, tick)) / tick)`, at least 1, where `boot_time_` is the host
//!   clock's phase, uniform in [0, tick).
//! - SRTT and RTTVAR are integers in ticks with 3 and 2 fraction bits
//!   (`T_SRTT_BITS`, `T_RTTVAR_BITS`), gains 1/8 and 1/4, and
//!   `t_rtxcur_ = ((t_rttvar_ << (rttvar_exp_ + 1) + t_srtt_) >> 3) · tick`,
//!   i.e. floor(SRTT + 4·RTTVAR) ticks (`rttvar_exp_ 2`).
//! - RTO = `t_rtxcur_ · t_backoff_`, at most `maxrto_`, at least `minrto_` and
//!   2 ticks. `t_backoff_` doubles per timeout up to 64; past 8 the SRTT is
//!   discarded, so the next sample starts the estimate afresh. The ACK of the
//!   timed packet resets the back-off.

use crate::time::Time;

/// `T_SRTT_BITS 3`, `T_RTTVAR_BITS 2`, `rttvar_exp_ 2` (ns-default.tcl).
const SRTT_BITS: u32 = 3;
const RTTVAR_BITS: u32 = 2;
const RTTVAR_EXP: u32 = 2;
/// `maxrto_ 100000` seconds (ns-default.tcl): no practical cap.
const MAX_RTO: f64 = 100_000.0;
/// rtt_backoff(): `if (t_backoff_ < 64) t_backoff_ <<= 1`.
const MAX_BACKOFF: u32 = 64;
/// rtt_backoff(): past this multiplier the SRTT is "clobbered".
const CLOBBER_SRTT_ABOVE: u32 = 8;

#[derive(Clone, Debug)]
pub struct Ns2Rtt {
    /// `tcpTick_`, ns.
    tick: Time,
    /// `boot_time_`: phase of the host's tick clock, ns in [0, tick).
    phase: Time,
    /// `rtxcur_init_` and `minrto_`, seconds.
    initial: f64,
    min: f64,
    /// Fixed point, ticks: SRTT·8 (0 = no estimate) and RTTVAR·4.
    t_srtt: i64,
    t_rttvar: i64,
    /// Un-backed-off RTO, seconds.
    t_rtxcur: f64,
    t_backoff: u32,
    /// The packet being timed and when it was sent (`rtt_active_`, `rtt_seq_`, `rtt_ts_`).
    timed: Option<(u64, Time)>,
}

impl Ns2Rtt {
    /// `tick`, `phase`: ns; `initial`, `min`: seconds.
    pub fn new(tick: Time, phase: Time, initial: f64, min: f64) -> Self {
        debug_assert!(phase < tick);
        Ns2Rtt {
            tick,
            phase,
            initial,
            min,
            t_srtt: 0,
            t_rttvar: 0,
            t_rtxcur: initial,
            t_backoff: 1,
            timed: None,
        }
    }

    /// output(): a packet sent for the first time is timed if none is.
    pub fn on_new_packet(&mut self, seq: u64, now: Time) {
        if self.timed.is_none() {
            self.timed = Some((seq, now));
        }
    }

    /// newack(): the cumulative ACK `ack` (next expected) covers the timed packet: take the sample.
    pub fn on_ack(&mut self, ack: u64, now: Time) {
        if let Some((seq, sent)) = self.timed.filter(|&(seq, _)| ack > seq) {
            debug_assert!(ack > seq);
            self.timed = None;
            self.t_backoff = 1;
            self.update(self.ticks_between(sent, now));
        }
    }

    /// NewReno partialnewack(): a partial ACK covering the timed packet ends
    /// the timing and the back-off without a sample.
    pub fn on_partial_ack(&mut self, ack: u64) {
        if self.timed.is_some_and(|(seq, _)| ack > seq) {
            self.timed = None;
            self.t_backoff = 1;
        }
    }

    /// Sack1's partial ACK (tcp-sack1.cc recv()): `t_backoff_ = 1`; the timed packet stays timed.
    pub fn end_back_off(&mut self) {
        self.t_backoff = 1;
    }

    /// reset_rtx_timer(): a timeout or fast retransmit stops the timing.
    pub fn stop_timing(&mut self) {
        self.timed = None;
    }

    /// rtt_update() without timestamps: tick boundaries of the host clock
    /// between send and ACK, at least one.
    fn ticks_between(&self, sent: Time, now: Time) -> i64 {
        let ticks = (now + self.phase) / self.tick - (sent + self.phase) / self.tick;
        (ticks as i64).max(1)
    }

    /// rtt_update(): the fixed-point filters, then t_rtxcur_.
    fn update(&mut self, t_rtt: i64) {
        if self.t_srtt != 0 {
            let delta = t_rtt - (self.t_srtt >> SRTT_BITS);
            self.t_srtt = (self.t_srtt + delta).max(1);
            let delta = delta.abs() - (self.t_rttvar >> RTTVAR_BITS);
            self.t_rttvar = (self.t_rttvar + delta).max(1);
        } else {
            // srtt = rtt, rttvar = rtt / 2.
            self.t_srtt = t_rtt << SRTT_BITS;
            self.t_rttvar = t_rtt << (RTTVAR_BITS - 1);
        }
        let ticks = ((self.t_rttvar << (RTTVAR_EXP + SRTT_BITS - RTTVAR_BITS)) + self.t_srtt) >> SRTT_BITS;
        self.t_rtxcur = ticks as f64 * self.tick_secs();
    }

    /// A sample of `t_rtt` ticks taken elsewhere: ns-2's TFRC sender (tfrc.cc
    /// update_rtt()) rounds each feedback's RTT to ticks and runs these filters.
    pub fn sample_ticks(&mut self, t_rtt: i64) {
        self.update(t_rtt.max(1));
    }

    /// `t_rtxcur_`, seconds: floor(SRTT + 4·RTTVAR) ticks, without rtt_timeout()'s back-off and floors.
    pub fn current(&self) -> f64 {
        self.t_rtxcur
    }

    /// The smoothed RTT and its mean deviation, seconds (whole ticks and their 3 and 2
    /// fraction bits); None without an estimate (none yet, or clobbered by back-off).
    pub fn srtt_and_rttvar(&self) -> Option<(f64, f64)> {
        let tick = self.tick_secs();
        (self.t_srtt != 0).then(|| {
            (
                self.t_srtt as f64 / f64::from(1u32 << SRTT_BITS) * tick,
                self.t_rttvar as f64 / f64::from(1u32 << RTTVAR_BITS) * tick,
            )
        })
    }

    pub fn tick_secs(&self) -> f64 {
        self.tick as f64 * 1e-9
    }

    /// rtt_timeout(): the current timeout in seconds.
    pub fn rto(&self) -> f64 {
        (self.t_rtxcur * f64::from(self.t_backoff))
            .min(MAX_RTO)
            .max(self.min)
            .max(2.0 * self.tick_secs())
    }

    /// rtt_backoff(): double up to 64×; past 8× forget the SRTT.
    pub fn back_off(&mut self) {
        if self.t_backoff < MAX_BACKOFF {
            self.t_backoff <<= 1;
        }
        if self.t_backoff > CLOBBER_SRTT_ABOVE {
            self.t_rttvar += self.t_srtt >> SRTT_BITS;
            self.t_srtt = 0;
        }
    }

    /// rtt_init(): a new connection (`srtt_init_ 0`: no estimate, RTO = `rtxcur_init_`).
    pub fn reset(&mut self) {
        *self = Ns2Rtt::new(self.tick, self.phase, self.initial, self.min);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Time = 1_000_000;

    #[test]
    fn one_packet_per_rtt_quantised_to_ticks_by_hand() {
        // 100 ms tick, clock phase 0, RTT 140 ms, nothing else in flight.
        let mut r = Ns2Rtt::new(100 * MS, 0, 6.0, 0.0);
        assert_eq!(r.rto(), 6.0);
        // Packet 0 sent at 30 ms, ACK at 170 ms: one tick boundary (100 ms) crossed, t_rtt_ = 1.
        r.on_new_packet(0, 30 * MS);
        r.on_new_packet(1, 31 * MS); // not timed: packet 0 is
        r.on_ack(1, 170 * MS);
        // srtt = 1·8, rttvar = 1·2; (2<<3 + 8) >> 3 = 3 ticks.
        assert_eq!((r.t_srtt, r.t_rttvar), (8, 2));
        assert!((r.rto() - 0.3).abs() < 1e-12, "{}", r.rto());
        // Packet 1's ACK takes no sample (it was not timed).
        r.on_ack(2, 171 * MS);
        assert_eq!((r.t_srtt, r.t_rttvar), (8, 2));
        // Packet 5 sent at 190 ms, ACK at 330 ms: boundaries 200 and 300, t_rtt_ = 2.
        r.on_new_packet(5, 190 * MS);
        r.on_ack(6, 330 * MS);
        // delta = 2 - 1 = 1: srtt = 9; |delta| - (2 >> 2) = 1: rttvar = 3; (3<<3 + 9) >> 3 = 4 ticks.
        assert_eq!((r.t_srtt, r.t_rttvar), (9, 3));
        assert!((r.rto() - 0.4).abs() < 1e-12, "{}", r.rto());
        // The clock phase shifts the boundaries: with boot_time_ = 50 ms the same 140 ms RTT from 30 ms crosses 50 and 150.
        let mut r = Ns2Rtt::new(100 * MS, 50 * MS, 6.0, 0.0);
        r.on_new_packet(0, 30 * MS);
        r.on_ack(1, 170 * MS);
        assert_eq!(r.t_srtt, 2 << SRTT_BITS);
        // A sample within one tick still counts 1 tick. RTTVAR·4 = 2 never decays
        // (2 >> 2 = 0), so a steady 10 ms path keeps RTO = (2·8 + 8) >> 3 = 3 ticks.
        let mut r = Ns2Rtt::new(100 * MS, 0, 6.0, 0.0);
        for i in 0..50 {
            r.on_new_packet(i, i * 100 * MS + 10 * MS);
            r.on_ack(i + 1, i * 100 * MS + 20 * MS);
        }
        assert_eq!((r.t_srtt, r.t_rttvar), (8, 2));
        assert!((r.rto() - 0.3).abs() < 1e-12, "{}", r.rto());
    }

    #[test]
    fn backoff_doubles_to_64_and_forgets_srtt_past_8() {
        let mut r = Ns2Rtt::new(100 * MS, 0, 6.0, 0.0);
        r.on_new_packet(0, 0);
        r.on_ack(1, 250 * MS); // 2 ticks: srtt 16, rttvar 4, RTO (4<<3 + 16) >> 3 = 6 ticks
        assert!((r.rto() - 0.6).abs() < 1e-12);
        let expected = [1.2, 2.4, 4.8, 9.6, 19.2, 38.4, 38.4, 38.4];
        for want in expected {
            r.back_off();
            assert!((r.rto() - want).abs() < 1e-9, "{} vs {want}", r.rto());
        }
        assert_eq!(r.t_backoff, MAX_BACKOFF);
        // Past 8× the SRTT was cleared: the next sample restarts the estimate (and the back-off).
        assert_eq!(r.t_srtt, 0);
        r.on_new_packet(9, 10_000 * MS);
        r.on_ack(10, 10_450 * MS); // boundaries 10.1 .. 10.4 s: 4 ticks
        assert_eq!((r.t_srtt, r.t_rttvar, r.t_backoff), (32, 8, 1));
        assert!((r.rto() - 1.2).abs() < 1e-12, "{}", r.rto());
        // minrto_ bounds from below.
        let r = Ns2Rtt::new(100 * MS, 0, 0.05, 1.0);
        assert_eq!(r.rto(), 1.0);
    }

    #[test]
    fn stopped_timing_and_partial_acks_take_no_sample() {
        let mut r = Ns2Rtt::new(100 * MS, 0, 6.0, 0.0);
        r.on_new_packet(3, 0);
        r.stop_timing(); // a timeout: packet 3 may be retransmitted, Karn
        r.on_ack(4, 500 * MS);
        assert_eq!(r.t_srtt, 0);
        r.on_new_packet(7, 600 * MS);
        r.back_off();
        r.on_partial_ack(8);
        assert_eq!((r.t_srtt, r.t_backoff), (0, 1));
        assert_eq!(r.rto(), 6.0);
    }
}
