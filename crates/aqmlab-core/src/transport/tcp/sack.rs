//! The SACK sender's scoreboard (RFC 6675 §3–4), in packets: which packets
//! above the cumulative ACK the receiver has reported in SACK blocks, and the
//! RFC's derived quantities IsLost, pipe (SetPipe) and the next hole to fill.
//! ns-2's Sack1 (the `ns2` profile) reads only the SACKed packets and the holes
//! from it (scoreboard-rq.cc GetNextRetran()); its pipe is arithmetic, kept by the sender.

use std::collections::VecDeque;

/// RFC 6675 §2: DupThresh. A packet is lost once this many packets above it are SACKed.
pub const DUP_THRESH: u64 = 3;

#[derive(Clone, Debug, Default)]
pub struct Scoreboard {
    /// Sequence number of `sacked[0]`: always the sender's cumulative ACK point.
    base: u64,
    /// SACKed flags from `base` up; packets past the end are not SACKed.
    sacked: VecDeque<bool>,
    count: u64,
}

impl Scoreboard {
    /// Records a SACK block `[start, end)`, clipped to what is outstanding;
    /// returns how many packets it SACKed that were not SACKed before.
    pub fn mark(&mut self, start: u64, end: u64, snd_max: u64) -> u64 {
        let (start, end) = (start.max(self.base), end.min(snd_max));
        let before = self.count;
        for seq in start..end {
            let i = (seq - self.base) as usize;
            if i >= self.sacked.len() {
                self.sacked.resize(i + 1, false);
            }
            if !self.sacked[i] {
                self.sacked[i] = true;
                self.count += 1;
            }
        }
        self.count - before
    }

    /// The cumulative ACK moved to `una`: forget everything below it.
    pub fn advance(&mut self, una: u64) {
        for _ in 0..(una.saturating_sub(self.base) as usize).min(self.sacked.len()) {
            if self.sacked.pop_front() == Some(true) {
                self.count -= 1;
            }
        }
        self.base = self.base.max(una);
    }

    /// Forgets all SACK information (after a timeout, as ns-2's Sack1; RFC 2018 §8 allows reneging).
    pub fn clear(&mut self) {
        self.sacked.clear();
        self.count = 0;
    }

    pub fn is_sacked(&self, seq: u64) -> bool {
        seq >= self.base && self.sacked.get((seq - self.base) as usize).copied().unwrap_or(false)
    }

    /// RFC 6675 IsLost: at least DupThresh packets above `seq` are SACKed.
    pub fn is_lost(&self, seq: u64) -> bool {
        if self.count < DUP_THRESH {
            return false;
        }
        let below = self
            .sacked
            .iter()
            .take((seq + 1).saturating_sub(self.base) as usize)
            .filter(|&&s| s)
            .count() as u64;
        self.count - below >= DUP_THRESH
    }

    /// RFC 6675 SetPipe: packets in `[base, snd_max)` not SACKed count once
    /// unless lost, and once more if retransmitted (below `high_rxt`).
    pub fn pipe(&self, snd_max: u64, high_rxt: u64) -> u64 {
        let mut pipe = 0;
        let mut sacked_above = 0;
        for seq in (self.base..snd_max).rev() {
            if self.is_sacked(seq) {
                sacked_above += 1;
                continue;
            }
            pipe += u64::from(sacked_above < DUP_THRESH) + u64::from(seq < high_rxt);
        }
        pipe
    }

    /// The lowest packet at or above `from` that is not SACKed but lies below
    /// the highest SACKed one (a hole), and whether it is lost (NextSeg rules 1 and 3).
    pub fn first_hole(&self, from: u64) -> Option<(u64, bool)> {
        let highest = self.sacked.iter().rposition(|&s| s)? as u64 + self.base;
        let mut sacked_below = 0;
        for (i, &s) in self.sacked.iter().enumerate() {
            let seq = self.base + i as u64;
            if seq >= highest {
                return None;
            }
            if s {
                sacked_below += 1;
            } else if seq >= from {
                return Some((seq, self.count - sacked_below >= DUP_THRESH));
            }
        }
        None
    }

    pub fn sacked_count(&self) -> u64 {
        self.count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Window 10..22 with 10, 12 and 14 lost and everything else SACKed up to 16.
    fn board() -> Scoreboard {
        let mut b = Scoreboard::default();
        b.advance(10);
        b.mark(11, 12, 22);
        b.mark(13, 14, 22);
        b.mark(15, 17, 22);
        b
    }

    #[test]
    fn is_lost_counts_sacked_packets_above() {
        let b = board();
        assert_eq!(b.sacked_count(), 4);
        // Above 10: 11, 13, 15, 16 -> lost. Above 12: 13, 15, 16 -> lost. Above 14: 15, 16 -> not yet.
        assert!(b.is_lost(10));
        assert!(b.is_lost(12));
        assert!(!b.is_lost(14));
        assert!(b.is_sacked(15) && !b.is_sacked(14) && !b.is_sacked(30));
    }

    #[test]
    fn pipe_and_holes_follow_rfc6675() {
        let b = board();
        // Not SACKed: 10 (lost), 12 (lost), 14, 17..21 -> pipe = 1 + 5 = 6 with nothing retransmitted.
        assert_eq!(b.pipe(22, 10), 6);
        // After retransmitting 10 and 12 (HighRxt = 12): each counts once more.
        assert_eq!(b.pipe(22, 13), 8);
        assert_eq!(b.first_hole(10), Some((10, true)));
        assert_eq!(b.first_hole(13), Some((14, false)));
        assert_eq!(b.first_hole(15), None);
    }

    #[test]
    fn advance_and_clear_forget_state() {
        let mut b = board();
        // The retransmission of 10 arrives: the cumulative ACK moves to 12.
        b.advance(12);
        assert_eq!(b.sacked_count(), 3);
        assert!(!b.is_sacked(11));
        assert!(b.is_lost(12));
        assert!(!b.is_lost(14));
        b.advance(17);
        assert_eq!(b.sacked_count(), 0);
        assert_eq!(b.first_hole(17), None);
        b.mark(18, 19, 22);
        b.clear();
        assert_eq!(b.sacked_count(), 0);
        assert!(!b.is_sacked(18));
    }
}
