//! Linux's congestion control modules, as Linux 6.1 runs them for the `linux`
//! profile: the window in whole packets, grown by `cong_avoid` on ACKs that
//! acknowledge new data while the sender is cwnd-limited (tcp_input.c
//! tcp_cong_control()), cut to `ssthresh()` on loss or ECN. This file is their registry and
//! Reno, as tcp_cong.c is; their interface is `cc.rs` (tcp.h's `tcp_congestion_ops`).
//!
//! - Reno (tcp_cong.c): tcp_slow_start() adds the packets acked up to ssthresh;
//!   tcp_cong_avoid_ai() adds one packet per cwnd packets acked (`snd_cwnd_cnt`);
//!   ssthresh = max(cwnd/2, 2) (tcp_reno_ssthresh()).
//! - CUBIC (tcp_cubic.c; RFC 9438) with HyStart: `cubic.rs`, [`Cubic`].
//! - BBR (tcp_bbr.c, [`Bbr`]): the module sets cwnd and the pacing rate itself on every ACK
//!   (`cong_control`), so neither `cong_avoid` nor PRR runs; `ssthresh` only saves cwnd for
//!   the end of recovery (bbr_ssthresh()); it asks for pacing (`SK_PACING_NEEDED`).
//! - LEDBAT (RFC 6817, [`Ledbat`]; no Linux module): `pkts_acked` takes each ACK's one-way
//!   delay, `cong_avoid` moves the window by the queueing delay's distance from TARGET, with
//!   no slow start; `ssthresh` halves, at least MIN_CWND.
//! - DCTCP (tcp_dctcp.c, RFC 8257, [`Dctcp`]): Reno's growth; `in_ack_event` estimates the
//!   marked fraction α once per round; ssthresh is cwnd·(1 − α/2) on ECN-echo and half on loss.
//! - Prague (the L4S team's tcp_prague.c, [`Prague`]): sets cwnd itself on every ACK
//!   (`cong_control`) from a fractional window, reduces it by α/2 on entering CWR and by half
//!   on a loss (`set_state`), and paces at its own rate.
//!
//! Times are exact seconds where Linux counts jiffies and microseconds.

use super::bbr::Bbr;
use super::cc::{AckSample, Window};
use super::cubic::Cubic;
use super::dctcp::Dctcp;
use super::ledbat::Ledbat;
use super::prague::{Prague, PragueAck};
use super::{CongestionControl, TcpParams};

/// Why the window is reduced: the sender entering CWR (ECN-echo, or a loss repaired by a
/// Tail Loss Probe: tcp_process_tlp_ack()) or Recovery and Loss (a loss, a timeout). Most
/// modules' `ssthresh` does not tell them apart; DCTCP's and Prague's `set_state` do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reduction {
    Cwr,
    Loss,
}

/// A congestion control module and the `snd_cwnd_cnt` its additive increase counts in.
#[derive(Clone, Debug)]
pub struct LinuxCc {
    module: Module,
    /// `snd_cwnd_cnt`: packets acked towards the next increment.
    cwnd_cnt: u64,
}

#[derive(Clone, Debug)]
enum Module {
    Reno,
    Cubic(Box<Cubic>),
    Bbr(Box<Bbr>),
    Ledbat(Box<Ledbat>),
    Dctcp(Box<Dctcp>),
    Prague(Box<Prague>),
}

impl LinuxCc {
    /// The flow's module (`cc`, with `ledbat`'s parameters) at connection start (`init`), `now`
    /// seconds, for data packets of `size` bytes.
    pub fn new(params: &TcpParams, size: u32, now: f64) -> Self {
        let module = match params.cc {
            CongestionControl::Reno => Module::Reno,
            CongestionControl::Cubic => Module::Cubic(Box::new(Cubic::new(now, 0))),
            CongestionControl::Bbr => Module::Bbr(Box::new(Bbr::new(now))),
            CongestionControl::Ledbat => Module::Ledbat(Box::new(Ledbat::new(params.ledbat))),
            CongestionControl::Dctcp => Module::Dctcp(Box::new(Dctcp::new(0))),
            CongestionControl::Prague => Module::Prague(Box::new(Prague::new(params.initial_window, size, now))),
        };
        LinuxCc { module, cwnd_cnt: 0 }
    }

    /// `cong_avoid`: an ACK acknowledged new data while the sender was cwnd-limited;
    /// `acked` packets were delivered (cumulatively or by SACK).
    pub fn cong_avoid(&mut self, w: &mut Window, acked: u64, now: f64) {
        if let Module::Ledbat(l) = &mut self.module {
            // RFC 6817 has no slow start: the delay rule alone moves the window.
            return l.cong_avoid(w, acked);
        }
        let mut acked = acked;
        if w.in_slow_start() {
            acked = w.slow_start(acked);
            if acked == 0 {
                return;
            }
        }
        let per = match &mut self.module {
            // tcp_reno_cong_avoid(): one packet per window acked (DCTCP's too).
            Module::Reno | Module::Dctcp(_) => w.cwnd,
            Module::Cubic(c) => c.update(w.cwnd, acked, now),
            // bbr_main() and prague_cong_control() set cwnd (`cong_control`): tcp_cong_avoid()
            // never runs; LEDBAT's rule ran above.
            Module::Bbr(_) | Module::Ledbat(_) | Module::Prague(_) => return,
        };
        self.cong_avoid_ai(w, per, acked);
    }

    /// tcp_cong_avoid_ai(): one packet more per `per` packets acked.
    fn cong_avoid_ai(&mut self, w: &mut Window, per: u64, acked: u64) {
        if self.cwnd_cnt >= per {
            self.cwnd_cnt = 0;
            w.cwnd += 1;
        }
        self.cwnd_cnt += acked;
        if self.cwnd_cnt >= per {
            let delta = self.cwnd_cnt / per;
            self.cwnd_cnt -= delta * per;
            w.cwnd += delta;
        }
        w.cwnd = w.cwnd.min(w.clamp);
    }

    /// `ssthresh` and `set_state` on a reduction for `why`: the new ssthresh, from the window
    /// `cwnd` before it and the current `ssthresh`. The reduction restarts the
    /// additive-increase count (tcp_init_cwnd_reduction()).
    pub fn reduce(&mut self, why: Reduction, cwnd: u64, ssthresh: u64) -> u64 {
        self.cwnd_cnt = 0;
        match &mut self.module {
            // tcp_reno_ssthresh().
            Module::Reno => (cwnd / 2).max(2),
            Module::Cubic(c) => c.recalc_ssthresh(cwnd),
            Module::Bbr(b) => b.on_ssthresh(cwnd),
            Module::Ledbat(l) => l.ssthresh(cwnd),
            Module::Dctcp(d) => match why {
                Reduction::Cwr => d.ssthresh_for_ecn(cwnd),
                Reduction::Loss => d.ssthresh_for_loss(cwnd),
            },
            // prague_ssthresh() keeps ssthresh; prague_state() moves the fractional window.
            Module::Prague(p) => {
                match why {
                    Reduction::Cwr => p.enter_cwr(),
                    Reduction::Loss => p.enter_loss(),
                }
                ssthresh
            }
        }
    }

    /// The ssthresh a loss gives, for tests: [`LinuxCc::reduce`] for a loss.
    #[cfg(test)]
    pub fn ssthresh(&mut self, cwnd: u64) -> u64 {
        self.reduce(Reduction::Loss, cwnd, u64::MAX)
    }

    /// `in_ack_event`, before the ACK's reductions: DCTCP ends its round once `snd_una`
    /// passes it (dctcp_update_alpha()).
    pub fn in_ack_event(&mut self, snd_una: u64, snd_nxt: u64) {
        if let Module::Dctcp(d) = &mut self.module {
            d.end_round(snd_una, snd_nxt);
        }
    }

    /// The packets an ACK delivered, `delivered_ce` of them echoed CE (`tp->delivered`,
    /// `tp->delivered_ce`): DCTCP counts them in its round.
    pub fn delivered(&mut self, delivered: u64, delivered_ce: u64) {
        if let Module::Dctcp(d) = &mut self.module {
            d.count(delivered, delivered_ce);
        }
    }

    /// `set_state(TCP_CA_Open)`: a loss is repaired (Prague grows again).
    pub fn open(&mut self) {
        if let Module::Prague(p) = &mut self.module {
            p.open();
        }
    }

    /// `pkts_acked`: an ACK with an RTT sample; may end slow start (HyStart) by lowering
    /// `w.ssthresh` to `w.cwnd`; LEDBAT takes its one-way delay.
    pub fn on_ack_sample(&mut self, w: &mut Window, s: &AckSample) {
        match &mut self.module {
            Module::Cubic(c) => c.acked(w, s),
            Module::Ledbat(l) => l.acked(s),
            Module::Reno | Module::Bbr(_) | Module::Dctcp(_) | Module::Prague(_) => {}
        }
    }

    /// `init` at a connection's start, and `set_state(TCP_CA_Loss)` on a retransmission
    /// timeout: CUBIC forgets everything (bictcp_reset(), W_max included) and HyStart starts
    /// a round ending at `snd_nxt`.
    pub fn restart(&mut self, now: f64, snd_nxt: u64) {
        self.cwnd_cnt = 0;
        match &mut self.module {
            Module::Cubic(c) => **c = Cubic::new(now, snd_nxt),
            Module::Bbr(b) => **b = Bbr::new(now),
            Module::Ledbat(l) => l.restart(),
            Module::Dctcp(d) => **d = Dctcp::new(snd_nxt),
            Module::Prague(p) => p.restart(now),
            Module::Reno => {}
        }
    }

    /// `cwnd_event(CA_EVENT_TX_START)` after `idle` seconds without sending: CUBIC shifts its
    /// epoch by the idle time, no later than `now`, to stay on its curve (cubictcp_cwnd_event()).
    pub fn idle_restart(&mut self, idle: f64, now: f64) {
        if let Module::Cubic(c) = &mut self.module {
            if let Some(start) = &mut c.epoch_start {
                *start = (*start + idle).min(now);
            }
        }
    }

    /// The module sets cwnd and the pacing rate itself on every ACK (`cong_control`: BBR,
    /// Prague) and asks for pacing (`SK_PACING_NEEDED`): no `cong_avoid`, no PRR, and the
    /// window is not set to ssthresh when a reduction ends (tcp_end_cwnd_reduction()).
    pub fn cong_control(&self) -> bool {
        matches!(self.module, Module::Bbr(_) | Module::Prague(_))
    }

    /// prague_cong_control() on an ACK: Prague sets the window `w`.
    pub fn prague_on_ack(&mut self, w: &mut Window, ack: &PragueAck) {
        if let Module::Prague(p) = &mut self.module {
            p.on_ack(w, ack);
        }
    }

    /// The pacing rate, bytes/s, of a module that paces.
    pub fn pacing_rate(&self) -> Option<f64> {
        match &self.module {
            Module::Bbr(b) => Some(b.pacing_rate),
            Module::Prague(p) => Some(p.pacing_rate()),
            _ => None,
        }
    }

    /// BBR's state, for the sender's `cong_control` calls, tests and traces.
    pub fn bbr(&mut self) -> Option<&mut Bbr> {
        match &mut self.module {
            Module::Bbr(b) => Some(b),
            _ => None,
        }
    }

    /// LEDBAT's state, for traces.
    pub fn ledbat(&self) -> Option<&Ledbat> {
        match &self.module {
            Module::Ledbat(l) => Some(l),
            _ => None,
        }
    }

    /// α of a module that estimates the marked fraction (DCTCP, Prague), for traces.
    pub fn alpha(&self) -> Option<f64> {
        match &self.module {
            Module::Dctcp(d) => Some(d.alpha()),
            Module::Prague(p) => Some(p.alpha()),
            _ => None,
        }
    }

    /// CUBIC's state, for tests and traces.
    pub fn cubic(&self) -> Option<&Cubic> {
        match &self.module {
            Module::Cubic(c) => Some(c),
            _ => None,
        }
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::tcp::cubic::{C, FRIENDLY_SCALE};
    use crate::transport::tcp::{Profile, TcpOptions};

    /// Module `cc` with the linux profile's defaults.
    fn module(cc: CongestionControl) -> LinuxCc {
        let params = TcpOptions {
            profile: Profile::Linux,
            cc: Some(cc),
            ..Default::default()
        }
        .resolve();
        LinuxCc::new(&params, 1000, 0.0)
    }

    #[test]
    fn reno_slow_start_then_one_packet_per_window() {
        let mut cc = module(CongestionControl::Reno);
        let mut w = Window::unclamped(10, 14);
        // Slow start stops at ssthresh; the 2 packets left over count towards the increase.
        cc.cong_avoid(&mut w, 6, 0.0);
        assert_eq!((w.cwnd, cc.cwnd_cnt), (14, 2));
        cc.cong_avoid(&mut w, 11, 0.0);
        assert_eq!((w.cwnd, cc.cwnd_cnt), (14, 13));
        cc.cong_avoid(&mut w, 1, 0.0);
        assert_eq!((w.cwnd, cc.cwnd_cnt), (15, 0));
        assert_eq!(cc.ssthresh(15), 7);
        assert_eq!(cc.ssthresh(3), 2);
    }

    #[test]
    fn cubic_cuts_to_beta_with_fast_convergence() {
        let mut cc = module(CongestionControl::Cubic);
        // 717/1024 of 100 = 70.
        assert_eq!(cc.ssthresh(100), 70);
        assert_eq!(cc.cubic().unwrap().last_max_cwnd, 100);
        // A second loss below W_max: W_max = 80·(1 + β)/2 = 68 (fast convergence).
        assert_eq!(cc.ssthresh(80), 56);
        assert_eq!(cc.cubic().unwrap().last_max_cwnd, 68);
        assert_eq!(FRIENDLY_SCALE, 15);
    }

    #[test]
    fn cubic_k_and_target_follow_the_closed_form() {
        let mut cc = module(CongestionControl::Cubic);
        let ssthresh = cc.ssthresh(1000);
        let mut w = Window::unclamped(ssthresh, ssthresh);
        cc.cong_avoid(&mut w, 1, 10.0);
        let c = cc.cubic().unwrap();
        // K = ∛(W_max (1 − β)/C) with W_max − cwnd₀ = 1000 − 700 = 300: ∛(300/0.4004) = 9.08 s.
        assert!(
            (c.k - (300.0 / C).cbrt()).abs() < 1e-12 && (c.k - 9.08).abs() < 0.01,
            "{}",
            c.k
        );
        assert_eq!((c.origin_point, c.epoch_start), (1000, Some(10.0)));
    }

    #[test]
    fn hystart_delay_increase_ends_slow_start() {
        let mut cc = module(CongestionControl::Cubic);
        let mut w = Window::unclamped(20, 1000);
        let sample = |now: f64, rtt: f64| AckSample {
            now,
            rtt,
            snd_una: 1,
            snd_nxt: 40,
            pacing_rate: 0.0,
            one_way_delay: 0.0,
            prior_in_flight: 0,
        };
        // The minimum RTT is 100 ms; the threshold is 100 ms + clamp(12.5 ms, 4, 16) = 112.5 ms.
        cc.on_ack_sample(&mut w, &sample(0.1, 0.100));
        // ACKs 5 ms apart are no train; eight samples at 112 ms do not trigger, the ninth's minimum does not move.
        for i in 1..=8 {
            cc.on_ack_sample(&mut w, &sample(0.1 + 0.005 * f64::from(i), 0.112));
        }
        assert_eq!(w.ssthresh, 1000);
        let mut w2 = w;
        let mut cc2 = cc.clone();
        cc.on_ack_sample(&mut w, &sample(0.2, 0.112));
        assert_eq!(w.ssthresh, 1000);
        // A round whose first eight samples all exceed 112.5 ms ends slow start at cwnd.
        let next_round = AckSample {
            snd_una: 41,
            snd_nxt: 80,
            ..sample(0.3, 0.120)
        };
        cc2.on_ack_sample(&mut w2, &next_round);
        for i in 1..=8 {
            cc2.on_ack_sample(&mut w2, &sample(0.3 + 0.005 * f64::from(i), 0.120));
        }
        assert_eq!(w2.ssthresh, 20);
    }

    #[test]
    fn hystart_ack_train_spanning_half_the_rtt_ends_slow_start() {
        let mut cc = module(CongestionControl::Cubic);
        let mut w = Window::unclamped(32, 1000);
        let sample = |now: f64| AckSample {
            now,
            rtt: 0.1,
            snd_una: 1,
            snd_nxt: 64,
            pacing_rate: 0.0,
            one_way_delay: 0.0,
            prior_in_flight: 0,
        };
        // ACKs 1 ms apart from the round's start at 0: the train passes 50 ms = delay_min/2.
        for i in 0..50 {
            cc.on_ack_sample(&mut w, &sample(0.001 * f64::from(i)));
            assert_eq!(w.ssthresh, 1000, "ACK {i}");
        }
        cc.on_ack_sample(&mut w, &sample(0.0505));
        assert_eq!(w.ssthresh, 32);
    }
}
