//! TCP Prague, `cc = "prague"` under the linux profile: the L4S scalable congestion control
//! (RFC 9331 §4.3's requirements), as the L4S team's Linux 6.1 port runs it (`tcp_prague.c`
//! module version 0.7, github.com/minuscat/l4steam-6.1.y; the rules below name its functions).
//!
//! - ECT(1) on every data packet (prague_init(): `TCP_ECN_ECT_1`) and accurate ECN feedback
//!   (`TCP_CONG_NEEDS_ACCECN`): each ACK tells how many packets were newly marked CE.
//! - The window is the module's (`cong_control`, as BBR's): a fractional window `frac_cwnd`
//!   carries the decimals, and cwnd steps by one packet per ACK towards it
//!   (prague_update_cwnd(), "Step-wise cwnd decrement/increment"); a step down sets ssthresh
//!   = cwnd, which is how slow start ends under marking.
//! - Growth on every ACK for the packets it delivered unmarked (acked − ece_delta), not while
//!   recovering a loss nor when application-limited: slow start by tcp_slow_start() with
//!   `frac_cwnd` following cwnd; then additive increase of `ai`·acked/frac_cwnd, scaled by
//!   1500 B over the packet size (MTU_SYS / mtu). `ai` is one packet per RTT, or (srtt /
//!   25 ms)² once RTT-independent (prague_rate_scaled_ai_ack_increase(): "grow by 1 MSS per
//!   target RTT"): after 4 rounds out of slow start (DEFAULT_RTT_TRANSITION) at an SRTT below
//!   the 25 ms target (`prague_rtt_target`) and at most 100 ms (MAX_SCALED_RTT).
//! - α, the marked fraction, by DCTCP's EWMA with g = 1/16 (prague_update_alpha()) once per
//!   round (the cumulative ACK passes the round's end), and once RTT-independent no more often
//!   than every 25 ms; only once a mark has been seen (`saw_ce`). α starts at 1.
//! - On entering CWR (an ACK reports new marks, once per window): frac_cwnd −= α·frac_cwnd/2
//!   (prague_enter_cwr()), at most once per 25 ms once RTT-independent. On a loss (entering
//!   Recovery, or a timeout's CA_EVENT_LOSS): frac_cwnd halves (prague_enter_loss(), the
//!   classic response RFC 9331 §4.3 requires) and growth waits for the Open state.
//! - Paced (`SK_PACING_NEEDED`) at its own rate (prague_update_pacing_rate()) about
//!   `rate_bytes`: frac_cwnd·packet/SRTT after a reduction; in congestion avoidance the larger
//!   of that and rate_bytes + the packets acked (the code adds a count of packets to bytes/s);
//!   in slow start unchanged from prague_init()'s IW·packet/SRTT. The pacing rate is twice
//!   rate_bytes while cwnd < ssthresh/2, else 3 % (4/128) above it in the first half of the
//!   virtual RTT (max(25 ms, SRTT)) since α's last update and 3 % below in the second.
//!
//! Not modelled: the rate-based mode for windows of at most 4 packets (`prague_cwnd_mode` 2
//! switches to it only there) and the MTU reduction it brings (it acts only below two packets
//! of window); undo of a spurious loss reduction (the sender undoes none); Linux's fixed point
//! (α in 24 bits, frac_cwnd in 20): here both are exact.

/// prague_frac_cwnd_to_snd_cwnd(): `MIN_CWND_RTT`.
const MIN_CWND: u64 = 2;
/// `PRAGUE_SHIFT_G`: g = 1/16.
const G: f64 = 1.0 / 16.0;
/// `DEFAULT_RTT_TRANSITION`: rounds out of slow start before RTT independence.
const RTT_TRANSITION: u32 = 4;
/// `prague_rtt_target`: 25 ms.
const RTT_TARGET: f64 = 0.025;
/// MAX_SCALED_RTT: above it the increase is not scaled.
const MAX_SCALED_RTT: f64 = 0.1;
/// MTU_SYS: the increase is per 1500-byte packet.
const MTU_SYS: f64 = 1500.0;
/// MINIMUM_RATE: 100 kbit/s, bytes/s.
const MINIMUM_RATE: f64 = 12_500.0;
/// `prague_rate_offset` 4 of OFFSET_UNIT 128: the pacing rate's swing about `rate_bytes`.
const RATE_OFFSET: f64 = 4.0 / 128.0;

/// What the sender tells the module of one ACK (prague_cong_control()'s `rate_sample` and
/// `tcp_sock`).
#[derive(Clone, Copy, Debug)]
pub struct PragueAck {
    pub now: f64,
    /// `acked_sacked`: packets the ACK delivered.
    pub delivered: u64,
    /// `ece_delta`: of them, newly reported CE.
    pub newly_ce: u64,
    pub app_limited: bool,
    /// SRTT, seconds (None before a sample).
    pub srtt: Option<f64>,
    /// The cumulative ACK and the next packet to send after the ACK.
    pub snd_una: u64,
    pub snd_nxt: u64,
}

#[derive(Clone, Debug)]
pub struct Prague {
    /// The initial window, packets, and the packet's size on the wire, bytes (`tcp_mss_to_mtu()`).
    initial_window: u64,
    mtu: f64,
    /// The fractional window, packets.
    frac_cwnd: f64,
    alpha: f64,
    /// Whether any mark was seen (`saw_ce`): α stays at 1 until then.
    saw_ce: bool,
    /// Recovering a loss: no growth until the Open state.
    in_loss: bool,
    /// `rate_bytes`: the pacing rate's base, bytes/s (None until the first RTT sample, which
    /// stands for the handshake's: prague_init() runs after it in Linux).
    rate_bytes: Option<f64>,
    pacing_rate: f64,
    /// The round: its end (`next_seq`), the delivered and CE counts at its start.
    next_seq: u64,
    delivered: u64,
    delivered_ce: u64,
    round_delivered: u64,
    round_delivered_ce: u64,
    /// Rounds since slow start ended.
    round: u32,
    /// When α was last updated, and the last CWR reduction (`alpha_stamp`, `cwr_stamp`).
    alpha_stamp: f64,
    cwr_stamp: f64,
    /// The last ACK's time and SRTT, for the reductions.
    now: f64,
    srtt: Option<f64>,
    /// Whether the window was in slow start at the last ACK (tcp_in_slow_start()).
    slow_start: bool,
}

impl Prague {
    /// prague_init() with `cwnd` packets of window (the initial window) and `mtu`-byte packets.
    pub fn new(cwnd: u64, mtu: u32, now: f64) -> Self {
        Prague {
            initial_window: cwnd,
            mtu: f64::from(mtu),
            frac_cwnd: cwnd as f64,
            alpha: 1.0,
            saw_ce: false,
            in_loss: false,
            rate_bytes: None,
            pacing_rate: 0.0,
            next_seq: 0,
            delivered: 0,
            delivered_ce: 0,
            round_delivered: 0,
            round_delivered_ce: 0,
            round: 0,
            alpha_stamp: now,
            cwr_stamp: f64::NEG_INFINITY,
            now,
            srtt: None,
            slow_start: true,
        }
    }

    /// prague_init() at a new connection's start.
    pub fn restart(&mut self, now: f64) {
        *self = Prague::new(self.initial_window, self.mtu as u32, now);
    }

    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    pub fn pacing_rate(&self) -> f64 {
        self.pacing_rate
    }

    /// prague_is_rtt_indep().
    fn rtt_independent(&self) -> bool {
        !self.slow_start && self.round >= RTT_TRANSITION
    }

    /// prague_ai_ack_increase(): packets per RTT.
    fn ai_ack_increase(&self) -> f64 {
        match self.srtt {
            Some(rtt) if self.round >= RTT_TRANSITION && rtt > 0.0 && rtt <= MAX_SCALED_RTT && rtt < RTT_TARGET => {
                (rtt / RTT_TARGET).powi(2)
            }
            _ => 1.0,
        }
    }

    /// frac_cwnd·packet/SRTT, at least MINIMUM_RATE.
    fn window_rate(&self) -> f64 {
        self.srtt.filter(|&s| s > 0.0).map_or(MINIMUM_RATE, |srtt| {
            (self.frac_cwnd * self.mtu / srtt).max(MINIMUM_RATE)
        })
    }

    /// prague_cong_control() on an ACK: the window (`w`), then α at a round's end, then the
    /// pacing rate.
    pub fn on_ack(&mut self, w: &mut super::cc::Window, a: &PragueAck) {
        self.now = a.now;
        self.srtt = a.srtt.or(self.srtt);
        if self.rate_bytes.is_none() && self.srtt.is_some() {
            // prague_init(): cwnd·mtu/srtt with the handshake's RTT.
            self.rate_bytes = Some(self.window_rate());
        }
        self.delivered += a.delivered;
        self.delivered_ce += a.newly_ce;
        self.update_cwnd(w, a);
        self.slow_start = w.in_slow_start();
        let round_over = a.snd_una >= self.next_seq;
        if round_over && (!self.rtt_independent() || a.now - self.alpha_stamp >= RTT_TARGET) {
            self.update_alpha(a.snd_nxt);
        }
        self.update_pacing_rate(w);
    }

    /// prague_update_cwnd().
    fn update_cwnd(&mut self, w: &mut super::cc::Window, a: &PragueAck) {
        if a.newly_ce > 0 {
            self.saw_ce = true;
        }
        let mut acked = a.delivered as i64 - a.newly_ce as i64;
        if acked > 0 && !self.in_loss && !a.app_limited {
            if w.in_slow_start() {
                acked = w.slow_start(acked as u64) as i64;
                self.frac_cwnd = w.cwnd as f64;
                if acked == 0 {
                    return;
                }
            }
            let increase = acked as f64 * self.ai_ack_increase() / self.frac_cwnd * MTU_SYS / self.mtu;
            self.frac_cwnd += increase;
            let rate = self.window_rate();
            self.rate_bytes = Some(self.rate_bytes.map_or(rate, |r| (r + acked as f64).max(rate)));
        }
        let target = (self.frac_cwnd.ceil() as u64).max(MIN_CWND).min(w.clamp);
        if w.cwnd > target {
            w.cwnd -= 1;
            w.ssthresh = w.cwnd;
        } else if w.cwnd < target {
            w.cwnd += 1;
        }
    }

    /// prague_update_alpha(), then prague_new_round() ending the next round at `snd_nxt`.
    fn update_alpha(&mut self, snd_nxt: u64) {
        if self.saw_ce {
            let marked = self.delivered_ce - self.round_delivered_ce;
            let f = if marked > 0 {
                marked as f64 / (self.delivered - self.round_delivered).max(1) as f64
            } else {
                0.0
            };
            self.alpha = (self.alpha - G * self.alpha + G * f).min(1.0);
            self.alpha_stamp = self.now;
        }
        self.next_seq = snd_nxt;
        self.round_delivered = self.delivered;
        self.round_delivered_ce = self.delivered_ce;
        if !self.slow_start {
            self.round = self.round.saturating_add(1);
        }
    }

    /// prague_update_pacing_rate().
    fn update_pacing_rate(&mut self, w: &super::cc::Window) {
        let rate = self.rate_bytes.unwrap_or(MINIMUM_RATE);
        self.pacing_rate = if w.cwnd < w.ssthresh / 2 {
            2.0 * rate
        } else {
            let virtual_rtt = self.srtt.unwrap_or(0.0).max(RTT_TARGET);
            if self.now - self.alpha_stamp >= virtual_rtt / 2.0 {
                rate * (1.0 - RATE_OFFSET)
            } else {
                rate * (1.0 + RATE_OFFSET)
            }
        };
    }

    /// prague_enter_cwr(): the window less α/2 of itself, at most once per target RTT once
    /// RTT-independent.
    pub fn enter_cwr(&mut self) {
        if self.rtt_independent() && self.now - self.cwr_stamp < RTT_TARGET {
            return;
        }
        self.cwr_stamp = self.now;
        self.frac_cwnd -= self.alpha * self.frac_cwnd / 2.0;
        self.rate_bytes = Some(self.window_rate());
    }

    /// prague_enter_loss(): half the window, and no growth until the Open state.
    pub fn enter_loss(&mut self) {
        self.frac_cwnd -= self.frac_cwnd / 2.0;
        self.rate_bytes = Some(self.window_rate());
        self.in_loss = true;
    }

    /// prague_ca_open(): the loss is repaired.
    pub fn open(&mut self) {
        self.in_loss = false;
    }
}

#[cfg(test)]
mod tests {
    use super::super::cc::Window;
    use super::*;

    fn ack(now: f64, delivered: u64, newly_ce: u64, snd_una: u64, snd_nxt: u64) -> PragueAck {
        PragueAck {
            now,
            delivered,
            newly_ce,
            app_limited: false,
            srtt: Some(0.04),
            snd_una,
            snd_nxt,
        }
    }

    #[test]
    fn marks_step_the_window_down_and_end_slow_start() {
        let mut p = Prague::new(10, 1500, 0.0);
        let mut w = Window::unclamped(10, 10_000);
        // Slow start: cwnd grows by the unmarked packets delivered and frac_cwnd follows.
        p.on_ack(&mut w, &ack(0.04, 2, 0, 2, 12));
        assert_eq!((w.cwnd, p.frac_cwnd), (12, 12.0));
        // CWR with α = 1 halves frac_cwnd; an ACK whose packets were all marked grows nothing,
        // so cwnd steps one down and ssthresh follows it: slow start is over.
        p.enter_cwr();
        assert_eq!(p.frac_cwnd, 6.0);
        p.on_ack(&mut w, &ack(0.05, 2, 2, 4, 14));
        assert_eq!((w.cwnd, w.ssthresh), (11, 11));
        for i in 0..5 {
            p.on_ack(&mut w, &ack(0.06, 1, 1, 5 + i, 14));
        }
        assert_eq!(w.cwnd, 6, "one packet per ACK down to ⌈frac_cwnd⌉");
    }

    #[test]
    fn alpha_is_dctcps_ewma_of_the_marked_fraction_once_a_mark_was_seen() {
        let mut p = Prague::new(10, 1500, 0.0);
        let mut w = Window::unclamped(20, 20);
        // A round without marks ends at the first ACK: α stays 1 (no AQM seen yet); the next
        // round ends at 30.
        p.on_ack(&mut w, &ack(0.04, 10, 0, 10, 30));
        assert_eq!((p.alpha(), p.next_seq), (1.0, 30));
        // A quarter of the round's 20 packets marked: α = 15/16 + 1/16 · 1/4 when it ends.
        p.on_ack(&mut w, &ack(0.06, 15, 5, 25, 50));
        assert_eq!(p.alpha(), 1.0, "the round ends at 30");
        p.on_ack(&mut w, &ack(0.08, 5, 0, 30, 50));
        assert!((p.alpha() - (15.0 / 16.0 + 0.25 / 16.0)).abs() < 1e-12, "{}", p.alpha());
    }

    #[test]
    fn additive_increase_is_rtt_independent_below_the_target() {
        // At 40 ms (above the 25 ms target) one packet per window of ACKs; at 5 ms, once four
        // rounds out of slow start, (5/25)² of that.
        for (srtt, expected) in [(0.04, 1.0), (0.005, 0.04)] {
            let mut p = Prague::new(10, 1500, 0.0);
            p.srtt = Some(srtt);
            p.slow_start = false;
            p.round = RTT_TRANSITION;
            let mut w = Window::unclamped(100, 50);
            p.frac_cwnd = 100.0;
            let a = PragueAck {
                srtt: Some(srtt),
                ..ack(0.0, 100, 0, 0, 1000)
            };
            p.update_cwnd(&mut w, &a);
            assert!((p.frac_cwnd - 100.0 - expected).abs() < 1e-9, "{srtt}: {}", p.frac_cwnd);
        }
    }

    #[test]
    fn a_loss_halves_and_waits_for_open() {
        let mut p = Prague::new(10, 1500, 0.0);
        let mut w = Window::unclamped(40, 40);
        p.frac_cwnd = 40.0;
        p.enter_loss();
        assert_eq!(p.frac_cwnd, 20.0);
        p.on_ack(&mut w, &ack(0.1, 2, 0, 2, 50));
        assert_eq!(
            (w.cwnd, p.frac_cwnd),
            (39, 20.0),
            "no growth in loss recovery, cwnd steps down"
        );
        p.open();
        p.on_ack(&mut w, &ack(0.2, 2, 0, 4, 50));
        assert!(p.frac_cwnd > 20.0);
    }
}
