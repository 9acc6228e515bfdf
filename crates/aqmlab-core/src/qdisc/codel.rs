//! CoDel, "Controlled Delay" (Nichols & Jacobson, ACM Queue 2012; RFC 8289, whose
//! pseudocode §5 this follows; Linux `include/net/codel_impl.h` for the ECN branch).
//!
//! A FIFO that watches each packet's sojourn time (now − when it was enqueued) at
//! dequeue. When the sojourn has stayed at or above `target` for a whole `interval`
//! (and more than one MTU is queued), CoDel enters the dropping state: it drops the
//! head packet and schedules the next drop after interval/√count (the control law),
//! dropping ever faster until the sojourn falls below `target` again. Re-entering the
//! dropping state soon after leaving it resumes from the previous count (§5.5:
//! `count = count − lastcount` when the last drop was less than 16 intervals ago). With
//! `ecn`, ECN-capable packets are marked CE instead of dropped. Arrivals meet a tail-drop
//! `limit`. [`CodelVars`] is the per-queue state machine, which FQ-CoDel runs per flow queue.

use super::{codel_linux, DropReason, Fifo, Limit, LinkInfo, QdiscConfig, QdiscCtx, QueueDisc, Verdict};
use crate::error::ScenarioError;
use crate::packet::{Ecn, PacketArena, PacketId};
use crate::rng::Rng;
use crate::time::{from_secs, Time};
use crate::units::{Bytes, Seconds};
use crate::validate::require_positive;
use serde::Deserialize;

/// Which CoDel runs: RFC 8289's pseudocode, or Linux's arithmetic ([`super::codel_linux`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CodelProfile {
    #[default]
    Rfc8289,
    Linux,
}

/// `type = "codel"`; every field optional. The names are tc codel's.
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CodelConfig {
    /// `"rfc8289"` (the default) or `"linux"`: Linux's clock of 1024 ns, its Newton-step
    /// 1/√count, and the device's MTU.
    pub profile: CodelProfile,
    /// Acceptable standing sojourn time: 5 ms (RFC 8289 §4.4, "TARGET").
    pub target: Seconds,
    /// Sliding window for the minimum sojourn: 100 ms (RFC 8289 §4.3, "INTERVAL").
    pub interval: Seconds,
    /// Tail-drop limit in packets: 1000 (Linux sch_codel `limit`).
    pub limit: u64,
    /// Below one MTU queued, never drop (RFC 8289 §4.4 "MAXPACKET"): 1500 bytes; `linux`: 1514,
    /// the device's `psched_mtu` (Ethernet MTU and header).
    pub mtu: Option<Bytes>,
    /// Mark ECN-capable packets instead of dropping them (RFC 8289 §4.5; Linux `ecn`): off.
    pub ecn: bool,
}

impl Default for CodelConfig {
    fn default() -> Self {
        CodelConfig {
            profile: CodelProfile::Rfc8289,
            target: Seconds(0.005),
            interval: Seconds(0.1),
            limit: 1000,
            mtu: None,
            ecn: false,
        }
    }
}

/// RFC 8289's MAXPACKET and Linux's `psched_mtu` of an Ethernet device.
const RFC_MTU: Bytes = Bytes(1500);
const LINUX_MTU: Bytes = Bytes(1514);

impl CodelConfig {
    fn mtu(&self) -> Bytes {
        self.mtu.unwrap_or(match self.profile {
            CodelProfile::Rfc8289 => RFC_MTU,
            CodelProfile::Linux => LINUX_MTU,
        })
    }

    pub fn validate_at(&self, field: impl Fn(&str) -> String) -> Result<(), ScenarioError> {
        require_positive(&field("target"), self.target)?;
        require_positive(&field("interval"), self.interval)?;
        require_positive(&field("mtu"), self.mtu().0 as f64)?;
        if self.target.0 >= self.interval.0 {
            return Err(ScenarioError::new(
                field("target"),
                format!(
                    "must be below interval = {} s, got {} s",
                    self.interval.0, self.target.0
                ),
            ));
        }
        Ok(())
    }

    pub fn params(&self) -> CodelParams {
        let (target, interval) = (from_secs(self.target.0), from_secs(self.interval.0));
        CodelParams {
            target,
            interval,
            mtu: self.mtu().0,
            ecn: self.ecn,
            linux: (self.profile == CodelProfile::Linux)
                .then(|| codel_linux::Params::new(target, interval, self.mtu().0, self.ecn)),
        }
    }
}

impl QdiscConfig for CodelConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        self.validate_at(|name| format!("{path}.{name}"))?;
        Limit::new(Some(self.limit), None).validate(path)
    }

    fn build(&self, _link: &LinkInfo, _rng: Rng) -> Box<dyn QueueDisc> {
        let params = self.params();
        Box::new(Codel {
            state: CodelState::new(&params),
            params,
            limit: Limit::new(Some(self.limit), None),
            fifo: Fifo::default(),
            stats: CodelStats::default(),
        })
    }
}

/// The parameters in effect.
#[derive(Clone, Copy, Debug)]
pub struct CodelParams {
    pub target: Time,
    pub interval: Time,
    pub mtu: u64,
    pub ecn: bool,
    /// The same in Linux's units, with `profile = "linux"`.
    pub linux: Option<codel_linux::Params>,
}

/// One queue's CoDel state machine: RFC 8289's, or Linux's (`profile = "linux"`).
#[derive(Clone, Copy, Debug)]
pub enum CodelState {
    Rfc(CodelVars),
    Linux(codel_linux::Vars),
}

impl CodelState {
    pub fn new(p: &CodelParams) -> Self {
        match p.linux {
            None => CodelState::Rfc(CodelVars::default()),
            Some(_) => CodelState::Linux(codel_linux::Vars::default()),
        }
    }

    /// The next packet to send from `queue`, after CoDel's drops (the MTU test reads the bytes
    /// behind the head in `queue` as RFC 8289 does, or the whole qdisc's backlog as Linux does).
    pub fn dequeue<Q: CodelQueue>(
        &mut self,
        p: &CodelParams,
        queue: &mut Q,
        ctx: &mut QdiscCtx,
        stats: &mut CodelStats,
    ) -> Option<PacketId> {
        match (self, &p.linux) {
            (CodelState::Rfc(vars), _) => vars.dequeue(p, queue, ctx, stats),
            (CodelState::Linux(vars), Some(linux)) => vars.dequeue(linux, queue, ctx, stats),
            (CodelState::Linux(_), None) => unreachable!("a Linux state has Linux parameters"),
        }
    }
}

/// The queue a CoDel state machine serves: its head, and the bytes queued behind the head, which
/// RFC 8289's MTU test reads ("more than one MTU is queued").
pub trait CodelQueue {
    /// Takes the head packet.
    fn pop(&mut self, packets: &PacketArena) -> Option<PacketId>;
    /// Bytes still queued behind `head`, just taken by [`Self::pop`].
    fn bytes_behind(&self, head: PacketId, ctx: &QdiscCtx) -> u64;
}

/// `type = "codel"`'s one queue is the whole qdisc: the link counts its bytes, `head` among them
/// until the dequeue returns ([`QdiscCtx::backlog`]).
impl CodelQueue for Fifo {
    fn pop(&mut self, packets: &PacketArena) -> Option<PacketId> {
        Fifo::pop(self, packets)
    }

    fn bytes_behind(&self, head: PacketId, ctx: &QdiscCtx) -> u64 {
        ctx.backlog().without(ctx.packets[head].size).bytes
    }
}

/// One queue's CoDel state (RFC 8289 §5.1's member variables).
#[derive(Clone, Copy, Debug, Default)]
pub struct CodelVars {
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

/// What CoDel counts besides the engine's drop and mark tables.
#[derive(Clone, Copy, Debug, Default)]
pub struct CodelStats {
    /// Times the dropping state was entered.
    pub dropping_entries: u64,
}

/// The control law (RFC 8289 §5.6): the next drop `interval/√count` after `t`.
pub fn control_law(t: Time, interval: Time, count: u32) -> Time {
    t + (interval as f64 / (count as f64).sqrt()) as Time
}

impl CodelVars {
    /// RFC 8289 §5.3 dodequeue(): the head packet and whether the sojourn time has been at or
    /// above target for a whole interval.
    fn head<Q: CodelQueue>(&mut self, p: &CodelParams, queue: &mut Q, ctx: &QdiscCtx) -> (Option<PacketId>, bool) {
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
    pub fn dequeue<Q: CodelQueue>(
        &mut self,
        p: &CodelParams,
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

pub struct Codel {
    params: CodelParams,
    limit: Limit,
    fifo: Fifo,
    state: CodelState,
    stats: CodelStats,
}

impl QueueDisc for Codel {
    fn enqueue(&mut self, id: PacketId, ctx: &mut QdiscCtx) -> Verdict {
        let queued = ctx.backlog();
        if !self.limit.admits(queued.packets, queued.bytes, ctx.packets[id].size) {
            return Verdict::Dropped(DropReason::Overflow);
        }
        self.fifo.push(id);
        Verdict::Enqueued
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        self.state.dequeue(&self.params, &mut self.fifo, ctx, &mut self.stats)
    }

    fn can_mark(&self) -> bool {
        true
    }

    fn counters(&self) -> Vec<(&'static str, f64)> {
        vec![("dropping_entries", self.stats.dropping_entries as f64)]
    }
}

/// Drops `id`, or marks it CE and keeps it when `ecn` is on and the packet is ECN-capable
/// (Linux codel_dequeue()); whether it was dropped. Shared by both profiles (codel_linux.rs).
pub(crate) fn drop_or_mark(ecn: bool, id: PacketId, ctx: &mut QdiscCtx) -> bool {
    if ecn && ctx.packets[id].ecn != Ecn::NotEct {
        ctx.mark(id);
        return false;
    }
    ctx.drop_packet(id, DropReason::Codel);
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Packet;
    use crate::qdisc::testing::{link, QdiscHarness, MS};
    use crate::rng::stream;

    const LINK: LinkInfo = link(10e6);

    fn codel(config: CodelConfig) -> QdiscHarness<dyn QueueDisc> {
        QdiscHarness::new(config.build(&LINK, stream(1, "codel")))
    }

    /// A 1000-byte packet enqueued at `t`.
    fn packet_at(t: Time, ecn: Ecn) -> Packet {
        Packet {
            size: 1000,
            enqueued_at: t,
            ecn,
            ..Default::default()
        }
    }

    #[test]
    fn drops_follow_interval_over_sqrt_count() {
        // A standing queue of old packets: every sojourn is far above target. Serve one
        // packet per ms and record when CoDel drops.
        let mut h = codel(CodelConfig::default());
        for _ in 0..2000 {
            h.offer(0, packet_at(0, Ecn::NotEct));
        }
        let mut drop_times = Vec::new();
        for ms in 1..=1500 {
            let before = h.drops(DropReason::Codel);
            h.depart(ms * MS);
            if h.drops(DropReason::Codel) > before {
                drop_times.push(ms * MS);
            }
        }
        // Every packet was enqueued at 0: the sojourn reaches the 5 ms target at the 5-ms dequeue,
        // which arms first_above_time = 5 + 100 ms; the first drop is the dequeue at 105 ms.
        assert_eq!(drop_times[0], 105 * MS);
        // Then drop n+1 falls interval/√n after drop n (rounded up to the next 1-ms dequeue).
        for (n, pair) in drop_times.windows(2).enumerate().take(20) {
            let gap = (100.0 / ((n + 1) as f64).sqrt()).ceil() as Time * MS;
            assert!(
                pair[1] - pair[0] == gap || pair[1] - pair[0] == gap - MS,
                "drop {n}: {pair:?}, gap {gap}"
            );
        }
    }

    #[test]
    fn no_drop_below_target_or_below_one_mtu() {
        let mut h = codel(CodelConfig::default());
        // Sojourn 4 ms < 5 ms target, forever: no drop.
        for ms in 0..1000 {
            h.offer(ms * MS, packet_at(ms * MS, Ecn::NotEct));
            h.depart(ms * MS + 4 * MS);
        }
        assert_eq!(h.drops(DropReason::Codel), 0);
        // An old packet alone (one MTU or less queued): no drop either.
        let mut h = codel(CodelConfig::default());
        for ms in 1..=500 {
            h.offer(ms * MS, packet_at(0, Ecn::NotEct));
            h.depart(ms * MS + MS / 2);
        }
        assert_eq!(h.drops(DropReason::Codel), 0);
    }

    #[test]
    fn reentering_soon_resumes_the_previous_count() {
        let mut h = codel(CodelConfig::default());
        for _ in 0..3000 {
            h.offer(0, packet_at(0, Ecn::NotEct));
        }
        for ms in 1..=600 {
            h.depart(ms * MS);
        }
        let first = h.drops(DropReason::Codel);
        // Drain the old packets and serve fresh ones below target for 50 ms (leaving the
        // dropping state), then a standing queue again.
        let mut t = 601 * MS;
        while h.backlog.packets > 0 {
            h.depart(t);
        }
        for _ in 0..50 {
            h.offer(t, packet_at(t, Ecn::NotEct));
            t += MS;
            h.depart(t);
        }
        for _ in 0..2000 {
            h.offer(t, packet_at(t - 200 * MS, Ecn::NotEct));
        }
        let before = h.drops(DropReason::Codel);
        let mut gaps = Vec::new();
        let mut last = None;
        for _ in 0..400 {
            t += MS;
            let n = h.drops(DropReason::Codel);
            h.depart(t);
            if h.drops(DropReason::Codel) > n {
                if let Some(l) = last {
                    gaps.push(t - l);
                }
                last = Some(t);
            }
        }
        assert!(first > 3 && h.drops(DropReason::Codel) > before);
        // Resumed at count = count − lastcount (> 1): the first gap is interval/√(that) <
        // interval/√2, where a fresh start would wait interval/√1 = 100 ms and then 71 ms.
        assert!(gaps[0] < 70 * MS, "gaps {gaps:?}");
    }

    #[test]
    fn ecn_capable_packets_are_marked_not_dropped() {
        let mut h = codel(CodelConfig {
            ecn: true,
            ..Default::default()
        });
        for _ in 0..500 {
            h.offer(0, packet_at(0, Ecn::Ect));
        }
        let mut marked = 0;
        for ms in 1..=400 {
            if h.depart(ms * MS).is_some_and(|p| p.ecn == Ecn::Ce) {
                marked += 1;
            }
        }
        assert_eq!(h.drops(DropReason::Codel), 0);
        assert!(marked >= 5, "{marked}");
    }

    #[test]
    fn errors_name_the_field() {
        let err = |c: CodelConfig| c.validate("q").unwrap_err().to_string();
        assert_eq!(
            err(CodelConfig {
                target: Seconds(0.2),
                ..Default::default()
            }),
            "q.target: must be below interval = 0.1 s, got 0.2 s"
        );
        assert!(err(CodelConfig {
            interval: Seconds(0.0),
            ..Default::default()
        })
        .starts_with("q.interval: must be > 0"));
    }
}
