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
//! `limit`. [`CodelState`] is the per-queue state machine, which FQ-CoDel runs per flow queue.
//!
//! Cut as Linux cuts it (`sch_codel.c` and `sch_fq_codel.c` over `codel.h` and `codel_impl.h`):
//! this file is the `type = "codel"` discipline and the choice of state machine; `rfc8289.rs`
//! and `linux.rs` are the two state machines, `queue.rs` what they share.

pub mod linux;
pub mod queue;
pub mod rfc8289;

use super::{DropReason, Fifo, Limit, LinkInfo, QdiscConfig, QdiscCtx, QueueDisc, Verdict};
use crate::error::ScenarioError;
use crate::packet::PacketId;
use crate::rng::Rng;
use crate::time::from_secs;
use crate::units::{Bytes, Seconds};
use crate::validate::{require_non_negative, require_positive};
pub use queue::CeThreshold;
use queue::{CodelQueue, CodelStats};
use serde::Deserialize;

/// Which CoDel runs: RFC 8289's pseudocode ([`rfc8289`]), or Linux's arithmetic ([`linux`]).
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
    /// Mark every ECN-capable packet leaving with a longer sojourn (Linux `ce_threshold`,
    /// [`CeThreshold`]; not in RFC 8289): unset, off (Linux `CODEL_DISABLED_THRESHOLD`).
    pub ce_threshold: Option<Seconds>,
    /// With `ce_threshold_mask` ≠ 0, only packets whose ECN bits, masked, equal this (Linux
    /// `ce_threshold_selector VALUE/MASK`): 0 and 0, every packet.
    pub ce_threshold_selector: u8,
    pub ce_threshold_mask: u8,
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
            ce_threshold: None,
            ce_threshold_selector: 0,
            ce_threshold_mask: 0,
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
        if let Some(threshold) = self.ce_threshold {
            require_non_negative(&field("ce_threshold"), threshold)?;
        }
        if self.ce_threshold_selector & !self.ce_threshold_mask != 0 {
            return Err(ScenarioError::new(
                field("ce_threshold_selector"),
                format!(
                    "has bits outside ce_threshold_mask ({:#x}), got {:#x}: no packet would match",
                    self.ce_threshold_mask, self.ce_threshold_selector
                ),
            ));
        }
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

    /// The `ce_threshold` step, if set.
    pub fn ce_threshold(&self) -> Option<CeThreshold> {
        self.ce_threshold.map(|threshold| CeThreshold {
            threshold: from_secs(threshold.0),
            selector: self.ce_threshold_selector,
            mask: self.ce_threshold_mask,
        })
    }

    pub fn params(&self) -> CodelParams {
        let (target, interval) = (from_secs(self.target.0), from_secs(self.interval.0));
        let (mtu, ecn) = (self.mtu().0, self.ecn);
        match self.profile {
            CodelProfile::Rfc8289 => CodelParams::Rfc8289(rfc8289::Params {
                target,
                interval,
                mtu,
                ecn,
            }),
            CodelProfile::Linux => CodelParams::Linux(linux::Params::new(target, interval, mtu, ecn)),
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
            ce_threshold: self.ce_threshold(),
            limit: Limit::new(Some(self.limit), None),
            fifo: Fifo::default(),
            stats: CodelStats::default(),
        })
    }
}

/// The parameters in effect, in the units of the profile's state machine.
#[derive(Clone, Copy, Debug)]
pub enum CodelParams {
    Rfc8289(rfc8289::Params),
    Linux(linux::Params),
}

/// One queue's CoDel state machine: RFC 8289's, or Linux's (`profile = "linux"`).
#[derive(Clone, Copy, Debug)]
pub enum CodelState {
    Rfc8289(rfc8289::Vars),
    Linux(linux::Vars),
}

impl CodelState {
    pub fn new(p: &CodelParams) -> Self {
        match p {
            CodelParams::Rfc8289(_) => CodelState::Rfc8289(rfc8289::Vars::default()),
            CodelParams::Linux(_) => CodelState::Linux(linux::Vars::default()),
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
        match (self, p) {
            (CodelState::Rfc8289(vars), CodelParams::Rfc8289(p)) => vars.dequeue(p, queue, ctx, stats),
            (CodelState::Linux(vars), CodelParams::Linux(p)) => vars.dequeue(p, queue, ctx, stats),
            _ => unreachable!("a queue's state machine is its parameters' profile's"),
        }
    }
}

pub struct Codel {
    params: CodelParams,
    ce_threshold: Option<CeThreshold>,
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
        let id = self.state.dequeue(&self.params, &mut self.fifo, ctx, &mut self.stats)?;
        if let Some(step) = &self.ce_threshold {
            step.apply(id, ctx, &mut self.stats);
        }
        Some(id)
    }

    fn can_mark(&self) -> bool {
        true
    }

    fn counters(&self) -> Vec<(&'static str, f64)> {
        let mut counters = vec![("dropping_entries", self.stats.dropping_entries as f64)];
        if self.ce_threshold.is_some() {
            counters.push(("ce_mark", self.stats.ce_marks as f64));
        }
        counters
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Ecn, Packet};
    use crate::qdisc::testing::{link, QdiscHarness, MS};
    use crate::rng::stream;
    use crate::time::Time;

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
            h.offer(0, packet_at(0, Ecn::Ect0));
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
