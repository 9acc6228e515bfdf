//! DCTCP (RFC 8257) as Linux 6.1's `tcp_dctcp.c` runs it, `cc = "dctcp"` under the linux profile.
//!
//! - The sender estimates α, the fraction of its packets that were marked, once per window of
//!   data (RFC 8257 §3.3; dctcp_update_alpha(), called from `in_ack_event` on every ACK): when
//!   the cumulative ACK passes the round's end (`next_seq`, snd_nxt at the round's start),
//!   α ← (1 − g)·α + g·F with F the round's delivered packets that were echoed CE over all
//!   delivered, g = 1/16 (`dctcp_shift_g` 4). α starts at 1 (`dctcp_alpha_on_init` 1024 of
//!   DCTCP_MAX_ALPHA 1024), in Linux's fixed point: 10 bits.
//! - On ECN-echo, once per window (the sender's CWR, RFC 3168 §6.1.2): ssthresh =
//!   cwnd·(1 − α/2), at least 2 (dctcp_ssthresh(): `cwnd - ((cwnd * alpha) >> 11)`).
//! - On a loss (entering Recovery, or a timeout's CA_EVENT_LOSS): ssthresh = cwnd/2, at least
//!   2 (dctcp_react_to_loss(), RFC 8257 §3.4: "the same as a conventional TCP").
//! - Growth is Reno's (`.cong_avoid = tcp_reno_cong_avoid`).
//!
//! What an ACK counts as CE-echoed is the sender's feedback's (`ecn_feedback`): with classic
//! feedback every packet an ECE-flagged ACK delivers (6.1's tcp_count_delivered(): `ece_ack`),
//! the receiver running DCTCP's ECE state machine (RFC 8257 §3.2, `sink.rs`); with accurate
//! feedback the rise of the receiver's CE counter.

/// DCTCP_MAX_ALPHA: α's fixed point, 10 bits.
const MAX_ALPHA: u32 = 1024;
/// `dctcp_shift_g`: g = 1/2^4 (RFC 8257 §4.2: "g = 1/16").
const SHIFT_G: u32 = 4;
/// `dctcp_alpha_on_init`: α at the start, DCTCP_MAX_ALPHA (RFC 8257 §3.3 leaves it open;
/// §4.2: "α = 1 ... will cause the first reduction to be ... by half").
const ALPHA_ON_INIT: u32 = MAX_ALPHA;
/// The smallest ssthresh Linux sets (dctcp_ssthresh(), dctcp_react_to_loss()).
const MIN_SSTHRESH: u64 = 2;

#[derive(Clone, Debug)]
pub struct Dctcp {
    /// α in 1/1024ths.
    alpha: u32,
    /// The round ends when the cumulative ACK reaches this (`next_seq`).
    next_seq: u64,
    /// Packets delivered, and delivered echoed CE, in the round so far.
    delivered: u64,
    delivered_ce: u64,
}

impl Dctcp {
    /// dctcp_init(): α = 1, a round ending at `snd_nxt`.
    pub fn new(snd_nxt: u64) -> Self {
        Dctcp {
            alpha: ALPHA_ON_INIT,
            next_seq: snd_nxt,
            delivered: 0,
            delivered_ce: 0,
        }
    }

    /// α as a fraction.
    pub fn alpha(&self) -> f64 {
        f64::from(self.alpha) / f64::from(MAX_ALPHA)
    }

    /// dctcp_update_alpha() from `in_ack_event`: once the cumulative ACK `snd_una` reaches the
    /// round's end, α moves towards the round's marked fraction and a round ending at
    /// `snd_nxt` starts. Linux calls it before it counts the ACK's cumulatively delivered
    /// packets, so those count in the next round.
    pub fn end_round(&mut self, snd_una: u64, snd_nxt: u64) {
        if snd_una < self.next_seq {
            return;
        }
        // alpha = (1 - g) * alpha + g * F, F in 1/1024ths; `min_not_zero(alpha, alpha >> g)`
        // takes a small α to 0 rather than leaving it stuck at 15.
        let decay = match self.alpha >> SHIFT_G {
            0 => self.alpha,
            d => d,
        };
        let mut alpha = self.alpha - decay;
        if self.delivered_ce > 0 {
            let f = (self.delivered_ce.min(self.delivered) << (10 - SHIFT_G)) / self.delivered.max(1);
            alpha = (alpha + f as u32).min(MAX_ALPHA);
        }
        self.alpha = alpha;
        self.next_seq = snd_nxt;
        self.delivered = 0;
        self.delivered_ce = 0;
    }

    /// `delivered` packets were delivered, `delivered_ce` of them echoed CE.
    pub fn count(&mut self, delivered: u64, delivered_ce: u64) {
        self.delivered += delivered;
        self.delivered_ce += delivered_ce;
    }

    /// dctcp_ssthresh(), on ECN-echo: cwnd less cwnd·α/2.
    pub fn ssthresh_for_ecn(&self, cwnd: u64) -> u64 {
        (cwnd - ((cwnd * u64::from(self.alpha)) >> 11)).max(MIN_SSTHRESH)
    }

    /// dctcp_react_to_loss(): half the window.
    pub fn ssthresh_for_loss(&self, cwnd: u64) -> u64 {
        (cwnd >> 1).max(MIN_SSTHRESH)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alpha_moves_a_sixteenth_towards_the_marked_fraction_once_per_round() {
        let mut d = Dctcp::new(10);
        assert_eq!(d.alpha(), 1.0);
        // No marks for a round of 10 packets: α = 1 − 1/16.
        d.count(5, 0);
        d.end_round(5, 20);
        assert_eq!(d.alpha(), 1.0, "the round has not ended");
        d.count(5, 0);
        d.end_round(10, 20);
        assert_eq!(d.alpha, 1024 - 64);
        // A round with every packet marked: α rises by g·(1 − α), to the fixed point's rounding.
        let before = d.alpha;
        d.count(10, 10);
        d.end_round(20, 30);
        assert_eq!(d.alpha, before - (before >> 4) + 64);
        // Many unmarked rounds: α decays geometrically, (15/16)^k, and below 16/1024 to 0.
        for k in 0..200 {
            d.count(10, 0);
            d.end_round(30 + 10 * k, 40 + 10 * k);
        }
        assert_eq!(d.alpha, 0);
    }

    #[test]
    fn reductions_scale_with_alpha_on_marks_and_halve_on_loss() {
        let mut d = Dctcp::new(0);
        // α = 1: the first reduction halves (RFC 8257 §4.2).
        assert_eq!(d.ssthresh_for_ecn(100), 50);
        // α = 1/4 (256/1024): cwnd·(1 − 1/8).
        d.alpha = 256;
        assert_eq!(d.ssthresh_for_ecn(100), 88);
        assert_eq!(d.ssthresh_for_loss(100), 50);
        assert_eq!(d.ssthresh_for_ecn(2), 2);
        assert_eq!(d.ssthresh_for_loss(3), 2);
    }
}
