//! A link direction whose capacity follows a Mahimahi trace ([`LinkTrace`]): when each packet
//! has left, as Mahimahi's LinkQueue::rationalize() (src/frontend/link_queue.cc) delivers it.
//! Each opportunity carries [`OPPORTUNITY_BYTES`]; a packet takes bytes from the opportunities
//! after it starts until it has its size, and leaves at the time of the one that completes
//! it. What that opportunity has left serves a packet that starts at that same instant (the
//! next one waiting); otherwise the bytes are lost, as are the opportunities that pass while
//! the link is idle (Mahimahi burns them before a packet arriving then is queued).

use crate::scenario::trace::{LinkTrace, OPPORTUNITY_BYTES};
use crate::time::Time;

/// Where a link direction is in its trace.
#[derive(Clone, Debug)]
pub struct DeliveryClock {
    trace: LinkTrace,
    /// The next opportunity not used yet, counted over the loops.
    next: u64,
    /// Bytes left in the last opportunity used, and its time.
    left: u32,
    left_at: Time,
}

impl DeliveryClock {
    pub fn new(trace: &LinkTrace) -> Self {
        DeliveryClock {
            trace: trace.clone(),
            next: 0,
            left: 0,
            left_at: 0,
        }
    }

    /// The time of opportunity `k` (Mahimahi's `schedule_[i] + base_timestamp_`, the base
    /// moving on by the last timestamp each loop).
    fn time_of(&self, k: u64) -> Time {
        let n = self.trace.times.len() as u64;
        (k / n) * self.trace.period() + self.trace.times[(k % n) as usize]
    }

    /// The number of opportunities at or before `now`, over the loops.
    fn count_through(&self, now: Time) -> u64 {
        let n = self.trace.times.len() as u64;
        let lap = now / self.trace.period();
        let base = lap * self.trace.period();
        let within = self.trace.times.partition_point(|&t| base + t <= now) as u64;
        lap * n + within
    }

    /// A packet of `bytes` starts at `now`: when it has left. A packet that starts at the
    /// instant the one before left (the next one waiting) may use what is left of that
    /// opportunity and the others of that instant; one that starts on an idle link, only
    /// those after `now`.
    pub fn departure(&mut self, now: Time, bytes: u32) -> Time {
        let mut need = bytes;
        let waiting = self.next > 0 && self.left_at == now;
        if waiting {
            let used = self.left.min(need);
            self.left -= used;
            need -= used;
        } else {
            self.next = self.next.max(self.count_through(now));
        }
        if need == 0 {
            return now;
        }
        let count = u64::from(need.div_ceil(OPPORTUNITY_BYTES));
        let last = self.next + count - 1;
        self.next = last + 1;
        self.left = (count as u32) * OPPORTUNITY_BYTES - need;
        self.left_at = self.time_of(last);
        self.left_at
    }

    /// The mean capacity over `[from, to)`, bits/s: the opportunities in it.
    pub fn mean_rate(&self, from: Time, to: Time) -> f64 {
        // Opportunities at or before t - 1 ns are those before t.
        let before = |t: Time| if t == 0 { 0 } else { self.count_through(t - 1) };
        let opportunities = before(to) - before(from);
        opportunities as f64 * f64::from(OPPORTUNITY_BYTES) * 8.0 / crate::time::to_secs(to - from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Time = 1_000_000;

    fn clock(text: &str) -> DeliveryClock {
        DeliveryClock::new(&LinkTrace::parse("t", text).unwrap())
    }

    #[test]
    fn a_packet_leaves_at_the_first_opportunity_after_it_starts() {
        let mut c = clock("2\n4\n");
        // Started at 0: the opportunity at 2 ms; the one at 2 ms is then used, so next at 4.
        assert_eq!(c.departure(0, 1500), 2 * MS);
        assert_eq!(c.departure(2 * MS + 1, 1500), 4 * MS);
        // The trace loops after 4 ms: its next opportunities are at 6 and 8 ms.
        assert_eq!(c.departure(4 * MS + 10, 1500), 6 * MS);
        // Idle past 8 and 10 ms: those are lost.
        assert_eq!(c.departure(11 * MS, 1500), 12 * MS);
    }

    #[test]
    fn small_packets_share_an_opportunity_and_large_ones_take_several() {
        let mut c = clock("1\n2\n3\n4\n");
        // 1504 bytes at 1 ms: a 1000-byte packet, then 504 of the next one's 1000 (it waits
        // for 2 ms), whose 1008 left serve two 500-byte packets at 2 ms.
        assert_eq!(c.departure(0, 1000), MS);
        assert_eq!(c.departure(MS, 1000), 2 * MS);
        assert_eq!(c.departure(2 * MS, 500), 2 * MS);
        assert_eq!(c.departure(2 * MS, 500), 2 * MS);
        // 8 bytes left at 2 ms; a 4000-byte packet takes them and three more opportunities:
        // 3, 4 and, the trace looping after 4 ms, 5 ms.
        assert_eq!(c.departure(2 * MS, 4000), 5 * MS);
    }

    #[test]
    fn lines_of_one_millisecond_are_that_many_packets_in_it() {
        let mut c = clock("1\n1\n2\n");
        assert_eq!(c.departure(0, 1500), MS);
        // Waiting: the 4 bytes left, then the second opportunity at 1 ms.
        assert_eq!(c.departure(MS, 1500), MS);
        assert_eq!(c.departure(MS, 1500), 2 * MS);
    }

    #[test]
    fn the_mean_rate_counts_the_opportunities_in_the_window() {
        let c = clock("1\n1\n2\n");
        // 3 opportunities per 2 ms, over 1000 loops.
        let per_loop = 3.0 * 1504.0 * 8.0 / 0.002;
        assert!((c.mean_rate(MS / 2, 2000 * MS + MS / 2) / per_loop - 1.0).abs() < 1e-12);
        // [0.5, 1.5) ms holds the two at 1 ms only: 2 opportunities in 1 ms.
        let two = 2.0 * 1504.0 * 8.0 / 0.001;
        assert!((c.mean_rate(MS / 2, 3 * MS / 2) / two - 1.0).abs() < 1e-12);
    }
}
