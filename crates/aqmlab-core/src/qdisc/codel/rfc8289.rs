//! CoDel's state machine as RFC 8289's pseudocode (§5) runs it, in exact nanoseconds and an
//! exact 1/√count, for `type = "codel"` and `"fq_codel"` under their default profiles (the
//! algorithm in a few lines: `mod.rs`).

use super::queue::{drop_or_mark, CodelQueue, CodelStats};
use crate::packet::PacketId;
use crate::qdisc::QdiscCtx;
use crate::time::Time;

/// The parameters in effect (§4), in nanoseconds and bytes.
#[derive(Clone, Copy, Debug)]
pub struct Params {
    pub target: Time,
    pub interval: Time,
    /// §4.4's MAXPACKET: with this much or less queued behind the head, no drop.
    pub mtu: u64,
    pub ecn: bool,
}

/// One queue's CoDel state (§5.1's member variables).
#[derive(Clone, Copy, Debug, Default)]
pub struct Vars {
    /// When the sojourn time first went above target, plus interval (0: below target).
    first_above_time: Time,
    /// When the next drop is due in the dropping state.
    drop_next: Time,
    /// Drops since entering the dropping state.
    count: u32,
    /// `count` when the dropping state was last entered.
    lastcount: u32,
    dropping: bool,
}

/// The control law (RFC 8289 §5.6): the next drop `interval/√count` after `t`.
pub fn control_law(t: Time, interval: Time, count: u32) -> Time {
    t + (interval as f64 / (count as f64).sqrt()) as Time
}

impl Vars {
    /// RFC 8289 §5.3 dodequeue(): the head packet and whether the sojourn time has been at or
    /// above target for a whole interval.
    #[inline]
    fn head<Q: CodelQueue>(&mut self, p: &Params, queue: &mut Q, ctx: &QdiscCtx) -> (Option<PacketId>, bool) {
        let Some(id) = queue.pop(ctx.packets) else {
            self.first_above_time = 0;
            return (None, false);
        };
        let sojourn = ctx.now - ctx.packets[id].enqueued_at;
        if sojourn < p.target || queue.bytes_behind(id, ctx) <= p.mtu {
            self.first_above_time = 0;
            return (Some(id), false);
        }
        if self.first_above_time == 0 {
            self.first_above_time = ctx.now + p.interval;
            return (Some(id), false);
        }
        (Some(id), ctx.now >= self.first_above_time)
    }

    /// RFC 8289 §5.4 dequeue(): the next packet to send from `queue`, after CoDel's drops.
    /// Inline: its callers (every dequeue of codel and fq_codel) are in other files.
    #[inline]
    pub fn dequeue<Q: CodelQueue>(
        &mut self,
        p: &Params,
        queue: &mut Q,
        ctx: &mut QdiscCtx,
        stats: &mut CodelStats,
    ) -> Option<PacketId> {
        let now = ctx.now;
        let (mut head, mut ok_to_drop) = self.head(p, queue, ctx);
        let Some(mut id) = head else {
            self.dropping = false;
            return None;
        };
        if self.dropping {
            if !ok_to_drop {
                // §5.4: the sojourn time fell below target: leave the dropping state.
                self.dropping = false;
            }
            while self.dropping && now >= self.drop_next {
                self.count += 1;
                if !drop_or_mark(p.ecn, id, ctx) {
                    self.drop_next = control_law(self.drop_next, p.interval, self.count);
                    return Some(id);
                }
                (head, ok_to_drop) = self.head(p, queue, ctx);
                let Some(next) = head else {
                    self.dropping = false;
                    return None;
                };
                id = next;
                if ok_to_drop {
                    self.drop_next = control_law(self.drop_next, p.interval, self.count);
                } else {
                    self.dropping = false;
                }
            }
        } else if ok_to_drop {
            // §5.4-5.5: enter the dropping state with this drop.
            if drop_or_mark(p.ecn, id, ctx) {
                let (next, _) = self.head(p, queue, ctx);
                head = next;
            }
            self.dropping = true;
            stats.dropping_entries += 1;
            // §5.5: soon after the last dropping state, resume near its drop rate.
            let delta = self.count.wrapping_sub(self.lastcount);
            self.count =
                if delta > 1 && self.count > self.lastcount && now.saturating_sub(self.drop_next) < 16 * p.interval {
                    delta
                } else {
                    1
                };
            self.drop_next = control_law(now, p.interval, self.count);
            self.lastcount = self.count;
            return head;
        }
        Some(id)
    }
}
