//! DualPI2 as Linux runs it (`type = "dualpi2", profile = "linux"`): `net/sched/sch_dualpi2.c` as
//! merged in mainline (6.17; read from the 6.18 tree), configured as `tc qdisc add ... dualpi2`
//! configures it. Against RFC 9332's pseudocode (`rfc9332.rs`):
//! - **the scheduler** is a weighted round robin on a byte credit, not a time-shifted FIFO: L is
//!   served while the credit is ≤ 0 (or C is empty); a packet sent from L while C waits adds
//!   `wc`·its size, one sent from C while L waits takes `wl`·its size (wc = `c_protection`, 10 %;
//!   wl = 100 − wc); the credit starts at MTU·(wc − wl), so L first, and is reset whenever both
//!   queues are empty (dequeue_packet, dualpi2_calculate_c_protection);
//! - **the controller's delay** is the larger of the two heads' sojourns, max(L, C) (the RFC: C's);
//!   p′ is a 32-bit fixed point, α and β are tc's Hz in 1/256 scaled to 64 ns steps
//!   (dualpi2_scale_alpha_beta), the step is divided by 64 and p′ saturates at 0 and 1
//!   (calculate_probability); without `drop_on_overload` p′ is capped at 1/k;
//! - **random draws**: a packet is judged with a fresh 32-bit draw per probability, `rand ≤ p`
//!   (dualpi2_roll), p_C = p′² as two draws against p′ (the RFC: a deterministic `recur`);
//! - **the native L AQM is a step**, not a ramp: an L packet whose own sojourn at dequeue exceeds
//!   `step_thresh` (1 ms; or whose L queue, after it left, holds more than `step_thresh` packets
//!   in packet mode) is marked, whatever p′ (do_step_aqm), provided the L queue held at least
//!   `min_qlen_step` packets when it arrived; the coupled mark is decided first, at the same
//!   dequeue (must_drop), and a packet may get both;
//! - **no AQM below two MTUs**: no coupled mark or drop while the qdisc holds less than 2·MTU
//!   bytes, the leaving packet not counted (must_drop);
//! - **overload** (k·p′ > 1): C drops even ECN-capable packets; L packets are dropped with p′²
//!   and marked otherwise, or only marked without `drop_on_overload` (dualpi2_scalable_marking);
//! - **where**: the coupled AQM runs at dequeue (`drop_dequeue`, the default) or at enqueue
//!   (`drop_enqueue`); the step always at dequeue;
//! - **the buffer**: `limit` packets (10000) and `memlimit` bytes of truesize (2·MTU per packet
//!   of `limit` by default), tail drop on either.
//!
//! The PI timer is an hrtimer, first `tupdate` after setup, then every `tupdate` (dualpi2_init,
//! dualpi2_timer). Not modelled: tc filters and `skb->priority` classification into the third
//! class (DUALPI2_C_LLLL, never marked), `split_gso` (aqmlab's packets are never aggregates), and
//! tc's `max_rtt`/`typical_rtt` shorthands for target, tupdate, alpha and beta.

use super::{Action, Classification, DualQueue, DualStats, Queue};
use crate::error::ScenarioError;
use crate::packet::{Ecn, PacketId};
use crate::qdisc::fq_codel::TRUESIZE_OVERHEAD;
use crate::qdisc::{DropReason, LinkInfo, QdiscConfig, QdiscCtx, QueueDisc, Verdict};
use crate::rng::Rng;
use crate::time::{from_secs, Time, NANOS_PER_SEC};
use crate::units::{Bytes, Seconds};
use rand::Rng as _;
use serde::Deserialize;
use std::collections::VecDeque;

/// sch_dualpi2.c `MAX_PROB`: probability 1 as a 32-bit fixed point.
const MAX_PROB: u32 = u32::MAX;
/// `ALPHA_BETA_SHIFT` − `ALPHA_BETA_GRANULARITY`: netlink's 1/256 Hz to internal 64 ns units.
const ALPHA_BETA_SCALING: u32 = 8 - 6;
/// `ALPHA_BETA_GRANULARITY`: the controller's step is divided by 2^6.
const ALPHA_BETA_GRANULARITY: u32 = 6;
/// `ALPHA_BETA_MAX`: the largest α or β netlink takes, in 1/256 Hz.
const ALPHA_BETA_MAX: u64 = (1 << 31) - 1;
/// `MAX_WC`: the weights are percentages.
const MAX_WC: u8 = 100;

/// Whether the step threshold is a time or a queue length (tc `step_thresh 1ms` | `step_thresh 5p`
/// in words; here `step_thresh` or `step_thresh_packets`).
#[derive(Clone, Copy, Debug, PartialEq)]
enum StepThreshold {
    Sojourn(Time),
    Packets(u64),
}

/// `type = "dualpi2", profile = "linux"`: tc dualpi2's words, each default as
/// dualpi2_reset_default sets it.
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DualPi2LinuxConfig {
    /// Packets in both queues: 10000 (`q->sch->limit = 10000`).
    pub limit: u64,
    /// Bytes of truesize in both queues (tc `memlimit`): limit · 2 · MTU (get_memory_limit).
    pub memlimit: Option<Bytes>,
    /// 15 ms (`q->pi2_target = 15 * NSEC_PER_MSEC`).
    pub target: Seconds,
    /// 16 ms (`q->pi2_tupdate = 16 * NSEC_PER_MSEC`).
    pub tupdate: Seconds,
    /// Hz: 0.16 (`dualpi2_scale_alpha_beta(41)`, 41/256 = 0.16015625); tc sends round(α·256).
    pub alpha: f64,
    /// Hz: 3.2 (`dualpi2_scale_alpha_beta(819)`, 819/256 = 3.19921875).
    pub beta: f64,
    /// The L queue's step, on a packet's sojourn: 1 ms (`q->step_thresh = 1 * NSEC_PER_MSEC`,
    /// `step_in_packets = false`).
    pub step_thresh: Option<Seconds>,
    /// The step on the L queue's length instead (tc `step_thresh Np`): unset.
    pub step_thresh_packets: Option<u64>,
    /// The L queue's length from which arrivals get the step: 0, always (`q->min_qlen_step = 0`).
    pub min_qlen_step: u64,
    /// k: 2 (`q->coupling_factor = 2`, "window fairness for equal RTTs").
    pub coupling_factor: u8,
    /// Drop under overload (tc `drop_on_overload`, the default: TC_DUALPI2_DROP_OVERLOAD_DROP), or
    /// keep marking and let the buffer overflow (`overflow`: false).
    pub drop_on_overload: bool,
    /// Run the coupled AQM at enqueue (tc `drop_enqueue`) instead of dequeue (`drop_dequeue`, the
    /// default: TC_DUALPI2_DROP_EARLY_DROP_DEQUEUE).
    pub drop_enqueue: bool,
    /// C's weight in the scheduler, percent (tc `classic_protection`): 10
    /// (`dualpi2_calculate_c_protection(q->sch, q, 10)`).
    pub classic_protection: u8,
    /// `l4s_ect` (the default: TC_DUALPI2_ECN_MASK_L4S_ECT) or `any_ect`.
    pub classification: Classification,
    /// The device's psched_mtu, MTU plus its link header: 1514 bytes (Ethernet).
    pub mtu: Bytes,
}

impl Default for DualPi2LinuxConfig {
    fn default() -> Self {
        DualPi2LinuxConfig {
            limit: 10000,
            memlimit: None,
            target: Seconds(0.015),
            tupdate: Seconds(0.016),
            alpha: 0.16,
            beta: 3.2,
            step_thresh: None,
            step_thresh_packets: None,
            min_qlen_step: 0,
            coupling_factor: 2,
            drop_on_overload: true,
            drop_enqueue: false,
            classic_protection: 10,
            classification: Classification::L4sEct,
            mtu: Bytes(1514),
        }
    }
}

/// The step's default: 1 ms of sojourn.
const DEFAULT_STEP: Seconds = Seconds(0.001);

impl DualPi2LinuxConfig {
    /// tc's α or β (Hz) as netlink carries it: 1/256 Hz, rounded.
    fn netlink_gain(hz: f64) -> u64 {
        (hz * 256.0).round() as u64
    }

    fn step(&self) -> StepThreshold {
        match self.step_thresh_packets {
            Some(packets) => StepThreshold::Packets(packets),
            None => StepThreshold::Sojourn(from_secs(self.step_thresh.unwrap_or(DEFAULT_STEP).0)),
        }
    }
}

impl QdiscConfig for DualPi2LinuxConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        let field = |name: &str| format!("{path}.{name}");
        if self.limit == 0 {
            return Err(ScenarioError::new(field("limit"), "must be > 0, got 0"));
        }
        if self.memlimit == Some(Bytes(0)) {
            return Err(ScenarioError::new(field("memlimit"), "must be > 0, got 0B"));
        }
        for (name, hz) in [("alpha", self.alpha), ("beta", self.beta)] {
            let gain = Self::netlink_gain(hz);
            if !(hz.is_finite() && (1..=ALPHA_BETA_MAX).contains(&gain)) {
                return Err(ScenarioError::new(
                    field(name),
                    format!("must be 1/256 Hz to {ALPHA_BETA_MAX}/256 Hz (tc dualpi2 sends Hz × 256), got {hz}"),
                ));
            }
        }
        if self.tupdate.0 < 1e-6 {
            return Err(ScenarioError::new(
                field("tupdate"),
                format!("must be at least 1us (tc passes microseconds), got {}", self.tupdate),
            ));
        }
        if self.target.0 < 0.0 {
            return Err(ScenarioError::new(
                field("target"),
                format!("must be >= 0, got {}", self.target),
            ));
        }
        if self.step_thresh.is_some() && self.step_thresh_packets.is_some() {
            return Err(ScenarioError::new(
                field("step_thresh_packets"),
                "give step_thresh or step_thresh_packets, not both (sch_dualpi2: \"multiple step thresh attributes\")",
            ));
        }
        if self.step_thresh.is_some_and(|t| t.0 < 0.0) {
            return Err(ScenarioError::new(field("step_thresh"), "must be >= 0"));
        }
        if self.coupling_factor == 0 {
            return Err(ScenarioError::new(field("coupling_factor"), "must be >= 1, got 0"));
        }
        if self.classic_protection > MAX_WC {
            return Err(ScenarioError::new(
                field("classic_protection"),
                format!("must be 0..=100 (percent), got {}", self.classic_protection),
            ));
        }
        if self.mtu.0 == 0 {
            return Err(ScenarioError::new(field("mtu"), "must be > 0, got 0B"));
        }
        Ok(())
    }

    fn build(&self, _link: &LinkInfo, rng: Rng) -> Box<dyn QueueDisc> {
        Box::new(DualPi2Linux::new(self, rng))
    }
}

/// dualpi2_scale_alpha_beta: 1/256 Hz to probability (2^32) per 64 ns of delay.
fn scale_alpha_beta(netlink: u64) -> u64 {
    ((netlink * u64::from(MAX_PROB)) >> ALPHA_BETA_SCALING) / NANOS_PER_SEC
}

/// `struct dualpi2_sched_data`'s parameters, in the kernel's units.
struct Params {
    limit: u64,
    memory_limit: u64,
    target: i64,
    tupdate: Time,
    alpha: i64,
    beta: i64,
    step: StepThreshold,
    min_qlen_step: u64,
    coupling: u64,
    drop_overload: bool,
    drop_enqueue: bool,
    /// C's and L's weights, percent.
    wc: i64,
    wl: i64,
    /// The credit's reset value, MTU · (wc − wl).
    credit_init: i64,
    classification: Classification,
    mtu: u64,
}

pub struct DualPi2Linux {
    params: Params,
    queues: DualQueue,
    /// Whether each packet in L, oldest first, may get the step (`dualpi2_skb_cb.apply_step`).
    apply_step: VecDeque<bool>,
    rng: Rng,
    /// p′, as `pi2_prob`.
    prob: u32,
    last_qdelay: i64,
    next_update: Time,
    /// The WRR credit: L is served while it is ≤ 0.
    credit: i64,
    stats: DualStats,
    /// Marks by the step (Linux `step_marks`).
    step_marks: u64,
}

impl DualPi2Linux {
    pub fn new(cfg: &DualPi2LinuxConfig, rng: Rng) -> Self {
        let wc = i64::from(cfg.classic_protection);
        let wl = i64::from(MAX_WC) - wc;
        let credit_init = cfg.mtu.0 as i64 * (wc - wl);
        let memory_limit = cfg
            .memlimit
            .map_or((cfg.limit * 2 * cfg.mtu.0).min(u64::from(u32::MAX)), |b| b.0);
        DualPi2Linux {
            params: Params {
                limit: cfg.limit,
                memory_limit,
                target: from_secs(cfg.target.0) as i64,
                tupdate: from_secs(cfg.tupdate.0),
                alpha: scale_alpha_beta(DualPi2LinuxConfig::netlink_gain(cfg.alpha)) as i64,
                beta: scale_alpha_beta(DualPi2LinuxConfig::netlink_gain(cfg.beta)) as i64,
                step: cfg.step(),
                min_qlen_step: cfg.min_qlen_step,
                coupling: u64::from(cfg.coupling_factor),
                drop_overload: cfg.drop_on_overload,
                drop_enqueue: cfg.drop_enqueue,
                wc,
                wl,
                credit_init,
                classification: cfg.classification,
                mtu: cfg.mtu.0,
            },
            queues: DualQueue::default(),
            apply_step: VecDeque::new(),
            rng,
            prob: 0,
            last_qdelay: 0,
            next_update: from_secs(cfg.tupdate.0),
            credit: credit_init,
            stats: DualStats::default(),
            step_marks: 0,
        }
    }

    /// calculate_probability at `now`, the heads unchanged since the last event.
    fn calculate_probability(&mut self, now: Time, packets: &crate::packet::PacketArena) {
        let p = &self.params;
        let qdelay_c = DualQueue::head_sojourn(&self.queues.c, now, packets);
        let qdelay_l = DualQueue::head_sojourn(&self.queues.l, now, packets);
        let qdelay = qdelay_c.max(qdelay_l) as i64;
        let delta = (qdelay - p.target) * p.alpha + (qdelay - self.last_qdelay) * p.beta;
        self.last_qdelay = qdelay;
        // __scale_delta on the magnitude, then bounded to [0, MAX_PROB] (the kernel's wrap tests).
        let step = delta.unsigned_abs() >> ALPHA_BETA_GRANULARITY;
        let prob = if delta > 0 {
            (u64::from(self.prob) + step).min(u64::from(MAX_PROB))
        } else {
            u64::from(self.prob).saturating_sub(step)
        } as u32;
        self.prob = if p.drop_overload {
            prob
        } else {
            // "cap the L4S probability to 100% to keep window fairness when overflowing"
            prob.min(MAX_PROB / p.coupling as u32)
        };
    }

    /// Runs the timer's updates due by `now`.
    fn catch_up(&mut self, now: Time, packets: &crate::packet::PacketArena) {
        while now >= self.next_update {
            let at = self.next_update;
            self.calculate_probability(at, packets);
            self.next_update += self.params.tupdate;
        }
    }

    /// dualpi2_roll: a fresh 32-bit draw `<= prob`.
    fn roll(&mut self, prob: u32) -> bool {
        self.rng.gen::<u32>() <= prob
    }

    /// must_drop: the coupled AQM's verdict on a packet of `queue` carrying `ecn`, with `backlog`
    /// bytes left in the qdisc.
    fn must_drop(&mut self, queue: Queue, ecn: Ecn, backlog: u64) -> Action {
        if backlog < 2 * self.params.mtu {
            return Action::Pass;
        }
        let prob = self.prob;
        let local_l_prob = u64::from(prob) * self.params.coupling;
        let overload = local_l_prob > u64::from(MAX_PROB);
        let ecn_capable = ecn != Ecn::NotEct;
        match queue {
            // dualpi2_classic_marking: p_C = p′² as two draws; under overload every packet is dropped.
            Queue::C if self.roll(prob) && self.roll(prob) => {
                if overload || !ecn_capable {
                    Action::Drop
                } else {
                    Action::Mark
                }
            }
            Queue::C => Action::Pass,
            // dualpi2_scalable_marking under overload: Classic drops first (with drop_on_overload), then marks.
            Queue::L if overload => {
                if self.params.drop_overload && self.roll(prob) && self.roll(prob) {
                    Action::Drop
                } else {
                    Action::Mark
                }
            }
            Queue::L if self.roll(local_l_prob as u32) => {
                if ecn_capable {
                    Action::Mark
                } else {
                    Action::Drop
                }
            }
            Queue::L => Action::Pass,
        }
    }

    /// dequeue_packet: the WRR's choice, and the credit change if the packet is sent.
    fn choose(&self) -> Option<(Queue, i64)> {
        let (l_len, c_len) = (self.queues.l.len(), self.queues.c.len());
        if l_len > 0 && (c_len == 0 || self.credit <= 0) {
            Some((Queue::L, if c_len > 0 { self.params.wc } else { 0 }))
        } else if c_len > 0 {
            Some((Queue::C, if l_len > 0 { -self.params.wl } else { 0 }))
        } else {
            None
        }
    }

    /// do_step_aqm for a packet just taken from L: whether it is above the step (then marked; every
    /// L packet is ECN-capable, classified by its ECN bits, so the step never drops).
    fn above_step(&self, id: PacketId, ctx: &QdiscCtx) -> bool {
        match self.params.step {
            StepThreshold::Sojourn(threshold) => ctx.now - ctx.packets[id].enqueued_at > threshold,
            StepThreshold::Packets(threshold) => self.queues.l.len() as u64 > threshold,
        }
    }

    /// p′, 0 to 1.
    pub fn prob(&self) -> f64 {
        f64::from(self.prob) / f64::from(MAX_PROB)
    }
}

impl QueueDisc for DualPi2Linux {
    /// dualpi2_qdisc_enqueue / dualpi2_enqueue_skb.
    fn enqueue(&mut self, id: PacketId, ctx: &mut QdiscCtx) -> Verdict {
        self.catch_up(ctx.now, ctx.packets);
        let queued = ctx.backlog();
        let memory = queued.bytes + queued.packets as u64 * TRUESIZE_OVERHEAD;
        let truesize = u64::from(ctx.packets[id].size) + TRUESIZE_OVERHEAD;
        if queued.packets as u64 >= self.params.limit || memory + truesize > self.params.memory_limit {
            return Verdict::Dropped(DropReason::Overflow);
        }
        let ecn = ctx.packets[id].ecn;
        let queue = if self.params.classification.is_l4s(ecn) {
            Queue::L
        } else {
            Queue::C
        };
        if self.params.drop_enqueue {
            match self.must_drop(queue, ecn, queued.bytes) {
                Action::Drop => {
                    self.stats.count_drop(queue);
                    return Verdict::Dropped(DropReason::Early);
                }
                Action::Mark => {
                    ctx.mark(id);
                    self.stats.count_mark(queue);
                }
                Action::Pass => {}
            }
        }
        if queue == Queue::L {
            self.apply_step
                .push_back(self.queues.l.len() as u64 >= self.params.min_qlen_step);
        }
        self.stats.count_arrival(queue);
        self.queues.push(queue, id);
        Verdict::Enqueued
    }

    /// __dualpi2_qdisc_dequeue: a packet the coupled AQM drops is dropped here and the next taken.
    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        self.catch_up(ctx.now, ctx.packets);
        loop {
            let Some((queue, credit_per_byte)) = self.choose() else {
                self.credit = self.params.credit_init;
                return None;
            };
            let id = self
                .queues
                .pop(queue, ctx.packets)
                .expect("the chosen queue holds a packet");
            let apply_step = queue == Queue::L && self.apply_step.pop_front().expect("one flag per L packet");
            let size = ctx.packets[id].size;
            let mut marked = false;
            if !self.params.drop_enqueue {
                let backlog = ctx.backlog().without(size).bytes;
                match self.must_drop(queue, ctx.packets[id].ecn, backlog) {
                    Action::Drop => {
                        self.stats.count_drop(queue);
                        ctx.drop_packet(id, DropReason::Early);
                        continue;
                    }
                    Action::Mark => marked = true,
                    Action::Pass => {}
                }
            }
            // The step after the coupled mark: Linux counts a packet both mark (once in `step_marks`).
            if apply_step && self.above_step(id, ctx) {
                self.step_marks += 1;
                marked = true;
            }
            if marked {
                ctx.mark(id);
                self.stats.count_mark(queue);
            }
            self.credit += credit_per_byte * i64::from(size);
            return Some(id);
        }
    }

    fn can_mark(&self) -> bool {
        true
    }

    fn counters(&self) -> Vec<(&'static str, f64)> {
        let mut counters = vec![("prob", self.prob())];
        counters.extend(self.stats.counters());
        counters.push(("step_marks", self.step_marks as f64));
        counters
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{FlowId, Packet};
    use crate::qdisc::testing::{QdiscHarness, MS};
    use crate::rng::stream;

    /// Flow 1 sends L4S packets (ECT(1)), flow 2 Classic ones (ECT(0)).
    const L_FLOW: FlowId = 1;
    const C_FLOW: FlowId = 2;

    fn dualpi2(cfg: DualPi2LinuxConfig) -> QdiscHarness<DualPi2Linux> {
        cfg.validate("q").unwrap();
        QdiscHarness::new(Box::new(DualPi2Linux::new(&cfg, stream(1, "dualpi2"))))
    }

    fn packet(flow: FlowId, t: Time) -> Packet {
        Packet {
            flow,
            size: 1514,
            enqueued_at: t,
            ecn: if flow == L_FLOW { Ecn::Ect1 } else { Ecn::Ect0 },
            ..Default::default()
        }
    }

    /// The queue with p′ frozen at `prob` (the timer never fires).
    fn frozen(cfg: DualPi2LinuxConfig, prob: f64) -> QdiscHarness<DualPi2Linux> {
        let mut h = dualpi2(cfg);
        h.q.prob = (prob * f64::from(MAX_PROB)) as u32;
        h.q.next_update = Time::MAX;
        h
    }

    /// Sends `rounds` packets of each flow through a queue kept 20 packets deep, each leaving at
    /// the instant it arrived plus `sojourn`; the fraction of each flow's packets marked.
    fn marked_fractions(h: &mut QdiscHarness<DualPi2Linux>, rounds: u64, sojourn: Time) -> (f64, f64) {
        let mut marked = [0u64; 3];
        let mut sent = [0u64; 3];
        for flow in [L_FLOW, C_FLOW] {
            for _ in 0..10 {
                h.offer(0, packet(flow, 0));
            }
        }
        for round in 0..rounds {
            let t = round * MS;
            for flow in [L_FLOW, C_FLOW] {
                h.offer(t, packet(flow, t));
            }
            for _ in 0..2 {
                let p = h.depart(t + sojourn).expect("backlogged");
                sent[p.flow as usize] += 1;
                marked[p.flow as usize] += u64::from(p.ecn == Ecn::Ce);
            }
        }
        let fraction = |flow: FlowId| marked[flow as usize] as f64 / sent[flow as usize] as f64;
        (fraction(L_FLOW), fraction(C_FLOW))
    }

    #[test]
    fn alpha_and_beta_are_the_kernels_fixed_point() {
        // 41/256 Hz and 819/256 Hz as probability (2^32) per 64 ns: ⌊41·(2^32−1)/4/10⁹⌋ = 44, 879.
        let q = DualPi2Linux::new(&DualPi2LinuxConfig::default(), stream(1, "dualpi2"));
        assert_eq!((q.params.alpha, q.params.beta), (44, 879));
        assert_eq!(q.params.credit_init, 1514 * (10 - 90));
        assert_eq!(q.params.memory_limit, 10000 * 2 * 1514);
    }

    #[test]
    fn the_controller_reads_the_older_head_of_either_queue() {
        let mut h = dualpi2(DualPi2LinuxConfig::default());
        // An L packet waits from 0; the first update is one tupdate (16 ms) after setup.
        h.offer(0, packet(L_FLOW, 0));
        h.q.catch_up(16 * MS - 1, &h.arena);
        assert_eq!(h.q.prob, 0);
        h.q.catch_up(16 * MS, &h.arena);
        // qdelay 16 ms: (16 − 15) ms · 44 + (16 − 0) ms · 879, divided by 64.
        let expected = (1_000_000 * 44 + 16_000_000 * 879) / 64;
        assert_eq!(u64::from(h.q.prob), expected);
        assert!((h.q.prob() - 0.0513).abs() < 1e-4, "{}", h.q.prob());
    }

    #[test]
    fn classic_marks_go_as_p_squared_and_l4s_marks_as_k_times_p() {
        // p′ = 0.3: C is marked with 0.09, L with 0.6 (the step out of the way).
        let no_step = DualPi2LinuxConfig {
            step_thresh: Some(Seconds(10.0)),
            ..Default::default()
        };
        let (l, c) = marked_fractions(&mut frozen(no_step.clone(), 0.3), 20_000, 0);
        // Binomial spread over 20 000 packets: σ ≈ 0.002 for C, 0.0035 for L.
        assert!((c - 0.09).abs() < 0.01, "C marked {c}");
        assert!((l - 0.6).abs() < 0.015, "L marked {l}");
        // k = 4 doubles L's and leaves C's.
        let cfg = DualPi2LinuxConfig {
            coupling_factor: 4,
            ..no_step
        };
        let (l, c) = marked_fractions(&mut frozen(cfg, 0.2), 20_000, 0);
        assert!((c - 0.04).abs() < 0.01 && (l - 0.8).abs() < 0.015, "L {l}, C {c}");
    }

    /// L packets marked of `n` that arrive at 0 and leave together `sojourn` later, p′ = 0.
    fn step_marked(cfg: DualPi2LinuxConfig, n: usize, sojourn: Time) -> usize {
        let mut h = frozen(cfg, 0.0);
        for _ in 0..n {
            h.offer(0, packet(L_FLOW, 0));
        }
        (0..n)
            .filter(|_| h.depart(sojourn).expect("queued").ecn == Ecn::Ce)
            .count()
    }

    #[test]
    fn an_l4s_packet_above_the_step_is_marked_whatever_p() {
        // p′ = 0: below the step (0.9 ms) nothing is marked, above it (1.1 ms) every L packet.
        assert_eq!(step_marked(DualPi2LinuxConfig::default(), 20, 900_000), 0);
        assert_eq!(step_marked(DualPi2LinuxConfig::default(), 20, 1_100_000), 20);
        // With min_qlen_step 5 the first five arrivals (finding fewer than 5 in L) never get it.
        let cfg = DualPi2LinuxConfig {
            min_qlen_step: 5,
            ..Default::default()
        };
        assert_eq!(step_marked(cfg, 20, 1_100_000), 15);
        // In packets: marked while more than 5 are left behind (9, 8, 7, 6 of 10).
        let cfg = DualPi2LinuxConfig {
            step_thresh_packets: Some(5),
            ..Default::default()
        };
        assert_eq!(step_marked(cfg, 10, 0), 4);
    }

    /// Bytes sent from C over bytes sent, both queues backlogged throughout (the buffer never
    /// full), p′ frozen at `prob`.
    fn classic_share(classic_protection: u8, prob: f64) -> f64 {
        let mut h = frozen(
            DualPi2LinuxConfig {
                classic_protection,
                limit: 100_000,
                ..Default::default()
            },
            prob,
        );
        let mut bytes = [0u64; 3];
        for ms in 0..20_000 {
            let t = ms * MS / 10;
            // L floods at twice the rate the link drains, C offers as much as it drains.
            for flow in [L_FLOW, L_FLOW, C_FLOW] {
                h.offer(t, packet(flow, t));
            }
            if let Some(p) = h.depart(t) {
                bytes[p.flow as usize] += u64::from(p.size);
            }
        }
        bytes[C_FLOW as usize] as f64 / (bytes[1] + bytes[2]) as f64
    }

    #[test]
    fn an_unresponsive_l4s_flood_leaves_classic_its_protected_share() {
        // WRR: 9 L packets per C one at wc = 10 %, 7 per 3 at 30 %.
        assert!(
            (classic_share(10, 0.0) - 0.10).abs() < 0.005,
            "{}",
            classic_share(10, 0.0)
        );
        assert!(
            (classic_share(30, 0.0) - 0.30).abs() < 0.005,
            "{}",
            classic_share(30, 0.0)
        );
        // Overloaded (k·p′ = 1.2): L and C are both dropped with p′² = 0.36; what is sent keeps 9:1.
        let overloaded = classic_share(10, 0.6);
        assert!((overloaded - 0.10).abs() < 0.005, "{overloaded}");
    }

    #[test]
    fn without_drop_on_overload_p_stops_at_one_over_k_and_l4s_is_only_marked() {
        let mut h = dualpi2(DualPi2LinuxConfig {
            drop_on_overload: false,
            ..Default::default()
        });
        // A C packet held for 2 s drives p′ up; it stops at 1/k.
        h.offer(0, packet(C_FLOW, 0));
        h.q.catch_up(2000 * MS, &h.arena);
        assert_eq!(h.q.prob, MAX_PROB / 2);
        // Overloaded (k·p′ = 1.8): 100 L packets sent back to back (C still queued behind them, so
        // never less than 2·MTU left) are all marked, none dropped; Classic packets are dropped.
        let overload = DualPi2LinuxConfig {
            drop_on_overload: false,
            ..Default::default()
        };
        let mut h = frozen(overload, 0.9);
        for flow in [L_FLOW, C_FLOW] {
            for _ in 0..100 {
                h.offer(0, packet(flow, 0));
            }
        }
        while h.depart(0).is_some() {}
        assert_eq!((h.q.stats.l_marks, h.q.stats.l_drops), (100, 0));
        assert!(h.q.stats.c_drops > 50, "C drops under overload: {}", h.q.stats.c_drops);
    }

    #[test]
    fn the_buffer_counts_packets_and_truesize() {
        let mut h = dualpi2(DualPi2LinuxConfig {
            limit: 5,
            ..Default::default()
        });
        let verdicts: Vec<_> = (0..6).map(|_| h.offer(0, packet(C_FLOW, 0)).0).collect();
        assert_eq!(verdicts[4], Verdict::Enqueued);
        assert_eq!(verdicts[5], Verdict::Dropped(DropReason::Overflow));
        // 3 packets of 1514 + 900 bytes of truesize fit in 7242 bytes, a fourth does not.
        let mut h = dualpi2(DualPi2LinuxConfig {
            memlimit: Some(Bytes(3 * 2414)),
            ..Default::default()
        });
        let verdicts: Vec<_> = (0..4).map(|_| h.offer(0, packet(L_FLOW, 0)).0).collect();
        assert_eq!(verdicts[2], Verdict::Enqueued);
        assert_eq!(verdicts[3], Verdict::Dropped(DropReason::Overflow));
    }

    #[test]
    fn any_ect_queues_ect0_in_l() {
        let mut h = frozen(
            DualPi2LinuxConfig {
                classification: Classification::AnyEct,
                ..Default::default()
            },
            0.0,
        );
        h.offer(0, packet(C_FLOW, 0));
        assert_eq!((h.q.stats.l_packets, h.q.stats.c_packets), (1, 0));
    }

    #[test]
    fn errors_name_the_tc_word() {
        let err = |cfg: DualPi2LinuxConfig| cfg.validate("q").unwrap_err().to_string();
        assert!(err(DualPi2LinuxConfig {
            alpha: 0.001,
            ..Default::default()
        })
        .starts_with("q.alpha: must be 1/256 Hz"));
        assert_eq!(
            err(DualPi2LinuxConfig {
                classic_protection: 101,
                ..Default::default()
            }),
            "q.classic_protection: must be 0..=100 (percent), got 101"
        );
        assert!(err(DualPi2LinuxConfig {
            step_thresh: Some(Seconds(0.001)),
            step_thresh_packets: Some(3),
            ..Default::default()
        })
        .starts_with("q.step_thresh_packets: give step_thresh or step_thresh_packets, not both"));
    }
}
